//! The analysis drawn: a picture of each series, in the style of
//! libCacheSim's `scripts/traceAnalysis` plots, titled with the trace's
//! name, axes labelled, legends beside.

use tramp_plot::cells::{Range, heatmap_svg, points_svg};

use crate::{Analysis, LOG_BASE, REUSE_GRANULARITY};

/// The pictures [`Analysis::svgs`] draws, by file stem, in its order.
pub const PICTURES: [&str; 11] = [
    "rates",
    "popularity",
    "reuse",
    "size",
    "stack_distance",
    "access_pattern",
    "popularity_decay",
    "age",
    "lifetime",
    "ttl",
    "size_change",
];

/// Dots the access pattern's picture draws at most.
pub const MAX_DOTS: usize = 20_000;

/// A cumulative fraction of (value, count) pairs sorted by value.
/// The cumulative fraction of (value, count) pairs on a logarithmic axis:
/// values below 1 drawn at 1.
fn log_cdf<T: Copy>(pairs: &[(T, u64)], value: fn(T) -> f64) -> Vec<(f64, f64)> {
    cdf(pairs.iter().map(|&(x, n)| (value(x).max(1.0), n)))
}

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

/// At most [`MAX_POINTS`] of a curve's points, evenly taken, its last
/// kept: a picture's size is bounded whatever the series' length.
fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let step = points.len().div_ceil(MAX_POINTS);
    let last = points[points.len() - 1];
    let mut out: Vec<(f64, f64)> = points.into_iter().step_by(step).collect();
    if out.last() != Some(&last) {
        out.push(last);
    }
    out
}

/// Points a picture's curve has at most.
pub const MAX_POINTS: usize = 2000;

/// A logarithmic axis' range over the points' x (at least a decade, from
/// 1 up; 1 to 10 for no points).
fn span_of(points: &[(f64, f64)]) -> (f64, f64) {
    let xs = points.iter().map(|p| p.0).filter(|x| x.is_finite());
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(0.0, f64::max);
    let lo = if lo.is_finite() { lo.max(1.0) } else { 1.0 };
    (lo, hi.max(lo * 10.0))
}

