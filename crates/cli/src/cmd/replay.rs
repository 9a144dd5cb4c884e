//! `tramp replay`: drive real allocators through a trace, side by side.

use anyhow::{Context, Result};
use clap::Args;
use std::io::IsTerminal;
use tramp_record::replay::{Allocator, ReplayOptions};

use super::{InputArgs, end_run, print_report};

/// Drive real allocators through a trace's malloc/free/realloc sequence,
/// each traced thread on a thread of its own, and compare them: time in
/// the allocator's calls (total, p50 and p99 per call), wall time, peak
/// RSS and footprint over the trace's peak live bytes.
///
/// The trace is first made into a replay plan (objects mapped to reusable
/// slots; docs/formats/replay-plan.md), once. A separate driver process,
/// with each allocator preloaded, then executes it: one replay thread per
/// traced thread, started when the trace shows the thread first and ended
/// after its last operation. An operation on an object waits until every
/// earlier one on it has completed, whichever thread made it (a free after
/// its allocation; a reused slot after the free that released it): spinning,
/// then sleeping on a futex; the waits are counted. `--serial` runs every
/// operation on one thread in trace order instead. Every page of each block
/// is written once, as the traced program used its memory. Each call is
/// timed with the TSC.
///
/// Trace heaps other than heap 0 (HATF's createHeap/destroyHeap and per
/// record heap) become jemalloc arenas (mallocx) or mimalloc heaps (one
/// mi_heap per trace heap and thread) when the preloaded allocator is one
/// of those, and otherwise the default heap, as the report says.
///
/// Allocators run alternated, `--repeat` times each; the table gives
/// medians and (for time) the least and greatest. The report names each
/// allocator's library, where its malloc resolved to (checked) and its
/// version, and the allocator variables of the environment (MALLOC_*,
/// GLIBC_TUNABLES, MIMALLOC_*, MALLOC_CONF). The fidelity checks compare
/// the replay's counts (operations, per thread, peak live bytes) with the
/// trace's statistics; a difference (a free the trace put before its
/// allocation on another thread) makes the exit status 1.
#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Allocators to compare, comma-separated: `glibc` (the C library's
    /// malloc) or a shared library's path, e.g.
    /// /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 (Debian's libjemalloc2);
    /// named after the library. May be given more than once. Default:
    /// glibc.
    #[arg(long, value_name = "glibc,LIB.so,...", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    allocator: Vec<String>,
    /// A file of `name path` lines naming further allocators
    /// (mimalloc-bench's --external).
    #[arg(long, value_name = "FILE")]
    external: Option<String>,
    /// Runs per allocator, alternated with the others'.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    repeat: u16,
    /// Run every operation on one thread, in trace order.
    #[arg(long)]
    serial: bool,
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
    /// Seconds a replay thread may wait for another thread's operation
    /// before the replay is abandoned as stuck (an error).
    #[arg(long, value_name = "SECONDS", default_value_t = tramp_api::replay::WAIT_LIMIT_SECONDS)]
    wait_limit: f64,
    /// Write RSS and live bytes over the replay as SVG (one line per
    /// allocator).
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<String>,
    /// Write mimalloc-bench's result lines (`test allocator elapsed maxrss
    /// user system major-faults minor-faults`, one per run) to this file
    /// (`-`: stderr), the test named `replay-<trace>`.
    #[arg(long, value_name = "FILE")]
    bench_lines: Option<String>,
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

fn allocators(a: &ReplayArgs) -> Result<Vec<Allocator>> {
    let mut out = Vec::new();
    for list in &a.allocator {
        out.extend(Allocator::parse_list(list)?);
    }
    if let Some(f) = &a.external {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {f}"))?;
        out.extend(Allocator::parse_external(&text, f)?);
    }
    if out.is_empty() {
        out.push(Allocator::glibc());
    }
    let mut names: Vec<&str> = out.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        anyhow::bail!(
            "two allocators are named {}: name them apart in an --external file",
            w[0]
        );
    }
    Ok(out)
}

pub fn run(a: ReplayArgs) -> Result<()> {
    let driver = tramp_record::launch::install_replayer(tramp_bundled::REPLAY_DRIVER)
        .context("installing the replay driver")?;
    let opts = ReplayOptions {
        allocators: allocators(&a)?,
        repeat: usize::from(a.repeat),
        no_touch: a.no_touch,
        serial: a.serial,
        memory_limit: a
            .memory_limit
            .unwrap_or_else(tramp_record::replay::default_memory_limit),
        wait_limit: a.wait_limit,
    };
    let mut o = tramp_api::replay::open(&a.input.spec(), a.synthetic_ok)?;
    // Outputs are created before the work: one that cannot be written is
    // refused first.
    let create = |p: &Option<String>| {
        let p = p.as_deref().filter(|p| *p != "-");
        p.map(tramp_api::output::create).transpose()
    };
    let (svg, lines) = (create(&a.svg)?, create(&a.bench_lines)?);
    let terminal = std::io::stderr().is_terminal();
    let mut each = |name: &str, rep: usize, d: &tramp_record::replay::DriverReport| {
        if terminal {
            let (calls, wall) = (d.alloc_seconds, d.seconds);
            eprintln!(
                "tramp: {name}, run {}: {calls:.3} s in calls, {wall:.3} s wall",
                rep + 1
            );
        }
    };
    let (study, run) = tramp_api::replay::study(&driver, &mut o, &opts, &mut each)?;
    print_report(&run.outcome(&study), a.json)?;
    if let Some(out) = svg {
        out.write(tramp_api::replay::svg(&study, &a.input.input).as_bytes())?;
    }
    if a.bench_lines.is_some() {
        let text = tramp_api::replay::bench_lines(&study, &a.input.input);
        match lines {
            Some(out) => out.write(text.as_bytes())?,
            None => eprint!("{text}"),
        }
    }
    let covers = "; the replay covers the records before the error";
    end_run(run, &o, None, covers)?;
    Ok(tramp_api::replay::fidelity(&study)?)
}
