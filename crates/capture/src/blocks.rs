//! Blocks a program reports from its own allocator (`TRAMP_ALLOC`,
//! `heaptrack_report_alloc`).

#![allow(unused_imports)]

use super::*;

trampoline!(tramp_alloc, block_alloc_impl, "rdx", "rcx", (p: *mut c_void, size: usize) -> ());
trampoline!(tramp_free, block_free_impl, "rsi", "rdx", (p: *mut c_void) -> ());
trampoline!(tramp_realloc, block_realloc_impl, "rcx", "r8", (old: *mut c_void, size: usize, new: *mut c_void) -> ());
trampoline!(heaptrack_malloc, block_alloc_impl, "rdx", "rcx", (p: *mut c_void, size: usize) -> ());
trampoline!(heaptrack_free, block_free_impl, "rsi", "rdx", (p: *mut c_void) -> ());
trampoline!(heaptrack_realloc, block_realloc_impl, "rcx", "r8", (old: *mut c_void, size: usize, new: *mut c_void) -> ());

pub(crate) extern "C" fn block_alloc_impl(p: *mut c_void, size: usize, sp: usize, bp: usize) {
    record_alloc_as(EV_BLOCK_ALLOC, size, p, Caller { sp, bp });
}

pub(crate) extern "C" fn block_free_impl(p: *mut c_void, sp: usize, bp: usize) {
    record_block_free(p, Caller { sp, bp });
}

pub(crate) extern "C" fn block_realloc_impl(
    old: *mut c_void,
    size: usize,
    new: *mut c_void,
    sp: usize,
    bp: usize,
) {
    // As realloc: a failed resize (NULL for a non-zero size) changed nothing.
    if !new.is_null() || (size == 0 && !old.is_null()) {
        let taken = !old.is_null() && sampled_end(old);
        let now = now_tsc_after();
        resized(
            EV_BLOCK_REALLOC,
            old,
            taken,
            size,
            new,
            Caller { sp, bp },
            now,
            now,
        );
    }
}
