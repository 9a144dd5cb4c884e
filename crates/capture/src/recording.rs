//! Recording: the handlers behind the entry points, which take the call stack
//! and append each event.

#![allow(unused_imports)]

use super::*;

pub(crate) static PROCESS_HEADER_DONE: AtomicBool = AtomicBool::new(false);

/// Runs `f` on this thread's buffer unless recording is off or we are
/// already inside the library on this thread.
#[inline(always)]
pub(crate) fn with_buffer(f: impl FnOnce(&mut ThreadBuf)) {
    if STATE.load(Ordering::Relaxed) != READY && !init() {
        return;
    }
    TLS.with(|tls| {
        if tls.busy.get() {
            return;
        }
        tls.busy.set(true);
        let mut b = tls.buf.get();
        if b.is_null() {
            b = this_buffer();
        }
        if !b.is_null() {
            // SAFETY: this thread's own buffer, which only it appends to.
            let t = unsafe { &mut *b };
            if !PROCESS_HEADER_DONE.load(Ordering::Relaxed)
                && !PROCESS_HEADER_DONE.swap(true, Ordering::AcqRel)
            {
                write_process_header(t);
                record_modules(t);
                record_lsan_suppressions(t);
            } else if CHECK_MODULES.load(Ordering::Relaxed)
                && CHECK_MODULES.swap(false, Ordering::Relaxed)
            {
                record_modules(t);
            }
            if !t.closed.load(Ordering::Relaxed) {
                if t.pending_site != 0 {
                    write_pending_store(t);
                }
                f(t);
            }
        }
        tls.busy.set(false);
    });
}

/// Where an allocation function was called from: the stack pointer on
/// entry to the trampoline (the return address is there) and the frame
/// pointer, which the trampoline leaves as the caller had it.
#[derive(Clone, Copy)]
pub(crate) struct Caller {
    pub(crate) sp: usize,
    pub(crate) bp: usize,
}

impl Caller {
    #[inline(always)]
    pub(crate) fn ret(self) -> usize {
        // SAFETY: the call that entered the trampoline pushed the return
        // address at `sp`; that stack slot is live while the handler runs.
        unsafe { *(self.sp as *const usize) }
    }
}

/// The site of an allocation: the caller's return address. With stacks
/// on, the thread's call stack is taken first, and what changed since its
/// previous one is written (`EV_FRAMES`) before the event that uses it.
#[inline(always)]
pub(crate) fn site(w: &mut Writer<'_>, caller: Caller) -> u64 {
    let ret = caller.ret() as u64;
    let depth = STACK_DEPTH.load(Ordering::Relaxed);
    if depth == 0 {
        return ret;
    }
    if w.t.unwinder.is_null() {
        w.t.unwinder = Unwinder::map();
        if w.t.unwinder.is_null() {
            return ret;
        }
    }
    // SAFETY: the thread's own unwinder (mapped above or earlier, never
    // unmapped, reset when the buffer changes hands).
    let u = unsafe { &mut *w.t.unwinder };
    let start = Frame::caller(caller.sp as u64, caller.bp as u64);
    let change = u.take(start, depth, UNWIND_CHECK.load(Ordering::Relaxed));
    if change.n_new > 0 {
        // The innermost new frame is the return address, which the event
        // that follows carries as its site: listed are the others, as
        // differences chained from the chunk's last site.
        w.byte(EV_FRAMES);
        w.varint(change.keep as u64);
        w.varint(change.n_new as u64 - 1);
        let mut prev = w.t.prev_site;
        for k in 1..change.n_new {
            let f = u.new_frame(k);
            w.diff(f, prev);
            prev = f;
        }
    }
    ret
}

/// Writes the suppressions the program compiled in for LeakSanitizer
/// (`const char *__lsan_default_suppressions(void)`), when it has them, in
/// pieces that fit an event.
pub(crate) fn record_lsan_suppressions(t: &mut ThreadBuf) {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT (null)
    // searches the program and its libraries (the program's own symbol
    // table too: executables do not export the function unless linked
    // with -rdynamic).
    let mut f = unsafe { sys::dlsym(null_mut(), c"__lsan_default_suppressions".as_ptr()) };
    if f.is_null() {
        f = program_symbol(b"__lsan_default_suppressions") as *mut c_void;
    }
    if f.is_null() {
        return;
    }
    // SAFETY: LeakSanitizer's interface: a function of no arguments that
    // returns a NUL-terminated string (or NULL); we are inside the library,
    // so anything it allocates is not recorded.
    let text = unsafe {
        let f: extern "C" fn() -> *const c_char = core::mem::transmute(f);
        let p = f();
        if p.is_null() {
            return;
        }
        core::slice::from_raw_parts(p as *const u8, sys::strlen(p).min(1 << 16))
    };
    for piece in text.chunks(MAX_EVENT - 32) {
        let mut w = Writer::new(t);
        w.byte(EV_LSAN);
        w.varint(piece.len() as u64);
        for &b in piece {
            w.byte(b);
        }
        w.commit();
    }
}

