//! End-to-end tests of the `tramp` binary.

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{golden, ok, path_in as p, tramp};

fn tramp_stdin(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn sample_stats_text_is_golden() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&tramp(&[
        "sample",
        "--events",
        "500",
        "--seed",
        "3",
        "-o",
        &p(&dir, "s.hatf"),
        "--stats",
    ]));
    golden("sample500-stats.txt", &out);
    // The stats of the written file are the same as those printed while writing.
    let again = ok(&tramp(&["stats", &p(&dir, "s.hatf")]));
    assert_eq!(again, out);
}

#[test]
fn json_stats_agree_with_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "s.hatf.zst");
    ok(&tramp(&[
        "sample", "--events", "3000", "--seed", "9", "-o", &trace,
    ]));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    let dump = ok(&tramp(&["dump", &trace]));
    let count = |prefix: &str| dump.lines().filter(|l| l.starts_with(prefix)).count() as u64;
    assert_eq!(json["total_allocs"], count("alloc "));
    assert_eq!(json["total_frees"], count("free "));
    assert_eq!(json["total_reallocs"], count("realloc/"));
    let bytes: u64 = dump
        .lines()
        .filter(|l| l.starts_with("alloc "))
        .map(|l| {
            l.split(' ')
                .nth(1)
                .unwrap()
                .trim_start_matches("size=")
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    let in_place_growth = json["bytes_allocated"].as_u64().unwrap() - bytes;
    assert!(in_place_growth < bytes / 10, "in-place realloc growth only");
    assert_eq!(json["double_frees"], 0);
    assert_eq!(json["frees_of_unknown_addresses"], 0);
    assert_eq!(json["per_thread"].as_object().unwrap().len(), 4);
}

#[test]
fn binary_text_binary_is_byte_identical_through_files_pipes_and_compression() {
    let dir = tempfile::tempdir().unwrap();
    let bin = p(&dir, "s.hatf");
    ok(&tramp(&["sample", "--events", "2000", "-o", &bin]));
    let text = p(&dir, "s.hatf.txt.gz");
    ok(&tramp(&["convert", &bin, &text]));
    let back = p(&dir, "back.hatf.zst");
    ok(&tramp(&["convert", &text, &back]));
    let plain = tramp_stdin(
        &["convert", "-", "-", "--to", "hatf"],
        &std::fs::read(&back).unwrap(),
    );
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    assert!(
        plain.stdout == std::fs::read(&bin).unwrap(),
        "binary differs after the round trip"
    );
    assert_eq!(plain.stdout.len(), std::fs::read(&bin).unwrap().len());
    // dump from stdin equals dump from the file.
    let a = ok(&tramp(&["dump", &bin]));
    let b = ok(&tramp_stdin(&["dump", "-"], &std::fs::read(&bin).unwrap()));
    assert_eq!(a, b);
}

#[test]
fn naive_policy_reencodes_a_hand_written_trace() {
    let dir = tempfile::tempdir().unwrap();
    let text = "# a hand-written trace\n\
                alloc size=16 address=0x7f0000001000\n\
                alloc size=100000 address=0x1000 thread=2\n\
                free address=0x7f0000001000 thread=2\n\
                free address=0x7f0000001000\n\
                free address=0x42\n";
    let src = p(&dir, "t.txt");
    std::fs::write(&src, text).unwrap();
    // Explicit (the default between HATF forms) keeps the input's encoding;
    // this text gives none (no `set` lines), so metadata is placed where
    // values do not fit, as naive places it (docs/formats/hatf.md).
    ok(&tramp(&["convert", &src, &p(&dir, "e.hatf")]));
    ok(&tramp(&[
        "convert",
        "--policy",
        "naive",
        &src,
        &p(&dir, "n.hatf"),
    ]));
    assert_eq!(
        std::fs::read(p(&dir, "e.hatf")).unwrap(),
        std::fs::read(p(&dir, "n.hatf")).unwrap()
    );
    // With a `set` line of its own, the input's encoding is kept as it is:
    // the 64-bit address does not fit the 4-byte field, a clear error
    // naming the record.
    let strict = p(&dir, "s.txt");
    std::fs::write(&strict, format!("set fieldSize size 4\n{text}")).unwrap();
    let out = tramp(&["convert", &strict, &p(&dir, "s.hatf")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot encode record 1") && err.contains("address value 0x7f0000001000"),
        "{err}"
    );
    let dump = ok(&tramp(&["dump", &p(&dir, "n.hatf")]));
    assert!(dump.contains("set fieldSize address 8\n"), "{dump}");
    assert!(
        dump.contains("alloc size=100000 address=0x1000 thread=2 heap=0 time=0\n"),
        "{dump}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &p(&dir, "n.hatf")]))).unwrap();
    assert_eq!(json["double_frees"], 1);
    assert_eq!(json["frees_of_unknown_addresses"], 1);
    assert_eq!(json["max_live_bytes"], 100016);
}

#[test]
fn damaged_input_keeps_the_valid_prefix_and_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let bin = p(&dir, "s.hatf");
    ok(&tramp(&["sample", "--events", "200", "-o", &bin]));
    let bytes = std::fs::read(&bin).unwrap();
    // Cut in the middle of the last record.
    let cut = p(&dir, "cut.hatf");
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    let out = tramp(&["convert", &cut, &p(&dir, "cut.txt")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("byte offset") && err.contains("record") && err.contains("cut short"),
        "{err}"
    );
    let full = ok(&tramp(&["dump", &bin]));
    let partial = std::fs::read_to_string(p(&dir, "cut.txt")).unwrap();
    assert_eq!(partial.lines().count(), full.lines().count() - 1);
    assert!(full.starts_with(&partial));
    // stats still prints what was read, then fails.
    let out = tramp(&["stats", &cut]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("total allocs"));
    // An unknown tag.
    let out = tramp_stdin(
        &["stats", "--format", "hatf", "-"],
        &[0, 0, 0, 0, 1, 0, 0, 0, 2, 200],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("byte offset 9, record 1: unknown record tag 200"),
        "{err}"
    );
    // Not a trace at all.
    let out = tramp_stdin(&["stats", "-"], b"hello world");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot tell the format"));
    // A corrupt zstd frame.
    let out = tramp_stdin(
        &["stats", "-"],
        &[0x28, 0xB5, 0x2F, 0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
    );
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

/// tpack coded on threads is the same file as on one, through the binary
/// (the default takes the machine's cores), and a bad thread count is a
/// usage error that says what is allowed, with nothing written.
#[test]
fn tpack_on_threads_is_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let bin = p(&dir, "s.hatf");
    ok(&tramp(&["sample", "--events", "5000", "-o", &bin]));
    let mut files = Vec::new();
    for policy in [
        "zstd-3,block=700,threads=1",
        "zstd-3,block=700,threads=3",
        "zstd-3,block=700",
    ] {
        let out = p(&dir, &format!("{}.tpack", files.len()));
        ok(&tramp(&["convert", &bin, &out, "--policy", policy]));
        files.push(std::fs::read(&out).unwrap());
    }
    assert!(files.len() == 3 && files[0].len() > 8 * 100);
    assert!(files[1] == files[0] && files[2] == files[0]);
    let back = p(&dir, "back.hatf");
    ok(&tramp(&["convert", &p(&dir, "1.tpack"), &back]));
    assert_eq!(ok(&tramp(&["dump", &back])), ok(&tramp(&["dump", &bin])));
    let bad = p(&dir, "bad.tpack");
    let out = tramp(&["convert", &bin, &bad, "--policy", "zstd-3,threads=0"]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("`threads=0`: threads are 1 … 64"),
        "{}",
        common::stderr(&out)
    );
    assert!(!Path::new(&bad).exists());
}

#[test]
fn help_is_complete() {
    for (cmd, words) in [
        (
            "stats",
            &["--json", "--format", "Table 3", "--sites", "--top", "leaks"][..],
        ),
        ("dump", &["--output", "text form"][..]),
        (
            "convert",
            &[
                "--to",
                "--policy",
                "--compress",
                "threads=N",
                "naive",
                "--dtd",
                "Meta-TF",
            ][..],
        ),
        ("formats", &["extensions"][..]),
        ("gen", &["--rust", "--output", "Reader", "Writer"][..]),
        ("sample", &["--events", "--seed", "--stats"][..]),
        (
            "record",
            &[
                "--output",
                "--stack",
                "--stats",
                "--sites",
                "threads",
                "exit status",
                "pid",
            ][..],
        ),
        (
            "replay",
            &[
                "--allocator",
                "--external",
                "--repeat",
                "--serial",
                "--svg",
                "--bench-lines",
                "--wait-limit",
                "--no-touch",
                "--json",
                "futex",
                "footprint",
                "RSS",
            ][..],
        ),
        (
            "verify",
            &[
                "--gc",
                "--max-errors",
                "super root",
                "ts",
                "event number",
                "Exit status",
            ][..],
        ),
        (
            "export",
            &["--chrome", "Perfetto", "process", "thread", "NaN", "epoch"][..],
        ),
        (
            "spans",
            &[
                "--tree",
                "self time",
                "p99",
                "wrap",
                "STREAM:SUBSTREAM",
                "--max-ranges",
            ][..],
        ),
        (
            "workload",
            &[
                "oo7",
                "--config",
                "--ops",
                "t2a",
                "q8",
                "insert",
                "--seed",
                "--to",
                "NumAtomicPerComp",
            ][..],
        ),
    ] {
        let help = ok(&tramp(&[cmd, "--help"]));
        for w in words {
            assert!(help.contains(w), "`tramp {cmd} --help` lacks {w}:\n{help}");
        }
    }
    let formats = ok(&tramp(&["formats"]));
    assert!(formats.contains("hatf ") && formats.contains("hatf-text"));
    assert!(formats.contains("ptf ") && formats.contains("ptf-text"));
    assert!(formats.contains("heph "));
    // libCacheSim's layouts, from the one table cachesim detects them by.
    for d in &tramp_cachetrace::LAYOUTS {
        let row = format!("\n{:<12} {}", d.names[0], d.about);
        assert!(formats.contains(&row), "{row} not in:\n{formats}");
    }
}

#[test]
fn metatf_text_written_by_hand_converts_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dtd = fixtures.join("fstrace.dtd");
    let records = fixtures.join("fstrace-records.txt");
    let mtf = p(&dir, "fs.mtf");
    ok(&from_metatf_text(&dtd, records.to_str().unwrap(), &mtf));
    let bytes = std::fs::read(&mtf).unwrap();
    assert_eq!(&bytes[..4], b"\x7fMTF", "Meta-TF magic");
    // The binary carries its DTD: dump needs nothing else.
    let text = ok(&tramp(&["dump", &mtf]));
    assert!(text.starts_with("# tramp metatf-text 1\n#| "));
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let want = std::fs::read_to_string(&records).unwrap();
    assert_eq!(body, want.lines().collect::<Vec<_>>());
    // text -> binary -> text -> binary is byte-identical.
    let text_path = p(&dir, "fs.mtf.txt");
    std::fs::write(&text_path, &text).unwrap();
    let again = p(&dir, "again.mtf");
    ok(&tramp(&["convert", &text_path, &again]));
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
    // The byte string in hex (the form that holds any bytes) is the same
    // record as the quoted text tramp writes for it.
    assert!(text.contains("path=\"/tmp\""), "{text}");
    let hex_path = p(&dir, "hex.mtf.txt");
    std::fs::write(&hex_path, text.replace("path=\"/tmp\"", "path=x:2f746d70")).unwrap();
    let from_hex = p(&dir, "hex.mtf");
    ok(&tramp(&["convert", &hex_path, &from_hex]));
    assert_eq!(std::fs::read(&from_hex).unwrap(), bytes);
    // A value that does not fit its field is an error naming the record.
    let bad = p(&dir, "bad.txt");
    std::fs::write(&bad, "close tag=8 time=1 fd=70000\n").unwrap();
    let out = from_metatf_text(&dtd, &bad, &p(&dir, "bad.mtf"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot encode record 0") && err.contains("does not fit 2 bytes"),
        "{err}"
    );
    // Damage: a cut binary reports where.
    let cut = p(&dir, "cut.mtf");
    std::fs::write(&cut, &bytes[..bytes.len() - 2]).unwrap();
    let out = tramp(&["dump", &cut]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("byte offset"));
}

#[test]
fn split_address_encoding_is_a_dtd() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = p(&dir, "s.hatf");
    ok(&tramp(&["sample", "--events", "5000", "-o", &hatf]));
    let dtd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hatf-splitaddr.dtd");
    let split = p(&dir, "s.mtf");
    ok(&tramp(&[
        "convert",
        "--dtd",
        dtd.to_str().unwrap(),
        "--to",
        "metatf",
        &hatf,
        &split,
    ]));
    // The addresses went to data section 1, compressed on its own (a zstd
    // frame between the embedded DTD and the records).
    let bytes = std::fs::read(&split).unwrap();
    assert!(
        bytes.windows(4).any(|w| w == [0x28, 0xB5, 0x2F, 0xFD]),
        "a zstd-compressed data section"
    );
    let stats = |path: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&tramp(&["stats", "--json", path]))).unwrap()
    };
    let (a, b) = (stats(&hatf), stats(&split));
    for key in [
        "total_allocs",
        "total_frees",
        "total_reallocs",
        "max_live_objects",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // Every address came back from the section, in order.
    let addresses = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("alloc ") || l.starts_with("free "))
            .map(|l| {
                l.split(' ')
                    .find_map(|kv| kv.strip_prefix("address="))
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let h: Vec<u64> = addresses(&ok(&tramp(&["dump", &hatf])))
        .iter()
        .map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).unwrap())
        .collect();
    let m: Vec<u64> = addresses(&ok(&tramp(&["dump", &split])))
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    assert_eq!(h, m);
}

