//! One Parquet file of nullable columns — signed and unsigned 64-bit
//! integers, 32-bit integers and UTF-8 text — filled row by row and written
//! a row group at a time: a full row group goes to a thread of its own that
//! encodes, compresses and writes it while the next fills, so memory is two
//! row groups' values.

use std::io::Write;
use std::sync::Arc;

use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use serde::Serialize;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    /// INT64.
    I64,
    /// INT64 read as unsigned (`INTEGER(64,false)`: DuckDB's UBIGINT).
    U64,
    /// An address: unsigned, written plain (its high bytes repeat, which
    /// zstd finds; differences between unrelated addresses are wide).
    Address,
    /// INT32.
    I32,
    /// UTF-8 text, dictionary-encoded.
    Str,
}

struct Column {
    ty: ColType,
    ints: Vec<i64>,
    strs: Vec<ByteArray>,
    defs: Vec<i16>,
}

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("writing Parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
}

/// Bytes a column takes in the file, compressed and not.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ColumnBytes {
    pub column: String,
    pub compressed: u64,
    pub uncompressed: u64,
}

/// What a table file holds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TableReport {
    pub rows: u64,
    pub row_groups: u64,
    pub columns: Vec<ColumnBytes>,
}

/// A Parquet file being written.
pub struct Table<W: Write + Send + 'static> {
    /// Full row groups to the writer thread (one waits at most).
    groups_tx: Option<std::sync::mpsc::SyncSender<Vec<Column>>>,
    writer: Option<std::thread::JoinHandle<Result<(W, TableReport), TableError>>>,
    cols: Vec<Column>,
    rows: usize,
    group_rows: usize,
}

/// Encodes, compresses and writes each row group it is given; the file's
/// footer when the sender is dropped.
fn write_groups<W: Write + Send>(
    mut writer: SerializedFileWriter<W>,
    groups: std::sync::mpsc::Receiver<Vec<Column>>,
    mut report: TableReport,
) -> Result<(W, TableReport), TableError> {
    for cols in groups {
        let rows = cols.first().map_or(0, |c| c.defs.len());
        let mut rg = writer.next_row_group()?;
        let mut i = 0;
        while let Some(mut w) = rg.next_column()? {
            let c = &cols[i];
            match c.ty {
                ColType::I64 | ColType::U64 | ColType::Address => {
                    w.typed::<Int64Type>()
                        .write_batch(&c.ints, Some(&c.defs), None)?;
                }
                ColType::I32 => {
                    let v: Vec<i32> = c.ints.iter().map(|&x| x as i32).collect();
                    w.typed::<Int32Type>()
                        .write_batch(&v, Some(&c.defs), None)?;
                }
                ColType::Str => {
                    w.typed::<ByteArrayType>()
                        .write_batch(&c.strs, Some(&c.defs), None)?;
                }
            }
            w.close()?;
            i += 1;
        }
        let meta = rg.close()?;
        for (b, m) in report.columns.iter_mut().zip(meta.columns()) {
            b.compressed += m.compressed_size() as u64;
            b.uncompressed += m.uncompressed_size() as u64;
        }
        report.rows += rows as u64;
        report.row_groups += 1;
    }
    let out = writer.into_inner()?;
    Ok((out, report))
}

