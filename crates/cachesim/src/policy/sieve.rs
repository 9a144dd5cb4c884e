//! SIEVE: a FIFO queue with a visited bit and a hand. A hit sets the bit;
//! new objects enter at the head; the hand walks from the tail towards the
//! head (wrapping to the tail), clearing bits, and evicts the first object
//! whose bit is clear, staying where it stopped.

use super::{Access, Policy};
use crate::list::{List, NIL, Queue};

pub struct Sieve {
    queue: Queue,
    hand: u32,
}

impl Sieve {
    pub fn new(capacity: u64) -> Sieve {
        Sieve {
            queue: Queue::new(capacity),
            hand: NIL,
        }
    }
}

impl Policy for Sieve {
    fn name(&self) -> &'static str {
        "sieve"
    }
    fn capacity(&self) -> u64 {
        self.queue.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.queue.find(a.id) {
            self.queue.t[s].freq = 1;
            self.queue.t[s].dirty |= a.write;
            return true;
        }
        let hand = &mut self.hand;
        self.queue.admit(a.id, a.charge, a.write, evicted, |q| {
            let mut v = if *hand == NIL { q.q.tail } else { *hand };
            while q.t[v].freq > 0 {
                q.t[v].freq -= 1;
                let p = List::prev(&q.t, v);
                v = if p == NIL { q.q.tail } else { p };
            }
            *hand = List::prev(&q.t, v);
            v
        });
        false
    }
    held_in!(queue queue);
}
