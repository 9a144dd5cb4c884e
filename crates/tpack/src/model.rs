//! The model of the allocator and of recent values that the writer and the
//! reader both keep, so that both make the same predictions. It is reset at
//! the start of every block (blocks are independent) and its memory is
//! bounded by the block: the objects allocated in it, and free lists
//! capped at [`FREE_LIST_CAP`] chunks per size class.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::streams::{TABLE, unzigzag, zigzag};
use crate::succession::Succession;

/// Chunks remembered per size class beyond the thread cache.
pub const FREE_LIST_CAP: usize = 4096;
/// Chunks freed as unknown objects that are remembered.
pub const UNKNOWN_CAP: usize = 64;
/// glibc's thread cache holds at most this many chunks per size class.
pub const TCACHE: usize = 7;
/// Recent frees remembered in order, for allocations of another class.
pub const FREE_RING: usize = 4096;
/// Ages this close to the last one make the next age coded against it.
pub const AGE_NEAR: u64 = 64;
/// Size classes below this many 16-byte units are indexed directly.
const DIRECT_CLASSES: usize = 4096;

/// The chunk size a glibc-like allocator gives `size` bytes on a 64-bit
/// machine: size plus an 8-byte header, rounded up to 16, at least 32.
#[inline]
pub fn chunk(size: u64) -> u64 {
    (size.saturating_add(8 + 15) & !15).max(32)
}

/// The freed chunks of one size class, as glibc keeps them: a thread
/// cache of up to [`TCACHE`] chunks (LIFO), and beyond it a LIFO list of
/// up to [`FREE_LIST_CAP`] (glibc's fastbins and bins, which have no cap:
/// a burst of frees is reused in reverse long after).
#[derive(Clone, Debug, Default)]
pub struct Bin {
    tcache: Vec<u64>,
    spill: VecDeque<u64>,
    /// The address of the class's last allocation (0: none yet).
    pub last: u64,
}

impl Bin {
    /// Pushes a freed chunk; returns the chunk dropped off the end, if any.
    fn push(&mut self, addr: u64) -> Option<u64> {
        if self.tcache.len() < TCACHE {
            self.tcache.push(addr);
            return None;
        }
        let dropped = if self.spill.len() == FREE_LIST_CAP {
            self.spill.pop_front()
        } else {
            None
        };
        self.spill.push_back(addr);
        dropped
    }

    /// The chunk at `depth` in reuse order: the thread cache from its top,
    /// then the rest from its top.
    #[inline]
    pub fn at(&self, depth: usize) -> Option<u64> {
        let t = self.tcache.len();
        if depth < t {
            Some(self.tcache[t - 1 - depth])
        } else {
            let d = depth - t;
            let s = self.spill.len();
            (d < s).then(|| self.spill[s - 1 - d])
        }
    }

    /// The depth of `addr` in reuse order.
    #[inline]
    pub fn depth(&self, addr: u64) -> Option<usize> {
        if let Some(p) = self.tcache.iter().rev().position(|a| *a == addr) {
            return Some(p);
        }
        self.spill
            .iter()
            .rev()
            .position(|a| *a == addr)
            .map(|p| p + self.tcache.len())
    }

    /// Takes the chunk at `depth` (which must exist). A chunk taken from
    /// beyond an empty thread cache refills the cache from the rest, top
    /// first, as glibc's malloc moves a bin's chunks into the cache when it
    /// finds the cache empty.
    fn take(&mut self, depth: usize) -> u64 {
        let t = self.tcache.len();
        if depth < t {
            // The top (LIFO reuse, the usual case) without a general remove.
            return if depth == 0 {
                self.tcache.pop().expect("the depth was resolved")
            } else {
                self.tcache.remove(t - 1 - depth)
            };
        }
        let s = self.spill.len();
        let a = if depth == t {
            self.spill.pop_back()
        } else {
            self.spill.remove(s - 1 - (depth - t))
        }
        .expect("the depth was resolved");
        if t == 0 {
            while self.tcache.len() < TCACHE
                && let Some(a) = self.spill.pop_back()
            {
                self.tcache.push(a);
            }
        }
        a
    }

