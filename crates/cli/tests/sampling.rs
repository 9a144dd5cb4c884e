//! Sampled recordings (`tramp record --sample`, issue 47): the estimator on
//! a hand-made trace with the answer worked out here, a sampled recording
//! against the exact one of the same program, and both against jemalloc's
//! own sampled heap profile of it (docs/heap-profile.md, "Sampling").

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{path_in, tramp};
use serde_json::Value;

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `1 / (1 − exp(−s / mean))`: how many blocks a sampled one stands for.
fn weight(s: f64, mean: f64) -> f64 {
    1.0 / (1.0 - (-s / mean).exp())
}

#[test]
fn estimates_of_a_hand_made_sampled_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "t.hatf.txt");
    // Mean 1000: blocks of 100 bytes weigh w = 1/(1 − e^(−0.1)), the block
    // of 2000 bytes weighs 1 (blocks of the mean or more are always taken).
    std::fs::write(
        &trace,
        "# tramp hatf-text 1\n\
         comment \"tramp:sampling mean=1000\"\n\
         alloc size=100 address=0x10\n\
         alloc size=100 address=0x100\n\
         alloc size=2000 address=0x1000\n\
         free address=0x100\n",
    )
    .unwrap();
    let v = json(&tramp(&["stats", "--json", &trace]));
    let w = weight(100.0, 1000.0);
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
    assert_eq!(n("total_allocs"), (2.0 * w + 1.0).round() as u64);
    assert_eq!(n("bytes_allocated"), (200.0 * w + 2000.0).round() as u64);
    assert_eq!(n("total_frees"), w.round() as u64);
    assert_eq!(n("live_objects_at_end"), (w + 1.0).round() as u64);
    assert_eq!(n("live_bytes_at_end"), (100.0 * w + 2000.0).round() as u64);
    // The peak of the estimated live bytes: after the third allocation.
    assert_eq!(n("max_live_bytes"), (200.0 * w + 2000.0).round() as u64);
    let s = &v["sampling"];
    assert_eq!(s["mean_bytes"], 1000);
    assert_eq!(s["samples"], 3);
    assert_eq!(s["estimated"], true);
    // Var = Σ x² (w² − w) over the recorded blocks (the sure one adds 0).
    let se = |k: &str| s["standard_errors"][k].as_f64().unwrap();
    let var1 = (w * w - w) * 100.0 * 100.0;
    assert!((se("bytes_allocated") - (2.0 * var1).sqrt()).abs() < 1e-6);
    assert!((se("live_bytes_at_end") - var1.sqrt()).abs() < 1e-6);
    assert!((se("total_allocs") - (2.0 * (w * w - w)).sqrt()).abs() < 1e-9);
    // The text says they are estimates.
    let text = tramp(&["stats", &trace]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("sampled every 1,000 bytes"), "{text}");
    // An exact trace has no sampling object.
    let exact = path_in(&dir, "e.hatf.txt");
    std::fs::write(&exact, "# tramp hatf-text 1\nalloc size=100 address=0x10\n").unwrap();
    let v = json(&tramp(&["stats", "--json", &exact]));
    assert!(v.get("sampling").is_none(), "{v}");
    assert_eq!(v["bytes_allocated"], 100);
}

