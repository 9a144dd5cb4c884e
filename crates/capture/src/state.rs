//! Process state: initialisation, the raw log's file, the clock, settings
//! read from the environment, and the module map.

#![allow(unused_imports)]

use super::*;

pub(crate) const UNINIT: u8 = 0;
pub(crate) const INITIALIZING: u8 = 1;
pub(crate) const READY: u8 = 2;
pub(crate) const DISABLED: u8 = 3;
/// Attached, recording nothing: the log is open and the GOT entries may
/// be ours, but no event is taken (between the patching and
/// `attach::tramp_begin`, and from the start of `attach::tramp_detach`):
/// the trace covers only the span in which every call is ours.
pub(crate) const ARMED: u8 = 4;

pub(crate) static STATE: AtomicU8 = AtomicU8::new(UNINIT);
pub(crate) static FD: AtomicI32 = AtomicI32::new(-1);
/// Device and inode of the log, to notice a program that closed our
/// descriptor and opened something else under the same number.
pub(crate) static LOG_DEV: AtomicU64 = AtomicU64::new(0);
pub(crate) static LOG_INO: AtomicU64 = AtomicU64::new(0);
pub(crate) static KEY: AtomicU32 = AtomicU32::new(0);
pub(crate) static STACK_DEPTH: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REGISTRY: AtomicPtr<ThreadBuf> = AtomicPtr::new(null_mut());
pub(crate) static MODULE_ADDS: AtomicU64 = AtomicU64::new(u64::MAX);
pub(crate) static MODULE_SUBS: AtomicU64 = AtomicU64::new(0);
/// Compare every early stop of the unwinder with a full unwind
/// (TRAMP_CAPTURE_UNWIND_CHECK, for tests).
pub(crate) static UNWIND_CHECK: AtomicBool = AtomicBool::new(false);
/// Unread bytes the log may hold before a flushing thread waits for
/// `tramp record` to read them (0: never wait; TRAMP_CAPTURE_BACKLOG).
pub(crate) static BACKLOG: AtomicU64 = AtomicU64::new(0);
pub(crate) static DROPPED: AtomicU64 = AtomicU64::new(0);
/// TSC at which the next RSS sample is due (u64::MAX while one is taken).
pub(crate) static RSS_DUE: AtomicU64 = AtomicU64::new(0);
/// The clock at init, to turn 10 ms into TSC ticks.
pub(crate) static CAL_NS: AtomicU64 = AtomicU64::new(0);
pub(crate) static CAL_TSC: AtomicU64 = AtomicU64::new(0);
/// Set when a thread wrote a chunk: the next event checks whether modules
/// were loaded since (not inside a flush, which may run in odd places).
pub(crate) static CHECK_MODULES: AtomicBool = AtomicBool::new(false);
/// Whether 8-byte loads and stores are recorded (TRAMP_CAPTURE_POINTERS,
/// set by `tramp record --pointers`).
pub(crate) static POINTERS: AtomicBool = AtomicBool::new(false);
/// `--sample`: the mean bytes between sample points (0: every allocation).
pub(crate) static SAMPLE_MEAN: AtomicU64 = AtomicU64::new(0);
/// `--sample-seed`: the samplers' seed (0: from the clock); each thread's
/// is drawn from it in the order the threads first allocate.
pub(crate) static SAMPLE_SEED: AtomicU64 = AtomicU64::new(0);
pub(crate) static SAMPLERS: AtomicU64 = AtomicU64::new(0);

/// Written during init (single thread) and in a fork child (single thread),
/// read afterwards: the log's directory, path and the executable's path.
pub(crate) struct Paths {
    pub(crate) dir: [u8; 2048],
    pub(crate) dir_len: usize,
    pub(crate) log: [u8; 2200],
    pub(crate) exe: [u8; 2048],
    pub(crate) exe_len: usize,
}

