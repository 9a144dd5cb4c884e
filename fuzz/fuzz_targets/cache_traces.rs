//! Untrusted bytes as libCacheSim csv and oracleGeneral request traces,
//! simulated by every policy and the LRU curve: never a panic or a hang;
//! every request read before an error is counted, and a cut oracleGeneral
//! record is the only error its reader gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_cachesim::sim::{Options, Simulation};
use tramp_cachesim::trace::{CsvReader, OracleReader, TraceError};
use tramp_cachesim::{PolicyKind, Unit};

fuzz_target!(|data: &[u8]| {
    let unit = if data.first().is_some_and(|b| b & 1 == 1) {
        Unit::Bytes
    } else {
        Unit::Objects
    };
    let opts = Options {
        policies: PolicyKind::ALL.iter().map(|&k| k.into()).collect(),
        sizes: vec![1, 3, 64],
        mrc: true,
        threads: Some(1),
        census: true,
        ..Options::census(unit)
    };
    let mut sim = Simulation::new(&opts);
    let mut n = 0u64;
    for r in CsvReader::new(data) {
        match r {
            Ok(r) => {
                sim.access(r);
                n += 1;
            }
            Err(_) => break,
        }
    }
    assert_eq!(sim.finish().requests, n);

    let mut sim = Simulation::new(&Options {
        future_known: true,
        ..opts
    });
    let mut n = 0u64;
    for r in OracleReader::new(data) {
        match r {
            Ok(r) => {
                sim.access(r);
                n += 1;
            }
            Err(TraceError::Truncated { record, .. }) => assert_eq!(record, n),
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(n, (data.len() / 24) as u64);
    let report = sim.finish();
    for c in report.table.iter().flat_map(|t| &t.caches) {
        assert!(c.occupied <= c.capacity);
    }
});