    fn clear(&mut self) {
        self.tcache.clear();
        self.spill.clear();
        self.last = 0;
    }
}

/// How an allocated address was predicted (the address codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guess {
    /// A freed chunk of the size's class, at this depth in reuse order.
    Freed(usize),
    /// The last allocation's address plus its chunk size.
    Bump,
    /// The top pointer: where the last allocation not taken from a free
    /// list ended.
    Top,
    /// The new address of the last realloc.
    ReallocNew,
    /// The last allocation of the same class plus its chunk size (pools of
    /// one class carved one after another while other classes interleave).
    ClassBump,
    /// A chunk freed `age` frees ago, of another class.
    Other(u64),
    /// A chunk whose free named no object of the block (allocated in an
    /// earlier block, so its size is unknown), at this depth of the LIFO
    /// list of such chunks.
    Unknown(usize),
    /// Not predicted.
    Miss,
}

/// An attribute string as one integer: the string itself when it is
/// shorter than 16 bytes (a site is at most 11), with its length in the top
/// byte; else a hash of it with 0xff in the top byte, which a search then
/// confirms byte by byte. Equal strings have equal keys.
#[inline]
pub(crate) fn attr_key(a: &[u8]) -> u128 {
    if a.len() < 16 {
        // In registers: bytes copied into an array and read back as one
        // integer stalled on every call (the wide load could not be
        // served from the narrow stores).
        let mut k = (a.len() as u128) << 120;
        for (i, &b) in a.iter().enumerate() {
            k |= (b as u128) << (8 * i);
        }
        k
    } else {
        use std::hash::BuildHasher;
        (0xffu128 << 120) | rustc_hash::FxBuildHasher.hash_one(a) as u128
    }
}

/// An attribute string's id in the block's [`Succession`] (`NO_ID` in
/// blocks of versions 1 and 2, which keep none).
const NO_ID: u32 = u32::MAX;

/// How a version-3 writer codes an event's attributes (not empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrCode {
    /// The last attributes' follower of this rank.
    Follower(usize),
    /// Entry of the recent table.
    Recent(usize),
    /// Stored in full.
    New,
}

/// The [`TABLE`] most recent attribute strings, most recent first.
#[derive(Default)]
struct Recent {
    /// The strings, in slots that never move.
    attrs: Vec<Vec<u8>>,
    /// Each slot's [`attr_key`], so that a search compares integers.
    keys: Vec<u128>,
    /// Each slot's id in the block's succession (version 3).
    ids: Vec<u32>,
    /// Slot numbers, most recent first (moving a byte is cheaper than
    /// moving a vector).
    order: Vec<u8>,
}

impl Recent {
    fn clear(&mut self) {
        self.attrs.clear();
        self.keys.clear();
        self.ids.clear();
        self.order.clear();
    }

    /// The index of `a` (of key `key`), moved to the front; else `a` is
    /// inserted at the front, with `id`, and `None` returned.
    #[inline]
    fn touch(&mut self, a: &[u8], key: u128, id: u32) -> Option<usize> {
        let i = self.order.iter().position(|&slot| {
            let slot = slot as usize;
            self.keys[slot] == key && (a.len() < 16 || self.attrs[slot] == a)
        });
        match i {
            Some(i) => self.front_at(i),
            None => self.insert(a, key, id),
        }
        i
    }

    /// Moves entry `i` to the front.
    #[inline]
    fn front_at(&mut self, i: usize) {
        // By hand: `rotate_right` on a few bytes took a general routine.
        let slot = self.order[i];
        for j in (1..=i).rev() {
            self.order[j] = self.order[j - 1];
        }
        self.order[0] = slot;
    }

    /// Moves entry `i` to the front; false if the table holds fewer.
    #[inline]
    fn use_at(&mut self, i: usize) -> bool {
        if i >= self.order.len() {
            return false;
        }
        if i > 0 {
            self.front_at(i);
        }
        true
    }

