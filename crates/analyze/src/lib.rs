//! tramp-analyze: what a trace of requests is like, before anyone
//! simulates a cache on it — libCacheSim's traceAnalyzer's numbers and
//! series, computed in one pass with memory bounded by the objects.
//!
//! * [`Analyzer`]: a [`tramp_cachesim::sim::Sink`] fed every request (its
//!   object, size, operation and time), finished into an [`Analysis`];
//! * [`Analysis`]: the stat block (counts, bytes, compulsory miss ratios,
//!   mean sizes and frequency, time span, operations, rates per window,
//!   the Zipf fit, X-hit counts, the most popular objects) and the series
//!   (rates per window, sizes, reuse time in real and virtual time,
//!   popularity by rank, sizes and reuse per window, and LRU stack
//!   distances, kept apart from reuse time), and libCacheSim's further
//!   analyses: the access pattern of sampled objects, popularity decay,
//!   requests by age, lifetimes, TTLs and size changes;
//! * pictures of each series ([`Analysis::svgs`]) and one HTML page
//!   ([`Analysis::html`]).
//!
//! Where libCacheSim's definitions are odd, they are matched and said so
//! in docs/analyze.md (a window's counts take the request that opens the
//! next window; the last, partial window is not in the series).

pub mod age;
pub mod change;
pub mod decay;
mod html;
pub mod pattern;
mod pictures;
mod stack;

use std::fmt;

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_cachesim::{Op, Request};

/// What an analysis is asked.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The window of the per-window series, in the trace's time unit
    /// (seconds for libCacheSim's layouts).
    pub window: u64,
    /// X-hit counts for X = 1 ..= this.
    pub n_hit: usize,
    /// The frequencies of this many most popular objects.
    pub n_popular: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 60,
            n_hit: 5,
            n_popular: 10,
        }
    }
}

/// Real reuse times are binned by this many time units (libCacheSim's
/// granularity).
pub const REUSE_GRANULARITY: u64 = 5;
/// The most windows a per-window series holds (a window far shorter than
/// the trace — the default 60 on a trace timed in nanoseconds — would
/// otherwise grow them without bound); past it, windows are counted in
/// `windows_dropped` and left out.
pub const MAX_WINDOWS: u64 = 1 << 17;

/// The last bin of a window's real reuse times.
pub const MAX_WINDOW_BIN: usize = (1 << 16) - 1;

/// Virtual reuse times and sizes per window are binned by powers of this.
pub const LOG_BASE: f64 = 1.5;

#[derive(Clone, Copy)]
struct Obj {
    freq: u32,
    /// The size of its last request.
    size: u32,
    created: u64,
    created_vtime: u64,
    last_time: u64,
    last_vtime: u64,
    /// Its last request's position in the LRU stack.
    pos: u32,
}

/// Counts of one window (libCacheSim's `ReqRate`).
#[derive(Clone, Copy, Default)]
struct WindowCounts {
    requests: u64,
    bytes: u64,
    objects: u64,
    first_seen: u64,
}

/// The analysis as it reads.
pub struct Analyzer {
    opts: Options,
    objs: FxHashMap<u64, Obj>,
    start: Option<u64>,
    last_time: u64,
    requests: u64,
    req_bytes: u64,
    obj_bytes: u64,
    reads: u64,
    writes: u64,
    overwrites: u64,
    /// The window's index of the current request, and where the next
    /// window starts (relative to the first request's time).
    window_idx: u64,
    next_window: u64,
    /// Where the per-window series flush: the rates and sizes at every
    /// request, the reuse series only at a reuse (libCacheSim's analyses
    /// keep a boundary each, and its reuse analysis returns before its
    /// flush at an object's first request).
    flush_at: u64,
    reuse_flush_at: u64,
    window: WindowCounts,
    windows: Vec<WindowCounts>,
    reuse_rt: Hist,
    reuse_vt: Hist,
    bins: LogBins,
    window_reuse_rt: Vec<u64>,
    window_reuse_vt: Vec<u64>,
    reuse_rt_windows: Vec<Vec<u64>>,
    reuse_vt_windows: Vec<Vec<u64>>,
    size_req: Hist,
    size_obj: Hist,
    window_size_req: Vec<u64>,
    window_size_obj: Vec<u64>,
    size_req_windows: Vec<Vec<u64>>,
    size_obj_windows: Vec<Vec<u64>>,
    stack: stack::Stack,
    out_of_order: u64,
    windows_dropped: u64,
    pattern: pattern::Pattern,
    decay: decay::Decay,
    ages: age::Ages,
    ttls: change::Ttls,
    size_changes: change::SizeChanges,
}

fn bump(v: &mut Vec<u64>, i: usize) {
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    v[i] += 1;
}

fn log_bin(x: f64) -> usize {
    (x.ln() / LOG_BASE.ln()).max(0.0) as usize
}

