//! The recursive-data-structure profile of a trace (`tramp_rds`), its
//! sites and instructions named by function and line for a recorded
//! program, and its figures.

use tramp_core::{Analysis, Run};
use tramp_rds::analysis::RdsAnalysis;

use crate::Error;
use crate::input::{Opened, TraceSpec, open_for};

/// What the profile needs of a trace, for its refusal.
pub const NEEDS: &str = "an object graph (PTF) or heap events with pointer loads and stores (`tramp cc`, then `tramp record --pointers`)";

/// Opens a trace for the profile, refused when it holds neither an object
/// graph nor heap events with loads and stores.
pub fn open(spec: &TraceSpec) -> Result<Opened, Error> {
    open_for(spec, "rds", |d| d.objects || (d.heap && d.accesses), NEEDS)
}

/// The profile of `o` (`top` instances listed; `gc`: the objects the root
/// no longer reaches are collected), sites named.
pub fn profile(o: &mut Opened, top: usize, gc: bool) -> (tramp_rds::report::RdsReport, Run) {
    let mut rds = RdsAnalysis::new(top);
    if gc {
        rds = rds.with_collection();
    }
    let mut modules = tramp_symbols::ModuleMap::new();
    let mut one = tramp_heap::images::OneImage::new("rds");
    let run = o.run(&mut [&mut one, &mut rds, &mut modules], Vec::new());
    let mut report = Analysis::finish(rds);
    let mut names = Analysis::finish(modules).names();
    report.name_sites(|a, is_site| {
        if is_site {
            names.site(a)
        } else {
            names.code(a)
        }
    });
    (report, run)
}

/// Writes the profile's figures as SVG files into `dir` (made if
/// missing); each file whole or not at all.
pub fn write_figures(report: &tramp_rds::report::RdsReport, dir: &str) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Create {
        path: format!("the directory {dir}"),
        source,
    })?;
    for (name, svg) in report.figures() {
        let path = std::path::Path::new(dir).join(name);
        crate::output::write_whole(&path.to_string_lossy(), svg.as_bytes())?;
    }
    Ok(())
}

/// Refuses a figures directory that is a file, before the work.
pub fn check_figures_dir(dir: &str) -> Result<(), Error> {
    let p = std::path::Path::new(dir);
    if p.exists() && !p.is_dir() {
        return Err(Error::NotApplicable(format!(
            "--plots {dir}: that is a file; --plots names a directory for the figures"
        )));
    }
    Ok(())
}
