//! The OO7 generator: the small database's object counts, every
//! operation passes the verifier (with the reachability simulation), and
//! the output depends only on the seed.

use tramp_graph::verify::{self, Options};
use tramp_ptf::ascii::AsciiReader;
use tramp_ptf::binary::{BinaryReader, BinaryWriter};
use tramp_ptf::{Event, EventSink};
use tramp_workloads::oo7::{self, Config, Op};

fn generate(cfg: Config, seed: u64, ops: &[Op]) -> (Vec<u8>, oo7::Counts) {
    let mut w = BinaryWriter::new(Vec::new(), &["OO7".to_string()]).unwrap();
    let counts = oo7::generate(cfg, seed, ops, &mut w).unwrap();
    w.finish().unwrap();
    (w.into_inner(), counts)
}

fn all_ops() -> Vec<Op> {
    Op::ALL.iter().map(|(o, _)| *o).collect()
}

#[test]
fn small_database_has_the_published_counts() {
    let (bin, counts) = generate(Config::small(), 7, &[]);
    assert_eq!(counts.modules, 1);
    assert_eq!(counts.complex_assemblies, 364);
    assert_eq!(counts.base_assemblies, 729);
    assert_eq!(counts.composite_parts, 500);
    assert_eq!(counts.atomic_parts, 500 * 20);
    assert_eq!(counts.connections, 500 * 20 * 3);
    assert_eq!(counts.documents, 500);
    // Count from the trace itself: objects created per format name.
    let mut r = BinaryReader::new(&bin[..]).unwrap();
    let mut names = std::collections::HashMap::new();
    let mut per = std::collections::BTreeMap::<String, u64>::new();
    while let Some(e) = tramp_ptf::EventSource::next_event(&mut r).unwrap() {
        match e {
            Event::FormatObject(f) => {
                names.insert(f.id, f.name);
            }
            Event::CreateObject { format, .. } => {
                *per.entry(names[&format].clone()).or_default() += 1
            }
            _ => {}
        }
    }
    assert_eq!(per["ComplexAssembly"], 364);
    assert_eq!(per["BaseAssembly"], 729);
    assert_eq!(per["CompositePart"], 500);
    assert_eq!(per["AtomicPart"], 10_000);
    assert_eq!(per["Connection"], 30_000);
    assert_eq!(per["Document"], 500);
    assert_eq!(per["Manual"], 1);
}

#[test]
fn every_operation_verifies_with_reachability() {
    let (bin, counts) = generate(Config::small(), 3, &all_ops());
    assert_eq!(
        counts.composite_parts, 500,
        "delete removed what insert added"
    );
    let report = verify::verify(
        &mut BinaryReader::new(&bin[..]).unwrap(),
        Options {
            gc: true,
            max_violations: 20,
        },
    );
    assert_eq!(report.violations, vec![], "{} violations", report.total);
    assert_eq!(
        report.collected, 0,
        "OO7 links every object before its bracket closes"
    );
    assert_eq!(report.events, counts.events);
}

#[test]
fn output_depends_only_on_the_seed() {
    let ops = [Op::T1, Op::Q1, Op::Insert];
    let (a, _) = generate(Config::small(), 11, &ops);
    let (b, _) = generate(Config::small(), 11, &ops);
    let (c, _) = generate(Config::small(), 12, &ops);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn ascii_and_binary_agree_on_a_workload() {
    let (bin, _) = generate(
        Config::small(),
        5,
        &[Op::T6, Op::Q4, Op::Insert, Op::Delete],
    );
    let mut r = BinaryReader::new(&bin[..]).unwrap();
    let mut text =
        tramp_ptf::ascii::AsciiWriter::new(Vec::new(), tramp_ptf::EventSource::notes(&r)).unwrap();
    while let Some(e) = tramp_ptf::EventSource::next_event(&mut r).unwrap() {
        text.write_event(&e).unwrap();
    }
    text.finish().unwrap();
    let text = text.into_inner();
    let mut a = AsciiReader::new(&text[..]).unwrap();
    let mut back = BinaryWriter::new(Vec::new(), tramp_ptf::EventSource::notes(&a)).unwrap();
    while let Some(e) = tramp_ptf::EventSource::next_event(&mut a).unwrap() {
        back.write_event(&e).unwrap();
    }
    back.finish().unwrap();
    assert_eq!(back.into_inner(), bin);
}