/// [`log_bin`] of integers without a logarithm each: the smallest
/// integer of each bin, found once with `log_bin` itself (so that the
/// bins are libm's to the last boundary), then a binary search.
struct LogBins {
    starts: Vec<u64>,
}

impl LogBins {
    fn new() -> LogBins {
        let mut starts = vec![0u64];
        let mut k = 1;
        while let Some(&last) = starts.last() {
            let guess = LOG_BASE.powi(k).floor() as u64;
            if guess >= u64::MAX / 4 {
                break;
            }
            let mut x = guess.saturating_sub(2).max(last + 1);
            while log_bin(x as f64) < k as usize {
                x += 1;
            }
            starts.push(x);
            k += 1;
        }
        LogBins { starts }
    }

    #[inline]
    fn bin(&self, x: u64) -> usize {
        self.starts.partition_point(|&s| s <= x) - 1
    }
}

/// Counts by bin: dense below 2^16, sparse above (a trace timed in
/// nanoseconds has reuse times far past that), and the requests with no
/// bin (an object's first).
#[derive(Default)]
struct Hist {
    dense: Vec<u64>,
    sparse: FxHashMap<u64, u64>,
    none: u64,
}

impl Hist {
    #[inline]
    fn add(&mut self, bin: u64) {
        if bin < 1 << 16 {
            bump(&mut self.dense, bin as usize);
        } else {
            *self.sparse.entry(bin).or_insert(0) += 1;
        }
    }

    /// (bin, count) by bin, the binless as -1 first when there are any.
    fn sorted(self) -> Vec<(i64, u64)> {
        let mut v: Vec<(i64, u64)> = self
            .dense
            .iter()
            .enumerate()
            .filter(|p| *p.1 > 0)
            .map(|(b, &n)| (b as i64, n))
            .chain(self.sparse.into_iter().map(|(b, n)| (b as i64, n)))
            .collect();
        v.sort_unstable();
        if self.none > 0 {
            v.insert(0, (-1, self.none));
        }
        v
    }
}

impl Analyzer {
    pub fn new(opts: Options) -> Analyzer {
        let window = opts.window.max(1);
        Analyzer {
            opts: Options { window, ..opts },
            objs: FxHashMap::default(),
            start: None,
            last_time: 0,
            requests: 0,
            req_bytes: 0,
            obj_bytes: 0,
            reads: 0,
            writes: 0,
            overwrites: 0,
            window_idx: 0,
            next_window: window,
            flush_at: window,
            reuse_flush_at: window,
            window: WindowCounts::default(),
            windows: Vec::new(),
            reuse_rt: Hist::default(),
            reuse_vt: Hist::default(),
            bins: LogBins::new(),
            window_reuse_rt: Vec::new(),
            window_reuse_vt: Vec::new(),
            reuse_rt_windows: Vec::new(),
            reuse_vt_windows: Vec::new(),
            size_req: Hist::default(),
            size_obj: Hist::default(),
            window_size_req: Vec::new(),
            window_size_obj: Vec::new(),
            size_req_windows: Vec::new(),
            size_obj_windows: Vec::new(),
            stack: stack::Stack::new(),
            out_of_order: 0,
            windows_dropped: 0,
            pattern: pattern::Pattern::new(),
            decay: decay::Decay::new(window),
            ages: age::Ages::new(window),
            ttls: change::Ttls::default(),
            size_changes: change::SizeChanges::default(),
        }
    }