/// Per site function: (bytes allocated, its standard error, bytes live at
/// the end, its standard error) from `stats --sites --json`.
fn sites(trace: &str) -> (Value, BTreeMap<String, [f64; 4]>) {
    let v = json(&tramp(&[
        "stats", "--sites", "--top", "1000", "--json", trace,
    ]));
    let mut out = BTreeMap::new();
    for row in v["sites"]["by_bytes"].as_array().unwrap() {
        let f = row["stack"][0]["function"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let se = |k: &str| row["standard_errors"][k].as_f64().unwrap_or(0.0);
        let e = out.entry(f).or_insert([0.0; 4]);
        e[0] += row["bytes"].as_f64().unwrap();
        e[1] = (e[1] * e[1] + se("bytes").powi(2)).sqrt();
        e[2] += row["live_bytes"].as_f64().unwrap();
        e[3] = (e[3] * e[3] + se("live_bytes").powi(2)).sqrt();
    }
    (v, out)
}

const SITES: [&str; 8] = [
    "spread_small",
    "spread_medium",
    "spread_large",
    "fixed_tiny",
    "fixed_small",
    "fixed_medium",
    "fixed_large",
    "fixed_grown",
];

/// Within three standard errors (and a byte of rounding).
fn close(what: &str, est: f64, truth: f64, se: f64) {
    assert!(
        (est - truth).abs() <= 3.0 * se + 1.0,
        "{what}: estimate {est}, against {truth}, standard error {se}"
    );
}

fn build(dir: &Path) -> String {
    common::cc_program(
        dir,
        "sampled.c",
        "sampled",
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    )
}

#[test]
fn a_sampled_recording_estimates_the_exact_one() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path());
    let exact = path_in(&dir, "exact.tpack");
    let sampled = path_in(&dir, "sampled.tpack");
    let out = tramp(&["record", "--stack", "0", "-o", &exact, "--", &prog]);
    assert!(out.status.success());
    let out = record_sampled(&sampled, "7", &prog);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The program's own output is unchanged.
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("kept 29632 blocks"));
    let (ev, e) = sites(&exact);
    let (sv, s) = sites(&sampled);
    assert!(ev.get("sampling").is_none());
    assert_eq!(sv["sampling"]["mean_bytes"], 4096);
    // Only the sampled blocks' frees are recorded: no anomaly.
    for k in [
        "frees_of_unknown_addresses",
        "double_frees",
        "allocs_of_live_addresses",
    ] {
        assert_eq!(sv[k], 0, "{k}");
    }
    for f in SITES {
        let (x, y) = (e[f], s[f]);
        close(&format!("{f} bytes"), y[0], x[0], y[1]);
        close(&format!("{f} leaked bytes"), y[2], x[2], y[3]);
    }
    // Blocks of the mean or more are always taken: exact.
    assert_eq!(s["fixed_large"][0], e["fixed_large"][0]);
    assert_eq!(s["fixed_large"][2], e["fixed_large"][2]);
    // Whole-trace figures too.
    let se = |k: &str| sv["sampling"]["standard_errors"][k].as_f64().unwrap();
    for k in ["bytes_allocated", "live_bytes_at_end", "total_allocs"] {
        close(k, sv[k].as_f64().unwrap(), ev[k].as_f64().unwrap(), se(k));
    }
    // The sample is a small part of the trace.
    let size = |p: &str| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&sampled) * 3 < size(&exact),
        "{} {}",
        size(&sampled),
        size(&exact)
    );
    // pprof's profile carries the sampling as Go's heap profiles do (the
    // period in bytes, the values scaled), read by pprof itself.
    let pb = path_in(&dir, "s.pb.gz");
    assert!(
        tramp(&["export", "--pprof", &pb, &sampled])
            .status
            .success()
    );
    let raw = Command::new("go")
        .args(["tool", "pprof", "-raw", &pb])
        .output()
        .expect("go tool pprof runs");
    let raw = String::from_utf8_lossy(&raw.stdout);
    assert!(raw.contains("PeriodType: space bytes"), "{raw}");
    assert!(raw.contains("Period: 4096"), "{raw}");
    assert!(raw.contains("values are estimates"), "{raw}");
    // DHAT's and massif's files have no estimates: refused, nothing written.
    for (flag, file) in [("--dhat", "d.json"), ("--massif", "massif.out")] {
        let target = path_in(&dir, file);
        let out = tramp(&["export", flag, &target, &sampled]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("the trace is sampled"));
        assert!(!Path::new(&target).exists(), "{file}");
    }
    // The text of the site tables says they are estimates.
    let text = tramp(&["stats", "--sites", &sampled]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("the figures are estimates"));
}

