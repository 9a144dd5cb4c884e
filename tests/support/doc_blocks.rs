//! Shared by the tests that hold docs/formats/*.md to the code: the fenced
//! blocks of a page and the bytes a `hex` block shows. Included by
//! `#[path]` (a test file, not a crate: nothing else needs it).
#![allow(dead_code)]

/// The text of docs/formats/NAME.md.
pub fn format_page(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/formats/");
    std::fs::read_to_string(format!("{path}{name}.md")).unwrap()
}

/// Every block fenced as ```LANG in `md`, in order.
pub fn blocks(md: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    md.split(&fence)
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap().to_string())
        .collect()
}

/// The bytes a hex dump shows (every character that is not a hex digit is
/// passed over); an odd count of digits fails the test.
pub fn unhex(s: &str) -> Vec<u8> {
    let digits: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    assert!(digits.len().is_multiple_of(2), "odd hex in {s:?}");
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap())
        .collect()
}