#[test]
fn heap_statistics_of_a_dtd_with_its_own_names() {
    // Kinds and roles declared in the DTD let `tramp stats` read the heap.
    let dir = tempfile::tempdir().unwrap();
    let dtd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/alloclog.dtd");
    let text = p(&dir, "log.txt");
    std::fs::write(
        &text,
        "get tag=4 tid=1 bytes=100 ptr=4096\nget tag=4 tid=2 bytes=50 ptr=8192\nput tag=5 tid=1 ptr=4096\nput tag=5 tid=1 ptr=4096\n",
    )
    .unwrap();
    let mtf = p(&dir, "log.mtf");
    ok(&from_metatf_text(&dtd, &text, &mtf));
    let v: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &mtf]))).unwrap();
    assert_eq!(v["total_allocs"], 2);
    assert_eq!(v["total_frees"], 2);
    assert_eq!(v["double_frees"], 1);
    assert_eq!(v["max_live_bytes"], 150);
    assert_eq!(v["per_thread"].as_object().unwrap().len(), 2);
}

const FIGURE3: &str = include_str!("../../../tests/fixtures/ptf/figure3.ptf.txt");

#[test]
fn ptf_figure3_verifies_converts_and_has_golden_stats() {
    let dir = tempfile::tempdir().unwrap();
    let text = p(&dir, "fig3.ptf.txt");
    std::fs::write(&text, FIGURE3).unwrap();
    let out = ok(&tramp(&["verify", "--gc", &text]));
    assert!(out.ends_with("37 events, 0 violations, 0 objects collected in 0 collections, 7 objects live at the end\n"), "{out}");
    // ASCII -> binary (by extension) -> ASCII, through a pipe and zstd.
    let bin = p(&dir, "fig3.ptf.zst");
    ok(&tramp(&["convert", &text, &bin]));
    let back = ok(&tramp(&["dump", &bin]));
    assert_eq!(back, FIGURE3);
    let piped = tramp_stdin(
        &["convert", "--to", "ptf-text", "-", "-"],
        &std::fs::read(p(&dir, "fig3.ptf.zst")).unwrap(),
    );
    assert_eq!(ok(&piped), FIGURE3);
    golden("figure3-stats.txt", &ok(&tramp(&["stats", &bin])));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &text]))).unwrap();
    assert_eq!(json["events"], 37);
    assert_eq!(json["events_per_type"]["ew"], 6);
    assert_eq!(json["objects_per_format"][0]["name"], "BinTreeNode");
    assert_eq!(json["max_live_objects"], 7);
}

