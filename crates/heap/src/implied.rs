//! The records a realloc implies. In HATF's layout (and tramp's
//! recordings) a realloc record is followed, on its thread, by the alloc
//! record of the block it allocated and the free record of the block it
//! freed. Statistics count them as objects but not as calls; replay
//! replays them as the realloc itself. Both ask here whether a record is
//! one of them.

use rustc_hash::FxHashMap;

/// Per thread: the alloc and the free the last realloc still implies.
#[derive(Clone, Debug, Default)]
pub struct ImpliedRecords {
    expect: FxHashMap<u64, (Option<u64>, Option<u64>)>,
}

impl ImpliedRecords {
    /// After a realloc on `thread`: its alloc record (of `alloc`) and free
    /// record (of `free`) follow. Replaces what an earlier realloc implied.
    pub fn after_realloc(&mut self, thread: u64, alloc: Option<u64>, free: Option<u64>) {
        if alloc.is_none() && free.is_none() {
            self.expect.remove(&thread);
        } else {
            self.expect.insert(thread, (alloc, free));
        }
    }

    /// Forgets what the last realloc on `thread` implied.
    pub fn forget(&mut self, thread: u64) {
        self.expect.remove(&thread);
    }

    /// Whether an alloc of `address` on `thread` is one a realloc implied
    /// (then it is used up).
    #[inline]
    pub fn is_implied_alloc(&mut self, thread: u64, address: u64) -> bool {
        self.take(thread, Some(address), None)
    }

    /// Whether a free of `address` on `thread` is one a realloc implied
    /// (then it is used up).
    #[inline]
    pub fn is_implied_free(&mut self, thread: u64, address: u64) -> bool {
        self.take(thread, None, Some(address))
    }

    /// A record that is not the implied one ends the expectation: the
    /// realloc's records come right after it or not at all.
    fn take(&mut self, thread: u64, alloc: Option<u64>, free: Option<u64>) -> bool {
        if self.expect.is_empty() {
            return false;
        }
        let Some((a, f)) = self.expect.get_mut(&thread) else {
            return false;
        };
        let hit = match (alloc, free) {
            (Some(x), _) if *a == Some(x) => {
                *a = None;
                true
            }
            (_, Some(x)) if *f == Some(x) => {
                *f = None;
                true
            }
            _ => false,
        };
        if !hit || (a.is_none() && f.is_none()) {
            self.expect.remove(&thread);
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::ImpliedRecords;

    #[test]
    fn a_realloc_implies_its_alloc_and_free_once() {
        let mut r = ImpliedRecords::default();
        r.after_realloc(1, Some(0x80), Some(0x10));
        assert!(!r.is_implied_alloc(2, 0x80), "another thread");
        assert!(r.is_implied_alloc(1, 0x80));
        assert!(!r.is_implied_alloc(1, 0x80), "used up");
        r.after_realloc(1, Some(0x80), Some(0x10));
        assert!(r.is_implied_free(1, 0x10));
        assert!(!r.is_implied_alloc(1, 0x90), "a miss");
        assert!(!r.is_implied_alloc(1, 0x80), "a miss ends the expectation");
        r.after_realloc(1, None, None);
        assert!(!r.is_implied_free(1, 0x10));
    }
}
