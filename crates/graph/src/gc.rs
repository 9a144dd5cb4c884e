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

/// Simulates collection over a stream of graph events.
#[derive(Default)]
pub struct Collector {
    graph: ObjectGraph<()>,
    depth: u64,
    dirty: bool,
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
                self.dirty |= self.depth == 0;
            }
            GraphEvent::Create { .. } => {}
            GraphEvent::Delete { object } => {
                if self.graph.delete(object).is_some() {
                    self.dirty = true;
                }
            }
            GraphEvent::Link { from, slot, to } => {
                let target = to.filter(|t| self.graph.contains(*t));
                if self.graph.link(from, slot, target).is_some() && self.depth == 0 {
                    self.dirty = true;
                }
            }
            GraphEvent::Root { object } => {
                if self.graph.contains(object) && self.graph.root() != Some(object) {
                    self.dirty |= self.graph.root().is_some();
                    self.graph.set_root(Some(object));
                }
            }
            GraphEvent::Hold => self.depth += 1,
            GraphEvent::Resume => self.depth = self.depth.saturating_sub(1),
            GraphEvent::Traverse { .. } => {}
        }
    }

    /// Ends record number `at` (1-based): collects if one is due.
    pub fn end_record(&mut self, at: u64) {
        if self.depth == 0 && self.dirty {
            self.dirty = false;
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
