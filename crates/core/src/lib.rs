//! tramp-core: the one data model every tramp format and analysis speaks.
//!
//! * [`schema`]: record types, typed fields and their *roles* (size, address,
//!   thread, ...), so that analyses find what they need in any format.
//! * [`record`]: records as views over a decoder's reusable buffers, and
//!   [`RecordBuf`], the owned, reusable buffer that decoders and scripts fill.
//! * [`stream`]: the [`Source`] and [`Sink`] traits that connect formats,
//!   the [`Header`] a trace carries, and in-stream [`Warning`]s.
//! * [`ahead`]: [`ReadAhead`], a source decoded on a second core.
//! * [`analysis`]: the [`Analysis`] trait (of records, or of the events a
//!   view makes of them) and [`drive`], the one driver that runs a source
//!   through analyses and sinks.
//! * [`format`]: the [`FormatDesc`] each format crate registers.
//! * [`ints`]: integers at fixed places of a record's bytes.
//! * [`numbers`]: whole numbers with thousands separators, for reports.
//! * [`site`]: allocation sites as traces carry them (the heap
//!   vocabulary every heap format shares); [`synthetic`]: addresses for
//!   traces that have none.
//! * [`output`]: what an output is to the model ([`output::Finish`],
//!   [`output::OutStream`]); files, pipes and compression are tramp-io's.
//! * [`rng`]: the one random generator (SplitMix64) and its finalizer.
//! * [`error`]: errors that say what went wrong and where (byte offset, record).
//! * [`linebuf`]: text lines of numbers built without `write!`, for the
//!   line formats tramp exports.
//! * [`text`]: the generic one-record-per-line text form.

pub mod ahead;
pub mod analysis;
pub mod error;
pub mod format;
pub mod ints;
pub mod linebuf;
pub mod lines;
pub mod numbers;
pub mod output;
pub mod reading;
pub mod record;
pub mod rng;
pub mod schema;
pub mod select;
pub mod site;
pub mod stream;
pub mod synthetic;
pub mod text;
pub mod units;
pub mod varint;
pub mod window;

pub use ahead::ReadAhead;
pub use analysis::{
    Analysis, Damage, Events, Meter, Observe, Outcome, Records, Run, Stop, drive, render,
};
pub use error::{Error, Position};
pub use format::{CreateOptions, FormatDesc, Holds, OpenOptions, Sniff};
pub use record::{AttrsRef, ListRef, Record, RecordBuf, Slot, Span, Value};
pub use schema::{
    Domains, FieldDef, FieldType, ReallocOutcome, RecordKind, RecordType, Role, Schema,
};
pub use stream::{Header, Item, Sink, Source, Warning};
