//! `tramp check` and `tramp record --check` on recordings of budgets.c,
//! whose amounts are known by construction: N blocks of 1000 bytes from
//! `cache_put` live to the end, 5000 temporary allocations from `churn`.

mod common;
use common::*;

const KEPT: u64 = 300;

/// Every budget at zero: each used amount is printed, whatever it is.
const ZERO: [&str; 8] = [
    "--max-peak",
    "0",
    "--max-leaked",
    "0",
    "--max-allocations",
    "0",
    "--max-temporary",
    "0",
];

/// budgets.c built, and recorded keeping KEPT blocks.
fn recorded() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let exe = cc_program(dir.path(), "budgets.c", "budgets", &["-O1", "-g"]);
    let trace = path_in(&dir, "b.tpack");
    ok(&tramp(&[
        "record",
        "-o",
        &trace,
        "--",
        &exe,
        &KEPT.to_string(),
    ]));
    (dir, exe, trace)
}

fn check(trace: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["check", trace];
    all.extend_from_slice(args);
    tramp(&all)
}

fn json(trace: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = check(trace, &all);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn budgets_hold_or_fail_with_their_amounts() {
    let (_dir, _exe, trace) = recorded();
    let kept = KEPT * 1000;
    // The pattern's stacks: exactly what the program did there.
    let v = json(
        &trace,
        &[
            "--stack",
            "^cache_put ",
            "--max-leaked",
            "1MiB",
            "--max-peak",
            "1MiB",
            "--max-allocations",
            "1k",
        ],
    );
    assert_eq!(v["stacks_matched"], 1, "{v}");
    let used: Vec<(String, u64)> = v["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["budget"].as_str().unwrap().to_string(),
                b["used"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [("peak", kept), ("leaked", kept), ("allocations", KEPT)];
    let want: Vec<(String, u64)> = want.iter().map(|(b, n)| (b.to_string(), *n)).collect();
    assert_eq!(used, want);
    let v = json(&trace, &["--stack", "^churn ", "--max-temporary", "5000"]);
    assert_eq!(v["budgets"][0]["used"], 5000);
    assert_eq!(v["budgets"][0]["exceeded"], false);

    // Under budget: exit 0, each budget "ok".
    let out = check(
        &trace,
        &["--max-leaked", "400KB", "--max-temporary", "6000"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("leaked") && text.contains(": ok"), "{text}");

    // Over: exit 1, the message naming each budget with its numbers, the
    // report naming the stack responsible.
    let out = check(
        &trace,
        &[
            "--max-leaked",
            "200KiB",
            "--max-temporary",
            "4999",
            "--max-peak",
            "1G",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("over budget: leaked "), "{err}");
    assert!(
        err.contains("over 200 KiB (204,800 B); temporary 5,000 over 4,999"),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("293 KiB (300,000 B)  cache_put ("), "{text}");
    assert!(text.contains("5,000  churn ("), "{text}");
    assert!(
        text.contains("peak") && text.contains("of 1.00 GiB (1,073,741,824 B): ok"),
        "{text}"
    );

    // The whole trace's amounts are its statistics'.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    let v = json(&trace, &ZERO);
    let used: Vec<&serde_json::Value> = v["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["used"])
        .collect();
    let want = [
        "max_live_bytes",
        "live_bytes_at_end",
        "total_allocs",
        "temporary_allocations",
    ];
    assert_eq!(used, want.iter().map(|k| &stats[k]).collect::<Vec<_>>());
    // And the events say the same as the index.
    let events = json(&trace, &[&["--verify-index"][..], &ZERO].concat());
    assert_eq!(events["budgets"], v["budgets"]);
}

#[test]
fn bad_budgets_are_refused_saying_why() {
    let (_dir, _exe, trace) = recorded();
    for (args, why) in [
        (
            &["--max-peak", "12parsecs"][..],
            "--max-peak `12parsecs`: unknown suffix `parsecs`",
        ),
        (
            &["--max-allocations=-3"],
            "--max-allocations `-3` is negative",
        ),
        (
            &["--max-leaked", "1M", "--stack", "(["],
            "--stack `([` is not a pattern",
        ),
        (&[], "no budget to check"),
        (
            &["--max-peak", "1G", "--stack", "^zzz_nothing"],
            "no call stack has a frame /^zzz_nothing/ matches",
        ),
    ] {
        let out = check(&trace, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn record_checks_in_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let exe = cc_program(dir.path(), "budgets.c", "budgets", &["-O1", "-g"]);
    let trace = path_in(&dir, "r.tpack");
    let n = KEPT.to_string();
    let record = |budget: &str, status: &str| {
        tramp(&[
            "record",
            "-o",
            &trace,
            "--check",
            "--max-leaked",
            budget,
            "--",
            &exe,
            &n,
            status,
        ])
    };
    // Under budget: the program's own status.
    let out = record("1MiB", "7");
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(stderr(&out).contains(": ok"), "{}", stderr(&out));
    // Over: 1, with the numbers.
    let out = record("100KiB", "0");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("over budget: leaked "),
        "{}",
        stderr(&out)
    );
    // A budget that does not parse is refused before the program runs.
    std::fs::remove_file(&trace).unwrap();
    let out = record("lots", "0");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--max-leaked `lots`"),
        "{}",
        stderr(&out)
    );
    assert!(!std::path::Path::new(&trace).exists());
    // Budgets without --check are refused.
    let out = tramp(&["record", "-o", &trace, "--max-peak", "1M", "--", &exe]);
    assert!(
        stderr(&out).contains("budgets are checked with --check"),
        "{}",
        stderr(&out)
    );
}
