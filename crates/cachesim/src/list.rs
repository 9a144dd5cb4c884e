//! The storage of the policies that hold slot numbers across evictions
//! (CLOCK, SIEVE, S3-FIFO, ARC, 2Q, ghost lists; LRU and FIFO use
//! [`crate::ordered`]): a table of cached (or ghost) objects in a slab,
//! found by id through a hash map, threaded on intrusive doubly-linked
//! lists by slot number. Head = most recently linked.

use rustc_hash::FxHashMap;

pub(crate) const NIL: u32 = u32::MAX;

/// One object's entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub id: u64,
    /// Charge against capacity: bytes, or 1 when counting objects.
    pub size: u64,
    /// A policy's counter (CLOCK bits, SIEVE visited, LFU and S3-FIFO
    /// frequency).
    pub freq: u64,
    /// Which of a policy's lists holds the entry.
    pub tag: u8,
    /// Written since it was admitted (kept by CLOCK and SIEVE, see
    /// [`crate::Policy::write_backs`]).
    pub dirty: bool,
    prev: u32,
    next: u32,
}

/// Entries by slot, and a map from id to slot.
#[derive(Default)]
pub(crate) struct Table {
    nodes: Vec<Node>,
    free: Vec<u32>,
    map: FxHashMap<u64, u32>,
}

impl Table {
    pub fn find(&self, id: u64) -> Option<u32> {
        self.map.get(&id).copied()
    }

    pub fn insert(&mut self, id: u64, size: u64, tag: u8) -> u32 {
        let node = Node {
            id,
            size,
            freq: 0,
            tag,
            dirty: false,
            prev: NIL,
            next: NIL,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.nodes[s as usize] = node;
                s
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.map.insert(id, slot);
        slot
    }

    /// Forgets an entry (it must be unlinked from its list first).
    pub fn remove(&mut self, slot: u32) {
        let id = self.nodes[slot as usize].id;
        self.map.remove(&id);
        self.free.push(slot);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Points `id` at `slot` (for tables that, like libCacheSim's hash
    /// chains, may hold an id twice and find the newest).
    pub fn remap(&mut self, id: u64, slot: u32) {
        self.map.insert(id, slot);
    }

    /// Frees a slot the map does not point at (an older twin).
    pub fn free_slot(&mut self, slot: u32) {
        self.free.push(slot);
    }
}

impl std::ops::Index<u32> for Table {
    type Output = Node;
    #[inline]
    fn index(&self, slot: u32) -> &Node {
        &self.nodes[slot as usize]
    }
}

impl std::ops::IndexMut<u32> for Table {
    #[inline]
    fn index_mut(&mut self, slot: u32) -> &mut Node {
        &mut self.nodes[slot as usize]
    }
}

/// A list of table entries with its length and total charge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct List {
    pub head: u32,
    pub tail: u32,
    pub bytes: u64,
    pub len: usize,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            bytes: 0,
            len: 0,
        }
    }
}

impl List {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push_head(&mut self, t: &mut Table, slot: u32) {
        let n = &mut t[slot];
        n.prev = NIL;
        n.next = self.head;
        self.bytes += n.size;
        if self.head != NIL {
            t[self.head].prev = slot;
        } else {
            self.tail = slot;
        }
        self.head = slot;
        self.len += 1;
    }

    pub fn push_tail(&mut self, t: &mut Table, slot: u32) {
        let n = &mut t[slot];
        n.next = NIL;
        n.prev = self.tail;
        self.bytes += n.size;
        if self.tail != NIL {
            t[self.tail].next = slot;
        } else {
            self.head = slot;
        }
        self.tail = slot;
        self.len += 1;
    }

    pub fn unlink(&mut self, t: &mut Table, slot: u32) {
        let Node {
            prev, next, size, ..
        } = t[slot];
        if prev != NIL {
            t[prev].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            t[next].prev = prev;
        } else {
            self.tail = prev;
        }
        self.bytes -= size;
        self.len -= 1;
    }

    pub fn move_to_head(&mut self, t: &mut Table, slot: u32) {
        if self.head != slot {
            self.unlink(t, slot);
            self.push_head(t, slot);
        }
    }

    /// The entry linked just before `slot` (towards the head).
    #[inline]
    pub fn prev(t: &Table, slot: u32) -> u32 {
        t[slot].prev
    }
}

/// One list over its own table, with a capacity: the storage of CLOCK,
/// SIEVE and the ghost queues.
pub(crate) struct Queue {
    pub cap: u64,
    pub t: Table,
    pub q: List,
    /// Dirty entries removed (evicted): write-backs.
    pub write_backs: u64,
}

impl Queue {
    pub fn new(cap: u64) -> Queue {
        Queue {
            cap,
            t: Table::default(),
            q: List::default(),
            write_backs: 0,
        }
    }

    pub fn find(&self, id: u64) -> Option<u32> {
        self.t.find(id)
    }

    /// Cached objects written since they were admitted.
    pub fn dirty_len(&self) -> usize {
        let mut n = 0;
        let mut s = self.q.head;
        while s != NIL {
            n += self.t[s].dirty as usize;
            s = self.t[s].next;
        }
        n
    }

    /// Unlinks and forgets an entry; returns its id.
    pub fn remove(&mut self, slot: u32) -> u64 {
        self.q.unlink(&mut self.t, slot);
        let id = self.t[slot].id;
        self.write_backs += self.t[slot].dirty as u64;
        self.t.remove(slot);
        id
    }

    /// Admits an object that missed, at the head: nothing if it is larger
    /// than the whole capacity (false), else first evicts the entries
    /// `victim` picks while room is short, pushing their ids to `evicted`.
    /// `dirty`: the request writes the object.
    #[inline]
    pub fn admit(
        &mut self,
        id: u64,
        charge: u64,
        dirty: bool,
        evicted: &mut Vec<u64>,
        mut victim: impl FnMut(&mut Queue) -> u32,
    ) -> bool {
        if charge > self.cap {
            return false;
        }
        while self.q.bytes + charge > self.cap {
            let v = victim(self);
            evicted.push(self.remove(v));
        }
        let s = self.t.insert(id, charge, 0);
        self.t[s].dirty = dirty;
        self.q.push_head(&mut self.t, s);
        true
    }

    pub fn len(&self) -> usize {
        self.q.len
    }

    pub fn occupied(&self) -> u64 {
        self.q.bytes
    }
}
