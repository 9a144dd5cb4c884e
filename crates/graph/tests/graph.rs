//! The object-graph view on PTF's Figure 3 and on a hand-made heap trace
//! with stores and loads, and its collector against the PTF verifier's
//! garbage collection on random traces.

use proptest::prelude::*;
use tramp_core::{FieldDef, RecordBuf, RecordKind, Role, Schema, Source};
use tramp_graph::graph::ObjectGraph;
use tramp_graph::{Collector, GraphEvent, GraphView};
use tramp_ptf::Event;
use tramp_ptf::records::{PtfSource, event_to_record, schema};

/// Every graph event of a PTF trace, in order.
fn graph_events(src: &mut dyn Source) -> Vec<GraphEvent> {
    let mut view = GraphView::new();
    let mut out = Vec::new();
    while let Some(rec) = src.next_record().unwrap() {
        view.observe(&rec, &mut |e| out.push(e));
    }
    out
}

#[test]
fn figure3_is_seven_objects_six_links_six_traversals() {
    let text = include_bytes!("../../../tests/fixtures/ptf/figure3.ptf.txt");
    let mut src = PtfSource::open(Box::new(&text[..])).unwrap();
    let events = graph_events(&mut src);
    let count = |f: fn(&GraphEvent) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, GraphEvent::Create { ty: 41, .. })), 7);
    assert_eq!(
        count(|e| matches!(e, GraphEvent::Link { to: Some(_), .. })),
        6
    );
    assert_eq!(count(|e| matches!(e, GraphEvent::Traverse { .. })), 6);
    assert_eq!(count(|e| matches!(e, GraphEvent::Root { object: 42 })), 1);
    assert_eq!(count(|e| matches!(e, GraphEvent::Hold)), 1);
    assert_eq!(count(|e| matches!(e, GraphEvent::Resume)), 1);
    // The binary tree as the figure draws it: 42 → 43, 44; 43 → 45, 46;
    // 44 → 47, 48; each traversal finds the child the link put there.
    let traversals: Vec<(u64, u64, Option<u64>)> = events
        .iter()
        .filter_map(|e| match *e {
            GraphEvent::Traverse { from, slot, to } => Some((from, slot, to)),
            _ => None,
        })
        .collect();
    assert_eq!(
        traversals,
        vec![
            (42, 0, Some(43)),
            (42, 1, Some(44)),
            (43, 0, Some(45)),
            (43, 1, Some(46)),
            (44, 0, Some(47)),
            (44, 1, Some(48)),
        ]
    );
    assert_eq!(events.len(), 7 + 6 + 6 + 1 + 2);
}

/// A heap trace format with loads and stores, as a DTD might declare it.
fn heap_schema() -> Schema {
    let u64s = FieldDef::u64s;
    let mut s = Schema::new("memtrace");
    s.add_type(
        "alloc",
        RecordKind::Alloc,
        u64s(&[
            ("size", Role::Size),
            ("address", Role::Address),
            ("site", Role::Site),
        ]),
    );
    s.add_type(
        "free",
        RecordKind::Free,
        u64s(&[("address", Role::Address)]),
    );
    s.add_type(
        "store",
        RecordKind::Store,
        u64s(&[("address", Role::Address), ("value", Role::Value)]),
    );
    s.add_type(
        "load",
        RecordKind::Load,
        u64s(&[("address", Role::Address), ("value", Role::Value)]),
    );
    s.add_type(
        "realloc",
        RecordKind::Realloc(tramp_core::ReallocOutcome::Moved),
        u64s(&[
            ("size", Role::Size),
            ("old", Role::OldAddress),
            ("address", Role::Address),
        ]),
    );
    s
}

