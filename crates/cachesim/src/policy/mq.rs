//! Multi-Queue (Zhou et al.) as libCacheSim 0.3.5's `MQ.c` defines it: 8
//! LRU queues; an object of frequency f lives in queue ⌊log2 f⌋ (at most
//! the last). A hit adds 1 to the frequency, moves the object to the head
//! of its queue and sets its expiry to the clock + 10,000; every hit and
//! admission ticks the clock, and then each queue above the first whose
//! tail has expired passes it to the head of the queue below (with a new
//! expiry). The victim is the tail of the lowest non-empty queue; it goes
//! to Qout, a FIFO of ids and frequencies four times the cache's size. A
//! miss found in Qout comes back with its frequency + 1, others with 1.

use super::{Access, Policy, part};
use crate::list::{List, NIL, Table};

pub struct Mq {
    cap: u64,
    occupied: u64,
    t: Table,
    queues: Vec<List>,
    /// Per slot of `t`: when its object expires from its queue.
    expire: Vec<u64>,
    vtime: u64,
    ghost_cap: u64,
    ghost_t: Table,
    ghost: List,
    /// Clock ticks an object stays in its queue without a hit.
    lifetime: u64,
}

fn queue_of(mut freq: u64, queues: usize) -> usize {
    let mut q = 0;
    while freq > 1 && q < queues - 1 {
        freq >>= 1;
        q += 1;
    }
    q
}

impl Mq {
    pub fn new(capacity: u64) -> Mq {
        Mq::with_params(capacity, 8, 10_000, 4.0)
    }

    /// libCacheSim's `n-queue`, `lifetime` and `Qout-size-ratio`.
    pub fn with_params(capacity: u64, queues: usize, lifetime: u64, qout: f64) -> Mq {
        Mq {
            cap: capacity,
            occupied: 0,
            t: Table::default(),
            queues: (0..queues.max(1)).map(|_| List::default()).collect(),
            expire: Vec::new(),
            vtime: 0,
            ghost_cap: part(capacity, qout),
            ghost_t: Table::default(),
            ghost: List::default(),
            lifetime,
        }
    }

    fn link(&mut self, s: u32, q: usize) {
        self.queues[q].push_head(&mut self.t, s);
        self.t[s].tag = q as u8;
        let i = s as usize;
        if self.expire.len() <= i {
            self.expire.resize(i + 1, 0);
        }
        self.expire[i] = self.vtime + self.lifetime;
    }

    /// Ticks the clock and lets each queue's expired tail down a queue.
    fn adjust(&mut self) {
        self.vtime += 1;
        for k in 1..self.queues.len() {
            let v = self.queues[k].tail;
            if v != NIL && self.expire[v as usize] < self.vtime {
                self.queues[k].unlink(&mut self.t, v);
                self.link(v, k - 1);
            }
        }
    }

    fn evict(&mut self, evicted: &mut Vec<u64>) {
        let Some(q) = self.queues.iter().position(|l| !l.is_empty()) else {
            return;
        };
        let v = self.queues[q].tail;
        self.queues[q].unlink(&mut self.t, v);
        let (id, size, freq) = (self.t[v].id, self.t[v].size, self.t[v].freq);
        self.t.remove(v);
        self.occupied -= size;
        evicted.push(id);
        // Into Qout, a FIFO by the same unit.
        if size <= self.ghost_cap {
            while self.ghost.bytes + size > self.ghost_cap {
                let g = self.ghost.tail;
                self.ghost.unlink(&mut self.ghost_t, g);
                self.ghost_t.remove(g);
            }
            let g = self.ghost_t.insert(id, size, 0);
            self.ghost_t[g].freq = freq;
            self.ghost.push_head(&mut self.ghost_t, g);
        }
    }
}

impl Policy for Mq {
    named!("mq", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.t.find(a.id) {
            let q = self.t[s].tag as usize;
            self.queues[q].unlink(&mut self.t, s);
            if self.t[s].freq < i32::MAX as u64 {
                self.t[s].freq += 1;
            }
            let q = queue_of(self.t[s].freq, self.queues.len());
            self.link(s, q);
            self.adjust();
            return true;
        }
        let ghost_freq = self.ghost_t.find(a.id).map(|g| {
            let f = self.ghost_t[g].freq;
            self.ghost.unlink(&mut self.ghost_t, g);
            self.ghost_t.remove(g);
            f
        });
        if a.charge > self.cap {
            return false;
        }
        while self.occupied + a.charge > self.cap && self.t.len() > 0 {
            self.evict(evicted);
        }
        let freq = ghost_freq.map_or(1, |f| (f + 1).min(i32::MAX as u64));
        let s = self.t.insert(a.id, a.charge, 0);
        self.t[s].freq = freq;
        self.occupied += a.charge;
        self.link(s, queue_of(freq, self.queues.len()));
        self.adjust();
        false
    }
    held_in!(table t, occupied);
}
