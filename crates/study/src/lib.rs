//! tramp-study: the HATF paper's evaluation (§3) reproduced on any heap
//! trace. The paper compares HATF with a "Simple Binary" form, an ASCII
//! form, "Split Stream" and "HATF SplitAddr" (Table 4), times reading and
//! writing them (Tables 5 and 6), and compares HATF's size and address
//! policies (Tables 7 and 8).
//!
//! * [`content`]: the paper's content of a trace (record type, size,
//!   addresses), which every form of Table 4 holds.
//! * [`simple`], [`ascii`], [`split`]: the comparison forms, each a writer
//!   and a reader.
//! * [`splitaddr`]: HATF SplitAddr as a container of two files.
//! * [`sizes`]: the size tables (4, 7, 8), measured in one streaming pass.
//! * [`timing`]: the read/write tables (5, 6), on a prefix of the trace,
//!   with the ASCII/Perl column run by `perl`.
//!
//! docs/formats/study.md documents the forms and the decisions.

pub mod ascii;
pub mod content;
pub mod simple;
pub mod sizes;
pub mod split;
pub mod splitaddr;
pub mod timing;

pub use sizes::{Compressor, Options, SizesAnalysis, SizesReport, measure};
