//! End-to-end tests of trust, third round (issue 48): each numbered case
//! of the issue that concerns `record`, `replay`, `cachesim` or the text
//! readers, failing on the main of 2026-12-01. The RDS case is in
//! rds_programs.rs, the Parquet one in parquet.rs.

use std::path::Path;

mod common;
use common::{path_in, stderr, tramp};

/// Builds `int main(void) { BODY }` as `NAME` in `dir`.
fn program(dir: &tempfile::TempDir, name: &str, body: &str) -> String {
    let src = path_in(dir, &format!("{name}.c"));
    std::fs::write(
        &src,
        format!("#include <stdlib.h>\nint main(void) {{ {body} }}\n"),
    )
    .unwrap();
    let exe = path_in(dir, name);
    let cc = std::process::Command::new("cc")
        .args([&src, "-o", &exe])
        .status()
        .unwrap();
    assert!(cc.success());
    exe
}

#[test]
fn the_programs_status_passes_through_when_nothing_is_recorded() {
    // Case 3: `return 7` recorded gave rc 1 ("nothing was recorded").
    let dir = tempfile::tempdir().unwrap();
    let exe = program(&dir, "seven", "return 7;");
    let trace = path_in(&dir, "s.tpack");
    let out = tramp(&["record", "-o", &trace, "--", &exe]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: nothing was recorded"),
        "{}",
        stderr(&out)
    );
    // --strict fails only a run the program itself did not fail.
    let out = tramp(&["record", "--strict", "-o", &trace, "--", &exe]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let zero = program(&dir, "zero", "return 0;");
    let out = tramp(&["record", "--strict", "-o", &trace, "--", &zero]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // And a program that allocates: its status, whatever it is.
    let three = program(&dir, "three", "free(malloc(10)); return 3;");
    let out = tramp(&["record", "-o", &trace, "--", &three]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}

#[test]
fn side_outputs_onto_the_trace_and_unknown_options_are_refused_before_the_run() {
    // Case 11: both ran the whole program first.
    let dir = tempfile::tempdir().unwrap();
    let mark = path_in(&dir, "ran");
    let trace = path_in(&dir, "y.tpack");
    let cmd = format!("touch {mark}");
    let same = format!("{}/./y.tpack", dir.path().display());
    for args in [
        vec!["record", "-o", &trace, "--stats", "--stats-out", &trace],
        vec!["record", "-o", &trace, "--report", &same],
    ] {
        let mut all = args.clone();
        all.extend(["--", "sh", "-c", &cmd]);
        let out = tramp(&all);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("is also the trace's output"),
            "{}",
            stderr(&out)
        );
        assert!(!Path::new(&mark).exists(), "the program ran: {args:?}");
    }
    // A misspelt option is clap's error with its suggestion, not a program.
    let out = tramp(&[
        "record", "--sampel", "4096", "-o", &trace, "--", "sh", "-c", &cmd,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("'--sample'"), "{}", stderr(&out));
    assert!(!Path::new(&mark).exists());
    // A stack deeper than the capture's 64 frames is refused, not clamped.
    let out = tramp(&[
        "record", "--stack", "1000", "-o", &trace, "--", "sh", "-c", &cmd,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!Path::new(&mark).exists());
    // The program's own options after its name still reach it.
    let out = tramp(&["record", "-o", &trace, "ls", "-la", "/"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn sums_past_2_64_are_exact_and_impossible_blocks_are_errors() {
    // Case 4: two blocks of 2^64 − 1 gave "total bytes allocated
    // 18,446,744,073,709,551,615" with exit 0.
    let dir = tempfile::tempdir().unwrap();
    let s = i64::MAX; // the largest block an allocator can give
    let t = path_in(&dir, "big.hatf.txt");
    std::fs::write(
        &t,
        format!(
            "# tramp hatf-text 1\nalloc size={s} address=0x10\nfree address=0x10\n\
             alloc size={s} address=0x10\nfree address=0x10\nalloc size={s} address=0x10\n"
        ),
    )
    .unwrap();
    // 3 × (2^63 − 1), worked by hand: 27,670,116,110,564,327,421.
    let json = common::ok(&tramp(&["stats", "--json", &t]));
    assert!(
        json.contains("\"bytes_allocated\": 27670116110564327421"),
        "{json}"
    );
    let text = common::ok(&tramp(&["stats", &t]));
    assert!(text.contains("27,670,116,110,564,327,421"), "{text}");
    // A block no allocator gives: an error naming the record, the records
    // before it reported.
    let huge = path_in(&dir, "huge.hatf.txt");
    std::fs::write(
        &huge,
        "# tramp hatf-text 1\nalloc size=5 address=0x100\nalloc size=0xffffffffffffffff address=0x10\n",
    )
    .unwrap();
    let out = tramp(&["stats", &huge]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("record 2: a block of 18446744073709551615 bytes"),
        "{err}"
    );
    assert!(err.contains("more than any allocator gives"), "{err}");
    // An Android calloc whose count × size overflows: calloc fails, so a
    // record of the block it returned is an error, not one huge block.
    let android = path_in(&dir, "a.txt");
    std::fs::write(&android, "100: calloc 0x2000 4294967296 4294967297\n").unwrap();
    // And one whose call ends before it starts (accepted silently).
    let late = path_in(&dir, "late.txt");
    std::fs::write(&late, "100: malloc 0x10 5 200 100\n").unwrap();
    let out = tramp(&["stats", "--format", "android", &late]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 1")
            && stderr(&out).contains("ends (100) before it starts (200)"),
        "{}",
        stderr(&out)
    );
    let out = tramp(&["stats", "--format", "android", &android]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("calloc(4294967296, 4294967297): the product passes 2^64"),
        "{}",
        stderr(&out)
    );
    // pprof's values are int64: the 3 × (2^63 − 1) bytes are written as
    // 2^63 − 1 and said so, and go tool pprof reads every sample.
    let pb = path_in(&dir, "big.pb.gz");
    common::ok(&tramp(&["export", "--pprof", &pb, &t]));
    let top = std::process::Command::new("go")
        .args(["tool", "pprof", "-sample_index=alloc_objects", "-top", &pb])
        .output()
        .expect("go (setup.sh installs golang-go)");
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    assert!(top.contains("of 3 total"), "{top}");
    assert!(top.contains("1 values passed 2^63 - 1"), "{top}");
}

#[test]
fn replays_fidelity_line_follows_the_numbers() {
    // Case 5: "the replay's counts equal the trace's" stood under a trace
    // line of 1 free and 106 reallocs and a replayed line of 107 frees and
    // no realloc, saying nothing of why.
    let dir = tempfile::tempdir().unwrap();
    let exe = program(
        &dir,
        "r0",
        "for (int i = 0; i < 106; i++) { char *p = malloc(100 + i); p = realloc(p, 0); if (p) free(p); } \
         free(malloc(10)); return 0;",
    );
    let trace = path_in(&dir, "r0.tpack");
    common::ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let out = common::ok(&tramp(&["replay", &trace]));
    assert!(
        out.contains("trace        107 malloc, 1 free, 106 realloc calls"),
        "{out}"
    );
    assert!(
        out.contains("replayed     107 malloc, 107 free, 0 realloc"),
        "{out}"
    );
    let fidelity = out.lines().find(|l| l.starts_with("fidelity")).unwrap();
    assert!(fidelity.ends_with("once these are counted:"), "{out}");
    assert!(
        out.contains("  106 realloc(p, 0) calls replayed as frees"),
        "{out}"
    );
    // A trace without them: the plain headline, nothing under it.
    let plain = program(&dir, "plain", "free(malloc(10)); return 0;");
    let trace = path_in(&dir, "plain.tpack");
    common::ok(&tramp(&["record", "-o", &trace, "--", &plain]));
    let out = common::ok(&tramp(&["replay", &trace]));
    assert!(
        out.trim_end()
            .ends_with("fidelity     the replay's counts equal the trace's"),
        "{out}"
    );
}

#[test]
fn a_text_trace_with_no_record_is_an_error_in_every_command() {
    // Case 9: cachesim took a file cut inside its header for an empty csv
    // (a table of 0 requests, exit 0), and a header or comment alone was
    // accepted by stats, report and cachesim.
    let dir = tempfile::tempdir().unwrap();
    for (name, text, says) in [
        ("cut.hatf.txt", "# tramp hatf-text", "the file was cut"),
        ("hdr.hatf.txt", "# tramp hatf-text 1\n", "holds no record"),
        (
            "com.hatf.txt",
            "# tramp hatf-text 1\n# a comment\n",
            "holds no record",
        ),
    ] {
        let t = path_in(&dir, name);
        std::fs::write(&t, text).unwrap();
        let html = path_in(&dir, "r.html");
        for args in [
            vec!["stats", &t],
            vec!["cachesim", &t],
            vec!["report", &t, "-o", &html],
        ] {
            let out = tramp(&args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains(says) && err.contains(name), "{args:?}: {err}");
        }
    }
    // A csv of only its header: no table of zeros either.
    let csv = path_in(&dir, "h.csv");
    std::fs::write(&csv, "# time, object, size\n").unwrap();
    let out = tramp(&["cachesim", &csv]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds no request"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn shards_curves_from_almost_nothing_are_marked_or_refused() {
    // Case 7: `--shards 0.00001` on the 1 M requests sampled 8 and printed
    // a one-point curve of 0.30 (true 0.94) unmarked, as `rate 0.0000`; a
    // rate whose sample is empty printed 0.000 at every size.
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/cache/twitter_cluster52.csv.zst")
        .to_string_lossy()
        .into_owned();
    let out = common::ok(&tramp(&["cachesim", "--shards", "0.00001", &trace]));
    assert!(
        out.contains("rate 1.001e-5: 8 of 1000000 requests, 3 objects sampled"),
        "{out}"
    );
    // The curve's rows: a size, then a miss ratio.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() >= 2 && w[0].parse::<u64>().is_ok() && w[1].parse::<f64>().is_ok()
        })
        .collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|l| l.ends_with("(few objects)")),
        "{out}"
    );
    let out = tramp(&["cachesim", "--shards", "0.0000001", &trace]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds none of the 1000000 requests: no curve"),
        "{}",
        stderr(&out)
    );
    // A rate that samples plenty: no point marked at the larger sizes.
    let out = common::ok(&tramp(&[
        "cachesim", "--shards", "0.1", "--size", "10000", &trace,
    ]));
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("10000 "))
        .unwrap();
    assert!(!row.contains("few objects"), "{out}");
}

/// The sites' frames of `stats --sites --json`: (function, file, line, module).
fn frames(trace: &str) -> Vec<(String, String, u64, String)> {
    let v: serde_json::Value = serde_json::from_str(&common::ok(&tramp(&[
        "stats", "--sites", "--top", "50", "--json", trace,
    ])))
    .unwrap();
    let mut out = Vec::new();
    for row in v["sites"]["by_count"].as_array().unwrap() {
        for f in row["stack"].as_array().unwrap() {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
            out.push((
                s("function"),
                s("file"),
                f["line"].as_u64().unwrap_or(0),
                s("module"),
            ));
        }
    }
    out
}

#[test]
fn separate_debug_files_name_frames_and_the_capture_library_is_hidden() {
    // Case 10: with libc6-dbg installed (setup.sh), the thread-start frame
    // read `pthread_create (libc.so.6+…)`, the nearest exported symbol,
    // and the capture library's own wrapper stood in every thread's stack.
    let dir = tempfile::tempdir().unwrap();
    let src = path_in(&dir, "thr.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\n#include <stdlib.h>\n\
         static void *work(void *a) { (void)a; return malloc(7); }\n\
         int main(void) { pthread_t t; void *r; pthread_create(&t, 0, work, 0); pthread_join(t, &r); free(r); return 0; }\n",
    )
    .unwrap();
    let exe = path_in(&dir, "thr");
    assert!(
        std::process::Command::new("cc")
            .args(["-O0", "-g", "-pthread", &src, "-o", &exe])
            .status()
            .unwrap()
            .success()
    );
    let trace = path_in(&dir, "thr.tpack");
    common::ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let all = frames(&trace);
    assert!(
        all.iter().all(|f| !f.3.contains("libtramp_capture")),
        "{all:?}"
    );
    let start = all
        .iter()
        .find(|f| f.0 == "start_thread")
        .unwrap_or_else(|| panic!("no start_thread frame: {all:?}"));
    assert!(
        start.1.ends_with("pthread_create.c") && start.2 > 0,
        "{start:?}"
    );
    // The line binutils' addr2line gives for the same place of libc's
    // debug file (an independent reader of the same DWARF).
    let libc = &start.3;
    let debug = tramp_symbols::debugfile::find(Path::new(libc)).expect("libc6-dbg's file");
    let pprof = path_in(&dir, "thr.pb.gz");
    common::ok(&tramp(&["export", "--pprof", &pprof, &trace]));
    let raw = std::process::Command::new("go")
        .args(["tool", "pprof", "-raw", &pprof])
        .output()
        .unwrap();
    let raw = String::from_utf8_lossy(&raw.stdout).into_owned();
    // The program is the first mapping, not the dynamic loader.
    let first = raw
        .lines()
        .skip_while(|l| *l != "Mappings")
        .nth(1)
        .unwrap_or("");
    assert!(
        first.starts_with("1: ") && first.ends_with(&format!("{exe}  [FN][FL][LN]")),
        "{raw}"
    );
    // Each location line of libc in pprof's own listing holds an address;
    // addr2line on the debug file names start_thread at the same line.
    let v: serde_json::Value = serde_json::from_str(&common::ok(&tramp(&[
        "stats", "--sites", "--top", "50", "--json", &trace,
    ])))
    .unwrap();
    let addr = v["sites"]["by_count"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["stack"].as_array().unwrap().iter())
        .find(|f| f["function"] == "start_thread")
        .and_then(|f| f["offset"].as_u64())
        .expect("start_thread's offset in libc");
    let a2l = std::process::Command::new("addr2line")
        .args(["-f", "-e"])
        .arg(&debug)
        .arg(format!("{:#x}", addr - 1))
        .output()
        .unwrap();
    let a2l = String::from_utf8_lossy(&a2l.stdout).into_owned();
    assert!(
        a2l.starts_with("start_thread\n") && a2l.contains(&format!("pthread_create.c:{}", start.2)),
        "addr2line says {a2l:?}, tramp {start:?}"
    );
}

#[test]
fn a_debug_dir_given_is_searched_by_build_id_and_by_debuglink() {
    // Case 10: `--debug-dir`. The program's DWARF moved out with objcopy
    // as Debian's dh_strip does, then found by build-id and by debuglink.
    let dir = tempfile::tempdir().unwrap();
    let src = path_in(&dir, "p.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\n__attribute__((noinline)) void *site(void) { return malloc(40); }\n\
         int main(void) { free(site()); return 0; }\n",
    )
    .unwrap();
    let exe = path_in(&dir, "p");
    let run = |cmd: &str, args: &[&str]| {
        let st = std::process::Command::new(cmd).args(args).status().unwrap();
        assert!(st.success(), "{cmd} {args:?}");
    };
    run("cc", &["-O0", "-g", "-Wl,--build-id", &src, "-o", &exe]);
    let debug = path_in(&dir, "p.debug");
    run("objcopy", &["--only-keep-debug", &exe, &debug]);
    run("objcopy", &["--strip-debug", &exe]);
    // The link names p.debug; the file is kept elsewhere until the last
    // case (the program is not changed after its recording: a module that
    // changed since is not looked up).
    run("objcopy", &[&format!("--add-gnu-debuglink={debug}"), &exe]);
    let kept = path_in(&dir, "kept.debug");
    std::fs::rename(&debug, &kept).unwrap();
    let trace = path_in(&dir, "p.tpack");
    common::ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let site_line = |extra: &[&str]| -> Option<u64> {
        let mut args = vec!["stats", "--sites", "--json"];
        args.extend_from_slice(extra);
        args.push(&trace);
        let v: serde_json::Value = serde_json::from_str(&common::ok(&tramp(&args))).unwrap();
        v["sites"]["by_count"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["stack"].as_array().unwrap().iter())
            .find(|f| f["function"] == "site")
            .and_then(|f| f["line"].as_u64())
    };
    // Stripped and nothing to find: no line.
    assert_eq!(site_line(&[]), None);
    // By build-id under the directory given.
    let id = {
        let out = std::process::Command::new("readelf")
            .args(["-n", &exe])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.trim().strip_prefix("Build ID: ").map(str::to_string))
            .expect("a build-id")
    };
    let ids = dir.path().join("dbg/.build-id").join(&id[..2]);
    std::fs::create_dir_all(&ids).unwrap();
    std::fs::copy(&kept, ids.join(format!("{}.debug", &id[2..]))).unwrap();
    let dbg = path_in(&dir, "dbg");
    assert_eq!(site_line(&["--debug-dir", &dbg]), Some(2));
    // By debuglink, next to the program.
    std::fs::remove_dir_all(&dbg).unwrap();
    assert_eq!(site_line(&[]), None);
    std::fs::rename(&kept, &debug).unwrap();
    assert_eq!(site_line(&[]), Some(2));
}

#[test]
fn a_large_cpu_cache_level_costs_what_the_trace_touches() {
    // Case 8: a 4 GiB level's tags and stamps (1 GiB of zeroed memory,
    // mapped only where used) were copied whole when the simulation took
    // its model: 2.1 GB and 16 s on a 160 k-request trace.
    let dir = tempfile::tempdir().unwrap();
    let exe = program(
        &dir,
        "churn",
        "for (int i = 0; i < 20000; i++) free(malloc(16 + i % 512)); return 0;",
    );
    let trace = path_in(&dir, "c.tpack");
    common::ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "peak %M KiB", env!("CARGO_BIN_EXE_tramp")])
        .args(["cachesim", "--cpu", "4G:8:64:1,mem:100", &trace])
        .output()
        .expect("GNU time (setup.sh installs it)");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("peak ")?.strip_suffix(" KiB")?.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    // The trace touches a few thousand lines; 1 GiB would be the arrays.
    assert!(kib < 200 * 1024, "peak {kib} KiB: {err}");
}

