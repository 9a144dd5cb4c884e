//! `--time`, `--thread` and `--pid` (docs/select.md) on a recording of
//! handoff.c (two producer threads, two consumers freeing what the
//! producers allocated), each checked against the trace's dump filtered by
//! hand here.

mod common;
use common::*;

use std::collections::BTreeSet;

/// One record line of `tramp dump`: its kind, thread and time.
struct Line {
    text: String,
    kind: String,
    thread: Option<u64>,
    time: Option<u64>,
}

fn field(line: &str, name: &str) -> Option<u64> {
    let at = line.find(&format!(" {name}="))? + name.len() + 2;
    let v: String = line[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

fn lines(dump: &str) -> Vec<Line> {
    dump.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| Line {
            text: l.to_string(),
            kind: l.split(' ').next().unwrap().to_string(),
            thread: field(l, "thread"),
            time: field(l, "time"),
        })
        .collect()
}

/// The recording, its dump's lines and the test's directory.
fn recording() -> (tempfile::TempDir, String, Vec<Line>) {
    let (dir, trace) = handoff_recording();
    let dump = ok(&tramp(&["dump", &trace]));
    (dir, trace, lines(&dump))
}

fn stats(trace: &str, select: &[&str]) -> serde_json::Value {
    let mut args = vec!["stats", "--json", trace];
    args.extend_from_slice(select);
    serde_json::from_str(&ok(&tramp(&args))).unwrap()
}

fn count(lines: &[&Line], kind: &str) -> u64 {
    lines.iter().filter(|l| l.kind == kind).count() as u64
}

/// The lines a selection of threads `ts` holds, worked out on the text: the
/// thread's own records, and another thread's free of a block it holds, or
/// realloc moving one (then the alloc and free lines that realloc implies,
/// the next on its thread at its new and old address).
fn followed<'a>(events: &[&'a Line], ts: &[u64]) -> Vec<&'a Line> {
    let mut own = std::collections::HashSet::new();
    let mut implied: Vec<(u64, &str, u64)> = Vec::new();
    let mut out = Vec::new();
    for l in events {
        let (addr, old, new) = (
            field(&l.text, "address"),
            field(&l.text, "old"),
            field(&l.text, "new"),
        );
        let th = l.thread.unwrap_or(ts[0]);
        let pass = if ts.contains(&th) {
            match l.kind.as_str() {
                "alloc" => own.insert(addr.unwrap()),
                "free" => own.remove(&addr.unwrap()),
                "realloc/alloc-free" => own.remove(&old.unwrap()) || own.insert(new.unwrap()),
                _ => true,
            };
            true
        } else {
            match l.kind.as_str() {
                "free" => {
                    let a = addr.unwrap();
                    let i = implied.iter().position(|e| *e == (th, "free", a));
                    own.remove(&a) || i.map(|i| implied.remove(i)).is_some()
                }
                "alloc" => {
                    let i = implied
                        .iter()
                        .position(|e| *e == (th, "alloc", addr.unwrap()));
                    i.map(|i| implied.remove(i)).is_some()
                }
                "realloc/alloc-free" if own.remove(&old.unwrap()) => {
                    own.insert(new.unwrap());
                    implied.push((th, "free", old.unwrap()));
                    implied.push((th, "alloc", new.unwrap()));
                    true
                }
                "realloc/no-alloc" => own.contains(&field(&l.text, "address").or(old).unwrap_or(0)),
                _ => false,
            }
        };
        if pass {
            out.push(*l);
        }
    }
    out
}

/// No selection of a correct program shows an anomaly.
fn no_anomalies(v: &serde_json::Value) {
    for k in [
        "frees_of_unknown_addresses",
        "double_frees",
        "allocs_of_live_addresses",
    ] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
}

