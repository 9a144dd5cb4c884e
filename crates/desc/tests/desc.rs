//! Descriptions parsed and traces read byte for byte against their layout;
//! the writer and reader round-trip; errors carry file:line:col.

use std::sync::Arc;

use proptest::prelude::*;
use tramp_core::ints::IntRead;
use tramp_core::{Source, Value};
use tramp_desc::encode::Encoder;
use tramp_desc::{DescSource, Description, parse};

/// Figure 3 of the seed, with the scan's shifted comments and duplicated
/// names put right (docs/formats/tramp.md).
pub const FIGURE3: &str = r#"
record IO {
    byte      RECORD_TYPE;     /* *** IO RECORD *** */
    bytes(4)  XACT_ID;         /* transaction identifier */
    bytes(4)  FILE;            /* file identifier */
    bytes(4)  PAGE;            /* page number */
    time      TIME;            /* time stamp */
    byte      FUNCTION {       /* read or write */
        0x00 "read",
        0x01 "write",
    };
};
record END_XACT {
    byte      RECORD_TYPE;     /* *** END_XACT RECORD *** */
    bytes(4)  XACT_ID;         /* transaction id */
    time_incr TIME;            /* time stamp */
};
"#;

fn read_all(desc: &Description, bytes: &[u8]) -> (Vec<(String, Vec<String>)>, Option<String>) {
    let mut src = DescSource::new(Arc::new(desc.clone()), bytes);
    let mut out = Vec::new();
    loop {
        match src.next_record() {
            Ok(Some(r)) => out.push((
                r.record_type().name.clone(),
                (0..r.record_type().fields.len())
                    .map(|i| match r.get(i).unwrap() {
                        Value::U64(v) => v.to_string(),
                        Value::I64(v) => v.to_string(),
                        Value::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
                        v => format!("{v:?}"),
                    })
                    .collect(),
            )),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn figure3_reads_its_layout_byte_for_byte() {
    let d = parse(FIGURE3).unwrap();
    assert!(d.tagged);
    assert_eq!(d.records[0].fixed_size, Some(18));
    assert_eq!(d.records[1].fixed_size, Some(9));
    assert_eq!(
        d.records[0].fields[4].values,
        [(0, "read".into()), (1, "write".into())]
    );
    let mut t = vec![0u8];
    t.extend(7u32.to_ne_bytes()); // XACT_ID
    t.extend(3u32.to_ne_bytes()); // FILE
    t.extend(99u32.to_ne_bytes()); // PAGE
    t.extend(1000u32.to_ne_bytes()); // TIME
    t.push(1); // FUNCTION: write
    t.push(1); // END_XACT
    t.extend(7u32.to_ne_bytes());
    t.extend(25u32.to_ne_bytes()); // 25 after the IO's 1000
    let (recs, err) = read_all(&d, &t);
    assert_eq!(err, None);
    assert_eq!(recs[0], ("IO".into(), strs(&["7", "3", "99", "1000", "1"])));
    assert_eq!(recs[1], ("END_XACT".into(), strs(&["7", "1025"])));
}

#[test]
fn explicit_tags_swapped_fields_and_every_type() {
    let d = parse(
        "record A = 0x10 { byte RECORD_TYPE; swap_halfword H; swap_fullword F; i16be S; u64le L; };
         record B = 7 { byte RECORD_TYPE; char(4) NAME; varchar(1) V; signed(2) N; };",
    )
    .unwrap();
    assert_eq!((d.records[0].tag, d.records[1].tag), (Some(0x10), Some(7)));
    let mut t = vec![0x10];
    let host_le = cfg!(target_endian = "little");
    // swap_* are the other byte order than the host's.
    if host_le {
        t.extend([0x12, 0x34, 0xaa, 0xbb, 0xcc, 0xdd]);
    } else {
        t.extend([0x34, 0x12, 0xdd, 0xcc, 0xbb, 0xaa]);
    }
    t.extend([0xff, 0xfe]); // i16be −2
    t.extend(5u64.to_le_bytes());
    t.push(7);
    t.extend(b"ab\0\0");
    t.extend([3, b'x', b'y', b'z']);
    t.extend((-300i16).to_ne_bytes());
    let (recs, err) = read_all(&d, &t);
    assert_eq!(err, None);
    assert_eq!(
        recs[0].1,
        strs(&[&0x1234.to_string(), &0xaabbccddu32.to_string(), "-2", "5"])
    );
    assert_eq!(recs[1].1, strs(&["\"ab\\0\\0\"", "\"xyz\"", "-300"]));
}

/// Records of plain integers at fixed places come as their bytes, read
/// through their type's layout (no slots); records with times, characters
/// or length prefixes are decoded into slots. Both read the same values
/// (the other tests of this file check the values).
#[test]
fn only_fixed_integer_records_come_as_their_bytes() {
    let d = parse(
        "record A = 1 { byte RECORD_TYPE; i16be S; u64le L; };
         record T = 2 { byte RECORD_TYPE; bytes(4) X; time_incr DT; };
         record C = 3 { byte RECORD_TYPE; char(2) NAME; };",
    )
    .unwrap();
    let s = d.schema();
    let layout = s.types[0].fixed_ints.as_deref().unwrap();
    assert_eq!(
        layout.iter().map(|f| (f.off, f.read)).collect::<Vec<_>>(),
        [(1, IntRead::I16Be), (3, IntRead::U64Le)]
    );
    assert!(s.types[1].fixed_ints.is_none() && s.types[2].fixed_ints.is_none());
    let mut t = vec![1, 0xff, 0xfe];
    t.extend(5u64.to_le_bytes());
    t.extend([2, 0, 0, 0, 0, 9, 0, 0, 0]);
    t.extend([3, b'h', b'i']);
    let mut src = DescSource::new(Arc::new(d), &t[..]);
    let mut seen = Vec::new();
    while let Some(r) = src.next_record().unwrap() {
        let (ty, slots, bytes) = r.parts();
        let first = match r.get(0) {
            Some(Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            v => format!("{v:?}"),
        };
        seen.push((ty.name.clone(), slots.len(), bytes.len(), first));
    }
    assert_eq!(
        seen,
        [
            ("A".to_string(), 0, 11, "Some(I64(-2))".to_string()),
            ("T".to_string(), 2, 9, "Some(U64(0))".to_string()),
            ("C".to_string(), 1, 3, "hi".to_string()),
        ]
    );
}

#[test]
fn a_single_record_without_type_byte_reads_oracle_general() {
    let d = parse("record REQ { u32le TIME; u64le ID; u32le SIZE; i64le NEXT; };").unwrap();
    assert!(!d.tagged);
    let mut t = Vec::new();
    for (time, id, size, next) in [(1u32, 42u64, 100u32, -1i64), (2, 43, 7, 9)] {
        t.extend(time.to_le_bytes());
        t.extend(id.to_le_bytes());
        t.extend(size.to_le_bytes());
        t.extend(next.to_le_bytes());
    }
    let (recs, err) = read_all(&d, &t);
    assert_eq!(err, None);
    assert_eq!(recs[0].1, strs(&["1", "42", "100", "-1"]));
    assert_eq!(recs[1].1, strs(&["2", "43", "7", "9"]));
    // Cut inside the third record.
    t.extend([0; 10]);
    let (recs, err) = read_all(&d, &t);
    assert_eq!(recs.len(), 2);
    assert_eq!(
        err.unwrap(),
        "tramp-desc input invalid at byte offset 48, record 2: record `REQ` cut by the end of the input: 10 of 24 bytes"
    );
}

#[test]
fn a_huge_length_prefix_is_damage_not_an_allocation() {
    let d = parse("record V { varchar(4) DATA; };").unwrap();
    let mut t = Vec::new();
    t.extend(3u32.to_ne_bytes());
    t.extend(b"abc");
    t.extend(u32::MAX.to_ne_bytes());
    let (recs, err) = read_all(&d, &t);
    assert_eq!(recs.len(), 1);
    assert!(
        err.unwrap()
            .contains("record `V` would be 4294967299 bytes, over the 16777216-byte limit"),
    );
    let big = "record B { char(1048576) A; char(1048576) B; char(1048576) C; char(1048576) D; char(1048576) E; char(1048576) F; char(1048576) G; char(1048576) H; char(1048576) I; char(1048576) J; char(1048576) K; char(1048576) L; char(1048576) M; char(1048576) N; char(1048576) O; char(1048576) P; char(1048576) Q; };";
    assert!(
        parse(big)
            .unwrap_err()
            .message
            .contains("over the 16777216-byte limit")
    );
}

#[test]
fn an_unknown_type_byte_stops_with_its_offset() {
    let d = parse(FIGURE3).unwrap();
    let mut t = vec![1u8];
    t.extend([0; 8]);
    t.push(9);
    let (recs, err) = read_all(&d, &t);
    assert_eq!(recs.len(), 1);
    assert!(
        err.unwrap()
            .contains("at byte offset 9, record 1: no record has type byte 9")
    );
}

fn diag(src: &str) -> String {
    let e = parse(src).unwrap_err();
    tramp_diag::render("f.desc", src, &[e])
}

#[test]
fn errors_name_the_place() {
    let cases = [
        (
            "record A { bytes(3) X; };",
            "f.desc:1:18: error: `bytes(3)`: the size must be one of [1, 2, 4, 8]",
        ),
        (
            "record A { byte X; byte X; };",
            "f.desc:1:25: error: field `X` is declared twice in record `A`",
        ),
        (
            "record A { byte X; };\nrecord B { byte Y; };",
            "f.desc:2:8: error: several records need a type byte to tell them apart",
        ),
        (
            "record A { byte RECORD_TYPE; };\nrecord B = 0 { byte RECORD_TYPE; };",
            "f.desc:2:12: error: records `A` and `B` share tag 0",
        ),
        (
            "record A { float X; };",
            "f.desc:1:12: error: unknown field type `float`",
        ),
        (
            "record A { byte X { 300 \"big\" }; };",
            "f.desc:1:21: error: value 300 does not fit field `X`",
        ),
        (
            "record A { byte X };",
            "f.desc:1:19: error: expected `;` after a field, found `}`",
        ),
        (
            "record A { byte X; /* open",
            "f.desc:1:20: error: comment never closed",
        ),
        (
            "record A = 3 { byte X; };",
            "f.desc:1:12: error: a record without a type byte cannot have a tag",
        ),
        (
            "record A { };",
            "f.desc:1:8: error: record `A` has no bytes",
        ),
    ];
    for (src, want) in cases {
        let got = diag(src);
        assert!(got.starts_with(want), "{src}\n{got}");
        assert!(got.contains(" | "), "excerpt missing:\n{got}");
    }
}

proptest! {
    /// What the encoder writes the reader reads back, field for field, and
    /// re-encoding gives the same bytes.
    #[test]
    fn encode_then_read_round_trips(recs in proptest::collection::vec(
        (any::<bool>(), any::<u32>(), any::<u16>(), any::<i32>(), proptest::collection::vec(any::<u8>(), 0..20), any::<u32>()),
        0..50,
    )) {
        let d = parse(
            "record A { byte RECORD_TYPE; bytes(4) X; swap_halfword H; signed(4) S; varchar(2) V; };
             record B { byte RECORD_TYPE; time_incr T; char(3) C; };",
        ).unwrap();
        let mut enc = Encoder::new();
        let mut bytes = Vec::new();
        let mut t = 0u64;
        for (a, x, h, s, v, dt) in &recs {
            if *a {
                enc.encode(&d, 0, &[Value::U64(*x as u64), Value::U64(*h as u64), Value::I64(*s as i64), Value::Bytes(v)], &mut bytes).unwrap();
            } else {
                t += *dt as u64;
                enc.encode(&d, 1, &[Value::U64(t), Value::Bytes(&v[..v.len().min(3)])], &mut bytes).unwrap();
            }
        }
        let mut src = DescSource::new(Arc::new(d.clone()), &bytes[..]);
        let mut again = Vec::new();
        let mut enc2 = Encoder::new();
        let mut n = 0;
        while let Some(r) = src.next_record().unwrap() {
            let vals: Vec<Value> = (0..r.record_type().fields.len()).map(|i| r.get(i).unwrap()).collect();
            enc2.encode(&d, r.record_type().index, &vals, &mut again).unwrap();
            n += 1;
        }
        prop_assert_eq!(n, recs.len());
        prop_assert_eq!(again, bytes);
    }
}

proptest! {
    /// Every integer encoding in a record of fixed layout (the reader's
    /// fast path), with and without a type byte: each field's value is
    /// what its bytes say, read here by hand.
    #[test]
    fn every_integer_encoding_reads_its_bytes(
        recs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 60), 0..40),
        tagged in any::<bool>(),
    ) {
        let fields = "u8 A; i8 B; u16le C; u16be D; i16le E; i16be F; u32le G; u32be H; \
                      i32le I; i32be J; u64le K; u64be L; i64le M; i64be N;";
        let d = if tagged {
            parse(&format!("record R {{ byte RECORD_TYPE; {fields} }};")).unwrap()
        } else {
            parse(&format!("record R {{ {fields} }};")).unwrap()
        };
        // Sizes in order; 1+1+2*4+4*4+8*4 = 58 bytes of fields.
        let sizes = [1usize, 1, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8];
        let mut bytes = Vec::new();
        for r in &recs {
            if tagged {
                bytes.push(0);
            }
            bytes.extend_from_slice(&r[..58]);
        }
        let mut src = DescSource::new(Arc::new(d), &bytes[..]);
        let mut n = 0;
        while let Some(rec) = src.next_record().unwrap() {
            let raw = &recs[n];
            let mut off = 0;
            for (i, &size) in sizes.iter().enumerate() {
                let b = &raw[off..off + size];
                off += size;
                let signed = matches!(i, 1 | 4 | 5 | 8 | 9 | 12 | 13);
                let big = matches!(i, 3 | 5 | 7 | 9 | 11 | 13);
                let mut v: u64 = 0;
                let ordered: Vec<u8> = if big { b.to_vec() } else { b.iter().rev().copied().collect() };
                for &x in &ordered {
                    v = v << 8 | x as u64;
                }
                let want = if signed {
                    let shift = 64 - 8 * size as u32;
                    Value::I64(((v << shift) as i64) >> shift)
                } else {
                    Value::U64(v)
                };
                prop_assert_eq!(rec.get(i), Some(want), "field {}", i);
            }
            n += 1;
        }
        prop_assert_eq!(n, recs.len());
    }
}

/// Descriptions are untrusted input: a record of 100 k fields (17.6 s
/// once, by scans per field) parses in time linear in its size, and a
/// duplicate among them is still found.
#[test]
fn a_description_of_many_fields_parses_whole() {
    let n = 100_000;
    let mut src = String::from("record A = 1 {\n    byte RECORD_TYPE;\n");
    for i in 0..n {
        src.push_str(&format!("    byte f{i};\n"));
    }
    src.push_str("};\n");
    let d = tramp_desc::parse(&src).unwrap();
    assert_eq!(d.records[0].fields.len(), n);
    let dup = src.replace("};\n", "    byte f7;\n};\n");
    let e = tramp_desc::parse(&dup).unwrap_err();
    assert!(
        e.message.contains("field `f7` is declared twice"),
        "{}",
        e.message
    );
}
