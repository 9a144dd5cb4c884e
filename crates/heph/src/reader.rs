//! Reading Heph traces from any byte stream in bounded memory. Damage is
//! not fatal: a packet whose magic and size are sound but whose body is
//! not is skipped; a bad magic or an impossible size makes the reader scan
//! for the next valid magic; a truncated tail ends the trace. Each of
//! these is a [`Warning`] with its byte offset, and every whole packet
//! around the damage is delivered.

use std::io::Read;

use tramp_core::window::{Stream, Window};

use crate::packet::*;

/// The largest packet accepted (sizes are 32-bit, but memory is bounded;
/// docs/formats/heph.md, decision 3).
pub const MAX_PACKET: usize = 64 << 20;

/// What went wrong outside the trace's own bytes.
#[derive(Debug, thiserror::Error)]
pub enum HephError {
    #[error(transparent)]
    Io(std::io::Error),
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// Damage found, and what the reader did about it: tramp's one warning
/// type (format `heph`).
pub use tramp_core::Warning;

enum Stop {
    /// More bytes are needed (at least this many from the packet start).
    More(usize),
    /// The body is malformed; the packet (of this size) can be skipped.
    Body(String, usize),
    /// Magic or size unusable: resynchronise.
    Frame(String),
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(d[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(d: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(d[at..at + 8].try_into().expect("8 bytes"))
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

/// A cursor over one packet's bytes that validates as it goes.
struct Cur<'a> {
    d: &'a [u8],
    at: usize,
}

#[cold]
fn past_end(what: &str) -> String {
    format!("{what} runs past the end of the packet")
}

#[cold]
fn not_utf8(what: &str, e: std::str::Utf8Error, n: usize) -> String {
    format!("{what} is not UTF-8 (byte {} of {n})", e.valid_up_to())
}

impl<'a> Cur<'a> {
    #[inline(always)]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        match self.d.get(self.at..self.at.wrapping_add(n)) {
            Some(s) if self.at.checked_add(n).is_some() => {
                self.at += n;
                Ok(s)
            }
            _ => Err(past_end(what)),
        }
    }
    #[inline(always)]
    fn u16(&mut self, what: &str) -> Result<usize, String> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]) as usize)
    }
    #[inline(always)]
    fn str(&mut self, what: &str) -> Result<&'a str, String> {
        let n = self.u16(what)?;
        let b = self.take(n, what)?;
        // ASCII (the common case) is checked inline; the rest by std.
        if b.is_ascii() {
            return Ok(std::str::from_utf8(b).unwrap_or_default());
        }
        std::str::from_utf8(b).map_err(|e| not_utf8(what, e, n))
    }
}

/// Checks one attribute value of type `ty` and moves past it.
fn skip_value(c: &mut Cur<'_>, ty: u8) -> Result<(), String> {
    let base = ty & !ARRAY;
    if !(TYPE_U64..=TYPE_STR).contains(&base) || ty & !(ARRAY | 0b111) != 0 {
        return Err(if ty == ARRAY {
            format!("attribute type {ty:#010b}: an array of no type")
        } else {
            format!("unknown attribute type {ty:#010b}")
        });
    }
    let n = if ty & ARRAY != 0 {
        c.u16("an array length")?
    } else {
        1
    };
    if base == TYPE_STR {
        for _ in 0..n {
            c.str("a string attribute")?;
        }
    } else {
        c.take(8 * n, "an attribute value")?;
    }
    Ok(())
}

/// An event packet borrowed from the reader's buffer; attributes are
/// validated, and decoded when iterated.
#[derive(Clone, Copy, Debug)]
pub struct EventRef<'a> {
    pub stream: u32,
    pub counter: u32,
    pub substream: u64,
    pub start: u64,
    pub end: u64,
    pub description: &'a str,
    /// The validated attribute bytes.
    attrs: &'a [u8],
}

/// A packet borrowed from the reader's buffer.
#[derive(Clone, Copy, Debug)]
pub enum PacketRef<'a> {
    Metadata { option: &'a str, value: &'a [u8] },
    Event(EventRef<'a>),
}

/// A borrowed attribute value.
#[derive(Clone, Copy, Debug)]
pub struct ValueRef<'a> {
    ty: u8,
    raw: &'a [u8],
}

