//! `tramp report` and `tramp record --report` (issue 34): the page is
//! opened in a real browser — headless Chromium, with its console logged —
//! which must report no console message (no script error) and whose DOM
//! after the script ran holds non-empty charts, flame graph and tables;
//! the page stays under 5 MB on a small and on a large profile, and its
//! figures are the statistics' own.

use std::process::Command;

mod common;
use common::{fixture, ok, path_in as p, tramp};

const MAX_PAGE: u64 = 5 << 20;

fn build(dir: &tempfile::TempDir, name: &str) -> String {
    let exe = p(dir, name);
    let src = fixture(&format!("heap/{name}.c"));
    let built = Command::new("cc")
        .args(["-O1", "-g", "-fno-inline", &src, "-o", &exe])
        .status()
        .unwrap();
    assert!(built.success(), "cc {src}");
    exe
}

/// Chromium's `--dump-dom` of the page, after checking its console was
/// silent.
fn browse(page: &str) -> String {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("file://{page}"))
        .output()
        .expect("chromium runs (./setup.sh installs it)");
    assert!(out.status.success(), "chromium failed");
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "the page logged: {console:#?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Today's date in UTC, as `date -u` gives it.
fn utc_date() -> String {
    let out = Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The JSON a page draws from.
fn page_data(page: &str) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let data = &html[html.find("id=\"data\">").unwrap() + 10..];
    serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap()
}

/// budgets.c recorded keeping 300 blocks, with its report: the page's path.
fn budgets_page(dir: &tempfile::TempDir) -> String {
    let exe = common::cc_program(dir.path(), "budgets.c", "budgets", &["-O1", "-g"]);
    let (trace, page) = (p(dir, "b.tpack"), p(dir, "b.html"));
    ok(&tramp(&[
        "record", "-o", &trace, "--report", &page, "--", &exe, "300",
    ]));
    page
}

/// The text of the summary's value cell for `label`.
fn cell(dom: &str, label: &str) -> String {
    let key = format!("<td>{label}</td><td>");
    let at = dom
        .find(&key)
        .unwrap_or_else(|| panic!("no summary row {label}"))
        + key.len();
    dom[at..at + dom[at..].find("</td>").unwrap()].to_string()
}

/// The number in `attr="N"` on the element with `id`.
fn count(dom: &str, id: &str, attr: &str) -> u64 {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let tag_end = at + dom[at..].find('>').unwrap();
    let start = dom[..at].rfind('<').unwrap();
    let tag = &dom[start..tag_end];
    let key = format!("{attr}=\"");
    let v = &tag[tag
        .find(&key)
        .unwrap_or_else(|| panic!("#{id} has no {attr}: {tag}"))
        + key.len()..];
    v[..v.find('"').unwrap()].parse().unwrap()
}

fn check_page(page: &str) -> String {
    let size = std::fs::metadata(page).unwrap().len();
    assert!(size <= MAX_PAGE, "{page}: {size} bytes");
    let dom = browse(page);
    for id in ["memory", "allocations", "sizes", "lifetimes"] {
        assert!(count(&dom, id, "data-points") > 0, "#{id} is empty");
    }
    // Labelled axes: six time ticks on each chart over time, at most ten
    // labels under the bars; a legend entry per series, in its own band.
    for id in ["memory", "allocations"] {
        assert_eq!(count(&dom, id, "data-ticks"), 6, "#{id}");
    }
    for id in ["sizes", "lifetimes"] {
        assert!((1..=10).contains(&count(&dom, id, "data-ticks")), "#{id}");
    }
    assert!(dom.matches("class=\"legend\"").count() >= 4, "legends");
    assert!(
        dom.contains("time since the first event"),
        "the time axis's title"
    );
    assert!(count(&dom, "flame", "data-boxes") > 1, "no flame graph");
    assert!(count(&dom, "topdown", "data-rows") > 0);
    assert!(count(&dom, "bottomup", "data-rows") > 0);
    dom
}