#[test]
fn ptf_verify_reports_every_violation_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = p(&dir, "bad.ptf.txt");
    let body = FIGURE3
        .replace("dw 41 44 1\n", "dw 41 44 9\nco 41 43\nbogus\n")
        .replace("te\n", "te\nte\n");
    std::fs::write(&bad, body).unwrap();
    let out = tramp(&["verify", &bad]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let want = [
        "event 10 (line 11): [data-offset] `dw` offset 9 of object 44: format 41 (BinTreeNode) has 1 data members (positions 1–1)",
        "event 11 (line 12): [oid-reused] `co` creates 43, an OId already used (OIds are never reused)",
        "event 12 (line 13): [syntax] unknown event `bogus`",
        "event 27 (line 28): [brackets] `te` without an open `ts`",
    ];
    for w in want {
        assert!(
            text.contains(&format!("{bad}: {w}\n")),
            "missing {w} in\n{text}"
        );
    }
    assert!(text.contains("39 events, 4 violations"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("4 violations"));
}

#[test]
fn ptf_oo7_workload_verifies_with_gc_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let a = p(&dir, "a.ptf");
    let b = p(&dir, "b.ptf.txt");
    let run = tramp(&[
        "workload",
        "oo7",
        "--ops",
        "t1,q1,insert,delete",
        "--seed",
        "9",
        "-o",
        &a,
    ]);
    ok(&run);
    assert!(String::from_utf8_lossy(&run.stderr).contains("500 composite parts, 10000 atomic parts, 30000 connections, 729 base and 364 complex assemblies"));
    ok(&tramp(&[
        "workload",
        "oo7",
        "--ops",
        "t1,q1,insert,delete",
        "--seed",
        "9",
        "-o",
        &b,
    ]));
    let out = ok(&tramp(&["verify", "--gc", &a]));
    assert!(out.contains(" 0 violations, 0 objects collected"), "{out}");
    // The ASCII file is the binary one in the other form.
    let conv = p(&dir, "c.ptf");
    ok(&tramp(&["convert", &b, &conv]));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&conv).unwrap());
    let bad = tramp(&["workload", "oo7", "--ops", "delete", "-o", &a]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("put insert before it"));
    let bad = tramp(&["workload", "oo7", "--ops", "t9", "-o", &a]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown operation `t9`"));
}

