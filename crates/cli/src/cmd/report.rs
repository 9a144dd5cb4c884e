//! `tramp report`: the heap profile as one self-contained HTML page.

use anyhow::{Context, Result};
use clap::Args;
use tramp_heap::lifetimes::Lifetimes;
use tramp_heap::timeline::Timeline;
use tramp_heap::{HeapStats, Lived};
use tramp_profile::report::{Figure, Report};
use tramp_symbols::ModuleMap;
use tramp_symbols::notes::RssSamples;
use tramp_symbols::sites::SiteCounts;

use super::{InputArgs, end_run};

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
    /// The HTML file to write (never the input; written whole or not at
    /// all).
    #[arg(short, long, value_name = "FILE.html")]
    output: String,
}

pub fn run(a: ReportArgs) -> Result<()> {
    write(&a.input, &a.output)
}

/// Reads a trace and writes its report to `output`.
pub fn write(input: &InputArgs, output: &str) -> Result<()> {
    let mut out = tramp_core::io::Output::create(output, Some(tramp_core::io::Compression::None))
        .with_context(|| format!("creating {output}"))?;
    let mut o = super::open(input, false)?;
    let domains = o.source.schema().domains();
    o.require(
        domains.heap,
        "report",
        "heap events (allocations, frees, reallocs)",
    )?;
    let mut stats: HeapStats<(SiteCounts, (Timeline, Lifetimes)), Lived> =
        HeapStats::with((SiteCounts::new(), (Timeline::new(512), Lifetimes::new())));
    let mut modules = ModuleMap::new();
    let mut rss = RssSamples::new(512);
    let run = o.run(&mut [&mut stats, &mut modules, &mut rss], Vec::new());
    let (totals, (sites, (timeline, lifetimes))) = stats.finish_with();
    let (mut stacks, merged, other) = sites.by_stack_top(
        &tramp_core::Analysis::finish(modules),
        tramp_profile::report::MAX_STACKS,
    );
    let kept = stacks.len();
    if merged > 0 {
        stacks.push((vec!["[other stacks]".to_string()], other));
    }
    use tramp_core::numbers::grouped;
    let figure = |label: &str, value: String| Figure {
        label: label.to_string(),
        value,
    };
    let mut summary = vec![
        figure("trace", format!("{} ({})", o.name, o.format)),
        figure("records", grouped(totals.records)),
        figure("allocations", grouped(totals.total_allocs)),
        figure("frees", grouped(totals.total_frees)),
        figure("reallocs", grouped(totals.total_reallocs)),
        figure("bytes allocated", grouped(totals.bytes_allocated)),
        figure(
            "peak heap (bytes live at once)",
            grouped(totals.max_live_bytes),
        ),
        figure("objects live at most", grouped(totals.max_live_objects)),
        figure(
            "temporary allocations",
            grouped(totals.temporary_allocations),
        ),
        figure(
            "leaked (live at exit)",
            format!(
                "{} bytes in {} objects",
                grouped(totals.live_bytes_at_end),
                grouped(totals.live_objects_at_end)
            ),
        ),
        figure("call stacks", grouped((kept + merged) as u64)),
    ];
    if let Some(s) = &totals.sampling {
        summary.insert(
            0,
            figure(
                "SAMPLED",
                format!(
                    "one allocation every {} bytes on average was recorded ({} in all): the \
                     figures and stacks are estimates; the heap over time and the lifetimes \
                     show the recorded blocks only",
                    s.mean_bytes, s.samples
                ),
            ),
        );
    }
    let damage = run
        .damage()
        .map(|d| d.to_string())
        .or_else(|| run.stop.as_ref().map(|s| s.to_string()));
    if let Some(d) = damage {
        summary.insert(
            0,
            figure(
                "PARTIAL",
                format!("the trace is damaged; this page covers the records before it: {d}"),
            ),
        );
    }
    let title = format!("Heap profile: {}", o.name);
    let report = Report::new(
        title,
        summary,
        timeline,
        totals.size_histogram.clone(),
        lifetimes,
        &stacks,
        merged,
    )
    .with_rss(tramp_core::Analysis::finish(rss));
    std::io::Write::write_all(&mut out, report.html().as_bytes())
        .and_then(|_| out.finish())
        .with_context(|| format!("writing {output}"))?;
    end_run(
        run,
        &o,
        None,
        "; the report covers the records before the error",
    )
}