/// Cumulative distributions on one logarithmic x axis spanning them all.
fn log_cdfs(title: &str, x: &str, y: &str, curves: [(&str, Vec<(f64, f64)>); 2]) -> String {
    let all: Vec<(f64, f64)> = curves.iter().flat_map(|c| c.1.iter().copied()).collect();
    let (lo, hi) = span_of(&all);
    let curves: Vec<(String, Vec<(f64, f64)>)> = curves
        .into_iter()
        .map(|(n, p)| (n.to_string(), p))
        .collect();
    tramp_plot::lines_svg(title, x, y, tramp_plot::Axis { lo, hi, log: true }, &curves)
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
            thin(
                v.iter()
                    .enumerate()
                    .map(|(i, &n)| (i as f64 * w, n as f64 / w))
                    .collect(),
            )
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
        let (lo, hi) = span_of(&by_rank);
        let top = s.popularity.first().map_or(1.0, |p| p.0 as f64);
        let popularity = lines_svg_to(
            &format!("Popularity of {name}"),
            "rank (objects, most requested first)",
            "requests",
            Axis { lo, hi, log: true },
            top,
            &[("requests to the object at rank".to_string(), thin(by_rank))],
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
        let reuse = log_cdfs(
            &format!("Reuse time of {name}"),
            "time since the object's last request (time units; requests)",
            "fraction of reuses",
            [("real time", real), ("virtual time (requests)", virt)],
        );
        let by_req = log_cdf(&s.size_by_requests, f64::from);
        let by_obj = log_cdf(&s.size_by_objects, f64::from);
        let size = log_cdfs(
            &format!("Object sizes of {name}"),
            "size (bytes)",
            "fraction",
            [("by requests", by_req), ("by objects", by_obj)],
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
        let (lo, hi) = span_of(&curve);
        let stack = lines_svg(
            &format!("LRU miss ratio from the stack distances of {name}"),
            "cache size (objects)",
            "miss ratio",
            Axis { lo, hi, log: true },
            &[("LRU".to_string(), thin(curve))],
        );
        let mut all = vec![rates, popularity, reuse, size, stack];
        all.extend(self.more_svgs(name));
        all
    }

    /// The pictures of the access pattern, the popularity decay, the ages,
    /// the lifetimes, the TTLs and the size changes.
    fn more_svgs(&self, name: &str) -> Vec<String> {
        let s = &self.series;
        let w = self.stats.window as f64;
        // Access pattern: whole objects, every k-th, up to MAX_DOTS dots.
        let objs = &s.access_pattern.objects;
        let total: usize = objs.iter().map(|o| o.real.len()).sum();
        let stride = total.div_ceil(MAX_DOTS).max(1);
        let mut dots = Vec::new();
        for (i, o) in objs.iter().enumerate().step_by(stride) {
            if dots.len() + o.real.len() > MAX_DOTS {
                break;
            }
            dots.extend(o.real.iter().map(|&t| (t as f64, i as f64)));
        }
        let span = self.stats.time_span as f64;
        let access = points_svg(
            &format!("Access pattern of {name}"),
            "time since the first request",
            "sampled object (by first request)",
            (
                Range { lo: 0.0, hi: span },
                Range {
                    lo: 0.0,
                    hi: objs.len() as f64,
                },
            ),
            &format!("a request (1 object in {})", s.access_pattern.sample),
            &dots,
        );
        let decay_rows: Vec<Vec<f64>> = s
            .popularity_decay
            .iter()
            .map(|r| r.iter().map(|&n| n as f64).collect())
            .collect();
        let decay = heatmap_svg(
            &format!("Popularity decay of {name}, window {w}"),
            "window of the object's first request (time)",
            "window requested in (time)",
            (0.0, w),
            (0.0, w),
            "objects",
            &decay_rows,
        );
        let age = self.age_svg(name);
        let lt_real = log_cdf(&s.lifetime_real, |l| l as f64);
        let lt_virt = log_cdf(&s.lifetime_virtual, |l| l as f64);
        let lifetime = log_cdfs(
            &format!("Object lifetimes of {name}"),
            "first to last request (time units; requests)",
            "fraction of objects",
            [("real time", lt_real), ("virtual time (requests)", lt_virt)],
        );
        let ttl_title = if s.ttl.is_empty() {
            format!("TTLs of {name} (no request has one)")
        } else {
            format!("TTLs of {name}")
        };
        let ttls = cdf(s.ttl.iter().map(|&(t, n)| (t as f64, n)));
        let (lo, hi) = span_of(&ttls);
        let ttl = tramp_plot::lines_svg(
            &ttl_title,
            "TTL (time units)",
            "fraction of requests with a TTL",
            tramp_plot::Axis { lo, hi, log: true },
            &[("requests".to_string(), thin(ttls))],
        );
        let frac = |v: &[(i32, u64)]| -> Vec<(f64, f64)> {
            let n: u64 = v.iter().map(|p| p.1).sum::<u64>().max(1);
            v.iter()
                .map(|&(b, c)| (b as f64, c as f64 / n as f64))
                .collect()
        };
        let change_title = if s.size_change_absolute.is_empty() {
            format!("Size changes of {name} (no overwrite)")
        } else {
            format!("Size changes of {name}")
        };
        let change = tramp_plot::lines_svg(
            &change_title,
            "signed bin of the change (docs/analyze.md: ±k is 2^(k-1) to 2^k - 1 bytes)",
            "fraction of overwrites",
            tramp_plot::Axis {
                lo: -16.0,
                hi: 16.0,
                log: false,
            },
            &[
                ("absolute".to_string(), frac(&s.size_change_absolute)),
                ("relative".to_string(), frac(&s.size_change_relative)),
            ],
        );
        vec![access, decay, age, lifetime, ttl, change]
    }

    /// Requests by age as a heat map, summed into at most 200 cells a side.
    fn age_svg(&self, name: &str) -> String {
        let w = self.stats.window.max(1);
        let cells = &self.series.requests_by_age;
        let a_max = cells
            .iter()
            .map(|c| c.0.max(0) as u64 / w)
            .max()
            .unwrap_or(0);
        let c_max = cells.iter().map(|c| c.1 / w).max().unwrap_or(0);
        let side = tramp_plot::cells::MAX_CELLS as u64;
        let (bx, by) = ((a_max + 1).div_ceil(side), (c_max + 1).div_ceil(side));
        let mut rows = vec![vec![0.0; (a_max / bx + 1) as usize]; (c_max / by + 1) as usize];
        for &(a, c, n) in cells {
            rows[(c / w / by) as usize][(a.max(0) as u64 / w / bx) as usize] += n as f64;
        }
        heatmap_svg(
            &format!("Requests by age of {name}, window {w}"),
            "time since the object's last request",
            "time since the object's first request",
            (0.0, (w * bx) as f64),
            (0.0, (w * by) as f64),
            "requests",
            &rows,
        )
    }
}
