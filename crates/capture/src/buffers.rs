//! Thread buffers: one mmap per thread, filled with events and written to the
//! raw log as self-contained chunks.

#![allow(unused_imports)]

use super::*;

pub(crate) fn new_buffer() -> *mut ThreadBuf {
    // Reuse a buffer a finished thread gave back.
    let mut p = REGISTRY.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: registry entries are never unmapped; `owned` is atomic.
        let b = unsafe { &*p };
        if b.owned
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return p;
        }
        p = b.next;
    }
    // SAFETY: an anonymous private mapping, zero-filled by the kernel, which
    // is a valid ThreadBuf (all fields are integers, atomics or pointers).
    let p = unsafe {
        sys::mmap(
            null_mut(),
            core::mem::size_of::<ThreadBuf>(),
            sys::PROT_READ | sys::PROT_WRITE,
            sys::MAP_PRIVATE | sys::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == sys::MAP_FAILED {
        return null_mut();
    }
    let p = p as *mut ThreadBuf;
    // SAFETY: `p` is ours until it is published below.
    unsafe { (*p).owned.store(1, Ordering::Relaxed) };
    let mut head = REGISTRY.load(Ordering::Acquire);
    loop {
        // SAFETY: as above, not yet published.
        unsafe { (*p).next = head };
        match REGISTRY.compare_exchange(head, p, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return p,
            Err(h) => head = h,
        }
    }
}

/// The calling thread's buffer, set up (with its thread-start event) on
/// first use.
#[inline]
pub(crate) fn this_buffer() -> *mut ThreadBuf {
    let b = TLS.with(|t| t.buf.get());
    if !b.is_null() {
        return b;
    }
    let b = new_buffer();
    if b.is_null() {
        return b;
    }
    let (now_ns, now) = clock_pair();
    // SAFETY: the buffer is owned by this thread now (owned = 1).
    unsafe {
        let t = &mut *b;
        t.tid = sys::gettid() as u32;
        t.len.store(0, Ordering::Relaxed);
        t.closed.store(false, Ordering::Relaxed);
        t.lock.store(false, Ordering::Relaxed);
        t.base_ns = now_ns;
        t.base_tsc = now;
        t.last_tsc = now;
        t.prev_addr = 0;
        t.prev_site = 0;
        t.prev_value = 0;
        t.pending_addr = 0;
        t.pending_site = 0;
        if !t.unwinder.is_null() {
            (*t.unwinder).reset();
        }
        sys::pthread_setspecific(KEY.load(Ordering::Acquire), b as *const c_void);
    }
    TLS.with(|t| t.buf.set(b));
    // SAFETY: as above.
    let t = unsafe { &mut *b };
    let mut w = Writer::new(t);
    w.byte(EV_THREAD_START);
    w.time(now);
    w.commit();
    b
}

/// Appends one event to a thread buffer; committed by `commit`.
pub(crate) struct Writer<'a> {
    pub(crate) t: &'a mut ThreadBuf,
    pub(crate) at: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(t: &'a mut ThreadBuf) -> Self {
        if t.len.load(Ordering::Relaxed) + MAX_EVENT > DATA_BYTES {
            flush(t, false);
        }
        let at = t.len.load(Ordering::Relaxed);
        Writer { t, at }
    }

    #[inline]
    pub(crate) fn byte(&mut self, b: u8) {
        self.t.data[self.at] = b;
        self.at += 1;
    }

    #[inline]
    pub(crate) fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.t.data[self.at] = (v as u8) | 0x80;
            self.at += 1;
            v >>= 7;
        }
        self.t.data[self.at] = v as u8;
        self.at += 1;
    }

    /// `v - from` as a zigzag varint (small either way).
    #[inline]
    pub(crate) fn diff(&mut self, v: u64, from: u64) {
        let d = v.wrapping_sub(from) as i64;
        self.varint(((d << 1) ^ (d >> 63)) as u64);
    }

    /// An address as the zigzag difference from the chunk's last one.
    #[inline]
    pub(crate) fn addr(&mut self, a: u64) {
        self.diff(a, self.t.prev_addr);
        self.t.prev_addr = a;
    }

    /// A site as the zigzag difference from the chunk's last one.
    #[inline]
    pub(crate) fn site(&mut self, s: u64) {
        self.diff(s, self.t.prev_site);
        self.t.prev_site = s;
    }

    #[inline]
    pub(crate) fn time(&mut self, now: u64) {
        let dt = now.saturating_sub(self.t.last_tsc);
        self.t.last_tsc = now.max(self.t.last_tsc);
        self.varint(dt);
    }

    #[inline]
    pub(crate) fn commit(self) {
        self.t.len.store(self.at, Ordering::Release);
    }
}

