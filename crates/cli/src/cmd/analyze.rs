//! `tramp analyze`: what a trace of requests is like (`tramp_analyze`).

use anyhow::{Context, Result};
use clap::Args;

use super::print_report;

/// Characterise a trace of requests as libCacheSim's traceAnalyzer does,
/// in one pass with memory bounded by its objects: requests, objects and
/// their bytes, compulsory miss ratios, mean object size by requests and
/// by objects, mean frequency, time span, reads, writes and overwrites,
/// request and object rates per window (min and max), the Zipf fit of
/// popularity (alpha, R²), the objects requested once, twice, …, and the
/// most popular objects' requests, TTLs and size changes. `--json` adds
/// the series: rates per window, popularity by rank, reuse time in real
/// and virtual time, sizes by requests and by objects (also per window),
/// the LRU stack distances (a histogram of their own, never mixed with
/// reuse time), the access pattern of one object in 10, popularity
/// decay, requests by age, object lifetimes, TTLs and size changes.
/// docs/analyze.md names every number.
///
/// Any trace `tramp cachesim` reads: libCacheSim's layouts (csv,
/// oracleGeneral, lcs, vscsi, twr), heap traces as cache lines, PTF as
/// a buffer pool, any trace with `--key`. If the trace is damaged, the
/// analysis of the requests before the damage is printed, then the
/// error, and the exit status is 1.
#[derive(Args)]
pub struct AnalyzeArgs {
    /// Trace file, or `-` for stdin.
    input: String,
    /// The layout or format (default: detected).
    #[arg(short, long)]
    format: Option<String>,
    /// The per-window series' window, in the trace's time unit (seconds
    /// for libCacheSim's layouts).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    window: u64,
    /// Print JSON (the stat block and every series) instead of text.
    #[arg(long)]
    json: bool,
    /// Write a picture of each series into this directory (SVG:
    /// rates.svg, popularity.svg, reuse.svg, size.svg, stack_distance.svg
    /// (the LRU curve), access_pattern.svg, popularity_decay.svg, age.svg,
    /// lifetime.svg, ttl.svg, size_change.svg).
    #[arg(long, value_name = "DIR", conflicts_with = "html")]
    svg: Option<String>,
    /// Write one HTML page instead: the stat block and every picture.
    #[arg(long, value_name = "FILE")]
    html: Option<String>,
    /// Fields naming objects, for traces without roles for them
    /// (`RECORD.FIELD[,RECORD.FIELD]`).
    #[arg(long, value_name = "RECORD.FIELD[,RECORD.FIELD]")]
    key: Option<String>,
    /// Cache-line bytes for heap addresses.
    #[arg(long, default_value_t = 64)]
    line: u64,
}

pub fn run(a: AnalyzeArgs) -> Result<()> {
    if a.window == 0 {
        anyhow::bail!("--window 0: a window is at least one time unit");
    }
    let mut r = tramp_api::cachesim::Request::new(a.input.clone());
    r.format = a.format.clone();
    r.key = a.key.clone();
    r.line = a.line;
    let opts = tramp_analyze::Options {
        window: a.window,
        ..Default::default()
    };
    // The pictures' files are created before the work: one that cannot be
    // written is refused first.
    let pictures = match &a.svg {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the directory {dir}"))?;
            tramp_analyze::PICTURES
                .iter()
                .map(|n| tramp_api::output::create(&format!("{dir}/{n}.svg")))
                .collect::<Result<Vec<_>, _>>()?
        }
        None => Vec::new(),
    };
    let page = match &a.html {
        Some(f) => Some(tramp_api::output::create(f)?),
        None => None,
    };
    let (analysis, damage) = tramp_api::cachesim::analyze(&r, opts)?;
    print_report(
        &tramp_api::cachesim::analyzed(&analysis, damage.as_ref()),
        a.json,
    )?;
    let name = std::path::Path::new(&a.input)
        .file_name()
        .map_or(a.input.clone(), |n| n.to_string_lossy().into_owned());
    if !pictures.is_empty() {
        for (out, svg) in pictures.into_iter().zip(analysis.svgs(&name)) {
            out.write(svg.as_bytes())?;
        }
    }
    if let Some(out) = page {
        let d = damage.as_ref().map(|e| e.to_string());
        out.write(analysis.html(&name, d.as_deref()).as_bytes())?;
    }
    match damage {
        None => Ok(()),
        Some(e) => Err(e.into()),
    }
}
