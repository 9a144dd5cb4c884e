//! What runs is decided by the kinds a trace's schema holds, not by its
//! format (issue 33): a command says so when a trace holds nothing it
//! works on, instead of printing tables of zeros, and a Meta-TF object
//! trace feeds the cache simulator like PTF.

mod common;
use common::{ok, path_in, stderr, tramp};

/// A Meta-TF DTD of object-graph records (kinds and roles, no heap).
const OBJECTS_DTD: &str = "tag.width = 1;
oid.width = 4; oid.interpretation = none; oid.role = object;
to.width = 4;  to.interpretation = none;  to.role = edgeTarget;
slot.width = 1; slot.interpretation = none; slot.role = slot;
make: (tag, oid) { tag.value = 4; tag.kind = objectCreate; }
link: (tag, oid, slot, to) { tag.value = 5; tag.kind = edgeWrite; }
follow: (tag, oid, slot) { tag.value = 6; tag.kind = edgeRead; }
";

#[test]
fn a_meta_tf_object_trace_is_a_buffer_pool() {
    let dir = tempfile::tempdir().unwrap();
    let dtd = path_in(&dir, "obj.dtd");
    std::fs::write(&dtd, OBJECTS_DTD).unwrap();
    let text = path_in(&dir, "obj.txt");
    std::fs::write(
        &text,
        "make tag=4 oid=1\nmake tag=4 oid=2\nlink tag=5 oid=1 slot=0 to=2\nfollow tag=6 oid=1 slot=0\nfollow tag=6 oid=2 slot=0\n",
    )
    .unwrap();
    let mtf = path_in(&dir, "obj.mtf");
    ok(&tramp(&[
        "convert",
        "--dtd",
        &dtd,
        "-f",
        "metatf-text",
        &text,
        &mtf,
    ]));
    let out = ok(&tramp(&[
        "cachesim", &mtf, "-p", "lru", "-s", "1", "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lru = &v["table"]["caches"][0];
    // By hand, one object cached: 1 W miss; 2 W miss (1 written back);
    // 1 W miss (2 written back); 1 R hit; 2 R miss (1 written back).
    assert_eq!(v["requests"], 5, "{out}");
    assert_eq!(lru["miss_ratio"], 0.8, "{out}");
    assert_eq!(lru["read_hits"], 1, "{out}");
    assert_eq!(lru["write_backs"], 3, "{out}");
}

#[test]
fn a_trace_with_nothing_a_command_works_on_says_so_instead_of_zeros() {
    let dir = tempfile::tempdir().unwrap();
    // A described layout of IO records: no heap events.
    let desc = path_in(&dir, "io.desc");
    std::fs::write(
        &desc,
        "record IO {\n    byte RECORD_TYPE { 0x00 \"read\" };\n    bytes(4) file;\n};\n",
    )
    .unwrap();
    let io = path_in(&dir, "io.bin");
    std::fs::write(&io, [0u8, 1, 0, 0, 0, 0, 2, 0, 0, 0]).unwrap();
    let hatf = path_in(&dir, "t.hatf");
    ok(&tramp(&["sample", "--events", "500", "-o", &hatf]));
    let ptf = path_in(&dir, "o.ptf");
    ok(&tramp(&["workload", "oo7", "--ops", "t1", "-o", &ptf]));
    // stats counts its records by type, and says there is nothing more.
    let stats = ok(&tramp(&["stats", "--desc", &desc, &io]));
    assert_eq!(
        stats,
        "records                                     2\n  IO                                        2\n\nno heap statistics: the trace holds nothing tramp analyses (no heap events, object graph or memory accesses)\n"
    );
    let out = tramp(&["stats", "--sites", "--desc", &desc, &io]);
    assert_eq!(out.status.code(), Some(1));
    for (args, says) in [
        (vec!["rds", &hatf], "`tramp rds` needs an object graph"),
        (vec!["replay", &ptf], "`tramp replay` needs heap events"),
        (
            vec!["sizes", "--desc", &desc, &io],
            "`tramp sizes` needs heap events",
        ),
    ] {
        let out = tramp(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: no table of zeros");
    }
}

/// Every `--json` document says whether it covers the whole trace:
/// `complete`, and `damage` (what a reader skipped) beside the report.
#[test]
fn json_reports_say_how_complete_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = path_in(&dir, "t.hatf");
    ok(&tramp(&["sample", "--events", "500", "-o", &hatf]));
    let json = |args: &[&str]| -> (Option<i32>, serde_json::Value) {
        let out = tramp(args);
        (
            out.status.code(),
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}")),
        )
    };
    for args in [
        vec!["stats", "--json", hatf.as_str()],
        vec!["cachesim", "--json", hatf.as_str(), "-s", "10"],
        vec!["sizes", "--json", hatf.as_str(), "--timing-records", "100"],
    ] {
        let (code, v) = json(&args);
        assert_eq!(code, Some(0), "{args:?}");
        assert_eq!(v["complete"], true, "{args:?}");
        assert!(v["damage"].is_null(), "{args:?}");
    }
    // A Heph trace with a damaged packet size: the output stands, and says
    // what was skipped.
    let mut heph = std::fs::read(common::fixture("heph_tracing_example.bin.log")).unwrap();
    heph[4..8].copy_from_slice(&((64u32 << 20) - 16).to_be_bytes());
    let bad = path_in(&dir, "bad.heph");
    std::fs::write(&bad, &heph).unwrap();
    let (code, v) = json(&["stats", "--json", &bad]);
    assert_eq!(code, Some(1));
    assert_eq!(v["complete"], false);
    assert_eq!(v["damage"]["places"], 1);
    assert_eq!(v["damage"]["bytes"], 23);
    // A cut HATF trace: stopped early, incomplete.
    let bytes = std::fs::read(&hatf).unwrap();
    let cut = path_in(&dir, "cut.hatf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 1]).unwrap();
    let (code, v) = json(&["stats", "--json", &cut]);
    assert_eq!(code, Some(1));
    assert_eq!(v["complete"], false);
}

/// `tramp run` reads through the same driver as every other command: on a
/// trace whose reader skipped damage it runs the script over every record
/// around it, then reports the damage in the words `stats` uses and exits
/// 1 (it read records without their warnings before, and exited 0).
#[test]
fn run_reports_damage_as_stats_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut heph = std::fs::read(common::fixture("heph_tracing_example.bin.log")).unwrap();
    // The first event's magic flipped: the reader resynchronises.
    heph[23] ^= 0xFF;
    let bad = path_in(&dir, "bad.heph");
    std::fs::write(&bad, &heph).unwrap();
    let script = path_in(&dir, "count.tr");
    std::fs::write(
        &script,
        "preprocess begin set n = 0; end\nprocedure main begin set n = n + 1; end\npostprocess begin echo n; end\n",
    )
    .unwrap();
    let run = tramp(&["run", &script, &bad]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let stats = tramp(&["stats", &bad]);
    assert_eq!(stats.status.code(), Some(1));
    let words = "the trace is damaged: 1 damaged place skipped";
    assert!(stderr(&run).contains(words), "{}", stderr(&run));
    assert!(stderr(&stats).contains(words), "{}", stderr(&stats));
    // The script saw every record but the skipped one: the clean trace's
    // count less one.
    let clean = tramp(&[
        "run",
        &script,
        &common::fixture("heph_tracing_example.bin.log"),
    ]);
    let n = |out: &str| -> u64 { out.trim().parse().unwrap() };
    assert_eq!(n(&String::from_utf8_lossy(&run.stdout)), n(&ok(&clean)) - 1);
}
