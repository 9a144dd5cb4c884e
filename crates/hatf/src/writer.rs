//! The HATF writer: absolute records in, HATF bytes out, with an encoding
//! policy deciding which metadata records to place.

use std::io::Write;

use tramp_core::Error;

use crate::error::HatfError;
use crate::item::{Event, Item};
use crate::plan::{Mode, Plan};
use crate::reader::FORMAT;
use crate::spec::{
    Field, Interp, Meta, OP_SET_INTERP, OP_SET_SIZE, TAG_COMMENT, TAG_METADATA, Width,
};
use crate::state::{State, fits_signed, fits_unsigned, min_width};

/// The smallest of 1, 2, 4, 8 bytes that holds `d` as a signed number.
fn min_signed_width(d: i64) -> usize {
    [1usize, 2, 4]
        .into_iter()
        .find(|n| fits_signed(d, *n))
        .unwrap_or(8)
}

/// Who places metadata records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The default configuration; metadata only where a value does not fit.
    /// A field leaves its default interpretation the first time a value
    /// differs from the default and takes the smallest width that holds
    /// it; widths only grow. Metadata given by the caller is ignored.
    Naive,
    /// The caller places every metadata record; a value the current
    /// encoding cannot represent is an error.
    Explicit,
    /// The paper's "Small Size" (§3.3): the size field starts at the width
    /// its first value needs (1 byte for most programs) and is widened by a
    /// metadata record when a size needs more; once a run of records would
    /// each save bytes at a narrower width, and the run has saved
    /// [`CONTRACT_AFTER`] bytes (two metadata records' worth), it is
    /// narrowed to the widest width the run needed. Other fields as naive.
    /// Streaming, no look-ahead; docs/formats/hatf.md has the rule.
    SmallSize,
    /// The paper's "Same Size" (§3.3): a run of records of one size
    /// switches the size field to `default SIZE` (no bytes per record) and
    /// back to `none` when a different size comes. Streaming, so the switch
    /// is decided as a ski-rental rule: once the run has cost at full width
    /// what the two switching records cost ([`SWITCH_COST`] bytes), it
    /// switches. Other fields as naive.
    SameSize,
    /// Small size and same size together ("Combined Size").
    CombinedSize,
}

/// Bytes the same-size policy pays to switch a run: `set
/// fieldInterpretation size default V` (12 bytes) and the `none` (4) that
/// ends it.
pub const SWITCH_COST: usize = 16;

/// Bytes a run of records must have saved at a narrower size width before
/// the small-size policy narrows it: a narrowing and the widening that may
/// follow cost one 4-byte metadata record each.
pub const CONTRACT_AFTER: usize = 8;

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        match s {
            "naive" => Some(Policy::Naive),
            "explicit" => Some(Policy::Explicit),
            "small-size" => Some(Policy::SmallSize),
            "same-size" => Some(Policy::SameSize),
            "combined-size" => Some(Policy::CombinedSize),
            _ => None,
        }
    }
}

const OUT_CHUNK: usize = 1 << 18;

/// Writes HATF 1.0 records to any `Write`.
pub struct Writer<W: Write> {
    out: W,
    buf: Vec<u8>,
    state: State,
    /// The encoding in effect, compiled per record type (shared with the reader).
    plans: [Plan; 10],
    policy: Policy,
    /// Records written, metadata included.
    records: u64,
    /// Items given by the caller (for error messages).
    items: u64,
    /// The small-size policy's current run of narrower sizes.
    size_run: SizeRun,
    /// The same-size policy's current run of one size.
    same_run: SameRun,
}

/// A run of records of one size.
#[derive(Clone, Copy, Debug, Default)]
struct SameRun {
    value: u64,
    len: usize,
}

/// A run of records whose sizes fit a narrower width than the one in
/// effect: how many, and the widest width they needed.
#[derive(Clone, Copy, Debug, Default)]
struct SizeRun {
    started: bool,
    len: usize,
    widest: usize,
}

