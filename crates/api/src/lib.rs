//! The run-and-report contract: what a front end (the `tramp` binary, the
//! Python package) calls to do a user's job, so that it only parses its
//! arguments, calls one function here and prints what comes back.
//!
//! * [`input`]: a trace named by path (and format, DTD, description),
//!   detected and opened as records.
//! * [`ending`]: how a run ended, as an outcome (`complete`, `damage`)
//!   and, when it did not end cleanly, the one typed [`Error`] whose text
//!   says what was read and where it stopped.
//! * [`output`]: a whole output file (an SVG, an HTML page), refused before
//!   the work when it cannot be written, and written whole or not at all.
//! * [`convert`]: a trace in another format, audited for losses.
//! * [`heap`]: the heap jobs (statistics, allocation sites, call stacks,
//!   the heap over time, the HTML report, the comparison of two traces).
//! * [`heph`]: a Heph trace's span summary, read from its packets.
//! * [`indexed`]: the heap profile from a recording's index or its
//!   events, and the index verified against the events.
//! * [`rds`]: the recursive-data-structure profile, named.
//! * [`export`]: a heap profile in a viewer's format (massif, DHAT, pprof).
//! * [`record`]: a recording's options, checked before the program runs.
//! * [`replay`]: allocator replay, its pictures, its fidelity.
//! * [`script`]: a TRAMP command-language script over traces.
//! * [`sizes`]: the HATF paper's compaction study.
//! * [`verify`]: a PTF trace checked against the PTF report's rules.
//! * [`check`]: memory budgets (peak, leaked, allocations, temporary)
//!   checked against a trace, for CI.
//! * [`cachesim`]: a cache simulation, parsed into one checked plan, run.
//! * [`stats`]: the statistics that fit a trace's domain, with how the read
//!   ended.

pub mod cachesim;
pub mod check;
pub mod convert;
pub mod ending;
pub mod error;
pub mod export;
pub mod heap;
pub mod heph;
pub mod indexed;
pub mod input;
pub mod output;
pub mod rds;
pub mod record;
pub mod replay;
pub mod script;
pub mod sizes;
pub mod split;
pub mod stats;
mod summary;
pub mod verify;
pub mod workload;

pub use ending::{Ended, end};
pub use error::Error;
pub use input::{TraceSpec, open};