impl<'a> ValueRef<'a> {
    /// The owned value.
    pub fn to_value(&self) -> Value {
        let mut c = Cur { d: self.raw, at: 0 };
        let base = self.ty & !ARRAY;
        let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
        if self.ty & ARRAY == 0 {
            return match base {
                TYPE_U64 => Value::U64(word(self.raw)),
                TYPE_I64 => Value::I64(word(self.raw) as i64),
                TYPE_F64 => Value::F64(f64::from_bits(word(self.raw))),
                _ => Value::Str(c.str("").expect("validated").to_string()),
            };
        }
        let n = c.u16("").expect("validated");
        let words = || self.raw[2..].chunks_exact(8).map(word);
        match base {
            TYPE_U64 => Value::U64s(words().collect()),
            TYPE_I64 => Value::I64s(words().map(|w| w as i64).collect()),
            TYPE_F64 => Value::F64s(words().map(f64::from_bits).collect()),
            _ => Value::Strs(
                (0..n)
                    .map(|_| c.str("").expect("validated").to_string())
                    .collect(),
            ),
        }
    }
}

impl<'a> EventRef<'a> {
    /// The attributes, in order.
    pub fn attributes(&self) -> impl Iterator<Item = (&'a str, ValueRef<'a>)> + 'a {
        let mut c = Cur {
            d: self.attrs,
            at: 0,
        };
        std::iter::from_fn(move || {
            if c.at >= c.d.len() {
                return None;
            }
            let name = c.str("").expect("validated");
            let ty = c.take(1, "").expect("validated")[0];
            let from = c.at;
            skip_value(&mut c, ty).expect("validated");
            Some((
                name,
                ValueRef {
                    ty,
                    raw: &c.d[from..c.at],
                },
            ))
        })
    }

    pub fn to_event(&self) -> Event {
        Event {
            stream: self.stream,
            counter: self.counter,
            substream: self.substream,
            start: self.start,
            end: self.end,
            description: self.description.to_string(),
            attributes: self
                .attributes()
                .map(|(n, v)| Attribute {
                    name: n.to_string(),
                    value: v.to_value(),
                })
                .collect(),
        }
    }
}

impl PacketRef<'_> {
    /// The owned packet.
    pub fn to_packet(&self) -> Packet {
        match self {
            PacketRef::Metadata { option, value } => Packet::Metadata(Metadata {
                option: option.to_string(),
                value: match (*option, value.len()) {
                    ("epoch", 8) => OptionValue::Epoch(u64_at(value, 0)),
                    _ => OptionValue::Unknown(value.to_vec()),
                },
            }),
            PacketRef::Event(e) => Packet::Event(e.to_event()),
        }
    }
}

/// Where a validated packet's parts are, relative to its start.
#[derive(Clone, Debug)]
enum Layout {
    Metadata { option: std::ops::Range<usize> },
    Event { description: std::ops::Range<usize> },
}

/// Validates the packet at the start of `d`: its size and layout.
fn check(d: &[u8]) -> Result<(Layout, usize), Stop> {
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
    let d = &d[..size];
    let body = |m: String| Stop::Body(m, size);
    if u32_at(d, 0) == METADATA_MAGIC {
        let mut c = Cur { d, at: 8 };
        let option = c.str("the option name").map_err(body)?;
        if option == "epoch" && size - c.at != 8 {
            return Err(body(format!(
                "the epoch option holds {} bytes, not 8",
                size - c.at
            )));
        }
        return Ok((Layout::Metadata { option: 10..c.at }, size));
    }
    let mut c = Cur {
        d,
        at: EVENT_HEADER - 2,
    };
    c.str("the description").map_err(body)?;
    let description = EVENT_HEADER..c.at;
    while c.at < size {
        let name = c.str("an attribute name").map_err(body)?;
        let ty = c.take(1, "an attribute type").map_err(body)?[0];
        skip_value(&mut c, ty).map_err(|m| body(format!("attribute `{name}`: {m}")))?;
    }
    Ok((Layout::Event { description }, size))
}

/// The borrowed view of a packet [`check`] validated.
fn view<'a>(d: &'a [u8], layout: &Layout) -> PacketRef<'a> {
    let text = |r: std::ops::Range<usize>| std::str::from_utf8(&d[r]).expect("validated");
    match layout {
        Layout::Metadata { option } => PacketRef::Metadata {
            option: text(option.clone()),
            value: &d[option.end..],
        },
        Layout::Event { description } => PacketRef::Event(EventRef {
            stream: u32_at(d, 8),
            counter: u32_at(d, 12),
            substream: u64_at(d, 16),
            start: u64_at(d, 24),
            end: u64_at(d, 32),
            description: text(description.clone()),
            attrs: &d[description.end..],
        }),
    }
}

