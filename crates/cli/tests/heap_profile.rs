//! The heap profile beside heaptrack (issue 34): the same program recorded
//! by both, each analysis's figure compared with heaptrack_print's and
//! with the hand count in the program's comments.

use std::process::Command;

mod common;
use common::{fixture, heaptrack_file, heaptrack_print, ok, path_in as p, tramp};

/// `fixtures/heap/NAME.c` built with `cc -O0 -g` in `dir`.
fn build(dir: &tempfile::TempDir, name: &str) -> String {
    common::build_heap_fixture(dir, name)
}

/// The JSON tramp prints for `args`.
fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(&tramp(args))).unwrap()
}

/// `heaptrack_print`'s figure on the line starting with `label`.
fn heaptrack_figure(report: &str, label: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` in heaptrack_print's report:\n{report}"));
    line[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn temporary_allocations_beside_heaptrack() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let stats: serde_json::Value = json(&["stats", "--json", &trace]);
    // The hand count (the program's comments).
    assert_eq!(stats["temporary_allocations"], 1100);

    // heaptrack (installed by setup.sh) on the same program.
    let file = heaptrack_file(&dir, &exe, "ht", &[]);
    let report = heaptrack_print(&file);
    // heaptrack compares a free with the last allocation by size and call
    // stack, not by block: the free of keep[0] right after keep[99] was
    // made counts there (docs/heap-profile.md).
    assert_eq!(
        heaptrack_figure(&report, "temporary memory allocations:"),
        1101
    );
    // Calls: 1151 mallocs and 50 reallocs in both; heaptrack also counts
    // the 72,704-byte pool of its own preloaded C++ runtime.
    let calls = stats["malloc_calls"].as_u64().unwrap() + stats["realloc_calls"].as_u64().unwrap();
    assert_eq!(calls, 1201);
    assert_eq!(
        heaptrack_figure(&report, "calls to allocation functions:"),
        calls + 1
    );

    // The peak, worked out by hand: inside the first realloc the 4,096-byte
    // block is made while the 8-byte one is still live (4,104 bytes in two
    // objects); everything else live at once is less (100 × 32, or the
    // 4,096-byte stdout buffer alone at the end). heaptrack records a
    // realloc as the free of the old block and then the allocation of the
    // new one, so it never sees both, and it adds its own pool:
    // 72,704 + 4,096 = 76,800 bytes.
    let sites: serde_json::Value = json(&["stats", "--sites", "--json", &trace]);
    let peak = &sites["sites"]["peak"];
    assert_eq!(
        (peak["bytes"].as_u64(), peak["objects"].as_u64()),
        (Some(4104), Some(2))
    );
    let holders: Vec<(String, u64)> = sites["sites"]["by_bytes_at_peak"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!(
                    "{}:{}",
                    r["stack"][0]["function"].as_str().unwrap(),
                    r["stack"][0]["line"]
                ),
                r["peak_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        holders,
        vec![("main:28".to_string(), 4096), ("main:27".to_string(), 8)],
        "the realloc's block and the malloc before it"
    );
    let line = report
        .lines()
        .find(|l| l.starts_with("peak heap memory consumption:"))
        .unwrap();
    assert!(line.contains("76.80K"), "{line}");
}

/// Folded stacks read as flamegraph.pl reads them (`frames COUNT`, the
/// count after the last space, frames split at `;`, outermost first), and
/// add up to the statistics' totals for each cost.
#[test]
fn folded_stacks_parse_as_flamegraph_pl_expects_and_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&[
        "record", "--stack", "8", "-o", &trace, "--", &exe,
    ]));
    let stats: serde_json::Value = json(&["stats", "--json", &trace]);
    let sites: serde_json::Value = json(&["stats", "--sites", "--json", &trace]);
    let parse = |cost: &str| -> Vec<(Vec<String>, u64)> {
        ok(&tramp(&["stats", "--folded", cost, &trace]))
            .lines()
            .map(|l| {
                let (frames, n) = l.rsplit_once(' ').expect("frames, a space, a count");
                let frames: Vec<String> = frames.split(';').map(str::to_string).collect();
                assert!(frames.iter().all(|f| !f.is_empty()), "{l}");
                (frames, n.parse::<u64>().expect("a count"))
            })
            .collect()
    };
    let total = |v: &[(Vec<String>, u64)]| v.iter().map(|(_, n)| n).sum::<u64>();
    assert_eq!(
        total(&parse("allocations")),
        stats["total_allocs"].as_u64().unwrap()
    );
    assert_eq!(
        total(&parse("bytes")),
        stats["bytes_allocated"].as_u64().unwrap()
    );
    assert_eq!(total(&parse("temporary")), 1100, "the hand count");
    assert_eq!(
        total(&parse("peak")),
        sites["sites"]["peak"]["bytes"].as_u64().unwrap()
    );
    assert_eq!(
        total(&parse("leaked")),
        stats["live_bytes_at_end"].as_u64().unwrap()
    );
    // The loop of line 19 makes the 1000 temporaries: its stack ends in
    // main at that line and starts outside it (main's callers).
    let temp = parse("temporary");
    let (frames, n) = temp
        .iter()
        .find(|(f, _)| f.last().unwrap().ends_with("temporaries.c:19)"))
        .expect("the loop's stack");
    assert_eq!(*n, 1000);
    assert!(frames.last().unwrap().starts_with("main "));
    assert!(frames.len() > 1, "callers above main: {frames:?}");
    // Drawn: the loop's box is 1000/1100 of the root's width.
    let svg = p(&dir, "temporary.svg");
    ok(&tramp(&[
        "stats",
        "--folded",
        "temporary",
        "--flamegraph",
        &svg,
        &trace,
    ]));
    let svg = std::fs::read_to_string(&svg).unwrap();
    let width = |title_start: &str| -> f64 {
        let r = &svg[svg
            .find(title_start)
            .unwrap_or_else(|| panic!("{title_start}"))..];
        let v = &r[r.find("width=\"").unwrap() + 7..];
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    let root = width("<title>all (1100 allocations");
    let lp = width("temporaries.c:19) (1000 allocations");
    assert!((lp / root - 1000.0 / 1100.0).abs() < 1e-3, "{lp} of {root}");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

/// `tramp diff` of two runs of one program with different inputs names
/// the call site that changed, and only it (the program's comments).
#[test]
fn diff_of_two_runs_names_the_site_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "grows");
    let a = p(&dir, "a.tpack");
    let b = p(&dir, "b.tpack");
    ok(&tramp(&["record", "-o", &a, "--", &exe, "10"]));
    ok(&tramp(&["record", "-o", &b, "--", &exe, "25"]));
    let d: serde_json::Value = json(&["diff", "--json", &a, &b]);
    let rows = d["rows"].as_array().unwrap();
    // 15 more 48-byte rows (720 bytes, all leaked), and the row table's
    // own block grows by 15 pointers (120 bytes): both in `rows`.
    let changed: Vec<(String, i64, i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["stack"]
                    .as_array()
                    .unwrap()
                    .last()
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
                r["change"]["allocations"].as_i64().unwrap(),
                r["change"]["bytes"].as_i64().unwrap(),
                r["change"]["leaked"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert!(
        changed[0].0.starts_with("rows ") && changed[0].0.contains("grows.c:11"),
        "{changed:?}"
    );
    assert_eq!((changed[0].1, changed[0].2, changed[0].3), (15, 720, 720));
    assert!(changed[1].0.contains("grows.c:10"), "{changed:?}");
    assert_eq!((changed[1].1, changed[1].2, changed[1].3), (0, 120, 120));
    assert_eq!(d["complete"], true);
    // `table` (line 7) did not change: it is not listed.
    assert!(!changed.iter().any(|c| c.0.contains("grows.c:7")));
    let text = ok(&tramp(&["diff", &a, &b]));
    assert!(text.contains("2 call stacks changed"), "{text}");
    // The differential flame graph: `rows` grew (720 bytes) — red; `table`
    // did not change — grey. (Frames name their file by its full path.)
    let svg = p(&dir, "d.svg");
    ok(&tramp(&[
        "diff",
        "--flamegraph",
        &svg,
        "--cost",
        "bytes",
        &a,
        &b,
    ]));
    let svg = std::fs::read_to_string(&svg).unwrap();
    let fill = |frame: &str| {
        let at = svg.find(frame).unwrap_or_else(|| panic!("no {frame} box"));
        let f = &svg[at + svg[at..].find("fill=\"").unwrap() + 6..];
        f[..f.find('"').unwrap()].to_string()
    };
    let rows = fill("grows.c:11) (");
    assert!(
        rows.starts_with("rgb(255,") && rows != "rgb(255,255,255)",
        "{rows}"
    );
    assert_eq!(fill("grows.c:7) ("), "rgb(210,210,210)");
    assert!(
        svg.contains("grows.c:11) (1200 bytes, 18.40%; before 480 bytes, change +720)"),
        "rows: 10 → 25 rows of 48 bytes"
    );
}

/// Leaks with LeakSanitizer suppressions: what `rows` leaks (n rows of 48
/// bytes and its table of n pointers) is suppressed by `leak:rows`; what
/// `table` leaks (1,024 bytes) stays in the leak table.
#[test]
fn suppressed_leaks_leave_the_leak_table_and_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "grows");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe, "10"]));
    let supp = p(&dir, "lsan.supp");
    std::fs::write(&supp, "# the rows are kept on purpose\nleak:^rows$\n").unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["stats", "--sites", "--json", "--top", "50"];
        args.extend_from_slice(extra);
        args.push(&trace);
        json(&args)
    };
    let plain = run(&[]);
    let with = run(&["--suppressions", &supp]);
    let (l0, l1) = (&plain["sites"]["leaks"], &with["sites"]["leaks"]);
    // 10 × 48 + 10 × 8 = 560 bytes in 11 objects.
    assert_eq!(
        (
            l1["suppressed_bytes"].as_u64(),
            l1["suppressed_objects"].as_u64()
        ),
        (Some(560), Some(11))
    );
    assert_eq!(
        l1["bytes"].as_u64().unwrap(),
        l0["bytes"].as_u64().unwrap() - 560
    );
    assert_eq!(l1["suppressions"][0]["pattern"], "^rows$");
    assert_eq!(l1["suppressions"][0]["bytes"], 560);
    let leaking: Vec<String> = with["sites"]["by_live_bytes_at_exit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["stack"][0]["function"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    assert!(leaking.iter().any(|f| f == "table"), "{leaking:?}");
    assert!(!leaking.iter().any(|f| f == "rows"), "{leaking:?}");
    // A line that is not a leak suppression is an error that names it.
    std::fs::write(&supp, "leak:rows\nrace:x\n").unwrap();
    let bad = tramp(&["stats", "--sites", "--suppressions", &supp, &trace]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(common::stderr(&bad).contains("line 2: `race:x` is not a leak suppression"));
}

/// The heap over time agrees with the statistics: its highest slice is the
/// peak, its allocations and frees add up, and it keeps to its slices.
#[test]
fn the_timeline_adds_up_to_the_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let stats: serde_json::Value = json(&["stats", "--json", &trace]);
    let t: serde_json::Value = json(&["stats", "--timeline", "--json", &trace]);
    assert_eq!(t["clock"], "time", "a recording has times");
    let slices = t["slices"].as_array().unwrap();
    assert!(!slices.is_empty() && slices.len() <= 512);
    let sum = |k: &str| slices.iter().map(|s| s[k].as_u64().unwrap()).sum::<u64>();
    let max = slices
        .iter()
        .map(|s| s["max_live_bytes"].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(max, stats["max_live_bytes"].as_u64().unwrap());
    assert_eq!(sum("allocations"), stats["total_allocs"].as_u64().unwrap());
    assert_eq!(sum("frees"), stats["total_frees"].as_u64().unwrap());
    let last = slices.last().unwrap();
    assert_eq!(last["live_bytes"], stats["live_bytes_at_end"]);
    // Slices follow each other.
    for w in slices.windows(2) {
        assert!(w[0]["end"].as_u64() <= w[1]["start"].as_u64());
    }
    let text = ok(&tramp(&["stats", "--timeline", &trace]));
    assert!(text.lines().count() <= 50, "at most 48 slices in text");
    // Each row from its start to its end, with thousands separators and
    // the unit said (issue 48: raw ns and no end column).
    let head = text.lines().next().unwrap();
    assert!(
        head.contains("from (time)") && head.contains("to (time)"),
        "{text}"
    );
    assert!(text.contains("nanoseconds in tramp's recordings"), "{text}");
}

/// Call trees: bottom-up, `rows` allocates at two lines and is called by
/// main; top-down, main's call sites hold what `table` and `rows`
/// allocated below them.
#[test]
fn call_trees_read_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "grows");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&[
        "record", "--stack", "8", "-o", &trace, "--", &exe, "10",
    ]));
    let tree =
        |dir: &str| -> serde_json::Value { json(&["stats", "--tree", dir, "--json", &trace]) };
    let bu = tree("bottom-up");
    let roots = bu["roots"].as_array().unwrap();
    let rows11 = roots
        .iter()
        .find(|n| n["frame"].as_str().unwrap().contains("grows.c:11"))
        .expect("the rows' malloc");
    assert_eq!(rows11["costs"]["allocations"], 10);
    assert_eq!(rows11["costs"]["bytes"], 480);
    assert!(
        rows11["children"][0]["frame"]
            .as_str()
            .unwrap()
            .starts_with("main ")
    );
    let td = tree("top-down");
    // Frames are call sites: main's calls at lines 17 (table) and 18
    // (rows) are two nodes, 1,024 and 10 × 48 + 10 × 8 bytes below them.
    fn all<'a>(n: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
        out.push(n);
        for c in n["children"].as_array().into_iter().flatten() {
            all(c, out);
        }
    }
    let mut nodes = Vec::new();
    for r in td["roots"].as_array().unwrap() {
        all(r, &mut nodes);
    }
    let at = |line: &str| -> u64 {
        nodes
            .iter()
            .filter(|n| {
                let f = n["frame"].as_str().unwrap();
                f.starts_with("main ") && f.contains(&format!("grows.c:{line})"))
            })
            .map(|n| n["costs"]["bytes"].as_u64().unwrap())
            .sum()
    };
    assert_eq!((at("17"), at("18")), (1024, 480 + 80));
    assert_eq!(td["direction"], "top-down");
}

/// The program's own LeakSanitizer suppressions
/// (`__lsan_default_suppressions`) are recorded and applied as LSan applies
/// them, beside any `--suppressions` file.
#[test]
fn the_programs_own_lsan_suppressions_apply() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "lsan_default");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let v = json(&["stats", "--sites", "--json", "--top", "50", &trace]);
    let leaks = &v["sites"]["leaks"];
    assert_eq!(leaks["suppressions"][0]["pattern"], "keep_forever");
    assert_eq!(
        (
            leaks["suppressed_objects"].as_u64(),
            leaks["suppressed_bytes"].as_u64()
        ),
        (Some(3), Some(300))
    );
    let leaking: Vec<&str> = v["sites"]["by_live_bytes_at_exit"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["stack"][0]["function"].as_str())
        .collect();
    assert!(leaking.contains(&"forgot"), "{leaking:?}");
    assert!(!leaking.contains(&"keep_forever"), "{leaking:?}");
}

/// A program annotated for heaptrack (its own heaptrack_api.h) recorded by
/// tramp unchanged: the reported blocks are objects of their own, counted
/// as heaptrack counts them, and kept apart from the chunk they lie in.
#[test]
fn heaptracks_api_reports_blocks_to_tramp() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "ht_pool");
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    let stats = json(&["stats", "--json", &trace]);
    // The hand count (the program's comment): heap 1 holds the reported
    // blocks, heap 0 the chunk.
    let heap1 = &stats["per_heap"]["1"];
    assert_eq!(
        (heap1["allocs"].as_u64(), heap1["frees"].as_u64()),
        (Some(1000), Some(400)),
        "{stats}"
    );
    assert_eq!(heap1["reallocs"], 1);
    assert_eq!(stats["per_heap"]["0"]["bytes_allocated"], 64000);
    assert_eq!(stats["live_bytes_at_end"], 599 * 64 + 128);
    assert_eq!(stats["live_objects_at_end"], 600);

    let file = heaptrack_file(&dir, &exe, "ht", &[]);
    let report = heaptrack_print(&file);
    // The same calls (heaptrack adds the pool of its own C++ runtime).
    let calls = stats["malloc_calls"].as_u64().unwrap() + stats["realloc_calls"].as_u64().unwrap();
    assert_eq!(calls, 1002);
    assert_eq!(
        heaptrack_figure(&report, "calls to allocation functions:"),
        calls + 1
    );
    // heaptrack keeps one map of live pointers: the first block, at the
    // chunk's address, takes the chunk's place in it, so the chunk's free
    // finds nothing and heaptrack counts the 64,000-byte chunk as leaked
    // beside the 38,464 bytes of blocks (docs/heap-profile.md).
    let leaked = report
        .lines()
        .find(|l| l.starts_with("total memory leaked:"))
        .unwrap();
    assert!(leaked.ends_with(" 102.46K"), "{leaked}");
}

/// Inlined frames are frames of their own: stored with the trace's
/// symbols and expanded in every stack.
#[test]
fn inlined_functions_are_frames_of_their_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let exe = p(&dir, "inlined");
    let src = fixture("heap/inlined.c");
    let built = Command::new("cc")
        .args(["-O2", "-g", &src, "-o", &exe])
        .status()
        .unwrap();
    assert!(built.success());
    let trace = p(&dir, "t.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    // The symbols travel with the trace: remove the program first.
    std::fs::remove_file(&exe).unwrap();
    let folded = ok(&tramp(&["stats", "--folded", "allocations", &trace]));
    let line = folded
        .lines()
        .find(|l| l.contains("make"))
        .unwrap_or_else(|| panic!("no stack with make:\n{folded}"));
    let frames: Vec<&str> = line.rsplit_once(' ').unwrap().0.split(';').collect();
    let n = frames.len();
    assert!(n >= 3, "{line}");
    assert!(
        frames[n - 1].starts_with("make (") && frames[n - 1].ends_with("inlined.c:10)"),
        "{line}"
    );
    assert!(
        frames[n - 2].starts_with("build (") && frames[n - 2].ends_with("inlined.c:15)"),
        "{line}"
    );
    assert!(frames[n - 3].starts_with("main ("), "{line}");
}
