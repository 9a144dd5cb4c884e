//! PTF: Figure 3, both forms byte for byte, every verifier rule with its
//! message, the reachability simulation, damaged input.

use tramp_graph::verify::{self, Options, Rule};
use tramp_ptf::ascii::AsciiReader;
use tramp_ptf::binary::{BinaryReader, BinaryWriter};
use tramp_ptf::{Event, EventSink, EventSource, PtfError};

const FIGURE3: &str = include_str!("../../../tests/fixtures/ptf/figure3.ptf.txt");

fn read_all(src: &mut dyn EventSource) -> Result<Vec<Event>, PtfError> {
    let mut v = Vec::new();
    while let Some(e) = src.next_event()? {
        v.push(e);
    }
    Ok(v)
}

fn ascii(text: &str) -> Vec<Event> {
    read_all(&mut AsciiReader::new(text.as_bytes()).unwrap()).unwrap()
}

fn to_binary(events: &[Event], notes: &[String]) -> Vec<u8> {
    let mut w = BinaryWriter::new(Vec::new(), notes).unwrap();
    for e in events {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap();
    w.into_inner()
}

fn to_ascii(events: &[Event], notes: &[String]) -> String {
    let mut w = tramp_ptf::ascii::AsciiWriter::new(Vec::new(), notes).unwrap();
    for e in events {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap();
    String::from_utf8(w.into_inner()).unwrap()
}

#[test]
fn figure3_parses_verifies_and_round_trips() {
    let events = ascii(FIGURE3);
    assert_eq!(events.len(), 37);
    let Event::FormatObject(f) = &events[0] else {
        panic!("fo first")
    };
    assert_eq!((f.id, f.super_id, f.pointers), (41, 0, 2));
    assert_eq!(
        (f.data.clone(), f.arrays.len(), f.name.as_str()),
        (vec![11], 0, "BinTreeNode")
    );
    assert_eq!(
        events[7],
        Event::EdgeWrite {
            format: 41,
            from: 42,
            edge: 0,
            to: 43
        }
    );
    let report = verify::verify(
        &mut AsciiReader::new(FIGURE3.as_bytes()).unwrap(),
        Options {
            gc: true,
            ..Options::default()
        },
    );
    assert_eq!(report.violations, vec![]);
    assert_eq!((report.events, report.collected, report.live), (37, 0, 7));
    // ASCII -> binary -> ASCII is identical (the file is in written form).
    let bin = to_binary(&events, &[]);
    let back = read_all(&mut BinaryReader::new(&bin[..]).unwrap()).unwrap();
    assert_eq!(back, events);
    assert_eq!(to_ascii(&back, &[]), FIGURE3);
}

#[test]
fn the_scanned_layout_with_event_ids_and_tabs_reads_the_same() {
    let mut scanned = String::from("Trace begin\r\n");
    for (i, line) in FIGURE3.lines().skip(1).enumerate() {
        if line == "Trace end" {
            scanned.push_str("Trace end\r\n");
            break;
        }
        // An event id first, a tab after the format id, CRLF endings.
        let line = line.replacen(' ', "\t", 2).replacen('\t', " ", 1);
        scanned.push_str(&format!("{} {line}\r\n", i + 1));
    }
    assert_eq!(ascii(&scanned), ascii(FIGURE3));
}

#[test]
fn binary_layout_is_byte_exact() {
    let notes = vec!["made by hand".to_string()];
    let events = vec![
        Event::CreateObject {
            format: 41,
            oid: 300,
        },
        Event::ArrayDataRead {
            format: 31,
            oid: 50,
            offset: -1,
            index: 0,
            length: 300,
        },
        Event::NoGcStart,
        Event::FormatObject(tramp_ptf::FormatObject {
            id: 41,
            super_id: 0,
            pointers: 2,
            data: vec![11],
            arrays: vec![(30, 10)],
            name: "Nd".into(),
        }),
    ];
    let bin = to_binary(&events, &notes);
    let mut want = b"PTF 1.0\nmade by hand\n$\n".to_vec();
    want.extend_from_slice(&[2, 41, 0xac, 0x02]); // co 41 300
    want.extend_from_slice(&[9, 31, 50, 1, 0, 0xac, 0x02]); // adr, offset -1 zigzag = 1
    want.push(13); // ts
    want.extend_from_slice(&[1, 41, 0, 2, 1, 1, 2, 11, 30, 10, b'N', b'd']);
    assert_eq!(bin, want);
    let mut r = BinaryReader::new(&bin[..]).unwrap();
    assert_eq!(r.version(), "PTF 1.0");
    assert_eq!(read_all(&mut r).unwrap(), events);
    assert_eq!(r.notes(), &notes[..]);
}

#[test]
fn notes_carry_between_forms() {
    let text = format!("OO7 small\nseed 1\n{FIGURE3}");
    let mut r = AsciiReader::new(text.as_bytes()).unwrap();
    let events = read_all(&mut r).unwrap();
    let notes = r.notes().to_vec();
    assert_eq!(notes, vec!["OO7 small", "seed 1"]);
    let bin = to_binary(&events, &notes);
    assert!(bin.starts_with(b"PTF 1.0\nOO7 small\nseed 1\n$\n"));
    let mut b = BinaryReader::new(&bin[..]).unwrap();
    let again = read_all(&mut b).unwrap();
    assert_eq!(to_ascii(&again, b.notes()), text);
}

/// Verifies `body` after a prologue that defines format 41 (2 pointers,
/// an int at position 1, char[8] at position 2) and objects 42 and 43.
fn violations(body: &str, gc: bool) -> Vec<String> {
    let text = format!(
        "Trace begin\nfo 41 0 2 1 1 4 11 30 8 Node\nts\nco 41 42\nsr 41 42\nco 41 43\new 41 42 0 43\nte\n{body}Trace end\n"
    );
    let report = verify::verify(
        &mut AsciiReader::new(text.as_bytes()).unwrap(),
        Options {
            gc,
            max_violations: 100,
        },
    );
    report.violations.iter().map(|v| v.to_string()).collect()
}

#[test]
fn each_rule_has_its_message() {
    let cases: &[(&str, &str)] = &[
        (
            "co 99 50\n",
            "event 8 (line 9): [format-undefined] `co` of object 50: format 99 is not defined by any earlier `fo`",
        ),
        (
            "co 11 50\n",
            "event 8 (line 9): [format-undefined] `co` of object 50: format 11 is a primitive format (`co` needs a class format; arrays use `cao`)",
        ),
        (
            "fo 50 77 0 0 0 1 X\n",
            "event 8 (line 9): [format-undefined] format 50 names super format 77, which no earlier `fo` defines",
        ),
        (
            "fo 50 0 0 1 0 1 41 X\n",
            "event 8 (line 9): [format-undefined] format 50: data member format 41 is not a primitive scalar format (10–19)",
        ),
        (
            "co 41 43\n",
            "event 8 (line 9): [oid-reused] `co` creates 43, an OId already used (OIds are never reused)",
        ),
        (
            "co 41 12\n",
            "event 8 (line 9): [reserved-oid] `co` creates 12: OIds below 41 are reserved (0 null, 10–40 primitive formats)",
        ),
        (
            "do 41 77\n",
            "event 8 (line 9): [no-such-object] `do` deletes object 77, which does not exist",
        ),
        (
            "dr 41 77 1\n",
            "event 8 (line 9): [no-such-object] `dr` on object 77, which was never created",
        ),
        (
            "ew 41 42 1 77\n",
            "event 8 (line 9): [edge] edge target: `ew` on object 77, which was never created",
        ),
        (
            "ew 41 42 2 43\n",
            "event 8 (line 9): [edge] `ew` edge 2 of object 42: format 41 (Node) has 2 pointers (edges 0–1)",
        ),
        (
            "er 41 42 5\n",
            "event 8 (line 9): [edge] `er` edge 5 of object 42: format 41 (Node) has 2 pointers (edges 0–1)",
        ),
        (
            "dw 41 42 2\n",
            "event 8 (line 9): [data-offset] `dw` offset 2 of object 42: format 41 (Node) has 1 data members (positions 1–1)",
        ),
        (
            "dr 41 42 0\n",
            "event 8 (line 9): [data-offset] `dr` offset 0 of object 42: format 41 (Node) has 1 data members (positions 1–1)",
        ),
        (
            "adw 30 42 2 4 5\n",
            "event 8 (line 9): [array-bounds] `adw` elements 4..9 of array member 2 of object 42, which has 8",
        ),
        (
            "adr 30 42 1 0 1\n",
            "event 8 (line 9): [array-bounds] `adr` offset 1 of object 42: format 41 (Node) has 1 array members (positions 2–2)",
        ),
        (
            "cao 11 50 43 10\nadr 11 50 -1 8 3\n",
            "event 9 (line 10): [array-bounds] `adr` elements 8..11 of array object 50, which has 10",
        ),
        (
            "cao 11 50 43 10\nadr 12 50 -1 0 3\n",
            "event 9 (line 10): [format-mismatch] `adr` names format 12 (short) but array object 50 has format 11 (int)",
        ),
        (
            "adr 11 42 -1 0 1\n",
            "event 8 (line 9): [array-bounds] `adr` with offset -1 (a dynamic array) on object 42, which is not an array object",
        ),
        (
            "cao 11 50 77 10\n",
            "event 8 (line 9): [container] `cao` of object 50: container 77 has no earlier `co`",
        ),
        (
            "dr 99 42 1\n",
            "event 8 (line 9): [format-mismatch] `dr` names format 99 but object 42 has format 41 (Node)",
        ),
        (
            "ew 41 42 0 0\ndo 41 43\ndw 41 43 1\n",
            "event 10 (line 11): [after-delete] `dw` on object 43, deleted at event 9",
        ),
        (
            "do 41 43\ndo 41 43\n",
            "event 9 (line 10): [after-delete] `do` on object 43, deleted at event 8",
        ),
        (
            "te\n",
            "event 8 (line 9): [brackets] `te` without an open `ts`",
        ),
        (
            "ts\n",
            "event 8 (line 9): [brackets] `ts` never closed by a `te`",
        ),
        (
            "co 41\n",
            "event 8 (line 9): [syntax] `co` takes 2 parameters (FormatId, OId), found 1",
        ),
        (
            "dr 41 42 1 7\n",
            "event 8 (line 9): [syntax] `dr` takes 3 parameters (FormatId, OId, Offset); `7` is one too many",
        ),
        (
            "dr 41 x 1\n",
            "event 8 (line 9): [syntax] OId: `x` is not an unsigned integer",
        ),
        ("zz 1 2\n", "event 8 (line 9): [syntax] unknown event `zz`"),
        (
            "fo 50 0 0 0 0 5 Ab\n",
            "event 8 (line 9): [syntax] `fo` class name: LengthOfClassName is 5 but `Ab` is 2 bytes",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(
            violations(body, false),
            vec![want.to_string()],
            "for {body:?}"
        );
    }
}

#[test]
fn get_root_before_set_root() {
    let text = "Trace begin\ngr\nTrace end\n";
    let r = verify::verify(
        &mut AsciiReader::new(text.as_bytes()).unwrap(),
        Options::default(),
    );
    assert_eq!(r.violations.len(), 1);
    assert_eq!(r.violations[0].rule, Rule::NoRoot);
}

#[test]
fn all_violations_are_reported_up_to_the_limit() {
    let body = "dr 41 77 1\n".repeat(50) + "bad line\n" + &"er 41 42 9\n".repeat(50);
    let text = format!("Trace begin\nfo 41 0 2 1 0 4 11 Node\nco 41 42\n{body}Trace end\n");
    let r = verify::verify(
        &mut AsciiReader::new(text.as_bytes()).unwrap(),
        Options {
            gc: false,
            max_violations: 30,
        },
    );
    assert_eq!((r.total, r.violations.len()), (101, 30));
    // Verification went on past the malformed line.
    assert_eq!(r.events, 102);
}

#[test]
fn reachability_collects_what_an_overwrite_disconnects() {
    // 42 -> 43 -> 44; overwriting 42's edge drops 43 and 44; a new object
    // created outside a bracket is garbage at once; inside one it is safe.
    let body = "ts\nco 41 44\new 41 43 0 44\nte\new 41 42 0 0\nco 41 45\nts\nco 41 46\new 41 42 1 46\nte\ndr 41 43 1\n";
    let text = format!(
        "Trace begin\nfo 41 0 2 1 0 4 11 Node\nts\nco 41 42\nsr 41 42\nco 41 43\new 41 42 0 43\nte\n{body}Trace end\n"
    );
    let r = verify::verify(
        &mut AsciiReader::new(text.as_bytes()).unwrap(),
        Options {
            gc: true,
            max_violations: 100,
        },
    );
    let got: Vec<(u64, Vec<u64>)> = r
        .collections
        .iter()
        .map(|c| (c.at.event, c.garbage.clone()))
        .collect();
    assert_eq!(got, vec![(12, vec![43, 44]), (13, vec![45])]);
    assert_eq!(
        r.violations
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>(),
        vec![
            "event 18 (line 19): [after-delete] `dr` on object 43, which became garbage at event 12"
        ]
    );
    assert_eq!(r.live, 2);
}

#[test]
fn damaged_binary_keeps_every_whole_event() {
    let events = ascii(FIGURE3);
    let bin = to_binary(&events, &[]);
    let header = b"PTF 1.0\n$\n".len();
    // Where each event ends: a cut there is a shorter valid trace (the
    // binary form has no end marker; decision in docs/formats/ptf.md).
    let mut ends = vec![header];
    for e in &events {
        let mut b = Vec::new();
        tramp_ptf::binary::encode(&mut b, e);
        ends.push(ends.last().unwrap() + b.len());
    }
    for cut in header..bin.len() {
        let mut r = BinaryReader::new(&bin[..cut]).unwrap();
        let mut got = Vec::new();
        let err = loop {
            match r.next_event() {
                Ok(Some(e)) => got.push(e),
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        assert_eq!(got[..], events[..got.len()]);
        if !ends.contains(&cut) {
            let e = err.expect("a cut event is an error").to_string();
            assert!(e.contains("event cut short"), "{e}");
            assert!(e.contains(&format!("event {}", got.len())), "{e}");
        }
    }
    // Unknown type byte, overlong varint, absurd member count.
    for (bytes, want) in [
        (&[0x63u8][..], "unknown event type byte 0x63"),
        (
            &[
                2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1,
            ][..],
            "overflows 64 bits",
        ),
        (
            &[1, 41, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0][..],
            "data and 0 array members",
        ),
    ] {
        let mut b = b"PTF 1.0\n$\n".to_vec();
        b.extend_from_slice(bytes);
        let e = BinaryReader::new(&b[..])
            .unwrap()
            .next_event()
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && e.contains("byte offset 10"), "{e}");
    }
    let e = BinaryReader::new(&b"GIF89a"[..]).err().unwrap().to_string();
    assert!(e.contains("not a binary PTF trace"), "{e}");
}

#[test]
fn damaged_ascii_names_the_line() {
    let e = AsciiReader::new(&b"no begin here\n"[..])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no `Trace begin` line"), "{e}");
    let mut r = AsciiReader::new(&b"Trace begin\nco 41 42\nco 41 \xff\n"[..]).unwrap();
    assert!(r.next_event().unwrap().is_some());
    let e = r.next_event().unwrap_err().to_string();
    assert!(
        e.starts_with("line 3 (byte offset 21): invalid UTF-8"),
        "{e}"
    );
    let mut r = AsciiReader::new(&b"Trace begin\nco 41 42\n"[..]).unwrap();
    assert!(r.next_event().unwrap().is_some());
    let e = r.next_event().unwrap_err().to_string();
    assert!(e.contains("ends without `Trace end`"), "{e}");
    let mut r = AsciiReader::new(&b"Trace begin\nTrace end\nco 41 42\n"[..]).unwrap();
    assert!(r.next_event().unwrap_err().to_string().contains("line 3"));
}

#[test]
fn the_pipelined_verifier_reports_the_same() {
    let body = "dr 41 77 1\n".repeat(5000)
        + "bad line\n"
        + &"er 41 42 9\n".repeat(5000)
        + "ew 41 42 0 0\nts\n";
    let text =
        format!("Trace begin\nfo 41 0 2 1 0 4 11 Node\nco 41 42\nsr 41 42\n{body}Trace end\n");
    let opts = Options {
        gc: true,
        max_violations: 20_000,
    };
    let one = verify::verify(
        &mut AsciiReader::new(text.as_bytes()).unwrap(),
        opts.clone(),
    );
    let src: Box<dyn EventSource + Send> =
        Box::new(AsciiReader::new(std::io::Cursor::new(text.into_bytes())).unwrap());
    let two = verify::verify_pipelined(src, opts, &mut |_| {});
    assert_eq!(one.violations, two.violations);
    assert_eq!(
        (one.total, one.events, one.live),
        (two.total, two.events, two.live)
    );
    assert_eq!(one.total, 10_002);
}

/// Found by the ptf_binary fuzz target: an array object whose format is a
/// number below 20 made the element-format lookup subtract past zero (a
/// panic with overflow checks on). It is a verifier violation instead.
#[test]
fn an_array_format_below_20_is_a_violation_not_a_panic() {
    assert_eq!(tramp_ptf::event::array_element(5), None);
    assert_eq!(tramp_ptf::event::array_element(31), Some(11));
    let data = include_bytes!("fixtures/array-format-below-20.ptf");
    let mut r = BinaryReader::new(&data[..]).unwrap();
    let report = verify::verify(
        &mut r,
        Options {
            gc: true,
            max_violations: 10,
        },
    );
    assert!(report.events > 0);
}
