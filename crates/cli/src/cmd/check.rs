//! `tramp check`: memory budgets for CI, checked against a trace.

use anyhow::{Result, bail};
use clap::Args;
use tramp_api::ending::outcome_of;

/// Check a heap trace against memory budgets, for CI: bytes live at the
/// heap's peak (--max-peak), bytes still live at the end (--max-leaked),
/// objects allocated (--max-allocations) and temporary allocations, freed
/// as the very next heap event (--max-temporary). Each budget prints what
/// was used of it; each one exceeded names the call stacks that used most
/// of it. With --stack REGEX only the stacks with a frame the pattern
/// matches count (their peak: what they held when the whole heap was at
/// its peak). Sizes in the one size syntax of tramp: `64MiB`, `1.5G`,
/// `500KB`, `4096` (K = 1,024 for bytes); counts as `20000` or `1.5M` (M =
/// 10^6). A recording is answered from its profile index (docs/index.md).
///
/// Exit status: 0 when every budget holds; 1 when one is exceeded (the
/// message on stderr names each with its amount and limit) or the check
/// could not be made (a value that does not parse, a trace that does not
/// read; damage in it is an error, the amounts then covering the records
/// before it). Of a run of several processes every image is checked, and
/// the first over a budget is named by pid and program. See
/// docs/check.md; `tramp record --check …` records and checks in one step.
#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: super::InputArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
    /// Count only the call stacks with a frame this regular expression
    /// matches (frames as reports name them: `function (file:line)`). A
    /// pattern that matches no stack fails the check (a typo would pass
    /// every budget).
    #[arg(long, value_name = "REGEX")]
    pub stack: Option<String>,
    /// Print JSON instead of text (every budget, its limit, the amount
    /// used and the stacks responsible).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub index: super::IndexArgs,
}

/// The budgets, shared with `tramp record --check` (whose `--stack` is the
/// call stack's depth: the pattern is given beside, to `request`).
#[derive(Args, Clone, Default)]
pub struct BudgetArgs {
    /// Bytes live at the heap's peak may be at most SIZE.
    #[arg(long, value_name = "SIZE")]
    pub max_peak: Option<String>,
    /// Bytes still live at the end of the trace may be at most SIZE.
    #[arg(long, value_name = "SIZE")]
    pub max_leaked: Option<String>,
    /// Objects allocated may be at most N.
    #[arg(long, value_name = "N")]
    pub max_allocations: Option<String>,
    /// Temporary allocations (freed as the very next heap event) may be
    /// at most N.
    #[arg(long, value_name = "N")]
    pub max_temporary: Option<String>,
}

impl BudgetArgs {
    /// The budgets as the library takes them, over the stacks `stack`
    /// matches.
    pub fn request(&self, stack: Option<String>) -> tramp_api::check::Request {
        tramp_api::check::Request {
            max_peak: self.max_peak.clone(),
            max_leaked: self.max_leaked.clone(),
            max_allocations: self.max_allocations.clone(),
            max_temporary: self.max_temporary.clone(),
            stack,
        }
    }

    /// Whether any budget was given.
    pub fn any(&self) -> bool {
        [
            &self.max_peak,
            &self.max_leaked,
            &self.max_allocations,
            &self.max_temporary,
        ]
        .iter()
        .any(|b| b.is_some())
    }
}

pub fn run(a: CheckArgs) -> Result<()> {
    let budgets = a.budgets.request(a.stack.clone()).budgets()?;
    let (verdict, read) = tramp_api::check::check(&a.input.spec(), &budgets, a.index.wanted())?;
    super::print_report(&outcome_of(&verdict, &[&read.run]), a.json)?;
    super::end_profiled(read, "; the amounts cover the records before the error")?;
    if !verdict.passed() {
        bail!("{}: {}", a.input.input, verdict.why_failed());
    }
    Ok(())
}