    /// The front entry (empty when the table is).
    #[inline]
    fn front(&self) -> &[u8] {
        self.order
            .first()
            .map_or(&[], |&slot| &self.attrs[slot as usize])
    }

    /// The front entry's id (the table is not empty).
    #[inline]
    fn front_id(&self) -> u32 {
        self.ids[self.order[0] as usize]
    }

    #[inline]
    fn set_front_id(&mut self, id: u32) {
        self.ids[self.order[0] as usize] = id;
    }

    /// Inserts `a` at the front, reusing the least recent slot when the
    /// table is full.
    fn insert(&mut self, a: &[u8], key: u128, id: u32) {
        if self.order.len() == TABLE {
            let slot = self.order[TABLE - 1];
            // The slot's buffer is reused: no allocation per new value.
            let v = &mut self.attrs[slot as usize];
            v.clear();
            v.extend_from_slice(a);
            self.keys[slot as usize] = key;
            self.ids[slot as usize] = id;
            self.front_at(TABLE - 1);
        } else {
            self.attrs.push(a.to_vec());
            self.keys.push(key);
            self.ids.push(id);
            self.order.insert(0, (self.attrs.len() - 1) as u8);
        }
    }
}

/// The predictor state.
pub struct Model {
    /// Recent sizes, most recent first.
    pub sizes: [u64; TABLE],
    /// Recent attribute strings.
    recent: Recent,
    /// Which attributes followed which (format version 3).
    succ: Succession,
    /// Address and size of every object allocated in the block, by the
    /// order of allocation (the age of an object is how many allocations
    /// came after it, plus one).
    pub objects: Vec<(u64, u64)>,
    bins_small: Vec<Bin>,
    bins_large: FxHashMap<u64, Bin>,
    /// For the writer: how many bins hold each address, so that a search
    /// is made only for an address some bin holds.
    index: Option<FxHashMap<(u64, u64), u32>>,
    /// The last [`FREE_RING`] frees of known objects: address and class.
    ring: Vec<(u64, u64)>,
    /// Frees so far in the block.
    pub frees: u64,
    /// Chunks freed as unknown objects, most recent last.
    unknown: Vec<u64>,
    /// The writer's count of each address in `unknown` (so that most
    /// allocations need not scan it).
    unknown_index: Option<FxHashMap<u64, u32>>,
    pub last_alloc: u64,
    pub last_size: u64,
    /// The last address freed (or realloc'd) with age 0 (0: none yet).
    pub last_unknown: u64,
    pub top: u64,
    pub last_realloc_new: u64,
    pub time: u64,
    /// Whether the block's last event was an allocation (the context of
    /// the next time).
    pub after_alloc: bool,
    /// The age last coded for a freed address (0: none yet in the block).
    last_age: u64,
    /// Whether the next age is coded against `last_age` (the last two ages
    /// were near each other) or as itself.
    ages_near: bool,
    pub thread: u64,
    pub heap: u64,
}

impl Default for Model {
    fn default() -> Self {
        Model::new()
    }
}

impl Model {
    pub fn new() -> Model {
        Model {
            sizes: [0; TABLE],
            recent: Recent::default(),
            succ: Succession::default(),
            objects: Vec::new(),
            // Every direct class's bin made up front (256 KiB): looking a
            // bin up is then an index, with no growth to check for.
            bins_small: vec![Bin::default(); DIRECT_CLASSES],
            bins_large: FxHashMap::default(),
            index: None,
            ring: vec![(0, 0); FREE_RING],
            frees: 0,
            unknown: Vec::new(),
            unknown_index: None,
            last_alloc: 0,
            last_size: 0,
            last_unknown: 0,
            top: 0,
            last_realloc_new: 0,
            time: 0,
            after_alloc: false,
            last_age: 0,
            ages_near: true,
            thread: 0,
            heap: 0,
        }
    }

    /// A model that also indexes the chunks in its bins (the writer's, to
    /// find an address's depth without searching every bin).
    pub fn with_index() -> Model {
        Model {
            index: Some(FxHashMap::default()),
            unknown_index: Some(FxHashMap::default()),
            ..Model::new()
        }
    }

