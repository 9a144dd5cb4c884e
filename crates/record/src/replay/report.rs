//! What a replay finds: each driver run's measurements ([`DriverReport`],
//! as the driver writes them), and the study of one or more allocators
//! side by side ([`Study`]: a table of medians and spreads, the fidelity
//! checks against the trace's own statistics, memory over time as SVG,
//! and mimalloc-bench's result lines).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use tramp_heap::replay::PlanReport;

use super::{Allocator, Plan, ReplayOptions};

/// One replay thread's executed operations, by trace thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverThread {
    pub trace_thread: u64,
    pub mallocs: u64,
    pub frees: u64,
    pub reallocs: u64,
}

/// What one run of the replay driver reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverReport {
    pub mallocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    pub heap_creates: u64,
    pub heap_destroys: u64,
    /// Allocations that returned NULL for a non-zero size.
    pub failed: u64,
    /// Heaps the allocator would not destroy.
    pub heap_failures: u64,
    pub ns_per_malloc: f64,
    pub ns_per_free: f64,
    pub ns_per_realloc: f64,
    pub malloc_p50_ns: f64,
    pub malloc_p99_ns: f64,
    pub free_p50_ns: f64,
    pub free_p99_ns: f64,
    pub realloc_p50_ns: f64,
    pub realloc_p99_ns: f64,
    pub malloc_seconds: f64,
    pub free_seconds: f64,
    pub realloc_seconds: f64,
    /// Wall time from the first operation handed over to the last replay
    /// thread's end.
    pub seconds: f64,
    /// Time inside the allocator's calls, all threads (TSC-timed).
    pub alloc_seconds: f64,
    /// The decoder's own time (reading and decoding the plan, handing
    /// operations over), not counting its waits for full queues.
    pub decode_seconds: f64,
    /// Time replay threads waited for the decoder (their queues empty).
    pub starved_seconds: f64,
    /// Operations that waited for another thread's operation on their
    /// object, those that slept, the time, and waits given up.
    pub waits: u64,
    pub wait_sleeps: u64,
    pub wait_seconds: f64,
    pub waits_timed_out: u64,
    pub user_seconds: f64,
    pub system_seconds: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// The driver's peak RSS (VmHWM, which starts afresh at exec) before
    /// the first operation, and at the end.
    pub rss_before_kib: i64,
    pub peak_rss_kib: i64,
    /// The driver's own slot tables, not the allocator's memory.
    pub slots_kib: i64,
    pub slots: u64,
    /// Requested bytes live at most, in plan order (recomputed by the
    /// driver from the operations it handed over), and as sampled while
    /// the threads ran.
    pub peak_live_bytes: u64,
    pub sampled_peak_live_bytes: i64,
    /// The file of the loaded object the driver's `malloc` resolved to.
    pub malloc_from: String,
    pub version: String,
    /// How trace heaps other than heap 0 were replayed.
    pub heaps: String,
    pub serial: bool,
    pub aborted: bool,
    pub threads: Vec<DriverThread>,
    /// Seconds, operations done, RSS KiB, live requested bytes.
    pub samples: Vec<(f64, u64, i64, i64)>,
}

impl DriverReport {
    /// What the allocator added to the driver's peak RSS: the peak at the
    /// end less the peak before the first operation and the driver's own
    /// slot tables.
    pub fn footprint_kib(&self) -> i64 {
        (self.peak_rss_kib - self.rss_before_kib - self.slots_kib).max(0)
    }

    pub fn operations(&self) -> u64 {
        self.mallocs + self.frees + self.reallocs
    }
}

/// One allocator's runs.
#[derive(Clone, Debug, Serialize)]
pub struct AllocatorRuns {
    pub name: String,
    pub path: Option<std::path::PathBuf>,
    pub runs: Vec<DriverReport>,
}

impl AllocatorRuns {
    pub fn new(a: &Allocator) -> AllocatorRuns {
        AllocatorRuns {
            name: a.name.clone(),
            path: a.path.clone(),
            runs: Vec::new(),
        }
    }
}