#[test]
fn stores_of_pointers_link_heap_objects() {
    let s = heap_schema();
    let mut view = GraphView::new();
    let mut buf = RecordBuf::new();
    let mut run = |ty: usize, vals: &[u64]| {
        let t = &s.types[ty];
        buf.reset(t);
        for (i, v) in vals.iter().enumerate() {
            buf.set_u64(i, *v);
        }
        let mut out = Vec::new();
        view.observe(&buf.as_record(t), &mut |e| out.push(e));
        out
    };
    let (alloc, free, store, load, realloc) = (0, 1, 2, 3, 4);
    assert_eq!(
        run(alloc, &[64, 0x1000, 7]),
        vec![GraphEvent::Create { object: 1, ty: 7 }]
    );
    assert_eq!(
        run(alloc, &[32, 0x2000, 9]),
        vec![GraphEvent::Create { object: 2, ty: 9 }]
    );
    // A pointer into the middle of object 2, stored at offset 8 of object 1.
    let link = GraphEvent::Link {
        from: 1,
        slot: 8,
        to: Some(2),
    };
    assert_eq!(run(store, &[0x1008, 0x2010]), vec![link]);
    assert_eq!(
        run(load, &[0x1008, 0x2010]),
        vec![GraphEvent::Traverse {
            from: 1,
            slot: 8,
            to: Some(2)
        }]
    );
    // Data over data is no graph event; data over a pointer clears it.
    assert_eq!(run(store, &[0x1010, 5]), vec![]);
    assert_eq!(
        run(store, &[0x1008, 5]),
        vec![GraphEvent::Link {
            from: 1,
            slot: 8,
            to: None
        }]
    );
    assert_eq!(run(load, &[0x1008, 5]), vec![]);
    // Stores outside every object, and past an object's end, are ignored.
    assert_eq!(run(store, &[0x9000, 0x2000]), vec![]);
    assert_eq!(run(store, &[0x1040, 0x2000]), vec![]);
    // Link again, then move object 1: the edge follows it to its new block.
    assert_eq!(
        run(store, &[0x1000, 0x2000]),
        vec![GraphEvent::Link {
            from: 1,
            slot: 0,
            to: Some(2)
        }]
    );
    assert_eq!(run(realloc, &[128, 0x1000, 0x3000]), vec![]);
    assert_eq!(
        run(alloc, &[128, 0x3000, 7]),
        vec![GraphEvent::Create { object: 3, ty: 7 }]
    );
    assert_eq!(
        run(free, &[0x1000]),
        vec![
            GraphEvent::Link {
                from: 3,
                slot: 0,
                to: Some(2)
            },
            GraphEvent::Delete { object: 1 }
        ]
    );
    assert_eq!(run(free, &[0x2000]), vec![GraphEvent::Delete { object: 2 }]);
    assert_eq!(run(free, &[0x2000]), vec![], "a double free is no event");
    // An allocation over a live block (its free was lost) deletes it.
    assert_eq!(
        run(alloc, &[16, 0x3010, 1]),
        vec![
            GraphEvent::Delete { object: 3 },
            GraphEvent::Create { object: 4, ty: 1 }
        ]
    );
}

/// A random PTF trace that exercises collection: one format with three
/// pointers, creates inside and outside nested brackets, edge writes that
/// overwrite and clear, deletes, root changes. Later events may name
/// objects already collected; both sides must ignore them alike.
fn random_trace(choices: &[(u8, u8, u8)]) -> Vec<Event> {
    let f = 41;
    let mut ev = vec![Event::FormatObject(tramp_ptf::FormatObject {
        id: f,
        super_id: 0,
        pointers: 3,
        data: vec![],
        arrays: vec![],
        name: "Node".into(),
    })];
    let mut objects: Vec<u64> = Vec::new();
    let mut next = 42;
    let mut depth = 0;
    for &(k, a, b) in choices {
        let pick = |x: u8| objects.get(x as usize % objects.len().max(1)).copied();
        match k % 8 {
            0 | 1 => {
                ev.push(Event::CreateObject {
                    format: f,
                    oid: next,
                });
                objects.push(next);
                next += 1;
            }
            2 | 3 => {
                if let (Some(from), Some(to)) = (pick(a), pick(b)) {
                    let to = if b % 4 == 0 { 0 } else { to };
                    ev.push(Event::EdgeWrite {
                        format: f,
                        from,
                        edge: (a % 3) as u64,
                        to,
                    });
                }
            }
            4 => {
                if let Some(oid) = pick(a) {
                    ev.push(Event::DeleteObject { format: f, oid });
                    objects.retain(|o| *o != oid);
                }
            }
            5 => {
                if let Some(oid) = pick(a) {
                    ev.push(Event::SetRoot { format: f, oid });
                }
            }
            6 => {
                ev.push(Event::NoGcStart);
                depth += 1;
            }
            _ => {
                if depth > 0 {
                    ev.push(Event::NoGcEnd);
                    depth -= 1;
                }
            }
        }
    }
    ev.extend(std::iter::repeat_n(Event::NoGcEnd, depth));
    ev
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn collector_agrees_with_the_verifiers_gc(
        choices in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..200)
    ) {
        let events = random_trace(&choices);
        // The verifier's collections, events numbered from 1.
        let mut v = tramp_graph::verify::Verifier::new(tramp_graph::verify::Options {
            gc: true,
            max_violations: 0,
        });
        for (i, e) in events.iter().enumerate() {
            let n = i as u64 + 1;
            v.event(tramp_graph::verify::At { event: n, line: n, offset: 0 }, e);
        }
        let report = v.finish();
        let expected: Vec<(u64, Vec<u64>)> = report
            .collections
            .iter()
            .map(|c| (c.at.event, c.garbage.clone()))
            .collect();
        // The same trace as records, through the graph view.
        let ptf = schema();
        let mut view = GraphView::new();
        let mut gc = Collector::new();
        let mut buf = RecordBuf::new();
        for (i, e) in events.iter().enumerate() {
            event_to_record(e, &mut buf);
            let rec = buf.as_record(&ptf.types[buf.type_index()]);
            view.observe(&rec, &mut |g| gc.event(&g));
            gc.end_record(i as u64 + 1);
        }
        let got: Vec<(u64, Vec<u64>)> = gc
            .collections
            .iter()
            .map(|c| (c.at, c.garbage.clone()))
            .collect();
        prop_assert_eq!(got, expected);
        prop_assert_eq!(gc.live() as u64, report.live);
    }
}

