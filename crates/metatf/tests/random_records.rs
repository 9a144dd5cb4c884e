//! Property test for every test DTD: random records, generated from the
//! DTD's own plan so that each value fits the encoding in effect, written by
//! the universal writer and read back unchanged (both byte orders).

mod common;

use std::collections::HashMap;
use tramp_workloads::SplitMix64;

use common::{Capture, flat_record, read_flat};

use proptest::prelude::*;
use tramp_core::{RecordBuf, Sink, Value};
use tramp_metatf::check::Interp;
use tramp_metatf::codec::{MetaSink, MetaSource};
use tramp_metatf::plan::{Op, Plan, RecordPlan, StepWidth};

const DTDS: [(&str, &str); 6] = [
    ("hatf10", include_str!("dtd/good/hatf10.dtd")),
    ("fstrace", include_str!("dtd/good/fstrace.dtd")),
    ("memtrace", include_str!("dtd/good/memtrace.dtd")),
    ("cachesim", include_str!("dtd/good/cachesim.dtd")),
    ("alloclog", include_str!("dtd/good/alloclog.dtd")),
    (
        "splitaddr",
        include_str!("../../../examples/hatf-splitaddr.dtd"),
    ),
];

/// Generated values of repeated fields, by output field.
type Lists = HashMap<usize, Vec<(u64, Option<Vec<u8>>)>>;
/// Generated values of the other fields: output field, number, bytes.
type Scalars = Vec<(usize, u64, Option<Vec<u8>>)>;

/// The workloads' generator, with the value shapes this test needs.
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value that fits `n` bytes unsigned, often small.
    fn fit(&mut self, n: u32) -> u64 {
        let v = if self.next().is_multiple_of(3) {
            self.next() % 300
        } else {
            self.next()
        };
        if n >= 8 {
            v
        } else {
            v & ((1u64 << (8 * n)) - 1)
        }
    }

    /// A signed offset that fits `n` bytes.
    fn offset(&mut self, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let bits = 8 * n.min(8) - 1;
        let m = if bits >= 63 {
            u64::MAX >> 1
        } else {
            (1u64 << bits) - 1
        };
        let v = (self.next() & m) as i64;
        (if self.next().is_multiple_of(2) { v } else { -v }) as u64
    }
}

/// Fills `buf` with a random record of plan `rp`; `prev` follows the
/// codec's previous values (per field name, across records).
fn random_record(
    rng: &mut Rng,
    plan: &Plan,
    rp: &RecordPlan,
    prev: &mut HashMap<String, u64>,
    buf: &mut RecordBuf,
) {
    let ty = &plan.schema.types[rp.schema_type];
    buf.reset(ty);
    let mut values = vec![0u64; rp.positions];
    let mut lists: Lists = HashMap::new();
    let mut scalars: Scalars = Vec::new();
    #[allow(clippy::too_many_arguments)]
    fn run(
        ops: &[Op],
        rng: &mut Rng,
        rp: &RecordPlan,
        prev: &mut HashMap<String, u64>,
        values: &mut [u64],
        in_repeat: bool,
        lists: &mut Lists,
        scalars: &mut Scalars,
    ) {
        for op in ops {
            match op {
                Op::Field(s) => {
                    let (v, bytes) = if s.pos == 0 {
                        (rp.tag, None)
                    } else if s.bytes {
                        let n = match s.width {
                            StepWidth::Bytes(n) => n as usize,
                            StepWidth::Of(i) => values[i] as usize,
                        };
                        let b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                        (n as u64, Some(b))
                    } else {
                        let w = match s.width {
                            StepWidth::Bytes(n) => n,
                            StepWidth::Of(i) => values[i] as u32,
                        };
                        let p = |init: u64| prev.get(&s.name).copied().unwrap_or(init);
                        let v = match s.interp {
                            Interp::None | Interp::SectionOffset(_) => rng.fit(w),
                            Interp::Default(d) => d,
                            Interp::BaseOffset(b) => b.wrapping_add(rng.offset(w)),
                            Interp::Delta(init) => p(init).wrapping_add(rng.offset(w)),
                            Interp::Stride { initial, stride } => {
                                p(initial).wrapping_add(stride as u64)
                            }
                            Interp::SectionStride { stride, .. } => rng.fit(stride as u32),
                        };
                        // A count or length small enough to keep records short.
                        let v = if w == 1 && matches!(s.interp, Interp::None) {
                            v % 6
                        } else {
                            v
                        };
                        prev.insert(s.name.clone(), v);
                        (v, None)
                    };
                    values[s.pos] = v;
                    if in_repeat {
                        lists.entry(s.out).or_default().push((v, bytes));
                    } else {
                        scalars.push((s.out, v, bytes));
                    }
                }
                Op::Repeat { count, body } => {
                    for _ in 0..values[*count] {
                        run(body, rng, rp, prev, values, true, lists, scalars);
                    }
                }
            }
        }
    }
    run(
        &rp.ops,
        rng,
        rp,
        prev,
        &mut values,
        false,
        &mut lists,
        &mut scalars,
    );
    for (out, v, bytes) in scalars {
        match bytes {
            Some(b) => buf.set_bytes(out, &b),
            None => buf.set_u64(out, v),
        }
    }
    for (i, f) in ty.fields.iter().enumerate() {
        if matches!(f.ty, tramp_core::FieldType::List(_)) {
            let items = lists.remove(&i).unwrap_or_default();
            let owned: Vec<Value> = items
                .iter()
                .map(|(v, b)| match b {
                    Some(b) => Value::Bytes(b),
                    None => Value::U64(*v),
                })
                .collect();
            let slot = buf.push_list(owned.into_iter());
            buf.set_slot(i, slot);
        }
    }
}

