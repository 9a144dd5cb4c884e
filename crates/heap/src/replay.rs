//! Allocator replay, trace side: turns heap events into the operation
//! stream that the replay driver (`tramp-replay`) executes against a real
//! allocator, 13 bytes per operation: op (1 malloc, 2 free, 3 realloc),
//! slot (u32 LE), size (u64 LE).
//!
//! Objects are mapped to slots, and slot numbers are reused, so the driver's
//! table is as large as the most objects live at once. A realloc record
//! becomes one realloc; the alloc and free records that HATF writes after
//! it for what realloc did are recognised (same thread, same addresses,
//! right after it) and not replayed twice. `realloc(p, 0)` is replayed as
//! `free(p)`, whose meaning no allocator disputes.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use tramp_core::ReallocOutcome;

use rustc_hash::FxHashMap;
use tramp_core::Analysis;

use crate::live::Object;
use crate::view::{Heap, HeapEvent, HeapStep, Keep, Slot};

pub const OP_MALLOC: u8 = 1;
pub const OP_FREE: u8 = 2;
pub const OP_REALLOC: u8 = 3;

/// What the trace asked for, as replay operations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    pub mallocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    /// Frees of addresses that were not live (not replayed).
    pub unknown_frees: u64,
    /// Allocations at an address still live (the old object stays live).
    pub reused_live_addresses: u64,
    /// Most slots in use at once.
    pub max_slots: u64,
}

/// Writes the operation stream for a sequence of heap events: an analysis
/// of the heap view's events, whose live objects it reads by their slot.
pub struct OpWriter<W: Write> {
    out: W,
    /// Per view slot: the driver slot of that live object (`NONE` when
    /// the object was not replayed).
    by_slot: Vec<u32>,
    /// Per thread: the address and driver slot a realloc just gave the
    /// block whose alloc record follows.
    pending: FxHashMap<u64, (u64, u32)>,
    spare: Vec<u32>,
    next: u32,
    /// Requested size of each slot's block, and their sum: what the driver
    /// will hold at once, before any allocator overhead.
    sizes: Vec<u64>,
    live: u64,
    /// Refuse to go past this many live bytes (the driver would allocate
    /// them for real).
    limit: u64,
    pub counts: OpCounts,
}

const NONE: u32 = u32::MAX;

impl<W: Write> OpWriter<W> {
    pub fn new(out: W) -> Self {
        OpWriter {
            out,
            by_slot: Vec::new(),
            pending: FxHashMap::default(),
            spare: Vec::new(),
            next: 0,
            sizes: Vec::new(),
            live: 0,
            limit: u64::MAX,
            counts: OpCounts::default(),
        }
    }

