//! Which attribute strings followed which, within a block (format version
//! 3). A recording's attributes name call sites, and a program's sites
//! come in sequences its loops repeat: the site after site *s* is, most of
//! the time, one of the few that came after *s* before. So every distinct
//! string of the block gets an id, and each id keeps the ids of the last
//! [`FOLLOWERS`] strings that came right after it (most recent first); an
//! event's attributes are coded as a rank in its predecessor's list where
//! they can be (docs/formats/tpack.md, "Attributes").
//!
//! Both sides keep the same state: the writer and the reader make the same
//! calls in the same order. Memory is bounded by the block's distinct
//! strings, which the writer's 64 MiB text bound caps.

use rustc_hash::FxHashMap;

/// How many followers each string keeps.
pub const FOLLOWERS: usize = 4;
/// No id (an empty follower place, or no attributes yet in the block).
const NONE: u32 = u32::MAX;

/// The block's attribute strings and their followers.
pub struct Succession {
    /// Every distinct string of the block, one after another.
    arena: Vec<u8>,
    /// Where each id's string lies in `arena`.
    spans: Vec<(usize, usize)>,
    /// Ids of strings shorter than 16 bytes, by their exact key.
    short: FxHashMap<u128, u32>,
    /// Ids of longer strings, by the string.
    long: FxHashMap<Box<[u8]>, u32>,
    /// Each id's followers, most recent first.
    followers: Vec<[u32; FOLLOWERS]>,
    /// The id of the block's last attributes (`NONE` before any).
    last: u32,
}

impl Default for Succession {
    fn default() -> Self {
        Succession {
            arena: Vec::new(),
            spans: Vec::new(),
            short: FxHashMap::default(),
            long: FxHashMap::default(),
            followers: Vec::new(),
            last: NONE,
        }
    }
}

impl Succession {
    /// Forgets everything (a new block); the buffers are kept.
    pub fn reset(&mut self) {
        self.arena.clear();
        self.spans.clear();
        self.short.clear();
        self.long.clear();
        self.followers.clear();
        self.last = NONE;
    }

    /// The string of `id`.
    #[inline]
    pub fn name(&self, id: u32) -> &[u8] {
        let (at, len) = self.spans[id as usize];
        &self.arena[at..at + len]
    }

    /// The id of the last attributes, if the block has had any.
    #[inline]
    pub fn last(&self) -> Option<u32> {
        (self.last != NONE).then_some(self.last)
    }

    /// The rank of `a` among the last attributes' followers, and its id.
    #[inline]
    pub fn rank(&self, a: &[u8]) -> Option<(usize, u32)> {
        let list = self.followers.get(self.last as usize)?;
        list.iter()
            .enumerate()
            .find(|&(_, &id)| id != NONE && self.name(id) == a)
            .map(|(k, &id)| (k, id))
    }

    /// The follower of rank `k` of the last attributes.
    #[inline]
    pub fn follower(&self, k: usize) -> Option<u32> {
        let id = *self.followers.get(self.last as usize)?.get(k)?;
        (id != NONE).then_some(id)
    }

    /// The id of `a` (whose key, `model::attr_key`, is `key`), given one if
    /// it is new to the block.
    pub fn intern(&mut self, a: &[u8], key: u128) -> u32 {
        let next = self.spans.len() as u32;
        let id = if a.len() < 16 {
            *self.short.entry(key).or_insert(next)
        } else {
            *self.long.entry(a.into()).or_insert(next)
        };
        if id == next {
            self.spans.push((self.arena.len(), a.len()));
            self.arena.extend_from_slice(a);
            self.followers.push([NONE; FOLLOWERS]);
        }
        id
    }

    /// `id` comes next: it becomes the last attributes' first follower
    /// (the others move down, the one it was or the least recent dropped),
    /// then the last attributes itself.
    #[inline]
    pub fn advance(&mut self, id: u32) {
        if let Some(list) = self.followers.get_mut(self.last as usize) {
            let at = list.iter().position(|&f| f == id).unwrap_or(FOLLOWERS - 1);
            for j in (1..=at).rev() {
                list[j] = list[j - 1];
            }
            list[0] = id;
        }
        self.last = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(a: &[u8]) -> u128 {
        crate::model::attr_key(a)
    }

    #[test]
    fn followers_are_most_recent_first_and_bounded() {
        let mut s = Succession::default();
        let names: Vec<Vec<u8>> = (0..7u8).map(|i| vec![2, i]).collect();
        let ids: Vec<u32> = names.iter().map(|n| s.intern(n, key(n))).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(s.intern(&names[3], key(&names[3])), 3);
        assert_eq!(s.last(), None);
        assert_eq!(s.rank(&names[1]), None);
        // 0 then, after 0 each time: 1, 2, 3, 4, 5 (1 drops out), 3 again.
        for &f in &[1u32, 2, 3, 4, 5, 3] {
            s.advance(0);
            s.advance(f);
        }
        s.advance(0);
        assert_eq!(s.follower(0), Some(3));
        assert_eq!(s.follower(1), Some(5));
        assert_eq!(s.follower(2), Some(4));
        assert_eq!(s.follower(3), Some(2));
        assert_eq!(s.rank(&names[4]), Some((2, 4)));
        assert_eq!(s.rank(&names[1]), None);
        assert_eq!(s.name(5), &names[5][..]);
    }

    #[test]
    fn long_strings_are_interned_by_their_bytes() {
        let mut s = Succession::default();
        let a = b"a string of more than sixteen bytes".to_vec();
        let mut b = a.clone();
        b[30] = b'X';
        assert_eq!(s.intern(&a, key(&a)), 0);
        assert_eq!(s.intern(&b, key(&b)), 1);
        assert_eq!(s.intern(&a, key(&a)), 0);
        assert_eq!(s.name(1), &b[..]);
    }
}
