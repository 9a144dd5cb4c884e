//! `tramp workload`: generate a synthetic workload trace.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_core::Sink;
use tramp_io::Output;

/// Generate a synthetic workload trace.
///
/// `oo7` models the OO7 object-database benchmark (Carey, DeWitt and
/// Naughton, 1993) as the PTF authors did with AMPS: the schema as PTF
/// format objects, the database built inside ts/te brackets, then the
/// operations named by --ops in order. Output is PTF (binary for .ptf,
/// ASCII for .ptf.txt or --to ptf-text), and always passes `tramp verify
/// --gc`. The same --seed gives the same trace.
#[derive(Args)]
pub struct WorkloadArgs {
    /// The workload: `oo7`.
    workload: String,
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
    /// Output file (`-` for stdout); compressed by extension (.zst, .gz, .xz).
    #[arg(short, long, default_value = "oo7.ptf")]
    output: String,
    /// Output form: ptf (binary) or ptf-text (default: by extension).
    #[arg(long)]
    to: Option<String>,
}

pub fn run(a: WorkloadArgs) -> Result<()> {
    use tramp_workloads::oo7::{Config, Op};
    if a.workload != "oo7" {
        bail!("unknown workload `{}` (known: oo7)", a.workload);
    }
    let cfg = Config::named(&a.config)
        .with_context(|| format!("unknown OO7 configuration `{}` (small or medium)", a.config))?;
    let ops = Op::parse_list(&a.ops)?;
    let to = super::output_format(&a.output, Some(a.to.as_deref()), &tramp_ptf::format::PTF)?;
    if to.family != tramp_ptf::format::PTF.family {
        bail!("workloads are written as PTF (ptf or ptf-text), not {to}");
    }
    let out = Output::create(&a.output, None).with_context(|| format!("creating {}", a.output))?;
    let header = tramp_core::Header {
        dtd: None,
        notes: vec![tramp_workloads::oo7::note(&cfg, a.seed, &ops)],
    };
    let ascii = to == &tramp_ptf::format::PTF_TEXT;
    let mut sink = tramp_ptf::records::PtfSink::new(out, ascii, &header.notes)?;
    let counts = tramp_workloads::oo7::generate(cfg, a.seed, &ops, &mut sink)
        .with_context(|| format!("writing {}", a.output))?;
    Box::new(sink)
        .finish()
        .with_context(|| format!("finishing {}", a.output))?;
    eprintln!("tramp: wrote {} ({counts})", a.output);
    Ok(())
}
