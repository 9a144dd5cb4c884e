//! The run-and-report contract as a second front end sees it: a trace
//! named by path, a job, its report and its ending, on a trace whose
//! answers are worked out by hand, whole and cut.

use tramp_api::{Error, TraceSpec, heap};

/// Seven allocations (854 + 32 + 401 + 40 + 22,544 + 24 + 64 = 23,959
/// bytes) and five frees (examples/heap-lifetimes' test reads it too).
const TRACE: &str = include_str!("../../../tests/fixtures/heap/twelve.hatf.txt");

// Live bytes after each record: 854, 886, 32, 433, 32, 0, 40, 22584,
// 22544, 22568, 22632, 22608. Peak 22,632 bytes; objects at most 3
// (after the 64-byte block: 22544, 24, 64); at the end 22,608 bytes in 2.
const PEAK: u64 = 22_632;

fn write(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("t.hatf.txt");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_whole_trace_gives_the_hand_computed_statistics_and_ends_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TraceSpec::path(write(&dir, TRACE));
    let r = heap::stats_of(&spec).unwrap();
    assert_eq!((r.total_allocs, r.total_frees), (7, 5));
    assert_eq!(r.bytes_allocated, 854 + 32 + 401 + 40 + 22544 + 24 + 64);
    assert_eq!(r.max_live_bytes, PEAK);
    assert_eq!(r.max_live_objects, 3);
    assert_eq!((r.live_bytes_at_end, r.live_objects_at_end), (22_608, 2));
    // The same numbers through the job that also counts sites, and an
    // outcome that says the run covered everything.
    let mut o = heap::open_heap(&spec, "stats").unwrap();
    let (with, run) = heap::with_sites(&mut o, 5, None);
    assert_eq!(with.heap.max_live_bytes, PEAK);
    let outcome = run.outcome(&with);
    assert!(outcome.complete && outcome.damage.is_none());
    let ended = tramp_api::end(run, &o, None, "");
    assert!(ended.warnings.is_empty() && ended.error.is_none());
}

#[test]
fn a_cut_trace_reports_what_came_before_and_ends_in_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    // Cut inside the fourth free's line: eight whole records before it.
    let cut = &TRACE[..TRACE.find("free address=0x7f3a00000520").unwrap() + 12];
    let spec = TraceSpec::path(write(&dir, cut));
    let mut o = heap::open_heap(&spec, "stats").unwrap();
    let (stats, run) = heap::stats(&mut o);
    let r = stats.report();
    assert_eq!((r.total_allocs, r.total_frees), (5, 3));
    assert_eq!(r.max_live_bytes, 22_584);
    let outcome = run.outcome(&r);
    assert!(!outcome.complete);
    let damage = outcome.damage.clone().expect("the cut is reported");
    assert!(damage.to_string().contains("line"), "{damage}");
    let err = tramp_api::end(run, &o, None, "; covered above")
        .into_result()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("reading ") && text.contains("; covered above"),
        "{text}"
    );
    assert!(
        matches!(err, Error::Read { .. } | Error::Damaged { .. }),
        "{err:?}"
    );
}

#[test]
fn a_trace_without_heap_events_is_refused_by_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.ptf.txt");
    let figure3 = include_str!("../../../tests/fixtures/ptf/figure3.ptf.txt");
    std::fs::write(&path, figure3).unwrap();
    let err = heap::open_heap(&TraceSpec::path(path.to_string_lossy()), "report")
        .err()
        .expect("refused");
    assert!(matches!(err, Error::NotApplicable(_)), "{err:?}");
    assert!(
        err.to_string().contains("`tramp report` needs heap events"),
        "{err}"
    );
}

#[test]
fn a_missing_trace_is_an_open_error_naming_it() {
    let err = tramp_api::open(&TraceSpec::path("/nonexistent/t.hatf"), false)
        .err()
        .expect("no such file");
    assert!(matches!(err, Error::Open { .. }));
    assert_eq!(err.to_string(), "opening /nonexistent/t.hatf");
    assert!(err.io().is_some());
}

/// What a front end shows of an error: the chain, a cause its parent
/// already says left out; a closed pipe found however deep it sits.
#[test]
fn messages_say_each_cause_once_and_closed_pipes_are_found() {
    use tramp_core::Position;
    let cause = std::io::Error::other("bad tag 7");
    let decode = tramp_core::Error::decode("hatf", Position::new(12, 3), cause);
    let text = decode.to_string();
    assert!(std::error::Error::source(&decode).is_some());
    let err = Error::Write {
        path: "out.hatf".into(),
        source: decode,
    };
    let shown = tramp_api::error::message(&err);
    assert_eq!(shown, format!("writing out.hatf: {text}"));
    assert_eq!(shown.matches("bad tag 7").count(), 1, "{shown}");
    let pipe = Error::Write {
        path: "-".into(),
        source: std::io::Error::from(std::io::ErrorKind::BrokenPipe).into(),
    };
    assert!(tramp_api::error::is_broken_pipe(&pipe));
    assert!(!tramp_api::error::is_broken_pipe(&err));
}
