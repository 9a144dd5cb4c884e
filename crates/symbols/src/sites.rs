//! Allocation-site tables: per-site totals from the heap view's events
//! ([`SiteCounts`], an analysis of heap events whose objects keep their
//! site), named with the trace's modules into the top sites by
//! allocations, by bytes, by bytes live at the heap's peak, and by bytes
//! live at exit.
//!
//! The peak is attributed in one pass, in memory proportional to the
//! sites (so it works on a pipe): each new peak only advances an epoch,
//! and a site copies its live bytes into its bytes-at-peak the first time
//! it changes after an epoch it has not seen (at the end, a site unchanged
//! since the last peak holds at the peak what it holds now).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tramp_core::Analysis;
use tramp_heap::sampling::{Estimate, Sampling};
use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK, Site};
use tramp_heap::{Heap, HeapEvent, HeapStep};

use crate::modules::{Modules, Names};
use crate::suppressions::{Suppression, Suppressions};
use crate::symbolizer::Place;

/// Totals for one site (of a sampled trace: estimates, with their
/// standard errors).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SiteTotals {
    pub allocs: u64,
    /// In 128 bits, as every sum of sizes (blocks reach 2^63 − 1 bytes).
    pub bytes: u128,
    pub live_objects: u64,
    pub live_bytes: u64,
    /// Bytes live from this site when the heap was at its peak.
    pub peak_bytes: u64,
    /// Its allocations freed as the very next heap event (heaptrack's
    /// temporary allocations).
    pub temporary: u64,
    /// A sampled trace's standard errors of the estimates above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_errors: Option<SiteErrors>,
    /// What it did in each slice of the trace's time (crate::slices; of
    /// the recorded blocks, in a sampled trace), for the report's time
    /// ranges. Not in the site tables' rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<crate::slices::SliceCounts>,
    /// What each thread allocated of it: (thread slot, allocations, bytes
    /// with in-place growth), the slots `Finished::threads` names; for the
    /// report's thread filter. Not in the site tables' rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<(u32, u64, u64)>,
    /// Its blocks' sizes and lifetimes: (bucket, count), bucket k < 65
    /// counting allocations of a size in power-of-two bucket k (the
    /// statistics' histogram's), 65 + k frees of a block that lived a time
    /// in bucket k (the lifetimes', kept when the view keeps births). For
    /// the report's selected stack. Not in the site tables' rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shape: Vec<(u8, u64)>,
}

/// The power-of-two bucket of `v` (0 for 0, k for 2^(k−1) ≤ v < 2^k).
#[inline]
pub fn bucket(v: u64) -> u8 {
    (64 - v.leading_zeros()) as u8
}

/// Adds `n` to bucket `k` of `v` (kept in bucket order).
#[inline]
fn shape_add(v: &mut Vec<(u8, u64)>, k: u8, n: u64) {
    let (e, _) = crate::slices::entry(v, k, |e| e.0, || (k, 0));
    e.1 = e.1.saturating_add(n);
}

/// The variances of a site's estimates (sampled traces), serialized as
/// their square roots, the standard errors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SiteErrors {
    pub allocs: f64,
    pub bytes: f64,
    pub live_bytes: f64,
}

impl SiteErrors {
    fn add(&mut self, o: &SiteErrors) {
        self.allocs += o.allocs;
        self.bytes += o.bytes;
        self.live_bytes += o.live_bytes;
    }
}

impl Serialize for SiteErrors {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("SiteErrors", 3)?;
        st.serialize_field("allocs", &self.allocs.max(0.0).sqrt())?;
        st.serialize_field("bytes", &self.bytes.max(0.0).sqrt())?;
        st.serialize_field("live_bytes", &self.live_bytes.max(0.0).sqrt())?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for SiteErrors {
    /// Reads the standard errors back as variances (their squares; exact
    /// for a value the serializer wrote: `sqrt(x * x) == x`).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Errors {
            allocs: f64,
            bytes: f64,
            live_bytes: f64,
        }
        let e = Errors::deserialize(d)?;
        Ok(SiteErrors {
            allocs: e.allocs * e.allocs,
            bytes: e.bytes * e.bytes,
            live_bytes: e.live_bytes * e.live_bytes,
        })
    }
}

impl SiteTotals {
    /// `bytes` as a u64 (2^64 − 1 when the sum passed it).
    pub fn bytes_u64(&self) -> u64 {
        u64::try_from(self.bytes).unwrap_or(u64::MAX)
    }

    /// The five costs of the heap profile, in this order: allocations,
    /// bytes, temporary, peak, leaked.
    /// Bytes past 2^64 − 1 (a sum of several blocks near 2^63) give
    /// 2^64 − 1 here, for ranking and drawing; `bytes` keeps the sum.
    pub fn costs(&self) -> [u64; 5] {
        [
            self.allocs,
            self.bytes_u64(),
            self.temporary,
            self.peak_bytes,
            self.live_bytes,
        ]
    }

    /// Adds another site's totals (saturating): sites that read the same.
    pub fn add(&mut self, t: &SiteTotals) {
        self.allocs = self.allocs.saturating_add(t.allocs);
        self.bytes += t.bytes;
        self.live_objects = self.live_objects.saturating_add(t.live_objects);
        self.live_bytes = self.live_bytes.saturating_add(t.live_bytes);
        self.peak_bytes = self.peak_bytes.saturating_add(t.peak_bytes);
        self.temporary = self.temporary.saturating_add(t.temporary);
        if let Some(e) = &t.standard_errors {
            self.standard_errors
                .get_or_insert_with(SiteErrors::default)
                .add(e);
        }
        crate::slices::merge(&mut self.slices, &t.slices);
        for &(k, a, b) in &t.threads {
            by_thread(&mut self.threads, k, a, b);
        }
        for &(k, n) in &t.shape {
            shape_add(&mut self.shape, k, n);
        }
    }
}