/// The address of a function the program defines, from the `.symtab` of
/// its file (0 when absent or the file is stripped). The file is mapped
/// read-only, read with bounds checks, and unmapped.
pub(crate) fn program_symbol(name: &[u8]) -> usize {
    // SAFETY: open/fstat/mmap/close on our own descriptor; the mapping is
    // read-only, private, and unmapped below.
    let (map, size) = unsafe {
        let fd = sys::open(
            c"/proc/self/exe".as_ptr(),
            sys::O_RDONLY | sys::O_CLOEXEC,
            0,
        );
        if fd < 0 {
            return 0;
        }
        let mut st = [0u64; 18];
        let size = if sys::fstat(fd, &mut st) == 0 {
            st[6] as usize
        } else {
            0
        };
        let map = if size >= 64 {
            sys::mmap(null_mut(), size, sys::PROT_READ, sys::MAP_PRIVATE, fd, 0)
        } else {
            sys::MAP_FAILED
        };
        sys::close(fd);
        if map == sys::MAP_FAILED {
            return 0;
        }
        (map, size)
    };
    // SAFETY: the mapping is `size` readable bytes until unmapped below.
    let elf = unsafe { core::slice::from_raw_parts(map as *const u8, size) };
    let found = find_symbol(elf, name);
    // SAFETY: the mapping made above, no longer used.
    unsafe { sys::syscall(sys::SYS_MUNMAP, map, size) };
    let Some((value, pie)) = found else { return 0 };
    if !pie {
        return value as usize;
    }
    // A position-independent program: add its load address (the first
    // module dl_iterate_phdr reports).
    unsafe extern "C" fn first(info: *mut sys::DlPhdrInfo, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our u64.
        unsafe { *(data as *mut u64) = (*info).dlpi_addr as u64 };
        1
    }
    let mut base = 0u64;
    // SAFETY: `first` matches the callback type; `base` outlives the call.
    unsafe { sys::dl_iterate_phdr(first, &mut base as *mut u64 as *mut c_void) };
    (base + value) as usize
}

/// A defined symbol's value in an ELF64 file's `.symtab`, and whether the
/// file is position-independent (ET_DYN).
pub(crate) fn find_symbol(elf: &[u8], name: &[u8]) -> Option<(u64, bool)> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?));
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let pie = u16_at(0x10)? == 3;
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let shnum = u16_at(0x3c)? as usize;
    let section = |i: usize| shoff.checked_add(i.checked_mul(64)?);
    for i in 0..shnum {
        let sh = section(i)?;
        if u32_at(sh + 4)? != 2 {
            continue; // not SHT_SYMTAB
        }
        let (off, len) = (u64_at(sh + 0x18)? as usize, u64_at(sh + 0x20)? as usize);
        let strtab = section(u32_at(sh + 0x28)? as usize)?;
        let (str_off, str_len) = (
            u64_at(strtab + 0x18)? as usize,
            u64_at(strtab + 0x20)? as usize,
        );
        let strings = elf.get(str_off..str_off.checked_add(str_len)?)?;
        let syms = elf.get(off..off.checked_add(len)?)?;
        for sym in syms.chunks_exact(24) {
            let at = u32::from_le_bytes(sym[..4].try_into().ok()?) as usize;
            let value = u64::from_le_bytes(sym[8..16].try_into().ok()?);
            let shndx = u16::from_le_bytes(sym[6..8].try_into().ok()?);
            if value == 0 || shndx == 0 {
                continue;
            }
            let Some(rest) = strings.get(at..) else {
                continue;
            };
            if rest.len() > name.len() && &rest[..name.len()] == name && rest[name.len()] == 0 {
                return Some((value, pie));
            }
        }
    }
    None
}