    /// Feeds one request.
    pub fn add(&mut self, req: &Request) {
        let start = *self.start.get_or_insert(req.time);
        // Times before the first request's count as its time (a trace
        // out of time order is counted, not refused: `out_of_order`).
        if req.time < self.last_time {
            self.out_of_order += 1;
        }
        let t = req
            .time
            .saturating_sub(start)
            .max(self.last_time.saturating_sub(start));
        self.last_time = start + t;
        let w = self.opts.window;
        if t >= self.next_window {
            self.window_idx = t / w;
            self.next_window = (self.window_idx + 1).saturating_mul(w);
        }
        self.requests += 1;
        self.req_bytes += req.size as u64;
        match req.op {
            Op::Read => self.reads += 1,
            Op::Write => self.writes += 1,
        }
        let (vt, n) = (self.requests, self.window_idx);
        if self.stack.full() {
            let objs = &mut self.objs;
            self.stack.compact(|id, pos| {
                if let Some(o) = objs.get_mut(&id) {
                    o.pos = pos;
                }
            });
        }
        let mut reuse = None;
        let first_in_window;
        let compulsory;
        let created;
        match self.objs.get_mut(&req.id) {
            None => {
                compulsory = true;
                first_in_window = true;
                created = t;
                self.obj_bytes += req.size as u64;
                let pos = self.stack.access(req.id, None);
                self.objs.insert(
                    req.id,
                    Obj {
                        freq: 1,
                        size: req.size,
                        created: t,
                        created_vtime: vt,
                        last_time: t,
                        last_vtime: vt,
                        pos,
                    },
                );
            }
            Some(o) => {
                compulsory = false;
                first_in_window = o.last_time / w != n;
                created = o.created;
                if req.op == Op::Write {
                    self.overwrites += 1;
                    self.size_changes.add(o.size, req.size);
                }
                reuse = Some((t - o.last_time, vt - o.last_vtime));
                o.size = req.size;
                o.freq += 1;
                o.last_time = t;
                o.last_vtime = vt;
                o.pos = self.stack.access(req.id, Some(o.pos));
            }
        }
        self.pattern.add(req.id, t, vt);
        self.decay.add(t, created, first_in_window);
        self.ages.add(reuse.map(|r| r.0), t - created);
        self.ttls.add(req.ttl);
        // The rates (counted, then the windows the request passed flushed).
        self.window.requests += 1;
        self.window.bytes += req.size as u64;
        self.window.objects += first_in_window as u64;
        self.window.first_seen += compulsory as u64;
        // Sizes.
        self.size_req.add(req.size as u64);
        if compulsory {
            self.size_obj.add(req.size as u64);
        }
        let pos = self.bins.bin(req.size as u64);
        bump(&mut self.window_size_req, pos);
        if self.window_size_obj.len() < self.window_size_req.len() {
            self.window_size_obj.resize(self.window_size_req.len(), 0);
        }
        if first_in_window {
            self.window_size_obj[pos] += 1;
        }
        // Reuse.
        match reuse {
            None => {
                self.reuse_rt.none += 1;
                self.reuse_vt.none += 1;
            }
            Some((rt, vt)) => {
                let (prt, pvt) = ((rt / REUSE_GRANULARITY) as usize, self.bins.bin(vt));
                self.reuse_rt.add(prt as u64);
                self.reuse_vt.add(pvt as u64);
                // Per window, bins stop at 2^16 (reuse times past 91 hours
                // of seconds share the last), so a window's vector is
                // bounded whatever the clock.
                bump(&mut self.window_reuse_rt, prt.min(MAX_WINDOW_BIN));
                bump(&mut self.window_reuse_vt, pvt);
                if t >= self.reuse_flush_at {
                    // The window closed, then the empty ones passed (as
                    // many as the series may hold).
                    let passed = (t - self.reuse_flush_at) / w + 1;
                    let room = MAX_WINDOWS.saturating_sub(self.reuse_rt_windows.len() as u64);
                    for i in 0..passed.min(room) {
                        let (rt, vt) = match i {
                            0 => (
                                std::mem::take(&mut self.window_reuse_rt),
                                std::mem::take(&mut self.window_reuse_vt),
                            ),
                            _ => Default::default(),
                        };
                        self.reuse_rt_windows.push(rt);
                        self.reuse_vt_windows.push(vt);
                    }
                    self.window_reuse_rt.clear();
                    self.window_reuse_vt.clear();
                    self.reuse_flush_at = self.reuse_flush_at.saturating_add(passed * w);
                }
            }
        }
        if t >= self.flush_at {
            let passed = (t - self.flush_at) / w + 1;
            self.flush(passed);
            self.flush_at = self.flush_at.saturating_add(passed * w);
        }
    }

    /// Ends the window of every per-window series, then the `passed - 1`
    /// empty ones after it, as many as [`MAX_WINDOWS`] leaves room for
    /// (the rest are counted in `windows_dropped`).
    fn flush(&mut self, passed: u64) {
        let room = MAX_WINDOWS.saturating_sub(self.windows.len() as u64);
        for i in 0..passed.min(room) {
            let (c, req, obj) = match i {
                0 => (
                    std::mem::take(&mut self.window),
                    std::mem::take(&mut self.window_size_req),
                    std::mem::take(&mut self.window_size_obj),
                ),
                _ => Default::default(),
            };
            self.windows.push(c);
            self.size_req_windows.push(req);
            self.size_obj_windows.push(obj);
        }
        self.window = WindowCounts::default();
        self.window_size_req.clear();
        self.window_size_obj.clear();
        self.windows_dropped += passed.saturating_sub(room);
    }