/// Adds (allocations, bytes) to thread slot `k` of `v` (kept in slot
/// order).
#[inline]
fn by_thread(v: &mut Vec<(u32, u64, u64)>, k: u32, a: u64, b: u64) -> bool {
    let (e, made) = crate::slices::entry(v, k, |e| e.0, || (k, 0, 0));
    e.1 = e.1.saturating_add(a);
    e.2 = e.2.saturating_add(b);
    made
}

/// The slot every thread past the budget shares.
pub const OTHER_THREADS: u32 = u32::MAX;

/// The most (site, thread) entries kept; past it, new threads share
/// [`OTHER_THREADS`].
pub const MAX_THREAD_ENTRIES: usize = 1 << 20;

/// One row of a site table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteRow {
    /// Innermost frame first (one entry for return-address sites).
    pub stack: Vec<Place>,
    #[serde(flatten)]
    pub totals: SiteTotals,
}

/// The heap at its peak: the most bytes live at once, and when.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peak {
    pub bytes: u64,
    pub objects: u64,
    /// The trace's time at the event that reached it (0 without times).
    pub time: u64,
}

/// What was left live at exit: leaks, and those suppressions matched.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Leaks {
    pub objects: u64,
    pub bytes: u64,
    pub suppressed_objects: u64,
    pub suppressed_bytes: u64,
    /// Each suppression given, and what it matched.
    pub suppressions: Vec<Suppression>,
}

/// The site tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SitesReport {
    pub sites: u64,
    /// A sampled trace: every figure below is an estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Sampling>,
    pub peak: Peak,
    pub leaks: Leaks,
    pub by_count: Vec<SiteRow>,
    pub by_bytes: Vec<SiteRow>,
    pub by_bytes_at_peak: Vec<SiteRow>,
    pub by_live_bytes_at_exit: Vec<SiteRow>,
}

/// Per-site totals from the heap view's events: what each allocation site
/// allocated and still holds. The live objects (and each one's site) are
/// the view's, so this keeps one row per site and nothing per object.
#[derive(Default)]
pub struct SiteCounts {
    /// One row per site, in order of first allocation.
    rows: Vec<(Site, SiteTotals)>,
    index: FxHashMap<Site, usize>,
    /// The row of the last site looked up (allocations repeat sites).
    last: Option<(Site, usize)>,
    /// Per row: the peak epoch its `peak_bytes` is of.
    stamps: Vec<u64>,
    /// How many times the heap reached a new peak.
    epoch: u64,
    peak: Peak,
    /// A sampled trace's estimates: per row, and the heap's live totals.
    sampled: Option<Sampled>,
    /// The sampling of counts made [from finished ones](Self::from_finished)
    /// (their rows are the estimates).
    finished_sampling: Option<Sampling>,
    /// The slices of the trace's time the rows' `slices` count in.
    grid: crate::slices::Growing,
    finished_grid: Option<crate::slices::Grid>,
    /// The current event's slice, and how many times the rows' slices were
    /// merged in pairs to stay within [`MAX_SLICE_ENTRIES`].
    at: u32,
    shift: u32,
    /// Slices held over every row.
    entries: usize,
    /// Of counts made from finished ones: the slices of the rows that
    /// left theirs out (`Finished::other_slices`).
    other_slices: Vec<crate::slices::SliceCounts>,
    other_threads: Vec<(u32, u64, u64)>,
    other_shape: Vec<(u8, u64)>,
    /// The thread of each slot, the slot of each thread, the last looked
    /// up, and the (site, thread) entries held.
    thread_ids: Vec<u64>,
    thread_slots: FxHashMap<u64, u32>,
    last_thread: Option<(u64, u32)>,
    thread_entries: usize,
}

/// The most per-site time slices kept (40 bytes each, 40 MiB in all): a trace of many
/// sites gets coarser slices, not more memory.
pub const MAX_SLICE_ENTRIES: usize = 1 << 20;

/// Site counts as every report reads them ([`SiteCounts::finished`]): the
/// rows resolved and merged, in site order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub rows: Vec<(Site, SiteTotals)>,
    pub peak: Peak,
    pub sampling: Option<Sampling>,
    /// The slices the rows' `slices` count in (none before a heap event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<crate::slices::Grid>,
    /// The slices of the rows past the [`SLICED_ROWS`] with the largest
    /// shares, added up (their own are left out: the page merges those
    /// rows into one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_slices: Vec<crate::slices::SliceCounts>,
    /// The thread of each slot of the rows' `threads`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<u64>,
    /// The `threads` of the rows past the [`SLICED_ROWS`], added up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_threads: Vec<(u32, u64, u64)>,
    /// Their `shape`, added up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_shape: Vec<(u8, u64)>,
}

/// The rows whose time slices are kept apart, by their largest share of
/// any cost: the call stacks a report page keeps.
pub const SLICED_ROWS: usize = 4000;

