//! The run's clock: TSC readings mapped to nanoseconds by one line shared
//! by every process of a recording, and by one monotone function per
//! process.
//!
//! Events are ordered by their TSC readings, which every core of a machine
//! with an invariant, synchronised TSC shares (`constant_tsc`,
//! `nonstop_tsc`; the kernel's clock source is then `tsc`). Nanoseconds are
//! only for people: they come from the (ns, TSC) pairs of the chunk
//! headers, through a line from the earliest pair to the latest read so
//! far. Mapping each chunk between its own two pairs, as tramp did before
//! issue 47, gave every thread a clock of its own: two pairs read a few
//! microseconds apart (a preemption between the two reads) put a thread's
//! frees after another thread's later allocations of the same address.
//!
//! The line is the run's, not the process's: every process of a machine
//! reads the same TSC and the same CLOCK_MONOTONIC, so the pairs of all of
//! them set one rate, and a process that lives less than [`MIN_SPAN_NS`]
//! (a shell's `env`, a `cat`) is timed at the rate the whole run sets
//! rather than at a guess. Events are held until the line spans
//! [`MIN_SPAN_NS`] (see [`Line::known`]): mapped at one tick per ns before
//! that, as tramp did, a process's first events were placed two to three
//! times too late on a 2-3 GHz TSC, the monotone guard then held its later
//! events there, and on the run's axis a program seemed to end after the
//! next one had started.

/// Pairs this far apart set the rate (their reading error, up to a few
/// µs for a pair read across a preemption, weighs 0.5 % at most).
pub const MIN_SPAN_NS: u64 = 1_000_000;

/// A line nearer than this (a whole run shorter) is not trusted with a
/// rate at all: one tick per ns.
const MIN_LINE_NS: u64 = 10_000;

/// TSC → ns for a run: the line through its earliest and latest (ns, tsc)
/// pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// The pair with the lowest TSC: (ns, tsc).
    first: Option<(u64, u64)>,
    /// The pair with the highest TSC.
    last: Option<(u64, u64)>,
}

impl Line {
    /// Notes one (ns, tsc) pair (a chunk header's, or another line's).
    pub fn pair(&mut self, ns: u64, tsc: u64) {
        if self.first.is_none_or(|(_, t)| tsc < t) {
            self.first = Some((ns, tsc));
        }
        if self.last.is_none_or(|(_, t)| tsc > t) {
            self.last = Some((ns, tsc));
        }
    }

    /// Takes in another line's pairs (another process's).
    pub fn join(&mut self, other: &Line) {
        for (ns, tsc) in [other.first, other.last].into_iter().flatten() {
            self.pair(ns, tsc);
        }
    }

    /// Whether the pairs span [`MIN_SPAN_NS`]: the rate is then good to
    /// a fraction of a percent, and events may be timed.
    pub fn known(&self) -> bool {
        self.span().is_some_and(|(ns, _)| ns >= MIN_SPAN_NS)
    }

    /// (ns, ticks) between the first and last pairs, when both grow.
    fn span(&self) -> Option<(u64, u64)> {
        let ((ans, atsc), (lns, ltsc)) = (self.first?, self.last?);
        (lns > ans && ltsc > atsc).then(|| (lns - ans, ltsc - atsc))
    }

    /// The rate as (ns, ticks), when the line is long enough to give one.
    fn rate(&self) -> Option<(u64, u64)> {
        self.span().filter(|&(ns, _)| ns >= MIN_LINE_NS)
    }

    /// TSC ticks in `ns` nanoseconds at the current rate (one per ns until
    /// there is one).
    pub fn ticks(&self, ns: u64) -> u64 {
        match self.rate() {
            Some((span_ns, span_tsc)) => {
                (ns as u128 * span_tsc as u128 / span_ns as u128).min(u64::MAX as u128) as u64
            }
            None => ns,
        }
    }

    /// The ns of a TSC reading on the line (ticks before the first pair
    /// map to it).
    pub fn at(&self, tsc: u64) -> u64 {
        let Some((ans, atsc)) = self.first else {
            return 0;
        };
        let d = tsc.saturating_sub(atsc) as u128;
        let ns = match self.rate() {
            Some((span_ns, span_tsc)) => d * span_ns as u128 / span_tsc as u128,
            None => d,
        };
        ans.saturating_add(ns.min(u64::MAX as u128) as u64)
    }
}

/// TSC → ns for one process: the run's line, never mapping a reading
/// earlier than the latest one mapped before it.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// The line: the process's own pairs, joined with the run's.
    pub line: Line,
    /// The latest mapping given, to keep the map monotone while the rate
    /// is refined: (tsc, ns).
    last: (u64, u64),
}

impl Clock {
    /// Notes one (ns, tsc) pair of a chunk header.
    pub fn pair(&mut self, ns: u64, tsc: u64) {
        self.line.pair(ns, tsc);
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

    /// See [`Line::ticks`].
    pub fn ticks(&self, ns: u64) -> u64 {
        self.line.ticks(ns)
    }

    /// See [`Line::at`].
    pub fn at(&self, tsc: u64) -> u64 {
        self.line.at(tsc)
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

    #[test]
    fn processes_share_one_line_and_a_short_one_takes_the_runs_rate() {
        // The run's first process: 3 ticks per ns over 2 ms.
        let mut run = Line::default();
        run.pair(1_000, 10_000);
        run.pair(2_001_000, 6_010_000);
        assert!(run.known());
        // A later process of 200 µs: its own pairs (read 3 µs off the
        // rate) would give a rate 4.5 % wrong; joined, it keeps the run's.
        let mut short = Clock::default();
        short.pair(1_000_000, 3_010_000);
        short.pair(1_200_000 + 3_000, 3_610_000);
        assert!(!short.line.known());
        short.line.join(&run);
        assert!(short.line.known());
        assert_eq!(short.at(3_010_000), 1_001_000);
        assert_eq!(short.at(3_610_000), 1_201_000);
        // Joining is symmetric in what it keeps: the earliest and latest.
        let mut other = short.line;
        other.join(&run);
        assert_eq!(other, short.line);
    }

    #[test]
    fn a_line_shorter_than_the_minimum_is_not_known_and_a_tiny_one_has_no_rate() {
        let mut l = Line::default();
        assert!(!l.known());
        assert_eq!(l.at(5), 0);
        l.pair(100, 1_000);
        l.pair(500_100, 1_501_000); // 3 ticks per ns over 0.5 ms
        assert!(!l.known());
        // Used all the same when nothing better comes (the run ends).
        assert_eq!(l.at(1_501_000), 500_100);
        assert_eq!(l.ticks(1_000), 3_000);
        // Pairs 5 µs apart give no rate: one tick per ns.
        let mut t = Line::default();
        t.pair(0, 0);
        t.pair(5_000, 15_000);
        assert_eq!(t.ticks(1_000), 1_000);
        assert_eq!(t.at(15_000), 15_000);
    }
}
