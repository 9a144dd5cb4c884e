//! `tramp diff`: two heap traces compared call stack by call stack.

use anyhow::{Context, Result};
use clap::Args;
use tramp_heap::HeapStats;
use tramp_symbols::ModuleMap;
use tramp_symbols::sites::{SiteCounts, SiteTotals};

use super::{InputArgs, end_run, print_report};

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
}

/// A trace read for a diff: its site totals by named call stack, the
/// opened input and how its run went.
struct Read {
    stacks: Vec<(Vec<String>, SiteTotals)>,
    opened: super::Opened,
    run: tramp_core::Run,
}

/// Reads one trace's site totals by named call stack.
fn stacks(path: &str) -> Result<Read> {
    let args = InputArgs {
        input: path.to_string(),
        format: None,
        dtd: None,
        desc: None,
    };
    let mut o = super::open(&args, false)?;
    let domains = o.source.schema().domains();
    super::require(
        &o,
        domains.heap,
        "diff",
        "heap events (allocations, frees, reallocs)",
    )?;
    let mut stats: HeapStats<SiteCounts, tramp_heap::Site> = HeapStats::with(SiteCounts::new());
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut stats, &mut modules], Vec::new());
    let (_, sites) = stats.finish_with();
    let stacks = sites.by_stack(&tramp_core::Analysis::finish(modules));
    Ok(Read {
        stacks,
        opened: o,
        run,
    })
}

pub fn run(a: DiffArgs) -> Result<()> {
    let ta = stacks(&a.a).with_context(|| format!("trace A, {}", a.a))?;
    let tb = stacks(&a.b).with_context(|| format!("trace B, {}", a.b))?;
    let diff = tramp_profile::diff::Diff::new(&ta.stacks, &tb.stacks, a.top);
    let (ra, rb) = (ta.run, tb.run);
    let complete =
        ra.stop.is_none() && ra.warning_count == 0 && rb.stop.is_none() && rb.warning_count == 0;
    print_report(
        &tramp_core::Outcome {
            report: &diff,
            complete,
            damage: ra.damage().or(rb.damage()),
        },
        a.json,
    )?;
    let covers = "; the comparison covers the records before the error";
    end_run(ra, &ta.opened, None, covers)?;
    end_run(rb, &tb.opened, None, covers)
}
