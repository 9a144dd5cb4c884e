//! The heap view: the one step of the flow that turns records of any
//! format into heap events, through their kind and field roles, and keeps
//! the trace's live objects once for every heap analysis.
//!
//! Each event says what the record did to the live objects: the object an
//! allocation made, the object a free ended (or that it freed nothing
//! known), the object an in-place realloc resized, the objects an
//! allocation displaced, whether the record is one a realloc implied, and
//! the live totals after it. Statistics, site tables, allocator replay and
//! the object-graph view read that; none keeps its own map of objects.
//!
//! What the view keeps per live object beside its address and size is
//! chosen by the analyses it feeds ([`Keep`]): nothing for the statistics
//! (16 bytes an object, as a plain address → size table), the site for
//! the site tables, a slot for replay, everything ([`Born`]) for the graph
//! view. Each extra byte per object costs cache misses on large traces, so
//! the common case stays small (measured in docs/benchmarks.md).
//!
//! Analyses of heap events implement `Analysis<Heap<K>>`; a [`HeapFlow`]
//! carries them (a pair of analyses is one) and is itself an analysis of
//! records, so the driver calls it once per record and it calls its
//! analyses statically.

use tramp_core::{Analysis, Error, ReallocOutcome, Record, RecordKind, Role, Warning};

use crate::implied::ImpliedRecords;
use crate::live::{LiveObjects, Object};
use crate::sampling::Sampling;
use crate::site::{SITE_PLAIN, Site, decode_site};

pub use crate::event::*;

/// Where a record type keeps the fields the heap view reads.
#[derive(Clone, Copy, Debug, Default)]
struct RoleIndex {
    size: Option<usize>,
    address: Option<usize>,
    old: Option<usize>,
    thread: Option<usize>,
    heap: Option<usize>,
    time: Option<usize>,
    site: Option<usize>,
    attributes: Option<usize>,
}

impl RoleIndex {
    fn of(ty: &tramp_core::RecordType) -> RoleIndex {
        RoleIndex {
            size: ty.role_index(Role::Size),
            address: ty.role_index(Role::Address),
            old: ty.role_index(Role::OldAddress),
            thread: ty.role_index(Role::Thread),
            heap: ty.role_index(Role::Heap),
            time: ty.role_index(Role::Time),
            site: ty.role_index(Role::Site),
            attributes: ty.role_index(Role::Attributes),
        }
    }
}

/// The largest block an allocator can give: PTRDIFF_MAX.
pub const MAX_BLOCK: u64 = i64::MAX as u64;

/// Turns records into heap events and keeps the live objects (each with
/// what `K` keeps). Per record type it remembers where the roles are, so
/// no field is searched for per record.
pub struct HeapView<K = Born> {
    /// Per type index: the type it was computed for (address, then name, to
    /// tell schemas apart) and its role positions.
    index: Vec<Option<(usize, String, RoleIndex)>>,
    /// Heap 0's live objects (the C allocator's, or a trace's only heap).
    live: LiveObjects<K>,
    /// The objects of every other heap, by heap id: blocks a program
    /// reported from its own allocator (heap 1 of a recording, carved out
    /// of heap 0's chunks), or a trace's other heaps. A heap's objects
    /// displace only each other's, so a block inside a live chunk is an
    /// object of its own beside it.
    nested: Vec<(u64, LiveObjects<K>)>,
    /// Objects alive and their bytes in `nested`.
    nested_live: Live,
    intervals: bool,
    implied: ImpliedRecords,
    next_id: u64,
    spare_slots: Vec<u32>,
    next_slot: u32,
    records: u64,
    last_site: LastSite,
    /// The block the last heap event allocated (heap, address), while no
    /// free came after it: what a free must end to be a temporary
    /// allocation.
    last_alloc: Option<(u64, u64)>,
    /// The trace's sampling, once its comment was read.
    sampling: Option<Sampling>,
    /// The trace starts at an attach (its comment was read).
    attached: bool,
    selected: crate::event::Selected,
    /// What the selection's note says was selected.
    selection: Option<String>,
    /// The processes the trace's notes name.
    images: crate::images::Images,
}

