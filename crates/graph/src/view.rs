//! The object-graph view: records of any format as graph events, found
//! through record kinds and field roles.
//!
//! Object formats (PTF) name objects themselves: `ObjectCreate`,
//! `ObjectDelete`, `EdgeWrite`, `EdgeRead` and `RootSet` records become
//! events directly, with the object id, type, slot and edge target roles.
//! Heap traces name addresses: allocations become objects (numbered by the
//! live-object map, typed by their site), and a store of value V at
//! address A inside object X, where V points into object Y, is
//! link(X, A − base(X), Y); a store of a non-pointer over a slot that held
//! an edge clears it; a load of such a pointer is a traversal. A realloc
//! that moves an object carries its edges to the new block.

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_core::{ReallocOutcome, Record, RecordKind, Role};
use tramp_heap::{HeapEvent, HeapStep, HeapView};

use crate::graph::ObjectGraph;

/// One event of the object graph. Object id 0 is never used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum GraphEvent {
    /// An object comes into being; `ty` is its format or allocation site.
    Create { object: u64, ty: u64 },
    /// An object is deleted or freed.
    Delete { object: u64 },
    /// `from`'s edge `slot` now points to `to` (`None`: null).
    Link {
        from: u64,
        slot: u64,
        to: Option<u64>,
    },
    /// `from`'s edge `slot` is followed; it points to `to`.
    Traverse {
        from: u64,
        slot: u64,
        to: Option<u64>,
    },
    /// The root of the graph is now `object`.
    Root { object: u64 },
    /// Collection is held off until the matching `Resume`.
    Hold,
    /// Ends the innermost `Hold`.
    Resume,
}

/// Turns records into graph events, keeping the graph's edges (a traversal
/// names its target). Heap records go through the heap view first: its
/// events (with its live objects, found by any address they contain) are
/// what the heap half reads.
pub struct GraphView {
    graph: ObjectGraph<()>,
    heap: HeapView,
    /// A moved realloc on a thread: (old address, new address, and the
    /// new block's object id once its alloc record came), until the free
    /// of the old block.
    moving: FxHashMap<u64, (u64, u64, Option<u64>)>,
}

impl Default for GraphView {
    fn default() -> Self {
        Self::new()
    }
}

impl GraphView {
    pub fn new() -> Self {
        GraphView {
            graph: ObjectGraph::default(),
            heap: HeapView::with_intervals(),
            moving: FxHashMap::default(),
        }
    }

    /// The graph as the events so far left it.
    pub fn graph(&mut self) -> &mut ObjectGraph<()> {
        &mut self.graph
    }

    /// Calls `emit` with the graph events `rec` stands for (none, one, or
    /// several: an allocation over live objects deletes them first).
    pub fn observe(&mut self, rec: &Record<'_>, emit: &mut impl FnMut(GraphEvent)) {
        let ty = rec.record_type();
        let u = |role: Role| rec.role_u64(role);
        let ev = match ty.kind {
            RecordKind::ObjectCreate => {
                let Some(object) = u(Role::ObjectId).filter(|o| *o != 0) else {
                    return;
                };
                GraphEvent::Create {
                    object,
                    ty: u(Role::Type).unwrap_or(0),
                }
            }
            RecordKind::ObjectDelete => GraphEvent::Delete {
                object: u(Role::ObjectId).unwrap_or(0),
            },
            RecordKind::EdgeWrite => GraphEvent::Link {
                from: u(Role::ObjectId).unwrap_or(0),
                slot: u(Role::Slot).unwrap_or(0),
                to: u(Role::EdgeTarget).filter(|t| *t != 0),
            },
            RecordKind::EdgeRead => {
                let from = u(Role::ObjectId).unwrap_or(0);
                let slot = u(Role::Slot).unwrap_or(0);
                GraphEvent::Traverse {
                    from,
                    slot,
                    to: self.graph.edge(from, slot),
                }
            }
            RecordKind::RootSet => GraphEvent::Root {
                object: u(Role::ObjectId).unwrap_or(0),
            },
            RecordKind::GcHold => GraphEvent::Hold,
            RecordKind::GcResume => GraphEvent::Resume,
            RecordKind::Store | RecordKind::Load => {
                let heap = &self.heap;
                let address = u(Role::Address).unwrap_or(0);
                let Some(x) = heap.find(address) else { return };
                let (from, slot) = (x.extra.id, address - x.address);
                let to = u(Role::Value)
                    .and_then(|v| heap.find(v))
                    .map(|y| y.extra.id);
                if ty.kind == RecordKind::Load {
                    if to.is_none() {
                        return;
                    }
                    GraphEvent::Traverse { from, slot, to }
                } else {
                    if to.is_none() && self.graph.edge(from, slot).is_none() {
                        return; // data over data
                    }
                    GraphEvent::Link { from, slot, to }
                }
            }
            _ => {
                let GraphView {
                    graph,
                    heap,
                    moving,
                } = self;
                // The heap half: never fails (its analysis here is this).
                let _ = heap.feed(rec, &mut |step| {
                    heap_half(graph, moving, step, emit);
                    Ok(())
                });
                return;
            }
        };
        apply(&mut self.graph, ev, emit);
    }
}

