//! End-to-end tests of trust, second round (issue 32): no recording lost to
//! a bad output, no input overwritten, no temporary file left by a signal
//! or a full disk, no run that captured nothing reported as a success.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{fixture, listing, ok, path_in, stderr, tramp};

/// A program that leaves a mark when it runs: whether it ran is then
/// plain to see.
fn marking(dir: &tempfile::TempDir) -> (Vec<String>, String) {
    let mark = path_in(dir, "ran");
    (
        vec!["sh".into(), "-c".into(), format!("touch {mark}")],
        mark,
    )
}

fn record(args: &[&str], cmd: &[String]) -> std::process::Output {
    let mut all: Vec<&str> = vec!["record"];
    all.extend_from_slice(args);
    all.push("--");
    all.extend(cmd.iter().map(String::as_str));
    tramp(&all)
}

#[test]
fn record_refuses_what_it_cannot_write_before_the_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (cmd, mark) = marking(&dir);
    let missing = path_in(&dir, "no/such/dir/x.tpack");
    let good = path_in(&dir, "x.tpack");
    let stats_missing = path_in(&dir, "no/such/dir/stats.txt");
    let ptf = path_in(&dir, "x.ptf");
    let bare = path_in(&dir, "x");
    let mtf = path_in(&dir, "x.mtf");
    let hatf = path_in(&dir, "x.hatf");
    for (args, says) in [
        (vec!["-o", missing.as_str()], "cannot create a file in"),
        (
            vec![
                "-o",
                good.as_str(),
                "--stats",
                "--stats-out",
                &stats_missing,
            ],
            "--stats-out",
        ),
        (vec!["-o", ptf.as_str()], "a recording is written as tpack"),
        (vec!["-o", bare.as_str()], "a recording is written as tpack"),
        (vec!["-o", mtf.as_str()], "add --pointers"),
        (
            vec!["-o", hatf.as_str(), "--pointers"],
            "a pointer trace is Meta-TF",
        ),
        (
            vec!["-o", good.as_str(), "--temp-limit", "0"],
            "below the least",
        ),
    ] {
        let out = record(&args, &cmd);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(!Path::new(&mark).exists(), "{args:?}: the program ran");
        assert!(listing(dir.path()).is_empty(), "{args:?}");
    }
}

#[test]
fn record_writes_every_form_it_accepts_and_tramp_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["t.hatf.txt", "t.txt.zst", "t.hatf.gz", "t.tpack"] {
        let path = path_in(&dir, name);
        let out = record(&["-o", &path], &["ls".into(), "/".into()]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let stats = ok(&tramp(&["stats", &path]));
        assert!(stats.contains("malloc calls"), "{name}: {stats}");
    }
}

