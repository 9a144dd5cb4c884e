//! An LRU list over a table of its own, the way libCacheSim builds its
//! composite policies (LIRS's S, Q and NH; Cacheus's SR, R, H and
//! histories) out of separate LRU caches: head = most recent, each entry
//! with its own size, flags and counter, and a capacity the owner may move.
//! Like libCacheSim's, it can hold an id twice (a LIRS block demoted while
//! also resident in Q); a lookup finds the newer entry, and removing that
//! one uncovers the older.

use rustc_hash::FxHashMap;

use crate::list::{List, Table};

#[derive(Default)]
pub(crate) struct SubLru {
    pub cap: i64,
    pub t: Table,
    pub l: List,
    /// Older entries of ids entered again, oldest first.
    older: FxHashMap<u64, Vec<u32>>,
    entries: usize,
}

impl SubLru {
    pub fn with_cap(cap: i64) -> SubLru {
        SubLru {
            cap,
            ..SubLru::default()
        }
    }
    pub fn bytes(&self) -> i64 {
        self.l.bytes as i64
    }
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
    /// Entries, twins counted.
    pub fn len(&self) -> usize {
        self.entries
    }
    /// The newest entry of `id`.
    pub fn find(&self, id: u64) -> Option<u32> {
        self.t.find(id)
    }
    pub fn touch(&mut self, s: u32) {
        self.l.move_to_head(&mut self.t, s);
    }
    pub fn flags(&self, s: u32) -> u8 {
        self.t[s].tag
    }
    /// A new entry at the head (beside any older one of the same id).
    pub fn insert(&mut self, id: u64, size: u64, flags: u8) -> u32 {
        if let Some(old) = self.t.find(id) {
            self.older.entry(id).or_default().push(old);
        }
        let s = self.t.insert(id, size, flags);
        self.l.push_head(&mut self.t, s);
        self.entries += 1;
        s
    }
    /// Unlinks and frees one entry.
    fn drop_slot(&mut self, s: u32) {
        let id = self.t[s].id;
        self.l.unlink(&mut self.t, s);
        self.entries -= 1;
        if self.t.find(id) == Some(s) {
            self.t.remove(s);
            if let Some(v) = self.older.get_mut(&id) {
                let prev = v.pop().expect("older entries are never empty");
                if v.is_empty() {
                    self.older.remove(&id);
                }
                self.t.remap(id, prev);
            }
        } else {
            let v = self.older.get_mut(&id).expect("an older twin is listed");
            v.retain(|&x| x != s);
            if v.is_empty() {
                self.older.remove(&id);
            }
            self.t.free_slot(s);
        }
    }
    /// Removes the newest entry of `id`.
    pub fn remove(&mut self, id: u64) -> bool {
        match self.t.find(id) {
            Some(s) => {
                self.drop_slot(s);
                true
            }
            None => false,
        }
    }
    /// The oldest entry's (id, size, flags).
    pub fn tail(&self) -> Option<(u64, u64, u8)> {
        (self.entries > 0).then(|| {
            let e = &self.t[self.l.tail];
            (e.id, e.size, e.tag)
        })
    }
    pub fn pop_tail(&mut self) -> Option<(u64, u64, u8)> {
        let e = self.tail()?;
        self.drop_slot(self.l.tail);
        Some(e)
    }
    /// A whole request to it as an LRU cache of `cap` (libCacheSim's
    /// `cache_get_base` on an LRU): a hit moves to the head, a miss that
    /// fits evicts the oldest until it does and enters at the head.
    pub fn request(&mut self, id: u64, size: u64) {
        if let Some(s) = self.find(id) {
            self.touch(s);
            return;
        }
        if size as i64 > self.cap {
            return;
        }
        while self.bytes() + size as i64 > self.cap && !self.is_empty() {
            self.pop_tail();
        }
        self.insert(id, size, 0);
    }
}