/// Estimates of a sampled trace, beside the exact counts of what it
/// recorded.
struct Sampled {
    sampling: Sampling,
    rows: Vec<SiteEstimates>,
    live_bytes: Estimate,
    live_objects: Estimate,
    peak: f64,
}

/// One site's estimates (`tramp_heap::sampling`).
#[derive(Clone, Copy, Default)]
struct SiteEstimates {
    allocs: Estimate,
    bytes: Estimate,
    live_objects: Estimate,
    live_bytes: Estimate,
    temporary: Estimate,
    /// `live_bytes` at the last peak.
    peak_bytes: Estimate,
}

impl SiteCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of `site`'s row, made if `make`, with what it held at the
    /// last peak kept first (it is about to change).
    #[inline]
    fn row_index(&mut self, site: Site, make: bool) -> Option<usize> {
        let i = match self.last {
            Some((s, i)) if s == site => i,
            _ => {
                let i = match self.index.get(&site) {
                    Some(i) => *i,
                    None if make => {
                        self.rows.push((site, SiteTotals::default()));
                        self.stamps.push(self.epoch);
                        if let Some(e) = &mut self.sampled {
                            e.rows.push(SiteEstimates::default());
                        }
                        self.index.insert(site, self.rows.len() - 1);
                        self.rows.len() - 1
                    }
                    None => return None,
                };
                self.last = Some((site, i));
                i
            }
        };
        if self.stamps[i] < self.epoch {
            let t = &mut self.rows[i].1;
            t.peak_bytes = t.live_bytes;
            if let Some(e) = &mut self.sampled {
                e.rows[i].peak_bytes = e.rows[i].live_bytes;
            }
            self.stamps[i] = self.epoch;
        }
        Some(i)
    }

    fn forget(&mut self, site: Site, size: u64) {
        if let Some(i) = self.row_index(site, false) {
            self.slice(i, [0, 0, 1, size]);
            let t = &mut self.rows[i].1;
            t.live_objects -= 1;
            t.live_bytes = t.live_bytes.saturating_sub(size);
            if let Some(e) = &mut self.sampled {
                let w = e.sampling.weight(size);
                let r = &mut e.rows[i];
                r.live_objects.sub(w, 1.0);
                r.live_bytes.sub(w, size as f64);
                e.live_objects.sub(w, 1.0);
                e.live_bytes.sub(w, size as f64);
            }
        }
    }

    /// Counts a temporary allocation of `size` bytes at `site`.
    fn temporary(&mut self, site: Site, size: u64) {
        if let Some(i) = self.row_index(site, false) {
            self.rows[i].1.temporary += 1;
            if let Some(e) = &mut self.sampled {
                let w = e.sampling.weight(size);
                e.rows[i].temporary.add(w, 1.0);
            }
        }
    }

    /// The trace's sampling, if it is sampled (its rows are then
    /// estimates).
    pub fn sampling(&self) -> Option<Sampling> {
        self.sampled
            .as_ref()
            .map(|e| e.sampling)
            .or(self.finished_sampling)
    }

    /// What every report of these counts reads, in a form that is stored
    /// and read back (a recording's profile index, `tramp-index`): the
    /// rows [resolved](Self::resolved), the heap's peak and the sampling.
    pub fn finished(&self, modules: &Modules) -> Finished {
        let mut rows = self.resolved(modules);
        // The time slices of the rows a page keeps; the others' as one.
        let mut other_slices = self.other_slices.clone();
        let mut other_threads = self.other_threads.clone();
        let mut other_shape = self.other_shape.clone();
        for &i in by_largest_share(&rows).iter().skip(SLICED_ROWS) {
            let s = std::mem::take(&mut rows[i].1.slices);
            crate::slices::merge(&mut other_slices, &s);
            for (k, a, b) in std::mem::take(&mut rows[i].1.threads) {
                by_thread(&mut other_threads, k, a, b);
            }
            for (k, n) in std::mem::take(&mut rows[i].1.shape) {
                shape_add(&mut other_shape, k, n);
            }
        }
        Finished {
            rows,
            peak: self.peak.clone(),
            sampling: self.sampling(),
            grid: self.grid(),
            other_slices,
            threads: self.thread_ids.clone(),
            other_threads,
            other_shape,
        }
    }

    /// The thread of each slot of the rows' `threads`.
    pub fn thread_ids(&self) -> &[u64] {
        &self.thread_ids
    }

    /// The slices the rows' `slices` count in.
    pub fn grid(&self) -> Option<crate::slices::Grid> {
        self.finished_grid.or_else(|| {
            let g = self.grid.grid()?;
            Some(crate::slices::Grid {
                width: g.width.saturating_mul(1 << self.shift.min(63)),
                ..g
            })
        })
    }

    /// Counts `c` (allocations, bytes, frees, bytes freed) for row `i` in
    /// the current event's slice; past [`MAX_SLICE_ENTRIES`] every row's
    /// slices merge in pairs (memory bounded whatever the sites).
    #[inline]
    fn slice(&mut self, i: usize, c: [u64; 4]) {
        let v = &mut self.rows[i].1.slices;
        let before = v.len();
        crate::slices::add(v, self.at, c);
        self.entries += v.len() - before;
        if self.entries > MAX_SLICE_ENTRIES {
            self.shift += 1;
            self.at >>= 1;
            self.halve(1);
        }
    }

    /// Counts an allocation (`a`) and `b` bytes of row `i` for `thread`.
    #[inline]
    fn thread(&mut self, i: usize, thread: u64, a: u64, b: u64) {
        let k = match self.last_thread {
            Some((t, k)) if t == thread => k,
            _ => {
                let next = self.thread_ids.len() as u32;
                let k = match self.thread_slots.get(&thread) {
                    Some(&k) => k,
                    None if self.thread_entries < MAX_THREAD_ENTRIES && next < OTHER_THREADS => {
                        self.thread_ids.push(thread);
                        self.thread_slots.insert(thread, next);
                        next
                    }
                    None => OTHER_THREADS,
                };
                self.last_thread = Some((thread, k));
                k
            }
        };
        let k = if self.thread_entries >= MAX_THREAD_ENTRIES {
            OTHER_THREADS
        } else {
            k
        };
        if by_thread(&mut self.rows[i].1.threads, k, a, b) {
            self.thread_entries += 1;
        }
    }

    /// Merges every row's slices in pairs `times` times.
    fn halve(&mut self, times: u32) {
        self.entries = 0;
        for (_, t) in &mut self.rows {
            crate::slices::halve(&mut t.slices, times);
            self.entries += t.slices.len();
        }
    }

    /// Counts that report what `f` says (its rows are resolved already,
    /// and resolving them again changes nothing).
    pub fn from_finished(f: Finished) -> SiteCounts {
        let index = f
            .rows
            .iter()
            .enumerate()
            .map(|(i, (s, _))| (*s, i))
            .collect();
        SiteCounts {
            stamps: vec![0; f.rows.len()],
            rows: f.rows,
            index,
            peak: f.peak,
            finished_sampling: f.sampling,
            finished_grid: f.grid,
            other_slices: f.other_slices,
            other_threads: f.other_threads,
            other_shape: f.other_shape,
            thread_ids: f.threads,
            ..SiteCounts::default()
        }
    }

    /// The top `n` sites by allocation count, by bytes, and by bytes live
    /// at the end of the trace (leaks), named with the trace's modules
    /// (whose process notes also say what a plain site number is).
    pub fn report(&self, modules: &Modules, n: usize) -> SitesReport {
        self.report_with(modules, n, None)
    }

    /// [`SiteCounts::report`], with the leaks `suppressions` match left
    /// out of the leak table and counted against the suppression.
    pub fn report_with(
        &self,
        modules: &Modules,
        n: usize,
        suppressions: Option<&Suppressions>,
    ) -> SitesReport {
        let all = self.resolved(modules);
        let mut names = modules.names();
        // Leaks: every site still holding bytes, unless suppressed.
        let mut leaks = Leaks::default();
        let mut leaking: Vec<(Site, SiteTotals)> = Vec::new();
        // The file's suppressions, then those the program compiled in for
        // LeakSanitizer (`__lsan_default_suppressions`, as LSan applies both).
        let mut suppressed = suppressions.cloned();
        let own = Suppressions::from_program(&modules.lsan_suppressions);
        if !own.list.is_empty() {
            suppressed
                .get_or_insert_with(Suppressions::default)
                .list
                .extend(own.list);
        }
        for (site, t) in all.iter().filter(|(_, t)| t.live_bytes > 0) {
            let hit = suppressed
                .as_ref()
                .and_then(|s| s.find(&stack_of(&mut names, *site)));
            match (hit, suppressed.as_mut()) {
                (Some(i), Some(s)) => {
                    s.list[i].objects += t.live_objects;
                    s.list[i].bytes = s.list[i].bytes.saturating_add(t.live_bytes);
                    leaks.suppressed_objects += t.live_objects;
                    leaks.suppressed_bytes = leaks.suppressed_bytes.saturating_add(t.live_bytes);
                }
                _ => {
                    leaks.objects += t.live_objects;
                    leaks.bytes = leaks.bytes.saturating_add(t.live_bytes);
                    leaking.push((*site, t.clone()));
                }
            }
        }
        leaks.suppressions = suppressed.map(|s| s.list).unwrap_or_default();
        let top = |rows: &[(Site, SiteTotals)],
                   key: &dyn Fn(&SiteTotals) -> u64,
                   names: &mut Names|
         -> Vec<SiteRow> {
            let mut v: Vec<&(Site, SiteTotals)> = rows.iter().filter(|(_, t)| key(t) > 0).collect();
            v.sort_by(|a, b| key(&b.1).cmp(&key(&a.1)).then(a.0.cmp(&b.0)));
            v.into_iter()
                .take(n)
                .map(|(site, t)| SiteRow {
                    stack: stack_of(names, *site),
                    totals: SiteTotals {
                        slices: Vec::new(),
                        threads: Vec::new(),
                        shape: Vec::new(),
                        ..t.clone()
                    },
                })
                .collect()
        };
        SitesReport {
            sites: all.len() as u64,
            sampling: self.sampling(),
            peak: self.peak.clone(),
            by_count: top(&all, &|t| t.allocs, &mut names),
            by_bytes: top(&all, &|t| t.bytes_u64(), &mut names),
            by_bytes_at_peak: top(&all, &|t| t.peak_bytes, &mut names),
            by_live_bytes_at_exit: top(&leaking, &|t| t.live_bytes, &mut names),
            leaks,
        }
    }
}

