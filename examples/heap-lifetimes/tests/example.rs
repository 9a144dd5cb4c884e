//! The example, built and run by the test suite on a trace whose answer is
//! worked out by hand.

use std::process::Command;

/// Five frees, two objects left. Lifetimes (free time − alloc time):
/// 0x…000: 1000907 − 1000612 = 295; 0x…380: 1001024 − 1000972 = 52;
/// 0x…360: 1001123 − 1000810 = 313; 0x…520: 1001508 − 1001210 = 298;
/// 0x…360 again: 1001916 − 1001708 = 208. Sum 1166, mean 233.2;
/// [32, 63]: 52; [128, 255]: 208; [256, 511]: 295, 298, 313.
const TRACE: &str = include_str!("../../../tests/fixtures/heap/twelve.hatf.txt");

#[test]
fn lifetimes_are_the_hand_computed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.hatf.txt");
    std::fs::write(&path, TRACE).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_heap-lifetimes"))
        .args([path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["objects_freed"], 5);
    assert_eq!(v["mean_lifetime"], 233.2);
    assert_eq!(v["live_at_end"], 2);
    assert_eq!(
        v["histogram"],
        serde_json::json!([[32, 63, 1], [128, 255, 1], [256, 511, 3]])
    );
    assert_eq!(v["complete"], true);
}

#[test]
fn a_cut_trace_keeps_what_came_before_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.hatf.txt");
    // Cut inside the fourth free's line.
    let cut = &TRACE[..TRACE.find("free address=0x7f3a00000520").unwrap() + 12];
    std::fs::write(&path, cut).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_heap-lifetimes"))
        .args([path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["objects_freed"], 3, "the frees before the cut");
    assert_eq!(v["complete"], false);
}
