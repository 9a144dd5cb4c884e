//! The one table of policies (`tramp_cachesim::policy::POLICIES`) against
//! what is derived from it and what documents it: every name and alias
//! parses back to its policy and prints as its name, the unknown-policy
//! message lists every name, and docs/cachesim.md has a row for each
//! policy and none for a policy the table lacks.

use tramp_cachesim::PolicyKind;
use tramp_cachesim::policy::{POLICIES, UnknownPolicy};

#[test]
fn every_name_and_alias_parses_to_its_policy_and_prints_as_its_name() {
    assert_eq!(PolicyKind::ALL.len(), POLICIES.len());
    for (p, k) in POLICIES.iter().zip(PolicyKind::ALL) {
        assert_eq!(p.kind, k);
        assert_eq!(k.to_string(), p.name);
        for n in std::iter::once(&p.name).chain(p.aliases) {
            assert_eq!(n.parse::<PolicyKind>().unwrap(), k, "{n}");
            assert_eq!(n.to_uppercase().parse::<PolicyKind>().unwrap(), k, "{n}");
        }
        assert_eq!(k.needs_future(), matches!(p.name, "opt" | "beladysize"));
    }
    assert_eq!(
        "clock3".parse::<PolicyKind>().unwrap().to_string(),
        "clock3"
    );
    assert_eq!(
        "slru16".parse::<PolicyKind>().unwrap().to_string(),
        "slru16"
    );
    for bad in ["clock4", "slru17", "slru0", "lru2", "nope"] {
        assert!(bad.parse::<PolicyKind>().is_err(), "{bad}");
    }
}

#[test]
fn the_unknown_policy_message_lists_every_name() {
    let text = UnknownPolicy("nope".into()).to_string();
    for p in &POLICIES {
        assert!(
            text.contains(&format!(" {},", p.name)) || text.ends_with(&format!(" {})", p.name)),
            "{} missing from {text}",
            p.name
        );
    }
}

#[test]
fn docs_cachesim_has_a_row_for_each_policy_and_no_other() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/cachesim.md"
    ))
    .unwrap();
    let section = doc.split("## Policies").nth(1).expect("a Policies section");
    let rows: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("| policy |"))
        .skip(2)
        .take_while(|l| l.starts_with('|') || l.is_empty())
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
    for n in &names {
        assert!(rows.contains(n), "docs/cachesim.md has no row for {n}");
    }
    for r in &rows {
        assert!(
            names.contains(r),
            "docs/cachesim.md's row {r} is no policy of the table"
        );
    }
}
