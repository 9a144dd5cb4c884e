//! `tramp replay`: drive a real allocator through a trace.

use anyhow::{Context, Result};
use clap::Args;

use super::{InputArgs, end_run, print_report};

/// The replay driver, compiled by build.rs and carried inside `tramp`.
static REPLAY_DRIVER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tramp-replay"));

/// Drive a real allocator through a trace's malloc/free/realloc sequence and
/// report time per operation, peak RSS, and the allocator's footprint
/// against the trace's live bytes.
///
/// The operations run in trace order (so each thread's order is kept) in a
/// separate driver process, with objects mapped to reusable slots and every
/// page of each block written once, as the traced program used its memory.
/// `--allocator` preloads another allocator into the driver (for example
/// /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 from Debian's libjemalloc2).
///
/// The report gives the time inside the allocator's calls (what the
/// per-operation times add up to) beside the driver's wall time, which also
/// reads the operation stream and touches pages; and the footprint: the
/// driver's peak RSS less its own before the first operation (both VmHWM)
/// and less its slot table.
#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    input: InputArgs,
    /// A shared library to preload into the driver (an allocator).
    #[arg(long, value_name = "LIB.so")]
    allocator: Option<String>,
    /// Do not write to the allocated memory (measures the allocator alone;
    /// RSS then shows only what the allocator itself touches).
    #[arg(long)]
    no_touch: bool,
    /// Most bytes the replay may hold live at once (the sum of the
    /// requested sizes; the allocator adds its overhead): a number with an
    /// optional K, M, G or T suffix (powers of 1024). The replay stops with
    /// an error before exceeding it. Default: half the physical memory.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    memory_limit: Option<u64>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Replay a trace whose addresses are synthetic (a heaptrack file's,
    /// made up by tramp) all the same; refused otherwise.
    #[arg(long)]
    synthetic_ok: bool,
}

/// `512M`, `4G`, `1000000`: bytes, K = 1,024 (`tramp_cachesim::units`).
fn parse_size(s: &str) -> Result<u64, String> {
    tramp_cachesim::units::parse(s, tramp_cachesim::Unit::Bytes)
}

pub fn run(a: ReplayArgs) -> Result<()> {
    let driver = tramp_record::launch::install_replayer(REPLAY_DRIVER)
        .context("installing the replay driver")?;
    let mut o = super::open(&a.input, false)?;
    if !a.synthetic_ok {
        o.refuse_synthetic("replay");
    }
    let holds = o.source.schema().domains().heap;
    super::require(
        &o,
        holds,
        "replay",
        "heap events (allocations, frees, reallocs)",
    )?;
    let allocator = match &a.allocator {
        Some(lib) => {
            let path = std::fs::canonicalize(lib).with_context(|| format!("allocator {lib}"))?;
            tramp_record::replay::check_allocator(&path)?;
            Some((lib.clone(), path))
        }
        None => None,
    };
    let opts = tramp_record::replay::ReplayOptions {
        allocator,
        no_touch: a.no_touch,
        memory_limit: a
            .memory_limit
            .unwrap_or_else(tramp_record::replay::default_memory_limit),
    };
    let (report, run) =
        tramp_record::replay::replay(&driver, &mut *o.source, &opts, &mut o.progress)
            .context("replaying")?;
    print_report(&run.outcome(&report), a.json)?;
    end_run(
        run,
        &o,
        None,
        "; the replay covers the records before the error",
    )
}
