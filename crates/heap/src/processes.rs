//! A run of several processes at a glance: one row of heap statistics
//! per image (a process, or the program an exec started in it), their
//! total, and the image that used the most (`tramp stats` of a run's one
//! file; `tramp record --stats` of a run). What each image's events span
//! in time is [`TimeSpan`]'s.

use std::fmt;

use serde::Serialize;
use tramp_core::{Analysis, Error, Record, Role};

use crate::stats::{Report, human};

/// The first and last times of a trace's timed records (its clock; ns
/// since the process's first event in a recording).
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeSpan {
    span: Option<(u64, u64)>,
}

impl TimeSpan {
    pub fn new() -> TimeSpan {
        TimeSpan::default()
    }
}

impl Analysis for TimeSpan {
    type Report = Option<(u64, u64)>;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        if let Some(t) = rec.role(Role::Time).and_then(|v| v.as_u64()) {
            self.span = Some(match self.span {
                None => (t, t),
                Some((a, b)) => (a.min(t), b.max(t)),
            });
        }
        Ok(())
    }

    fn finish(self) -> Option<(u64, u64)> {
        self.span
    }
}

/// One image's row.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessRow {
    pub pid: u64,
    /// The parent process (0 when the trace does not say).
    pub parent: u64,
    /// 0: the program the process began with; n: the program its n-th
    /// exec started (the same pid, a fresh heap).
    pub exec: u32,
    /// The program's arguments, the program first (empty when the trace
    /// does not say).
    pub command: Vec<String>,
    /// The program (its executable's file name).
    pub program: String,
    /// The trace file, when the run's processes are in files of their
    /// own (a HATF recording).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// When its recording began (seconds since 1970, UTC), when the trace
    /// says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<u64>,
    /// Its first and last event's times (ns, its process's clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
    /// Its first and last event's times on the run's one axis: ns since
    /// the run's first event, when every image's trace says where its
    /// clock starts (`tramp:recorded … clock0=`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_start_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_end_ns: Option<u64>,
    /// CLOCK_MONOTONIC at its clock's 0.
    #[serde(skip)]
    clock0: Option<u64>,
    pub records: u64,
    pub malloc_calls: u64,
    pub realloc_calls: u64,
    pub free_calls: u64,
    pub bytes_allocated: u128,
    pub temporary_allocations: u64,
    /// The image's own peak; in the total row, the sum of the peaks (an
    /// upper bound: the images' peaks need not coincide).
    pub max_live_bytes: u64,
    pub live_bytes_at_end: u64,
}

impl ProcessRow {
    /// The row of one image's statistics (`r.processes` names it; a
    /// report of no process note is pid 0) and time span.
    pub fn new(r: &Report, span: Option<(u64, u64)>) -> ProcessRow {
        let image = r.processes.first().cloned().unwrap_or_default();
        let program = image.program().to_string();
        ProcessRow {
            pid: image.pid,
            parent: image.parent,
            exec: 0,
            command: image.command,
            program,
            file: None,
            recorded_at: image.recorded_at,
            start_ns: span.map(|s| s.0),
            end_ns: span.map(|s| s.1),
            run_start_ns: None,
            run_end_ns: None,
            clock0: image.clock0,
            records: r.records,
            malloc_calls: r.malloc_calls,
            realloc_calls: r.realloc_calls,
            free_calls: r.free_calls,
            bytes_allocated: r.bytes_allocated,
            temporary_allocations: r.temporary_allocations,
            max_live_bytes: r.max_live_bytes,
            live_bytes_at_end: r.live_bytes_at_end,
        }
    }
}

/// Every image of a run, their total, and the one that used the most.
#[derive(Clone, Debug, Serialize)]
pub struct Processes {
    pub processes: Vec<ProcessRow>,
    pub total: ProcessRow,
    /// The index in `processes` of the image with the highest peak (the
    /// first of equals).
    pub most: usize,
}

