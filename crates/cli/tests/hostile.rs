//! The hostile-input matrix (issue 32): every command that reads a trace,
//! on every format, given the trace damaged every way a user's file gets
//! damaged. The expectations, written down:
//!
//! | input | exit | stderr |
//! |---|---|---|
//! | any | 0 or 1, never a panic (101), an abort or a signal, within 20 s | on 1: `tramp: error:` |
//! | empty file | 1 | says it is empty (or what the command needs) |
//! | random bytes | 1 | |
//! | cut inside a gzip, zstd or xz stream | 1 | |
//! | tpack with one flipped byte | 1 (its checksums) | |
//! | cut plain, one flipped byte (other formats) | 0 or 1 (a cut or flip can land where the format cannot tell) | |
//!
//! and no command leaves a temporary file beside its output.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{fixture, listing, noise, ok, path_in, tramp};

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn zstd(b: &[u8]) -> Vec<u8> {
    let mut e = zstd::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn xz(b: &[u8]) -> Vec<u8> {
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// What a variant must give.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Fails,
    Either,
}

/// The damaged variants of one valid trace: (name, bytes, expectation).
fn variants(ext: &str, good: &[u8], checksummed: bool) -> Vec<(String, Vec<u8>, Expect)> {
    let mut v = Vec::new();
    v.push((format!("empty{ext}"), Vec::new(), Expect::Fails));
    v.push((format!("random{ext}"), noise(3000, 7), Expect::Fails));
    let half = good.len() / 2;
    v.push((format!("cut{ext}"), good[..half].to_vec(), Expect::Either));
    let mut flipped = good.to_vec();
    let at = good.len() * 2 / 3;
    flipped[at] ^= 0x5a;
    let flip = if checksummed {
        Expect::Fails
    } else {
        Expect::Either
    };
    v.push((format!("flipped{ext}"), flipped, flip));
    for (c, bytes) in [("gz", gzip(good)), ("zst", zstd(good)), ("xz", xz(good))] {
        // Cut inside the compressed stream (before its end, past its
        // header).
        let cut = bytes.len() * 3 / 4;
        v.push((
            format!("cut{ext}.{c}"),
            bytes[..cut].to_vec(),
            Expect::Fails,
        ));
    }
    v
}

/// Runs tramp with a deadline; returns (exit code, stderr), or panics on a
/// signal, a panic exit or a hang.
fn run(args: &[String], deadline: Duration) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: no answer within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = reader.join().unwrap();
    let code = status
        .code()
        .unwrap_or_else(|| panic!("{args:?}: killed by a signal\n{err}"));
    assert!(code == 0 || code == 1, "{args:?}: exit {code}\n{err}");
    if code == 1 {
        assert!(err.contains("tramp: error:"), "{args:?}: {err}");
    }
    (code, err)
}

/// The reading commands, given an input path, a scratch output path and a
/// TRAMP script that reads every record.
fn commands(input: &str, out: &str, script: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["stats", input]),
        s(&["dump", input, "-o", out]),
        s(&["convert", input, &format!("{out}.hatf.txt")]),
        s(&["sizes", input, "--timing-records", "100"]),
        s(&["cachesim", input, "-s", "10,100"]),
        s(&["rds", input]),
        s(&["verify", input]),
        s(&["spans", input]),
        s(&["export", "--chrome", &format!("{out}.json"), input]),
        s(&["run", script, input]),
    ]
}

#[test]
fn every_reading_command_on_every_damage() {
    let dir = tempfile::tempdir().unwrap();
    // One valid trace of each format family, made by tramp's producers.
    let hatf = path_in(&dir, "ok.hatf");
    ok(&tramp(&["sample", "--events", "3000", "-o", &hatf]));
    let tpack = path_in(&dir, "ok.tpack");
    ok(&tramp(&["convert", &hatf, &tpack]));
    let ptf = path_in(&dir, "ok.ptf");
    ok(&tramp(&["workload", "oo7", "--ops", "t1", "-o", &ptf]));
    let mtf = path_in(&dir, "ok.mtf");
    let made = tramp(&[
        "convert",
        "--lossy",
        "--dtd",
        &fixture("alloclog.dtd"),
        "--to",
        "metatf",
        &hatf,
        &mtf,
    ]);
    assert!(made.status.success());
    let heph = fixture("heph_tracing_example.bin.log");
    let families: [(&str, PathBuf, bool); 5] = [
        (".hatf", hatf.into(), false),
        (".tpack", tpack.into(), true),
        (".ptf", ptf.into(), false),
        (".mtf", mtf.into(), false),
        (".heph", heph.into(), false),
    ];
    let inputs = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for (ext, good, checksummed) in &families {
        let bytes = std::fs::read(good).unwrap();
        for (name, damaged, expect) in variants(ext, &bytes, *checksummed) {
            let path = inputs.path().join(&name);
            std::fs::write(&path, damaged).unwrap();
            cases.push((path, expect));
        }
    }
    let script = path_in(&dir, "count.tr");
    std::fs::write(
        &script,
        "preprocess begin set n = 0; end procedure main begin set n = n + 1; end\n",
    )
    .unwrap();
    // Two threads: the matrix is some hundreds of short runs.
    let outs = tempfile::tempdir().unwrap();
    let (a, b) = cases.split_at(cases.len() / 2);
    let work = |part: &[(PathBuf, Expect)], tag: &str| -> Vec<String> {
        let mut failures = Vec::new();
        for (i, (path, expect)) in part.iter().enumerate() {
            let input = path.to_str().unwrap();
            let out = outs.path().join(format!("{tag}{i}"));
            for args in commands(input, out.to_str().unwrap(), &script) {
                let (code, err) = run(&args, Duration::from_secs(20));
                if *expect == Expect::Fails && code != 1 {
                    failures.push(format!("{args:?}: expected exit 1, got {code}\n{err}"));
                }
            }
        }
        failures
    };
    let failures = std::thread::scope(|s| {
        let h = s.spawn(|| work(a, "a"));
        let mut f = work(b, "b");
        f.extend(h.join().unwrap());
        f
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // No temporary file was left beside any output.
    let left: Vec<String> = listing(outs.path())
        .into_iter()
        .filter(|f| f.starts_with(".tramp-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
