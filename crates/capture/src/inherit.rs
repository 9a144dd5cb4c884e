//! What an attached process passes on to the images it execs: while
//! attached, its environment holds `LD_PRELOAD` with this library first
//! and the `TRAMP_CAPTURE_*` settings of the recording, as a process
//! started under `tramp record` has them, so that an exec (the program's
//! own, or one inside libc: `system`, `posix_spawn`, `popen`) starts an
//! image that records itself from its first allocation into the same log
//! directory. The detach gives the environment back as it was.
//!
//! Set through libc's `setenv` and `unsetenv`, which take the
//! environment's lock: called by gdb while the program's threads are
//! stopped, as the `dlopen` that loaded this library was.

use core::ffi::{CStr, c_char};
use core::sync::atomic::{AtomicBool, Ordering};

use crate::sys;

/// The longest `LD_PRELOAD` value kept to restore (longer: left alone,
/// and execs not followed).
const KEEP: usize = 4096;

struct Saved {
    /// The program's own `LD_PRELOAD`, NUL-terminated (when `had`).
    value: [u8; KEEP],
    had: bool,
}

struct SavedCell(core::cell::UnsafeCell<Saved>);
// SAFETY: written by `export` and read by `restore`, which run one at a
// time (attach, then detach: `EXPORTED` orders them), never concurrently.
unsafe impl Sync for SavedCell {}

static SAVED: SavedCell = SavedCell(core::cell::UnsafeCell::new(Saved {
    value: [0; KEEP],
    had: false,
}));
/// The environment holds our settings.
static EXPORTED: AtomicBool = AtomicBool::new(false);

/// The settings an exec'd image reads (`init_from` in lib.rs).
const NAMES: [&CStr; 4] = [
    c"TRAMP_CAPTURE_DIR",
    c"TRAMP_CAPTURE_STACK",
    c"TRAMP_CAPTURE_SAMPLE",
    c"TRAMP_CAPTURE_BACKLOG",
];

/// Puts this library (at path `own`) and the recording's settings into
/// the environment: the log directory `dir` and the three numbers, each
/// NUL-terminated text.
pub fn export(own: *const c_char, dir: &[u8], numbers: [u64; 3]) {
    // SAFETY: see SavedCell; `own` is the NUL-terminated path gdb loaded.
    unsafe {
        let saved = &mut *SAVED.0.get();
        let old = sys::getenv(c"LD_PRELOAD".as_ptr());
        let mut preload = [0u8; KEEP + 2200];
        let mut at = 0;
        push(&mut preload, &mut at, CStr::from_ptr(own).to_bytes());
        saved.had = !old.is_null();
        if saved.had {
            let old = CStr::from_ptr(old).to_bytes();
            if old.len() >= KEEP {
                saved.had = false;
                return;
            }
            saved.value[..old.len()].copy_from_slice(old);
            saved.value[old.len()] = 0;
            push(&mut preload, &mut at, b":");
            push(&mut preload, &mut at, old);
        }
        preload[at.min(preload.len() - 1)] = 0;
        let mut d = [0u8; 2100];
        let mut n = 0;
        push(&mut d, &mut n, dir);
        d[n.min(d.len() - 1)] = 0;
        sys::setenv(NAMES[0].as_ptr(), d.as_ptr() as *const c_char, 1);
        for (name, v) in NAMES[1..].iter().zip(numbers) {
            let mut digits = [0u8; 24];
            let mut k = 0;
            crate::push_decimal(&mut digits, &mut k, v);
            digits[k] = 0;
            sys::setenv(name.as_ptr(), digits.as_ptr() as *const c_char, 1);
        }
        sys::setenv(c"LD_PRELOAD".as_ptr(), preload.as_ptr() as *const c_char, 1);
    }
    EXPORTED.store(true, Ordering::Release);
}

/// Gives the environment back as [`export`] found it.
pub fn restore() {
    if !EXPORTED.swap(false, Ordering::AcqRel) {
        return;
    }
    // SAFETY: see SavedCell; the saved value is NUL-terminated.
    unsafe {
        let saved = &*SAVED.0.get();
        if saved.had {
            sys::setenv(
                c"LD_PRELOAD".as_ptr(),
                saved.value.as_ptr() as *const c_char,
                1,
            );
        } else {
            sys::unsetenv(c"LD_PRELOAD".as_ptr());
        }
        for name in NAMES {
            sys::unsetenv(name.as_ptr());
        }
    }
}

/// `crate::push_bytes` leaving the last byte of `dst` for a NUL.
fn push(dst: &mut [u8], at: &mut usize, src: &[u8]) {
    let room = dst.len() - 1;
    crate::push_bytes(&mut dst[..room], at, src);
}
