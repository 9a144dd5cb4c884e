//! Generated code agrees with the universal codec: for each test DTD the
//! test generates a Rust module, compiles it with a small driver, feeds it a
//! trace written by the universal writer, and checks that the generated
//! reader sees the same records and the generated writer writes the same
//! bytes — data sections included (stored, and zstd-compressed through the
//! generated reader's decoder hook).

mod common;

use std::process::Command;

use common::Capture;

use tramp_core::{RecordBuf, Sink, Source, Value};
use tramp_metatf::codec::{MetaSink, MetaSource};

/// Writes records made by `build` with the universal writer.
fn universal_trace(
    dtd: &str,
    big: bool,
    build: &dyn Fn(&tramp_core::Schema) -> Vec<RecordBuf>,
) -> Vec<u8> {
    let capture = Capture::default();
    let mut sink = Box::new(MetaSink::new(capture.clone(), dtd, big).unwrap());
    let schema = sink.schema().clone();
    for r in build(&schema) {
        sink.write_record(&r.as_record(&schema.types[r.type_index()]))
            .unwrap();
    }
    sink.finish().unwrap();
    capture.bytes()
}

fn universal_text(bytes: &[u8]) -> Vec<String> {
    let mut src = MetaSource::open(bytes, None).unwrap();
    let mut lines = Vec::new();
    while let Some(rec) = src.next_record().unwrap() {
        let mut s = String::new();
        tramp_core::text::format_record(&mut s, &rec);
        lines.push(s);
    }
    lines
}

