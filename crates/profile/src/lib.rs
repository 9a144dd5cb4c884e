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

/// What the modules' tests build profiles from.
#[cfg(test)]
pub(crate) mod testing {
    use tramp_symbols::sites::SiteTotals;

    /// A stack's totals: allocations, bytes, bytes live at the end.
    pub fn totals(allocs: u64, bytes: u64, live: u64) -> SiteTotals {
        SiteTotals {
            allocs,
            bytes: u128::from(bytes),
            live_bytes: live,
            ..SiteTotals::default()
        }
    }

    /// A stack's frames, outermost first.
    pub fn stack(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|f| f.to_string()).collect()
    }
}
