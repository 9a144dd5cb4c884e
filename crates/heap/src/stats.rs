//! Heap statistics over a stream of records: the HATF paper's Table 3
//! (allocs, reallocs, frees, bytes, maximum live objects and bytes, average
//! object size) plus counts per record type, thread and heap, a power-of-two
//! size histogram, and anomalies (frees of unknown addresses, double frees).
//!
//! Memory is bounded by the number of live objects, plus a window of
//! recently freed addresses used to tell double frees from frees of
//! addresses the trace never allocated.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use rustc_hash::{FxHashMap, FxHashSet};

use serde::{Deserialize, Serialize};
use tramp_core::{Analysis, Error, Record};

use crate::event::Selected;
use crate::sampling::{Estimates, Sampling, SamplingReport};
use crate::view::{Context, Heap, HeapEvent, HeapFlow, HeapStep, Keep, Live};

/// How many freed addresses are remembered for double-free detection. When
/// the window fills it is emptied; a double free of an address freed before
/// that is then counted as a free of an unknown address.
pub const FREED_WINDOW: usize = 1 << 22;

/// Counts for one thread or one heap.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    pub allocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    /// In 128 bits: a sum of blocks of up to 2^63 − 1 bytes passes 2^64.
    pub bytes_allocated: u128,
}

/// One bucket of the size histogram: sizes in `[low, high]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub low: u64,
    pub high: u64,
    pub count: u64,
}

/// The finished statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// What part of the trace was read (`--time`, `--thread`, `--pid`,
    /// as its `tramp:selected` note says); absent for the whole trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<String>,
    /// The programs the trace's processes ran (pid, parent, command line),
    /// in the order they started; a process that exec'd is there once per
    /// program. Empty for a trace that does not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<crate::images::Image>,
    pub records: u64,
    pub records_by_type: BTreeMap<String, u64>,
    /// Objects allocated: malloc-family calls plus the blocks reallocs
    /// allocated (a moved realloc, realloc(NULL, n)).
    pub total_allocs: u64,
    /// realloc calls, every outcome.
    pub total_reallocs: u64,
    /// Objects freed: free calls plus the blocks reallocs freed.
    pub total_frees: u64,
    /// malloc-family calls (malloc, calloc, memalign, …): allocations that
    /// no realloc implied. What heaptrack and the HATF paper count as
    /// allocations, beside `realloc_calls`.
    pub malloc_calls: u64,
    /// realloc calls (the same as `total_reallocs`).
    pub realloc_calls: u64,
    /// free calls: frees that no realloc implied.
    pub free_calls: u64,
    /// In 128 bits, so that no sum saturates (blocks are at most 2^63 − 1
    /// bytes, and three of those pass 2^64).
    pub bytes_allocated: u128,
    pub max_live_objects: u64,
    pub max_live_bytes: u64,
    pub average_object_size: f64,
    pub live_objects_at_end: u64,
    pub live_bytes_at_end: u64,
    /// Allocations freed as the very next heap event after them, process
    /// wide (heaptrack's rule; a realloc frees its old block and allocates
    /// its new one, as heaptrack records it): see docs/heap-profile.md.
    pub temporary_allocations: u64,
    pub frees_of_unknown_addresses: u64,
    /// A trace recorded by attaching to a running process (`record -p`):
    /// frees of blocks it never saw allocated, which the process allocated
    /// before the attach (not anomalies). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frees_allocated_before_attach: Option<u64>,
    /// The records are a selection (`--time`, `--thread`): frees of blocks
    /// allocated outside it (not anomalies). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frees_allocated_outside_selection: Option<u64>,
    pub double_frees: u64,
    pub allocs_of_live_addresses: u64,
    pub threads_created: u64,
    pub threads_destroyed: u64,
    pub heaps_created: u64,
    pub heaps_destroyed: u64,
    pub per_thread: BTreeMap<u64, Activity>,
    pub per_heap: BTreeMap<u64, Activity>,
    pub size_histogram: Vec<Bucket>,
    /// A sampled trace (`tramp record --sample`): every count and byte
    /// total above is an estimate, made as this says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingReport>,
}

/// Activity per id: small ids (the common case) in a vector, others hashed.
#[derive(Default)]
struct Tally {
    dense: Vec<Activity>,
    sparse: FxHashMap<u64, Activity>,
}

