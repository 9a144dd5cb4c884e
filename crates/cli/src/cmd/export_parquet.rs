//! `tramp export --parquet DIR`: a heap trace as three Parquet tables
//! (`tramp_api::export::parquet`).

use anyhow::Result;

use super::InputArgs;

pub fn run(input: &InputArgs, dir: &str, json: bool) -> Result<()> {
    let (report, run, o) = tramp_api::export::parquet(&input.spec(), dir)?;
    super::print_report(&report, json)?;
    let covers = "; the tables hold the records before the error";
    super::end_run(run, &o, Some(dir), covers)
}
