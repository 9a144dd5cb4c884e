//! tramp-record: recording real programs.
//!
//! * [`raw`]: the capture library's raw log (chunks of per-thread events),
//!   read with bounds checks and typed errors.
//! * [`convert`]: one process's raw logs, merged across threads by time,
//!   into HATF: thread life, allocs, frees, reallocs with the right outcome
//!   tag and their accompanying alloc/free records, sites in the attributes
//!   field, module map and call stacks in comment records.
//! * [`launch`]: running a command under the capture library and collecting
//!   what it recorded.

pub mod convert;
pub mod launch;
pub mod raw;
pub mod replay;
pub mod sites;

pub use convert::{Annotation, ConvertStats, convert_process};
pub use launch::{RecordOptions, Recording, record};
