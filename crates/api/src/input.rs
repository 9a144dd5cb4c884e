//! A trace as a user names it — a path or `-`, a format name or none (then
//! detected), a DTD for Meta-TF traces that do not embed theirs, a TRAMP
//! format description — opened as records through
//! `tramp_formats::pipeline`. The texts a job reads besides its traces
//! (DTDs, descriptions, scripts, suppressions) are read here too, each
//! noted as an input so that no output of the job can be written over it.

use tramp_core::select::{Selected, Selection};
use tramp_core::{OpenOptions, Role, Source};
use tramp_formats::Format;
pub use tramp_formats::pipeline::Opened;
use tramp_io::Input;

use crate::Error;

/// A trace named by a user.
#[derive(Clone, Debug, Default)]
pub struct TraceSpec {
    /// A path, or `-` for stdin.
    pub path: String,
    /// A format name (`tramp formats`); `None`: detected from the content,
    /// then the name.
    pub format: Option<String>,
    /// A DTD file for Meta-TF traces that do not embed theirs.
    pub dtd: Option<String>,
    /// A TRAMP format description of the trace's layout (format
    /// `tramp-desc`).
    pub desc: Option<String>,
    /// The part of the trace to read (`--time`, `--thread`, `--pid`;
    /// docs/select.md); the default is all of it.
    pub select: Selection,
}

impl TraceSpec {
    /// A trace file read in its detected format.
    pub fn path(path: impl Into<String>) -> TraceSpec {
        TraceSpec {
            path: path.into(),
            ..TraceSpec::default()
        }
    }
}

/// An input whose format is known, not yet decoded.
pub struct Detected {
    pub input: Input,
    pub format: Format,
    pub name: String,
}

/// Opens the trace and tells its format (given, or detected).
pub fn detect(spec: &TraceSpec) -> Result<Detected, Error> {
    let input = Input::open(&spec.path).map_err(|source| Error::Open {
        path: spec.path.clone(),
        source,
    })?;
    let format = match spec.format.as_deref() {
        _ if spec.desc.is_some() => &tramp_desc::format::DESC,
        Some(f) => tramp_formats::parse(f)?,
        None => tramp_formats::detect_input(&input).map_err(|source| Error::Detect {
            path: spec.path.clone(),
            source,
        })?,
    };
    Ok(Detected {
        input,
        format,
        name: spec.path.clone(),
    })
}

impl Detected {
    /// Decodes the input as records; `ahead`: on a second core
    /// (`tramp_core::ReadAhead`). Jobs that keep that core busy themselves
    /// (a zstd output's compressor) decode on their own thread instead:
    /// three busy threads on two cores ran slower than two.
    pub fn open(self, spec: &TraceSpec, metadata: bool, ahead: bool) -> Result<Opened, Error> {
        let needs_span = spec.select.time.is_some_and(|t| t.needs_span());
        let span = if needs_span { Some(span(spec)?) } else { None };
        let window = spec.select.time.map(|t| t.resolve(span)).transpose()?;
        let opts = OpenOptions {
            metadata,
            dtd: spec.dtd.as_deref().map(read_dtd).transpose()?,
            desc: spec.desc.as_deref().map(read_desc).transpose()?,
            time_window: window,
        };
        let name = self.name;
        let mut o = tramp_formats::pipeline::open(self.input, Some(self.format), &opts, ahead)
            .map_err(|source| Error::Detect { path: name, source })?;
        if !spec.select.is_all() {
            o.source = Box::new(Selected::new(o.source, spec.select.clone(), window)?);
        }
        Ok(o)
    }
}

/// The trace's timed span in nanoseconds: the latest time of any record
/// less the first timed record's, read in a pass of its own (so a range in
/// percent needs a file, not stdin).
pub fn span(spec: &TraceSpec) -> Result<u64, Error> {
    if spec.path == "-" {
        return Err(Error::Core(tramp_core::Error::Usage(
            "--time in percent reads the trace twice: name a file, not stdin".into(),
        )));
    }
    let whole = TraceSpec {
        select: Selection::default(),
        ..spec.clone()
    };
    let mut o = open(&whole, false)?;
    let times: Vec<Option<usize>> = o
        .source
        .schema()
        .types
        .iter()
        .map(|t| t.role_index(Role::Time))
        .collect();
    let (mut first, mut last) = (None, 0u64);
    while let Some(rec) = o.source.next_record()? {
        if let Some(t) = times[rec.record_type().index].and_then(|i| rec.int(i)) {
            let t = t as u64;
            first.get_or_insert(t);
            last = last.max(t);
        }
    }
    Ok(first.map_or(0, |f| last.saturating_sub(f)))
}

/// Opens the trace as records (decoded on a second core).
pub fn open(spec: &TraceSpec, metadata: bool) -> Result<Opened, Error> {
    detect(spec)?.open(spec, metadata, true)
}

/// Opens the trace as records and checks that its schema holds what the
/// job `command` works on (`holds` of its domains), saying what it needs
/// otherwise.
pub fn open_for(
    spec: &TraceSpec,
    command: &str,
    holds: impl Fn(&tramp_core::Domains) -> bool,
    needs: &str,
) -> Result<Opened, Error> {
    let o = open(spec, false)?;
    check_domains(&o, command, holds, needs)?;
    Ok(o)
}

/// Checks that an opened trace's schema holds what the job `command`
/// works on, saying what it needs otherwise.
pub fn check_domains(
    o: &Opened,
    command: &str,
    holds: impl Fn(&tramp_core::Domains) -> bool,
    needs: &str,
) -> Result<(), Error> {
    let domains = o.source.schema().domains();
    if !holds(&domains) {
        return Err(Error::NotApplicable(format!(
            "{} ({}) holds {}: `tramp {command}` needs {needs}",
            o.name,
            o.format,
            domains.describe()
        )));
    }
    Ok(())
}

/// A text file a job reads besides its traces (a script, suppressions):
/// a path, or `-` for stdin. Noted as an input.
pub fn read_text(path: &str, what: &'static str) -> Result<String, Error> {
    use std::io::Read;
    let text_error = |source| Error::Text {
        what,
        path: path.to_string(),
        source,
    };
    let mut text = String::new();
    if path == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|source| Error::Text {
                what,
                path: "from stdin".to_string(),
                source,
            })?;
        return Ok(text);
    }
    tramp_io::note_input(path).map_err(text_error)?;
    std::fs::read_to_string(path).map_err(text_error)
}

/// A TRAMP format description's text, checked.
pub fn read_desc(path: &str) -> Result<String, Error> {
    let text = read_text(path, "the description")?;
    if let Err(d) = tramp_desc::parse(&text) {
        return Err(Error::Description {
            path: path.to_string(),
            diagnostics: tramp_diag::render(path, &text, &[d]),
        });
    }
    Ok(text)
}

/// A DTD file's text (from disk only: DTDs are never fetched): a path or
/// `-`, compressed or not; text that is not UTF-8 is an error naming the
/// line and column.
pub fn read_dtd(path: &str) -> Result<String, Error> {
    match Input::read_text(path, "the DTD") {
        Err(tramp_core::Error::Io(source)) => Err(Error::Open {
            path: format!("the DTD {path}"),
            source,
        }),
        r => Ok(r?),
    }
}
