//! What can be wrong in a memory-access trace's line.

/// A line that does not read as the format's grammar says.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MemTraceError {
    #[error("`{0}` is not an access line (`I  ADDR,SIZE`, ` L ADDR,SIZE`, ` S …`, ` M …`)")]
    LackeyLine(String),
    #[error("`{0}` is not a din line (`LABEL ADDRESS`, LABEL 0 to 4)")]
    DinLine(String),
    #[error("`{0}` is not a hexadecimal address of at most 64 bits")]
    Address(String),
    #[error("`{0}` is not an access size (a decimal number from 1 to 65535)")]
    Size(String),
}
