//! The profile index `tramp record` writes after a tpack's last block
//! (docs/index.md), against a recomputation from the events (`--verify-index`
//! and the same recording converted to HATF, which has no index) on
//! recordings of real programs: one thread with call stacks, four threads
//! handing objects to each other, and a recording interrupted by a signal;
//! and what happens when the index is missing, damaged or forged.

mod common;
use common::*;

use std::process::{Command, Stdio};
use std::time::Duration;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).unwrap()
}

/// The trailer's start (from its footer), or None.
fn trailer_start(bytes: &[u8]) -> Option<usize> {
    let n = bytes.len();
    (n > 16 && &bytes[n - 8..] == b"tpackidx").then(|| {
        let len = u64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
        n - 16 - len
    })
}

/// Every profile job answers from the index as from the events: the
/// statistics with sites, the report page, the comparison; and the
/// recording converted to HATF (no index: its events) gives the same
/// statistics.
fn agrees(dir: &tempfile::TempDir, trace: &str) {
    let bytes = std::fs::read(trace).unwrap();
    assert!(trailer_start(&bytes).is_some(), "{trace} has no index");
    let from_index = tramp(&["stats", "--sites", "--json", "--top", "50", trace]);
    assert!(
        !stderr(&from_index).contains("read from its events"),
        "{}",
        stderr(&from_index)
    );
    let from_events = tramp(&[
        "stats",
        "--sites",
        "--json",
        "--top",
        "50",
        "--verify-index",
        trace,
    ]);
    assert_eq!(json(&from_index), json(&from_events));
    let hatf = path_in(dir, "converted.hatf");
    ok(&tramp(&["convert", trace, &hatf]));
    let converted = tramp(&["stats", "--sites", "--json", "--top", "50", &hatf]);
    assert_eq!(json(&from_index), json(&converted));
    let (a, b) = (path_in(dir, "a.html"), path_in(dir, "b.html"));
    ok(&tramp(&["report", trace, "-o", &a]));
    ok(&tramp(&["report", "--verify-index", trace, "-o", &b]));
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    let d1 = json(&tramp(&["diff", "--json", trace, &hatf]));
    let d2 = json(&tramp(&["diff", "--json", "--verify-index", trace, trace]));
    assert_eq!(d1, d2);
    // The index counts every record of the image it profiles: the
    // whole recording, or of a run's several images the one that used the
    // most, as `tramp stats` counts them.
    let stats = json(&tramp(&["stats", "--json", trace]));
    let records = match stats.get("most") {
        Some(most) => stats["processes"][most.as_u64().unwrap() as usize]["records"].clone(),
        None => stats["records"].clone(),
    };
    assert_eq!(json(&from_index)["records"], records);
}

#[test]
fn one_thread_with_call_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let exe = cc_program(dir.path(), "sites.c", "sites", &["-O0", "-g"]);
    let trace = path_in(&dir, "s.tpack");
    ok(&tramp(&[
        "record", "--stack", "16", "-o", &trace, "--", &exe,
    ]));
    agrees(&dir, &trace);
}

#[test]
fn four_threads_handing_objects_over() {
    let (dir, trace) = handoff_recording();
    agrees(&dir, &trace);
}

