//! `tramp diff`: two heap traces compared call stack by call stack.

use anyhow::{Context, Result};
use clap::Args;
use tramp_heap::HeapStats;
use tramp_symbols::ModuleMap;
use tramp_symbols::sites::{Cost, SiteCounts, SiteTotals};

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
    /// Also draw a differential flame graph (SVG): boxes as wide as their
    /// cost in B, red where it grew from A, blue where it shrank, the
    /// deeper the larger the change.
    #[arg(long, value_name = "OUT.svg")]
    flamegraph: Option<String>,
    /// The cost the flame graph draws: allocations, bytes, temporary, peak
    /// or leaked.
    #[arg(long, default_value = "bytes", value_parser = parse_cost)]
    cost: Cost,
}

fn parse_cost(s: &str) -> Result<Cost, String> {
    Cost::named(s)
        .ok_or_else(|| format!("`{s}` is not a cost (allocations, bytes, temporary, peak, leaked)"))
}

/// A trace read for a diff: its site totals by named call stack, the
/// opened input and how its run went.
struct Read {
    stacks: Vec<(Vec<String>, SiteTotals)>,
    sampling: Option<tramp_heap::sampling::Sampling>,
    opened: super::Opened,
    run: tramp_core::Run,
}

/// Reads one trace's site totals by named call stack.
fn stacks(path: &str) -> Result<Read> {
    let args = InputArgs::path(path);
    let mut o = super::open(&args, false)?;
    let domains = o.source.schema().domains();
    o.require(
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
        sampling: sites.sampling(),
        opened: o,
        run,
    })
}

pub fn run(a: DiffArgs) -> Result<()> {
    // Created before the work: an output that cannot be written is refused
    // first.
    let svg = match &a.flamegraph {
        Some(path) => Some((
            path,
            tramp_core::io::Output::create(path, Some(tramp_core::io::Compression::None))
                .with_context(|| format!("creating {path}"))?,
        )),
        None => None,
    };
    let ta = stacks(&a.a).with_context(|| format!("trace A, {}", a.a))?;
    let tb = stacks(&a.b).with_context(|| format!("trace B, {}", a.b))?;
    if let Some((path, mut out)) = svg {
        let folded = |t: &Read| {
            tramp_profile::flame::parse_folded(&tramp_symbols::sites::folded(&t.stacks, a.cost))
                .map_err(anyhow::Error::msg)
        };
        let title = format!("{}: {} → {}", a.cost.name(), a.a, a.b);
        let picture =
            tramp_profile::flame::svg_diff(&title, a.cost.unit(), &folded(&ta)?, &folded(&tb)?);
        std::io::Write::write_all(&mut out, picture.as_bytes())
            .and_then(|_| out.finish())
            .with_context(|| format!("writing {path}"))?;
    }
    let diff = tramp_profile::diff::Diff::new(&ta.stacks, &tb.stacks, a.top)
        .sampled(ta.sampling, tb.sampling);
    let (ra, rb) = (ta.run, tb.run);
    let complete =
        ra.stop.is_none() && ra.warning_count == 0 && rb.stop.is_none() && rb.warning_count == 0;
    print_report(
        &tramp_core::Outcome {
            report: &diff,
            complete,
            damage: ra.reported_damage().or(rb.reported_damage()),
        },
        a.json,
    )?;
    let covers = "; the comparison covers the records before the error";
    end_run(ra, &ta.opened, None, covers)?;
    end_run(rb, &tb.opened, None, covers)
}