    /// The analysis of every request fed.
    pub fn finish(self) -> Analysis {
        let objects = self.objs.len() as u64;
        let mut freqs: Vec<u32> = self.objs.values().map(|o| o.freq).collect();
        freqs.sort_unstable_by(|a, b| b.cmp(a));
        let mut x_hit = vec![0u64; self.opts.n_hit];
        for &f in &freqs {
            if (f as usize) <= self.opts.n_hit && f > 0 {
                x_hit[f as usize - 1] += 1;
            }
        }
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let w = self.opts.window;
        let rate = |f: fn(&WindowCounts) -> u64| -> Option<(f64, f64)> {
            let v: Vec<u64> = self.windows.iter().map(f).collect();
            Some((
                *v.iter().min()? as f64 / w as f64,
                *v.iter().max()? as f64 / w as f64,
            ))
        };
        let (depths, cold) = self.stack.depths();
        let start = self.start.unwrap_or(0);
        let lifetime_real = age::lifetimes(
            self.objs.values().map(|o| o.last_time - o.created),
            age::LIFETIME_REAL_BIN,
        );
        let lifetime_virtual = age::lifetimes(
            self.objs.values().map(|o| o.last_vtime - o.created_vtime),
            age::LIFETIME_VIRTUAL_BIN,
        );
        let (ttl, ttl_series) = self.ttls.finish();
        let (size_change_absolute, size_change_relative) = self.size_changes.finish();
        let stats = Stats {
            requests: self.requests,
            objects,
            request_bytes: self.req_bytes,
            object_bytes: self.obj_bytes,
            compulsory_miss_ratio: ratio(objects, self.requests),
            compulsory_byte_miss_ratio: ratio(self.obj_bytes, self.req_bytes),
            mean_size_by_requests: ratio(self.req_bytes, self.requests),
            mean_size_by_objects: ratio(self.obj_bytes, objects),
            mean_frequency: ratio(self.requests, objects),
            start_time: start,
            end_time: self.last_time,
            time_span: self.last_time - start,
            reads: self.reads,
            writes: self.writes,
            overwrites: self.overwrites,
            deletes: 0,
            out_of_order: self.out_of_order,
            window: w,
            windows: self.windows.len() as u64,
            windows_dropped: self.windows_dropped,
            request_rate: rate(|c| c.requests).map(|(a, b)| MinMax { min: a, max: b }),
            object_rate: rate(|c| c.objects).map(|(a, b)| MinMax { min: a, max: b }),
            zipf: zipf(&freqs),
            x_hit: x_hit
                .iter()
                .enumerate()
                .map(|(i, &n)| XHit {
                    times: i as u64 + 1,
                    objects: n,
                    fraction: ratio(n, objects),
                })
                .collect(),
            most_popular: freqs
                .iter()
                .take(self.opts.n_popular)
                .map(|&f| Popular {
                    requests: f as u64,
                    fraction: ratio(f as u64, self.requests),
                })
                .collect(),
            ttl,
            popularity_decay_windows_dropped: self.decay.dropped,
        };
        let sorted = Hist::sorted;
        let sizes = |h: Hist| -> Vec<(u32, u64)> {
            h.sorted().into_iter().map(|(z, n)| (z as u32, n)).collect()
        };
        let mut popularity: Vec<(u32, u64)> = Vec::new();
        for &f in &freqs {
            match popularity.last_mut() {
                Some((g, n)) if *g == f => *n += 1,
                _ => popularity.push((f, 1)),
            }
        }
        Analysis {
            stats,
            series: Series {
                request_rate: self.windows.iter().map(|c| c.requests).collect(),
                byte_rate: self.windows.iter().map(|c| c.bytes).collect(),
                object_rate: self.windows.iter().map(|c| c.objects).collect(),
                first_seen_rate: self.windows.iter().map(|c| c.first_seen).collect(),
                popularity,
                reuse_time_real: sorted(self.reuse_rt),
                reuse_time_virtual: sorted(self.reuse_vt),
                size_by_requests: sizes(self.size_req),
                size_by_objects: sizes(self.size_obj),
                size_by_requests_per_window: self.size_req_windows,
                size_by_objects_per_window: self.size_obj_windows,
                reuse_time_real_per_window: self.reuse_rt_windows,
                reuse_time_virtual_per_window: self.reuse_vt_windows,
                stack_distance: depths,
                stack_distance_cold: cold,
                access_pattern: self.pattern.finish(),
                popularity_decay: self.decay.rows,
                requests_by_age: self.ages.finish(),
                lifetime_real,
                lifetime_virtual,
                ttl: ttl_series,
                size_change_absolute,
                size_change_relative,
            },
        }
    }
}

impl tramp_cachesim::sim::Sink for Analyzer {
    #[inline]
    fn access(&mut self, req: Request) {
        self.add(&req);
    }
    fn requests(&self) -> u64 {
        self.requests
    }
}