/// The middle of some values, and their least and greatest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(mut v: Vec<f64>) -> Spread {
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// One allocator's row of the table: medians and spreads over its runs.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub name: String,
    pub path: String,
    pub malloc_from: String,
    pub version: String,
    pub heaps: String,
    pub runs: usize,
    pub alloc_seconds: Spread,
    pub wall_seconds: Spread,
    pub malloc_p50_ns: f64,
    pub malloc_p99_ns: f64,
    pub free_p50_ns: f64,
    pub free_p99_ns: f64,
    pub realloc_p50_ns: f64,
    pub realloc_p99_ns: f64,
    pub peak_rss_kib: Spread,
    pub footprint_kib: Spread,
    /// The footprint over the trace's peak live bytes.
    pub footprint_over_live: f64,
    pub decode_seconds: f64,
    pub starved_seconds: f64,
    pub waits: u64,
    pub wait_sleeps: u64,
}

impl Summary {
    fn of(a: &AllocatorRuns, max_live: u64) -> Summary {
        let med =
            |f: &dyn Fn(&DriverReport) -> f64| Spread::of(a.runs.iter().map(f).collect()).median;
        let sp = |f: &dyn Fn(&DriverReport) -> f64| Spread::of(a.runs.iter().map(f).collect());
        let first = a.runs.first().cloned().unwrap_or_default();
        let footprint = sp(&|r| r.footprint_kib() as f64);
        Summary {
            name: a.name.clone(),
            path: a
                .path
                .as_ref()
                .map_or_else(|| first.malloc_from.clone(), |p| p.display().to_string()),
            malloc_from: first.malloc_from.clone(),
            version: first.version.clone(),
            heaps: first.heaps.clone(),
            runs: a.runs.len(),
            alloc_seconds: sp(&|r| r.alloc_seconds),
            wall_seconds: sp(&|r| r.seconds),
            malloc_p50_ns: med(&|r| r.malloc_p50_ns),
            malloc_p99_ns: med(&|r| r.malloc_p99_ns),
            free_p50_ns: med(&|r| r.free_p50_ns),
            free_p99_ns: med(&|r| r.free_p99_ns),
            realloc_p50_ns: med(&|r| r.realloc_p50_ns),
            realloc_p99_ns: med(&|r| r.realloc_p99_ns),
            peak_rss_kib: sp(&|r| r.peak_rss_kib as f64),
            footprint_kib: footprint,
            footprint_over_live: if max_live > 0 {
                footprint.median * 1024.0 / max_live as f64
            } else {
                0.0
            },
            decode_seconds: med(&|r| r.decode_seconds),
            starved_seconds: med(&|r| r.starved_seconds),
            waits: a.runs.iter().map(|r| r.waits).max().unwrap_or(0),
            wait_sleeps: a.runs.iter().map(|r| r.wait_sleeps).max().unwrap_or(0),
        }
    }
}

/// One fidelity check: a quantity as the trace has it and as replayed.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub what: String,
    pub trace: u64,
    pub replay: u64,
    pub ok: bool,
    /// Why they may differ, when they do.
    pub note: String,
}

/// The replay's counts against the trace's (`tramp stats`).
#[derive(Clone, Debug, Serialize)]
pub struct Fidelity {
    pub ok: bool,
    pub checks: Vec<Check>,
    /// Why the `replayed` line's counts differ from the `trace` line's
    /// although every check holds (each with its number).
    pub explained: Vec<String>,
}

