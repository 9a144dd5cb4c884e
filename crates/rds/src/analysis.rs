//! RDS profiling as a tramp analysis: records → object-graph events
//! (tramp-graph's view) → the profile builder.
//!
//! Object traces (PTF): creation is allocation (the format object id is
//! the static id), edge writes are `edge_add` (a null write clears the
//! field), edge reads `edge_traverse`, deletion `node_delete`. Heap traces:
//! allocations are objects typed by their site, a store of a pointer into
//! another live object is `edge_add`, a load of one `edge_traverse`, a
//! free `node_delete`. Time is the record's time stamp, else its number.
//!
//! Every load of a heap trace goes through the CPU-cache model (seed
//! 002's Table 1 unless told otherwise) so its state is realistic; the
//! latency of pointer-chasing loads is charged to their instance. Object
//! traces have no addresses: objects are laid out 64 bytes apart by id
//! and slot n at byte 8n (a model, stated in docs/rds.md).

use rustc_hash::FxHashMap;
use tramp_cachesim::cpu::Hierarchy;
use tramp_core::{Analysis, Error, Record, RecordKind, Role};
use tramp_graph::gc::Collector;
use tramp_graph::view::{GraphEvent, GraphView};

use crate::builder::Builder;
use crate::report::RdsReport;

/// The RDS profiler over records.
pub struct RdsAnalysis {
    view: GraphView,
    builder: Builder,
    sites: FxHashMap<u64, u32>,
    site_names: Vec<u64>,
    cpu: Hierarchy,
    records: u64,
    top: usize,
    /// Persistence by reachability (PTF): unreachable objects are deleted.
    collector: Option<Collector>,
    collected: usize,
}

impl RdsAnalysis {
    /// A profiler with the Table 1 hierarchy; reports list `top` instances.
    pub fn new(top: usize) -> RdsAnalysis {
        RdsAnalysis::with_cpu(Hierarchy::table1(), top)
    }

    pub fn with_cpu(cpu: Hierarchy, top: usize) -> RdsAnalysis {
        RdsAnalysis {
            view: GraphView::new(),
            builder: Builder::new(),
            sites: FxHashMap::default(),
            site_names: Vec::new(),
            cpu,
            records: 0,
            top,
            collector: None,
            collected: 0,
        }
    }

    /// Also deletes the objects the root no longer reaches, as persistence
    /// by reachability would (what `tramp verify --gc` simulates): PTF
    /// traces of stores that collect rather than delete.
    pub fn with_collection(mut self) -> RdsAnalysis {
        self.collector = Some(Collector::new());
        self
    }

    fn site(&mut self, ty: u64) -> u32 {
        let next = self.sites.len() as u32;
        *self.sites.entry(ty).or_insert_with(|| {
            self.site_names.push(ty);
            next
        })
    }

    pub fn builder(&self) -> &Builder {
        &self.builder
    }
}

impl Analysis for RdsAnalysis {
    type Report = RdsReport;

    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.records += 1;
        let kind = rec.record_type().kind;
        let time = rec.role_u64(Role::Time).unwrap_or(self.records);
        let pc = rec.role_u64(Role::Site).unwrap_or(0);
        let load_latency = match kind {
            RecordKind::Load => rec.role_u64(Role::Address).map(|a| self.cpu.access(a)),
            _ => None,
        };
        let mut events = Vec::new();
        self.view.observe(rec, &mut |e| events.push(e));
        if let Some(c) = &mut self.collector {
            for e in &events {
                c.event(e);
            }
            c.end_record(self.records);
            let new: Vec<u64> = c.collections[self.collected..]
                .iter()
                .flat_map(|col| col.garbage.iter().copied())
                .collect();
            self.collected = c.collections.len();
            events.extend(new.into_iter().map(|object| GraphEvent::Delete { object }));
        }
        for e in events {
            match e {
                GraphEvent::Create { object, ty } => {
                    let site = self.site(ty);
                    self.builder.alloc(object, site, 0, time);
                }
                GraphEvent::Delete { object } => self.builder.node_delete(object, pc, time),
                GraphEvent::Link { from, slot, to } => match to {
                    Some(t) => self.builder.edge_add(from, slot, t, pc, time),
                    None => self.builder.edge_clear(from, slot, time),
                },
                GraphEvent::Traverse { from, slot, to } => {
                    let latency = match load_latency {
                        Some(l) => l,
                        None => self
                            .cpu
                            .access(from.wrapping_mul(64).wrapping_add(slot * 8)),
                    };
                    self.builder
                        .edge_traverse(from, slot, to, pc, time, latency);
                }
                GraphEvent::Root { .. } | GraphEvent::Hold | GraphEvent::Resume => {}
            }
        }
        Ok(())
    }

    fn finish(self) -> RdsReport {
        RdsReport::new(&self.builder, &self.site_names, self.top)
    }
}
