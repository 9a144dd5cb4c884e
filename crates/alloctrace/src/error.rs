//! What can be wrong in an allocation trace (reported with its line, byte
//! offset and record by `tramp_core::Error::Decode`).

/// Damage in an allocation trace.
#[derive(Debug, thiserror::Error)]
pub enum AllocTraceError {
    #[error("a field is missing")]
    Missing,
    #[error("not a hexadecimal number of at most 64 bits: {0:?}")]
    Number(String),
    #[error("unknown line: {0:?}")]
    UnknownLine(String),
    #[error("a realloc's `<` line is not followed by its `>` line")]
    UnpairedRealloc,
    #[error("a caller tag without its closing `]`")]
    CallerTag,
    #[error("allocation {0} is not live (never made, or freed already)")]
    NotLive(u64),
    #[error("calloc({0}, {1}): the product passes 2^64, so calloc fails and makes no block")]
    CallocOverflow(u64, u64),
    #[error("the call ends ({1}) before it starts ({0})")]
    EndBeforeStart(u64, u64),
}
