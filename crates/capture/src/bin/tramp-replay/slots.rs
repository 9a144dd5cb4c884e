//! The objects the replay holds, one slot each, shared by all replay
//! threads, and how a thread waits for another's operation on a slot.
//!
//! Each slot carries a sequence number: how many operations on it have
//! completed. The decoder gives every operation the number it must find
//! (the count of earlier operations on that slot in plan order), so an
//! operation runs only after every earlier one on its object — a free
//! after the allocation it frees, whichever thread made it, and an
//! allocation into a reused slot after the free that released it. A
//! thread whose operation is not yet due spins (`SPINS` rounds of the
//! pause instruction), then sleeps on the sequence word with `futex`,
//! woken by the thread that completes the operation before it; a sleep
//! also ends after 1 ms, so a wake-up lost to store reordering costs at
//! most that. A wait longer than the limit is reported as timed out.

use core::ffi::{c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

unsafe extern "C" {
    fn syscall(n: c_long, ...) -> c_long;
}

const SYS_FUTEX: c_long = 202;
const FUTEX_WAIT_PRIVATE: c_long = 128;
const FUTEX_WAKE_PRIVATE: c_long = 129;
/// Pause rounds before sleeping.
pub const SPINS: u32 = 1 << 12;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// One object of the replay.
#[derive(Default)]
pub struct Slot {
    pub ptr: AtomicPtr<c_void>,
    /// Its requested size (for the live bytes the replay holds).
    pub size: AtomicU64,
    /// Operations on it completed so far.
    pub seq: AtomicU32,
}

/// Threads asleep on some slot: completing an operation wakes sleepers
/// only when there are any.
static SLEEPERS: AtomicUsize = AtomicUsize::new(0);

/// What waiting cost one thread.
#[derive(Clone, Copy, Default)]
pub struct Waits {
    /// Operations that found their slot not yet due.
    pub waits: u64,
    /// Of those, the ones that slept (futex) after spinning.
    pub sleeps: u64,
    /// TSC cycles spent waiting.
    pub cycles: u64,
    /// Waits given up after the limit (the replay stops).
    pub timed_out: u64,
}

impl Slot {
    /// Waits until `want` operations on this slot have completed; false
    /// if the wait passed `limit_cycles` or another thread gave up.
    #[inline]
    pub fn wait(&self, want: u32, w: &mut Waits, limit_cycles: u64, abort: &AtomicBool) -> bool {
        if self.seq.load(Ordering::Acquire) == want {
            return true;
        }
        self.wait_slow(want, w, limit_cycles, abort)
    }

    #[cold]
    fn wait_slow(&self, want: u32, w: &mut Waits, limit_cycles: u64, abort: &AtomicBool) -> bool {
        w.waits += 1;
        let t0 = crate::tsc();
        for _ in 0..SPINS {
            core::hint::spin_loop();
            if self.seq.load(Ordering::Acquire) == want {
                w.cycles += crate::tsc().wrapping_sub(t0);
                return true;
            }
        }
        w.sleeps += 1;
        SLEEPERS.fetch_add(1, Ordering::SeqCst);
        let ok = loop {
            let now = self.seq.load(Ordering::SeqCst);
            if now == want {
                break true;
            }
            if abort.load(Ordering::Relaxed) {
                break false;
            }
            if crate::tsc().wrapping_sub(t0) > limit_cycles {
                w.timed_out += 1;
                break false;
            }
            let ts = Timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000,
            };
            // SAFETY: FUTEX_WAIT on a live u32 of this process; the kernel
            // sleeps only while it still holds `now`, for at most `ts`.
            unsafe {
                syscall(
                    SYS_FUTEX,
                    self.seq.as_ptr() as *mut c_void,
                    FUTEX_WAIT_PRIVATE,
                    now as c_long,
                    &ts as *const Timespec,
                    0usize,
                    0usize,
                )
            };
        };
        SLEEPERS.fetch_sub(1, Ordering::SeqCst);
        w.cycles += crate::tsc().wrapping_sub(t0);
        ok
    }

    /// Marks the operation numbered `done` complete and wakes sleepers.
    #[inline]
    pub fn complete(&self, done: u32) {
        self.seq.store(done.wrapping_add(1), Ordering::Release);
        if SLEEPERS.load(Ordering::Relaxed) != 0 {
            // SAFETY: FUTEX_WAKE on a live u32 of this process.
            unsafe {
                syscall(
                    SYS_FUTEX,
                    self.seq.as_ptr() as *mut c_void,
                    FUTEX_WAKE_PRIVATE,
                    i32::MAX as c_long,
                    0usize,
                    0usize,
                    0usize,
                )
            };
        }
    }
}