/// The graph events of one heap event.
fn heap_half(
    graph: &mut ObjectGraph<()>,
    moving: &mut FxHashMap<u64, (u64, u64, Option<u64>)>,
    step: &HeapStep,
    emit: &mut impl FnMut(GraphEvent),
) {
    match step.event {
        HeapEvent::Displaced { object, .. } => apply(
            graph,
            GraphEvent::Delete {
                object: object.extra.id,
            },
            emit,
        ),
        HeapEvent::Alloc { object, cx, .. } => {
            let born = object.extra;
            if let Some((_, new, id)) = moving.get_mut(&cx.thread)
                && *new == object.address
            {
                *id = Some(born.id);
            }
            let ev = GraphEvent::Create {
                object: born.id,
                ty: born.site.value,
            };
            apply(graph, ev, emit)
        }
        HeapEvent::Free {
            address,
            object: Some(old),
            cx,
            ..
        } => {
            // The free that ends a moved realloc: the edges move along.
            if let Some((from, _, new)) = moving.get(&cx.thread).copied()
                && from == address
            {
                moving.remove(&cx.thread);
                if let Some(new) = new {
                    let edges: Vec<(u64, u64)> = graph
                        .get(old.extra.id)
                        .map(|n| {
                            n.edges()
                                .iter()
                                .enumerate()
                                .filter(|(_, t)| **t != 0)
                                .map(|(s, t)| (s as u64, *t))
                                .collect()
                        })
                        .unwrap_or_default();
                    for (slot, t) in edges {
                        let link = GraphEvent::Link {
                            from: new,
                            slot,
                            to: Some(t),
                        };
                        apply(graph, link, emit);
                    }
                }
            }
            apply(
                graph,
                GraphEvent::Delete {
                    object: old.extra.id,
                },
                emit,
            )
        }
        HeapEvent::Realloc {
            outcome: ReallocOutcome::Moved,
            old,
            new,
            cx,
            ..
        } => {
            moving.insert(cx.thread, (old, new, None));
        }
        _ => {}
    }
}

/// Keeps the graph up to date with `ev`, then emits it.
fn apply(graph: &mut ObjectGraph<()>, ev: GraphEvent, emit: &mut impl FnMut(GraphEvent)) {
    match ev {
        GraphEvent::Create { object, .. } => graph.create(object, ()),
        GraphEvent::Delete { object } => {
            graph.delete(object);
        }
        GraphEvent::Link { from, slot, to } => {
            graph.link(from, slot, to);
        }
        GraphEvent::Root { object } => graph.set_root(Some(object)),
        _ => {}
    }
    emit(ev);
}
