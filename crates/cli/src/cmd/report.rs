//! `tramp report`: the heap profile as one self-contained HTML page.

use anyhow::Result;
use clap::Args;

use super::{IndexArgs, InputArgs};

/// Write a heap trace's profile as one self-contained HTML page (no
/// network; open it in any browser): a summary, memory (heap bytes, and the
/// RSS a recording sampled every 10 ms) and allocations over time, the size histogram, lifetimes, an interactive flame graph
/// (choose the cost — allocations, bytes, temporary, peak, leaked — click
/// a frame to zoom, search by name) and top-down and bottom-up tables with
/// every cost. The page is aggregated first (at most 4000 call stacks, the
/// rest merged into one row; 512 time slices), so it stays small whatever
/// the trace's length. `tramp record --report FILE` writes it after a
/// recording.
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
}

pub fn run(a: ReportArgs) -> Result<()> {
    let out = tramp_api::output::create(&a.output)?;
    let (profile, p) = tramp_api::heap::profile_of(&a.input.spec(), "report", a.index.wanted())?;
    out.write(profile.page(&p.name).html().as_bytes())?;
    let covers = "; the report covers the records before the error";
    super::end_profiled(p, covers)
}
