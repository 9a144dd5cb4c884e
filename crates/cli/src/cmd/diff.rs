//! `tramp diff`: two heap traces compared call stack by call stack.

use anyhow::{Context, Result};
use clap::Args;
use tramp_api::ending::outcome_of;
use tramp_api::heap;
use tramp_symbols::sites::Cost;

use super::print_report;

/// Compare two heap traces (two runs, two builds, two inputs): per call
/// stack, the change from A to B in allocations, bytes allocated,
/// temporary allocations, bytes held at each trace's heap peak and bytes
/// leaked (live at exit). Stacks are matched by their frames' function,
/// file and line, not by addresses, so builds compare; the totals of both
/// traces come first, then the stacks that changed, most changed first
/// (bytes, then peak, leaked, allocations). Recordings made with `--stack
/// N` compare whole call stacks; others, the allocating call.
///
/// If either trace is damaged, the comparison covers the records before
/// the damage, and the exit status is 1.
#[derive(Args)]
pub struct DiffArgs {
    /// Trace A (the baseline).
    a: String,
    /// Trace B.
    b: String,
    /// Print JSON instead of text (every changed stack).
    #[arg(long)]
    json: bool,
    /// How many changed stacks the text lists.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Also draw a differential flame graph (SVG): boxes as wide as their
    /// cost in B, red where it grew from A, blue where it shrank, the
    /// deeper the larger the change.
    #[arg(long, value_name = "OUT.svg")]
    flamegraph: Option<String>,
    /// The cost the flame graph draws: allocations, bytes, temporary, peak
    /// or leaked.
    #[arg(long, default_value = "bytes", value_parser = parse_cost)]
    cost: Cost,
    /// The part of each trace compared (the same for both).
    #[command(flatten)]
    select: super::SelectArgs,
    #[command(flatten)]
    index: super::IndexArgs,
}

pub fn parse_cost(s: &str) -> Result<Cost, String> {
    Cost::named(s)
        .ok_or_else(|| format!("`{s}` is not a cost (allocations, bytes, temporary, peak, leaked)"))
}

pub fn run(a: DiffArgs) -> Result<()> {
    // Created before the work: an output that cannot be written is refused
    // first.
    let svg = a
        .flamegraph
        .as_deref()
        .map(tramp_api::output::create)
        .transpose()?;
    let side = |path: &str, which: &str| {
        let spec = tramp_api::TraceSpec {
            select: a.select.selection(),
            ..tramp_api::TraceSpec::path(path)
        };
        heap::side(&spec, a.index.wanted()).with_context(|| format!("trace {which}, {path}"))
    };
    let (ta, tb) = (side(&a.a, "A")?, side(&a.b, "B")?);
    if let Some(out) = svg {
        let title = format!("{}: {} → {}", a.cost.name(), a.a, a.b);
        out.write(heap::flame_graph_diff(&title, &ta.stacks, &tb.stacks, a.cost)?.as_bytes())?;
    }
    let diff = heap::diff(&ta, &tb, a.top);
    print_report(&outcome_of(&diff, &[&ta.read.run, &tb.read.run]), a.json)?;
    let covers = "; the comparison covers the records before the error";
    super::end_profiled(ta.read, covers)?;
    super::end_profiled(tb.read, covers)
}
