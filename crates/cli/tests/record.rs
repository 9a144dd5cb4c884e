//! `tramp record` on real programs (C, C++, Rust) built by the test: the
//! trace must hold exactly the events the programs perform.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

fn build(dir: &Path, src: &str) -> PathBuf {
    let out = dir.join(src.split('.').next().unwrap());
    let srcp = programs().join(src);
    let status = if src.ends_with(".rs") {
        Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .args(["-O", "-o"])
            .arg(&out)
            .arg(&srcp)
            .status()
    } else {
        // Any C compiler (CC, else cc): the tests need nothing else.
        Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-g", "-O1", "-pthread", "-o"])
            .arg(&out)
            .arg(&srcp)
            .arg("-ldl")
            .status()
    }
    .expect("compiler runs");
    assert!(status.success(), "building {src}");
    out
}

fn record(dir: &Path, trace: &str, cmd: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tramp"))
        .arg("record")
        .arg("-o")
        .arg(dir.join(trace))
        .arg("--")
        .args(cmd)
        .output()
        .expect("tramp runs")
}

fn dump(path: &Path) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .arg("dump")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dump {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

fn allocs_of(lines: &[String], size: u64) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.starts_with("alloc ") && field(l, "size") == Some(&size.to_string()))
        .collect()
}

#[test]
fn c_patterns_are_recorded_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "patterns.c");
    let out = record(dir.path(), "p.hatf.zst", &[prog.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(42),
        "exit status passes through; the program's stderr:\n{}\nstdout:\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.ends_with("done\n"),
        "program output passes through: {stdout}"
    );
    let lines = dump(&dir.path().join("p.hatf.zst"));

    // 1234 mallocs of 4321 bytes, each freed.
    let big = allocs_of(&lines, 4321);
    assert_eq!(big.len(), 1234);
    let addrs: std::collections::HashSet<&str> =
        big.iter().map(|l| field(l, "address").unwrap()).collect();
    let freed = lines
        .iter()
        .filter(|l| l.starts_with("free ") && addrs.contains(field(l, "address").unwrap()))
        .count();
    assert!(freed >= 1234, "{freed} frees");
    assert_eq!(allocs_of(&lines, 91).len(), 3, "calloc(7, 13) three times");
    for size in [1001, 1024, 1003, 1004, 1005] {
        assert_eq!(
            allocs_of(&lines, size).len(),
            1,
            "aligned allocation of {size}"
        );
    }

    // The realloc outcomes the program saw, in order, with their records.
    let seen: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("realloc "))
        .collect();
    let ours: Vec<(usize, &String)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            l.starts_with("realloc/")
                && ["555", "500", "200000", "0", "1111"].contains(&field(l, "size").unwrap())
        })
        .collect();
    let tags: Vec<&str> = ours
        .iter()
        .map(|(_, l)| l.split(' ').next().unwrap().trim_start_matches("realloc/"))
        .collect();
    assert_eq!(tags, seen);
    for (i, l) in &ours {
        let size = field(l, "size").unwrap();
        let next = &lines[i + 1];
        match l.split(' ').next().unwrap() {
            "realloc/alloc" => assert!(
                next.starts_with("alloc ") && field(next, "size") == Some(size),
                "{l} then {next}"
            ),
            "realloc/free" => {
                assert_eq!(field(next, "address"), field(l, "old"), "{l} then {next}")
            }
            "realloc/alloc-free" => {
                assert_eq!(field(next, "address"), field(l, "new"));
                assert!(
                    lines[i + 2].starts_with("free ")
                        && field(&lines[i + 2], "address") == field(l, "old")
                );
            }
            _ => {}
        }
    }

    // Four threads, each with 1000 allocations of 3333 bytes.
    let mut per_thread: HashMap<&str, usize> = HashMap::new();
    for l in allocs_of(&lines, 3333) {
        *per_thread.entry(field(l, "thread").unwrap()).or_default() += 1;
    }
    assert_eq!(per_thread.len(), 4);
    assert!(per_thread.values().all(|n| *n == 1000), "{per_thread:?}");
    for t in per_thread.keys() {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("createThread") && field(l, "thread") == Some(t))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("destroyThread") && field(l, "thread") == Some(t))
        );
    }
    // Sites (call stacks by default: a node of the stack tree) and the
    // module map.
    assert!(
        big.iter()
            .all(|l| field(l, "attrs").is_some_and(|a| a.starts_with("02")))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("tramp:module") && l.contains("patterns"))
    );
    // Times are monotonic per thread and start near 0.
    let times: Vec<u64> = lines
        .iter()
        .filter_map(|l| field(l, "time")?.parse().ok())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "merged by time");
}