    /// Whether some bin may hold `addr` (always true without an index).
    #[inline]
    pub fn maybe_binned(&self, addr: u64, class: u64) -> bool {
        self.index
            .as_ref()
            .is_none_or(|i| i.contains_key(&(addr, class)))
    }

    fn index_add(&mut self, addr: u64, class: u64) {
        if let Some(i) = &mut self.index {
            *i.entry((addr, class)).or_default() += 1;
        }
    }

    fn index_sub(&mut self, addr: u64, class: u64) {
        if let Some(i) = &mut self.index
            && let Some(n) = i.get_mut(&(addr, class))
        {
            *n -= 1;
            if *n == 0 {
                i.remove(&(addr, class));
            }
        }
    }

    fn push_chunk(&mut self, class: u64, addr: u64) {
        self.index_add(addr, class);
        if let Some(d) = self.bin_mut(class).push(addr) {
            self.index_sub(d, class);
        }
    }

    fn take_chunk(&mut self, class: u64, depth: usize) {
        let a = self.bin_mut(class).take(depth);
        self.index_sub(a, class);
    }

    fn remove_chunk(&mut self, class: u64, addr: u64) {
        if !self.maybe_binned(addr, class) {
            return;
        }
        if let Some(d) = self.bin(class).and_then(|b| b.depth(addr)) {
            self.take_chunk(class, d);
        }
    }

    /// Forgets everything (a new block).
    pub fn reset(&mut self) {
        self.sizes = [0; TABLE];
        self.recent.clear();
        self.succ.reset();
        self.objects.clear();
        for b in &mut self.bins_small {
            b.clear();
        }
        self.bins_large.clear();
        if let Some(i) = &mut self.index {
            i.clear();
        }
        self.ring.fill((0, 0));
        self.frees = 0;
        self.unknown.clear();
        if let Some(i) = &mut self.unknown_index {
            i.clear();
        }
        self.last_alloc = 0;
        self.last_size = 0;
        self.last_unknown = 0;
        self.top = 0;
        self.last_realloc_new = 0;
        self.time = 0;
        self.after_alloc = false;
        self.last_age = 0;
        self.ages_near = true;
        self.thread = 0;
        self.heap = 0;
    }

    /// The free-age code of `age` (≥ 1; 0 is left for addresses that are
    /// no object of the block): while the last two ages were within
    /// [`AGE_NEAR`] of each other, zigzag(age − the last age) + 1 (runs of
    /// objects freed in the order they were made have the same age, or one
    /// less, each time); else the age itself (objects freed at random,
    /// whose differences are wider than the ages).
    #[inline]
    pub fn age_code(&mut self, age: u64) -> u64 {
        let v = if self.ages_near {
            zigzag(age.wrapping_sub(self.last_age) as i64) + 1
        } else {
            age
        };
        self.note_age(age);
        v
    }

    /// The age a free-age code `v` ≥ 1 stands for (the reader checks it
    /// names an object).
    #[inline]
    pub fn age_of_code(&mut self, v: u64) -> u64 {
        let age = if self.ages_near {
            self.last_age.wrapping_add(unzigzag(v - 1) as u64)
        } else {
            v
        };
        self.note_age(age);
        age
    }

    #[inline]
    fn note_age(&mut self, age: u64) {
        self.ages_near = age.abs_diff(self.last_age) <= AGE_NEAR;
        self.last_age = age;
    }

    /// The index of `size` in the recent-size table, moved to the front;
    /// a size not there is inserted at the front and `None` returned.
    #[inline]
    pub fn size_index(&mut self, size: u64) -> Option<usize> {
        let i = self.sizes.iter().position(|s| *s == size);
        let end = i.unwrap_or(TABLE - 1);
        for j in (1..=end).rev() {
            self.sizes[j] = self.sizes[j - 1];
        }
        self.sizes[0] = size;
        i
    }

    /// The size at `i` of the recent-size table, moved to the front.
    #[inline]
    pub fn size_at(&mut self, i: usize) -> u64 {
        let s = self.sizes[i];
        for j in (1..=i).rev() {
            self.sizes[j] = self.sizes[j - 1];
        }
        self.sizes[0] = s;
        s
    }

