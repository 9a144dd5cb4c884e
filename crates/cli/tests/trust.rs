//! End-to-end tests of trust (issue 11): damage is a non-zero exit with
//! everything around it kept, outputs appear only when complete, and a
//! closed pipe ends a command quietly.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{fixture, noise, path_in, stderr, tramp};

/// The Heph runtime's own trace with the second packet's size field
/// claiming 2 GiB: the reader resynchronises at the next packet.
fn heph_with_a_bad_size() -> Vec<u8> {
    let mut d = std::fs::read(fixture("heph_tracing_example.bin.log")).unwrap();
    let first = u32::from_be_bytes(d[4..8].try_into().unwrap()) as usize;
    d[first + 4..first + 8].copy_from_slice(&0x7fff_fff0u32.to_be_bytes());
    d
}

#[test]
fn heph_damage_is_a_nonzero_exit_after_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let random = dir.path().join("random.heph");
    std::fs::write(&random, noise(5000, 0x2545_f491_4f6c_dd1d)).unwrap();
    let damaged = dir.path().join("damaged.heph");
    std::fs::write(&damaged, heph_with_a_bad_size()).unwrap();
    let clean = fixture("heph_tracing_example.bin.log");
    let json = dir.path().join("out.json");
    let json = json.to_str().unwrap();
    for file in [random.to_str().unwrap(), damaged.to_str().unwrap()] {
        for args in [
            vec!["stats", "-f", "heph", file],
            vec!["spans", "-f", "heph", file],
            vec!["dump", "-f", "heph", file],
            vec!["export", "-f", "heph", "--chrome", json, file],
        ] {
            let out = tramp(&args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains("tramp: warning:"), "{args:?}: {err}");
            assert!(err.contains("the trace is damaged"), "{args:?}: {err}");
        }
    }
    // The damaged trace still reports every packet around the damage.
    let out = tramp(&["stats", damaged.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let clean_out = tramp(&["stats", &clean]);
    assert!(clean_out.status.success());
    let packets = |t: &str| -> u64 {
        t.lines()
            .find_map(|l| l.strip_prefix("packets"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let all = packets(&String::from_utf8(clean_out.stdout).unwrap());
    assert_eq!(packets(&text), all - 1, "only the damaged packet is lost");
}

/// Runs `tramp args`, reads `keep` bytes of its stdout and closes the pipe.
fn read_then_close(args: &[&str], keep: usize) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; keep];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = dir.path().join("s.hatf");
    let hatf = hatf.to_str().unwrap();
    assert!(
        tramp(&["sample", "--events", "200000", "-o", hatf])
            .status
            .success()
    );
    let ptf = dir.path().join("o.ptf");
    let ptf = ptf.to_str().unwrap();
    assert!(
        tramp(&["workload", "oo7", "--ops", "t1", "-o", ptf])
            .status
            .success()
    );
    let heph = fixture("scalar.bin.log");
    for args in [
        vec!["dump", hatf],
        vec!["dump", ptf],
        vec!["dump", &heph],
        vec!["convert", hatf, "-", "--to", "hatf-text"],
        vec!["convert", ptf, "-", "--to", "ptf-text"],
        vec!["export", "--chrome", "-", &heph],
        vec!["sample", "--events", "200000", "-o", "-"],
    ] {
        let out = read_then_close(&args, 64);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

#[test]
fn text_records_with_missing_fields_or_cut_short_are_errors_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let dtd = fixture("fstrace.dtd");
    let records = std::fs::read_to_string(fixture("fstrace-records.txt")).unwrap();
    let out_path = dir.path().join("out.mtf");
    let out_path = out_path.to_str().unwrap();
    let cases = [
        // A Meta-TF record without its `length`.
        (
            records.replacen(" length=4096", "", 1),
            "line 2",
            "`read` lacks field `length`",
        ),
        // Cut in the middle of the last line.
        (
            records[..records.len() - 3].to_string(),
            "line 4",
            "ends in the middle of this line",
        ),
    ];
    for (text, line, msg) in cases {
        let input = dir.path().join("in.mtf.txt");
        std::fs::write(&input, &text).unwrap();
        let out = tramp(&[
            "convert",
            "--dtd",
            &dtd,
            "--format",
            "metatf-text",
            input.to_str().unwrap(),
            out_path,
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains(line) && err.contains(msg), "{err}");
    }
    // HATF text: `alloc size=5` and `free` are not records of address 0.
    for (text, msg) in [
        ("alloc size=5\n", "alloc lacks `address=`"),
        ("free\n", "free lacks `address=`"),
    ] {
        let input = dir.path().join("in.hatf.txt");
        std::fs::write(&input, format!("# tramp hatf-text 1\n{text}")).unwrap();
        let out = tramp(&["stats", input.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains("line 2") && err.contains(msg), "{err}");
    }
}

fn ext(format: &str) -> &'static str {
    match format {
        "hatf" => "hatf",
        "hatf-text" => "hatf.txt",
        "metatf" => "mtf",
        "metatf-text" => "mtf.txt",
        "ptf" => "ptf",
        "ptf-text" => "ptf.txt",
        _ => "heph",
    }
}

/// The records of a trace as `tramp dump` prints them, less encoding
/// metadata and comments lines (`set …`, `# …`), which a target re-encodes.
fn records(path: &str) -> Vec<String> {
    let out = tramp(&["dump", path]);
    assert!(out.status.success(), "dump {path}: {}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| {
            !l.starts_with('#')
                && !l.starts_with("set ")
                && !l.starts_with("fieldSize")
                && !l.starts_with("fieldInterpretation")
        })
        .map(str::to_string)
        .collect()
}

/// Every fixture of every format through every target format: each
/// conversion is refused cleanly (exit 1, "refused", no output file) or is
/// accepted, and then converting back gives the same records.
#[test]
fn every_conversion_is_lossless_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| path_in(&dir, name);
    let split_dtd = fixture("hatf-splitaddr.dtd");
    // The fixtures, one or more per format.
    let hatf = at("sample.hatf");
    assert!(
        tramp(&["sample", "--events", "3000", "-o", &hatf])
            .status
            .success()
    );
    let mut fixtures: Vec<(String, &str)> = vec![(hatf.clone(), "hatf")];
    let conv = |args: &[&str]| assert!(tramp(args).status.success(), "{args:?}");
    let hatf_text = at("sample.hatf.txt");
    conv(&["convert", &hatf, &hatf_text]);
    fixtures.push((hatf_text, "hatf-text"));
    let split = at("split.mtf");
    conv(&[
        "convert", "--dtd", &split_dtd, "--to", "metatf", &hatf, &split,
    ]);
    fixtures.push((split, "metatf"));
    let fs = at("fs.mtf");
    conv(&[
        "convert",
        "--dtd",
        &fixture("fstrace.dtd"),
        "--format",
        "metatf-text",
        &fixture("fstrace-records.txt"),
        &fs,
    ]);
    fixtures.push((fs.clone(), "metatf"));
    let fs_text = at("fs.mtf.txt");
    conv(&["convert", &fs, &fs_text]);
    fixtures.push((fs_text, "metatf-text"));
    let fig3 = fixture("figure3.ptf.txt");
    let fig3_bin = at("figure3.ptf");
    conv(&["convert", &fig3, &fig3_bin]);
    fixtures.push((fig3, "ptf-text"));
    fixtures.push((fig3_bin, "ptf"));
    fixtures.push((fixture("heph_tracing_example.bin.log"), "heph"));

    let targets = [
        "hatf",
        "hatf-text",
        "metatf",
        "metatf-text",
        "ptf",
        "ptf-text",
        "heph",
    ];
    let (mut accepted, mut refused) = (0, 0);
    for (i, (src, from)) in fixtures.iter().enumerate() {
        let embeds_dtd = from.starts_with("metatf");
        for to in targets {
            let out = at(&format!("{i}-to.{}", ext(to)));
            let mut args = vec!["convert", "--to", to];
            if to.starts_with("metatf") && !embeds_dtd {
                args.extend(["--dtd", &split_dtd]);
            }
            args.extend([src.as_str(), out.as_str()]);
            let r = tramp(&args);
            if r.status.code() == Some(1) {
                let err = stderr(&r);
                assert!(err.contains("refused"), "{from} -> {to}: {err}");
                assert!(
                    !Path::new(&out).exists(),
                    "{from} -> {to}: a refused conversion left {out}"
                );
                refused += 1;
                continue;
            }
            assert!(r.status.success(), "{from} -> {to}: {}", stderr(&r));
            accepted += 1;
            // Back to the source's format: also accepted, same records.
            let back = at(&format!("{i}-back.{}", ext(from)));
            let mut args = vec!["convert", "--to", from];
            if from.starts_with("metatf") && !to.starts_with("metatf") {
                continue; // the DTD does not travel through other formats
            }
            args.extend([out.as_str(), back.as_str()]);
            let r = tramp(&args);
            assert!(
                r.status.success(),
                "{from} -> {to} -> {from}: {}",
                stderr(&r)
            );
            assert_eq!(records(&back), records(src), "{from} -> {to} -> {from}");
        }
    }
    // Both outcomes occur: same-family and SplitAddr conversions are
    // accepted, PTF or Heph into HATF refused.
    assert!(
        accepted >= 12 && refused >= 12,
        "accepted {accepted}, refused {refused}"
    );
}

#[test]
fn lossy_writes_what_the_target_holds_and_says_what_it_did_not() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| path_in(&dir, name);
    let hatf = at("s.hatf");
    assert!(
        tramp(&["sample", "--events", "2000", "-o", &hatf])
            .status
            .success()
    );
    let dtd = fixture("alloclog.dtd");
    let out = at("s.mtf");
    // alloclog.dtd has get/put records only: reallocs and the rest have
    // no place. Refused without --lossy, and nothing is written.
    let r = tramp(&["convert", "--dtd", &dtd, "--to", "metatf", &hatf, &out]);
    assert_eq!(r.status.code(), Some(1));
    let err = stderr(&r);
    assert!(
        err.contains("refused") && err.contains("realloc/alloc-free:"),
        "{err}"
    );
    assert!(!Path::new(&out).exists());
    // With --lossy: written, and every loss is listed with its count.
    let r = tramp(&[
        "convert", "--lossy", "--dtd", &dtd, "--to", "metatf", &hatf, &out,
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let err = stderr(&r);
    assert!(err.contains("--lossy: what metatf could not hold"), "{err}");
    // The table's rows: read = written + dropped + re-encoded + withheld
    // for every record type (HATF's metadata is re-encoded); the written
    // ones are the output's records; and the values came across by role
    // (alloclog's `bytes`, `ptr`, `tid`), not as zeros.
    let mut written = 0u64;
    for line in err
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("tramp:") && !l.starts_with('('))
    {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let n: Vec<u64> = cols[1..].iter().map(|c| c.parse().unwrap()).collect();
        let (read, w, dropped, reencoded, withheld) = (n[0], n[1], n[2], n[3], n[4]);
        assert_eq!(read, w + dropped + reencoded + withheld, "{line}");
        assert_eq!(reencoded > 0, cols[0].starts_with("field"), "{line}");
        written += w;
    }
    let stats = |path: &str| -> serde_json::Value {
        serde_json::from_slice(&tramp(&["stats", "--json", path]).stdout).unwrap()
    };
    let (a, b) = (stats(&hatf), stats(&out));
    assert_eq!(b["records"].as_u64().unwrap(), written);
    assert_eq!(a["total_allocs"], b["total_allocs"]);
    assert_eq!(a["total_frees"], b["total_frees"]);
    assert!(b["bytes_allocated"].as_u64().unwrap() > 0);
}

#[test]
fn recording_leaves_no_temporary_files_and_prunes_old_cache_copies() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    // A copy an older build left in the cache two hours ago.
    let old = cache
        .path()
        .join("tramp/libtramp_capture-00000000deadbeef.so");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::write(&old, b"old").unwrap();
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let trace = out_dir.path().join("t.hatf");
    let run = |cmd: &str| {
        Command::new(env!("CARGO_BIN_EXE_tramp"))
            .args(["record", "-o", trace.to_str().unwrap(), "--", cmd])
            .env("TMPDIR", tmp.path())
            .env("XDG_CACHE_HOME", cache.path())
            .output()
            .unwrap()
    };
    // A command that cannot start: an error, and no temporary directory.
    let out = run("/nonexistent/program");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot run"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    assert!(!trace.exists());
    // A real one: the raw logs are gone afterwards too.
    let out = run("ls");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    assert!(trace.exists());
    // The old copy was pruned; the current one is the only capture library.
    let copies: Vec<String> = std::fs::read_dir(cache.path().join("tramp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("libtramp_capture-"))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(!old.exists());
}

/// Decompresses `data` as far as it goes (a cut stream), with the
/// compression libraries directly.
fn decompressed_prefix(data: &[u8], ext: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut r: Box<dyn Read> = match ext {
        "gz" => Box::new(flate2::read::MultiGzDecoder::new(data)),
        "xz" => Box::new(liblzma::read::XzDecoder::new(data)),
        _ => Box::new(zstd::Decoder::new(data).unwrap()),
    };
    let mut buf = [0u8; 4096];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

#[test]
fn a_cut_compressed_input_delivers_every_record_of_its_decompressed_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| path_in(&dir, name);
    let plain = at("s.hatf");
    assert!(
        tramp(&["sample", "--events", "200000", "-o", &plain])
            .status
            .success()
    );
    let full: Vec<String> = String::from_utf8(tramp(&["dump", &plain]).stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    for ext in ["gz", "xz", "zst"] {
        let packed = at(&format!("s.hatf.{ext}"));
        assert!(tramp(&["convert", &plain, &packed]).status.success());
        let bytes = std::fs::read(&packed).unwrap();
        for frac in [0.35, 0.8] {
            let cut_len = (bytes.len() as f64 * frac) as usize;
            let cut = at(&format!("cut.hatf.{ext}"));
            std::fs::write(&cut, &bytes[..cut_len]).unwrap();
            // The records whole inside what the cut stream decompresses to,
            // counted by the HATF reader on those bytes.
            let prefix = decompressed_prefix(&bytes[..cut_len], ext);
            let mut r = tramp_hatf::Reader::from_slice(&prefix).with_metadata(true);
            let mut expected = 0usize;
            while let Ok(Some(_)) = r.next_item() {
                expected += 1;
            }
            let out = tramp(&["dump", &cut]);
            assert_eq!(out.status.code(), Some(1), "{ext} {frac}");
            let got: Vec<String> = String::from_utf8(out.stdout.clone())
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            // The dump's header line, then one line per record.
            assert_eq!(got.len() - 1, expected, "{ext} cut at {frac}");
            assert_eq!(
                got[..],
                full[..got.len()],
                "{ext} {frac}: a prefix of the trace"
            );
            let err = stderr(&out);
            let name = if ext == "zst" {
                "zstd"
            } else if ext == "gz" {
                "gzip"
            } else {
                "xz"
            };
            assert!(
                err.contains(&format!(
                    "{name} input damaged or cut short at compressed byte"
                )) && err.contains(&format!("the last whole record read was record {expected}")),
                "{ext} {frac}: {err}"
            );
        }
    }
}

#[test]
fn small_things_a_new_user_meets() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| path_in(&dir, name);
    // `record --stats` keeps the program's stdout its own.
    let trace = at("echo.hatf");
    let out = tramp(&["record", "--stats", "-o", &trace, "--", "echo", "hello"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout.clone()).unwrap(), "hello\n");
    assert!(stderr(&out).contains("total allocs"), "{}", stderr(&out));
    let json = at("stats.json");
    let out = tramp(&[
        "record",
        "--stats",
        "--json",
        "--stats-out",
        &json,
        "-o",
        &trace,
        "--",
        "echo",
        "hi",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout.clone()).unwrap(), "hi\n");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["records"].as_u64().unwrap() > 0);
    // `verify` of something that is not PTF says so.
    let hatf = at("s.hatf");
    assert!(
        tramp(&["sample", "--events", "100", "-o", &hatf])
            .status
            .success()
    );
    let out = tramp(&["verify", &hatf]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not a PTF trace (it reads as hatf)"),
        "{}",
        stderr(&out)
    );
    // `help --help` works, and `help CMD` is that command's help.
    let out = tramp(&["help", "--help"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("Usage: tramp help")
    );
    let out = tramp(&["help", "convert"]);
    assert!(String::from_utf8(out.stdout).unwrap().contains("--lossy"));
    // `convert --help` and `dump --help` name every format.
    for cmd in ["convert", "dump"] {
        let text = String::from_utf8(tramp(&[cmd, "--help"]).stdout).unwrap();
        for f in ["HATF", "Meta-TF", "PTF", "Heph"] {
            assert!(text.contains(f), "{cmd} --help lacks {f}");
        }
    }
    let text = String::from_utf8(tramp(&["convert", "--help"]).stdout).unwrap();
    assert!(text.contains("hatf, hatf-text, metatf, metatf-text, ptf, ptf-text,"));
    assert!(text.contains("heph, tpack, heaptrack, android or trace_run"));
    // A PTF ASCII trace whose notes come before `Trace begin`, named .txt.
    let notes = at("run.txt");
    let fig3 = std::fs::read_to_string(fixture("figure3.ptf.txt")).unwrap();
    std::fs::write(&notes, format!("OO7 run of Tuesday\nseed 7\n{fig3}")).unwrap();
    let out = tramp(&["stats", &notes]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("objects created                    7"),
        "{text}"
    );
}

#[test]
fn metatf_damage_names_its_offset_and_a_wrong_record_count_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| path_in(&dir, name);
    let hatf = at("s.hatf");
    assert!(
        tramp(&["sample", "--events", "500", "-o", &hatf])
            .status
            .success()
    );
    let mtf = at("s.mtf");
    let out = tramp(&[
        "convert",
        "--dtd",
        &fixture("hatf-splitaddr.dtd"),
        "--to",
        "metatf",
        &hatf,
        &mtf,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = std::fs::read(&mtf).unwrap();
    // Class 2 (64-bit), little-endian: nsections, start, nrecords at 16.
    assert_eq!(&bytes[..6], b"\x7fMTF\x02\x01");
    let start = u64::from_le_bytes(bytes[24..32].try_into().unwrap()) as usize;
    // A damaged data section (the zstd frame before the records): the
    // error is at an offset inside the file, not at byte 0.
    let frame = bytes
        .windows(4)
        .position(|w| w == [0x28, 0xB5, 0x2F, 0xFD])
        .unwrap();
    assert!(frame > 0 && frame < start);
    let mut bad = bytes.clone();
    for b in &mut bad[frame + 4..frame + 40] {
        *b ^= 0x5a;
    }
    let damaged = at("damaged.mtf");
    std::fs::write(&damaged, &bad).unwrap();
    let out = tramp(&["stats", &damaged]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let offset: u64 = err
        .split("byte offset ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(offset as usize > frame, "{err}");
    // A header whose record count disagrees with the records.
    let mut wrong = bytes.clone();
    wrong[32..40].copy_from_slice(&12345u64.to_le_bytes());
    let counted = at("counted.mtf");
    std::fs::write(&counted, &wrong).unwrap();
    let out = tramp(&["stats", &counted]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the header counts 12345 records, the trace has"),
        "{err}"
    );
}

#[test]
fn dtds_read_like_inputs_and_long_tokens_are_cut_in_messages() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| path_in(&dir, name);
    // A gzip-compressed DTD generates the same code as the plain one.
    let dtd = fixture("hatf-splitaddr.dtd");
    let gz = at("split.dtd.gz");
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        e.write_all(&std::fs::read(&dtd).unwrap()).unwrap();
        e.finish().unwrap();
    }
    let plain = tramp(&["gen", "--rust", &dtd]);
    let packed = tramp(&["gen", "--rust", &gz]);
    assert!(
        plain.status.success() && packed.status.success(),
        "{}",
        stderr(&packed)
    );
    let body = |o: &Output| {
        String::from_utf8(o.stdout.clone())
            .unwrap()
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&plain), body(&packed));
    // Not UTF-8: line and column.
    let bad = at("bad.dtd");
    std::fs::write(&bad, b"tag.width = 1;\n// caf\xe9\n").unwrap();
    let out = tramp(&["gen", "--rust", &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not UTF-8: line 2, column 7"),
        "{}",
        stderr(&out)
    );
    // A 5 MB token in a DTD: file:line:col and the message, no 5 MB excerpt.
    let long = at("long.dtd");
    std::fs::write(
        &long,
        format!(
            "tag.width = 1;\nrec: (tag, {}) {{ tag.value = 4 }}\n",
            "x".repeat(5_000_000)
        ),
    )
    .unwrap();
    let out = tramp(&["gen", "--rust", &long]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.len() < 2000,
        "{} bytes of stderr",
        out.stderr.len()
    );
    assert!(stderr(&out).contains("long.dtd:2:"), "{}", stderr(&out));
    // A 500 KB token in a text trace: the message stays short.
    for (name, text) in [
        (
            "t.hatf.txt",
            format!(
                "# tramp hatf-text 1\nalloc size={} address=1\n",
                "9".repeat(500_000)
            ),
        ),
        (
            "t.ptf.txt",
            format!("Trace begin\nco {} 1\nTrace end\n", "x".repeat(500_000)),
        ),
    ] {
        let path = at(name);
        std::fs::write(&path, text).unwrap();
        let out = tramp(&["dump", &path]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            out.stderr.len() < 2000,
            "{name}: {} bytes of stderr",
            out.stderr.len()
        );
        assert!(
            stderr(&out).contains("more bytes)"),
            "{name}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn replay_stops_clearly_at_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("big.hatf.txt");
    // One allocation of 3 GiB between two small ones.
    std::fs::write(
        &trace,
        "# tramp hatf-text 1\nalloc size=1000 address=0x10\nalloc size=3221225472 address=0x100000\nfree address=0x100000\nfree address=0x10\n",
    )
    .unwrap();
    let out = tramp(&["replay", "--memory-limit", "64M", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("would hold 3221226472 bytes live, over the memory limit of 67108864 bytes"),
        "{err}"
    );
    // The replay of what came before is still reported.
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("replayed     1 malloc")
    );
    let out = tramp(&["replay", "--memory-limit", "lots", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
}

#[test]
fn replay_figures_say_what_they_measure_and_agree() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = dir.path().join("s.hatf");
    let hatf = hatf.to_str().unwrap();
    assert!(
        tramp(&["sample", "--events", "3000", "-o", hatf])
            .status
            .success()
    );
    let out = tramp(&["replay", "--json", hatf]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &v["runs"][0]["runs"][0];
    let f = |k: &str| d[k].as_f64().unwrap();
    // The per-operation times add up to the time in allocator calls, which
    // is part of the driver's wall time.
    let calls = f("ns_per_malloc") * f("mallocs")
        + f("ns_per_free") * f("frees")
        + f("ns_per_realloc") * f("reallocs");
    assert!(
        (calls / 1e9 - f("alloc_seconds")).abs() <= 1e-5 + 0.05 * f("alloc_seconds"),
        "{v}"
    );
    assert!(f("alloc_seconds") <= f("seconds"), "{v}");
    // Every page of every live block is touched: the footprint is at least
    // about the live bytes, and not a multiple of them from the driver's
    // own memory (the baseline is taken the same way as the peak).
    let ratio = v["allocators"][0]["footprint_over_live"].as_f64().unwrap();
    assert!((0.8..3.0).contains(&ratio), "{v}");
    // The p50 of each kind is at most its p99, and the decoder's time is
    // reported apart from the allocator's.
    for k in ["malloc", "free", "realloc"] {
        assert!(
            f(&format!("{k}_p50_ns")) <= f(&format!("{k}_p99_ns")),
            "{v}"
        );
    }
    assert!(f("decode_seconds") > 0.0, "{v}");
    let text = String::from_utf8(tramp(&["replay", hatf]).stdout).unwrap();
    assert!(
        text.contains("in calls s (min-max)")
            && text.contains("wall s")
            && text.contains("fp/live"),
        "{text}"
    );
}