#[test]
fn a_recording_and_its_report_open_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "temporaries");
    let (trace, page) = (p(&dir, "t.tpack"), p(&dir, "t.html"));
    let before = utc_date();
    ok(&tramp(&[
        "record", "-o", &trace, "--report", &page, "--", &exe,
    ]));
    let dom = check_page(&page);
    assert!(
        count(&dom, "memory", "data-rss") > 0,
        "the recording's RSS is drawn"
    );
    // The summary is the statistics' own figures, in human units with the
    // exact count beside.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    let grouped = |v: &serde_json::Value| {
        let digits = v.to_string();
        let mut g = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                g.push(',');
            }
            g.push(c);
        }
        g
    };
    let allocs = cell(&dom, "allocations");
    assert!(
        allocs.starts_with(&format!("{} (", grouped(&stats["total_allocs"])))
            && allocs.ends_with("/s)"),
        "{allocs}"
    );
    let temporary = cell(&dom, "temporary allocations");
    assert!(
        temporary.starts_with(&grouped(&stats["temporary_allocations"])),
        "{temporary}"
    );
    let peak = cell(&dom, "peak heap (bytes live at once)");
    assert!(
        peak.contains(&format!("({} B) at ", grouped(&stats["max_live_bytes"]))),
        "{peak}"
    );
    // What ran, for how long, and its resident set at most.
    assert_eq!(cell(&dom, "command line"), exe);
    assert_eq!(stats["processes"][0]["command"][0], exe.as_str());
    let duration = cell(&dom, "duration");
    assert!(
        ["ns", "µs", "ms", " s"]
            .iter()
            .any(|u| duration.ends_with(u)),
        "{duration}"
    );
    assert!(cell(&dom, "peak RSS (sampled)").ends_with(" B)"));
    // When and where: the date `date -u` gave before or after the
    // recording (a run across midnight has either), this host.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let recorded = cell(&dom, "recorded");
    assert!(
        recorded.starts_with(&before) || recorded.starts_with(&utc_date()),
        "{recorded}"
    );
    assert!(
        recorded.ends_with(&format!(" UTC on {}", host.trim())),
        "{recorded}"
    );
    // Every thread's allocations, in the threads table, add up to the
    // statistics' own.
    assert!(count(&dom, "threads", "data-rows") >= 1);
    let per_thread: u64 = stats["per_thread"]
        .as_object()
        .unwrap()
        .values()
        .map(|a| a["allocs"].as_u64().unwrap())
        .sum();
    assert_eq!(per_thread, stats["total_allocs"].as_u64().unwrap());
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.find("\"threads\":[[").expect("the threads' data");
    assert!(
        html[at..].contains(&format!("\"allocs\":{per_thread}")),
        "one thread, all of them"
    );
    // `tramp report` of the same trace writes the same page.
    let again = p(&dir, "again.html");
    ok(&tramp(&["report", &trace, "-o", &again]));
    assert_eq!(
        std::fs::read_to_string(&page).unwrap().replace(&page, ""),
        std::fs::read_to_string(&again).unwrap().replace(&again, "")
    );
}

#[test]
fn a_large_profile_is_merged_not_dropped_and_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&dir, "stacks");
    let (trace, page) = (p(&dir, "s.tpack"), p(&dir, "s.html"));
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    ok(&tramp(&["report", &trace, "-o", &page]));
    let data = page_data(&page);
    let merged = data["merged_stacks"].as_u64().unwrap();
    assert!(merged > 4000, "8192+ stacks, 4000 kept: {merged} merged");
    let allocs: u64 = data["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1][0].as_u64().unwrap())
        .sum();
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    assert_eq!(
        allocs,
        stats["total_allocs"].as_u64().unwrap(),
        "every allocation is in a row"
    );
    let dom = check_page(&page);
    // The merged row says what it is and where the full data are.
    assert!(
        dom.contains(&format!("[other stacks] is {merged} call stacks merged")),
        "the merged row is explained"
    );
}