#[test]
fn a_forked_child_gets_its_own_trace() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "fork.c");
    let out = record(dir.path(), "f.hatf", &[prog.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let parent = dump(&dir.path().join("f.hatf"));
    assert_eq!(allocs_of(&parent, 2222).len(), 111);
    assert_eq!(allocs_of(&parent, 2223).len(), 11);
    assert_eq!(allocs_of(&parent, 7777).len(), 0);
    let children: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with("f.") && n.ends_with(".hatf") && n != "f.hatf"
        })
        .collect();
    assert_eq!(children.len(), 1, "{children:?}");
    let child = dump(&children[0]);
    assert_eq!(allocs_of(&child, 7777).len(), 77);
    assert_eq!(
        allocs_of(&child, 2222).len(),
        0,
        "the parent's events stay the parent's"
    );
    assert_eq!(allocs_of(&child, 2223).len(), 0);
    // Named f.PROGRAM.PID.hatf.
    let name = children[0].file_name().unwrap().to_str().unwrap();
    let parts: Vec<&str> = name.split('.').collect();
    assert_eq!(parts.len(), 4, "{name}");
    assert_eq!(parts[1], "fork", "{name}");
    let pid = parts[2];
    assert!(
        child
            .iter()
            .any(|l| l.contains(&format!("tramp:process pid={pid} ")))
    );
}

#[test]
fn every_way_out_keeps_the_events() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "endings.c");
    let p = prog.to_str().unwrap();
    for (how, code) in [
        ("return", 0),
        ("abort", 134),
        ("_exit", 7),
        ("segv", 139),
        ("exec", 0),
        ("closefds", 0),
    ] {
        let trace = format!("{how}.hatf");
        let out = record(dir.path(), &trace, &[p, how]);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{how}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = dump(&dir.path().join(&trace));
        assert_eq!(allocs_of(&lines, 1111).len(), 500, "{how}");
    }
    // SIGKILL: the log stays readable and loses at most the last buffer.
    // A buffer is 256 KiB with a 44-byte chunk header, and each of these
    // allocations takes at least 7 bytes (kind, size 1111 and the address
    // step 1120 in two-byte varints, the site step, the time step:
    // docs/formats/capture.md), so a buffer holds at most 37,443 of them.
    // How many it holds depends on the machine's speed (a time step under
    // 128 ticks takes one byte, else two), so up to 37,443 may be lost.
    let out = record(dir.path(), "kill.hatf", &[p, "kill"]);
    assert_eq!(out.status.code(), Some(137));
    let n = allocs_of(&dump(&dir.path().join("kill.hatf")), 1111).len();
    let per_buffer = ((1 << 18) - 44) / 7;
    assert!(
        (100_000 - per_buffer..=100_000).contains(&n),
        "{n} of 100000 allocations survived SIGKILL"
    );
}

