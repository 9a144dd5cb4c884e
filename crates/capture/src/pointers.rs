//! Pointer capture: 8-byte loads and stores of instrumented programs (`tramp
//! cc`).

#![allow(unused_imports)]

use super::*;

/// The stub's table, as `tramp cc` defines it (docs/formats/capture.md).
#[repr(C)]
pub(crate) struct PointerHooks {
    /// `TRAMP_HOOKS_MAGIC`: the layout this library knows.
    pub(crate) magic: u64,
    pub(crate) load8: Option<extern "C" fn(usize, usize)>,
    pub(crate) store8: Option<extern "C" fn(usize, usize)>,
}

pub(crate) const TRAMP_HOOKS_MAGIC: u64 = 0x3170_6d61_7274_5054; // "TPtramp1"

/// Finds the program's hook table and points it at our recorders.
pub(crate) fn connect_pointer_hooks() {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT (null) searches
    // the program and its libraries. It may allocate: the state is READY
    // and those allocations are recorded like any other.
    let p = unsafe { sys::dlsym(null_mut(), c"tramp_pointer_hooks".as_ptr()) } as *mut PointerHooks;
    if p.is_null() {
        return;
    }
    // SAFETY: the symbol is the stub's table (`tramp cc` defines it with
    // this layout and exports it); the magic is checked before anything is
    // written. The program's threads have not started: we run in the
    // preloaded library's constructor, before the program's own.
    unsafe {
        if core::ptr::read_volatile(&(*p).magic) != TRAMP_HOOKS_MAGIC {
            return;
        }
        core::ptr::write_volatile(&mut (*p).load8, Some(pointer_load8));
        core::ptr::write_volatile(&mut (*p).store8, Some(pointer_store8));
    }
}

/// Reads the 8 bytes at `addr`.
///
/// # Safety
/// The program accesses these bytes at the hook that reports them (the hook
/// runs just before the access) or has just stored to them (a pending
/// store, read at the thread's next event, before any free or munmap that
/// could unmap them passes through this library).
#[inline(always)]
pub(crate) unsafe fn peek(addr: u64) -> u64 {
    // SAFETY: see above; a byte array has no alignment to respect.
    u64::from_ne_bytes(unsafe { core::ptr::read_volatile(addr as *const [u8; 8]) })
}

/// Appends a load or store event.
#[inline(always)]
pub(crate) fn write_access(
    t: &mut ThreadBuf,
    kind: u8,
    addr: u64,
    value: u64,
    site: u64,
    tsc: u64,
) {
    let mut w = Writer::new(t);
    w.byte(kind);
    w.addr(addr);
    let d = value.wrapping_sub(w.t.prev_value) as i64;
    w.t.prev_value = value;
    w.varint(((d << 1) ^ (d >> 63)) as u64);
    w.site(site);
    w.time(tsc);
    w.commit();
}

/// Writes the thread's pending store with the value memory now holds.
pub(crate) fn write_pending_store(t: &mut ThreadBuf) {
    let (addr, site, tsc) = (t.pending_addr, t.pending_site, t.pending_tsc);
    t.pending_site = 0;
    // SAFETY: see `peek`: the store is done and nothing unmapped its bytes
    // since (every free and munmap comes through here first).
    let value = unsafe { peek(addr) };
    write_access(t, EV_STORE, addr, value, site, tsc);
}

pub(crate) extern "C" fn pointer_load8(addr: usize, ip: usize) {
    with_buffer(|t| {
        let now = now_tsc();
        // SAFETY: the program loads these bytes right after this hook.
        let value = unsafe { peek(addr as u64) };
        write_access(t, EV_LOAD, addr as u64, value, ip as u64, now);
        flush_if_stale(t, now);
    });
}

pub(crate) extern "C" fn pointer_store8(addr: usize, ip: usize) {
    with_buffer(|t| {
        // `with_buffer` wrote the previous pending store; this one waits for
        // the next event (its value is not in memory yet).
        let now = now_tsc();
        t.pending_addr = addr as u64;
        t.pending_site = (ip as u64).max(1);
        t.pending_tsc = now;
        // A thread that only stores still hands its events over in time.
        flush_if_stale(t, now);
    });
}

/// munmap: a pending store into the region is written before the region
/// goes away.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    if POINTERS.load(Ordering::Relaxed) {
        with_buffer(|_| {});
    }
    // SAFETY: the munmap system call with the caller's arguments; `syscall`
    // sets errno on failure as munmap does.
    unsafe { sys::syscall(sys::SYS_MUNMAP, addr, len) as c_int }
}
