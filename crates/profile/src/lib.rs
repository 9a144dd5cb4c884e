//! tramp-profile: the heap profile drawn for people.
//!
//! * [`flame`]: a flame graph (SVG, self-contained) of folded stacks, for
//!   any cost `tramp stats --folded` gives.
//! * [`diff`]: two traces compared call stack by call stack (`tramp
//!   diff`).
//! * [`report`]: the whole profile as one self-contained HTML page
//!   (`tramp report`).
//! * [`tree`]: top-down and bottom-up call trees with every cost.

pub mod diff;
pub mod flame;
pub mod report;
pub mod tree;
