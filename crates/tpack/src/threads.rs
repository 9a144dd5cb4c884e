//! The threads a reader starts, and what happens to them when the reader
//! is dropped: joined at once when they said they were done (a reader
//! read to its end leaves nothing running); otherwise given a moment to
//! notice the reader is gone (the channels they send on are closed by
//! then) and joined if they stop in it, else left to stop on their own (a
//! thread may be blocked reading a pipe, and a drop must not hang on it).
//! Also the queue of jobs that worker threads share, the reader's and
//! the writer's alike.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a drop waits for threads still at work (a worker finishing
/// its block of a million records takes about 50 ms).
const WAIT: Duration = Duration::from_millis(250);

pub(crate) struct Threads {
    handles: Vec<JoinHandle<()>>,
    /// Whether the threads have sent their last message and are ending.
    pub finished: bool,
    /// Disconnected once every thread's token is dropped.
    alive: Receiver<()>,
    token: Option<SyncSender<()>>,
}

impl Default for Threads {
    fn default() -> Self {
        let (token, alive) = sync_channel(0);
        Threads {
            handles: Vec::new(),
            finished: false,
            alive,
            token: Some(token),
        }
    }
}

impl Threads {
    /// A token for a thread to hold while it runs (it drops it by ending).
    pub fn token(&self) -> Option<SyncSender<()>> {
        self.token.clone()
    }

    pub fn push(&mut self, h: JoinHandle<()>) {
        self.handles.push(h);
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.token = None;
        if !self.finished {
            let deadline = Instant::now() + WAIT;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match self.alive.recv_timeout(left) {
                    Err(RecvTimeoutError::Disconnected) => break,
                    // Still at work: left to stop on their own.
                    Err(RecvTimeoutError::Timeout) => return,
                    Ok(()) => {}
                }
            }
        }
        for h in self.handles.drain(..) {
            // A thread that panicked has nothing more to say here.
            let _ = h.join();
        }
    }
}

/// The next job from a queue that worker threads share; `None` once the
/// queue is closed (the worker then ends).
pub(crate) fn next_job<T>(jobs: &Mutex<Receiver<T>>) -> Option<T> {
    // A worker that panicked holding the lock left the queue intact.
    let rx = jobs.lock().unwrap_or_else(|p| p.into_inner());
    rx.recv().ok()
}
