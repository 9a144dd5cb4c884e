//! Recording as a job: what a user asks of a recording (a command or a
//! running process, the output, stacks, sampling, the temporary-disk
//! limit, tpack's settings) checked into `tramp_record::RecordOptions`,
//! with the side outputs refused before the program runs, so that a run's
//! recording is never lost to a bad name.

use std::ffi::OsString;

use tramp_record::RecordOptions;

use crate::Error;

/// A recording as asked for.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The command to start (empty when attaching to `pid`).
    pub command: Vec<OsString>,
    /// A running process to attach to.
    pub pid: Option<u32>,
    /// The trace to write; `None`: named after the program.
    pub output: Option<String>,
    /// Call-stack frames per event (`None`: 64, or 0 for pointer traces).
    pub stack: Option<usize>,
    /// Record loads and stores too (a `tramp cc` program).
    pub pointers: bool,
    /// Write a tpack recording's profile index (`--no-index`: not).
    pub index: bool,
    /// Record one allocation per this many bytes on average, and the seed.
    pub sample: Option<u64>,
    pub sample_seed: Option<u64>,
    /// MiB of unread log a thread may leave before it waits.
    pub temp_limit: f64,
    /// tpack's writer settings (`block=N,threads=N`).
    pub pack: Option<String>,
    /// Files written beside the trace (`--stats-out`, `--report`), with
    /// the flag that names each, checked before the program runs.
    pub side_outputs: Vec<(&'static str, String)>,
}

/// The trace's name: the one asked for, else one made from the program.
pub fn output(r: &Request) -> String {
    r.output.clone().unwrap_or_else(|| {
        tramp_record::launch::default_output(
            r.pid,
            r.command.first().map(|c| c.as_os_str()),
            r.pointers,
        )
    })
}

/// The recording's options, everything that can be refused refused.
pub fn options(r: &Request, output: &str) -> Result<RecordOptions, Error> {
    for (flag, file) in &r.side_outputs {
        tramp_record::launch::check_side_output(file, output).map_err(|source| Error::Option {
            option: format!("{flag} {file}"),
            source,
        })?;
    }
    let mut opts = RecordOptions::new(output.into());
    opts.index = r.index;
    opts.stack = r.stack.unwrap_or(if r.pointers { 0 } else { 64 });
    opts.pointers = r.pointers;
    if let Some(n) = r.sample {
        opts.set_sample(n, r.sample_seed.unwrap_or(0))?;
    }
    opts.backlog = (r.temp_limit.max(0.0) * (1u64 << 20) as f64) as u64;
    if let Some(p) = &r.pack {
        opts.set_pack(p).map_err(|source| Error::Option {
            option: "--pack".into(),
            source,
        })?;
    }
    Ok(opts)
}

/// The processes of a run, a row each (`root`: the started process's
/// statistics, already read; the others' traces are read here), when the
/// run had more than one.
pub fn processes(
    rec: &tramp_record::Recording,
    root: &tramp_heap::Report,
) -> Result<Option<tramp_heap::processes::Processes>, Error> {
    if rec.joined.is_some() {
        let spec = crate::TraceSpec::path(rec.output.to_string_lossy());
        let mut o = crate::open(&spec, false)?;
        let (stats, run) = crate::heap::trace_stats(&mut o);
        crate::end(run, &o, None, "").into_result()?;
        return Ok(match stats {
            tramp_heap::processes::TraceStats::Run(p) => Some(*p),
            tramp_heap::processes::TraceStats::One(_) => None,
        });
    }
    if rec.traces.len() < 2 {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for (i, (pid, path, st)) in rec.traces.iter().enumerate() {
        let name = path.to_string_lossy().into_owned();
        let report = match i {
            0 => root.clone(),
            _ => crate::heap::stats_of(&crate::TraceSpec::path(&name))?,
        };
        let mut row = tramp_heap::processes::ProcessRow::new(&report, None);
        row.pid = *pid;
        row.program = st.program.clone();
        row.file = Some(name);
        rows.push(row);
    }
    Ok(Some(tramp_heap::processes::Processes::new(rows)))
}

/// The most unread log a recorded thread may leave before it waits, in
/// MiB, unless asked otherwise (`--temp-limit`).
pub const TEMP_LIMIT_MIB: f64 = 32.0;

/// Records the command `r` names under the capture library `lib` (its
/// bytes: `tramp_bundled::CAPTURE_LIBRARY`), as `tramp record` does
/// without its side outputs: the recording (the program's status, the
/// traces, the notes to show) and the trace's name. The caller passes
/// signals on as it sees fit (the CLI forwards them to the program).
pub fn record(r: &Request, lib: &[u8]) -> Result<(tramp_record::Recording, String), Error> {
    let output = output(r);
    let opts = options(r, &output)?;
    let lib = tramp_record::launch::install_library(lib).map_err(|source| Error::Job {
        what: "installing the capture library",
        source,
    })?;
    let rec = tramp_record::record(&lib, &r.command, &opts).map_err(|source| Error::Job {
        what: "recording",
        source,
    })?;
    Ok((rec, output))
}