#[test]
fn selections_count_what_the_dump_filtered_by_hand_holds() {
    let (_dir, trace, all) = recording();
    let events: Vec<&Line> = all.iter().filter(|l| l.kind != "comment").collect();

    // Threads: each thread's own allocations and frees; a consumer's frees
    // of producers' blocks are frees of blocks allocated outside the
    // selection, never anomalies.
    let threads: BTreeSet<u64> = events.iter().filter_map(|l| l.thread).collect();
    assert!(threads.len() >= 5, "{threads:?}");
    let mut outside = 0;
    for t in &threads {
        let mine = followed(&events, &[*t]);
        let v = stats(&trace, &["--thread", &t.to_string()]);
        assert_eq!(v["selection"], format!("thread={t}"));
        assert_eq!(v["total_allocs"], count(&mine, "alloc"), "thread {t}");
        assert_eq!(v["total_frees"], count(&mine, "free"), "thread {t}");
        no_anomalies(&v);
        outside += v["frees_allocated_outside_selection"].as_u64().unwrap();
    }
    assert!(
        outside > 30_000,
        "consumers free producers' blocks: {outside}"
    );

    // Two threads at once select both.
    // A producer and a consumer (threads start in order: main, two
    // producers, two consumers).
    let two: Vec<u64> = threads.iter().copied().skip(2).take(2).collect();
    let both = followed(&events, &two);
    let v = stats(&trace, &["--thread", &format!("{},{}", two[0], two[1])]);
    assert_eq!(v["total_allocs"], count(&both, "alloc"));
    assert_eq!(v["total_frees"], count(&both, "free"));
    no_anomalies(&v);

    // Times: from the first timed record, by percent and by nanoseconds.
    let times: Vec<u64> = events.iter().filter_map(|l| l.time).collect();
    let first = times[0];
    let span = times.iter().max().unwrap() - first;
    let (lo, hi) = (
        (span as f64 * 0.25).round() as u64,
        (span as f64 * 0.75).round() as u64,
    );
    let inside: Vec<&Line> = events
        .iter()
        .copied()
        .filter(|l| {
            l.time
                .is_some_and(|t| (first + lo..first + hi).contains(&t))
        })
        .collect();
    assert!(count(&inside, "alloc") > 1000 && count(&inside, "alloc") < count(&events, "alloc"));
    let mut live_before = std::collections::HashSet::new();
    let mut before_freed = 0u64;
    for l in &events {
        let Some(t) = l.time else { continue };
        let addr = field(&l.text, "address");
        if t < first + lo {
            match (l.kind.as_str(), addr) {
                ("alloc", Some(a)) => {
                    live_before.insert(a);
                }
                ("free", Some(a)) => {
                    live_before.remove(&a);
                }
                _ => {}
            }
        } else if t < first + hi && l.kind == "free" && addr.is_some_and(|a| live_before.remove(&a))
        {
            before_freed += 1;
        }
    }
    for range in ["25%..75%".to_string(), format!("{lo}ns..{hi}ns")] {
        let v = stats(&trace, &["--time", &range]);
        assert!(v["selection"].as_str().unwrap().starts_with("time="), "{v}");
        assert_eq!(v["total_allocs"], count(&inside, "alloc"), "{range}");
        assert_eq!(v["total_frees"], count(&inside, "free"), "{range}");
        assert_eq!(
            v["total_reallocs"],
            count(&inside, "realloc/alloc-free") + count(&inside, "realloc/no-alloc"),
            "{range}"
        );
        no_anomalies(&v);
        // Frees in the range of blocks allocated before it, worked out on
        // the text (how many there are depends on the threads' timing);
        // a realloc in the range may end such a block too.
        let got = v["frees_allocated_outside_selection"].as_u64().unwrap();
        let reallocs = v["total_reallocs"].as_u64().unwrap();
        assert!(
            (before_freed..=before_freed + reallocs).contains(&got),
            "{range}: {got}, by hand {before_freed} (+ up to {reallocs} reallocs)"
        );
    }

    // Small blocks, most wholly outside the range: skipped by their
    // summaries without changing a number (the whole-block file reads
    // every record).
    let small = format!("{trace}.small.tpack");
    ok(&tramp(&[
        "convert",
        &trace,
        &small,
        "--policy",
        "zstd,block=2000",
    ]));
    for range in ["25%..75%", "1ms..3ms", "90%.."] {
        let want = stats(&trace, &["--time", range]);
        assert_eq!(stats(&small, &["--time", range]), want, "{range}");
    }

    // The process: its own pid selects everything; another is refused.
    let pid = all
        .iter()
        .find_map(|l| l.text.strip_prefix("comment \"tramp:process pid="))
        .map(|r| r.split(' ').next().unwrap().to_string())
        .expect("a process note");
    let whole = stats(&trace, &[]);
    assert_eq!(stats(&trace, &["--pid", &pid]), whole);
    let other = tramp(&["stats", &trace, "--pid", "1"]);
    assert!(!other.status.success());
    assert!(
        stderr(&other).contains(&format!(
            "--pid 1: no such process in the trace (it holds {pid})"
        )),
        "{}",
        stderr(&other)
    );
}