#[test]
fn an_overwritten_edge_makes_its_target_garbage() {
    let f = 41;
    let events = vec![
        Event::FormatObject(tramp_ptf::FormatObject {
            id: f,
            super_id: 0,
            pointers: 1,
            data: vec![],
            arrays: vec![],
            name: "Node".into(),
        }),
        Event::NoGcStart,
        Event::CreateObject { format: f, oid: 42 },
        Event::SetRoot { format: f, oid: 42 },
        Event::CreateObject { format: f, oid: 43 },
        Event::EdgeWrite {
            format: f,
            from: 42,
            edge: 0,
            to: 43,
        },
        Event::CreateObject { format: f, oid: 44 },
        Event::EdgeWrite {
            format: f,
            from: 43,
            edge: 0,
            to: 44,
        },
        Event::NoGcEnd,
        Event::EdgeWrite {
            format: f,
            from: 42,
            edge: 0,
            to: 0,
        },
    ];
    let ptf = schema();
    let (mut view, mut gc, mut buf) = (GraphView::new(), Collector::new(), RecordBuf::new());
    for (i, e) in events.iter().enumerate() {
        event_to_record(e, &mut buf);
        view.observe(&buf.as_record(&ptf.types[buf.type_index()]), &mut |g| {
            gc.event(&g)
        });
        gc.end_record(i as u64 + 1);
    }
    // Nothing is collected inside the bracket; the cleared edge at event
    // 10 disconnects 43 and, through it, 44.
    assert_eq!(gc.collections.len(), 1);
    assert_eq!(
        (gc.collections[0].at, gc.collections[0].garbage.clone()),
        (10, vec![43, 44])
    );
    assert_eq!(gc.live(), 1);
    assert_eq!(view.graph().reachable(), vec![42]);
}

