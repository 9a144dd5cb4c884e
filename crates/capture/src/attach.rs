//! Attaching to a running process (`tramp record -p PID`): `tramp` has gdb
//! load this library into the process with `dlopen` and call
//! [`tramp_attach`]; loaded that late, the library's malloc and friends
//! interpose nothing by name, so every loaded module's GOT entries for
//! them (and for `dlopen`, to patch modules loaded later) are pointed at
//! ours, as heaptrack's injector does. The entries are written one by
//! one while the program runs, so recording starts only at
//! [`tramp_begin`], once all are ours and gdb has seen every thread
//! outside the allocator (no call begun through an old entry is still
//! running): a block freed through our `free` and handed out again by a
//! `malloc` that is not ours would show a double free. [`tramp_detach`]
//! stops taking events first, then writes the saved entries back, writes
//! out every thread's events and closes the log; the library stays loaded
//! (a thread may still be returning through it), doing nothing.

use core::ffi::{CStr, c_char, c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::sys;

/// The functions whose GOT entries are redirected, by name.
const NAMES: [&CStr; 21] = [
    c"malloc",
    c"free",
    c"calloc",
    c"realloc",
    c"reallocarray",
    c"posix_memalign",
    c"aligned_alloc",
    c"memalign",
    c"valloc",
    c"pvalloc",
    c"pthread_create",
    c"_exit",
    c"_Exit",
    c"dlopen",
    // So that an exec writes out the events first (and the image it
    // starts records itself: `inherit`).
    c"execve",
    c"execv",
    c"execvp",
    c"execvpe",
    c"execl",
    c"execlp",
    c"execle",
];

/// Our definition of each of [`NAMES`] (0 until [`tramp_attach`]).
static OURS: [AtomicUsize; NAMES.len()] = [const { AtomicUsize::new(0) }; NAMES.len()];
/// glibc's dlopen, for the hook.
static REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);
/// Attached: the GOT entries are ours.
pub static ATTACHED: AtomicBool = AtomicBool::new(false);

/// The GOT entries changed, and what they held: at most this many.
const MAX_SLOTS: usize = 8192;
static SLOTS: [(AtomicUsize, AtomicUsize); MAX_SLOTS] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; MAX_SLOTS];
static N_SLOTS: AtomicUsize = AtomicUsize::new(0);
/// Patching and restoring one at a time (dlopen from several threads).
static LOCK: AtomicBool = AtomicBool::new(false);

fn lock() {
    while LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
}

fn unlock() {
    LOCK.store(false, Ordering::Release);
}

const PAGE: usize = 4096;

/// Writes `value` into the GOT entry at `slot`, making its page writable
/// for the write if it is not (full RELRO) and read-only again after.
///
/// # Safety
/// `slot` is a GOT entry of a loaded module (8 bytes, mapped).
unsafe fn write_slot(slot: usize, value: usize) -> bool {
    let page = slot & !(PAGE - 1);
    // SAFETY: the page holds the entry; mprotect only changes protection.
    unsafe {
        // Try as is first: partial RELRO leaves .got.plt writable. A write
        // to a read-only page would fault, so ask the kernel: mprotect to
        // read-write always succeeds on a private file or anonymous map.
        if sys::mprotect(page as *mut c_void, PAGE, sys::PROT_READ | sys::PROT_WRITE) != 0 {
            return false;
        }
        core::ptr::write_volatile(slot as *mut usize, value);
        true
    }
}

/// Whether `slot`'s page lies in one of the module's read-only-after-
/// relocation ranges, which are made read-only again after a write.
fn relro(slot: usize, ranges: &[(usize, usize)]) -> bool {
    ranges.iter().any(|&(a, b)| slot >= a && slot < b)
}

#[repr(C)]
struct Phdr {
    p_type: u32,
    p_flags: u32,
    p_offset: u64,
    p_vaddr: u64,
    p_paddr: u64,
    p_filesz: u64,
    p_memsz: u64,
    p_align: u64,
}

