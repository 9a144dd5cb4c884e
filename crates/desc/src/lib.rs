//! TRAMP format descriptions (seed 004, §2): a file of C-like record
//! declarations that says how a binary trace is laid out, and a reader that
//! turns such a trace into tramp records, so every analysis and the TRAMP
//! command language run over it.
//!
//! * [`lex`]: the tokens this language and the command language share;
//! * [`parse`]: descriptions → [`Description`] (checked: names, tags,
//!   sizes), errors as Meta-TF-style diagnostics with file:line:col;
//! * [`layout`]: field types and how their bytes encode values;
//! * [`source`]: a described trace read as a tramp [`tramp_core::Source`];
//! * [`encode`]: records written back in the described layout (the
//!   command language's `spit`);
//! * [`format`]: described traces as a registered (read-only) tramp format,
//!   opened with `--desc FILE` by every command.
//!
//! The language and the decisions taken where the paper is silent are in
//! docs/formats/tramp.md.

pub mod encode;
pub mod format;
pub mod layout;
pub mod lex;
pub mod parse;
pub mod source;

pub use layout::{Encoding, FieldDesc, RecordDesc, TimeKind};
pub use parse::{Description, parse};
pub use source::DescSource;

/// The name of the field that holds a record's type tag.
pub const TYPE_FIELD: &str = "RECORD_TYPE";
