//! `tramp export --parquet DIR`: a heap trace as three Parquet tables.

use anyhow::{Context, Result};
use tramp_core::io::{Compression, Output};
use tramp_heap::{Born, HeapFlow};
use tramp_parquet::{EventRows, ExportReport, ProcessNotes, write_process, write_stacks};
use tramp_symbols::ModuleMap;

use super::InputArgs;

/// `DIR/TABLE/NAME.parquet` for the three tables, the directories made.
fn paths(dir: &str, name: &str) -> Result<[String; 3]> {
    let file = format!("{name}.parquet");
    let out = ["events", "stacks", "processes"].map(|t| {
        std::path::Path::new(dir)
            .join(t)
            .join(&file)
            .to_string_lossy()
            .into_owned()
    });
    for p in &out {
        let d = std::path::Path::new(p).parent().expect("a table directory");
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    Ok(out)
}

/// The trace's file name without its extensions (`-`: `stdin`).
fn stem(input: &str) -> String {
    let name = std::path::Path::new(input)
        .file_name()
        .map_or("stdin".to_string(), |n| n.to_string_lossy().into_owned());
    let name = tramp_core::io::Compression::strip_extension(&name).to_string();
    match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s.to_string(),
        _ => name,
    }
}

pub fn run(input: &InputArgs, dir: &str, json: bool) -> Result<()> {
    let name = if input.input == "-" {
        "stdin".to_string()
    } else {
        stem(&input.input)
    };
    let [ev, st, pr] = paths(dir, &name)?;
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
    super::print_report(&report, json)?;
    super::end_run(
        run,
        &o,
        Some(dir),
        "; the tables hold the records before the error",
    )
}