impl Processes {
    /// The rows (each image's `exec` numbered in order of its pid), their
    /// sum (saturating: totals never wrap) and the largest.
    pub fn new(mut processes: Vec<ProcessRow>) -> Processes {
        for i in 0..processes.len() {
            let before = processes[..i]
                .iter()
                .filter(|p| p.pid == processes[i].pid)
                .count();
            processes[i].exec = before as u32;
        }
        let mut total = ProcessRow {
            pid: 0,
            parent: 0,
            exec: 0,
            command: Vec::new(),
            program: "total".into(),
            file: None,
            recorded_at: None,
            start_ns: None,
            end_ns: None,
            run_start_ns: None,
            run_end_ns: None,
            clock0: None,
            records: 0,
            malloc_calls: 0,
            realloc_calls: 0,
            free_calls: 0,
            bytes_allocated: 0,
            temporary_allocations: 0,
            max_live_bytes: 0,
            live_bytes_at_end: 0,
        };
        for p in &processes {
            total.records = total.records.saturating_add(p.records);
            total.malloc_calls = total.malloc_calls.saturating_add(p.malloc_calls);
            total.realloc_calls = total.realloc_calls.saturating_add(p.realloc_calls);
            total.free_calls = total.free_calls.saturating_add(p.free_calls);
            total.bytes_allocated += p.bytes_allocated;
            total.temporary_allocations = total
                .temporary_allocations
                .saturating_add(p.temporary_allocations);
            total.max_live_bytes = total.max_live_bytes.saturating_add(p.max_live_bytes);
            total.live_bytes_at_end = total.live_bytes_at_end.saturating_add(p.live_bytes_at_end);
        }
        // The run's axis: every image's absolute start and end.
        let absolute = |p: &ProcessRow| Some((p.clock0? + p.start_ns?, p.clock0? + p.end_ns?));
        let spans: Option<Vec<(u64, u64)>> = processes.iter().map(absolute).collect();
        if let Some(spans) = spans {
            let origin = spans.iter().map(|s| s.0).min().unwrap_or(0);
            for (p, (a, b)) in processes.iter_mut().zip(spans) {
                p.run_start_ns = Some(a - origin);
                p.run_end_ns = Some(b - origin);
            }
            total.run_start_ns = Some(0);
            total.run_end_ns = processes.iter().filter_map(|p| p.run_end_ns).max();
        }
        let most = crate::images::largest(processes.iter().map(|p| p.max_live_bytes));
        Processes {
            processes,
            total,
            most,
        }
    }

    /// The rows of each image's statistics and time span.
    pub fn of_images(images: &[(Report, Option<(u64, u64)>)]) -> Processes {
        Processes::new(images.iter().map(|(r, s)| ProcessRow::new(r, *s)).collect())
    }
}

