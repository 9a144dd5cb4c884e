//! The one error type of the contract: each variant says what was being
//! done (opening, reading, writing, which file) and carries the cause as
//! its `source`, so a front end prints the chain (`{:#}` in anyhow) or
//! raises it with the same text.

use tramp_core::Damage;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The trace could not be opened (a missing file, a bad name).
    #[error("opening {path}")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The trace's format could not be told, or its header read.
    #[error("reading {path}")]
    Detect {
        path: String,
        #[source]
        source: tramp_core::Error,
    },
    /// A file the job reads besides its trace (a script, a DTD,
    /// suppressions) could not be read.
    #[error("reading {what} {path}")]
    Text {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A text file the job reads besides its trace is malformed; the
    /// message says where.
    #[error("reading {path}: {message}")]
    Malformed { path: String, message: String },
    /// A TRAMP format description that does not parse (`diagnostics` is
    /// the rendered report, with the lines it points at).
    #[error("the description {path} does not parse")]
    Description { path: String, diagnostics: String },
    /// A script or description that does not parse (`diagnostics`: the
    /// rendered report).
    #[error("the script or description does not parse")]
    Script { diagnostics: String },
    /// A script that failed while it ran.
    #[error(transparent)]
    Failed(tramp_script::run::Failure),
    /// The trace holds nothing the job works on (a heap job on a trace of
    /// loads, say).
    #[error("{0}")]
    NotApplicable(String),
    /// Reading the trace stopped before its end; everything before the
    /// stop was delivered and reported.
    #[error("reading {trace}{covers}")]
    Read {
        /// `NAME (FORMAT)`.
        trace: String,
        covers: &'static str,
        #[source]
        source: Box<tramp_core::Error>,
    },
    /// An I/O error stopped the reading: it has no position of its own, so
    /// the record count says where.
    #[error("reading {trace}: the last whole record read was record {records}{covers}")]
    ReadIo {
        trace: String,
        records: u64,
        covers: &'static str,
        #[source]
        source: Box<tramp_core::Error>,
    },
    /// The reader skipped damage and went on: the output stands, the exit
    /// is not 0.
    #[error("reading {trace}{covers}: {damage}")]
    Damaged {
        trace: String,
        covers: &'static str,
        damage: Box<Damage>,
    },
    /// An output could not be created (onto an input, into a missing
    /// directory).
    #[error("creating {path}")]
    Create {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Writing an output failed.
    #[error("writing {path}")]
    Write {
        path: String,
        #[source]
        source: tramp_core::Error,
    },
    /// Finishing an output (its last bytes, the rename into place) failed.
    #[error("finishing {path}")]
    Finish {
        path: String,
        #[source]
        source: tramp_core::Error,
    },
    /// Reading a Heph trace's packets failed.
    #[error("reading {path}")]
    Heph {
        path: String,
        #[source]
        source: tramp_heph::HephError,
    },
    /// Reading a PTF trace's events failed.
    #[error("reading {path}")]
    Ptf {
        path: String,
        #[source]
        source: tramp_ptf::PtfError,
    },
    /// A recording's profile index differs from the profile of its events
    /// (`--verify-index`): the first field that differs.
    #[error("{path}: the profile index disagrees with the events at {field}")]
    IndexDisagrees { path: String, field: String },
    /// A value the job cannot take (a rate above 1, a cache of size 0).
    #[error("{0}")]
    Invalid(String),
    /// A cache policy or its parameters.
    #[error(transparent)]
    Policy(#[from] tramp_cachesim::policy::spec::SpecError),
    /// Reading a trace as cache requests.
    #[error("{what}")]
    Trace {
        what: String,
        #[source]
        source: Box<tramp_cachetrace::Error>,
    },
    /// A cache-trace option (`--key` naming fields the trace lacks).
    #[error(transparent)]
    Requests(#[from] tramp_cachetrace::Error),
    /// An option's value was refused (a side output onto the trace, a
    /// malformed tpack setting).
    #[error("{option}")]
    Option {
        option: String,
        #[source]
        source: tramp_core::Error,
    },
    /// A job's own work failed (replaying: the driver could not run).
    #[error("{what}")]
    Job {
        what: &'static str,
        #[source]
        source: tramp_core::Error,
    },
    /// The job ran, and what it checks did not hold (a replay that did
    /// not do what the trace did).
    #[error("{0}")]
    Differs(String),
    #[error(transparent)]
    Core(#[from] tramp_core::Error),
}

impl Error {
    /// The underlying I/O error, if the failure was one (a closed pipe is
    /// not an error to a front end that printed into it).
    pub fn io(&self) -> Option<&std::io::Error> {
        match self {
            Error::Open { source, .. }
            | Error::Text { source, .. }
            | Error::Create { source, .. } => Some(source),
            Error::Read { source, .. } | Error::ReadIo { source, .. } => match &**source {
                tramp_core::Error::Io(e) => Some(e),
                _ => None,
            },
            Error::Write { source, .. }
            | Error::Finish { source, .. }
            | Error::Detect { source, .. }
            | Error::Core(source) => match source {
                tramp_core::Error::Io(e) => Some(e),
                _ => None,
            },
            _ => None,
        }
    }
}

/// An error and its causes, `: `-separated, leaving out a cause whose text
/// its parent's already holds (a decode error says its format's own error
/// and has it as its source): what a front end shows.
pub fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut next = Some(e);
    while let Some(c) = next {
        let text = c.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        next = c.source();
    }
    out
}

/// Whether a closed pipe is the cause (`tramp dump big.hatf | head`: not
/// an error to the front end that printed into it).
pub fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(c) = next {
        let io = c.downcast_ref::<std::io::Error>().or_else(|| {
            match c.downcast_ref::<tramp_core::Error>() {
                Some(tramp_core::Error::Io(io)) => Some(io),
                _ => None,
            }
        });
        if io.is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        next = c.source();
    }
    false
}
