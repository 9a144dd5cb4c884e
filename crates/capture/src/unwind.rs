//! The capture's call-stack unwinder, which allocates nothing (its state is
//! one mmap per thread) and never calls glibc's `backtrace()`.
//!
//! A frame is stepped to its caller by the DWARF call-frame rule of its
//! return address, found once through the module's `.eh_frame_hdr` search
//! table (`_dl_find_object` names the module, lock-free) and then kept in a
//! per-thread cache keyed by the address: after warm-up a frame costs one
//! table lookup and one or two loads — the same as a frame-pointer walk
//! where the rule is "CFA = rbp + 16", and right where the code has no
//! frame pointer. Frames of code without any rule (JIT code) are walked by
//! their frame pointer.
//!
//! **Early stop.** The thread's previous stack is kept with the registers
//! of each frame. While unwinding, once a frame has the same return
//! address, stack pointer and (where an outer rule reads it) frame pointer
//! as a frame of the previous stack, the outer frames are the same *if*
//! every stack slot the previous unwind read from there outwards still
//! holds what it held. That is checked (one or two loads a frame, no rule
//! lookup); a match of the frame alone would not do, since one call site is
//! reached from different callers at the same depth. The frames above are
//! then reused, and only the new inner frames are reported.
//!
//! Every read is of the thread's own stack between the caller's stack
//! pointer and the stack's top, so a wrong rule or a corrupt stack ends the
//! stack early instead of faulting.

use crate::sys;

/// Deepest call stack recorded.
pub const MAX_FRAMES: usize = 64;

const CACHE_BITS: u32 = 12;
const CACHE_SLOTS: usize = 1 << CACHE_BITS;

// Rule kinds (the low 4 bits of a packed rule; 0 is an empty cache slot).
/// CFA = rsp + off.
const K_RSP: u64 = 1;
/// CFA = rbp + off.
const K_RBP: u64 = 2;
/// The outermost frame (its return address is undefined).
const K_END: u64 = 3;
/// The kernel's signal return trampoline: the interrupted registers are
/// in the `ucontext_t` at the stack pointer.
const K_SIGNAL: u64 = 4;
/// No rule covers the address: walk the frame pointer.
const K_FP: u64 = 5;
/// A rule this unwinder does not follow (an expression): the stack ends.
const K_STOP: u64 = 6;

/// Frame flag: look the rule up at the address itself, not the byte
/// before (the frame was interrupted by a signal, not a call).
const EXACT: u64 = 1;
/// Frame flag: an outer frame's rule reads the frame pointer before any
/// rule restores it, so it must match for an early stop.
const BP_MATTERS: u64 = 2;

fn pack(kind: u64, cfa_off: i64, ra_off: i64, bp_off: i64) -> u64 {
    let fits16 = |v: i64| (-32768..32768).contains(&v);
    if !(-(1 << 23)..(1 << 23)).contains(&cfa_off) || !fits16(ra_off) || !fits16(bp_off) {
        return K_STOP;
    }
    kind | ((ra_off as u16 as u64) << 8)
        | ((bp_off as u16 as u64) << 24)
        | (((cfa_off as u64) & 0xff_ffff) << 40)
}

fn kind(r: u64) -> u64 {
    r & 0xf
}
fn ra_off(r: u64) -> i64 {
    (r >> 8) as u16 as i16 as i64
}
fn bp_off(r: u64) -> i64 {
    (r >> 24) as u16 as i16 as i64
}
fn cfa_off(r: u64) -> i64 {
    ((r as i64) >> 40) as i32 as i64
}

/// One frame: its address (a return address, or the interrupted
/// instruction after a signal), the registers there, and the rule that
/// steps it to its caller.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Frame {
    pub pc: u64,
    sp: u64,
    bp: u64,
    rule: u64,
    flags: u64,
    /// The stack slots stepping to the caller read: its return address,
    /// frame pointer and (after a signal) stack pointer; 0 when not read.
    ra_at: u64,
    bp_at: u64,
    sp_at: u64,
}

