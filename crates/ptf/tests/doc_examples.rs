//! The examples in docs/formats/ptf.md are true: each `ptf-text` block
//! converts to the `hex` block after it, and that binary converts back to
//! the text; the verifier message shown there is the one it prints.

use tramp_ptf::ascii::{AsciiReader, AsciiWriter};
use tramp_ptf::binary::{BinaryReader, BinaryWriter};
use tramp_ptf::{EventSink, EventSource};

#[path = "../../../tests/support/doc_blocks.rs"]
mod doc_blocks;
use doc_blocks::{blocks, format_page, unhex};

fn md() -> String {
    format_page("ptf")
}

#[test]
fn ptf_md_examples_hold() {
    let md = md();
    let texts = blocks(&md, "ptf-text");
    let hexes = blocks(&md, "hex");
    assert_eq!((texts.len(), hexes.len()), (1, 1), "the examples are gone");
    for (text, hex) in texts.iter().zip(&hexes) {
        let mut r = AsciiReader::new(text.as_bytes()).unwrap();
        let mut w = BinaryWriter::new(Vec::new(), r.notes()).unwrap();
        while let Some(e) = r.next_event().unwrap() {
            w.write_event(&e).unwrap();
        }
        w.finish().unwrap();
        let bin = w.into_inner();
        assert_eq!(bin, unhex(hex), "encoding of\n{text}");
        let mut b = BinaryReader::new(&bin[..]).unwrap();
        let mut t = AsciiWriter::new(Vec::new(), b.notes()).unwrap();
        while let Some(e) = b.next_event().unwrap() {
            t.write_event(&e).unwrap();
        }
        t.finish().unwrap();
        assert_eq!(String::from_utf8(t.into_inner()).unwrap(), *text);
    }
}

#[test]
fn ptf_md_verifier_message_is_real() {
    let md = md();
    let shown = blocks(&md, "text");
    let text = "Trace begin\nfo 41 0 2 1 1 4 11 30 8 Node\nts\nco 41 42\nsr 41 42\nco 41 43\new 41 42 0 43\nte\ncao 11 50 43 10\nadr 11 50 -1 8 3\nTrace end\n";
    let r = tramp_graph::verify::verify(
        &mut AsciiReader::new(text.as_bytes()).unwrap(),
        Default::default(),
    );
    assert_eq!(r.violations.len(), 1);
    assert_eq!(shown[0].trim_end(), r.violations[0].to_string());
}
