//! The TRAMP format description language on its own: untrusted text as a
//! description, then bytes read in its layout and each record encoded
//! back (what `spit` does). Never a panic or a hang; parse errors render
//! with a position.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use tramp_core::Source;

fuzz_target!(|data: &[u8]| {
    // description \0 trace bytes
    let mut parts = data.splitn(2, |&b| b == 0);
    let desc = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    let trace = parts.next().unwrap_or(&[]);
    match tramp_desc::parse(&desc) {
        Ok(d) => {
            let d = Arc::new(d);
            let mut src = tramp_desc::DescSource::new(d.clone(), trace);
            let mut enc = tramp_desc::encode::Encoder::new();
            let mut back = Vec::new();
            let mut n = 0;
            while let Ok(Some(r)) = src.next_record() {
                let vals: Vec<tramp_core::Value<'_>> = (0..r.record_type().fields.len())
                    .map(|i| r.get(i).unwrap_or(tramp_core::Value::U64(0)))
                    .collect();
                let _ = enc.encode(&d, r.record_type().index, &vals, &mut back);
                n += 1;
                assert!(n <= trace.len());
            }
        }
        Err(e) => {
            let text = tramp_metatf::render("f.desc", &desc, &[e]);
            assert!(text.starts_with("f.desc:"));
        }
    }
});
