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
//!   distances, kept apart from reuse time).
//!
//! Where libCacheSim's definitions are odd, they are matched and said so
//! in docs/analyze.md (a window's counts take the request that opens the
//! next window; the last, partial window is not in the series).

use std::fmt;

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_cachesim::mrc::StackDistances;
use tramp_cachesim::{Op, Request, Unit};

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
/// Virtual reuse times and sizes per window are binned by powers of this.
pub const LOG_BASE: f64 = 1.5;

#[derive(Clone, Copy)]
struct Obj {
    freq: u32,
    size: u32,
    last_time: u64,
    last_vtime: u64,
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
    reuse_rt: FxHashMap<i64, u64>,
    reuse_vt: FxHashMap<i64, u64>,
    window_reuse_rt: Vec<u64>,
    window_reuse_vt: Vec<u64>,
    reuse_rt_windows: Vec<Vec<u64>>,
    reuse_vt_windows: Vec<Vec<u64>>,
    size_req: FxHashMap<u32, u64>,
    size_obj: FxHashMap<u32, u64>,
    window_size_req: Vec<u64>,
    window_size_obj: Vec<u64>,
    size_req_windows: Vec<Vec<u64>>,
    size_obj_windows: Vec<Vec<u64>>,
    stack: StackDistances,
    out_of_order: u64,
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
            reuse_rt: FxHashMap::default(),
            reuse_vt: FxHashMap::default(),
            window_reuse_rt: Vec::new(),
            window_reuse_vt: Vec::new(),
            reuse_rt_windows: Vec::new(),
            reuse_vt_windows: Vec::new(),
            size_req: FxHashMap::default(),
            size_obj: FxHashMap::default(),
            window_size_req: Vec::new(),
            window_size_obj: Vec::new(),
            size_req_windows: Vec::new(),
            size_obj_windows: Vec::new(),
            stack: StackDistances::new(Unit::Objects),
            out_of_order: 0,
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
        while t >= self.next_window {
            self.window_idx += 1;
            self.next_window += w;
        }
        self.requests += 1;
        self.req_bytes += req.size as u64;
        match req.op {
            Op::Read => self.reads += 1,
            Op::Write => self.writes += 1,
        }
        let (vt, n) = (self.requests, self.window_idx);
        let mut reuse = None;
        let first_in_window;
        let compulsory;
        match self.objs.get_mut(&req.id) {
            None => {
                compulsory = true;
                first_in_window = true;
                self.obj_bytes += req.size as u64;
                self.objs.insert(
                    req.id,
                    Obj {
                        freq: 1,
                        size: req.size,
                        last_time: t,
                        last_vtime: vt,
                    },
                );
            }
            Some(o) => {
                compulsory = false;
                first_in_window = o.last_time / w != n;
                if req.op == Op::Write {
                    self.overwrites += 1;
                }
                reuse = Some((t - o.last_time, vt - o.last_vtime));
                o.size = req.size;
                o.freq += 1;
                o.last_time = t;
                o.last_vtime = vt;
            }
        }
        // The rates (counted, then the windows the request passed flushed).
        self.window.requests += 1;
        self.window.bytes += req.size as u64;
        self.window.objects += first_in_window as u64;
        self.window.first_seen += compulsory as u64;
        // Sizes.
        *self.size_req.entry(req.size).or_insert(0) += 1;
        if compulsory {
            *self.size_obj.entry(req.size).or_insert(0) += 1;
        }
        let pos = log_bin(req.size as f64);
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
                *self.reuse_rt.entry(-1).or_insert(0) += 1;
                *self.reuse_vt.entry(-1).or_insert(0) += 1;
            }
            Some((rt, vt)) => {
                let (prt, pvt) = ((rt / REUSE_GRANULARITY) as usize, log_bin(vt as f64));
                *self.reuse_rt.entry(prt as i64).or_insert(0) += 1;
                *self.reuse_vt.entry(pvt as i64).or_insert(0) += 1;
                bump(&mut self.window_reuse_rt, prt);
                bump(&mut self.window_reuse_vt, pvt);
                while t >= self.reuse_flush_at {
                    self.reuse_rt_windows
                        .push(std::mem::take(&mut self.window_reuse_rt));
                    self.reuse_vt_windows
                        .push(std::mem::take(&mut self.window_reuse_vt));
                    self.reuse_flush_at += w;
                }
            }
        }
        self.stack.access(req);
        while t >= self.flush_at {
            self.flush();
            self.flush_at += w;
        }
    }

    /// Ends a window of every per-window series.
    fn flush(&mut self) {
        self.windows.push(std::mem::take(&mut self.window));
        self.size_req_windows
            .push(std::mem::take(&mut self.window_size_req));
        self.size_obj_windows
            .push(std::mem::take(&mut self.window_size_obj));
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
        };
        let sorted = |m: FxHashMap<i64, u64>| {
            let mut v: Vec<(i64, u64)> = m.into_iter().collect();
            v.sort_unstable();
            v
        };
        let sizes = |m: FxHashMap<u32, u64>| {
            let mut v: Vec<(u32, u64)> = m.into_iter().collect();
            v.sort_unstable();
            v
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
    pub request_rate: Option<MinMax>,
    pub object_rate: Option<MinMax>,
    pub zipf: Option<Zipf>,
    pub x_hit: Vec<XHit>,
    pub most_popular: Vec<Popular>,
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
        writeln!(f)
    }
}

