//! tramp-graph: the object-graph view of a trace.
//!
//! * [`view`]: turns records into graph events — create, delete,
//!   link(from, slot, to), traverse(from, slot, to), root — from object
//!   kinds (PTF) directly, and from heap traces' loads and stores through
//!   the live-object map; [`GraphFlow`] is the view as a step that feeds
//!   analyses of graph events ([`Graph`]) and of the same map's heap
//!   events.
//! * [`graph`]: the object graph itself (objects, their edges, the root)
//!   and reachability from the root.
//! * [`gc`]: persistence by reachability: which objects become garbage
//!   when, collecting after every event that may disconnect objects,
//!   outside collection holds; [`Collected`] puts a graph analysis behind
//!   it.
//! * [`verify`]: the PTF verifier: §3's rules checked over PTF events, and
//!   persistence by reachability simulated with the collector's schedule.

pub mod gc;
pub mod graph;
pub mod verify;
pub mod view;

pub use gc::{Collected, Collection, Collector};
pub use graph::ObjectGraph;
pub use view::{Graph, GraphEvent, GraphFlow, GraphStep, GraphView};