#[test]
fn ptf_damaged_binary_keeps_the_events_before_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let text = p(&dir, "fig3.ptf.txt");
    std::fs::write(&text, FIGURE3).unwrap();
    let bin = p(&dir, "fig3.ptf");
    ok(&tramp(&["convert", &text, &bin]));
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes.truncate(bytes.len() - 2);
    std::fs::write(&bin, &bytes).unwrap();
    let out = p(&dir, "out.ptf.txt");
    let r = tramp(&["convert", &bin, &out]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("event cut short") && err.contains("event 36"),
        "{err}"
    );
    let kept = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        kept.lines().count(),
        1 + 36 + 1,
        "36 events kept between the markers:\n{kept}"
    );
}

const HEPH_EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/heph/heph_tracing_example.bin.log"
);
const HEPH_SCALAR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/heph/scalar.bin.log"
);

#[test]
fn heph_export_opens_as_json_with_processes_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let out = p(&dir, "scalar.json");
    ok(&tramp(&["export", "--chrome", &out, HEPH_SCALAR]));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let complete = events.iter().filter(|e| e["ph"] == "X").count();
    let names: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "M").collect();
    assert_eq!(complete, 410);
    assert_eq!(
        names.iter().filter(|e| e["name"] == "process_name").count(),
        4
    );
    assert_eq!(
        names.iter().filter(|e| e["name"] == "thread_name").count(),
        4
    );
    assert_eq!(v["otherData"]["epoch_ns"], "1795312333888124039");
    // Through a pipe, compressed.
    let gz = p(&dir, "scalar.json.gz");
    let piped = tramp_stdin(
        &["export", "--chrome", &gz, "-"],
        &std::fs::read(HEPH_SCALAR).unwrap(),
    );
    ok(&piped);
    assert!(std::fs::metadata(&gz).unwrap().len() > 100);
}

