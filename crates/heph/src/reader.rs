//! Reading Heph traces from any byte stream in bounded memory. Damage is
//! not fatal: a packet whose magic and size are sound but whose body is
//! not is skipped; a bad magic or an impossible size makes the reader scan
//! for the next valid magic; a truncated tail ends the trace. Each of
//! these is a [`Warning`] with its byte offset, and every whole packet
//! around the damage is delivered.

use std::io::Read;

use crate::packet::*;

/// The largest packet accepted (sizes are 32-bit, but memory is bounded;
/// docs/formats/heph.md, decision 3).
pub const MAX_PACKET: usize = 64 << 20;

/// What went wrong outside the trace's own bytes.
#[derive(Debug, thiserror::Error)]
pub enum HephError {
    #[error("I/O error: {0}")]
    Io(#[source] std::io::Error),
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// Damage found, and what the reader did about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where the damaged packet (or garbage) starts.
    pub offset: u64,
    pub message: String,
    /// Bytes skipped to get past it.
    pub skipped: u64,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "byte offset {}: {}", self.offset, self.message)?;
        if self.skipped > 0 {
            write!(f, " ({} bytes skipped)", self.skipped)?;
        }
        Ok(())
    }
}

enum Stop {
    /// More bytes are needed (at least this many from the packet start).
    More(usize),
    /// The body is malformed; the packet (of this size) can be skipped.
    Body(String, usize),
    /// Magic or size unusable: resynchronise.
    Frame(String),
}

struct Cur<'a> {
    d: &'a [u8],
    at: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.d.len() - self.at < n {
            return Err(format!("{what} runs past the end of the packet"));
        }
        let s = &self.d[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<usize, String> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]) as usize)
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        Ok(u64::from_be_bytes(b.try_into().expect("8 bytes")))
    }
    fn str(&mut self, what: &str) -> Result<String, String> {
        let n = self.u16(what)?;
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec()).map_err(|e| {
            format!(
                "{what} is not UTF-8 (byte {} of {n})",
                e.utf8_error().valid_up_to()
            )
        })
    }
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(d[at..at + 4].try_into().expect("4 bytes"))
}

/// Whether a packet could start at `d[at..]` (magic and a sane size).
fn frame_ok(d: &[u8], at: usize) -> bool {
    if d.len() < at + 8 {
        return false;
    }
    let size = u32_at(d, at + 4) as usize;
    match u32_at(d, at) {
        METADATA_MAGIC => (METADATA_HEADER..=MAX_PACKET).contains(&size),
        EVENT_MAGIC => (EVENT_HEADER..=MAX_PACKET).contains(&size),
        _ => false,
    }
}

fn value(c: &mut Cur<'_>, ty: u8) -> Result<Value, String> {
    let base = ty & !ARRAY;
    if ty & ARRAY != 0 {
        let n = c.u16("an array length")?;
        return Ok(match base {
            TYPE_U64 => Value::U64s(
                (0..n)
                    .map(|_| c.u64("an array element"))
                    .collect::<Result<_, _>>()?,
            ),
            TYPE_I64 => Value::I64s(
                (0..n)
                    .map(|_| c.u64("an array element").map(|v| v as i64))
                    .collect::<Result<_, _>>()?,
            ),
            TYPE_F64 => Value::F64s(
                (0..n)
                    .map(|_| c.u64("an array element").map(f64::from_bits))
                    .collect::<Result<_, _>>()?,
            ),
            TYPE_STR => Value::Strs(
                (0..n)
                    .map(|_| c.str("a string in an array"))
                    .collect::<Result<_, _>>()?,
            ),
            _ => {
                return Err(format!(
                    "attribute type {ty:#010b}: an array of no known type"
                ));
            }
        });
    }
    Ok(match base {
        TYPE_U64 => Value::U64(c.u64("an attribute value")?),
        TYPE_I64 => Value::I64(c.u64("an attribute value")? as i64),
        TYPE_F64 => Value::F64(f64::from_bits(c.u64("an attribute value")?)),
        TYPE_STR => Value::Str(c.str("a string attribute")?),
        _ => return Err(format!("unknown attribute type {ty:#010b}")),
    })
}

