//! `tramp rds`: recursive data structure profiles.

use anyhow::{Context, Result};
use clap::Args;
use tramp_core::drive;
use tramp_core::io::{Compression, Output};
use tramp_rds::analysis::RdsAnalysis;

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
    if let Some(dir) = &a.plots
        && std::path::Path::new(dir).exists()
        && !std::path::Path::new(dir).is_dir()
    {
        anyhow::bail!("--plots {dir}: that is a file; --plots names a directory for the figures");
    }
    let mut o = super::open(&a.input, false)?;
    let d = o.source.schema().domains();
    o.require(d.objects || (d.heap && d.accesses),
        "rds",
        "an object graph (PTF) or heap events with pointer loads and stores (`tramp cc`, then `tramp record --pointers`)",
    )?;
    let mut rds = RdsAnalysis::new(a.top);
    if a.gc {
        rds = rds.with_collection();
    }
    let mut modules = tramp_symbols::ModuleMap::new();
    let run = drive(
        &mut *o.source,
        &mut [&mut rds, &mut modules],
        Vec::new(),
        &mut o.progress,
    );
    let mut report = tramp_core::Analysis::finish(rds);
    // A recorded program's sites and instructions by function and line.
    let mut names = tramp_core::Analysis::finish(modules).names();
    report.name_sites(|a, is_site| {
        if is_site {
            names.site(a)
        } else {
            names.code(a)
        }
    });
    print_report(&run.outcome(&report), a.json)?;
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir).with_context(|| format!("creating the directory {dir}"))?;
        for (name, svg) in report.figures() {
            let path = std::path::Path::new(dir).join(name);
            let p = path.to_string_lossy();
            let mut out = Output::create(&p, Some(Compression::None))
                .with_context(|| format!("creating {p}"))?;
            std::io::Write::write_all(&mut out, svg.as_bytes())
                .and_then(|_| out.finish())
                .with_context(|| format!("writing {p}"))?;
        }
    }
    end_run(
        run,
        &o,
        None,
        "; the profile above covers the events before the error",
    )
}