#[test]
fn a_static_program_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("s.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let exe = dir.path().join("s");
    let built = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-static", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success(), "cc -static");
    let trace = path_in(&dir, "s.tpack");
    let out = record(&["-o", &trace], &[exe.to_str().unwrap().into()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("statically linked"),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new(&trace).exists());
}

#[test]
fn pointers_on_an_uninstrumented_program_warns_and_strict_fails() {
    // Issue 48, case 3: the warning, and the program's status (0) passes
    // through; --strict makes it a failure.
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "ls.mtf.zst");
    let out = record(&["--pointers", "-o", &trace], &["ls".into()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: no loads or stores were recorded")
            && stderr(&out).contains("not built with `tramp cc`"),
        "{}",
        stderr(&out)
    );
    let strict = record(&["--pointers", "--strict", "-o", &trace], &["ls".into()]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(
        stderr(&strict).contains("(--strict)"),
        "{}",
        stderr(&strict)
    );
    // The heap events it did see are kept.
    assert!(Path::new(&trace).exists());
}

/// Waits until `dir` holds a temporary output file.
fn wait_for_part(dir: &Path) {
    let start = Instant::now();
    while !listing(dir).iter().any(|f| f.ends_with(".part")) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn a_signal_removes_unfinished_outputs() {
    for sig in ["-INT", "-TERM"] {
        let dir = tempfile::tempdir().unwrap();
        // convert reading a pipe that stays open: it has its output's
        // temporary file and waits for more.
        let out = path_in(&dir, "out.hatf.zst");
        let mut child = Command::new(env!("CARGO_BIN_EXE_tramp"))
            .args(["convert", "-f", "hatf-text", "-", &out])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        use std::io::Write;
        // More than the 4 KiB a format is detected from.
        for i in 0..5000 {
            writeln!(stdin, "alloc size=16 address={:#x}", 16 * (i + 1)).unwrap();
        }
        wait_for_part(dir.path());
        signal(child.id(), sig);
        let status = child.wait().unwrap();
        drop(stdin);
        let code = if sig == "-INT" { 130 } else { 143 };
        assert_eq!(status.code(), Some(code), "{sig}");
        assert!(
            listing(dir.path()).is_empty(),
            "{sig}: {:?}",
            listing(dir.path())
        );
    }
}

#[test]
fn a_file_size_limit_is_a_clear_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = path_in(&dir, "in.hatf");
    ok(&tramp(&["sample", "--events", "100000", "-o", &input]));
    let before = std::fs::read(&input).unwrap();
    let out = path_in(&dir, "out.hatf.txt");
    // 64 blocks of 512 bytes: the text form is far larger.
    let run = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 64; exec {} convert {input} {out}",
            env!("CARGO_BIN_EXE_tramp")
        ))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("the file-size limit"),
        "{}",
        stderr(&run)
    );
    assert_eq!(listing(dir.path()), vec!["in.hatf".to_string()]);
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn a_signal_to_record_reaches_the_program_and_marks_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "sleep.tpack");
    let child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["record", "-o", &trace, "--", "sleep", "30"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The program runs once its log appears; give it a moment to start.
    std::thread::sleep(Duration::from_millis(500));
    let start = Instant::now();
    signal(child.id(), "-TERM");
    let out = child.wait_with_output().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "sleep was not ended"
    );
    // sleep was killed by SIGTERM: 128 + 15.
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted by signal 15"),
        "{}",
        stderr(&out)
    );
    let dump = ok(&tramp(&["dump", &trace]));
    assert!(dump.contains("tramp:interrupted signal=15"), "{dump}");
}

/// Every command that writes a file, given one of its inputs as its
/// output, spelt every way a path can name the same file (the name, with
/// `./`, absolute, a symbolic link, a hard link): refused before any work,
/// and the input unchanged.
#[test]
fn no_command_writes_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = path_in(&dir, "t.hatf");
    ok(&tramp(&["sample", "--events", "2000", "-o", &hatf]));
    let heph = path_in(&dir, "t.heph");
    std::fs::copy(fixture("heph_tracing_example.bin.log"), &heph).unwrap();
    let script = path_in(&dir, "s.tr");
    std::fs::write(&script, "procedure main begin spit(); end\n").unwrap();
    let dtd = path_in(&dir, "a.dtd");
    std::fs::copy(fixture("alloclog.dtd"), &dtd).unwrap();
    // The spellings of a file `name` in `dir`.
    let spellings = |name: &str| -> Vec<String> {
        let abs = dir.path().join(name);
        let link = dir.path().join(format!("link-{name}"));
        let hard = dir.path().join(format!("hard-{name}"));
        if !link.exists() {
            std::os::unix::fs::symlink(&abs, &link).unwrap();
            std::fs::hard_link(&abs, &hard).unwrap();
        }
        vec![
            name.to_string(),
            format!("./{name}"),
            abs.to_str().unwrap().to_string(),
            link.to_str().unwrap().to_string(),
            hard.to_str().unwrap().to_string(),
        ]
    };
    // (arguments with OUT for the output, the input OUT names).
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["convert", "t.hatf", "OUT"], "t.hatf"),
        (vec!["dump", "t.hatf", "-o", "OUT"], "t.hatf"),
        (vec!["export", "--chrome", "OUT", "t.heph"], "t.heph"),
        (vec!["cachesim", "t.hatf", "--svg", "OUT"], "t.hatf"),
        (vec!["run", "s.tr", "t.hatf", "-o", "OUT"], "t.hatf"),
        (vec!["run", "s.tr", "t.hatf", "-o", "OUT"], "s.tr"),
        (vec!["gen", "--rust", "a.dtd", "-o", "OUT"], "a.dtd"),
    ];
    for (args, input) in &cases {
        for out in spellings(input) {
            let before = std::fs::read(dir.path().join(input)).unwrap();
            let argv: Vec<&str> = args
                .iter()
                .map(|a| if *a == "OUT" { out.as_str() } else { a })
                .collect();
            let run = Command::new(env!("CARGO_BIN_EXE_tramp"))
                .args(&argv)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert_eq!(run.status.code(), Some(1), "{argv:?}: {}", stderr(&run));
            assert!(
                stderr(&run).contains("never writes over its input"),
                "{argv:?}: {}",
                stderr(&run)
            );
            // Refused before any work: nothing on stdout.
            assert!(run.stdout.is_empty(), "{argv:?}");
            assert_eq!(
                std::fs::read(dir.path().join(input)).unwrap(),
                before,
                "{argv:?}"
            );
        }
    }
    assert!(
        !listing(dir.path()).iter().any(|f| f.starts_with(".tramp-")),
        "{:?}",
        listing(dir.path())
    );
}

