//! What `tramp record` does after the program ends: `--stats`, the
//! statistics of the recording, a row per process when the run had
//! several, then the started process's (of a run's one file: the image
//! that used the most) in full, to stderr or
//! `--stats-out`; `--report`, its HTML report; `--check`, its budgets. The
//! started process's trace is read once for all three
//! (`tramp_api::heap::profile_of`: from the index the recording wrote).

use std::io::Write;

use anyhow::{Context, Result};
use tramp_api::indexed::IndexUse;
use tramp_api::{TraceSpec, heap};

/// What `tramp record` was asked to write after the recording.
pub struct After<'a> {
    /// The statistics, with this many sites per table if `Some`.
    pub stats: Option<Option<usize>>,
    pub json: bool,
    pub stats_out: Option<&'a str>,
    /// The HTML report's file.
    pub report: Option<&'a str>,
    /// The budgets to check (`--check`).
    pub budgets: Option<&'a tramp_profile::budget::Budgets>,
}

/// Writes what `after` asks of `rec` (whose started trace is `output`).
pub fn write(rec: &tramp_record::Recording, output: &str, after: After) -> Result<()> {
    let Some((_, path, _)) = rec.traces.first() else {
        return Ok(());
    };
    if after.stats.is_none() && after.report.is_none() && after.budgets.is_none() {
        return Ok(());
    }
    // One read, of the index the recording wrote (else of its events):
    // the whole profile serves the page and the statistics.
    let spec = TraceSpec::path(path.to_string_lossy());
    let (profile, p) = heap::profile_of(&spec, "record", IndexUse::Read)?;
    let json = after.json;
    let mut started = Vec::new();
    match after.stats {
        Some(Some(top)) => {
            let r = profile.with_sites(top, None);
            super::write_report(&mut started, &p.run.outcome(&r), json)?;
        }
        Some(None) => super::write_report(&mut started, &p.run.outcome(&profile.totals), json)?,
        None => {}
    }
    // A run's budgets hold for every image (tramp_api::check::check).
    let verdict = match (after.budgets, rec.joined) {
        (None, _) => None,
        (Some(b), Some(_)) => Some(tramp_api::check::check(&spec, b, IndexUse::Read)?.0),
        (Some(b), None) => Some(tramp_api::check::verdict(&profile, p.trace(), b)),
    };
    let root = profile.totals.clone();
    // A run's page holds every image (read again from the index: cheap).
    let page = match (after.report, rec.joined) {
        (None, _) => None,
        (Some(_), Some(_)) => Some(heap::report_page(&spec, IndexUse::Read)?.0),
        (Some(_), None) => Some(profile.page(&p.name).html()),
    };
    if after.stats.is_some() {
        let mut text = processes(rec, output, &root, json)?;
        text.append(&mut started);
        match after.stats_out {
            None => std::io::stderr().lock().write_all(&text)?,
            Some(file) => tramp_api::output::create_with(file, None)?.write(&text)?,
        }
    }
    if let (Some(file), Some(page)) = (after.report, page) {
        tramp_api::output::write_whole(file, page.as_bytes())
            .with_context(|| format!("--report {file}"))?;
        eprintln!("tramp: heap profile written to {file} (open it in a browser)");
    }
    if let Some(v) = &verdict {
        super::write_report(&mut std::io::stderr().lock(), v, false)?;
    }
    let covers = "; statistics above cover the records before the error";
    super::end_profiled(p, covers)?;
    match verdict {
        Some(v) if !v.passed() => anyhow::bail!("{output}: {}", v.why_failed()),
        _ => Ok(()),
    }
}

/// The table of processes when the run had several (`root`: the started
/// process's statistics, already read), and the heading of what follows.
fn processes(
    rec: &tramp_record::Recording,
    output: &str,
    root: &tramp_heap::Report,
    json: bool,
) -> Result<Vec<u8>> {
    let mut text = Vec::new();
    if let Some(table) = tramp_api::record::processes(rec, root)? {
        super::write_report(&mut text, &table, json)?;
        if !json {
            let which = match rec.joined {
                Some(_) => "the image that used the most, in full".to_string(),
                None => format!("the started process ({output})"),
            };
            writeln!(text, "\n{which}:")?;
        }
    }
    Ok(text)
}