    /// Stops with an error (kind `OutOfMemory`) before the live bytes the
    /// driver would hold exceed `limit`.
    pub fn with_limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    fn op(&mut self, op: u8, slot: u32, size: u64) -> io::Result<()> {
        let i = slot as usize;
        if self.sizes.len() <= i {
            self.sizes.resize(i + 1, 0);
        }
        let after = self.live - self.sizes[i] + if op == OP_FREE { 0 } else { size };
        if after > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!(
                    "replaying this would hold {after} bytes live, over the memory limit of {} bytes (--memory-limit raises it)",
                    self.limit
                ),
            ));
        }
        self.live = after;
        self.sizes[i] = if op == OP_FREE { 0 } else { size };
        let mut b = [0u8; 13];
        b[0] = op;
        b[1..5].copy_from_slice(&slot.to_le_bytes());
        b[5..13].copy_from_slice(&size.to_le_bytes());
        match op {
            OP_MALLOC => self.counts.mallocs += 1,
            OP_FREE => self.counts.frees += 1,
            _ => self.counts.reallocs += 1,
        }
        self.out.write_all(&b)
    }

    fn new_slot(&mut self) -> u32 {
        let s = self.spare.pop().unwrap_or_else(|| {
            self.next += 1;
            self.next - 1
        });
        self.counts.max_slots = self
            .counts
            .max_slots
            .max((self.next - self.spare.len() as u32) as u64);
        s
    }

    /// The driver slot of a live object, forgotten (it leaves the map).
    fn take(&mut self, o: &Object<Slot>) -> Option<u32> {
        let e = self.by_slot.get_mut(o.extra.slot() as usize)?;
        let rs = std::mem::replace(e, NONE);
        (rs != NONE).then_some(rs)
    }

    fn bind(&mut self, o: &Object<Slot>, rs: u32) {
        let i = o.extra.slot() as usize;
        if self.by_slot.len() <= i {
            self.by_slot.resize(i + 1, NONE);
        }
        self.by_slot[i] = rs;
    }

    pub fn event(&mut self, step: &HeapStep<Slot>) -> io::Result<()> {
        match step.event {
            HeapEvent::Alloc {
                object,
                displaced,
                implied,
                cx,
            } => {
                if implied {
                    // The block a realloc made: it is the realloc's slot.
                    if let Some((address, rs)) = self.pending.remove(&cx.thread)
                        && address == object.address
                    {
                        self.bind(&object, rs);
                    }
                    return Ok(());
                }
                if displaced > 0 {
                    self.counts.reused_live_addresses += 1;
                }
                let slot = self.new_slot();
                self.bind(&object, slot);
                self.op(OP_MALLOC, slot, object.size)
            }
            // The displaced object stays live in the driver: its free was
            // never seen.
            HeapEvent::Displaced { object, .. } => {
                self.take(&object);
                Ok(())
            }
            HeapEvent::Free {
                object, implied, ..
            } => {
                let slot = object.as_ref().and_then(|o| self.take(o));
                if implied {
                    return Ok(());
                }
                match slot {
                    Some(slot) => {
                        self.spare.push(slot);
                        self.op(OP_FREE, slot, 0)
                    }
                    None => {
                        self.counts.unknown_frees += 1;
                        Ok(())
                    }
                }
            }
            HeapEvent::Realloc {
                outcome,
                size,
                old,
                new,
                from,
                cx,
                ..
            } => {
                self.pending.remove(&cx.thread);
                let known = from.and_then(|o| {
                    let rs = *self.by_slot.get(o.extra.slot() as usize)?;
                    (rs != NONE).then_some((o, rs))
                });
                match (outcome, known) {
                    (ReallocOutcome::FreeOnly, Some((o, slot))) => {
                        self.take(&o);
                        self.spare.push(slot);
                        self.op(OP_FREE, slot, 0)
                    }
                    (ReallocOutcome::FreeOnly, None) => Ok(()),
                    (ReallocOutcome::InPlace, Some((o, slot)))
                    | (ReallocOutcome::Moved, Some((o, slot))) => {
                        if old != new {
                            self.take(&o);
                            self.pending.insert(cx.thread, (new, slot));
                        }
                        self.op(OP_REALLOC, slot, size)
                    }
                    // realloc(NULL, n), or a resize of an object we never saw.
                    _ => {
                        let slot = self.new_slot();
                        self.pending.insert(cx.thread, (new, slot));
                        self.op(OP_REALLOC, slot, size)
                    }
                }
            }
            _ => Ok(()),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// What the replay driver reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverReport {
    pub mallocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    pub failed: u64,
    pub ns_per_malloc: f64,
    pub ns_per_free: f64,
    pub ns_per_realloc: f64,
    /// The driver's wall time: reading the operation stream from tramp,
    /// touching pages, and the allocator's calls.
    pub seconds: f64,
    /// Time inside the allocator's calls only (what the per-operation
    /// times add up to).
    #[serde(default)]
    pub alloc_seconds: f64,
    /// The driver's peak RSS (VmHWM, which starts afresh at exec) before
    /// the first operation, its input buffer in use.
    pub rss_before_kib: i64,
    /// The driver's peak RSS (VmHWM) at the end.
    pub peak_rss_kib: i64,
    /// The driver's own slot table (one pointer per slot), not the
    /// allocator's memory.
    #[serde(default)]
    pub slots_kib: i64,
    pub slots: u64,
}

impl<W: Write> Analysis<Heap<Slot>> for OpWriter<W> {
    type Report = OpCounts;

    #[inline]
    fn observe(&mut self, step: &HeapStep<Slot>) -> Result<(), tramp_core::Error> {
        Ok(self.event(step)?)
    }

    fn finish(self) -> OpCounts {
        self.counts
    }
}

/// The trace side of a replay as an analysis of records: the heap view
/// feeds the heap statistics and the operation stream.
pub struct ReplayFeed<W: Write> {
    stats: crate::HeapStats<OpWriter<W>, Slot>,
}

impl<W: Write> ReplayFeed<W> {
    /// A feed whose driver may hold at most `limit` live bytes.
    pub fn new(out: W, limit: u64) -> Self {
        ReplayFeed {
            stats: crate::HeapStats::with(OpWriter::new(out).with_limit(limit)),
        }
    }

    /// The operations written so far.
    pub fn counts(&self) -> &OpCounts {
        &self.stats.more().counts
    }

    /// The trace's statistics, the operations written, and the stream.
    pub fn into_parts(self) -> (crate::Report, OpCounts, W) {
        let (report, ops) = self.stats.into_parts();
        (report, ops.counts.clone(), ops.into_inner())
    }
}

impl<W: Write> Analysis for ReplayFeed<W> {
    type Report = OpCounts;

    #[inline]
    fn observe(&mut self, rec: &tramp_core::Record<'_>) -> Result<(), tramp_core::Error> {
        self.stats.observe(rec)
    }

    fn finish(self) -> OpCounts {
        self.into_parts().1
    }
}

impl std::fmt::Display for OpCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} malloc, {} free, {} realloc ({} unknown frees skipped)",
            self.mallocs, self.frees, self.reallocs, self.unknown_frees
        )
    }
}

