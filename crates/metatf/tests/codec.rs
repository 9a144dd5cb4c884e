//! The universal codec: records written under a DTD read back identically,
//! for random records of each test DTD, in both byte orders.

mod common;

use common::{Capture, Flat, flat_record, read_flat};
use proptest::prelude::*;
use tramp_core::{RecordBuf, Sink, Value};
use tramp_metatf::codec::{MetaSink, MetaSource};

const FSTRACE: &str = include_str!("dtd/good/fstrace.dtd");
const HATF10: &str = include_str!("dtd/good/hatf10.dtd");

/// One random file-system operation: kind, time step, fd, path, batch.
type FsOp = (u8, u64, u16, Vec<u8>, Vec<(u16, u32)>);

/// Writes records given as (type, setter) and reads them back.
fn round_trip(
    dtd: &str,
    big: bool,
    build: &dyn Fn(&tramp_core::Schema, &mut Vec<RecordBuf>),
) -> (Vec<Flat>, Vec<Flat>) {
    let mut out = Vec::new();
    let capture = Capture::default();
    let mut sink = Box::new(MetaSink::new(capture.clone(), dtd, big).unwrap());
    let schema = sink.schema().clone();
    let mut recs = Vec::new();
    build(&schema, &mut recs);
    for r in &recs {
        let ty = &schema.types[r.type_index()];
        let rec = r.as_record(ty);
        out.push(flat_record(&rec));
        sink.write_record(&rec).unwrap();
    }
    sink.finish().unwrap();
    (out, read_flat(&capture.bytes()))
}

fn fs_records(ops: &[FsOp]) -> impl Fn(&tramp_core::Schema, &mut Vec<RecordBuf>) + '_ {
    move |schema, recs| {
        let mut t = 0u64;
        for (kind, dt, fd, path, batch) in ops {
            t += dt;
            let name = ["open", "read", "write", "batch", "close"][*kind as usize % 5];
            let ty = schema.type_named(name).unwrap();
            let mut r = RecordBuf::new();
            r.reset(ty);
            let set = |r: &mut RecordBuf, f: &str, v: u64| r.set_u64(ty.field_index(f).unwrap(), v);
            set(&mut r, "tag", 4 + (*kind as u64 % 5));
            set(&mut r, "time", t);
            match name {
                "open" => {
                    set(&mut r, "fd", *fd as u64);
                    set(&mut r, "flags", 2);
                    set(&mut r, "plen", path.len() as u64);
                    r.set_bytes(ty.field_index("path").unwrap(), path);
                }
                "read" | "write" => {
                    set(&mut r, "fd", *fd as u64);
                    set(&mut r, "offset", *dt * 4096);
                    set(&mut r, "length", 512);
                }
                "batch" => {
                    set(&mut r, "count", batch.len() as u64);
                    let fds = r.push_list(
                        batch
                            .iter()
                            .map(|(f, _)| Value::U64(*f as u64))
                            .collect::<Vec<_>>()
                            .into_iter(),
                    );
                    r.set_slot(ty.field_index("fd").unwrap(), fds);
                    let lens = r.push_list(
                        batch
                            .iter()
                            .map(|(_, l)| Value::U64(*l as u64))
                            .collect::<Vec<_>>()
                            .into_iter(),
                    );
                    r.set_slot(ty.field_index("length").unwrap(), lens);
                }
                _ => set(&mut r, "fd", *fd as u64),
            }
            recs.push(r);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn fstrace_round_trips(
        ops in prop::collection::vec(
            (0u8..5, 0u64..100_000, any::<u16>(), prop::collection::vec(any::<u8>(), 0..40),
             prop::collection::vec((any::<u16>(), any::<u32>()), 0..5)),
            0..40),
        big in any::<bool>(),
    ) {
        let (want, got) = round_trip(FSTRACE, big, &fs_records(&ops));
        prop_assert_eq!(got, want);
    }
}

#[test]
fn hatf10_sections_and_records_round_trip() {
    let (want, got) = round_trip(HATF10, true, &|schema, recs| {
        let mut r = RecordBuf::new();
        let sec = schema.type_named("section").unwrap();
        r.reset(sec);
        r.set_u64(sec.field_index("tag").unwrap(), 2);
        r.set_u64(sec.field_index("number").unwrap(), 1);
        recs.push(r);
        let alloc = schema.type_named("alloc").unwrap();
        for i in 0..5u64 {
            let mut r = RecordBuf::new();
            r.reset(alloc);
            for (f, v) in [("tag", 4), ("time", 0), ("thread", 0), ("heap", 0)] {
                r.set_u64(alloc.field_index(f).unwrap(), v);
            }
            r.set_u64(alloc.field_index("size").unwrap(), 16 * i);
            r.set_u64(alloc.field_index("address").unwrap(), 0x1000 + 64 * i);
            r.set_u64(alloc.field_index("length").unwrap(), 2);
            r.set_bytes(alloc.field_index("data").unwrap(), b"ab");
            recs.push(r);
        }
        let c = schema.type_named("comment").unwrap();
        let mut r = RecordBuf::new();
        r.reset(c);
        r.set_u64(c.field_index("tag").unwrap(), 1);
        r.set_u64(c.field_index("length").unwrap(), 5);
        r.set_bytes(c.field_index("data").unwrap(), b"hello");
        recs.push(r);
    });
    assert_eq!(got, want);
    assert_eq!(got.len(), 7);
}

#[test]
fn damaged_traces_fail_with_offsets() {
    assert!(MetaSource::open(&b"\x7fMTX"[..], None).is_err());
    let err = MetaSource::open(&b"MTF"[..], None)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("byte offset 0"), "{err}");
}

#[test]
fn declared_roles_reach_the_schema() {
    let dtd = tramp_metatf::load(include_str!("dtd/good/memtrace.dtd")).unwrap();
    let plan = tramp_metatf::plan::Plan::compile(&dtd);
    let load = plan.schema.type_named("load").unwrap();
    let role = |f: &str| load.fields[load.field_index(f).unwrap()].role;
    assert_eq!(role("addr"), Some(tramp_core::Role::Address));
    assert_eq!(role("pc"), Some(tramp_core::Role::Site));
    assert_eq!(
        role("size"),
        Some(tramp_core::Role::Size),
        "inferred from the name"
    );
}
