//! tramp-parquet: heap traces as Parquet tables, so that query engines
//! past one machine (DuckDB, DataFusion, Spark, Trino, Polars) read them.
//!
//! * [`table`]: one Parquet file of nullable integer and text columns,
//!   written a row group at a time (zstd pages, dictionary-encoded text).
//! * [`heap`]: the three tables of a heap trace — `events` (one row per
//!   heap event, with its object, stack and, for a free, the object's
//!   lifetime), `stacks` (one row per frame) and `processes` (one row per
//!   trace) — and the report of what was written.
//! * [`layout`]: where the three files of a trace go in an export's
//!   directory, and the refusal of files an earlier export wrote.
//!
//! Layout and decisions: docs/formats/parquet.md.

pub mod heap;
pub mod layout;
pub mod table;

pub use heap::{
    EVENTS, EventRows, ExportReport, KINDS, ProcessNotes, ProcessRow, Rows, parquet_events,
    write_process, write_stacks,
};
pub use table::{ColType, Table, TableReport};
