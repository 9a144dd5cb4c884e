//! Cache simulation, shared by `tramp cachesim`, the TRAMP command language
//! and RDS profiling. It knows nothing of tramp's record types: callers turn
//! their traces into [`Request`]s.
//!
//! * [`policy`]: key-value (buffer or object) caches behind one [`Policy`]
//!   trait — LRU, FIFO, CLOCK, SIEVE, S3-FIFO, ARC, 2Q, LFU and Belady's OPT,
//!   each defined as libCacheSim 0.3.5 defines it;
//! * [`Cache`]: a policy with its statistics (reads and writes apart, dirty
//!   evictions as write-backs, prefetches);
//! * [`sweep`]: many caches (policies × sizes) fed by one pass over a trace;
//! * [`mini`]: miss-ratio curves of any policy by miniature simulation;
//! * [`mrc`]: the exact LRU miss-ratio curve from stack distances, and SHARDS
//!   sampling for traces too large for it;
//! * [`cpu`]: set-associative CPU caches and inclusive hierarchies;
//! * [`cachegrind`]: valgrind cachegrind's I1/D1/LL model, for its counts;
//! * [`trace`]: libCacheSim's csv and `oracleGeneral` request traces;
//! * [`layouts`]: its vscsi, twr and lcs layouts (lcs also written), and
//!   block requests split into pages;
//! * [`plot`]: miss-ratio curves as SVG.

mod list;
mod ordered;

pub mod cache;
pub mod cachegrind;
pub mod cpu;
pub mod layouts;
pub mod mini;
pub mod mrc;
pub mod plot;
pub mod policy;
pub mod request;
pub mod sim;
pub mod sweep;
pub mod trace;
pub mod units;

pub use cache::{Cache, Stats, Unit};
pub use policy::{Policy, PolicyKind, PolicySpec};
pub use request::{NEVER, Op, Request};
