//! `tramp export --parquet DIR`: a heap trace as three Parquet tables.

use anyhow::{Context, Result};
use tramp_core::io::{Compression, MadeDirs, Output};
use tramp_heap::{Born, HeapFlow};
use tramp_parquet::{EventRows, ExportReport, ProcessNotes, write_process, write_stacks};
use tramp_symbols::ModuleMap;

use super::InputArgs;

pub fn run(input: &InputArgs, dir: &str, json: bool) -> Result<()> {
    let paths = tramp_parquet::layout::table_paths(std::path::Path::new(dir), &input.input)?;
    // Made before the work, removed again if it fails or is interrupted
    // (dropped after the outputs below, whose temporary files they hold).
    let mut made = MadeDirs::new();
    for p in &paths {
        let d = p.parent().expect("a table directory");
        made.create(d)
            .with_context(|| format!("creating {}", d.display()))?;
    }
    let [ev, st, pr] = paths.map(|p| p.to_string_lossy().into_owned());
    // Created before the work: an output that cannot be written is refused
    // first; each is a temporary file renamed when written whole.
    let create = |p: &str| {
        Output::create(p, Some(Compression::None)).with_context(|| format!("creating {p}"))
    };
    let (ev_out, st_out, pr_out) = (create(&ev)?, create(&st)?, create(&pr)?);
    let mut o = super::open(input, false)?;
    let holds = o.source.schema().domains().heap;
    o.require(
        holds,
        "export --parquet",
        "heap events (allocations, frees, reallocs)",
    )?;
    let rows = EventRows::new(ev_out, &o.name).context("starting the events table")?;
    let mut flow: HeapFlow<EventRows<Output>, Born> = HeapFlow::new(rows);
    let mut notes = ProcessNotes::new();
    let mut modules = ModuleMap::new();
    let run = o.run(&mut [&mut flow, &mut notes, &mut modules], Vec::new());
    let (ev_out, events, sites, row) = flow
        .into_analyses()
        .finish()
        .with_context(|| format!("writing {ev}"))?;
    let modules = tramp_core::Analysis::finish(modules);
    let mut row = row.noted(&notes);
    row.program = modules.program().map(str::to_string);
    row.complete = run.stop.is_none() && run.damage().is_none();
    let (st_out, stacks) = write_stacks(
        st_out,
        &sites,
        &mut modules.names(),
        modules.stack_depth > 0,
    )
    .with_context(|| format!("writing {st}"))?;
    let (pr_out, processes) =
        write_process(pr_out, &row).with_context(|| format!("writing {pr}"))?;
    for (out, p) in [(ev_out, &ev), (st_out, &st), (pr_out, &pr)] {
        out.finish().with_context(|| format!("finishing {p}"))?;
    }
    let report = ExportReport {
        events,
        stacks,
        processes,
        process: row,
    };
    made.keep();
    super::print_report(&report, json)?;
    super::end_run(
        run,
        &o,
        Some(dir),
        "; the tables hold the records before the error",
    )
}
