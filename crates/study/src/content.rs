//! The paper's content: the traces of the HATF paper hold allocations,
//! frees and reallocations with their record type, size and addresses, and
//! nothing else (one thread, one heap, no times). Table 4's forms all hold
//! exactly that; [`paper_event`] projects any HATF item onto it.

use tramp_hatf::{Event, EventKind, Item};

/// The item's paper content: alloc, free and realloc events with time,
/// thread, heap and attributes cleared; `None` for anything else.
pub fn paper_event(item: &Item<'_>) -> Option<Event<'static>> {
    let Item::Event(e) = item else { return None };
    match e.kind {
        EventKind::Alloc
        | EventKind::Free
        | EventKind::ReallocNoAlloc
        | EventKind::ReallocAllocFree
        | EventKind::ReallocAlloc
        | EventKind::ReallocFree => {
            let mut p = Event::new(e.kind);
            let layout = e.kind.layout();
            if layout.contains(&tramp_hatf::Field::Size) {
                p.size = e.size;
            }
            p.address = e.address;
            if e.kind.is_realloc() {
                p.new_address = e.new_address;
            }
            Some(p)
        }
        _ => None,
    }
}

/// The paper's four fields of an event: type, size, address, new address.
pub fn fields(e: &Event<'_>) -> [u64; 4] {
    [e.kind.tag() as u64, e.size, e.address, e.new_address]
}

/// The event of four fields; `None` when the type is not one of the
/// paper's (alloc, free, the four reallocs).
pub fn from_fields(f: [u64; 4]) -> Option<Event<'static>> {
    let kind = EventKind::from_tag(u8::try_from(f[0]).ok()?)?;
    if f[0] > 5 {
        return None;
    }
    let mut e = Event::new(kind);
    e.size = f[1];
    e.address = f[2];
    e.new_address = f[3];
    paper_event(&Item::Event(e))
}
