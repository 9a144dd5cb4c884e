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

use crate::implied::ImpliedRecords;
use crate::live::LiveObjects;
use crate::view::HeapEvent;

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

/// Writes the operation stream for a sequence of heap events.
pub struct OpWriter<W: Write> {
    out: W,
    /// Live objects, each with its slot.
    slots: LiveObjects<u32>,
    spare: Vec<u32>,
    next: u32,
    /// The alloc and free records the last realloc on each thread implies.
    implied: ImpliedRecords,
    /// Requested size of each slot's block, and their sum: what the driver
    /// will hold at once, before any allocator overhead.
    sizes: Vec<u64>,
    live: u64,
    /// Refuse to go past this many live bytes (the driver would allocate
    /// them for real).
    limit: u64,
    pub counts: OpCounts,
}

impl<W: Write> OpWriter<W> {
    pub fn new(out: W) -> Self {
        OpWriter {
            out,
            slots: LiveObjects::new(),
            spare: Vec::new(),
            next: 0,
            implied: ImpliedRecords::default(),
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

    fn bind(&mut self, address: u64, slot: u32) {
        if !self.slots.insert(address, 0, slot).is_empty() {
            self.counts.reused_live_addresses += 1;
        }
    }

    pub fn event(&mut self, ev: &HeapEvent) -> io::Result<()> {
        match *ev {
            HeapEvent::Alloc { size, address, cx } => {
                if self.implied.is_implied_alloc(cx.thread, address) {
                    return Ok(());
                }
                let slot = self.new_slot();
                self.bind(address, slot);
                self.op(OP_MALLOC, slot, size)
            }
            HeapEvent::Free { address, cx } => {
                if self.implied.is_implied_free(cx.thread, address) {
                    return Ok(());
                }
                match self.slots.remove(address).map(|o| o.extra) {
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
                cx,
            } => {
                self.implied.forget(cx.thread);
                let known = self.slots.get(old).map(|o| *o.extra);
                match (outcome, known) {
                    (ReallocOutcome::FreeOnly, Some(slot)) => {
                        self.slots.remove(old);
                        self.spare.push(slot);
                        self.implied.after_realloc(cx.thread, None, Some(old));
                        self.op(OP_FREE, slot, 0)
                    }
                    (ReallocOutcome::FreeOnly, None) => {
                        self.implied.after_realloc(cx.thread, None, Some(old));
                        Ok(())
                    }
                    (ReallocOutcome::InPlace, Some(slot)) | (ReallocOutcome::Moved, Some(slot)) => {
                        if old != new {
                            self.slots.remove(old);
                            self.bind(new, slot);
                            self.implied.after_realloc(cx.thread, Some(new), Some(old));
                        }
                        self.op(OP_REALLOC, slot, size)
                    }
                    // realloc(NULL, n), or a resize of an object we never saw.
                    _ => {
                        let slot = self.new_slot();
                        self.bind(new, slot);
                        self.implied.after_realloc(cx.thread, Some(new), None);
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

/// The trace side of a replay as an analysis: every record feeds the heap
/// statistics and, through the heap view, the operation stream.
pub struct ReplayFeed<W: Write> {
    pub ops: OpWriter<W>,
    view: crate::HeapView,
    stats: crate::HeapStats,
}

impl<W: Write> ReplayFeed<W> {
    /// A feed whose driver may hold at most `limit` live bytes.
    pub fn new(out: W, limit: u64) -> Self {
        ReplayFeed {
            ops: OpWriter::new(out).with_limit(limit),
            view: crate::HeapView::new(),
            stats: crate::HeapStats::new(),
        }
    }

    /// The trace's statistics, the operations written, and the stream.
    pub fn into_parts(self) -> (crate::Report, OpCounts, W) {
        let counts = self.ops.counts.clone();
        (self.stats.report(), counts, self.ops.into_inner())
    }
}

impl<W: Write> tramp_core::Analysis for ReplayFeed<W> {
    type Report = OpCounts;

    #[inline]
    fn observe(&mut self, rec: &tramp_core::Record<'_>) -> Result<(), tramp_core::Error> {
        self.stats.observe(rec);
        if let Some(ev) = self.view.event(rec) {
            self.ops.event(&ev)?;
        }
        Ok(())
    }

    fn finish(self) -> OpCounts {
        self.ops.counts
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
    use crate::view::Context;

    fn cx() -> Context {
        Context::default()
    }

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
        let evs = [
            HeapEvent::Alloc {
                size: 10,
                address: 0x100,
                cx: cx(),
            },
            // moved: realloc, then the alloc and free it implies
            HeapEvent::Realloc {
                outcome: ReallocOutcome::Moved,
                size: 20,
                old: 0x100,
                new: 0x200,
                cx: cx(),
            },
            HeapEvent::Alloc {
                size: 20,
                address: 0x200,
                cx: cx(),
            },
            HeapEvent::Free {
                address: 0x100,
                cx: cx(),
            },
            // realloc(NULL, 5) then its alloc
            HeapEvent::Realloc {
                outcome: ReallocOutcome::AllocOnly,
                size: 5,
                old: 0,
                new: 0x300,
                cx: cx(),
            },
            HeapEvent::Alloc {
                size: 5,
                address: 0x300,
                cx: cx(),
            },
            // realloc(p, 0) then its free
            HeapEvent::Realloc {
                outcome: ReallocOutcome::FreeOnly,
                size: 0,
                old: 0x300,
                new: 0,
                cx: cx(),
            },
            HeapEvent::Free {
                address: 0x300,
                cx: cx(),
            },
            HeapEvent::Free {
                address: 0x200,
                cx: cx(),
            },
            HeapEvent::Free {
                address: 0x999,
                cx: cx(),
            },
            HeapEvent::Alloc {
                size: 7,
                address: 0x400,
                cx: cx(),
            },
        ];
        for e in &evs {
            w.event(e).unwrap();
        }
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
