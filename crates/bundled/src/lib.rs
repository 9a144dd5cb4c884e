//! The capture library (`libtramp_capture.so`, crates/capture) and the
//! replay driver (`tramp-replay`), compiled by this crate's build script
//! with the same rustc and carried as bytes, so that every front end that
//! records or replays (the `tramp` binary, the Python package) works from
//! a plain build without hunting for files. `tramp_record::launch`
//! writes them to the cache directory before use.

/// The capture library, preloaded into recorded programs.
pub static CAPTURE_LIBRARY: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/libtramp_capture.so"));

/// The replay driver, run on each allocator a replay compares.
pub static REPLAY_DRIVER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tramp-replay"));
