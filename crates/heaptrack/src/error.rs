//! What can be wrong in a heaptrack file (each error is reported with its
//! line, byte offset and record by `tramp_core::Error::Decode`).

/// Damage in a heaptrack file.
#[derive(Debug, thiserror::Error)]
pub enum HeaptrackError {
    #[error("file version {0} (tramp reads heaptrack file versions 1 to 3)")]
    Version(u64),
    #[error("a field is missing")]
    Missing,
    #[error("not a hexadecimal number of at most 64 bits")]
    Number,
    #[error("a string of {0} bytes has only {1}")]
    ShortString(usize, usize),
    #[error("{0} index {1:#x} names nothing defined before it")]
    Index(&'static str, u64),
    #[error("unknown line kind `{0}`")]
    UnknownLine(char),
    #[error("the synthetic addresses ran out of 64 bits")]
    AddressSpace,
    #[error("a raw file's line (`x`, `m`) and an interpreted file's (`a`) in one file")]
    Mixed,
}
