//! `tramp run`: a script over traces in a TRAMP description or any tramp
//! format, one record at a time, with `echo` to one writer and `spit` to an
//! output.
//!
//! `spit` writes the current record in its own layout: re-encoded by the
//! description (an unchanged record gives its own bytes), or through a sink
//! of the trace's tramp format in that format's default encoding (fields
//! `update` changed set in a copy; the records read back the same).
//! `spit_int` and `spit_char` write raw bytes; with a tramp-format trace
//! they cannot be mixed with `spit`. Damage in a trace stops the records;
//! postprocess still runs on what was read, the outputs are finished, and
//! the run reports the damage (a non-zero exit).

use std::io::Write;
use std::sync::Arc;

use tramp_core::select::{Selected, Selection};
use tramp_core::{OpenOptions, Record, RecordBuf, Sink, Source, Value};
use tramp_desc::Description;
use tramp_desc::encode::Encoder;
use tramp_formats::Format;
use tramp_io::Progress;
use tramp_io::{Compression, Input, Output};

use crate::machine::{Machine, Spit, Val};
use crate::{Syntax, compile};

/// What to run.
pub struct Job<'a> {
    /// The script's text and name (for diagnostics).
    pub script: (&'a str, &'a str),
    /// A format description's text and name, if the traces are described.
    pub desc: Option<(&'a str, &'a str)>,
    /// Trace paths (`-`: stdin); none for a script with only pre- and
    /// postprocessing.
    pub traces: &'a [String],
    /// Where `spit` writes (`None`: standard output).
    pub output: Option<&'a str>,
    /// Format of tramp-format traces (default: detected).
    pub format: Option<Format>,
    /// The part of each trace to read (docs/select.md), and its time range
    /// resolved for each trace in turn (`windows[i]` for `traces[i]`).
    pub select: &'a Selection,
    pub windows: &'a [Option<(u64, u64)>],
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A script or description that does not parse: rendered diagnostics.
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Usage(String),
    // The cause is part of the message, not a `source`: printed with its
    // chain, a source would say it twice.
    #[error("{name}: {cause}")]
    Open { name: String, cause: std::io::Error },
    #[error("reading {name}: {cause}")]
    Read {
        name: String,
        cause: tramp_core::Error,
    },
    #[error(transparent)]
    Run(#[from] crate::RunError),
    #[error("writing {name}: {message}")]
    Write { name: String, message: String },
    /// The reader skipped damage and went on: the run covered every whole
    /// record around it, and the exit is not 0.
    #[error("reading {name}: {damage}")]
    Damaged {
        name: String,
        damage: tramp_core::Damage,
    },
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub records: u64,
}

/// Stack of the thread a script runs on: the parser and the interpreter
/// recurse on nesting (at most 200 levels) and procedure calls (at most
/// 1000 deep).
const STACK: usize = 512 << 20;

