//! tramp-profile: the heap profile drawn for people.
//!
//! * [`baseline`]: two profiles compared as a page (`tramp report NEW
//!   --baseline OLD`).
//! * [`budget`]: memory budgets for CI checked against a profile (`tramp
//!   check`).
//! * [`flame`]: a flame graph (SVG, self-contained) of folded stacks, for
//!   any cost `tramp stats --folded` gives.
//! * [`diff`]: two traces compared call stack by call stack (`tramp
//!   diff`).
//! * [`report`]: the whole profile as one self-contained HTML page
//!   (`tramp report`).
//! * [`tree`]: top-down and bottom-up call trees with every cost.
//! * [`dhat`]: the profile as DHAT's JSON (`tramp export --dhat`), for
//!   DHAT's viewer and the Firefox Profiler.
//! * [`massif`]: the heap over time as valgrind massif's output (`tramp
//!   export --massif`), for `ms_print` and massif-visualizer.
//! * [`pprof`]: the profile as pprof's `profile.proto` (`tramp export
//!   --pprof`), for `go tool pprof`, Perfetto and Pyroscope.

pub mod baseline;
pub mod budget;
pub mod dhat;
pub mod diff;
pub mod flame;
pub mod massif;
pub mod pprof;
pub mod report;
pub mod tree;
