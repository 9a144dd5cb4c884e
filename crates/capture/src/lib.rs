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

// ---------------------------------------------------------------------------
// Process state.

const UNINIT: u8 = 0;
const INITIALIZING: u8 = 1;
const READY: u8 = 2;
const DISABLED: u8 = 3;
/// Attached, recording nothing: the log is open and the GOT entries may
/// be ours, but no event is taken (between the patching and
/// `attach::tramp_begin`, and from the start of `attach::tramp_detach`):
/// the trace covers only the span in which every call is ours.
const ARMED: u8 = 4;

static STATE: AtomicU8 = AtomicU8::new(UNINIT);
static FD: AtomicI32 = AtomicI32::new(-1);
/// Device and inode of the log, to notice a program that closed our
/// descriptor and opened something else under the same number.
static LOG_DEV: AtomicU64 = AtomicU64::new(0);
static LOG_INO: AtomicU64 = AtomicU64::new(0);
static KEY: AtomicU32 = AtomicU32::new(0);
static STACK_DEPTH: AtomicUsize = AtomicUsize::new(0);
static REGISTRY: AtomicPtr<ThreadBuf> = AtomicPtr::new(null_mut());
static MODULE_ADDS: AtomicU64 = AtomicU64::new(u64::MAX);
static MODULE_SUBS: AtomicU64 = AtomicU64::new(0);
/// Compare every early stop of the unwinder with a full unwind
/// (TRAMP_CAPTURE_UNWIND_CHECK, for tests).
static UNWIND_CHECK: AtomicBool = AtomicBool::new(false);
/// Unread bytes the log may hold before a flushing thread waits for
/// `tramp record` to read them (0: never wait; TRAMP_CAPTURE_BACKLOG).
static BACKLOG: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// TSC at which the next RSS sample is due (u64::MAX while one is taken).
static RSS_DUE: AtomicU64 = AtomicU64::new(0);
/// The clock at init, to turn 10 ms into TSC ticks.
static CAL_NS: AtomicU64 = AtomicU64::new(0);
static CAL_TSC: AtomicU64 = AtomicU64::new(0);
/// Set when a thread wrote a chunk: the next event checks whether modules
/// were loaded since (not inside a flush, which may run in odd places).
static CHECK_MODULES: AtomicBool = AtomicBool::new(false);
/// Whether 8-byte loads and stores are recorded (TRAMP_CAPTURE_POINTERS,
/// set by `tramp record --pointers`).
static POINTERS: AtomicBool = AtomicBool::new(false);
/// `--sample`: the mean bytes between sample points (0: every allocation).
static SAMPLE_MEAN: AtomicU64 = AtomicU64::new(0);
/// `--sample-seed`: the samplers' seed (0: from the clock); each thread's
/// is drawn from it in the order the threads first allocate.
static SAMPLE_SEED: AtomicU64 = AtomicU64::new(0);
static SAMPLERS: AtomicU64 = AtomicU64::new(0);

/// Written during init (single thread) and in a fork child (single thread),
/// read afterwards: the log's directory, path and the executable's path.
struct Paths {
    dir: [u8; 2048],
    dir_len: usize,
    log: [u8; 2200],
    exe: [u8; 2048],
    exe_len: usize,
}

struct PathCell(core::cell::UnsafeCell<Paths>);
// SAFETY: written only while a single thread runs the library's init (the
// INITIALIZING state excludes others) or in a fork child before it records;
// read-only otherwise.
unsafe impl Sync for PathCell {}