/// The sites with most of one cost ([`SiteCounts::top_sites`]).
#[derive(Clone, Debug, Serialize)]
pub struct TopSites {
    pub cost: &'static str,
    /// The cost over every site.
    pub total: u64,
    pub rows: Vec<TopSite>,
}

/// One site of [`TopSites`]: its innermost frame, its amount of the cost,
/// and how many call stacks run through it.
#[derive(Clone, Debug, Serialize)]
pub struct TopSite {
    pub site: String,
    pub amount: u64,
    pub stacks: u64,
}

/// A cost per stack, for folded stacks and flame graphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    Allocations,
    Bytes,
    Temporary,
    Peak,
    Leaked,
}

impl Cost {
    /// Every cost, with its name.
    pub const NAMED: [(&'static str, Cost); 5] = [
        ("allocations", Cost::Allocations),
        ("bytes", Cost::Bytes),
        ("temporary", Cost::Temporary),
        ("peak", Cost::Peak),
        ("leaked", Cost::Leaked),
    ];

    /// The cost called `name`.
    pub fn named(name: &str) -> Option<Cost> {
        Cost::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Cost::NAMED
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("", |(n, _)| n)
    }

    /// What it counts (`allocations` or `bytes`).
    pub fn unit(self) -> &'static str {
        match self {
            Cost::Allocations | Cost::Temporary => "allocations",
            Cost::Bytes | Cost::Peak | Cost::Leaked => "bytes",
        }
    }

