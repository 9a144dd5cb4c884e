//! Untrusted text as a Meta-TF DTD: parsing, checking and rendering the
//! diagnostics never panic or hang; a DTD that checks prints, and its
//! listing is stable.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match tramp_metatf::load(src) {
        Ok(dtd) => {
            let _ = dtd.to_string();
        }
        Err(diags) => {
            assert!(!diags.is_empty());
            let text = tramp_metatf::render("fuzz.dtd", src, &diags);
            assert!(text.contains("fuzz.dtd:"));
        }
    }
});