/// Runs a job, echoing to `out`. On damage in a trace, postprocess runs and
/// outputs are finished before the error is returned.
pub fn run(job: &Job<'_>, out: &mut (dyn Write + Send)) -> Result<Summary, Failure> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("tramp-script".into())
            .stack_size(STACK)
            .spawn_scoped(scope, || {
                let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
                let r = run_here(job, &mut buffered);
                let flushed = buffered.flush();
                match (r, flushed) {
                    (Ok(_), Err(e)) => Err(Failure::Write {
                        name: "standard output".into(),
                        message: e.to_string(),
                    }),
                    (r, _) => r,
                }
            })
            .map_err(|e| Failure::Usage(format!("starting the script's thread: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(Failure::Usage("the script's thread panicked".into())))
    })
}

fn run_here(job: &Job<'_>, out: &mut dyn Write) -> Result<Summary, Failure> {
    let desc = match job.desc {
        Some((text, name)) => {
            Some(Arc::new(tramp_desc::parse(text).map_err(|d| {
                Failure::Parse(tramp_diag::render(name, text, &[d]))
            })?))
        }
        None => None,
    };
    // Each trace: its name, its records, its progress bar, its tramp format.
    type Opened = (String, Box<dyn Source + Send>, Progress, Option<Format>);
    let mut sources: Vec<Opened> = Vec::new();
    for (i, name) in job.traces.iter().enumerate() {
        let window = job.windows.get(i).copied().flatten();
        let input = Input::open(name).map_err(|e| Failure::Open {
            name: name.clone(),
            cause: e,
        })?;
        let progress = Progress::of(&input);
        let (src, fmt): (Box<dyn Source + Send>, Option<Format>) = match &desc {
            Some(d) => {
                // Described records are decoded on the script's thread (see
                // below); the file is read on another, so that the
                // kernel's copies are not on the script's thread too
                // (compressed inputs are already decompressed on one).
                let reader: Box<dyn std::io::Read + Send> = match input.compression {
                    Compression::None => Box::new(tramp_io::Pipelined::spawn(input.reader)),
                    _ => Box::new(input.reader),
                };
                (
                    Box::new(tramp_desc::DescSource::new(d.clone(), reader)),
                    None,
                )
            }
            None => {
                let f = match job.format {
                    Some(f) => f,
                    // `tramp run` names a trace's format with --trace-format
                    // (its --format takes a description).
                    None => tramp_formats::detect_input_named(&input, "--trace-format").map_err(
                        |e| Failure::Read {
                            name: name.clone(),
                            cause: e,
                        },
                    )?,
                };
                let opts = OpenOptions {
                    time_window: window,
                    ..OpenOptions::default()
                };
                let s = (f.open)(input.reader, &opts).map_err(|e| Failure::Read {
                    name: name.clone(),
                    cause: e,
                })?;
                (s, Some(f))
            }
        };
        let src: Box<dyn Source + Send> = match job.select.is_all() {
            true => src,
            false => Box::new(Selected::new(src, job.select.clone(), window).map_err(|e| {
                Failure::Read {
                    name: name.clone(),
                    cause: e,
                }
            })?),
        };
        sources.push((name.clone(), src, progress, fmt));
    }
    let schema = match (sources.first(), &desc) {
        (Some((_, s, _, _)), _) => s.schema().as_ref().clone(),
        (None, Some(d)) => d.schema(),
        (None, None) => tramp_core::Schema::new("none"),
    };
    for (name, s, _, _) in sources.iter().skip(1) {
        let names =
            |sc: &tramp_core::Schema| sc.types.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        if names(s.schema()) != names(&schema) {
            return Err(Failure::Usage(format!(
                "{name} has other record types than {}; one run reads traces of one format",
                sources[0].0
            )));
        }
    }
    let (text, script_name) = job.script;
    let script = compile(text, Syntax::detect(text), &schema)
        .map_err(|d| Failure::Parse(tramp_diag::render(script_name, text, &[d])))?;
    if script.main.is_some() && sources.is_empty() {
        return Err(Failure::Usage(
            "the script has a main procedure, which runs on every record: give a trace".into(),
        ));
    }
    let out_name = job.output.unwrap_or("-").to_string();
    let mut spit = SpitTo::new(
        job.output,
        desc.clone(),
        sources.first().and_then(|s| s.3),
        sources.first().map(|s| s.1.header().clone()),
    );
    let labels = desc.as_ref().map(|d| {
        d.records
            .iter()
            .map(|r| r.fields.iter().map(|f| f.values.clone()).collect())
            .collect()
    });
    let mut summary = Summary::default();
    let damage = {
        let mut m = Machine::new(&script, out, Some(&mut spit));
        if let Some(l) = labels {
            m.set_labels(l);
        }
        m.preprocess()?;
        // Records of tramp formats are decoded on the second core while the
        // script runs (tramp_core::ahead), unless that core simulates the
        // buffers (crate::deferred) or there is no second core to run on.
        // Described records are decoded here:
        // their decoder costs less than handing each record to another
        // thread (Figure 4 over 10 M records: 0.39 s here, 0.52 s read
        // ahead; docs/benchmarks.md).
        let mut reading: Vec<(String, Box<dyn Source>, Progress)> = Vec::new();
        for (name, src, progress, fmt) in sources {
            let src: Box<dyn Source> = if m.simulates_apart() || fmt.is_none() {
                src
            } else {
                tramp_core::ahead::on_a_spare_core(src).map_err(|e| Failure::Read {
                    name: name.clone(),
                    cause: e,
                })?
            };
            reading.push((name, src, progress));
        }
        let mut damage = None;
        for (name, src, progress) in &mut reading {
            if !m.wants_records() {
                break;
            }
            // The driver's contract: every record before damage reaches the
            // script; damage a reader skipped lets the run go on and fails
            // at its end; damage it stops at ends the records.
            let mut main = Main {
                machine: &mut m,
                failed: None,
            };
            let run = tramp_core::drive(&mut **src, &mut [&mut main], Vec::new(), progress);
            let failed = main.failed.take();
            summary.records += run.records;
            let skipped = run.damage();
            match run.stop {
                Some(tramp_core::Stop::Read(cause)) => {
                    damage = Some(Failure::Read {
                        name: name.clone(),
                        cause,
                    });
                    break;
                }
                Some(_) => {
                    return Err(failed
                        .map(Failure::Run)
                        .unwrap_or_else(|| Failure::Usage("the script stopped".into())));
                }
                None => {}
            }
            if let Some(d) = skipped
                && damage.is_none()
            {
                damage = Some(Failure::Damaged {
                    name: name.clone(),
                    damage: d,
                });
            }
        }
        m.postprocess()?;
        damage
    };
    spit.finish().map_err(|message| Failure::Write {
        name: out_name,
        message,
    })?;
    match damage {
        Some(d) => Err(d),
        None => Ok(summary),
    }
}

/// The script's `main` procedure as the analysis the driver feeds: its
/// error is kept here whole (the driver carries a core error).
struct Main<'m, 'a> {
    machine: &'m mut Machine<'a>,
    failed: Option<crate::RunError>,
}

impl tramp_core::Analysis for Main<'_, '_> {
    type Report = ();

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), tramp_core::Error> {
        self.machine.main_boxed(rec).map_err(|e| {
            let message = e.to_string();
            self.failed = Some(*e);
            tramp_core::Error::Usage(message)
        })
    }

    fn finish(self) {}
}

