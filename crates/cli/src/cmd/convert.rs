//! `tramp convert`: a trace from one format to another.

use anyhow::{Context, Result};
use clap::Args;
use tramp_io::Compression;

use super::{InputArgs, end_run};

/// Convert a trace between formats: HATF binary and HATF text, Meta-TF
/// binary and Meta-TF text, PTF binary and PTF ASCII, Heph, tpack,
/// compressed or not (binary → text → binary is byte-identical for HATF,
/// Meta-TF and PTF; for tpack only with the packing the file was written
/// with, `--policy` as `tramp record` packed it: zstd-3,block=256K).
/// `tramp formats` lists the formats and the extensions that select them.
///
/// Between HATF forms the source's metadata records are kept (policy
/// `explicit`) unless `--policy` asks for a fresh encoding. A Meta-TF
/// output takes its DTD from `--dtd`, else from the input (a Meta-TF binary
/// embeds it; a Meta-TF text starts with it).
#[derive(Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output file, or `-` for stdout.
    output: String,
    /// Output format: hatf, hatf-text, metatf, metatf-text, ptf, ptf-text,
    /// heph, tpack, heaptrack, android or trace_run (default: from the
    /// output's extension, as `tramp formats` lists them; an output with no
    /// known extension needs --to; stdout is hatf unless told).
    #[arg(long)]
    to: Option<String>,
    /// HATF encoding policy (which metadata records shrink the data
    /// records; every policy decodes to the same records, rules in
    /// docs/formats/hatf.md): `explicit` keeps the input's metadata;
    /// `naive` places metadata only where values do not fit; the paper's
    /// §3.3 `small-size`, `same-size`, `combined-size` (size field),
    /// `baseoffset-1`, `baseoffset-2`, `best-baseoffset`, `stride`
    /// (addresses, 64-record look-ahead); `time-delta` and
    /// `thread-heap-runs` (fields the paper's traces lacked); `best` (the
    /// smallest of eight rule combinations, chosen per 4,096-record window).
    /// For tpack output: the stream codec, `zstd` (default, level 9),
    /// `zstd-N`, `xz`, `xz-N`, `gzip`, `gzip-N` or `raw`, optionally
    /// followed by `,block=N` (records per block, default 1M; bigger is
    /// smaller and takes more memory) and `,threads=N` (threads coding
    /// whole blocks at once, default the machine's cores up to four; the
    /// bytes are the same with any; each thread adds a block's records,
    /// 32 bytes a record, to the memory taken).
    #[arg(long)]
    policy: Option<String>,
    /// Output compression: none, zstd, gzip or xz (default: by extension).
    #[arg(long)]
    compress: Option<String>,
    /// Write even if the target cannot hold every record exactly, and say
    /// what was dropped or changed. Without it such a conversion is
    /// refused and no output appears.
    #[arg(long)]
    lossy: bool,
    /// Split a run (a recording of several processes, one file) into a
    /// trace per process: OUTPUT names them as `tramp record` names a
    /// run's processes (`-o x.tpack` → `x.PROGRAM.PID.tpack`, the program
    /// it ran last); a process that exec'd keeps its images in one trace.
    /// One pass; each trace appears only once whole.
    #[arg(long)]
    split: bool,
    /// Keep the objects SHARDS' hash keeps at RATE (0 < RATE ≤ 1; the
    /// same objects `cachesim --shards RATE` samples), every request to
    /// them, written as a request trace in the libCacheSim layout
    /// OUTPUT's name gives (`.oracleGeneral`, `.csv`, `.lcs`): it
    /// simulates as a cache scaled by RATE.
    #[arg(long, value_name = "RATE", conflicts_with_all = ["split", "split_shards", "split_time"])]
    shards: Option<f64>,
    /// With --shards: keep the sample's requests at RATE × the requests
    /// read as it goes (SHARDS' adjustment written into the trace): a
    /// request to either of the last two objects written is dropped while
    /// the sample runs ahead, the last one repeated while it lags. Such
    /// requests hit in an LRU cache of two objects or more, so mostly the
    /// hits at the smallest distances change: the sample's LRU curve
    /// tracks the trace's where a few hot objects would skew it (Twitter
    /// at 0.01: mean absolute error 0.004 against 0.156 unadjusted).
    #[arg(long, requires = "shards")]
    shards_adjust: bool,
    /// Split the requests into N request traces by the same hash of the
    /// object (each object's every request in one), named OUTPUT's stem
    /// numbered: `out.oracleGeneral` → `out.0.oracleGeneral`, ….
    #[arg(long, value_name = "N", conflicts_with_all = ["split", "split_time"])]
    split_shards: Option<u64>,
    /// Split the requests into a request trace per window of SECONDS (the
    /// trace's time unit) from the first request, numbered as
    /// --split-shards names them.
    #[arg(long, value_name = "SECONDS", conflicts_with = "split")]
    split_time: Option<u64>,
}

