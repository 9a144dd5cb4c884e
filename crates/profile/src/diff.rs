//! Two heap profiles compared call stack by call stack: what each stack
//! allocated (calls, bytes, temporaries), held at the heap's peak and left
//! live at exit in each trace, and the change. Stacks are matched by their
//! frames' names (function, file, line), not by addresses, so two builds of
//! a program compare.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use tramp_symbols::sites::SiteTotals;

/// The costs of one call stack in one trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Costs {
    pub allocations: u64,
    /// In 128 bits, as every sum of sizes.
    pub bytes: u128,
    pub temporary: u64,
    pub peak: u64,
    pub leaked: u64,
}

impl Costs {
    /// Adds `c` (saturating).
    pub fn add(&mut self, c: &Costs) {
        self.allocations = self.allocations.saturating_add(c.allocations);
        self.bytes += c.bytes;
        self.temporary = self.temporary.saturating_add(c.temporary);
        self.peak = self.peak.saturating_add(c.peak);
        self.leaked = self.leaked.saturating_add(c.leaked);
    }
}

impl From<&SiteTotals> for Costs {
    fn from(t: &SiteTotals) -> Costs {
        Costs {
            allocations: t.allocs,
            bytes: t.bytes,
            temporary: t.temporary,
            peak: t.peak_bytes,
            leaked: t.live_bytes,
        }
    }
}

/// The change of each cost, B less A.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Change {
    pub allocations: i128,
    pub bytes: i128,
    pub temporary: i128,
    pub peak: i128,
    pub leaked: i128,
}

impl Change {
    fn of(a: &Costs, b: &Costs) -> Change {
        let d = |x: u64, y: u64| i128::from(y) - i128::from(x);
        Change {
            allocations: d(a.allocations, b.allocations),
            // Sums of sizes stay far below 2^127.
            bytes: b.bytes as i128 - a.bytes as i128,
            temporary: d(a.temporary, b.temporary),
            peak: d(a.peak, b.peak),
            leaked: d(a.leaked, b.leaked),
        }
    }

    fn is_zero(&self) -> bool {
        *self == Change::default()
    }

    /// How much the stack changed, for ordering: bytes first.
    fn weight(&self) -> (u128, u128, u128, u128) {
        (
            self.bytes.unsigned_abs(),
            self.peak.unsigned_abs(),
            self.leaked.unsigned_abs(),
            self.allocations.unsigned_abs(),
        )
    }
}

/// One call stack's row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Frames outermost first.
    pub stack: Vec<String>,
    pub a: Costs,
    pub b: Costs,
    pub change: Change,
}

/// The comparison: every stack whose costs changed, most changed first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub total_a: Costs,
    pub total_b: Costs,
    pub change: Change,
    /// Stacks in both traces with the same costs.
    pub unchanged: u64,
    pub rows: Vec<Row>,
    /// How many rows the text shows.
    #[serde(skip)]
    pub top: usize,
    /// The sampling of trace A and of trace B, where sampled: their costs
    /// are then estimates (`Diff::sampled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling_a: Option<tramp_heap::sampling::Sampling>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling_b: Option<tramp_heap::sampling::Sampling>,
}

impl Diff {
    /// Compares the stacks of trace A with those of trace B.
    pub fn new(
        a: &[(Vec<String>, SiteTotals)],
        b: &[(Vec<String>, SiteTotals)],
        top: usize,
    ) -> Diff {
        let mut by: BTreeMap<&[String], (Costs, Costs)> = BTreeMap::new();
        let (mut total_a, mut total_b) = (Costs::default(), Costs::default());
        for (stack, t) in a {
            let c = Costs::from(t);
            total_a.add(&c);
            by.entry(stack).or_default().0.add(&c);
        }
        for (stack, t) in b {
            let c = Costs::from(t);
            total_b.add(&c);
            by.entry(stack).or_default().1.add(&c);
        }
        let mut unchanged = 0;
        let mut rows: Vec<Row> = Vec::new();
        for (stack, (ca, cb)) in by {
            let change = Change::of(&ca, &cb);
            if change.is_zero() {
                unchanged += 1;
                continue;
            }
            rows.push(Row {
                stack: stack.to_vec(),
                a: ca,
                b: cb,
                change,
            });
        }
        rows.sort_by(|x, y| {
            y.change
                .weight()
                .cmp(&x.change.weight())
                .then(x.stack.cmp(&y.stack))
        });
        Diff {
            change: Change::of(&total_a, &total_b),
            total_a,
            total_b,
            unchanged,
            rows,
            top,
            sampling_a: None,
            sampling_b: None,
        }
    }

