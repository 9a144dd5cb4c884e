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

/// The heap event a record stands for, if any.
pub fn heap_event(rec: &Record<'_>) -> Option<HeapEvent> {
    let u = |role| rec.role_u64(role).unwrap_or(0);
    let cx = Context {
        thread: u(Role::Thread),
        heap: u(Role::Heap),
        time: u(Role::Time),
    };
    Some(match rec.record_type().kind {
        RecordKind::Alloc => HeapEvent::Alloc {
            size: u(Role::Size),
            address: u(Role::Address),
            cx,
        },
        RecordKind::Free => HeapEvent::Free {
            address: u(Role::Address),
            cx,
        },
        RecordKind::Realloc(outcome) => HeapEvent::Realloc {
            outcome,
            size: u(Role::Size),
            old: u(Role::OldAddress),
            new: u(Role::Address),
            cx,
        },
        RecordKind::HeapCreate => HeapEvent::HeapCreate { cx },
        RecordKind::HeapDestroy => HeapEvent::HeapDestroy { cx },
        RecordKind::ThreadCreate => HeapEvent::ThreadCreate { cx },
        RecordKind::ThreadDestroy => HeapEvent::ThreadDestroy { cx },
        _ => return None,
    })
}
