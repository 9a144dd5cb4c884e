//! The two traits that connect formats: a [`Source`] yields records, a
//! [`Sink`] consumes them.

use std::sync::Arc;

use crate::{Error, Position, Record, Schema};

/// A decoder that yields records one at a time, in constant memory.
///
/// `next_record` lends a record that borrows the source's buffers until the
/// next call, so decoding allocates nothing per record.
pub trait Source {
    /// The record types this source yields.
    fn schema(&self) -> &Arc<Schema>;

    /// The next record, `Ok(None)` at the end. After an error the source is
    /// finished: every record before the damage has been delivered.
    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error>;

    /// Where the next record starts.
    fn position(&self) -> Position;

    /// The text that describes the format of this input, when the format
    /// has one (a Meta-TF DTD): writers of the same family need it.
    fn description(&self) -> Option<&str> {
        None
    }

    /// Free-form header lines the trace carries (PTF's user notes), which
    /// writers of the same family keep.
    fn notes(&self) -> &[String] {
        &[]
    }

    /// Damage the source skipped over since the last call (formats that
    /// resynchronise, like Heph's), for the caller to report.
    fn warnings(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// An encoder that consumes records of any schema it can map.
pub trait Sink {
    /// Encodes one record.
    fn write_record(&mut self, record: &Record<'_>) -> Result<(), Error>;

    /// Flushes and closes the output (finishing any compression frame).
    fn finish(self: Box<Self>) -> Result<(), Error>;
}

/// Copies every record of `source` into `sink`; returns the record count.
/// `on_record` is called after each record (progress reporting).
pub fn pump(
    source: &mut dyn Source,
    sink: &mut dyn Sink,
    mut on_record: impl FnMut(&Position),
) -> Result<u64, Error> {
    let mut n = 0;
    while let Some(rec) = source.next_record()? {
        sink.write_record(&rec)?;
        n += 1;
        on_record(&source.position());
    }
    Ok(n)
}
