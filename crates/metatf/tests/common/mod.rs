//! Helpers shared by the Meta-TF integration tests.

use std::sync::{Arc, Mutex};

/// A `Finish` writer whose bytes stay readable after the sink that owns it
/// has finished: clone it before handing it over, then call `bytes`.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    /// Everything written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().clone()
    }
}

impl std::io::Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl tramp_core::io::Finish for Capture {
    fn finish(self) -> std::io::Result<()> {
        Ok(())
    }
}
