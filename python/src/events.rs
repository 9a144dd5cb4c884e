//! A heap trace's events as Arrow record batches (the Parquet export's
//! `events` columns), streamed to Python through Arrow's C stream
//! interface: the heap view runs on a thread of its own and hands over a
//! batch at a time, so memory holds a few batches whatever the trace's
//! length. A consumer that stops early stops the read.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow_array::builder::{Int64Builder, UInt64Builder};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::Int8Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Int8Array, RecordBatch, RecordBatchReader, StringArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use tramp_parquet::{ColType, EVENTS, KINDS};

use crate::errors::{invalid, message, raise};

/// Rows per batch: large enough that a batch's fixed costs vanish, small
/// enough that a few in flight stay a few MB.
const BATCH_ROWS: usize = 1 << 18;

/// The `events` columns as an Arrow schema: `kind` dictionary-encoded
/// (a category in pandas and polars), the rest nullable integers.
fn schema(columns: &[usize]) -> SchemaRef {
    let fields: Vec<Field> = columns
        .iter()
        .map(|&c| {
            let (name, ty) = EVENTS[c];
            let ty = match ty {
                ColType::Str => {
                    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
                }
                ColType::U64 | ColType::Address => DataType::UInt64,
                ColType::I64 => DataType::Int64,
                ColType::I32 => DataType::Int32,
            };
            Field::new(name, ty, c != 0)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

enum Builder {
    Kind(Vec<i8>),
    Int(Int64Builder),
    Uint(UInt64Builder),
}

/// A batch being filled, sent when full.
struct ArrowRows {
    /// The asked columns' builders, in the asked order, each with its
    /// column number in the table.
    built: Vec<(usize, Builder)>,
    /// Where each of the table's columns is in `built`, if asked.
    slot: Vec<Option<usize>>,
    schema: SchemaRef,
    /// `kind`'s dictionary, shared by every batch.
    kinds: ArrayRef,
    rows: usize,
    tx: SyncSender<Result<RecordBatch, ArrowError>>,
}

impl ArrowRows {
    fn new(order: Vec<usize>, tx: SyncSender<Result<RecordBatch, ArrowError>>) -> ArrowRows {
        let mut slot = vec![None; EVENTS.len()];
        for (i, &c) in order.iter().enumerate() {
            slot[c] = Some(i);
        }
        ArrowRows {
            built: order.iter().map(|&c| (c, Self::builder(c))).collect(),
            slot,
            schema: schema(&order),
            kinds: Arc::new(StringArray::from(KINDS.to_vec())),
            rows: 0,
            tx,
        }
    }

    fn builder(c: usize) -> Builder {
        match EVENTS[c].1 {
            ColType::Str => Builder::Kind(Vec::with_capacity(BATCH_ROWS)),
            ColType::U64 | ColType::Address => {
                Builder::Uint(UInt64Builder::with_capacity(BATCH_ROWS))
            }
            _ => Builder::Int(Int64Builder::with_capacity(BATCH_ROWS)),
        }
    }

    /// The rows so far as a batch (none when empty).
    fn batch(&mut self) -> Option<Result<RecordBatch, ArrowError>> {
        if self.rows == 0 {
            return None;
        }
        self.rows = 0;
        let arrays: Vec<ArrayRef> = self
            .built
            .iter_mut()
            .map(|(c, b)| match std::mem::replace(b, Self::builder(*c)) {
                Builder::Kind(keys) => {
                    let keys = Int8Array::from(keys);
                    Arc::new(DictionaryArray::<Int8Type>::new(keys, self.kinds.clone())) as ArrayRef
                }
                Builder::Int(mut b) => Arc::new(b.finish()) as ArrayRef,
                Builder::Uint(mut b) => Arc::new(b.finish()) as ArrayRef,
            })
            .collect();
        Some(RecordBatch::try_new(self.schema.clone(), arrays))
    }

    /// Sends the batch; false when the consumer is gone.
    fn send(&mut self) -> bool {
        match self.batch() {
            Some(b) => self.tx.send(b).is_ok(),
            None => true,
        }
    }
}

impl tramp_parquet::Rows for ArrowRows {
    #[inline]
    fn kind(&mut self, col: usize, kind: usize) {
        if let Some((_, Builder::Kind(k))) = self.slot[col].map(|i| &mut self.built[i]) {
            k.push(kind as i8);
        }
    }
    #[inline]
    fn int(&mut self, col: usize, v: Option<i64>) {
        if let Some((_, Builder::Int(b))) = self.slot[col].map(|i| &mut self.built[i]) {
            b.append_option(v);
        }
    }
    #[inline]
    fn uint(&mut self, col: usize, v: Option<u64>) {
        if let Some((_, Builder::Uint(b))) = self.slot[col].map(|i| &mut self.built[i]) {
            b.append_option(v);
        }
    }
    #[inline]
    fn end_row(&mut self) -> Result<(), tramp_core::Error> {
        self.rows += 1;
        if self.rows == BATCH_ROWS && !self.send() {
            return Err(tramp_core::Error::Usage(
                "the events' reader was closed".into(),
            ));
        }
        Ok(())
    }
}

/// The batches as the reader Arrow's C stream wraps.
struct Batches {
    schema: SchemaRef,
    rx: Receiver<Result<RecordBatch, ArrowError>>,
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.rx.recv().ok()
    }
}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The columns asked (all when `None`), by the table's column numbers.
fn columns(asked: Option<Vec<String>>) -> PyResult<Vec<usize>> {
    let Some(asked) = asked else {
        return Ok((0..EVENTS.len()).collect());
    };
    asked
        .iter()
        .map(|a| {
            EVENTS.iter().position(|(n, _)| n == a).ok_or_else(|| {
                let names: Vec<&str> = EVENTS.iter().map(|c| c.0).collect();
                invalid(format!(
                    "no column {a:?}: the columns are {}",
                    names.join(", ")
                ))
            })
        })
        .collect()
}

/// The kinds asked, as `EventRows::of_kinds`'s bits.
fn kinds(asked: Vec<String>) -> PyResult<u8> {
    asked
        .iter()
        .try_fold(0u8, |bits, a| match KINDS.iter().position(|k| k == a) {
            Some(k) => Ok(bits | 1 << k),
            None => Err(invalid(format!(
                "no kind {a:?}: the kinds are {}",
                KINDS.join(", ")
            ))),
        })
}

/// The events of the trace `spec` as an Arrow C stream capsule
/// (`arrow_array_stream`). Errors found before the first event (no such
/// file, not a heap trace, several processes without `pid`) raise here;
/// damage later ends the stream with an error carrying tramp's message.
#[pyfunction]
#[pyo3(signature = (path, format, columns_asked, kinds_asked, pid=None, time=None))]
pub fn events_stream<'py>(
    py: Python<'py>,
    path: String,
    format: Option<String>,
    columns_asked: Option<Vec<String>>,
    kinds_asked: Vec<String>,
    pid: Option<u64>,
    time: Option<String>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let order = columns(columns_asked)?;
    let wanted = kinds(kinds_asked)?;
    let mut spec = crate::trace::spec(&path, format);
    spec.select.pid = pid;
    if let Some(t) = time {
        spec.select.time =
            Some(tramp_core::select::TimeRange::parse(&t).map_err(|e| invalid(e.to_string()))?);
    }
    let schema = schema(&order);
    let (tx, rx) = sync_channel(2);
    let (opened_tx, opened_rx) = sync_channel::<Option<tramp_api::Error>>(1);
    std::thread::Builder::new()
        .name("tramp-events".into())
        .spawn(move || produce(spec, order, wanted, tx, opened_tx))
        .map_err(|e| invalid(format!("cannot start the reading thread: {e}")))?;
    // The trace opened (or not) before the stream is handed over.
    if let Ok(Some(e)) = py.detach(move || opened_rx.recv()) {
        return Err(raise(e));
    }
    let stream = FFI_ArrowArrayStream::new(Box::new(Batches { schema, rx }));
    PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
}

/// The reading thread: the trace opened (or why not), then the heap
/// view's rows into batches, then the damage, if any, as the stream's
/// last item.
fn produce(
    spec: tramp_api::TraceSpec,
    order: Vec<usize>,
    wanted: u8,
    tx: SyncSender<Result<RecordBatch, ArrowError>>,
    opened: SyncSender<Option<tramp_api::Error>>,
) {
    let o = match tramp_api::heap::open_heap(&spec, "events") {
        Ok(o) => o,
        Err(e) => {
            let _ = opened.send(Some(e));
            return;
        }
    };
    let _ = opened.send(None);
    let rows = ArrowRows::new(order, tx);
    let (mut rows, ended) = tramp_api::export::events(o, rows, wanted, "events");
    if rows.send()
        && let Some(e) = ended.error
    {
        let _ = rows
            .tx
            .send(Err(ArrowError::ExternalError(message(&e).into())));
    }
}
