//! The heap stream's vocabulary: the events the heap view emits
//! ([`HeapEvent`], each in a [`HeapStep`] with the live totals after it),
//! who did them ([`Context`]), and what an analysis asks the view to keep
//! per live object ([`Keep`]: nothing, a [`Site`], a [`Slot`], [`Lived`]
//! or all of [`Born`]). `Analysis<Heap<K>>` subscribes to the stream.

use tramp_core::{Analysis, Error, Events, ReallocOutcome};

use crate::live::Object;
use crate::sampling::Sampling;
use crate::site::Site;

/// Who did it and when: the context every heap event carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Context {
    pub thread: u64,
    pub heap: u64,
    pub time: u64,
}

/// Heaps other than 0 with maps of their own; the objects of any further
/// heap share the last one.
pub const MAX_HEAPS: usize = 64;

/// Who a live object is, beside its address and size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Born {
    /// Unique per trace, numbered from 1 in order of birth.
    pub id: u64,
    /// Where it was allocated (its kind 0 and value 0 when the trace has
    /// no sites).
    pub site: Site,
    /// The record's time, or its number among the records the view was
    /// given when it has none.
    pub birth: u64,
    /// A small number no other live object has (reused after a free): an
    /// index for analyses that keep something per live object in a
    /// vector. Given out only when what is kept has a slot.
    pub slot: u32,
}

/// What the view keeps per live object, made from who it is.
pub trait Keep: Copy + Default + std::fmt::Debug + PartialEq {
    /// Whether it holds the site (else sites are not decoded).
    const SITE: bool = false;
    /// Whether it holds a slot (else none are given out).
    const SLOT: bool = false;
    fn keep(born: &Born) -> Self;
    /// The object's site (when [`Keep::SITE`]; else none).
    fn site(&self) -> Site {
        Site::default()
    }
    /// When the object was made, if kept.
    fn birth(&self) -> Option<u64> {
        None
    }
    /// Its slot (when [`Keep::SLOT`]).
    fn slot(&self) -> u32 {
        0
    }
}

/// Nothing: the statistics need only addresses and sizes.
impl Keep for () {
    fn keep(_: &Born) {}
}

/// The site, for the site tables.
impl Keep for Site {
    const SITE: bool = true;
    fn keep(born: &Born) -> Site {
        born.site
    }
    fn site(&self) -> Site {
        *self
    }
}

/// The site and the birth, for the site tables and lifetimes in one pass
/// (`tramp report`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lived {
    pub site: Site,
    pub birth: u64,
}

impl Keep for Lived {
    const SITE: bool = true;
    fn keep(born: &Born) -> Lived {
        Lived {
            site: born.site,
            birth: born.birth,
        }
    }
    fn site(&self) -> Site {
        self.site
    }
    fn birth(&self) -> Option<u64> {
        Some(self.birth)
    }
}

/// A slot, for analyses that keep a vector indexed by live object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot(pub u32);

impl Keep for Slot {
    const SLOT: bool = true;
    fn keep(born: &Born) -> Slot {
        Slot(born.slot)
    }
    fn slot(&self) -> u32 {
        self.0
    }
}

/// Everything, for views that follow objects.
impl Keep for Born {
    const SITE: bool = true;
    const SLOT: bool = true;
    fn keep(born: &Born) -> Born {
        *born
    }
    fn site(&self) -> Site {
        self.site
    }
    fn birth(&self) -> Option<u64> {
        Some(self.birth)
    }
    fn slot(&self) -> u32 {
        self.slot
    }
}