#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

#[repr(C)]
struct Rela {
    offset: u64,
    info: u64,
    addend: i64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

const PT_DYNAMIC: u32 = 2;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_JMPREL: i64 = 23;
const R_X86_64_GLOB_DAT: u32 = 6;
const R_X86_64_JUMP_SLOT: u32 = 7;

/// Which of [`NAMES`] a NUL-terminated symbol name is.
///
/// # Safety
/// `name` points at a NUL-terminated string.
unsafe fn which(name: *const c_char) -> Option<usize> {
    // SAFETY: as the contract says.
    let n = unsafe { CStr::from_ptr(name) };
    NAMES.iter().position(|x| *x == n)
}

/// Redirects one module's GOT entries for [`NAMES`] (those not ours yet).
///
/// # Safety
/// `info` describes a loaded module (from dl_iterate_phdr).
unsafe fn patch_module(info: &sys::DlPhdrInfo, restore_relro: bool) {
    let base = info.dlpi_addr;
    // SAFETY: the loader's program headers of a loaded module.
    let phdrs = unsafe {
        core::slice::from_raw_parts(info.dlpi_phdr as *const Phdr, info.dlpi_phnum as usize)
    };
    let mut dynamic = 0usize;
    let mut ranges = [(0usize, 0usize); 4];
    let mut n_ranges = 0;
    for p in phdrs {
        if p.p_type == PT_DYNAMIC {
            dynamic = base + p.p_vaddr as usize;
        } else if p.p_type == PT_GNU_RELRO && n_ranges < ranges.len() {
            let a = (base + p.p_vaddr as usize) & !(PAGE - 1);
            let b = (base + (p.p_vaddr + p.p_memsz) as usize + PAGE - 1) & !(PAGE - 1);
            ranges[n_ranges] = (a, b);
            n_ranges += 1;
        }
    }
    if dynamic == 0 {
        return;
    }
    // The loader rewrote the dynamic section's pointers to addresses in
    // most modules; those it left (the vDSO) are offsets from the base.
    let at = |v: u64| {
        let v = v as usize;
        if v < base { base + v } else { v }
    };
    let (mut strtab, mut symtab, mut rela, mut relasz, mut jmprel, mut pltrelsz) =
        (0, 0, 0, 0, 0, 0);
    let mut d = dynamic as *const Dyn;
    // SAFETY: the dynamic section ends with DT_NULL.
    unsafe {
        while (*d).tag != DT_NULL {
            match (*d).tag {
                DT_STRTAB => strtab = at((*d).val),
                DT_SYMTAB => symtab = at((*d).val),
                DT_RELA => rela = at((*d).val),
                DT_RELASZ => relasz = (*d).val as usize,
                DT_JMPREL => jmprel = at((*d).val),
                DT_PLTRELSZ => pltrelsz = (*d).val as usize,
                _ => {}
            }
            d = d.add(1);
        }
    }
    if strtab == 0 || symtab == 0 {
        return;
    }
    for (table, size) in [(jmprel, pltrelsz), (rela, relasz)] {
        if table == 0 {
            continue;
        }
        let n = size / core::mem::size_of::<Rela>();
        // SAFETY: the module's relocation table, `size` bytes.
        let relocs = unsafe { core::slice::from_raw_parts(table as *const Rela, n) };
        for r in relocs {
            let kind = (r.info & 0xffff_ffff) as u32;
            if kind != R_X86_64_JUMP_SLOT && kind != R_X86_64_GLOB_DAT {
                continue;
            }
            let sym = (r.info >> 32) as usize;
            // SAFETY: the relocation's symbol in the module's symbol table,
            // its name in the string table.
            let name = unsafe {
                let s = &*(symtab as *const Sym).add(sym);
                (strtab + s.name as usize) as *const c_char
            };
            // SAFETY: a NUL-terminated name from the string table.
            let Some(i) = (unsafe { which(name) }) else {
                continue;
            };
            let ours = OURS[i].load(Ordering::Relaxed);
            let slot = base + r.offset as usize;
            // SAFETY: the relocation's GOT entry, mapped with the module.
            let old = unsafe { core::ptr::read_volatile(slot as *const usize) };
            if ours == 0 || old == ours {
                continue;
            }
            let k = N_SLOTS.load(Ordering::Relaxed);
            if k >= MAX_SLOTS {
                return;
            }
            // SAFETY: as above.
            if unsafe { write_slot(slot, ours) } {
                let read_only = restore_relro && relro(slot, &ranges[..n_ranges]);
                // The entry's address, bit 0 set when its page goes back to
                // read-only after a write (entries are 8-aligned).
                SLOTS[k]
                    .0
                    .store(slot | usize::from(read_only), Ordering::Relaxed);
                SLOTS[k].1.store(old, Ordering::Relaxed);
                N_SLOTS.store(k + 1, Ordering::Release);
                if read_only {
                    // SAFETY: back to what the loader left (read-only).
                    unsafe {
                        sys::mprotect((slot & !(PAGE - 1)) as *mut c_void, PAGE, sys::PROT_READ)
                    };
                }
            }
        }
    }
}

/// Whether `addr` lies in a loaded module's segments.
fn loaded(addr: usize) -> bool {
    struct Find {
        addr: usize,
        found: bool,
    }
    unsafe extern "C" fn each(info: *mut sys::DlPhdrInfo, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr's entry and our `Find`.
        let (info, f) = unsafe { (&*info, &mut *(data as *mut Find)) };
        // SAFETY: the module's program headers.
        let phdrs = unsafe {
            core::slice::from_raw_parts(info.dlpi_phdr as *const Phdr, info.dlpi_phnum as usize)
        };
        for p in phdrs {
            let a = info.dlpi_addr + p.p_vaddr as usize;
            if p.p_type == 1 && f.addr >= a && f.addr < a + p.p_memsz as usize {
                f.found = true;
                return 1;
            }
        }
        0
    }
    let mut f = Find { addr, found: false };
    // SAFETY: the callback matches; `f` outlives the call.
    unsafe { sys::dl_iterate_phdr(each, &mut f as *mut Find as *mut c_void) };
    f.found
}

/// The load address of this library, to leave its own GOT alone.
static SELF_BASE: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn each_module(info: *mut sys::DlPhdrInfo, _: usize, _: *mut c_void) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid entry.
    let info = unsafe { &*info };
    // SAFETY: dlpi_name is NUL-terminated (possibly empty).
    let name = unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes();
    let skip = info.dlpi_addr == SELF_BASE.load(Ordering::Relaxed)
        || name.windows(7).any(|w| w == b"ld-linu")
        || name.starts_with(b"linux-vdso");
    if !skip {
        // SAFETY: a loaded module's entry.
        unsafe { patch_module(info, true) };
    }
    0
}

