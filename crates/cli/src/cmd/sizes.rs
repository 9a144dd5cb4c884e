//! `tramp sizes`: the HATF paper's compaction study on a heap trace.

use anyhow::{Result, bail};
use clap::Args;

use super::{InputArgs, end_run, print_report};

/// Reproduce the HATF paper's size and time tables (§3) on any heap trace.
///
/// Table 4: bytes per data record of every form — Simple Binary (four
/// word-sized fields; 8-byte words on 64-bit traces, so 32 bytes where the
/// paper's 32-bit traces had 16), ASCII, HATF naive, HATF best, Split
/// Stream, HATF SplitAddr and tramp's tpack — uncompressed and with each
/// compressor, each stream compressed on its own. Table 7: HATF's size
/// policies; Table 8: its address policies. These use the paper's content
/// (record type, size and addresses of allocs, frees and reallocs); a
/// last table gives HATF and tpack on every record (times, threads, heaps,
/// sites, comments). Tables 5 and 6: µs per record to read and write each
/// form, uncompressed and through gzip, on the first records of the trace
/// held in memory, and the paper's ASCII/Perl column (needs `perl`).
///
/// One streaming pass over the trace (constant memory), the encoders spread
/// over worker threads. Forms and decisions: docs/formats/study.md.
#[derive(Args)]
pub struct SizesArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Compressors to report: gzip (the paper's, level 6), zstd (level 3),
    /// xz (preset 6), comma-separated. xz is slow and takes about 90 MB per
    /// stream it compresses (some 30 streams: about 3 GB in all).
    #[arg(long, default_value = "gzip,zstd")]
    compress: String,
    /// Data records to time for Tables 5 and 6 (the first ones); 0 leaves
    /// the timing tables out. The timing runs after the size tables, alone
    /// on the machine, and takes 1 to 2.5 s per 100,000 records (best of
    /// three of every form, read and write, with and without gzip; 11 s
    /// for the default on a CPython recording).
    #[arg(long, default_value_t = 500_000)]
    timing_records: usize,
    /// Simple Binary and Split Stream word size: 8 (64-bit traces) or 4
    /// (the paper's 32-bit form; a larger value is then an error).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(4..=8))]
    word: u8,
    /// Worker threads, 1 to 64 (default: the machine's cores, at most 4).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=64))]
    threads: Option<u8>,
}

pub fn run(a: SizesArgs) -> Result<()> {
    let request = tramp_api::sizes::Request {
        compress: &a.compress,
        word: a.word,
        threads: a.threads.map(usize::from),
        timing_records: a.timing_records,
    };
    let (report, run, o) = tramp_api::sizes::study(&a.input.spec(), &request)?;
    print_report(&run.outcome(&report), a.json)?;
    if let Some(e) = &report.failed {
        bail!("sizes: {e}");
    }
    let covers = "; the tables above cover the records before the error";
    end_run(run, &o, None, covers)
}
