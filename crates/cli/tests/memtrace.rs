//! Memory-access traces (issue 36): valgrind lackey's log read by tramp,
//! and `tramp cachesim --cpu cachegrind:…` fed by it giving cachegrind's own
//! counts for the same program and geometry (valgrind installed by
//! setup.sh). docs/formats/lackey.md, docs/cachesim.md.

use std::collections::BTreeMap;
use std::process::Command;

mod common;
use common::{fixture, ok, path_in as p, tramp};

/// `fixtures/memtrace/walk.c` built without the C library (every access
/// is the program's own; 70 k of them).
fn walk(dir: &tempfile::TempDir) -> String {
    let exe = p(dir, "walk");
    let src = fixture("memtrace/walk.c");
    let built = Command::new("cc")
        .args([
            "-O1",
            "-static",
            "-nostdlib",
            "-fno-builtin",
            "-fno-stack-protector",
        ])
        .args([&src, "-o", &exe])
        .status()
        .unwrap();
    assert!(built.success(), "cc {src}");
    exe
}

/// lackey's log of `exe`.
fn lackey(dir: &tempfile::TempDir, exe: &str) -> String {
    let log = p(dir, "walk.lackey");
    let st = Command::new("valgrind")
        .args([
            "--tool=lackey",
            "--trace-mem=yes",
            &format!("--log-file={log}"),
            exe,
        ])
        .status()
        .expect("valgrind (setup.sh installs it)");
    assert!(st.success());
    log
}

/// cachegrind's `summary:` counters for `exe` with caches `i1`, `d1`, `ll`.
fn cachegrind(dir: &tempfile::TempDir, exe: &str, [i1, d1, ll]: [&str; 3]) -> Vec<u64> {
    let out = p(dir, "cg.out");
    let st = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=yes"])
        .args([
            format!("--I1={i1}"),
            format!("--D1={d1}"),
            format!("--LL={ll}"),
        ])
        .arg(format!("--cachegrind-out-file={out}"))
        .arg(exe)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let events = text
        .lines()
        .find_map(|l| l.strip_prefix("events: "))
        .unwrap();
    assert_eq!(events.trim(), "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw");
    let summary = text
        .lines()
        .find_map(|l| l.strip_prefix("summary: "))
        .unwrap();
    summary
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn lackeys_trace_gives_cachegrinds_counts_for_the_same_geometry() {
    let dir = tempfile::tempdir().unwrap();
    let exe = walk(&dir);
    let log = lackey(&dir, &exe);
    // Three geometries: cachegrind's smallest allowed lines (32 bytes, its
    // largest register), a direct-mapped I1, small and large caches.
    for g in [
        ["1024,2,64", "1024,2,64", "8192,4,64"],
        ["32768,8,64", "32768,8,64", "262144,16,64"],
        ["4096,1,32", "2048,4,32", "16384,8,64"],
    ] {
        let want = cachegrind(&dir, &exe, g);
        let spec = format!("cachegrind:I1={}:D1={}:LL={}", g[0], g[1], g[2]);
        let json: serde_json::Value =
            serde_json::from_str(&ok(&tramp(&["cachesim", "--json", "--cpu", &spec, &log])))
                .unwrap();
        let cpu = &json["cpu"];
        let got: Vec<u64> = [
            "ir", "i1mr", "ilmr", "dr", "d1mr", "dlmr", "dw", "d1mw", "dlmw",
        ]
        .iter()
        .map(|k| cpu[k].as_u64().unwrap())
        .collect();
        assert_eq!(got, want, "{spec}");
        // The text report ends with cachegrind's own summary line.
        let text = ok(&tramp(&["cachesim", "--cpu", &spec, &log]));
        let line = want
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(text.contains(&format!("summary: {line}")), "{text}");
    }
}

/// Accesses per kind as the log's own lines say (`I`, `L`, `S`, `M`).
fn kinds_in_log(log: &str) -> BTreeMap<&'static str, u64> {
    let mut n = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap().lines() {
        let kind = match line.get(..2) {
            Some("I ") => "fetch",
            Some(" L") => "load",
            Some(" S") => "store",
            Some(" M") => "modify",
            _ => continue,
        };
        *n.entry(kind).or_insert(0) += 1;
    }
    n
}