/// Patches every loaded module (under the lock).
fn patch_all() {
    lock();
    // SAFETY: the callback matches dl_iterate_phdr's type.
    unsafe { sys::dl_iterate_phdr(each_module, core::ptr::null_mut()) };
    unlock();
}

/// `dlopen` while attached: glibc's, then the new modules' GOTs patched.
unsafe extern "C" fn dlopen_hook(file: *const c_char, mode: c_int) -> *mut c_void {
    let real = REAL_DLOPEN.load(Ordering::Acquire);
    if real == 0 {
        return core::ptr::null_mut();
    }
    // SAFETY: glibc's dlopen, with its own signature.
    let h = unsafe {
        let f: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void =
            core::mem::transmute(real);
        f(file, mode)
    };
    if ATTACHED.load(Ordering::Acquire) {
        patch_all();
        crate::modules_changed();
    }
    h
}

/// Attaches, armed: `dir` is where the raw log goes, `own` this library's
/// path (to find its own definitions), `stack` the frames per event,
/// `sample` the sampling mean (0: every event), `backlog` the log's bound
/// (0: none). Nothing is recorded until [`tramp_begin`]. Returns 0, or a
/// positive code: 1 already recording, 2 the log could not be opened, 3
/// this library's definitions could not be found.
///
/// # Safety
/// Called once, by gdb, with NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tramp_attach(
    dir: *const c_char,
    own: *const c_char,
    stack: u64,
    sample: u64,
    backlog: u64,
) -> c_int {
    if ATTACHED.load(Ordering::Acquire) || crate::recording() {
        return 1;
    }
    // SAFETY: dlopen of an already loaded library (NOLOAD) gives its
    // handle; dlsym on it finds our own definitions first.
    let handle = unsafe { sys::dlopen(own, sys::RTLD_NOW | sys::RTLD_NOLOAD) };
    if handle.is_null() {
        return 3;
    }
    for (i, name) in NAMES.iter().enumerate() {
        let f = if *name == c"dlopen" {
            dlopen_hook as *const () as usize
        } else {
            // SAFETY: a symbol this library defines.
            unsafe { sys::dlsym(handle, name.as_ptr()) as usize }
        };
        if f == 0 {
            return 3;
        }
        OURS[i].store(f, Ordering::Relaxed);
    }
    // SAFETY: RTLD_NEXT from this library finds glibc's dlopen.
    let real = unsafe { sys::dlsym(sys::RTLD_NEXT, c"dlopen".as_ptr()) } as usize;
    REAL_DLOPEN.store(real, Ordering::Release);
    let mut info = sys::DlInfo::default();
    // SAFETY: dladdr fills `info` for an address of this library.
    if unsafe { sys::dladdr(tramp_attach as *const c_void, &mut info) } != 0 {
        SELF_BASE.store(info.dli_fbase as usize, Ordering::Relaxed);
    }
    if !crate::start_attached(dir, stack, sample, backlog) {
        return 2;
    }
    crate::export_for_exec(own);
    ATTACHED.store(true, Ordering::Release);
    patch_all();
    0
}