/// The last attributes decoded into a site: allocations mostly repeat
/// the one before's, and comparing a few bytes is cheaper than decoding
/// them (`stats --sites` on a recording spent 60 instructions an
/// allocation decoding).
#[derive(Default)]
struct LastSite {
    /// The bytes with their length in the last byte (0: none yet).
    key: u128,
    site: Option<Site>,
}

impl LastSite {
    #[inline]
    fn decode(&mut self, b: &[u8]) -> Option<Site> {
        if b.len() >= 16 {
            return decode_site(b);
        }
        // The bytes as one number: one comparison, no call.
        let mut k = [0u8; 16];
        for (d, s) in k.iter_mut().zip(b) {
            *d = *s;
        }
        k[15] = b.len() as u8;
        let key = u128::from_le_bytes(k);
        if key == self.key {
            return self.site;
        }
        self.key = key;
        self.site = decode_site(b);
        self.site
    }
}

impl<K: Keep> Default for HeapView<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Keep> HeapView<K> {
    /// A view that finds live objects by start address.
    pub fn new() -> Self {
        HeapView {
            index: Vec::new(),
            live: LiveObjects::new(),
            nested: Vec::new(),
            nested_live: Live::default(),
            intervals: false,
            implied: ImpliedRecords::default(),
            next_id: 1,
            spare_slots: Vec::new(),
            next_slot: 0,
            records: 0,
            last_site: LastSite::default(),
            last_alloc: None,
            sampling: None,
            attached: false,
            selected: crate::event::Selected::No,
            selection: None,
            images: Default::default(),
        }
    }

    /// A view that also finds the object containing any address (for loads
    /// and stores), and whose allocations displace every object they
    /// overlap.
    pub fn with_intervals() -> Self {
        HeapView {
            live: LiveObjects::with_intervals(),
            intervals: true,
            ..Self::new()
        }
    }

    /// What part of the trace the records are (a `tramp:selected` note's
    /// words), if they are a selection.
    pub fn selection(&self) -> Option<&str> {
        self.selection.as_deref()
    }

    /// The programs the trace's processes ran, as its notes say.
    pub fn images(&self) -> &[crate::images::Image] {
        &self.images.list
    }

    /// The live objects as the records so far left them.
    pub fn live(&self) -> &LiveObjects<K> {
        &self.live
    }

    fn roles(&mut self, ty: &tramp_core::RecordType) -> RoleIndex {
        if self.index.len() <= ty.index {
            self.index.resize(ty.index + 1, None);
        }
        let addr = ty as *const tramp_core::RecordType as usize;
        match &self.index[ty.index] {
            // The type at an index only changes if records of several
            // schemas are mixed; the type's address, then its name, tell.
            Some((a, _, ix)) if *a == addr => *ix,
            Some((_, name, ix)) if *name == ty.name => *ix,
            _ => {
                let ix = RoleIndex::of(ty);
                self.index[ty.index] = Some((addr, ty.name.clone(), ix));
                ix
            }
        }
    }

    /// The live object containing `address` (with intervals; else the one
    /// starting there): a reported block before the chunk it lies in.
    pub fn find(&self, address: u64) -> Option<Object<&K>> {
        self.nested
            .iter()
            .find_map(|(_, m)| m.find(address))
            .or_else(|| self.live.find(address))
    }

    /// The live objects of `heap`.
    #[inline(always)]
    fn objects(&mut self, heap: u64) -> &mut LiveObjects<K> {
        if heap == 0 {
            &mut self.live
        } else {
            self.nested_objects(heap)
        }
    }

    #[cold]
    fn nested_objects(&mut self, heap: u64) -> &mut LiveObjects<K> {
        let i = match self.nested.iter().position(|(h, _)| *h == heap) {
            Some(i) => i,
            // Past MAX_HEAPS heaps, the others share the last map (a trace
            // of many heaps stays linear: `find` asks every map).
            None if self.nested.len() >= MAX_HEAPS => MAX_HEAPS - 1,
            None => {
                let m = if self.intervals {
                    LiveObjects::with_intervals()
                } else {
                    LiveObjects::new()
                };
                self.nested.push((heap, m));
                self.nested.len() - 1
            }
        };
        &mut self.nested[i].1
    }

    /// Objects and bytes of `heap`'s map before a change (heap 0 needs
    /// none: its totals are its map's).
    #[inline(always)]
    fn before(&mut self, heap: u64) -> Live {
        if heap == 0 {
            return Live::default();
        }
        let m = self.nested_objects(heap);
        Live {
            objects: m.len() as u64,
            bytes: m.live_bytes(),
        }
    }

