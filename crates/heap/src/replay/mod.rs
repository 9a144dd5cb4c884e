//! Allocator replay, trace side: turns heap events into a replay plan
//! (layout in [`plan_format`], docs/formats/replay-plan.md) that the replay
//! driver (`tramp-replay`) executes against a real allocator, each traced
//! thread on a thread of its own.
//!
//! * Objects are mapped to numbered slots. A slot freed by a thread is
//!   reused first by that thread (one free list per thread), so that the
//!   driver's threads rarely wait for each other only because they share
//!   a slot; an ended thread's free slots go to a shared pool. The
//!   driver's slot table is as large as the most slots in use at once.
//! * A realloc record becomes one realloc; the alloc and free records that
//!   HATF writes after it for what realloc did are recognised (same
//!   thread, same addresses, right after it) and not replayed twice.
//!   `realloc(p, 0)` is replayed as `free(p)`, whose meaning no allocator
//!   disputes.
//! * Threads are numbered in order of first appearance; a thread whose
//!   end the trace records gets a new number if its id appears again.
//!   Heaps likewise, heap 0 being the allocator's default heap. A heap's
//!   destruction frees the objects it still holds (they die with it),
//!   each as a free of its own, before the heap itself goes.
//! * Frees of addresses that are not live are not replayed. When such an
//!   address is then allocated by another thread, the trace put a free
//!   before its allocation — an order across threads the replay cannot
//!   keep — and the plan's report says so.

pub mod plan_format;

use std::io::{self, Seek, SeekFrom, Write};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tramp_core::{Analysis, ReallocOutcome};

use crate::live::Object;
use crate::view::{Heap, HeapEvent, HeapStep, Keep, Slot};
use plan_format::{Header, MAX_OP_LEN, Op};

/// One replay thread as the plan has it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanThread {
    /// The trace's thread id.
    pub trace_thread: u64,
    pub mallocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    /// Every operation the thread executes (heap creations and
    /// destructions too).
    pub items: u64,
}

/// A free the trace put before its allocation on another thread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreeBeforeAlloc {
    pub address: u64,
    /// The trace threads that freed and then allocated it.
    pub freed_by: u64,
    pub allocated_by: u64,
}

/// What the trace asked for, as replay operations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanReport {
    pub mallocs: u64,
    /// Frees replayed (free calls, `realloc(p, 0)`, and the objects
    /// destroyed heaps still held).
    pub frees: u64,
    pub reallocs: u64,
    pub heap_creates: u64,
    pub heap_destroys: u64,
    /// Objects still live in a heap when it was destroyed (freed then).
    pub heap_destroy_frees: u64,
    /// `realloc(p, 0)` calls, replayed as frees (and counted in `frees`).
    pub realloc_frees: u64,
    /// `realloc(p, 0)` of addresses not live (not replayed).
    pub unknown_realloc_frees: u64,
    /// Frees of addresses that were not live (not replayed).
    pub unknown_frees: u64,
    /// Unknown frees whose address another thread allocated afterwards:
    /// the trace's order across threads cannot be kept.
    pub frees_before_alloc: u64,
    pub first_free_before_alloc: Option<FreeBeforeAlloc>,
    /// Unknown frees whose address another thread allocated within
    /// [`CLOCK_SKEW_NS`] of the free's time: the recording's threads'
    /// clocks put them in the wrong order; replayed right after the
    /// allocation (not counted in `unknown_frees`).
    pub frees_reordered: u64,
    /// The largest gap between such a free and its allocation, in ns.
    pub largest_reordered_gap_ns: u64,
    /// Allocations at an address still live (the old object stays live).
    pub reused_live_addresses: u64,
    /// Most slots in use at once.
    pub max_slots: u64,
    /// Heaps the plan numbers (heap 0 included).
    pub heaps: u64,
    /// The most requested bytes live at once, in the trace's order.
    pub peak_live_bytes: u64,
    pub threads: Vec<PlanThread>,
}

