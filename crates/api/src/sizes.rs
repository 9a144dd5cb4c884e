//! The HATF paper's compaction study as a job: a heap trace sized in every
//! form and compressor (`tramp_study::SizesAnalysis`), its options checked
//! first.

use tramp_core::{Analysis, Run};
use tramp_study::{Compressor, Options, SizesAnalysis, SizesReport};

use crate::Error;
use crate::input::{Opened, TraceSpec, open_for};

/// The study as asked for.
pub struct Request<'a> {
    /// Compressors, comma-separated (`tramp sizes --compress`).
    pub compress: &'a str,
    /// Word size of the Simple Binary form: 4 or 8.
    pub word: u8,
    /// Threads for the encoders (`None`: the study's default).
    pub threads: Option<usize>,
    /// Records timed for Tables 5 and 6.
    pub timing_records: usize,
}

/// Runs the study over the heap trace `spec`; an encoder that failed is an
/// error after the report.
pub fn study(spec: &TraceSpec, r: &Request) -> Result<(SizesReport, Run, Opened), Error> {
    if r.word != 4 && r.word != 8 {
        return Err(Error::Invalid("--word is 4 or 8".into()));
    }
    let mut opts = Options {
        compressors: Compressor::parse_list(r.compress).map_err(Error::Invalid)?,
        word: r.word as usize,
        ..Options::default()
    };
    if let Some(t) = r.threads {
        opts.threads = t;
    }
    // A described layout or a DTD of other records: no heap events to size.
    let needs = "heap events (allocations, frees, reallocs): it studies heap traces";
    let mut o = open_for(spec, "sizes", |d| d.heap, needs)?;
    let mut study = SizesAnalysis::new(opts, r.timing_records)?;
    let mut one = tramp_heap::images::OneImage::new("sizes");
    let run = o.run(&mut [&mut one, &mut study], Vec::new());
    Ok((study.finish(), run, o))
}
