//! tramp-core: the one data model every tramp format and analysis speaks.
//!
//! * [`schema`]: record types, typed fields and their *roles* (size, address,
//!   thread, ...), so that analyses find what they need in any format.
//! * [`record`]: records as views over a decoder's reusable buffers, and
//!   [`RecordBuf`], the owned, reusable buffer that decoders and scripts fill.
//! * [`stream`]: the [`Source`] and [`Sink`] traits that connect formats.
//! * [`error`]: errors that say what went wrong and where (byte offset, record).
//! * [`text`]: the generic one-record-per-line text form.
//! * [`io`]: inputs from paths or stdin with transparent decompression, and
//!   outputs compressed by extension or by choice.

pub mod error;
pub mod io;
pub mod record;
pub mod schema;
pub mod stream;
pub mod text;

pub use error::{Error, Position};
pub use record::{AttrsRef, ListRef, Record, RecordBuf, Slot, Span, Value};
pub use schema::{FieldDef, FieldType, ReallocOutcome, RecordKind, RecordType, Role, Schema};
pub use stream::{Sink, Source};
