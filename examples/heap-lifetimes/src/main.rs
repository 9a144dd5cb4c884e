//! `heap-lifetimes TRACE [--json]`: object lifetimes of any heap trace
//! tramp reads.

use anyhow::{Context, Result, bail};
use heap_lifetimes::Lifetimes;
use tramp_core::OpenOptions;
use tramp_heap::HeapFlow;
use tramp_io::Input;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let Some(path) = args.iter().find(|a| *a != "--json") else {
        bail!("usage: heap-lifetimes TRACE [--json]");
    };
    let input = Input::open(path).with_context(|| format!("opening {path}"))?;
    let mut opened = tramp_formats::pipeline::open(input, None, &OpenOptions::default(), true)
        .with_context(|| format!("reading {path}"))?;
    // One view, one analysis: the flow is an analysis of records.
    let mut flow = HeapFlow::new(Lifetimes::default());
    let run = opened.run(&mut [&mut flow], Vec::new());
    let report = tramp_core::Analysis::finish(flow);
    print!("{}", tramp_core::render(&run.outcome(&report), json));
    if let Some(d) = run.damage() {
        bail!("{path}: {d}");
    }
    if let Some(stop) = run.stop {
        bail!("{path}: {stop}; the lifetimes above cover the records before it");
    }
    Ok(())
}