pub(crate) struct PathCell(pub(crate) core::cell::UnsafeCell<Paths>);
// SAFETY: written only while a single thread runs the library's init (the
// INITIALIZING state excludes others) or in a fork child before it records;
// read-only otherwise.
unsafe impl Sync for PathCell {}

pub(crate) static PATHS: PathCell = PathCell(core::cell::UnsafeCell::new(Paths {
    dir: [0; 2048],
    dir_len: 0,
    log: [0; 2200],
    exe: [0; 2048],
    exe_len: 0,
}));

/// Per-thread state: the buffer, and whether the thread is inside the
/// library already (allocations made by the library itself, or by code it
/// calls, are not recorded). One TLS slot, one lookup per event.
///
/// The slot is static TLS reached the initial-exec way (the thread pointer
/// plus an offset the loader writes into the GOT): two loads, where Rust's
/// `thread_local!` in a shared library calls `__tls_get_addr` per event.
/// A preloaded library's TLS is part of every thread's static block.
#[repr(C)]
pub(crate) struct Tls {
    pub(crate) buf: Cell<*mut ThreadBuf>,
    pub(crate) busy: Cell<bool>,
    /// Rounds of pthread key destructors this thread has run ours in.
    pub(crate) exit_rounds: Cell<u8>,
    /// The thread's sampler (`--sample`).
    pub(crate) countdown: Cell<sampled::Countdown>,
}

// 32 zero bytes of thread-local storage: zero is `Tls { buf: null, busy:
// false, exit_rounds: 0, countdown: not drawn }`, every thread's starting
// state.
// The symbol is global but hidden: the accessor below is inlined into the
// other modules' code, which the compiler may put in other object files
// (a local label would not be found there); hidden keeps it out of the
// library's dynamic symbols.
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    ".globl tramp_capture_tls",
    ".hidden tramp_capture_tls",
    "tramp_capture_tls:",
    ".zero 32",
    ".popsection",
);

/// The calling thread's [`Tls`], as `TLS.with(|t| …)`.
pub(crate) struct TlsKey;
pub(crate) static TLS: TlsKey = TlsKey;

impl TlsKey {
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Tls) -> R) -> R {
        let p: *const Tls;
        // SAFETY: the initial-exec TLS sequence for x86_64 Linux: the GOT
        // entry holds the slot's offset from the thread pointer (relocated
        // by the loader), and fs:0 holds the thread pointer itself. It
        // reads only memory that is constant for the thread.
        unsafe {
            core::arch::asm!(
                "mov {p}, qword ptr [rip + tramp_capture_tls@GOTTPOFF]",
                "add {p}, qword ptr fs:[0]",
                p = out(reg) p,
                options(nostack, pure, readonly),
            );
        }
        // SAFETY: the slot is this thread's, 32 bytes, 8-aligned, zero at
        // thread start, which is a valid `Tls`; only this thread uses it.
        f(unsafe { &*p })
    }
}

