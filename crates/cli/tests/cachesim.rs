//! End-to-end tests of `tramp cachesim`.

use std::path::Path;

mod common;
use common::{fixture, golden, ok, path_in as p, stderr, tramp};

fn twitter() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/cache/twitter_cluster52.csv.zst")
        .to_str()
        .unwrap()
        .to_string()
}

/// The Twitter trace's requests, decompressed and as oracleGeneral
/// records written here (not by tramp).
fn oracle_copy(dir: &tempfile::TempDir) -> String {
    let csv = zstd::decode_all(std::fs::File::open(twitter()).unwrap()).unwrap();
    let mut out = Vec::new();
    for line in String::from_utf8(csv)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        out.extend(f[0].parse::<u32>().unwrap().to_le_bytes());
        out.extend(f[1].parse::<u64>().unwrap().to_le_bytes());
        out.extend(f[2].parse::<u32>().unwrap().to_le_bytes());
        out.extend(f[3].parse::<i64>().unwrap().to_le_bytes());
    }
    let path = p(dir, "tw.oracleGeneral");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn the_twitter_table_is_golden_and_agrees_with_libcachesim() {
    let out = ok(&tramp(&[
        "cachesim",
        &twitter(),
        "-p",
        "lru,s3fifo,arc,opt",
        "-s",
        "1000,20000",
        "--mrc",
    ]));
    golden("cachesim-twitter.txt", &out);
    // libCacheSim 0.3.5's misses (crates/cachesim/tests/libcachesim.rs).
    for want in [
        "358717", "191436", "327709", "177490", "353482", "185122", "256267", "144377",
    ] {
        assert!(out.contains(want), "{want} missing:\n{out}");
    }
}

#[test]
fn oracle_general_gives_the_same_answers_as_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let oracle = oracle_copy(&dir);
    let args = ["-p", "lru,2q,lfu,opt", "-s", "500,5000", "--json"];
    let a: serde_json::Value = serde_json::from_str(&ok(&tramp(
        &[&["cachesim", &twitter()][..], &args].concat(),
    )))
    .unwrap();
    let b: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&[&["cachesim", &oracle][..], &args].concat()))).unwrap();
    assert_eq!(a["table"], b["table"]);
    assert_eq!(a["requests"], 1_000_000);
    assert_eq!(a["table"]["caches"].as_array().unwrap().len(), 8);
}

#[test]
fn a_cut_oracle_file_prints_what_came_before_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let oracle = oracle_copy(&dir);
    let bytes = std::fs::read(&oracle).unwrap();
    let cut = p(&dir, "cut.oracleGeneral");
    std::fs::write(&cut, &bytes[..24 * 1000 + 7]).unwrap();
    let out = tramp(&["cachesim", &cut, "-s", "100"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(text.starts_with("1000 requests"), "{text}");
    let err = stderr(&out);
    assert!(err.contains("record 1000 (byte offset 24000)"), "{err}");
    assert!(err.contains("the 1000 requests before the damage"), "{err}");
}

#[test]
fn svg_curves_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let svg = p(&dir, "mrc.svg");
    ok(&tramp(&[
        "cachesim",
        &twitter(),
        "-p",
        "lru,sieve",
        "-s",
        "100,1000,10000",
        "--svg",
        &svg,
    ]));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"));
    assert!(text.trim_end().ends_with("</svg>"));
    for name in [">lru<", ">sieve<", ">LRU (stack distances)<"] {
        assert!(text.contains(name), "{name}");
    }
    // Three markers per simulated policy, none on the dense curve.
    assert_eq!(text.matches("<circle").count(), 6);
}

#[test]
fn a_heap_trace_is_cached_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "s.hatf.zst");
    ok(&tramp(&[
        "sample", "--events", "3000", "--seed", "9", "-o", &trace,
    ]));
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    let out = tramp(&["cachesim", &trace, "-s", "64,100000", "--json"]);
    let sim: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let requests = sim["requests"].as_u64().unwrap();
    let events = ["total_allocs", "total_reallocs", "total_frees"]
        .iter()
        .map(|k| stats[k].as_u64().unwrap())
        .sum::<u64>();
    // One request per allocation, reallocation and free with an address
    // (free(NULL) and failed allocations have none).
    assert!(requests <= events && requests >= stats["total_allocs"].as_u64().unwrap());
    let caches = sim["table"]["caches"].as_array().unwrap();
    // A cache larger than the trace misses only the first touch of each line.
    let big = &caches[1];
    assert_eq!(big["evictions"], 0);
    let misses = big["reads"].as_u64().unwrap() + big["writes"].as_u64().unwrap()
        - big["read_hits"].as_u64().unwrap()
        - big["write_hits"].as_u64().unwrap();
    assert_eq!(
        misses,
        big["cached"].as_u64().unwrap(),
        "every miss is a first touch"
    );
}

