//! The heap profile's views of one trace for `tramp stats`: folded stacks
//! and flame graphs, call trees, the heap over time (`tramp_api::heap`).

use anyhow::Result;
use tramp_api::heap;
use tramp_profile::tree::Direction;
use tramp_symbols::sites::Cost;

use super::{end_run, print_report};

/// A call tree of every cost, `depth` levels shown.
pub fn tree(mut o: super::Opened, dir: Direction, depth: usize, json: bool) -> Result<()> {
    let (tree, run, images) = heap::tree(&mut o, dir, depth);
    note(images);
    print_report(&run.outcome(&tree), json)?;
    let covers = "; the tree above covers the records before the error";
    end_run(run, &o, None, covers)
}

/// The heap over time (48 slices in text, 512 in JSON).
pub fn timeline(mut o: super::Opened, json: bool) -> Result<()> {
    let (report, run, images) = heap::timeline(&mut o, if json { 512 } else { 48 });
    note(images);
    print_report(&run.outcome(&report), json)?;
    let covers = "; the slices above cover the records before the error";
    end_run(run, &o, None, covers)
}

/// Folded stacks of one cost, printed or drawn as a flame graph.
pub fn folded(mut o: super::Opened, cost: Cost, flamegraph: Option<&str>) -> Result<()> {
    // Created before the work: an output that cannot be written (onto the
    // input, into a missing directory) is refused first.
    let svg = flamegraph.map(tramp_api::output::create).transpose()?;
    let (stacks, run) = heap::stacks(&mut o);
    note(stacks.images.clone());
    match svg {
        None => super::print(&heap::folded(&stacks, cost))?,
        Some(out) => {
            let title = format!("{} by call stack: {}", cost.name(), o.name);
            out.write(heap::flame_graph(&title, &stacks, cost)?.as_bytes())?;
        }
    }
    let covers = "; the stacks above cover the records before the error";
    end_run(run, &o, None, covers)
}

/// Which image of a run's several the view is of, on stderr.
fn note(images: Option<String>) {
    if let Some(n) = images {
        eprintln!("tramp: note: {n}");
    }
}