#[test]
fn a_long_flat_expression_is_a_clear_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let script = |terms: usize| {
        format!(
            "preprocess begin set x = {}; echo(x); end\n",
            vec!["1"; terms].join("+")
        )
    };
    // Ten thousand operations run (checked against the sum).
    let ok_path = path_in(&dir, "ok.tr");
    std::fs::write(&ok_path, script(10_001)).unwrap();
    assert_eq!(ok(&tramp(&["run", &ok_path])).trim(), "10001");
    // A million is refused where the limit is passed, line and column.
    let big = path_in(&dir, "big.tr");
    std::fs::write(&big, script(1_000_000)).unwrap();
    let out = tramp(&["run", &big]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // `preprocess begin set x = ` is 25 bytes; the 10,001st `+` follows
    // 10,001 ones and 10,000 pluses.
    let col = 25 + 20_001 + 1;
    assert!(
        stderr(&out).contains(&format!(
            "big.tr:1:{col}: error: more than 10000 operations"
        )),
        "{}",
        stderr(&out)
    );
    // The Lisp form the same.
    let lisp = path_in(&dir, "big.lisp");
    std::fs::write(
        &lisp,
        format!(
            "(defun begin (echo (add {})))\n",
            vec!["1"; 1_000_000].join(" ")
        ),
    )
    .unwrap();
    let out = tramp(&["run", &lisp]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("more than 10000 operations"),
        "{}",
        stderr(&out)
    );
}

/// `tramp dump` of a recording (text without `set` lines) converts to
/// HATF, and back to the same text.
#[test]
fn text_without_set_lines_converts_to_hatf() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "ls.tpack");
    let out = record(&["-o", &trace], &["ls".into(), "/".into()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = ok(&tramp(&["dump", &trace]));
    assert!(!text.contains("\nset "));
    let txt = path_in(&dir, "ls.hatf.txt");
    std::fs::write(&txt, &text).unwrap();
    let hatf = path_in(&dir, "ls.hatf");
    let conv = tramp(&["convert", &txt, &hatf]);
    assert!(conv.status.success(), "{}", stderr(&conv));
    // The same events: the text of the HATF file without its set lines.
    let back = ok(&tramp(&["dump", &hatf]));
    let events = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("set ") && !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(events(&back), events(&text));
}

/// `replay --allocator` names a library whose malloc the driver gets, or
/// is refused before anything runs.
#[test]
fn replay_refuses_an_allocator_that_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "t.hatf");
    ok(&tramp(&["sample", "--events", "500", "-o", &trace]));
    // libm is a shared library that defines no malloc.
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libm");
    for (lib, says) in [
        ("/etc/passwd", "not an ELF shared library"),
        ("/tmp", "not a file"),
        (libm, "defines no malloc or free"),
    ] {
        let out = tramp(&["replay", &trace, "--allocator", lib]);
        assert_eq!(out.status.code(), Some(1), "{lib}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{lib}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{lib}: nothing is measured");
    }
}

/// Values that do not fit are errors naming the line; totals saturate
/// instead of wrapping past 2^64.
#[test]
fn values_that_do_not_fit_are_errors_and_totals_do_not_wrap() {
    let dir = tempfile::tempdir().unwrap();
    for (value, says) in [
        ("-1", "`-1` is negative"),
        ("99999999999999999999999", "does not fit 64 bits"),
        ("12ab", "is not a number"),
    ] {
        let t = path_in(&dir, "v.hatf.txt");
        std::fs::write(
            &t,
            format!("# tramp hatf-text 1\nalloc size={value} address=0x10\n"),
        )
        .unwrap();
        let out = tramp(&["stats", &t]);
        assert_eq!(out.status.code(), Some(1), "{value}");
        assert!(stderr(&out).contains(says), "{value}: {}", stderr(&out));
        assert!(stderr(&out).contains("line 2"), "{value}: {}", stderr(&out));
    }
    // Totals past 2^64: trust3.rs (issue 48 made them 128-bit, and a
    // block above 2^63 − 1 bytes an error).
}

