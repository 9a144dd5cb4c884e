//! The sampler: a thread that reads, every few milliseconds, the process's
//! resident set (/proc/self/statm) and the requested bytes the replay
//! threads hold, for the picture of memory over time. At most `MAX`
//! samples are kept: when full, every other one goes and the interval
//! doubles, so memory stays constant however long the replay runs.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::worker::Progress;

const MAX: usize = 2048;

/// One sample: seconds since the start, operations done, RSS in KiB,
/// requested bytes live.
#[derive(Clone, Copy)]
pub struct Sample {
    pub seconds: f64,
    pub ops: u64,
    pub rss_kib: i64,
    pub live: i64,
}

pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<Sample>>,
    progress: Arc<Mutex<Vec<Arc<Progress>>>>,
    statm: Option<File>,
}

/// Resident pages × 4 KiB, from statm's second field.
fn rss_kib(statm: &Option<File>) -> i64 {
    let Some(f) = statm else { return 0 };
    let mut b = [0u8; 128];
    let n = f.read_at(&mut b, 0).unwrap_or(0);
    std::str::from_utf8(&b[..n])
        .ok()
        .and_then(|s| s.split_whitespace().nth(1))
        .and_then(|v| v.parse::<i64>().ok())
        .map_or(0, |p| p * 4)
}

fn take(progress: &Mutex<Vec<Arc<Progress>>>, statm: &Option<File>, seconds: f64) -> Sample {
    let (mut ops, mut live) = (0, 0);
    for p in progress.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        ops += p.ops.load(Ordering::Relaxed);
        live += p.live.load(Ordering::Relaxed);
    }
    Sample {
        seconds,
        ops,
        rss_kib: rss_kib(statm),
        live,
    }
}

impl Sampler {
    pub fn start(progress: Arc<Mutex<Vec<Arc<Progress>>>>, every_ms: u64) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let (s, p) = (stop.clone(), progress.clone());
        let handle = std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || {
                let statm = File::open("/proc/self/statm").ok();
                let mut out = Vec::with_capacity(MAX);
                let mut every = Duration::from_millis(every_ms.max(1));
                let t0 = Instant::now();
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(every);
                    if out.len() == MAX {
                        let mut keep = 0;
                        out.retain(|_| {
                            keep += 1;
                            keep % 2 == 1
                        });
                        every *= 2;
                    }
                    out.push(take(&p, &statm, t0.elapsed().as_secs_f64()));
                }
                out
            })
            .unwrap_or_else(|e| crate::fail(format!("starting the sampler: {e}")));
        Sampler {
            stop,
            handle,
            progress,
            statm: File::open("/proc/self/statm").ok(),
        }
    }

    /// Stops sampling; the samples with a last one at `seconds`.
    pub fn stop(self, seconds: f64) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        let mut out = self.handle.join().unwrap_or_default();
        out.retain(|s| s.seconds <= seconds);
        out.push(take(&self.progress, &self.statm, seconds));
        out
    }
}
