//! tramp-workloads: deterministic synthetic workloads, each a pure function
//! of its seed, drawn from tramp's one random generator (`tramp_core::rng`).
//!
//! * [`sample`]: the built-in heap-allocation sample (HATF records) behind
//!   `tramp sample`.
//! * [`oo7`]: the OO7 object-database benchmark as a PTF event stream,
//!   behind `tramp workload oo7`.

pub mod oo7;
pub mod requests;
pub mod sample;

pub use tramp_core::rng::SplitMix64;