/// Where `spit` goes: opened on first use.
struct SpitTo {
    path: Option<String>,
    desc: Option<Arc<Description>>,
    format: Option<Format>,
    header: Option<tramp_core::Header>,
    raw: Option<Output>,
    sink: Option<Box<dyn Sink>>,
    encoder: Encoder,
    buf: Vec<u8>,
    rec: RecordBuf,
}

impl SpitTo {
    fn new(
        path: Option<&str>,
        desc: Option<Arc<Description>>,
        format: Option<Format>,
        header: Option<tramp_core::Header>,
    ) -> SpitTo {
        SpitTo {
            path: path.map(str::to_string),
            desc,
            format,
            header,
            raw: None,
            sink: None,
            encoder: Encoder::new(),
            buf: Vec::new(),
            rec: RecordBuf::new(),
        }
    }

    fn output(&self) -> Result<Output, String> {
        let p = self.path.as_deref().unwrap_or("-");
        Output::create(
            p,
            if p == "-" {
                Some(Compression::None)
            } else {
                None
            },
        )
        .map_err(|e| format!("creating {p}: {e}"))
    }

    fn raw_out(&mut self) -> Result<&mut Output, String> {
        if self.sink.is_some() {
            return Err(
                "spit_int and spit_char write raw bytes; this run already spits records of its trace's format"
                    .into(),
            );
        }
        if self.raw.is_none() {
            self.raw = Some(self.output()?);
        }
        Ok(self.raw.as_mut().expect("opened"))
    }