const DENSE_IDS: u64 = 4096;

impl Tally {
    #[inline]
    fn get(&mut self, id: u64) -> &mut Activity {
        if id < DENSE_IDS {
            let i = id as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, Activity::default());
            }
            &mut self.dense[i]
        } else {
            self.sparse.entry(id).or_default()
        }
    }

    fn to_map(&self) -> BTreeMap<u64, Activity> {
        let dense = self.dense.iter().enumerate().map(|(i, a)| (i as u64, a));
        dense
            .chain(self.sparse.iter().map(|(k, a)| (*k, a)))
            .filter(|(_, a)| **a != Activity::default())
            .map(|(k, a)| (k, a.clone()))
            .collect()
    }
}

/// Heap totals from heap events: everything in the [`Report`] but the
/// record counts. The live objects are the heap view's; the totals keep
/// only what no view knows (the freed-address window for double frees).
#[derive(Default)]
pub struct HeapTotals {
    allocs: u64,
    reallocs: u64,
    frees: u64,
    /// Allocations and frees a realloc implied (its accompanying records).
    implied_allocs: u64,
    implied_frees: u64,
    bytes: u128,
    live: Live,
    max_objects: u64,
    max_bytes: u64,
    temporary: u64,
    freed: FxHashSet<u64>,
    unknown_frees: u64,
    /// Of an attached trace: frees of blocks allocated before the attach.
    before_attach: Option<u64>,
    outside_selection: Option<u64>,
    double_frees: u64,
    live_reallocs: u64,
    threads: (u64, u64),
    heaps: (u64, u64),
    per_thread: Tally,
    per_heap: Tally,
    /// `hist[0]` counts size 0; `hist[k]` sizes in `[2^(k-1), 2^k)`.
    hist: Vec<u64>,
    /// A sampled trace's estimates (from its first sampled step).
    sampled: Option<(Sampling, Box<Estimates>)>,
}

impl HeapTotals {
    fn activity(&mut self, cx: &Context) -> (&mut Activity, &mut Activity) {
        (self.per_thread.get(cx.thread), self.per_heap.get(cx.heap))
    }

    /// Accounts for one heap event.
    #[inline(always)]
    pub fn step<K: Keep>(&mut self, step: &HeapStep<K>) {
        if let Some(s) = step.sampling {
            self.sampled
                .get_or_insert_with(|| (s, Box::default()))
                .1
                .step(s, step);
        }
        self.live = step.live;
        if step.attached && self.before_attach.is_none() {
            self.before_attach = Some(0);
        }
        if step.selected != Selected::No && self.outside_selection.is_none() {
            self.outside_selection = Some(0);
        }
        self.max_objects = self.max_objects.max(step.live.objects);
        self.max_bytes = self.max_bytes.max(step.live.bytes);
        match step.event {
            HeapEvent::Alloc {
                object,
                displaced,
                implied,
                cx,
            } => {
                let (size, address) = (object.size, object.address);
                self.allocs += 1;
                if implied {
                    self.implied_allocs += 1;
                }
                self.bytes += u128::from(size);
                let b = if size == 0 {
                    0
                } else {
                    64 - size.leading_zeros() as usize
                };
                if self.hist.is_empty() {
                    self.hist.resize(65, 0);
                }
                self.hist[b] += 1;
                let (t, h) = self.activity(&cx);
                t.allocs += 1;
                t.bytes_allocated += u128::from(size);
                h.allocs += 1;
                h.bytes_allocated += u128::from(size);
                if displaced > 0 {
                    self.live_reallocs += 1;
                }
                self.freed.remove(&address);
            }
            HeapEvent::Displaced { .. } => {}
            HeapEvent::Free {
                address,
                object,
                implied,
                temporary,
                cx,
            } => {
                self.frees += 1;
                if implied {
                    self.implied_frees += 1;
                }
                let (t, h) = self.activity(&cx);
                t.frees += 1;
                h.frees += 1;
                if temporary {
                    self.temporary += 1;
                }
                match object {
                    Some(_) => {
                        if self.freed.len() >= FREED_WINDOW {
                            self.freed.clear();
                        }
                        self.freed.insert(address);
                    }
                    None if step.selected == Selected::Threads => {
                        *self.outside_selection.get_or_insert(0) += 1
                    }
                    None if self.freed.contains(&address) => self.double_frees += 1,
                    None if step.attached => *self.before_attach.get_or_insert(0) += 1,
                    None if step.selected == Selected::Time => {
                        *self.outside_selection.get_or_insert(0) += 1
                    }
                    None => self.unknown_frees += 1,
                }
            }
            HeapEvent::Realloc {
                size,
                resized,
                temporary,
                cx,
                ..
            } => {
                self.reallocs += 1;
                if temporary {
                    self.temporary += 1;
                }
                let (t, h) = self.activity(&cx);
                t.reallocs += 1;
                h.reallocs += 1;
                // An in-place resize has no accompanying records: growth
                // counts as bytes allocated (in the totals and in the
                // thread's and heap's rows alike).
                if let Some((_, before)) = resized
                    && size > before
                {
                    let growth = size - before;
                    self.bytes += u128::from(growth);
                    let (t, h) = self.activity(&cx);
                    t.bytes_allocated += u128::from(growth);
                    h.bytes_allocated += u128::from(growth);
                }
            }
            HeapEvent::HeapCreate { .. } => self.heaps.0 += 1,
            HeapEvent::HeapDestroy { .. } => self.heaps.1 += 1,
            HeapEvent::ThreadCreate { .. } => self.threads.0 += 1,
            HeapEvent::ThreadDestroy { .. } => self.threads.1 += 1,
        }
    }

