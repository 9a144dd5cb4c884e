//! RDS profiling as a tramp analysis of graph events: records →
//! tramp-graph's `GraphFlow` → [`RdsProfile`] → the profile builder; with
//! `--gc`, the collector (`tramp_graph::Collected`) sits between them.
//! [`RdsAnalysis`] is the whole composition, an analysis of records.
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
use tramp_graph::Collected;
use tramp_graph::view::{Graph, GraphEvent, GraphFlow, GraphStep};

use crate::builder::Builder;
use crate::report::RdsReport;

/// The RDS profiler over graph events.
pub struct RdsProfile {
    builder: Builder,
    sites: FxHashMap<u64, u32>,
    site_names: Vec<u64>,
    cpu: Hierarchy,
    /// Records whose events are over.
    records: u64,
    top: usize,
    /// The current record's load, through the CPU model once (before its
    /// events are charged): `Some(latency)` once taken.
    load: Option<Option<u64>>,
}

impl RdsProfile {
    /// A profiler with `cpu`; reports list `top` instances.
    pub fn new(cpu: Hierarchy, top: usize) -> RdsProfile {
        RdsProfile {
            builder: Builder::new(),
            sites: FxHashMap::default(),
            site_names: Vec::new(),
            cpu,
            records: 0,
            top,
            load: None,
        }
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

    /// Every load of a heap trace goes through the CPU model, once, first.
    fn load_latency(&mut self, rec: &Record<'_>) -> Option<u64> {
        if self.load.is_none() {
            self.load = Some(match rec.record_type().kind {
                RecordKind::Load => rec.role_u64(Role::Address).map(|a| self.cpu.access(a)),
                _ => None,
            });
        }
        self.load.flatten()
    }
}

impl Analysis<Graph> for RdsProfile {
    type Report = RdsReport;

    fn observe(&mut self, step: &GraphStep<'_, '_>) -> Result<(), Error> {
        let rec = step.record;
        let load_latency = self.load_latency(rec);
        let Some(e) = step.event else {
            self.records += 1;
            self.load = None;
            return Ok(());
        };
        let time = rec.role_u64(Role::Time).unwrap_or(self.records + 1);
        let pc = rec.role_u64(Role::Site).unwrap_or(0);
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
        Ok(())
    }

    fn finish(self) -> RdsReport {
        RdsReport::new(&self.builder, &self.site_names, self.top)
    }
}

/// The RDS profiler over records: the graph flow feeding the profile,
/// with the collector between them when asked.
pub enum RdsAnalysis {
    Plain(GraphFlow<RdsProfile>),
    Collected(GraphFlow<Collected<RdsProfile>>),
}

impl RdsAnalysis {
    /// A profiler with the Table 1 hierarchy; reports list `top` instances.
    pub fn new(top: usize) -> RdsAnalysis {
        RdsAnalysis::with_cpu(Hierarchy::table1(), top)
    }

    pub fn with_cpu(cpu: Hierarchy, top: usize) -> RdsAnalysis {
        RdsAnalysis::Plain(GraphFlow::new(RdsProfile::new(cpu, top)))
    }

    /// Also deletes the objects the root no longer reaches, as persistence
    /// by reachability would (what `tramp verify --gc` simulates): PTF
    /// traces of stores that collect rather than delete.
    pub fn with_collection(self) -> RdsAnalysis {
        match self {
            RdsAnalysis::Plain(flow) => {
                let profile = flow.into_analyses();
                RdsAnalysis::Collected(GraphFlow::new(Collected::new(profile)))
            }
            c => c,
        }
    }
}

impl Analysis for RdsAnalysis {
    type Report = RdsReport;

    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        match self {
            RdsAnalysis::Plain(f) => f.observe(rec),
            RdsAnalysis::Collected(f) => f.observe(rec),
        }
    }

    fn finish(self) -> RdsReport {
        match self {
            RdsAnalysis::Plain(f) => f.finish(),
            RdsAnalysis::Collected(f) => f.finish(),
        }
    }
}
