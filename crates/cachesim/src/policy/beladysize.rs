//! Belady-Size as libCacheSim 0.3.5's `BeladySize.c` defines it: of
//! `n-sample` (128) cached objects drawn at random, the victim has the
//! largest size × distance to its next request (compared as the sum of
//! their logarithms, the first drawn among equals). An object never
//! requested again is not admitted (room is made for it all the same, as
//! libCacheSim makes it before finding that out), and one whose hit is its
//! last request leaves. Needs next-access times. Draws: as libCacheSim's
//! ([`super::pool`]).

use super::pool::Pool;
use super::{Access, Policy};
use crate::NEVER;

pub struct BeladySize {
    cap: u64,
    samples: usize,
    /// Per object: the request number of its next request.
    pool: Pool<u64>,
    vtime: u64,
}

impl BeladySize {
    pub fn new(capacity: u64, samples: usize, seed: u64) -> BeladySize {
        BeladySize {
            cap: capacity,
            samples: samples.max(1),
            pool: Pool::new(seed, 24),
            vtime: 0,
        }
    }
}

impl Policy for BeladySize {
    named!("beladysize", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        self.vtime += 1;
        if let Some(next) = self.pool.meta_mut(a.id) {
            if a.next_access == NEVER {
                self.pool.remove(a.id);
            } else {
                *next = a.next_access;
            }
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        // The largest ln(size) + ln(distance): the lowest of its negation.
        let (now, n) = (self.vtime, self.samples);
        self.pool.make_room(self.cap - a.charge, evicted, |p| {
            p.lowest_of(n, |charge, &next| {
                -((charge as f64).ln() + (next.saturating_sub(now) as f64).ln())
            })
        });
        if a.next_access != NEVER {
            self.pool.insert(a.id, a.charge, a.next_access);
        }
        false
    }
    held_in!(pool pool, pool.occupied);
}