/// The Zipf fit of frequencies by rank, as libCacheSim fits it: least
/// squares of ln(frequency) on ln(rank) over every object, alpha the
/// negated slope; none below 200 objects.
fn zipf(freqs: &[u32]) -> Option<Zipf> {
    if freqs.len() < 200 {
        return None;
    }
    let n = freqs.len() as f64;
    let (mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (i, &f) in freqs.iter().enumerate() {
        let x = ((i + 1) as f64).ln();
        let y = (f as f64).ln();
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
    }
    let denom = n * sxx - sx * sx;
    if denom == 0.0 {
        return None;
    }
    let slope = (n * sxy - sx * sy) / denom;
    let r_den = ((n * sxx - sx * sx) * (n * syy - sy * sy)).sqrt();
    let r = if r_den == 0.0 {
        0.0
    } else {
        (n * sxy - sx * sy) / r_den
    };
    Some(Zipf {
        alpha: -slope,
        r2: if r.is_finite() { r * r } else { 0.0 },
    })
}

impl Analysis {
    /// The TTL and size-change lines, and what a bound left out.
    fn fmt_more(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, series) = (&self.stats, &self.series);
        let t = &s.ttl;
        if t.requests > 0 {
            write!(
                f,
                "TTL: {} requests with one, {} distinct{}",
                t.requests,
                t.distinct,
                if t.too_many {
                    " (too many to list)"
                } else {
                    ""
                }
            )?;
            for c in &t.common {
                write!(f, ", {}: {} ({:.4})", c.ttl, c.requests, c.fraction)?;
            }
            writeln!(f)?;
        }
        if !series.size_change_absolute.is_empty() {
            let n: u64 = series.size_change_absolute.iter().map(|p| p.1).sum();
            let same = series
                .size_change_absolute
                .iter()
                .find(|p| p.0 == 0)
                .map_or(0, |p| p.1);
            let grew: u64 = series
                .size_change_absolute
                .iter()
                .filter(|p| p.0 > 0)
                .map(|p| p.1)
                .sum();
            writeln!(
                f,
                "size changes of {n} overwrites: {same} kept the size, {grew} grew, {} shrank",
                n - same - grew
            )?;
        }
        let p = &series.access_pattern;
        if p.dropped_requests > 0 {
            writeln!(
                f,
                "note: the access pattern keeps {} requests; {} more to sampled objects are left out",
                pattern::MAX_POINTS,
                p.dropped_requests
            )?;
        }
        if s.popularity_decay_windows_dropped > 0 {
            writeln!(
                f,
                "note: the popularity decay keeps {} windows; {} more are left out",
                decay::MAX_WINDOWS,
                s.popularity_decay_windows_dropped
            )?;
        }
        Ok(())
    }
}

