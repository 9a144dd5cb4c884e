//! `tramp cachesim`: cache simulation over any trace.

use anyhow::{Context, Result, bail};
use tramp_cachesim::mini::{curve_policies, log_points};
use tramp_cachesim::sim::{Curves, Options};
use tramp_cachesim::units::CacheSize;
use tramp_cachesim::{PolicySpec, Unit};
use tramp_cachetrace::{Keys, Layout, Mapping, simulate, working_set};
use tramp_core::io::{Compression, Input, Output};

use super::print_report;

mod args;
pub use args::CachesimArgs;

/// A cache size: objects counted decimally, bytes binary (see
/// `tramp_cachesim::units`); a cache needs a size above 0.
fn parse_size(s: &str, unit: Unit) -> Result<CacheSize> {
    match CacheSize::parse(s, unit) {
        Ok(CacheSize::Units(0)) => bail!("size {s:?}: a cache needs a size above 0"),
        Ok(v) => Ok(v),
        Err(e) => bail!("size {e}"),
    }
}

pub fn run(a: CachesimArgs) -> Result<()> {
    let unit = if a.bytes { Unit::Bytes } else { Unit::Objects };
    let policies = a
        .policy
        .iter()
        .map(|p| p.parse::<PolicySpec>())
        .collect::<Result<Vec<_>, _>>()?;
    let sizes = a
        .size
        .iter()
        .map(|s| parse_size(s, unit))
        .collect::<Result<Vec<_>>>()?;
    let warmup =
        CacheSize::parse(&a.warmup, Unit::Objects).map_err(|e| anyhow::anyhow!("--warmup {e}"))?;
    let (exact_lru, mini) = curve_policies(a.mrc.as_deref().unwrap_or_default())?;
    if let Some(r) = a.shards
        && !(r > 0.0 && r <= 1.0)
    {
        bail!("--shards {r}: the sampling rate must be above 0 and at most 1");
    }
    if !(a.mini_rate > 0.0 && a.mini_rate <= 1.0) {
        bail!(
            "--mini-rate {}: the sampling rate must be above 0 and at most 1",
            a.mini_rate
        );
    }
    if a.line == 0 || !a.line.is_power_of_two() {
        bail!("--line {}: a cache line is a power of two bytes", a.line);
    }
    let mapping = Mapping {
        line: a.line,
        keys: a
            .key
            .as_deref()
            .map(|k| Keys::parse(k, a.write.as_deref()))
            .transpose()?,
        desc: a.desc.as_deref().map(super::read_desc).transpose()?,
        synthetic_ok: a.synthetic_ok,
        page: match a.page {
            Some(0) => bail!("--page 0: a page has at least one byte"),
            p => p,
        },
    };
    let input = Input::open(&a.input).with_context(|| format!("opening {}", a.input))?;
    let layout = match &mapping.desc {
        Some(_) => Layout::Tramp(&tramp_desc::format::DESC),
        None => Layout::detect(&input, a.format.as_deref())
            .with_context(|| format!("reading {}", a.input))?,
    };
    // Fractions need the working set first: one pass more over the file.
    let census = sizes.iter().any(|s| s.is_fraction())
        || warmup.is_fraction()
        || (!mini.is_empty() && sizes.is_empty());
    let ws = match census {
        false => Default::default(),
        true if a.input == "-" => bail!(
            "sizes as fractions of the working set, a --warmup fraction and --mrc curves without --size read the trace twice: give a file, not a pipe"
        ),
        true => {
            let again = Input::open(&a.input).with_context(|| format!("opening {}", a.input))?;
            working_set(again, layout, unit, &mapping)
                .with_context(|| format!("counting the working set of {}", a.input))?
        }
    };
    let sizes: Vec<u64> = sizes.iter().map(|s| s.resolve(ws.size(unit))).collect();
    for p in &policies {
        for &s in &sizes {
            p.check_capacity(s)?;
        }
    }
    let opts = Options {
        curves: (!mini.is_empty()).then(|| Curves {
            policies: mini,
            sizes: match sizes.is_empty() {
                true => log_points(ws.size(unit), 20),
                false => sizes.clone(),
            },
            rate: a.mini_rate,
            check: a.mrc_check,
        }),
        policies,
        sizes,
        unit,
        mrc: exact_lru || a.shards.is_some() || a.svg.is_some(),
        shards: a.shards,
        future_known: false,
        cpu: a.cpu.as_deref().map(str::parse).transpose()?,
        threads: a.threads,
        warmup: match warmup {
            CacheSize::Units(n) => n,
            f => f.resolve(ws.requests),
        },
        census,
    };
    // Created before the simulation: an output that cannot be written
    // (onto the input, into a missing directory) is refused before the work.
    let svg = match &a.svg {
        Some(path) => Some(
            Output::create(path, Some(Compression::None))
                .with_context(|| format!("creating {path}"))?,
        ),
        None => None,
    };
    let lcs = match &a.lcs {
        Some(path) => Some(
            tramp_core::io::FileOutput::create(path, "lcs output")
                .with_context(|| format!("creating {path}"))?,
        ),
        None => None,
    };
    let out = simulate(input, layout, &opts, &mapping, lcs)
        .with_context(|| format!("reading {}", a.input))?;
    // No table of zeros for a trace of no request (a csv of only its
    // header, a heap trace of no heap record).
    if out.damage.is_none() && out.report.requests == 0 {
        anyhow::bail!(
            "{}: the trace holds no request: nothing to simulate",
            a.input
        );
    }
    if let Some(why) = out.report.mrc.as_ref().and_then(|m| m.refusal()) {
        anyhow::bail!("{}: {why}", a.input);
    }
    let shown = tramp_core::Outcome {
        report: &out.report,
        complete: out.damage.is_none(),
        damage: match &out.damage {
            Some(tramp_cachetrace::Error::Skipped(d)) => Some(d.clone()),
            Some(e) => Some(tramp_core::Damage::stopped(None, e.to_string())),
            None => None,
        },
    };
    if a.svg.as_deref() == Some("-") {
        // The SVG is stdout; the tables go beside it, to stderr.
        super::write_report(&mut std::io::stderr().lock(), &shown, a.json)?;
    } else {
        print_report(&shown, a.json)?;
    }
    if let (Some(path), Some(mut o)) = (&a.svg, svg) {
        let name = std::path::Path::new(&a.input)
            .file_name()
            .map_or(a.input.clone(), |n| n.to_string_lossy().into_owned());
        let title = format!("Miss ratio of {name}");
        std::io::Write::write_all(&mut o, out.report.svg(&title).as_bytes())
            .and_then(|_| o.finish())
            .with_context(|| format!("writing {path}"))?;
    }
    if let Some(fed) = &out.fed
        && !a.json
    {
        eprintln!("tramp: {fed}");
    }
    if let Some(e) = out.damage {
        return Err(e).with_context(|| {
            format!(
                "reading {}; the results above cover the {} requests before the damage",
                a.input, out.report.requests
            )
        });
    }
    Ok(())
}
