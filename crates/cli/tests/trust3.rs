//! End-to-end tests of trust, third round (issue 48): each numbered case
//! of the issue that concerns `record`, `replay`, `cachesim` or the text
//! readers, failing on the main of 2026-12-01. The RDS case is in
//! rds_programs.rs, the Parquet one in parquet.rs.

use std::path::Path;

mod common;
use common::{path_in, stderr, tramp};

/// Builds `int main(void) { BODY }` as `NAME` in `dir`.
fn program(dir: &tempfile::TempDir, name: &str, body: &str) -> String {
    let src = path_in(dir, &format!("{name}.c"));
    std::fs::write(
        &src,
        format!("#include <stdlib.h>\nint main(void) {{ {body} }}\n"),
    )
    .unwrap();
    let exe = path_in(dir, name);
    let cc = std::process::Command::new("cc")
        .args([&src, "-o", &exe])
        .status()
        .unwrap();
    assert!(cc.success());
    exe
}

#[test]
fn the_programs_status_passes_through_when_nothing_is_recorded() {
    // Case 3: `return 7` recorded gave rc 1 ("nothing was recorded").
    let dir = tempfile::tempdir().unwrap();
    let exe = program(&dir, "seven", "return 7;");
    let trace = path_in(&dir, "s.tpack");
    let out = tramp(&["record", "-o", &trace, "--", &exe]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: nothing was recorded"),
        "{}",
        stderr(&out)
    );
    // --strict fails only a run the program itself did not fail.
    let out = tramp(&["record", "--strict", "-o", &trace, "--", &exe]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let zero = program(&dir, "zero", "return 0;");
    let out = tramp(&["record", "--strict", "-o", &trace, "--", &zero]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // And a program that allocates: its status, whatever it is.
    let three = program(&dir, "three", "free(malloc(10)); return 3;");
    let out = tramp(&["record", "-o", &trace, "--", &three]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}

#[test]
fn side_outputs_onto_the_trace_and_unknown_options_are_refused_before_the_run() {
    // Case 11: both ran the whole program first.
    let dir = tempfile::tempdir().unwrap();
    let mark = path_in(&dir, "ran");
    let trace = path_in(&dir, "y.tpack");
    let cmd = format!("touch {mark}");
    let same = format!("{}/./y.tpack", dir.path().display());
    for args in [
        vec!["record", "-o", &trace, "--stats", "--stats-out", &trace],
        vec!["record", "-o", &trace, "--report", &same],
    ] {
        let mut all = args.clone();
        all.extend(["--", "sh", "-c", &cmd]);
        let out = tramp(&all);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("is also the trace's output"),
            "{}",
            stderr(&out)
        );
        assert!(!Path::new(&mark).exists(), "the program ran: {args:?}");
    }
    // A misspelt option is clap's error with its suggestion, not a program.
    let out = tramp(&[
        "record", "--sampel", "4096", "-o", &trace, "--", "sh", "-c", &cmd,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("'--sample'"), "{}", stderr(&out));
    assert!(!Path::new(&mark).exists());
    // A stack deeper than the capture's 64 frames is refused, not clamped.
    let out = tramp(&[
        "record", "--stack", "1000", "-o", &trace, "--", "sh", "-c", &cmd,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!Path::new(&mark).exists());
    // The program's own options after its name still reach it.
    let out = tramp(&["record", "-o", &trace, "ls", "-la", "/"]);
    assert!(out.status.success(), "{}", stderr(&out));
}
