//! `tramp verify`: check a PTF trace against the PTF report's rules.

use anyhow::{Result, bail};
use clap::Args;

/// Check a PTF trace against every rule of the PTF report's section 3:
/// parameters (number and type), formats defined before use, objects
/// created before use, OIds never reused, deletes of existing objects
/// only, edge targets existing or null, data offsets within the format's
/// data members, array accesses within bounds, `cao` after its
/// container's `co`, no access after delete, `ts`/`te` balanced. Each
/// violation names the event number and its line (ASCII) or byte offset
/// (binary); all are reported up to --max-errors.
///
/// With --gc, persistence by reachability is simulated: after every event
/// outside `ts`/`te` brackets that may disconnect objects (an overwritten
/// edge, a delete, a new root, an object created outside a bracket), the
/// objects no longer reachable from the super root are collected and
/// listed with the event at which they became garbage; later accesses to
/// them are violations.
///
/// Exit status: 0 when the trace is valid, 1 otherwise.
#[derive(Args)]
pub struct VerifyArgs {
    /// PTF trace (binary or ASCII, detected), or `-` for stdin.
    input: String,
    /// Simulate garbage collection by reachability from the super root.
    #[arg(long)]
    gc: bool,
    /// Print at most this many violations (all are counted).
    #[arg(long, default_value_t = 100)]
    max_errors: usize,
    /// With --gc: list at most this many collected OIds per collection.
    #[arg(long, default_value_t = 20)]
    max_oids: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: VerifyArgs) -> Result<()> {
    let opts = tramp_graph::verify::Options {
        gc: a.gc,
        max_violations: a.max_errors,
    };
    let report = tramp_api::verify::verify(&a.input, opts)?;
    let shown = tramp_graph::verify::Shown {
        name: &a.input,
        report: &report,
        gc: a.gc,
        max_oids: a.max_oids,
    };
    super::print_report(&shown, a.json)?;
    if report.total > 0 {
        bail!("{}: {} violations", a.input, report.total);
    }
    Ok(())
}
