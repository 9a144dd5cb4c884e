//! Memory budgets for CI (`tramp check`, `tramp record --check`): a heap
//! profile's peak, leaked bytes, allocations and temporary allocations
//! held against limits, each budget exceeded named with the call stacks
//! responsible for most of it.
//!
//! Decisions (docs/check.md): a budget is exceeded when the amount is
//! above the limit (a limit is what may be used); without `--stack` the
//! amounts are the whole trace's, as `tramp stats` gives them; with it,
//! the sums over the stacks with a frame the pattern matches, where a
//! stack's peak is what it held when the whole heap was at its peak (the
//! profile keeps no peak of its own per stack).

use std::fmt;

use serde::Serialize;
use tramp_symbols::sites::{Cost, SiteTotals};

/// What is budgeted, in the order budgets are checked and shown.
pub const MEASURES: [Cost; 4] = [Cost::Peak, Cost::Leaked, Cost::Allocations, Cost::Temporary];

/// The limits asked for, and the stacks they apply to.
#[derive(Clone, Debug, Default)]
pub struct Budgets {
    /// Bytes live at the heap's peak.
    pub max_peak: Option<u64>,
    /// Bytes live at the end of the trace.
    pub max_leaked: Option<u64>,
    /// Objects allocated.
    pub max_allocations: Option<u64>,
    /// Allocations freed as the very next heap event.
    pub max_temporary: Option<u64>,
    /// Only stacks with a frame this matches count.
    pub stack: Option<regex::Regex>,
}

impl Budgets {
    /// The limit on `m`, if one was asked for.
    pub fn limit(&self, m: Cost) -> Option<u64> {
        match m {
            Cost::Peak => self.max_peak,
            Cost::Leaked => self.max_leaked,
            Cost::Allocations => self.max_allocations,
            Cost::Temporary => self.max_temporary,
            Cost::Bytes => None,
        }
    }

    /// Whether any limit was asked for.
    pub fn any(&self) -> bool {
        MEASURES.iter().any(|m| self.limit(*m).is_some())
    }
}

/// The whole trace's amounts (its statistics).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Totals {
    pub peak: u64,
    pub leaked: u64,
    pub allocations: u64,
    pub temporary: u64,
}

impl Totals {
    fn of(&self, m: Cost) -> u64 {
        match m {
            Cost::Peak => self.peak,
            Cost::Leaked => self.leaked,
            Cost::Allocations => self.allocations,
            Cost::Temporary => self.temporary,
            Cost::Bytes => 0,
        }
    }
}

/// A stack that used part of an exceeded budget.
#[derive(Clone, Debug, Serialize)]
pub struct Responsible {
    /// Its frames, outermost first.
    pub stack: Vec<String>,
    pub amount: u64,
}

/// One budget, checked.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// `peak`, `leaked`, `allocations` or `temporary`.
    pub budget: &'static str,
    /// Whether the amounts are bytes (else counts).
    pub bytes: bool,
    pub limit: u64,
    pub used: u64,
    pub exceeded: bool,
    /// The stacks that used most of it, most first (exceeded budgets
    /// only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<Responsible>,
}

/// Every budget asked for, checked against one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub trace: String,
    /// The `--stack` pattern, and how many stacks it matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stacks_matched: Option<usize>,
    pub budgets: Vec<Outcome>,
    /// A sampled trace's amounts are estimates.
    pub estimated: bool,
}

/// How many responsible stacks an exceeded budget names.
pub const RESPONSIBLE: usize = 5;

impl Verdict {
    /// Checks `budgets` against a trace's `totals` and its call `stacks`
    /// (frames outermost first, as the profile names them).
    pub fn check(
        trace: String,
        totals: &Totals,
        stacks: &[(Vec<String>, SiteTotals)],
        budgets: &Budgets,
        estimated: bool,
    ) -> Verdict {
        let matched: Vec<&(Vec<String>, SiteTotals)> = stacks
            .iter()
            .filter(|(frames, _)| {
                budgets
                    .stack
                    .as_ref()
                    .is_none_or(|re| frames.iter().any(|f| re.is_match(f)))
            })
            .collect();
        let outcomes = MEASURES
            .iter()
            .filter_map(|&m| {
                let limit = budgets.limit(m)?;
                let used = match budgets.stack {
                    None => totals.of(m),
                    Some(_) => matched.iter().map(|(_, t)| m.of(t)).sum(),
                };
                let exceeded = used > limit;
                let mut stacks: Vec<Responsible> = match exceeded {
                    true => matched
                        .iter()
                        .filter(|(_, t)| m.of(t) > 0)
                        .map(|(s, t)| Responsible {
                            stack: s.clone(),
                            amount: m.of(t),
                        })
                        .collect(),
                    false => Vec::new(),
                };
                stacks.sort_by(|a, b| b.amount.cmp(&a.amount).then(a.stack.cmp(&b.stack)));
                stacks.truncate(RESPONSIBLE);
                Some(Outcome {
                    budget: m.name(),
                    bytes: matches!(m, Cost::Peak | Cost::Leaked),
                    limit,
                    used,
                    exceeded,
                    stacks,
                })
            })
            .collect();
        Verdict {
            trace,
            stack: budgets.stack.as_ref().map(|r| r.as_str().to_string()),
            stacks_matched: budgets.stack.as_ref().map(|_| matched.len()),
            budgets: outcomes,
            estimated,
        }
    }

