//! The heap view: format-independent heap events read from records through
//! their kind and field roles.

use tramp_core::{ReallocOutcome, Record, RecordKind, Role};

/// Who did it and when: the context every heap event carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Context {
    pub thread: u64,
    pub heap: u64,
    pub time: u64,
}

/// One heap event with absolute values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapEvent {
    Alloc {
        size: u64,
        address: u64,
        cx: Context,
    },
    Free {
        address: u64,
        cx: Context,
    },
    /// A realloc record. Per HATF, the malloc and free it performed (if any)
    /// appear as their own records; only an in-place resize changes an
    /// object through this record alone.
    Realloc {
        outcome: ReallocOutcome,
        size: u64,
        old: u64,
        new: u64,
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

/// Where a record type keeps the fields the heap view reads.
#[derive(Clone, Copy, Debug, Default)]
struct RoleIndex {
    size: Option<usize>,
    address: Option<usize>,
    old: Option<usize>,
    thread: Option<usize>,
    heap: Option<usize>,
    time: Option<usize>,
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
        }
    }
}

/// Turns records into heap events, remembering per record type where its
/// roles are (so that no field is searched for per record).
#[derive(Default)]
pub struct HeapView {
    /// Per type index: the type it was computed for (address, then name, to
    /// tell schemas apart) and its role positions.
    index: Vec<Option<(usize, String, RoleIndex)>>,
}

impl HeapView {
    pub fn new() -> Self {
        Self::default()
    }

    /// The heap event `rec` stands for, if any.
    #[inline]
    pub fn event(&mut self, rec: &Record<'_>) -> Option<HeapEvent> {
        let ty = rec.record_type();
        if self.index.len() <= ty.index {
            self.index.resize(ty.index + 1, None);
        }
        let addr = ty as *const tramp_core::RecordType as usize;
        let ix = match &self.index[ty.index] {
            // The type at an index only changes if records of several
            // schemas are mixed; the type's address, then its name, tell.
            Some((a, _, ix)) if *a == addr => *ix,
            Some((_, name, ix)) if *name == ty.name => *ix,
            _ => {
                let ix = RoleIndex::of(ty);
                self.index[ty.index] = Some((addr, ty.name.clone(), ix));
                ix
            }
        };
        let u = |i: Option<usize>| {
            i.and_then(|i| rec.get(i))
                .and_then(|v| v.as_u64())
                .unwrap_or(0)
        };
        let cx = Context {
            thread: u(ix.thread),
            heap: u(ix.heap),
            time: u(ix.time),
        };
        Some(match ty.kind {
            RecordKind::Alloc => HeapEvent::Alloc {
                size: u(ix.size),
                address: u(ix.address),
                cx,
            },
            RecordKind::Free => HeapEvent::Free {
                address: u(ix.address),
                cx,
            },
            RecordKind::Realloc(outcome) => HeapEvent::Realloc {
                outcome,
                size: u(ix.size),
                old: u(ix.old),
                new: u(ix.address),
                cx,
            },
            RecordKind::HeapCreate => HeapEvent::HeapCreate { cx },
            RecordKind::HeapDestroy => HeapEvent::HeapDestroy { cx },
            RecordKind::ThreadCreate => HeapEvent::ThreadCreate { cx },
            RecordKind::ThreadDestroy => HeapEvent::ThreadDestroy { cx },
            _ => return None,
        })
    }
}

/// The heap event a record stands for, if any (one-off use; a [`HeapView`]
/// remembers where each record type keeps its roles).
pub fn heap_event(rec: &Record<'_>) -> Option<HeapEvent> {
    HeapView::new().event(rec)
}
