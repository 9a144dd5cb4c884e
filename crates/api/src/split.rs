//! A run split into a trace per process (`tramp convert --split`): one
//! pass over the run, each record sent to the trace of the process whose
//! `tramp:process` note it follows (an exec'd process's images stay in
//! one trace, as a recording of it alone has them), the records before
//! the first process note (the trace's own preamble) given to every
//! trace. The whole pass goes through the conversion audit as
//! `tramp convert` does, so a split that would lose data is refused; each
//! trace is written to a temporary file and appears, named
//! `OUT-STEM.PROGRAM.PID.EXT` as `tramp record` names a run's processes,
//! only when the run's last record is written.

use std::path::{Path, PathBuf};

use tramp_core::{Error as CoreError, Header, Record, RecordBuf, Schema, Sink};
use tramp_formats::Format;
use tramp_formats::fidelity::{self, Ledger};
use tramp_io::{Compression, Output};

use crate::Error;
use crate::input::{Opened, TraceSpec};

/// The most records a trace may hold before its first process note to be
/// split (a recording has none; a selection one).
pub const MAX_PREAMBLE: usize = 64;

/// One process's trace being written.
struct Part {
    pid: u64,
    /// The name it is written under until the split is whole.
    path: PathBuf,
    sink: Box<dyn Sink>,
    /// The program it ran last (its last command note's program).
    program: String,
}

/// The sink that routes records to a trace per process.
struct Router {
    schema: std::sync::Arc<Schema>,
    output: PathBuf,
    to: Format,
    from: Format,
    header: Header,
    compression: Option<Compression>,
    parts: Vec<Part>,
    current: Option<usize>,
    preamble: Vec<RecordBuf>,
    /// What was written (pid, final path), once finished.
    written: std::sync::Arc<std::sync::Mutex<Vec<(u64, PathBuf)>>>,
}

impl Router {
    /// The trace of `pid`, opened (and given the preamble) when new.
    fn part(&mut self, pid: u64) -> Result<usize, CoreError> {
        if let Some(i) = self.parts.iter().position(|p| p.pid == pid) {
            return Ok(i);
        }
        let path = tramp_record::launch::child_output(&self.output, "process", pid);
        let name = path.to_string_lossy().into_owned();
        let out = Output::create(&name, self.compression)?;
        let mut sink =
            tramp_formats::create_sink(out, self.to, Some(self.from), None, &self.header)
                .map_err(|e| CoreError::Usage(e.to_string()))?;
        for buf in &self.preamble {
            let ty = &self.schema.types[buf.type_index()];
            sink.write_record(&buf.as_record(ty))?;
        }
        self.parts.push(Part {
            pid,
            path,
            sink,
            program: "process".into(),
        });
        Ok(self.parts.len() - 1)
    }
}

impl Sink for Router {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), CoreError> {
        let text = match rec.record_type().kind {
            tramp_core::RecordKind::Comment => {
                rec.role(tramp_core::Role::Text).and_then(|v| v.as_bytes())
            }
            _ => None,
        };
        if let Some((pid, _)) = text.and_then(tramp_heap::images::parse_process) {
            self.current = Some(self.part(pid)?);
        }
        let Some(i) = self.current else {
            if self.preamble.len() >= MAX_PREAMBLE {
                return Err(CoreError::Usage(format!(
                    "--split: more than {MAX_PREAMBLE} records come before the first process note \
                     (tramp:process): this is not a recording of processes"
                )));
            }
            let mut buf = RecordBuf::new();
            buf.copy_from(rec);
            self.preamble.push(buf);
            return Ok(());
        };
        if let Some((args, _)) = text.and_then(tramp_heap::images::parse_command)
            && let Some(first) = args.first()
        {
            self.parts[i].program = tramp_heap::images::program_name(first).to_string();
        }
        self.parts[i].sink.write_record(rec)
    }

    fn finish(self: Box<Self>) -> Result<(), CoreError> {
        if self.parts.is_empty() {
            return Err(CoreError::Usage(
                "--split: the trace names no process (no tramp:process note): there is nothing \
                 to split it by"
                    .into(),
            ));
        }
        let mut done = Vec::new();
        for p in self.parts {
            p.sink.finish()?;
            let named = tramp_record::launch::child_output(&self.output, &p.program, p.pid);
            if named != p.path {
                std::fs::rename(&p.path, &named)?;
            }
            done.push((p.pid, named));
        }
        *self.written.lock().expect("not poisoned") = done;
        Ok(())
    }
}

/// What a split did.
pub struct Split {
    pub ledger: Ledger,
    pub run: tramp_core::Run,
    pub opened: Opened,
    /// Each process's trace, in the order the run's processes first appear.
    pub written: Vec<(u64, PathBuf)>,
}

/// Splits the run `input` into a trace per process named after `output`
/// (`x.tpack` → `x.PROGRAM.PID.tpack`), in the format `to`.
pub fn split(
    input: &TraceSpec,
    output: &str,
    to: Format,
    compression: Option<Compression>,
    lossy: bool,
) -> Result<Split, Error> {
    if output == "-" {
        return Err(Error::Invalid(
            "--split writes a file per process: name the output's file, not stdout".into(),
        ));
    }
    let mut o = crate::input::detect(input)?.open(input, true, true)?;
    let header = o.source.header().clone();
    let plan = fidelity::plan(o.source.schema(), o.format, &header, to, &header)?;
    let written = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let router = Router {
        schema: o.source.schema().clone(),
        output: Path::new(output).to_path_buf(),
        to,
        from: o.format,
        header,
        compression,
        parts: Vec::new(),
        current: None,
        preamble: Vec::new(),
        written: written.clone(),
    };
    let (audited, ledger) = fidelity::Audited::new(Box::new(router), plan, lossy);
    let run = o.run(&mut [], vec![Box::new(audited)]);
    let ledger = ledger.lock().expect("the ledger is not poisoned").clone();
    let written = std::mem::take(&mut *written.lock().expect("not poisoned"));
    Ok(Split {
        ledger,
        run,
        opened: o,
        written,
    })
}
