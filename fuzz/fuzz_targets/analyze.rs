//! Untrusted bytes as libCacheSim csv, oracleGeneral, lcs v3 and twr
//! request traces (the last two with writes and TTLs), analysed as
//! `tramp analyze` does (every window from 1 unit), drawn and written as
//! one page: never a panic, a hang or a picture without bound; the
//! analysis counts every request read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_analyze::{Analyzer, Options};
use tramp_cachesim::layouts::{Layout, LayoutReader};
use tramp_cachesim::trace::{CsvReader, OracleReader};

fuzz_target!(|data: &[u8]| {
    let window = 1 + data.first().map_or(0, |&b| b as u64 % 120);
    for layout in 0..4 {
        let mut a = Analyzer::new(Options {
            window,
            ..Options::default()
        });
        let mut n = 0u64;
        let mut feed = |r: tramp_cachesim::Request| {
            a.add(&r);
            n += 1;
        };
        match layout {
            0 => CsvReader::new(data).map_while(Result::ok).for_each(&mut feed),
            1 => OracleReader::new(data).map_while(Result::ok).for_each(&mut feed),
            2 => LayoutReader::new(data, Layout::Lcs(3), 0)
                .map_while(Result::ok)
                .for_each(&mut feed),
            _ => LayoutReader::new(data, Layout::Twr, 0)
                .map_while(Result::ok)
                .for_each(&mut feed),
        }
        let out = a.finish();
        assert_eq!(out.stats.requests, n);
        for svg in out.svgs("fuzz") {
            assert!(svg.len() < 4 << 20, "a picture of {} bytes", svg.len());
        }
        let page = out.html("fuzz", None);
        assert!(page.len() < 16 << 20, "a page of {} bytes", page.len());
    }
});