#[test]
fn report_refuses_to_write_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "w.hatf");
    ok(&tramp(&["sample", "-o", &trace]));
    let before = std::fs::read(&trace).unwrap();
    let out = tramp(&["report", &trace, "-o", &trace]);
    assert!(!out.status.success());
    assert_eq!(std::fs::read(&trace).unwrap(), before);
}

/// The first screen's tables name the sites budgets.c is built to have:
/// 300 blocks of 1000 bytes from `cache_put` live at the peak and at the
/// end, 5000 temporary allocations from `churn`; the amounts are over
/// every stack through a site.
#[test]
fn the_top_tables_name_the_sites_that_used_the_memory() {
    let dir = tempfile::tempdir().unwrap();
    let page = budgets_page(&dir);
    let data = page_data(&page);
    let top = |cost: &str| {
        let t = data["tops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["cost"] == cost)
            .unwrap_or_else(|| panic!("no {cost} table"));
        let r = &t["rows"][0];
        (
            r["site"].as_str().unwrap().to_string(),
            r["amount"].as_u64().unwrap(),
        )
    };
    let (site, n) = top("peak");
    assert!(
        site.starts_with("cache_put (") && site.contains("budgets.c:"),
        "{site}"
    );
    assert_eq!(n, 300_000);
    let (site, n) = top("leaked");
    assert!(site.starts_with("cache_put ("), "{site}");
    assert_eq!(n, 300_000);
    for cost in ["temporary", "allocations"] {
        let (site, n) = top(cost);
        assert!(site.starts_with("churn ("), "{cost}: {site}");
        assert_eq!(n, 5000, "{cost}");
    }
    // Drawn: four tables, each row a link.
    let dom = browse(&page);
    assert_eq!(dom.matches("class=\"top\"").count(), 4);
    assert!(dom.matches("class=\"link\"").count() >= 4);
}

/// The page used as a person would, in Debian's Chromium driven by
/// Playwright (crates/cli/tests/browser/report.py): no console message; the
/// search counts frames too narrow to draw; a call-tree row folds and
/// unfolds; the filter keeps the paths through a match; a top table's row
/// shows its site in the flame graph with that cost. A screenshot of the
/// first screen is kept in target/test-artifacts/.
#[test]
fn the_page_works_in_chromium_driven_by_playwright() {
    let dir = tempfile::tempdir().unwrap();
    let page = budgets_page(&dir);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("report-first-screen.png");
    let v = common::browser(
        "report.py",
        &[page.as_ref(), shot.as_os_str(), "churn".as_ref()],
    );
    eprintln!("first screen drawn in {} ms", v["first_screen_ms"]);
    assert_eq!(v["console"], serde_json::json!([]), "{v}");
    assert!(v["matches"].as_u64().unwrap() >= 1, "{v}");
    assert!(
        v["matched_text"].as_str().unwrap().contains("frames match"),
        "{v}"
    );
    let (open, folded, unfolded) = (&v["rows_open"], &v["rows_folded"], &v["rows_unfolded"]);
    assert!(folded.as_u64() < open.as_u64(), "{v}");
    assert_eq!(unfolded, open, "{v}");
    assert_eq!(v["filtered_hit"], true, "{v}");
    assert!(v["filtered_rows"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(v["search_after_click"], v["first_top_site"], "{v}");
    assert_eq!(v["cost_after_click"], "peak", "{v}");
    let hover = v["hover"].as_str().unwrap();
    assert!(
        hover.contains("on average") && hover.contains("leaked"),
        "{hover}"
    );
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "the screenshot"
    );
    // The selected (root) frame's sizes are the statistics' histogram, its
    // lifetimes the page's own lifetime buckets (another analysis).
    let trace = p(&dir, "b.tpack");
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    // Each bucket by its power of two (the page's key), its count.
    let by_bucket = |buckets: &serde_json::Value, count: &str| -> serde_json::Value {
        let m: serde_json::Map<String, serde_json::Value> = buckets
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let k = 64 - b["high"].as_u64().unwrap().leading_zeros();
                (k.to_string(), b[count].clone())
            })
            .collect();
        serde_json::Value::Object(m)
    };
    assert_eq!(
        v["shape"][0],
        by_bucket(&stats["size_histogram"], "count"),
        "{v}"
    );
    let data = page_data(&page);
    let lives = by_bucket(&data["lifetimes"]["buckets"], "objects");
    assert_eq!(v["shape"][1], lives, "{v}");
    // The selected `main` frame's callers and callees are the frames
    // around it in the folded stacks of allocations (each stack once).
    let folded = ok(&tramp(&["stats", "--folded", "allocations", &trace]));
    let frame = v["calls_frame"].as_str().unwrap();
    let (mut callers, mut callees, mut through) =
        (serde_json::Map::new(), serde_json::Map::new(), 0);
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        let Some(p) = frames.iter().position(|f| *f == frame) else {
            continue;
        };
        through += n;
        let up = if p > 0 {
            frames[p - 1]
        } else {
            "(the stack's root)"
        };
        let down = frames
            .get(p + 1)
            .copied()
            .unwrap_or("(its own allocations)");
        for (m, k) in [(&mut callers, up), (&mut callees, down)] {
            let e = m.entry(k.to_string()).or_insert(serde_json::json!(0));
            *e = serde_json::json!(e.as_u64().unwrap() + n);
        }
    }
    assert!(through > 0, "{v}");
    assert_eq!(v["calls"][0]["through"], through, "{v}");
    assert_eq!(
        v["calls"][0]["rows"],
        serde_json::Value::Object(callers),
        "{v}"
    );
    assert_eq!(
        v["calls"][1]["rows"],
        serde_json::Value::Object(callees),
        "{v}"
    );
    // The drag chose a range of the grid: what the page says it made and
    // what was live at its end are `tramp stats --time`'s figures (the
    // trace's times count from its first record, at 0 in a recording).
    let r = &v["range"];
    assert_eq!(r["grid_t0"], 0, "{v}");
    let (from, to) = (r["from"].as_u64().unwrap(), r["to"].as_u64().unwrap());
    assert!(from < to, "{v}");
    let stats = |range: String| -> serde_json::Value {
        serde_json::from_str(&ok(&tramp(&["stats", "--json", "--time", &range, &trace]))).unwrap()
    };
    let made = stats(format!("{from}ns..{to}ns"));
    assert_eq!(r["allocations"], made["total_allocs"], "{v}");
    assert_eq!(r["bytes"], made["bytes_allocated"], "{v}");
    assert!(r["allocations"].as_u64().unwrap() > 0, "{v}");
    let before_end = stats(format!("0ns..{to}ns"));
    assert_eq!(r["live"], before_end["live_bytes_at_end"], "{v}");
    // The flame graph shows them, as the switch says.
    assert_eq!(r["made_total"], r["bytes"], "{v}");
    assert_eq!(r["made_cost"], "bytes made in range", "{v}");
    assert_eq!(r["live_total"], r["live"], "{v}");
    assert_eq!(r["live_cost"], "bytes live at range end", "{v}");
    assert_eq!(r["tables"], 3, "{v}");
    assert_eq!(r["cleared_cost"], "allocations", "{v}");
}