#[test]
fn heph_spans_stats_dump_and_convert() {
    let spans = ok(&tramp(&["spans", HEPH_EXAMPLE]));
    assert!(
        spans.starts_with("    count      total       self        p50        p99  description\n"),
        "{spans}"
    );
    assert!(
        spans
            .contains("       21     312 ms     143 ms    2.08 µs    81.3 ms  receiving message\n"),
        "{spans}"
    );
    assert!(spans.contains("Scheduling processes"));
    assert!(
        spans.contains("stream 1: 0 missing, 0 late, 0 duplicate, 0 wraps"),
        "{spans}"
    );
    let tree = ok(&tramp(&["spans", "--tree", "1:0", HEPH_EXAMPLE]));
    assert!(tree.contains("Scheduling processes [3293367..3375240] 81.9 µs (self 10.3 µs)\n  Polling for OS events [3293537..3359521] 66.0 µs (self 66.0 µs)\n"), "{tree}");
    let stats = ok(&tramp(&["stats", HEPH_EXAMPLE]));
    assert!(stats.starts_with("packets     97\nevents      96\nepoch       1795312005266882225 ns since the Unix epoch (2026-11-22 01:46:45.266 UTC)\n"), "{stats}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", HEPH_EXAMPLE]))).unwrap();
    assert_eq!(
        (json["packets"].as_u64(), json["events"].as_u64()),
        (Some(97), Some(96))
    );
    assert_eq!(json["epoch_ns"], 1795312005266882225u64);
    let sched = json["descriptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["description"] == "Scheduling processes")
        .unwrap();
    assert!(sched["self_ns"].as_u64() < sched["total_ns"].as_u64());
    assert_eq!(json["counters"][0]["missing"], 0);
    let dump = ok(&tramp(&["dump", HEPH_EXAMPLE]));
    assert_eq!(dump.lines().count(), 97);
    assert!(dump.contains("description=\"Building runtime\""), "{dump}");
    // Heph -> Heph (through zstd) is byte-identical.
    let dir = tempfile::tempdir().unwrap();
    let z = p(&dir, "copy.heph.zst");
    ok(&tramp(&["convert", HEPH_EXAMPLE, &z]));
    let back = p(&dir, "back.heph");
    ok(&tramp(&["convert", &z, &back]));
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(HEPH_EXAMPLE).unwrap()
    );
}

