//! HATF's typed errors. They are wrapped in [`tramp_core::Error`] together
//! with the byte offset and record number where they happened.

use crate::spec::{Field, Width};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HatfError {
    #[error("unknown record tag {0} (valid tags are 0-11)")]
    UnknownTag(u8),
    #[error("unknown metadata operation {0} (1 = set fieldSize, 2 = set fieldInterpretation)")]
    UnknownOp(u8),
    #[error("unknown field code {0} (valid codes are 0-5)")]
    UnknownField(u8),
    #[error("invalid width code {0} (valid codes are 0, 1, 2, 4, 8, 9 = v1, 10 = v2)")]
    UnknownWidth(u8),
    #[error("unknown interpretation code {0} (valid codes are 0-4)")]
    UnknownInterp(u8),
    #[error("width {width} is only legal for the attributes field, not for {field}")]
    VariableWidthOnNumber { field: Field, width: Width },
    #[error("the attributes field only takes the interpretations none and default 0, not {0}")]
    AttributesInterp(String),
    #[error("record is cut short: it needs {needed} bytes but the input ends after {available}")]
    Truncated { needed: usize, available: usize },
    #[error("{field} value {value:#x} cannot be encoded: {why}")]
    DoesNotFit {
        field: Field,
        value: u64,
        why: String,
    },
    #[error("attributes of {len} bytes cannot be encoded: {why}")]
    AttributesDoNotFit { len: usize, why: String },
    #[error("comment of {0} bytes is longer than the 65535 bytes its length field holds")]
    CommentTooLong(usize),
    #[error("{0}")]
    Syntax(String),
    #[error("record type `{0}` has no HATF equivalent")]
    Unmapped(String),
}