    /// Its value in `t`.
    pub fn of(self, t: &SiteTotals) -> u64 {
        match self {
            Cost::Allocations => t.allocs,
            Cost::Bytes => t.bytes_u64(),
            Cost::Temporary => t.temporary,
            Cost::Peak => t.peak_bytes,
            Cost::Leaked => t.live_bytes,
        }
    }
}

impl SiteCounts {
    /// Every site's totals (peak bytes brought up to date), sites that
    /// resolve alike merged, in site order.
    pub fn resolved(&self, modules: &Modules) -> Vec<(Site, SiteTotals)> {
        let stacks = modules.stack_depth > 0;
        let mut resolved: FxHashMap<Site, SiteTotals> = FxHashMap::default();
        for (i, (site, t)) in self.rows.iter().enumerate() {
            let r = resolved.entry(site.resolved(stacks)).or_default();
            // Unchanged since the last peak: it holds now what it held then.
            let unchanged = self.stamps[i] < self.epoch;
            let peak_bytes = if unchanged {
                t.live_bytes
            } else {
                t.peak_bytes
            };
            let t = match &self.sampled {
                None => SiteTotals {
                    peak_bytes,
                    ..t.clone()
                },
                Some(e) => {
                    let x = &e.rows[i];
                    SiteTotals {
                        allocs: x.allocs.rounded(),
                        bytes: u128::from(x.bytes.rounded()),
                        live_objects: x.live_objects.rounded(),
                        live_bytes: x.live_bytes.rounded(),
                        peak_bytes: if unchanged {
                            x.live_bytes
                        } else {
                            x.peak_bytes
                        }
                        .rounded(),
                        temporary: x.temporary.rounded(),
                        standard_errors: Some(SiteErrors {
                            allocs: x.allocs.standard_error().powi(2),
                            bytes: x.bytes.standard_error().powi(2),
                            live_bytes: x.live_bytes.standard_error().powi(2),
                        }),
                        slices: t.slices.clone(),
                        threads: t.threads.clone(),
                        shape: t.shape.clone(),
                    }
                }
            };
            r.add(&t);
        }
        let mut all: Vec<(Site, SiteTotals)> = resolved.into_iter().collect();
        all.sort_by_key(|(k, _)| *k);
        all
    }

    /// The `keep` stacks with the largest share of any cost (allocations,
    /// bytes, temporary, peak, leaked), named as [`by_stack`](Self::by_stack)
    /// names them, and the totals of the others with their count: only
    /// the kept stacks are symbolized, so a trace of a million stacks costs
    /// `keep` namings.
    pub fn by_stack_top(
        &self,
        modules: &Modules,
        keep: usize,
    ) -> (Vec<(Vec<String>, SiteTotals)>, usize, SiteTotals) {
        let all = self.resolved(modules);
        let order = by_largest_share(&all);
        let mut all: Vec<(Site, SiteTotals)> = order.into_iter().map(|i| all[i].clone()).collect();
        let mut other = SiteTotals::default();
        let merged = all.len().saturating_sub(keep);
        for (_, t) in all.iter().skip(keep) {
            other.add(t);
        }
        crate::slices::merge(&mut other.slices, &self.other_slices);
        for &(k, a, b) in &self.other_threads {
            by_thread(&mut other.threads, k, a, b);
        }
        for &(k, n) in &self.other_shape {
            shape_add(&mut other.shape, k, n);
        }
        all.truncate(keep);
        let mut names = modules.names();
        let mut rows: Vec<(Vec<String>, SiteTotals)> = all
            .into_iter()
            .map(|(site, t)| (named_frames(&stack_of(&mut names, site)), t))
            .collect();
        merge_alike(&mut rows);
        (rows, merged, other)
    }