/// Reachability by a plain breadth-first search over a map of edges, the
/// oracle for [`ObjectGraph`] (which the PTF verifier's collector now runs
/// on, so the verifier is no longer an independent check of it).
fn naive_reachable(
    objects: &std::collections::BTreeSet<u64>,
    edges: &std::collections::BTreeMap<(u64, u64), u64>,
    root: Option<u64>,
) -> Vec<u64> {
    let mut seen = std::collections::BTreeSet::new();
    let mut queue: std::collections::VecDeque<u64> =
        root.filter(|r| objects.contains(r)).into_iter().collect();
    while let Some(o) = queue.pop_front() {
        if !seen.insert(o) {
            continue;
        }
        for (_, to) in edges.range((o, 0)..=(o, u64::MAX)) {
            if objects.contains(to) && !seen.contains(to) {
                queue.push_back(*to);
            }
        }
    }
    seen.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn graph_reachability_agrees_with_a_breadth_first_search(
        ops in proptest::collection::vec((0u8..20, 1u64..24, 0u64..5, 0u64..24), 0..300)
    ) {
        use std::collections::{BTreeMap, BTreeSet};
        let mut g: ObjectGraph<()> = ObjectGraph::new();
        let mut objects = BTreeSet::new();
        let mut edges: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        let mut root = None;
        for (op, a, slot, b) in ops {
            // Mostly creates and links, so that graphs grow deep and wide
            // between the rarer deletes, root changes and collections.
            match op {
                0..=4 => {
                    g.create(a, ());
                    objects.insert(a);
                    edges.retain(|(f, _), _| *f != a);
                }
                5..=12 => {
                    let to = (b != 0).then_some(b);
                    let old = g.link(a, slot, to);
                    if objects.contains(&a) {
                        let prev = match to {
                            Some(t) => edges.insert((a, slot), t),
                            None => edges.remove(&(a, slot)),
                        };
                        prop_assert_eq!(old, prev);
                    } else {
                        prop_assert_eq!(old, None);
                    }
                }
                13 => {
                    g.delete(a);
                    objects.remove(&a);
                    edges.retain(|(f, _), _| *f != a);
                    if root == Some(a) {
                        root = None;
                    }
                }
                14 | 15 => {
                    g.set_root(Some(a));
                    root = Some(a);
                }
                16..=18 => {
                    let expected = naive_reachable(&objects, &edges, root);
                    prop_assert_eq!(g.reachable(), expected);
                }
                _ => {
                    let expected = naive_reachable(&objects, &edges, root);
                    let garbage = g.collect();
                    if root.is_some() {
                        let want: Vec<u64> =
                            objects.iter().copied().filter(|o| !expected.contains(o)).collect();
                        prop_assert_eq!(garbage, want);
                        objects.retain(|o| expected.contains(o));
                        edges.retain(|(f, _), _| objects.contains(f));
                    } else {
                        prop_assert!(garbage.is_empty());
                    }
                }
            }
        }
    }
}

/// The graph flow feeds graph analyses and heap analyses from one view:
/// each record's graph events then its end, and the heap events of the
/// same live-object map (here counted by hand against the records).
#[test]
fn the_graph_flow_feeds_graph_and_heap_analyses_from_one_map() {
    use tramp_core::{Analysis, Error};
    use tramp_graph::{Graph, GraphFlow, GraphStep};
    use tramp_heap::{Born, Heap, HeapEvent, HeapStep};

    #[derive(Default)]
    struct Steps(Vec<Option<GraphEvent>>);
    impl Analysis<Graph> for Steps {
        type Report = Vec<Option<GraphEvent>>;
        fn observe(&mut self, s: &GraphStep<'_, '_>) -> Result<(), Error> {
            self.0.push(s.event);
            Ok(())
        }
        fn finish(self) -> Self::Report {
            self.0
        }
    }
    #[derive(Default)]
    struct Allocs(u64, u64);
    impl Analysis<Heap<Born>> for Allocs {
        type Report = (u64, u64);
        fn observe(&mut self, s: &HeapStep<Born>) -> Result<(), Error> {
            match s.event {
                HeapEvent::Alloc { .. } => self.0 += 1,
                HeapEvent::Free { .. } => self.1 += 1,
                _ => {}
            }
            Ok(())
        }
        fn finish(self) -> (u64, u64) {
            (self.0, self.1)
        }
    }
    let s = heap_schema();
    let mut flow = GraphFlow::with_heap(Steps::default(), Allocs::default());
    let mut buf = RecordBuf::new();
    for (ty, vals) in [
        (0, vec![64, 0x1000, 7]),
        (0, vec![32, 0x2000, 9]),
        (2, vec![0x1008, 0x2010]),
        (2, vec![0x1010, 5]),
        (1, vec![0x2000]),
    ] {
        let t = &s.types[ty];
        buf.reset(t);
        for (i, v) in vals.iter().enumerate() {
            buf.set_u64(i, *v);
        }
        flow.observe(&buf.as_record(t)).unwrap();
    }
    let (steps, heap) = flow.finish_with();
    let link = GraphEvent::Link {
        from: 1,
        slot: 8,
        to: Some(2),
    };
    assert_eq!(
        steps,
        vec![
            Some(GraphEvent::Create { object: 1, ty: 7 }),
            None,
            Some(GraphEvent::Create { object: 2, ty: 9 }),
            None,
            Some(link),
            None,
            None, // data over data: no event, the record still ends
            Some(GraphEvent::Delete { object: 2 }),
            None,
        ]
    );
    assert_eq!(heap, (2, 1));
}
