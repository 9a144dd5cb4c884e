//! tramp-record: recording real programs.
//!
//! * [`raw`]: the capture library's raw log (chunks of per-thread events),
//!   read with bounds checks and typed errors.
//! * [`clock`]: TSC readings mapped to ns by one line for the whole run
//!   and one monotone function per process (events are ordered by TSC).
//! * [`live`]: the logs read while they grow (read bytes given back to the
//!   file system), each process's threads merged by time with a bounded
//!   reorder window, into its trace.
//! * [`convert`]: one raw event into trace records: thread life, allocs,
//!   frees, reallocs with the right outcome tag and their accompanying
//!   alloc/free records, sites in the attributes field, module map, call
//!   stacks and stalls in comment records.
//! * [`pointers`]: pointer traces (`--pointers`): heap events, loads and
//!   stores as Meta-TF with a built-in DTD.
//! * [`cc`]: compiling C programs with the load/store hooks the capture
//!   fills in (`tramp cc`).
//! * [`notes`]: `tramp dump`'s site notes after each allocation's line.
//! * [`launch`]: running a command under the capture library and collecting
//!   what it recorded.
//! * [`attach`]: recording a running process (gdb loads the library, which
//!   redirects the GOT entries of every loaded module).

pub mod attach;
pub mod cc;
pub mod clock;
pub mod convert;
pub mod join;
pub mod launch;
pub mod live;
pub mod notes;
pub mod pointers;
pub mod raw;
pub mod replay;

pub use convert::ConvertStats;
pub use launch::{RecordOptions, Recording, record};