#[test]
fn out_of_range_options_are_refused_not_clamped() {
    // The smaller cases: each of these ran, clamped to something else.
    let dir = tempfile::tempdir().unwrap();
    let t = path_in(&dir, "t.hatf.txt");
    std::fs::write(&t, "# tramp hatf-text 1\nalloc size=8 address=0x10\n").unwrap();
    for (args, says) in [
        (vec!["replay", "--repeat", "0", &t], "--repeat"),
        (vec!["replay", "--allocator", "", &t], "--allocator"),
        (vec!["cachesim", "--shards", "1", &t], "not between 0 and 1"),
        (vec!["cachesim", "--threads", "0", &t], "give 1 to 1024"),
        (
            vec!["cachesim", "--threads", "100000", &t],
            "give 1 to 1024",
        ),
        (
            vec!["cachesim", "-p", "s3fifo:small=0.2:small=0.3", &t],
            "given twice",
        ),
        // clap took `-1` for an option ("unexpected argument").
        (vec!["cachesim", "-s", "-1", &t], "`-1` is negative"),
    ] {
        let out = tramp(&args);
        assert!(!out.status.success(), "{args:?} ran");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn smaller_cases_dhat_pid_spans_tree_and_replay_units() {
    let dir = tempfile::tempdir().unwrap();
    let exe = program(&dir, "one", "free(malloc(24)); return 0;");
    let trace = path_in(&dir, "one.tpack");
    common::ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    // DHAT's pid is the recorded process's (it was 0).
    let pid = common::ok(&tramp(&["dump", &trace]))
        .lines()
        .find_map(|l| {
            l.split("tramp:process pid=")
                .nth(1)?
                .split_whitespace()
                .next()
                .map(str::to_string)
        })
        .expect("a process note");
    let dhat = path_in(&dir, "one.dhat.json");
    common::ok(&tramp(&["export", "--dhat", &dhat, &trace]));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&dhat).unwrap()).unwrap();
    assert_eq!(v["pid"].to_string(), pid);
    // `spans --tree` of a stream the trace lacks fails (it exited 0).
    let heph = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/heph/scalar.bin.log")
        .to_string_lossy()
        .into_owned();
    let out = tramp(&["spans", "--tree", "99", &heph]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no stream 99"), "{}", stderr(&out));
    // replay's latencies each carry their unit (`30/4.9µ ns` before).
    let out = common::ok(&tramp(&["replay", &trace]));
    let row = out.lines().find(|l| l.starts_with("glibc ")).unwrap();
    assert!(!row.contains("µ ns") && row.contains(" ns/"), "{row}");
}

#[test]
fn an_incomplete_report_says_why_in_damage() {
    // `"damage": null` stood beside `"complete": false` when the read
    // stopped (rather than skipped): the reason belongs in `damage`.
    let dir = tempfile::tempdir().unwrap();
    let t = path_in(&dir, "cut.hatf.txt");
    std::fs::write(
        &t,
        "# tramp hatf-text 1\nalloc size=8 address=0x10\nalloc size=9 addr",
    )
    .unwrap();
    for cmd in ["stats", "cachesim"] {
        let out = tramp(&[cmd, "--json", &t]);
        assert_eq!(out.status.code(), Some(1));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["complete"], false, "{cmd}: {v}");
        let why = v["damage"]["stopped"]
            .as_str()
            .unwrap_or_else(|| panic!("{cmd}: {v}"));
        assert!(
            why.contains("line 3") && why.contains("cut"),
            "{cmd}: {why}"
        );
    }
}

