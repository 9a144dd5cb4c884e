//! tramp-symbols: naming what a recorded trace's numbers point at.
//!
//! * [`notes`]: the comment records a recording writes about itself
//!   (process, modules, call stacks, stalls, interruption).
//! * [`symbolizer`]: code addresses to module, function, file and line.
//! * [`debugfile`]: a module's separate debug information (build-id,
//!   `.gnu_debuglink`, `--debug-dir`).
//! * [`modules`]: a trace's module map and call stacks, read from its
//!   notes, and the names they give code addresses and allocation sites.
//! * [`stacks`]: call stacks as a tree (parent + frame → id).
//! * [`sites`]: allocation-site tables (a heap analysis, named).
//! * [`suppressions`]: LeakSanitizer suppressions for the leak table.
//!
//! `tramp record` (site notes in dumps), `tramp stats --sites` and `tramp
//! rds` (instruction names) share it.

pub mod debugfile;
pub mod modules;
pub mod notes;
pub mod sites;
pub mod slices;
pub mod stacks;
pub mod suppressions;
pub mod symbolizer;

pub use modules::{ModuleMap, Modules, Names};
pub use notes::Annotation;
pub use stacks::{StackTree, Stacks};
pub use symbolizer::{Place, Symbolizer};