    /// Moves the other heaps' totals by what a change to `heap` did.
    #[inline(always)]
    fn changed(&mut self, heap: u64, before: Live) {
        if heap != 0 {
            let m = self.nested_objects(heap);
            let (objects, bytes) = (m.len() as u64, m.live_bytes());
            let t = &mut self.nested_live;
            t.objects = (t.objects + objects).saturating_sub(before.objects);
            t.bytes = t.bytes.saturating_add(bytes).saturating_sub(before.bytes);
        }
    }

    #[inline(always)]
    fn step(&self, event: HeapEvent<K>) -> HeapStep<K> {
        HeapStep {
            event,
            live: Live {
                objects: self.live.len() as u64 + self.nested_live.objects,
                bytes: self
                    .live
                    .live_bytes()
                    .saturating_add(self.nested_live.bytes),
            },
            sampling: self.sampling,
            attached: self.attached,
            selected: self.selected,
        }
    }

    #[inline]
    fn release(&mut self, o: &Object<K>) {
        if K::SLOT {
            self.spare_slots.push(o.extra.slot());
        }
    }

    /// Calls `emit` with the heap events `rec` stands for: none for a
    /// record of no heap kind, one for most, and for an allocation over
    /// live objects one `Displaced` each before the `Alloc`. Inlined
    /// into its caller, so that the analyses' code joins the view's.
    #[inline(always)]
    pub fn feed<F>(&mut self, rec: &Record<'_>, emit: &mut F) -> Result<(), Error>
    where
        F: FnMut(&HeapStep<K>) -> Result<(), Error>,
    {
        self.records += 1;
        let ty = rec.record_type();
        let kind = ty.kind;
        if kind == RecordKind::Comment {
            if let Some(text) = rec.role(Role::Text).and_then(|v| v.as_bytes()) {
                if let Some(s) = Sampling::parse(text) {
                    self.sampling = Some(s);
                } else if crate::attach::is_attached_note(text) {
                    self.attached = true;
                } else if self.images.note(text) {
                } else if tramp_core::select::is_selected_note(text) {
                    let words = &text[tramp_core::select::NOTE.len()..];
                    self.selection = Some(String::from_utf8_lossy(words).trim().to_string());
                    self.selected = if tramp_core::select::selects_threads(text) {
                        crate::event::Selected::Threads
                    } else {
                        crate::event::Selected::Time
                    };
                }
            }
            return Ok(());
        }
        if !matches!(
            kind,
            RecordKind::Alloc
                | RecordKind::Free
                | RecordKind::Realloc(_)
                | RecordKind::HeapCreate
                | RecordKind::HeapDestroy
                | RecordKind::ThreadCreate
                | RecordKind::ThreadDestroy
        ) {
            return Ok(());
        }
        let ix = self.roles(ty);
        // `Record::int` reads a scalar slot (or a fixed layout's bytes)
        // without assembling a `Value`: this runs for every record.
        let u = |i: Option<usize>| i.and_then(|i| rec.int(i)).map_or(0, |v| v as u64);
        let cx = Context {
            thread: u(ix.thread),
            heap: u(ix.heap),
            time: u(ix.time),
        };
        // No allocator hands out a block above PTRDIFF_MAX (glibc's, and
        // every C allocator, fails the call): such a record is damage, not
        // a block whose bytes would swamp every total.
        if matches!(kind, RecordKind::Alloc | RecordKind::Realloc(_)) && u(ix.size) > MAX_BLOCK {
            return Err(Error::Schema {
                record_type: ty.name.clone(),
                message: format!(
                    "record {}: a block of {} bytes, more than any allocator gives (PTRDIFF_MAX, 2^63 − 1): \
                     the allocation would have failed",
                    self.records,
                    u(ix.size)
                ),
            });
        }
        let step = match kind {
            RecordKind::Alloc => {
                let (size, address) = (u(ix.size), u(ix.address));
                let site = if !K::SITE {
                    Site::default()
                } else {
                    ix.attributes
                        .and_then(|i| rec.get(i))
                        .and_then(|v| v.as_bytes())
                        .and_then(|b| self.last_site.decode(b))
                        .or_else(|| {
                            ix.site
                                .and_then(|i| rec.get(i))
                                .and_then(|v| v.as_u64())
                                .map(|value| Site {
                                    kind: SITE_PLAIN,
                                    value,
                                })
                        })
                        .unwrap_or_default()
                };
                let implied = self.implied.is_implied_alloc(cx.thread, address);
                let slot = if !K::SLOT {
                    0
                } else {
                    self.spare_slots.pop().unwrap_or_else(|| {
                        self.next_slot += 1;
                        self.next_slot - 1
                    })
                };
                let born = Born {
                    id: self.next_id,
                    site,
                    birth: ix.time.map_or(self.records, |_| cx.time),
                    slot,
                };
                self.next_id += 1;
                let kept = K::keep(&born);
                self.last_alloc = Some((cx.heap, address));
                let before = self.before(cx.heap);
                let displaced = self.objects(cx.heap).insert(address, size, kept);
                self.changed(cx.heap, before);
                for d in &displaced {
                    self.release(d);
                }
                // The displaced objects are gone from the totals already.
                for d in &displaced {
                    emit(&self.step(HeapEvent::Displaced { object: *d, cx }))?;
                }
                self.step(HeapEvent::Alloc {
                    object: Object {
                        address,
                        size,
                        extra: kept,
                    },
                    displaced: displaced.len() as u32,
                    implied,
                    cx,
                })
            }
            RecordKind::Free => {
                let address = u(ix.address);
                let implied = self.implied.is_implied_free(cx.thread, address);
                let before = self.before(cx.heap);
                let object = self.objects(cx.heap).remove(address);
                self.changed(cx.heap, before);
                if let Some(o) = &object {
                    self.release(o);
                }
                // A realloc's own free is counted at the realloc (where
                // heaptrack records it); a free of no live block is no
                // heap event to heaptrack.
                let mut temporary = false;
                if !implied && object.is_some() {
                    temporary = self.last_alloc == Some((cx.heap, address));
                    self.last_alloc = None;
                }
                self.step(HeapEvent::Free {
                    address,
                    object,
                    implied,
                    temporary,
                    cx,
                })
            }
            RecordKind::Realloc(outcome) => {
                let (size, old, new) = (u(ix.size), u(ix.old), u(ix.address));
                // The records that follow a realloc and are part of it.
                let expect = match outcome {
                    ReallocOutcome::Moved => (Some(new), Some(old)),
                    ReallocOutcome::AllocOnly => (Some(new), None),
                    ReallocOutcome::FreeOnly => (None, Some(old)),
                    ReallocOutcome::InPlace => (None, None),
                };
                self.implied.after_realloc(cx.thread, expect.0, expect.1);
                // heaptrack records a realloc as the free of its old block,
                // then the allocation of its new one (which follows here as
                // its own record unless the block stayed in place).
                let mut temporary = false;
                if old != 0 && outcome != ReallocOutcome::AllocOnly {
                    temporary = self.last_alloc == Some((cx.heap, old));
                    self.last_alloc = None;
                }
                if outcome == ReallocOutcome::InPlace {
                    self.last_alloc = Some((cx.heap, new));
                }
                // Who is reallocated matters to analyses that follow
                // objects; a view that keeps nothing per object (the
                // statistics') saves the lookup.
                let from = if size_of::<K>() == 0 {
                    None
                } else {
                    self.objects(cx.heap).get(old).map(|o| Object {
                        address: o.address,
                        size: o.size,
                        extra: *o.extra,
                    })
                };
                let mut resized = None;
                let before = self.before(cx.heap);
                if outcome == ReallocOutcome::InPlace {
                    // No accompanying records: the object changes size here.
                    let live = self.objects(cx.heap);
                    let key = if live.contains(new) { new } else { old };
                    if let Some(before) = live.resize(key, size)
                        && let Some(o) = live.get(key)
                    {
                        resized = Some((
                            Object {
                                address: key,
                                size,
                                extra: *o.extra,
                            },
                            before,
                        ));
                    }
                }
                self.changed(cx.heap, before);
                self.step(HeapEvent::Realloc {
                    outcome,
                    size,
                    old,
                    new,
                    from,
                    resized,
                    temporary,
                    cx,
                })
            }
            RecordKind::HeapCreate => self.step(HeapEvent::HeapCreate { cx }),
            RecordKind::HeapDestroy => self.step(HeapEvent::HeapDestroy { cx }),
            RecordKind::ThreadCreate => self.step(HeapEvent::ThreadCreate { cx }),
            RecordKind::ThreadDestroy => self.step(HeapEvent::ThreadDestroy { cx }),
            _ => return Ok(()),
        };
        emit(&step)
    }
}

/// The heap view with the analyses it feeds: an analysis of records whose
/// report is theirs. What the view keeps per object (`K`) follows from
/// the analyses' own event type.
pub struct HeapFlow<A, K = Born> {
    view: HeapView<K>,
    analyses: A,
}

impl<K: Keep, A: Analysis<Heap<K>>> HeapFlow<A, K> {
    pub fn new(analyses: A) -> Self {
        HeapFlow {
            view: HeapView::new(),
            analyses,
        }
    }

