//! Objects grouped by request count, each group in the order its members
//! joined it: the frequency side of LeCaR and Cacheus (libCacheSim's
//! `freq_node` lists). Keyed by the caller's table slot.

use std::collections::BTreeSet;

#[derive(Default)]
pub(crate) struct CountGroups {
    /// (count, order of joining, slot).
    set: BTreeSet<(u64, u64, u32)>,
    /// Per slot: its count and when it joined.
    of: Vec<(u64, u64)>,
    joined: u64,
}

impl CountGroups {
    /// Slot `s` joins the end of group `count`.
    pub fn join(&mut self, s: u32, count: u64) {
        self.joined += 1;
        let i = s as usize;
        if self.of.len() <= i {
            self.of.resize(i + 1, (0, 0));
        }
        self.of[i] = (count, self.joined);
        self.set.insert((count, self.joined, s));
    }
    /// Slot `s` leaves its group; its count.
    pub fn leave(&mut self, s: u32) -> u64 {
        let (count, seq) = self.of[s as usize];
        self.set.remove(&(count, seq, s));
        count
    }
    pub fn count(&self, s: u32) -> u64 {
        self.of[s as usize].0
    }
    fn members(&self, count: u64) -> impl DoubleEndedIterator<Item = &(u64, u64, u32)> {
        self.set.range((count, 0, 0)..(count + 1, 0, 0))
    }
    pub fn has(&self, count: u64) -> bool {
        self.members(count).next().is_some()
    }
    /// Whether group `count` holds exactly one object.
    pub fn single(&self, count: u64) -> bool {
        self.members(count).take(2).count() == 1
    }
    /// The first, and the latest, to join group `count`.
    pub fn first(&self, count: u64) -> Option<u32> {
        self.members(count).next().map(|k| k.2)
    }
    pub fn last(&self, count: u64) -> Option<u32> {
        self.members(count).next_back().map(|k| k.2)
    }
    /// The lowest non-empty group above `min`, up to `max` (libCacheSim's
    /// walk from min + 1 to the highest count seen).
    pub fn lowest_above(&self, min: u64, max: u64) -> Option<u64> {
        if min >= max {
            return None;
        }
        self.set
            .range((min + 1, 0, 0)..)
            .next()
            .map(|k| k.0)
            .filter(|&f| f <= max)
    }
}
