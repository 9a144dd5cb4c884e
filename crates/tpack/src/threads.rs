//! The threads a reader starts: joined when the reader is dropped after
//! they said they were done, so a reader read to its end leaves nothing
//! running; left to finish on their own otherwise (a thread may be blocked
//! reading a pipe, and a drop must not wait for it).

use std::thread::JoinHandle;

#[derive(Default)]
pub(crate) struct Threads {
    handles: Vec<JoinHandle<()>>,
    /// Whether the threads have sent their last message and are ending.
    pub finished: bool,
}

impl Threads {
    pub fn push(&mut self, h: JoinHandle<()>) {
        self.handles.push(h);
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        if self.finished {
            for h in self.handles.drain(..) {
                // A thread that panicked has nothing more to say here.
                let _ = h.join();
            }
        }
    }
}
