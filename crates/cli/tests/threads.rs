//! Recordings of threaded programs are the program's truth: correct
//! programs whose threads hand blocks to each other (and resize them with
//! realloc) show no anomaly, no event written late, and nothing for the
//! replay plan to move (issue 47; docs/formats/capture.md, "Order per
//! address").

mod common;

use std::path::Path;

use common::tramp;
use serde_json::Value;

fn build(dir: &Path, src: &str) -> String {
    common::cc_program(dir, src, src.trim_end_matches(".c"), &["-O2", "-pthread"])
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Records `prog` `runs` times; every recording must be anomaly-free and
/// have no event written late. Returns the last trace's path.
fn record_clean(dir: &Path, prog: &str, runs: usize) -> String {
    let trace = dir.join("t.tpack");
    let trace = trace.to_str().unwrap().to_string();
    for run in 0..runs {
        let out = tramp(&["record", "-o", &trace, "--", prog]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "passed\n");
        assert!(!err.contains("written late"), "run {run}: {err}");
        let v = json(&tramp(&["stats", "--json", &trace]));
        let r = &v["report"];
        let r = if r.is_null() { &v } else { r };
        for key in [
            "double_frees",
            "allocs_of_live_addresses",
            "frees_of_unknown_addresses",
        ] {
            assert_eq!(r[key], 0, "run {run} of {prog}: {key}: {err}");
        }
        // Every block the workers allocate is freed: what is live at the
        // end is the C library's (stdio's buffer, thread stacks' TLS), all
        // allocated by the main thread.
        let main_allocs = (r["per_thread"].as_object().unwrap().values())
            .map(|t| t["allocs"].as_u64().unwrap())
            .min()
            .unwrap();
        assert!(
            r["live_objects_at_end"].as_u64().unwrap() <= main_allocs,
            "{r}"
        );
    }
    trace
}

/// Four threads passing blocks from producers to consumers, which resize
/// some with realloc: before issue 47, 0 to 55 double frees per recording.
#[test]
fn handing_blocks_between_threads_records_in_the_allocators_order() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "handoff.c");
    let trace = record_clean(dir.path(), &prog, 3);
    // The replay plan has nothing to move: no free before its allocation.
    let plan = json(&tramp(&["replay", "--json", &trace]));
    assert_eq!(plan["plan"]["frees_reordered"], 0, "{plan}");
    assert_eq!(plan["plan"]["frees_before_alloc"], 0, "{plan}");
}

/// Eight threads (on however few cores: they are preempted inside
/// allocator calls) sharing slots under locks, each allocating, growing or
/// shrinking by realloc, or freeing whatever a slot holds.
#[test]
fn eight_threads_reallocating_shared_blocks_record_without_anomaly() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "slots.c");
    record_clean(dir.path(), &prog, 3);
}

/// A value freed by its pthread key's destructor, which runs after the
/// capture's: the free is its thread's, and each thread is one thread.
#[test]
fn frees_by_later_key_destructors_belong_to_their_thread() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "exitfree.c");
    let trace = dir.path().join("e.tpack");
    let trace = trace.to_str().unwrap();
    let out = tramp(&["record", "-o", trace, "--", &prog]);
    assert!(out.status.success());
    let v = json(&tramp(&["stats", "--json", trace]));
    let r = &v["report"];
    let r = if r.is_null() { &v } else { r };
    // 50 rounds of 4 threads, and the main thread.
    assert_eq!(r["threads_created"], 201, "{r}");
    assert_eq!(r["threads_destroyed"], 200, "{r}");
    let per = r["per_thread"].as_object().unwrap();
    let workers: Vec<&Value> = per
        .values()
        .filter(|t| t["bytes_allocated"] == 100)
        .collect();
    assert_eq!(workers.len(), 200, "{r}");
    for t in workers {
        assert_eq!(
            (t["allocs"].as_u64(), t["frees"].as_u64()),
            (Some(1), Some(1))
        );
    }
    assert_eq!(r["frees_of_unknown_addresses"], 0);
}

/// Sampled (`--sample`): a free is recorded exactly when its block's
/// allocation was, whichever thread frees it, so threads that pass blocks
/// and resize them still show no anomaly.
#[test]
fn sampled_threads_record_the_frees_of_sampled_blocks_only() {
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "slots.c");
    let trace = dir.path().join("s.tpack");
    let trace = trace.to_str().unwrap();
    for run in 0..2 {
        let out = tramp(&["record", "--sample", "512", "-o", trace, "--", &prog]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = json(&tramp(&["stats", "--json", trace]));
        for key in [
            "double_frees",
            "allocs_of_live_addresses",
            "frees_of_unknown_addresses",
        ] {
            assert_eq!(r[key], 0, "run {run}: {key}");
        }
        assert_eq!(r["sampling"]["mean_bytes"], 512);
        assert!(r["sampling"]["samples"].as_u64().unwrap() > 1000, "{r}");
    }
}
