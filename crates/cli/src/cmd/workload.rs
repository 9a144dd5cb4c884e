//! `tramp workload`: generate a synthetic workload trace.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_core::Sink;
use tramp_io::Output;

/// Generate a synthetic workload trace.
///
/// `zipf`, `uniform` and `hotspot` write request traces for cache
/// studies (libcachesim's `create_zipf_requests`, Caffeine's
/// distributions): --requests draws over --objects objects (ids 1..=N,
/// id 1 the most popular of a Zipf workload), one request of --size
/// bytes each, --rate requests per second, in the layout the output's
/// name gives: oracleGeneral (`.oracleGeneral`), csv (`.csv`) or lcs
/// (`.lcs`), next-access times filled in. `zipf` draws rank r with
/// probability ∝ r^-alpha; `hotspot` sends --share of the requests to
/// the first --hot fraction of the objects. `tramp analyze` of a Zipf
/// workload gives back its alpha (docs/analyze.md).
///
/// `oo7` models the OO7 object-database benchmark (Carey, DeWitt and
/// Naughton, 1993) as the PTF authors did with AMPS: the schema as PTF
/// format objects, the database built inside ts/te brackets, then the
/// operations named by --ops in order. Output is PTF (binary for .ptf,
/// ASCII for .ptf.txt or --to ptf-text), and always passes `tramp verify
/// --gc`. The same --seed gives the same trace.
#[derive(Args)]
pub struct WorkloadArgs {
    /// The workload: `oo7`, `zipf`, `uniform` or `hotspot`.
    workload: String,
    /// Request workloads: how many objects.
    #[arg(long, default_value_t = 100_000)]
    objects: u64,
    /// Request workloads: how many requests.
    #[arg(long, default_value_t = 1_000_000)]
    requests: u64,
    /// `zipf`: the exponent.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// `hotspot`: the hot fraction of the objects.
    #[arg(long, default_value_t = 0.2)]
    hot: f64,
    /// `hotspot`: the hot objects' share of the requests.
    #[arg(long, default_value_t = 0.8)]
    share: f64,
    /// Request workloads: each request's size in bytes.
    #[arg(long, default_value_t = 4096)]
    size: u32,
    /// Request workloads: requests per second of the trace's clock.
    #[arg(long, default_value_t = 1000)]
    rate: u64,
    /// OO7 configuration: small (NumAtomicPerComp 20, DocumentSize 2000)
    /// or medium (200, 20000); both NumConnPerAtomic 3, NumCompPerModule
    /// 500, NumAssmPerAssm 3, NumAssmLevels 7, NumCompPerAssm 3, one module.
    #[arg(long, default_value = "small")]
    config: String,
    /// Operations after the build, comma-separated, in order: t1, t2a, t2b,
    /// t2c, t3a, t3b, t3c, t6, q1 … q8, insert, delete; `all` for every
    /// one; empty for the build only.
    #[arg(long, default_value = "")]
    ops: String,
    /// Seed of the random choices (connections, components, queries).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file: for `oo7` (`-` for stdout; default oo7.ptf)
    /// compressed by extension (.zst, .gz, .xz); for request workloads
    /// its name gives the layout (default WORKLOAD.oracleGeneral).
    #[arg(short, long)]
    output: Option<String>,
    /// Output form: ptf (binary) or ptf-text (default: by extension).
    #[arg(long)]
    to: Option<String>,
}

pub fn run(a: WorkloadArgs) -> Result<()> {
    use tramp_workloads::oo7::{Config, Op};
    use tramp_workloads::requests::Distribution;
    let distribution = match a.workload.as_str() {
        "oo7" => None,
        "zipf" => Some(Distribution::Zipf { alpha: a.alpha }),
        "uniform" => Some(Distribution::Uniform),
        "hotspot" => Some(Distribution::Hotspot {
            hot: a.hot,
            share: a.share,
        }),
        w => bail!("unknown workload `{w}` (known: oo7, zipf, uniform, hotspot)"),
    };
    if let Some(d) = distribution {
        return requests(&a, d);
    }
    let output = a.output.clone().unwrap_or_else(|| "oo7.ptf".into());
    let cfg = Config::named(&a.config)
        .with_context(|| format!("unknown OO7 configuration `{}` (small or medium)", a.config))?;
    let ops = Op::parse_list(&a.ops)?;
    let to = super::output_format(&output, Some(a.to.as_deref()), &tramp_ptf::format::PTF)?;
    if to.family != tramp_ptf::format::PTF.family {
        bail!("workloads are written as PTF (ptf or ptf-text), not {to}");
    }
    let out = Output::create(&output, None).with_context(|| format!("creating {}", output))?;
    let header = tramp_core::Header {
        dtd: None,
        notes: vec![tramp_workloads::oo7::note(&cfg, a.seed, &ops)],
    };
    let ascii = to == &tramp_ptf::format::PTF_TEXT;
    let mut sink = tramp_ptf::records::PtfSink::new(out, ascii, &header.notes)?;
    let counts = tramp_workloads::oo7::generate(cfg, a.seed, &ops, &mut sink)
        .with_context(|| format!("writing {}", output))?;
    Box::new(sink)
        .finish()
        .with_context(|| format!("finishing {}", output))?;
    eprintln!("tramp: wrote {} ({counts})", output);
    Ok(())
}

/// A request workload written in the layout its output's name gives.
fn requests(a: &WorkloadArgs, d: tramp_workloads::requests::Distribution) -> Result<()> {
    use tramp_workloads::requests::Workload;
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| format!("{}.oracleGeneral", a.workload));
    let w = Workload {
        distribution: d,
        objects: a.objects,
        requests: a.requests,
        seed: a.seed,
        rate: a.rate,
    };
    let n = tramp_api::workload::write(w, a.size, &output)?;
    eprintln!(
        "tramp: wrote {output} ({n} requests over {} objects)",
        a.objects
    );
    Ok(())
}