impl Fidelity {
    fn of(plan: &PlanReport, trace: &tramp_heap::Report, runs: &[AllocatorRuns]) -> Fidelity {
        let mut checks = Vec::new();
        let mut checks_peak = Vec::new();
        if plan.frees_reordered > 0 {
            checks.push(Check {
                what: format!(
                    "frees the recording put before another thread's allocation (up to {} µs before), replayed after it",
                    plan.largest_reordered_gap_ns / 1000
                ),
                trace: plan.frees_reordered,
                replay: plan.frees_reordered,
                ok: true,
                note: String::new(),
            });
        }
        let mut check = |what: String, t: u64, r: u64, note: &str| {
            checks.push(Check {
                ok: t == r,
                what,
                trace: t,
                replay: r,
                note: if t == r { String::new() } else { note.into() },
            })
        };
        let skipped = format!(
            "{} frees of addresses not live were not replayed; {} came before their allocation on another thread",
            plan.unknown_frees, plan.frees_before_alloc
        );
        for a in runs {
            for (i, d) in a.runs.iter().enumerate() {
                let who = format!("{} run {}", a.name, i + 1);
                check(
                    format!("malloc calls ({who})"),
                    trace.malloc_calls,
                    d.mallocs,
                    "",
                );
                check(
                    format!("realloc calls ({who}; realloc(p, 0) replayed as free)"),
                    trace.realloc_calls,
                    d.reallocs + plan.realloc_frees + plan.unknown_realloc_frees,
                    "",
                );
                check(
                    format!("free calls ({who})"),
                    trace.free_calls,
                    d.frees - plan.realloc_frees - plan.heap_destroy_frees + plan.unknown_frees,
                    &skipped,
                );
                // Where the trace's order was repaired or frees skipped,
                // the trace's own statistics and the plan count different
                // objects live (the statistics keep an object whose free
                // came first live to the end); and with several threads
                // the moment a moved realloc holds both blocks depends on
                // the other threads' records between its own: shown, not
                // failed.
                let comparable =
                    plan.frees_reordered == 0 && plan.unknown_frees == 0 && plan.threads.len() <= 1;
                checks_peak.push(Check {
                    what: format!("peak live bytes ({who}, in trace order)"),
                    trace: trace.max_live_bytes,
                    replay: d.peak_live_bytes,
                    ok: !comparable || trace.max_live_bytes == d.peak_live_bytes,
                    note: if comparable {
                        String::new()
                    } else if plan.threads.len() > 1 {
                        "several threads: other threads' records between a realloc's own move the moment both blocks count; shown, not checked".into()
                    } else {
                        skipped.clone()
                    },
                });
                check(format!("allocations that failed ({who})"), 0, d.failed, "");
                for (p, t) in plan.threads.iter().zip(&d.threads) {
                    check(
                        format!("thread {} operations ({who})", p.trace_thread),
                        p.mallocs + p.frees + p.reallocs,
                        t.mallocs + t.frees + t.reallocs,
                        "",
                    );
                }
            }
        }
        check(
            "frees before their allocation on another thread".into(),
            0,
            plan.frees_before_alloc,
            &match &plan.first_free_before_alloc {
                Some(f) => format!(
                    "the first: thread {} freed {:#x} before thread {} allocated it; the free was not replayed and the object stays live",
                    f.freed_by, f.address, f.allocated_by
                ),
                None => String::new(),
            },
        );
        checks.extend(checks_peak);
        let mut explained = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                explained.push(format!("{n} {what}"));
            }
        };
        say(
            plan.realloc_frees,
            "realloc(p, 0) calls replayed as frees (the trace counts them as reallocs; \
             glibc's realloc(p, 0) frees p, and C leaves it to the allocator)",
        );
        say(
            plan.unknown_realloc_frees,
            "realloc(p, 0) calls of addresses not live, not replayed",
        );
        say(
            plan.heap_destroy_frees,
            "objects a destroyed heap still held, replayed as frees",
        );
        say(
            plan.unknown_frees,
            "frees of addresses not live, not replayed",
        );
        Fidelity {
            ok: checks.iter().all(|c| c.ok),
            checks,
            explained,
        }
    }
}

/// Allocators side by side on one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Study {
    pub trace: TraceSide,
    pub plan: PlanReport,
    /// Seconds spent reading the trace and writing the plan (once).
    pub plan_seconds: f64,
    pub serial: bool,
    pub repetitions: usize,
    pub touch: bool,
    /// Allocator tuning variables the driver ran with.
    pub environment: BTreeMap<String, String>,
    pub allocators: Vec<Summary>,
    pub fidelity: Fidelity,
    pub runs: Vec<AllocatorRuns>,
}

/// The trace's own figures, from its statistics.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSide {
    pub malloc_calls: u64,
    pub free_calls: u64,
    pub realloc_calls: u64,
    pub max_live_bytes: u64,
    pub max_live_objects: u64,
    pub threads: u64,
}

