//! Records written in a described layout (the command language's `spit`):
//! the type byte, then each field as the description encodes it;
//! `time_incr` fields as the increment over the previous record written.
//! A record read from a described trace and written back unchanged gives
//! the same bytes.

use tramp_core::Value;

use crate::layout::{Encoding, TimeKind, fits, write_int};
use crate::parse::Description;

/// A value that does not fit its field.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EncodeError {
    #[error("field `{field}`: {value} does not fit {size} bytes")]
    TooWide {
        field: String,
        value: i128,
        size: u8,
    },
    #[error("field `{field}`: {have} bytes given for {size} characters")]
    Chars {
        field: String,
        have: usize,
        size: u32,
    },
    #[error("field `{field}`: {len} bytes do not fit a {len_size}-byte length")]
    Long {
        field: String,
        len: usize,
        len_size: u8,
    },
    #[error("field `{field}`: expected {want}")]
    Type { field: String, want: &'static str },
}

/// Writes records of a description, keeping the time `time_incr` fields
/// count from.
#[derive(Debug, Default)]
pub struct Encoder {
    time: u64,
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// Appends record type `ty` with field `values` (in field order, type
    /// byte excluded) to `out`. Nothing is appended on error.
    pub fn encode(
        &mut self,
        desc: &Description,
        ty: usize,
        values: &[Value<'_>],
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        let time0 = self.time;
        let r = self.encode_fields(desc, ty, values, out);
        if r.is_err() {
            out.truncate(start);
            self.time = time0;
        }
        r
    }

    fn encode_fields(
        &mut self,
        desc: &Description,
        ty: usize,
        values: &[Value<'_>],
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let rd = &desc.records[ty];
        if let Some(tag) = rd.tag {
            out.push(tag);
        }
        for (f, v) in rd.fields.iter().zip(values) {
            match f.enc {
                Encoding::Int {
                    size,
                    order,
                    signed,
                } => {
                    let x = match v {
                        Value::U64(x) => *x,
                        Value::I64(x) => *x as u64,
                        _ => {
                            return Err(EncodeError::Type {
                                field: f.name.clone(),
                                want: "an integer",
                            });
                        }
                    };
                    let stored = match f.time {
                        TimeKind::No => x,
                        TimeKind::Absolute => {
                            self.time = x;
                            x
                        }
                        TimeKind::Increment => {
                            let d = x.wrapping_sub(self.time);
                            self.time = x;
                            d
                        }
                    };
                    if !fits(stored, size, signed) {
                        let value = if signed {
                            stored as i64 as i128
                        } else {
                            stored as i128
                        };
                        return Err(EncodeError::TooWide {
                            field: f.name.clone(),
                            value,
                            size,
                        });
                    }
                    write_int(out, stored, size, order);
                }
                Encoding::Chars(n) => {
                    let b = bytes_of(f, v)?;
                    if b.len() > n as usize {
                        return Err(EncodeError::Chars {
                            field: f.name.clone(),
                            have: b.len(),
                            size: n,
                        });
                    }
                    out.extend_from_slice(b);
                    out.resize(out.len() + n as usize - b.len(), 0);
                }
                Encoding::Prefixed { len_size, order } => {
                    let b = bytes_of(f, v)?;
                    if !fits(b.len() as u64, len_size, false) {
                        return Err(EncodeError::Long {
                            field: f.name.clone(),
                            len: b.len(),
                            len_size,
                        });
                    }
                    write_int(out, b.len() as u64, len_size, order);
                    out.extend_from_slice(b);
                }
            }
        }
        Ok(())
    }
}

fn bytes_of<'a>(f: &crate::FieldDesc, v: &Value<'a>) -> Result<&'a [u8], EncodeError> {
    match v {
        Value::Bytes(b) => Ok(b),
        Value::Str(s) => Ok(s.as_bytes()),
        _ => Err(EncodeError::Type {
            field: f.name.clone(),
            want: "bytes or text",
        }),
    }
}