/// `report NEW --baseline OLD`: budgets.c keeping 300 blocks of 1000
/// bytes against the same program keeping 100: the leak grew by 200,000
/// bytes in `cache_put`, nothing shrank, and the page's totals are `tramp
/// diff`'s.
#[test]
fn a_baseline_makes_the_comparison_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::cc_program(dir.path(), "budgets.c", "budgets", &["-O1", "-g"]);
    let (old, new, page) = (
        p(&dir, "old.tpack"),
        p(&dir, "new.tpack"),
        p(&dir, "cmp.html"),
    );
    ok(&tramp(&["record", "-o", &old, "--", &exe, "100"]));
    ok(&tramp(&["record", "-o", &new, "--", &exe, "300"]));
    ok(&tramp(&[
        "report",
        &new,
        "--baseline",
        &old,
        "-o",
        &page,
        "--cost",
        "leaked",
    ]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<td>bytes leaked (live at exit)</td>"),
        "{html}"
    );
    assert!(
        html.contains("+195 KiB (200,000 B) (+"),
        "the leak's growth"
    );
    let grew = &html[html.find("<table id=\"grew\"").unwrap()..];
    let grew = &grew[..grew.find("</table>").unwrap()];
    assert!(grew.contains("data-rows=\"1\""), "{grew}");
    assert!(grew.contains("cache_put ("), "{grew}");
    assert!(html.contains("<table id=\"shrank\" data-rows=\"0\">"));
    assert!(html.contains("<svg"), "the differential flame graph");
    let diff: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["diff", "--json", &old, &new]))).unwrap();
    assert_eq!(diff["change"]["leaked"], 200_000);
    assert_eq!(diff["change"]["allocations"], 200);
    assert!(
        html.contains("<td class=\"up\">+200 ("),
        "the allocations' change"
    );
    browse(&page);
}