/// The request rewrites (`--shards`, `--split-shards`, `--split-time`).
fn rewrite(a: &ConvertArgs) -> Option<tramp_api::cachesim::Rewrite> {
    use tramp_api::cachesim::Rewrite;
    match (a.shards, a.split_shards, a.split_time) {
        (Some(r), _, _) if a.shards_adjust => Some(Rewrite::ShardsAdjusted(r)),
        (Some(r), _, _) => Some(Rewrite::Shards(r)),
        (_, Some(n), _) => Some(Rewrite::SplitShards(n)),
        (_, _, Some(w)) => Some(Rewrite::SplitTime(w)),
        _ => None,
    }
}

pub fn run(a: ConvertArgs) -> Result<()> {
    if let Some(how) = rewrite(&a) {
        let mut r = tramp_api::cachesim::Request::new(a.input.input.clone());
        r.format = a.input.format.clone();
        r.select = a.input.select.selection();
        let done = tramp_api::cachesim::rewrite(&r, how, &a.output)?;
        eprint!("tramp: {done}");
        return Ok(());
    }
    let compression = match a.compress.as_deref() {
        Some(c) => Some(
            Compression::parse(c)
                .with_context(|| format!("unknown compression `{c}` (none, zstd, gzip, xz)"))?,
        ),
        None => None,
    };
    let to = super::output_format(&a.output, Some(a.to.as_deref()), &tramp_hatf::format::HATF)?;
    if let Some(c) = compression
        && a.output != "-"
    {
        let by_name = Compression::from_path(&a.output);
        if by_name != c {
            eprintln!(
                "tramp: warning: {} is named like {} but --compress writes {}",
                a.output,
                by_name.name(),
                c.name()
            );
        }
    }
    let spec = a.input.spec();
    if a.split {
        return split(&a, &spec, to, compression);
    }
    let c = tramp_api::convert::convert(&tramp_api::convert::Request {
        input: &spec,
        output: &a.output,
        to,
        compression,
        policy: a.policy.as_deref(),
        lossy: a.lossy,
    })?;
    // Records read and written per type.
    if c.shows_ledger() {
        eprint!("{}", c.ledger);
    }
    if let Some(lost) = c.losses(to, a.lossy)? {
        eprintln!("tramp: {lost}");
    }
    end_run(c.run, &c.opened, Some(&a.output), "")
}

/// `--split`: a trace per process, each listed.
fn split(
    a: &ConvertArgs,
    spec: &tramp_api::TraceSpec,
    to: tramp_formats::Format,
    compression: Option<Compression>,
) -> Result<()> {
    let s = tramp_api::split::split(spec, &a.output, to, compression, a.lossy)?;
    if s.run.stop.is_none() && s.ledger.lost() && !a.lossy {
        anyhow::bail!(
            "refused to split {}: it would lose data in {} (--lossy writes what it can hold):\n  {}",
            s.opened.name,
            to.name,
            s.ledger.losses().join("\n  ")
        );
    }
    for (pid, path) in &s.written {
        eprintln!("tramp: pid {pid} -> {}", path.display());
    }
    end_run(s.run, &s.opened, Some(&a.output), "")
}