impl fmt::Display for Processes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use tramp_core::numbers::{bytes_exact, duration};
        writeln!(
            f,
            "{:>8} {:<16} {:>12} {:>12} {:>10} {:>12} {:>14} {:>12} {:>14} {:>14}",
            "pid",
            "program",
            "records",
            "mallocs",
            "reallocs",
            "frees",
            "bytes",
            "temporary",
            "peak live",
            "live at end"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, pid: String, p: &ProcessRow| {
            let program = match p.exec {
                0 => p.program.clone(),
                n => format!("{} (exec {n})", p.program),
            };
            write!(
                f,
                "{pid:>8} {program:<16} {:>12} {:>12} {:>10} {:>12} {:>14} {:>12} {:>14} {:>14}",
                human(p.records),
                human(p.malloc_calls),
                human(p.realloc_calls),
                human(p.free_calls),
                human(p.bytes_allocated),
                human(p.temporary_allocations),
                human(p.max_live_bytes),
                human(p.live_bytes_at_end),
            )?;
            match &p.file {
                Some(file) => writeln!(f, "  {file}"),
                None => writeln!(f),
            }
        };
        for p in &self.processes {
            row(f, p.pid.to_string(), p)?;
        }
        row(f, String::new(), &self.total)?;
        writeln!(
            f,
            "(the total's peak live is the sum of each image's peak: an upper bound)"
        )?;
        if let Some(end) = self.total.run_end_ns {
            writeln!(
                f,
                "the run: {} images over {}, its first event to its last",
                self.processes.len(),
                duration(end)
            )?;
        }
        for p in &self.processes {
            let ran = match p.command.is_empty() {
                true => "(command line not recorded)".to_string(),
                false => crate::images::shell_words(&p.command),
            };
            let how = match p.exec {
                0 => format!("parent {}", p.parent),
                n => format!("exec {n} of pid {}", p.pid),
            };
            let took = match (p.start_ns, p.end_ns) {
                (Some(a), Some(b)) => format!(", {}", duration(b.saturating_sub(a))),
                _ => String::new(),
            };
            let took = match p.run_start_ns {
                Some(a) => format!("{took} from {}", duration(a)),
                None => took,
            };
            writeln!(f, "{:>8} ({how}{took}): {ran}", p.pid)?;
        }
        if let Some(m) = self.processes.get(self.most) {
            writeln!(
                f,
                "used the most: pid {} {} ({}), peak {}; `--pid {}` gives its statistics",
                m.pid,
                m.program,
                match m.exec {
                    0 => "as started".to_string(),
                    n => format!("after exec {n}"),
                },
                bytes_exact(m.max_live_bytes),
                m.pid
            )?;
        }
        Ok(())
    }
}

/// The statistics of a trace: of its one image as they always were, or of
/// a run's several images, a row each.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum TraceStats {
    One(Box<Report>),
    Run(Box<Processes>),
}

impl TraceStats {
    /// Of each image's statistics and time span, in the trace's order.
    pub fn of(mut images: Vec<(Report, Option<(u64, u64)>)>) -> TraceStats {
        match images.len() {
            1 => TraceStats::One(Box::new(images.remove(0).0)),
            _ => TraceStats::Run(Box::new(Processes::of_images(&images))),
        }
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceStats::One(r) => r.fmt(f),
            TraceStats::Run(p) => p.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(pid: u64, cmd: &[&str], peak: u64) -> Report {
        let mut r = crate::HeapStats::new().report();
        r.records = 10;
        r.malloc_calls = 4;
        r.bytes_allocated = u128::from(u64::MAX - 1);
        r.max_live_bytes = peak;
        r.processes = vec![crate::images::Image {
            pid,
            parent: 1,
            command: cmd.iter().map(|s| s.to_string()).collect(),
            ..crate::images::Image::default()
        }];
        r
    }

    #[test]
    fn rows_per_image_their_total_and_the_largest() {
        let images = [
            (
                report(2, &["/bin/sh", "-c", "exec ls"], 100),
                Some((5, 1_500_005)),
            ),
            (report(2, &["/usr/bin/ls"], 300), None),
            (report(3, &["cat"], 300), None),
        ];
        let p = Processes::of_images(&images);
        assert_eq!(p.total.records, 30);
        assert_eq!(p.total.malloc_calls, 12);
        // Three rows of 2^64 − 2: the sum in 128 bits.
        assert_eq!(p.total.bytes_allocated, 3 * u128::from(u64::MAX - 1));
        assert_eq!(p.total.max_live_bytes, 700);
        let execs: Vec<u32> = p.processes.iter().map(|r| r.exec).collect();
        assert_eq!(execs, [0, 1, 0]);
        // Of two equal peaks, the first.
        assert_eq!(p.most, 1);
        let text = p.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 3 + 1 + 1 + 3 + 1, "{text}");
        assert!(lines[2].contains("ls (exec 1)"), "{text}");
        assert!(
            text.contains("       2 (parent 1, 1.50 ms): /bin/sh -c 'exec ls'"),
            "{text}"
        );
        assert!(
            text.contains("       2 (exec 1 of pid 2): /usr/bin/ls"),
            "{text}"
        );
        assert!(
            text.contains("used the most: pid 2 ls (after exec 1), peak 300 B"),
            "{text}"
        );
    }
}
