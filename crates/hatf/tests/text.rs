//! The text form: a golden dump, parse errors with line numbers, and the
//! binary → text → binary identity on the sample workload.

mod common;
use common::*;
use tramp_hatf::text::TextReader;
use tramp_hatf::{OwnedItem, Policy};
use tramp_workloads::sample::Sample;

#[test]
fn sample_binary_text_binary_is_identical() {
    let items: Vec<OwnedItem> = Sample::new(3000, 11).collect();
    let bytes = encode(&items, Policy::Naive);
    let text = to_text(&bytes);
    assert_eq!(from_text(&text), bytes);
}

#[test]
fn golden_dump_of_a_small_sample() {
    let items: Vec<OwnedItem> = Sample::new(12, 1).collect();
    let text = String::from_utf8(to_text(&encode(&items, Policy::Naive))).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/sample12.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(path).unwrap();
    assert_eq!(
        text, golden,
        "run with UPDATE_GOLDEN=1 to regenerate, then review the diff"
    );
}

#[test]
fn comments_escape_quotes_controls_and_invalid_utf8() {
    let items = vec![OwnedItem::Comment(
        b"say \"hi\"\n\ttab \\ \xff\x00 caf\xc3\xa9".to_vec(),
    )];
    let bytes = encode(&items, Policy::Explicit);
    let text = String::from_utf8(to_text(&bytes)).unwrap();
    assert_eq!(
        text.lines().nth(1).unwrap(),
        r#"comment "say \"hi\"\n\ttab \\ \xff\x00 café""#
    );
    assert_eq!(from_text(text.as_bytes()), bytes);
}

fn parse_error(text: &str) -> String {
    let mut r = TextReader::new(text.as_bytes());
    loop {
        match r.next_item() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error in {text:?}"),
            Err(e) => return e.to_string(),
        }
    }
}

#[test]
fn parse_errors_name_the_line() {
    let cases = [
        (
            "alloc size=1 address=0x10\nbogus 1\n",
            "line 2",
            "unknown record `bogus`",
        ),
        ("free size=3\n", "line 1", "`size` is not a field of free"),
        ("alloc size=x\n", "line 1", "`x` is not a number for `size`"),
        ("set fieldSize size 3\n", "line 1", "invalid width `3`"),
        (
            "set fieldInterpretation time stride 1\n",
            "line 1",
            "expected 5 words",
        ),
        ("comment \"open\n", "line 1", "double-quoted"),
        ("alloc size=1 size=2\n", "line 1", "appears twice"),
        (
            "# c\n\nalloc attrs=abc\n",
            "line 3",
            "odd number of hex digits",
        ),
        // Missing fields are errors, not zeros (issue 11).
        ("alloc size=5\n", "line 1", "alloc lacks `address=`"),
        ("free\n", "line 1", "free lacks `address=`"),
        (
            "realloc/alloc-free size=8 old=0x10\n",
            "line 1",
            "lacks `new=`",
        ),
        // A file cut in the middle of a line.
        (
            "alloc size=1 address=0x10\nalloc size=2 addr",
            "line 2",
            "ends in the middle of this line",
        ),
    ];
    for (text, line, msg) in cases {
        let e = parse_error(text);
        assert!(e.contains(line) && e.contains(msg), "{text:?}: {e}");
    }
    let bad_utf8 = b"alloc size=1 address=0x10\ncomment \"\xff\"\n";
    let mut r = TextReader::new(&bad_utf8[..]);
    r.next_item().unwrap();
    let e = r.next_item().unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("invalid UTF-8"), "{e}");
}

#[test]
fn metadata_that_breaks_the_rules_is_an_encode_error() {
    // Text parses, but v1 on size is illegal HATF: the writer refuses.
    let mut r = TextReader::new(&b"set fieldSize size v1\n"[..]);
    let item = r.next_item().unwrap().unwrap();
    let mut w = tramp_hatf::Writer::new(Vec::new(), Policy::Explicit);
    let e = w.write_item(&item).unwrap_err().to_string();
    assert!(e.contains("only legal for the attributes field"), "{e}");
}
