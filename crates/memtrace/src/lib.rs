//! tramp-memtrace: memory-access traces other tools write, read as
//! records of one schema (instruction fetches, loads, stores, modifies),
//! so that `tramp cachesim --cpu`, `tramp run` and every format-independent
//! command take them.
//!
//! * [`schema`]: the record types and what each means.
//! * [`reader`]: the one reader of access lines, given a format's parser.
//! * [`lackey`]: valgrind lackey's `--trace-mem=yes` log.
//! * [`din`]: Dinero IV's `din` input (label and hexadecimal address).
//! * [`format`](mod@format): the registry entries.
//!
//! Layouts and decisions: docs/formats/lackey.md, docs/formats/din.md.

pub mod din;
pub mod error;
pub mod format;
pub mod lackey;
pub mod reader;
pub mod schema;

pub use din::DinReader;
pub use error::MemTraceError;
pub use lackey::LackeyReader;