/// jemalloc's heap_v2 profile of `prog`, per site function: (allocated
/// objects, bytes; live objects, bytes) as jeprof unbiases them (each
/// stack scaled by 1 / (1 − exp(−mean size / period))), and the standard
/// errors of the bytes, worked out the same way from its raw samples.
fn jemalloc_profile(dir: &Path, prog: &str) -> BTreeMap<String, [f64; 4]> {
    let prefix = dir.join("jeprof");
    // Without address randomization jemalloc's samples repeat run after run.
    let out = Command::new("setarch")
        .args(["x86_64", "-R", prog])
        .env("LD_PRELOAD", "libjemalloc.so.2")
        .env(
            "MALLOC_CONF",
            format!(
                "prof:true,prof_final:true,prof_accum:true,lg_prof_sample:12,prof_prefix:{}",
                prefix.display()
            ),
        )
        .output()
        .expect("setarch runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let heap = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".heap"))
        .expect("jemalloc wrote its final profile (is jemalloc built with profiling?)");
    let text = std::fs::read_to_string(heap).unwrap();
    let period: f64 = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("heap_v2/"))
        .expect("a heap_v2 profile")
        .parse()
        .unwrap();
    // The program's mappings: the first (offset 0) is its load base.
    let base = text
        .lines()
        .skip_while(|l| !l.starts_with("MAPPED_LIBRARIES"))
        .find(|l| l.ends_with(prog))
        .map(|l| u64::from_str_radix(l.split('-').next().unwrap(), 16).unwrap())
        .expect("the program's mapping");
    let mut stacks: Vec<(Vec<u64>, [f64; 4])> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let Some(frames) = l.strip_prefix("@ ") else {
            continue;
        };
        let frames: Vec<u64> = frames
            .split(' ')
            .map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).unwrap())
            .collect();
        // "  t*: live_objects: live_bytes [objects: bytes]"
        let t = lines.next().unwrap();
        let nums: Vec<f64> = t
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        stacks.push((frames, [nums[2], nums[3], nums[0], nums[1]]));
    }
    // Name each stack's first frame in the program with addr2line.
    let mut out: BTreeMap<String, [f64; 4]> = BTreeMap::new();
    for (frames, [n_all, s_all, n_live, s_live]) in stacks {
        let Some(pc) = frames.iter().find(|&&a| a >= base && a < base + (1 << 24)) else {
            continue;
        };
        let named = Command::new("addr2line")
            .args(["-f", "-e", prog, &format!("{:#x}", pc - base - 1)])
            .output()
            .expect("addr2line runs");
        let function = String::from_utf8_lossy(&named.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        let scale = |n: f64, s: f64| {
            if n == 0.0 {
                (0.0, 0.0, 0.0)
            } else {
                let p = 1.0 - (-(s / n) / period).exp();
                // n raw samples of size s/n: Var(bytes) ≈ n (1 − p) / p² (s/n)².
                let size = s / n;
                (n / p, s / p, n * (1.0 - p) / (p * p) * size * size)
            }
        };
        let (_, b_all, v_all) = scale(n_all, s_all);
        let (_, b_live, v_live) = scale(n_live, s_live);
        let e = out.entry(function).or_insert([0.0; 4]);
        e[0] += b_all;
        e[1] = (e[1] * e[1] + v_all).sqrt();
        e[2] += b_live;
        e[3] = (e[3] * e[3] + v_live).sqrt();
    }
    out
}

#[test]
fn a_sampled_recording_agrees_with_jemallocs_profile() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path());
    let jdir = dir.path().join("je");
    std::fs::create_dir(&jdir).unwrap();
    let j = jemalloc_profile(&jdir, &prog);
    let exact = path_in(&dir, "exact.tpack");
    let sampled = path_in(&dir, "sampled.tpack");
    assert!(
        tramp(&["record", "--stack", "0", "-o", &exact, "--", &prog])
            .status
            .success()
    );
    let out = record_sampled(&sampled, "11", &prog);
    assert!(out.status.success());
    let (_, e) = sites(&exact);
    let (_, s) = sites(&sampled);
    // jemalloc counts usable sizes: the sites of one size class each compare
    // byte for byte (the spread sites' blocks are rounded up to classes).
    for f in SITES.iter().filter(|f| f.starts_with("fixed_")) {
        let je = j
            .get(*f)
            .unwrap_or_else(|| panic!("{f} in jemalloc's profile: {j:?}"));
        let (x, y) = (e[*f], s[*f]);
        // jemalloc's estimate against the truth, within its own errors.
        close(&format!("jemalloc {f} bytes"), je[0], x[0], je[1]);
        close(&format!("jemalloc {f} leaked"), je[2], x[2], je[3]);
        // tramp's estimate against jemalloc's, within both errors.
        let both = |a: f64, b: f64| (a * a + b * b).sqrt();
        close(
            &format!("tramp vs jemalloc {f} bytes"),
            y[0],
            je[0],
            both(y[1], je[1]),
        );
        close(
            &format!("tramp vs jemalloc {f} leaked"),
            y[2],
            je[2],
            both(y[3], je[3]),
        );
    }
}

/// `tramp record --stack 0 --sample 4096 --sample-seed SEED -o OUT -- PROG`.
fn record_sampled(out: &str, seed: &str, prog: &str) -> std::process::Output {
    tramp(&[
        "record",
        "--stack",
        "0",
        "--sample",
        "4096",
        "--sample-seed",
        seed,
        "-o",
        out,
        "--",
        prog,
    ])
}
