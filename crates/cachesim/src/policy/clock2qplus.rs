//! Clock2Q+ as libCacheSim 0.3.5's `Clock2QPlus.c` defines it: a small
//! FIFO (10% of the capacity) where new objects enter, a main CLOCK (the
//! rest) and a ghost FIFO of ids (90%). A hit in the small FIFO counts only
//! when the object is older than the correlation window (half the small
//! FIFO's size, in admissions to it); a hit in the main queue sets its bit.
//! Eviction takes from the main queue when it is over its share or the
//! small FIFO is empty — its tail with the bit set goes back to the head
//! with the bit cleared, one without leaves — else from the small FIFO,
//! whose tail moves to the main queue when it counted at least
//! `move-to-main-threshold` (1) hits and otherwise leaves for the ghost.
//! A miss whose id is in the ghost enters the main queue; objects not
//! smaller than the small FIFO are not admitted (after room was made, as
//! in libCacheSim); before the first eviction a full small FIFO sends new
//! objects to the main queue.

use super::{Access, Policy, part};
use crate::list::{List, Table};
use crate::policy::ghost::Ghost;

const SMALL: u8 = 0;
const MAIN: u8 = 1;

pub struct Clock2QPlus {
    cap: u64,
    small_cap: u64,
    main_cap: u64,
    move_to_main: u64,
    corr_window: f64,
    t: Table,
    small: List,
    main: List,
    ghost: Option<Ghost>,
    /// Per slot of `t`: the small FIFO's admission count when it entered.
    inserted: Vec<u64>,
    admitted_small: u64,
    has_evicted: bool,
}

impl Clock2QPlus {
    pub fn new(capacity: u64, small: f64, ghost: f64, move_to_main: u64, corr: f64) -> Self {
        let small_cap = part(capacity, small);
        let ghost_cap = part(capacity, ghost);
        Clock2QPlus {
            cap: capacity,
            small_cap,
            main_cap: capacity - small_cap,
            move_to_main,
            corr_window: small_cap as f64 * corr,
            t: Table::default(),
            small: List::default(),
            main: List::default(),
            ghost: (ghost_cap > 0).then(|| Ghost::new(ghost_cap)),
            inserted: Vec::new(),
            admitted_small: 0,
            has_evicted: false,
        }
    }

    fn add(&mut self, id: u64, charge: u64, tag: u8) -> u32 {
        let s = self.t.insert(id, charge, tag);
        self.t[s].freq = 0;
        if tag == MAIN {
            self.main.push_head(&mut self.t, s);
        } else {
            self.small.push_head(&mut self.t, s);
            self.admitted_small += 1;
            let i = s as usize;
            if self.inserted.len() <= i {
                self.inserted.resize(i + 1, 0);
            }
            self.inserted[i] = self.admitted_small;
        }
        s
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        self.has_evicted = true;
        if self.main.bytes > self.main_cap || self.small.bytes == 0 {
            while self.main.bytes > 0 {
                let v = self.main.tail;
                if self.t[v].freq >= 1 {
                    self.t[v].freq = 0;
                    self.main.move_to_head(&mut self.t, v);
                } else {
                    self.main.unlink(&mut self.t, v);
                    evicted.push(self.t[v].id);
                    self.t.remove(v);
                    return;
                }
            }
        } else {
            while self.small.bytes > 0 {
                let v = self.small.tail;
                self.small.unlink(&mut self.t, v);
                let (id, size, freq) = (self.t[v].id, self.t[v].size, self.t[v].freq);
                self.t.remove(v);
                if freq >= self.move_to_main {
                    self.add(id, size, MAIN);
                } else {
                    if let Some(g) = &mut self.ghost {
                        g.add(id, size);
                    }
                    evicted.push(id);
                    return;
                }
            }
        }
    }
}

impl Policy for Clock2QPlus {
    named!("clock2qplus", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            if self.t[s].tag == SMALL {
                let since = self.admitted_small - self.inserted[s as usize];
                if since as f64 >= self.corr_window {
                    self.t[s].freq += 1;
                }
            } else {
                self.t[s].freq += 1;
            }
            return true;
        }
        let ghost_hit = self.ghost.as_mut().is_some_and(|g| g.remove(a.id));
        if a.charge > self.small_cap {
            return false;
        }
        while self.small.bytes + self.main.bytes + a.charge > self.cap {
            self.evict(evicted);
        }
        if ghost_hit {
            self.add(a.id, a.charge, MAIN);
        } else if a.charge >= self.small_cap {
            // libCacheSim admits nothing that would fill the small FIFO.
        } else if !self.has_evicted && self.small.bytes >= self.small_cap {
            self.add(a.id, a.charge, MAIN);
        } else {
            self.add(a.id, a.charge, SMALL);
        }
        false
    }
    held_in!(table t, small.bytes + main.bytes);
}