    /// The analyses, as the records so far left them.
    pub fn analyses(&self) -> &A {
        &self.analyses
    }

    /// The analyses, done with the records.
    pub fn into_analyses(self) -> A {
        self.analyses
    }

    /// The view, for its live objects.
    pub fn view(&self) -> &HeapView<K> {
        &self.view
    }
}

impl<K: Keep, A: Analysis<Heap<K>>> Analysis for HeapFlow<A, K> {
    type Report = A::Report;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let analyses = &mut self.analyses;
        self.view.feed(rec, &mut |step| analyses.observe(step))
    }

    fn warning(&mut self, warning: &Warning) {
        self.analyses.warning(warning);
    }

    fn finish(self) -> A::Report {
        self.analyses.finish()
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Arc;

    use tramp_core::{FieldDef, ReallocOutcome, Record, RecordBuf, RecordKind, Role, Schema};

    pub struct Trace {
        schema: Arc<Schema>,
        buf: RecordBuf,
    }

    const OUTCOMES: [ReallocOutcome; 4] = [
        ReallocOutcome::InPlace,
        ReallocOutcome::Moved,
        ReallocOutcome::AllocOnly,
        ReallocOutcome::FreeOnly,
    ];

    impl Trace {
        pub fn new() -> Trace {
            let u64s = FieldDef::u64s;
            let mut s = Schema::new("test-heap");
            s.add_type(
                "alloc",
                RecordKind::Alloc,
                u64s(&[
                    ("size", Role::Size),
                    ("address", Role::Address),
                    ("thread", Role::Thread),
                ]),
            );
            s.add_type(
                "free",
                RecordKind::Free,
                u64s(&[("address", Role::Address), ("thread", Role::Thread)]),
            );
            for (i, o) in OUTCOMES.iter().enumerate() {
                s.add_type(
                    format!("realloc{i}"),
                    RecordKind::Realloc(*o),
                    u64s(&[
                        ("size", Role::Size),
                        ("old", Role::OldAddress),
                        ("address", Role::Address),
                        ("thread", Role::Thread),
                    ]),
                );
            }
            // Types 6 and 7: with the heap.
            s.add_type(
                "alloc_in",
                RecordKind::Alloc,
                u64s(&[
                    ("size", Role::Size),
                    ("address", Role::Address),
                    ("thread", Role::Thread),
                    ("heap", Role::Heap),
                ]),
            );
            s.add_type(
                "free_in",
                RecordKind::Free,
                u64s(&[
                    ("address", Role::Address),
                    ("thread", Role::Thread),
                    ("heap", Role::Heap),
                ]),
            );
            // Types 8 and 9: a heap's creation and destruction.
            for (name, kind) in [
                ("create_heap", RecordKind::HeapCreate),
                ("destroy_heap", RecordKind::HeapDestroy),
            ] {
                s.add_type(
                    name,
                    kind,
                    u64s(&[("thread", Role::Thread), ("heap", Role::Heap)]),
                );
            }
            Trace {
                schema: s.shared(),
                buf: RecordBuf::new(),
            }
        }

        /// A heap created (`destroy` false) or destroyed by `thread`.
        pub fn heap<R>(
            &mut self,
            destroy: bool,
            heap: u64,
            thread: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            self.lend(8 + destroy as usize, &[thread, heap], f)
        }

        /// An allocation in `heap` by `thread`.
        pub fn alloc_by<R>(
            &mut self,
            heap: u64,
            size: u64,
            address: u64,
            thread: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            self.lend(6, &[size, address, thread, heap], f)
        }

        /// An allocation in `heap`.
        pub fn alloc_in<R>(
            &mut self,
            heap: u64,
            size: u64,
            address: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            self.lend(6, &[size, address, 0, heap], f)
        }

        /// A free in `heap`.
        pub fn free_in<R>(
            &mut self,
            heap: u64,
            address: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            self.lend(7, &[address, 0, heap], f)
        }

        fn lend<R>(&mut self, ty: usize, values: &[u64], f: impl FnOnce(&Record<'_>) -> R) -> R {
            let t = &self.schema.types[ty];
            self.buf.reset(t);
            for (i, v) in values.iter().enumerate() {
                self.buf.set_u64(i, *v);
            }
            f(&self.buf.as_record(t))
        }

        pub fn alloc<R>(
            &mut self,
            size: u64,
            address: u64,
            thread: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            self.lend(0, &[size, address, thread], f)
        }

        pub fn free<R>(
            &mut self,
            address: u64,
            thread: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            self.lend(1, &[address, thread], f)
        }

        #[allow(clippy::too_many_arguments)]
        pub fn realloc<R>(
            &mut self,
            outcome: ReallocOutcome,
            size: u64,
            old: u64,
            new: u64,
            thread: u64,
            f: impl FnOnce(&Record<'_>) -> R,
        ) -> R {
            let i = OUTCOMES.iter().position(|o| *o == outcome).unwrap();
            self.lend(2 + i, &[size, old, new, thread], f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Trace;
    use super::*;

    /// An event, the live totals after it, and who its object is.
    #[derive(Debug)]
    struct Seen {
        event: HeapEvent,
        live: Live,
        id: u64,
        birth: u64,
    }

    fn steps(
        view: &mut HeapView,
        t: &mut Trace,
        op: impl FnOnce(&mut Trace, &mut dyn FnMut(&Record<'_>)),
    ) -> Vec<Seen> {
        let mut out = Vec::new();
        op(t, &mut |rec| {
            view.feed(rec, &mut |s| {
                let object = match s.event {
                    HeapEvent::Alloc { object, .. } | HeapEvent::Displaced { object, .. } => {
                        Some(object)
                    }
                    HeapEvent::Free { object, .. } => object,
                    HeapEvent::Realloc { from, .. } => from,
                    _ => None,
                };
                let born = object.map(|o| o.extra).unwrap_or_default();
                out.push(Seen {
                    event: s.event,
                    live: s.live,
                    id: born.id,
                    birth: born.birth,
                });
                Ok(())
            })
            .unwrap()
        });
        out
    }

    #[test]
    fn a_block_of_another_heap_inside_a_live_chunk_is_an_object_of_its_own() {
        let (mut v, mut t) = (HeapView::with_intervals(), Trace::new());
        steps(&mut v, &mut t, |t, f| t.alloc(4096, 0x1000, 0, |r| f(r)));
        // A reported block at the chunk's own address, and one inside it.
        let a = steps(&mut v, &mut t, |t, f| t.alloc_in(1, 64, 0x1000, |r| f(r)));
        let b = steps(&mut v, &mut t, |t, f| t.alloc_in(1, 32, 0x1040, |r| f(r)));
        for s in [&a, &b] {
            assert_eq!(s.len(), 1, "nothing displaced: {s:?}");
            assert!(matches!(s[0].event, HeapEvent::Alloc { displaced: 0, .. }));
        }
        // Every heap counts in the totals (as heaptrack counts them).
        assert_eq!(
            b[0].live,
            Live {
                objects: 3,
                bytes: 4096 + 64 + 32
            }
        );
        // The innermost object holds an address: the block, then the chunk.
        assert_eq!(v.find(0x1044).map(|o| o.extra.id), Some(3));
        assert_eq!(v.find(0x1000).map(|o| o.extra.id), Some(2));
        assert_eq!(v.find(0x1800).map(|o| o.extra.id), Some(1));
        // A free names its heap: the block at the chunk's address goes, the
        // chunk stays, and the chunk's free then ends the chunk.
        let c = steps(&mut v, &mut t, |t, f| t.free_in(1, 0x1000, |r| f(r)));
        assert_eq!(c[0].id, 2);
        assert_eq!(v.find(0x1000).map(|o| o.extra.id), Some(1));
        let d = steps(&mut v, &mut t, |t, f| t.free(0x1000, 0, |r| f(r)));
        assert_eq!((d[0].id, d[0].live.objects, d[0].live.bytes), (1, 1, 32));
    }

    #[test]
    fn past_max_heaps_the_other_heaps_share_a_map() {
        let (mut v, mut t) = (HeapView::with_intervals(), Trace::new());
        let n = MAX_HEAPS as u64 + 10;
        for h in 1..=n {
            steps(&mut v, &mut t, |t, f| t.alloc_in(h, 8, 0x100 * h, |r| f(r)));
        }
        let last = steps(&mut v, &mut t, |t, f| t.free_in(n, 0x100 * n, |r| f(r)));
        assert_eq!(
            last[0].live,
            Live {
                objects: n - 1,
                bytes: 8 * (n - 1)
            }
        );
        assert_eq!(v.nested.len(), MAX_HEAPS);
    }

    #[test]
    fn events_say_what_each_record_did_to_the_live_objects() {
        let (mut v, mut t) = (HeapView::new(), Trace::new());
        let a = steps(&mut v, &mut t, |t, f| t.alloc(16, 0x10, 1, |r| f(r)));
        let HeapEvent::Alloc {
            object,
            displaced: 0,
            implied: false,
            ..
        } = a[0].event
        else {
            panic!("{a:?}")
        };
        assert_eq!((a[0].id, object.extra.slot, a[0].birth), (1, 0, 1));
        assert_eq!(
            a[0].live,
            Live {
                objects: 1,
                bytes: 16
            }
        );
        // Over the live object at 0x10: it is displaced first.
        let b = steps(&mut v, &mut t, |t, f| t.alloc(8, 0x10, 1, |r| f(r)));
        assert!(matches!(b[0].event, HeapEvent::Displaced { .. } if b[0].id == 1));
        assert!(
            matches!(b[1].event, HeapEvent::Alloc { displaced: 1, object, .. } if b[1].id == 2 && object.extra.slot == 1)
        );
        assert_eq!(
            b[1].live,
            Live {
                objects: 1,
                bytes: 8
            }
        );
        // A moved realloc: its alloc and free are implied.
        let r = steps(&mut v, &mut t, |t, f| {
            t.realloc(ReallocOutcome::Moved, 32, 0x10, 0x80, 1, |r| f(r))
        });
        assert!(
            matches!(r[0].event, HeapEvent::Realloc { from: Some(_), resized: None, .. } if r[0].id == 2)
        );
        let n = steps(&mut v, &mut t, |t, f| t.alloc(32, 0x80, 1, |r| f(r)));
        assert!(
            matches!(n[0].event, HeapEvent::Alloc { implied: true, object, .. } if object.extra.slot == 0)
        );
        let o = steps(&mut v, &mut t, |t, f| t.free(0x10, 1, |r| f(r)));
        assert!(
            matches!(o[0].event, HeapEvent::Free { implied: true, object: Some(_), .. } if o[0].id == 2)
        );
        // In place: the object as resized, and its size before.
        let g = steps(&mut v, &mut t, |t, f| {
            t.realloc(ReallocOutcome::InPlace, 40, 0x80, 0x80, 2, |r| f(r))
        });
        assert!(
            matches!(g[0].event, HeapEvent::Realloc { resized: Some((o, 32)), .. } if o.size == 40)
        );
        assert_eq!(
            g[0].live,
            Live {
                objects: 1,
                bytes: 40
            }
        );
        let u = steps(&mut v, &mut t, |t, f| t.free(0x999, 2, |r| f(r)));
        assert!(matches!(
            u[0].event,
            HeapEvent::Free {
                object: None,
                implied: false,
                ..
            }
        ));
        // The free of 0x10 let slot 1 go: the next object takes it.
        let s = steps(&mut v, &mut t, |t, f| t.alloc(1, 0x300, 2, |r| f(r)));
        assert!(
            matches!(s[0].event, HeapEvent::Alloc { object, .. } if object.extra.slot == 1 && s[0].id == 4)
        );
    }
}