/// Why `value` cannot be stored in field `f` under `st`, or `None` if it can;
/// `stored` receives the bits to write.
#[inline]
fn encode_value(st: &crate::state::FieldState, value: u64, stored: &mut u64) -> Option<String> {
    let n = st.width.bytes();
    match st.interp {
        Interp::None => {
            if fits_unsigned(value, n) {
                *stored = value;
                return None;
            }
            Some(format!("it needs more than the {n}-byte width in effect"))
        }
        Interp::Default(d) => {
            (value != d).then(|| format!("the interpretation in effect is default {d:#x}"))
        }
        Interp::BaseOffset(b) => {
            let d = value.wrapping_sub(b) as i64;
            if fits_signed(d, n) {
                *stored = d as u64;
                return None;
            }
            Some(format!(
                "offset {d} from base {b:#x} does not fit {n} signed bytes"
            ))
        }
        Interp::Delta(_) => {
            let d = value.wrapping_sub(st.prev) as i64;
            if fits_signed(d, n) {
                *stored = d as u64;
                return None;
            }
            Some(format!(
                "delta {d} from {:#x} does not fit {n} signed bytes",
                st.prev
            ))
        }
        Interp::Stride { stride, .. } => {
            let expect = st.prev.wrapping_add(stride);
            (value != expect).then(|| format!("the stride in effect gives {expect:#x}"))
        }
    }
}

fn attrs_fit(width: Width, interp: Interp, len: usize) -> Option<String> {
    match (interp, width) {
        (Interp::Default(_), _) if len == 0 => None,
        (Interp::Default(_), _) => Some("attributes are off (interpretation default)".into()),
        (_, Width::Fixed(n)) if n as usize == len => None,
        (_, Width::Fixed(n)) => Some(format!("the fixed attribute width in effect is {n} bytes")),
        (_, Width::V1) if len <= 0xff => None,
        (_, Width::V1) => Some("width v1 holds at most 255 bytes".into()),
        (_, Width::V2) if len <= 0xffff => None,
        (_, Width::V2) => Some("width v2 holds at most 65535 bytes".into()),
    }
}

impl<W: Write> Writer<W> {
    pub fn new(out: W, policy: Policy) -> Self {
        Writer {
            out,
            buf: Vec::with_capacity(OUT_CHUNK + 1024),
            state: State::new(),
            plans: Plan::all(&State::new()),
            policy,
            records: 0,
            items: 0,
            size_run: SizeRun::default(),
            same_run: SameRun::default(),
        }
    }

