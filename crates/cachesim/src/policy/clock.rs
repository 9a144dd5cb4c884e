//! CLOCK (FIFO with reinsertion, second chance) with an n-bit counter: a
//! hit raises the counter up to 2^n − 1; new objects start at 0; eviction
//! looks at the tail, and an object with a non-zero counter has it lowered
//! and goes back to the head instead of leaving.

use super::{Access, Policy};
use crate::list::Queue;

pub struct Clock {
    max: u64,
    queue: Queue,
}

impl Clock {
    /// `bits`: counter width (libCacheSim's `n-bit-counter`, default 1;
    /// 1 to 3, the widths `--policy` names).
    pub fn new(capacity: u64, bits: u8) -> Clock {
        Clock {
            max: (1u64 << bits.clamp(1, 3)) - 1,
            queue: Queue::new(capacity),
        }
    }
}

/// The tail whose counter is zero, lowering and reinserting the others.
fn victim(q: &mut Queue) -> u32 {
    let mut v = q.q.tail;
    while q.t[v].freq >= 1 {
        q.t[v].freq -= 1;
        q.q.move_to_head(&mut q.t, v);
        v = q.q.tail;
    }
    v
}

impl Policy for Clock {
    fn name(&self) -> &'static str {
        // As `--policy` names them (PolicyKind's Display): one name per
        // counter width, so that reports and curves keep them apart.
        match self.max {
            1 => "clock",
            3 => "clock2",
            7 => "clock3",
            _ => "clock-n",
        }
    }
    fn capacity(&self) -> u64 {
        self.queue.cap
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(s) = self.queue.find(a.id) {
            let n = &mut self.queue.t[s];
            if n.freq < self.max {
                n.freq += 1;
            }
            n.dirty |= a.write;
            return true;
        }
        self.queue.admit(a.id, a.charge, a.write, evicted, victim);
        false
    }
    held_in!(queue queue);
}
