//! The heap profile's views of one trace for `tramp stats`: folded stacks
//! and flame graphs, call trees, the heap over time.

use anyhow::{Context, Result};
use tramp_heap::timeline::Timeline;
use tramp_heap::{HeapFlow, HeapStats};
use tramp_profile::tree::{Direction, Tree};
use tramp_symbols::ModuleMap;
use tramp_symbols::sites::{Cost, SiteCounts, SiteTotals};

use super::{end_run, print_report};

/// Every site's totals by named call stack, and how the run went.
fn stacks(o: &mut super::Opened) -> (Vec<(Vec<String>, SiteTotals)>, tramp_core::Run) {
    let mut stats: HeapStats<SiteCounts, tramp_heap::Site> = HeapStats::with(SiteCounts::new());
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut stats, &mut modules], Vec::new());
    let (_, sites) = stats.finish_with();
    (sites.by_stack(&tramp_core::Analysis::finish(modules)), run)
}

/// A call tree of every cost, `depth` levels shown.
pub fn tree(mut o: super::Opened, dir: Direction, depth: usize, json: bool) -> Result<()> {
    let (stacks, run) = stacks(&mut o);
    print_report(&run.outcome(&Tree::new(&stacks, dir, depth)), json)?;
    end_run(
        run,
        &o,
        None,
        "; the tree above covers the records before the error",
    )
}

/// The heap over time (48 slices in text, 512 in JSON).
pub fn timeline(mut o: super::Opened, json: bool) -> Result<()> {
    let slices = if json { 512 } else { 48 };
    let mut flow: HeapFlow<Timeline, ()> = HeapFlow::new(Timeline::new(slices));
    let run = o.run(&mut [&mut flow], Vec::new());
    let report = tramp_core::Analysis::finish(flow);
    print_report(&run.outcome(&report), json)?;
    end_run(
        run,
        &o,
        None,
        "; the slices above cover the records before the error",
    )
}

/// Folded stacks of one cost (the heap view feeds the site totals; the
/// module map names them), printed or drawn as a flame graph.
pub fn folded(mut o: super::Opened, cost: Cost, flamegraph: Option<&str>) -> Result<()> {
    // Created before the work: an output that cannot be written (onto the
    // input, into a missing directory) is refused first.
    let svg = match flamegraph {
        Some(path) => Some((
            path,
            tramp_core::io::Output::create(path, Some(tramp_core::io::Compression::None))
                .with_context(|| format!("creating {path}"))?,
        )),
        None => None,
    };
    let (stacks, run) = stacks(&mut o);
    let text = tramp_symbols::sites::folded(&stacks, cost);
    match svg {
        None => super::print(&text)?,
        Some((path, mut out)) => {
            let stacks = tramp_profile::flame::parse_folded(&text).map_err(anyhow::Error::msg)?;
            let title = format!("{} by call stack: {}", cost.name(), o.name);
            let svg = tramp_profile::flame::svg(&title, cost.unit(), &stacks);
            std::io::Write::write_all(&mut out, svg.as_bytes())
                .and_then(|_| out.finish())
                .with_context(|| format!("writing {path}"))?;
        }
    }
    end_run(
        run,
        &o,
        None,
        "; the stacks above cover the records before the error",
    )
}