/// Writes a buffer's events as one chunk. `foreign`: called by another
/// thread (exit, signal), which closes the buffer to its owner.
pub(crate) fn flush(t: &mut ThreadBuf, foreign: bool) {
    if t.lock.swap(true, Ordering::Acquire) {
        return;
    }
    if t.closed.load(Ordering::Relaxed) {
        t.lock.store(false, Ordering::Release);
        return;
    }
    if foreign {
        t.closed.store(true, Ordering::Relaxed);
    }
    let len = t.len.load(Ordering::Acquire);
    if len > 0 {
        let mut hdr = [0u8; CHUNK_HEADER];
        hdr[..4].copy_from_slice(&CHUNK_MAGIC);
        hdr[4..8].copy_from_slice(&t.tid.to_le_bytes());
        let flags = if core::mem::take(&mut t.spawned) {
            CHUNK_SPAWN
        } else {
            0
        };
        hdr[8..12].copy_from_slice(&(len as u32 | flags).to_le_bytes());
        let (end_ns, end_tsc) = clock_pair();
        let end_tsc = end_tsc.max(t.last_tsc);
        hdr[12..20].copy_from_slice(&t.base_ns.to_le_bytes());
        hdr[20..28].copy_from_slice(&t.base_tsc.to_le_bytes());
        hdr[28..36].copy_from_slice(&end_ns.to_le_bytes());
        hdr[36..44].copy_from_slice(&end_tsc.to_le_bytes());
        let on_disk = write_chunk(&hdr, &t.data[..len]);
        if !foreign {
            CHECK_MODULES.store(true, Ordering::Relaxed);
            // Only the owner waits (never a signal handler or an exiting
            // process flushing other threads' buffers).
            t.stalled_ns = wait_for_converter(on_disk);
        }
        t.base_ns = end_ns;
        t.base_tsc = end_tsc;
        t.last_tsc = end_tsc;
        t.prev_addr = 0;
        t.prev_site = 0;
        t.prev_value = 0;
        t.len.store(0, Ordering::Release);
        if t.stalled_ns > 0 {
            // The new chunk starts with the wait (the event's time is when
            // the wait ended).
            let now = now_tsc();
            let mut w = Writer { t: &mut *t, at: 0 };
            w.byte(EV_STALL);
            let waited = w.t.stalled_ns;
            w.varint(waited);
            w.time(now);
            w.commit();
            t.stalled_ns = 0;
        }
    }
    t.lock.store(false, Ordering::Release);
}

/// Appends a chunk to the log; returns the bytes the log then holds on
/// disk (before this chunk's).
pub(crate) fn write_chunk(hdr: &[u8], payload: &[u8]) -> u64 {
    let on_disk = check_log();
    let iov = [
        sys::Iovec {
            iov_base: hdr.as_ptr() as *const c_void,
            iov_len: hdr.len(),
        },
        sys::Iovec {
            iov_base: payload.as_ptr() as *const c_void,
            iov_len: payload.len(),
        },
    ];
    for _ in 0..3 {
        // SAFETY: both iovecs point at live slices of the given lengths.
        let n = unsafe { sys::writev(FD.load(Ordering::Acquire), iov.as_ptr(), 2) };
        if n >= 0 {
            return on_disk + n as u64;
        }
        match errno() {
            sys::EINTR => continue,
            // The program closed our descriptor: open the log again.
            sys::EBADF if reopen_log() => continue,
            _ => break,
        }
    }
    DROPPED.fetch_add(1, Ordering::Relaxed);
    on_disk
}