/// Writes how the thread's stacks were taken (with stacks on).
pub(crate) fn write_unwind_stats(t: &mut ThreadBuf) {
    if t.unwinder.is_null() {
        return;
    }
    // SAFETY: the thread's own unwinder.
    let u = unsafe { &*t.unwinder };
    let (stacks, early, frames, checks, mismatches) = (
        u.stacks,
        u.early_stops,
        u.frames_unwound,
        u.checks,
        u.mismatches,
    );
    let mut w = Writer::new(t);
    w.byte(EV_UNWIND);
    for v in [stacks, early, frames, checks, mismatches] {
        w.varint(v);
    }
    w.time(now_tsc());
    w.commit();
}

/// Writes the buffer when its chunk began long ago (see [`STALE_TSC`]),
/// and samples the RSS when a sample is due.
#[inline(always)]
pub(crate) fn flush_if_stale(t: &mut ThreadBuf, now: u64) {
    if now >= RSS_DUE.load(Ordering::Relaxed) {
        sample_rss(t, now);
    }
    if now.wrapping_sub(t.base_tsc) > STALE_TSC {
        flush(t, false);
    }
}

/// Writes the process's resident set size (from /proc/self/statm) as an
/// event, and sets the next sample 10 ms on. One thread takes each sample.
#[cold]
pub(crate) fn sample_rss(t: &mut ThreadBuf, now: u64) {
    let due = RSS_DUE.load(Ordering::Relaxed);
    if now < due
        || RSS_DUE
            .compare_exchange(due, u64::MAX, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    // TSC ticks in 10 ms, from the clock since init (2^24 until 1 ms passed).
    let (ns0, tsc0) = (
        CAL_NS.load(Ordering::Relaxed),
        CAL_TSC.load(Ordering::Relaxed),
    );
    let ns = now_ns();
    let ticks = if ns > ns0 + 1_000_000 && now > tsc0 {
        ((now - tsc0) as u128 * 10_000_000 / (ns - ns0) as u128) as u64
    } else {
        1 << 24
    };
    if let Some(bytes) = resident_bytes() {
        let mut w = Writer::new(t);
        w.byte(EV_RSS);
        w.varint(bytes);
        w.time(now);
        w.commit();
    }
    RSS_DUE.store(now.saturating_add(ticks.max(1)), Ordering::Relaxed);
}

/// Resident bytes: the second number of /proc/self/statm, in pages.
pub(crate) fn resident_bytes() -> Option<u64> {
    let mut buf = [0u8; 128];
    // SAFETY: open/read/close into a buffer we own.
    let n = unsafe {
        let fd = sys::open(
            c"/proc/self/statm".as_ptr(),
            sys::O_RDONLY | sys::O_CLOEXEC,
            0,
        );
        if fd < 0 {
            return None;
        }
        let n = sys::read(fd, buf.as_mut_ptr() as *mut c_void, buf.len());
        sys::close(fd);
        n
    };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    let mut fields = text.split(|&b| b == b' ');
    fields.next()?;
    let mut pages = 0u64;
    for &c in fields.next()? {
        if !c.is_ascii_digit() {
            return None;
        }
        pages = pages.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    pages.checked_mul(4096)
}

#[inline(always)]
pub(crate) fn record_alloc(size: usize, p: *mut c_void, caller: Caller) {
    record_alloc_as(EV_ALLOC, size, p, caller)
}

/// An allocation event of `kind` (`EV_ALLOC`, or `EV_BLOCK_ALLOC` for a
/// reported block).
#[inline(always)]
pub(crate) fn record_alloc_as(kind: u8, size: usize, p: *mut c_void, caller: Caller) {
    if p.is_null() || !sample(size, p) {
        return;
    }
    record_sampled_alloc(kind, size, p, caller, 0);
}

/// Writes an allocation event that is to be recorded, stamped `now` (0:
/// read after the unwinding).
#[inline(always)]
pub(crate) fn record_sampled_alloc(
    kind: u8,
    size: usize,
    p: *mut c_void,
    caller: Caller,
    now: u64,
) {
    with_buffer(|t| {
        let mut w = Writer::new(t);
        let s = site(&mut w, caller);
        let now = if now == 0 { now_tsc_after() } else { now };
        w.byte(kind);
        w.varint(size as u64);
        w.addr(p as u64);
        w.site(s);
        w.time(now);
        w.commit();
        flush_if_stale(t, now);
    });
}

/// Writes this thread's buffer out now if the next events might not fit,
/// so that the events that follow begin without a flush.
pub(crate) fn make_room() {
    with_buffer(|t| {
        if t.len.load(Ordering::Relaxed) + 2 * MAX_EVENT > DATA_BYTES {
            flush(t, false);
        }
    });
}

/// Whether an allocation is recorded: always, unless sampling is on; then
/// when the thread's countdown passes a sample point in it, and the block
/// is noted as sampled. Recording is set up first, so that no allocation
/// is recorded unsampled once sampling is known to be on.
#[inline(always)]
pub(crate) fn sample(size: usize, p: *mut c_void) -> bool {
    if STATE.load(Ordering::Relaxed) != READY && !init() {
        return true;
    }
    let mean = SAMPLE_MEAN.load(Ordering::Relaxed);
    if mean == 0 {
        return true;
    }
    let taken = TLS.with(|t| {
        let mut c = t.countdown.get();
        let seed = if c.rng != 0 {
            0
        } else {
            let fixed = SAMPLE_SEED.load(Ordering::Relaxed);
            let n = SAMPLERS.fetch_add(1, Ordering::Relaxed) + 1;
            if fixed != 0 {
                fixed ^ n.wrapping_mul(rng::GOLDEN)
            } else {
                now_tsc() ^ ((p as u64) << 17) ^ (t as *const Tls as u64)
            }
        };
        let taken = c.take(mean, size, seed);
        t.countdown.set(c);
        taken
    });
    taken && sampled::insert(p as usize)
}

/// Whether a block's end is recorded: always, unless sampling is on; then
/// when its allocation was (it leaves the set of sampled blocks). Called
/// before the call that ends it.
#[inline(always)]
pub(crate) fn sampled_end(p: *mut c_void) -> bool {
    SAMPLE_MEAN.load(Ordering::Relaxed) == 0 || sampled::remove(p as usize)
}

#[inline(always)]
pub(crate) fn record_free(p: *mut c_void, caller: Caller) {
    if p.is_null() || !sampled_end(p) {
        return;
    }
    record_free_at(p, caller, None);
}

/// A free stamped `at`, or, with `None`, when its event is begun: after
/// any flush that making room for it takes, since an event's time cannot
/// precede its chunk's start (it would be moved up to it, past the call).
/// A realloc's end of a sampled block whose new block is not sampled is
/// stamped before its call; the realloc made room first (`make_room`).
pub(crate) fn record_free_at(p: *mut c_void, caller: Caller, at: Option<u64>) {
    let with_site = POINTERS.load(Ordering::Relaxed);
    with_buffer(|t| {
        let mut w = Writer::new(t);
        let now = at.unwrap_or_else(now_tsc_after);
        if with_site {
            w.byte(EV_FREE_AT);
            w.addr(p as u64);
            w.site(caller.ret() as u64);
        } else {
            w.byte(EV_FREE);
            w.addr(p as u64);
        }
        w.time(now);
        w.commit();
        flush_if_stale(t, now);
    });
}

/// A realloc event of `kind` (`EV_REALLOC` or `EV_BLOCK_REALLOC`): `before`
/// is the TSC read before the call, `after` the one read after it. The
/// event carries both: the old block ended no earlier than `before`, the
/// new one started no later than `after`, and `tramp record` places the
/// event between them where no other thread's use of either address comes
/// out of order (docs/formats/capture.md, "Order per address").
#[inline(always)]
pub(crate) fn record_realloc_as(
    kind: u8,
    old: *mut c_void,
    size: usize,
    new: *mut c_void,
    caller: Caller,
    before: u64,
    after: u64,
) {
    with_buffer(|t| {
        let mut w = Writer::new(t);
        let s = site(&mut w, caller);
        w.byte(kind);
        w.varint(size as u64);
        w.addr(old as u64);
        w.addr(new as u64);
        w.site(s);
        w.time(after);
        // How long before `after` the call began (the old block's end);
        // `before` may precede the chunk's start when the buffer was
        // written out in between.
        w.varint(after.saturating_sub(before));
        w.commit();
        flush_if_stale(t, after);
    });
}

/// The end of a reported block, with the site that ended it.
pub(crate) fn record_block_free(p: *mut c_void, caller: Caller) {
    if p.is_null() || !sampled_end(p) {
        return;
    }
    with_buffer(|t| {
        let mut w = Writer::new(t);
        let now = now_tsc_after();
        w.byte(EV_BLOCK_FREE);
        w.addr(p as u64);
        w.site(caller.ret() as u64);
        w.time(now);
        w.commit();
        flush_if_stale(t, now);
    });
}