const NONE: u32 = u32::MAX;
/// Unknown frees remembered to recognise a later allocation of the same
/// address (a bound, so that memory stays constant).
const REMEMBERED_UNKNOWN_FREES: usize = 1 << 16;
/// How far apart in time two threads' events may be and still be in the
/// wrong order in a recording: `tramp record` merges threads by time in a
/// bounded window, and a thread whose buffer arrives late has its events
/// written after later ones of other threads (on a four-thread
/// producer/consumer program on two cores, up to 11 ms late; see
/// docs/formats/replay-plan.md). A free this close before another
/// thread's allocation of its address is taken to follow it.
pub const CLOCK_SKEW_NS: u64 = 100_000_000;

/// Writes the replay plan for a sequence of heap events: an analysis of
/// the heap view's events, whose live objects it reads by their slot.
pub struct PlanWriter<W: Write + Seek> {
    out: W,
    body_len: u64,
    /// Per view slot: the driver slot of that live object (`NONE` when
    /// the object was not replayed).
    by_slot: Vec<u32>,
    /// Per driver slot: the view slot last bound to it.
    view_of: Vec<u32>,
    /// Per trace thread: the address and driver slot a realloc just gave
    /// the block whose alloc record follows.
    pending: FxHashMap<u64, (u64, u32)>,
    /// Trace thread id → plan thread, for threads not ended.
    threads: FxHashMap<u64, u32>,
    current: u32,
    /// Per plan thread: the slots it freed, reused first by it.
    spare: Vec<Vec<u32>>,
    /// Slots ended threads left free.
    pool: Vec<u32>,
    next: u32,
    /// Trace heap id → plan heap, for heaps not destroyed (heap 0 is 0).
    heaps: FxHashMap<u64, u32>,
    heap_count: u32,
    /// Per plan heap other than 0: its live slots; per slot: its heap and
    /// its place in that list.
    heap_slots: Vec<Vec<u32>>,
    slot_heap: Vec<(u32, u32)>,
    /// Requested size of each slot's block, and their sum.
    sizes: Vec<u64>,
    live: u64,
    /// Refuse to go past this many live bytes (the driver would allocate
    /// them for real).
    limit: u64,
    /// Unknown frees by address: the trace thread that made them and the
    /// time.
    unknown: FxHashMap<u64, (u64, u64)>,
    pub report: PlanReport,
}

impl<W: Write + Seek> PlanWriter<W> {
    /// A writer whose driver may hold at most `limit` live bytes (it stops
    /// with an error of kind `OutOfMemory` before that). Writes a header
    /// to fill in at the end.
    pub fn new(mut out: W, limit: u64) -> io::Result<Self> {
        out.write_all(&[0u8; plan_format::HEADER_LEN])?;
        let mut heaps = FxHashMap::default();
        heaps.insert(0, 0);
        Ok(PlanWriter {
            out,
            body_len: 0,
            by_slot: Vec::new(),
            view_of: Vec::new(),
            pending: FxHashMap::default(),
            threads: FxHashMap::default(),
            current: NONE,
            spare: Vec::new(),
            pool: Vec::new(),
            next: 0,
            heaps,
            heap_count: 1,
            heap_slots: vec![Vec::new()],
            slot_heap: Vec::new(),
            sizes: Vec::new(),
            live: 0,
            limit,
            unknown: FxHashMap::default(),
            report: PlanReport::default(),
        })
    }

    fn emit(&mut self, op: Op) -> io::Result<()> {
        let mut b = [0u8; MAX_OP_LEN];
        let n = plan_format::encode(&op, &mut b);
        self.body_len += n as u64;
        if op.is_item() {
            self.report.threads[self.current as usize].items += 1;
        }
        self.out.write_all(&b[..n])
    }

    /// The plan thread of a trace thread, switched to.
    fn thread(&mut self, trace_thread: u64) -> io::Result<u32> {
        let t = self.plan_thread(trace_thread);
        if t != self.current {
            self.current = t;
            self.emit(Op::Switch { thread: t })?;
        }
        Ok(t)
    }

    fn plan_thread(&mut self, trace_thread: u64) -> u32 {
        let n = self.report.threads.len() as u32;
        let t = *self.threads.entry(trace_thread).or_insert(n);
        if t == n {
            self.report.threads.push(PlanThread {
                trace_thread,
                ..PlanThread::default()
            });
            self.spare.push(Vec::new());
        }
        t
    }

