//! tramp-heaptrack: heaptrack's files in tramp.
//!
//! * [`interpreted`]: the interpreted file users have
//!   (`heaptrack.APP.PID.zst`) read as HATF items: allocations and frees
//!   with synthetic addresses (a `-` line ends the most recent live block of
//!   its size and call stack), the call tree as tramp's stack tree, the
//!   symbols heaptrack stored (inlined frames included) as tramp's stored
//!   places, RSS and the program's leak suppressions as notes; and the raw
//!   file (`heaptrack -r`): real addresses, its module map as notes for
//!   tramp's symbolizer.
//! * [`writer`]: tramp's traces written as the interpreted file.
//! * [`format`](mod@format): its entry in the format registry.
//!
//! The layout and the decisions are in docs/formats/heaptrack.md.

pub mod error;
pub mod format;
pub mod interpreted;
pub mod writer;

pub use error::HeaptrackError;
pub use interpreted::InterpretedReader;
