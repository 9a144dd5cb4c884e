use std::io::Cursor;

use proptest::prelude::*;
use tramp_core::ReallocOutcome;

use super::plan_format::{self, Header, Op};
use super::*;
use crate::view::HeapView;
use crate::view::testing::Trace;

/// Feeds records through the view into a plan writer; gives the plan's
/// operations, trailer rows and report.
fn plan(
    build: impl FnOnce(&mut Trace, &mut dyn FnMut(&tramp_core::Record<'_>)),
) -> (Header, Vec<Op>, Vec<(u64, u64)>, PlanReport) {
    let mut w = PlanWriter::new(Cursor::new(Vec::new()), u64::MAX).unwrap();
    let mut tr = Trace::new();
    let mut view = HeapView::new();
    build(&mut tr, &mut |r| {
        view.feed(r, &mut |s| Ok(w.event(s)?)).unwrap();
    });
    let (out, report) = w.finish().unwrap();
    let (h, ops, rows) = read_plan(&out.into_inner()).unwrap();
    (h, ops, rows, report)
}

fn m(slot: u32, size: u64) -> Op {
    Op::Malloc {
        slot,
        size,
        heap: 0,
    }
}
fn f(slot: u32) -> Op {
    Op::Free { slot, heap: 0 }
}
fn r(slot: u32, size: u64, moved: bool) -> Op {
    Op::Realloc {
        slot,
        size,
        heap: 0,
        moved,
    }
}
fn sw(thread: u32) -> Op {
    Op::Switch { thread }
}

#[test]
fn reallocs_replace_their_implied_records_and_slots_are_reused() {
    let (h, ops, rows, c) = plan(|tr, feed| {
        tr.alloc(10, 0x100, 0, &mut *feed);
        // moved: realloc, then the alloc and free it implies
        tr.realloc(ReallocOutcome::Moved, 20, 0x100, 0x200, 0, &mut *feed);
        tr.alloc(20, 0x200, 0, &mut *feed);
        tr.free(0x100, 0, &mut *feed);
        // realloc(NULL, 5) then its alloc
        tr.realloc(ReallocOutcome::AllocOnly, 5, 0, 0x300, 0, &mut *feed);
        tr.alloc(5, 0x300, 0, &mut *feed);
        // realloc(p, 0) then its free
        tr.realloc(ReallocOutcome::FreeOnly, 0, 0x300, 0, 0, &mut *feed);
        tr.free(0x300, 0, &mut *feed);
        tr.free(0x200, 0, &mut *feed);
        tr.free(0x999, 0, &mut *feed);
        tr.alloc(7, 0x400, 0, &mut *feed);
    });
    assert_eq!(
        ops,
        vec![
            sw(0),
            m(0, 10),
            r(0, 20, true),
            r(1, 5, false),
            f(1),
            f(0),
            m(0, 7)
        ]
    );
    assert_eq!(
        (c.mallocs, c.frees, c.reallocs, c.unknown_frees, c.max_slots),
        (2, 2, 2, 1, 2)
    );
    // The moved realloc held both blocks for a moment: 10 + 20.
    assert_eq!(c.peak_live_bytes, 30);
    assert_eq!(rows, vec![(0, 6)]);
    assert_eq!((h.items, h.slots, h.threads, h.heaps), (6, 2, 1, 1));
}

#[test]
fn threads_switch_and_reuse_their_own_freed_slots_first() {
    let (_, ops, rows, c) = plan(|tr, feed| {
        tr.alloc(8, 0x10, 7, &mut *feed); // thread 7 → plan thread 0, slot 0
        tr.alloc(8, 0x20, 9, &mut *feed); // thread 9 → plan thread 1, slot 1
        tr.free(0x10, 9, &mut *feed); // thread 9 frees thread 7's object
        tr.alloc(8, 0x30, 7, &mut *feed); // thread 7: no spare of its own → slot 2
        tr.alloc(8, 0x40, 9, &mut *feed); // thread 9 reuses slot 0
    });
    assert_eq!(
        ops,
        vec![
            sw(0),
            m(0, 8),
            sw(1),
            m(1, 8),
            f(0),
            sw(0),
            m(2, 8),
            sw(1),
            m(0, 8)
        ]
    );
    assert_eq!(rows, vec![(7, 2), (9, 3)]);
    assert_eq!(c.threads[1].frees, 1);
    assert_eq!(c.frees_before_alloc, 0);
}

#[test]
fn a_free_before_its_allocation_on_another_thread_is_reported() {
    let (_, ops, _, c) = plan(|tr, feed| {
        tr.free(0x500, 2, &mut *feed);
        tr.alloc(16, 0x500, 1, &mut *feed);
        // the same thread freeing an unknown address then allocating it is
        // an object from before the trace, not a broken order
        tr.free(0x600, 1, &mut *feed);
        tr.alloc(16, 0x600, 1, &mut *feed);
    });
    assert_eq!(ops, vec![sw(0), m(0, 16), m(1, 16)]);
    assert_eq!((c.unknown_frees, c.frees_before_alloc), (2, 1));
    assert_eq!(
        c.first_free_before_alloc,
        Some(FreeBeforeAlloc {
            address: 0x500,
            freed_by: 2,
            allocated_by: 1
        })
    );
}

#[test]
fn a_destroyed_heap_frees_what_it_holds_and_a_recreated_heap_is_new() {
    let (h, ops, _, c) = plan(|tr, feed| {
        tr.heap(false, 5, 0, &mut *feed);
        tr.alloc_by(5, 32, 0x1000, 0, &mut *feed);
        tr.alloc_by(5, 48, 0x2000, 0, &mut *feed);
        tr.alloc(8, 0x3000, 0, &mut *feed);
        tr.free_in(5, 0x1000, &mut *feed);
        tr.heap(true, 5, 0, &mut *feed);
        // the trace frees an object its heap took with it: not replayed
        tr.free_in(5, 0x2000, &mut *feed);
        tr.heap(false, 5, 0, &mut *feed);
        tr.alloc_by(5, 16, 0x4000, 0, &mut *feed);
    });
    assert_eq!(
        ops,
        vec![
            sw(0),
            Op::HeapCreate { heap: 1 },
            Op::Malloc {
                slot: 0,
                size: 32,
                heap: 1
            },
            Op::Malloc {
                slot: 1,
                size: 48,
                heap: 1
            },
            m(2, 8),
            Op::Free { slot: 0, heap: 1 },
            Op::Free { slot: 1, heap: 1 },
            Op::HeapDestroy { heap: 1 },
            Op::HeapCreate { heap: 2 },
            Op::Malloc {
                slot: 1,
                size: 16,
                heap: 2
            },
        ]
    );
    assert_eq!(
        (c.heap_creates, c.heap_destroys, c.heap_destroy_frees),
        (2, 1, 1)
    );
    assert_eq!((h.heaps, c.unknown_frees), (3, 1));
}

#[test]
fn the_layout_byte_for_byte() {
    let mut w = PlanWriter::new(Cursor::new(Vec::new()), u64::MAX).unwrap();
    let mut tr = Trace::new();
    let mut view = HeapView::new();
    tr.alloc(300, 0x100, 42, |r| {
        view.feed(r, &mut |s| Ok(w.event(s)?)).unwrap()
    });
    tr.free(0x100, 42, |r| {
        view.feed(r, &mut |s| Ok(w.event(s)?)).unwrap()
    });
    let bytes = w.finish().unwrap().0.into_inner();
    let mut want = Vec::new();
    want.extend_from_slice(b"TRAMPOPS");
    want.extend_from_slice(&1u32.to_le_bytes()); // version
    want.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [2u64, 1, 1, 1, 8, 300] {
        // items, slots, threads, heaps, body length, peak live bytes
        want.extend_from_slice(&v.to_le_bytes());
    }
    // switch to thread 0; malloc slot 0, 300 bytes (LEB128 0xac 0x02); free slot 0
    want.extend_from_slice(&[0x00, 0x00, 0x01, 0x00, 0xac, 0x02, 0x02, 0x00]);
    want.extend_from_slice(&42u64.to_le_bytes());
    want.extend_from_slice(&2u64.to_le_bytes());
    assert_eq!(bytes, want);
}

#[test]
fn the_memory_limit_stops_the_plan() {
    let mut w = PlanWriter::new(Cursor::new(Vec::new()), 100).unwrap();
    let mut tr = Trace::new();
    let mut view = HeapView::new();
    let mut feed = |r: &tramp_core::Record<'_>| view.feed(r, &mut |s| Ok(w.event(s)?));
    tr.alloc(60, 0x100, 0, &mut feed).unwrap();
    let e = tr.alloc(60, 0x200, 0, &mut feed).unwrap_err();
    assert!(e.to_string().contains("memory limit"), "{e}");
    // The plan of what came before stands and reads back whole.
    let bytes = w.finish().unwrap().0.into_inner();
    let (h, ops, _) = read_plan(&bytes).unwrap();
    assert_eq!((h.items, h.slots), (1, 1));
    assert_eq!(ops, vec![sw(0), m(0, 60)]);
}

fn any_op() -> impl Strategy<Value = Op> {
    let n32 = any::<u32>();
    prop_oneof![
        n32.prop_map(|thread| Op::Switch { thread }),
        n32.prop_map(|thread| Op::ThreadStart { thread }),
        (n32, any::<u64>(), n32).prop_map(|(slot, size, heap)| Op::Malloc { slot, size, heap }),
        (n32, n32).prop_map(|(slot, heap)| Op::Free { slot, heap }),
        (n32, any::<u64>(), n32, any::<bool>()).prop_map(|(slot, size, heap, moved)| Op::Realloc {
            slot,
            size,
            heap,
            moved
        }),
        n32.prop_map(|heap| Op::HeapCreate { heap }),
        n32.prop_map(|heap| Op::HeapDestroy { heap }),
    ]
}

proptest! {
    #[test]
    fn operations_decode_as_encoded(ops in proptest::collection::vec(any_op(), 0..50)) {
        let mut body = Vec::new();
        for op in &ops {
            let mut b = [0u8; plan_format::MAX_OP_LEN];
            let n = plan_format::encode(op, &mut b);
            body.extend_from_slice(&b[..n]);
        }
        let mut at = 0;
        let mut back = Vec::new();
        while at < body.len() {
            let (op, n) = plan_format::decode(&body[at..]).unwrap();
            back.push(op);
            at += n;
        }
        prop_assert_eq!(&back, &ops);
        // Every cut inside the last operation is reported as truncated.
        if let Some(last) = ops.last() {
            let mut b = [0u8; plan_format::MAX_OP_LEN];
            let n = plan_format::encode(last, &mut b);
            for cut in 0..n {
                prop_assert_eq!(plan_format::decode(&b[..cut]), Err(plan_format::DecodeError::Truncated));
            }
        }
    }

    #[test]
    fn headers_decode_as_encoded(items: u64, slots: u32, threads: u32, heaps: u32, body_len: u64, peak: u64) {
        let h = Header { flags: 0, items, slots: slots as u64, threads: threads as u64, heaps: heaps as u64, body_len, peak_live_bytes: peak };
        prop_assert_eq!(Header::decode(&h.encode()), Ok(h));
    }
}
