//! `tramp cachesim`: cache simulation over any trace (`tramp_api::cachesim`).

use anyhow::{Context, Result};
use tramp_api::cachesim::{Request, plan, simulate};

use super::print_report;

mod args;
pub use args::CachesimArgs;

/// The library's request from the parsed flags.
fn request(a: &CachesimArgs) -> Request {
    Request {
        input: a.input.clone(),
        format: a.format.clone(),
        desc: a.desc.clone(),
        policies: a.policy.clone(),
        sizes: a.size.clone(),
        bytes: a.bytes,
        warmup: a.warmup.clone(),
        curves: a.mrc.clone(),
        shards: a.shards,
        mini_rate: a.mini_rate,
        mrc_check: a.mrc_check,
        line: a.line,
        key: a.key.clone(),
        write: a.write.clone(),
        synthetic_ok: a.synthetic_ok,
        page: a.page,
        cpu: a.cpu.clone(),
        threads: a.threads,
        picture: a.svg.is_some(),
        select: a.select.selection(),
    }
}

pub fn run(a: CachesimArgs) -> Result<()> {
    if let Some(out) = &a.emit_misses {
        let m = tramp_api::cachesim::emit_misses(&request(&a), out)?;
        return print_report(&m, a.json);
    }
    let plan = plan(&request(&a))?;
    // Created before the simulation: an output that cannot be written
    // (onto the input, into a missing directory) is refused before the work.
    let svg = a
        .svg
        .as_deref()
        .map(tramp_api::output::create)
        .transpose()?;
    let lcs = match &a.lcs {
        Some(path) => Some(
            tramp_io::FileOutput::create(path, "lcs output")
                .with_context(|| format!("creating {path}"))?,
        ),
        None => None,
    };
    let out = simulate(plan, lcs)?;
    if a.svg.as_deref() == Some("-") {
        // The SVG is stdout; the tables go beside it, to stderr.
        super::write_report(&mut std::io::stderr().lock(), &out.outcome(), a.json)?;
    } else {
        print_report(&out.outcome(), a.json)?;
    }
    if let Some(file) = svg {
        file.write(out.svg().as_bytes())?;
    }
    if let Some(fed) = &out.fed
        && !a.json
    {
        eprintln!("tramp: {fed}");
    }
    Ok(out.into_result()?)
}
