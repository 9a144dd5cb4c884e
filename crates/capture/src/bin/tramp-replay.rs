//! tramp-replay: drives the process's allocator (glibc's, or whatever is
//! preloaded: jemalloc, mimalloc, ...) through an operation stream made by
//! `tramp replay` from a trace, and reports time per operation and memory.
//!
//! Input on stdin, 13 bytes per operation, little-endian:
//! op (u8: 1 malloc, 2 free, 3 realloc), slot (u32), size (u64).
//! Objects live in numbered slots; the driver reuses slot numbers, so the
//! slot table is as large as the most objects ever live at once.
//! Output on stdout: one JSON object.
//!
//! This binary sits in the capture crate because calling the C allocator is
//! `unsafe`, and the project keeps all `unsafe` code in this crate.

use core::ffi::{c_int, c_void};
use std::io::{BufRead, BufReader, Read};
use std::time::Instant;

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
    fn realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn getrusage(who: c_int, usage: *mut [i64; 18]) -> c_int;
}

/// Peak resident set size so far, in KiB (`ru_maxrss`, the 5th field of
/// `struct rusage` after two `timeval`s).
fn peak_rss_kib() -> i64 {
    let mut u = [0i64; 18];
    // SAFETY: getrusage(RUSAGE_SELF) fills a struct rusage (144 bytes on
    // x86_64), which the buffer is.
    unsafe { getrusage(0, &mut u) };
    u[4]
}

/// The high-water mark of this process image's RSS, in KiB (`VmHWM` in
/// /proc/self/status). Unlike `ru_maxrss` it starts afresh at exec, so it
/// does not inherit the peak of the tramp process that forked the driver.
fn hwm_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        })
        .unwrap_or_else(peak_rss_kib)
}

#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: rdtsc exists on every x86_64 CPU and has no preconditions.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

/// Writes one byte per page so the memory is really used, as the program
/// that made the trace used it.
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

fn main() {
    let touch_pages = !std::env::args().any(|a| a == "--no-touch");
    let mut input = BufReader::with_capacity(1 << 20, std::io::stdin().lock());
    // The driver's own baseline, taken the way the peak is (VmHWM), once
    // its input buffer is in use: the footprint is what the allocator adds.
    let _ = input.fill_buf();
    let rss_before = hwm_kib();
    let mut slots: Vec<*mut c_void> = Vec::new();
    let mut counts = [0u64; 4];
    let mut cycles = [0u64; 4];
    let mut failed = 0u64;
    let mut op = [0u8; 13];
    let wall = Instant::now();
    let t_start = tsc();
    let mut peak_live_slots = 0usize;
    loop {
        match input.read_exact(&mut op) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => {
                eprintln!("tramp-replay: reading operations: {e}");
                std::process::exit(2);
            }
        }
        let kind = op[0] as usize;
        let slot = u32::from_le_bytes([op[1], op[2], op[3], op[4]]) as usize;
        let size = u64::from_le_bytes(op[5..13].try_into().expect("8 bytes")) as usize;
        if slot >= slots.len() {
            slots.resize(slot + 1, core::ptr::null_mut());
            peak_live_slots = peak_live_slots.max(slots.len());
        }
        let t0 = tsc();
        let p = match kind {
            // SAFETY: plain calls into the allocator; free and realloc get
            // only pointers it returned (or NULL), kept per slot.
            1 => unsafe { malloc(size) },
            2 => unsafe {
                free(slots[slot]);
                core::ptr::null_mut()
            },
            3 => unsafe { realloc(slots[slot], size) },
            _ => {
                eprintln!("tramp-replay: unknown operation {kind}");
                std::process::exit(2);
            }
        };
        let t1 = tsc();
        counts[kind] += 1;
        cycles[kind] += t1.wrapping_sub(t0);
        if kind != 2 && p.is_null() && size != 0 {
            failed += 1;
        }
        slots[slot] = p;
        if touch_pages && !p.is_null() {
            touch(p, size);
        }
    }
    let t_end = tsc();
    let secs = wall.elapsed().as_secs_f64();
    let ns_per_cycle = if t_end > t_start {
        secs * 1e9 / (t_end - t_start) as f64
    } else {
        0.0
    };
    let ns = |k: usize| {
        if counts[k] == 0 {
            0.0
        } else {
            cycles[k] as f64 * ns_per_cycle / counts[k] as f64
        }
    };
    // Time inside the allocator's calls, and the slot table's own memory
    // (the driver's, not the allocator's).
    let alloc_seconds = cycles.iter().sum::<u64>() as f64 * ns_per_cycle / 1e9;
    let slots_kib = (slots.capacity() * std::mem::size_of::<*mut c_void>()) as i64 / 1024;
    println!(
        "{{\"mallocs\":{},\"frees\":{},\"reallocs\":{},\"failed\":{},\"ns_per_malloc\":{:.1},\"ns_per_free\":{:.1},\"ns_per_realloc\":{:.1},\"seconds\":{:.6},\"alloc_seconds\":{:.6},\"rss_before_kib\":{},\"peak_rss_kib\":{},\"slots_kib\":{},\"slots\":{}}}",
        counts[1],
        counts[2],
        counts[3],
        failed,
        ns(1),
        ns(2),
        ns(3),
        secs,
        alloc_seconds,
        rss_before,
        hwm_kib(),
        slots_kib,
        peak_live_slots
    );
}