#[test]
fn cxx_new_and_delete_reach_malloc() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "cxx.c");
    // Recorded straight into tpack.
    let out = record(dir.path(), "c.tpack", &[prog.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let lines = dump(&dir.path().join("c.tpack"));
    let blobs = allocs_of(&lines, 5555);
    assert_eq!(blobs.len(), 100);
    let addrs: std::collections::HashSet<&str> =
        blobs.iter().map(|l| field(l, "address").unwrap()).collect();
    assert!(
        lines
            .iter()
            .filter(|l| l.starts_with("free ") && addrs.contains(field(l, "address").unwrap()))
            .count()
            >= 100
    );
    assert_eq!(allocs_of(&lines, 6061).len(), 1);
}

#[test]
fn rust_programs_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "rust.rs");
    let out = record(dir.path(), "r.hatf", &[prog.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let lines = dump(&dir.path().join("r.hatf"));
    assert_eq!(allocs_of(&lines, 6666).len(), 50);
    assert!(
        lines.iter().any(|l| l.starts_with("realloc/")),
        "Vec growth reallocates"
    );
}

#[test]
fn stacks_are_recorded_and_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "fork.c");
    let out = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["record", "--stack", "8", "-o"])
        .arg(dir.path().join("s.hatf"))
        .arg("--")
        .arg(&prog)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines = dump(&dir.path().join("s.hatf"));
    let sites: std::collections::HashSet<&str> = allocs_of(&lines, 2222)
        .iter()
        .map(|l| field(l, "attrs").unwrap())
        .collect();
    assert_eq!(sites.len(), 1, "one call stack for one loop: {sites:?}");
    let site = sites.into_iter().next().unwrap();
    assert!(site.starts_with("02"), "a stack id: {site}");
    let nodes = lines.iter().filter(|l| l.contains("tramp:frames ")).count();
    assert!((1..20).contains(&nodes), "{nodes} notes of stack nodes");
}

/// Runs a tramp command that prints JSON and parses it.
fn json_of(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sites_json(trace: &Path) -> serde_json::Value {
    json_of(
        Command::new(env!("CARGO_BIN_EXE_tramp"))
            .args(["stats", "--json", "--sites", "--top", "5"])
            .arg(trace),
    )
}

#[test]
fn sites_are_symbolized_to_function_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "sites.c");
    let out = record(dir.path(), "s.hatf.zst", &[prog.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let v = sites_json(&dir.path().join("s.hatf.zst"));
    let top = &v["sites"]["by_count"][0];
    assert_eq!(top["allocs"], 5000);
    assert_eq!(top["stack"][0]["function"], "churn");
    assert!(
        top["stack"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("sites.c")
    );
    assert_eq!(top["stack"][0]["line"], 12);
    let leak = &v["sites"]["by_live_bytes_at_exit"][0];
    assert_eq!(leak["stack"][0]["function"], "make_widgets");
    assert_eq!(leak["live_bytes"], 300 * 4096);
    assert_eq!(leak["live_objects"], 300);
    assert_eq!(
        v["sites"]["by_bytes"][0]["stack"][0]["function"],
        "make_widgets"
    );

    // With call stacks: the allocating function, then its caller.
    let out = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["record", "--stack", "6", "-o"])
        .arg(dir.path().join("t.hatf"))
        .arg("--")
        .arg(&prog)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v = sites_json(&dir.path().join("t.hatf"));
    let leak = &v["sites"]["by_live_bytes_at_exit"][0];
    assert_eq!(leak["stack"][0]["function"], "make_widgets");
    assert_eq!(leak["stack"][1]["function"], "main");
}

/// The recording stores its frames symbolized: a trace whose program was
/// rebuilt or removed still names its call stacks.
#[test]
fn stacks_are_named_after_the_program_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "sites.c");
    let out = record(dir.path(), "s.tpack", &[prog.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    std::fs::remove_file(&prog).unwrap();
    let v = sites_json(&dir.path().join("s.tpack"));
    let leak = &v["sites"]["by_live_bytes_at_exit"][0];
    assert_eq!(leak["stack"][0]["function"], "make_widgets");
    assert_eq!(leak["stack"][0]["line"], 7);
    assert_eq!(leak["stack"][1]["line"], 19);
    assert_eq!(leak["stack"][1]["function"], "main");
}

fn replay_json(trace: &Path, allocator: Option<&str>) -> serde_json::Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tramp"));
    cmd.args(["replay", "--json"]);
    if let Some(a) = allocator {
        cmd.args(["--allocator", a]);
    }
    json_of(cmd.arg(trace))
}