    /// The statistics so far, with the record counts given.
    pub fn report(&self, records: u64, records_by_type: BTreeMap<String, u64>) -> Report {
        let size_histogram = self
            .hist
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(k, c)| {
                let (low, high) = match k {
                    0 => (0, 0),
                    64 => (1 << 63, u64::MAX),
                    _ => (1u64 << (k - 1), (1u64 << k) - 1),
                };
                Bucket {
                    low,
                    high,
                    count: *c,
                }
            })
            .collect();
        let mut r = Report {
            records,
            records_by_type,
            total_allocs: self.allocs,
            total_reallocs: self.reallocs,
            total_frees: self.frees,
            malloc_calls: self.allocs - self.implied_allocs,
            realloc_calls: self.reallocs,
            free_calls: self.frees - self.implied_frees,
            bytes_allocated: self.bytes,
            max_live_objects: self.max_objects,
            max_live_bytes: self.max_bytes,
            average_object_size: if self.allocs == 0 {
                0.0
            } else {
                self.bytes as f64 / self.allocs as f64
            },
            live_objects_at_end: self.live.objects,
            live_bytes_at_end: self.live.bytes,
            temporary_allocations: self.temporary,
            frees_of_unknown_addresses: self.unknown_frees,
            frees_allocated_before_attach: self.before_attach,
            frees_allocated_outside_selection: self.outside_selection,
            selection: None,
            processes: Vec::new(),
            double_frees: self.double_frees,
            allocs_of_live_addresses: self.live_reallocs,
            threads_created: self.threads.0,
            threads_destroyed: self.threads.1,
            heaps_created: self.heaps.0,
            heaps_destroyed: self.heaps.1,
            per_thread: self.per_thread.to_map(),
            per_heap: self.per_heap.to_map(),
            size_histogram,
            sampling: None,
        };
        if let Some((s, e)) = &self.sampled {
            r.sampling = Some(e.apply(*s, &mut r));
        }
        r
    }
}

impl<K: Keep> Analysis<Heap<K>> for HeapTotals {
    type Report = Report;

    #[inline(always)]
    fn observe(&mut self, step: &HeapStep<K>) -> Result<(), Error> {
        self.step(step);
        Ok(())
    }

    /// The totals without record counts (a flow of heap events alone).
    fn finish(self) -> Report {
        self.report(0, BTreeMap::new())
    }
}

/// Records counted by type.
#[derive(Default)]
struct TypeCounts {
    records: u64,
    by_type_index: Vec<u64>,
    type_names: Vec<String>,
}

impl TypeCounts {
    #[inline(always)]
    fn count(&mut self, rec: &Record<'_>) {
        self.records += 1;
        let ty = rec.record_type();
        if self.by_type_index.len() <= ty.index {
            self.by_type_index.resize(ty.index + 1, 0);
            self.type_names.resize(ty.index + 1, String::new());
        }
        if self.by_type_index[ty.index] == 0 {
            self.type_names[ty.index] = ty.name.clone();
        }
        self.by_type_index[ty.index] += 1;
    }

