//! `tramp record --stats`: the statistics of a finished recording, a row
//! per process when the run had several, then the started process's in
//! full, to stderr or `--stats-out`.

use std::io::Write;

use anyhow::{Context, Result};

/// Writes the statistics of `rec` (whose started trace is `output`).
pub fn write(
    rec: &tramp_record::Recording,
    output: &str,
    sites: Option<usize>,
    json: bool,
    stats_out: Option<&str>,
) -> Result<()> {
    // Gathered, then written: to stderr, or to --stats-out through a
    // temporary file that appears only when complete. Each trace is
    // read once: the started process's full statistics give its row.
    let mut started = Vec::new();
    let mut root_report = None;
    if let Some(args) = super::record::started_trace(rec) {
        let o = super::open(&args, false)?;
        root_report = Some(super::stats::heap(o, json, sites, None, &mut started)?);
    }
    let mut text = Vec::new();
    if rec.traces.len() > 1 {
        let mut rows = Vec::new();
        for (i, (pid, path, st)) in rec.traces.iter().enumerate() {
            let name = path.to_string_lossy().into_owned();
            let report = match (i, &root_report) {
                (0, Some(r)) => r.clone(),
                _ => super::stats::heap_report(&name)?,
            };
            rows.push(tramp_heap::processes::ProcessRow::new(
                *pid,
                &st.program,
                &name,
                &report,
            ));
        }
        let table = tramp_heap::processes::Processes::new(rows);
        super::write_report(&mut text, &table, json)?;
        if !json {
            writeln!(text, "\nthe started process ({output}):")?;
        }
    }
    text.extend_from_slice(&started);
    match stats_out {
        None => std::io::stderr().lock().write_all(&text)?,
        Some(file) => {
            let mut out = tramp_core::io::Output::create(file, None)
                .with_context(|| format!("creating {file}"))?;
            out.write_all(&text)?;
            out.finish().with_context(|| format!("finishing {file}"))?;
        }
    }
    Ok(())
}
