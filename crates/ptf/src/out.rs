//! The output both PTF writers share: events are appended to a buffer
//! that goes to the writer in 64 KiB pieces, and the bytes written so far
//! are counted so that an I/O error can name its offset.

use std::io::Write;

use crate::PtfError;

pub(crate) struct Buffered<W: Write> {
    out: W,
    /// Bytes not written yet; writers append to it directly.
    pub(crate) buf: Vec<u8>,
    offset: u64,
}

impl<W: Write> Buffered<W> {
    pub(crate) fn new(out: W) -> Self {
        Buffered {
            out,
            buf: Vec::with_capacity(1 << 16),
            offset: 0,
        }
    }

    /// Writes the buffer out once it holds 64 KiB.
    pub(crate) fn spill_if_full(&mut self) -> Result<(), PtfError> {
        if self.buf.len() >= 1 << 16 {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<(), PtfError> {
        self.out
            .write_all(&self.buf)
            .map_err(PtfError::io(self.offset))?;
        self.offset += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes everything buffered and flushes the writer.
    pub(crate) fn flush(&mut self) -> Result<(), PtfError> {
        self.spill()?;
        self.out.flush().map_err(PtfError::io(self.offset))
    }

    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}
