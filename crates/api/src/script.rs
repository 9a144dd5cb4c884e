//! A TRAMP command-language script as a job: the script and the format
//! description read (each noted as an input), the traces and the output
//! checked before the script runs (no output onto an input), then
//! `tramp_script::run`.

use tramp_core::select::Selection;
use tramp_script::run::{Failure, Job};

use crate::Error;
use crate::input::read_text;

/// A script run as asked for.
pub struct Request<'a> {
    /// The script's path (`-`: stdin).
    pub script: &'a str,
    /// A TRAMP format description's path, for described traces.
    pub desc: Option<&'a str>,
    pub traces: &'a [String],
    /// Where `spit` writes (`None`: standard output).
    pub output: Option<&'a str>,
    /// A tramp format the traces are read as (`None`: detected).
    pub format: Option<&'a str>,
    /// The part of each trace the script reads (docs/select.md): a time
    /// range counts from each trace's own first timed record.
    pub select: &'a Selection,
}

/// Runs the script, its `echo` output to `out`.
pub fn run(r: &Request, out: &mut (dyn std::io::Write + Send)) -> Result<(), Error> {
    let script = read_text(r.script, "the script")?;
    let desc = r
        .desc
        .map(|p| read_text(p, "the description"))
        .transpose()?;
    for t in r.traces {
        tramp_io::note_input(t).map_err(|source| Error::Open {
            path: t.clone(),
            source,
        })?;
    }
    if let Some(o) = r.output {
        tramp_io::Output::check_creatable(o).map_err(|source| Error::Create {
            path: o.to_string(),
            source,
        })?;
    }
    if desc.is_some() && r.format.is_some() {
        return Err(Error::Invalid(
            "--trace-format names a tramp format; a description (--format or TRAMP_FORMAT) gives the layout instead".into(),
        ));
    }
    let windows = r
        .traces
        .iter()
        .map(|t| window(r, t))
        .collect::<Result<Vec<_>, _>>()?;
    let job = Job {
        script: (&script, r.script),
        desc: desc.as_deref().zip(r.desc),
        traces: r.traces,
        output: r.output,
        format: r.format.map(tramp_formats::parse).transpose()?,
        select: r.select,
        windows: &windows,
    };
    match tramp_script::run::run(&job, out) {
        Ok(_) => Ok(()),
        Err(Failure::Parse(diagnostics)) => Err(Error::Script { diagnostics }),
        Err(e) => Err(Error::Failed(e)),
    }
}

/// The time range of the selection in trace `path`'s own nanoseconds (a
/// range in percent reads the trace's span first).
fn window(r: &Request, path: &str) -> Result<Option<(u64, u64)>, Error> {
    let Some(t) = r.select.time else {
        return Ok(None);
    };
    let span = match t.needs_span() {
        true => Some(crate::input::span(&crate::TraceSpec {
            path: path.to_string(),
            format: r.format.map(str::to_string),
            dtd: None,
            desc: r.desc.map(str::to_string),
            select: Selection::default(),
        })?),
        false => None,
    };
    Ok(Some(t.resolve(span)?))
}