/// The packets line of `tramp stats` on a Heph trace.
fn packets(stdout: &[u8]) -> u64 {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix("packets"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// A compressed Heph trace cut by its last byte, in each compressor:
/// `stats`, `spans` and `export` give their output on every whole packet,
/// then exit 1 saying where the input ended.
#[test]
fn a_cut_compressed_heph_trace_keeps_every_whole_packet() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let raw = std::fs::read(fixture("heph_tracing_example.bin.log")).unwrap();
    let all =
        packets(&ok(&tramp(&["stats", &fixture("heph_tracing_example.bin.log")])).into_bytes());
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&raw).unwrap();
        e.finish().unwrap()
    };
    // With its checksum, as the zstd tool writes it (a zstd block is
    // decoded whole or not at all: cut inside the one block of this small
    // trace, nothing could be kept).
    let zst = {
        let mut e = zstd::Encoder::new(Vec::new(), 3).unwrap();
        e.include_checksum(true).unwrap();
        e.write_all(&raw).unwrap();
        e.finish().unwrap()
    };
    let xz = {
        let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
        e.write_all(&raw).unwrap();
        e.finish().unwrap()
    };
    for (ext, bytes) in [("gz", gz), ("zst", zst), ("xz", xz)] {
        let path = path_in(&dir, &format!("cut.heph.{ext}"));
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let stats = tramp(&["stats", &path]);
        assert_eq!(stats.status.code(), Some(1), "{ext}: {}", stderr(&stats));
        assert!(
            stderr(&stats).contains("the input ends here, damaged"),
            "{ext}: {}",
            stderr(&stats)
        );
        // The cut is inside the compressor's trailer or last block: at
        // most the last packet is lost.
        let got = packets(&stats.stdout);
        assert!(got + 1 >= all && got <= all, "{ext}: {got} of {all}");
        let spans = tramp(&["spans", &path]);
        assert_eq!(spans.status.code(), Some(1), "{ext}");
        assert!(
            String::from_utf8_lossy(&spans.stdout).contains("receiving message"),
            "{ext}"
        );
        let json = path_in(&dir, &format!("{ext}.json"));
        let export = tramp(&["export", "--chrome", &json, &path]);
        assert_eq!(export.status.code(), Some(1), "{ext}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(v.to_string().contains("receiving message"), "{ext}");
    }
}

/// The first packet's size damaged to just under the 64 MiB cap: the
/// reader resynchronises after it, and the 96 events that follow are kept.
#[test]
fn a_bad_first_packet_size_loses_only_that_packet() {
    let dir = tempfile::tempdir().unwrap();
    let mut raw = std::fs::read(fixture("heph_tracing_example.bin.log")).unwrap();
    raw[4..8].copy_from_slice(&((64u32 << 20) - 16).to_be_bytes());
    let path = path_in(&dir, "bad.heph");
    std::fs::write(&path, &raw).unwrap();
    let out = tramp(&["stats", &path]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("events      96"), "{text}");
    assert!(
        stderr(&out).contains("resynchronised at the next packet"),
        "{}",
        stderr(&out)
    );
}

/// `update` with a value its field cannot hold is an error naming the
/// record and the field, never a wrapped or zeroed value.
#[test]
fn an_update_that_does_not_fit_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "t.hatf");
    ok(&tramp(&["sample", "--events", "200", "-o", &trace]));
    let out_path = path_in(&dir, "u.hatf");
    for (value, says) in [
        ("-1", "a negative number does not fit an unsigned field"),
        ("\"text\"", "text does not fit a number field"),
        ("1.5", "a float does not fit an integer field"),
    ] {
        let script = path_in(&dir, "u.tr");
        std::fs::write(
            &script,
            format!(
                "procedure main begin if (RECORD_TYPE == alloc) then update alloc_size = {value}; endif spit(); end\n"
            ),
        )
        .unwrap();
        let out = tramp(&["run", &script, &trace, "-o", &out_path]);
        assert_eq!(out.status.code(), Some(1), "{value}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(says), "{value}: {err}");
        assert!(
            err.contains("record ") && err.contains("field `size`"),
            "{value}: {err}"
        );
        assert!(!Path::new(&out_path).exists(), "{value}: no output kept");
    }
}