    /// Whether every budget held, over at least one stack when a pattern
    /// chose them (a pattern that matches nothing, a typo, would pass any
    /// budget: it fails instead).
    pub fn passed(&self) -> bool {
        self.budgets.iter().all(|b| !b.exceeded) && self.stacks_matched != Some(0)
    }

    /// Why the check failed: a pattern that matched no stack, or the
    /// budgets exceeded, each with its amount and limit (`over budget:
    /// leaked 297 KiB (304,096 B) over 200 KiB (204,800 B); allocations …`).
    pub fn why_failed(&self) -> String {
        if let (Some(p), Some(0)) = (&self.stack, self.stacks_matched) {
            return format!(
                "no call stack has a frame /{p}/ matches (frames read `function (file:line)`)"
            );
        }
        let over: Vec<String> = self
            .budgets
            .iter()
            .filter(|b| b.exceeded)
            .map(|b| {
                let (used, limit) = (amount(b.used, b.bytes), amount(b.limit, b.bytes));
                format!("{} {used} over {limit}", b.budget)
            })
            .collect();
        format!("over budget: {}", over.join("; "))
    }
}

/// An amount with its unit: bytes in binary units, counts grouped.
fn amount(n: u64, bytes: bool) -> String {
    match bytes {
        true => tramp_core::numbers::bytes_exact(n),
        false => tramp_core::numbers::grouped(n),
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.trace)?;
        if let (Some(p), Some(n)) = (&self.stack, self.stacks_matched) {
            write!(f, ", stacks matching /{p}/ ({n})")?;
        }
        writeln!(
            f,
            "{}:",
            if self.estimated {
                " (estimates of a sampled trace)"
            } else {
                ""
            }
        )?;
        if self.stacks_matched == Some(0) {
            writeln!(
                f,
                "  no call stack matches the pattern: no budget can be checked"
            )?;
        }
        for b in &self.budgets {
            let (used, limit) = (amount(b.used, b.bytes), amount(b.limit, b.bytes));
            let verdict = match b.exceeded {
                true => "EXCEEDED",
                false => "ok",
            };
            writeln!(f, "  {:<12} {used} of {limit}: {verdict}", b.budget)?;
            for r in &b.stacks {
                let mut frames = r.stack.iter().rev();
                let inner = frames.next().map_or("(unknown)", |s| s.as_str());
                writeln!(f, "    {:>12}  {inner}", amount(r.amount, b.bytes))?;
                for caller in frames.take(3) {
                    writeln!(f, "    {:>12}  <- {caller}", "")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(allocs: u64, peak: u64, live: u64, temporary: u64) -> SiteTotals {
        SiteTotals {
            allocs,
            peak_bytes: peak,
            live_bytes: live,
            temporary,
            ..SiteTotals::default()
        }
    }

    fn s(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn each_budget_over_its_limit_names_its_stacks() {
        let stacks = vec![
            (s(&["main", "parse (p.c:3)"]), t(10, 300, 0, 4)),
            (s(&["main", "cache_put (c.c:9)"]), t(5, 700, 600, 0)),
            (s(&["main", "log (l.c:1)"]), t(1, 0, 8, 1)),
        ];
        let totals = Totals {
            peak: 1000,
            leaked: 608,
            allocations: 16,
            temporary: 5,
        };
        let budgets = Budgets {
            max_peak: Some(1000),
            max_leaked: Some(500),
            max_allocations: Some(15),
            ..Budgets::default()
        };
        let v = Verdict::check("t".into(), &totals, &stacks, &budgets, false);
        let got: Vec<(&str, u64, bool)> = v
            .budgets
            .iter()
            .map(|b| (b.budget, b.used, b.exceeded))
            .collect();
        // At the limit is within it.
        assert_eq!(
            got,
            [
                ("peak", 1000, false),
                ("leaked", 608, true),
                ("allocations", 16, true)
            ]
        );
        assert!(!v.passed());
        assert_eq!(
            v.why_failed(),
            "over budget: leaked 608 B over 500 B; allocations 16 over 15"
        );
        let leaked: Vec<(&str, u64)> = v.budgets[1]
            .stacks
            .iter()
            .map(|r| (r.stack[1].as_str(), r.amount))
            .collect();
        assert_eq!(leaked, [("cache_put (c.c:9)", 600), ("log (l.c:1)", 8)]);
        assert!(v.budgets[0].stacks.is_empty());
        let text = v.to_string();
        assert!(
            text.contains("leaked       608 B of 500 B: EXCEEDED"),
            "{text}"
        );
        assert!(text.contains("<- main"), "{text}");

        // A pattern sums its stacks only.
        let only = Budgets {
            max_peak: Some(500),
            max_temporary: Some(3),
            stack: Some(regex::Regex::new("^parse").unwrap()),
            ..Budgets::default()
        };
        let v = Verdict::check("t".into(), &totals, &stacks, &only, false);
        assert_eq!(v.stacks_matched, Some(1));
        let got: Vec<(&str, u64, bool)> = v
            .budgets
            .iter()
            .map(|b| (b.budget, b.used, b.exceeded))
            .collect();
        assert_eq!(got, [("peak", 300, false), ("temporary", 4, true)]);

        // A pattern that matches no stack fails, whatever the amounts.
        let typo = Budgets {
            max_peak: Some(u64::MAX),
            stack: Some(regex::Regex::new("^prase").unwrap()),
            ..Budgets::default()
        };
        let v = Verdict::check("t".into(), &totals, &stacks, &typo, false);
        assert_eq!(v.stacks_matched, Some(0));
        assert!(!v.passed());
        assert!(
            v.why_failed()
                .starts_with("no call stack has a frame /^prase/ matches")
        );
    }
}
