//! One run, one file (issue 51): a recording of a shell script that
//! starts three programs is one tpack holding four processes, each
//! process's statistics those of a recording of its program alone; a
//! process that exec'd is two images, told apart; `convert --split` gives
//! back a trace per process; `stats` lists them and names the one that
//! used the most.

mod common;
use common::{cc_program, listing, ok, path_in, stderr, tramp};

use serde_json::Value;

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(out)))
}

/// The heap figures of a statistics report (what does not depend on
/// timing: the comments a recording writes, RSS samples and waits, do).
fn heap(v: &Value) -> Vec<(String, Value)> {
    [
        "malloc_calls",
        "realloc_calls",
        "free_calls",
        "total_allocs",
        "total_frees",
        "bytes_allocated",
        "max_live_objects",
        "max_live_bytes",
        "live_objects_at_end",
        "live_bytes_at_end",
        "temporary_allocations",
        "frees_of_unknown_addresses",
        "double_frees",
        "allocs_of_live_addresses",
        "size_histogram",
    ]
    .iter()
    .map(|k| (k.to_string(), v[k].clone()))
    .collect()
}

#[test]
fn a_scripts_run_is_one_file_whose_processes_are_each_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sites = cc_program(dir.path(), "sites.c", "sites", &["-O1", "-g"]);
    let churn = cc_program(dir.path(), "churn.c", "churn", &["-O1", "-g", "-pthread"]);
    let data = path_in(&dir, "data.txt");
    std::fs::write(&data, "b\na\nc\n".repeat(2000)).unwrap();
    // The script forks each program; `env` execs churn (two images of one
    // pid); the last line is a builtin, so no shell execs its last command.
    let script = path_in(&dir, "run.sh");
    std::fs::write(
        &script,
        format!("{sites}\nenv {churn} 1 3000\ncat {data} >/dev/null\n: done\n"),
    )
    .unwrap();
    let run = path_in(&dir, "run.tpack");
    let out = tramp(&["record", "--stats", "-o", &run, "--", "sh", &script]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("wrote the run's 4 processes into one file"),
        "{err}"
    );
    // One file: the children's traces were joined into it and removed.
    let files: Vec<String> = listing(dir.path())
        .into_iter()
        .filter(|f| f.ends_with(".tpack"))
        .collect();
    assert_eq!(files, ["run.tpack"]);
    let stats = json(&tramp(&["stats", "--json", &run]));
    let rows = stats["processes"].as_array().unwrap();
    let programs: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| (r["program"].as_str().unwrap(), r["exec"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        programs,
        [
            ("sh", 0),
            ("sites", 0),
            ("env", 0),
            ("churn", 1),
            ("cat", 0)
        ],
        "{stats}"
    );
    let shell = rows[0]["pid"].as_u64().unwrap();
    let pids: std::collections::BTreeSet<u64> =
        rows.iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 4, "four processes: {stats}");
    for r in &rows[1..] {
        assert_eq!(r["parent"].as_u64(), Some(shell), "{r}");
    }
    assert_eq!(rows[0]["command"], serde_json::json!(["sh", script]));
    assert_eq!(rows[3]["command"], serde_json::json!([churn, "1", "3000"]));
    assert_eq!(rows[3]["pid"], rows[2]["pid"], "env exec'd churn");
    // On the run's one time axis the script's programs ran one after
    // another, each within the shell's run (ns since its first event).
    let at = |r: &Value, k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k}: {r}"));
    for w in rows[1..].windows(2) {
        assert!(
            at(&w[0], "run_end_ns") <= at(&w[1], "run_start_ns"),
            "{stats}"
        );
    }
    assert_eq!(at(&rows[0], "run_start_ns"), 0, "the shell started first");
    // The total is the rows' sum; the largest is named.
    let sum: u64 = rows.iter().map(|r| r["records"].as_u64().unwrap()).sum();
    assert_eq!(stats["total"]["records"].as_u64(), Some(sum));
    let most = stats["most"].as_u64().unwrap() as usize;
    let peak = |r: &Value| r["max_live_bytes"].as_u64().unwrap();
    assert!(rows.iter().all(|r| peak(r) <= peak(&rows[most])));
    let text = ok(&tramp(&["stats", &run]));
    assert!(text.contains("churn (exec 1)"), "{text}");
    assert!(
        text.contains(&format!("used the most: pid {}", rows[most]["pid"])),
        "{text}"
    );
    // Each program's statistics in the run are those of it recorded alone.
    let alone = |cmd: &[&str], name: &str| {
        let t = path_in(&dir, name);
        let mut args = vec!["record", "-o", &t, "--"];
        args.extend_from_slice(cmd);
        ok(&tramp(&args));
        json(&tramp(&["stats", "--json", &t]))
    };
    let pid = |i: usize| rows[i]["pid"].to_string();
    let in_run = |i: usize| json(&tramp(&["stats", "--json", "--pid", &pid(i), &run]));
    assert_eq!(heap(&in_run(1)), heap(&alone(&[&sites], "sites.tpack")));
    assert_eq!(heap(&in_run(4)), heap(&alone(&["cat", &data], "cat.tpack")));
    // env's pid is two images: the second is churn's alone.
    let env = in_run(2);
    let churn_alone = alone(&[&churn, "1", "3000"], "churn.tpack");
    let churn_row = &env["processes"][1];
    for k in [
        "malloc_calls",
        "free_calls",
        "bytes_allocated",
        "max_live_bytes",
    ] {
        assert_eq!(churn_row[k], churn_alone[k], "{k}");
    }
    // The profile jobs take the image that used the most, and say so.
    let sites_out = tramp(&["stats", "--sites", "--json", &run]);
    assert!(
        stderr(&sites_out).contains("the trace holds 5 images"),
        "{}",
        stderr(&sites_out)
    );
    assert_eq!(
        json(&sites_out)["max_live_bytes"],
        rows[most]["max_live_bytes"]
    );
    // The run's page, in Chromium: a line per image in the processes'
    // chart, the one that used the most shown first, and the switch
    // re-draws the page from each image (its command line, its
    // allocations as `tramp stats` counts them).
    let page = path_in(&dir, "run.html");
    ok(&tramp(&["report", &run, "-o", &page]));
    let v = common::browser("run.py", &[page.as_ref()]);
    assert_eq!(v["console"], serde_json::json!([]), "{v}");
    assert_eq!(v["lanes"], 5, "{v}");
    assert_eq!(v["shown_first"], most.to_string(), "{v}");
    let pages = v["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 5, "{v}");
    for (i, row) in rows.iter().enumerate() {
        let words: Vec<String> = row["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect();
        let page = &pages[i];
        assert_eq!(
            page["command"].as_str(),
            Some(words.join(" ").as_str()),
            "{v}"
        );
        assert!(
            page["label"]
                .as_str()
                .unwrap()
                .starts_with(&format!("pid {}", row["pid"]))
        );
        if i != 2 && i != 3 {
            assert_eq!(page["allocations"], in_run(i)["total_allocs"], "{v}");
        }
    }
    assert!(
        pages[3]["label"]
            .as_str()
            .unwrap()
            .ends_with("churn (exec 1)"),
        "{v}"
    );
    assert_eq!(pages[3]["allocations"], churn_alone["total_allocs"], "{v}");
    // Budgets hold for every process: the shell's own leak fails a
    // --max-leaked 0 though the image that used the most is another; a
    // budget every image meets passes.
    let over = tramp(&["check", &run, "--max-leaked", "0"]);
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    let said = format!("{}{}", String::from_utf8_lossy(&over.stdout), stderr(&over));
    assert!(said.contains(&format!("pid {shell} sh")), "{said}");
    assert_ne!(most, 0, "the shell is not the image that used the most");
    ok(&tramp(&[
        "check",
        &run,
        "--max-leaked",
        "1GiB",
        "--max-peak",
        "1GiB",
    ]));
    // Split, each process's trace is its records: the same statistics as
    // the run's --pid, named by program and pid.
    let split = tramp(&["convert", "--split", &run, &path_in(&dir, "part.tpack")]);
    assert!(split.status.success(), "{}", stderr(&split));
    for i in [0, 1, 4] {
        let name = format!(
            "part.{}.{}.tpack",
            rows[i]["program"].as_str().unwrap(),
            pid(i)
        );
        let part = json(&tramp(&["stats", "--json", &path_in(&dir, &name)]));
        assert_eq!(part, in_run(i), "{name}");
    }
    let exec = format!("part.churn.{}.tpack", pid(2));
    assert_eq!(
        json(&tramp(&["stats", "--json", &path_in(&dir, &exec)])),
        env
    );
    // A trace of no process is refused, and writes nothing.
    let hatf = path_in(&dir, "plain.hatf.txt");
    let plain = "# tramp hatf-text 1\nalloc size=8 address=0x10 thread=0 heap=0 time=1\n";
    std::fs::write(&hatf, plain).unwrap();
    let refused = tramp(&["convert", "--split", &hatf, &path_in(&dir, "p.hatf")]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("names no process"),
        "{}",
        stderr(&refused)
    );
    assert!(!listing(dir.path()).iter().any(|f| f.starts_with("p.")));
}