/// PTF: a format's pointer count past what the object graph holds is said,
/// not clamped in silence; a number past 64 bits is called that.
#[test]
fn ptf_limits_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let t = path_in(&dir, "p.ptf.txt");
    std::fs::write(
        &t,
        "Trace begin\nfo 41 0 4000000000 1 0 11 11 BinTreeNode\nco 41 42\new 41 42 3999999999999 42\nTrace end\n",
    )
    .unwrap();
    let out = tramp(&["verify", &t]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("format 41: 4000000000 pointers"), "{text}");
    assert!(
        text.contains("has 4000000000 pointers (edges 0–3999999999)"),
        "{text}"
    );
    std::fs::write(
        &t,
        "Trace begin\nco 41 123456789012345678901234567890\nTrace end\n",
    )
    .unwrap();
    let out = tramp(&["stats", &t]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("does not fit 64 bits"),
        "{}",
        stderr(&out)
    );
}

/// `tramp dump` of a recording names each allocation's site in a note the
/// reader ignores: binary → text → binary stays byte-identical.
#[test]
fn dump_notes_sites_and_the_text_converts_back_identical() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "ls.hatf");
    let out = record(&["-o", &trace], &["ls".into(), "/".into()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = ok(&tramp(&["dump", &trace]));
    let noted: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("alloc ") && l.contains("  # "))
        .collect();
    let allocs = text.lines().filter(|l| l.starts_with("alloc ")).count();
    assert_eq!(noted.len(), allocs, "every allocation has a site");
    // glibc's frames named: by libc6-dbg's debug file (glibc's source
    // paths start `./`), or by module and offset without it.
    assert!(
        noted
            .iter()
            .any(|l| l.contains("libc.so.6") || l.contains(" (./")),
        "{}",
        noted[0]
    );
    let txt = path_in(&dir, "ls.hatf.txt");
    std::fs::write(&txt, &text).unwrap();
    let back = path_in(&dir, "back.hatf");
    ok(&tramp(&["convert", &txt, &back]));
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(&trace).unwrap()
    );
    // A pointer trace's notes read as text.
    let mtf = path_in(&dir, "ls.mtf.zst");
    let _ = record(&["--pointers", "-o", &mtf], &["ls".into()]);
    let text = ok(&tramp(&["dump", &mtf]));
    assert!(
        text.contains("data=\"tramp:process pid="),
        "{}",
        &text[..2000.min(text.len())]
    );
}

/// Every command that writes a trace follows the output's name as `tramp
/// formats` lists it, or refuses it before any work.
#[test]
fn writers_follow_the_output_name_or_refuse_it() {
    let dir = tempfile::tempdir().unwrap();
    // sample: the name says the form, and tramp reads it back as that.
    for name in ["s.tpack", "s.hatf.txt", "s.hatf.zst"] {
        let p = path_in(&dir, name);
        ok(&tramp(&["sample", "--events", "300", "-o", &p]));
        let stats = ok(&tramp(&["stats", "--json", &p]));
        assert!(stats.contains("\"records\""), "{name}");
    }
    let hatf = path_in(&dir, "s.hatf.zst");
    // Names no format has: refused, nothing written.
    for args in [
        vec!["sample".to_string(), "-o".into(), path_in(&dir, "x.bin")],
        vec!["sample".to_string(), "-o".into(), path_in(&dir, "x.ptf")],
        vec!["convert".to_string(), hatf.clone(), path_in(&dir, "x.bin")],
        vec![
            "workload".to_string(),
            "oo7".into(),
            "--ops".into(),
            "t1".into(),
            "-o".into(),
            path_in(&dir, "x.bin"),
        ],
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = tramp(&a);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(!Path::new(&args[args.len() - 1]).exists(), "{args:?}");
    }
    // run's spit writes the format the output's name says.
    let script = path_in(&dir, "spit.tr");
    std::fs::write(&script, "procedure main begin spit(); end\n").unwrap();
    let packed = path_in(&dir, "spat.tpack");
    ok(&tramp(&["run", &script, &hatf, "-o", &packed]));
    assert_eq!(&std::fs::read(&packed).unwrap()[..5], b"tpack");
    let events = |p: &str| -> Vec<String> {
        ok(&tramp(&["dump", p]))
            .lines()
            .filter(|l| !l.starts_with("set ") && !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(events(&packed), events(&hatf));
}