    /// The plan heap of a trace heap (numbered on first sight).
    fn heap(&mut self, trace_heap: u64) -> u32 {
        let n = self.heap_count;
        let h = *self.heaps.entry(trace_heap).or_insert(n);
        if h == n {
            self.heap_count += 1;
            self.heap_slots.push(Vec::new());
        }
        h
    }

    /// Refuses a new block of `size` bytes that would pass the limit
    /// (before a slot is taken for it: the plan counts only slots used).
    fn fits(&self, size: u64) -> io::Result<()> {
        self.within_limit(self.live + size)
    }

    /// The one refusal of the memory limit.
    fn within_limit(&self, bytes: u64) -> io::Result<()> {
        if bytes > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!(
                    "replaying this would hold {bytes} bytes live, over the memory limit of {} bytes (--memory-limit raises it)",
                    self.limit
                ),
            ));
        }
        Ok(())
    }

    /// Books `slot`'s new size, refusing to pass the limit. `both`: the
    /// old and new blocks are live together for a moment (a moved
    /// realloc).
    fn book(&mut self, slot: u32, size: u64, both: bool) -> io::Result<()> {
        let i = slot as usize;
        let after = self.live - self.sizes[i] + size;
        let peak = if both { self.live + size } else { after };
        self.within_limit(peak)?;
        self.live = after;
        self.sizes[i] = size;
        self.report.peak_live_bytes = self.report.peak_live_bytes.max(peak);
        Ok(())
    }

    fn new_slot(&mut self, thread: u32) -> u32 {
        let s = match self.spare[thread as usize]
            .pop()
            .or_else(|| self.pool.pop())
        {
            Some(s) => s,
            None => {
                self.next += 1;
                self.sizes.push(0);
                self.view_of.push(NONE);
                self.slot_heap.push((0, 0));
                self.next - 1
            }
        };
        self.report.max_slots = self.report.max_slots.max(self.next as u64);
        s
    }

    /// Puts a live slot in its heap's list.
    fn enter_heap(&mut self, slot: u32, heap: u32) {
        let pos = if heap == 0 {
            0
        } else {
            let list = &mut self.heap_slots[heap as usize];
            list.push(slot);
            list.len() as u32 - 1
        };
        self.slot_heap[slot as usize] = (heap, pos);
    }

    /// Takes a slot out of its heap's list, returning the heap.
    fn leave_heap(&mut self, slot: u32) -> u32 {
        let (heap, pos) = self.slot_heap[slot as usize];
        if heap != 0 {
            let list = &mut self.heap_slots[heap as usize];
            list.swap_remove(pos as usize);
            if let Some(&moved) = list.get(pos as usize) {
                self.slot_heap[moved as usize].1 = pos;
            }
        }
        heap
    }

    fn malloc(&mut self, thread: u32, size: u64, heap: u32) -> io::Result<u32> {
        self.fits(size)?;
        let slot = self.new_slot(thread);
        self.book(slot, size, false)?;
        self.enter_heap(slot, heap);
        self.report.mallocs += 1;
        self.report.threads[thread as usize].mallocs += 1;
        self.emit(Op::Malloc { slot, size, heap })?;
        Ok(slot)
    }

    fn free(&mut self, thread: u32, slot: u32) -> io::Result<()> {
        self.book(slot, 0, false)?;
        let heap = self.leave_heap(slot);
        self.spare[thread as usize].push(slot);
        self.report.frees += 1;
        self.report.threads[thread as usize].frees += 1;
        self.emit(Op::Free { slot, heap })
    }

    fn realloc(&mut self, thread: u32, slot: u32, size: u64, moved: bool) -> io::Result<()> {
        self.book(slot, size, moved)?;
        let heap = self.slot_heap[slot as usize].0;
        self.report.reallocs += 1;
        self.report.threads[thread as usize].reallocs += 1;
        self.emit(Op::Realloc {
            slot,
            size,
            heap,
            moved,
        })
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
        self.view_of[rs as usize] = i as u32;
    }

    fn unknown_free(&mut self, address: u64, trace_thread: u64, time: u64) {
        self.report.unknown_frees += 1;
        if self.unknown.len() < REMEMBERED_UNKNOWN_FREES {
            self.unknown.insert(address, (trace_thread, time));
        }
    }

    pub fn event(&mut self, step: &HeapStep<Slot>) -> io::Result<()> {
        match step.event {
            HeapEvent::Alloc {
                object,
                displaced,
                implied,
                cx,
            } => {
                let mut reordered = None;
                if !self.unknown.is_empty()
                    && let Some((freed_by, when)) = self.unknown.remove(&object.address)
                    && freed_by != cx.thread
                {
                    let gap = cx.time.saturating_sub(when);
                    if !implied && cx.time != 0 && gap <= CLOCK_SKEW_NS {
                        reordered = Some((freed_by, gap));
                    } else {
                        self.report.frees_before_alloc += 1;
                        self.report
                            .first_free_before_alloc
                            .get_or_insert(FreeBeforeAlloc {
                                address: object.address,
                                freed_by,
                                allocated_by: cx.thread,
                            });
                    }
                }
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
                    self.report.reused_live_addresses += 1;
                }
                let t = self.thread(cx.thread)?;
                let heap = self.heap(cx.heap);
                let slot = self.malloc(t, object.size, heap)?;
                self.bind(&object, slot);
                if let Some((freed_by, gap)) = reordered {
                    // The free the recording put first, after all.
                    let r = &mut self.report;
                    r.frees_reordered += 1;
                    r.unknown_frees -= 1;
                    r.largest_reordered_gap_ns = r.largest_reordered_gap_ns.max(gap);
                    self.take(&object);
                    let f = self.thread(freed_by)?;
                    self.free(f, slot)?;
                }
                Ok(())
            }
            // The displaced object stays live in the driver: its free was
            // never seen.
            HeapEvent::Displaced { object, .. } => {
                self.take(&object);
                Ok(())
            }
            HeapEvent::Free {
                address,
                object,
                implied,
                cx,
                ..
            } => {
                let slot = object.as_ref().and_then(|o| self.take(o));
                if implied {
                    return Ok(());
                }
                match slot {
                    Some(slot) => {
                        let t = self.thread(cx.thread)?;
                        self.free(t, slot)
                    }
                    None => {
                        self.unknown_free(address, cx.thread, cx.time);
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
                let t = self.thread(cx.thread)?;
                match (outcome, known) {
                    (ReallocOutcome::FreeOnly, Some((o, slot))) => {
                        self.take(&o);
                        self.report.realloc_frees += 1;
                        self.free(t, slot)
                    }
                    (ReallocOutcome::FreeOnly, None) => {
                        self.report.unknown_realloc_frees += 1;
                        Ok(())
                    }
                    (ReallocOutcome::InPlace, Some((o, slot)))
                    | (ReallocOutcome::Moved, Some((o, slot))) => {
                        if old != new {
                            self.take(&o);
                            self.pending.insert(cx.thread, (new, slot));
                        }
                        self.realloc(t, slot, size, outcome == ReallocOutcome::Moved)
                    }
                    // realloc(NULL, n), or a resize of an object never
                    // seen: an allocation by realloc, in the record's heap.
                    _ => {
                        let heap = self.heap(cx.heap);
                        self.fits(size)?;
                        let slot = self.new_slot(t);
                        self.enter_heap(slot, heap);
                        self.pending.insert(cx.thread, (new, slot));
                        self.realloc(t, slot, size, false)
                    }
                }
            }
            HeapEvent::HeapCreate { cx } => {
                self.thread(cx.thread)?;
                let heap = self.heap(cx.heap);
                if heap != 0 {
                    self.report.heap_creates += 1;
                    self.emit(Op::HeapCreate { heap })?;
                }
                Ok(())
            }
            HeapEvent::HeapDestroy { cx } => {
                let Some(&heap) = self.heaps.get(&cx.heap) else {
                    return Ok(());
                };
                if heap == 0 {
                    return Ok(());
                }
                let t = self.thread(cx.thread)?;
                // The objects it still holds die with it.
                while let Some(&slot) = self.heap_slots[heap as usize].last() {
                    let v = self.view_of[slot as usize] as usize;
                    if self.by_slot.get(v) == Some(&slot) {
                        self.by_slot[v] = NONE;
                    }
                    self.report.heap_destroy_frees += 1;
                    self.free(t, slot)?;
                }
                self.heaps.remove(&cx.heap);
                self.report.heap_destroys += 1;
                self.emit(Op::HeapDestroy { heap })
            }
            HeapEvent::ThreadCreate { cx } => {
                let thread = self.plan_thread(cx.thread);
                self.emit(Op::ThreadStart { thread })
            }
            HeapEvent::ThreadDestroy { cx } => {
                if let Some(t) = self.threads.remove(&cx.thread) {
                    let freed = std::mem::take(&mut self.spare[t as usize]);
                    self.pool.extend(freed);
                    self.pending.remove(&cx.thread);
                }
                Ok(())
            }
        }
    }

    /// Writes the trailer and the header; gives back the output and what
    /// the plan holds.
    pub fn finish(mut self) -> io::Result<(W, PlanReport)> {
        for t in &self.report.threads {
            self.out
                .write_all(&plan_format::encode_trailer_row(t.trace_thread, t.items))?;
        }
        self.report.heaps = self.heap_count as u64;
        let header = Header {
            flags: 0,
            items: self.report.threads.iter().map(|t| t.items).sum(),
            slots: self.next as u64,
            threads: self.report.threads.len() as u64,
            heaps: self.heap_count as u64,
            body_len: self.body_len,
            peak_live_bytes: self.report.peak_live_bytes,
        };
        self.out.flush()?;
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&header.encode())?;
        self.out.flush()?;
        Ok((self.out, self.report))
    }
}

