//! The two traits that connect formats: a [`Source`] yields records (and,
//! in the same stream, warnings about damage it skipped), a [`Sink`]
//! consumes them; and the [`Header`] a source carries for writers of its
//! family.

use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;

use serde::Serialize;

use crate::{Error, Position, Record, Schema};

/// What a trace says about itself before its records, that writers of the
/// same family keep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Header {
    /// The text describing the trace's format, when the format has one (a
    /// Meta-TF DTD): writers of the same family need it.
    pub dtd: Option<String>,
    /// Free-form lines the trace carries before its records (PTF's notes).
    pub notes: Vec<String>,
}

impl Header {
    /// The empty header of formats that carry none.
    pub fn none() -> &'static Header {
        static NONE: Header = Header {
            dtd: None,
            notes: Vec::new(),
        };
        &NONE
    }
}

/// Damage a source skipped over and went on after (formats that
/// resynchronise, like Heph's). It travels in the record stream, between
/// the records it separates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The format whose reader skipped it.
    pub format: &'static str,
    /// Where the damage starts (decompressed byte offset).
    pub offset: u64,
    /// What was wrong.
    pub message: String,
    /// Bytes skipped to get past it.
    pub skipped: u64,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte offset {}: {}", self.offset, self.message)?;
        if self.skipped > 0 {
            write!(f, " ({} bytes skipped)", self.skipped)?;
        }
        Ok(())
    }
}

/// One item of a source's stream: a record, or a warning about damage the
/// source skipped before the next record.
#[derive(Clone, Debug)]
pub enum Item<'a> {
    Record(Record<'a>),
    Warning(Warning),
}

/// A decoder that yields records one at a time, in constant memory.
///
/// `next_record` lends a record that borrows the source's buffers until the
/// next call, so decoding allocates nothing per record.
pub trait Source {
    /// The record types this source yields.
    fn schema(&self) -> &Arc<Schema>;

    /// The next record, `Ok(None)` at the end. After an error the source is
    /// finished: every record before the damage has been delivered.
    /// Sources that skip damage keep their warnings for [`Source::next_item`].
    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error>;

    /// The next record or warning, `Ok(None)` at the end: what drivers read.
    /// Sources whose readers resynchronise after damage override it so that
    /// each warning comes before the records after the damage.
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        Ok(self.next_record()?.map(Item::Record))
    }

    /// Calls `f` with every item in order until the source ends, fails, or
    /// `f` breaks (then the source stands after that item). The same items
    /// as repeated [`Source::next_item`] calls; sources whose decoder is
    /// faster pushing than pulled (it keeps its state in registers between
    /// records) override it. [`Source::position`] is only current between
    /// calls and after this returns, not inside `f`.
    fn each_item(&mut self, f: &mut dyn FnMut(&Item<'_>) -> ControlFlow<()>) -> Result<(), Error> {
        while let Some(item) = self.next_item()? {
            if f(&item).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// Where the next record starts.
    fn position(&self) -> Position;

    /// What the trace says about itself (a DTD, notes).
    fn header(&self) -> &Header {
        Header::none()
    }
}

/// An encoder that consumes records of any schema it can map.
pub trait Sink {
    /// Encodes one record.
    fn write_record(&mut self, record: &Record<'_>) -> Result<(), Error>;

    /// Flushes and closes the output (finishing any compression frame).
    fn finish(self: Box<Self>) -> Result<(), Error>;
}

/// A boxed source is a source (so that a `Box<dyn Source + Send>` can be
/// moved into [`crate::ReadAhead`]).
impl<S: Source + ?Sized> Source for Box<S> {
    fn schema(&self) -> &Arc<Schema> {
        (**self).schema()
    }
    #[inline]
    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        (**self).next_record()
    }
    fn each_item(&mut self, f: &mut dyn FnMut(&Item<'_>) -> ControlFlow<()>) -> Result<(), Error> {
        (**self).each_item(f)
    }
    #[inline]
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        (**self).next_item()
    }
    fn position(&self) -> Position {
        (**self).position()
    }
    fn header(&self) -> &Header {
        (**self).header()
    }
}