#[test]
fn heph_damage_is_warned_about_skipped_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(HEPH_EXAMPLE).unwrap();
    // Flip the magic of the second packet (the first event, at byte 23)
    // and cut the last packet short.
    bytes[23] ^= 0xFF;
    bytes.truncate(bytes.len() - 5);
    let bad = p(&dir, "bad.heph");
    std::fs::write(&bad, &bytes).unwrap();
    let out = tramp(&["spans", &bad]);
    // Damage is a non-zero exit after the output (issue 11; it was 0).
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.is_empty(), "the spans are printed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("byte offset 23: bad magic 0x3efc1fb7; resynchronised at the next packet"),
        "{err}"
    );
    assert!(err.contains("the trace ends inside a packet"), "{err}");
    let json = p(&dir, "bad.json");
    let out = tramp(&["export", "--chrome", &json, &bad]);
    assert_eq!(out.status.code(), Some(1), "damage is a non-zero exit");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let complete = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    assert_eq!(complete, 94, "96 events less the flipped and the cut one");
}

/// `tramp sizes` on the built-in sample: the size tables are golden (the
/// timing tables are left out: times are not asserted), with all three
/// compressors, and the JSON has the same rows.
#[test]
fn sizes_of_the_sample_are_golden() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "s.hatf");
    ok(&tramp(&[
        "sample", "--events", "20000", "--seed", "5", "-o", &trace,
    ]));
    let out = ok(&tramp(&[
        "sizes",
        &trace,
        "--timing-records",
        "0",
        "--compress",
        "gzip,zstd,xz",
    ]));
    golden("sample20000-sizes.txt", &out);
    let json = ok(&tramp(&[
        "sizes",
        &trace,
        "--timing-records",
        "0",
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 20);
    assert_eq!(v["compressors"], serde_json::json!(["gzip", "zstd"]));
    // Timing runs and prints its tables when asked.
    let timed = ok(&tramp(&["sizes", &trace, "--timing-records", "2000"]));
    assert!(timed.contains("Tables 5 and 6"), "{timed}");
    assert!(timed.contains("HATF SplitAddr"));
    // A form that cannot hold a record (64-bit addresses in 32-bit words)
    // stops the study there, well before the trace's end, with an error
    // that names the form and the record: Simple Binary, the first of the
    // two forms that fail there, whichever thread failed first.
    let long = p(&dir, "long.hatf");
    ok(&tramp(&[
        "sample", "--events", "60000", "--seed", "5", "-o", &long,
    ]));
    for threads in ["1", "2", "3"] {
        let e = tramp(&[
            "sizes",
            &long,
            "--word",
            "4",
            "--timing-records",
            "0",
            "--threads",
            threads,
        ]);
        assert!(!e.status.success());
        let err = String::from_utf8_lossy(&e.stderr);
        assert!(
            err.contains("simple binary output cannot encode record 5:")
                && err.contains("4-byte word"),
            "threads {threads}: {err}"
        );
    }
    // Not a heap trace: a clear error.
    let ptf = p(&dir, "o.ptf");
    ok(&tramp(&["workload", "oo7", "-o", &ptf]));
    let e = tramp(&["sizes", &ptf]);
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("heap traces"));
}

/// `tramp convert --dtd DTD --format metatf-text INPUT OUTPUT`.
fn from_metatf_text(dtd: &Path, input: &str, output: &str) -> std::process::Output {
    tramp(&[
        "convert",
        "--dtd",
        dtd.to_str().unwrap(),
        "--format",
        "metatf-text",
        input,
        output,
    ])
}
