//! The HATF encoder: absolute records in, HATF bytes into a buffer, with
//! the planners of an encoding [`Policy`] placing metadata records before
//! them. It owns no output, so it can be cloned to try a policy on a window
//! of records ([`crate::policy::best`]); [`crate::Writer`] drives it.

use tramp_core::Error;

use crate::error::HatfError;
use crate::item::{Event, Item};
use crate::plan::{Mode, Plan};
use crate::policy::address::{AddressRuns, Look};
use crate::policy::narrow::{Narrow, min_signed_width};
use crate::policy::runs::Runs;
use crate::policy::{Policy, Rules};
use crate::reader::FORMAT;
use crate::spec::{
    Field, Interp, Meta, OP_SET_INTERP, OP_SET_SIZE, TAG_COMMENT, TAG_METADATA, Width,
};
use crate::state::{State, fits_signed, fits_unsigned, min_width};

/// The planners of every rule, each with its own run state.
#[derive(Clone, Copy, Debug)]
struct Planners {
    size: Narrow,
    same_size: Runs,
    address: AddressRuns,
    time: Narrow,
    thread: Runs,
    heap: Runs,
}

impl Planners {
    fn new(rules: Rules) -> Planners {
        Planners {
            size: Narrow::new(Field::Size),
            same_size: Runs::new(Field::Size, false),
            address: AddressRuns::new(rules.address),
            time: Narrow::new(Field::Time),
            thread: Runs::new(Field::Thread, true),
            heap: Runs::new(Field::Heap, true),
        }
    }
}