impl<W: Write + Send + 'static> Table<W> {
    /// A table `name` of `cols`, a row group every `group_rows` rows.
    pub fn new(
        out: W,
        name: &str,
        cols: &[(&'static str, ColType)],
        group_rows: usize,
    ) -> Result<Self, TableError> {
        let fields: Vec<String> = cols
            .iter()
            .map(|(n, t)| match t {
                ColType::I64 => format!("optional int64 {n};"),
                ColType::U64 | ColType::Address => {
                    format!("optional int64 {n} (INTEGER(64,false));")
                }
                ColType::I32 => format!("optional int32 {n};"),
                ColType::Str => format!("optional binary {n} (STRING);"),
            })
            .collect();
        let schema = parse_message_type(&format!("message {name} {{ {} }}", fields.join(" ")))?;
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(5)?))
            .set_dictionary_enabled(false);
        for (n, t) in cols {
            let path = ColumnPath::from(*n);
            match t {
                ColType::Str => props = props.set_column_dictionary_enabled(path, true),
                // Differences packed in bits: times, numbers and addresses
                // that grow by small steps take a few bits a row.
                ColType::I64 | ColType::U64 => {
                    props = props.set_column_encoding(path, Encoding::DELTA_BINARY_PACKED)
                }
                ColType::Address => props = props.set_column_encoding(path, Encoding::PLAIN),
                ColType::I32 => {}
            }
        }
        let writer = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props.build()))?;
        let report = TableReport {
            columns: cols
                .iter()
                .map(|(n, _)| ColumnBytes {
                    column: n.to_string(),
                    ..ColumnBytes::default()
                })
                .collect(),
            ..TableReport::default()
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let handle = std::thread::Builder::new()
            .name("tramp-parquet".into())
            .spawn(move || write_groups(writer, rx, report))
            .map_err(|e| {
                TableError::Parquet(parquet::errors::ParquetError::External(Box::new(e)))
            })?;
        Ok(Table {
            groups_tx: Some(tx),
            writer: Some(handle),
            cols: Self::empty(cols.iter().map(|c| c.1)),
            rows: 0,
            group_rows: group_rows.max(1),
        })
    }

    fn empty(types: impl Iterator<Item = ColType>) -> Vec<Column> {
        types
            .map(|ty| Column {
                ty,
                ints: Vec::new(),
                strs: Vec::new(),
                defs: Vec::new(),
            })
            .collect()
    }

    /// Column `col`'s value in the current row (`None`: null).
    #[inline]
    pub fn int(&mut self, col: usize, v: Option<i64>) {
        let c = &mut self.cols[col];
        match v {
            Some(v) => {
                c.ints.push(v);
                c.defs.push(1);
            }
            None => c.defs.push(0),
        }
    }

    /// An unsigned value (stored as INT64 bits, read back unsigned).
    #[inline]
    pub fn uint(&mut self, col: usize, v: Option<u64>) {
        self.int(col, v.map(|v| v as i64));
    }

    #[inline]
    pub fn text(&mut self, col: usize, v: Option<&str>) {
        self.bytes_value(col, v.map(|s| ByteArray::from(s.as_bytes().to_vec())));
    }

    /// A text value already made (a clone shares its bytes: for values
    /// that repeat, such as an event's kind).
    #[inline]
    pub fn bytes_value(&mut self, col: usize, v: Option<ByteArray>) {
        let c = &mut self.cols[col];
        match v {
            Some(b) => {
                c.strs.push(b);
                c.defs.push(1);
            }
            None => c.defs.push(0),
        }
    }

    /// Ends the row (every column given a value or null); a full row group
    /// is written.
    pub fn end_row(&mut self) -> Result<(), TableError> {
        self.rows += 1;
        debug_assert!(self.cols.iter().all(|c| c.defs.len() == self.rows));
        if self.rows >= self.group_rows {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TableError> {
        if self.rows == 0 {
            return Ok(());
        }
        let fresh = Self::empty(self.cols.iter().map(|c| c.ty));
        let full = std::mem::replace(&mut self.cols, fresh);
        self.rows = 0;
        let sent = self
            .groups_tx
            .as_ref()
            .is_some_and(|tx| tx.send(full).is_ok());
        if !sent {
            // The writer stopped: its error says why.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    fn join(&mut self) -> Result<(W, TableReport), TableError> {
        self.groups_tx = None;
        match self.writer.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(TableError::Parquet(parquet::errors::ParquetError::General(
                "the Parquet writer thread panicked".into(),
            ))),
            None => Err(TableError::Parquet(parquet::errors::ParquetError::General(
                "the Parquet writer already stopped".into(),
            ))),
        }
    }

    /// Writes what is left and the footer; the output and what it holds.
    pub fn finish(mut self) -> Result<(W, TableReport), TableError> {
        self.flush()?;
        self.join()
    }
}

impl TableReport {
    /// Compressed bytes of every column.
    pub fn bytes(&self) -> u64 {
        self.columns.iter().map(|c| c.compressed).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    use proptest::prelude::*;

    type Row = (
        Option<i64>,
        Option<u64>,
        Option<u64>,
        Option<i32>,
        Option<String>,
    );

    fn write(rows: &[Row], group: usize) -> (Vec<u8>, TableReport) {
        let cols = [
            ("a", ColType::I64),
            ("b", ColType::U64),
            ("c", ColType::Address),
            ("d", ColType::I32),
            ("e", ColType::Str),
        ];
        let mut t = Table::new(Vec::new(), "t", &cols, group).unwrap();
        for (a, b, c, d, e) in rows {
            t.int(0, *a);
            t.uint(1, *b);
            t.uint(2, *c);
            t.int(3, d.map(i64::from));
            t.text(4, e.as_deref());
            t.end_row().unwrap();
        }
        t.finish().unwrap()
    }

    proptest! {
        #[test]
        fn rows_read_back_as_written(
            rows in proptest::collection::vec(
                (any::<Option<i64>>(), any::<Option<u64>>(), any::<Option<u64>>(),
                 any::<Option<i32>>(), proptest::option::of("[a-z]{0,8}")),
                0..300),
            group in 1usize..64,
        ) {
            let (bytes, report) = write(&rows, group);
            prop_assert_eq!(report.rows, rows.len() as u64);
            prop_assert_eq!(report.row_groups, rows.len().div_ceil(group) as u64);
            let mut file = tempfile::tempfile().unwrap();
            std::io::Write::write_all(&mut file, &bytes).unwrap();
            let r = SerializedFileReader::new(file).unwrap();
            prop_assert_eq!(r.metadata().file_metadata().num_rows(), rows.len() as i64);
            let back: Vec<Row> = r
                .get_row_iter(None)
                .unwrap()
                .map(|row| {
                    let f: Vec<Field> = row.unwrap().get_column_iter().map(|(_, f)| f.clone()).collect();
                    let int = |f: &Field| match f { Field::Long(v) => Some(*v), _ => None };
                    let uint = |f: &Field| match f { Field::ULong(v) => Some(*v), _ => None };
                    (
                        int(&f[0]),
                        uint(&f[1]),
                        uint(&f[2]),
                        match f[3] { Field::Int(v) => Some(v), _ => None },
                        match &f[4] { Field::Str(s) => Some(s.clone()), _ => None },
                    )
                })
                .collect();
            prop_assert_eq!(back, rows);
        }
    }
}