#[test]
fn heap_views_of_traces_without_heap_events_are_refused() {
    // `stats --folded/--timeline/--tree` on PTF or Heph printed the plain
    // statistics, the option ignored; `--sites` was refused already.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let heph = root
        .join("heph/scalar.bin.log")
        .to_string_lossy()
        .into_owned();
    let ptf = root
        .join("ptf/figure3.ptf.txt")
        .to_string_lossy()
        .into_owned();
    for t in [&heph, &ptf] {
        for (flag, says) in [
            (vec!["--timeline"], "--timeline"),
            (vec!["--folded", "bytes"], "--folded"),
            (vec!["--tree", "top-down"], "--tree"),
        ] {
            let mut args = vec!["stats"];
            args.extend(flag.iter().copied());
            args.push(t);
            let out = tramp(&args);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert!(
                stderr(&out).contains(says) && stderr(&out).contains("have none"),
                "{args:?}: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn a_compressed_input_cut_before_its_first_byte_is_said_cut_in_every_codec() {
    // "is empty" was said of a compressed file cut inside its first frame.
    let dir = tempfile::tempdir().unwrap();
    let t = path_in(&dir, "t.hatf.txt");
    let mut text = String::from("# tramp hatf-text 1\n");
    for i in 0..2000 {
        text += &format!(
            "alloc size={} address={:#x}\n",
            16 + i % 100,
            0x1000 + 64 * i
        );
    }
    std::fs::write(&t, &text).unwrap();
    for (tool, ext, args) in [
        ("zstd", "zst", vec!["-q", "-c"]),
        ("gzip", "gz", vec!["-c"]),
        ("xz", "xz", vec!["-c"]),
    ] {
        let out = std::process::Command::new(tool)
            .args(&args)
            .arg(&t)
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}");
        let cut = path_in(&dir, &format!("cut.hatf.txt.{ext}"));
        std::fs::write(&cut, &out.stdout[..12]).unwrap();
        let r = tramp(&["stats", &cut]);
        assert_eq!(r.status.code(), Some(1));
        let err = stderr(&r);
        assert!(
            err.contains(&format!(
                "{tool} input damaged or cut short at compressed byte 12"
            )),
            "{tool}: {err}"
        );
        assert!(!err.contains("is empty"), "{tool}: {err}");
    }
}

/// Heph's statistics group thousands as the heap statistics do: a log of
/// three copies of scalar.bin.log has three times its packets and events
/// (the copies' sequence numbers come again, as duplicates).
#[test]
fn heph_statistics_group_their_thousands() {
    let dir = tempfile::tempdir().unwrap();
    let one =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/heph/scalar.bin.log");
    let bytes = std::fs::read(&one).unwrap();
    let three = path_in(&dir, "three.bin.log");
    std::fs::write(&three, [&bytes[..], &bytes[..], &bytes[..]].concat()).unwrap();
    let count = |text: &str, key: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(key)).unwrap();
        line[key.len()..].trim().replace(',', "").parse().unwrap()
    };
    let single = common::ok(&tramp(&["stats", one.to_str().unwrap()]));
    let (packets, events) = (count(&single, "packets"), count(&single, "events"));
    assert!(packets < 1000 && events < 1000, "{single}");
    let text = common::ok(&tramp(&["stats", &three]));
    let grouped = |n: u64| {
        let s = n.to_string();
        format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..])
    };
    assert!(
        text.starts_with(&format!(
            "packets     {}\nevents      {}\n",
            grouped(3 * packets),
            grouped(3 * events)
        )),
        "{text}"
    );
}