    /// The encoding state in effect.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Records written so far, metadata included.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    fn err(&self, e: HatfError) -> Error {
        Error::encode(FORMAT, self.items, e)
    }

    #[inline]
    fn spill(&mut self) -> Result<(), Error> {
        if self.buf.len() >= OUT_CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes any item: events and comments always; metadata only under the
    /// explicit policy (the naive policy places its own).
    pub fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        match item {
            Item::Event(e) => self.write_event(e),
            Item::Comment(c) => self.write_comment(c),
            Item::Meta(m) => match self.policy {
                Policy::Explicit => self.write_meta(*m),
                Policy::Naive | Policy::SmallSize | Policy::SameSize | Policy::CombinedSize => {
                    self.items += 1;
                    Ok(())
                }
            },
        }
    }

    /// Writes a metadata record and applies it.
    pub fn write_meta(&mut self, m: Meta) -> Result<(), Error> {
        self.put_meta(m)?;
        self.items += 1;
        Ok(())
    }

    fn put_meta(&mut self, m: Meta) -> Result<(), Error> {
        self.state.apply(&m).map_err(|e| self.err(e))?;
        self.plans = Plan::all(&self.state);
        match m {
            Meta::SetWidth(f, w) => {
                self.buf
                    .extend_from_slice(&[TAG_METADATA, OP_SET_SIZE, f.code(), w.code()])
            }
            Meta::SetInterp(f, i) => {
                self.buf
                    .extend_from_slice(&[TAG_METADATA, OP_SET_INTERP, f.code(), i.code()]);
                match i {
                    Interp::None => {}
                    Interp::Default(a) | Interp::BaseOffset(a) | Interp::Delta(a) => {
                        self.buf.extend_from_slice(&a.to_be_bytes())
                    }
                    Interp::Stride { initial, stride } => {
                        self.buf.extend_from_slice(&initial.to_be_bytes());
                        self.buf.extend_from_slice(&stride.to_be_bytes());
                    }
                }
            }
        }
        self.records += 1;
        self.spill()
    }

    /// Writes a comment record.
    pub fn write_comment(&mut self, text: &[u8]) -> Result<(), Error> {
        if text.len() > 0xffff {
            return Err(self.err(HatfError::CommentTooLong(text.len())));
        }
        self.buf.push(TAG_COMMENT);
        self.buf
            .extend_from_slice(&(text.len() as u16).to_be_bytes());
        self.buf.extend_from_slice(text);
        self.records += 1;
        self.items += 1;
        self.spill()
    }

    /// The small-size policy's decision before `ev` (see [`Policy::SmallSize`]).
    fn small_size(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        if !ev.kind.layout().contains(&Field::Size) {
            return Ok(());
        }
        let st = self.state.field(Field::Size);
        if st.interp != Interp::None {
            return Ok(());
        }
        let need = min_width(ev.size).bytes();
        let cur = st.width.bytes();
        let run = &mut self.size_run;
        if !run.started || need > cur {
            *run = SizeRun {
                started: true,
                ..SizeRun::default()
            };
            if need != cur {
                self.put_meta(Meta::SetWidth(Field::Size, Width::Fixed(need as u8)))?;
            }
        } else if need < cur {
            run.len += 1;
            run.widest = run.widest.max(need);
            if run.len * (cur - run.widest) >= CONTRACT_AFTER {
                let to = run.widest;
                *run = SizeRun {
                    started: true,
                    ..SizeRun::default()
                };
                self.put_meta(Meta::SetWidth(Field::Size, Width::Fixed(to as u8)))?;
            }
        } else {
            *run = SizeRun {
                started: true,
                ..SizeRun::default()
            };
        }
        Ok(())
    }

    /// The same-size policy's decision before `ev` (see [`Policy::SameSize`]).
    fn same_size(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        if !ev.kind.layout().contains(&Field::Size) {
            return Ok(());
        }
        let st = self.state.field(Field::Size);
        match st.interp {
            Interp::Default(v) if v == ev.size => Ok(()),
            Interp::Default(_) => {
                // The run ends: back to `none` (the width comes back with it).
                self.same_run = SameRun {
                    value: ev.size,
                    len: 1,
                };
                self.put_meta(Meta::SetInterp(Field::Size, Interp::None))
            }
            Interp::None => {
                let run = &mut self.same_run;
                if run.len > 0 && run.value == ev.size {
                    run.len += 1;
                } else {
                    *run = SameRun {
                        value: ev.size,
                        len: 1,
                    };
                }
                let width = st.width.bytes().max(1);
                if (run.len - 1) * width >= SWITCH_COST {
                    self.put_meta(Meta::SetInterp(Field::Size, Interp::Default(ev.size)))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Under the naive policy, places the metadata `ev` needs.
    fn make_room(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        let mut largest = [0u64; 6];
        let mut present = [false; 6];
        let mut switched = [false; 6];
        let mut offsets = [false; 6];
        let mut signed_need = [0usize; 6];
        let mut sim_prev: [Option<u64>; 6] = [None; 6];
        for (f, v) in ev.numeric_values() {
            let i = f as usize;
            largest[i] = largest[i].max(v);
            present[i] = true;
            let st = self.state.fields[i];
            match st.interp {
                // Offsets that outgrow their width get a wider width (widths
                // only grow); the interpretation the caller chose stays.
                Interp::Delta(_) | Interp::BaseOffset(_) => {
                    let from = match st.interp {
                        Interp::BaseOffset(b) => b,
                        _ => sim_prev[i].unwrap_or(st.prev),
                    };
                    sim_prev[i] = Some(v);
                    let d = v.wrapping_sub(from) as i64;
                    signed_need[i] = signed_need[i].max(min_signed_width(d));
                    offsets[i] = true;
                }
                Interp::None => {}
                _ => {
                    if encode_value(&st, v, &mut 0).is_some() {
                        // Leave the default interpretation for good.
                        self.put_meta(Meta::SetInterp(f, Interp::None))?;
                        switched[i] = true;
                    }
                }
            }
        }
        for f in [
            Field::Size,
            Field::Address,
            Field::Time,
            Field::Thread,
            Field::Heap,
        ] {
            let i = f as usize;
            if offsets[i] {
                if signed_need[i] > self.state.fields[i].width.bytes() {
                    self.put_meta(Meta::SetWidth(f, Width::Fixed(signed_need[i] as u8)))?;
                }
                continue;
            }
            if !present[i] {
                continue;
            }
            let have = self.state.fields[i].width.bytes();
            let need = min_width(largest[i]);
            let resize = if switched[i] {
                need.bytes() != have
            } else {
                !fits_unsigned(largest[i], have)
            };
            if resize {
                self.put_meta(Meta::SetWidth(f, need))?;
            }
        }
        let a = self.state.field(Field::Attributes);
        let len = ev.attributes.len();
        if attrs_fit(a.width, a.interp, len).is_some() {
            if len > 0xffff {
                return Err(self.err(HatfError::AttributesDoNotFit {
                    len,
                    why: "HATF attributes hold at most 65535 bytes".into(),
                }));
            }
            if matches!(a.interp, Interp::Default(_)) {
                self.put_meta(Meta::SetInterp(Field::Attributes, Interp::None))?;
            }
            let a = self.state.field(Field::Attributes);
            if attrs_fit(a.width, a.interp, len).is_some() {
                let w = if len <= 0xff && a.width != Width::V2 {
                    Width::V1
                } else {
                    Width::V2
                };
                self.put_meta(Meta::SetWidth(Field::Attributes, w))?;
            }
        }
        Ok(())
    }

    /// The common case: every field is stored as is or is a matching
    /// constant, and the record fits without new metadata. Returns whether
    /// the record was written. (Previous values matter only to delta and
    /// stride, which this path never meets; they reset them when set.)
    #[inline]
    fn try_write_plain(&mut self, ev: &Event<'_>) -> bool {
        let plan = &self.plans[ev.kind as usize];
        let vals = [
            ev.size,
            ev.address,
            ev.new_address,
            ev.thread,
            ev.heap,
            ev.time,
        ];
        let mut ok = true;
        for (out, v) in vals.iter().enumerate() {
            if plan.const_outs >> out & 1 == 1 {
                ok &= *v == plan.template[out];
            }
        }
        let mut tmp = [0u8; 72];
        tmp[0] = ev.kind.tag();
        let mut p = 1usize;
        for s in &plan.steps[..plan.nsteps as usize] {
            if s.mode != Mode::Raw {
                return false;
            }
            let v = vals[s.out as usize % 6];
            ok &= s.n >= 8 || v >> (8 * s.n as u32) == 0;
            let at = p & 63;
            tmp[at..at + 8].copy_from_slice(&(v << (s.shift as u32 & 63)).to_be_bytes());
            p += s.n as usize;
        }
        let len = ev.attributes.len();
        let at = p & 63;
        match plan.attrs {
            Width::Fixed(n) => ok &= len == n as usize,
            Width::V1 => {
                ok &= len <= 0xff;
                tmp[at] = len as u8;
                p += 1;
            }
            Width::V2 => {
                ok &= len <= 0xffff;
                tmp[at..at + 2].copy_from_slice(&(len as u16).to_be_bytes());
                p += 2;
            }
        }
        if !ok {
            return false;
        }
        self.buf.extend_from_slice(&tmp[..p]);
        self.buf.extend_from_slice(ev.attributes);
        self.records += 1;
        self.items += 1;
        true
    }

    /// Writes a data record with absolute values.
    pub fn write_event(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        if matches!(self.policy, Policy::SmallSize | Policy::CombinedSize) {
            self.small_size(ev)?;
        }
        if matches!(self.policy, Policy::SameSize | Policy::CombinedSize) {
            self.same_size(ev)?;
        }
        if self.try_write_plain(ev) {
            return self.spill();
        }
        if self.policy != Policy::Explicit {
            self.make_room(ev)?;
        }
        let mark = self.buf.len();
        let saved: [u64; 6] = std::array::from_fn(|i| self.state.fields[i].prev);
        self.buf.push(ev.kind.tag());
        for (f, v) in ev.numeric_values() {
            let st = &mut self.state.fields[f as usize];
            let mut stored = 0;
            if let Some(why) = encode_value(st, v, &mut stored) {
                self.buf.truncate(mark);
                for (i, p) in saved.iter().enumerate() {
                    self.state.fields[i].prev = *p;
                }
                return Err(self.err(HatfError::DoesNotFit {
                    field: f,
                    value: v,
                    why,
                }));
            }
            st.prev = v;
            let n = st.width.bytes();
            self.buf.extend_from_slice(&stored.to_be_bytes()[8 - n..]);
        }
        let a = self.state.field(Field::Attributes);
        let len = ev.attributes.len();
        if let Some(why) = attrs_fit(a.width, a.interp, len) {
            self.buf.truncate(mark);
            for (i, p) in saved.iter().enumerate() {
                self.state.fields[i].prev = *p;
            }
            return Err(self.err(HatfError::AttributesDoNotFit { len, why }));
        }
        match a.width {
            Width::V1 => self.buf.push(len as u8),
            Width::V2 => self.buf.extend_from_slice(&(len as u16).to_be_bytes()),
            Width::Fixed(_) => {}
        }
        self.buf.extend_from_slice(ev.attributes);
        self.records += 1;
        self.items += 1;
        self.spill()
    }

    /// Flushes everything and returns the underlying writer.
    pub fn into_inner(mut self) -> Result<W, Error> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        Ok(self.out)
    }
}
