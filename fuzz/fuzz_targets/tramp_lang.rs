//! Untrusted text as a TRAMP format description, a script (both syntaxes),
//! and bytes read in the description's layout: never a panic or a hang;
//! parse errors render with a position; a script that compiles runs its
//! preprocess block, main over the trace's records (buffers simulated
//! apart when no answer is read, as `tramp run` does) and postprocess, to
//! completion or a runtime error.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use tramp_core::Source;
use tramp_script::{Machine, Syntax, compile};

fuzz_target!(|data: &[u8]| {
    // desc \0 script \0 trace bytes
    let mut parts = data.splitn(3, |&b| b == 0);
    let desc = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    let script = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
    let trace = parts.next().unwrap_or(&[]);
    let parsed = tramp_desc::parse(&desc);
    let schema = match &parsed {
        Ok(d) => {
            let mut src = tramp_desc::DescSource::new(Arc::new(d.clone()), trace);
            let mut n = 0;
            while let Ok(Some(r)) = src.next_record() {
                // Every field, read from slots or (fixed layouts) the bytes.
                for i in 0..r.record_type().fields.len() {
                    let _ = r.get(i);
                }
                n += 1;
                assert!(n <= trace.len());
            }
            d.schema()
        }
        Err(e) => {
            let text = tramp_metatf::render("f.desc", &desc, &[e.clone()]);
            assert!(text.starts_with("f.desc:"));
            tramp_core::Schema::new("none")
        }
    };
    for syntax in [Syntax::Algol, Syntax::Lisp] {
        match compile(&script, syntax, &schema) {
            Ok(s) => {
                // Loops may not end: only scripts without while run.
                if !script.contains("while") && s.procedures.is_empty() {
                    let mut out = Vec::new();
                    let mut m = Machine::new(&s, &mut out, None);
                    let mut r = m.preprocess();
                    if let (Ok(()), Ok(d)) = (&r, &parsed) {
                        let mut src = tramp_desc::DescSource::new(Arc::new(d.clone()), trace);
                        while let Ok(Some(rec)) = src.next_record() {
                            r = m.main(&rec);
                            if r.is_err() {
                                break;
                            }
                        }
                    }
                    if r.is_ok() {
                        let _ = m.postprocess();
                    }
                }
            }
            Err(e) => {
                let text = tramp_metatf::render("s", &script, &[e]);
                assert!(text.starts_with("s:"));
            }
        }
    }
});
