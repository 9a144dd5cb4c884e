//! Recursive data structure (RDS) profiling after Raman and August (seed
//! 002): heap objects are nodes, pointer stores between them edges; an RDS
//! *type* is a strongly connected component of the static shape graph
//! (allocation sites as nodes), an RDS *instance* a connected component of
//! objects whose sites share such a component.
//!
//! * [`scc`]: the static shape graph with strongly connected components
//!   kept up to date edge by edge (Pearce and Kelly's online algorithm);
//! * [`instances`]: union-find over objects with per-set profile data
//!   merged on union;
//! * [`builder`]: the profile builder — live objects by address, the
//!   `edge_add`, `edge_traverse` and `node_delete` events, the queue of
//!   edges waiting for their sites to join one SCC;
//! * [`analysis`]: the builder fed by tramp's object-graph view (PTF
//!   objects, or heap allocations with loads and stores), loads priced by
//!   the cache simulator's Table 1 hierarchy;
//! * [`report`]: the paper's Table 3 row, per-type and per-instance
//!   tables, and Figures 5–7 as SVG.

pub mod analysis;
pub mod builder;
pub mod instances;
pub mod report;
pub mod scc;