/// The pictures [`Analysis::svgs`] draws, by file stem, in its order.
pub const PICTURES: [&str; 5] = ["rates", "popularity", "reuse", "size", "stack_distance"];

/// A cumulative fraction of (value, count) pairs sorted by value.
fn cdf(points: impl Iterator<Item = (f64, u64)>) -> Vec<(f64, f64)> {
    let v: Vec<(f64, u64)> = points.collect();
    let total: u64 = v.iter().map(|p| p.1).sum();
    let mut acc = 0u64;
    v.into_iter()
        .map(|(x, n)| {
            acc += n;
            (
                x,
                if total == 0 {
                    0.0
                } else {
                    acc as f64 / total as f64
                },
            )
        })
        .collect()
}

fn span(points: &[(f64, f64)]) -> (f64, f64) {
    let lo = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.0).fold(0.0, f64::max);
    (lo.max(1.0), hi.max(lo.max(1.0) * 10.0))
}

impl Analysis {
    /// Each series drawn (titled by `name`), in [`PICTURES`]' order:
    /// request and object rates over time, frequency by rank, the reuse
    /// time's cumulative distribution (real time; virtual time in
    /// requests), object sizes' (by requests and by objects), and the
    /// LRU miss ratio the stack distances give at each cache size.
    pub fn svgs(&self, name: &str) -> Vec<String> {
        use tramp_plot::{Axis, lines_svg, lines_svg_to};
        let s = &self.series;
        let w = self.stats.window as f64;
        let per_s = |v: &[u64]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, &n)| (i as f64 * w, n as f64 / w))
                .collect()
        };
        let rates = [
            ("requests/s".to_string(), per_s(&s.request_rate)),
            (
                "objects/s (first in window)".to_string(),
                per_s(&s.object_rate),
            ),
            ("new objects/s".to_string(), per_s(&s.first_seen_rate)),
        ];
        let top = rates
            .iter()
            .flat_map(|c| c.1.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        let hi = (s.request_rate.len() as f64 * w).max(w);
        let rates = lines_svg_to(
            &format!("Request rate of {name}, window {w}"),
            "time since the first request",
            "per second",
            Axis {
                lo: 0.0,
                hi,
                log: false,
            },
            top * 1.05,
            &rates,
        );
        let mut rank = 0u64;
        let by_rank: Vec<(f64, f64)> = s
            .popularity
            .iter()
            .map(|&(f, n)| {
                rank += n;
                (rank as f64, f as f64)
            })
            .collect();
        let (lo, hi) = span(&by_rank);
        let top = s.popularity.first().map_or(1.0, |p| p.0 as f64);
        let popularity = lines_svg_to(
            &format!("Popularity of {name}"),
            "rank (objects, most requested first)",
            "requests",
            Axis { lo, hi, log: true },
            top,
            &[("requests to the object at rank".to_string(), by_rank)],
        );
        let real = cdf(s
            .reuse_time_real
            .iter()
            .filter(|p| p.0 >= 0)
            .map(|&(b, n)| ((b as u64 * REUSE_GRANULARITY).max(1) as f64, n)));
        let virt = cdf(s
            .reuse_time_virtual
            .iter()
            .filter(|p| p.0 >= 0)
            .map(|&(b, n)| (LOG_BASE.powi(b as i32).max(1.0), n)));
        let (lo, hi) = span(&[real.clone(), virt.clone()].concat());
        let reuse = lines_svg(
            &format!("Reuse time of {name}"),
            "time since the object's last request (time units; requests)",
            "fraction of reuses",
            Axis { lo, hi, log: true },
            &[
                ("real time".to_string(), real),
                ("virtual time (requests)".to_string(), virt),
            ],
        );
        let by_req = cdf(s
            .size_by_requests
            .iter()
            .map(|&(z, n)| ((z as f64).max(1.0), n)));
        let by_obj = cdf(s
            .size_by_objects
            .iter()
            .map(|&(z, n)| ((z as f64).max(1.0), n)));
        let (lo, hi) = span(&[by_req.clone(), by_obj.clone()].concat());
        let size = lines_svg(
            &format!("Object sizes of {name}"),
            "size (bytes)",
            "fraction",
            Axis { lo, hi, log: true },
            &[
                ("by requests".to_string(), by_req),
                ("by objects".to_string(), by_obj),
            ],
        );
        // Misses at size c: the first requests and every distance above c.
        let total = self.stats.requests.max(1) as f64;
        let mut above: u64 = s.stack_distance.iter().map(|p| p.1).sum();
        let mut curve = Vec::new();
        for &(d, n) in &s.stack_distance {
            curve.push((d as f64, (above + s.stack_distance_cold) as f64 / total));
            above -= n;
            curve.push((d as f64, (above + s.stack_distance_cold) as f64 / total));
        }
        let (lo, hi) = span(&curve);
        let stack = lines_svg(
            &format!("LRU miss ratio from the stack distances of {name}"),
            "cache size (objects)",
            "miss ratio",
            Axis { lo, hi, log: true },
            &[("LRU".to_string(), curve)],
        );
        vec![rates, popularity, reuse, size, stack]
    }
}
