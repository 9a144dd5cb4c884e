//! A replay thread: executes one traced thread's operations, in its order,
//! as the decoder hands them over in batches, timing each allocator call
//! with the TSC into a histogram per operation kind.

use core::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};

use crate::alloc::Heaps;
use crate::slots::{Slot, Waits};

/// Operation kinds of an [`Item`] (the plan's codes, and the end).
pub const MALLOC: u8 = 1;
pub const FREE: u8 = 2;
pub const REALLOC: u8 = 3;
pub const HEAP_CREATE: u8 = 4;
pub const HEAP_DESTROY: u8 = 5;
/// The thread's last operation has been handed over: it ends.
pub const END: u8 = 7;

/// One operation as a replay thread receives it.
#[derive(Clone, Copy, Default)]
pub struct Item {
    /// Bytes (malloc, realloc); for a heap's destruction, how many
    /// operations in the heap come before it.
    pub size: u64,
    pub slot: u32,
    /// Operations on the slot that must be complete before this one.
    pub seq: u32,
    pub heap: u32,
    pub kind: u8,
}

pub type Batch = Vec<Item>;

/// Histogram buckets: exact below 16 cycles, then 16 per power of two.
pub const BUCKETS: usize = 1024;

#[inline]
pub fn bucket(c: u64) -> usize {
    if c < 16 {
        c as usize
    } else {
        let e = 63 - c.leading_zeros();
        (((e - 3) << 4) | ((c >> (e - 4)) & 15) as u32) as usize
    }
}

/// The smallest cycle count of a bucket.
pub fn bucket_low(b: usize) -> u64 {
    if b < 16 {
        b as u64
    } else {
        let e = (b >> 4) as u32 + 3;
        (16 + (b as u64 & 15)) << (e - 4)
    }
}

/// What the sampler reads of a running thread: its operations so far and
/// the requested bytes its operations added (negative when it frees more
/// than it allocates). On a cache line of its own.
#[repr(align(64))]
#[derive(Default)]
pub struct Progress {
    pub ops: AtomicU64,
    pub live: AtomicI64,
}

/// State every replay thread shares.
pub struct Shared {
    pub slots: Box<[Slot]>,
    pub heaps: Heaps,
    /// Per plan heap: operations in it completed.
    pub heap_done: Box<[AtomicU64]>,
    pub touch: bool,
    pub wait_limit_cycles: u64,
    /// Set when a wait timed out: every thread stops.
    pub abort: std::sync::atomic::AtomicBool,
}

/// One replay thread's findings.
#[derive(Clone)]
pub struct Report {
    pub counts: [u64; 8],
    pub failed: u64,
    pub cycles: [u64; 4],
    pub hist: Vec<[u64; BUCKETS]>,
    pub waits: Waits,
    /// Cycles spent waiting for the decoder (its queue empty).
    pub starved: u64,
    /// Cycles from its first operation to its end.
    pub active: u64,
    pub heap_failures: u64,
}

#[inline(always)]
fn touch(p: *mut c_void, size: usize) {
    let p = p as *mut u8;
    let mut off = 0;
    while off < size {
        // SAFETY: `p` points to at least `size` bytes just returned by the
        // allocator, and off < size.
        unsafe { p.add(off).write_volatile(1) };
        off += 4096;
    }
}

/// Waits until `want` operations in plan heap `h` have completed.
fn wait_heap(sh: &Shared, h: u32, want: u64, w: &mut Waits) -> bool {
    let done = &sh.heap_done[h as usize];
    if done.load(Ordering::Acquire) >= want {
        return true;
    }
    w.waits += 1;
    let t0 = crate::tsc();
    while done.load(Ordering::Acquire) < want {
        if sh.abort.load(Ordering::Relaxed) {
            return false;
        }
        if crate::tsc().wrapping_sub(t0) > sh.wait_limit_cycles {
            w.timed_out += 1;
            return false;
        }
        std::thread::yield_now();
    }
    w.cycles += crate::tsc().wrapping_sub(t0);
    true
}

