//! The streaming HATF reader: constant memory, any `Read` (file, pipe,
//! decompressor, memory), interpretations applied, every record before
//! damage delivered, then a precise error.

use std::io::{self, Read};

use tramp_core::{Error, Position};

use crate::error::HatfError;
use crate::item::{Event, Item};
use crate::spec::{
    EventKind, Field, Interp, Meta, OP_SET_INTERP, OP_SET_SIZE, TAG_COMMENT, TAG_METADATA, Width,
};
use crate::state::{State, sign_extend};

/// Size of the reader's buffer. The longest HATF record (a realloc with
/// six 8-byte fields and 65535 bytes of v2 attributes) is far smaller.
const BUF_LEN: usize = 1 << 20;

pub(crate) const FORMAT: &str = "hatf";

/// Reads HATF 1.0 records from any byte stream.
pub struct Reader<R> {
    input: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Absolute offset of `buf[0]` in the stream.
    base: u64,
    /// Number of the next record (metadata and comments count).
    record: u64,
    state: State,
    done: bool,
    emit_meta: bool,
}

#[inline(always)]
fn read_be(b: &[u8], n: usize) -> u64 {
    match n {
        0 => 0,
        1 => b[0] as u64,
        2 => u16::from_be_bytes([b[0], b[1]]) as u64,
        4 => u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

/// How long the record at the start of `a` is: `Ok(Ok(len))` when `a` holds
/// all of it, `Ok(Err(n))` when at least `n` bytes are needed to know more.
#[inline]
fn frame_len(state: &State, a: &[u8]) -> Result<Result<usize, usize>, HatfError> {
    let tag = a[0];
    let need = match tag {
        0..=9 => {
            let kind = EventKind::from_tag(tag).expect("tag checked");
            let fixed = state.fixed_len(kind);
            match state.field(Field::Attributes).width {
                Width::Fixed(_) => fixed,
                Width::V1 => match a.get(fixed - 1) {
                    Some(&n) => fixed + n as usize,
                    None => return Ok(Err(fixed)),
                },
                Width::V2 => match a.get(fixed - 2..fixed) {
                    Some(h) => fixed + u16::from_be_bytes([h[0], h[1]]) as usize,
                    None => return Ok(Err(fixed)),
                },
            }
        }
        TAG_COMMENT => match a.get(1..3) {
            Some(h) => 3 + u16::from_be_bytes([h[0], h[1]]) as usize,
            None => return Ok(Err(3)),
        },
        TAG_METADATA => match a.get(1) {
            None => return Ok(Err(2)),
            Some(&OP_SET_SIZE) => 4,
            Some(&OP_SET_INTERP) => match a.get(3) {
                None => return Ok(Err(4)),
                Some(&code) => {
                    4 + 8 * Interp::arg_count_for_code(code)
                        .ok_or(HatfError::UnknownInterp(code))?
                }
            },
            Some(&op) => return Err(HatfError::UnknownOp(op)),
        },
        t => return Err(HatfError::UnknownTag(t)),
    };
    Ok(if a.len() >= need { Ok(need) } else { Err(need) })
}

/// Decodes a complete metadata record (its length already checked).
pub(crate) fn decode_meta(r: &[u8]) -> Result<Meta, HatfError> {
    let field = Field::from_code(r[2]).ok_or(HatfError::UnknownField(r[2]))?;
    Ok(match r[1] {
        OP_SET_SIZE => Meta::SetWidth(
            field,
            Width::from_code(r[3]).ok_or(HatfError::UnknownWidth(r[3]))?,
        ),
        _ => {
            let a = if r.len() >= 12 {
                read_be(&r[4..12], 8)
            } else {
                0
            };
            let b = if r.len() >= 20 {
                read_be(&r[12..20], 8)
            } else {
                0
            };
            Meta::SetInterp(
                field,
                Interp::from_code(r[3], a, b).ok_or(HatfError::UnknownInterp(r[3]))?,
            )
        }
    })
}

impl<R: Read> Reader<R> {
    /// A reader in the default configuration that yields data and comment
    /// records only.
    pub fn new(input: R) -> Self {
        Reader {
            input,
            buf: vec![0u8; BUF_LEN].into_boxed_slice(),
            pos: 0,
            end: 0,
            eof: false,
            base: 0,
            record: 0,
            state: State::new(),
            done: false,
            emit_meta: false,
        }
    }

    /// Also yield metadata records (after applying them).
    pub fn with_metadata(mut self, yes: bool) -> Self {
        self.emit_meta = yes;
        self
    }

    /// Where the next record starts.
    pub fn position(&self) -> Position {
        Position::new(self.base + self.pos as u64, self.record)
    }

    /// The encoding state in effect.
    pub fn state(&self) -> &State {
        &self.state
    }

    fn fail(&mut self, e: HatfError) -> Error {
        self.done = true;
        Error::decode(FORMAT, self.position(), e)
    }

    /// Makes at least `need` bytes available from `pos`, unless the input
    /// ends first. Returns whether they are available.
    fn fill(&mut self, need: usize) -> io::Result<bool> {
        if self.pos + need > self.buf.len() {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < need && !self.eof {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(self.end - self.pos >= need)
    }

    /// Length of the next record, once all of it is in the buffer; `None`
    /// at a clean end of input.
    #[inline]
    fn frame(&mut self) -> Result<Option<usize>, Error> {
        if self.done {
            return Ok(None);
        }
        if self.pos == self.end && !self.fill(1).inspect_err(|_| self.done = true)? {
            self.done = true;
            return Ok(None);
        }
        loop {
            match frame_len(&self.state, &self.buf[self.pos..self.end]) {
                Ok(Ok(len)) => return Ok(Some(len)),
                Ok(Err(need)) => {
                    if !self.fill(need).inspect_err(|_| self.done = true)? {
                        let available = self.end - self.pos;
                        return Err(self.fail(HatfError::Truncated {
                            needed: need,
                            available,
                        }));
                    }
                }
                Err(e) => return Err(self.fail(e)),
            }
        }
    }

    /// The next record, or `None` at the end of the trace.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        let len = loop {
            let Some(len) = self.frame()? else {
                return Ok(None);
            };
            if self.buf[self.pos] != TAG_METADATA {
                break len;
            }
            let r = &self.buf[self.pos..self.pos + len];
            let meta = match decode_meta(r).and_then(|m| self.state.apply(&m).map(|_| m)) {
                Ok(m) => m,
                Err(e) => return Err(self.fail(e)),
            };
            self.pos += len;
            self.record += 1;
            if self.emit_meta {
                return Ok(Some(Item::Meta(meta)));
            }
        };
        let start = self.pos;
        self.pos += len;
        self.record += 1;
        let r = &self.buf[start..start + len];
        if r[0] == TAG_COMMENT {
            return Ok(Some(Item::Comment(&r[3..])));
        }
        let kind = EventKind::from_tag(r[0]).expect("frame_len checked the tag");
        let mut ev = Event::new(kind);
        let mut p = 1;
        let mut seen_address = false;
        for &f in kind.layout() {
            let st = &mut self.state.fields[f as usize];
            if f == Field::Attributes {
                ev.attributes = match st.width {
                    Width::Fixed(n) => &r[p..p + n as usize],
                    Width::V1 => &r[p + 1..],
                    Width::V2 => &r[p + 2..],
                };
                break;
            }
            let n = st.width.bytes();
            let raw = read_be(&r[p..], n);
            p += n;
            let v = match st.interp {
                Interp::None => raw,
                Interp::Default(d) => d,
                Interp::BaseOffset(b) => b.wrapping_add(sign_extend(raw, n)),
                Interp::Delta(_) => st.prev.wrapping_add(sign_extend(raw, n)),
                Interp::Stride { stride, .. } => st.prev.wrapping_add(stride),
            };
            st.prev = v;
            match f {
                Field::Size => ev.size = v,
                Field::Address if !seen_address => {
                    ev.address = v;
                    seen_address = true;
                }
                Field::Address => ev.new_address = v,
                Field::Time => ev.time = v,
                Field::Thread => ev.thread = v,
                Field::Heap => ev.heap = v,
                Field::Attributes => {}
            }
        }
        Ok(Some(Item::Event(ev)))
    }
}