    /// Says which traces are sampled (their costs are estimates).
    pub fn sampled(
        mut self,
        a: Option<tramp_heap::sampling::Sampling>,
        b: Option<tramp_heap::sampling::Sampling>,
    ) -> Diff {
        self.sampling_a = a;
        self.sampling_b = b;
        self
    }
}

fn signed(v: i128) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, s) in [("A", self.sampling_a), ("B", self.sampling_b)] {
            if let Some(s) = s {
                writeln!(
                    f,
                    "trace {name} is sampled every {} bytes on average: its costs are estimates",
                    s.mean_bytes
                )?;
            }
        }
        writeln!(
            f,
            "{:<10} {:>14} {:>14} {:>14} {:>14} {:>14}",
            "", "allocations", "bytes", "temporary", "peak bytes", "leaked bytes"
        )?;
        for (name, c) in [("A", &self.total_a), ("B", &self.total_b)] {
            writeln!(
                f,
                "{name:<10} {:>14} {:>14} {:>14} {:>14} {:>14}",
                c.allocations, c.bytes, c.temporary, c.peak, c.leaked
            )?;
        }
        let d = &self.change;
        writeln!(
            f,
            "{:<10} {:>14} {:>14} {:>14} {:>14} {:>14}",
            "B - A",
            signed(d.allocations),
            signed(d.bytes),
            signed(d.temporary),
            signed(d.peak),
            signed(d.leaked)
        )?;
        writeln!(
            f,
            "\n{} call stacks changed, {} unchanged; the most changed (B - A):",
            self.rows.len(),
            self.unchanged
        )?;
        writeln!(
            f,
            "  {:>12} {:>14} {:>10} {:>14} {:>14}  stack (innermost first)",
            "allocations", "bytes", "temporary", "peak bytes", "leaked bytes"
        )?;
        for r in self.rows.iter().take(self.top) {
            let c = &r.change;
            let mut frames = r.stack.iter().rev();
            writeln!(
                f,
                "  {:>12} {:>14} {:>10} {:>14} {:>14}  {}",
                signed(c.allocations),
                signed(c.bytes),
                signed(c.temporary),
                signed(c.peak),
                signed(c.leaked),
                frames.next().map_or("(unknown)", |s| s.as_str())
            )?;
            for caller in frames.take(3) {
                writeln!(f, "  {:>70}  <- {caller}", "")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{stack as s, totals as t};

    #[test]
    fn stacks_are_matched_by_name_and_the_changed_ones_listed() {
        let a = vec![
            (s(&["main", "parse (p.c:3)"]), t(10, 100, 0)),
            (s(&["main", "run (r.c:9)"]), t(5, 50, 50)),
        ];
        let b = vec![
            (s(&["main", "parse (p.c:3)"]), t(10, 100, 0)),
            (s(&["main", "run (r.c:9)"]), t(8, 80, 50)),
            (s(&["main", "new (n.c:1)"]), t(1, 1000, 1000)),
        ];
        let d = Diff::new(&a, &b, 10);
        assert_eq!(d.unchanged, 1);
        let rows: Vec<(&str, i128, i128)> = d
            .rows
            .iter()
            .map(|r| (r.stack[1].as_str(), r.change.allocations, r.change.bytes))
            .collect();
        assert_eq!(rows, vec![("new (n.c:1)", 1, 1000), ("run (r.c:9)", 3, 30)]);
        assert_eq!(d.change.bytes, 1030);
        assert_eq!(d.change.leaked, 1000);
        assert!(d.to_string().contains("+1030"));
    }
}