#[test]
fn a_lackey_log_reads_as_accesses_for_stats_dump_and_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let log = lackey(&dir, &walk(&dir));
    let want = kinds_in_log(&log);
    assert!(want.values().sum::<u64>() > 50_000);
    assert!(want["modify"] > 1000, "{want:?}");
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &log]))).unwrap();
    for (k, v) in &want {
        assert_eq!(
            stats["records_by_type"][k].as_u64(),
            Some(*v),
            "{k}: {stats}"
        );
    }
    // The first access as dump prints it, from the log's first access line.
    let dumped = ok(&tramp(&["dump", &log]));
    let text = std::fs::read_to_string(&log).unwrap();
    let first = text.lines().find(|l| !l.starts_with("==")).unwrap();
    let (a, s) = first[3..].split_once(',').unwrap();
    let addr = u64::from_str_radix(a, 16).unwrap();
    assert_eq!(
        dumped.lines().next().unwrap(),
        format!("fetch address={addr} size={s}")
    );
    // A script sums the bytes each kind moves, as the test sums the log.
    let script = p(&dir, "bytes.tramp");
    std::fs::write(
        &script,
        "preprocess begin set l = 0; set s = 0; end\n\
         procedure main begin\n\
           if (RECORD_TYPE == load) then set l = l + load_size; endif\n\
           if (RECORD_TYPE == store) then set s = s + store_size; endif\n\
         end\n\
         postprocess begin echo l, s; end\n",
    )
    .unwrap();
    let mut bytes = (0u64, 0u64);
    for line in text.lines() {
        let size = |l: &str| l.rsplit(',').next().unwrap().parse::<u64>().unwrap();
        match line.get(..2) {
            Some(" L") => bytes.0 += size(line),
            Some(" S") => bytes.1 += size(line),
            _ => {}
        }
    }
    let out = ok(&tramp(&["run", &script, &log]));
    let got: Vec<u64> = out
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(got, vec![bytes.0, bytes.1], "{out}");
}

#[test]
fn damage_in_a_lackey_log_keeps_what_came_before_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let log = p(&dir, "bad.lackey");
    std::fs::write(&log, "==1== Lackey, an example Valgrind tool\nI  00400000,3\n L 7ff0,8\nprogram output\n S 7ff0,8\n").unwrap();
    let out = tramp(&["dump", &log]);
    assert!(!out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("line 4") && err.contains("program output"),
        "{err}"
    );
}

#[test]
fn a_din_trace_reads_by_its_labels() {
    let dir = tempfile::tempdir().unwrap();
    let din = p(&dir, "t.din");
    std::fs::write(
        &din,
        "2 400000\n0 7ff0\n1 7ff8 extra words\n0 0x8000\n3 10\n4 0\n2 400004\n",
    )
    .unwrap();
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &din]))).unwrap();
    let by = &stats["records_by_type"];
    let counts: Vec<u64> = ["fetch", "load", "store", "unknown", "flush"]
        .iter()
        .map(|k| by[k].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(counts, vec![2, 2, 1, 1, 1], "{stats}");
    // One-byte accesses (din has no sizes) through cachegrind's model: the
    // two fetches share a line, the loads and the store are two lines.
    let json: serde_json::Value = serde_json::from_str(&ok(&tramp(&[
        "cachesim",
        "--json",
        "--cpu",
        "cachegrind:I1=1024,2,64:D1=1024,2,64:LL=8192,4,64",
        &din,
    ])))
    .unwrap();
    let c = &json["cpu"];
    assert_eq!(
        (
            c["ir"].as_u64(),
            c["i1mr"].as_u64(),
            c["dr"].as_u64(),
            c["d1mr"].as_u64()
        ),
        (Some(2), Some(1), Some(2), Some(2))
    );
    assert_eq!((c["dw"].as_u64(), c["d1mw"].as_u64()), (Some(1), Some(0)));
}