impl Study {
    pub fn new(
        plan: Plan,
        runs: Vec<AllocatorRuns>,
        opts: &ReplayOptions,
        env: Vec<(String, String)>,
    ) -> Study {
        let t = &plan.trace;
        let fidelity = Fidelity::of(&plan.plan, t, &runs);
        Study {
            trace: TraceSide {
                malloc_calls: t.malloc_calls,
                free_calls: t.free_calls,
                realloc_calls: t.realloc_calls,
                max_live_bytes: t.max_live_bytes,
                max_live_objects: t.max_live_objects,
                threads: t.per_thread.len() as u64,
            },
            allocators: runs
                .iter()
                .map(|a| Summary::of(a, t.max_live_bytes))
                .collect(),
            plan: plan.plan,
            plan_seconds: plan.seconds,
            serial: opts.serial,
            repetitions: opts.repeat.max(1),
            touch: !opts.no_touch,
            environment: env.into_iter().collect(),
            fidelity,
            runs,
        }
    }

    /// Memory over the replay: per allocator, its RSS against operations
    /// done (the run with the median wall time), and the requested bytes
    /// live, in MiB.
    pub fn svg(&self, title: &str) -> String {
        let mib = |kib: f64| kib / 1024.0;
        let mut curves = Vec::new();
        let mut top: f64 = 0.0;
        let mut live_curve = None;
        for a in &self.runs {
            let mut by_wall: Vec<&DriverReport> = a.runs.iter().collect();
            by_wall.sort_by(|x, y| x.seconds.total_cmp(&y.seconds));
            let Some(r) = by_wall.get(by_wall.len() / 2) else {
                continue;
            };
            let pts: Vec<(f64, f64)> = r
                .samples
                .iter()
                .map(|s| (s.1 as f64 / 1e6, mib(s.2 as f64)))
                .collect();
            top = pts.iter().fold(top, |t, p| t.max(p.1));
            curves.push((format!("{} RSS", a.name), pts));
            if live_curve.is_none() {
                let live: Vec<(f64, f64)> = r
                    .samples
                    .iter()
                    .map(|s| (s.1 as f64 / 1e6, mib(s.3.max(0) as f64 / 1024.0)))
                    .collect();
                live_curve = Some(live);
            }
        }
        if let Some(l) = live_curve {
            top = l.iter().fold(top, |t, p| t.max(p.1));
            curves.push(("live bytes requested".into(), l));
        }
        let ops = self
            .runs
            .iter()
            .flat_map(|a| a.runs.first())
            .map(|r| r.operations())
            .max()
            .unwrap_or(1) as f64
            / 1e6;
        let axis = tramp_plot::Axis {
            lo: 0.0,
            hi: ops.max(1e-6),
            log: false,
        };
        tramp_plot::lines_svg_to(
            title,
            "operations replayed (millions)",
            "MiB",
            axis,
            (top * 1.05).max(1.0),
            &curves,
        )
    }

    /// mimalloc-bench's result lines (`/usr/bin/time -f "%E %M %U %S %F
    /// %R"` after the test and allocator names), one per run, so replays
    /// sit beside its synthetic benchmarks in the same tables.
    pub fn bench_lines(&self, test: &str) -> String {
        let width = self.runs.iter().map(|a| a.name.len()).max().unwrap_or(0);
        let mut s = String::new();
        for a in &self.runs {
            for r in &a.runs {
                let m = (r.seconds / 60.0).floor();
                let secs = r.seconds - m * 60.0;
                s += &format!(
                    "{test} {:<width$} {}:{:05.2} {} {:.2} {:.2} {} {}\n",
                    a.name,
                    m as u64,
                    secs,
                    r.peak_rss_kib,
                    r.user_seconds,
                    r.system_seconds,
                    r.major_faults,
                    r.minor_faults
                );
            }
        }
        s
    }
}

/// A latency with its unit: `30 ns`, `4.9 µs` (each value its own, so
/// that `p50/p99` never reads `30/4.9µ ns`).
fn ns(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.1} µs", v / 1000.0)
    } else {
        format!("{v:.0} ns")
    }
}