/// One heap event, with what it did to the live objects (which carry
/// what the view keeps, `K`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapEvent<K = Born> {
    /// An allocation record: the object it made. `displaced` objects (an
    /// allocation over live ones, whose frees the trace lacks) were each
    /// announced by a [`HeapEvent::Displaced`] just before. `implied`: the
    /// allocation a realloc just made (its record follows the realloc's).
    Alloc {
        object: Object<K>,
        displaced: u32,
        implied: bool,
        cx: Context,
    },
    /// A live object an allocation overlaps or starts on leaves the map.
    Displaced {
        object: Object<K>,
        cx: Context,
    },
    /// A free record: the object it ended, or `None` for an address that
    /// was not live. `implied`: the free a realloc just made.
    /// `temporary`: the object was allocated by the heap event just before
    /// (heaptrack's rule: see docs/heap-profile.md).
    Free {
        address: u64,
        object: Option<Object<K>>,
        implied: bool,
        temporary: bool,
        cx: Context,
    },
    /// A realloc record. Per HATF, the malloc and free it performed (if
    /// any) follow as their own records (`implied` on them); only an
    /// in-place resize changes an object here: then `resized` is the
    /// object as it is now and its size before.
    Realloc {
        outcome: ReallocOutcome,
        size: u64,
        old: u64,
        new: u64,
        /// The live object at `old` when the realloc was made (`None`
        /// also when the view keeps nothing per object: nobody asks).
        from: Option<Object<K>>,
        resized: Option<(Object<K>, u64)>,
        /// The realloc freed the block the heap event just before it
        /// allocated (a realloc is a free and an allocation to heaptrack).
        temporary: bool,
        cx: Context,
    },
    HeapCreate {
        cx: Context,
    },
    HeapDestroy {
        cx: Context,
    },
    ThreadCreate {
        cx: Context,
    },
    ThreadDestroy {
        cx: Context,
    },
}

impl<K> HeapEvent<K> {
    /// The event's context (its time, thread, heap).
    #[inline]
    pub fn cx(&self) -> Context {
        match self {
            HeapEvent::Alloc { cx, .. }
            | HeapEvent::Displaced { cx, .. }
            | HeapEvent::Free { cx, .. }
            | HeapEvent::Realloc { cx, .. }
            | HeapEvent::HeapCreate { cx }
            | HeapEvent::HeapDestroy { cx }
            | HeapEvent::ThreadCreate { cx }
            | HeapEvent::ThreadDestroy { cx } => *cx,
        }
    }
}

/// The live totals after an event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Live {
    pub objects: u64,
    pub bytes: u64,
}

/// What heap analyses receive: an event and the live totals after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapStep<K = Born> {
    pub event: HeapEvent<K>,
    pub live: Live,
    /// The trace's sampling (a `tramp:sampling` comment before its events):
    /// every count and byte total is then an estimate, each object weighed
    /// by [`Sampling::weight`] of its size.
    pub sampling: Option<Sampling>,
    /// The trace starts at an attach to a running process (a
    /// `tramp:attached` comment): frees of unknown blocks are of blocks
    /// allocated before it.
    pub attached: bool,
    /// The records are a selection (`--time`, `--thread`: a
    /// `tramp:selected` comment first): frees of unknown blocks are of
    /// blocks allocated outside it.
    pub selected: Selected,
}

/// Whether the records are a selection of a trace, and of what kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selected {
    /// The whole trace (or the whole of its processes).
    #[default]
    No,
    /// A time range of every thread: a free of an address freed before
    /// in the range and not allocated since is a double free.
    Time,
    /// Some threads: another thread may have allocated an address again
    /// after the selection freed it, so a second free is not a double
    /// free.
    Threads,
}

/// The stream of heap events whose objects carry `K`
/// (`Analysis<Heap<K>>` subscribes to it).
pub struct Heap<K = Born>(std::marker::PhantomData<K>);

impl<K: Keep> Events for Heap<K> {
    type Event<'a> = HeapStep<K>;
}

/// No further analysis (what a flow carries when it needs none).
impl<K: Keep> Analysis<Heap<K>> for () {
    type Report = ();

    #[inline(always)]
    fn observe(&mut self, _: &HeapStep<K>) -> Result<(), Error> {
        Ok(())
    }

    fn finish(self) {}
}