impl<W: Write + Seek> Analysis<Heap<Slot>> for PlanWriter<W> {
    type Report = PlanReport;

    #[inline]
    fn observe(&mut self, step: &HeapStep<Slot>) -> Result<(), tramp_core::Error> {
        Ok(self.event(step)?)
    }

    fn finish(self) -> PlanReport {
        self.report
    }
}

/// The trace side of a replay as an analysis of records: the heap view
/// feeds the heap statistics and the plan.
pub struct ReplayFeed<W: Write + Seek> {
    stats: crate::HeapStats<PlanWriter<W>, Slot>,
}

impl<W: Write + Seek> ReplayFeed<W> {
    /// A feed whose driver may hold at most `limit` live bytes.
    pub fn new(out: W, limit: u64) -> io::Result<Self> {
        Ok(ReplayFeed {
            stats: crate::HeapStats::with(PlanWriter::new(out, limit)?),
        })
    }

    /// The operations written so far.
    pub fn plan(&self) -> &PlanReport {
        &self.stats.more().report
    }

    /// The trace's statistics, what the plan holds, and the plan (its
    /// header and trailer written).
    pub fn finish(self) -> io::Result<(crate::Report, PlanReport, W)> {
        let (report, writer) = self.stats.into_parts();
        let (out, plan) = writer.finish()?;
        Ok((report, plan, out))
    }
}