#[test]
fn replay_of_a_recorded_trace_performs_its_operations() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "patterns.c");
    let trace = dir.path().join("p.hatf.zst");
    assert_eq!(
        record(dir.path(), "p.hatf.zst", &[prog.to_str().unwrap()])
            .status
            .code(),
        Some(42)
    );
    let stats: serde_json::Value = serde_json::from_slice(
        &Command::new(env!("CARGO_BIN_EXE_tramp"))
            .args(["stats", "--json"])
            .arg(&trace)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let by_type = |t: &str| stats["records_by_type"][t].as_u64().unwrap_or(0);
    let (allocs, frees, reallocs) = (
        by_type("alloc"),
        by_type("free"),
        stats["total_reallocs"].as_u64().unwrap(),
    );
    // A realloc's implied alloc/free records are replayed as the realloc
    // itself; realloc(p, 0) is replayed as free(p).
    let want_mallocs = allocs - by_type("realloc/alloc") - by_type("realloc/alloc-free");
    let want_frees = frees - by_type("realloc/alloc-free");
    let want_reallocs = reallocs - by_type("realloc/free");
    assert!(
        by_type("realloc/alloc") >= 2 && by_type("realloc/free") >= 1,
        "{stats}"
    );
    // Calls as heaptrack and the HATF paper count them: the allocations
    // and frees a realloc implied are not malloc or free calls.
    assert_eq!(stats["malloc_calls"], want_mallocs, "{stats}");
    assert_eq!(
        stats["free_calls"].as_u64().unwrap(),
        frees - by_type("realloc/alloc-free") - by_type("realloc/free")
    );
    assert_eq!(stats["realloc_calls"], stats["total_reallocs"]);
    // Every row of the report agrees with the totals.
    let rows = |key: &str| -> u64 {
        stats["per_thread"]
            .as_object()
            .unwrap()
            .values()
            .map(|a| a[key].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        rows("bytes_allocated"),
        stats["bytes_allocated"].as_u64().unwrap()
    );
    assert_eq!(rows("allocs"), stats["total_allocs"].as_u64().unwrap());
    assert_eq!(rows("frees"), stats["total_frees"].as_u64().unwrap());
    assert_eq!(rows("reallocs"), stats["total_reallocs"].as_u64().unwrap());
    // A second allocator built here from source (no system package).
    let seg = dir.path().join("libsegalloc.so");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-O2", "-fno-builtin", "-shared", "-fPIC", "-pthread", "-o"])
        .arg(&seg)
        .arg(programs().join("segalloc.c"))
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "building segalloc.c");
    let seg = seg.to_str().unwrap();
    for allocator in [None, Some(seg)] {
        let v = replay_json(&trace, allocator);
        let d = &v["runs"][0]["runs"][0];
        assert_eq!(d["mallocs"], want_mallocs, "{v}");
        assert_eq!(d["frees"], want_frees, "{v}");
        assert_eq!(d["reallocs"], want_reallocs, "{v}");
        assert_eq!(d["failed"], 0);
        assert_eq!(v["plan"]["mallocs"], d["mallocs"]);
        assert_eq!(v["plan"]["unknown_frees"], 0);
        assert_eq!(v["fidelity"]["ok"], true, "{v}");
        assert!(d["peak_rss_kib"].as_i64().unwrap() > 0);
        assert!(
            v["allocators"][0]["footprint_over_live"].as_f64().unwrap() > 0.5,
            "{v}"
        );
        if let Some(a) = allocator {
            assert_eq!(v["runs"][0]["path"], a);
            assert_eq!(v["allocators"][0]["malloc_from"], a);
            assert_eq!(v["allocators"][0]["name"], "segalloc");
        }
    }
}

