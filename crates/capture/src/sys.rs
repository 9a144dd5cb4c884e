//! The C library functions the capture library calls. Declared by hand:
//! the library has no dependencies, so that `tramp`'s build can compile it
//! with plain rustc and embed it.

use core::ffi::{c_char, c_int, c_long, c_void};

pub const O_RDONLY: c_int = 0;
pub const O_WRONLY: c_int = 0o1;
pub const O_CREAT: c_int = 0o100;
pub const O_APPEND: c_int = 0o2000;
pub const O_CLOEXEC: c_int = 0o2000000;
pub const F_DUPFD_CLOEXEC: c_int = 1030;
pub const EBADF: c_int = 9;
pub const EINTR: c_int = 4;
pub const PROT_READ: c_int = 1;
pub const PROT_WRITE: c_int = 2;
pub const MAP_PRIVATE: c_int = 2;
pub const MAP_ANONYMOUS: c_int = 0x20;
pub const MAP_NORESERVE: c_int = 0x4000;
pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
pub const CLOCK_MONOTONIC: c_int = 1;
pub const SYS_EXIT_GROUP: c_long = 231;
pub const SYS_MUNMAP: c_long = 11;
pub const SIG_DFL: usize = 0;
pub const SA_RESTART: c_int = 0x1000_0000;

#[repr(C)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

#[repr(C)]
pub struct Iovec {
    pub iov_base: *const c_void,
    pub iov_len: usize,
}

/// `struct sigaction` as glibc lays it out on x86_64 Linux.
#[repr(C)]
pub struct SigAction {
    pub sa_handler: usize,
    pub sa_mask: [u64; 16],
    pub sa_flags: c_int,
    pub sa_restorer: usize,
}

/// `struct dl_phdr_info`, the fields we read.
#[repr(C)]
pub struct DlPhdrInfo {
    pub dlpi_addr: usize,
    pub dlpi_name: *const c_char,
    pub dlpi_phdr: *const c_void,
    pub dlpi_phnum: u16,
    pub dlpi_adds: u64,
    pub dlpi_subs: u64,
}

/// `struct dl_find_object` (glibc 2.35 and later).
#[repr(C)]
pub struct DlFindObject {
    pub dlfo_flags: u64,
    pub dlfo_map_start: *mut c_void,
    pub dlfo_map_end: *mut c_void,
    pub dlfo_link_map: *mut c_void,
    pub dlfo_eh_frame: *mut c_void,
    pub reserved: [u64; 7],
}

impl Default for DlFindObject {
    fn default() -> Self {
        DlFindObject {
            dlfo_flags: 0,
            dlfo_map_start: core::ptr::null_mut(),
            dlfo_map_end: core::ptr::null_mut(),
            dlfo_link_map: core::ptr::null_mut(),
            dlfo_eh_frame: core::ptr::null_mut(),
            reserved: [0; 7],
        }
    }
}

unsafe extern "C" {
    pub fn _dl_find_object(pc: *mut c_void, result: *mut DlFindObject) -> c_int;
    pub fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    pub fn __libc_malloc(size: usize) -> *mut c_void;
    pub fn __libc_free(p: *mut c_void);
    pub fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    pub fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    pub fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    pub fn __libc_valloc(size: usize) -> *mut c_void;
    pub fn __libc_pvalloc(size: usize) -> *mut c_void;

    pub fn getenv(name: *const c_char) -> *const c_char;
    pub fn setenv(name: *const c_char, value: *const c_char, overwrite: c_int) -> c_int;
    pub fn unsetenv(name: *const c_char) -> c_int;
    pub fn open(path: *const c_char, flags: c_int, mode: c_int) -> c_int;
    pub fn close(fd: c_int) -> c_int;
    pub fn fstat(fd: c_int, buf: *mut [u64; 18]) -> c_int;
    pub fn fcntl(fd: c_int, cmd: c_int, arg: c_int) -> c_int;
    pub fn writev(fd: c_int, iov: *const Iovec, n: c_int) -> isize;
    pub fn readlink(path: *const c_char, buf: *mut c_char, len: usize) -> isize;
    pub fn __errno_location() -> *mut c_int;
    pub fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: i64,
    ) -> *mut c_void;
    pub fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    pub fn nanosleep(req: *const Timespec, rem: *mut Timespec) -> c_int;
    pub fn getpid() -> c_int;
    pub fn getppid() -> c_int;
    pub fn gettid() -> c_int;
    pub fn syscall(n: c_long, ...) -> c_long;
    pub fn pthread_key_create(
        key: *mut u32,
        dtor: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> c_int;
    pub fn pthread_setspecific(key: u32, value: *const c_void) -> c_int;
    pub fn pthread_atfork(
        prepare: Option<unsafe extern "C" fn()>,
        parent: Option<unsafe extern "C" fn()>,
        child: Option<unsafe extern "C" fn()>,
    ) -> c_int;
    pub fn sigaction(sig: c_int, act: *const SigAction, old: *mut SigAction) -> c_int;
    pub fn raise(sig: c_int) -> c_int;
    pub fn dl_iterate_phdr(
        cb: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
        data: *mut c_void,
    ) -> c_int;
    pub fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    pub fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    pub fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    pub fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int;
    pub fn strlen(s: *const c_char) -> usize;
}

pub const RTLD_NOW: c_int = 2;
pub const RTLD_NOLOAD: c_int = 4;

/// `Dl_info`, as dladdr fills it.
#[repr(C)]
pub struct DlInfo {
    pub dli_fname: *const c_char,
    pub dli_fbase: *mut c_void,
    pub dli_sname: *const c_char,
    pub dli_saddr: *mut c_void,
}

impl Default for DlInfo {
    fn default() -> Self {
        DlInfo {
            dli_fname: core::ptr::null(),
            dli_fbase: core::ptr::null_mut(),
            dli_sname: core::ptr::null(),
            dli_saddr: core::ptr::null_mut(),
        }
    }
}

/// `RTLD_NEXT` for dlsym.
pub const RTLD_NEXT: *mut c_void = !0usize as *mut c_void;