impl fmt::Display for Study {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.trace;
        let p = &self.plan;
        writeln!(
            f,
            "trace        {} malloc, {} free, {} realloc calls on {} threads; at most {} objects, {} bytes live",
            t.malloc_calls,
            t.free_calls,
            t.realloc_calls,
            p.threads.len(),
            t.max_live_objects,
            t.max_live_bytes
        )?;
        writeln!(
            f,
            "replayed     {} malloc, {} free, {} realloc; {} {} ({} unknown frees skipped); plan made in {:.2} s",
            p.mallocs,
            p.frees,
            p.reallocs,
            if self.serial {
                "serially, on one thread"
            } else {
                "each thread on its own"
            },
            if self.touch {
                "touching every page"
            } else {
                "not touching memory"
            },
            p.unknown_frees,
            self.plan_seconds
        )?;
        if p.heaps > 1 {
            let how = self
                .allocators
                .iter()
                .map(|a| format!("{}: {}", a.name, a.heaps));
            writeln!(
                f,
                "heaps        {} besides heap 0; {}",
                p.heaps - 1,
                how.collect::<Vec<_>>().join("; ")
            )?;
        }
        let env = if self.environment.is_empty() {
            "none set".to_string()
        } else {
            self.environment
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        writeln!(
            f,
            "runs         {} per allocator, alternated; allocator environment: {env}",
            self.repetitions
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "{:<12} {:>22} {:>8} {:>17} {:>17} {:>17} {:>9} {:>9}",
            "allocator",
            "in calls s (min-max)",
            "wall s",
            "malloc p50/p99",
            "free p50/p99",
            "realloc p50/99",
            "peak MiB",
            "fp/live"
        )?;
        for a in &self.allocators {
            writeln!(
                f,
                "{:<12} {:>22} {:>8.3} {:>17} {:>17} {:>17} {:>9.1} {:>9.2}",
                a.name,
                format!(
                    "{:.3} ({:.3}-{:.3})",
                    a.alloc_seconds.median, a.alloc_seconds.min, a.alloc_seconds.max
                ),
                a.wall_seconds.median,
                format!("{}/{}", ns(a.malloc_p50_ns), ns(a.malloc_p99_ns)),
                format!("{}/{}", ns(a.free_p50_ns), ns(a.free_p99_ns)),
                format!("{}/{}", ns(a.realloc_p50_ns), ns(a.realloc_p99_ns)),
                a.peak_rss_kib.median / 1024.0,
                a.footprint_over_live
            )?;
        }
        writeln!(f)?;
        for a in &self.allocators {
            writeln!(
                f,
                "{:<12} {} ({}); malloc from {}; decoding {:.3} s, waited for it {:.3} s; {} waits for other threads ({} slept)",
                a.name,
                a.path,
                a.version,
                a.malloc_from,
                a.decode_seconds,
                a.starved_seconds,
                a.waits,
                a.wait_sleeps
            )?;
        }
        writeln!(f)?;
        // The headline follows the numbers: equal only when nothing below
        // differs, and every difference says why.
        let fid = &self.fidelity;
        let shown = fid.checks.iter().any(|c| !c.ok || c.trace != c.replay);
        writeln!(
            f,
            "fidelity     {}",
            if !fid.ok {
                "DIFFERS from the trace:"
            } else if shown || !fid.explained.is_empty() {
                "the replay's counts equal the trace's once these are counted:"
            } else {
                "the replay's counts equal the trace's"
            }
        )?;
        for e in &fid.explained {
            writeln!(f, "  {e}")?;
        }
        // Failed checks, and differences that are explained (shown, not
        // failed).
        for c in self
            .fidelity
            .checks
            .iter()
            .filter(|c| !c.ok || c.trace != c.replay)
        {
            writeln!(
                f,
                "  {}{}: trace {}, replay {}{}",
                if c.ok { "(explained) " } else { "" },
                c.what,
                c.trace,
                c.replay,
                if c.note.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", c.note)
                }
            )?;
        }
        Ok(())
    }
}