/// Starts recording after [`tramp_attach`]: 0, or -1 when not attached
/// and armed.
#[unsafe(no_mangle)]
pub extern "C" fn tramp_begin() -> c_int {
    if ATTACHED.load(Ordering::Acquire) && crate::begin_attached() {
        0
    } else {
        -1
    }
}

/// Detaches: every GOT entry written back, every thread's events written
/// out, recording off. Returns how many entries were restored.
#[unsafe(no_mangle)]
pub extern "C" fn tramp_detach() -> c_int {
    if !ATTACHED.swap(false, Ordering::AcqRel) {
        return -1;
    }
    crate::pause_attached();
    crate::inherit::restore();
    lock();
    let n = N_SLOTS.load(Ordering::Acquire);
    for s in SLOTS[..n].iter().rev() {
        let (tagged, old) = (s.0.load(Ordering::Relaxed), s.1.load(Ordering::Relaxed));
        let (slot, read_only) = (tagged & !1, tagged & 1 == 1);
        // A module unloaded since (dlclose) took its GOT with it.
        if !loaded(slot) {
            continue;
        }
        // SAFETY: an entry we wrote, in a module still loaded.
        unsafe {
            let now = core::ptr::read_volatile(slot as *const usize);
            if OURS.iter().any(|o| o.load(Ordering::Relaxed) == now)
                && write_slot(slot, old)
                && read_only
            {
                sys::mprotect((slot & !(PAGE - 1)) as *mut c_void, PAGE, sys::PROT_READ);
            }
        }
    }
    N_SLOTS.store(0, Ordering::Release);
    unlock();
    crate::stop_attached();
    n as c_int
}
