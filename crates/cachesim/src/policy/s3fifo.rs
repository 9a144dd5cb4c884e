//! S3-FIFO as libCacheSim 0.3.5 defines it: a small FIFO (10% of the
//! capacity), a main FIFO with a 2-bit CLOCK counter (the rest), and a ghost
//! FIFO of ids (90%). New objects enter the small queue, or the main queue if
//! their id is in the ghost (or, before the first eviction, if the small
//! queue is full). A hit adds one to the object's counter. Eviction takes
//! from the main queue when it is over its share or the small queue is
//! empty, else from the small queue: a small-queue object with counter ≥ 2
//! moves to the main queue (counter 0), one below goes to the ghost. A
//! main-queue object with counter f ≥ 1 is reinserted with min(f, 3) − 1.

use super::{Access, Policy, part};
use crate::list::{List, Table};
use crate::policy::ghost::Ghost;

const SMALL: u8 = 0;
const MAIN: u8 = 1;

pub struct S3Fifo {
    cap: u64,
    small_cap: u64,
    main_cap: u64,
    t: Table,
    small: List,
    main: List,
    ghost: Option<Ghost>,
    has_evicted: bool,
    /// Hits a small-queue object needs to move to the main queue.
    move_to_main: u64,
}

impl S3Fifo {
    pub fn new(capacity: u64) -> S3Fifo {
        S3Fifo::with_params(capacity, 0.1, 0.9, 2)
    }

    /// libCacheSim's `small-size-ratio`, `ghost-size-ratio` and
    /// `move-to-main-threshold`.
    pub fn with_params(capacity: u64, small: f64, ghost: f64, move_to_main: u64) -> S3Fifo {
        let small_cap = part(capacity, small);
        let ghost_cap = part(capacity, ghost);
        S3Fifo {
            cap: capacity,
            small_cap,
            main_cap: capacity - small_cap,
            t: Table::default(),
            small: List::default(),
            main: List::default(),
            ghost: (ghost_cap > 0).then(|| Ghost::new(ghost_cap)),
            has_evicted: false,
            move_to_main,
        }
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        self.has_evicted = true;
        if self.main.bytes > self.main_cap || self.small.bytes == 0 {
            self.evict_main(evicted);
        } else {
            self.evict_small(evicted);
        }
    }

    fn evict_small(&mut self, evicted: &mut Vec<u64>) {
        while self.small.bytes > 0 {
            let v = self.small.tail;
            self.small.unlink(&mut self.t, v);
            if self.t[v].freq >= self.move_to_main {
                let n = &mut self.t[v];
                n.freq = 0;
                n.tag = MAIN;
                self.main.push_head(&mut self.t, v);
            } else {
                let (id, size) = (self.t[v].id, self.t[v].size);
                if let Some(g) = &mut self.ghost {
                    g.add(id, size);
                }
                evicted.push(id);
                self.t.remove(v);
                return;
            }
        }
    }

    fn evict_main(&mut self, evicted: &mut Vec<u64>) {
        while self.main.bytes > 0 {
            let v = self.main.tail;
            let f = self.t[v].freq;
            if f >= 1 {
                self.t[v].freq = f.min(3) - 1;
                self.main.move_to_head(&mut self.t, v);
            } else {
                self.main.unlink(&mut self.t, v);
                evicted.push(self.t[v].id);
                self.t.remove(v);
                return;
            }
        }
    }
}

impl Policy for S3Fifo {
    named!("s3fifo", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        let found = self.t.find(a.id);
        if let Some(s) = found
            && self.t[s].tag == SMALL
        {
            self.t[s].freq += 1;
            return true;
        }
        let ghost_hit = self.ghost.as_mut().is_some_and(|g| g.remove(a.id));
        if let Some(s) = found {
            self.t[s].freq += 1;
            return true;
        }
        if a.charge > self.small_cap || a.charge > self.cap {
            return false;
        }
        while self.small.bytes + self.main.bytes + a.charge > self.cap {
            self.evict(evicted);
        }
        if ghost_hit {
            let s = self.t.insert(a.id, a.charge, MAIN);
            self.main.push_head(&mut self.t, s);
        } else if a.charge >= self.small_cap {
            // libCacheSim admits nothing that would fill the small queue.
        } else if !self.has_evicted && self.small.bytes >= self.small_cap {
            let s = self.t.insert(a.id, a.charge, MAIN);
            self.main.push_head(&mut self.t, s);
        } else {
            let s = self.t.insert(a.id, a.charge, SMALL);
            self.small.push_head(&mut self.t, s);
        }
        false
    }
    held_in!(table t, small.bytes + main.bytes);
}