/// `convert --time` cuts a trace: the cut's records are the dump's lines
/// in the range (and the comments, with the selection's note first).
#[test]
fn convert_cuts_a_time_range_into_a_smaller_trace() {
    let (dir, trace, all) = recording();
    let times: Vec<u64> = all.iter().filter_map(|l| l.time).collect();
    let first = times[0];
    // A quarter to a half of the run, in whole microseconds (the threads'
    // start depends on the machine's load, so no fixed range is sure to
    // hold records).
    let span = times.iter().max().unwrap() - first;
    let (lo, hi) = (span / 4 / 1000 * 1000, span / 2 / 1000 * 1000);
    let secs = |ns: u64| {
        let frac = format!("{:09}", ns % 1_000_000_000);
        match frac.trim_end_matches('0') {
            "" => format!("{}s", ns / 1_000_000_000),
            f => format!("{}.{f}s", ns / 1_000_000_000),
        }
    };
    let note = format!("time={}..{}", secs(lo), secs(hi));
    let cut = path_in(&dir, "cut.tpack");
    let range = format!("{}us..{}us", lo / 1000, hi / 1000);
    ok(&tramp(&["convert", "--time", &range, &trace, &cut]));
    let got = lines(&ok(&tramp(&["dump", &cut])));
    let want: Vec<&str> = all
        .iter()
        .filter(|l| {
            // Comments pass, but for samples of a moment (`tramp:rss
            // time=…`), which pass in the range as events do.
            (l.kind == "comment" && l.time.is_none())
                || l.time
                    .is_some_and(|t| (first + lo..first + hi).contains(&t))
        })
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(got[0].text, format!("comment \"tramp:selected {note}\""));
    let got: Vec<&str> = got[1..].iter().map(|l| l.text.as_str()).collect();
    assert_eq!(got, want);
    assert!(want.len() > 100, "{} records in the cut", want.len());
    // The report of the cut says what it was cut to, as stats does.
    let html = path_in(&dir, "cut.html");
    ok(&tramp(&["report", &cut, "-o", &html]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&format!(r#""selection (docs/select.md)","value":"{note}""#)));
    let v = stats(&cut, &[]);
    assert_eq!(v["selection"], note);
}

#[test]
fn bad_ranges_are_refused_saying_why() {
    let (_dir, trace, _) = recording();
    for (range, why) in [
        ("5s..2s", "the range is empty"),
        ("2x..3s", "unknown unit `x`"),
        ("..", "no time given"),
        ("150%", "not between 0% and 100%"),
    ] {
        let out = tramp(&["stats", &trace, "--time", range]);
        assert!(!out.status.success(), "{range}");
        assert!(stderr(&out).contains(why), "{range}: {}", stderr(&out));
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["stats", "-", "--time", "0%..50%"])
        .stdin(std::fs::File::open(&trace).unwrap())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("name a file, not stdin"),
        "{}",
        stderr(&out)
    );
}

/// `cachesim` of a selection simulates what `convert` cuts (the cut is
/// held to the dump filtered by hand above); a libCacheSim layout, which
/// is simulated as it lies, refuses a selection saying how to cut it.
#[test]
fn cachesim_simulates_the_selected_part() {
    let (dir, trace, all) = recording();
    let thread = all
        .iter()
        .filter_map(|l| field(&l.text, "thread"))
        .max()
        .unwrap();
    let sim = |t: &str, select: &[&str]| -> serde_json::Value {
        let mut args = vec!["cachesim", "-p", "lru,fifo", "--size", "16", "--json", t];
        args.extend_from_slice(select);
        serde_json::from_str(&ok(&tramp(&args))).unwrap()
    };
    let whole = sim(&trace, &[]);
    let t = thread.to_string();
    // A range in nanoseconds inside the run, whatever its length here
    // (a fixed 1ms..3ms found no event on a loaded machine).
    let times: Vec<u64> = all.iter().filter_map(|l| l.time).collect();
    let span = times.iter().max().unwrap() - times.iter().min().unwrap();
    let ns = format!("{}ns..{}ns", span / 10, span * 3 / 10);
    for select in [
        &["--time", ns.as_str()][..],
        &["--time", "0%..40%"],
        &["--thread", &t],
    ] {
        let cut = path_in(&dir, "cut.tpack");
        let mut args = vec!["convert"];
        args.extend_from_slice(select);
        args.extend_from_slice(&[&trace, &cut]);
        ok(&tramp(&args));
        let got = sim(&trace, select);
        assert_eq!(got, sim(&cut, &[]), "{select:?}");
        let n = got["requests"].as_u64().unwrap();
        assert!(
            n > 0 && n < whole["requests"].as_u64().unwrap(),
            "{select:?}: {n}"
        );
        std::fs::remove_file(&cut).unwrap();
    }
    let csv = path_in(&dir, "r.csv");
    std::fs::write(&csv, "1,10,100\n2,11,100\n3,10,100\n").unwrap();
    let out = tramp(&["cachesim", &csv, "--size", "2", "--time", "0..1"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("a libCacheSim layout (csv)"),
        "{}",
        stderr(&out)
    );
}

/// `tramp run` gives the script the selected records: a script counting
/// allocations and frees counts what the dump filtered by hand holds.
#[test]
fn run_gives_the_script_the_selected_records() {
    let (dir, trace, all) = recording();
    let events: Vec<&Line> = all.iter().filter(|l| l.kind != "comment").collect();
    let script = path_in(&dir, "count.tramp");
    std::fs::write(
        &script,
        "preprocess begin set a = 0; set f = 0; end
         procedure main begin
           if (RECORD_TYPE == alloc) then set a = a + 1; endif
           if (RECORD_TYPE == free) then set f = f + 1; endif
         end
         postprocess begin echo a, f; end",
    )
    .unwrap();
    let run = |select: &[&str]| {
        let mut args = vec!["run", &script, &trace];
        args.extend_from_slice(select);
        ok(&tramp(&args))
    };
    let line = |l: &[&Line]| format!("{} {}\n", count(l, "alloc"), count(l, "free"));
    assert_eq!(run(&[]), line(&events));

    let times: Vec<u64> = events.iter().filter_map(|l| l.time).collect();
    let (first, last) = (times[0], *times.iter().max().unwrap());
    let hi = ((last - first) as f64 * 0.5).round() as u64;
    let inside: Vec<&Line> = events
        .iter()
        .copied()
        .filter(|l| l.time.is_some_and(|t| t < first + hi))
        .collect();
    assert!(count(&inside, "alloc") > 1000 && inside.len() < events.len());
    assert_eq!(run(&["--time", "..50%"]), line(&inside));
    assert_eq!(run(&["--time", &format!("0..{hi}ns")]), line(&inside));

    let thread = events.iter().filter_map(|l| l.thread).max().unwrap();
    let mine = followed(&events, &[thread]);
    assert_eq!(run(&["--thread", &thread.to_string()]), line(&mine));
}

/// `tramp verify` checks a whole PTF trace: its rules (objects created
/// before use, deletes of existing objects) do not hold of a part, so it
/// takes no selection (docs/select.md).
#[test]
fn verify_takes_no_selection() {
    let out = tramp(&["verify", "x.ptf", "--time", "0..1s"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unexpected argument '--time'"),
        "{}",
        stderr(&out)
    );
}