impl Frame {
    /// The frame of the function that called an allocation function: its
    /// return address is at `sp` on entry to the callee, its stack pointer
    /// just above, its frame pointer unchanged by the (naked) callee.
    pub fn caller(sp: u64, bp: u64) -> Frame {
        // SAFETY: `sp` is the stack pointer on entry to one of our
        // trampolines, where the call pushed the return address.
        let pc = unsafe { *(sp as *const u64) };
        Frame {
            pc,
            sp: sp + 8,
            bp,
            ..Frame::default()
        }
    }
}

/// What changed since the thread's previous stack: keep its `keep`
/// outermost frames, then add `n_new` frames inside them (innermost first,
/// [`Unwinder::new_frame`]).
pub struct Change {
    pub keep: usize,
    pub n_new: usize,
}

/// A thread's unwinder: the rule cache and the previous stack.
#[repr(C)]
pub struct Unwinder {
    /// The module generation the cache was filled under.
    generation: u64,
    /// The mapping that holds the thread's stack (0, 0: not known yet).
    low: u64,
    top: u64,
    cache_key: [u64; CACHE_SLOTS],
    cache_rule: [u64; CACHE_SLOTS],
    /// The previous stack, outermost first.
    prev: [Frame; MAX_FRAMES],
    prev_len: usize,
    /// The previous stack was cut at the depth (more frames were above).
    prev_cut: bool,
    scratch: [Frame; MAX_FRAMES],
    check: [Frame; MAX_FRAMES],
    /// Stacks taken, and how: early stops, frames stepped by a rule
    /// lookup, early stops compared with a full unwind, and those that
    /// differed from it.
    pub stacks: u64,
    pub early_stops: u64,
    pub frames_unwound: u64,
    pub checks: u64,
    pub mismatches: u64,
}

/// Bumped when modules were unloaded: cached rules may name code that is
/// gone.
pub static GENERATION: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

