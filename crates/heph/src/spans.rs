//! Spans: Heph events have no parent ids; an event is the child of the
//! event that contains it in time on the same stream and substream (the
//! seed's "implicit parent-child relation"). This module infers that
//! nesting, totals time per description (count, total, self time, p50,
//! p99), builds a stream's span tree, and finds gaps in each stream's
//! event counter.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};

use crate::packet::Event;

/// A log-linear histogram of durations: values are kept to within 1 %
/// (7 bits below the leading one: a bucket spans less than 1/128 of its
/// values) in constant memory, with the exact minimum and maximum.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    buckets: BTreeMap<u32, u64>,
    count: u64,
    min: u64,
    max: u64,
}

fn bucket(v: u64) -> u32 {
    if v < 128 {
        return v as u32;
    }
    let bits = 64 - v.leading_zeros(); // >= 8
    // The 7 bits after the leading one (which is implicit).
    let mantissa = (v >> (bits - 8)) & 0x7f;
    ((bits - 7) << 7) | mantissa as u32
}

fn bucket_low(b: u32) -> u64 {
    if b < 128 {
        return b as u64;
    }
    let shift = (b >> 7) - 1;
    ((b as u64 & 0x7f) | 0x80) << shift
}

impl Histogram {
    pub fn add(&mut self, v: u64) {
        *self.buckets.entry(bucket(v)).or_default() += 1;
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
    }

    /// The value at quantile `q` (0–1) by nearest rank, to within 1 % (the
    /// lower end of its bucket), and never outside the values seen.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return bucket_low(*b).clamp(self.min, self.max);
            }
        }
        0
    }
}

/// Totals of one description.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub count: u64,
    pub total: u64,
    pub self_time: u64,
    pub durations: Histogram,
}

/// Missing events of one stream, found from its counter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gaps {
    /// Counter value expected next.
    next: Option<u32>,
    /// Missing counter ranges (first, length), oldest first; bounded.
    pub missing: Vec<(u32, u32)>,
    /// Events missing in all (late arrivals subtracted).
    pub missing_count: u64,
    /// Events that arrived after a later counter (out of order), filling
    /// a gap.
    pub late: u64,
    /// Counter values seen twice.
    pub duplicates: u64,
    /// Times the counter wrapped from 2^32 - 1 to 0.
    pub wraps: u64,
}

const MAX_RANGES: usize = 4096;

impl Gaps {
    fn observe(&mut self, c: u32) {
        let Some(next) = self.next else {
            self.next = Some(c.wrapping_add(1));
            return;
        };
        let d = c.wrapping_sub(next);
        if d == 0 {
            if c == u32::MAX {
                self.wraps += 1;
            }
            self.next = Some(c.wrapping_add(1));
        } else if d < 1 << 31 {
            // A jump forward: d events are missing (so far).
            if c < next {
                self.wraps += 1;
            }
            self.missing_count += d as u64;
            if self.missing.len() < MAX_RANGES {
                self.missing.push((next, d));
            }
            self.next = Some(c.wrapping_add(1));
        } else {
            // Behind: a late arrival fills a gap, or it is a duplicate.
            let hit = self
                .missing
                .iter()
                .position(|&(s, n)| c.wrapping_sub(s) < n);
            match hit {
                Some(i) => {
                    let (s, n) = self.missing[i];
                    let k = c.wrapping_sub(s);
                    self.missing.remove(i);
                    if k + 1 < n {
                        self.missing.insert(i, (c.wrapping_add(1), n - k - 1));
                    }
                    if k > 0 {
                        self.missing.insert(i, (s, k));
                    }
                    self.missing_count -= 1;
                    self.late += 1;
                }
                None => self.duplicates += 1,
            }
        }
    }
}

/// Per-substream state: intervals of events that have no parent yet,
/// sorted by start (children arrive before their parents, since Heph
/// writes an event when it ends).
#[derive(Default)]
struct Open {
    roots: Vec<(u64, u64)>,
}

/// The most parentless spans kept per substream; older ones are dropped
/// (a later parent would then overstate its self time). Bounds memory.
pub const MAX_OPEN: usize = 1 << 20;

/// Streaming span analysis: totals per description and counter gaps.
#[derive(Default)]
pub struct SpanStats {
    pub by_description: HashMap<String, Totals>,
    pub gaps: BTreeMap<u32, Gaps>,
    open: HashMap<(u32, u64), Open>,
    pub events: u64,
    pub dropped_roots: u64,
}

