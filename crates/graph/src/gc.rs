//! Persistence by reachability: after every graph event outside holds
//! that may disconnect objects (a delete, an overwritten edge, a new root
//! replacing an old one, an object created outside a hold), the objects
//! the root no longer reaches are garbage. Nothing is collected before a
//! root exists.

use serde::Serialize;

use crate::graph::ObjectGraph;
use crate::view::GraphEvent;

/// Objects found unreachable after one event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Collection {
    /// The 1-based number of the record after which the collector ran.
    pub at: u64,
    /// The garbage, in id order.
    pub garbage: Vec<u64>,
}

/// When a collection is due: the one rule the collector here and PTF's
/// verifier share. A change that may disconnect objects (a delete, an
/// overwritten edge outside holds, a root replacing another, an object
/// created outside holds) makes one due at the next record end outside
/// every hold.
#[derive(Clone, Copy, Debug, Default)]
pub struct Schedule {
    depth: u64,
    dirty: bool,
}

impl Schedule {
    /// An object was created.
    pub fn created(&mut self) {
        self.dirty |= self.depth == 0;
    }

    /// An object was deleted.
    pub fn deleted(&mut self) {
        self.dirty = true;
    }

    /// A pointer field changed its target.
    pub fn relinked(&mut self) {
        self.dirty |= self.depth == 0;
    }

    /// A new root replaced an earlier one.
    pub fn root_replaced(&mut self) {
        self.dirty = true;
    }

    /// A hold (PTF's `ts`) opens.
    pub fn hold(&mut self) {
        self.depth += 1;
    }

    /// The innermost hold closes; false if none was open.
    pub fn resume(&mut self) -> bool {
        if self.depth == 0 {
            return false;
        }
        self.depth -= 1;
        true
    }

    /// Holds open now.
    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// Whether a collection is due now (and, if so, it is taken).
    pub fn take_due(&mut self) -> bool {
        let due = self.depth == 0 && self.dirty;
        if due {
            self.dirty = false;
        }
        due
    }
}

/// Simulates collection over a stream of graph events.
#[derive(Default)]
pub struct Collector {
    graph: ObjectGraph<()>,
    schedule: Schedule,
    pub collections: Vec<Collection>,
}

impl Collector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Accounts for one event.
    pub fn event(&mut self, ev: &GraphEvent) {
        match *ev {
            // Ids are never reused: a second create of a live id is ignored.
            GraphEvent::Create { object, .. } if !self.graph.contains(object) => {
                self.graph.create(object, ());
                self.schedule.created();
            }
            GraphEvent::Create { .. } => {}
            GraphEvent::Delete { object } => {
                if self.graph.delete(object).is_some() {
                    self.schedule.deleted();
                }
            }
            GraphEvent::Link { from, slot, to } => {
                let target = to.filter(|t| self.graph.contains(*t));
                if self.graph.link(from, slot, target).is_some() {
                    self.schedule.relinked();
                }
            }
            GraphEvent::Root { object } => {
                if self.graph.contains(object) && self.graph.root() != Some(object) {
                    if self.graph.root().is_some() {
                        self.schedule.root_replaced();
                    }
                    self.graph.set_root(Some(object));
                }
            }
            GraphEvent::Hold => self.schedule.hold(),
            GraphEvent::Resume => {
                self.schedule.resume();
            }
            GraphEvent::Traverse { .. } => {}
        }
    }

    /// Ends record number `at` (1-based): collects if one is due.
    pub fn end_record(&mut self, at: u64) {
        if self.schedule.take_due() {
            let garbage = self.graph.collect();
            if !garbage.is_empty() {
                self.collections.push(Collection { at, garbage });
            }
        }
    }

    /// Objects alive now.
    pub fn live(&self) -> usize {
        self.graph.len()
    }
}

/// A graph analysis behind persistence by reachability: the objects the
/// root no longer reaches are deleted (as `Delete` events after the
/// record's own) before `A` hears the record end. The collector's schedule
/// is the one `tramp verify --gc` simulates.
pub struct Collected<A> {
    inner: A,
    collector: Collector,
    collected: usize,
    records: u64,
}

impl<A> Collected<A> {
    pub fn new(inner: A) -> Self {
        Collected {
            inner,
            collector: Collector::new(),
            collected: 0,
            records: 0,
        }
    }
}

impl<A: tramp_core::Analysis<crate::view::Graph>> tramp_core::Analysis<crate::view::Graph>
    for Collected<A>
{
    type Report = A::Report;

    fn observe(&mut self, step: &crate::view::GraphStep<'_, '_>) -> Result<(), tramp_core::Error> {
        if let Some(e) = &step.event {
            self.collector.event(e);
            return self.inner.observe(step);
        }
        // The record is over: what it disconnected is collected, deleted
        // before the inner analysis hears the end.
        self.records += 1;
        self.collector.end_record(self.records);
        let new: Vec<u64> = self.collector.collections[self.collected..]
            .iter()
            .flat_map(|col| col.garbage.iter().copied())
            .collect();
        self.collected = self.collector.collections.len();
        for object in new {
            self.inner.observe(&crate::view::GraphStep {
                event: Some(GraphEvent::Delete { object }),
                record: step.record,
            })?;
        }
        self.inner.observe(step)
    }

    fn warning(&mut self, warning: &tramp_core::Warning) {
        self.inner.warning(warning);
    }

    fn finish(self) -> A::Report {
        self.inner.finish()
    }
}
