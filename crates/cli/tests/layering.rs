//! The layering stays true: each crate's tramp dependencies, as
//! `cargo metadata` reads them from the manifests, are those the crate
//! table of docs/architecture.md gives (issue 33).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The workspace's packages as `cargo metadata` describes them.
fn packages() -> Vec<serde_json::Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["packages"].as_array().unwrap().clone()
}

/// `tramp-x` → its tramp dependencies (short names), from the manifests.
fn from_cargo() -> BTreeMap<String, BTreeSet<String>> {
    let mut map = BTreeMap::new();
    for p in &packages() {
        // The product's crates (bench/ holds benchmark binaries).
        if !p["manifest_path"].as_str().unwrap().contains("/crates/") {
            continue;
        }
        let name = p["name"].as_str().unwrap();
        let Some(short) = name.strip_prefix("tramp-") else {
            continue;
        };
        let deps = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            // Normal dependencies (not dev- or build-).
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str()?.strip_prefix("tramp-"))
            .map(str::to_string)
            .collect();
        map.insert(short.to_string(), deps);
    }
    map
}

/// The same, from docs/architecture.md's crate table.
fn from_docs() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md"),
    )
    .unwrap();
    let mut map = BTreeMap::new();
    for line in doc.lines() {
        let Some(rest) = line.strip_prefix("| `tramp-") else {
            continue;
        };
        let (name, rest) = rest.split_once('`').unwrap();
        // A row continuing another crate's (`tramp-heap` also owns …).
        if !rest.starts_with(" |") {
            continue;
        }
        let cells: Vec<&str> = rest.split(" | ").collect();
        let deps = cells.last().unwrap().trim_end_matches(" |").trim();
        let set: BTreeSet<String> = match deps {
            "—" | "" => BTreeSet::new(),
            d => d.split(',').map(|s| s.trim().to_string()).collect(),
        };
        map.insert(name.to_string(), set);
    }
    map
}

#[test]
fn each_crates_tramp_dependencies_are_those_the_architecture_gives() {
    let cargo = from_cargo();
    let mut docs = from_docs();
    // The CLI depends on every library ("all").
    if docs.get("cli").is_some_and(|d| d.contains("all")) {
        docs.insert("cli".into(), cargo["cli"].clone());
    }
    let mut wrong = Vec::new();
    for (name, deps) in &cargo {
        match docs.get(name) {
            None => wrong.push(format!("tramp-{name} is not in the table")),
            Some(d) if d != deps => wrong.push(format!(
                "tramp-{name}: the table says {d:?}, the manifest {deps:?}"
            )),
            Some(_) => {}
        }
    }
    for name in docs.keys() {
        if !cargo.contains_key(name) {
            wrong.push(format!("the table lists tramp-{name}, which is no crate"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md is stale:\n{}",
        wrong.join("\n")
    );
}

/// `unsafe` is forbidden outside the capture crate by the workspace's lints,
/// which every other manifest takes; every manifest states the workspace's
/// minimum Rust (clippy's `incompatible_msrv` then checks the standard
/// library calls against it).
#[test]
fn every_crate_but_capture_forbids_unsafe_and_states_the_minimum_rust() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(workspace.contains("[workspace.lints.rust]\nunsafe_code = \"forbid\""));
    let mut wrong = Vec::new();
    for p in &packages() {
        let name = p["name"].as_str().unwrap();
        let manifest = std::fs::read_to_string(p["manifest_path"].as_str().unwrap()).unwrap();
        let takes_lints = manifest.contains("[lints]\nworkspace = true");
        if takes_lints == (name == "tramp-capture") {
            wrong.push(format!("{name}: [lints] workspace = true is {takes_lints}"));
        }
        if p["rust_version"].as_str() != Some("1.88") {
            wrong.push(format!("{name}: rust-version {}", p["rust_version"]));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// docs/benchmarks.md opens with its summary, one row per figure under
/// 100 characters, each naming its command, and stays under 1,200 lines
/// (the history lives in docs/benchmarks-history.md).
#[test]
fn the_benchmarks_open_with_a_one_screen_summary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/benchmarks.md")).unwrap();
    assert!(doc.lines().count() < 1200, "{} lines", doc.lines().count());
    let first = doc.lines().find(|l| l.starts_with("## ")).unwrap();
    assert_eq!(first, "## Summary");
    let rows: Vec<&str> = doc
        .split("## Summary")
        .nth(1)
        .unwrap()
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect();
    assert!(rows.len() >= 12, "{rows:?}");
    for r in &rows {
        assert!(
            r.chars().count() < 100,
            "{} characters: {r}",
            r.chars().count()
        );
        let cells: Vec<&str> = r.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 6, "{r}");
        assert!(!cells[4].is_empty(), "no command: {r}");
    }
    assert!(root.join("docs/benchmarks-history.md").exists());
}

/// The "where do I add" table names files that exist (a `<name>` part
/// stands for the new one and is not checked).
#[test]
fn the_where_do_i_add_table_names_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let table = doc
        .split("## Where do I add")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let mut checked = 0;
    for row in table.lines().filter(|l| l.starts_with("| a")) {
        for (i, part) in row.split('`').enumerate() {
            let looks_like_path = part.contains('/')
                && (part.starts_with("crates/")
                    || part.starts_with("docs/")
                    || part.starts_with("examples/")
                    || part.starts_with("fuzz/"));
            if i % 2 == 0 || !looks_like_path || part.contains('<') {
                continue;
            }
            let path = part.split("'s").next().unwrap();
            assert!(root.join(path).exists(), "{path}, named in: {row}");
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} paths checked");
}