/// Length of the union of sorted-by-start intervals.
fn union_len(iv: &[(u64, u64)]) -> u64 {
    let mut total = 0;
    let mut cur: Option<(u64, u64)> = None;
    for &(s, e) in iv {
        match &mut cur {
            Some((_, ce)) if s <= *ce => *ce = (*ce).max(e),
            _ => {
                if let Some((cs, ce)) = cur {
                    total = u64::saturating_add(total, ce - cs);
                }
                cur = Some((s, e));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        total = u64::saturating_add(total, ce - cs);
    }
    total
}

impl SpanStats {
    pub fn new() -> Self {
        SpanStats::default()
    }

    pub fn observe(&mut self, e: &Event) {
        self.observe_parts(
            e.stream,
            e.counter,
            e.substream,
            e.start,
            e.end,
            &e.description,
        );
    }

    /// [`SpanStats::observe`] for a borrowed event.
    pub fn observe_ref(&mut self, e: &crate::EventRef<'_>) {
        self.observe_parts(
            e.stream,
            e.counter,
            e.substream,
            e.start,
            e.end,
            e.description,
        );
    }

    fn observe_parts(
        &mut self,
        stream: u32,
        counter: u32,
        substream: u64,
        start: u64,
        end: u64,
        description: &str,
    ) {
        self.events += 1;
        self.gaps.entry(stream).or_default().observe(counter);
        let end = end.max(start);
        let open = self.open.entry((stream, substream)).or_default();
        // Children: parentless spans inside [start, end] (they start at
        // or after `start`). Remove them in place, measuring their union
        // as they go by in start order; keep the others.
        let from = open.roots.partition_point(|&(s, _)| s < start);
        let roots = &mut open.roots;
        let (mut covered, mut cur): (u64, Option<(u64, u64)>) = (0, None);
        let mut w = from;
        for r in from..roots.len() {
            let (s, en) = roots[r];
            if en <= end {
                match &mut cur {
                    Some((_, ce)) if s <= *ce => *ce = (*ce).max(en),
                    _ => {
                        if let Some((cs, ce)) = cur {
                            covered = covered.saturating_add(ce - cs);
                        }
                        cur = Some((s, en));
                    }
                }
            } else {
                roots[w] = roots[r];
                w += 1;
            }
        }
        if let Some((cs, ce)) = cur {
            covered = covered.saturating_add(ce - cs);
        }
        roots.truncate(w);
        // This span goes first among the kept ones (they start at or
        // after it, and any that start with it end later): order holds.
        roots.insert(from, (start, end));
        if open.roots.len() > MAX_OPEN {
            let extra = open.roots.len() - MAX_OPEN;
            open.roots.drain(..extra);
            self.dropped_roots += extra as u64;
        }
        if !self.by_description.contains_key(description) {
            self.by_description
                .insert(description.to_string(), Totals::default());
        }
        let t = self
            .by_description
            .get_mut(description)
            .expect("inserted above");
        let dur = end - start;
        // Saturating: a damaged or hostile trace may claim spans that add
        // up past 2^64 ns.
        t.count += 1;
        t.total = t.total.saturating_add(dur);
        t.self_time = t.self_time.saturating_add(dur - covered.min(dur));
        t.durations.add(dur);
    }

    /// The totals table, by total time, longest first (times in human
    /// units; JSON keeps nanoseconds).
    pub fn totals_table(&self) -> String {
        let mut rows: Vec<(&String, &Totals)> = self.by_description.iter().collect();
        rows.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(b.0)));
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>9} {:>10} {:>10} {:>10} {:>10}  description",
            "count", "total", "self", "p50", "p99"
        );
        for (d, t) in rows {
            let _ = writeln!(
                s,
                "{:>9} {:>10} {:>10} {:>10} {:>10}  {}",
                tramp_core::numbers::grouped(t.count as u128),
                human_ns(t.total),
                human_ns(t.self_time),
                human_ns(t.durations.quantile(0.5)),
                human_ns(t.durations.quantile(0.99)),
                d.escape_debug()
            );
        }
        s
    }

    /// The counter report: per stream, missing events and their ranges.
    pub fn gaps_table(&self, max_ranges: usize) -> String {
        use tramp_core::numbers::grouped;
        let mut s = String::new();
        for (stream, g) in &self.gaps {
            let _ = write!(
                s,
                "stream {stream}: {} missing, {} late, {} duplicate, {} wraps",
                grouped(g.missing_count as u128),
                grouped(g.late as u128),
                grouped(g.duplicates as u128),
                grouped(g.wraps as u128)
            );
            if !g.missing.is_empty() {
                let shown: Vec<String> = g
                    .missing
                    .iter()
                    .take(max_ranges)
                    .map(|&(a, n)| {
                        if n == 1 {
                            a.to_string()
                        } else {
                            format!("{a}..={}", a.wrapping_add(n - 1))
                        }
                    })
                    .collect();
                let more = if g.missing.len() > max_ranges {
                    ", …"
                } else {
                    ""
                };
                let _ = write!(s, " (counters {}{more})", shown.join(", "));
            }
            s.push('\n');
        }
        s
    }
}

