//! tramp-capture: the preload library behind `tramp record`.
//!
//! Loaded with `LD_PRELOAD`, it interposes the C allocation functions
//! (malloc, free, calloc, realloc, reallocarray, posix_memalign,
//! aligned_alloc, memalign, valloc, pvalloc), forwards each call to glibc's
//! own implementation (`__libc_*`, so no symbol lookup and no bootstrap
//! allocation is needed), and appends a compact event to a per-thread
//! buffer. Full buffers are written to the process's raw log with one
//! `writev` each, as self-contained chunks, so a killed process leaves a
//! readable log that lacks at most each thread's last buffer.
//!
//! The raw log is documented in `docs/formats/capture.md`; `tramp record`
//! turns it into HATF. This is the only crate of tramp with `unsafe` code:
//! interposing C functions cannot be done without it. Each block says why it
//! is sound.

#![allow(clippy::missing_safety_doc)]

mod attach;
mod inherit;
// The one random generator and hash of tramp (tramp-core has it; this
// crate has no dependencies, so it includes the file).
#[path = "../../core/src/rng.rs"]
#[allow(dead_code)]
mod rng;
mod sampled;
mod sys;
mod unwind;

use unwind::{Frame, MAX_FRAMES, Unwinder};

use core::cell::Cell;
use core::ffi::{c_char, c_int, c_void};
use core::ptr::{null, null_mut};
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::alloc::{GlobalAlloc, Layout};

/// Rust code in this library allocates straight from glibc, never through
/// the interposed entry points.
struct LibcAlloc;

// SAFETY: the __libc_* functions are glibc's malloc family; memalign returns
// memory aligned as asked, and every block is freed with __libc_free.
unsafe impl GlobalAlloc for LibcAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: plain calls into glibc's allocator.
        unsafe {
            if layout.align() <= 16 {
                sys::__libc_malloc(layout.size()) as *mut u8
            } else {
                sys::__libc_memalign(layout.align(), layout.size()) as *mut u8
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above.
        unsafe { sys::__libc_free(ptr as *mut c_void) }
    }
}

#[global_allocator]
static ALLOC: LibcAlloc = LibcAlloc;

// The raw log's chunk header and event kinds (docs/formats/capture.md).
mod wire;
pub use wire::*;

/// Bytes of one thread buffer (one mmap).
const BUF_BYTES: usize = MAX_PAYLOAD;
/// A buffer whose chunk began this many TSC ticks ago is written after its
/// next event even if not full (~10 ms at 3 GHz), so that `tramp record`
/// can merge threads by time soon after the events happen.
const STALE_TSC: u64 = 1 << 25;
/// How long a thread waiting for `tramp record` sleeps between looks.
const STALL_POLL_NS: i64 = 200_000;
/// A thread stops waiting when the log has not shrunk for this long (the
/// converter is gone), and the process never waits again: events are
/// never dropped, only disk is spent.
const STALL_GIVE_UP_NS: u64 = 5_000_000_000;
/// Room an event may need (a stack definition is the largest).
const MAX_EVENT: usize = 16 + (MAX_FRAMES + 2) * 10;

#[repr(C)]
struct ThreadBuf {
    /// Registry link; written once before the buffer is published.
    next: *mut ThreadBuf,
    /// 0 free, 1 owned by a live thread.
    owned: AtomicU32,
    /// Set when a flush from another thread (exit, signal) took the buffer
    /// over: its owner stops recording into it.
    closed: AtomicBool,
    /// Held while the buffer is written out.
    lock: AtomicBool,
    tid: u32,
    /// Committed bytes of `data`.
    len: AtomicUsize,
    /// Clock at the start of the current chunk.
    base_ns: u64,
    base_tsc: u64,
    /// TSC of the last event (events store deltas).
    last_tsc: u64,
    /// The chunk's last address and site (events store differences from
    /// them; 0 at the start of every chunk, so chunks decode alone).
    prev_addr: u64,
    prev_site: u64,
    /// Time the owner waited for the converter at its last flush (ns), to
    /// be recorded as a stall event.
    stalled_ns: u64,
    /// The chunk's last load or store value (events store differences).
    prev_value: u64,
    /// A store seen by its hook but not written yet (the value is in memory
    /// only after the hook returns): its address and instruction, 0 when
    /// none. Written at the thread's next event of any kind.
    pending_addr: u64,
    pending_site: u64,
    pending_tsc: u64,
    /// The thread's unwinder (mapped on first use with stacks on).
    unwinder: *mut Unwinder,
    /// The buffer's last event is a spawn (the chunk header says so).
    spawned: bool,
    data: [u8; DATA_BYTES],
}

const DATA_BYTES: usize = BUF_BYTES - 256;

// The library's parts, each behind its own file; their items are shared
// through the crate root.
mod buffers;
mod pointers;
mod recording;
mod state;
#[macro_use]
mod entry;
mod blocks;
mod exits;
#[allow(unused_imports)]
use blocks::*;
#[allow(unused_imports)]
use buffers::*;
#[allow(unused_imports)]
use entry::*;
#[allow(unused_imports)]
use exits::*;
#[allow(unused_imports)]
use pointers::*;
#[allow(unused_imports)]
use recording::*;
#[allow(unused_imports)]
use state::*;
