//! Untrusted `--policy` and `--size` arguments: a spec either parses or is
//! refused with a reason, never a panic; a parsed spec prints as it parses
//! back, and the cache it builds, fed requests from the same bytes, never
//! holds more than its capacity.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_cachesim::units::CacheSize;
use tramp_cachesim::{Cache, PolicySpec, Request, Unit};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    for unit in [Unit::Objects, Unit::Bytes] {
        if let Ok(CacheSize::Fraction(f)) = CacheSize::parse(text, unit) {
            assert!(f > 0.0 && f <= 1.0);
        }
    }
    let Ok(spec) = text.parse::<PolicySpec>() else {
        return;
    };
    let again: PolicySpec = spec.to_string().parse().expect("a printed spec parses");
    assert_eq!(again, spec);
    let rest = &data[split.min(data.len())..];
    for (unit, cap) in [(Unit::Objects, 7), (Unit::Bytes, 300)] {
        let mut cache = Cache::of(&spec, cap, unit);
        for (i, w) in rest.chunks(2).enumerate() {
            let id = w[0] as u64 % 32;
            let size = w.get(1).map_or(1, |&s| s as u32 % 120 + 1);
            let mut r = Request::read(id, size);
            r.next_access = i as u64 + 2 + (w[0] as u64 % 5);
            cache.access(&r);
            assert!(cache.policy().occupied() <= cap, "{spec} over capacity");
        }
    }
});
