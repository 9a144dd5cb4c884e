//! `tramp replay` end to end: threads replayed as threads, orders the
//! trace cannot keep, allocators built from source side by side, and
//! trace heaps on jemalloc's arenas and mimalloc's heaps (Debian's
//! libjemalloc2 and libmimalloc2.0, which setup.sh installs).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::tramp;
use serde_json::Value;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

/// Compiles a C program of tests/programs (`shared`: as a library).
fn cc(dir: &Path, src: &str, out: &str, shared: bool) -> String {
    let flags: &[&str] = if shared {
        &["-O2", "-fno-builtin", "-shared", "-fPIC", "-pthread"]
    } else {
        &["-O1", "-pthread"]
    };
    common::cc_program(dir, src, out, flags)
}

/// Where the dynamic linker finds a shared library (`ldconfig -p`), so
/// that no directory of one distribution or architecture is assumed.
fn system_library(soname: &str) -> String {
    let out = Command::new("ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("/sbin/ldconfig").arg("-p").output())
        .expect("ldconfig runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("{soname} ")))
        .find_map(|l| l.split("=> ").nth(1).map(|p| p.trim().to_string()))
        .unwrap_or_else(|| panic!("{soname} is not installed (setup.sh installs it)"))
}

/// The first (only) run of the first allocator.
fn run0(v: &Value) -> &Value {
    &v["runs"][0]["runs"][0]
}

#[test]
fn four_threads_passing_objects_replay_as_threads() {
    let dir = tempfile::tempdir().unwrap();
    let prog = cc(dir.path(), "handoff.c", "handoff", false);
    let trace = dir.path().join("h.tpack");
    let trace = trace.to_str().unwrap();
    let out = tramp(&["record", "-o", trace, "--", &prog]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stats = json(&tramp(&["stats", "--json", trace]));
    for serial in [false, true] {
        let mut args = vec!["replay", "--json", trace];
        if serial {
            args.push("--serial");
        }
        let out = tramp(&args);
        let v = json(&out);
        let d = run0(&v);
        assert_eq!(d["waits_timed_out"], 0, "{v}");
        assert_eq!(d["aborted"], false);
        assert_eq!(d["serial"], serial);
        // Each traced thread's operations ran (as its own thread unless
        // serial), as many as the trace's statistics count for it: the
        // producers' mallocs, the consumers' frees of their objects.
        let plan = &v["plan"];
        let threads = d["threads"].as_array().unwrap();
        assert_eq!(threads.len(), plan["threads"].as_array().unwrap().len());
        let mut cross_frees = 0;
        for t in threads {
            let id = t["trace_thread"].as_u64().unwrap().to_string();
            let s = &stats["per_thread"][&id];
            let want_mallocs = s["allocs"].as_u64().unwrap() - s["reallocs"].as_u64().unwrap();
            // Allocations by realloc are counted as its allocs: only the
            // consumers realloc, and a realloc of a live block allocates.
            assert!(
                t["mallocs"].as_u64().unwrap() <= want_mallocs + 1,
                "{id}: {t} {s}"
            );
            assert_eq!(t["reallocs"], s["reallocs"], "{id}");
            if t["mallocs"] == 0 && t["frees"].as_u64().unwrap() > 1000 {
                cross_frees += t["frees"].as_u64().unwrap();
            }
        }
        assert!(
            cross_frees >= 30_000,
            "consumers freed producers' objects: {v}"
        );
        assert_eq!(d["mallocs"], stats["malloc_calls"]);
        // Frees the recording put before their allocation (its threads'
        // buffers arrive late) are moved after it, or reported: then, and
        // only then, the exit status is 1.
        let before = plan["frees_before_alloc"].as_u64().unwrap();
        assert_eq!(
            out.status.code(),
            Some(if before == 0 { 0 } else { 1 }),
            "{v}"
        );
        assert_eq!(v["fidelity"]["ok"], before == 0);
        if !serial {
            // Four replay threads and the main one took part.
            assert!(threads.len() >= 5, "{v}");
        }
    }
}

#[test]
fn a_free_before_its_allocation_is_reported_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("early.hatf.txt");
    // Thread 2 frees 0x1000 a second before thread 1 allocates it.
    std::fs::write(
        &trace,
        "# tramp hatf-text 1\n\
         alloc size=64 address=0x2000 thread=1 time=1000\n\
         free address=0x1000 thread=2 time=2000\n\
         alloc size=32 address=0x1000 thread=1 time=1000002000\n\
         free address=0x2000 thread=2 time=1000003000\n",
    )
    .unwrap();
    let out = tramp(&["replay", "--wait-limit", "5", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        text.contains("frees before their allocation on another thread: trace 0, replay 1"),
        "{text}"
    );
    assert!(
        stderr(&out).contains("thread 2 freed 0x1000 before thread 1 allocated it"),
        "{}",
        stderr(&out)
    );
    // The cross-thread free that is in order waited for its allocation
    // or found it done; nothing timed out.
    assert!(!stderr(&out).contains("wait"), "{}", stderr(&out));
    // Within the recorder's window of disorder, the free is moved after
    // the allocation instead.
    std::fs::write(
        &trace,
        "# tramp hatf-text 1\n\
         free address=0x1000 thread=2 time=2000\n\
         alloc size=32 address=0x1000 thread=1 time=3000\n",
    )
    .unwrap();
    let v = json(&tramp(&["replay", "--json", trace.to_str().unwrap()]));
    assert_eq!(v["plan"]["frees_reordered"], 1, "{v}");
    assert_eq!(run0(&v)["frees"], 1);
    assert_eq!(v["fidelity"]["ok"], true);
}

#[test]
fn allocators_built_from_source_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let seg = cc(dir.path(), "segalloc.c", "libsegalloc.so", true);
    let bump = cc(dir.path(), "bump.c", "libbump.so", true);
    let trace = dir.path().join("s.hatf");
    let trace = trace.to_str().unwrap();
    assert!(
        tramp(&["sample", "--events", "20000", "-o", trace])
            .status
            .success()
    );
    let stats = json(&tramp(&["stats", "--json", trace]));
    let external = dir.path().join("allocators.txt");
    std::fs::write(&external, format!("# name path\nbump {bump}\n")).unwrap();
    let svg = dir.path().join("m.svg");
    let lines = dir.path().join("bench.txt");
    let out = tramp(&[
        "replay",
        "--json",
        "--allocator",
        &format!("glibc,{seg}"),
        "--external",
        external.to_str().unwrap(),
        "--repeat",
        "2",
        "--svg",
        svg.to_str().unwrap(),
        "--bench-lines",
        lines.to_str().unwrap(),
        trace,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let names: Vec<&str> = v["allocators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["glibc", "segalloc", "bump"]);
    for (a, path) in v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .zip([None, Some(&seg), Some(&bump)])
    {
        let runs = a["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for r in runs {
            // The driver's malloc is the library named.
            match path {
                Some(p) => assert_eq!(r["malloc_from"], p.as_str()),
                None => assert!(r["malloc_from"].as_str().unwrap().contains("libc.so")),
            }
            assert_eq!(r["mallocs"], runs[0]["mallocs"]);
            assert_eq!(r["failed"], 0);
            assert_eq!(r["waits_timed_out"], 0);
        }
    }
    assert_eq!(v["fidelity"]["ok"], true, "{v}");
    // A bump allocator never reuses memory: having touched every page it
    // handed out, its footprint is about every byte ever allocated; glibc
    // reuses freed blocks and stays near the live bytes.
    let allocated = stats["bytes_allocated"].as_f64().unwrap();
    let fp = |i: usize| {
        v["allocators"][i]["footprint_kib"]["median"]
            .as_f64()
            .unwrap()
            * 1024.0
    };
    assert!(fp(2) >= 0.8 * allocated, "bump {} of {allocated}", fp(2));
    assert!(fp(0) < 0.5 * allocated, "glibc {} of {allocated}", fp(0));
    // One SVG line per allocator's RSS, and the live bytes.
    let svg = std::fs::read_to_string(&svg).unwrap();
    for n in [
        "glibc RSS",
        "segalloc RSS",
        "bump RSS",
        "live bytes requested",
    ] {
        assert!(svg.contains(n), "{n}");
    }
    assert_eq!(svg.matches("stroke-width=\"2\"").count(), 4);
    // mimalloc-bench's lines: test, allocator, elapsed m:ss.ss, max RSS
    // KiB, user, system, major and minor faults; one per run.
    let lines = std::fs::read_to_string(&lines).unwrap();
    let rows: Vec<Vec<&str>> = lines
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 6, "{lines}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 8, "{lines}");
        assert_eq!(r[0], "replay-s");
        assert_eq!(r[1], names[i / 2]);
        let (m, s) = r[2].split_once(':').unwrap();
        assert!(
            m.parse::<u64>().is_ok() && s.len() == 5 && s.parse::<f64>().is_ok(),
            "{lines}"
        );
        let run = &v["runs"][i / 2]["runs"][i % 2];
        assert_eq!(r[3], run["peak_rss_kib"].to_string());
    }
}

#[test]
fn heap_records_use_jemalloc_arenas_and_mimalloc_heaps() {
    let (jemalloc, mimalloc) = (
        system_library("libjemalloc.so.2"),
        system_library("libmimalloc.so.2"),
    );
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("s.hatf");
    let sample = sample.to_str().unwrap();
    assert!(
        tramp(&["sample", "--events", "20000", "-o", sample])
            .status
            .success()
    );
    // A heap made, used by two threads and destroyed with an object in
    // it, then a new heap under the same number.
    let made = dir.path().join("h.hatf.txt");
    std::fs::write(
        &made,
        "# tramp hatf-text 1\n\
         createHeap thread=1 heap=3 time=1\n\
         alloc size=100 address=0x1000 thread=1 heap=3 time=2\n\
         alloc size=200 address=0x2000 thread=2 heap=3 time=3\n\
         free address=0x1000 thread=2 heap=3 time=4\n\
         destroyHeap thread=1 heap=3 time=5\n\
         createHeap thread=2 heap=3 time=6\n\
         alloc size=50 address=0x3000 thread=2 heap=3 time=7\n\
         free address=0x3000 thread=1 heap=3 time=8\n",
    )
    .unwrap();
    for (trace, creates, destroys) in [(sample, 1, 0), (made.to_str().unwrap(), 2, 1)] {
        let out = tramp(&[
            "replay",
            "--json",
            "--allocator",
            &format!("glibc,{jemalloc},{mimalloc}"),
            trace,
        ]);
        assert!(out.status.success(), "{trace}: {}", stderr(&out));
        let v = json(&out);
        assert_eq!(v["fidelity"]["ok"], true, "{v}");
        assert!(v["plan"]["heaps"].as_u64().unwrap() >= 2);
        let heaps: Vec<&str> = v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["runs"][0]["heaps"].as_str().unwrap())
            .collect();
        assert!(heaps[0].contains("default heap"), "{heaps:?}");
        assert!(heaps[1].contains("jemalloc arenas"), "{heaps:?}");
        assert!(heaps[2].contains("mimalloc heaps"), "{heaps:?}");
        for a in v["runs"].as_array().unwrap() {
            let r = &a["runs"][0];
            assert_eq!(r["heap_failures"], 0, "{r}");
            assert_eq!(r["failed"], 0);
            assert_eq!(r["waits_timed_out"], 0);
            assert_eq!(r["mallocs"], v["plan"]["mallocs"]);
            assert!(
                r["version"].as_str().unwrap().starts_with(
                    ["glibc", "jemalloc 5", "mimalloc 2"][v["runs"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .position(|x| x == a)
                        .unwrap()]
                )
            );
        }
        let r = run0(&v);
        if trace == made.to_str().unwrap() {
            assert_eq!(r["heap_creates"], creates);
            assert_eq!(r["heap_destroys"], destroys);
            // The object the destroyed heap still held was freed with it.
            assert_eq!(v["plan"]["heap_destroy_frees"], 1);
        }
    }
}
