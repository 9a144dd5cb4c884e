//! A heap trace's profile in a viewer's format, as the bytes of the whole
//! file: massif's output (ms_print, massif-visualizer), DHAT's JSON (DHAT's
//! viewer) and pprof's profile.proto (`go tool pprof`, Perfetto,
//! Pyroscope). A sampled trace is refused by the formats that have no
//! place for estimates.

use tramp_core::{Analysis, Run};
use tramp_heap::images::{PerImage, choose};
use tramp_heap::{HeapFlow, HeapStats, Lived, Site};

use crate::heap::{WithStats, peak_and_image};
use tramp_profile::dhat::{Dhat, DhatCounts};
use tramp_profile::massif::{self, Held, MassifSnapshots};
use tramp_symbols::ModuleMap;
use tramp_symbols::sites::{SiteCounts, SiteTotals, stack_of};

use crate::Error;
use crate::input::{Opened, TraceSpec};

/// An export's bytes and the run that read them.
/// The bytes, the run, and which image of a run's several they are of
/// (tramp_heap::images::choose).
pub type Exported = (Vec<u8>, Run, Option<String>);

fn refuse_sampled(
    sampling: Option<tramp_heap::sampling::Sampling>,
    what: &str,
) -> Result<(), Error> {
    match sampling {
        Some(s) => Err(Error::NotApplicable(s.export_refusal(what))),
        None => Ok(()),
    }
}