/// Flushes every thread's buffer (exit, exec, fatal signal). With
/// `modules`, first records the module map (not from a signal handler:
/// dl_iterate_phdr takes a lock).
pub(crate) fn flush_everything(modules: bool) {
    if !matches!(STATE.load(Ordering::Acquire), READY | ARMED) {
        return;
    }
    if modules {
        let own = this_buffer();
        if !own.is_null() {
            // SAFETY: our own buffer.
            let t = unsafe { &mut *own };
            // The thread's last store is done (we are in exit or exec). Not
            // from a signal handler: the pending store may be the very
            // access that faulted, and reading it would fault again.
            if t.pending_site != 0 {
                write_pending_store(t);
            }
            write_unwind_stats(t);
            record_modules(t);
        }
    }
    let own = TLS.with(|t| t.buf.get());
    let mut p = REGISTRY.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: registry entries are never unmapped. Another thread may be
        // appending to its buffer: we only read committed bytes, and
        // closing the buffer keeps its owner from writing them again.
        let t = unsafe { &mut *p };
        if t.owned.load(Ordering::Acquire) == 1 {
            flush(t, p != own);
        }
        p = t.next;
    }
}

/// Records the loaded modules when they changed since the last time.
pub(crate) fn record_modules(t: &mut ThreadBuf) {
    struct Ctx<'a> {
        t: &'a mut ThreadBuf,
        adds: u64,
        first: bool,
    }
    unsafe extern "C" fn each(
        info: *mut sys::DlPhdrInfo,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our own context.
        unsafe {
            let ctx = &mut *(data as *mut Ctx);
            let info = &*info;
            if ctx.first {
                ctx.first = false;
                ctx.adds = info.dlpi_adds;
                if MODULE_SUBS.swap(info.dlpi_subs, Ordering::Relaxed) != info.dlpi_subs {
                    // Modules went away: cached unwind rules may name them.
                    unwind::GENERATION.fetch_add(1, Ordering::Relaxed);
                }
                if MODULE_ADDS.load(Ordering::Relaxed) == info.dlpi_adds {
                    return 1; // unchanged: stop
                }
            }
            let name: &[u8] = if info.dlpi_name.is_null() || *info.dlpi_name == 0 {
                let p = &*PATHS.0.get();
                &p.exe[..p.exe_len]
            } else {
                core::slice::from_raw_parts(
                    info.dlpi_name as *const u8,
                    sys::strlen(info.dlpi_name),
                )
            };
            let name = &name[..name.len().min(MAX_EVENT - 24)];
            let mut w = Writer::new(ctx.t);
            w.byte(EV_MODULE);
            w.varint(info.dlpi_addr as u64);
            w.varint(name.len() as u64);
            for b in name {
                w.byte(*b);
            }
            w.commit();
            0
        }
    }
    let mut ctx = Ctx {
        t,
        adds: 0,
        first: true,
    };
    // SAFETY: `each` matches the callback type; `ctx` outlives the call.
    unsafe { sys::dl_iterate_phdr(each, &mut ctx as *mut Ctx as *mut c_void) };
    MODULE_ADDS.store(ctx.adds, Ordering::Relaxed);
}

pub(crate) unsafe extern "C" fn thread_exit(value: *mut c_void) {
    let t = value as *mut ThreadBuf;
    // Not after a detach: the recording is over.
    if t.is_null() || STATE.load(Ordering::Acquire) != READY {
        return;
    }
    TLS.with(|t| t.busy.set(true));
    // SAFETY: the value we set with pthread_setspecific: this thread's buffer.
    let t = unsafe { &mut *t };
    // Other keys' destructors run after ours and may free (a value freed by
    // its key's destructor): while a round of destructors recorded
    // something, write it out and ask for one more round (glibc gives four),
    // so that those frees are this thread's, before its end, and not late.
    let round = TLS.with(|tls| {
        let r = tls.exit_rounds.get() + 1;
        tls.exit_rounds.set(r);
        r
    });
    if round < 4 && (round == 1 || t.len.load(Ordering::Relaxed) > 0) {
        flush(t, false);
        // SAFETY: our key, this thread's own buffer as its value.
        unsafe { sys::pthread_setspecific(KEY.load(Ordering::Acquire), value) };
        TLS.with(|t| t.busy.set(false));
        return;
    }
    if !t.closed.load(Ordering::Relaxed) {
        if t.pending_site != 0 {
            write_pending_store(t);
        }
        write_unwind_stats(t);
        let mut w = Writer::new(t);
        w.byte(EV_THREAD_END);
        w.time(now_tsc());
        w.commit();
    }
    flush(t, false);
    TLS.with(|t| t.buf.set(null_mut()));
    t.owned.store(0, Ordering::Release);
    TLS.with(|t| {
        t.busy.set(false);
        t.exit_rounds.set(0);
    });
}

