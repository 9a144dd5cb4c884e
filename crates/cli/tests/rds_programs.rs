//! Real C programs through the pointer capture: built with `tramp cc`,
//! recorded with `tramp record --pointers`, profiled with `tramp rds`. The
//! expected profiles follow from each program's source (fixtures/rds/*.c),
//! worked out in the comments; the programs check their own results and
//! exit 0 only when they computed them.
//!
//! Every program is built with the machine's `cc` (gcc here: ThreadSanitizer
//! hooks), and with clang too when one is installed (sanitizer-coverage
//! hooks): both must give the same profile. `-O0` keeps every access the
//! source makes (at -O1 gcc drops the Figure 2 program's stores into its
//! array, which nothing reads).

mod common;
use common::{fixture, ok, path_in as p, tramp};
use serde_json::Value;

/// The compilers to build with: `cc`, and clang if there is one.
fn compilers() -> Vec<&'static str> {
    let mut v = vec!["cc"];
    for c in ["clang", "clang-14"] {
        if std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            v.push(c);
            break;
        }
    }
    v
}

/// Builds `fixtures/rds/NAME.c` with `tramp cc -- CC -O0 -g` in `dir`, runs
/// it under `tramp record --pointers`; returns the trace's path.
fn record(dir: &tempfile::TempDir, name: &str, cc: &str) -> String {
    record_with(dir, name, cc, &[])
}

/// [`record`] with more `tramp record` options.
fn record_with(dir: &tempfile::TempDir, name: &str, cc: &str, opts: &[&str]) -> String {
    let exe = p(dir, name);
    let src = fixture(&format!("rds/{name}.c"));
    let build = ["cc", "--", cc, "-O0", "-g", &src, "-o", &exe, "-lpthread"];
    ok(&tramp(&build));
    let trace = p(dir, &format!("{name}.mtf.zst"));
    let mut args = vec!["record", "--pointers", "-o", &trace];
    args.extend_from_slice(opts);
    args.extend(["--", &exe]);
    let rec = tramp(&args);
    assert!(
        rec.status.success(),
        "{name} ({cc}) failed under the capture: {}",
        String::from_utf8_lossy(&rec.stderr)
    );
    trace
}

/// The `tramp rds --json` profile of `fixtures/rds/NAME.c` built with `cc`.
fn profile(name: &str, cc: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(&dir, name, cc);
    serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json"]))).unwrap()
}

