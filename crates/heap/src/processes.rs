//! A recording of several processes at a glance: one row of heap
//! statistics per process's trace, then their total (`tramp record
//! --stats` on a program that forks or execs).

use std::fmt;

use serde::Serialize;

use crate::stats::{Report, human};

/// One process's trace and the totals of its statistics.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessRow {
    pub pid: u64,
    /// The parent process (0 when the trace does not say).
    pub parent: u64,
    /// The command line of each program the process ran, in order (an
    /// exec adds one), as the trace's notes give them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<Vec<String>>,
    /// The program the process ran (its executable's name).
    pub program: String,
    /// The trace file.
    pub file: String,
    pub records: u64,
    pub malloc_calls: u64,
    pub realloc_calls: u64,
    pub free_calls: u64,
    pub bytes_allocated: u128,
    /// The process's own peak; in the total row, the sum of the peaks
    /// (an upper bound: the processes' peaks need not coincide).
    pub max_live_bytes: u64,
    pub live_bytes_at_end: u64,
}

impl ProcessRow {
    pub fn new(pid: u64, program: &str, file: &str, r: &Report) -> ProcessRow {
        ProcessRow {
            pid,
            parent: r.processes.first().map_or(0, |i| i.parent),
            commands: r.processes.iter().map(|i| i.command.clone()).collect(),
            program: program.to_string(),
            file: file.to_string(),
            records: r.records,
            malloc_calls: r.malloc_calls,
            realloc_calls: r.realloc_calls,
            free_calls: r.free_calls,
            bytes_allocated: r.bytes_allocated,
            max_live_bytes: r.max_live_bytes,
            live_bytes_at_end: r.live_bytes_at_end,
        }
    }
}

/// Every process of a recording, and the total.
#[derive(Clone, Debug, Serialize)]
pub struct Processes {
    pub processes: Vec<ProcessRow>,
    pub total: ProcessRow,
}

impl Processes {
    /// The rows, and their sum (saturating: totals never wrap).
    pub fn new(processes: Vec<ProcessRow>) -> Processes {
        let mut total = ProcessRow {
            pid: 0,
            parent: 0,
            commands: Vec::new(),
            program: "total".into(),
            file: format!("{} traces", processes.len()),
            records: 0,
            malloc_calls: 0,
            realloc_calls: 0,
            free_calls: 0,
            bytes_allocated: 0,
            max_live_bytes: 0,
            live_bytes_at_end: 0,
        };
        for p in &processes {
            total.records = total.records.saturating_add(p.records);
            total.malloc_calls = total.malloc_calls.saturating_add(p.malloc_calls);
            total.realloc_calls = total.realloc_calls.saturating_add(p.realloc_calls);
            total.free_calls = total.free_calls.saturating_add(p.free_calls);
            total.bytes_allocated += p.bytes_allocated;
            total.max_live_bytes = total.max_live_bytes.saturating_add(p.max_live_bytes);
            total.live_bytes_at_end = total.live_bytes_at_end.saturating_add(p.live_bytes_at_end);
        }
        Processes { processes, total }
    }
}

impl fmt::Display for Processes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>8} {:<16} {:>12} {:>12} {:>10} {:>12} {:>14} {:>14} {:>14}  trace",
            "pid",
            "program",
            "records",
            "mallocs",
            "reallocs",
            "frees",
            "bytes",
            "peak live",
            "live at end"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, pid: String, p: &ProcessRow| {
            writeln!(
                f,
                "{pid:>8} {:<16} {:>12} {:>12} {:>10} {:>12} {:>14} {:>14} {:>14}  {}",
                p.program,
                human(p.records),
                human(p.malloc_calls),
                human(p.realloc_calls),
                human(p.free_calls),
                human(p.bytes_allocated),
                human(p.max_live_bytes),
                human(p.live_bytes_at_end),
                p.file
            )
        };
        for p in &self.processes {
            row(f, p.pid.to_string(), p)?;
        }
        row(f, String::new(), &self.total)?;
        for p in self.processes.iter().filter(|p| !p.commands.is_empty()) {
            let ran: Vec<String> = p
                .commands
                .iter()
                .map(|c| crate::images::shell_words(c))
                .collect();
            writeln!(
                f,
                "{:>8} (parent {}): {}",
                p.pid,
                p.parent,
                ran.join("  then exec'd  ")
            )?;
        }
        writeln!(
            f,
            "(the total's peak live is the sum of each process's peak: an upper bound)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_adds_every_row_and_does_not_wrap() {
        let mut r = crate::HeapStats::new().report();
        r.records = 10;
        r.malloc_calls = 4;
        r.bytes_allocated = u128::from(u64::MAX - 1);
        r.max_live_bytes = 100;
        let a = ProcessRow::new(1, "sh", "x.tpack", &r);
        let b = ProcessRow::new(2, "ls", "x.ls.2.tpack", &r);
        let p = Processes::new(vec![a, b]);
        assert_eq!(p.total.records, 20);
        assert_eq!(p.total.malloc_calls, 8);
        // Two rows of 2^64 − 2: the sum in 128 bits.
        assert_eq!(p.total.bytes_allocated, 2 * u128::from(u64::MAX - 1));
        assert_eq!(p.total.max_live_bytes, 200);
        let text = p.to_string();
        assert_eq!(text.lines().count(), 5, "{text}");

        assert!(text.lines().nth(2).unwrap().contains("x.ls.2.tpack"));
        // With the notes' command lines: a line a process, execs joined.
        let mut r2 = r.clone();
        let image = |cmd: &[&str]| crate::images::Image {
            pid: 2,
            parent: 1,
            command: cmd.iter().map(|s| s.to_string()).collect(),
            ..crate::images::Image::default()
        };
        r2.processes = vec![image(&["sh", "-c", "exec ls"]), image(&["ls"])];
        let c = ProcessRow::new(2, "ls", "x.ls.2.tpack", &r2);
        let text = Processes::new(vec![c]).to_string();
        assert!(
            text.contains("       2 (parent 1): sh -c 'exec ls'  then exec'd  ls"),
            "{text}"
        );
    }
}