    /// For each of `costs`, the `n` allocation sites with most of it: a
    /// site is the innermost frame (the code that called the allocator,
    /// named `function (file:line)`), summed over every call stack through
    /// it, none merged away — heaptrack's summary of peak consumers,
    /// allocators, temporary allocators and leakers. Only the distinct
    /// innermost frames are named, not the stacks.
    pub fn top_sites(&self, modules: &Modules, costs: &[Cost], n: usize) -> Vec<TopSites> {
        let mut names = modules.names();
        let mut by_pc: FxHashMap<u64, (SiteTotals, u64)> = FxHashMap::default();
        for (site, t) in self.resolved(modules) {
            let pc = match site.kind {
                SITE_RETURN_ADDRESS => site.value,
                SITE_STACK => names.innermost(site.value).unwrap_or(0),
                _ => 0,
            };
            let e = by_pc.entry(pc).or_default();
            e.0.add(&t);
            e.1 += 1;
        }
        // Addresses that name the same place are one site.
        let mut by_name: FxHashMap<String, (SiteTotals, u64)> = FxHashMap::default();
        for (pc, (t, stacks)) in by_pc {
            let name = match pc {
                0 => "(unknown)".to_string(),
                pc => names
                    .place(pc)
                    .frames()
                    .first()
                    .map_or_else(|| format!("{pc:#x}"), |p| p.to_string()),
            };
            let e = by_name.entry(name).or_default();
            e.0.add(&t);
            e.1 += stacks;
        }
        let mut sites: Vec<(String, SiteTotals, u64)> =
            by_name.into_iter().map(|(k, (t, n))| (k, t, n)).collect();
        sites.sort_by(|a, b| a.0.cmp(&b.0));
        costs
            .iter()
            .map(|&cost| {
                let total = sites.iter().map(|(_, t, _)| cost.of(t)).sum();
                let mut rows: Vec<&(String, SiteTotals, u64)> =
                    sites.iter().filter(|(_, t, _)| cost.of(t) > 0).collect();
                rows.sort_by(|a, b| cost.of(&b.1).cmp(&cost.of(&a.1)).then(a.0.cmp(&b.0)));
                TopSites {
                    cost: cost.name(),
                    total,
                    rows: rows
                        .into_iter()
                        .take(n)
                        .map(|(site, t, stacks)| TopSite {
                            site: site.clone(),
                            amount: cost.of(t),
                            stacks: *stacks,
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// The heap's peak: the most bytes live at once, and when.
    pub fn peak(&self) -> &Peak {
        &self.peak
    }

    /// Every site's totals by its call stack named frame by frame,
    /// outermost first (`function (file:line)`, else `module+offset`; an
    /// unknown site is `(unknown)`): what folded stacks print and what
    /// `tramp diff` matches two traces by, so two builds compare. Sites
    /// whose stacks read the same are one row.
    pub fn by_stack(&self, modules: &Modules) -> Vec<(Vec<String>, SiteTotals)> {
        // Every site that allocated, each named once (the whole report's
        // four tables named every site four times: 3.7 GB for `tramp diff`
        // of a recording with 10^5 stacks).
        let mut names = modules.names();
        let mut sites = self.resolved(modules);
        sites.retain(|(_, t)| t.allocs > 0);
        // In the allocations table's order, so that alike rows add up in
        // the order they always did.
        sites.sort_by(|a, b| b.1.allocs.cmp(&a.1.allocs).then(a.0.cmp(&b.0)));
        let mut rows: Vec<(Vec<String>, SiteTotals)> = sites
            .into_iter()
            .map(|(site, t)| (named_frames(&stack_of(&mut names, site)), t))
            .collect();
        merge_alike(&mut rows);
        rows
    }

    /// Folded stacks of `cost` (see [`folded`]).
    pub fn folded(&self, modules: &Modules, cost: Cost) -> String {
        folded(&self.by_stack(modules), cost)
    }
}

/// Folded stacks: one line per call stack with a non-zero `cost`, its
/// frames outermost first joined by `;`, a space, and the cost — the input
/// of flamegraph.pl, inferno and speedscope (`stacks` as
/// [`SiteCounts::by_stack`] gives them).
pub fn folded(stacks: &[(Vec<String>, SiteTotals)], cost: Cost) -> String {
    let mut out = String::new();
    for (frames, t) in stacks {
        let n = cost.of(t);
        if n > 0 {
            out.push_str(&format!("{} {n}\n", frames.join(";")));
        }
    }
    out
}

/// The indices of `rows` from the largest share of any cost (of the rows'
/// totals) down; ties in row order.
pub fn by_largest_share<T>(rows: &[(T, SiteTotals)]) -> Vec<usize> {
    let totals = rows.iter().fold([0u64; 5], |mut a, (_, t)| {
        for (x, c) in a.iter_mut().zip(t.costs()) {
            *x = x.saturating_add(c);
        }
        a
    });
    let share = |t: &SiteTotals| {
        t.costs()
            .iter()
            .zip(totals)
            .map(|(c, total)| {
                if total == 0 {
                    0.0
                } else {
                    *c as f64 / total as f64
                }
            })
            .fold(0.0, f64::max)
    };
    let shares: Vec<f64> = rows.iter().map(|(_, t)| share(t)).collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|a, b| shares[*b].total_cmp(&shares[*a]).then(a.cmp(b)));
    order
}

/// A stack's frames as folded stacks name them, outermost first.
fn named_frames(stack: &[Place]) -> Vec<String> {
    if stack.is_empty() {
        vec!["(unknown)".into()]
    } else {
        stack
            .iter()
            .rev()
            .map(|p| p.to_string().replace([';', '\n'], ","))
            .collect()
    }
}

/// Rows whose stacks read the same become one, in name order.
fn merge_alike(rows: &mut Vec<(Vec<String>, SiteTotals)>) {
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.dedup_by(|b, a| {
        if a.0 != b.0 {
            return false;
        }
        a.1.add(&b.1);
        true
    });
}

/// The frames of a site, innermost first, each code address expanded into
/// the functions inlined at it (innermost first too).
pub fn stack_of(names: &mut Names, site: Site) -> Vec<Place> {
    match site.kind {
        SITE_RETURN_ADDRESS => names.place(site.value).frames(),
        SITE_STACK => {
            let frames = names.stack(site.value).to_vec();
            frames
                .iter()
                .flat_map(|f| names.place(*f).frames())
                .collect()
        }
        _ => vec![],
    }
}

impl<K: tramp_heap::Keep> Analysis<Heap<K>> for SiteCounts {
    type Report = SiteCounts;

    #[inline]
    fn observe(&mut self, step: &HeapStep<K>) -> Result<(), tramp_core::Error> {
        if self.sampled.is_none()
            && let Some(sampling) = step.sampling
        {
            self.sampled = Some(Sampled {
                sampling,
                rows: vec![SiteEstimates::default(); self.rows.len()],
                live_bytes: Estimate::default(),
                live_objects: Estimate::default(),
                peak: 0.0,
            });
        }
        let (at, doubled) = self.grid.at(step.event.cx().time);
        if doubled > 0 {
            self.halve(doubled);
        }
        self.at = at >> self.shift;
        match step.event {
            HeapEvent::Alloc { object, .. } => {
                let i = self.row_index(object.extra.site(), true).expect("made");
                self.slice(i, [1, object.size, 0, 0]);
                self.thread(i, step.event.cx().thread, 1, object.size);
                shape_add(&mut self.rows[i].1.shape, bucket(object.size), 1);
                let t = &mut self.rows[i].1;
                t.allocs += 1;
                t.bytes += u128::from(object.size);
                t.live_objects += 1;
                t.live_bytes = t.live_bytes.saturating_add(object.size);
                if let Some(e) = &mut self.sampled {
                    let (w, x) = (e.sampling.weight(object.size), object.size as f64);
                    let r = &mut e.rows[i];
                    r.allocs.add(w, 1.0);
                    r.bytes.add(w, x);
                    r.live_objects.add(w, 1.0);
                    r.live_bytes.add(w, x);
                    e.live_objects.add(w, 1.0);
                    e.live_bytes.add(w, x);
                }
            }
            HeapEvent::Displaced { object, .. } => self.forget(object.extra.site(), object.size),
            HeapEvent::Free {
                object: Some(object),
                temporary,
                ..
            } => {
                if temporary {
                    self.temporary(object.extra.site(), object.size);
                }
                if let Some(birth) = object.extra.birth()
                    && let Some(i) = self.row_index(object.extra.site(), false)
                {
                    let lived = step.event.cx().time.saturating_sub(birth);
                    shape_add(&mut self.rows[i].1.shape, 65 + bucket(lived), 1);
                }
                self.forget(object.extra.site(), object.size)
            }
            HeapEvent::Realloc {
                resized,
                temporary,
                from,
                ..
            } => {
                if temporary && let Some(o) = from {
                    self.temporary(o.extra.site(), o.size);
                }
                if let Some((object, before)) = resized
                    && let Some(i) = self.row_index(object.extra.site(), false)
                {
                    let (grew, shrank) = (
                        object.size.saturating_sub(before),
                        before.saturating_sub(object.size),
                    );
                    self.slice(i, [0, grew, 0, shrank]);
                    if grew > 0 {
                        self.thread(i, step.event.cx().thread, 0, grew);
                    }
                    let t = &mut self.rows[i].1;
                    t.live_bytes = t
                        .live_bytes
                        .saturating_sub(before)
                        .saturating_add(object.size);
                    if let Some(e) = &mut self.sampled {
                        // The object now weighs as its new size does.
                        let (w0, w1) = (e.sampling.weight(before), e.sampling.weight(object.size));
                        let r = &mut e.rows[i];
                        r.live_objects.sub(w0, 1.0);
                        r.live_bytes.sub(w0, before as f64);
                        r.live_objects.add(w1, 1.0);
                        r.live_bytes.add(w1, object.size as f64);
                        if object.size > before {
                            r.bytes.add(w1, (object.size - before) as f64);
                        }
                        e.live_objects.sub(w0, 1.0);
                        e.live_bytes.sub(w0, before as f64);
                        e.live_objects.add(w1, 1.0);
                        e.live_bytes.add(w1, object.size as f64);
                    }
                }
            }
            _ => {}
        }
        // A new peak, once the event is applied (a displacement's step
        // comes before its allocation's, with the totals after both). A
        // sampled trace's peak is that of its estimated live bytes.
        if matches!(step.event, HeapEvent::Displaced { .. }) {
            return Ok(());
        }
        let time = match step.event {
            HeapEvent::Alloc { cx, .. } | HeapEvent::Realloc { cx, .. } => cx.time,
            _ => 0,
        };
        let peak = match &mut self.sampled {
            None => {
                (step.live.bytes > self.peak.bytes).then_some((step.live.bytes, step.live.objects))
            }
            Some(e) if e.live_bytes.value() > e.peak => {
                e.peak = e.live_bytes.value();
                Some((e.live_bytes.rounded(), e.live_objects.rounded()))
            }
            Some(_) => None,
        };
        if let Some((bytes, objects)) = peak {
            self.peak = Peak {
                bytes,
                objects,
                time,
            };
            self.epoch += 1;
        }
        Ok(())
    }

    fn finish(self) -> SiteCounts {
        self
    }
}

impl std::fmt::Display for SitesReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "\nallocation sites: {}", self.sites)?;
        if let Some(s) = self.sampling {
            writeln!(
                f,
                "(sampled every {} bytes on average: the figures are estimates)",
                s.mean_bytes
            )?;
        }
        let peak = format!(
            "by bytes live at the peak ({} bytes in {} objects, time {})",
            self.peak.bytes, self.peak.objects, self.peak.time
        );
        let l = &self.leaks;
        let leaked = format!(
            "by bytes live at exit (leaks: {} bytes in {} objects{})",
            l.bytes,
            l.objects,
            if l.suppressions.is_empty() {
                String::new()
            } else {
                format!(
                    "; suppressed: {} bytes in {} objects",
                    l.suppressed_bytes, l.suppressed_objects
                )
            }
        );
        for (title, rows) in [
            ("by allocations", &self.by_count),
            ("by bytes allocated", &self.by_bytes),
            (peak.as_str(), &self.by_bytes_at_peak),
            (leaked.as_str(), &self.by_live_bytes_at_exit),
        ] {
            writeln!(f, "\ntop sites {title}")?;
            writeln!(
                f,
                "  {:>12} {:>16} {:>12} {:>16} {:>16}  site",
                "allocs", "bytes", "live", "live bytes", "peak bytes"
            )?;
            for r in rows {
                let t = &r.totals;
                let first = r
                    .stack
                    .first()
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "(unknown)".into());
                writeln!(
                    f,
                    "  {:>12} {:>16} {:>12} {:>16} {:>16}  {first}",
                    t.allocs, t.bytes, t.live_objects, t.live_bytes, t.peak_bytes
                )?;
                for p in r.stack.iter().skip(1).take(4) {
                    writeln!(f, "  {:>77}  <- {p}", "")?;
                }
            }
        }
        Ok(())
    }
}

/// Heap statistics with the site tables: the statistics' JSON object gains
/// a `sites` key (keys in sorted order); the text shows the site tables
/// after the statistics.
#[derive(Clone, Debug)]
pub struct WithSites {
    pub heap: tramp_heap::Report,
    pub sites: SitesReport,
}

impl Serialize for WithSites {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut v = serde_json::to_value(&self.heap).map_err(S::Error::custom)?;
        v["sites"] = serde_json::to_value(&self.sites).map_err(S::Error::custom)?;
        v.serialize(s)
    }
}