/// Runs one replay thread until its end item.
pub fn run(
    sh: Arc<Shared>,
    rx: Receiver<Batch>,
    back: SyncSender<Batch>,
    progress: Arc<Progress>,
    heaps: usize,
) -> Report {
    let mut r = Report {
        counts: [0; 8],
        failed: 0,
        cycles: [0; 4],
        hist: vec![[0u64; BUCKETS]; 4],
        waits: Waits::default(),
        starved: 0,
        active: 0,
        heap_failures: 0,
    };
    let mut mine: Vec<*mut c_void> = vec![core::ptr::null_mut(); heaps];
    let mut live: i64 = 0;
    let mut ops: u64 = 0;
    let start = crate::tsc();
    'run: loop {
        let batch = match rx.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty) => {
                let t = crate::tsc();
                let b = rx.recv();
                r.starved += crate::tsc().wrapping_sub(t);
                match b {
                    Ok(b) => b,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        for it in &batch {
            let kind = it.kind;
            if kind == END {
                let _ = back.send(batch);
                break 'run;
            }
            if kind == HEAP_CREATE {
                sh.heaps.create(it.heap);
                r.counts[kind as usize] += 1;
                continue;
            }
            if kind == HEAP_DESTROY {
                if !wait_heap(&sh, it.heap, it.size, &mut r.waits) {
                    sh.abort.store(true, Ordering::Relaxed);
                    break 'run;
                }
                let m = std::mem::replace(&mut mine[it.heap as usize], core::ptr::null_mut());
                if !sh.heaps.destroy(it.heap, m) {
                    r.heap_failures += 1;
                }
                r.counts[kind as usize] += 1;
                continue;
            }
            let s = &sh.slots[it.slot as usize];
            if !s.wait(it.seq, &mut r.waits, sh.wait_limit_cycles, &sh.abort) {
                if !sh.abort.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "tramp-replay: operation {} on slot {} (kind {}) still waits for the one before it: {} done",
                        it.seq,
                        it.slot,
                        kind,
                        s.seq.load(Ordering::Relaxed)
                    );
                }
                break 'run;
            }
            let size = it.size as usize;
            let old = s.ptr.load(Ordering::Relaxed);
            let t0 = crate::tsc();
            let p = match kind {
                MALLOC => sh.heaps.malloc(it.heap, size, &mut mine),
                FREE => {
                    sh.heaps.free(it.heap, old);
                    core::ptr::null_mut()
                }
                _ => sh.heaps.realloc(it.heap, old, size, &mut mine),
            };
            let t1 = crate::tsc();
            let c = t1.wrapping_sub(t0);
            let k = kind as usize;
            r.cycles[k] += c;
            r.hist[k][bucket(c)] += 1;
            r.counts[k] += 1;
            let before = s.size.load(Ordering::Relaxed) as i64;
            if kind == FREE {
                live -= before;
                s.size.store(0, Ordering::Relaxed);
            } else {
                live += it.size as i64 - before;
                s.size.store(it.size, Ordering::Relaxed);
                if p.is_null() && size != 0 {
                    r.failed += 1;
                } else if sh.touch && !p.is_null() {
                    touch(p, size);
                }
            }
            s.ptr.store(p, Ordering::Relaxed);
            s.complete(it.seq);
            if it.heap != 0 {
                sh.heap_done[it.heap as usize].fetch_add(1, Ordering::Release);
            }
            ops += 1;
            progress.ops.store(ops, Ordering::Relaxed);
            progress.live.store(live, Ordering::Relaxed);
        }
        if sh.abort.load(Ordering::Relaxed) {
            break;
        }
        // The decoder may have stopped; a failed return is harmless.
        let _ = back.send(batch);
    }
    sh.heaps.end_thread(&mine);
    r.active = crate::tsc().wrapping_sub(start);
    r
}