fn written(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Vec<u8> {
    let mut bytes = Vec::new();
    write(&mut bytes).expect("writing into memory does not fail");
    bytes
}

/// The heap over time as massif's output.
pub fn massif(o: &mut Opened) -> Result<Exported, Error> {
    let make = || {
        let stats: HeapStats<(SiteCounts, MassifSnapshots), Site> =
            HeapStats::with((SiteCounts::new(), MassifSnapshots::new()));
        (WithStats(stats), ModuleMap::new())
    };
    let mut per = PerImage::new(make);
    let run = o.run(&mut [&mut per], Vec::new());
    let (((_, (sites, snaps)), modules), images) =
        choose(Analysis::finish(per), |((h, _), _)| peak_and_image(h));
    refuse_sampled(sites.sampling(), "massif's snapshots")?;
    // Only the stacks that held something at the peak or at the end are
    // named (a trace of a million stacks names a few).
    let rows = sites.resolved(&modules);
    let (mut names, stacks) = (modules.names(), modules.stack_depth > 0);
    let mut named = |bytes: fn(&SiteTotals) -> u64| {
        rows.iter()
            .filter(|(_, t)| bytes(t) > 0)
            .map(|(site, t)| (stack_of(&mut names, site.resolved(stacks)), bytes(t)))
            .collect::<Vec<_>>()
    };
    let (at_peak, at_end) = (named(|t| t.peak_bytes), named(|t| t.live_bytes));
    let peak: Vec<Held<'_>> = at_peak.iter().map(|(s, b)| (&s[..], *b)).collect();
    let end: Vec<Held<'_>> = at_end.iter().map(|(s, b)| (&s[..], *b)).collect();
    let cmd = modules.program().unwrap_or(&o.name).to_string();
    let text = massif::write(&cmd, &snaps.snapshots(), (snaps.peak, &peak), &end);
    Ok((text.into_bytes(), run, images))
}

/// The profile as DHAT's JSON.
pub fn dhat(o: &mut Opened) -> Result<Exported, Error> {
    let make = || {
        let stats: HeapStats<DhatCounts, Lived> = HeapStats::with(DhatCounts::new());
        (WithStats(stats), ModuleMap::new())
    };
    let mut per = PerImage::new(make);
    let run = o.run(&mut [&mut per], Vec::new());
    let (((_, counts), modules), images) =
        choose(Analysis::finish(per), |((h, _), _)| peak_and_image(h));
    refuse_sampled(counts.sampling(), "DHAT's counts")?;
    let cmd = modules.program().unwrap_or(&o.name).to_string();
    let dhat = Dhat::new(
        &counts,
        &mut modules.names(),
        modules.stack_depth > 0,
        &cmd,
        modules.pid.unwrap_or(0),
    );
    Ok((written(|out| dhat.write(out)), run, images))
}

/// The profile as pprof's profile.proto, gzip-compressed.
pub fn pprof(o: &mut Opened) -> Result<Exported, Error> {
    let (s, run) = crate::heap::sites(o);
    let rows = s.counts.resolved(&s.modules);
    let profile = tramp_profile::pprof::profile(
        &rows,
        &mut s.modules.names(),
        &s.modules.modules,
        s.counts.sampling(),
    );
    Ok((
        written(|out| tramp_profile::pprof::write(&profile, out)),
        run,
        s.images,
    ))
}

/// A heap trace as three Parquet tables under `dir` (`events`, `stacks`,
/// `processes`, one file each named after the trace). The directories are
/// made before the work and removed again if it fails; each table is a
/// temporary file renamed when written whole.
pub fn parquet(
    spec: &TraceSpec,
    dir: &str,
) -> Result<(tramp_parquet::ExportReport, Run, Opened), Error> {
    use tramp_io::{Compression, MadeDirs, Output};
    use tramp_parquet::{
        EventRows, ExportReport, ProcessNotes, Table, parquet_events, write_process, write_stacks,
    };
    let paths = tramp_parquet::layout::table_paths(std::path::Path::new(dir), &spec.path)?;
    let mut made = MadeDirs::new();
    for p in &paths {
        let d = p.parent().expect("a table directory");
        made.create(d).map_err(|source| Error::Create {
            path: d.display().to_string(),
            source,
        })?;
    }
    let [ev, st, pr] = paths.map(|p| p.to_string_lossy().into_owned());
    let create = |p: &str| {
        Output::create(p, Some(Compression::None)).map_err(|source| Error::Create {
            path: p.to_string(),
            source,
        })
    };
    let (ev_out, st_out, pr_out) = (create(&ev)?, create(&st)?, create(&pr)?);
    let mut o = crate::heap::open_heap(spec, "export --parquet")?;
    let writing = |path: &str| {
        let path = path.to_string();
        move |source| Error::Write { path, source }
    };
    let rows = EventRows::new(parquet_events(ev_out).map_err(writing(&ev))?, &o.name);
    let mut flow: HeapFlow<EventRows<Table<Output>>, tramp_heap::Born> = HeapFlow::new(rows);
    let mut notes = ProcessNotes::new();
    let mut modules = ModuleMap::new();
    // Each image comes first: an image past the first stops the run.
    let mut one = tramp_heap::images::OneImage::new("export --parquet");
    let run = o.run(
        &mut [&mut one, &mut flow, &mut notes, &mut modules],
        Vec::new(),
    );
    let (table, sites, row) = flow.into_analyses().finish();
    let (ev_out, events) = table.finish().map_err(|e| Error::Write {
        path: ev.clone(),
        source: tramp_core::Error::Io(std::io::Error::other(e)),
    })?;
    let modules = Analysis::finish(modules);
    let mut row = row.noted(&notes);
    row.program = modules.program().map(str::to_string);
    row.complete = run.stop.is_none() && run.damage().is_none();
    let depth = modules.stack_depth > 0;
    let (st_out, stacks) =
        write_stacks(st_out, &sites, &mut modules.names(), depth).map_err(writing(&st))?;
    let (pr_out, processes) = write_process(pr_out, &row).map_err(writing(&pr))?;
    for (out, p) in [(ev_out, &ev), (st_out, &st), (pr_out, &pr)] {
        out.finish().map_err(|e| Error::Finish {
            path: p.clone(),
            source: e.into(),
        })?;
    }
    made.keep();
    let report = ExportReport {
        events,
        stacks,
        processes,
        process: row,
    };
    Ok((report, run, o))
}

/// The Parquet export's `events` rows of one image of the heap trace `o`
/// (opened by `crate::heap::open_heap`), of the kinds whose bit is set
/// in `wanted` (`1 << k` for `tramp_parquet::KINDS[k]`), into any
/// [`tramp_parquet::Rows`] (the Python package's Arrow batches): the
/// rows' sink and how the read ended (the rows before any damage are all
/// there).
pub fn events<T: tramp_parquet::Rows>(
    mut o: Opened,
    rows: T,
    wanted: u8,
    job: &'static str,
) -> (T, crate::Ended) {
    let rows = tramp_parquet::EventRows::new(rows, &o.name).of_kinds(wanted);
    let mut flow: HeapFlow<tramp_parquet::EventRows<T>, tramp_heap::Born> = HeapFlow::new(rows);
    let mut one = tramp_heap::images::OneImage::new(job);
    let run = o.run(&mut [&mut one, &mut flow], Vec::new());
    let (rows, _, _) = flow.into_analyses().finish();
    let covers = "; the rows above cover the events before the error";
    (rows, crate::end(run, &o, None, covers))
}
