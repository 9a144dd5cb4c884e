//! Sampling (`tramp record --sample BYTES`): which allocations are recorded,
//! and the set of the sampled blocks still live, so that a free or realloc
//! is recorded exactly when its block's allocation was.
//!
//! Each thread counts down the bytes it allocates to its next sample point;
//! the distances between points are drawn from an exponential distribution
//! of mean BYTES, so the points form a Poisson process on the thread's
//! allocated bytes and a block of `s` bytes holds at least one of them
//! with probability `1 − exp(−s / BYTES)`, independently of every other
//! block. Blocks of BYTES or more are always taken (and do not move the
//! countdown). Readers weigh each sampled block by the inverse of that
//! probability (docs/heap-profile.md, "Sampling").
//!
//! The set is split into shards by address, each an open-addressing table
//! under a sequence lock: a free looks its address up without writing
//! anything shared (most frees are of blocks that were not sampled), and
//! only sampled allocations and their frees take a shard's lock. Tables
//! that grow are replaced, never unmapped: a reader may still be probing
//! the old one, and retries when the sequence says it changed under it.

use core::ptr::null_mut;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering, fence};

use crate::sys;

const SHARDS: usize = 64;
/// Slots of a shard's first table (256 bytes); a table is doubled past half
/// full. Small, and carved one after another out of one arena: a free of a
/// block that was not sampled probes a table that stays in the cache (with
/// tables of 1,024 slots, one mapping each, that probe was a cache miss,
/// 70 % of the free path's time on espresso).
const FIRST_SLOTS: usize = 32;
/// The tables' arena: address space reserved once (no memory until used).
const ARENA_BYTES: usize = 1 << 32;
static ARENA: AtomicUsize = AtomicUsize::new(0);
static ARENA_USED: AtomicUsize = AtomicUsize::new(0);

