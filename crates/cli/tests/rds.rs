//! End-to-end tests of `tramp rds` on PTF traces.

mod common;
use common::{fixture, golden, ok, path_in as p, tramp};

#[test]
fn figure3s_binary_tree_is_one_instance() {
    let json: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["rds", &fixture("figure3.ptf.txt"), "--json"]))).unwrap();
    let s = &json["summary"];
    // By hand from the trace: 7 BinTreeNode objects (format 41), 6 child
    // edges from parents to younger children, 6 edge reads.
    assert_eq!(s["rds_types"], 1);
    assert_eq!(s["instances"], 1);
    assert_eq!(s["forward_edges"], 6);
    assert_eq!(s["backward_edges"], 0);
    assert_eq!(s["total_accesses"], 6);
    assert_eq!(json["types"][0]["sites"], serde_json::json!([41]));
    let i = &json["instances"][0];
    assert_eq!(i["nodes"], 7);
    assert_eq!(i["shape"], "tree");
    assert_eq!(i["rsf"], 1);
}

#[test]
fn the_text_profile_is_golden() {
    let out = ok(&tramp(&["rds", &fixture("figure3.ptf.txt")]));
    golden("rds-figure3.txt", &out);
}

#[test]
fn oo7_profiles_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "oo7.ptf");
    ok(&tramp(&[
        "workload", "oo7", "--config", "small", "-o", &trace,
    ]));
    let plots = p(&dir, "plots");
    let text = ok(&tramp(&["rds", &trace, "--plots", &plots, "--top", "3"]));
    assert!(text.starts_with("RDS profile (Table 3)"), "{text}");
    for f in [
        "figure5-lifetimes.svg",
        "figure6-live-instances.svg",
        "figure7-rsf.svg",
    ] {
        let svg = std::fs::read_to_string(std::path::Path::new(&plots).join(f)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{f}"
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json"]))).unwrap();
    // OO7's relationships run both ways (atomic part <-> composite part via
    // parts/partOf, composite part <-> base assembly via
    // componentsPriv/usedInPriv, base <-> complex assembly via
    // subAssemblies/superAssembly, atomic part <-> connection via to/from),
    // so the static shape graph has one SCC holding all of them: by the
    // paper's definition (type = SCC) OO7 is one RDS type, not one for the
    // assembly hierarchy and one for the part graph (docs/rds.md).
    assert_eq!(json["summary"]["rds_types"], 1);
    let sites: Vec<u64> = json["types"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    for format in [42, 43, 44, 48, 49] {
        assert!(sites.contains(&format), "{format} in {sites:?}");
    }
    // Every object created is counted once.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", &trace, "--json"]))).unwrap();
    assert_eq!(json["counts"]["allocations"], stats["objects_created"]);
    assert_eq!(json["counts"]["edges_added"], stats["edges_written"]);
}

/// Records of a pointer trace (fixtures/ptrtrace.dtd) in Meta-TF text.
struct Ptr(String);

impl Ptr {
    fn alloc(&mut self, addr: u64, size: u64, site: u64) {
        self.0 += &format!("alloc tag=4 addr={addr} size={size} site={site}\n");
    }
    fn store(&mut self, addr: u64, value: u64, pc: u64) {
        self.0 += &format!("store tag=7 addr={addr} value={value} site={pc}\n");
    }
    fn load(&mut self, addr: u64, value: u64, pc: u64) {
        self.0 += &format!("load tag=6 addr={addr} value={value} site={pc}\n");
    }
    fn free(&mut self, addr: u64) {
        self.0 += &format!("free tag=5 addr={addr} site=0\n");
    }
}

fn profile(dir: &tempfile::TempDir, trace: &Ptr) -> serde_json::Value {
    let text = p(dir, "t.txt");
    std::fs::write(&text, &trace.0).unwrap();
    let mtf = p(dir, "t.mtf");
    ok(&tramp(&[
        "convert",
        "--dtd",
        &fixture("ptrtrace.dtd"),
        "--format",
        "metatf-text",
        &text,
        &mtf,
    ]));
    serde_json::from_str(&ok(&tramp(&["rds", &mtf, "--json"]))).unwrap()
}

/// The paper's Figure 2 program as the pointer capture would record it:
/// an array (site A) of two trees of depth 2 (site T, three nodes each,
/// 24-byte nodes: n, left at +8, right at +16), built top-down.
#[test]
fn figure2s_trees_from_a_pointer_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (site_a, site_t) = (0x401000, 0x401100);
    let mut t = Ptr(String::new());
    let arr = 0x10000;
    t.alloc(arr, 80, site_a);
    let mut next = 0x20000;
    for slot in 0..2 {
        let root = next;
        let (l, r) = (next + 0x100, next + 0x200);
        next += 0x1000;
        t.alloc(root, 24, site_t);
        t.alloc(l, 24, site_t);
        t.store(root + 8, l, 7); // st8 [r14] = r8
        t.alloc(r, 24, site_t);
        t.store(root + 16, r, 10); // st8 [r33] = r8
        t.store(arr + 8 * slot, root, 15); // st8 [r32] = r8
        t.store(root, 2, 99); // data: n
    }
    // Walk both trees twice.
    for _ in 0..2 {
        for k in 0..2u64 {
            let root = 0x20000 + k * 0x1000;
            t.load(root + 8, root + 0x100, 20);
            t.load(root + 16, root + 0x200, 21);
        }
    }
    let json = profile(&dir, &t);
    let s = &json["summary"];
    assert_eq!(s["rds_types"], 1, "{json}");
    assert_eq!(s["instances"], 2);
    assert_eq!(s["forward_edges"], 4);
    assert_eq!(s["total_accesses"], 8);
    assert_eq!(json["types"][0]["sites"], serde_json::json!([site_t]));
    assert_eq!(json["types"][0]["create_pcs"], serde_json::json!([7, 10]));
    assert_eq!(
        json["types"][0]["traverse_pcs"],
        serde_json::json!([20, 21])
    );
    // The array-to-tree stores wait in the queue, never merged.
    assert_eq!(json["counts"]["edges_queued"], 2);
    for i in json["instances"].as_array().unwrap() {
        assert_eq!(i["nodes"], 3);
        assert_eq!(i["shape"], "tree");
        assert_eq!(
            i["sibling_traversals"].as_u64().unwrap() + i["other_traversals"].as_u64().unwrap(),
            3
        );
    }
    // Latency from the Table 1 model: cold loads go to memory.
    assert!(s["average_latency"].as_f64().unwrap() > 1.0);
}

/// A list built, traversed, reversed in place, traversed, freed.
#[test]
fn a_list_reversed_in_place_from_a_pointer_trace() {
    let dir = tempfile::tempdir().unwrap();
    let site = 0x500000;
    let mut t = Ptr(String::new());
    let n = 20u64;
    let node = |i: u64| 0x30000 + i * 0x40;
    for i in 0..n {
        t.alloc(node(i), 16, site);
        if i > 0 {
            t.store(node(i - 1) + 8, node(i), 1);
        }
    }
    for i in 0..n - 1 {
        t.load(node(i) + 8, node(i + 1), 2);
    }
    // Reverse: each next field now points back (the old edges replaced).
    t.store(node(0) + 8, 0, 3);
    for i in 1..n {
        t.store(node(i) + 8, node(i - 1), 3);
    }
    for i in (1..n).rev() {
        t.load(node(i) + 8, node(i - 1), 2);
    }
    for i in 0..n {
        t.free(node(i));
    }
    let json = profile(&dir, &t);
    let i = &json["instances"][0];
    assert_eq!(json["summary"]["instances"], 1, "{json}");
    assert_eq!(i["nodes"], n);
    // The reversed list is still a list (the old edges were replaced).
    assert_eq!(i["shape"], "list");
    assert_eq!(i["accesses"], 2 * (n - 1));
    // Every load continues from the last one's target (the second walk
    // starts where the first ended), but the very first.
    assert_eq!(i["chain_traversals"], 2 * (n - 1) - 1);
    assert_eq!(i["alive_at_end"], false);
    // Two traversal phases with alterations between: RSF 2.
    assert_eq!(i["rsf"], 2);
}

/// A PTF store that collects rather than deletes: with --gc, the list the
/// old root held dies when the root moves, as `tramp verify --gc` says.
#[test]
fn gc_ends_instances_the_root_no_longer_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let trace = p(&dir, "gc.ptf.txt");
    std::fs::write(
        &trace,
        "Trace begin\nfo 41 0 2 1 0 11 11 BinTreeNode\nts\nco 41 42\nco 41 43\nco 41 44\n\
         ew 41 42 0 43\new 41 43 0 44\nsr 41 42\nte\ner 41 42 0\ner 41 43 0\n\
         ts\nco 41 45\nsr 41 45\nte\nTrace end\n",
    )
    .unwrap();
    let verify = ok(&tramp(&["verify", "--gc", &trace]));
    assert!(
        verify.contains("3 objects became garbage: 42 43 44"),
        "{verify}"
    );
    let plain: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["rds", &trace, "--json"]))).unwrap();
    assert_eq!(plain["counts"]["frees"], 0);
    assert_eq!(plain["instances"][0]["alive_at_end"], true);
    let gc: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["rds", "--gc", &trace, "--json"]))).unwrap();
    assert_eq!(gc["counts"]["frees"], 3);
    let i = &gc["instances"][0];
    assert_eq!(i["alive_at_end"], false);
    assert_eq!(
        (i["nodes"].as_u64(), i["accesses"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(i["shape"], "list");
}