/// The time stamp counter: a few ns to read, against ~30 for
/// clock_gettime; chunk headers pair it with CLOCK_MONOTONIC.
#[inline(always)]
pub(crate) fn now_tsc() -> u64 {
    // SAFETY: rdtsc exists on every x86_64 CPU and has no preconditions.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

/// The time stamp counter read after everything before it has executed
/// (`rdtscp`, which waits for earlier instructions and for earlier loads to
/// be globally visible, on Intel and AMD alike; `lfence; rdtsc` does so on
/// AMD only where the kernel made `lfence` dispatch-serializing, and a
/// recording on an AMD EPYC guest still showed one realloc read after the
/// allocation its free made possible): the stamp of every heap event. A plain `rdtsc` may
/// execute before earlier loads complete: the stamp of a free could then
/// precede the program's lock that made the block its own, and so precede
/// the other thread's stamp of the allocation it took the block from
/// (seen: a free 10 ns before the allocation of its block, under load).
/// A stamp taken before a call is always earlier than the call's stores
/// becoming visible (they commit after the `rdtsc` retires); one taken
/// after a call is later than everything the call read.
///
/// `rdtscp` costs about twice `rdtsc` here (34-38 ns against 16 ns in a
/// loop of nothing else), and only threads need it: a process uses it from
/// its first `pthread_create` on ([`THREADED`]), a single-threaded one
/// keeps `rdtsc`.
#[inline(always)]
pub(crate) fn now_tsc_after() -> u64 {
    if !THREADED.load(Ordering::Relaxed) {
        return now_tsc();
    }
    // SAFETY: rdtscp exists on every x86_64 CPU tramp records on (the
    // `rdtscp` flag; every one since 2008) and writes only `aux`.
    #[allow(unused_unsafe)]
    unsafe {
        let mut aux = 0u32;
        core::arch::x86_64::__rdtscp(&mut aux)
    }
}

/// Set before the process's first `pthread_create` runs (and never
/// cleared): from then on, events of different threads must be ordered by
/// their stamps.
pub(crate) static THREADED: AtomicBool = AtomicBool::new(false);

/// A (ns, TSC) pair read as one moment: TSC, clock, TSC again, with the
/// TSC of the middle; read again when the two TSC readings are far apart
/// (the thread was preempted between them), so that a pair never maps a
/// chunk's events to the wrong time.
pub(crate) fn clock_pair() -> (u64, u64) {
    let mut best = (0u64, 0u64, u64::MAX);
    for _ in 0..4 {
        let a = now_tsc_after();
        let ns = now_ns();
        let b = now_tsc_after();
        let gap = b.wrapping_sub(a);
        if gap < best.2 {
            best = (ns, a + gap / 2, gap);
        }
        if gap < 1 << 14 {
            break;
        }
    }
    (best.0, best.1)
}

pub(crate) fn now_ns() -> u64 {
    let mut ts = sys::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass.
    unsafe { sys::clock_gettime(sys::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub(crate) fn errno() -> c_int {
    // SAFETY: glibc returns the calling thread's errno location.
    unsafe { *sys::__errno_location() }
}

pub(crate) fn push_bytes(dst: &mut [u8], at: &mut usize, src: &[u8]) {
    let n = src.len().min(dst.len().saturating_sub(*at));
    dst[*at..*at + n].copy_from_slice(&src[..n]);
    *at += n;
}

pub(crate) fn push_decimal(dst: &mut [u8], at: &mut usize, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    push_bytes(dst, at, &digits[i..]);
}

/// Opens this process's log: `DIR/trace.PID.NANOS.raw`, on a high fd so
/// that programs which close or reuse low descriptors leave it alone.
pub(crate) fn open_log() -> bool {
    // SAFETY: see PathCell: we are the only thread touching PATHS here.
    let p = unsafe { &mut *PATHS.0.get() };
    let mut at = 0;
    let (dir, dir_len) = (p.dir, p.dir_len);
    push_bytes(&mut p.log, &mut at, &dir[..dir_len]);
    push_bytes(&mut p.log, &mut at, b"/trace.");
    // SAFETY: getpid has no preconditions.
    push_decimal(&mut p.log, &mut at, unsafe { sys::getpid() } as u64);
    push_bytes(&mut p.log, &mut at, b".");
    push_decimal(&mut p.log, &mut at, now_ns());
    push_bytes(&mut p.log, &mut at, b".raw\0");
    reopen_log()
}

pub(crate) fn reopen_log() -> bool {
    // Detached: the log is closed for good.
    if STATE.load(Ordering::Acquire) == DISABLED {
        return false;
    }
    // SAFETY: the path is NUL-terminated by open_log; open/fcntl/close are
    // plain system calls.
    unsafe {
        let p = &*PATHS.0.get();
        let fd = sys::open(
            p.log.as_ptr() as *const c_char,
            sys::O_WRONLY | sys::O_CREAT | sys::O_APPEND | sys::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return false;
        }
        let high = sys::fcntl(fd, sys::F_DUPFD_CLOEXEC, 1000);
        let fd = if high >= 0 {
            sys::close(fd);
            high
        } else {
            fd
        };
        let (dev, ino, _) = identity(fd).unwrap_or((0, 0, 0));
        LOG_DEV.store(dev, Ordering::Relaxed);
        LOG_INO.store(ino, Ordering::Relaxed);
        FD.store(fd, Ordering::Release);
        true
    }
}

/// Device, inode and 512-byte blocks allocated behind a descriptor.
pub(crate) fn identity(fd: c_int) -> Option<(u64, u64, u64)> {
    let mut st = [0u64; 18];
    // SAFETY: fstat fills a `struct stat` (144 bytes on x86_64: st_dev,
    // st_ino first, st_blocks the ninth word); the buffer is that size.
    (unsafe { sys::fstat(fd, &mut st) } == 0).then_some((st[0], st[1], st[8]))
}

/// Makes sure FD still is our log, reopening it otherwise; returns the
/// bytes the log holds on disk (what `tramp record` has not read yet, as
/// it punches out what it read).
pub(crate) fn check_log() -> u64 {
    match identity(FD.load(Ordering::Acquire)) {
        Some((dev, ino, blocks))
            if (dev, ino)
                == (
                    LOG_DEV.load(Ordering::Relaxed),
                    LOG_INO.load(Ordering::Relaxed),
                ) =>
        {
            blocks * 512
        }
        _ => {
            reopen_log();
            0
        }
    }
}

/// Waits while the log holds more than the backlog allows, until the
/// converter has read half of it (or has not read anything for
/// [`STALL_GIVE_UP_NS`]). Returns how long it waited (ns).
pub(crate) fn wait_for_converter(on_disk: u64) -> u64 {
    let limit = BACKLOG.load(Ordering::Relaxed);
    if limit == 0 || on_disk <= limit {
        return 0;
    }
    let start = now_ns();
    let (mut low, mut since) = (on_disk, start);
    loop {
        let ts = sys::Timespec {
            tv_sec: 0,
            tv_nsec: STALL_POLL_NS,
        };
        // SAFETY: nanosleep reads the request; no remainder wanted.
        unsafe { sys::nanosleep(&ts, null_mut()) };
        let now = now_ns();
        let Some((_, _, blocks)) = identity(FD.load(Ordering::Acquire)) else {
            return now - start;
        };
        let bytes = blocks * 512;
        if bytes <= limit / 2 {
            return now - start;
        }
        if bytes < low {
            (low, since) = (bytes, now);
        } else if now - since > STALL_GIVE_UP_NS {
            // Nobody reads this log any more (tramp record has ended while
            // a child of the program runs on): stop waiting for good.
            BACKLOG.store(0, Ordering::Relaxed);
            return now - start;
        }
    }
}

/// The leading decimal digits of an environment variable (saturating), if
/// it is set.
pub(crate) fn env_number(name: &core::ffi::CStr) -> Option<u64> {
    // SAFETY: getenv returns NULL or a NUL-terminated string that lives as
    // long as the environment; we read it at once.
    let v = unsafe { sys::getenv(name.as_ptr()) };
    if v.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated string from the environment.
    let s = unsafe { core::slice::from_raw_parts(v as *const u8, sys::strlen(v)) };
    Some(
        s.iter()
            .take_while(|c| c.is_ascii_digit())
            .fold(0u64, |a, c| {
                a.saturating_mul(10).saturating_add((c - b'0') as u64)
            }),
    )
}

/// Keeps the log directory `dir` (NUL-terminated) and the program's path.
pub(crate) fn set_dir(dir: *const c_char) {
    // SAFETY: see PathCell; `dir` is NUL-terminated (strlen), and
    // readlink writes at most the length we give it.
    let p = unsafe { &mut *PATHS.0.get() };
    let n = unsafe { sys::strlen(dir) }.min(p.dir.len() - 1);
    // SAFETY: `dir` has at least `n` readable bytes.
    let src = unsafe { core::slice::from_raw_parts(dir as *const u8, n) };
    p.dir[..n].copy_from_slice(src);
    p.dir_len = n;
    let k = unsafe {
        sys::readlink(
            c"/proc/self/exe".as_ptr(),
            p.exe.as_mut_ptr() as *mut c_char,
            p.exe.len(),
        )
    };
    p.exe_len = k.max(0) as usize;
}

/// One-time setup: read the environment, open the log, install hooks.
/// Returns whether recording is on.
#[cold]
pub(crate) fn init() -> bool {
    init_from(false)
}

/// `init`; `at_load` when called by our constructor. Code that runs before
/// it (a program's pre-init array) may allocate before libc has set up the
/// environment: there a missing TRAMP_CAPTURE_DIR only means "not yet".
#[cold]
pub(crate) fn init_from(at_load: bool) -> bool {
    match STATE.compare_exchange(UNINIT, INITIALIZING, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {}
        Err(s) => return s == READY,
    }
    // SAFETY: getenv returns NULL or a NUL-terminated string that lives as
    // long as the environment; we copy it out at once.
    let dir = unsafe { sys::getenv(c"TRAMP_CAPTURE_DIR".as_ptr()) };
    if dir.is_null() {
        let next = if at_load { DISABLED } else { UNINIT };
        STATE.store(next, Ordering::Release);
        return false;
    }
    set_dir(dir);
    if let Some(n) = env_number(c"TRAMP_CAPTURE_STACK") {
        STACK_DEPTH.store((n as usize).min(MAX_FRAMES), Ordering::Relaxed);
    }
    if let Some(n) = env_number(c"TRAMP_CAPTURE_BACKLOG") {
        BACKLOG.store(n, Ordering::Relaxed);
    }
    if env_number(c"TRAMP_CAPTURE_UNWIND_CHECK").is_some_and(|n| n > 0) {
        UNWIND_CHECK.store(true, Ordering::Relaxed);
    }
    if env_number(c"TRAMP_CAPTURE_POINTERS").is_some_and(|n| n > 0) {
        POINTERS.store(true, Ordering::Relaxed);
    }
    if let Some(n) = env_number(c"TRAMP_CAPTURE_SAMPLE") {
        SAMPLE_MEAN.store(n, Ordering::Relaxed);
    }
    if let Some(n) = env_number(c"TRAMP_CAPTURE_SEED") {
        SAMPLE_SEED.store(n, Ordering::Relaxed);
    }
    start(false)
}

/// Opens the log and installs the hooks (the signal handlers only when the
/// program starts under the library: a process attached to keeps its own).
pub(crate) fn start(attached: bool) -> bool {
    if !open_log() {
        STATE.store(DISABLED, Ordering::Release);
        return false;
    }
    CAL_NS.store(now_ns(), Ordering::Relaxed);
    CAL_TSC.store(now_tsc(), Ordering::Relaxed);
    let mut key = 0u32;
    // SAFETY: registers our thread-exit hook, our fork hook and our signal
    // handlers; the functions are `extern "C"` with the expected signatures.
    unsafe {
        sys::pthread_key_create(&mut key, Some(thread_exit));
        sys::pthread_atfork(None, None, Some(fork_child));
        for sig in [6, 11, 7, 4, 8, 15, 2, 3, 1] {
            if attached {
                break;
            }
            let act = sys::SigAction {
                sa_handler: fatal_signal as *const () as usize,
                sa_mask: [0; 16],
                sa_flags: sys::SA_RESTART,
                sa_restorer: 0,
            };
            let mut old = sys::SigAction {
                sa_handler: 0,
                sa_mask: [0; 16],
                sa_flags: 0,
                sa_restorer: 0,
            };
            // Only take signals the program has not claimed (it may have run
            // constructors before ours).
            if sys::sigaction(sig, null(), &mut old) == 0 && old.sa_handler == sys::SIG_DFL {
                sys::sigaction(sig, &act, null_mut());
            }
        }
    }
    KEY.store(key, Ordering::Release);
    STATE.store(if attached { ARMED } else { READY }, Ordering::Release);
    if POINTERS.load(Ordering::Relaxed) {
        connect_pointer_hooks();
    }
    true
}

/// Recording is on (started under the library or attached).
pub(crate) fn recording() -> bool {
    STATE.load(Ordering::Acquire) == READY
}

/// Set when attached to a running process: the trace starts there.
pub(crate) static ATTACHED_AT: AtomicBool = AtomicBool::new(false);

/// Sets up recording in a process attached to (`attach::tramp_attach`),
/// configured by arguments instead of the environment, armed: nothing is
/// recorded until [`begin_attached`]. The library was loaded without
/// `TRAMP_CAPTURE_DIR`, so its constructor left it off.
pub(crate) fn start_attached(dir: *const c_char, stack: u64, sample: u64, backlog: u64) -> bool {
    let was = STATE.load(Ordering::Acquire);
    if (was != DISABLED && was != UNINIT)
        || STATE
            .compare_exchange(was, INITIALIZING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return false;
    }
    set_dir(dir);
    STACK_DEPTH.store((stack as usize).min(MAX_FRAMES), Ordering::Relaxed);
    SAMPLE_MEAN.store(sample, Ordering::Relaxed);
    BACKLOG.store(backlog, Ordering::Relaxed);
    ATTACHED_AT.store(true, Ordering::Relaxed);
    // Threads already running: order events as a threaded process's.
    THREADED.store(true, Ordering::Relaxed);
    start(true)
}

/// Puts the library at `own` and this recording's settings into the
/// environment, for the images an attached process execs
/// ([`inherit::export`]).
pub(crate) fn export_for_exec(own: *const c_char) {
    // SAFETY: see PathCell: read-only once the directory is set.
    let p = unsafe { &*PATHS.0.get() };
    inherit::export(
        own,
        &p.dir[..p.dir_len],
        [
            STACK_DEPTH.load(Ordering::Relaxed) as u64,
            SAMPLE_MEAN.load(Ordering::Relaxed),
            BACKLOG.load(Ordering::Relaxed),
        ],
    );
}

/// Turns recording on in an armed process (`attach::tramp_begin`).
pub(crate) fn begin_attached() -> bool {
    STATE
        .compare_exchange(ARMED, READY, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Stops taking events, first thing in a detach (before any GOT entry is
/// written back, so that no call made through a restored entry can fall
/// between two recorded events of its block).
pub(crate) fn pause_attached() {
    let _ = STATE.compare_exchange(READY, ARMED, Ordering::AcqRel, Ordering::Acquire);
}

/// Stops recording after a detach: every buffer written out, the log
/// closed. Threads still inside the library finish their calls; their
/// events are dropped (the buffers are closed).
pub(crate) fn stop_attached() {
    TLS.with(|t| t.busy.set(true));
    flush_everything(true);
    STATE.store(DISABLED, Ordering::Release);
    // SAFETY: our log's descriptor; nothing writes to it once disabled
    // (writers check the state first, and a late one finds it closed).
    unsafe { sys::close(FD.swap(-1, Ordering::AcqRel)) };
    TLS.with(|t| t.busy.set(false));
}

/// Modules were loaded (an attached process's dlopen): the map is written
/// again after the next event.
pub(crate) fn modules_changed() {
    CHECK_MODULES.store(true, Ordering::Relaxed);
}

/// Runs at load time so that the log exists even for programs that never
/// allocate, and so that signal hooks are in place early.
pub(crate) extern "C" fn on_load() {
    init_from(true);
}

pub(crate) extern "C" fn on_unload() {
    flush_everything(true);
}

#[used]
#[unsafe(link_section = ".init_array")]
pub(crate) static INIT_ARRAY: extern "C" fn() = on_load;

#[used]
#[unsafe(link_section = ".fini_array")]
pub(crate) static FINI_ARRAY: extern "C" fn() = on_unload;
