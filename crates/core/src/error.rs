//! Errors shared by every format: each decode error says where it happened.

use std::fmt;

/// Where in an input something happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// Byte offset from the start of the (decompressed) input.
    pub offset: u64,
    /// Zero-based number of the record that starts at `offset`.
    pub record: u64,
    /// One-based line number, for text inputs (0 when not applicable).
    pub line: u64,
}

impl Position {
    pub fn new(offset: u64, record: u64) -> Self {
        Position {
            offset,
            record,
            line: 0,
        }
    }

    pub fn with_line(mut self, line: u64) -> Self {
        self.line = line;
        self
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}, ", self.line)?;
        }
        write!(f, "byte offset {}, record {}", self.offset, self.record)
    }
}

type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The error type of sources, sinks and I/O helpers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The message is the I/O error's own (it says what failed).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Input bytes that do not decode; `source` is the format's own typed error.
    #[error("{format} input invalid at {pos}: {cause}")]
    Decode {
        format: &'static str,
        pos: Position,
        /// The format's own typed error: its text is part of this error's,
        /// and it is this error's `source` for code that walks the chain
        /// (a front end printing the chain skips a source its parent said).
        #[source]
        cause: Cause,
    },
    /// A record a sink cannot encode; `record` counts records given to the sink.
    #[error("{format} output cannot encode record {record}: {cause}")]
    Encode {
        format: &'static str,
        record: u64,
        /// The format's own typed error, as for `Decode`.
        #[source]
        cause: Cause,
    },
    /// A record lacks what a consumer needs (a field, a role, a kind).
    #[error("record type `{record_type}`: {message}")]
    Schema {
        record_type: String,
        message: String,
    },
    /// The user asked for something that does not exist or does not fit.
    #[error("{0}")]
    Usage(String),
    /// A trace's format is unknown, or cannot be told from its name or
    /// content.
    #[error("{0}")]
    Format(String),
    /// A program tramp runs (a compiler, the replay driver, the recorded
    /// command) could not be started, or failed.
    #[error("{0}")]
    Program(String),
    /// A reader or writer needs something it was not given (a DTD, a
    /// description).
    #[error("{0}")]
    Missing(String),
    /// A DTD, description or script that does not parse; the text is its
    /// rendered diagnostics.
    #[error("{0}")]
    Language(String),
    /// A running process could not be attached to, or detached from (no
    /// such process, ptrace forbidden, the debugger unable to call into
    /// it): the message says why and what would let it.
    #[error("{0}")]
    Attach(String),
}

impl Error {
    /// Builds a decode error from a format's typed error.
    pub fn decode(format: &'static str, pos: Position, source: impl Into<Cause>) -> Self {
        Error::Decode {
            format,
            pos,
            cause: source.into(),
        }
    }

    /// Builds an encode error from a format's typed error.
    pub fn encode(format: &'static str, record: u64, source: impl Into<Cause>) -> Self {
        Error::Encode {
            format,
            record,
            cause: source.into(),
        }
    }

    /// The format's typed error behind a decode or encode error.
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match self {
            Error::Decode { cause, .. } | Error::Encode { cause, .. } => Some(cause.as_ref()),
            _ => None,
        }
    }

    /// The position of a decode error.
    pub fn position(&self) -> Option<Position> {
        match self {
            Error::Decode { pos, .. } => Some(*pos),
            _ => None,
        }
    }
}
