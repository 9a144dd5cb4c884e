//! The driver's report: one JSON object on stdout, written by hand (the
//! driver has no dependencies). `tramp` reads it into
//! `tramp_record::replay::DriverReport`.

use core::ffi::c_int;
use std::fmt::Write;

use crate::plan_format::Header;
use crate::sampler::Sample;
use crate::worker::{self, BUCKETS};

unsafe extern "C" {
    fn getrusage(who: c_int, usage: *mut [i64; 18]) -> c_int;
}

/// `struct rusage` of this process as 18 words: user time (2), system
/// time (2), max RSS, three unused, minor faults, major faults, ...
fn rusage() -> [i64; 18] {
    let mut u = [0i64; 18];
    // SAFETY: getrusage(RUSAGE_SELF) fills a struct rusage (144 bytes on
    // x86_64), which the buffer is.
    unsafe { getrusage(0, &mut u) };
    u
}

/// The high-water mark of this process image's RSS, in KiB (`VmHWM` in
/// /proc/self/status). Unlike `ru_maxrss` it starts afresh at exec, so it
/// does not inherit the peak of the tramp process that forked the driver.
pub fn hwm_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        })
        .unwrap_or_else(|| rusage()[4])
}

/// Everything the run found.
pub struct Run {
    pub header: Header,
    pub trace_threads: Vec<u64>,
    /// Per replay thread (its lane number): its report.
    pub reports: Vec<(usize, worker::Report)>,
    /// Per plan thread: items handed over, by kind.
    pub dispatched: Vec<[u64; 8]>,
    pub serial: bool,
    pub seconds: f64,
    pub ns_per_cycle: f64,
    pub decode_cycles: u64,
    pub peak_live_bytes: u64,
    pub rss_before_kib: i64,
    pub slots_kib: i64,
    pub samples: Vec<Sample>,
    pub heaps: &'static str,
    pub aborted: bool,
}

/// The value at quantile `q` of a histogram, in cycles (a bucket's middle).
fn quantile(h: &[u64; BUCKETS], q: f64) -> f64 {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let want = ((total as f64 * q).ceil() as u64).max(1);
    let mut seen = 0;
    for (b, &n) in h.iter().enumerate() {
        seen += n;
        if seen >= want {
            let lo = worker::bucket_low(b) as f64;
            let hi = if b + 1 < BUCKETS {
                worker::bucket_low(b + 1) as f64
            } else {
                lo
            };
            return (lo + hi) / 2.0;
        }
    }
    0.0
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

impl Run {
    pub fn json(&self) -> String {
        let ns = self.ns_per_cycle;
        let mut counts = [0u64; 8];
        let mut cycles = [0u64; 4];
        let mut hist = vec![[0u64; BUCKETS]; 4];
        let (mut failed, mut heap_failures, mut starved) = (0, 0, 0u64);
        let mut waits = crate::slots::Waits::default();
        for (_, r) in &self.reports {
            for (c, n) in counts.iter_mut().zip(r.counts) {
                *c += n;
            }
            for k in 0..4 {
                cycles[k] += r.cycles[k];
                for (h, n) in hist[k].iter_mut().zip(r.hist[k].iter()) {
                    *h += n;
                }
            }
            failed += r.failed;
            heap_failures += r.heap_failures;
            starved += r.starved;
            waits.waits += r.waits.waits;
            waits.sleeps += r.waits.sleeps;
            waits.cycles += r.waits.cycles;
            waits.timed_out += r.waits.timed_out;
        }
        let mut o = String::new();
        let kinds = [(1, "malloc"), (2, "free"), (3, "realloc")];
        let _ = write!(
            o,
            "{{\"mallocs\":{},\"frees\":{},\"reallocs\":{},\"heap_creates\":{},\"heap_destroys\":{},\"failed\":{},\"heap_failures\":{}",
            counts[1], counts[2], counts[3], counts[4], counts[5], failed, heap_failures
        );
        for (k, name) in kinds {
            let mean = if counts[k] > 0 {
                cycles[k] as f64 * ns / counts[k] as f64
            } else {
                0.0
            };
            let _ = write!(
                o,
                ",\"ns_per_{name}\":{mean:.1},\"{name}_p50_ns\":{:.1},\"{name}_p99_ns\":{:.1},\"{name}_seconds\":{:.6}",
                quantile(&hist[k], 0.5) * ns,
                quantile(&hist[k], 0.99) * ns,
                cycles[k] as f64 * ns / 1e9
            );
        }
        let alloc_seconds = cycles.iter().sum::<u64>() as f64 * ns / 1e9;
        let u = rusage();
        let _ = write!(
            o,
            ",\"seconds\":{:.6},\"alloc_seconds\":{:.6},\"decode_seconds\":{:.6},\"starved_seconds\":{:.6}",
            self.seconds,
            alloc_seconds,
            self.decode_cycles as f64 * ns / 1e9,
            starved as f64 * ns / 1e9
        );
        let _ = write!(
            o,
            ",\"waits\":{},\"wait_sleeps\":{},\"wait_seconds\":{:.6},\"waits_timed_out\":{}",
            waits.waits,
            waits.sleeps,
            waits.cycles as f64 * ns / 1e9,
            waits.timed_out
        );
        let _ = write!(
            o,
            ",\"user_seconds\":{:.6},\"system_seconds\":{:.6},\"minor_faults\":{},\"major_faults\":{}",
            u[0] as f64 + u[1] as f64 / 1e6,
            u[2] as f64 + u[3] as f64 / 1e6,
            u[8],
            u[9]
        );
        let sampled_live = self.samples.iter().map(|s| s.live).max().unwrap_or(0);
        let _ = write!(
            o,
            ",\"rss_before_kib\":{},\"peak_rss_kib\":{},\"slots_kib\":{},\"slots\":{},\"peak_live_bytes\":{},\"sampled_peak_live_bytes\":{}",
            self.rss_before_kib,
            hwm_kib(),
            self.slots_kib,
            self.header.slots,
            self.peak_live_bytes,
            sampled_live
        );
        let from = crate::alloc::malloc_from();
        let _ = write!(
            o,
            ",\"malloc_from\":{},\"version\":{},\"heaps\":{},\"serial\":{},\"aborted\":{}",
            json_str(&from),
            json_str(&crate::alloc::version(&from)),
            json_str(self.heaps),
            self.serial,
            self.aborted
        );
        // Per plan thread: what its replay thread executed (in serial
        // mode, what was handed over for it).
        o.push_str(",\"threads\":[");
        for (t, &trace_thread) in self.trace_threads.iter().enumerate() {
            let c = if self.serial {
                self.dispatched[t]
            } else {
                self.reports
                    .iter()
                    .find(|(i, _)| *i == t)
                    .map_or([0; 8], |(_, r)| r.counts)
            };
            if t > 0 {
                o.push(',');
            }
            let _ = write!(
                o,
                "{{\"trace_thread\":{trace_thread},\"mallocs\":{},\"frees\":{},\"reallocs\":{}}}",
                c[1], c[2], c[3]
            );
        }
        o.push_str("],\"samples\":[");
        for (i, s) in self.samples.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(o, "[{:.4},{},{},{}]", s.seconds, s.ops, s.rss_kib, s.live);
        }
        o.push_str("]}");
        o
    }
}
