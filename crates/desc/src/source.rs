//! A trace in a described layout, read as tramp records.
//!
//! Records are decoded straight from the input window. A record whose
//! fields are all plain integers at fixed places is handed as its bytes,
//! its fields read on demand through its type's layout
//! ([`tramp_core::RecordType::fixed_ints`]); any other record's integers
//! go into slots, its characters as byte spans of its own bytes. `time_incr` fields
//! are turned into absolute times by adding them to the time of the
//! previous record that had one (0 before the first). Damage — an unknown
//! type byte, a record cut by the end of the input — stops the reader with
//! an error naming the record number and byte offset, every record before
//! it delivered.

use std::io::Read;
use std::sync::Arc;

use tramp_core::window::{Stream, Window};
use tramp_core::{Error, Position, Record, Schema, Slot, Source, Span};

use crate::layout::{Encoding, TimeKind, read_int};
use crate::parse::Description;

/// The largest record a reader buffers (a length prefix beyond is damage).
pub const MAX_RECORD: usize = 16 << 20;

/// Damage in a described trace.
#[derive(Debug, thiserror::Error)]
pub enum DescError {
    #[error("record `{name}` would be {size} bytes, over the {MAX_RECORD}-byte limit")]
    TooLarge { name: String, size: usize },
    #[error("no record has type byte {0}")]
    UnknownTag(u8),
    #[error("record `{name}` cut by the end of the input: {have} of {need} bytes")]
    Cut {
        name: String,
        have: usize,
        need: usize,
    },
}

/// Reads a described trace.
pub struct DescSource<R: Read> {
    desc: Arc<Description>,
    schema: Arc<Schema>,
    window: Window<Stream<R>>,
    slots: Vec<Slot>,
    /// Each record type's fields as (encoding, time kind): the decode loop
    /// touches only these.
    plans: Vec<Vec<(Encoding, TimeKind)>>,
    /// For a type whose fields are all plain integers at fixed places
    /// ([`tramp_core::RecordType::fixed_ints`]): its size. Such records are
    /// handed as their bytes, fields read on demand.
    fixed_sizes: Vec<Option<usize>>,
    record: u64,
    time: u64,
    done: bool,
}

impl<R: Read> DescSource<R> {
    pub fn new(desc: Arc<Description>, input: R) -> Self {
        let schema = desc.schema().shared();
        let plans = desc
            .records
            .iter()
            .map(|r| r.fields.iter().map(|f| (f.enc, f.time)).collect())
            .collect();
        let fixed_sizes = desc
            .records
            .iter()
            .zip(&schema.types)
            .map(|(r, t)| t.fixed_ints.as_ref().and(r.fixed_size))
            .collect();
        DescSource {
            fixed_sizes,
            plans,
            desc,
            schema,
            window: Window::stream(input, 1 << 16, 0),
            slots: Vec::new(),
            record: 0,
            time: 0,
            done: false,
        }
    }

    pub fn description(&self) -> &Arc<Description> {
        &self.desc
    }

    /// A record of type `ty` at `at` cut by the end of the input, `need`
    /// bytes long.
    fn cut(&mut self, at: u64, ty: usize, need: usize) -> Error {
        let have = self.window.len();
        let name = self.desc.records[ty].name.clone();
        self.fail(at, DescError::Cut { name, have, need })
    }

    fn fail(&mut self, at: u64, e: DescError) -> Error {
        self.done = true;
        Error::decode("tramp-desc", Position::new(at, self.record), e)
    }

    /// The size of the next record of type `ty`, reading length prefixes.
    fn size_of(&mut self, ty: usize) -> Result<Result<usize, usize>, Error> {
        if let Some(n) = self.desc.records[ty].fixed_size {
            return Ok(Ok(n));
        }
        let mut need = self.desc.tagged as usize;
        for i in 0..self.desc.records[ty].fields.len() {
            match self.desc.records[ty].fields[i].enc {
                Encoding::Prefixed { len_size, order } => {
                    let l = len_size as usize;
                    if !self.window.fill(need + l)? {
                        return Ok(Err(need + l));
                    }
                    let b = &self.window.buffered()[need..];
                    need += l + read_int(b, len_size, order, false) as usize;
                    if need > MAX_RECORD {
                        return Ok(Err(need));
                    }
                }
                enc => need += enc.fixed_size().expect("fixed"),
            }
        }
        Ok(Ok(need))
    }
}