/// Checks the profile of `name` with every compiler.
fn check(name: &str, expect: impl Fn(&Value)) {
    for cc in compilers() {
        let json = profile(name, cc);
        eprintln!("{name} with {cc}");
        expect(&json);
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Each instance's (nodes, shape), sorted.
fn instances(json: &Value) -> Vec<(u64, String)> {
    let mut v: Vec<(u64, String)> = json["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (u(&i["nodes"]), i["shape"].as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn figure2_two_trees_one_type_the_array_edges_queued() {
    check("figure2", |j| {
        let s = &j["summary"];
        // One RDS type: make_tree's malloc site (T); the array (A) is not
        // in an SCC with it.
        assert_eq!(s["rds_types"], 1, "{j}");
        assert_eq!(j["types"][0]["sites"].as_array().unwrap().len(), 1);
        // Two instances {1,2,3} and {4,5,6}: each root to its two children,
        // parents allocated before children (forward).
        assert_eq!(instances(j), vec![(3, "tree".into()), (3, "tree".into())]);
        assert_eq!(s["forward_edges"], 4);
        assert_eq!(s["backward_edges"], 0);
        // arr[0] = …, arr[1] = …: queued, never merged.
        assert_eq!(j["counts"]["edges_queued"], 2);
        assert_eq!(j["counts"]["edges_merged_later"], 0);
        assert_eq!(j["counts"]["allocations"], 7);
        // sum() follows root->left and root->right of each tree (the
        // leaves' children are null).
        assert_eq!(s["total_accesses"], 4);
    });
}

#[test]
fn a_singly_linked_list_built_then_only_traversed_has_rsf_1() {
    check("slist", |j| {
        assert_eq!(j["summary"]["rds_types"], 1, "{j}");
        assert_eq!(instances(j), vec![(100, "list".into())]);
        // Appending: each next from an older node to a younger one.
        assert_eq!(j["summary"]["forward_edges"], 99);
        assert_eq!(j["summary"]["backward_edges"], 0);
        // Two walks over 99 edges.
        assert_eq!(j["summary"]["total_accesses"], 198);
        assert_eq!(j["instances"][0]["rsf"], 1);
    });
}

#[test]
fn a_doubly_linked_list_is_cyclic_with_edges_both_ways() {
    check("dlist", |j| {
        assert_eq!(instances(j), vec![(50, "cyclic".into())], "{j}");
        assert_eq!(j["summary"]["forward_edges"], 49);
        assert_eq!(j["summary"]["backward_edges"], 49);
        // One walk forward, one back.
        assert_eq!(j["summary"]["total_accesses"], 98);
    });
}

#[test]
fn a_tree_built_bottom_up_has_only_backward_edges() {
    check("bottomup", |j| {
        assert_eq!(j["summary"]["rds_types"], 1, "{j}");
        assert_eq!(instances(j), vec![(15, "tree".into())]);
        assert_eq!(j["summary"]["forward_edges"], 0);
        assert_eq!(j["summary"]["backward_edges"], 14);
        // sum() walks the 14 edges once.
        assert_eq!(j["summary"]["total_accesses"], 14);
    });
}

#[test]
fn a_list_reversed_in_place_stays_one_list() {
    check("reverse", |j| {
        assert_eq!(instances(j), vec![(20, "list".into())], "{j}");
        let i = &j["instances"][0];
        // The 19 forward edges are replaced within the transient window
        // by 19 backward ones (the first node's next becomes null).
        assert_eq!(i["forward_edges"], 0);
        assert_eq!(i["backward_edges"], 19);
        assert_eq!(i["transient_edges"], 19);
        // walk, the reversal's reads of p->next, walk, the frees' reads of
        // head->next: 19 traversals each.
        assert_eq!(i["accesses"], 4 * 19);
        assert_eq!(i["alive_at_end"], false);
        // The reversal alternates a read and a write of the same field.
        assert!(u(&i["rsf"]) > 2);
    });
}

#[test]
fn a_hash_table_has_one_instance_per_chain() {
    check("hash", |j| {
        assert_eq!(j["summary"]["rds_types"], 1, "{j}");
        // 64 keys into 16 buckets: 16 chains of 4, each new entry in front
        // (next from younger to older).
        assert_eq!(instances(j), vec![(4, "list".into()); 16]);
        assert_eq!(j["summary"]["forward_edges"], 0);
        assert_eq!(j["summary"]["backward_edges"], 48);
        // Bucket array to entry: 64 stores, queued (the array's site is in
        // no SCC with the entries').
        assert_eq!(j["counts"]["edges_queued"], 64);
        // Looking up key k walks its chain from the front to k: the chains
        // hold k+48, k+32, k+16, k, so 0+1+2+3 edges per chain.
        assert_eq!(j["summary"]["total_accesses"], 16 * 6);
    });
}

#[test]
fn a_graph_through_adjacency_arrays_is_one_type_of_two_sites() {
    check("graph", |j| {
        // vertex -> adjacency array -> vertex: one SCC of two sites.
        assert_eq!(j["summary"]["rds_types"], 1, "{j}");
        assert_eq!(j["types"][0]["sites"].as_array().unwrap().len(), 2);
        assert_eq!(instances(j), vec![(20, "cyclic".into())]);
        // Dynamic ids v0=0, adj0=1, v1=2, …: vertex->adj is forward (10);
        // adj_i -> v_(i+1) is forward but for i=9, adj_i -> v_(i+3) forward
        // but for i=7,8,9.
        assert_eq!(j["summary"]["forward_edges"], 10 + 9 + 7);
        assert_eq!(j["summary"]["backward_edges"], 1 + 3);
        // The vertex->adj stores come before any adj->vertex edge closes
        // the cycle: queued, then merged when the SCC forms.
        assert_eq!(j["counts"]["edges_queued"], 10);
        assert_eq!(j["counts"]["edges_merged_later"], 10);
    });
}

#[test]
fn threads_each_build_their_own_instance() {
    check("threads", |j| {
        assert_eq!(j["summary"]["rds_types"], 1, "{j}");
        // One list per thread, each node in front of the older ones.
        assert_eq!(
            instances(j),
            vec![
                (100, "list".into()),
                (101, "list".into()),
                (102, "list".into()),
                (103, "list".into())
            ]
        );
        assert_eq!(j["summary"]["forward_edges"], 0);
        assert_eq!(j["summary"]["backward_edges"], 99 + 100 + 101 + 102);
        // Each walk follows every edge once.
        assert_eq!(j["summary"]["total_accesses"], 402);
    });
}

/// The instrumented program runs on its own too (the hooks do nothing).
#[test]
fn an_instrumented_program_runs_without_tramp() {
    let dir = tempfile::tempdir().unwrap();
    let exe = p(&dir, "slist");
    let src = fixture("rds/slist.c");
    ok(&tramp(&["cc", "--", "cc", "-O1", &src, "-o", &exe]));
    let st = std::process::Command::new(&exe).status().unwrap();
    assert!(st.success());
}

/// Separate compile and link steps, as a build system runs them.
#[test]
fn compile_then_link_records_the_same_profile() {
    let dir = tempfile::tempdir().unwrap();
    let obj = p(&dir, "figure2.o");
    let exe = p(&dir, "figure2");
    let src = fixture("rds/figure2.c");
    ok(&tramp(&["cc", "--", "cc", "-O0", "-c", &src, "-o", &obj]));
    ok(&tramp(&["cc", "--", "cc", &obj, "-o", &exe]));
    let trace = p(&dir, "f.mtf");
    let rec = tramp(&["record", "--pointers", "-o", &trace, "--", &exe]);
    assert!(rec.status.success());
    let j: Value = serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json"]))).unwrap();
    assert_eq!(instances(&j), vec![(3, "tree".into()), (3, "tree".into())]);
}

/// A pointer trace is Meta-TF; asking for tpack is refused before the
/// program runs.
#[test]
fn pointers_need_a_meta_tf_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = tramp(&[
        "record",
        "--pointers",
        "-o",
        &p(&dir, "x.tpack"),
        "--",
        "true",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("*.mtf"), "{err}");
    assert!(!std::path::Path::new(&p(&dir, "x.tpack")).exists());
}

/// A pointer trace's allocation sites (plain numbers, with the module map
/// in its notes) are symbolized like a heap recording's.
#[test]
fn pointer_trace_sites_are_symbolized() {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(&dir, "figure2", "cc");
    let text = ok(&tramp(&["stats", &trace, "--sites"]));
    // make_tree's six nodes and main's array, by function and line.
    assert!(
        text.contains("make_tree (") && text.contains("figure2.c:13)"),
        "{text}"
    );
    assert!(
        text.contains("main (") && text.contains("figure2.c:25)"),
        "{text}"
    );
}

/// `tramp rds` names a recorded program's sites and the instructions that
/// create and traverse each type's edges (the paper's static instructions).
#[test]
fn rds_names_the_code_behind_each_type() {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(&dir, "figure2", "cc");
    let text = ok(&tramp(&["rds", &trace]));
    // The type is make_tree's malloc (line 13); t->left and t->right are
    // stored on lines 15 and 16; sum() reads them on line 22.
    let line = |l: &str| {
        text.lines()
            .find(|x| x.trim_start().starts_with(l))
            .unwrap_or("")
            .to_string()
    };
    assert!(
        text.contains("make_tree (") && text.contains("figure2.c:13)"),
        "{text}"
    );
    let creates = line("creates edges");
    assert!(
        creates.contains("figure2.c:15)") && creates.contains("figure2.c:16)"),
        "{text}"
    );
    assert!(line("traverses").contains("sum ("), "{text}");
    // sum() loads t->left and t->right on one line (22): two instructions,
    // one label (issue 48: labels were repeated).
    for what in ["creates edges", "traverses"] {
        let l = line(what);
        let labels: Vec<&str> = l.trim_start()[what.len()..]
            .split(", ")
            .map(str::trim)
            .collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(labels, unique, "{text}");
    }
    let json: Value = serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json"]))).unwrap();
    let site = json["types"][0]["sites"][0].as_u64().unwrap().to_string();
    assert!(
        json["places"][&site]
            .as_str()
            .unwrap()
            .starts_with("make_tree"),
        "{json}"
    );
}

/// Pointer captures keep each free's call site: the profile names the code
/// that frees a type's nodes (reverse.c frees its list on line 30).
#[test]
fn rds_names_the_code_that_frees() {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(&dir, "reverse", "cc");
    let json: Value = serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json"]))).unwrap();
    let frees = json["types"][0]["free_pcs"].as_array().unwrap();
    assert_eq!(frees.len(), 1, "{json}");
    let name = json["places"][frees[0].as_u64().unwrap().to_string()]
        .as_str()
        .unwrap();
    assert!(
        name.starts_with("main (") && name.ends_with("reverse.c:30)"),
        "{name}"
    );
}

/// A TRAMP script runs over a pointer trace like over any Meta-TF trace:
/// loads, stores and the instructions behind them, checked against the
/// records `tramp dump` prints.
#[test]
fn a_script_counts_a_pointer_traces_loads_and_stores() {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(&dir, "figure2", "cc");
    let script = p(&dir, "count.tramp");
    std::fs::write(
        &script,
        "preprocess begin set loads = 0; set stores = 0; end
procedure main begin
  if (RECORD_TYPE == load) then
    set loads = loads + 1;
    set sites[load_site] = 1;
  endif
  if (RECORD_TYPE == store) then
    set stores = stores + 1;
    set sites[store_site] = 1;
  endif
end
postprocess begin
  set n = 0;
  for (s in sites) begin set n = n + 1; end
  echo loads, stores, n;
end
",
    )
    .unwrap();
    let out = ok(&tramp(&["run", &script, &trace]));
    let dump = ok(&tramp(&["dump", &trace]));
    let (mut loads, mut stores) = (0, 0);
    let mut sites = std::collections::BTreeSet::new();
    for line in dump.lines() {
        let kind = line.split(' ').next().unwrap_or("");
        if kind == "load" || kind == "store" {
            if kind == "load" {
                loads += 1;
            } else {
                stores += 1;
            }
            let site = line.split(' ').find(|f| f.starts_with("site=")).unwrap();
            sites.insert(site.to_string());
        }
    }
    assert!(loads > 0 && stores > 0, "{dump}");
    assert_eq!(out.trim(), format!("{loads} {stores} {}", sites.len()));
}

/// A store's value is read at the thread's next event: a store into a
/// mapping that is unmapped right after is written before the munmap (no
/// fault), and the program's very last store is written at exit.
#[test]
fn pending_stores_survive_munmap_and_exit() {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(&dir, "pending", "cc");
    let dump = ok(&tramp(&["dump", &trace]));
    let field = |line: &str, name: &str| -> u64 {
        line.split(' ')
            .find_map(|f| f.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line}"))
    };
    let stores: Vec<&str> = dump.lines().filter(|l| l.starts_with("store ")).collect();
    let allocs: Vec<&str> = dump.lines().filter(|l| l.starts_with("alloc ")).collect();
    // page[0] = page: the mapping's first word holds its own address.
    assert!(
        stores
            .iter()
            .any(|l| field(l, "address") == field(l, "value")),
        "{dump}"
    );
    // a->next = b, the last access.
    let (a, b) = (
        field(allocs[allocs.len() - 2], "address"),
        field(allocs[allocs.len() - 1], "address"),
    );
    let last = stores.last().unwrap();
    assert_eq!(
        (field(last, "address"), field(last, "value")),
        (a, b),
        "{dump}"
    );
}

/// Allocations through a wrapper share its malloc site; `--stack 2` makes
/// the wrapper's callers the static ids, and `tramp rds` names them by both
/// frames.
#[test]
fn stacks_tell_allocations_through_a_wrapper_apart() {
    let dir = tempfile::tempdir().unwrap();
    let rds = |trace: &str| -> (Value, String) {
        (
            serde_json::from_str(&ok(&tramp(&["rds", trace, "--json"]))).unwrap(),
            ok(&tramp(&["rds", trace])),
        )
    };
    let (one, _) = rds(&record(&dir, "wrapper", "cc"));
    // One site (xmalloc's malloc), so one type holding both structures.
    assert_eq!(one["summary"]["rds_types"], 1, "{one}");
    assert_eq!(
        instances(&one),
        vec![(7, "tree".into()), (10, "list".into())]
    );
    let dir2 = tempfile::tempdir().unwrap();
    let (two, text) = rds(&record_with(&dir2, "wrapper", "cc", &["--stack", "2"]));
    assert_eq!(two["summary"]["rds_types"], 2, "{two}");
    assert_eq!(
        instances(&two),
        vec![(7, "tree".into()), (10, "list".into())]
    );
    assert!(
        text.contains("xmalloc (") && text.contains(" ← build_list ("),
        "{text}"
    );
    assert!(text.contains(" ← build_tree ("), "{text}");
}

/// A forked child gets a pointer trace of its own, named with its pid
/// before the extensions (`fork.PID.mtf.zst`).
#[test]
fn a_forked_child_gets_its_own_pointer_trace() {
    let dir = tempfile::tempdir().unwrap();
    let parent = record(&dir, "fork", "cc");
    let child = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .find(|p| p.ends_with(".mtf.zst") && *p != parent)
        .expect("the child's trace");
    let nodes = |trace: &str| -> Vec<(u64, String)> {
        instances(&serde_json::from_str(&ok(&tramp(&["rds", trace, "--json"]))).unwrap())
    };
    assert_eq!(nodes(&parent), vec![(5, "list".into())]);
    assert_eq!(nodes(&child), vec![(7, "list".into())]);
}

#[test]
fn a_pool_reported_through_tramp_h_is_seen_block_by_block() {
    for cc in compilers() {
        let dir = tempfile::tempdir().unwrap();
        let src = fixture("rds/pool.c");
        let profile = |defines: &[&str], name: &str| -> Value {
            let exe = p(&dir, name);
            // `tramp cc` puts tramp.h on the include path.
            let mut build = vec!["cc", "--", cc, "-O0", "-g"];
            build.extend_from_slice(defines);
            build.extend([src.as_str(), "-o", &exe]);
            ok(&tramp(&build));
            // Alone (not recorded) the reports do nothing.
            assert!(std::process::Command::new(&exe).status().unwrap().success());
            let trace = p(&dir, &format!("{name}.mtf.zst"));
            ok(&tramp(&["record", "--pointers", "-o", &trace, "--", &exe]));
            serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json", "--top", "40"]))).unwrap()
        };
        // Reported: the chains of entries, as the program's comment works out.
        let j = profile(&[], "pool");
        eprintln!("pool with {cc}");
        assert_eq!(j["summary"]["rds_types"], 1, "{j}");
        assert_eq!(j["summary"]["instances"], 32);
        assert_eq!(instances(&j), vec![(3, "list".into()); 32]);
        assert_eq!(j["summary"]["forward_edges"], 0);
        assert_eq!(j["summary"]["backward_edges"], 64);
        // 1 chunk + 1 vertex block + 8 tables + 96 entries, all ended.
        assert_eq!(j["counts"]["allocations"], 106);
        assert_eq!(j["counts"]["frees"], 106);
        // The vertices' next pointers, into their own block: 7 stores, 7
        // loads while walking them.
        assert_eq!(j["counts"]["self_pointers"], 14);
        // The type is named by the line that reports the entries' blocks
        // (TAKE in main, line 72), not by tramp.h.
        let site = j["types"][0]["sites"][0].as_u64().unwrap().to_string();
        let place = j["places"][&site].as_str().unwrap();
        assert!(
            place.starts_with("main") && place.contains("pool.c:72"),
            "{place}"
        );

        // Unreported: one chunk, every pointer inside it, no RDS.
        let j = profile(&["-DTRAMP_OFF"], "pool_off");
        assert_eq!(j["summary"]["rds_types"], 0, "{j}");
        assert_eq!(j["counts"]["allocations"], 1);
    }
}

#[test]
fn storing_the_value_a_field_holds_is_no_new_edge() {
    // Issue 48, case 1: on the main of 2026-12-01 the five re-stores, each
    // past the transient window, counted as five more forward edges.
    check("restore", |j| {
        assert_eq!(instances(j), vec![(3, "list".into())], "{j}");
        let i = &j["instances"][0];
        assert_eq!(i["forward_edges"], 2, "{i}");
        assert_eq!(i["backward_edges"], 0);
        assert_eq!(i["transient_edges"], 0);
        // 5 rounds × 300 walks × 2 edges, all in one interval.
        assert_eq!(i["accesses"], 3000);
        assert_eq!(i["rsf"], 1);
    });
}

#[test]
fn a_tree_built_by_recursive_insertion_has_one_edge_per_node() {
    // Issue 48, case 1: 2,985 forward edges before the fix.
    check("bst", |j| {
        assert_eq!(instances(j), vec![(1000, "tree".into())], "{j}");
        let i = &j["instances"][0];
        assert_eq!(i["forward_edges"], 999, "{i}");
        assert_eq!(i["backward_edges"], 0);
        assert_eq!(i["transient_edges"], 0);
    });
}
