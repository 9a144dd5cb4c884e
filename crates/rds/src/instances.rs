//! RDS instances: sets of live objects joined by same-type edges, with the
//! profile data of each set merged when sets join.
//!
//! Union by size with relabelling: every object names its set directly,
//! and when two sets join the smaller one's members are relabelled
//! (O(n log n) relabels in all), so a set's member list is exactly its live
//! objects. Deletion is by live count: a freed object leaves its set's
//! member list; a set whose last member is freed is finished — its profile
//! moves to the finished list and its slot is reused. Memory is bounded by
//! the live objects plus the sets alive.

use crate::builder::InstanceProfile;

/// Sets of objects (by dense object slot).
#[derive(Default)]
pub struct Instances {
    sets: Vec<Option<Set>>,
    free: Vec<u32>,
    next_id: u64,
}

/// One live set.
pub struct Set {
    /// Object slots of the live members.
    pub members: Vec<u32>,
    pub profile: InstanceProfile,
}

impl Instances {
    /// A new set of the given members.
    pub fn create(&mut self, members: Vec<u32>, mut profile: InstanceProfile) -> u32 {
        profile.id = self.next_id;
        self.next_id += 1;
        let set = Set { members, profile };
        match self.free.pop() {
            Some(s) => {
                self.sets[s as usize] = Some(set);
                s
            }
            None => {
                self.sets.push(Some(set));
                (self.sets.len() - 1) as u32
            }
        }
    }

    pub fn get(&self, s: u32) -> &Set {
        self.sets[s as usize].as_ref().expect("live set")
    }

    pub fn get_mut(&mut self, s: u32) -> &mut Set {
        self.sets[s as usize].as_mut().expect("live set")
    }

    /// Joins set `b` into `a` or `a` into `b` (the larger survives);
    /// returns (survivor, absorbed) — the caller relabels the absorbed
    /// members.
    pub fn union(&mut self, a: u32, b: u32) -> (u32, Set) {
        let (keep, gone) = if self.get(a).members.len() >= self.get(b).members.len() {
            (a, b)
        } else {
            (b, a)
        };
        let g = self.sets[gone as usize].take().expect("live set");
        self.free.push(gone);
        (keep, g)
    }

    /// Ends a set; returns its profile.
    pub fn finish(&mut self, s: u32) -> Set {
        let set = self.sets[s as usize].take().expect("live set");
        self.free.push(s);
        set
    }

    /// The live sets.
    pub fn live(&self) -> impl Iterator<Item = (u32, &Set)> {
        self.sets
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i as u32, s)))
    }

    pub fn live_count(&self) -> usize {
        self.sets.len() - self.free.len()
    }
}
