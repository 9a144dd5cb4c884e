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
use tramp_heap::{Identity, LiveObjects};

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
/// names its target) and, for heap traces, the live objects.
#[derive(Default)]
pub struct GraphView {
    graph: ObjectGraph<()>,
    live: Option<LiveObjects<Identity>>,
    /// A moved realloc on a thread: (old address, new address), until the
    /// free of the old block.
    moving: FxHashMap<u64, (u64, u64)>,
    records: u64,
}

impl GraphView {
    pub fn new() -> Self {
        GraphView {
            live: Some(LiveObjects::with_intervals()),
            ..Default::default()
        }
    }

    /// The graph as the events so far left it.
    pub fn graph(&mut self) -> &mut ObjectGraph<()> {
        &mut self.graph
    }

    /// Calls `emit` with the graph events `rec` stands for (none, one, or
    /// several: an allocation over live objects deletes them first).
    pub fn observe(&mut self, rec: &Record<'_>, emit: &mut impl FnMut(GraphEvent)) {
        self.records += 1;
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
            RecordKind::Alloc => {
                let address = u(Role::Address).unwrap_or(0);
                let size = u(Role::Size).unwrap_or(0);
                let site = u(Role::Site).unwrap_or(0);
                let birth = u(Role::Time).unwrap_or(self.records);
                let live = self.live.get_or_insert_with(LiveObjects::with_intervals);
                let (object, displaced) = live.insert_identified(address, size, site, birth);
                for d in displaced {
                    self.apply(GraphEvent::Delete { object: d.extra.id }, emit);
                }
                GraphEvent::Create { object, ty: site }
            }
            RecordKind::Free => {
                let address = u(Role::Address).unwrap_or(0);
                let thread = u(Role::Thread).unwrap_or(0);
                let Some(live) = &mut self.live else { return };
                let Some(old) = live.remove(address) else {
                    return;
                };
                // The free that ends a moved realloc: the edges move along.
                if let Some((from, to)) = self.moving.get(&thread).copied()
                    && from == address
                {
                    self.moving.remove(&thread);
                    if let Some(new) = live.get(to).map(|o| o.extra.id) {
                        let edges: Vec<(u64, u64)> = self
                            .graph
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
                            self.apply(
                                GraphEvent::Link {
                                    from: new,
                                    slot,
                                    to: Some(t),
                                },
                                emit,
                            );
                        }
                    }
                }
                GraphEvent::Delete {
                    object: old.extra.id,
                }
            }
            RecordKind::Realloc(outcome) => {
                let (old, new) = (
                    u(Role::OldAddress).unwrap_or(0),
                    u(Role::Address).unwrap_or(0),
                );
                let Some(live) = &mut self.live else { return };
                match outcome {
                    ReallocOutcome::InPlace => {
                        let key = if live.contains(new) { new } else { old };
                        live.resize(key, u(Role::Size).unwrap_or(0));
                    }
                    ReallocOutcome::Moved => {
                        self.moving.insert(u(Role::Thread).unwrap_or(0), (old, new));
                    }
                    _ => {}
                }
                return;
            }
            RecordKind::Store | RecordKind::Load => {
                let Some(live) = &self.live else { return };
                let address = u(Role::Address).unwrap_or(0);
                let Some(x) = live.find(address) else { return };
                let (from, slot) = (x.extra.id, address - x.address);
                let to = u(Role::Value)
                    .and_then(|v| live.find(v))
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
            _ => return,
        };
        self.apply(ev, emit);
    }

    /// Keeps the graph up to date with `ev`, then emits it.
    fn apply(&mut self, ev: GraphEvent, emit: &mut impl FnMut(GraphEvent)) {
        match ev {
            GraphEvent::Create { object, .. } => self.graph.create(object, ()),
            GraphEvent::Delete { object } => {
                self.graph.delete(object);
            }
            GraphEvent::Link { from, slot, to } => {
                self.graph.link(from, slot, to);
            }
            GraphEvent::Root { object } => self.graph.set_root(Some(object)),
            _ => {}
        }
        emit(ev);
    }
}
