//! tpack in the format registry: a [`Source`] and a [`Sink`] over HATF's
//! record schema (the heap domain), so every heap format converts to and
//! from it by the same mapping HATF uses.

use std::io::Read;
use std::sync::Arc;

use tramp_core::io::{Finish, Output};
use tramp_core::{
    CreateOptions, Domain, Error, FormatDesc, Item, Position, Record, RecordBuf, Schema, Sink,
    Sniff, Source,
};
use tramp_hatf::records::{item_to_record, record_to_item, schema};

use crate::reader::{Next, Reader};
use crate::writer::{FORMAT, Options, Writer};
use crate::{MAGIC, TpackError};

/// tpack: magic `tpack\0\x01\0`.
pub static TPACK: FormatDesc = FormatDesc {
    name: "tpack",
    family: "tpack",
    about: "tpack, tramp's packed heap trace: predicted, split, block-compressed (extension .tpack)",
    extensions: &[".tpack"],
    sniff: |head| Sniff::magic(head, &[&MAGIC[..6]]),
    domain: Domain::Heap,
    text_form: Some("hatf-text"),
    open: |input, _| Ok(Box::new(TpackSource::new(input))),
    create: |out, opts| Ok(Box::new(TpackSink::new(out, options(opts)?)?)),
};

/// `--policy` names tpack's stream codec and, optionally, its block size:
/// `zstd`, `zstd-N`, `xz`, `xz-N`, `gzip`, `gzip-N` or `raw` (default zstd
/// at level 9), then `,block=N` (records per block, default 1M).
fn options(opts: &CreateOptions<'_>) -> Result<Options, Error> {
    match opts.policy {
        None => Ok(Options::default()),
        Some(p) => Options::parse(p).ok_or_else(|| {
            Error::Usage(format!(
                "unknown tpack policy `{p}`: a codec (zstd, zstd-1 … zstd-22, xz, xz-0 … xz-9, gzip, gzip-0 … gzip-9, raw), optionally followed by ,block=N (records per block, 1 … 16M)"
            ))
        }),
    }
}

/// tpack as a tramp source: HATF records, and a warning for every block
/// skipped as damaged.
pub struct TpackSource<R: Read> {
    reader: Reader<R>,
    buf: RecordBuf,
}

impl<R: Read> TpackSource<R> {
    pub fn new(input: R) -> Self {
        TpackSource {
            reader: Reader::new(input),
            buf: RecordBuf::new(),
        }
    }
}

impl<R: Read> Source for TpackSource<R> {
    fn schema(&self) -> &Arc<Schema> {
        schema()
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        let Some(item) = self.reader.next_item()? else {
            return Ok(None);
        };
        item_to_record(&item, &mut self.buf);
        Ok(Some(
            self.buf.as_record(&schema().types[self.buf.type_index()]),
        ))
    }

    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        match self.reader.next_entry()? {
            None => Ok(None),
            Some(Next::Warning(w)) => Ok(Some(Item::Warning(w))),
            Some(Next::Item(item)) => {
                item_to_record(&item, &mut self.buf);
                Ok(Some(Item::Record(
                    self.buf.as_record(&schema().types[self.buf.type_index()]),
                )))
            }
        }
    }

    fn position(&self) -> Position {
        self.reader.position()
    }
}

/// tpack as a tramp sink: records of any heap schema, mapped as HATF maps
/// them (kinds and roles).
pub struct TpackSink<W: Finish> {
    writer: Writer<W>,
    records: u64,
}

impl<W: Finish> TpackSink<W> {
    pub fn new(out: W, opts: Options) -> Result<Self, Error> {
        Ok(TpackSink {
            writer: Writer::new(out, opts)?,
            records: 0,
        })
    }
}

impl<W: Finish> Sink for TpackSink<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.records += 1;
        match record_to_item(rec) {
            Ok(Some(item)) => self.writer.write_item(&item),
            Ok(None) => Ok(()),
            Err(e) => Err(Error::encode(
                FORMAT,
                self.records - 1,
                TpackError::Encode(e.to_string()),
            )),
        }
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        Ok(self.writer.into_inner()?.finish()?)
    }
}

#[allow(dead_code)]
fn _assert_output_is_finish(o: Output) -> impl Finish {
    o
}
