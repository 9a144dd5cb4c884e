//! tramp-heap: the heap view of a trace and what is computed from it.
//!
//! * [`view`]: turns records of any format into heap events, by record kind
//!   and field roles, so analyses do not care where a trace came from.
//! * [`stats`]: heap statistics (the HATF paper's Table 3 and more), as text
//!   or JSON.

pub mod replay;
pub mod stats;
pub mod view;

pub use stats::{HeapStats, Report};
pub use view::{HeapEvent, HeapView, heap_event};