/// libCacheSim's stat block.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    pub requests: u64,
    pub objects: u64,
    pub request_bytes: u64,
    pub object_bytes: u64,
    pub compulsory_miss_ratio: f64,
    pub compulsory_byte_miss_ratio: f64,
    pub mean_size_by_requests: f64,
    pub mean_size_by_objects: f64,
    pub mean_frequency: f64,
    pub start_time: u64,
    pub end_time: u64,
    pub time_span: u64,
    pub reads: u64,
    pub writes: u64,
    pub overwrites: u64,
    pub deletes: u64,
    /// Requests earlier than the one before (counted at that one's time).
    pub out_of_order: u64,
    pub window: u64,
    /// Whole windows in the series.
    pub windows: u64,
    /// Windows past [`MAX_WINDOWS`], left out of the series and the rates.
    pub windows_dropped: u64,
    pub request_rate: Option<MinMax>,
    pub object_rate: Option<MinMax>,
    pub zipf: Option<Zipf>,
    pub x_hit: Vec<XHit>,
    pub most_popular: Vec<Popular>,
    /// Requests with a TTL, distinct TTLs, the common ones.
    pub ttl: change::TtlStats,
    /// Windows past [`decay::MAX_WINDOWS`], left out of the popularity
    /// decay.
    pub popularity_decay_windows_dropped: u64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct MinMax {
    pub min: f64,
    pub max: f64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Zipf {
    pub alpha: f64,
    pub r2: f64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct XHit {
    pub times: u64,
    pub objects: u64,
    pub fraction: f64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Popular {
    pub requests: u64,
    pub fraction: f64,
}

/// The series (docs/analyze.md names each).
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Requests, bytes, objects first requested in the window, objects
    /// first requested in the trace: a count per whole window.
    pub request_rate: Vec<u64>,
    pub byte_rate: Vec<u64>,
    pub object_rate: Vec<u64>,
    pub first_seen_rate: Vec<u64>,
    /// (frequency, objects with it), the most requested first.
    pub popularity: Vec<(u32, u64)>,
    /// (bin, requests): reuse time in the trace's time by bins of
    /// [`REUSE_GRANULARITY`], -1 the first requests of objects.
    pub reuse_time_real: Vec<(i64, u64)>,
    /// (bin, requests): requests since the object's last, bin
    /// ⌊log_1.5⌋, -1 the first requests.
    pub reuse_time_virtual: Vec<(i64, u64)>,
    /// (size, requests), (size, objects at their first request).
    pub size_by_requests: Vec<(u32, u64)>,
    pub size_by_objects: Vec<(u32, u64)>,
    /// Per window, requests (objects) by size bin ⌊log_1.5 size⌋.
    pub size_by_requests_per_window: Vec<Vec<u64>>,
    pub size_by_objects_per_window: Vec<Vec<u64>>,
    /// Per window, reuses by bin, as the whole-trace series.
    pub reuse_time_real_per_window: Vec<Vec<u64>>,
    pub reuse_time_virtual_per_window: Vec<Vec<u64>>,
    /// (LRU stack distance in objects, requests): a request hits an LRU
    /// cache of at least its distance; the first requests have none.
    pub stack_distance: Vec<(u64, u64)>,
    pub stack_distance_cold: u64,
    /// The requests of one object in [`pattern::SAMPLE`].
    pub access_pattern: pattern::AccessPattern,
    /// Per whole window (up to [`decay::MAX_WINDOWS`]), the objects
    /// requested in it by the window of their first request: row `i` has
    /// `i + 1` counts.
    pub popularity_decay: Vec<Vec<u64>>,
    /// (time since the object's last request, time since its first,
    /// requests), both floored to the window; an object's first request
    /// at (0, 0) (libCacheSim's -1 divided by the window).
    pub requests_by_age: Vec<(i64, u64, u64)>,
    /// (time from an object's first request to its last, floored to
    /// [`age::LIFETIME_REAL_BIN`], objects).
    pub lifetime_real: Vec<(u64, u64)>,
    /// (requests from an object's first request to its last, floored to
    /// [`age::LIFETIME_VIRTUAL_BIN`], objects).
    pub lifetime_virtual: Vec<(u64, u64)>,
    /// (TTL, requests) of the requests with one.
    pub ttl: Vec<(u32, u64)>,
    /// (bin, overwrites): size changes of overwrites, binned by
    /// [`change::absolute_bin`] and [`change::relative_bin`].
    pub size_change_absolute: Vec<(i32, u64)>,
    pub size_change_relative: Vec<(i32, u64)>,
}

/// A trace's analysis: the stat block and the series.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    pub stats: Stats,
    pub series: Series,
}

impl fmt::Display for Analysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        let gib = (1u64 << 30) as f64;
        writeln!(f, "requests: {}, objects: {}", s.requests, s.objects)?;
        writeln!(
            f,
            "request GiB: {:.4}, object GiB: {:.4}",
            s.request_bytes as f64 / gib,
            s.object_bytes as f64 / gib
        )?;
        writeln!(
            f,
            "compulsory miss ratio (requests/bytes): {:.4}/{:.4}",
            s.compulsory_miss_ratio, s.compulsory_byte_miss_ratio
        )?;
        writeln!(
            f,
            "mean object size by requests/objects: {:.0}/{:.0} B",
            s.mean_size_by_requests.trunc(),
            s.mean_size_by_objects.trunc()
        )?;
        writeln!(f, "mean frequency: {:.4}", s.mean_frequency)?;
        writeln!(
            f,
            "time span: {} ({:.4} days)",
            s.time_span,
            s.time_span as f64 / 86400.0
        )?;
        let of = |n: u64| {
            if s.requests == 0 {
                0.0
            } else {
                n as f64 / s.requests as f64
            }
        };
        writeln!(
            f,
            "reads: {} ({:.4}), writes: {} ({:.4}), overwrites: {} ({:.4}), deletes: {}",
            s.reads,
            of(s.reads),
            s.writes,
            of(s.writes),
            s.overwrites,
            of(s.overwrites),
            s.deletes
        )?;
        if let (Some(r), Some(o)) = (s.request_rate, s.object_rate) {
            writeln!(
                f,
                "request rate min {:.4} req/s, max {:.4} req/s; object rate min {:.4} obj/s, max {:.4} obj/s (window {}, {} windows)",
                r.min, r.max, o.min, o.max, s.window, s.windows
            )?;
        } else {
            writeln!(
                f,
                "rates: no whole window of {} (time span {})",
                s.window, s.time_span
            )?;
        }
        if s.windows_dropped > 0 {
            writeln!(
                f,
                "note: {} windows past the first {MAX_WINDOWS} are left out of the series; --window is in the trace's time unit (ns for recordings)",
                s.windows_dropped
            )?;
        }
        match s.zipf {
            Some(z) => writeln!(f, "popularity: Zipf alpha {:.4}, R² {:.4}", z.alpha, z.r2)?,
            None => writeln!(
                f,
                "popularity: too few objects for a Zipf fit (fewer than 200)"
            )?,
        }
        write!(f, "X-hit (objects requested X times):")?;
        for x in &s.x_hit {
            write!(f, " {}: {} ({:.4})", x.times, x.objects, x.fraction)?;
        }
        writeln!(f)?;
        write!(f, "requests to the most popular objects:")?;
        for p in &s.most_popular {
            write!(f, " {} ({:.4})", p.requests, p.fraction)?;
        }
        writeln!(f)?;
        self.fmt_more(f)
    }
}

