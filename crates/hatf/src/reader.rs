//! The streaming HATF reader: constant memory, any `Read` (file, pipe,
//! decompressor, memory), interpretations applied, every record before
//! damage delivered, then a precise error.

use std::io::Read;
use std::ops::ControlFlow;

use tramp_core::window::{Slice, Storage, Stream, Window};
use tramp_core::{Error, Position};

use crate::error::HatfError;
use crate::item::{Event, Item};
use crate::plan::{
    Mode, OUT_ADDRESS, OUT_HEAP, OUT_NEW_ADDRESS, OUT_SIZE, OUT_THREAD, OUT_TIME, Plan,
};
use crate::spec::{
    EventKind, Field, Interp, Meta, OP_SET_INTERP, OP_SET_SIZE, TAG_COMMENT, TAG_METADATA, Width,
};
use crate::state::State;

/// Size of the reader's buffer. The longest HATF record (a realloc with
/// six 8-byte fields and 65535 bytes of v2 attributes) is far smaller.
const BUF_LEN: usize = 1 << 20;
/// Bytes an event's numeric fields are decoded from: the longest fixed part
/// (59 bytes) plus room for an 8-byte load at any field start below 64.
const WINDOW: usize = 72;
/// With this many bytes buffered, any record's fixed part is available.
const FAST_MIN: usize = WINDOW;

pub(crate) const FORMAT: &str = "hatf";

