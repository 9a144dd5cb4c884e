//! `tramp rds`: recursive data structure profiles.

use anyhow::Result;
use clap::Args;

use super::{InputArgs, end_run, print_report};

/// Profile the recursive data structures of a trace (Raman and August's
/// RDS profiling): heap objects are nodes and pointer stores between them
/// edges; an RDS type is a strongly connected component of the static
/// shape graph (allocation sites, or PTF format objects, as nodes), an
/// instance a connected component of objects of one type.
///
/// Inputs: PTF traces (creation, edge writes and reads, deletion) and heap
/// traces with loads and stores (pointer captures). Prints the paper's
/// Table 3 row (types, instances, forward and backward edges by object
/// age, average size in edges, average lifetime as a share of the run,
/// pointer-chasing loads and their average latency in the seed's Table 1
/// cache hierarchy), a table per type (sites, instances; with --json also
/// the static instructions that create, traverse and free its edges) and
/// the top instances (nodes, edges, lifetime, loads,
/// latency, stability factor RSF with t = 0.99, shape — list, tree, DAG,
/// cyclic — and traversal patterns: chain, sibling, other). For a
/// recorded program (`tramp cc`, `tramp record --pointers`) sites and
/// instructions are named by function and line, and each type lists the
/// code that creates, traverses and frees its edges. See docs/rds.md.
#[derive(Args)]
pub struct RdsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Instances to list (by pointer-chasing loads).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// PTF: also delete the objects the root no longer reaches, as
    /// persistence by reachability would (the collection `tramp verify --gc`
    /// simulates), so instances of collected objects end.
    #[arg(long)]
    pub gc: bool,
    /// Write Figures 5–7 (lifetime CDF, live instances over time, RSF CDF)
    /// as SVG files into DIR.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<String>,
}

pub fn run(a: RdsArgs) -> Result<()> {
    // Checked before the work: a file where the directory should be.
    if let Some(dir) = &a.plots {
        tramp_api::rds::check_figures_dir(dir)?;
    }
    let mut o = tramp_api::rds::open(&a.input.spec())?;
    let (report, run) = tramp_api::rds::profile(&mut o, a.top, a.gc);
    print_report(&run.outcome(&report), a.json)?;
    if let Some(dir) = &a.plots {
        tramp_api::rds::write_figures(&report, dir)?;
    }
    let covers = "; the profile above covers the events before the error";
    end_run(run, &o, None, covers)
}
