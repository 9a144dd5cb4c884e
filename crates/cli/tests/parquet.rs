//! `tramp export --parquet` (issue 36): the tables read back by the
//! `parquet` crate's own reader and queried by DuckDB (installed by
//! setup.sh from PyPI), their counts and totals equal to `tramp stats`.
//! docs/formats/parquet.md.

use std::process::Command;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

mod common;
use common::{ok, path_in as p, tramp};

/// `fixtures/heap/NAME.c` built and recorded: the trace.
fn recorded(dir: &tempfile::TempDir, name: &str) -> String {
    let exe = common::build_heap_fixture(dir, name);
    let trace = p(dir, &format!("{name}.tpack"));
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    trace
}

/// DuckDB's answer to `sql`, one row of numbers (or NULL as -1).
fn duckdb(sql: &str) -> Vec<i64> {
    let script = format!(
        "import duckdb\nrow = duckdb.sql({sql:?}).fetchall()[0]\nprint(' '.join('-1' if v is None else str(int(v)) for v in row))"
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 with duckdb (setup.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn tables_read_back_and_answer_as_tramp_stats() {
    let dir = tempfile::tempdir().unwrap();
    let trace = recorded(&dir, "temporaries");
    let out = p(&dir, "pq");
    let report: serde_json::Value = serde_json::from_str(&ok(&tramp(&[
        "export",
        "--parquet",
        &out,
        &trace,
        "--json",
    ])))
    .unwrap();
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--json", &trace]))).unwrap();
    let s = |k: &str| stats[k].as_i64().unwrap();
    // Each table is one file named after the trace, read back by the
    // parquet crate: its rows as the report says.
    for t in ["events", "stacks", "processes"] {
        let file = format!("{out}/{t}/temporaries.parquet");
        let r = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
        let rows = r.metadata().file_metadata().num_rows();
        assert_eq!(rows, report[t]["rows"].as_i64().unwrap(), "{t}");
        assert!(rows > 0, "{t}");
    }
    // The process row, through the record API.
    let file = format!("{out}/processes/temporaries.parquet");
    let r = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let row = r.get_row_iter(None).unwrap().next().unwrap().unwrap();
    let field = |name: &str| {
        row.get_column_iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, f)| f.clone())
            .unwrap()
    };
    assert_eq!(field("records"), Field::Long(s("records")));
    assert_eq!(field("allocations"), Field::Long(s("total_allocs")));
    assert_eq!(field("complete"), Field::Int(1));
    // DuckDB over the folders, as a user would query them.
    let events = format!("'{out}/events/*.parquet'");
    let got = duckdb(&format!(
        "SELECT count(*) FILTER (WHERE kind = 'alloc'), sum(size) FILTER (WHERE kind = 'alloc'), \
         count(lifetime), count(*) FILTER (WHERE kind = 'free' AND object IS NULL) FROM {events}"
    ));
    assert_eq!(
        got,
        vec![
            s("total_allocs"),
            s("bytes_allocated"),
            s("total_frees") - s("frees_of_unknown_addresses"),
            s("frees_of_unknown_addresses"),
        ]
    );
    // What is live at the end: allocated, never freed.
    let got = duckdb(&format!(
        "SELECT count(*), sum(size) FROM {events} a WHERE kind = 'alloc' AND object NOT IN \
         (SELECT object FROM {events} WHERE kind IN ('free', 'displaced') AND object IS NOT NULL)"
    ));
    assert_eq!(got, vec![s("live_objects_at_end"), s("live_bytes_at_end")]);
    // Top stack by bytes, its innermost frame named: the same bytes as the
    // largest site of `tramp stats --sites`.
    let sites: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", "--sites", "--json", &trace]))).unwrap();
    let top = &sites["sites"]["by_bytes"][0];
    let top_bytes = top["bytes"].as_i64().unwrap();
    let got = duckdb(&format!(
        "SELECT sum(size) b FROM {events} WHERE kind = 'alloc' GROUP BY stack ORDER BY b DESC LIMIT 1"
    ));
    assert_eq!(got, vec![top_bytes]);
    // Its innermost frame's line, joined from the stacks table.
    let got = duckdb(&format!(
        "SELECT s.line FROM '{out}/stacks/*.parquet' s JOIN \
         (SELECT stack, sum(size) b FROM {events} WHERE kind = 'alloc' GROUP BY stack ORDER BY b DESC LIMIT 1) t \
         USING (stack) WHERE s.depth = 0"
    ));
    assert_eq!(got, vec![top["stack"][0]["line"].as_i64().unwrap()]);
}

#[test]
fn a_second_trace_adds_its_own_files_and_the_folder_reads_as_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let a = recorded(&dir, "temporaries");
    let b = recorded(&dir, "grows");
    let out = p(&dir, "pq");
    ok(&tramp(&["export", "--parquet", &out, &a]));
    ok(&tramp(&["export", "--parquet", &out, &b]));
    let allocs = |t: &str| -> i64 {
        let v: serde_json::Value =
            serde_json::from_str(&ok(&tramp(&["stats", "--json", t]))).unwrap();
        v["total_allocs"].as_i64().unwrap()
    };
    let got = duckdb(&format!(
        "SELECT count(*) FILTER (WHERE kind = 'alloc'), (SELECT count(*) FROM '{out}/processes/*.parquet') \
         FROM '{out}/events/*.parquet'"
    ));
    assert_eq!(got, vec![allocs(&a) + allocs(&b), 2]);
}