/// Generates code for `dtd`, compiles it with `driver`, and returns the
/// executable with the temporary directory it lives in (removed when
/// dropped: the tests leave nothing behind).
fn build_driver(name: &str, dtd: &str, driver: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("tramp-codegen-{name}-"))
        .tempdir()
        .unwrap();
    let dir = tmp.path().to_path_buf();
    let code = tramp_metatf::codegen::rust(dtd, name).unwrap();
    std::fs::write(dir.join("generated.rs"), &code).unwrap();
    std::fs::write(dir.join("main.rs"), driver).unwrap();
    let exe = dir.join("driver");
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--edition=2024", "-O", "-o"])
        .arg(&exe)
        .arg(dir.join("main.rs"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "generated code for {name} does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (tmp, exe)
}

/// Runs a driver on `trace`; returns the records it printed and the
/// bytes its generated writer wrote. `extra` arguments follow the files.
fn run_driver(
    exe: &std::path::Path,
    tag: &str,
    trace: &[u8],
    extra: &[&str],
) -> (Vec<String>, Vec<u8>) {
    let dir = exe.parent().unwrap();
    let input = dir.join(format!("in-{tag}.mtf"));
    let output = dir.join(format!("out-{tag}.mtf"));
    std::fs::write(&input, trace).unwrap();
    let run = Command::new(exe)
        .arg(&input)
        .arg(&output)
        .args(extra)
        .env("TRAMP_UNZSTD_EXE", std::env::current_exe().unwrap())
        .env("TRAMP_UNZSTD_DIR", dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{tag}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let lines = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (lines, std::fs::read(&output).unwrap())
}

fn check(name: &str, dtd: &str, traces: &[Vec<u8>]) {
    let (_dir, exe) = build_driver(name, dtd, DRIVER);
    for (i, trace) in traces.iter().enumerate() {
        let (generated, written) = run_driver(&exe, &i.to_string(), trace, &[]);
        assert_eq!(
            generated,
            universal_text(trace),
            "{name} trace {i}: generated and universal readers disagree"
        );
        assert!(
            written == *trace,
            "{name} trace {i}: the generated writer wrote other bytes"
        );
    }
}

fn set(r: &mut RecordBuf, ty: &tramp_core::RecordType, f: &str, v: u64) {
    r.set_u64(
        ty.field_index(f)
            .unwrap_or_else(|| panic!("{} has no {f}", ty.name)),
        v,
    );
}

fn rec(schema: &tramp_core::Schema, name: &str, fields: &[(&str, u64)]) -> RecordBuf {
    let ty = schema.type_named(name).unwrap();
    let mut r = RecordBuf::new();
    r.reset(ty);
    for (f, v) in fields {
        set(&mut r, ty, f, *v);
    }
    r
}

#[test]
fn generated_fstrace_codec_agrees() {
    let dtd = include_str!("dtd/good/fstrace.dtd");
    let build = |schema: &tramp_core::Schema| {
        let mut v = Vec::new();
        let mut t = 0;
        for i in 0..300u64 {
            t += i * 37 % 1000;
            let r = match i % 5 {
                0 => {
                    let mut r = rec(
                        schema,
                        "open",
                        &[
                            ("tag", 4),
                            ("time", t),
                            ("fd", i % 60),
                            ("flags", 2),
                            ("plen", 5),
                        ],
                    );
                    let ty = schema.type_named("open").unwrap();
                    r.set_bytes(ty.field_index("path").unwrap(), b"/tmp/");
                    r
                }
                1 => rec(
                    schema,
                    "read",
                    &[
                        ("tag", 5),
                        ("time", t),
                        ("fd", 3),
                        ("offset", i << 12),
                        ("length", 4096),
                    ],
                ),
                2 => rec(
                    schema,
                    "write",
                    &[
                        ("tag", 6),
                        ("time", t),
                        ("fd", 4),
                        ("offset", i << 20),
                        ("length", 512),
                    ],
                ),
                3 => {
                    let ty = schema.type_named("batch").unwrap();
                    let mut r = rec(
                        schema,
                        "batch",
                        &[("tag", 7), ("time", t), ("count", i % 4)],
                    );
                    let fds =
                        r.push_list((0..i % 4).map(Value::U64).collect::<Vec<_>>().into_iter());
                    r.set_slot(ty.field_index("fd").unwrap(), fds);
                    let lens = r.push_list(
                        (0..i % 4)
                            .map(|k| Value::U64(k * 100))
                            .collect::<Vec<_>>()
                            .into_iter(),
                    );
                    r.set_slot(ty.field_index("length").unwrap(), lens);
                    r
                }
                _ => rec(schema, "close", &[("tag", 8), ("time", t), ("fd", 3)]),
            };
            v.push(r);
        }
        v
    };
    check(
        "fstrace",
        dtd,
        &[
            universal_trace(dtd, false, &build),
            universal_trace(dtd, true, &build),
        ],
    );
}

#[test]
fn generated_hatf10_codec_agrees_with_sections_and_metadata() {
    let dtd = include_str!("dtd/good/hatf10.dtd");
    let build = |schema: &tramp_core::Schema| {
        let mut v = vec![rec(schema, "section", &[("tag", 2), ("number", 1)])];
        // metadata: alloc (tag 4), field 1 (size), property 0 (width) = 1 byte
        v.push(rec(
            schema,
            "metadata",
            &[
                ("tag", 3),
                ("record", 4),
                ("field", 1),
                ("property", 0),
                ("value", 1),
            ],
        ));
        // and address (field 2) as delta from 0x1000
        v.push(rec(
            schema,
            "metadata",
            &[
                ("tag", 3),
                ("record", 4),
                ("field", 2),
                ("property", 3),
                ("value", 0x1000),
            ],
        ));
        // free's thread (field 3) by stride 2 from the previous thread
        // value (the alloc just before it has thread 0): two metadata values
        v.push(rec(
            schema,
            "metadata",
            &[
                ("tag", 3),
                ("record", 6),
                ("field", 3),
                ("property", 6),
                ("value", 100),
                ("stride", 2),
            ],
        ));
        for i in 0..200u64 {
            let ty = schema.type_named("alloc").unwrap();
            let mut r = rec(
                schema,
                "alloc",
                &[
                    ("tag", 4),
                    ("size", i % 200),
                    ("address", 0x1000 + 48 * i),
                    ("time", 0),
                    ("thread", 0),
                    ("heap", 0),
                    ("length", 1),
                ],
            );
            r.set_bytes(ty.field_index("data").unwrap(), &[i as u8]);
            v.push(r);
            let ty = schema.type_named("free").unwrap();
            let mut f = rec(
                schema,
                "free",
                &[
                    ("tag", 6),
                    ("address", 0x1000 + 48 * i),
                    ("time", 0),
                    ("thread", 2),
                    ("heap", 0),
                    ("length", 0),
                ],
            );
            f.set_bytes(ty.field_index("data").unwrap(), b"");
            v.push(f);
        }
        let c = schema.type_named("comment").unwrap();
        let mut r = rec(schema, "comment", &[("tag", 1), ("length", 3)]);
        r.set_bytes(c.field_index("data").unwrap(), b"end");
        v.push(r);
        v
    };
    check("hatf10", dtd, &[universal_trace(dtd, true, &build)]);
}

#[test]
fn generated_memtrace_codec_agrees() {
    let dtd = include_str!("dtd/good/memtrace.dtd");
    let build = |schema: &tramp_core::Schema| {
        let mut v = Vec::new();
        let mut pc = 0x400000u64;
        for i in 0..500u64 {
            pc += 4 + (i % 3) * 4;
            v.push(match i % 4 {
                0 => rec(
                    schema,
                    "load",
                    &[
                        ("tag", 4),
                        ("pc", pc),
                        ("size", 8),
                        ("addr", 0x7fff_0000_0000 + i * 64),
                    ],
                ),
                1 => rec(
                    schema,
                    "store",
                    &[
                        ("tag", 5),
                        ("pc", pc),
                        ("size", 4),
                        ("addr", 0x5555_0000 + i),
                    ],
                ),
                2 => rec(schema, "fetch", &[("tag", 6), ("pc", pc)]),
                _ => rec(schema, "switch", &[("tag", 7), ("thread", i)]),
            });
        }
        v
    };
    check(
        "memtrace",
        dtd,
        &[
            universal_trace(dtd, false, &build),
            universal_trace(dtd, true, &build),
        ],
    );
}

/// The driver every generated module is compiled with: it prints each
/// record the generated reader sees and writes it back with the generated
/// writer (data sections stored). Given a third argument, it reads
/// zstd-compressed data sections through a decoder of its own (the
/// generated module is std-only and takes one): this test binary, run as
/// the `unzstd_helper` test, so the tests need no zstd program.
const DRIVER: &str = r#"
mod generated;
fn unzstd(r: &mut dyn std::io::Read, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    use std::process::Command;
    let dir = std::path::PathBuf::from(std::env::var_os("TRAMP_UNZSTD_DIR").unwrap());
    let (i, o) = (dir.join("section.zst"), dir.join("section.raw"));
    let mut input = Vec::new();
    r.read_to_end(&mut input)?;
    std::fs::write(&i, &input)?;
    let status = Command::new(std::env::var_os("TRAMP_UNZSTD_EXE").unwrap())
        .args(["unzstd_helper", "--exact", "--quiet", "--test-threads=1"])
        .env("TRAMP_UNZSTD_IN", &i)
        .env("TRAMP_UNZSTD_OUT", &o)
        .stdout(std::process::Stdio::null())
        .status()?;
    assert!(status.success());
    w.write_all(&std::fs::read(&o)?)?;
    Ok(())
}
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let input = std::io::BufReader::new(std::fs::File::open(&a[1]).unwrap());
    let decoder: Option<generated::Decoder> = if a.len() > 3 { Some(Box::new(unzstd)) } else { None };
    let mut r = generated::Reader::with_decoder(input, decoder).unwrap();
    let out = std::io::BufWriter::new(std::fs::File::create(&a[2]).unwrap());
    let mut w = generated::Writer::new(out, r.big_endian()).unwrap();
    while let Some(rec) = r.next().unwrap() {
        println!("{}", rec.to_text());
        w.write(&rec).unwrap();
    }
    w.finish().unwrap();
}
"#;

#[test]
fn generated_code_reads_and_writes_data_sections() {
    let dtd = include_str!("../../../examples/hatf-splitaddr.dtd");
    let name = "splitaddr";
    let build = |schema: &tramp_core::Schema| {
        let ty = |n: &str| schema.type_named(n).map(|t| t.name.clone());
        let alloc = ty("alloc").expect("alloc");
        let free = ty("free").expect("free");
        let mut v = Vec::new();
        for i in 0..500u64 {
            let a = 0x7f00_0000_0000 + i * 48;
            v.push(rec(
                schema,
                &alloc,
                &[("size", 16 + i % 200), ("address", a)],
            ));
            if i % 3 == 0 {
                v.push(rec(schema, &free, &[("address", a)]));
            }
        }
        v
    };
    let (_dir, exe) = build_driver(name, dtd, DRIVER);
    let dir = exe.parent().unwrap().to_path_buf();
    for big in [false, true] {
        // Stored sections: the generated writer writes the same bytes.
        let capture = Capture::default();
        let sink = MetaSink::new(capture.clone(), dtd, big)
            .unwrap()
            .compress_sections(false);
        let mut sink = Box::new(sink);
        let schema = sink.schema().clone();
        for r in build(&schema) {
            sink.write_record(&r.as_record(&schema.types[r.type_index()]))
                .unwrap();
        }
        sink.finish().unwrap();
        let raw = capture.bytes();
        let (lines, written) = run_driver(&exe, &format!("raw{big}"), &raw, &[]);
        assert_eq!(lines, universal_text(&raw));
        assert_eq!(lines.len(), 500 + 167);
        assert!(written == raw, "the generated writer wrote other bytes");
        // The universal reader reads what the generated writer wrote.
        assert_eq!(universal_text(&written), lines);
        // Compressed sections (the universal default), through a decoder.
        let zipped = universal_trace(dtd, big, &build);
        let zin = dir.join(format!("z{big}.mtf"));
        std::fs::write(&zin, &zipped).unwrap();
        {
            let run = Command::new(&exe)
                .arg(&zin)
                .arg(dir.join("zout.mtf"))
                .arg("zstd")
                .env("TRAMP_UNZSTD_EXE", std::env::current_exe().unwrap())
                .env("TRAMP_UNZSTD_DIR", &dir)
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            let zl: Vec<String> = String::from_utf8(run.stdout)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            assert_eq!(zl, lines);
        }
        // Without a decoder, a compressed section is a clear error.
        let run = Command::new(&exe)
            .arg(&zin)
            .arg(dir.join("zout2.mtf"))
            .output()
            .unwrap();
        assert!(!run.status.success());
        assert!(
            String::from_utf8_lossy(&run.stderr)
                .contains("is zstd-compressed: create the reader with Reader::with_decoder")
        );
    }
}

const OFFSETS_DTD: &str = "// Names spooled to data section 1; lookups point into it.
tag.width = 1;
name.width = 0;  name.interpretation = sectionStride 1 1;
ref.width = 4;   ref.interpretation = sectionOffset 1;
section names 1 {
    byte: (tag, value) { tag.value = 20; value.width = 1; value.interpretation = none; }
}
put: (tag, name) { tag.value = 4; }
get: (tag, ref) { tag.value = 5; }
";

#[test]
fn a_section_offset_out_of_range_stops_both_readers_after_the_good_records() {
    let capture = Capture::default();
    let mut sink = Box::new(
        MetaSink::new(capture.clone(), OFFSETS_DTD, false)
            .unwrap()
            .compress_sections(false),
    );
    let schema = sink.schema().clone();
    let records = [
        rec(&schema, "put", &[("name", 65)]),
        rec(&schema, "put", &[("name", 66)]),
        rec(&schema, "put", &[("name", 67)]),
        rec(&schema, "get", &[("ref", 2)]),
        rec(&schema, "get", &[("ref", 9)]),
        rec(&schema, "put", &[("name", 68)]),
    ];
    for r in &records {
        sink.write_record(&r.as_record(&schema.types[r.type_index()]))
            .unwrap();
    }
    sink.finish().unwrap();
    let bytes = capture.bytes();
    // The universal reader: four records, then the error with its offset.
    let mut src = MetaSource::open(&bytes[..], None).unwrap();
    let mut good = Vec::new();
    let err = loop {
        match src.next_record() {
            Ok(Some(rec)) => {
                let mut s = String::new();
                tramp_core::text::format_record(&mut s, &rec);
                good.push(s);
            }
            Ok(None) => panic!("the bad offset went unnoticed"),
            Err(e) => break e.to_string(),
        }
    };
    assert_eq!(good.len(), 4, "{good:?}");
    assert!(good[3].ends_with("ref=2"), "{good:?}");
    assert!(
        err.contains("offset 9 is past the end of data section 1 (4 bytes)")
            && err.contains("byte offset"),
        "{err}"
    );
    // The generated reader: the same records, then the same complaint.
    let (_dir, exe) = build_driver("offsets", OFFSETS_DTD, DRIVER);
    let dir = exe.parent().unwrap();
    std::fs::write(dir.join("in.mtf"), &bytes).unwrap();
    let run = Command::new(&exe)
        .arg(dir.join("in.mtf"))
        .arg(dir.join("out.mtf"))
        .output()
        .unwrap();
    assert!(!run.status.success());
    let printed: Vec<String> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(printed, good);
    assert!(
        String::from_utf8_lossy(&run.stderr)
            .contains("offset 9 is past the end of data section 1 (4 bytes)")
    );
}

/// Not a test of its own: the generated-code driver runs this test binary
/// with `unzstd_helper` as its zstd decompressor (TRAMP_UNZSTD_IN and
/// TRAMP_UNZSTD_OUT set), so that no test needs the zstd program.
#[test]
fn unzstd_helper() {
    let (Some(i), Some(o)) = (
        std::env::var_os("TRAMP_UNZSTD_IN"),
        std::env::var_os("TRAMP_UNZSTD_OUT"),
    ) else {
        return;
    };
    let data = std::fs::read(i).unwrap();
    std::fs::write(o, zstd::decode_all(&data[..]).unwrap()).unwrap();
}