#[test]
fn modules_loaded_at_run_time_are_in_the_module_map() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "dl.c");
    // A library of our own to load (no system library needed).
    let src = dir.path().join("plugin.c");
    std::fs::write(&src, "int tramp_plugin_answer(void) { return 42; }\n").unwrap();
    let lib = dir.path().join("libtrampplugin.so");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("the C compiler runs");
    assert!(status.success());
    let out = record(
        dir.path(),
        "d.hatf",
        &[prog.to_str().unwrap(), lib.to_str().unwrap()],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = dump(&dir.path().join("d.hatf"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("tramp:module") && l.contains("libtrampplugin.so")),
        "the loaded library is mapped"
    );
    assert_eq!(allocs_of(&lines, 4040).len(), 50000);
}

/// With no `-o`, the trace is PROGRAM.tpack in the working directory, and
/// `--stats` reads it back.
#[test]
fn the_default_output_is_tpack() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "cxx.c");
    let out = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .current_dir(dir.path())
        .args(["record", "--stats", "--"])
        .arg(&prog)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let name = prog.file_name().unwrap().to_str().unwrap();
    let trace = dir.path().join(format!("{name}.tpack"));
    let bytes = std::fs::read(&trace).unwrap();
    assert!(bytes.starts_with(b"tpack\x00\x05"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("total allocs"), "{stderr}");
    assert_eq!(allocs_of(&dump(&trace), 5555).len(), 100);
}

/// The conversion runs while the program does and the temporary log stays
/// under --temp-limit however long the run: a program writing ~45 MB of
/// raw log through a 1 MiB limit keeps every event, and the waits it
/// had are in the trace.
#[test]
fn a_long_run_stays_within_the_temporary_disk_limit() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "churn.c");
    let trace = dir.path().join("churn.tpack");
    let (threads, pairs) = (3u64, 400_000u64);
    let out = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["record", "--temp-limit", "1", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&prog)
        .args([threads.to_string(), pairs.to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let peak: f64 = err
        .split("peaked at ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no peak in {err}"));
    if err.contains("unbounded") {
        eprintln!("the temporary file system cannot punch holes: {err}");
    } else {
        // The limit, plus the chunk that crossed it (256 KiB per thread).
        assert!(peak <= 1.0 + 0.25 * threads as f64 + 0.1, "{err}");
    }
    let lines = dump(&trace);
    // Each worker: `pairs` mallocs and as many frees (the 64 slots' earlier
    // blocks, then the 64 at the end); the main thread has only the C
    // library's few.
    let mut per_thread: HashMap<&str, (u64, u64)> = HashMap::new();
    for l in &lines {
        let e = per_thread
            .entry(field(l, "thread").unwrap_or(""))
            .or_default();
        if l.starts_with("alloc ") {
            e.0 += 1;
        } else if l.starts_with("free ") {
            e.1 += 1;
        }
    }
    let workers = per_thread
        .values()
        .filter(|(a, f)| (*a, *f) == (pairs, pairs))
        .count() as u64;
    assert_eq!(workers, threads, "{per_thread:?}");
    // Times never go backwards within a thread.
    let mut last: HashMap<String, u64> = HashMap::new();
    for l in &lines {
        if let (Some(t), Some(time)) = (field(l, "thread"), field(l, "time")) {
            let time: u64 = time.parse().unwrap();
            let prev = last.insert(t.to_string(), time).unwrap_or(0);
            assert!(time >= prev, "{l}");
        }
    }
    // Every wait kept in the trace is reported, and the count agrees.
    let stalls = lines.iter().filter(|l| l.contains("tramp:stall")).count();
    let reported: usize = err
        .split("the program waited ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .map_or(0, |n| n.parse().unwrap());
    assert_eq!(reported, stalls, "{err}");
}