pub use pictures::{MAX_POINTS, PICTURES};

#[cfg(test)]
mod tests {
    use super::*;

    fn run(reqs: &[(u64, u64, u32)], window: u64) -> Analysis {
        let mut a = Analyzer::new(Options {
            window,
            ..Options::default()
        });
        for &(t, id, size) in reqs {
            a.add(&Request::read(id, size).at(t));
        }
        a.finish()
    }

    #[test]
    fn a_window_takes_the_request_that_opens_the_next_and_the_last_is_dropped() {
        // Worked by hand: window 60 from the first request (t = 100).
        let a = run(
            &[
                (100, 1, 10),
                (101, 2, 20),
                (160, 1, 10),
                (161, 3, 30),
                (170, 2, 20),
            ],
            60,
        );
        let s = &a.stats;
        assert_eq!((s.requests, s.objects, s.time_span), (5, 3, 70));
        assert_eq!((s.request_bytes, s.object_bytes), (90, 60));
        // [100, 160) holds 2 requests, and the one at 160 that closed it.
        assert_eq!(a.series.request_rate, vec![3]);
        assert_eq!(a.series.byte_rate, vec![40]);
        // Object 1 at 160 is first seen in window 1, counted in window 0.
        assert_eq!(a.series.object_rate, vec![3]);
        assert_eq!(a.series.first_seen_rate, vec![2]);
        // Reuses: object 1 after 60 s (bin 12) and 2 requests (⌊log1.5 2⌋
        // = 1); object 2 after 69 s (bin 13) and 3 requests (⌊2.71⌋ = 2).
        assert_eq!(a.series.reuse_time_real, vec![(-1, 3), (12, 1), (13, 1)]);
        assert_eq!(a.series.reuse_time_virtual, vec![(-1, 3), (1, 1), (2, 1)]);
        assert_eq!(a.series.popularity, vec![(2, 2), (1, 1)]);
        assert_eq!(s.x_hit[0].objects, 1);
        assert_eq!(s.x_hit[1].objects, 2);
        // Stack distances: object 1 had object 2 above it (2), object 2
        // had 1 and 3 (3).
        assert_eq!(a.series.stack_distance, vec![(2, 1), (3, 1)]);
        assert_eq!(a.series.stack_distance_cold, 3);
        // Too few objects for a fit.
        assert!(s.zipf.is_none());
    }

