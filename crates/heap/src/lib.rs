//! tramp-heap: the heap view of a trace and what is computed from it.
//!
//! * [`attach`]: traces that start at an attach to a running process.
//! * [`view`]: turns records of any format into heap events, by record kind
//!   and field roles, so analyses do not care where a trace came from.
//! * [`live`]: the live-object map (address interval → object: size, and
//!   per user an id, site and birth, or whatever else it keeps),
//!   shared by statistics, replay and the object-graph view.
//! * [`replay`]: allocator replay, trace side (heap events → operations).
//! * [`images`]: the processes a trace's notes name, each program one ran
//!   and its command line.
//! * [`processes`]: a recording's processes, a row of statistics each.
//! * [`sampling`]: sampled recordings: weights, estimates, standard errors.
//! * [`timeline`]: the heap over time in constant memory.
//! * [`synthetic`]: addresses for traces that have none.
//! * [`stats`]: heap statistics (the HATF paper's Table 3 and more), as text
//!   or JSON.

pub mod attach;
pub mod event;
pub mod images;
pub mod implied;
pub mod lifetimes;
pub mod live;
pub mod processes;
pub mod replay;
pub mod sampling;
/// Allocation sites as traces carry them (tramp-core's, the heap
/// vocabulary format crates share).
pub use tramp_core::site;
pub mod stats;
/// Addresses for traces that have none (tramp-core's).
pub use tramp_core::synthetic;
pub mod timeline;
pub mod view;

pub use live::{Identity, LiveObjects, Object};
pub use site::Site;
pub use stats::{HeapStats, HeapTotals, Report};
pub use view::{
    Born, Context, Heap, HeapEvent, HeapFlow, HeapStep, HeapView, Keep, Live, Lived, Slot,
};
