//! The allocator the driver calls: the process's `malloc`, `free` and
//! `realloc` (glibc's, or whatever library is preloaded), and, for trace
//! heaps other than heap 0, the allocator's own heaps where it has them,
//! found with `dlsym`: jemalloc's arenas (`mallocx` with `MALLOCX_ARENA`,
//! no thread cache, so that an arena can be destroyed once its objects are
//! freed) and mimalloc's heaps (`mi_heap_new`; a mimalloc heap allocates
//! only on the thread that made it, so each replay thread has its own
//! `mi_heap` per trace heap). Also where `malloc` resolved to and the
//! allocator's version, for the report.

use core::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
    fn realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    fn gnu_get_libc_version() -> *const c_char;
}

#[repr(C)]
struct DlInfo {
    dli_fname: *const c_char,
    dli_fbase: *mut c_void,
    dli_sname: *const c_char,
    dli_saddr: *mut c_void,
}

type Mallocx = unsafe extern "C" fn(usize, c_int) -> *mut c_void;
type Rallocx = unsafe extern "C" fn(*mut c_void, usize, c_int) -> *mut c_void;
type Dallocx = unsafe extern "C" fn(*mut c_void, c_int);
type Mallctl =
    unsafe extern "C" fn(*const c_char, *mut c_void, *mut usize, *mut c_void, usize) -> c_int;
type MiHeapNew = unsafe extern "C" fn() -> *mut c_void;
type MiHeapMalloc = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
type MiHeapRealloc = unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> *mut c_void;
type MiHeapDelete = unsafe extern "C" fn(*mut c_void);
type MiFree = unsafe extern "C" fn(*mut c_void);
type MiVersion = unsafe extern "C" fn() -> c_int;

const MALLOCX_TCACHE_NONE: c_int = 1 << 8;
fn mallocx_arena(a: u32) -> c_int {
    ((a as c_int) + 1) << 20
}

/// How trace heaps other than 0 are replayed.
pub enum Heaps {
    /// On the default heap: the allocator has none of its own.
    Default,
    Jemalloc {
        mallocx: Mallocx,
        rallocx: Rallocx,
        dallocx: Dallocx,
        mallctl: Mallctl,
        /// Per plan heap: its arena index + 1 (0: not made yet).
        arenas: Vec<AtomicU32>,
        making: Mutex<()>,
    },
    Mimalloc {
        new: MiHeapNew,
        malloc: MiHeapMalloc,
        realloc: MiHeapRealloc,
        delete: MiHeapDelete,
        free: MiFree,
    },
}

/// A symbol of the process (any loaded object), or null.
fn symbol(name: &str) -> *mut c_void {
    let mut n = name.as_bytes().to_vec();
    n.push(0);
    // SAFETY: RTLD_DEFAULT (null) searches every loaded object; the name
    // is NUL-terminated and outlives the call.
    unsafe { dlsym(core::ptr::null_mut(), n.as_ptr() as *const c_char) }
}