/// In a fork child: a log of its own, and only this thread's buffer.
pub(crate) unsafe extern "C" fn fork_child() {
    if STATE.load(Ordering::Acquire) != READY {
        return;
    }
    let own = TLS.with(|t| t.buf.get());
    let mut p = REGISTRY.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: the child has one thread; the other buffers belong to the
        // parent's threads, whose events the parent writes.
        let t = unsafe { &mut *p };
        t.len.store(0, Ordering::Relaxed);
        t.lock.store(false, Ordering::Relaxed);
        if p != own {
            t.owned.store(0, Ordering::Relaxed);
        }
        p = t.next;
    }
    TLS.with(|t| t.buf.set(null_mut()));
    sampled::after_fork();
    if !own.is_null() {
        // SAFETY: as above; this thread's buffer goes back to the pool and is
        // taken again below with the child's tid.
        unsafe { (*own).owned.store(0, Ordering::Release) };
    }
    // SAFETY: FD is ours.
    unsafe { sys::close(FD.load(Ordering::Acquire)) };
    MODULE_ADDS.store(u64::MAX, Ordering::Relaxed);
    if !open_log() {
        STATE.store(DISABLED, Ordering::Release);
        return;
    }
    TLS.with(|t| t.busy.set(true));
    let b = this_buffer();
    if !b.is_null() {
        // SAFETY: this thread's buffer.
        write_process_header(unsafe { &mut *b });
    }
    TLS.with(|t| t.busy.set(false));
}

pub(crate) fn write_process_header(t: &mut ThreadBuf) {
    let mut w = Writer::new(t);
    w.byte(EV_PROCESS);
    // SAFETY: getpid/getppid have no preconditions.
    w.varint(unsafe { sys::getpid() } as u64);
    w.varint(unsafe { sys::getppid() } as u64);
    w.varint(STACK_DEPTH.load(Ordering::Relaxed) as u64);
    w.varint(SAMPLE_MEAN.load(Ordering::Relaxed));
    w.varint(u64::from(ATTACHED_AT.load(Ordering::Relaxed)));
    w.commit();
    write_command(t);
}

/// The longest command line a trace keeps (longer ones are cut, and the
/// trace says so).
const COMMAND_MAX: usize = 8192;

/// The process's command line, in pieces that fit an event (`EV_COMMAND`).
fn write_command(t: &mut ThreadBuf) {
    let mut buf = [0u8; COMMAND_MAX + 1];
    // SAFETY: open, read and close of our own descriptor; every read
    // writes at most the bytes left in the local buffer, from `at`.
    let n = unsafe {
        let fd = sys::open(
            c"/proc/self/cmdline".as_ptr(),
            sys::O_RDONLY | sys::O_CLOEXEC,
            0,
        );
        if fd < 0 {
            return;
        }
        let mut at = 0usize;
        while at < buf.len() {
            let k = sys::read(fd, buf.as_mut_ptr().add(at) as *mut c_void, buf.len() - at);
            if k <= 0 {
                break;
            }
            at += k as usize;
        }
        sys::close(fd);
        at
    };
    let (text, end) = match n > COMMAND_MAX {
        true => (&buf[..COMMAND_MAX], 2),
        false => (&buf[..n], 1),
    };
    let piece = MAX_EVENT - 32;
    let pieces = text.len().div_ceil(piece).max(1);
    for i in 0..pieces {
        let part = &text[(i * piece).min(text.len())..((i + 1) * piece).min(text.len())];
        let mut w = Writer::new(t);
        w.byte(EV_COMMAND);
        w.byte(if i + 1 == pieces { end } else { 0 });
        w.varint(part.len() as u64);
        for &b in part {
            w.byte(b);
        }
        w.commit();
    }
}

pub(crate) extern "C" fn fatal_signal(sig: c_int) {
    TLS.with(|t| t.busy.set(true));
    flush_everything(false);
    let dfl = sys::SigAction {
        sa_handler: sys::SIG_DFL,
        sa_mask: [0; 16],
        sa_flags: 0,
        sa_restorer: 0,
    };
    // SAFETY: restore the default action and deliver the signal again, so
    // the process ends the way it would have without us.
    unsafe {
        sys::sigaction(sig, &dfl, null_mut());
        sys::raise(sig);
    }
}