    /// Puts a size known not to be in the recent-size table at its front
    /// (the reader's side of a new size: the writer codes a size as new
    /// only when its search failed).
    #[inline]
    pub fn size_insert(&mut self, size: u64) {
        self.sizes.copy_within(0..TABLE - 1, 1);
        self.sizes[0] = size;
    }

    /// The index of `a` in the recent-attributes table, moved to the front;
    /// new attributes are inserted at the front and `None` returned
    /// (format versions 1 and 2).
    pub fn attr_index(&mut self, a: &[u8]) -> Option<usize> {
        self.recent.touch(a, attr_key(a), NO_ID)
    }

    /// Moves the attributes at `i` to the front; false if the table holds
    /// fewer. In line: most records repeat the front entry (`i` = 0),
    /// which has nowhere to move.
    #[inline]
    pub fn attr_use(&mut self, i: usize) -> bool {
        self.recent.use_at(i)
    }

    /// The attributes at `i`, moved to the front.
    pub fn attr_at(&mut self, i: usize) -> Option<&[u8]> {
        self.attr_use(i).then(|| self.attr_front_value())
    }

    /// The most recent attributes (empty when the table is).
    #[inline]
    pub fn attr_front_value(&self) -> &[u8] {
        self.recent.front()
    }

    /// Inserts new attributes at the front, reusing the least recent slot
    /// when the table is full (format versions 1 and 2).
    pub fn attr_insert(&mut self, a: &[u8]) {
        self.recent.insert(a, attr_key(a), NO_ID);
    }

    /// Version 3: how the writer codes attributes `a` (not empty), with
    /// both tables brought up to date as the reader will.
    #[inline]
    pub fn attr_code(&mut self, a: &[u8]) -> AttrCode {
        let key = attr_key(a);
        if let Some((k, id)) = self.succ.rank(a) {
            self.recent.touch(a, key, id);
            self.succ.advance(id);
            return AttrCode::Follower(k);
        }
        let (code, id) = match self.recent.touch(a, key, NO_ID) {
            Some(i) => (AttrCode::Recent(i), self.recent.front_id()),
            None => {
                // New to the table, not always to the block.
                let id = self.succ.intern(a, key);
                self.recent.set_front_id(id);
                (AttrCode::New, id)
            }
        };
        self.succ.advance(id);
        code
    }

    /// Version 3, reading: the last attributes' follower of rank `k` comes
    /// next. `None` if it has no such follower; else whether they are the
    /// same as the last.
    #[inline]
    pub fn attr_follow(&mut self, k: usize) -> Option<bool> {
        let id = self.succ.follower(k)?;
        let same = self.succ.last() == Some(id);
        let a = self.succ.name(id);
        self.recent.touch(a, attr_key(a), id);
        self.succ.advance(id);
        Some(same)
    }

    /// Version 3, reading: entry `i` of the recent table comes next. `None`
    /// if the table is shorter; else whether they are the same as the last.
    #[inline]
    pub fn attr_recent(&mut self, i: usize) -> Option<bool> {
        if !self.recent.use_at(i) {
            return None;
        }
        let id = self.recent.front_id();
        let same = self.succ.last() == Some(id);
        self.succ.advance(id);
        Some(same)
    }

    /// Version 3, reading: attributes `a` stored in full come next; whether
    /// they are the same as the last.
    pub fn attr_new(&mut self, a: &[u8]) -> bool {
        let key = attr_key(a);
        let id = self.succ.intern(a, key);
        self.recent.insert(a, key, id);
        let same = self.succ.last() == Some(id);
        self.succ.advance(id);
        same
    }

    #[inline]
    fn bin_mut(&mut self, class: u64) -> &mut Bin {
        let i = (class / 16) as usize;
        if i < DIRECT_CLASSES {
            &mut self.bins_small[i]
        } else {
            self.large_bin_mut(class)
        }
    }

    /// The bin of a class beyond the direct ones (kept out of line: its
    /// hash table would make every lookup save registers).
    #[inline(never)]
    fn large_bin_mut(&mut self, class: u64) -> &mut Bin {
        self.bins_large.entry(class).or_default()
    }