/// A C string as Rust's, lossily.
fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: p is a NUL-terminated string owned by the C library or the
    // allocator, alive for the process (file names of loaded objects,
    // version strings).
    unsafe { core::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// The file of the loaded object that `malloc` resolves to.
pub fn malloc_from() -> String {
    let f = symbol("malloc");
    let mut info = DlInfo {
        dli_fname: core::ptr::null(),
        dli_fbase: core::ptr::null_mut(),
        dli_sname: core::ptr::null(),
        dli_saddr: core::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and fills `info`.
    if f.is_null() || unsafe { dladdr(f, &mut info) } == 0 {
        return String::new();
    }
    text(info.dli_fname)
}

/// The allocator's version, where it says: jemalloc's `version` mallctl,
/// mimalloc's `mi_version`, glibc's version when malloc is glibc's.
pub fn version(malloc_from: &str) -> String {
    let ctl = symbol("mallctl");
    if !ctl.is_null() {
        // SAFETY: mallctl has this signature in jemalloc; "version" reads a
        // `const char *` into `v`.
        let ctl: Mallctl = unsafe { core::mem::transmute(ctl) };
        let mut v: *const c_char = core::ptr::null();
        let mut len = core::mem::size_of::<*const c_char>();
        let rc = unsafe {
            ctl(
                c"version".as_ptr(),
                &mut v as *mut _ as *mut c_void,
                &mut len,
                core::ptr::null_mut(),
                0,
            )
        };
        if rc == 0 {
            return format!("jemalloc {}", text(v));
        }
    }
    let mi = symbol("mi_version");
    if !mi.is_null() {
        // SAFETY: mi_version takes nothing and returns an int.
        let mi: MiVersion = unsafe { core::mem::transmute(mi) };
        let v = unsafe { mi() };
        return format!("mimalloc {}.{}.{}", v / 100, (v / 10) % 10, v % 10);
    }
    if malloc_from.contains("libc.so") {
        // SAFETY: returns a static string.
        return format!("glibc {}", text(unsafe { gnu_get_libc_version() }));
    }
    "unknown".into()
}

impl Heaps {
    /// The allocator's own heaps, if it has them, for `heaps` plan heaps.
    pub fn find(heaps: usize) -> Heaps {
        let (mx, rx, dx, ctl) = (
            symbol("mallocx"),
            symbol("rallocx"),
            symbol("dallocx"),
            symbol("mallctl"),
        );
        if ![mx, rx, dx, ctl].iter().any(|p| p.is_null()) {
            // SAFETY: these are jemalloc's functions with these signatures
            // (jemalloc.h), found together.
            return unsafe {
                Heaps::Jemalloc {
                    mallocx: core::mem::transmute::<*mut c_void, Mallocx>(mx),
                    rallocx: core::mem::transmute::<*mut c_void, Rallocx>(rx),
                    dallocx: core::mem::transmute::<*mut c_void, Dallocx>(dx),
                    mallctl: core::mem::transmute::<*mut c_void, Mallctl>(ctl),
                    arenas: (0..heaps).map(|_| AtomicU32::new(0)).collect(),
                    making: Mutex::new(()),
                }
            };
        }
        let f = [
            symbol("mi_heap_new"),
            symbol("mi_heap_malloc"),
            symbol("mi_heap_realloc"),
            symbol("mi_heap_delete"),
            symbol("mi_free"),
        ];
        if !f.iter().any(|p| p.is_null()) {
            // SAFETY: mimalloc's functions with these signatures
            // (mimalloc.h), found together.
            return unsafe {
                Heaps::Mimalloc {
                    new: core::mem::transmute::<*mut c_void, MiHeapNew>(f[0]),
                    malloc: core::mem::transmute::<*mut c_void, MiHeapMalloc>(f[1]),
                    realloc: core::mem::transmute::<*mut c_void, MiHeapRealloc>(f[2]),
                    delete: core::mem::transmute::<*mut c_void, MiHeapDelete>(f[3]),
                    free: core::mem::transmute::<*mut c_void, MiFree>(f[4]),
                }
            };
        }
        Heaps::Default
    }

    /// How heaps are replayed, in words.
    pub fn describe(&self) -> &'static str {
        match self {
            Heaps::Default => "on the default heap (the allocator has no heaps of its own)",
            Heaps::Jemalloc { .. } => "jemalloc arenas (mallocx, no thread cache)",
            Heaps::Mimalloc { .. } => "mimalloc heaps (one mi_heap per trace heap and thread)",
        }
    }

    /// jemalloc: the arena of plan heap `h`, made on first use.
    fn arena(&self, h: u32) -> u32 {
        let Heaps::Jemalloc {
            mallctl,
            arenas,
            making,
            ..
        } = self
        else {
            return 0;
        };
        let cell = &arenas[h as usize];
        let a = cell.load(Ordering::Acquire);
        if a != 0 {
            return a - 1;
        }
        let _g = making.lock().unwrap_or_else(|p| p.into_inner());
        let a = cell.load(Ordering::Acquire);
        if a != 0 {
            return a - 1;
        }
        let mut idx: u32 = 0;
        let mut len = core::mem::size_of::<u32>();
        // SAFETY: "arenas.create" writes the new arena's index (unsigned).
        let rc = unsafe {
            mallctl(
                c"arenas.create".as_ptr(),
                &mut idx as *mut u32 as *mut c_void,
                &mut len,
                core::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 {
            return 0;
        }
        cell.store(idx + 1, Ordering::Release);
        idx
    }

    /// Makes heap `h` now (jemalloc; mimalloc heaps are per thread and
    /// made on first use).
    pub fn create(&self, h: u32) {
        self.arena(h);
    }

    /// Destroys heap `h` once all its objects are freed (the caller waits
    /// for that). `mine` is this thread's mimalloc heap for it, if any.
    pub fn destroy(&self, h: u32, mine: *mut c_void) -> bool {
        match self {
            Heaps::Default => true,
            Heaps::Jemalloc {
                mallctl, arenas, ..
            } => {
                let a = arenas[h as usize].swap(0, Ordering::AcqRel);
                if a == 0 {
                    return true;
                }
                let name = format!("arena.{}.destroy\0", a - 1);
                // SAFETY: destroying an arena made by arenas.create, none
                // of whose objects is live and none in a thread cache
                // (its objects never went through one).
                unsafe {
                    mallctl(
                        name.as_ptr() as *const c_char,
                        core::ptr::null_mut(),
                        core::ptr::null_mut(),
                        core::ptr::null_mut(),
                        0,
                    ) == 0
                }
            }
            Heaps::Mimalloc { delete, .. } => {
                if !mine.is_null() {
                    // SAFETY: `mine` is this thread's heap; deleting it
                    // moves any block still in it to the default heap.
                    unsafe { delete(mine) };
                }
                true
            }
        }
    }

    /// Deletes a thread's mimalloc heaps as the thread ends.
    pub fn end_thread(&self, mine: &[*mut c_void]) {
        if let Heaps::Mimalloc { delete, .. } = self {
            for &h in mine.iter().filter(|h| !h.is_null()) {
                // SAFETY: each is this thread's own heap, deleted once.
                unsafe { delete(h) };
            }
        }
    }

    /// malloc in plan heap `h`; `mine` caches this thread's mimalloc heaps.
    #[inline]
    pub fn malloc(&self, h: u32, size: usize, mine: &mut [*mut c_void]) -> *mut c_void {
        // SAFETY: plain allocator calls; the heap handles are the
        // allocator's own (an arena index it made, a heap of this thread).
        unsafe {
            match self {
                _ if h == 0 => malloc(size),
                Heaps::Default => malloc(size),
                Heaps::Jemalloc { mallocx, .. } => {
                    let a = self.arena(h);
                    mallocx(size.max(1), mallocx_arena(a) | MALLOCX_TCACHE_NONE)
                }
                Heaps::Mimalloc { new, malloc, .. } => {
                    let heap = mine_heap(mine, h, *new);
                    malloc(heap, size)
                }
            }
        }
    }

    #[inline]
    pub fn realloc(
        &self,
        h: u32,
        p: *mut c_void,
        size: usize,
        mine: &mut [*mut c_void],
    ) -> *mut c_void {
        // SAFETY: `p` is null or a block this allocator returned for the
        // same slot, in the same heap.
        unsafe {
            match self {
                _ if h == 0 => realloc(p, size),
                Heaps::Default => realloc(p, size),
                Heaps::Jemalloc {
                    mallocx, rallocx, ..
                } => {
                    let flags = mallocx_arena(self.arena(h)) | MALLOCX_TCACHE_NONE;
                    if p.is_null() {
                        mallocx(size.max(1), flags)
                    } else {
                        rallocx(p, size.max(1), flags)
                    }
                }
                Heaps::Mimalloc { new, realloc, .. } => {
                    let heap = mine_heap(mine, h, *new);
                    realloc(heap, p, size)
                }
            }
        }
    }

    #[inline]
    pub fn free(&self, h: u32, p: *mut c_void) {
        // SAFETY: `p` is null or a live block this allocator returned.
        unsafe {
            match self {
                _ if h == 0 => free(p),
                Heaps::Default => free(p),
                Heaps::Jemalloc { dallocx, .. } => {
                    if !p.is_null() {
                        dallocx(p, MALLOCX_TCACHE_NONE)
                    }
                }
                Heaps::Mimalloc { free, .. } => free(p),
            }
        }
    }
}

/// This thread's mimalloc heap for plan heap `h`, made on first use.
#[inline]
fn mine_heap(mine: &mut [*mut c_void], h: u32, new: MiHeapNew) -> *mut c_void {
    let cell = &mut mine[h as usize];
    if cell.is_null() {
        // SAFETY: mi_heap_new makes a heap owned by the calling thread.
        *cell = unsafe { new() };
    }
    *cell
}
