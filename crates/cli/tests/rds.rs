//! End-to-end tests of `tramp rds` on PTF traces.

use std::process::Output;

mod common;
use common::{fixture, path_in as p, stderr, tramp};

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "tramp failed: {}", stderr(out));
    String::from_utf8(out.stdout.clone()).unwrap()
}

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
    // Every object created is counted once.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&tramp(&["stats", &trace, "--json"]))).unwrap();
    assert_eq!(json["counts"]["allocations"], stats["objects_created"]);
    assert_eq!(json["counts"]["edges_added"], stats["edges_written"]);
}
