//! A progress bar on stderr for long work, shown only when stderr is a
//! terminal, driven by the raw (compressed) bytes an input has consumed.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use crate::Input;

/// Progress of reading one input.
pub struct Progress {
    bar: Option<ProgressBar>,
    raw: Arc<AtomicU64>,
    tick: u64,
    /// The bar counts records (work with no input file), not bytes.
    by_records: bool,
}

impl Progress {
    /// `total`: raw input size when known; `raw`: raw bytes read so far.
    pub fn new(total: Option<u64>, raw: Arc<AtomicU64>) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = match total {
                Some(t) => ProgressBar::new(t).with_style(
                    ProgressStyle::with_template(
                        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {msg}",
                    )
                    .expect("valid template"),
                ),
                None => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{spinner} {bytes} {bytes_per_sec} {msg}")
                        .expect("valid template"),
                ),
            };
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
            bar
        });
        Progress {
            bar,
            raw,
            tick: 0,
            by_records: false,
        }
    }

    /// Progress of producing `total` records (a generated trace).
    pub fn records(total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total).with_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} records {per_sec} eta {eta}")
                    .expect("valid template"),
            );
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
            bar
        });
        Progress {
            bar,
            raw: Arc::new(AtomicU64::new(0)),
            tick: 0,
            by_records: true,
        }
    }

    /// Progress of reading `input`.
    pub fn of(input: &Input) -> Self {
        Progress::new(input.raw_len, input.raw_position())
    }

    /// No bar at all (tests, in-memory work).
    pub fn hidden() -> Self {
        Progress {
            bar: None,
            raw: Arc::new(AtomicU64::new(0)),
            tick: 0,
            by_records: false,
        }
    }

    /// Called once per record; cheap unless a bar is shown.
    #[inline]
    pub fn record(&mut self, records: u64) {
        self.tick += 1;
        if self.tick & 0xFFFF == 0 {
            self.show(records);
        }
    }

    /// Shows `records` done now (and the raw bytes read, for an input).
    fn show(&mut self, records: u64) {
        if let Some(bar) = &self.bar {
            if self.by_records {
                bar.set_position(records);
            } else {
                bar.set_position(self.raw.load(Ordering::Relaxed));
                bar.set_message(format!("{records} records"));
            }
        }
    }

    /// Clears the bar (idempotent).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A step of work with no input to measure (timing runs, a simulation's
/// last pass): a spinner with what is being done, on stderr when it is a
/// terminal, cleared when dropped.
pub struct Stage {
    bar: Option<ProgressBar>,
}

impl Stage {
    pub fn start(what: &str) -> Stage {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"),
            );
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
            bar.set_message(what.to_string());
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            bar
        });
        Stage { bar }
    }

    /// Says what is being done now.
    pub fn set(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(what.to_string());
        }
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The driver shows every `tramp_core::analysis::METER_EVERY` (2^16)
/// records, the cadence `record`'s own count gives.
impl tramp_core::Meter for Progress {
    fn show(&mut self, records: u64) {
        Progress::show(self, records)
    }

    fn finish(&mut self) {
        Progress::finish(self)
    }
}