/// Streams packets from any reader.
pub struct Reader<R> {
    win: Window<Stream<R>>,
    warnings: Vec<Warning>,
    packets: u64,
    /// The input failed (a damaged or cut compressed stream): what was
    /// buffered is read as the trace's end.
    failed: bool,
}

impl<R: Read> Reader<R> {
    pub fn new(input: R) -> Self {
        Reader {
            win: Window::stream(input, 1 << 16, 0),
            warnings: Vec::new(),
            packets: 0,
            failed: false,
        }
    }

    /// Damage found so far (taken: each is returned once).
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Where the next packet starts.
    pub fn offset(&self) -> u64 {
        self.win.offset()
    }

    /// Packets delivered so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Reads until `need` bytes are buffered or the input ends. A read
    /// error ends the input too (every whole packet before it is still
    /// delivered) and is reported as damage where the good bytes end.
    fn fill(&mut self, need: usize) -> Result<(), HephError> {
        if self.failed {
            return Ok(());
        }
        if let Err(e) = self.win.fill(need) {
            let at = self.win.offset() + self.win.len() as u64;
            self.failed = true;
            self.warn(
                at,
                format!("the input ends here, damaged: {e}; every whole packet before it was kept"),
                0,
            );
        }
        Ok(())
    }

    /// Whether nothing more will come beyond what is buffered.
    fn at_end(&self) -> bool {
        self.failed || self.win.at_eof()
    }

    fn warn(&mut self, offset: u64, message: String, skipped: u64) {
        // Bounded: a trace of nothing but garbage gives one warning per
        // resynchronisation, and resynchronising consumes bytes.
        if self.warnings.len() < 10_000 {
            self.warnings.push(Warning {
                format: crate::records::FORMAT,
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
        self.win.consume(1);
        loop {
            self.fill(8)?;
            let d = self.win.buffered();
            if d.len() < 8 {
                // Too short for any packet: the rest is garbage.
                skipped += self.win.consume_all() as u64;
                return Ok(skipped);
            }
            let found =
                (0..=d.len() - 8).find(|&i| (d[i] == 0x75 || d[i] == 0xC1) && frame_ok(d, i));
            match found {
                Some(i) => {
                    self.win.consume(i);
                    return Ok(skipped + i as u64);
                }
                None => {
                    // Keep the last 7 bytes: a magic may straddle reads.
                    let k = d.len() - 7;
                    self.win.consume(k);
                    skipped += k as u64;
                    if self.at_end() && self.win.len() < 8 {
                        skipped += self.win.consume_all() as u64;
                        return Ok(skipped);
                    }
                }
            }
        }
    }

    /// The next whole packet, borrowed from the reader's buffer
    /// (validated; attributes decode as they are iterated), `Ok(None)` at
    /// the end. Damage becomes warnings ([`Reader::take_warnings`]); only
    /// I/O fails.
    pub fn next_ref(&mut self) -> Result<Option<PacketRef<'_>>, HephError> {
        let mut need = 8;
        let (layout, size) = loop {
            self.fill(need)?;
            if self.win.is_empty() {
                return Ok(None);
            }
            match check(self.win.buffered()) {
                Ok(found) => break found,
                Err(Stop::More(n)) if self.win.len() < n && !self.at_end() => need = n,
                Err(Stop::More(n)) => {
                    let at = self.offset();
                    let have = self.win.len();
                    if have >= 8 && frame_ok(self.win.buffered(), 0) {
                        // The packet claims more than the trace holds: its
                        // size may be the damage (docs/formats/heph.md,
                        // decision 3). Whole packets after it are kept.
                        let skipped = self.resync()?;
                        if !self.win.is_empty() {
                            self.warn(
                                at,
                                format!(
                                    "a packet claims {n} bytes but the trace holds {have} from it; resynchronised at the next packet"
                                ),
                                skipped,
                            );
                            need = 8;
                            continue;
                        }
                        self.warn(
                            at,
                            format!("the trace ends inside a packet ({have} of its {n} bytes)"),
                            have as u64,
                        );
                    } else {
                        self.win.consume_all();
                        self.warn(
                            at,
                            format!("{have} bytes at the end are not a packet"),
                            have as u64,
                        );
                    }
                    return Ok(None);
                }
                Err(Stop::Body(m, size)) => {
                    let at = self.offset();
                    self.win.consume(size);
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
        };
        self.packets += 1;
        Ok(Some(view(self.win.consume(size), &layout)))
    }

    /// The next whole packet, owned (see [`Reader::next_ref`]).
    pub fn next_packet(&mut self) -> Result<Option<Packet>, HephError> {
        Ok(self.next_ref()?.map(|p| p.to_packet()))
    }
}