/// The recording names what ran: the command line with its arguments as
/// given (`tramp:command`, stats' `processes`), and a process that exec'd
/// as two images of one pid, the shell's and the program's.
#[test]
fn the_command_line_and_the_exec_are_in_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::cc_program(dir.path(), "budgets.c", "budgets", &["-O1", "-g"]);
    let trace = common::path_in(&dir, "c.tpack");
    common::ok(&common::tramp(&[
        "record",
        "-o",
        &trace,
        "--",
        &exe,
        "3",
        "two words",
        "",
    ]));
    let stats: serde_json::Value =
        serde_json::from_str(&common::ok(&common::tramp(&["stats", "--json", &trace]))).unwrap();
    assert_eq!(
        stats["processes"][0]["command"],
        serde_json::json!([exe, "3", "two words", ""])
    );
    let text = common::ok(&common::tramp(&["stats", &trace]));
    assert!(text.contains(&format!("{exe} 3 'two words' ''")), "{text}");

    let script = format!("exec {exe} 2");
    common::ok(&common::tramp(&[
        "record", "-o", &trace, "--", "/bin/sh", "-c", &script,
    ]));
    let stats: serde_json::Value =
        serde_json::from_str(&common::ok(&common::tramp(&["stats", "--json", &trace]))).unwrap();
    let images = stats["processes"].as_array().unwrap();
    assert_eq!(images.len(), 2, "{images:?}");
    assert_eq!(
        images[0]["pid"], images[1]["pid"],
        "one process, two programs"
    );
    assert_eq!(
        images[0]["command"],
        serde_json::json!(["/bin/sh", "-c", script])
    );
    assert_eq!(images[1]["command"], serde_json::json!([exe, "2"]));
}

/// The page's thread filter, in Chromium driven by Playwright
/// (crates/cli/tests/browser/threads.py), on four threads handing objects
/// over: each thread's allocations and bytes in the flame graph are `tramp
/// stats`' per-thread counts.
#[test]
fn the_thread_filter_shows_what_each_thread_allocated() {
    let (dir, trace) = common::handoff_recording();
    let page = p(&dir, "h.html");
    ok(&tramp(&["report", &trace, "-o", &page]));
    let v = common::browser("threads.py", &[page.as_ref()]);
    assert_eq!(v["console"], serde_json::json!([]), "{v}");
    assert_eq!(v["every_thread_cost"], "allocations", "{v}");
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    let per_thread = stats["per_thread"].as_object().unwrap();
    let shown = v["threads"].as_object().unwrap();
    assert_eq!(shown.len(), per_thread.len(), "{v}");
    for (tid, a) in per_thread {
        let want = serde_json::json!([a["allocs"], a["bytes_allocated"]]);
        assert_eq!(shown[tid], want, "thread {tid}: {v}");
    }
}