/// Zeroed memory for a table of `bytes` (a multiple of 64), from the arena
/// (or a mapping of its own once the arena is used up); null if none.
fn table_memory(bytes: usize) -> *mut AtomicUsize {
    let mut base = ARENA.load(Ordering::Acquire);
    if base == 0 {
        // SAFETY: reserves address space (anonymous, private, zero-filled
        // when touched, not charged until then).
        let p = unsafe {
            sys::mmap(
                null_mut(),
                ARENA_BYTES,
                sys::PROT_READ | sys::PROT_WRITE,
                sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p != sys::MAP_FAILED {
            match ARENA.compare_exchange(0, p as usize, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => base = p as usize,
                Err(other) => {
                    // Another thread's reservation won.
                    // SAFETY: our own mapping, never used (the system call:
                    // this library interposes munmap).
                    unsafe { sys::syscall(sys::SYS_MUNMAP, p, ARENA_BYTES) };
                    base = other;
                }
            }
        }
    }
    if base != 0 {
        let at = ARENA_USED.fetch_add(bytes, Ordering::Relaxed);
        if at + bytes <= ARENA_BYTES {
            return (base + at) as *mut AtomicUsize;
        }
    }
    // SAFETY: an anonymous private mapping, zero-filled.
    let p = unsafe {
        sys::mmap(
            null_mut(),
            bytes,
            sys::PROT_READ | sys::PROT_WRITE,
            sys::MAP_PRIVATE | sys::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == sys::MAP_FAILED {
        null_mut()
    } else {
        p as *mut AtomicUsize
    }
}

#[repr(C, align(64))]
struct Shard {
    lock: AtomicBool,
    /// Odd while a writer changes the table.
    seq: AtomicU64,
    table: AtomicPtr<AtomicUsize>,
    /// Slots − 1 of `table`.
    mask: AtomicUsize,
    /// Addresses held (changed under the lock only).
    len: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Shard = Shard {
    lock: AtomicBool::new(false),
    seq: AtomicU64::new(0),
    table: AtomicPtr::new(null_mut()),
    mask: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
};

static SET: [Shard; SHARDS] = [EMPTY; SHARDS];

#[inline(always)]
fn hash(addr: usize) -> u64 {
    ((addr as u64) >> 4).wrapping_mul(crate::rng::GOLDEN)
}

#[inline(always)]
fn shard_of(h: u64) -> &'static Shard {
    &SET[(h >> 58) as usize]
}

/// The slot array of `t`, `mask + 1` long.
///
/// # Safety
/// `t` is a table published by [`Shard::grow`] with this mask (tables are
/// never unmapped).
#[inline(always)]
unsafe fn slots<'a>(t: *mut AtomicUsize, mask: usize) -> &'a [AtomicUsize] {
    // SAFETY: as the function's contract says.
    unsafe { core::slice::from_raw_parts(t, mask + 1) }
}

impl Shard {
    fn lock(&self) {
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.lock.store(false, Ordering::Release);
    }

    /// Whether `addr` is held, read without the lock.
    #[inline(always)]
    fn holds(&self, addr: usize, h: u64) -> bool {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1 & 1 == 1 {
                core::hint::spin_loop();
                continue;
            }
            // The mask first: `grow` publishes a table before its mask, so
            // a mask read here is never larger than the table read after
            // it (a larger table with a smaller mask only probes part of
            // it, and the sequence check below retries).
            let mask = self.mask.load(Ordering::Acquire);
            let t = self.table.load(Ordering::Acquire);
            if t.is_null() {
                return false;
            }
            // SAFETY: `t` is a published table of at least `mask + 1`
            // slots (above), never unmapped.
            let s = unsafe { slots(t, mask) };
            let found = find(s, addr, h).is_some();
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == s1 {
                return found;
            }
        }
    }

    fn begin_write(&self) {
        self.seq.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::Release);
    }

    fn end_write(&self) {
        self.seq.fetch_add(1, Ordering::Release);
    }

    /// Doubles the table (or makes the first). Under the lock and inside a
    /// write. False when no memory could be mapped.
    fn grow(&self) -> bool {
        let old = self.table.load(Ordering::Relaxed);
        let old_mask = self.mask.load(Ordering::Relaxed);
        let n = if old.is_null() {
            FIRST_SLOTS
        } else {
            (old_mask + 1) * 2
        };
        // Zeroed memory: every slot empty (AtomicUsize has the layout of
        // usize).
        let t = table_memory(n * core::mem::size_of::<usize>());
        if t.is_null() {
            return false;
        }
        // SAFETY: the new table is ours until published; the old one is
        // the shard's, with its mask.
        let new = unsafe { slots(t, n - 1) };
        if !old.is_null() {
            for v in unsafe { slots(old, old_mask) } {
                let a = v.load(Ordering::Relaxed);
                if a != 0 {
                    put(new, a);
                }
            }
        }
        // The table before its mask (see `holds`).
        self.table.store(t, Ordering::Release);
        self.mask.store(n - 1, Ordering::Release);
        true
    }

    fn insert(&self, addr: usize) -> bool {
        self.lock();
        self.begin_write();
        let len = self.len.load(Ordering::Relaxed);
        let mask = self.mask.load(Ordering::Relaxed);
        let ok = if self.table.load(Ordering::Relaxed).is_null() || (len + 1) * 2 > mask + 1 {
            self.grow()
        } else {
            true
        };
        if ok {
            let t = self.table.load(Ordering::Relaxed);
            // SAFETY: the shard's table, under its lock.
            let s = unsafe { slots(t, self.mask.load(Ordering::Relaxed)) };
            if put(s, addr) {
                self.len.store(len + 1, Ordering::Relaxed);
            }
        }
        self.end_write();
        self.unlock();
        ok
    }

    fn remove(&self, addr: usize, h: u64) -> bool {
        self.lock();
        let t = self.table.load(Ordering::Relaxed);
        if t.is_null() {
            self.unlock();
            return false;
        }
        // SAFETY: the shard's table, under its lock.
        let s = unsafe { slots(t, self.mask.load(Ordering::Relaxed)) };
        let m = s.len() - 1;
        let found = find(s, addr, h);
        if let Some(i) = found {
            self.begin_write();
            // Backward-shift deletion: no tombstones, so misses stay short.
            let mut hole = i;
            let mut j = (i + 1) & m;
            loop {
                let v = s[j].load(Ordering::Relaxed);
                if v == 0 {
                    break;
                }
                let home = hash(v) as usize & m;
                // Moves into the hole when its home is not inside (hole, j].
                if (j.wrapping_sub(home) & m) >= (j.wrapping_sub(hole) & m) {
                    s[hole].store(v, Ordering::Relaxed);
                    hole = j;
                }
                j = (j + 1) & m;
            }
            s[hole].store(0, Ordering::Relaxed);
            self.len.fetch_sub(1, Ordering::Relaxed);
            self.end_write();
        }
        self.unlock();
        found.is_some()
    }
}

/// The slot holding `addr` (hash `h`) in a table, probing from its home
/// slot to the first empty one.
#[inline(always)]
fn find(s: &[AtomicUsize], addr: usize, h: u64) -> Option<usize> {
    let m = s.len() - 1;
    let mut i = h as usize & m;
    for _ in 0..s.len() {
        match s[i].load(Ordering::Relaxed) {
            0 => return None,
            v if v == addr => return Some(i),
            _ => i = (i + 1) & m,
        }
    }
    None
}

/// Puts `addr` into a table with room; false if it was there.
fn put(s: &[AtomicUsize], addr: usize) -> bool {
    let m = s.len() - 1;
    let mut i = hash(addr) as usize & m;
    loop {
        let v = s[i].load(Ordering::Relaxed);
        if v == addr {
            return false;
        }
        if v == 0 {
            s[i].store(addr, Ordering::Relaxed);
            return true;
        }
        i = (i + 1) & m;
    }
}

/// Notes a sampled block. False when the set could not grow (the caller
/// then leaves the block unrecorded, so that its free is not recorded
/// either).
pub fn insert(addr: usize) -> bool {
    shard_of(hash(addr)).insert(addr)
}

/// Whether `addr` is a sampled block, forgetting it if so. Called before
/// the call that frees it: once freed, the address may be handed to
/// another thread and sampled again.
#[inline(always)]
pub fn remove(addr: usize) -> bool {
    let h = hash(addr);
    let sh = shard_of(h);
    sh.holds(addr, h) && sh.remove(addr, h)
}

/// In a fork child: locks held by the parent's other threads are released
/// (those threads do not exist in the child).
pub fn after_fork() {
    for s in &SET {
        s.lock.store(false, Ordering::Relaxed);
        let q = s.seq.load(Ordering::Relaxed);
        s.seq.store(q & !1, Ordering::Relaxed);
    }
}

/// A thread's sampler: its countdown and its random state.
#[derive(Clone, Copy)]
pub struct Countdown {
    /// Bytes left to the next sample point (≤ 0: not drawn yet).
    pub left: i64,
    /// xorshift64* state (0: not seeded yet).
    pub rng: u64,
}

impl Countdown {
    fn next(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Bytes to the next sample point: exponential with mean `mean`, at
    /// least 1.
    fn draw(&mut self, mean: u64) -> i64 {
        // U in (0, 1]: never 0, so the logarithm is finite.
        let u = ((self.next() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        let d = -u.ln() * mean as f64;
        (d.ceil() as i64).max(1)
    }

    /// Whether an allocation of `size` bytes is sampled. `seed` seeds a
    /// thread's first call (below the mean; blocks of the mean or more
    /// draw nothing).
    #[inline(always)]
    pub fn take(&mut self, mean: u64, size: usize, seed: u64) -> bool {
        if size as u64 >= mean {
            return true;
        }
        if self.rng == 0 {
            // Mixed (SplitMix64's finalizer): close seeds, distant streams.
            self.rng = crate::rng::mix(seed) | 1;
            self.left = self.draw(mean);
        }
        self.left -= size.max(1) as i64;
        if self.left > 0 {
            return false;
        }
        // Points past the block's end are the next ones.
        while self.left <= 0 {
            self.left += self.draw(mean);
        }
        true
    }
}
