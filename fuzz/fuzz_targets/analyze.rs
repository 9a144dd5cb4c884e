//! Untrusted bytes as libCacheSim csv and oracleGeneral request traces,
//! analysed as `tramp analyze` does (every window from 1 unit) and drawn:
//! never a panic, a hang or a picture without bound; the analysis counts
//! every request read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_analyze::{Analyzer, Options};
use tramp_cachesim::trace::{CsvReader, OracleReader};

fuzz_target!(|data: &[u8]| {
    let window = 1 + data.first().map_or(0, |&b| b as u64 % 120);
    for oracle in [false, true] {
        let mut a = Analyzer::new(Options {
            window,
            ..Options::default()
        });
        let mut n = 0u64;
        let reqs: Box<dyn Iterator<Item = _>> = match oracle {
            false => Box::new(CsvReader::new(data)),
            true => Box::new(OracleReader::new(data)),
        };
        for r in reqs {
            match r {
                Ok(r) => {
                    a.add(&r);
                    n += 1;
                }
                Err(_) => break,
            }
        }
        let out = a.finish();
        assert_eq!(out.stats.requests, n);
        for svg in out.svgs("fuzz") {
            assert!(svg.len() < 4 << 20, "a picture of {} bytes", svg.len());
        }
    }
});