/// Reads HATF 1.0 records from any byte stream.
pub struct Reader<B> {
    /// The unread bytes: our own buffer over a stream, or the caller's
    /// bytes for in-memory input.
    win: Window<B>,
    /// Number of the next record (metadata and comments count).
    record: u64,
    state: State,
    plans: [Plan; 10],
    /// Previous values for delta and stride, by field code.
    prev: [u64; 8],
    shape: Shape,
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
pub(crate) fn frame_len(state: &State, a: &[u8]) -> Result<Result<usize, usize>, HatfError> {
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

/// What all current plans have in common: how many steps the longest has,
/// and whether any uses previous values (delta, stride).
#[derive(Clone, Copy, Debug)]
struct Shape {
    steps: u8,
    prev: bool,
}

impl Shape {
    fn of(plans: &[Plan; 10]) -> Shape {
        Shape {
            steps: plans.iter().map(|p| p.nsteps).max().unwrap_or(0).min(6),
            prev: plans.iter().any(|p| {
                p.steps[..p.nsteps as usize]
                    .iter()
                    .any(|s| matches!(s.mode, Mode::Delta | Mode::Stride))
            }),
        }
    }
}

/// Storage behind a [`Reader`] (the byte window's).
pub use tramp_core::window::Storage as Buffer;
/// A reader's own buffer over any `Read`.
pub type StreamBuffer<R> = Stream<R>;
/// Bytes already in memory.
pub type SliceBuffer<'a> = Slice<'a>;

impl<'a> Reader<SliceBuffer<'a>> {
    /// A reader over bytes already in memory: records borrow straight from
    /// `bytes`, nothing is copied.
    pub fn from_slice(bytes: &'a [u8]) -> Self {
        Reader::with_window(Window::slice(bytes))
    }
}

impl<R: Read> Reader<StreamBuffer<R>> {
    /// A reader over any byte stream, in the default configuration, that
    /// yields data and comment records only.
    pub fn new(input: R) -> Self {
        Reader::with_window(Window::stream(input, BUF_LEN, 0))
    }
}

impl<B: Storage> Reader<B> {
    fn with_window(win: Window<B>) -> Self {
        Reader {
            win,
            record: 0,
            plans: Plan::all(&State::new()),
            prev: [0; 8],
            shape: Shape::of(&Plan::all(&State::new())),
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
        Position::new(self.win.offset(), self.record)
    }

    /// The encoding state in effect.
    pub fn state(&self) -> &State {
        &self.state
    }

    fn fail(&mut self, e: HatfError) -> Error {
        self.done = true;
        Error::decode(FORMAT, self.position(), e)
    }

    /// Length of the next record, once all of it is in the buffer; `None`
    /// at a clean end of input.
    #[inline]
    fn frame(&mut self) -> Result<Option<usize>, Error> {
        if self.done {
            return Ok(None);
        }
        if self.win.is_empty() && !self.win.fill(1).inspect_err(|_| self.done = true)? {
            self.done = true;
            return Ok(None);
        }
        loop {
            match frame_len(&self.state, self.win.buffered()) {
                Ok(Ok(len)) => return Ok(Some(len)),
                Ok(Err(need)) => {
                    if !self.win.fill(need).inspect_err(|_| self.done = true)? {
                        let available = self.win.len();
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

    /// Decodes the numeric fields of an event from a window that starts at
    /// its tag and holds at least its fixed part. Only delta and stride read
    /// previous values: none, baseOffset and default never do, and delta and
    /// stride reset them when they are set.
    #[inline(always)]
    fn decode_window(
        win: &[u8; WINDOW],
        plan: &Plan,
        prev: &mut [u64; 8],
        shape: Shape,
    ) -> [u64; 8] {
        let mut vals = [0u64; 8];
        vals[..6].copy_from_slice(&plan.template);
        let mut p = 1usize;
        // The same number of steps for every record type (short ones are
        // padded), so that nothing branches on the record type.
        for s in &plan.steps[..shape.steps as usize] {
            let at = p & 63;
            let b = &win[at..at + 8];
            let word = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            p += s.n as usize;
            let unsigned = word >> s.shift;
            let signed = ((word as i64) >> s.shift) as u64;
            let stored = ((unsigned & !s.smask) | (signed & s.smask)) & s.mask;
            let v = if shape.prev && matches!(s.mode, Mode::Delta | Mode::Stride) {
                let f = s.field as usize & 7;
                let v = prev[f].wrapping_add(if s.mode == Mode::Delta { stored } else { s.k });
                prev[f] = v;
                v
            } else {
                s.k.wrapping_add(stored)
            };
            vals[s.out as usize & 7] = v;
        }
        vals
    }

    /// Decodes the numeric fields of the event at the start of `rec`, which
    /// may be shorter than a window (the end of the data).
    fn decode_values(rec: &[u8], plan: &Plan, prev: &mut [u64; 8]) -> [u64; 8] {
        let mut win = [0u8; WINDOW];
        let n = rec.len().min(WINDOW);
        win[..n].copy_from_slice(&rec[..n]);
        Self::decode_window(
            &win,
            plan,
            prev,
            Shape {
                steps: 6,
                prev: true,
            },
        )
    }

    /// The next record, or `None` at the end of the trace.
    #[inline(always)]
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        // Fast path: an event whose fixed part is surely buffered.
        if self.win.len() >= FAST_MIN {
            let hit = {
                let rec: &[u8] = self.win.buffered();
                let tag = rec[0];
                match self.plans.get(tag as usize) {
                    Some(plan) => {
                        let win: &[u8; WINDOW] =
                            rec[..WINDOW].try_into().expect("FAST_MIN >= WINDOW");
                        let fixed = plan.fixed as usize;
                        // Branch-free length: the mask is zero for fixed-width attributes.
                        let hdr = u16::from_be_bytes([
                            win[fixed.wrapping_sub(2) & 63],
                            win[(fixed - 1) & 63],
                        ]);
                        let len = fixed + (hdr & plan.len_mask) as usize;
                        if len <= rec.len() {
                            let vals = Self::decode_window(win, plan, &mut self.prev, self.shape);
                            let attrs_start = plan.attrs_at as usize;
                            Some((tag, len, attrs_start, vals))
                        } else {
                            None
                        }
                    }
                    None => None,
                }
            };
            if let Some((tag, len, attrs_start, vals)) = hit {
                self.record += 1;
                let attributes = &self.win.consume(len)[attrs_start..];
                return Ok(Some(Item::Event(Self::event(tag, &vals, attributes))));
            }
        }
        self.next_item_slow()
    }

    /// Calls `f` with every remaining record, in order; returns how many.
    /// The same records as repeated [`next_item`](Self::next_item) calls,
    /// but the decoder keeps its position in registers between records,
    /// which makes this the fastest way through a trace.
    pub fn for_each_item(&mut self, mut f: impl FnMut(&Item<'_>)) -> Result<u64, Error> {
        self.try_for_each_item(|item| {
            f(item);
            ControlFlow::Continue(())
        })
    }

    /// [`for_each_item`](Self::for_each_item) until `f` breaks; the reader
    /// then stands after the record `f` broke at. Returns how many records
    /// `f` was given.
    #[inline(always)]
    pub fn try_for_each_item(
        &mut self,
        mut f: impl FnMut(&Item<'_>) -> ControlFlow<()>,
    ) -> Result<u64, Error> {
        let mut count = 0u64;
        loop {
            let data = self.win.buffered();
            let (mut pos, end) = (0usize, data.len());
            let shape = self.shape;
            let mut n = 0u64;
            let mut stopped = false;
            while end - pos >= FAST_MIN {
                let rec = &data[pos..end];
                let tag = rec[0];
                let Some(plan) = self.plans.get(tag as usize) else {
                    break;
                };
                let win: &[u8; WINDOW] = rec[..WINDOW].try_into().expect("FAST_MIN >= WINDOW");
                let fixed = plan.fixed as usize;
                let hdr =
                    u16::from_be_bytes([win[fixed.wrapping_sub(2) & 63], win[(fixed - 1) & 63]]);
                let len = fixed + (hdr & plan.len_mask) as usize;
                if len > rec.len() {
                    break;
                }
                let vals = Self::decode_window(win, plan, &mut self.prev, shape);
                let flow = f(&Item::Event(Self::event(
                    tag,
                    &vals,
                    &rec[plan.attrs_at as usize..len],
                )));
                pos += len;
                n += 1;
                if flow.is_break() {
                    stopped = true;
                    break;
                }
            }
            self.win.consume(pos);
            self.record += n;
            count += n;
            if stopped {
                return Ok(count);
            }
            match self.next_item()? {
                Some(item) => {
                    count += 1;
                    if f(&item).is_break() {
                        return Ok(count);
                    }
                }
                None => return Ok(count),
            }
        }
    }

    fn event<'b>(tag: u8, vals: &[u64; 8], attributes: &'b [u8]) -> Event<'b> {
        Event {
            kind: EventKind::from_tag(tag).expect("plans exist for event tags only"),
            size: vals[OUT_SIZE],
            address: vals[OUT_ADDRESS],
            new_address: vals[OUT_NEW_ADDRESS],
            thread: vals[OUT_THREAD],
            heap: vals[OUT_HEAP],
            time: vals[OUT_TIME],
            attributes,
        }
    }

    /// Everything else: refills, metadata, comments, and errors.
    #[cold]
    #[inline(never)]
    fn next_item_slow(&mut self) -> Result<Option<Item<'_>>, Error> {
        let len = loop {
            let Some(len) = self.frame()? else {
                return Ok(None);
            };
            if self.win.buffered()[0] != TAG_METADATA {
                break len;
            }
            let r = &self.win.buffered()[..len];
            let meta = match decode_meta(r).and_then(|m| self.state.apply(&m).map(|_| m)) {
                Ok(m) => m,
                Err(e) => return Err(self.fail(e)),
            };
            self.plans = Plan::all(&self.state);
            self.shape = Shape::of(&self.plans);
            if let Meta::SetInterp(f, _) = meta {
                self.prev[f as usize] = self.state.field(f).prev;
            }
            self.win.consume(len);
            self.record += 1;
            if self.emit_meta {
                return Ok(Some(Item::Meta(meta)));
            }
        };
        self.record += 1;
        let rec = self.win.consume(len);
        let tag = rec[0];
        if tag == TAG_COMMENT {
            return Ok(Some(Item::Comment(&rec[3..])));
        }
        let plan = &self.plans[tag as usize];
        let fixed = plan.fixed as usize;
        let attrs_start = match plan.attrs {
            Width::Fixed(n) => fixed - n as usize,
            _ => fixed,
        };
        let vals = Self::decode_values(rec, plan, &mut self.prev);
        Ok(Some(Item::Event(Self::event(
            tag,
            &vals,
            &rec[attrs_start..],
        ))))
    }
}
