//! `tramp sample`: write the built-in simulated heap trace.

use anyhow::{Context, Result};
use clap::Args;
use tramp_core::{Header, drive};
use tramp_heap::HeapStats;
use tramp_io::Output;
use tramp_io::Progress;
use tramp_workloads::sample::SampleSource;

/// Write the built-in sample heap trace and optionally print its
/// statistics: HATF (naive policy), HATF text or tpack, as the output's
/// name says (`.hatf`, `.hatf.txt`, `.tpack`; compressed by extension).
///
/// The sample simulates three threads and two heaps over a size-class
/// allocator with 64-bit addresses: skewed sizes, frees, and reallocs with
/// all four outcomes. The same seed always gives the same trace.
#[derive(Args)]
pub struct SampleArgs {
    /// Output file (`-` for stdout); compressed by extension (.zst, .gz, .xz).
    #[arg(short, long, default_value = "tramp-sample.hatf.zst")]
    output: String,
    /// Number of allocator operations to simulate.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the trace's statistics afterwards.
    #[arg(long)]
    stats: bool,
    /// With --stats: print JSON instead of text.
    #[arg(long, requires = "stats")]
    json: bool,
}

pub fn run(a: SampleArgs) -> Result<()> {
    // The name says the form: HATF, HATF text or tpack (compressed by
    // extension); a heap trace in another form is refused before any work.
    let format = super::output_format(&a.output, None, &tramp_hatf::format::HATF)?;
    if !matches!(format.name, "hatf" | "hatf-text" | "tpack") {
        anyhow::bail!(
            "{}: the sample is a heap trace, written as HATF (*.hatf), HATF text (*.hatf.txt) or tpack (*.tpack), not {}",
            a.output,
            format.name
        );
    }
    let out = Output::create(&a.output, None).with_context(|| format!("creating {}", a.output))?;
    let policy = (format.name == "hatf").then_some("naive");
    let sink = tramp_formats::create_sink(out, format, None, policy, &Header::default())?;
    let mut stats = HeapStats::new();
    let run = drive(
        &mut SampleSource::new(a.events, a.seed),
        &mut [&mut stats],
        vec![sink],
        &mut Progress::records(a.events as u64),
    );
    match run.stop {
        Some(tramp_core::Stop::Finish(e)) => {
            return Err(e).with_context(|| format!("finishing {}", a.output));
        }
        Some(e) => return Err(e).context("writing the sample"),
        None => {}
    }
    let report = stats.report();
    if a.output != "-" {
        eprintln!("tramp: wrote {} ({} records)", a.output, report.records);
    }
    if a.stats {
        super::print_report(&run.outcome(&report), a.json)?;
    }
    Ok(())
}
