//! One process's clock: the TSC readings of its events mapped to
//! nanoseconds by one monotone function.
//!
//! Events are ordered by their TSC readings, which every core of a machine
//! with an invariant, synchronised TSC shares (`constant_tsc`,
//! `nonstop_tsc`; the kernel's clock source is then `tsc`). Nanoseconds are
//! only for people: they come from the (ns, TSC) pairs of the chunk
//! headers, through a line from the first pair to the pair farthest from it
//! read so far. Mapping each chunk between its own two pairs, as tramp did
//! before issue 47, gave every thread a clock of its own: two pairs read a
//! few microseconds apart (a preemption between the two reads) put a
//! thread's frees after another thread's later allocations of the same
//! address.

/// Pairs nearer than this to the first one do not set the rate (their
/// reading error weighs too much).
const MIN_SPAN_NS: u64 = 1_000_000;

/// TSC → ns for one process.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// The first pair: (ns, tsc).
    anchor: Option<(u64, u64)>,
    /// The pair farthest from the anchor (in TSC) that sets the rate.
    far: Option<(u64, u64)>,
    /// The latest mapping given, to keep the map monotone while the rate
    /// is refined: (tsc, ns).
    last: (u64, u64),
}

impl Clock {
    /// Notes one (ns, tsc) pair of a chunk header.
    pub fn pair(&mut self, ns: u64, tsc: u64) {
        let Some((ans, atsc)) = self.anchor else {
            self.anchor = Some((ns, tsc));
            return;
        };
        if tsc <= atsc || ns <= ans + MIN_SPAN_NS {
            return;
        }
        if self.far.is_none_or(|(_, ftsc)| tsc > ftsc) {
            self.far = Some((ns, tsc));
        }
    }

    /// The ns of a TSC reading. Readings at or after the latest one mapped
    /// never map earlier than it (the rate may be refined between two
    /// calls); an earlier reading (an event written late) maps on the line.
    pub fn ns(&mut self, tsc: u64) -> u64 {
        let ns = self.at(tsc);
        if tsc >= self.last.0 {
            let ns = ns.max(self.last.1);
            self.last = (tsc, ns);
            ns
        } else {
            ns
        }
    }

    /// TSC ticks in `ns` nanoseconds at the current rate (one per ns until
    /// it is known).
    pub fn ticks(&self, ns: u64) -> u64 {
        match (self.anchor, self.far) {
            (Some((ans, atsc)), Some((fns, ftsc))) => (ns as u128 * (ftsc - atsc) as u128
                / (fns - ans) as u128)
                .min(u64::MAX as u128) as u64,
            _ => ns,
        }
    }

    /// The ns of a TSC reading on the line through the anchor and the far
    /// pair, without the monotone guard (1 ns per tick until there is a far
    /// pair; ticks before the anchor map to it).
    pub fn at(&self, tsc: u64) -> u64 {
        let Some((ans, atsc)) = self.anchor else {
            return 0;
        };
        let d = tsc.saturating_sub(atsc) as u128;
        match self.far {
            Some((fns, ftsc)) => {
                let (span_ns, span_tsc) = ((fns - ans) as u128, (ftsc - atsc) as u128);
                let ns = (d * span_ns / span_tsc).min(u64::MAX as u128) as u64;
                ans.saturating_add(ns)
            }
            None => ans.saturating_add(d as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_on_the_line_through_the_first_and_farthest_pairs() {
        let mut c = Clock::default();
        c.pair(1_000, 10_000);
        // 3 ticks per ns: 3 ms later.
        c.pair(3_001_000, 9_010_000);
        assert_eq!(c.ns(10_000), 1_000);
        assert_eq!(c.ns(10_000 + 3_000), 2_000);
        assert_eq!(c.ns(9_010_000), 3_001_000);
        // A nearer pair read later does not move the line.
        c.pair(2_000_000, 6_000_000);
        assert_eq!(c.ns(9_010_000 + 30), 3_001_010);
    }

    #[test]
    fn stays_monotone_while_the_rate_is_refined() {
        let mut c = Clock::default();
        c.pair(0, 0);
        c.pair(2_000_000, 4_000_000); // 2 ticks per ns
        let a = c.ns(4_000_000);
        assert_eq!(a, 2_000_000);
        // A farther pair says 4 ticks per ns: the line now maps the next
        // reading below `a`, which the clock does not give.
        c.pair(4_000_000, 16_000_000);
        let b = c.ns(4_000_004);
        assert!(b >= a, "{b} < {a}");
        // A reading before the latest (written late) maps on the line.
        assert_eq!(c.ns(400), 100);
    }
}