    #[test]
    fn further_analyses_worked_by_hand() {
        // Window 10 from t = 0. Objects 10 and 20 are sampled (ids divide
        // by 10), 7 is not.
        let mut a = Analyzer::new(Options {
            window: 10,
            ..Options::default()
        });
        let reqs = [
            (0, 10, 100, Op::Read, 0),
            (3, 7, 50, Op::Read, 60),
            (12, 10, 120, Op::Write, 60),
            (15, 20, 10, Op::Read, 0),
            (25, 10, 60, Op::Write, 3600),
            (26, 7, 50, Op::Read, 0),
            (31, 20, 10, Op::Read, 0),
        ];
        for (t, id, size, op, ttl) in reqs {
            let r = match op {
                Op::Read => Request::read(id, size),
                Op::Write => Request::write(id, size),
            };
            a.add(&Request { ttl, ..r.at(t) });
        }
        let a = a.finish();
        let s = &a.series;
        let p = &s.access_pattern.objects;
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].real.clone(), p[0].virtual_.clone()),
            (vec![0, 12, 25], vec![1, 3, 5])
        );
        assert_eq!(
            (p[1].real.clone(), p[1].virtual_.clone()),
            (vec![15, 31], vec![4, 7])
        );
        // Windows [0,10) [10,20) [20,30) are whole; a window closes before
        // the request that passes it is counted. Window 0: objects 10, 7
        // (both new in window 0). Window 1: 10 (of window 0), 20 (new).
        // Window 2: 10 and 7 (of window 0).
        assert_eq!(s.popularity_decay, vec![vec![2], vec![1, 1], vec![2, 0, 0]]);
        // Ages (since last, since first) floored to 10: first requests at
        // (0, 0); 10 at 12 (12, 12) -> (10, 10); 10 at 25 (13, 25) -> (10,
        // 20); 7 at 26 (23, 23) -> (20, 20); 20 at 31 (16, 16) -> (10, 10).
        assert_eq!(
            s.requests_by_age,
            vec![(0, 0, 3), (10, 10, 2), (10, 20, 1), (20, 20, 1)]
        );
        // Lifetimes: 10: 25 s, 4 requests; 7: 23, 4; 20: 16, 3.
        assert_eq!(s.lifetime_real, vec![(10, 1), (20, 2)]);
        assert_eq!(s.lifetime_virtual, vec![(0, 3)]);
        assert_eq!(s.ttl, vec![(60, 2), (3600, 1)]);
        assert_eq!(a.stats.ttl.distinct, 2);
        // Overwrites of 10: 100 -> 120 (+20: bin 5; +0.2: bin 14), 120 ->
        // 60 (-60: bin -6; -0.5: bin -14).
        assert_eq!(s.size_change_absolute, vec![(-6, 1), (5, 1)]);
        assert_eq!(s.size_change_relative, vec![(-14, 1), (14, 1)]);
        let text = a.to_string();
        assert!(
            text.contains("TTL: 3 requests with one, 2 distinct"),
            "{text}"
        );
        assert!(
            text.contains("2 overwrites: 0 kept the size, 1 grew, 1 shrank"),
            "{text}"
        );
        let html = a.html("t.csv", Some("cut at byte 9"));
        assert!(html.contains("Partial") && html.matches("<svg").count() == PICTURES.len());
    }

    #[test]
    fn the_popularity_decay_and_the_access_pattern_are_bounded() {
        let mut a = Analyzer::new(Options {
            window: 1,
            ..Options::default()
        });
        // Sampled object 0 at every time: one row a window up to the bound,
        // then counted as dropped; a jump far ahead costs no loop.
        for t in 0..(decay::MAX_WINDOWS as u64 + 10) {
            a.add(&Request::read(0, 1).at(t));
        }
        a.add(&Request::read(0, 1).at(1 << 50));
        let n = a.requests;
        let r = a.finish();
        assert_eq!(r.series.popularity_decay.len(), decay::MAX_WINDOWS);
        assert_eq!(r.series.popularity_decay[3], vec![1, 0, 0, 0]);
        assert_eq!(
            r.stats.popularity_decay_windows_dropped,
            (1u64 << 50) - decay::MAX_WINDOWS as u64
        );
        assert_eq!(r.series.access_pattern.objects[0].real.len() as u64, n);
        let mut p = pattern::Pattern::new();
        for i in 0..(pattern::MAX_POINTS as u64 + 3) {
            p.add(10, i, i + 1);
        }
        assert_eq!(p.finish().dropped_requests, 3);
    }

    #[test]
    fn a_time_far_past_the_window_costs_no_window_beyond_the_bound() {
        let a = run(
            &[
                (0, 1, 1),
                (1, 2, 1),
                (u32::MAX as u64, 1, 1),
                (1 << 60, 2, 1),
            ],
            1,
        );
        assert_eq!(a.stats.windows, MAX_WINDOWS);
        assert!(a.stats.windows_dropped > 1 << 59);
        // Window 0 takes the requests at 0 and 1; window 1 the one at
        // 2^32 - 1 that closes it (libCacheSim's rule).
        assert_eq!(&a.series.request_rate[..2], &[2, 1]);
        assert_eq!(
            a.series.reuse_time_real_per_window.len() as u64,
            MAX_WINDOWS
        );
        // Between: windows with no request.
        assert_eq!(a.series.request_rate[5], 0);
        // Drawn within bounds (the fuzzer found a 217 MB picture of a
        // window per point).
        assert!(a.svgs("t").iter().all(|s| s.len() < 1 << 20));
    }

    #[test]
    fn the_pictures_of_no_request_and_of_one_are_drawn() {
        for reqs in [&[][..], &[(5, 1, 10)][..]] {
            let svgs = run(reqs, 60).svgs("t");
            assert_eq!(svgs.len(), PICTURES.len());
            assert!(
                svgs.iter()
                    .all(|s| s.starts_with("<svg") && s.len() < 100_000)
            );
        }
    }

    #[test]
    fn integer_log_bins_are_the_logarithms() {
        let b = LogBins::new();
        for x in (0..100_000u64).chain([u32::MAX as u64, 1 << 40, 123_456_789_012]) {
            assert_eq!(b.bin(x), log_bin(x as f64), "{x}");
        }
    }

    #[test]
    fn a_zipf_trace_fits_its_alpha_and_a_uniform_one_does_not_fit() {
        // Frequencies exactly 10^6 / rank^0.8 (rounded) over 1000 objects.
        let freqs: Vec<u32> = (1..=1000)
            .map(|r| (1e6 / (r as f64).powf(0.8)).round() as u32)
            .collect();
        let z = zipf(&freqs).unwrap();
        assert!((z.alpha - 0.8).abs() < 1e-3, "{z:?}");
        assert!(z.r2 > 0.999);
        let flat = vec![7u32; 500];
        assert!(zipf(&flat).is_none_or(|z| z.alpha.abs() < 1e-9));
    }
}