impl<R: Read> Source for DescSource<R> {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn position(&self) -> Position {
        Position::new(self.window.offset(), self.record)
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        // The common case first: a record of plain integers wholly in the
        // window, decided with nothing else looked up.
        let buffered = self.window.buffered();
        if let Some(&tag) = buffered.first()
            && !self.done
        {
            let ty = if self.desc.tagged {
                self.desc.by_tag(tag)
            } else {
                Some(0)
            };
            if let Some(ty) = ty
                && let Some(size) = self.fixed_sizes[ty]
                && buffered.len() >= size
            {
                return Ok(Some(self.fixed(ty, size)));
            }
        }
        self.next_record_general()
    }
}

impl<R: Read> DescSource<R> {
    /// The next record, of plain integers of type `ty` and `size` bytes,
    /// which are buffered: its bytes, read through its type's layout when
    /// asked (no slot is written: with every field decoded up front, the
    /// reader took 184 instructions a record on Figure 8's trace, 92
    /// without, the file's reading included).
    #[inline(always)]
    fn fixed(&mut self, ty: usize, size: usize) -> Record<'_> {
        let bytes = self.window.consume(size);
        self.record += 1;
        Record::fixed(&self.schema.types[ty], bytes)
    }

    /// [`Source::next_record`] in general: refills, length prefixes, time
    /// fields, characters, damage.
    fn next_record_general(&mut self) -> Result<Option<Record<'_>>, Error> {
        if self.done || !self.window.fill(1)? {
            self.done = true;
            return Ok(None);
        }
        let at = self.window.offset();
        let ty = if self.desc.tagged {
            let tag = self.window.buffered()[0];
            match self.desc.by_tag(tag) {
                Some(t) => t,
                None => return Err(self.fail(at, DescError::UnknownTag(tag))),
            }
        } else {
            0
        };
        let size = match self.fixed_sizes[ty] {
            Some(n) => n,
            None => match self.size_of(ty)? {
                Ok(n) => n,
                Err(need) if need > MAX_RECORD => {
                    let name = self.desc.records[ty].name.clone();
                    return Err(self.fail(at, DescError::TooLarge { name, size: need }));
                }
                Err(need) => return Err(self.cut(at, ty, need)),
            },
        };
        if !self.window.fill(size)? {
            return Err(self.cut(at, ty, size));
        }
        if self.fixed_sizes[ty].is_some() {
            return Ok(Some(self.fixed(ty, size)));
        }
        let bytes = self.window.consume(size);
        self.slots.clear();
        let mut p = self.desc.tagged as usize;
        for &(enc, time) in &self.plans[ty] {
            let slot = match enc {
                Encoding::Int {
                    size,
                    order,
                    signed,
                } => {
                    let v = read_int(&bytes[p..], size, order, signed);
                    p += size as usize;
                    let v = match time {
                        TimeKind::No => v,
                        TimeKind::Absolute => {
                            self.time = v;
                            v
                        }
                        TimeKind::Increment => {
                            self.time = self.time.wrapping_add(v);
                            self.time
                        }
                    };
                    if signed {
                        Slot::I(v as i64)
                    } else {
                        Slot::U(v)
                    }
                }
                Encoding::Chars(n) => {
                    let s = Slot::Bytes(Span::new(p, n as usize));
                    p += n as usize;
                    s
                }
                Encoding::Prefixed { len_size, order } => {
                    let l = read_int(&bytes[p..], len_size, order, false) as usize;
                    p += len_size as usize;
                    let s = Slot::Bytes(Span::new(p, l));
                    p += l;
                    s
                }
            };
            self.slots.push(slot);
        }
        self.record += 1;
        Ok(Some(Record::new(
            &self.schema.types[ty],
            &self.slots,
            bytes,
        )))
    }
}
