//! What an output is to the model: bytes written, then an explicit end (a
//! compressed frame closed, a temporary file renamed into place). Sinks are
//! generic over [`Finish`] so that tests write to memory; the format
//! registry hands a sink its output as an [`OutStream`] (tramp-io's
//! `Output` is the one behind every file), so this crate needs no I/O of
//! its own.

use std::io::{self, BufWriter, Write};

/// A writer that has an explicit end.
pub trait Finish: Write {
    fn finish(self) -> io::Result<()>;
}

impl Finish for Vec<u8> {
    fn finish(self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Finish for BufWriter<W> {
    fn finish(mut self) -> io::Result<()> {
        self.flush()
    }
}

/// An output a sink owns, behind a box: [`Finish`] for trait objects.
pub trait OutStream: Write + Send {
    /// Ends the output (see [`Finish::finish`]).
    fn finish_boxed(self: Box<Self>) -> io::Result<()>;
    /// The output itself, for a writer that needs more of it than bytes
    /// (heaptrack's writer spills its events beside it).
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

impl Finish for Box<dyn OutStream> {
    fn finish(self) -> io::Result<()> {
        self.finish_boxed()
    }
}
