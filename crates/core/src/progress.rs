//! A progress bar on stderr for long work, shown only when stderr is a
//! terminal, driven by the raw (compressed) bytes an input has consumed.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use crate::io::Input;

/// Progress of reading one input.
pub struct Progress {
    bar: Option<ProgressBar>,
    raw: Arc<AtomicU64>,
    tick: u64,
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
        Progress { bar, raw, tick: 0 }
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
        }
    }

    /// Called once per record; cheap unless a bar is shown.
    #[inline]
    pub fn record(&mut self, records: u64) {
        self.tick += 1;
        if self.tick & 0xFFFF == 0
            && let Some(bar) = &self.bar
        {
            bar.set_position(self.raw.load(Ordering::Relaxed));
            bar.set_message(format!("{records} records"));
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
