//! Memory budgets checked against a trace (`tramp check`, `tramp record
//! --check`): the limits as a user writes them (`64MiB`, `1.5G`, `1M`, a
//! pattern over frame names) parsed and checked here, so that every front
//! end refuses the same spellings, then the trace's profile (its index or
//! its events) held against them (`tramp_profile::budget`).

use tramp_core::units::{Base, parse};
use tramp_profile::budget::{Budgets, Totals, Verdict};

use crate::Error;
use crate::heap::Profile;
use crate::indexed::{IndexUse, Profiled};
use crate::input::TraceSpec;

/// Budgets as a user wrote them; `None`: not budgeted.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Bytes live at the heap's peak (a size: `64MiB`, `1.5G`, `4096`).
    pub max_peak: Option<String>,
    /// Bytes live at the end (a size).
    pub max_leaked: Option<String>,
    /// Objects allocated (a count: `20000`, `1.5M`).
    pub max_allocations: Option<String>,
    /// Temporary allocations (a count).
    pub max_temporary: Option<String>,
    /// A regular expression over frame names: only the stacks with a frame
    /// it matches count.
    pub stack: Option<String>,
}

impl Request {
    /// The budgets, checked: a size or count that does not parse, a
    /// pattern that does not compile, or no budget at all is refused,
    /// naming the option.
    pub fn budgets(&self) -> Result<Budgets, Error> {
        let value = |option: &str, v: &Option<String>, base: Base| {
            v.as_deref()
                .map(|s| parse(s, base).map_err(|e| Error::Invalid(format!("{option} {e}"))))
                .transpose()
        };
        let stack = self
            .stack
            .as_deref()
            .map(|p| {
                regex::Regex::new(p)
                    .map_err(|e| Error::Invalid(format!("--stack `{p}` is not a pattern: {e}")))
            })
            .transpose()?;
        let b = Budgets {
            max_peak: value("--max-peak", &self.max_peak, Base::Binary)?,
            max_leaked: value("--max-leaked", &self.max_leaked, Base::Binary)?,
            max_allocations: value("--max-allocations", &self.max_allocations, Base::Decimal)?,
            max_temporary: value("--max-temporary", &self.max_temporary, Base::Decimal)?,
            stack,
        };
        if !b.any() {
            return Err(Error::Invalid(
                "no budget to check: give --max-peak, --max-leaked, --max-allocations or --max-temporary".into(),
            ));
        }
        Ok(b)
    }
}

/// Checks `budgets` against the trace `spec` names, from its index or its
/// events as `wanted` says; the verdict and how the profile was read.
pub fn check(
    spec: &TraceSpec,
    budgets: &Budgets,
    wanted: IndexUse,
) -> Result<(Verdict, Profiled), Error> {
    let (images, read) = crate::indexed::images(spec, "check", wanted)?;
    if images.len() == 1 {
        let profile = Profile::of(
            images.into_iter().next().expect("one"),
            &read.run,
            read.trace(),
        );
        return Ok((verdict(&profile, read.trace(), budgets), read));
    }
    // A run: the budgets hold for every image (a leak in any process
    // fails); the verdict is of the first image over a budget, else of the
    // one that used the most.
    let most = tramp_heap::images::largest(images.iter().map(|p| p.totals.max_live_bytes));
    let mut verdicts = Vec::new();
    for parts in images {
        let image = parts.totals.processes.first().cloned().unwrap_or_default();
        let name = format!("{}, pid {} {}", read.trace(), image.pid, image.program());
        let profile = Profile::of(parts, &read.run, name.clone());
        verdicts.push(verdict(&profile, name, budgets));
    }
    let at = verdicts.iter().position(|v| !v.passed()).unwrap_or(most);
    Ok((verdicts.swap_remove(at), read))
}

/// Checks `budgets` against a profile already read (of the trace named
/// `trace`, `NAME (FORMAT)`).
pub fn verdict(profile: &Profile, trace: String, budgets: &Budgets) -> Verdict {
    let t = &profile.totals;
    let totals = Totals {
        peak: t.max_live_bytes,
        leaked: t.live_bytes_at_end,
        allocations: t.total_allocs,
        temporary: t.temporary_allocations,
    };
    let stacks = profile.stacks();
    Verdict::check(
        trace,
        &totals,
        &stacks.stacks,
        budgets,
        stacks.sampling.is_some(),
    )
}