impl std::fmt::Display for WithSites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.heap, self.sites)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_heap::{Context, Live, Object};

    fn site(v: u64) -> Site {
        Site {
            kind: SITE_RETURN_ADDRESS,
            value: v,
        }
    }

    /// Feeds `SiteCounts` the steps of a made-up heap directly: who holds
    /// what at the peak is worked out by hand.
    #[test]
    fn the_peak_is_attributed_to_the_sites_holding_it_then() {
        let mut c = SiteCounts::new();
        let mut live = Live::default();
        let mut step = |c: &mut SiteCounts, ev: HeapEvent<Site>, dbytes: i64, dobj: i64| {
            live.bytes = (live.bytes as i64 + dbytes) as u64;
            live.objects = (live.objects as i64 + dobj) as u64;
            c.observe(&HeapStep {
                event: ev,
                live,
                sampling: None,
                attached: false,
                selected: Default::default(),
            })
            .unwrap();
        };
        let cx = |time| Context {
            thread: 0,
            heap: 0,
            time,
        };
        let obj = |a, size, s| Object {
            address: a,
            size,
            extra: site(s),
        };
        let alloc = |a, size, s, t| HeapEvent::Alloc {
            object: obj(a, size, s),
            displaced: 0,
            implied: false,
            cx: cx(t),
        };
        let free = |a, size, s, t| HeapEvent::Free {
            address: a,
            object: Some(obj(a, size, s)),
            implied: false,
            temporary: false,
            cx: cx(t),
        };
        // Site 1: 100 then 50 bytes; site 2: 300. Peak 450 at time 3.
        step(&mut c, alloc(0x10, 100, 1, 1), 100, 1);
        step(&mut c, alloc(0x20, 300, 2, 2), 300, 1);
        step(&mut c, alloc(0x30, 50, 1, 3), 50, 1);
        // Then site 2 frees its 300 and site 3 allocates 200: 350 < 450.
        step(&mut c, free(0x20, 300, 2, 4), -300, -1);
        step(&mut c, alloc(0x40, 200, 3, 5), 200, 1);
        // Site 1 frees 100 after the peak; its share then was 150.
        step(&mut c, free(0x10, 100, 1, 6), -100, -1);
        let r = c.report(&Modules::default(), 10);
        assert_eq!(
            r.peak,
            Peak {
                bytes: 450,
                objects: 3,
                time: 3
            }
        );
        let at_peak: Vec<(u64, u64)> = r
            .by_bytes_at_peak
            .iter()
            .map(|row| (row.stack[0].address, row.totals.peak_bytes))
            .collect();
        assert_eq!(
            at_peak,
            vec![(2, 300), (1, 150)],
            "site 3 held nothing then"
        );
        let sum: u64 = r
            .by_bytes_at_peak
            .iter()
            .map(|row| row.totals.peak_bytes)
            .sum();
        assert_eq!(sum, r.peak.bytes);
    }
}
