//! tramp-hatf: HATF 1.0, the Heap Allocation Trace Format of Chilimbi, Jones
//! and Zorn, exactly as its Appendix A lays it out (decisions where the scan
//! is ambiguous are in `docs/formats/hatf.md`).
//!
//! * [`spec`]: tags, fields, widths, interpretations and record layouts.
//! * [`state`]: the per-field encoding state that metadata records change.
//! * [`reader`] / [`writer`]: the streaming binary codec; the writer takes
//!   an encoding [`Policy`] ([`policy`]: the rules that place metadata;
//!   [`encoder`]: the encoding core the writer drives).
//! * [`text`]: the one-record-per-line text form, both ways.
//! * [`records`]: HATF as a tramp schema, [`Source`](tramp_core::Source) and
//!   [`Sink`](tramp_core::Sink).

pub mod encoder;
pub mod error;
pub mod format;
pub mod item;
pub mod plan;
pub mod policy;
pub mod reader;
pub mod records;
pub mod spec;
pub mod splitaddr;
pub mod state;
pub mod text;
pub mod writer;

pub use error::HatfError;
pub use item::{Event, Item, OwnedEvent, OwnedItem};
pub use reader::Reader;
pub use spec::{EventKind, Field, Interp, Meta, Width};
pub use writer::{Policy, Writer};
