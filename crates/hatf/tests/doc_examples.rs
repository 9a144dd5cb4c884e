//! The examples in docs/formats/hatf.md are true: each `hatf-text` block
//! encodes to the `hex` block after it, and that hex dumps back to the text.

mod common;
use common::*;

#[path = "../../../tests/support/doc_blocks.rs"]
mod doc_blocks;
use doc_blocks::{blocks, format_page, unhex};

#[test]
fn hatf_md_examples_hold() {
    let md = format_page("hatf");
    let texts = blocks(&md, "hatf-text");
    let hexes = blocks(&md, "hex");
    assert_eq!(texts.len(), hexes.len());
    assert!(texts.len() >= 4, "the examples are gone");
    for (text, hex) in texts.iter().zip(&hexes) {
        let bytes = unhex(hex);
        assert_eq!(from_text(text.as_bytes()), bytes, "encoding of\n{text}");
        let dumped = String::from_utf8(to_text(&bytes)).unwrap();
        let dumped = dumped.split_once('\n').unwrap().1; // drop the header line
        assert_eq!(dumped, text.as_str(), "dump of {hex}");
    }
}

/// Each `hatf-policy` block (a `# policy NAME` line, then records) encodes
/// under that policy to exactly the bytes of the `hatf-encoded` block after
/// it (metadata included), and decodes to the same records.
#[test]
fn policy_examples_hold() {
    let md = format_page("hatf");
    let inputs = blocks(&md, "hatf-policy");
    let outputs = blocks(&md, "hatf-encoded");
    assert_eq!(inputs.len(), outputs.len());
    assert!(inputs.len() >= 5, "the policy examples are gone");
    for (input, want) in inputs.iter().zip(&outputs) {
        let (first, records) = input.split_once('\n').unwrap();
        let name = first.strip_prefix("# policy ").expect("a # policy line");
        let policy = tramp_hatf::Policy::parse(name).expect("a policy");
        let mut r = tramp_hatf::text::TextReader::new(records.as_bytes());
        let mut items = Vec::new();
        while let Some(i) = r.next_item().unwrap() {
            items.push(i.to_owned());
        }
        let bytes = encode(&items, policy);
        let want_bytes = from_text(want.as_bytes());
        assert_eq!(bytes, want_bytes, "policy {name} on\n{records}");
        assert_eq!(decode(&bytes, false), items);
    }
}
