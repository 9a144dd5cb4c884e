//! PTF's typed errors: each says where (line or byte offset, event number).

/// Why a PTF input or output failed.
#[derive(Debug, thiserror::Error)]
pub enum PtfError {
    #[error("I/O error at byte offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: std::io::Error,
    },
    /// A malformed line of the ASCII form.
    #[error("line {line} (byte offset {offset}): {message}")]
    Ascii {
        line: u64,
        offset: u64,
        message: String,
    },
    /// A malformed event or header of the binary form.
    #[error("byte offset {offset}, event {event}: {message}")]
    Binary {
        offset: u64,
        event: u64,
        message: String,
    },
    /// An event the writer cannot represent.
    #[error("cannot write event: {0}")]
    Write(String),
}

impl PtfError {
    /// Wraps an I/O error at `offset` (for `map_err`).
    pub fn io(offset: u64) -> impl FnOnce(std::io::Error) -> PtfError {
        move |source| PtfError::Io { offset, source }
    }
}