    fn by_type(&self) -> BTreeMap<String, u64> {
        let mut by_type = BTreeMap::new();
        for (i, n) in self.by_type_index.iter().enumerate() {
            if *n > 0 {
                *by_type.entry(self.type_names[i].clone()).or_default() += n;
            }
        }
        by_type
    }
}

/// Heap statistics of records: the records counted by type, and through
/// the heap view the [`HeapTotals`] and any further heap analysis `A`
/// (the site tables, replay), all fed by the one view.
pub struct HeapStats<A = (), K = ()> {
    counts: TypeCounts,
    flow: HeapFlow<(HeapTotals, A), K>,
}

impl Default for HeapStats {
    fn default() -> Self {
        Self::new()
    }
}

impl HeapStats {
    /// Statistics alone (the view keeps nothing but sizes).
    pub fn new() -> Self {
        HeapStats::with(())
    }
}

impl<K: Keep, A: Analysis<Heap<K>>> HeapStats<A, K> {
    /// Statistics that also feed `more` from the same heap view.
    pub fn with(more: A) -> Self {
        HeapStats {
            counts: TypeCounts::default(),
            flow: HeapFlow::new((HeapTotals::default(), more)),
        }
    }

    /// Accounts for one record of any format.
    #[inline]
    pub fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.counts.count(rec);
        Analysis::observe(&mut self.flow, rec)
    }

    /// The statistics so far.
    pub fn report(&self) -> Report {
        let mut r = self
            .flow
            .analyses()
            .0
            .report(self.counts.records, self.counts.by_type());
        r.selection = self.flow.view().selection().map(str::to_string);
        r.processes = self.flow.view().images().to_vec();
        r
    }

    /// The further analysis, as the records so far left it.
    pub fn more(&self) -> &A {
        &self.flow.analyses().1
    }

    /// The statistics and the further analysis's report.
    pub fn finish_with(self) -> (Report, A::Report) {
        let (report, more) = self.into_parts();
        (report, more.finish())
    }

    /// The statistics and the further analysis itself.
    pub fn into_parts(self) -> (Report, A) {
        let report = self.report();
        (report, self.flow.into_analyses().1)
    }
}

impl<K: Keep, A: Analysis<Heap<K>>> Analysis for HeapStats<A, K> {
    type Report = Report;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        HeapStats::observe(self, rec)
    }

    fn warning(&mut self, warning: &tramp_core::Warning) {
        Analysis::warning(&mut self.flow, warning);
    }

    fn finish(self) -> Report {
        self.report()
    }
}

pub(crate) use tramp_core::numbers::grouped as human;

/// The records of a trace that holds no heap events, counted by type: all
/// `tramp stats` has to say of it (the heap tables would be zeros).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordCounts {
    pub records: u64,
    pub records_by_type: BTreeMap<String, u64>,
    /// What the trace holds, in words (no heap events).
    pub holds: String,
}

impl RecordCounts {
    pub fn new(r: &Report, holds: String) -> RecordCounts {
        RecordCounts {
            records: r.records,
            records_by_type: r.records_by_type.clone(),
            holds,
        }
    }
}

fn write_counts(s: &mut String, records: u64, by_type: &BTreeMap<String, u64>) {
    let _ = writeln!(s, "records                      {:>16}", human(records));
    for (name, n) in by_type {
        let _ = writeln!(s, "  {name:<26} {:>16}", human(*n));
    }
}