/// A replay's findings: the trace's side and the driver's measurements.
#[derive(Clone, Debug)]
pub struct ReplayReport {
    /// The allocator, as named (or glibc).
    pub allocator: String,
    pub trace: crate::Report,
    pub operations: OpCounts,
    pub driver: DriverReport,
}

impl ReplayReport {
    /// What the allocator added to the driver's peak RSS: the peak at the
    /// end less the peak before the first operation (both VmHWM) and
    /// less the driver's own slot table.
    pub fn footprint_kib(&self) -> i64 {
        (self.driver.peak_rss_kib - self.driver.rss_before_kib - self.driver.slots_kib).max(0)
    }

    /// The footprint over the trace's maximum live bytes.
    pub fn footprint_ratio(&self) -> f64 {
        if self.trace.max_live_bytes > 0 {
            self.footprint_kib() as f64 * 1024.0 / self.trace.max_live_bytes as f64
        } else {
            0.0
        }
    }
}

impl Serialize for ReplayReport {
    /// One JSON object, keys in sorted order.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = &self.trace;
        serde_json::json!({
            "allocator": self.allocator,
            "trace": { "allocs": t.total_allocs, "frees": t.total_frees, "reallocs": t.total_reallocs,
                       "max_live_bytes": t.max_live_bytes, "max_live_objects": t.max_live_objects },
            "operations": self.operations,
            "driver": self.driver,
            "footprint_kib": self.footprint_kib(),
            "footprint_over_max_live_bytes": self.footprint_ratio(),
        })
        .serialize(s)
    }
}

impl std::fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (t, d, c) = (&self.trace, &self.driver, &self.operations);
        write!(
            f,
            "allocator                 {}\n\
             trace                     {} allocs, {} frees, {} reallocs; max live {} objects, {} bytes\n\
             replayed                  {} malloc, {} free, {} realloc ({} unknown frees skipped, {} failed)\n\
             time per operation        malloc {:.1} ns, free {:.1} ns, realloc {:.1} ns\n\
             time                      {:.3} s in allocator calls; {:.3} s driver wall time (with reading the operations and touching pages)\n\
             peak RSS                  {} KiB (driver before the first operation: {} KiB; its slot table: {} KiB)\n\
             footprint                 {} KiB = {:.2} x the trace's max live bytes (peak RSS less the driver's own)\n",
            self.allocator,
            t.total_allocs,
            t.total_frees,
            t.total_reallocs,
            t.max_live_objects,
            t.max_live_bytes,
            d.mallocs,
            d.frees,
            d.reallocs,
            c.unknown_frees,
            d.failed,
            d.ns_per_malloc,
            d.ns_per_free,
            d.ns_per_realloc,
            d.alloc_seconds,
            d.seconds,
            d.peak_rss_kib,
            d.rss_before_kib,
            d.slots_kib,
            self.footprint_kib(),
            self.footprint_ratio()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::HeapView;
    use crate::view::testing::Trace;

    fn ops(bytes: &[u8]) -> Vec<(u8, u32, u64)> {
        bytes
            .chunks(13)
            .map(|c| {
                (
                    c[0],
                    u32::from_le_bytes(c[1..5].try_into().unwrap()),
                    u64::from_le_bytes(c[5..13].try_into().unwrap()),
                )
            })
            .collect()
    }

    #[test]
    fn reallocs_replace_their_implied_records_and_slots_are_reused() {
        let mut w = OpWriter::new(Vec::new());
        let mut tr = Trace::new();
        let mut view = HeapView::new();
        let mut feed = |r: &tramp_core::Record<'_>| view.feed(r, &mut |s| Ok(w.event(s)?)).unwrap();
        tr.alloc(10, 0x100, 0, &mut feed);
        // moved: realloc, then the alloc and free it implies
        tr.realloc(ReallocOutcome::Moved, 20, 0x100, 0x200, 0, &mut feed);
        tr.alloc(20, 0x200, 0, &mut feed);
        tr.free(0x100, 0, &mut feed);
        // realloc(NULL, 5) then its alloc
        tr.realloc(ReallocOutcome::AllocOnly, 5, 0, 0x300, 0, &mut feed);
        tr.alloc(5, 0x300, 0, &mut feed);
        // realloc(p, 0) then its free
        tr.realloc(ReallocOutcome::FreeOnly, 0, 0x300, 0, 0, &mut feed);
        tr.free(0x300, 0, &mut feed);
        tr.free(0x200, 0, &mut feed);
        tr.free(0x999, 0, &mut feed);
        tr.alloc(7, 0x400, 0, &mut feed);
        let c = w.counts.clone();
        assert_eq!(
            ops(&w.into_inner()),
            vec![
                (1, 0, 10),
                (3, 0, 20),
                (3, 1, 5),
                (2, 1, 0),
                (2, 0, 0),
                (1, 0, 7)
            ]
        );
        assert_eq!(
            (c.mallocs, c.frees, c.reallocs, c.unknown_frees, c.max_slots),
            (2, 2, 2, 1, 2)
        );
    }
}
