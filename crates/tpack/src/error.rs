//! What can be wrong with a tpack file.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum TpackError {
    #[error("not a tpack file (it does not start with the tpack magic)")]
    BadMagic,
    #[error("unsupported tpack version {0}")]
    Version(u8),
    #[error("block header damaged (no block magic)")]
    BlockMagic,
    #[error("block body of {0} bytes is larger than any tpack writer makes")]
    BodyTooLarge(u32),
    #[error("block checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum { stored: u32, computed: u32 },
    #[error("block cut short: {0}")]
    Truncated(&'static str),
    #[error("stream {stream}: {why}")]
    Stream { stream: &'static str, why: String },
    #[error("record {record} of the block: {why}")]
    Record { record: u64, why: String },
    #[error("cannot pack: {0}")]
    Encode(String),
    #[error("index: {0}")]
    Trailer(String),
    #[error("the block at byte {at}: {why}")]
    At { at: u64, why: Box<TpackError> },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