/// One node of a span tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub description: String,
    pub start: u64,
    pub end: u64,
    pub self_time: u64,
    pub children: Vec<Span>,
}

/// Builds the span forest of one substream's events (any order):
/// containment by time, ties broken by the longer span being the parent.
pub fn tree(events: &[&Event]) -> Vec<Span> {
    let mut order: Vec<&Event> = events.to_vec();
    order.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut roots: Vec<Span> = Vec::new();
    let mut stack: Vec<Span> = Vec::new();
    fn close(stack: &mut Vec<Span>, roots: &mut Vec<Span>) {
        let mut s = stack.pop().expect("non-empty");
        let iv: Vec<(u64, u64)> = s.children.iter().map(|c| (c.start, c.end)).collect();
        s.self_time = (s.end - s.start).saturating_sub(union_len(&iv));
        match stack.last_mut() {
            Some(p) => p.children.push(s),
            None => roots.push(s),
        }
    }
    for e in order {
        let end = e.end.max(e.start);
        while let Some(top) = stack.last() {
            if top.start <= e.start && end <= top.end {
                break;
            }
            close(&mut stack, &mut roots);
        }
        stack.push(Span {
            description: e.description.clone(),
            start: e.start,
            end,
            self_time: 0,
            children: Vec::new(),
        });
    }
    while !stack.is_empty() {
        close(&mut stack, &mut roots);
    }
    roots
}

/// Renders a forest with two spaces of indentation per level.
pub struct Render<'a>(pub &'a [Span]);

impl fmt::Display for Render<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn walk(f: &mut fmt::Formatter<'_>, s: &Span, depth: usize) -> fmt::Result {
            writeln!(
                f,
                "{:indent$}{} [{}..{}] {} (self {})",
                "",
                s.description.escape_debug(),
                s.start,
                s.end,
                human_ns(s.end - s.start),
                human_ns(s.self_time),
                indent = 2 * depth
            )?;
            for c in &s.children {
                walk(f, c, depth + 1)?;
            }
            Ok(())
        }
        for s in self.0 {
            walk(f, s, 0)?;
        }
        Ok(())
    }
}

/// A span of nanoseconds as people read it (`850 ns`, `2.08 µs`, `1.50
/// s`): tramp's one formatter of durations.
pub fn human_ns(ns: u64) -> String {
    tramp_core::numbers::duration(ns)
}

/// Nanoseconds since the Unix epoch as a UTC date and time, to the
/// millisecond (`2026-11-22 12:26:45.266 UTC`).
pub fn utc(ns: u64) -> String {
    tramp_core::numbers::utc_millis(ns)
}

#[cfg(test)]
mod human_tests {
    use super::*;

    #[test]
    fn durations_and_dates_read_as_people_write_them() {
        assert_eq!(human_ns(850), "850 ns");
        assert_eq!(human_ns(2_080), "2.08 µs");
        assert_eq!(human_ns(81_264_640), "81.3 ms");
        assert_eq!(human_ns(311_853_307), "312 ms");
        assert_eq!(human_ns(1_500_000_000), "1.50 s");
        // `date -u -d @0` and `date -u -d @951782400` (a leap day).
        assert_eq!(utc(0), "1970-01-01 00:00:00.000 UTC");
        assert_eq!(utc(951_782_400_123_000_000), "2000-02-29 00:00:00.123 UTC");
        assert_eq!(
            utc(1_795_312_005_266_882_225),
            "2026-11-22 01:46:45.266 UTC"
        );
    }
}