impl<W: Write + Seek> Analysis for ReplayFeed<W> {
    type Report = PlanReport;

    #[inline]
    fn observe(&mut self, rec: &tramp_core::Record<'_>) -> Result<(), tramp_core::Error> {
        self.stats.observe(rec)
    }

    fn finish(self) -> PlanReport {
        self.plan().clone()
    }
}

impl std::fmt::Display for PlanReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} malloc, {} free, {} realloc on {} threads ({} unknown frees skipped)",
            self.mallocs,
            self.frees,
            self.reallocs,
            self.threads.len(),
            self.unknown_frees
        )
    }
}

/// A whole plan: its header, operations and trailer rows (trace thread,
/// items).
pub type WholePlan = (Header, Vec<Op>, Vec<(u64, u64)>);

/// Reads a whole plan back. For tests and fuzzing; the driver streams.
pub fn read_plan(b: &[u8]) -> Result<WholePlan, String> {
    let h = Header::decode(b)?;
    h.check(b.len() as u64)?;
    let end = b.len();
    let body = &b[plan_format::HEADER_LEN..h.trailer_offset() as usize];
    let mut ops = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let (op, n) = plan_format::decode(&body[at..])
            .map_err(|e| format!("operation at byte {}: {e:?}", at + plan_format::HEADER_LEN))?;
        ops.push(op);
        at += n;
    }
    let rows = b[h.trailer_offset() as usize..end]
        .chunks_exact(plan_format::TRAILER_ROW)
        .map(|c| plan_format::decode_trailer_row(c.try_into().expect("16 bytes")))
        .collect();
    Ok((h, ops, rows))
}

#[cfg(test)]
mod tests;
