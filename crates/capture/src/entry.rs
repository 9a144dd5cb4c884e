//! Entry points. Each is a naked trampoline that passes its stack pointer on
//! entry (where the caller's return address is) and the caller's frame
//! pointer as two extra arguments to the real handler.

#![allow(unused_imports)]

use super::*;

macro_rules! trampoline {
    ($name:ident, $imp:ident, $sp:literal, $bp:literal, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        #[unsafe(no_mangle)]
        #[unsafe(naked)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            core::arch::naked_asm!(
                concat!("mov ", $sp, ", rsp"),
                concat!("mov ", $bp, ", rbp"),
                "jmp {}",
                sym $imp
            )
        }
    };
}

trampoline!(malloc, malloc_impl, "rsi", "rdx", (size: usize) -> *mut c_void);
trampoline!(free, free_impl, "rsi", "rdx", (p: *mut c_void) -> ());
trampoline!(calloc, calloc_impl, "rdx", "rcx", (n: usize, size: usize) -> *mut c_void);
trampoline!(realloc, realloc_impl, "rdx", "rcx", (p: *mut c_void, size: usize) -> *mut c_void);
trampoline!(reallocarray, reallocarray_impl, "rcx", "r8", (p: *mut c_void, n: usize, size: usize) -> *mut c_void);
trampoline!(posix_memalign, posix_memalign_impl, "rcx", "r8", (out: *mut *mut c_void, align: usize, size: usize) -> c_int);
trampoline!(aligned_alloc, aligned_alloc_impl, "rdx", "rcx", (align: usize, size: usize) -> *mut c_void);
trampoline!(memalign, memalign_impl, "rdx", "rcx", (align: usize, size: usize) -> *mut c_void);
trampoline!(valloc, valloc_impl, "rsi", "rdx", (size: usize) -> *mut c_void);
trampoline!(pvalloc, pvalloc_impl, "rsi", "rdx", (size: usize) -> *mut c_void);

pub(crate) extern "C" fn malloc_impl(size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's malloc.
    let p = unsafe { sys::__libc_malloc(size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

pub(crate) extern "C" fn free_impl(p: *mut c_void, sp: usize, bp: usize) {
    record_free(p, Caller { sp, bp });
    // SAFETY: `p` is the caller's block (or NULL), from glibc's allocator.
    unsafe { sys::__libc_free(p) }
}

pub(crate) extern "C" fn calloc_impl(n: usize, size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's calloc (checks n * size for overflow).
    let p = unsafe { sys::__libc_calloc(n, size) };
    record_alloc(n.wrapping_mul(size), p, Caller { sp, bp });
    p
}

pub(crate) extern "C" fn realloc_impl(
    old: *mut c_void,
    size: usize,
    sp: usize,
    bp: usize,
) -> *mut c_void {
    // The old block's end is stamped before the call (once it returns,
    // another thread may already have been handed the old address), the
    // new block's start after it. Sampling: the old block leaves the set
    // before the call for the same reason.
    let sampling = SAMPLE_MEAN.load(Ordering::Relaxed) != 0;
    let old_taken = !old.is_null() && (!sampling || sampled::remove(old as usize));
    if old_taken {
        // The thread's buffer exists, and has room, before `before` is
        // read: its start event (a thread's first realloc) and its chunk
        // (a flush) must not begin after the realloc's own first reading,
        // or the converter meets the realloc behind what it wrote already
        // and cannot put it before another thread's allocation of the old
        // block (issue 47: 2 of 40 slots.c recordings under load). Sampled,
        // its end may be written as a free stamped `before` (see
        // `record_free_at`).
        make_room();
    }
    let before = now_tsc_after();
    // SAFETY: glibc's realloc on the caller's block.
    let new = unsafe { sys::__libc_realloc(old, size) };
    let after = now_tsc_after();
    // Recorded: any success, and realloc(p, 0), which frees p and returns
    // NULL. A failed resize (NULL for a non-zero size) changes nothing.
    if !new.is_null() || (size == 0 && !old.is_null()) {
        resized(
            EV_REALLOC,
            old,
            old_taken,
            size,
            new,
            Caller { sp, bp },
            before,
            after,
        );
    } else if sampling && old_taken {
        // Still the caller's block, still sampled.
        sampled::insert(old as usize);
    }
    new
}

/// Records a realloc that happened: `old_taken` says whether the old block
/// was recorded (always, unless sampling left it out). Under sampling the
/// new block is drawn as an allocation of its own; a realloc of a sampled
/// block into one that is not is recorded as the old block's free, and one
/// of a block that was not into a sampled one as an allocation.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn resized(
    kind: u8,
    old: *mut c_void,
    old_taken: bool,
    size: usize,
    new: *mut c_void,
    caller: Caller,
    before: u64,
    after: u64,
) {
    if SAMPLE_MEAN.load(Ordering::Relaxed) == 0 {
        record_realloc_as(kind, old, size, new, caller, before, after);
        return;
    }
    let new_taken = !new.is_null() && sample(size, new);
    match (old.is_null() || old_taken, new_taken) {
        (true, true) => record_realloc_as(kind, old, size, new, caller, before, after),
        (true, false) if !old.is_null() => record_free_at(old, caller, Some(before)),
        (false, true) => {
            let alloc = if kind == EV_REALLOC {
                EV_ALLOC
            } else {
                EV_BLOCK_ALLOC
            };
            record_sampled_alloc(alloc, size, new, caller, after);
        }
        _ => {}
    }
}

pub(crate) extern "C" fn reallocarray_impl(
    old: *mut c_void,
    n: usize,
    size: usize,
    sp: usize,
    bp: usize,
) -> *mut c_void {
    let Some(total) = n.checked_mul(size) else {
        // SAFETY: errno is this thread's.
        unsafe { *sys::__errno_location() = 12 }; // ENOMEM
        return null_mut();
    };
    realloc_impl(old, total, sp, bp)
}

pub(crate) extern "C" fn posix_memalign_impl(
    out: *mut *mut c_void,
    align: usize,
    size: usize,
    sp: usize,
    bp: usize,
) -> c_int {
    if !align.is_power_of_two() || !align.is_multiple_of(core::mem::size_of::<usize>()) {
        return 22; // EINVAL
    }
    // SAFETY: glibc's memalign with a valid alignment.
    let p = unsafe { sys::__libc_memalign(align, size) };
    if p.is_null() {
        return 12; // ENOMEM
    }
    // SAFETY: the caller passes a valid out pointer.
    unsafe { *out = p };
    record_alloc(size, p, Caller { sp, bp });
    0
}

pub(crate) extern "C" fn aligned_alloc_impl(
    align: usize,
    size: usize,
    sp: usize,
    bp: usize,
) -> *mut c_void {
    memalign_impl(align, size, sp, bp)
}

pub(crate) extern "C" fn memalign_impl(
    align: usize,
    size: usize,
    sp: usize,
    bp: usize,
) -> *mut c_void {
    // SAFETY: glibc's memalign validates the alignment itself.
    let p = unsafe { sys::__libc_memalign(align, size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

pub(crate) extern "C" fn valloc_impl(size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's valloc.
    let p = unsafe { sys::__libc_valloc(size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

pub(crate) extern "C" fn pvalloc_impl(size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's pvalloc.
    let p = unsafe { sys::__libc_pvalloc(size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}