#[test]
fn a_ptf_trace_is_a_buffer_pool_and_heph_is_refused() {
    let out = ok(&tramp(&[
        "cachesim",
        &fixture("figure3.ptf.txt"),
        "-p",
        "lru,fifo",
        "-s",
        "2,8",
    ]));
    assert!(out.contains("33 requests"), "{out}");
    let heph = tramp(&[
        "cachesim",
        &fixture("heph_tracing_example.bin.log"),
        "-s",
        "2",
    ]);
    assert_eq!(heph.status.code(), Some(1));
    assert!(
        stderr(&heph).contains("no object ids or addresses"),
        "{}",
        stderr(&heph)
    );
}

#[test]
fn bad_arguments_are_clear_errors() {
    for (args, msg) in [
        (vec!["-p", "mru"], "unknown policy \"mru\""),
        (vec!["-s", "0"], "a cache needs a size above 0"),
        (vec!["-s", "10q"], "unknown suffix"),
        (vec!["--line", "48"], "power of two"),
    ] {
        let out = tramp(&[&["cachesim", &twitter()][..], &args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(msg), "{args:?}: {}", stderr(&out));
    }
    // A rate outside (0, 1) is refused by the argument parser (exit 2).
    let out = tramp(&["cachesim", &twitter(), "--shards", "1.5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not between 0 and 1"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_help_names_every_policy_and_input() {
    let help = ok(&tramp(&["cachesim", "--help"]));
    for word in [
        "lru",
        "fifo",
        "clock",
        "sieve",
        "s3fifo",
        "arc",
        "2q",
        "lfu",
        "opt",
        "oracleGeneral",
        "SHARDS",
        "--svg",
        "write-backs",
    ] {
        assert!(help.contains(word), "{word}");
    }
}

#[test]
fn heap_addresses_go_through_the_cpu_hierarchy() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "s.hatf.zst");
    ok(&tramp(&[
        "sample", "--events", "2000", "--seed", "4", "-o", &trace,
    ]));
    let sim: serde_json::Value = serde_json::from_str(&ok(&tramp(&[
        "cachesim", &trace, "-s", "64", "--cpu", "table1", "--json",
    ])))
    .unwrap();
    let cpu = &sim["cpu"];
    let levels = cpu["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3);
    let hits: u64 = levels.iter().map(|l| l["hits"].as_u64().unwrap()).sum();
    assert_eq!(
        hits + cpu["memory"].as_u64().unwrap(),
        sim["requests"].as_u64().unwrap()
    );
    let cycles = levels
        .iter()
        .map(|l| l["hits"].as_u64().unwrap() * l["latency"].as_u64().unwrap())
        .sum::<u64>()
        + 100 * cpu["memory"].as_u64().unwrap();
    assert_eq!(cpu["cycles"].as_u64().unwrap(), cycles);
    let refused = tramp(&["cachesim", &twitter(), "-s", "5", "--cpu", "table1"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("no addresses for CPU caches"),
        "{}",
        stderr(&refused)
    );
}

/// `--warmup N` leaves the first N requests out of every count, the LRU
/// curve's included, and `--threads` does not change a result.
#[test]
fn warmup_and_threads() {
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "cachesim",
            "--json",
            "-p",
            "lru,arc,s3fifo",
            "-s",
            "1000,20000",
            "--mrc",
        ];
        args.extend_from_slice(extra);
        let tw = twitter();
        args.push(&tw);
        serde_json::from_str(&ok(&tramp(&args))).unwrap()
    };
    let one = run(&["--threads", "1"]);
    let two = run(&["--threads", "2"]);
    assert_eq!(one["table"], two["table"]);
    let warm = run(&["--warmup", "400000"]);
    for (c, w) in one["table"]["caches"]
        .as_array()
        .unwrap()
        .iter()
        .zip(warm["table"]["caches"].as_array().unwrap())
    {
        assert_eq!(w["reads"], 600_000, "{w}");
        // Warm caches miss less than cold ones over the same requests
        // would suggest: fewer misses than the whole trace's.
        assert!(
            w["read_hits"].as_u64().unwrap() > 0
                && w["reads"].as_u64().unwrap() - w["read_hits"].as_u64().unwrap()
                    < c["reads"].as_u64().unwrap() - c["read_hits"].as_u64().unwrap()
        );
    }
    // The exact LRU curve, warmed alike, gives LRU's counts.
    let lru_1000 = &warm["table"]["caches"][0];
    let misses = 600_000 - lru_1000["read_hits"].as_u64().unwrap();
    let curve = &warm["mrc"];
    assert_eq!(curve["requests"], 600_000, "{curve}");
    let at = curve["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["size"] == 1000)
        .unwrap_or_else(|| panic!("{curve}"));
    assert!((at["miss_ratio"].as_f64().unwrap() - misses as f64 / 600_000.0).abs() < 1e-9);
}

#[test]
fn sizes_and_warmup_as_fractions_of_the_working_set() {
    // The working set, counted here from the csv: distinct objects.
    let csv = zstd::decode_all(std::fs::File::open(twitter()).unwrap()).unwrap();
    let ids: std::collections::HashSet<&str> = std::str::from_utf8(&csv)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').nth(1).unwrap().trim())
        .collect();
    let ws = ids.len() as f64;
    let run = |extra: &[&str]| -> serde_json::Value {
        let tw = twitter();
        let mut args = vec!["cachesim", "--json", "-p", "lru,s3fifo"];
        args.extend_from_slice(extra);
        args.push(&tw);
        serde_json::from_str(&ok(&tramp(&args))).unwrap()
    };
    let frac = run(&["-s", "1%,0.1", "--warmup", "40%"]);
    let (a, b) = ((0.01 * ws) as u64, (0.1 * ws) as u64);
    let sizes = format!("{a},{b}");
    let abs = run(&["-s", &sizes, "--warmup", "400000"]);
    let caps: Vec<u64> = frac["table"]["caches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["capacity"].as_u64().unwrap())
        .collect();
    assert_eq!(caps, [a, b, a, b]);
    assert_eq!(frac["table"], abs["table"]);
    assert_eq!(frac["warmup"], 400_000);
    assert_eq!(frac["working_set"]["objects"], ids.len());
    // A pipe cannot be read twice: refused, saying so.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["cachesim", "-s", "1%", "-f", "csv", "-"])
        .stdin(std::fs::File::open(twitter()).unwrap())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("give a file, not a pipe"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn miniature_curves_follow_full_simulation() {
    let tw = twitter();
    let out = ok(&tramp(&[
        "cachesim",
        "--json",
        "--mrc=s3fifo,2q,sieve,lru+bloom",
        "--mrc-check",
        &tw,
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("mrc").is_none(), "no LRU curve unless asked");
    let curves = v["curves"]["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 4);
    for c in curves {
        let points = c["points"].as_array().unwrap();
        assert_eq!(points.len(), 20, "{c}");
        // The error is measured over the points whose scaled cache holds
        // at least 100 objects, and those are the larger caches.
        let reliable = c["reliable_points"].as_u64().unwrap();
        assert!(reliable >= 5, "{c}");
        for p in points {
            let scaled = p["scaled"].as_u64().unwrap();
            assert_eq!(p["reliable"], scaled >= 100, "{p}");
        }
        let mae = c["mean_absolute_error"].as_f64().unwrap();
        assert!(mae <= 0.01, "{}: {mae}", c["policy"]);
    }
    // Bad lists are refused before reading.
    let out = tramp(&["cachesim", "--mrc=opt", &tw]);
    assert!(
        stderr(&out).contains("no miniature curve"),
        "{}",
        stderr(&out)
    );
}

/// `tramp cachesim --help` names every policy of the one table
/// (`tramp_cachesim::policy::POLICIES`), and an unknown policy's message
/// is the table's.
#[test]
fn the_help_names_every_policy_of_the_table() {
    let help = ok(&tramp(&["cachesim", "--help"]));
    let words: Vec<&str> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '+'))
        .collect();
    for p in &tramp_cachesim::policy::POLICIES {
        assert!(words.contains(&p.name), "--help lacks {}", p.name);
    }
    let out = tramp(&["cachesim", "-p", "nope", "-s", "10", "x.csv"]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains(&tramp_cachesim::policy::known_names()),
        "{err}"
    );
}
