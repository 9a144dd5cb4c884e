//! tramp-alloctrace: allocation traces other tools write, read as heap
//! traces.
//!
//! * [`mtrace`]: glibc's `mtrace()` log (`MALLOC_TRACE=FILE` with
//!   `libc_malloc_debug.so`): allocations, frees and reallocs with real
//!   addresses and the caller of each, symbolized through module notes.
//! * [`android`]: Android malloc_debug's `record_allocs` text, read and
//!   written (threads and times; no call sites).
//! * [`weealloc`]: wee_alloc's `Alloc(n),`/`Free(k),` traces (synthetic
//!   addresses).
//! * [`tracerun`]: glibc's trace_run workload (`.wl`), written: threads
//!   replayed as threads, ordered by SYNC pairs.
//! * [`format`](mod@format): the registry entries.
//!
//! Layouts and decisions: docs/formats/mtrace.md.

pub mod android;
pub mod error;
pub mod format;
pub mod mtrace;
pub mod tracerun;
pub mod weealloc;

pub use error::AllocTraceError;
pub use mtrace::MtraceReader;
