//! `tramp report`: the heap profile as one self-contained HTML page.

use anyhow::{Context, Result};
use clap::Args;

use super::{IndexArgs, InputArgs};

/// Write a heap trace's profile as one self-contained HTML page (no
/// network; open it in any browser). Its first screen: the command line,
/// duration, peak heap and when, peak RSS, allocations and temporary
/// allocations with their rates and what leaked, in human units, then the
/// ten allocation sites with most of the peak, the allocations, the
/// temporaries and the leaks (a click shows the site in the flame graph).
/// Then memory over time (heap bytes; the RSS a recording sampled every
/// 10 ms on its own axis) and allocations over time, the size histogram,
/// lifetimes, an interactive flame graph (choose the cost — allocations,
/// bytes, temporary, peak, leaked — click a frame to zoom, search by name,
/// frames too narrow to draw counted) and top-down and bottom-up trees
/// that fold on a click and filter by name. The page is aggregated first
/// (at most 4000 call stacks in the flame graph and trees, the rest merged
/// into one row; 512 time slices), so it stays small whatever the trace's
/// length. `tramp record --report FILE` writes it after a recording.
///
/// A drag over the memory chart chooses a time range: the flame graph,
/// the trees and the range's own top tables then show what the range made
/// (allocations, bytes, frees) or what was live at its end (a switch
/// chooses; "whole trace" goes back). Of a run of several processes
/// (docs/recording.md), a process switch shows each image's page (the 12
/// that peaked highest, the one that used the most first), above a chart
/// of every image's heap over the run's time.
///
/// With --baseline OLD, the page compares the trace with OLD instead (as
/// `tramp diff OLD TRACE`): both traces' totals and the change, the
/// differential flame graph of --cost (red grew, blue shrank), and the
/// call stacks that grew and shrank most. See docs/heap-profile.md.
///
/// A damaged trace gives a page of the records before the damage, marked
/// partial, and exit status 1.
#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    index: IndexArgs,
    /// The HTML file to write (never the input; written whole or not at
    /// all).
    #[arg(short, long, value_name = "FILE.html")]
    output: String,
    /// Compare the trace with this baseline trace (another run, build or
    /// input) instead of profiling it alone.
    #[arg(long, value_name = "OLD")]
    baseline: Option<String>,
    /// With --baseline: the cost the differential flame graph draws
    /// (allocations, bytes, temporary, peak, leaked).
    #[arg(long, default_value = "bytes", requires = "baseline", value_parser = super::diff::parse_cost)]
    cost: tramp_symbols::sites::Cost,
}

pub fn run(a: ReportArgs) -> Result<()> {
    let out = tramp_api::output::create(&a.output)?;
    if let Some(base) = &a.baseline {
        // The baseline in its detected format, the same part of it.
        let old_spec = tramp_api::TraceSpec {
            select: a.input.select.selection(),
            ..tramp_api::TraceSpec::path(base)
        };
        let side = |spec: &tramp_api::TraceSpec, which: &str| {
            tramp_api::heap::side(spec, a.index.wanted())
                .with_context(|| format!("{which}, {}", spec.path))
        };
        let new = side(&a.input.spec(), "the trace")?;
        let old = side(&old_spec, "the baseline")?;
        let names = (a.input.input.as_str(), base.as_str());
        out.write(tramp_api::heap::baseline_page(&new, &old, names, a.cost)?.as_bytes())?;
        let covers = "; the page covers the records before the error";
        super::end_profiled(new.read, covers)?;
        return super::end_profiled(old.read, covers);
    }
    let (page, p) = tramp_api::heap::report_page(&a.input.spec(), a.index.wanted())?;
    out.write(page.as_bytes())?;
    let covers = "; the report covers the records before the error";
    super::end_profiled(p, covers)
}