    /// The bin of a class, if it has one.
    #[inline]
    pub fn bin(&self, class: u64) -> Option<&Bin> {
        let i = (class / 16) as usize;
        if i < DIRECT_CLASSES {
            self.bins_small.get(i)
        } else {
            self.large_bin(class)
        }
    }

    #[inline(never)]
    fn large_bin(&self, class: u64) -> Option<&Bin> {
        self.bins_large.get(&class)
    }

    /// What a missed address of `size` is coded against: the last
    /// allocation of its class, else the last allocation.
    #[inline]
    pub fn miss_base(&self, size: u64) -> u64 {
        match self.bin(chunk(size)) {
            Some(b) if b.last != 0 => b.last,
            _ => self.last_alloc,
        }
    }

    /// What an address freed with age 0 is coded against: the last such
    /// address, else the last allocation.
    #[inline]
    pub fn unknown_base(&self) -> u64 {
        if self.last_unknown != 0 {
            self.last_unknown
        } else {
            self.last_alloc
        }
    }

    /// Where the bump prediction points.
    #[inline]
    pub fn bump(&self) -> u64 {
        self.last_alloc.wrapping_add(chunk(self.last_size))
    }

    /// The address a guess stands for (`None`: the guess names no chunk).
    #[inline]
    pub fn resolve(&self, size: u64, g: Guess) -> Option<u64> {
        match g {
            Guess::Freed(d) => self.bin(chunk(size))?.at(d),
            Guess::Bump => Some(self.bump()),
            Guess::Top => Some(self.top),
            Guess::ReallocNew => Some(self.last_realloc_new),
            Guess::ClassBump => self
                .bin(chunk(size))
                .filter(|b| b.last != 0)
                .map(|b| b.last.wrapping_add(chunk(size))),
            Guess::Other(age) => self.ring_at(age).map(|(a, _)| a),
            Guess::Unknown(d) => {
                let n = self.unknown.len();
                (d < n).then(|| self.unknown[n - 1 - d])
            }
            Guess::Miss => None,
        }
    }

    /// The free `age` frees ago (1 = the last), if remembered.
    #[inline]
    pub fn ring_at(&self, age: u64) -> Option<(u64, u64)> {
        if age == 0 || age > FREE_RING as u64 || age > self.frees {
            return None;
        }
        Some(self.ring[((self.frees - age) % FREE_RING as u64) as usize])
    }

    /// An object of `size` is allocated at `addr`, as guessed by `g`;
    /// returns its index.
    pub fn allocated(&mut self, addr: u64, size: u64, g: Guess) -> usize {
        match g {
            Guess::Freed(d) => self.take_chunk(chunk(size), d),
            Guess::Other(age) => {
                if let Some((a, class)) = self.ring_at(age) {
                    self.remove_chunk(class, a);
                }
            }
            Guess::Unknown(d) => {
                let n = self.unknown.len();
                let a = self.unknown.remove(n - 1 - d);
                self.unknown_unindex(a);
            }
            Guess::Bump | Guess::Top | Guess::Miss => self.top = addr.wrapping_add(chunk(size)),
            Guess::ReallocNew => self.top = self.top.max(addr.wrapping_add(chunk(size))),
            Guess::ClassBump => {}
        }
        self.bin_mut(chunk(size)).last = addr;
        self.last_alloc = addr;
        self.last_size = size;
        self.objects.push((addr, size));
        self.objects.len() - 1
    }

    /// A realloc resized object `i` in place to `size`. Its chunk class
    /// follows; a shrink by at least a minimal chunk frees the remainder
    /// after it, as glibc splits the chunk.
    pub fn resized(&mut self, i: usize, size: u64) {
        let (addr, old) = self.objects[i];
        self.objects[i].1 = size;
        let (co, cn) = (chunk(old), chunk(size));
        if co >= cn + 32 {
            self.push_chunk(co - cn, addr.wrapping_add(cn));
        }
    }