/// Decodes the packet at the start of `d`.
fn decode(d: &[u8]) -> Result<(Packet, usize), Stop> {
    if d.len() < 8 {
        return Err(Stop::More(8));
    }
    if !frame_ok(d, 0) {
        let magic = u32_at(d, 0);
        let size = u32_at(d, 4);
        return Err(Stop::Frame(match magic {
            METADATA_MAGIC | EVENT_MAGIC => format!("impossible packet size {size}"),
            _ => format!("bad magic {magic:#010x}"),
        }));
    }
    let size = u32_at(d, 4) as usize;
    if d.len() < size {
        return Err(Stop::More(size));
    }
    let mut c = Cur {
        d: &d[..size],
        at: 8,
    };
    let body = |m: String| Stop::Body(m, size);
    let p = if u32_at(d, 0) == METADATA_MAGIC {
        let option = c.str("the option name").map_err(body)?;
        let raw = &d[c.at..size];
        let value = match option.as_str() {
            "epoch" if raw.len() == 8 => {
                OptionValue::Epoch(u64::from_be_bytes(raw.try_into().expect("8")))
            }
            "epoch" => {
                return Err(body(format!(
                    "the epoch option holds {} bytes, not 8",
                    raw.len()
                )));
            }
            _ => OptionValue::Unknown(raw.to_vec()),
        };
        Packet::Metadata(Metadata { option, value })
    } else {
        let stream = u32_at(d, 8);
        let counter = u32_at(d, 12);
        c.at = 16;
        let substream = c.u64("the substream").map_err(body)?;
        let start = c.u64("the start time").map_err(body)?;
        let end = c.u64("the end time").map_err(body)?;
        let description = c.str("the description").map_err(body)?;
        let mut attributes = Vec::new();
        while c.at < size {
            let name = c.str("an attribute name").map_err(body)?;
            let ty = c.u8("an attribute type").map_err(body)?;
            let value = value(&mut c, ty).map_err(|m| body(format!("attribute `{name}`: {m}")))?;
            attributes.push(Attribute { name, value });
        }
        Packet::Event(Event {
            stream,
            counter,
            substream,
            start,
            end,
            description,
            attributes,
        })
    };
    Ok((p, size))
}

/// Streams packets from any reader.
pub struct Reader<R> {
    input: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Offset of `buf[0]`.
    base: u64,
    warnings: Vec<Warning>,
    packets: u64,
}

impl<R: Read> Reader<R> {
    pub fn new(input: R) -> Self {
        Reader {
            input,
            buf: vec![0; 1 << 16],
            pos: 0,
            end: 0,
            eof: false,
            base: 0,
            warnings: Vec::new(),
            packets: 0,
        }
    }

    /// Damage found so far (taken: each is returned once).
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Where the next packet starts.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Packets delivered so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Reads until `need` bytes from `pos` are buffered or the input ends.
    fn fill(&mut self, need: usize) -> Result<(), HephError> {
        if self.end - self.pos >= need {
            return Ok(());
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < need {
            self.buf.resize(need.next_power_of_two(), 0);
        }
        while self.end < need && !self.eof {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(HephError::Io(e)),
            }
        }
        Ok(())
    }

    fn warn(&mut self, offset: u64, message: String, skipped: u64) {
        // Bounded: a trace of nothing but garbage gives one warning per
        // resynchronisation, and resynchronising consumes bytes.
        if self.warnings.len() < 10_000 {
            self.warnings.push(Warning {
                offset,
                message,
                skipped,
            });
        }
    }

    /// Skips from `pos + 1` to the next place a valid frame starts (or
    /// the end); returns the bytes skipped.
    fn resync(&mut self) -> Result<u64, HephError> {
        let mut skipped = 1u64;
        self.pos += 1;
        loop {
            self.fill(8)?;
            let d = &self.buf[self.pos..self.end];
            if d.len() < 8 {
                // Too short for any packet: the rest is garbage.
                skipped += d.len() as u64;
                self.pos = self.end;
                return Ok(skipped);
            }
            let found =
                (0..=d.len() - 8).find(|&i| (d[i] == 0x75 || d[i] == 0xC1) && frame_ok(d, i));
            match found {
                Some(i) => {
                    self.pos += i;
                    return Ok(skipped + i as u64);
                }
                None => {
                    // Keep the last 7 bytes: a magic may straddle reads.
                    let k = d.len() - 7;
                    self.pos += k;
                    skipped += k as u64;
                    if self.eof && self.end - self.pos < 8 {
                        skipped += (self.end - self.pos) as u64;
                        self.pos = self.end;
                        return Ok(skipped);
                    }
                }
            }
        }
    }

    /// The next whole packet, `Ok(None)` at the end. Damage becomes
    /// warnings ([`Reader::take_warnings`]); only I/O fails.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, HephError> {
        let mut need = 8;
        loop {
            self.fill(need)?;
            if self.pos == self.end {
                return Ok(None);
            }
            match decode(&self.buf[self.pos..self.end]) {
                Ok((p, len)) => {
                    self.pos += len;
                    self.packets += 1;
                    return Ok(Some(p));
                }
                Err(Stop::More(n)) if self.end - self.pos < n && !self.eof => need = n,
                Err(Stop::More(n)) => {
                    let at = self.offset();
                    let have = self.end - self.pos;
                    let message = if have >= 8 && frame_ok(&self.buf[self.pos..self.end], 0) {
                        format!("the trace ends inside a packet ({have} of its {n} bytes)")
                    } else {
                        format!("{have} bytes at the end are not a packet")
                    };
                    self.pos = self.end;
                    self.warn(at, message, have as u64);
                    return Ok(None);
                }
                Err(Stop::Body(m, size)) => {
                    let at = self.offset();
                    self.pos += size;
                    self.warn(
                        at,
                        format!("malformed packet: {m}; skipped it"),
                        size as u64,
                    );
                    need = 8;
                }
                Err(Stop::Frame(m)) => {
                    let at = self.offset();
                    let skipped = self.resync()?;
                    self.warn(
                        at,
                        format!("{m}; resynchronised at the next packet"),
                        skipped,
                    );
                    need = 8;
                }
            }
        }
    }
}
