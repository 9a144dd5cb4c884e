//! Other tools' heap profiles in tramp (issue 35): files made here by the
//! real producers (heaptrack, installed by setup.sh), read by tramp, and
//! tramp's figures checked against the producer's own report.

use std::process::Command;

mod common;
use common::{fixture, heaptrack_file, ok, path_in as p, tramp};

/// `fixtures/heap/NAME.c` built with `cc -O0 -g` in `dir`.
fn build(dir: &tempfile::TempDir, name: &str) -> String {
    common::build_heap_fixture(dir, name)
}

/// `fixtures/heap/NAME.c` built and recorded by tramp in `dir`: the
/// trace's path.
fn recorded(dir: &tempfile::TempDir, name: &str) -> String {
    let exe = build(dir, name);
    let trace = p(dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    trace
}

/// `tramp stats --json` of a trace.
fn stats_json(trace: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&tramp(&["stats", "--json", trace]))).unwrap()
}

/// `tramp stats --sites --json` of a trace.
fn sites_json(trace: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&tramp(&["stats", "--sites", "--json", trace]))).unwrap()
}

/// Runs `exe` under heaptrack in `dir`; the path of heaptrack's file.
fn heaptrack(dir: &tempfile::TempDir, exe: &str) -> String {
    heaptrack_file(dir, exe, "ht", &[])
}