    /// The depth of `addr` among the chunks freed as unknown objects.
    #[inline]
    pub fn unknown_depth(&self, addr: u64) -> Option<usize> {
        if self
            .unknown_index
            .as_ref()
            .is_some_and(|i| !i.contains_key(&addr))
        {
            return None;
        }
        self.unknown.iter().rev().position(|a| *a == addr)
    }

    fn unknown_unindex(&mut self, addr: u64) {
        if let Some(i) = &mut self.unknown_index
            && let Some(n) = i.get_mut(&addr)
        {
            *n -= 1;
            if *n == 0 {
                i.remove(&addr);
            }
        }
    }

    /// A free of `addr`, no object of the block: its chunk joins the list
    /// of unknown chunks (at most [`UNKNOWN_CAP`]; the oldest drops).
    #[inline]
    pub fn freed_unknown(&mut self, addr: u64) {
        if self.unknown.len() == UNKNOWN_CAP {
            let a = self.unknown.remove(0);
            self.unknown_unindex(a);
        }
        self.unknown.push(addr);
        if let Some(i) = &mut self.unknown_index {
            *i.entry(addr).or_default() += 1;
        }
    }

    /// A chunk of `class` at `addr` is freed: it joins its class's bin and
    /// the ring of recent frees.
    #[inline]
    fn freed_chunk(&mut self, addr: u64, class: u64) {
        self.push_chunk(class, addr);
        let at = (self.frees % FREE_RING as u64) as usize;
        self.ring[at] = (addr, class);
        self.frees += 1;
    }

