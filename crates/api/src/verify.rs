//! PTF verification as a job: a trace checked to be PTF (anything else is
//! said to be what it reads as), its events checked against the PTF
//! report's rules on a second thread (`tramp_graph::verify`).

use tramp_graph::verify::{Options, Report};
use tramp_io::{Input, Progress};

use crate::Error;

/// The verifier's report of the PTF trace at `path`.
pub fn verify(path: &str, opts: Options) -> Result<Report, Error> {
    let input = Input::open(path).map_err(|source| Error::Open {
        path: path.to_string(),
        source,
    })?;
    // Only PTF has persistent objects to verify: say so for anything else.
    match tramp_formats::detect(&input.head, path) {
        Some(f) if f.family == "ptf" => {}
        Some(f) => {
            return Err(Error::NotApplicable(format!(
                "{path} is not a PTF trace (it reads as {}); `tramp verify` checks PTF traces",
                f.name
            )));
        }
        None => {
            return Err(Error::NotApplicable(format!(
                "{path} is not a PTF trace (no `PTF 1.0` header, no `Trace begin` line)"
            )));
        }
    }
    let mut progress = Progress::of(&input);
    let events = tramp_ptf::open(input.reader).map_err(|source| Error::Ptf {
        path: path.to_string(),
        source,
    })?;
    let report = tramp_graph::verify::verify_pipelined(events, opts, &mut |n| progress.record(n));
    progress.finish();
    Ok(report)
}