fn round_trip(dtd: &str, seed: u64, n: usize, big: bool) {
    let checked = tramp_metatf::load(dtd).unwrap();
    let plan = Plan::compile(&checked);
    let capture = Capture::default();
    let mut sink = Box::new(MetaSink::new(capture.clone(), dtd, big).unwrap());
    // Records of one section: the global ones, else the first section's.
    let user: Vec<&RecordPlan> = plan.records.iter().filter(|r| r.tag > 3).collect();
    let section = if user.iter().any(|r| r.section == 0) {
        0
    } else {
        user[0].section
    };
    let choices: Vec<&RecordPlan> = user
        .iter()
        .copied()
        .filter(|r| r.section == section)
        .collect();
    let mut rng = Rng(SplitMix64::new(seed));
    let mut prev = HashMap::new();
    let mut want = Vec::new();
    let mut buf = RecordBuf::new();
    if section != 0 {
        let sec = plan.schema.type_named("section").unwrap();
        buf.reset(sec);
        buf.set_u64(0, 2);
        buf.set_u64(1, section as u64);
        let rec = buf.as_record(sec);
        want.push(flat_record(&rec));
        sink.write_record(&rec).unwrap();
    }
    for _ in 0..n {
        let rp = choices[(rng.next() % choices.len() as u64) as usize];
        random_record(&mut rng, &plan, rp, &mut prev, &mut buf);
        let ty = &plan.schema.types[rp.schema_type];
        let rec = buf.as_record(ty);
        want.push(flat_record(&rec));
        sink.write_record(&rec).unwrap();
    }
    sink.finish().unwrap();
    let bytes = capture.bytes();
    assert_eq!(read_flat(&bytes), want);
    // The visiting reader (its own fast loop) sees the same records.
    let mut src = MetaSource::open(&bytes[..], None).unwrap();
    let mut visited = Vec::new();
    let count = src
        .for_each_record(|rec| visited.push(flat_record(rec)))
        .unwrap();
    assert_eq!(count as usize, want.len());
    assert_eq!(visited, want);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]

    #[test]
    fn every_test_dtd_round_trips_random_records(seed in any::<u64>(), n in 0usize..400, big in any::<bool>()) {
        for (_, dtd) in DTDS {
            round_trip(dtd, seed, n, big);
        }
    }
}