    /// The object of index `i` is freed: its chunk joins its class's bin
    /// and the ring of recent frees.
    #[inline]
    pub fn freed(&mut self, i: usize) {
        let (addr, size) = self.objects[i];
        self.freed_chunk(addr, chunk(size));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_glibc_like() {
        assert_eq!(chunk(0), 32);
        assert_eq!(chunk(24), 32);
        assert_eq!(chunk(25), 48);
        assert_eq!(chunk(100), 112);
        assert_eq!(chunk(u64::MAX), !15);
    }

    #[test]
    fn recent_tables_move_to_front() {
        let mut m = Model::new();
        assert_eq!(m.size_index(5), None);
        assert_eq!(m.size_index(7), None);
        assert_eq!(m.size_index(5), Some(1));
        assert_eq!(m.sizes[..2], [5, 7]);
        assert_eq!(m.size_at(1), 7);
        assert_eq!(m.attr_index(b"a"), None);
        assert_eq!(m.attr_index(b"b"), None);
        assert_eq!(m.attr_index(b"a"), Some(1));
        assert_eq!(m.attr_at(1), Some(&b"b"[..]));
        // The reader's way: move to the front, or say the table is short.
        assert!(m.attr_use(0));
        assert_eq!(m.attr_front_value(), b"b");
        assert!(m.attr_use(1));
        assert_eq!(m.attr_front_value(), b"a");
        assert!(!m.attr_use(2));
        assert_eq!(m.attr_front_value(), b"a");
    }

    #[test]
    fn attributes_are_found_by_their_bytes_whatever_their_length() {
        let mut m = Model::new();
        // Strings that share a prefix, differ only in length or in a byte
        // past the 16th, and the empty string, are all different entries.
        let long_a = [7u8; 40];
        let mut long_b = long_a;
        long_b[39] = 8;
        let all: [&[u8]; 7] = [
            b"",
            b"\x01",
            b"\x01\x00",
            &[9; 15],
            &[9; 16],
            &long_a,
            &long_b,
        ];
        for a in all {
            assert_eq!(m.attr_index(a), None, "{a:?} is new");
        }
        // Each is found again at its place from the front (most recent
        // first), and moved to the front.
        for (back, a) in all.iter().enumerate() {
            let want = all.len() - 1;
            assert_eq!(m.attr_index(a), Some(want), "{a:?} ({back})");
        }
        assert_eq!(m.attr_front_value(), &long_b[..]);
        // A slot reused for a new string forgets the old one's key.
        for i in 0..TABLE as u8 {
            m.attr_index(&[100 + i; 20]);
        }
        assert_eq!(m.attr_index(&long_a), None);
        assert_eq!(m.attr_index(b"\x01"), None);
    }

    /// Version 3's codes for a sequence of sites worked out by hand, and
    /// the reader's calls on those codes giving back the same sites.
    #[test]
    fn attributes_are_coded_as_followers_of_the_last_then_as_recent() {
        use AttrCode::*;
        let (a, b, c) = (&b"\x02\x05"[..], &b"\x02\x07"[..], &b"\x02\x09"[..]);
        let seq = [a, b, a, b, c, a, b, a, a, a];
        // a: new. b: new. a: b has no follower, a is table entry 1. b: a's
        // followers [b], rank 0. c: new (b's followers [a] miss). a: c has
        // none; table [c, b, a]: entry 2. b: a's followers [b], rank 0.
        // a: b's followers [c, a]: rank 1. a: a's followers [b]: no; table
        // front: entry 0. a: a's followers now [a, b]: rank 0.
        let want = [
            New,
            New,
            Recent(1),
            Follower(0),
            New,
            Recent(2),
            Follower(0),
            Follower(1),
            Recent(0),
            Follower(0),
        ];
        let mut w = Model::new();
        let got: Vec<AttrCode> = seq.iter().map(|s| w.attr_code(s)).collect();
        assert_eq!(got, want);
        let mut r = Model::new();
        for (i, (code, s)) in want.iter().zip(seq).enumerate() {
            let same = match *code {
                Follower(k) => r.attr_follow(k).unwrap(),
                Recent(k) => r.attr_recent(k).unwrap(),
                New => r.attr_new(s),
            };
            assert_eq!(r.attr_front_value(), s, "record {i}");
            assert_eq!(same, i > 0 && seq[i - 1] == s, "record {i}");
        }
        // Codes that name nothing: no follower of that rank, no such entry.
        assert_eq!(r.attr_follow(3), None);
        assert_eq!(r.attr_recent(5), None);
        // A new block forgets both.
        r.reset();
        assert_eq!(r.attr_follow(0), None);
        assert_eq!(r.attr_recent(0), None);
    }

    #[test]
    fn freed_chunks_are_predicted_in_reuse_order() {
        let mut m = Model::new();
        let objs: Vec<usize> = (0..10)
            .map(|i| m.allocated(0x1000 + 32 * i, 24, Guess::Miss))
            .collect();
        for i in &objs {
            m.freed(*i);
        }
        // The cache holds the first seven frees, the rest lie beyond it.
        let bin = m.bin(chunk(24)).unwrap();
        assert_eq!(bin.at(0), Some(0x1000 + 32 * 6));
        assert_eq!(bin.at(6), Some(0x1000));
        assert_eq!(bin.at(7), Some(0x1000 + 32 * 9));
        assert_eq!(bin.depth(0x1000 + 32 * 8), Some(8));
        assert_eq!(m.resolve(24, Guess::Freed(0)), Some(0x1000 + 32 * 6));
        // The last free, of another class's view: age 1.
        assert_eq!(m.ring_at(1), Some((0x1000 + 32 * 9, 32)));
        assert_eq!(m.resolve(100, Guess::Other(10)), Some(0x1000));
        assert_eq!(m.resolve(100, Guess::Other(11)), None);
        // Emptying the cache leaves the rest where it is; taking from the
        // rest with the cache empty moves the rest into the cache, top first.
        for _ in 0..7 {
            m.allocated(0, 24, Guess::Freed(0));
        }
        let bin = m.bin(chunk(24)).unwrap();
        assert_eq!(bin.at(0), Some(0x1000 + 32 * 9));
        assert_eq!(bin.at(2), Some(0x1000 + 32 * 7));
        m.allocated(0, 24, Guess::Freed(0));
        let bin = m.bin(chunk(24)).unwrap();
        assert_eq!(bin.at(0), Some(0x1000 + 32 * 7));
        assert_eq!(bin.at(1), Some(0x1000 + 32 * 8));
        assert_eq!(bin.at(2), None);
    }
}
