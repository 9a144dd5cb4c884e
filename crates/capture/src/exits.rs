//! Every way out: _exit and _Exit skip atexit and destructors, and exec
//! replaces the image; flush first.

#![allow(unused_imports)]

use super::*;

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
pub(crate) static PTHREAD_CREATE: AtomicUsize = AtomicUsize::new(0);

pub(crate) type PthreadCreate = unsafe extern "C" fn(
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
pub(crate) fn flush_own() {
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
pub(crate) extern "C" fn exec_prepare(name: *const c_char) -> usize {
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

pub(crate) extern "C" fn exec_unavailable() -> c_int {
    -1
}

pub(crate) static EXECL: &core::ffi::CStr = c"execl";
pub(crate) static EXECLP: &core::ffi::CStr = c"execlp";
pub(crate) static EXECLE: &core::ffi::CStr = c"execle";

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
