//! "Simple Binary" (the paper's Table 4): every record the same four
//! word-sized fields — type, size, address, new address (0 where a record
//! has none). The paper's machines had 32-bit words, so 16 bytes per
//! record; on a 64-bit trace the words are 8 bytes and a record is 32
//! (docs/formats/study.md). Little-endian, after an 8-byte header
//! `tsimple` + the word size.

use std::io::{self, Read, Write};

use tramp_hatf::Event;

use crate::content::{fields, from_fields};

pub const MAGIC: &[u8; 7] = b"tsimple";

/// Writes Simple Binary records.
pub struct SimpleWriter<W: Write> {
    out: W,
    word: usize,
}

impl<W: Write> SimpleWriter<W> {
    /// `word`: 4 (the paper's 32-bit form) or 8.
    pub fn new(mut out: W, word: usize) -> io::Result<Self> {
        assert!(word == 4 || word == 8);
        out.write_all(MAGIC)?;
        out.write_all(&[word as u8])?;
        Ok(SimpleWriter { out, word })
    }

    /// Writes one event; a value too wide for a 4-byte word is an error.
    pub fn write(&mut self, e: &Event<'_>) -> io::Result<()> {
        let mut rec = [0u8; 32];
        for (i, v) in fields(e).into_iter().enumerate() {
            let b = v.to_le_bytes();
            if self.word == 4 && v > u32::MAX as u64 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{v:#x} does not fit a 4-byte word"),
                ));
            }
            rec[i * self.word..(i + 1) * self.word].copy_from_slice(&b[..self.word]);
        }
        self.out.write_all(&rec[..4 * self.word])
    }

    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Reads Simple Binary records.
pub struct SimpleReader<R: Read> {
    input: R,
    word: usize,
    record: u64,
}

impl<R: Read> SimpleReader<R> {
    pub fn new(mut input: R) -> io::Result<Self> {
        let mut h = [0u8; 8];
        input.read_exact(&mut h)?;
        if &h[..7] != MAGIC || !(h[7] == 4 || h[7] == 8) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a Simple Binary trace (no tsimple header)",
            ));
        }
        Ok(SimpleReader {
            input,
            word: h[7] as usize,
            record: 0,
        })
    }

    /// The next event, `None` at the end; a record cut short or of an
    /// unknown type is an error naming the record.
    pub fn next_event(&mut self) -> io::Result<Option<Event<'static>>> {
        let mut rec = [0u8; 32];
        let n = 4 * self.word;
        let mut got = 0;
        while got < n {
            match self.input.read(&mut rec[got..n])? {
                0 if got == 0 => return Ok(None),
                0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("Simple Binary record {} cut short", self.record),
                    ));
                }
                k => got += k,
            }
        }
        let mut f = [0u64; 4];
        for (i, v) in f.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b[..self.word].copy_from_slice(&rec[i * self.word..(i + 1) * self.word]);
            *v = u64::from_le_bytes(b);
        }
        let e = from_fields(f).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "Simple Binary record {}: unknown type {}",
                    self.record, f[0]
                ),
            )
        })?;
        self.record += 1;
        Ok(Some(e))
    }
}