/// heaptrack_print's figure after `label`: a count, or bytes as it prints
/// them (`4.10K`, `76.80K`, `512B`), as (value, the rounding it allows).
fn printed(report: &str, label: &str) -> (f64, f64) {
    let line = report
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` in heaptrack_print's report:\n{report}"));
    let word = line[label.len()..].split_whitespace().next().unwrap();
    let (num, scale) = match word.trim_end_matches('B').chars().last() {
        Some('K') => (&word[..word.len() - 1], 1e3),
        Some('M') => (&word[..word.len() - 1], 1e6),
        Some('G') => (&word[..word.len() - 1], 1e9),
        _ => (word.trim_end_matches('B'), 1.0),
    };
    let v: f64 = num.parse().unwrap();
    (v * scale, if scale > 1.0 { scale / 100.0 } else { 0.5 })
}

fn same(report: &str, label: &str, ours: u64) {
    let (v, within) = printed(report, label);
    assert!(
        (v - ours as f64).abs() <= within,
        "{label} heaptrack_print {v}, tramp {ours}"
    );
}

#[test]
fn heaptracks_own_file_reads_with_heaptrack_prints_figures() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let file = heaptrack(&dir, &exe);
    // Detected by its first line, whatever its name.
    let stats = stats_json(&file);
    let report = common::heaptrack_print(&file);
    let n = |k: &str| stats[k].as_u64().unwrap();
    same(&report, "calls to allocation functions:", n("malloc_calls"));
    same(
        &report,
        "temporary memory allocations:",
        n("temporary_allocations"),
    );
    same(
        &report,
        "peak heap memory consumption:",
        n("max_live_bytes"),
    );
    same(&report, "total memory leaked:", n("live_bytes_at_end"));
    // The hand count of the program: 1,151 mallocs and 50 reallocs (each a
    // `+` to heaptrack), and heaptrack's own C++ runtime pool.
    assert_eq!(n("malloc_calls"), 1202);

    // The call stacks and names heaptrack stored: the 1,000 strdup'd
    // temporaries of line 19, named without the program.
    std::fs::remove_file(&exe).unwrap();
    let sites = sites_json(&file);
    let top = &sites["sites"]["by_count"][0];
    assert_eq!(top["allocs"], 1000, "{top}");
    assert_eq!(top["temporary"], 1000, "{top}");
    let frame = &top["stack"][0];
    assert_eq!(frame["function"], "main", "{top}");
    assert_eq!(frame["line"], 19, "{top}");
    // Its addresses are made up: replay and cachesim refuse them unless
    // told, also once converted to tpack (the note travels).
    for cmd in [&["replay"][..], &["cachesim", "--size", "100"][..]] {
        let mut args = cmd.to_vec();
        args.push(&file);
        let refused = tramp(&args);
        assert!(!refused.status.success(), "{cmd:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("synthetic"),
            "{cmd:?}"
        );
        args.insert(1, "--synthetic-ok");
        ok(&tramp(&args));
    }
    // heaptrack's file converts to tpack and reads back the same.
    let tp = p(&dir, "h.tpack");
    ok(&tramp(&["convert", &file, &tp]));
    let again = stats_json(&tp);
    assert_eq!(
        again["temporary_allocations"],
        stats["temporary_allocations"]
    );
    assert_eq!(again["max_live_bytes"], stats["max_live_bytes"]);
    assert!(!tramp(&["replay", &tp]).status.success());
}

#[test]
fn damage_in_a_heaptrack_file_is_named_with_its_line_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let f = p(&dir, "bad.heaptrack");
    std::fs::write(&f, "v 10400 3\nX ./prog\na 10 0\n+ 0\n+ 7\n+ 0\n").unwrap();
    let out = tramp(&["stats", "--json", &f]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 5") && err.contains("allocation info"),
        "{err}"
    );
}

#[test]
fn a_tramp_recording_opens_in_heaptrack_print_with_trampss_figures() {
    let dir = tempfile::tempdir().unwrap();
    let trace = recorded(&dir, "temporaries");
    let stats = stats_json(&trace);
    let n = |k: &str| stats[k].as_u64().unwrap();
    // heaptrack's file has no addresses or threads: refused, then --lossy.
    let out = p(&dir, "t.heaptrack.zst");
    let refused = tramp(&["convert", &trace, &out]);
    assert!(!refused.status.success());
    assert!(!std::path::Path::new(&out).exists());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("`address`") && said.contains("createThread"),
        "{said}"
    );
    ok(&tramp(&["convert", "--lossy", &trace, &out]));

    let report = common::heaptrack_print(&out);
    same(
        &report,
        "calls to allocation functions:",
        n("malloc_calls") + n("realloc_calls"),
    );
    // The peak: inside the first realloc tramp sees the 4,096-byte block
    // made while the 8-byte one is live (4,104); heaptrack's file records a
    // realloc as a free, then an allocation, so its peak is 4,096.
    assert_eq!(n("max_live_bytes"), 4104);
    same(&report, "peak heap memory consumption:", 4096);
    same(&report, "total memory leaked:", n("live_bytes_at_end"));
    // heaptrack's own rule compares a free with the last allocation's size
    // and stack, not its block: one more than tramp's (1,101, as on
    // heaptrack's own recording of the program).
    assert_eq!(n("temporary_allocations"), 1100);
    same(&report, "temporary memory allocations:", 1101);
    // Named as the recording named them: the 1,000 temporaries of line 19.
    assert!(
        report.contains("1000 calls to allocation functions")
            && report.contains("temporaries.c:19"),
        "{report}"
    );
    // And read back by tramp with heaptrack's figures.
    let back = stats_json(&out);
    assert_eq!(back["max_live_bytes"], 4096);
    assert_eq!(back["live_bytes_at_end"], stats["live_bytes_at_end"]);
    assert_eq!(back["temporary_allocations"], 1101);
}

/// `go tool pprof -raw`'s samples: each line's four values.
fn pprof_samples(raw: &str) -> Vec<(Vec<u64>, String)> {
    raw.lines()
        .skip_while(|l| !l.starts_with("Samples:"))
        .skip(2)
        .take_while(|l| l.contains(':') && !l.starts_with("Locations"))
        .map(|l| {
            let (values, locations) = l.split_once(':').unwrap();
            let v = values
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            (v, locations.trim().to_string())
        })
        .collect()
}

#[test]
fn a_recording_opens_in_go_tool_pprof() {
    let dir = tempfile::tempdir().unwrap();
    let trace = recorded(&dir, "temporaries");
    let out = p(&dir, "t.pb.gz");
    ok(&tramp(&["export", &trace, "--pprof", &out]));
    let stats = stats_json(&trace);
    let n = |k: &str| stats[k].as_u64().unwrap();

    // pprof itself reads it (setup.sh installs golang-go).
    let raw = Command::new("go")
        .args(["tool", "pprof", "-raw", &out])
        .output()
        .expect("go runs (setup.sh installs golang-go)");
    assert!(
        raw.status.success(),
        "{}",
        String::from_utf8_lossy(&raw.stderr)
    );
    let raw = String::from_utf8_lossy(&raw.stdout);
    assert!(
        raw.contains(
            "alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes"
        ),
        "{raw}"
    );
    let samples = pprof_samples(&raw);
    let sum = |i: usize| samples.iter().map(|(v, _)| v[i]).sum::<u64>();
    // Every allocation (a moved realloc's included), its bytes, the leaks.
    assert_eq!(sum(0), n("total_allocs"), "{raw}");
    assert_eq!(sum(1), n("bytes_allocated"), "{raw}");
    assert_eq!(sum(2), n("live_objects_at_end"), "{raw}");
    assert_eq!(sum(3), n("live_bytes_at_end"), "{raw}");
    // The 1,000 strdup'd temporaries are one sample, named at their line.
    assert!(samples.iter().any(|(v, _)| v[0] == 1000), "{raw}");
    assert!(
        raw.contains("main") && raw.contains("temporaries.c:19"),
        "{raw}"
    );
    let top = Command::new("go")
        .args(["tool", "pprof", "-top", "-sample_index=alloc_objects", &out])
        .output()
        .unwrap();
    let top = String::from_utf8_lossy(&top.stdout);
    let first = top
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap_or("");
    assert!(
        first.trim_end().ends_with("main") && first.contains("1200"),
        "{top}"
    );
}

/// Live bytes at the end and at most, worked out from an mtrace log's own
/// lines (a moved realloc's new block counts before its old one goes, as
/// tramp's traces order them), and the `+` lines with a block.
fn mtrace_by_hand(log: &str) -> (u64, u64, u64) {
    let mut live: std::collections::HashMap<u64, u64> = Default::default();
    let (mut now, mut max, mut allocs) = (0u64, 0u64, 0u64);
    let mut old = None;
    let num = |t: &str| u64::from_str_radix(t.trim_start_matches("0x"), 16).unwrap_or(0);
    for line in log.lines() {
        let op = match line.strip_prefix("@ ") {
            Some(r) => &r[r.find("] ").unwrap() + 2..],
            None => line,
        };
        let f: Vec<&str> = op.split(' ').collect();
        match f[0] {
            "+" if f[1] != "(nil)" => {
                allocs += 1;
                let size = num(f[2]);
                live.insert(num(f[1]), size);
                now += size;
            }
            "-" => now -= live.remove(&num(f[1])).unwrap_or(0),
            "<" => old = Some(num(f[1])),
            ">" => {
                let (new, size) = (num(f[1]), num(f[2]));
                let o = old.take().unwrap();
                if new == o {
                    now = now - live[&o] + size;
                } else {
                    allocs += 1;
                    now += size;
                    max = max.max(now);
                    now -= live.remove(&o).unwrap_or(0);
                }
                live.insert(new, size);
            }
            _ => {}
        }
        max = max.max(now);
    }
    (now, max, allocs)
}

#[test]
fn glibcs_mtrace_log_reads_with_its_own_figures() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let on = p(&dir, "mtrace_on.so");
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", &fixture("heap/mtrace_on.c"), "-o", &on])
        .status()
        .unwrap();
    assert!(built.success());
    let log = p(&dir, "t.mtrace");
    // glibc's own tracer (glibc ≥ 2.34 keeps it in libc_malloc_debug.so).
    let run = Command::new(&exe)
        .env("MALLOC_TRACE", &log)
        .env("LD_PRELOAD", format!("libc_malloc_debug.so.0 {on}"))
        .output()
        .unwrap();
    assert!(run.status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("= Start\n"), "{text}");
    let (live, max, allocs) = mtrace_by_hand(&text);
    let stats = stats_json(&log);
    assert_eq!(stats["total_allocs"], allocs, "{stats}");
    assert_eq!(stats["live_bytes_at_end"], live, "{stats}");
    assert_eq!(stats["max_live_bytes"], max, "{stats}");
    // The program's own count: 1,000 strdup'd temporaries and 50 reallocs.
    assert_eq!(stats["realloc_calls"], 50);
    assert!(stats["malloc_calls"].as_u64().unwrap() >= 1150);
    // Callers are symbolized from the program's own file (the log names
    // it and the offset): the 1,000 strdup'd temporaries of line 19.
    let sites = sites_json(&log);
    let top = &sites["sites"]["by_count"][0];
    assert_eq!(top["allocs"], 1000, "{sites}");
    assert_eq!(top["temporary"], 1000, "{sites}");
    assert_eq!(
        (
            top["stack"][0]["function"].as_str(),
            top["stack"][0]["line"].as_u64()
        ),
        (Some("main"), Some(19)),
        "{sites}"
    );
}

/// Each DHAT program point of `json` whose leaf frame (past DHAT's own
/// `malloc`) ends with `(FILE:LINE)`: its figures by that place.
fn dhat_points(json: &serde_json::Value) -> std::collections::BTreeMap<String, Vec<u64>> {
    let ftbl = json["ftbl"].as_array().unwrap();
    let mut out = std::collections::BTreeMap::new();
    for pp in json["pps"].as_array().unwrap() {
        let frames: Vec<&str> = pp["fs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| ftbl[i.as_u64().unwrap() as usize].as_str().unwrap())
            .filter(|f| !f.contains("vgpreload_dhat"))
            .collect();
        let Some(leaf) = frames.first() else { continue };
        let place = leaf
            .rsplit('/')
            .next()
            .unwrap()
            .trim_end_matches(')')
            .to_string();
        let place = place.rsplit('(').next().unwrap().to_string();
        let v = ["tb", "tbk", "mb", "mbk", "gb", "gbk", "eb", "ebk"]
            .iter()
            .map(|k| pp[*k].as_u64().unwrap())
            .collect();
        out.insert(place, v);
    }
    out
}

#[test]
fn dhat_json_matches_valgrinds_dhat_on_the_same_program() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let ours_path = p(&dir, "tramp.json");
    ok(&tramp(&["export", &trace, "--dhat", &ours_path]));
    let ours: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&ours_path).unwrap()).unwrap();
    // valgrind's DHAT on the same program (setup.sh installs valgrind).
    let theirs_path = p(&dir, "dhat.json");
    let run = Command::new("valgrind")
        .args([
            "--tool=dhat",
            &format!("--dhat-out-file={theirs_path}"),
            &exe,
        ])
        .output()
        .expect("valgrind runs (setup.sh installs it)");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let theirs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&theirs_path).unwrap()).unwrap();
    // Every field tramp writes is one DHAT writes, of the same kind.
    for (k, v) in ours.as_object().unwrap() {
        let t = &theirs[k];
        assert!(!t.is_null(), "DHAT has no `{k}`");
        assert_eq!(
            std::mem::discriminant(v),
            std::mem::discriminant(t),
            "`{k}`"
        );
    }
    for k in ours["pps"][0].as_object().unwrap().keys() {
        assert!(
            !theirs["pps"][0][k].is_null(),
            "DHAT's points have no `{k}`"
        );
    }
    assert_eq!(ours["dhatFileVersion"], 2);
    assert_eq!(ours["ftbl"][0], "[root]");
    // The program points of plain allocations read the same in both:
    // bytes and blocks in total, most at once, at the global peak (the
    // 1,000 temporaries of line 19 are gone by then), at the end. (Lines
    // 27–28 are reallocs, which DHAT charges to the block's first
    // allocation; lifetimes are instructions in DHAT, ns in tramp.)
    let (ours, theirs) = (dhat_points(&ours), dhat_points(&theirs));
    for line in ["temporaries.c:19", "temporaries.c:24"] {
        assert_eq!(
            ours.get(line),
            theirs.get(line),
            "{line}: {ours:?} / {theirs:?}"
        );
        assert!(ours.contains_key(line), "{ours:?}");
    }
    assert_eq!(ours["temporaries.c:19"][..4], [18997, 1000, 22, 1]);
}

#[test]
fn massif_output_reads_in_ms_print_with_trampss_peak() {
    let dir = tempfile::tempdir().unwrap();
    let trace = recorded(&dir, "temporaries");
    let out = p(&dir, "massif.out");
    ok(&tramp(&["export", &trace, "--massif", &out]));
    let stats = stats_json(&trace);
    // valgrind's ms_print reads it (setup.sh installs valgrind).
    let printed = Command::new("ms_print")
        .arg(&out)
        .output()
        .expect("ms_print runs (setup.sh installs valgrind)");
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let text = String::from_utf8_lossy(&printed.stdout);
    // The peak snapshot's total is tramp's peak, 4,104 bytes (the realloc's
    // new 4,096-byte block while its 8-byte old one is live).
    let peak_n: String = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Detailed snapshots: ["))
        .and_then(|l| l.split(" (peak)").next())
        .and_then(|l| l.rsplit(' ').next())
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    let row = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(peak_n.as_str()))
        .unwrap();
    let total = row.split_whitespace().nth(2).unwrap().replace(',', "");
    assert_eq!(
        total.parse::<u64>().unwrap(),
        stats["max_live_bytes"].as_u64().unwrap()
    );
    assert_eq!(total, "4104");
    // The peak's tree: the realloc at line 28 holds 4,096 of them.
    assert!(
        text.contains("(4,096B) 0x") && text.contains("temporaries.c:28)"),
        "{text}"
    );
}

#[test]
fn a_recording_written_as_android_record_allocs_reads_back_with_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let trace = recorded(&dir, "temporaries");
    let out = p(&dir, "t.android");
    // No call sites or thread starts in the format: refused, then --lossy.
    assert!(!tramp(&["convert", &trace, &out]).status.success());
    ok(&tramp(&["convert", "--lossy", &trace, &out]));
    let text = std::fs::read_to_string(&out).unwrap();
    // bionic's grammar (no producer runs here: AOSP's memory_replay reads
    // this layout; docs/formats/android.md).
    let first = text.lines().next().unwrap();
    assert!(first.contains(": malloc 0x"), "{first}");
    let stats = |f: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&tramp(&["stats", "--json", f]))).unwrap()
    };
    let (a, b) = (stats(&trace), stats(&out));
    for k in [
        "total_allocs",
        "total_frees",
        "realloc_calls",
        "bytes_allocated",
        "max_live_bytes",
        "live_bytes_at_end",
        "temporary_allocations",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
}

#[test]
fn a_wee_alloc_trace_reads_with_its_figures_worked_out_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let f = p(&dir, "small.trace");
    // 4 allocations (10 + 40 + 12 + 100 bytes), three freed; the most live
    // at once is 40 + 12 + 100 = 152 after the fourth; 100 bytes stay.
    std::fs::write(
        &f,
        "Alloc(10),\nAlloc(40),\nFree(0),\nAlloc(12),\nAlloc(100),\nFree(2),\nFree(1),\n",
    )
    .unwrap();
    let s: serde_json::Value = serde_json::from_str(&ok(&tramp(&["stats", "--json", &f]))).unwrap();
    assert_eq!(
        (
            s["total_allocs"].as_u64(),
            s["total_frees"].as_u64(),
            s["bytes_allocated"].as_u64(),
            s["max_live_bytes"].as_u64(),
            s["live_bytes_at_end"].as_u64()
        ),
        (Some(4), Some(3), Some(162), Some(152), Some(100))
    );
    // Made-up addresses: no replay unless told.
    assert!(!tramp(&["replay", &f]).status.success());
    let bad = p(&dir, "bad.trace");
    std::fs::write(&bad, "Alloc(1),\nFree(5),\n").unwrap();
    let out = tramp(&["stats", &bad]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
}

/// A `.wl` workload replayed in the test: (mallocs, frees, reallocs,
/// threads, bytes live at the end), honouring every SYNC pair and checking
/// that each slot is used as trace_run expects (no malloc over a live slot,
/// no free of a dead one).
fn replay_wl(wl: &[u8]) -> (u64, u64, u64, usize, u64) {
    fn vlq(b: &[u8], at: &mut usize) -> u64 {
        let mut v = 0u64;
        loop {
            let x = b[*at];
            *at += 1;
            v = (v << 7) | u64::from(x & 127);
            if x & 128 == 0 {
                return v;
            }
        }
    }
    let mut at = 0;
    let mut header = Vec::new();
    while wl[at] != 1 {
        let code = wl[at];
        at += 1;
        header.push((code, vlq(wl, &mut at)));
    }
    assert_eq!(header[0].0, 8, "ALLOC_PTRS first");
    assert_eq!(header[1].0, 9, "ALLOC_SYNCS second");
    assert_eq!(header[2].0, 10, "NTHREADS third");
    let starts: Vec<usize> = header[3..]
        .iter()
        .map(|h| {
            assert_eq!(h.0, 11);
            h.1 as usize
        })
        .collect();
    assert_eq!(starts.len() as u64, header[2].1);
    let (slots, syncs) = (header[0].1 as usize, header[1].1 as usize);
    let mut pos = starts.clone();
    let mut done = vec![false; starts.len()];
    let mut signalled = vec![false; syncs + 1];
    let mut live: Vec<Option<u64>> = vec![None; slots];
    let (mut m, mut f, mut r) = (0, 0, 0);
    while done.iter().any(|d| !d) {
        let mut progressed = false;
        for t in 0..starts.len() {
            while !done[t] {
                let mut at = pos[t];
                let code = wl[at];
                at += 1;
                match code {
                    1 => done[t] = true,
                    2 | 3 => {
                        let (slot, size) = (vlq(wl, &mut at) as usize, vlq(wl, &mut at));
                        assert!(live[slot].is_none(), "malloc over live slot {slot}");
                        live[slot] = Some(size);
                        m += 1;
                    }
                    4 => {
                        let (new, old, size) = (
                            vlq(wl, &mut at) as usize,
                            vlq(wl, &mut at) as usize,
                            vlq(wl, &mut at),
                        );
                        if old != 0 {
                            assert!(live[old].take().is_some(), "realloc of dead slot {old}");
                        }
                        if new != 0 {
                            live[new] = Some(size);
                        }
                        r += 1;
                    }
                    5 => {
                        let slot = vlq(wl, &mut at) as usize;
                        assert!(live[slot].take().is_some(), "free of dead slot {slot}");
                        f += 1;
                    }
                    6 => signalled[vlq(wl, &mut at) as usize] = true,
                    7 => {
                        let s = vlq(wl, &mut at) as usize;
                        if !signalled[s] {
                            break; // waits for its writer
                        }
                    }
                    c => panic!("unknown code {c}"),
                }
                pos[t] = at;
                progressed = true;
            }
        }
        assert!(progressed, "the SYNC pairs deadlock");
    }
    let end = live.iter().flatten().sum();
    (m, f, r, starts.len(), end)
}

#[test]
fn a_threaded_recording_replays_as_a_trace_run_workload() {
    let dir = tempfile::tempdir().unwrap();
    let exe = p(&dir, "handoff");
    let built = Command::new("cc")
        .args([
            "-O0",
            "-g",
            &fixture("heap/handoff.c"),
            "-o",
            &exe,
            "-lpthread",
        ])
        .status()
        .unwrap();
    assert!(built.success());
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let wl = p(&dir, "t.wl");
    assert!(
        !tramp(&["convert", &trace, &wl]).status.success(),
        "lossy: refused"
    );
    ok(&tramp(&["convert", "--lossy", &trace, &wl]));
    let stats = stats_json(&trace);
    let n = |k: &str| stats[k].as_u64().unwrap();
    let (m, f, r, threads, end) = replay_wl(&std::fs::read(&wl).unwrap());
    assert_eq!(
        (m, f, r),
        (n("malloc_calls"), n("free_calls"), n("realloc_calls"))
    );
    assert_eq!(end, n("live_bytes_at_end"));
    assert_eq!(threads, 2);
    // The program's own count: 100 + 50 + 1 mallocs, 150 frees, 2 reallocs
    // (and the C library's own beside them).
    assert!(m >= 151 && f >= 150 && r == 2, "{m} {f} {r}");
}

#[test]
fn heaptracks_raw_file_reads_with_real_addresses_and_tramps_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let file = heaptrack_file(&dir, &exe, "raw", &["-r"]);
    let stats = stats_json(&file);
    // heaptrack's calls (its own runtime's pool among them), the stdout
    // buffer left; real addresses: tramp's temporary rule by block (1,100,
    // as on tramp's own recording).
    assert_eq!(stats["malloc_calls"], 1202);
    assert_eq!(stats["live_bytes_at_end"], 4096);
    assert_eq!(stats["temporary_allocations"], 1100);
    assert_eq!(stats["frees_of_unknown_addresses"], 0);
    // Symbolized by tramp from the module map the file carries.
    let sites = sites_json(&file);
    let top = &sites["sites"]["by_count"][0];
    assert_eq!(top["allocs"], 1000);
    assert_eq!(
        (
            top["stack"][0]["function"].as_str(),
            top["stack"][0]["line"].as_u64()
        ),
        (Some("main"), Some(19))
    );
    // Real addresses: replay takes it.
    ok(&tramp(&["replay", &file]));
}