static PATHS: PathCell = PathCell(core::cell::UnsafeCell::new(Paths {
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
struct Tls {
    buf: Cell<*mut ThreadBuf>,
    busy: Cell<bool>,
    /// Rounds of pthread key destructors this thread has run ours in.
    exit_rounds: Cell<u8>,
    /// The thread's sampler (`--sample`).
    countdown: Cell<sampled::Countdown>,
}

// 32 zero bytes of thread-local storage: zero is `Tls { buf: null, busy:
// false, exit_rounds: 0, countdown: not drawn }`, every thread's starting
// state.
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    "tramp_capture_tls:",
    ".zero 32",
    ".popsection",
);

/// The calling thread's [`Tls`], as `TLS.with(|t| …)`.
struct TlsKey;
static TLS: TlsKey = TlsKey;

impl TlsKey {
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Tls) -> R) -> R {
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
fn now_tsc() -> u64 {
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
fn now_tsc_after() -> u64 {
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
static THREADED: AtomicBool = AtomicBool::new(false);

/// A (ns, TSC) pair read as one moment: TSC, clock, TSC again, with the
/// TSC of the middle; read again when the two TSC readings are far apart
/// (the thread was preempted between them), so that a pair never maps a
/// chunk's events to the wrong time.
fn clock_pair() -> (u64, u64) {
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

fn now_ns() -> u64 {
    let mut ts = sys::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass.
    unsafe { sys::clock_gettime(sys::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn errno() -> c_int {
    // SAFETY: glibc returns the calling thread's errno location.
    unsafe { *sys::__errno_location() }
}

fn push_bytes(dst: &mut [u8], at: &mut usize, src: &[u8]) {
    let n = src.len().min(dst.len().saturating_sub(*at));
    dst[*at..*at + n].copy_from_slice(&src[..n]);
    *at += n;
}

fn push_decimal(dst: &mut [u8], at: &mut usize, mut v: u64) {
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
fn open_log() -> bool {
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

fn reopen_log() -> bool {
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
fn identity(fd: c_int) -> Option<(u64, u64, u64)> {
    let mut st = [0u64; 18];
    // SAFETY: fstat fills a `struct stat` (144 bytes on x86_64: st_dev,
    // st_ino first, st_blocks the ninth word); the buffer is that size.
    (unsafe { sys::fstat(fd, &mut st) } == 0).then_some((st[0], st[1], st[8]))
}

/// Makes sure FD still is our log, reopening it otherwise; returns the
/// bytes the log holds on disk (what `tramp record` has not read yet, as
/// it punches out what it read).
fn check_log() -> u64 {
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
fn wait_for_converter(on_disk: u64) -> u64 {
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
fn env_number(name: &core::ffi::CStr) -> Option<u64> {
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
fn set_dir(dir: *const c_char) {
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
fn init() -> bool {
    init_from(false)
}

/// `init`; `at_load` when called by our constructor. Code that runs before
/// it (a program's pre-init array) may allocate before libc has set up the
/// environment: there a missing TRAMP_CAPTURE_DIR only means "not yet".
#[cold]
fn init_from(at_load: bool) -> bool {
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
fn start(attached: bool) -> bool {
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
fn recording() -> bool {
    STATE.load(Ordering::Acquire) == READY
}

/// Set when attached to a running process: the trace starts there.
static ATTACHED_AT: AtomicBool = AtomicBool::new(false);

/// Sets up recording in a process attached to (`attach::tramp_attach`),
/// configured by arguments instead of the environment, armed: nothing is
/// recorded until [`begin_attached`]. The library was loaded without
/// `TRAMP_CAPTURE_DIR`, so its constructor left it off.
fn start_attached(dir: *const c_char, stack: u64, sample: u64, backlog: u64) -> bool {
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
fn export_for_exec(own: *const c_char) {
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
fn begin_attached() -> bool {
    STATE
        .compare_exchange(ARMED, READY, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Stops taking events, first thing in a detach (before any GOT entry is
/// written back, so that no call made through a restored entry can fall
/// between two recorded events of its block).
fn pause_attached() {
    let _ = STATE.compare_exchange(READY, ARMED, Ordering::AcqRel, Ordering::Acquire);
}

/// Stops recording after a detach: every buffer written out, the log
/// closed. Threads still inside the library finish their calls; their
/// events are dropped (the buffers are closed).
fn stop_attached() {
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
fn modules_changed() {
    CHECK_MODULES.store(true, Ordering::Relaxed);
}

/// Runs at load time so that the log exists even for programs that never
/// allocate, and so that signal hooks are in place early.
extern "C" fn on_load() {
    init_from(true);
}

extern "C" fn on_unload() {
    flush_everything(true);
}

#[used]
#[unsafe(link_section = ".init_array")]
static INIT_ARRAY: extern "C" fn() = on_load;

#[used]
#[unsafe(link_section = ".fini_array")]
static FINI_ARRAY: extern "C" fn() = on_unload;

// ---------------------------------------------------------------------------
// Thread buffers.

fn new_buffer() -> *mut ThreadBuf {
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
fn this_buffer() -> *mut ThreadBuf {
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
struct Writer<'a> {
    t: &'a mut ThreadBuf,
    at: usize,
}

impl<'a> Writer<'a> {
    fn new(t: &'a mut ThreadBuf) -> Self {
        if t.len.load(Ordering::Relaxed) + MAX_EVENT > DATA_BYTES {
            flush(t, false);
        }
        let at = t.len.load(Ordering::Relaxed);
        Writer { t, at }
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        self.t.data[self.at] = b;
        self.at += 1;
    }

    #[inline]
    fn varint(&mut self, mut v: u64) {
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
    fn diff(&mut self, v: u64, from: u64) {
        let d = v.wrapping_sub(from) as i64;
        self.varint(((d << 1) ^ (d >> 63)) as u64);
    }

    /// An address as the zigzag difference from the chunk's last one.
    #[inline]
    fn addr(&mut self, a: u64) {
        self.diff(a, self.t.prev_addr);
        self.t.prev_addr = a;
    }

    /// A site as the zigzag difference from the chunk's last one.
    #[inline]
    fn site(&mut self, s: u64) {
        self.diff(s, self.t.prev_site);
        self.t.prev_site = s;
    }

    #[inline]
    fn time(&mut self, now: u64) {
        let dt = now.saturating_sub(self.t.last_tsc);
        self.t.last_tsc = now.max(self.t.last_tsc);
        self.varint(dt);
    }

    #[inline]
    fn commit(self) {
        self.t.len.store(self.at, Ordering::Release);
    }
}

/// Writes a buffer's events as one chunk. `foreign`: called by another
/// thread (exit, signal), which closes the buffer to its owner.
fn flush(t: &mut ThreadBuf, foreign: bool) {
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
fn write_chunk(hdr: &[u8], payload: &[u8]) -> u64 {
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
fn flush_everything(modules: bool) {
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
fn record_modules(t: &mut ThreadBuf) {
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

unsafe extern "C" fn thread_exit(value: *mut c_void) {
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
unsafe extern "C" fn fork_child() {
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

fn write_process_header(t: &mut ThreadBuf) {
    let mut w = Writer::new(t);
    w.byte(EV_PROCESS);
    // SAFETY: getpid/getppid have no preconditions.
    w.varint(unsafe { sys::getpid() } as u64);
    w.varint(unsafe { sys::getppid() } as u64);
    w.varint(STACK_DEPTH.load(Ordering::Relaxed) as u64);
    w.varint(SAMPLE_MEAN.load(Ordering::Relaxed));
    w.varint(u64::from(ATTACHED_AT.load(Ordering::Relaxed)));
    w.commit();
}

extern "C" fn fatal_signal(sig: c_int) {
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

// ---------------------------------------------------------------------------
// Recording.

static PROCESS_HEADER_DONE: AtomicBool = AtomicBool::new(false);

/// Runs `f` on this thread's buffer unless recording is off or we are
/// already inside the library on this thread.
#[inline(always)]
fn with_buffer(f: impl FnOnce(&mut ThreadBuf)) {
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
struct Caller {
    sp: usize,
    bp: usize,
}

impl Caller {
    #[inline(always)]
    fn ret(self) -> usize {
        // SAFETY: the call that entered the trampoline pushed the return
        // address at `sp`; that stack slot is live while the handler runs.
        unsafe { *(self.sp as *const usize) }
    }
}

/// The site of an allocation: the caller's return address. With stacks
/// on, the thread's call stack is taken first, and what changed since its
/// previous one is written (`EV_FRAMES`) before the event that uses it.
#[inline(always)]
fn site(w: &mut Writer<'_>, caller: Caller) -> u64 {
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
fn record_lsan_suppressions(t: &mut ThreadBuf) {
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
fn program_symbol(name: &[u8]) -> usize {
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
fn find_symbol(elf: &[u8], name: &[u8]) -> Option<(u64, bool)> {
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
fn write_unwind_stats(t: &mut ThreadBuf) {
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
fn flush_if_stale(t: &mut ThreadBuf, now: u64) {
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
fn sample_rss(t: &mut ThreadBuf, now: u64) {
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
fn resident_bytes() -> Option<u64> {
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
fn record_alloc(size: usize, p: *mut c_void, caller: Caller) {
    record_alloc_as(EV_ALLOC, size, p, caller)
}

/// An allocation event of `kind` (`EV_ALLOC`, or `EV_BLOCK_ALLOC` for a
/// reported block).
#[inline(always)]
fn record_alloc_as(kind: u8, size: usize, p: *mut c_void, caller: Caller) {
    if p.is_null() || !sample(size, p) {
        return;
    }
    record_sampled_alloc(kind, size, p, caller, 0);
}

/// Writes an allocation event that is to be recorded, stamped `now` (0:
/// read after the unwinding).
#[inline(always)]
fn record_sampled_alloc(kind: u8, size: usize, p: *mut c_void, caller: Caller, now: u64) {
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
fn make_room() {
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
fn sample(size: usize, p: *mut c_void) -> bool {
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
fn sampled_end(p: *mut c_void) -> bool {
    SAMPLE_MEAN.load(Ordering::Relaxed) == 0 || sampled::remove(p as usize)
}

#[inline(always)]
fn record_free(p: *mut c_void, caller: Caller) {
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
fn record_free_at(p: *mut c_void, caller: Caller, at: Option<u64>) {
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
fn record_realloc_as(
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
fn record_block_free(p: *mut c_void, caller: Caller) {
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

// ---------------------------------------------------------------------------
// Pointer capture: 8-byte loads and stores of instrumented programs.
//
// `tramp cc` compiles a program with the compiler's per-access hooks (gcc:
// `__tsan_read8`/`__tsan_write8` of ThreadSanitizer's instrumentation,
// without its runtime; clang: `__sanitizer_cov_load8`/`__sanitizer_cov_store8`
// of `-fsanitize-coverage=edge,trace-loads,trace-stores`) and links a small stub
// that defines them: each forwards the address and its own return address
// (the instrumented instruction) through the function pointers of the
// program's `tramp_pointer_hooks`, which are null until this library fills
// them in. An instrumented program therefore runs alone too.

/// The stub's table, as `tramp cc` defines it (docs/formats/capture.md).
#[repr(C)]
struct PointerHooks {
    /// `TRAMP_HOOKS_MAGIC`: the layout this library knows.
    magic: u64,
    load8: Option<extern "C" fn(usize, usize)>,
    store8: Option<extern "C" fn(usize, usize)>,
}

const TRAMP_HOOKS_MAGIC: u64 = 0x3170_6d61_7274_5054; // "TPtramp1"

/// Finds the program's hook table and points it at our recorders.
fn connect_pointer_hooks() {
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
unsafe fn peek(addr: u64) -> u64 {
    // SAFETY: see above; a byte array has no alignment to respect.
    u64::from_ne_bytes(unsafe { core::ptr::read_volatile(addr as *const [u8; 8]) })
}

/// Appends a load or store event.
#[inline(always)]
fn write_access(t: &mut ThreadBuf, kind: u8, addr: u64, value: u64, site: u64, tsc: u64) {
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
fn write_pending_store(t: &mut ThreadBuf) {
    let (addr, site, tsc) = (t.pending_addr, t.pending_site, t.pending_tsc);
    t.pending_site = 0;
    // SAFETY: see `peek`: the store is done and nothing unmapped its bytes
    // since (every free and munmap comes through here first).
    let value = unsafe { peek(addr) };
    write_access(t, EV_STORE, addr, value, site, tsc);
}

extern "C" fn pointer_load8(addr: usize, ip: usize) {
    with_buffer(|t| {
        let now = now_tsc();
        // SAFETY: the program loads these bytes right after this hook.
        let value = unsafe { peek(addr as u64) };
        write_access(t, EV_LOAD, addr as u64, value, ip as u64, now);
        flush_if_stale(t, now);
    });
}

extern "C" fn pointer_store8(addr: usize, ip: usize) {
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

// ---------------------------------------------------------------------------
// Entry points. Each is a naked trampoline that passes its stack pointer
// on entry (where the caller's return address is) and the caller's frame
// pointer as two extra arguments to the real handler.

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

extern "C" fn malloc_impl(size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's malloc.
    let p = unsafe { sys::__libc_malloc(size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

extern "C" fn free_impl(p: *mut c_void, sp: usize, bp: usize) {
    record_free(p, Caller { sp, bp });
    // SAFETY: `p` is the caller's block (or NULL), from glibc's allocator.
    unsafe { sys::__libc_free(p) }
}

extern "C" fn calloc_impl(n: usize, size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's calloc (checks n * size for overflow).
    let p = unsafe { sys::__libc_calloc(n, size) };
    record_alloc(n.wrapping_mul(size), p, Caller { sp, bp });
    p
}

extern "C" fn realloc_impl(old: *mut c_void, size: usize, sp: usize, bp: usize) -> *mut c_void {
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
fn resized(
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

extern "C" fn reallocarray_impl(
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

extern "C" fn posix_memalign_impl(
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

extern "C" fn aligned_alloc_impl(align: usize, size: usize, sp: usize, bp: usize) -> *mut c_void {
    memalign_impl(align, size, sp, bp)
}

extern "C" fn memalign_impl(align: usize, size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's memalign validates the alignment itself.
    let p = unsafe { sys::__libc_memalign(align, size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

extern "C" fn valloc_impl(size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's valloc.
    let p = unsafe { sys::__libc_valloc(size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

extern "C" fn pvalloc_impl(size: usize, sp: usize, bp: usize) -> *mut c_void {
    // SAFETY: glibc's pvalloc.
    let p = unsafe { sys::__libc_pvalloc(size) };
    record_alloc(size, p, Caller { sp, bp });
    p
}

// ---------------------------------------------------------------------------
// Blocks a program reports from its own allocator: a pool that carves
// objects out of malloc'd chunks calls these (through `tramp.h`'s
// TRAMP_ALLOC, TRAMP_REALLOC and TRAMP_FREE, or heaptrack's API:
// `heaptrack_report_alloc` and friends call `heaptrack_malloc`,
// `heaptrack_realloc` and `heaptrack_free` when the preloaded library
// defines them). Each is a trampoline like the malloc family's, so the
// block's stack is the program's call of the macro.

trampoline!(tramp_alloc, block_alloc_impl, "rdx", "rcx", (p: *mut c_void, size: usize) -> ());
trampoline!(tramp_free, block_free_impl, "rsi", "rdx", (p: *mut c_void) -> ());
trampoline!(tramp_realloc, block_realloc_impl, "rcx", "r8", (old: *mut c_void, size: usize, new: *mut c_void) -> ());
trampoline!(heaptrack_malloc, block_alloc_impl, "rdx", "rcx", (p: *mut c_void, size: usize) -> ());
trampoline!(heaptrack_free, block_free_impl, "rsi", "rdx", (p: *mut c_void) -> ());
trampoline!(heaptrack_realloc, block_realloc_impl, "rcx", "r8", (old: *mut c_void, size: usize, new: *mut c_void) -> ());

extern "C" fn block_alloc_impl(p: *mut c_void, size: usize, sp: usize, bp: usize) {
    record_alloc_as(EV_BLOCK_ALLOC, size, p, Caller { sp, bp });
}

extern "C" fn block_free_impl(p: *mut c_void, sp: usize, bp: usize) {
    record_block_free(p, Caller { sp, bp });
}

extern "C" fn block_realloc_impl(
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

// ---------------------------------------------------------------------------
// Every way out: _exit and _Exit skip atexit and destructors, and exec
// replaces the image; flush first.

#[unsafe(no_mangle)]
pub extern "C" fn _exit(status: c_int) -> ! {
    TLS.with(|t| t.busy.set(true));
    flush_everything(true);
    loop {
        // SAFETY: exit_group ends the process; it does not return.
        unsafe { sys::syscall(sys::SYS_EXIT_GROUP, status as core::ffi::c_long) };
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn _Exit(status: c_int) -> ! {
    _exit(status)
}

macro_rules! exec_hook {
    ($name:ident, $cname:literal, ($($arg:ident: $ty:ty),*)) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            TLS.with(|t| t.busy.set(true));
            flush_everything(true);
            // SAFETY: the next definition of this libc function has this
            // exact signature.
            let r = unsafe {
                let f = sys::dlsym(sys::RTLD_NEXT, $cname.as_ptr());
                if f.is_null() {
                    -1
                } else {
                    let f: unsafe extern "C" fn($($ty),*) -> c_int = core::mem::transmute(f);
                    f($($arg),*)
                }
            };
            // exec failed: carry on recording.
            TLS.with(|t| t.busy.set(false));
            r
        }
    };
}

exec_hook!(execve, c"execve", (path: *const c_char, argv: *const *const c_char, envp: *const *const c_char));
exec_hook!(execv, c"execv", (path: *const c_char, argv: *const *const c_char));
exec_hook!(execvp, c"execvp", (file: *const c_char, argv: *const *const c_char));
exec_hook!(execvpe, c"execvpe", (file: *const c_char, argv: *const *const c_char, envp: *const *const c_char));

/// glibc's pthread_create, found once.
static PTHREAD_CREATE: AtomicUsize = AtomicUsize::new(0);

type PthreadCreate = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    extern "C" fn(*mut c_void) -> *mut c_void,
    *mut c_void,
) -> c_int;

/// Writes the creating thread's buffer before the new thread starts: a
/// thread that creates others and then blocks (in pthread_join, say) would
/// otherwise hold its earlier events until it runs again, and `tramp
/// record` could not place the new threads' events after them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_create(
    thread: *mut c_void,
    attr: *const c_void,
    start: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    let mut f = PTHREAD_CREATE.load(Ordering::Acquire);
    if f == 0 {
        TLS.with(|t| {
            let was = t.busy.replace(true);
            // SAFETY: dlsym with a NUL-terminated name; it may allocate,
            // which `busy` keeps out of the log.
            f = unsafe { sys::dlsym(sys::RTLD_NEXT, c"pthread_create".as_ptr()) } as usize;
            t.busy.set(was);
        });
        if f == 0 {
            return 38; // ENOSYS
        }
        PTHREAD_CREATE.store(f, Ordering::Release);
    }
    // Before the new thread exists: every stamp from here on is ordered.
    THREADED.store(true, Ordering::SeqCst);
    if STATE.load(Ordering::Acquire) == READY {
        // The spawn goes out with the flush, before the new thread can
        // write anything.
        with_buffer(|t| {
            let mut w = Writer::new(t);
            w.byte(EV_SPAWN);
            w.time(now_tsc());
            w.commit();
            t.spawned = true;
        });
        flush_own();
    }
    // SAFETY: `f` is the next pthread_create, which has this signature.
    let r = unsafe {
        let real: PthreadCreate = core::mem::transmute(f);
        real(thread, attr, start, arg)
    };
    // And again after it: pthread_create allocates the new thread's TLS,
    // and a creator that then blocks in pthread_join would hold that
    // event while the new threads' later ones are written.
    if STATE.load(Ordering::Acquire) == READY {
        flush_own();
    }
    r
}

/// Writes the calling thread's buffer (unless it is inside the library).
fn flush_own() {
    TLS.with(|t| {
        let b = t.buf.get();
        if !b.is_null() && !t.busy.get() {
            t.busy.set(true);
            // SAFETY: this thread's own buffer.
            flush(unsafe { &mut *b }, false);
            t.busy.set(false);
        }
    });
}

/// Flushes before a variadic exec (execl, execlp, execle) and returns the
/// next definition of the function named `name`, or a stand-in that fails.
extern "C" fn exec_prepare(name: *const c_char) -> usize {
    TLS.with(|t| t.busy.set(true));
    flush_everything(true);
    TLS.with(|t| t.busy.set(false));
    // SAFETY: `name` is one of our NUL-terminated statics.
    let f = unsafe { sys::dlsym(sys::RTLD_NEXT, name) };
    if f.is_null() {
        exec_unavailable as *const () as usize
    } else {
        f as usize
    }
}

extern "C" fn exec_unavailable() -> c_int {
    -1
}

static EXECL: &core::ffi::CStr = c"execl";
static EXECLP: &core::ffi::CStr = c"execlp";
static EXECLE: &core::ffi::CStr = c"execle";

/// Variadic execs cannot be written in stable Rust, so these trampolines
/// keep every argument register (and `al`, the vector-register count of a
/// variadic call) and the caller's stack untouched, flush, and jump to the
/// real function.
macro_rules! exec_variadic {
    ($name:ident, $cname:ident) => {
        #[unsafe(no_mangle)]
        #[unsafe(naked)]
        pub unsafe extern "C" fn $name(path: *const c_char, arg: *const c_char) -> c_int {
            core::arch::naked_asm!(
                "push rdi",
                "push rsi",
                "push rdx",
                "push rcx",
                "push r8",
                "push r9",
                "push rax",
                "mov rdi, [rip + {name}]",
                "call {prep}",
                "mov r11, rax",
                "pop rax",
                "pop r9",
                "pop r8",
                "pop rcx",
                "pop rdx",
                "pop rsi",
                "pop rdi",
                "jmp r11",
                name = sym $cname,
                prep = sym exec_prepare,
            )
        }
    };
}

exec_variadic!(execl, EXECL);
exec_variadic!(execlp, EXECLP);
exec_variadic!(execle, EXECLE);