#[test]
fn a_recording_interrupted_by_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(&dir, "py.tpack");
    let script = "import time\nx = []\nwhile True:\n    x.append(bytearray(200))\n    \
                  x = x[-500:]\n    time.sleep(0.0001)\n";
    let child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["record", "-o", &trace, "--", "python3", "-c", script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(kill.unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(
        stderr(&out).contains("interrupted by signal 15"),
        "{}",
        stderr(&out)
    );
    agrees(&dir, &trace);
}

/// Without an index (cut off, `--no-index`), with a damaged one and with
/// one that lies: the jobs read the events and say why, `--verify-index`
/// fails naming the first figure that differs, and a damaged index is
/// damage to the file (exit 1, every record kept).
#[test]
fn missing_damaged_and_forged_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let exe = cc_program(dir.path(), "sites.c", "sites", &["-O0", "-g"]);
    let trace = path_in(&dir, "s.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let bytes = std::fs::read(&trace).unwrap();
    let at = trailer_start(&bytes).unwrap();
    let want = json(&tramp(&["stats", "--sites", "--json", &trace]));

    // Cut off: an interrupted write, or a recording made before version 5.
    let cut = path_in(&dir, "cut.tpack");
    std::fs::write(&cut, &bytes[..at]).unwrap();
    let out = tramp(&["stats", "--sites", "--json", &cut]);
    assert!(
        stderr(&out).contains("has no profile index"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out), want);
    let out = tramp(&[
        "report",
        "--verify-index",
        &cut,
        "-o",
        &path_in(&dir, "r.html"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no profile index"),
        "{}",
        stderr(&out)
    );

    // `--no-index` writes none.
    let plain = path_in(&dir, "plain.tpack");
    ok(&tramp(&["record", "--no-index", "-o", &plain, "--", &exe]));
    assert!(trailer_start(&std::fs::read(&plain).unwrap()).is_none());

    // A flipped byte in its body: read from the events, which report the
    // damaged index (exit 1); the statistics are whole.
    let mut damaged = bytes.clone();
    damaged[at + 24] ^= 0x40;
    let bad = path_in(&dir, "bad.tpack");
    std::fs::write(&bad, &damaged).unwrap();
    let out = tramp(&["stats", "--sites", "--json", &bad]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("checksum"), "{}", stderr(&out));
    let mut got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["complete"], false);
    let mut whole = want.clone();
    for v in [&mut got, &mut whole] {
        v.as_object_mut().unwrap().remove("complete");
        v.as_object_mut().unwrap().remove("damage");
    }
    assert_eq!(got, whole);

    // A well-formed index that lies (one allocation more): read as it is
    // (the index is trusted unless verified), and --verify-index fails at
    // the figure.
    let body = &bytes[at + 20..bytes.len() - 16];
    let mut doc: serde_json::Value =
        serde_json::from_slice(&zstd::decode_all(body).unwrap()).unwrap();
    let n = doc["profiles"][0]["parts"]["totals"]["total_allocs"]
        .as_u64()
        .unwrap();
    doc["profiles"][0]["parts"]["totals"]["total_allocs"] = (n + 1).into();
    let body = zstd::encode_all(&serde_json::to_vec(&doc).unwrap()[..], 3).unwrap();
    let mut crc = flate2::Crc::new();
    crc.update(&body);
    let mut forged = bytes[..at].to_vec();
    forged.extend_from_slice(b"TPKI");
    forged.extend_from_slice(&(body.len() as u32).to_le_bytes());
    forged.extend_from_slice(&crc.sum().to_le_bytes());
    forged.extend_from_slice(&bytes[at + 12..at + 20]);
    forged.extend_from_slice(&body);
    forged.extend_from_slice(&(20 + body.len() as u64).to_le_bytes());
    forged.extend_from_slice(b"tpackidx");
    let lie = path_in(&dir, "lie.tpack");
    std::fs::write(&lie, &forged).unwrap();
    let got = json(&tramp(&["stats", "--sites", "--json", &lie]));
    assert_eq!(got["total_allocs"].as_u64(), Some(n + 1));
    let out = tramp(&["stats", "--sites", "--verify-index", &lie]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("disagrees with the events at .totals.total_allocs"),
        "{}",
        stderr(&out)
    );
    // A selection reads the events, index or not, and says nothing of it.
    let out = tramp(&["stats", "--sites", "--json", "--time", "0%..100%", &lie]);
    assert!(!stderr(&out).contains("note"), "{}", stderr(&out));
    assert_eq!(json(&out)["total_allocs"].as_u64(), Some(n));
}
