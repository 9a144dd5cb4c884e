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
use tramp_core::{Analysis, Error, Events, ReallocOutcome, Record, RecordKind, Role, Warning};
use tramp_heap::{Born, Heap, HeapEvent, HeapStep, HeapView};

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
        // The heap half never fails with no heap analysis beside it.
        let _ = self.observe_with(rec, &mut (), emit);
    }

    /// The same, with `heap` fed the heap events the view's live-object map
    /// makes of `rec` (the one map both halves read); its error, if any,
    /// stops the run.
    pub fn observe_with<H: Analysis<Heap<Born>>>(
        &mut self,
        rec: &Record<'_>,
        heap_analysis: &mut H,
        emit: &mut impl FnMut(GraphEvent),
    ) -> Result<(), Error> {
        let ty = rec.record_type();
        let u = |role: Role| rec.role_u64(role);
        let ev = match ty.kind {
            RecordKind::ObjectCreate => {
                let Some(object) = u(Role::ObjectId).filter(|o| *o != 0) else {
                    return Ok(());
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
                let Some(x) = heap.find(address) else {
                    return Ok(());
                };
                let (from, slot) = (x.extra.id, address - x.address);
                let to = u(Role::Value)
                    .and_then(|v| heap.find(v))
                    .map(|y| y.extra.id);
                if ty.kind == RecordKind::Load {
                    if to.is_none() {
                        return Ok(());
                    }
                    GraphEvent::Traverse { from, slot, to }
                } else {
                    if to.is_none() && self.graph.edge(from, slot).is_none() {
                        return Ok(()); // data over data
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
                return heap.feed(rec, &mut |step| {
                    heap_half(graph, moving, step, emit);
                    heap_analysis.observe(step)
                });
            }
        };
        apply(&mut self.graph, ev, emit);
        Ok(())
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

/// The stream of graph events (`Analysis<Graph>` subscribes to it): each
/// record's events, each with the record it came from, then a step with no
/// event, which ends the record.
pub struct Graph;

/// One step of the graph stream.
pub struct GraphStep<'a, 'r> {
    /// `None`: the record's events are over.
    pub event: Option<GraphEvent>,
    pub record: &'a Record<'r>,
}

impl Events for Graph {
    type Event<'a> = GraphStep<'a, 'a>;
}

/// No graph analysis.
impl Analysis<Graph> for () {
    type Report = ();

    fn observe(&mut self, _: &GraphStep<'_, '_>) -> Result<(), Error> {
        Ok(())
    }

    fn finish(self) {}
}

/// The object-graph view with the analyses it feeds: an analysis of
/// records. `A` reads graph events; `H` reads the heap events of the same
/// view's live-object map (heap statistics beside an RDS profile, say),
/// so one pass keeps one map.
pub struct GraphFlow<A, H = ()> {
    view: GraphView,
    analyses: A,
    heap: H,
}

impl<A: Analysis<Graph>> GraphFlow<A> {
    pub fn new(analyses: A) -> Self {
        GraphFlow::with_heap(analyses, ())
    }
}

impl<A: Analysis<Graph>, H: Analysis<Heap<Born>>> GraphFlow<A, H> {
    /// Graph analyses `analyses` and heap analyses `heap` on one view.
    pub fn with_heap(analyses: A, heap: H) -> Self {
        GraphFlow {
            view: GraphView::new(),
            analyses,
            heap,
        }
    }

    /// The graph analyses, done with the records (before any record: a
    /// new flow around them).
    pub fn into_analyses(self) -> A {
        self.analyses
    }

    /// Both reports.
    pub fn finish_with(self) -> (A::Report, H::Report) {
        (self.analyses.finish(), self.heap.finish())
    }
}

impl<A: Analysis<Graph>, H: Analysis<Heap<Born>>> Analysis for GraphFlow<A, H> {
    type Report = A::Report;

    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let GraphFlow {
            view,
            analyses,
            heap,
        } = self;
        let mut failed = Ok(());
        view.observe_with(rec, heap, &mut |event| {
            if failed.is_ok() {
                failed = analyses.observe(&GraphStep {
                    event: Some(event),
                    record: rec,
                });
            }
        })?;
        failed?;
        analyses.observe(&GraphStep {
            event: None,
            record: rec,
        })
    }

    fn warning(&mut self, warning: &Warning) {
        self.analyses.warning(warning);
        self.heap.warning(warning);
    }

    fn finish(self) -> A::Report {
        self.analyses.finish()
    }
}