impl fmt::Display for RecordCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_counts(&mut s, self.records, &self.records_by_type);
        let _ = writeln!(s, "\nno heap statistics: the trace holds {}", self.holds);
        f.write_str(&s)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        if let Some(sel) = &self.selection {
            let _ = writeln!(s, "selection: {sel} (docs/select.md)\n");
        }
        for p in &self.processes {
            let command = match p.command.is_empty() {
                true => "(command line not recorded)".to_string(),
                false => crate::images::shell_words(&p.command),
            };
            let _ = writeln!(s, "process {} (parent {}): {command}", p.pid, p.parent);
        }
        if !self.processes.is_empty() {
            s.push('\n');
        }
        write_counts(&mut s, self.records, &self.records_by_type);
        let _ = writeln!(s, "\nsummary (HATF Table 3)");
        let rows = [
            ("total allocs", human(self.total_allocs)),
            ("total reallocs", human(self.total_reallocs)),
            ("total frees", human(self.total_frees)),
            ("malloc calls", human(self.malloc_calls)),
            ("realloc calls", human(self.realloc_calls)),
            ("free calls", human(self.free_calls)),
            ("total bytes allocated", human(self.bytes_allocated)),
            ("max live objects", human(self.max_live_objects)),
            ("max live bytes", human(self.max_live_bytes)),
            (
                "average object size",
                format!("{:.1}", self.average_object_size),
            ),
            ("live objects at end", human(self.live_objects_at_end)),
            ("live bytes at end", human(self.live_bytes_at_end)),
            ("temporary allocations", human(self.temporary_allocations)),
        ];
        for (k, v) in rows {
            let _ = writeln!(s, "  {k:<26} {v:>16}");
        }
        if let Some(sm) = &self.sampling {
            let e = &sm.standard_errors;
            let _ = writeln!(
                s,
                "\nsampled every {} bytes on average: {} allocations recorded; \
                 the counts and bytes above are estimates (standard errors)",
                human(sm.mean_bytes),
                human(sm.samples)
            );
            for (k, v) in [
                ("total allocs", e.total_allocs),
                ("total frees", e.total_frees),
                ("total bytes allocated", e.bytes_allocated),
                ("max live bytes", e.max_live_bytes),
                ("live objects at end", e.live_objects_at_end),
                ("live bytes at end", e.live_bytes_at_end),
            ] {
                let _ = writeln!(
                    s,
                    "  {k:<26} {:>16}",
                    format!("± {}", human(v.round() as u64))
                );
            }
        }
        if let Some(n) = self.frees_allocated_outside_selection {
            let _ = writeln!(
                s,
                "\nthe records are a selection (--time, --thread), read as an attach at its start: \
                 {} frees of blocks allocated outside it (not anomalies)",
                human(n)
            );
        }
        if let Some(n) = self.frees_allocated_before_attach {
            let _ = writeln!(
                s,
                "\nthe trace starts at an attach to the running process: {} frees of blocks \
                 allocated before it (not anomalies)",
                human(n)
            );
        }
        let _ = writeln!(s, "\nanomalies");
        let _ = writeln!(
            s,
            "  {:<26} {:>16}",
            "frees of unknown addresses",
            human(self.frees_of_unknown_addresses)
        );
        let _ = writeln!(
            s,
            "  {:<26} {:>16}",
            "double frees",
            human(self.double_frees)
        );
        let _ = writeln!(
            s,
            "  {:<26} {:>16}",
            "allocs of live addresses",
            human(self.allocs_of_live_addresses)
        );
        let _ = writeln!(
            s,
            "\nthreads created/destroyed    {:>7} / {}\nheaps created/destroyed      {:>7} / {}",
            self.threads_created, self.threads_destroyed, self.heaps_created, self.heaps_destroyed
        );
        for (title, map) in [("thread", &self.per_thread), ("heap", &self.per_heap)] {
            let _ = writeln!(
                s,
                "\nper {title:<8} {:>14} {:>14} {:>14} {:>16}",
                "allocs", "frees", "reallocs", "bytes"
            );
            for (id, a) in map {
                let _ = writeln!(
                    s,
                    "  {id:<10} {:>14} {:>14} {:>14} {:>16}",
                    human(a.allocs),
                    human(a.frees),
                    human(a.reallocs),
                    human(a.bytes_allocated)
                );
            }
        }
        let _ = writeln!(s, "\nsize histogram (bytes)");
        let max = self
            .size_histogram
            .iter()
            .map(|b| b.count)
            .max()
            .unwrap_or(1);
        for b in &self.size_histogram {
            let bar = "#".repeat(((b.count * 40).div_ceil(max)) as usize);
            let _ = writeln!(
                s,
                "  {:>10} - {:<10} {:>12}  {bar}",
                b.low,
                b.high,
                human(b.count)
            );
        }
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testing::Trace;
    use tramp_core::ReallocOutcome;

    #[test]
    fn realloc_implied_records_are_not_calls_and_rows_add_up() {
        let mut s = HeapStats::new();
        let mut tr = Trace::new();
        let mut feed = |r: &Record<'_>| s.observe(r).unwrap();
        tr.alloc(16, 0x10, 1, &mut feed);
        // A moved realloc and its accompanying alloc and free.
        tr.realloc(ReallocOutcome::Moved, 64, 0x10, 0x80, 1, &mut feed);
        tr.alloc(64, 0x80, 1, &mut feed);
        tr.free(0x10, 1, &mut feed);
        // An in-place growth on another thread: 64 -> 100.
        tr.realloc(ReallocOutcome::InPlace, 100, 0x80, 0x80, 2, &mut feed);
        tr.free(0x80, 2, &mut feed);
        let r = s.report();
        assert_eq!((r.total_allocs, r.malloc_calls), (2, 1));
        assert_eq!((r.total_frees, r.free_calls), (2, 1));
        assert_eq!((r.total_reallocs, r.realloc_calls), (2, 2));
        assert_eq!(r.bytes_allocated, 16 + 64 + 36);
        let rows: u128 = r.per_thread.values().map(|a| a.bytes_allocated).sum();
        assert_eq!(
            rows, r.bytes_allocated,
            "the thread rows add up to the total"
        );
        assert_eq!(r.per_thread[&2].bytes_allocated, 36);
    }

    #[test]
    fn table3_figures_and_anomalies() {
        let mut s = HeapStats::new();
        let mut tr = Trace::new();
        let mut feed = |r: &Record<'_>| s.observe(r).unwrap();
        tr.alloc(10, 1, 0, &mut feed);
        tr.alloc(30, 2, 0, &mut feed);
        tr.free(1, 0, &mut feed);
        tr.free(1, 0, &mut feed); // double
        tr.free(99, 0, &mut feed); // unknown
        tr.realloc(ReallocOutcome::InPlace, 50, 2, 2, 0, &mut feed);
        tr.alloc(0, 3, 0, &mut feed);
        let r = s.report();
        assert_eq!((r.total_allocs, r.total_frees, r.total_reallocs), (3, 3, 1));
        assert_eq!(r.bytes_allocated, 60); // 10 + 30 + in-place growth 20 + 0
        assert_eq!(r.max_live_objects, 2);
        assert_eq!(r.max_live_bytes, 50);
        assert_eq!((r.double_frees, r.frees_of_unknown_addresses), (1, 1));
        assert_eq!((r.live_objects_at_end, r.live_bytes_at_end), (2, 50));
        assert_eq!(r.average_object_size, 20.0);
        let buckets: Vec<_> = r
            .size_histogram
            .iter()
            .map(|b| (b.low, b.high, b.count))
            .collect();
        assert_eq!(buckets, vec![(0, 0, 1), (8, 15, 1), (16, 31, 1)]);
    }

    #[test]
    fn temporary_allocations_follow_heaptracks_rule_by_object() {
        let mut s = HeapStats::new();
        let mut tr = Trace::new();
        let mut feed = |r: &Record<'_>| s.observe(r).unwrap();
        // Freed as the next heap event: 1.
        tr.alloc(8, 0x10, 0, &mut feed);
        tr.free(0x10, 0, &mut feed);
        // C is freed right after it was allocated (2); B after a free: no.
        tr.alloc(8, 0x20, 0, &mut feed);
        tr.alloc(8, 0x30, 0, &mut feed);
        tr.free(0x30, 0, &mut feed);
        tr.free(0x20, 0, &mut feed);
        // A realloc frees D right after D's allocation (3), and E, its new
        // block, is freed next (4): heaptrack records the realloc as a
        // free and an allocation; the records it implies are not events.
        tr.alloc(8, 0x40, 0, &mut feed);
        tr.realloc(ReallocOutcome::Moved, 64, 0x40, 0x50, 0, &mut feed);
        tr.alloc(64, 0x50, 0, &mut feed);
        tr.free(0x40, 0, &mut feed);
        tr.free(0x50, 0, &mut feed);
        // A free of no live block is no heap event: F stays temporary (5).
        tr.alloc(8, 0x60, 0, &mut feed);
        tr.free(0x999, 0, &mut feed);
        tr.free(0x60, 0, &mut feed);
        // In place: G's free at the realloc (6), then its new size's (7).
        tr.alloc(8, 0x70, 0, &mut feed);
        tr.realloc(ReallocOutcome::InPlace, 16, 0x70, 0x70, 0, &mut feed);
        tr.free(0x70, 0, &mut feed);
        assert_eq!(s.report().temporary_allocations, 7);
    }
}
