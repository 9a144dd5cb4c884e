//! tramp-heph: the trace format of the Heph actor runtime (seed `001_…`,
//! "Trace Format" 0.1.0) — packets ([`packet`]), a streaming reader that
//! resynchronises after damage ([`reader`]), a writer applications can
//! emit traces with ([`writer`]), export to the Chrome Trace Event format
//! ([`chrome`]), span inference and per-description totals ([`spans`]),
//! and the tramp source/sink adapters ([`records`]). Decisions are in
//! `docs/formats/heph.md`.

pub mod chrome;
pub mod format;
pub mod packet;
pub mod reader;
pub mod records;
pub mod spans;
pub mod summary;
pub mod writer;

pub use packet::{Attribute, Event, Metadata, OptionValue, Packet, Value};
pub use reader::{EventRef, HephError, PacketRef, Reader, ValueRef, Warning};
pub use writer::Writer;
