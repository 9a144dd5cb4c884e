//! The model of the allocator and of recent values that the writer and the
//! reader both keep, so that both make the same predictions. It is reset at
//! the start of every block (blocks are independent) and its memory is
//! bounded by the block: the objects allocated in it, and free lists
//! capped at [`FREE_LIST_CAP`] chunks per size class.

use rustc_hash::FxHashMap;

use crate::streams::TABLE;

/// Chunks remembered per size class.
pub const FREE_LIST_CAP: usize = 64;
/// Size classes below this many 16-byte units are indexed directly.
const DIRECT_CLASSES: usize = 4096;

/// The chunk size a glibc-like allocator gives `size` bytes on a 64-bit
/// machine: size plus an 8-byte header, rounded up to 16, at least 32.
/// Frees go to, and allocations are predicted from, the free list of this
/// class; the bump prediction adds it to the last allocation's address.
#[inline]
pub fn chunk(size: u64) -> u64 {
    (size.saturating_add(8 + 15) & !15).max(32)
}

/// The predictor state.
pub struct Model {
    /// Recent sizes, most recent first.
    pub sizes: [u64; TABLE],
    /// Recent attribute strings, most recent first.
    pub attrs: Vec<Vec<u8>>,
    /// Address and size of every object allocated in the block, by the
    /// order of allocation (the age of an object is how many allocations
    /// came after it, plus one).
    pub objects: Vec<(u64, u64)>,
    free_small: Vec<Vec<u64>>,
    free_large: FxHashMap<u64, Vec<u64>>,
    pub last_alloc: u64,
    pub last_size: u64,
    pub last_realloc_new: u64,
    pub time: u64,
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
            attrs: Vec::with_capacity(TABLE),
            objects: Vec::new(),
            free_small: Vec::new(),
            free_large: FxHashMap::default(),
            last_alloc: 0,
            last_size: 0,
            last_realloc_new: 0,
            time: 0,
            thread: 0,
            heap: 0,
        }
    }

    /// Forgets everything (a new block).
    pub fn reset(&mut self) {
        self.sizes = [0; TABLE];
        self.attrs.clear();
        self.objects.clear();
        for l in &mut self.free_small {
            l.clear();
        }
        self.free_large.clear();
        self.last_alloc = 0;
        self.last_size = 0;
        self.last_realloc_new = 0;
        self.time = 0;
        self.thread = 0;
        self.heap = 0;
    }

    /// The index of `size` in the recent-size table, moved to the front;
    /// a size not there is inserted at the front and `None` returned.
    #[inline]
    pub fn size_index(&mut self, size: u64) -> Option<usize> {
        let i = self.sizes.iter().position(|s| *s == size);
        let end = i.unwrap_or(TABLE - 1);
        self.sizes.copy_within(0..end, 1);
        self.sizes[0] = size;
        i
    }

    /// The size at `i` of the recent-size table, moved to the front.
    #[inline]
    pub fn size_at(&mut self, i: usize) -> u64 {
        let s = self.sizes[i];
        self.sizes.copy_within(0..i, 1);
        self.sizes[0] = s;
        s
    }

    /// The index of `a` in the recent-attributes table, moved to the front;
    /// new attributes are inserted at the front and `None` returned.
    pub fn attr_index(&mut self, a: &[u8]) -> Option<usize> {
        let i = self.attrs.iter().position(|x| x == a);
        match i {
            Some(i) => {
                let v = self.attrs.remove(i);
                self.attrs.insert(0, v);
            }
            None => self.attr_insert(a.to_vec()),
        }
        i
    }

    /// The attributes at `i`, moved to the front.
    pub fn attr_at(&mut self, i: usize) -> Option<&[u8]> {
        if i >= self.attrs.len() {
            return None;
        }
        let v = self.attrs.remove(i);
        self.attrs.insert(0, v);
        Some(&self.attrs[0])
    }

    pub fn attr_insert(&mut self, a: Vec<u8>) {
        if self.attrs.len() == TABLE {
            self.attrs.pop();
        }
        self.attrs.insert(0, a);
    }

    fn free_list(&mut self, class: u64) -> &mut Vec<u64> {
        let i = (class / 16) as usize;
        if i < DIRECT_CLASSES {
            if i >= self.free_small.len() {
                self.free_small.resize_with(i + 1, Vec::new);
            }
            &mut self.free_small[i]
        } else {
            self.free_large.entry(class).or_default()
        }
    }

    /// The address predictions for an allocation of `size`, in code order:
    /// the top of its class's free list, bump continuation, the last
    /// realloc's new address.
    #[inline]
    pub fn predictions(&mut self, size: u64) -> [Option<u64>; 3] {
        let freed = self.free_list(chunk(size)).last().copied();
        [
            freed,
            Some(self.last_alloc.wrapping_add(chunk(self.last_size))),
            Some(self.last_realloc_new),
        ]
    }

    /// The chunk at the top of `size`'s free list is reused.
    #[inline]
    pub fn take_freed(&mut self, size: u64) {
        self.free_list(chunk(size)).pop();
    }

    /// An allocation of `size` at `addr`: if `addr` is the top of its
    /// class's free list, that chunk is reused and leaves the list (whatever
    /// code the address had).
    #[inline]
    pub fn reuse_if_top(&mut self, addr: u64, size: u64) {
        let l = self.free_list(chunk(size));
        if l.last() == Some(&addr) {
            l.pop();
        }
    }

    /// An object of `size` is allocated at `addr`; returns its index.
    #[inline]
    pub fn allocated(&mut self, addr: u64, size: u64) -> usize {
        self.last_alloc = addr;
        self.last_size = size;
        self.objects.push((addr, size));
        self.objects.len() - 1
    }

    /// The object of index `i` is freed: its chunk joins its class's list.
    #[inline]
    pub fn freed(&mut self, i: usize) {
        let (addr, size) = self.objects[i];
        let l = self.free_list(chunk(size));
        if l.len() == FREE_LIST_CAP {
            l.remove(0);
        }
        l.push(addr);
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
    }

    #[test]
    fn freed_chunks_are_predicted_lifo() {
        let mut m = Model::new();
        let a = m.allocated(0x1000, 24);
        let b = m.allocated(0x1020, 20);
        m.freed(a);
        m.freed(b);
        assert_eq!(m.predictions(30)[0], None);
        assert_eq!(m.predictions(16)[0], Some(0x1020));
        m.take_freed(16);
        assert_eq!(m.predictions(16)[0], Some(0x1000));
    }
}
