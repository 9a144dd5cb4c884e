//! DTDs are untrusted input: checking and planning take time linear in
//! their size (issue 32: a DTD of 64 k records took 10 s, one record of
//! 100 k fields took minutes, and a 64 KB trace embedding such a DTD
//! stalled every reader). These run at the sizes that were slow; a
//! quadratic step back shows as a test that takes minutes.

use tramp_metatf::plan::Plan;

#[test]
fn a_dtd_of_many_records_plans_whole() {
    let n = 64_000;
    let mut dtd = String::from("tag.width = 4;\n");
    for i in 0..n {
        dtd.push_str(&format!("r{i}: (tag) {{ tag.value = {}; }}\n", i + 4));
    }
    let parsed = tramp_metatf::load(&dtd).unwrap();
    assert_eq!(
        parsed
            .records
            .iter()
            .filter(|r| r.name.starts_with('r'))
            .count(),
        n
    );
    let plan = Plan::compile(&parsed);
    assert!(plan.records.len() >= n);
    // A duplicate among them is still found, naming both.
    dtd.push_str("again: (tag) { tag.value = 9; }\n");
    let errs = tramp_metatf::load(&dtd).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0]
            .message
            .contains("records `r5` and `again` share tag 9"),
        "{}",
        errs[0].message
    );
}

#[test]
fn a_record_of_many_fields_plans_whole() {
    let n = 100_000;
    let mut dtd = String::from("tag.width = 4;\nf0.width = 1; f0.interpretation = none;\n");
    for i in 1..n {
        // Each width names the field before it: the lookups that were scans.
        dtd.push_str(&format!(
            "f{i}.width = f{}.value; f{i}.interpretation = none;\n",
            i - 1
        ));
    }
    let names: Vec<String> = (0..n).map(|i| format!("f{i}")).collect();
    dtd.push_str(&format!(
        "r: (tag, {}) {{ tag.value = 9; }}\n",
        names.join(", ")
    ));
    let parsed = tramp_metatf::load(&dtd).unwrap();
    let plan = Plan::compile(&parsed);
    let r = plan.records.iter().find(|r| r.name == "r").unwrap();
    assert_eq!(r.positions, n + 1);
}