/// Encodes HATF records into a byte buffer.
#[derive(Clone, Debug)]
pub struct Encoder {
    pub(crate) buf: Vec<u8>,
    state: State,
    /// The encoding in effect, compiled per record type (shared with the
    /// reader); a plan whose bit is set in `stale` is rebuilt when a record
    /// of its type is next written (a metadata record used to rebuild all
    /// ten, which under `best` was a sixth of the encoding's time).
    plans: [Plan; 10],
    stale: u16,
    policy: Policy,
    /// Whether the caller has written a metadata record (the explicit
    /// policy keeps the input's encoding only once the input has one).
    given_meta: bool,
    rules: Rules,
    planners: Planners,
    /// Records written, metadata included.
    records: u64,
    /// Items given by the caller (for error messages).
    items: u64,
    /// Tests: every record through the general path, to check that the
    /// fast one writes the same bytes.
    #[cfg(test)]
    pub(crate) general_only: bool,
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

impl Encoder {
    pub fn new(policy: Policy) -> Self {
        let rules = policy.rules();
        Encoder {
            buf: Vec::new(),
            state: State::new(),
            plans: Plan::all(&State::new()),
            stale: 0,
            policy,
            given_meta: false,
            rules,
            planners: Planners::new(rules),
            records: 0,
            items: 0,
            #[cfg(test)]
            general_only: false,
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

    /// Bytes encoded and not yet taken.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Changes the rules from the next record on (the planners keep their
    /// run state; a rule switched off simply stops placing metadata).
    pub fn set_rules(&mut self, rules: Rules) {
        if rules.address != self.rules.address {
            let raw = self.planners.address;
            self.planners.address = AddressRuns::new(rules.address).carrying(&raw);
        }
        self.rules = rules;
    }

    fn err(&self, e: HatfError) -> Error {
        Error::encode(FORMAT, self.items, e)
    }

    /// Encodes any item: events and comments always; metadata only under
    /// the explicit policy (the others place their own).
    pub fn write_item(&mut self, item: &Item<'_>, look: Look<'_>) -> Result<(), Error> {
        match item {
            Item::Event(e) => self.write_event(e, look),
            Item::Comment(c) => self.write_comment(c),
            Item::Meta(m) => {
                if self.policy == Policy::Explicit {
                    self.write_meta(*m)
                } else {
                    self.items += 1;
                    Ok(())
                }
            }
        }
    }

    /// Writes a metadata record and applies it.
    pub fn write_meta(&mut self, m: Meta) -> Result<(), Error> {
        self.put_meta(m)?;
        self.given_meta = true;
        self.items += 1;
        Ok(())
    }

    fn put_meta(&mut self, m: Meta) -> Result<(), Error> {
        self.state.apply(&m).map_err(|e| self.err(e))?;
        self.stale = u16::MAX;
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
        Ok(())
    }

    fn put_metas(&mut self, ms: impl IntoIterator<Item = Option<Meta>>) -> Result<(), Error> {
        for m in ms.into_iter().flatten() {
            self.put_meta(m)?;
        }
        Ok(())
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
        Ok(())
    }

    /// The metadata the policy's rules place before `ev`, each rule seeing
    /// the state the ones before it left.
    fn plan(&mut self, ev: &Event<'_>, look: Look<'_>) -> Result<(), Error> {
        let r = self.rules;
        let has = |f| ev.kind.has(f);
        if has(Field::Size) {
            if r.small_size {
                let m = self
                    .planners
                    .size
                    .plan(self.state.field(Field::Size), ev.size);
                self.put_metas([m])?;
            }
            if r.same_size {
                let m = self
                    .planners
                    .same_size
                    .plan(self.state.field(Field::Size), ev.size);
                self.put_metas(m)?;
            }
        }
        if r.address.any() {
            let m = self
                .planners
                .address
                .plan(self.state.field(Field::Address), ev, look);
            self.put_metas(m)?;
        }
        if r.time_delta && has(Field::Time) {
            if let Interp::Default(d) = self.state.field(Field::Time).interp
                && d != ev.time
            {
                self.put_meta(Meta::SetInterp(Field::Time, Interp::Delta(ev.time)))?;
            }
            let m = self
                .planners
                .time
                .plan(self.state.field(Field::Time), ev.time);
            self.put_metas([m])?;
        }
        if r.thread_heap_runs {
            if has(Field::Thread) {
                let m = self
                    .planners
                    .thread
                    .plan(self.state.field(Field::Thread), ev.thread);
                self.put_metas(m)?;
            }
            if has(Field::Heap) {
                let m = self
                    .planners
                    .heap
                    .plan(self.state.field(Field::Heap), ev.heap);
                self.put_metas(m)?;
            }
        }
        Ok(())
    }

    /// Under the naive policy, places the metadata `ev` needs.
    fn make_room(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        let mut largest = [0u64; 6];
        let mut present = [false; 6];
        let mut switched = [false; 6];
        let mut offsets = [false; 6];
        let mut raw = [false; 6];
        let mut signed_need = [0usize; 6];
        let mut sim_prev: [Option<u64>; 6] = [None; 6];
        for (f, v) in ev.numeric_values() {
            let i = f as usize;
            largest[i] = largest[i].max(v);
            present[i] = true;
            // Previous values chain through the record (a realloc's two
            // addresses).
            let mut st = self.state.fields[i];
            st.prev = sim_prev[i].unwrap_or(st.prev);
            match st.interp {
                // Offsets that outgrow their width get a wider width (widths
                // only grow); the interpretation the caller chose stays.
                Interp::Delta(_) | Interp::BaseOffset(_) => {
                    let from = match st.interp {
                        Interp::BaseOffset(b) => b,
                        _ => st.prev,
                    };
                    sim_prev[i] = Some(v);
                    let d = v.wrapping_sub(from) as i64;
                    signed_need[i] = signed_need[i].max(min_signed_width(d));
                    offsets[i] = true;
                }
                Interp::None => raw[i] = true,
                _ => {
                    sim_prev[i] = Some(v);
                    if !switched[i] && encode_value(&st, v, &mut 0).is_some() {
                        // Leave the default (or stride) interpretation for good.
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
            // A default or stride value that holds needs no width.
            if !present[i] || !(raw[i] || switched[i]) {
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

    /// The common case: every value fits the encoding in effect (stored
    /// raw, as an offset from a base or from the previous value, or a
    /// matching constant or stride), so the record needs no new metadata.
    /// Returns whether the record was written; if not, nothing changed.
    /// Previous values are kept only for delta and stride fields, the only
    /// ones that read them (setting either resets it); the general path
    /// keeps them for every field, to the same effect.
    #[inline]
    fn try_write_plain(&mut self, ev: &Event<'_>) -> bool {
        #[cfg(test)]
        if self.general_only {
            return false;
        }
        let k = ev.kind as usize;
        if self.stale >> k & 1 == 1 {
            self.plans[k] = Plan::build(&self.state, ev.kind);
            self.stale &= !(1 << k);
        }
        let plan = &self.plans[k];
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
        // Previous values chain through the record (a realloc's two
        // addresses share the address field).
        let mut prev: [u64; 8] = [0; 8];
        let mut chained = 0u8;
        for s in &plan.steps[..plan.nsteps as usize] {
            let v = vals[s.out as usize % 6];
            let f = s.field as usize & 7;
            let stored = match s.mode {
                Mode::Raw => {
                    ok &= s.n >= 8 || v >> (8 * s.n as u32) == 0;
                    v
                }
                Mode::Base => {
                    let d = v.wrapping_sub(s.k);
                    ok &= fits_signed(d as i64, s.n as usize);
                    d
                }
                Mode::Delta | Mode::Stride => {
                    let last = if chained >> f & 1 == 1 {
                        prev[f]
                    } else {
                        self.state.fields[f % 6].prev
                    };
                    prev[f] = v;
                    chained |= 1 << f;
                    let d = v.wrapping_sub(last);
                    if s.mode == Mode::Delta {
                        ok &= fits_signed(d as i64, s.n as usize);
                        d
                    } else {
                        // Zero width: nothing stored.
                        ok &= d == s.k;
                        0
                    }
                }
                // Constants have no steps.
                Mode::Const => return false,
            };
            let at = p & 63;
            tmp[at..at + 8].copy_from_slice(&(stored << (s.shift as u32 & 63)).to_be_bytes());
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
        // Most records (every one under a policy without deltas or
        // strides) have no previous value to keep.
        if chained != 0 {
            for (f, st) in self.state.fields.iter_mut().enumerate() {
                if chained >> f & 1 == 1 {
                    st.prev = prev[f];
                }
            }
        }
        self.buf.extend_from_slice(&tmp[..p]);
        self.buf.extend_from_slice(ev.attributes);
        self.records += 1;
        self.items += 1;
        true
    }

    /// Writes a data record with absolute values.
    pub fn write_event(&mut self, ev: &Event<'_>, look: Look<'_>) -> Result<(), Error> {
        if self.policy != Policy::Explicit {
            self.plan(ev, look)?;
        }
        if self.try_write_plain(ev) {
            return Ok(());
        }
        // The explicit policy keeps the input's encoding; an input that has
        // given none (a text trace without `set` lines, such as `tramp
        // dump` of a tpack trace) gets metadata placed where its values do
        // not fit the defaults, as the naive policy places it.
        if self.policy != Policy::Explicit || !self.given_meta {
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::item::{OwnedEvent, OwnedItem};
    use crate::policy::POLICIES;
    use crate::spec::EVENT_KINDS;
    use crate::writer::Writer;

    /// Events whose values wander by small and large steps, so that every
    /// interpretation a policy picks both holds and breaks.
    fn events() -> impl Strategy<Value = Vec<OwnedItem>> {
        prop::collection::vec(
            (
                0usize..10,
                prop_oneof![0i64..3, -300i64..300, -70_000i64..70_000, any::<i64>()],
                prop_oneof![Just(0i64), Just(16), Just(48), -5000i64..5000],
                0u64..3,
                0u64..3,
                prop_oneof![0u64..200, 0u64..100_000],
                0usize..3,
            ),
            1..300,
        )
        .prop_map(|steps| {
            let (mut addr, mut time) = (0x5555_0000_1000u64, 1_000_000u64);
            let mut size = 24u64;
            steps
                .into_iter()
                .map(|(k, jump, step, thread, heap, dt, attrs)| {
                    let mut e = OwnedEvent::new(EVENT_KINDS[k]);
                    addr = addr.wrapping_add(jump as u64);
                    e.address = addr;
                    addr = addr.wrapping_add(step as u64);
                    e.new_address = addr;
                    size = size.wrapping_add((jump as u64) & 0x3f);
                    e.size = size;
                    e.thread = thread;
                    e.heap = heap;
                    time = time.wrapping_add(dt);
                    e.time = time;
                    e.attributes = vec![7; attrs * 3];
                    OwnedItem::Event(e)
                })
                .collect()
        })
    }

    fn encode(items: &[OwnedItem], policy: crate::Policy, general_only: bool) -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), policy);
        w.general_path_only(general_only);
        for it in items {
            w.write_item(&it.as_item()).expect("encodes");
        }
        w.into_inner().expect("finishes")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// The fast path writes exactly what the general path writes, under
        /// every policy that places its own metadata.
        #[test]
        fn the_fast_path_writes_what_the_general_path_writes(items in events()) {
            for (name, policy) in POLICIES {
                if policy == crate::Policy::Explicit {
                    continue;
                }
                let fast = encode(&items, policy, false);
                let general = encode(&items, policy, true);
                prop_assert!(fast == general, "policy {name}: the two paths differ");
            }
        }
    }
}