#[test]
fn a_trace_without_heap_events_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let din = p(&dir, "t.din");
    std::fs::write(&din, "0 10\n1 20\n").unwrap();
    let out = p(&dir, "pq");
    let r = tramp(&["export", "--parquet", &out, &din]);
    assert!(!r.status.success());
    // Nothing left, not even the table directories (issue 48, case 2).
    assert!(
        !std::path::Path::new(&out).exists(),
        "{:?}",
        walk(std::path::Path::new(&out))
    );
}

#[test]
fn a_trace_whose_files_an_earlier_export_wrote_is_refused_naming_it() {
    // Issue 48, case 2: two traces with the same stem (from two
    // directories) exported into one DIR; the second replaced the first's
    // tables silently.
    let dir = tempfile::tempdir().unwrap();
    let a = recorded(&dir, "temporaries");
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let b = p(&dir, "other/temporaries.tpack");
    std::fs::copy(recorded(&dir, "grows"), &b).unwrap();
    let out = p(&dir, "pq");
    ok(&tramp(&["export", "--parquet", &out, &a]));
    let before: Vec<Vec<u8>> = walk(std::path::Path::new(&out))
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    let r = tramp(&["export", "--parquet", &out, &b]);
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("temporaries.parquet exists"), "{err}");
    assert!(err.contains(&format!("(the export of {a})")), "{err}");
    let after: Vec<Vec<u8>> = walk(std::path::Path::new(&out))
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    assert_eq!(before, after, "the earlier export's files changed");
}

#[test]
fn an_interrupted_export_leaves_no_directory() {
    // Issue 48, case 2: the input a FIFO nobody writes, so the export
    // waits with its tables' directories made; SIGINT must take them away.
    let dir = tempfile::tempdir().unwrap();
    let fifo = p(&dir, "in.hatf");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = p(&dir, "pq");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["export", "--parquet", &out, &fifo])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let made = std::path::Path::new(&out).join("events");
    let t0 = std::time::Instant::now();
    while !made.exists() && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(made.exists(), "the export did not start");
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130));
    assert!(
        !std::path::Path::new(&out).exists(),
        "{:?}",
        walk(std::path::Path::new(&out))
    );
}

/// Files under `dir` (none if it does not exist).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flat_map(|e| {
        let p = e.unwrap().path();
        if p.is_dir() { walk(&p) } else { vec![p] }
    })
    .collect()
}