    fn finish(self) -> Result<(), String> {
        if let Some(o) = self.raw {
            o.finish().map_err(|e| e.to_string())?;
        }
        if let Some(s) = self.sink {
            s.finish().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// The value an `update` gives field `i` of `rec`, or an error naming the
/// field when it does not fit the field's type (a negative number in an
/// unsigned field once became 2^64 − 1, text in a number field 0).
fn updated<'v>(rec: &Record<'_>, i: usize, v: &'v Val) -> Result<Value<'v>, String> {
    let ty = rec.record_type();
    let field = &ty.fields[i].name;
    let bad = |what: &str| {
        Err(format!(
            "update of field `{field}` of this `{}` record to {v}: {what}",
            ty.name
        ))
    };
    match (v, rec.get(i)) {
        (Val::Int(x), Some(Value::U64(_))) => match u64::try_from(*x) {
            Ok(u) => Ok(Value::U64(u)),
            Err(_) => bad("a negative number does not fit an unsigned field"),
        },
        (Val::Int(x), _) => Ok(Value::I64(*x)),
        (Val::Float(_), Some(Value::U64(_) | Value::I64(_))) => {
            bad("a float does not fit an integer field")
        }
        (Val::Float(f), _) => Ok(Value::F64(*f)),
        (Val::Str(_), Some(Value::U64(_) | Value::I64(_) | Value::F64(_))) => {
            bad("text does not fit a number field")
        }
        (Val::Str(s), _) => Ok(Value::Str(s)),
    }
}

impl Spit for SpitTo {
    fn record(&mut self, rec: &Record<'_>, updates: &[Option<Val>]) -> Result<(), String> {
        let n = rec.record_type().fields.len();
        if let Some(desc) = self.desc.clone() {
            let mut vals: Vec<Value<'_>> = (0..n)
                .map(|i| rec.get(i).unwrap_or(Value::U64(0)))
                .collect();
            for (i, u) in updates.iter().enumerate() {
                if let Some(v) = u {
                    vals[i] = updated(rec, i, v).map_err(|e| format!("spit: {e}"))?;
                }
            }
            self.buf.clear();
            self.encoder
                .encode(&desc, rec.record_type().index, &vals, &mut self.buf)
                .map_err(|e| format!("spit: {e}"))?;
            let buf = std::mem::take(&mut self.buf);
            let r = self
                .raw_out()?
                .write_all(&buf)
                .map_err(|e| format!("spit: {e}"));
            self.buf = buf;
            return r;
        }
        if self.raw.is_some() {
            return Err(
                "spit writes records; this run already wrote raw bytes (spit_int, spit_char)"
                    .into(),
            );
        }
        let Some(format) = self.format else {
            return Err("spit: no record format to write".into());
        };
        if self.sink.is_none() {
            let header = self.header.clone().unwrap_or_default();
            // Records go out in the format the output's name says (as
            // `tramp formats` lists it), else in the trace's own.
            let target = self
                .path
                .as_deref()
                .and_then(tramp_formats::from_path)
                .unwrap_or(format);
            let out = self.output()?;
            self.sink = Some(
                tramp_formats::create_sink(out, target, Some(format), None, &header)
                    .map_err(|e| e.to_string())?,
            );
        }
        let sink = self.sink.as_mut().expect("created");
        if updates.iter().all(Option::is_none) {
            return sink.write_record(rec).map_err(|e| e.to_string());
        }
        self.rec.copy_from(rec);
        for (i, u) in updates.iter().enumerate() {
            if let Some(v) = u {
                self.rec
                    .set(i, updated(rec, i, v).map_err(|e| format!("spit: {e}"))?);
            }
        }
        sink.write_record(&self.rec.as_record(rec.record_type()))
            .map_err(|e| e.to_string())
    }

    fn raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.raw_out()?
            .write_all(bytes)
            .map_err(|e| format!("spit: {e}"))
    }
}