impl Unwinder {
    /// A fresh unwinder in zeroed memory (an anonymous mapping), or null.
    pub fn map() -> *mut Unwinder {
        // SAFETY: an anonymous private mapping, zero-filled, which is a valid
        // Unwinder (integers and arrays of integers only).
        let p = unsafe {
            sys::mmap(
                core::ptr::null_mut(),
                core::mem::size_of::<Unwinder>(),
                sys::PROT_READ | sys::PROT_WRITE,
                sys::MAP_PRIVATE | sys::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == sys::MAP_FAILED {
            core::ptr::null_mut()
        } else {
            p as *mut Unwinder
        }
    }

    /// Forgets the thread: a new owner, or a fork child.
    pub fn reset(&mut self) {
        self.prev_len = 0;
        self.prev_cut = false;
        self.low = 0;
        self.top = 0;
        self.stacks = 0;
        self.early_stops = 0;
        self.frames_unwound = 0;
        self.checks = 0;
        self.mismatches = 0;
    }

    /// The top of the stack mapping `sp` is in (looked up again when the
    /// thread runs on another stack: a signal stack, a coroutine).
    fn stack_top(&mut self, sp: u64) -> u64 {
        if sp < self.low || sp >= self.top {
            (self.low, self.top) = stack_mapping(sp);
        }
        self.top
    }

    /// Takes the stack from `start` up to `depth` frames, and says what
    /// changed since the previous one. With `check`, every early stop is
    /// compared with a full unwind (and the full one kept on a difference).
    pub fn take(&mut self, start: Frame, depth: usize, check: bool) -> Change {
        let depth = depth.min(MAX_FRAMES);
        let generation = GENERATION.load(core::sync::atomic::Ordering::Relaxed);
        if generation != self.generation {
            self.cache_key = [0; CACHE_SLOTS];
            self.generation = generation;
            self.prev_len = 0;
        }
        let floor = start.sp;
        let top = self.stack_top(floor);
        self.stacks += 1;
        let early = !self.prev_cut && self.prev_len > 0;
        let (n, cut, matched) = self.unwind(start, depth, floor, top, early, false);
        match matched {
            Some(j) => {
                self.early_stops += 1;
                if check {
                    self.checks += 1;
                    let (full_n, _, _) = self.unwind(start, depth, floor, top, false, true);
                    let same = full_n == j + 1 + n
                        && (0..full_n).all(|k| {
                            let got = if k < n {
                                self.scratch[k].pc
                            } else {
                                self.prev[j - (k - n)].pc
                            };
                            got == self.check[k].pc
                        });
                    if !same {
                        self.mismatches += 1;
                        self.scratch[..full_n].copy_from_slice(&self.check[..full_n]);
                        return self.adopt_full(full_n, full_n == depth);
                    }
                }
                for k in 0..n {
                    self.prev[j + n - k] = self.scratch[k];
                }
                self.prev_len = j + 1 + n;
                self.mark_bp(j + 1);
                Change {
                    keep: j + 1,
                    n_new: n,
                }
            }
            None => self.adopt_full(n, cut),
        }
    }

    /// The `k`th new frame (innermost first) of the last [`Change`].
    pub fn new_frame(&self, k: usize) -> u64 {
        self.scratch[k].pc
    }

    /// Makes `scratch[..n]` the thread's stack.
    fn adopt_full(&mut self, n: usize, cut: bool) -> Change {
        for k in 0..n {
            self.prev[n - 1 - k] = self.scratch[k];
        }
        self.prev_len = n;
        self.prev_cut = cut;
        self.mark_bp(0);
        Change { keep: 0, n_new: n }
    }

    /// Sets [`BP_MATTERS`] on `prev[from..]`, carrying it from the frame
    /// outside them.
    fn mark_bp(&mut self, from: usize) {
        let mut m = from > 0 && self.prev[from - 1].flags & BP_MATTERS != 0;
        for f in &mut self.prev[from..self.prev_len] {
            let k = kind(f.rule);
            let uses = k == K_RBP || k == K_FP;
            let restores = bp_off(f.rule) != 0 || k == K_SIGNAL;
            m = uses || (!restores && m);
            if m {
                f.flags |= BP_MATTERS;
            } else {
                f.flags &= !BP_MATTERS;
            }
        }
    }

    /// Unwinds into `scratch` (or `check`), innermost first. Returns the
    /// frames taken, whether the depth cut the stack, and, with `early`,
    /// the previous stack's frame where the rest is proven the same (the
    /// frames taken are then the new inner ones).
    fn unwind(
        &mut self,
        start: Frame,
        depth: usize,
        floor: u64,
        top: u64,
        mut early: bool,
        into_check: bool,
    ) -> (usize, bool, Option<usize>) {
        let mut f = start;
        let mut i = 0;
        let mut j = self.prev_len as isize - 1;
        // Proofs may fail where a caller changed; each is retried further
        // out, within a budget of slots checked, so the worst case stays
        // linear in the depth.
        let mut budget = 2 * MAX_FRAMES;
        loop {
            if early {
                while j >= 0 && self.prev[j as usize].sp < f.sp {
                    j -= 1;
                }
                if j < 0 {
                    early = false;
                } else {
                    let p = self.prev[j as usize];
                    if p.sp == f.sp
                        && p.pc == f.pc
                        && p.flags & EXACT == f.flags & EXACT
                        && (p.bp == f.bp || p.flags & BP_MATTERS == 0)
                        && i + (j as usize) < depth
                    {
                        if self.proven(j as usize, floor, top, &mut budget) {
                            return (i, false, Some(j as usize));
                        }
                        early = budget > 0;
                    }
                }
            }
            if i == depth {
                return (i, true, None);
            }
            f.rule = self.rule(&f);
            self.frames_unwound += 1;
            let next = step(&mut f, floor, top);
            if into_check {
                self.check[i] = f;
            } else {
                self.scratch[i] = f;
            }
            i += 1;
            match next {
                Some(next) => f = next,
                None => return (i, false, None),
            }
        }
    }

    /// Whether the previous stack's frames from `j` outwards still step as
    /// they did: every slot their steps read holds what it held.
    fn proven(&self, j: usize, floor: u64, top: u64, budget: &mut usize) -> bool {
        // The slot still holds `want`. Slots were in bounds when first read;
        // they must also be above this call's stack pointer.
        let holds = |at: u64, want: u64| at == 0 || read(at, floor, top) == Some(want);
        if *budget < j {
            return false;
        }
        *budget -= j;
        for k in (1..=j).rev() {
            let f = &self.prev[k];
            let outer = &self.prev[k - 1];
            // The common frame reads only its return address, in a slot
            // above its own stack pointer (itself above `floor`) and below
            // the top (checked when it was first read).
            if f.sp_at == 0
                && (f.bp_at == 0 || outer.flags & BP_MATTERS == 0)
                && f.ra_at >= f.sp
                && f.sp >= floor
            {
                // SAFETY: 8-aligned, between this frame's stack pointer
                // (at or above the caller's) and the stack's top, as checked
                // when the unwind that made the frame read it.
                if unsafe { *(f.ra_at as *const u64) } != outer.pc {
                    return false;
                }
                continue;
            }
            if f.ra_at == 0
                || !holds(f.ra_at, outer.pc)
                || !holds(f.sp_at, outer.sp)
                || (outer.flags & BP_MATTERS != 0 && !holds(f.bp_at, outer.bp))
            {
                return false;
            }
        }
        let mut last = self.prev[0];
        step(&mut last, floor, top).is_none()
    }

    /// The rule of a frame, from the cache or the module's unwind table.
    #[inline(always)]
    fn rule(&mut self, f: &Frame) -> u64 {
        let key = if f.flags & EXACT != 0 {
            f.pc
        } else {
            f.pc.wrapping_sub(1)
        };
        let slot = crate::rng::fibonacci(key, CACHE_BITS) as usize;
        if self.cache_key[slot] == key && key != 0 {
            return self.cache_rule[slot];
        }
        let r = find_rule(key);
        self.cache_key[slot] = key;
        self.cache_rule[slot] = r;
        r
    }
}

/// Reads a stack slot, if it lies between the caller's stack pointer and
/// the stack's top.
#[inline(always)]
fn read(addr: u64, floor: u64, top: u64) -> Option<u64> {
    if addr < floor || addr.checked_add(8)? > top || addr & 7 != 0 {
        return None;
    }
    // SAFETY: the thread's stack is mapped from the lowest stack pointer
    // seen in this call (`floor`, the caller's) up to its top, and the
    // address is 8-aligned inside it.
    Some(unsafe { *(addr as *const u64) })
}

/// Steps a frame to its caller by its rule, noting in it the slots it
/// read; `None` at the end of the stack.
#[inline(always)]
fn step(f: &mut Frame, floor: u64, top: u64) -> Option<Frame> {
    let r = f.rule;
    f.ra_at = 0;
    f.bp_at = 0;
    f.sp_at = 0;
    let (pc, sp, bp, flags) = match kind(r) {
        K_RSP | K_RBP => {
            let base = if kind(r) == K_RSP { f.sp } else { f.bp };
            let cfa = base.wrapping_add(cfa_off(r) as u64);
            if cfa <= f.sp {
                return None;
            }
            f.ra_at = cfa.wrapping_add(ra_off(r) as u64);
            let pc = read(f.ra_at, floor, top)?;
            let bp = match bp_off(r) {
                0 => f.bp,
                o => {
                    f.bp_at = cfa.wrapping_add(o as u64);
                    read(f.bp_at, floor, top)?
                }
            };
            (pc, cfa, bp, 0)
        }
        K_SIGNAL => {
            // ucontext_t: uc_mcontext.gregs at byte 40; RBP is greg 10,
            // RSP 15, RIP 16.
            let uc = f.sp;
            f.bp_at = uc + 40 + 8 * 10;
            f.sp_at = uc + 40 + 8 * 15;
            f.ra_at = uc + 40 + 8 * 16;
            let bp = read(f.bp_at, floor, top)?;
            let sp = read(f.sp_at, floor, top)?;
            let pc = read(f.ra_at, floor, top)?;
            (pc, sp, bp, EXACT)
        }
        K_FP => {
            if f.bp < f.sp {
                return None;
            }
            f.ra_at = f.bp.wrapping_add(8);
            f.bp_at = f.bp;
            let pc = read(f.ra_at, floor, top)?;
            let bp = read(f.bp_at, floor, top)?;
            (pc, f.bp + 16, bp, 0)
        }
        _ => return None,
    };
    if pc == 0 {
        return None;
    }
    Some(Frame {
        pc,
        sp,
        bp,
        flags,
        ..Frame::default()
    })
}

/// The mapping that holds the stack pointer `here` (its start and end),
/// from /proc/self/maps ((0, 0) when unknown: nothing is read). Not `pthread_getattr_np`, which takes the thread's lock and
/// allocates: called from a malloc made inside it (Rust's runtime does at
/// start), it would wait for itself.
fn stack_mapping(here: u64) -> (u64, u64) {
    // SAFETY: open/read/close on a buffer we own; nothing else is touched.
    let fd = unsafe {
        sys::open(
            c"/proc/self/maps".as_ptr(),
            sys::O_RDONLY | sys::O_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return (0, 0);
    }
    let mut buf = [0u8; 4096];
    let mut line = [0u8; 64];
    let (mut len, mut skipping) = (0usize, false);
    let mut found = (0, 0);
    'read: loop {
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { sys::read(fd, buf.as_mut_ptr() as *mut core::ffi::c_void, buf.len()) };
        if n <= 0 {
            break;
        }
        for &b in &buf[..n as usize] {
            if b == b'\n' {
                if let Some((lo, hi)) = parse_range(&line[..len])
                    && lo <= here
                    && here < hi
                {
                    found = (lo, hi);
                    break 'read;
                }
                len = 0;
                skipping = false;
            } else if !skipping {
                if len < line.len() {
                    line[len] = b;
                    len += 1;
                } else {
                    skipping = true;
                }
            }
        }
    }
    // SAFETY: our descriptor.
    unsafe { sys::close(fd) };
    found
}

/// `START-END` at the start of a maps line.
fn parse_range(line: &[u8]) -> Option<(u64, u64)> {
    let hex = |s: &[u8]| -> Option<u64> {
        let mut v = 0u64;
        for &c in s {
            v = v.checked_mul(16)? + (c as char).to_digit(16)? as u64;
        }
        Some(v)
    };
    let dash = line.iter().position(|&c| c == b'-')?;
    let space = line.iter().position(|&c| c == b' ')?;
    Some((hex(&line[..dash])?, hex(line.get(dash + 1..space)?)?))
}

// ---------------------------------------------------------------------------
// Rules from .eh_frame.

/// The rule of the code at `addr` (a return address minus one, or an
/// interrupted instruction), from its module's `.eh_frame`.
#[cold]
fn find_rule(addr: u64) -> u64 {
    let mut obj = sys::DlFindObject::default();
    // SAFETY: _dl_find_object fills `obj` for an address inside a loaded
    // object (lock-free, no allocation) and fails otherwise.
    if unsafe { sys::_dl_find_object(addr as *mut core::ffi::c_void, &mut obj) } != 0 {
        return K_FP;
    }
    if obj.dlfo_eh_frame.is_null() {
        return K_FP;
    }
    // SAFETY: dlfo_eh_frame is the object's PT_GNU_EH_FRAME segment, mapped
    // read-only while the object is loaded, and the address is in it.
    match unsafe { rule_from_hdr(obj.dlfo_eh_frame as *const u8, addr) } {
        Some(r) => r,
        None => K_FP,
    }
}

/// A cursor over mapped unwind tables.
struct Cursor {
    p: *const u8,
    end: *const u8,
}

impl Cursor {
    unsafe fn u8(&mut self) -> Option<u8> {
        if self.p >= self.end {
            return None;
        }
        // SAFETY: below `end`, inside the table (the caller's promise).
        let v = unsafe { *self.p };
        self.p = self.p.wrapping_add(1);
        Some(v)
    }

    unsafe fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut b = [0u8; N];
        for x in &mut b {
            // SAFETY: as `u8`.
            *x = unsafe { self.u8() }?;
        }
        Some(b)
    }

    unsafe fn uleb(&mut self) -> Option<u64> {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            // SAFETY: as `u8`.
            let b = unsafe { self.u8() }?;
            if shift < 64 {
                v |= ((b & 0x7f) as u64) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
    }

    unsafe fn sleb(&mut self) -> Option<i64> {
        let (mut v, mut shift) = (0i64, 0u32);
        loop {
            // SAFETY: as `u8`.
            let b = unsafe { self.u8() }?;
            if shift < 64 {
                v |= ((b & 0x7f) as i64) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1i64 << shift;
                }
                return Some(v);
            }
        }
    }

    /// A pointer in DWARF's `DW_EH_PE_*` encoding; `data` is the base of
    /// data-relative values.
    unsafe fn encoded(&mut self, enc: u8, data: u64) -> Option<u64> {
        if enc == 0xff {
            return None;
        }
        let here = self.p as u64;
        // SAFETY: reads go through the bounded readers above.
        let v = unsafe {
            match enc & 0x0f {
                0x00 => u64::from_le_bytes(self.fixed::<8>()?),
                0x01 => self.uleb()?,
                0x02 => u16::from_le_bytes(self.fixed::<2>()?) as u64,
                0x03 => u32::from_le_bytes(self.fixed::<4>()?) as u64,
                0x04 => u64::from_le_bytes(self.fixed::<8>()?),
                0x09 => self.sleb()? as u64,
                0x0a => i16::from_le_bytes(self.fixed::<2>()?) as i64 as u64,
                0x0b => i32::from_le_bytes(self.fixed::<4>()?) as i64 as u64,
                0x0c => u64::from_le_bytes(self.fixed::<8>()?),
                _ => return None,
            }
        };
        let v = match enc & 0x70 {
            0x00 => v,
            0x10 => v.wrapping_add(here),
            0x30 => v.wrapping_add(data),
            _ => return None,
        };
        if enc & 0x80 != 0 {
            return None;
        }
        Some(v)
    }
}

/// Finds the FDE for `addr` through `.eh_frame_hdr`'s binary search table
/// and runs its rules up to `addr`.
unsafe fn rule_from_hdr(hdr: *const u8, addr: u64) -> Option<u64> {
    let base = hdr as u64;
    let mut c = Cursor {
        p: hdr,
        end: hdr.wrapping_add(4 + 8 + 8),
    };
    // SAFETY: the header's fixed part and its two encoded values lie in the
    // segment; the table's length comes from its count.
    unsafe {
        let [version, frame_enc, count_enc, table_enc] = c.fixed::<4>()?;
        if version != 1 || table_enc != 0x3b {
            return None;
        }
        c.encoded(frame_enc, base)?;
        let count = c.encoded(count_enc, base)? as usize;
        let table = c.p as *const [i32; 2];
        let (mut lo, mut hi) = (0usize, count);
        // The last entry whose start is at or below addr.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let start = base.wrapping_add((*table.add(mid))[0] as i64 as u64);
            if start <= addr {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return None;
        }
        let fde = base.wrapping_add((*table.add(lo - 1))[1] as i64 as u64) as *const u8;
        rule_from_fde(fde, addr, base)
    }
}

/// Where a register's caller value is.
#[derive(Clone, Copy, PartialEq)]
enum Saved {
    Same,
    At(i64),
    Undefined,
    Other,
}

#[derive(Clone, Copy)]
struct Row {
    cfa_reg: u64,
    cfa_off: i64,
    cfa_ok: bool,
    bp: Saved,
    ra: Saved,
}

const RBP: u64 = 6;
const RSP: u64 = 7;

unsafe fn rule_from_fde(fde: *const u8, addr: u64, hdr: u64) -> Option<u64> {
    // SAFETY: the FDE and its CIE lie in .eh_frame; every read is bounded
    // by the lengths they state.
    unsafe {
        let (fde_body, fde_end) = entry(fde)?;
        let id_at = fde_body;
        let cie_off = u32::from_le_bytes(*(id_at as *const [u8; 4])) as u64;
        if cie_off == 0 {
            return None; // a CIE, not an FDE
        }
        let cie = (id_at as u64).wrapping_sub(cie_off) as *const u8;
        let (cie_body, cie_end) = entry(cie)?;
        let mut c = Cursor {
            p: cie_body.wrapping_add(4),
            end: cie_end,
        };
        let version = c.u8()?;
        let mut aug = [0u8; 8];
        let mut n = 0;
        loop {
            let b = c.u8()?;
            if b == 0 {
                break;
            }
            if n < aug.len() {
                aug[n] = b;
            }
            n += 1;
        }
        let aug = &aug[..n.min(8)];
        if aug.contains(&b'e') {
            return None; // "eh": a pointer no modern toolchain writes
        }
        let code_align = c.uleb()? as i64;
        let data_align = c.sleb()?;
        let ra_reg = if version == 1 {
            c.u8()? as u64
        } else {
            c.uleb()?
        };
        let mut fde_enc = 0u8;
        let mut signal = false;
        if aug.first() == Some(&b'z') {
            let len = c.uleb()? as usize;
            let after = c.p.wrapping_add(len);
            for &a in &aug[1..] {
                match a {
                    b'R' => fde_enc = c.u8()?,
                    b'P' => {
                        let e = c.u8()?;
                        c.encoded(e & 0x7f, hdr)?;
                    }
                    b'L' => {
                        c.u8()?;
                    }
                    b'S' => signal = true,
                    _ => break,
                }
            }
            c.p = after;
        }
        let cie_code = (c.p, cie_end);

        let mut f = Cursor {
            p: id_at.wrapping_add(4),
            end: fde_end,
        };
        let start = f.encoded(fde_enc, hdr)?;
        let range = f.encoded(fde_enc & 0x0f, hdr)?;
        if addr < start || addr >= start.wrapping_add(range) {
            return None;
        }
        if aug.first() == Some(&b'z') {
            let len = f.uleb()? as usize;
            f.p = f.p.wrapping_add(len);
        }
        if signal {
            return Some(K_SIGNAL);
        }
        let unset = Row {
            cfa_reg: RSP,
            cfa_off: 8,
            cfa_ok: true,
            bp: Saved::Same,
            ra: Saved::Same,
        };
        let ctx = Ctx {
            code_align,
            data_align,
            ra_reg,
            addr,
        };
        let mut cie_c = Cursor {
            p: cie_code.0,
            end: cie_code.1,
        };
        let initial = run(&mut cie_c, unset, unset, &ctx, 0)?;
        let row = run(&mut f, initial, initial, &ctx, start)?;
        Some(to_rule(&row))
    }
}

/// The body and end of a CIE or FDE (after its length field).
unsafe fn entry(at: *const u8) -> Option<(*const u8, *const u8)> {
    // SAFETY: the length field is in .eh_frame (the caller's promise).
    unsafe {
        let len = u32::from_le_bytes(*(at as *const [u8; 4]));
        if len == 0 {
            return None;
        }
        if len == u32::MAX {
            let len = u64::from_le_bytes(*(at.add(4) as *const [u8; 8]));
            let body = at.wrapping_add(12);
            Some((body, body.wrapping_add(len as usize)))
        } else {
            let body = at.wrapping_add(4);
            Some((body, body.wrapping_add(len as usize)))
        }
    }
}

struct Ctx {
    code_align: i64,
    data_align: i64,
    ra_reg: u64,
    addr: u64,
}

fn to_rule(row: &Row) -> u64 {
    let ra = match row.ra {
        Saved::At(o) => o,
        Saved::Undefined => return K_END,
        _ => return K_STOP,
    };
    let bp = match row.bp {
        Saved::Same => 0,
        Saved::At(o) if o != 0 => o,
        _ => return K_STOP,
    };
    if !row.cfa_ok {
        return K_STOP;
    }
    let k = match row.cfa_reg {
        RSP => K_RSP,
        RBP => K_RBP,
        _ => return K_STOP,
    };
    pack(k, row.cfa_off, ra, bp)
}

/// Runs call-frame instructions from `loc` until the row that covers
/// `ctx.addr`. `initial` is the CIE's row (for DW_CFA_restore).
unsafe fn run(c: &mut Cursor, mut row: Row, initial: Row, ctx: &Ctx, mut loc: u64) -> Option<Row> {
    let mut stack = [row; 8];
    let mut depth = 0usize;
    let set = |row: &mut Row, reg: u64, v: Saved| {
        if reg == RBP {
            row.bp = v;
        } else if reg == ctx.ra_reg {
            row.ra = v;
        }
    };
    let get = |row: &Row, reg: u64| {
        if reg == RBP {
            row.bp
        } else if reg == ctx.ra_reg {
            row.ra
        } else {
            Saved::Same
        }
    };
    // SAFETY: every read goes through the bounded cursor.
    unsafe {
        while c.p < c.end {
            let op = c.u8()?;
            let advance = |loc: &mut u64, delta: u64| {
                *loc = loc.wrapping_add(delta.wrapping_mul(ctx.code_align as u64));
                *loc > ctx.addr
            };
            match op >> 6 {
                1 => {
                    if advance(&mut loc, (op & 0x3f) as u64) {
                        return Some(row);
                    }
                    continue;
                }
                2 => {
                    let off = c.uleb()? as i64 * ctx.data_align;
                    set(&mut row, (op & 0x3f) as u64, Saved::At(off));
                    continue;
                }
                3 => {
                    let reg = (op & 0x3f) as u64;
                    set(&mut row, reg, get(&initial, reg));
                    continue;
                }
                _ => {}
            }
            match op {
                0x00 => {}
                0x01 => {
                    loc = c.encoded(0x00, 0)?;
                    if loc > ctx.addr {
                        return Some(row);
                    }
                }
                0x02 => {
                    if advance(&mut loc, c.u8()? as u64) {
                        return Some(row);
                    }
                }
                0x03 => {
                    if advance(&mut loc, u16::from_le_bytes(c.fixed::<2>()?) as u64) {
                        return Some(row);
                    }
                }
                0x04 => {
                    if advance(&mut loc, u32::from_le_bytes(c.fixed::<4>()?) as u64) {
                        return Some(row);
                    }
                }
                0x05 => {
                    let reg = c.uleb()?;
                    let off = c.uleb()? as i64 * ctx.data_align;
                    set(&mut row, reg, Saved::At(off));
                }
                0x06 => {
                    let reg = c.uleb()?;
                    set(&mut row, reg, get(&initial, reg));
                }
                0x07 => {
                    let reg = c.uleb()?;
                    set(&mut row, reg, Saved::Undefined);
                }
                0x08 => {
                    let reg = c.uleb()?;
                    set(&mut row, reg, Saved::Same);
                }
                0x09 => {
                    let reg = c.uleb()?;
                    c.uleb()?;
                    set(&mut row, reg, Saved::Other);
                }
                0x0a => {
                    if depth == stack.len() {
                        return None;
                    }
                    stack[depth] = row;
                    depth += 1;
                }
                0x0b => {
                    if depth == 0 {
                        return None;
                    }
                    depth -= 1;
                    row = stack[depth];
                }
                0x0c => {
                    row.cfa_reg = c.uleb()?;
                    row.cfa_off = c.uleb()? as i64;
                    row.cfa_ok = true;
                }
                0x0d => {
                    row.cfa_reg = c.uleb()?;
                }
                0x0e => {
                    row.cfa_off = c.uleb()? as i64;
                }
                0x0f => {
                    let len = c.uleb()? as usize;
                    c.p = c.p.wrapping_add(len);
                    row.cfa_ok = false;
                }
                0x10 | 0x16 => {
                    let reg = c.uleb()?;
                    let len = c.uleb()? as usize;
                    c.p = c.p.wrapping_add(len);
                    set(&mut row, reg, Saved::Other);
                }
                0x11 => {
                    let reg = c.uleb()?;
                    let off = c.sleb()? * ctx.data_align;
                    set(&mut row, reg, Saved::At(off));
                }
                0x12 => {
                    row.cfa_reg = c.uleb()?;
                    row.cfa_off = c.sleb()? * ctx.data_align;
                    row.cfa_ok = true;
                }
                0x13 => {
                    row.cfa_off = c.sleb()? * ctx.data_align;
                }
                0x14 | 0x15 => {
                    let reg = c.uleb()?;
                    if op == 0x14 {
                        c.uleb()?;
                    } else {
                        c.sleb()?;
                    }
                    set(&mut row, reg, Saved::Other);
                }
                0x2e => {
                    c.uleb()?;
                }
                0x2f => {
                    let reg = c.uleb()?;
                    let off = -(c.uleb()? as i64) * ctx.data_align;
                    set(&mut row, reg, Saved::At(off));
                }
                _ => return None,
            }
        }
    }
    Some(row)
}
