//! Untrusted `--time` arguments: a range either parses or is refused with
//! a reason, never a panic; a parsed range resolves against any span to
//! a non-empty `[lo, hi)` or is refused; a range of times (no percent)
//! prints as text that parses back to the same nanoseconds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_core::select::{Bound, TimeRange};

fuzz_target!(|data: &[u8]| {
    let (span, text) = match data.split_first_chunk::<8>() {
        Some((s, rest)) => (u64::from_le_bytes(*s), rest),
        None => (0, data),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let Ok(range) = TimeRange::parse(text) else {
        return;
    };
    if let Ok((lo, hi)) = range.resolve(Some(span)) {
        assert!(lo < hi, "{text}: {lo}..{hi}");
    }
    let small = |b: Option<Bound>| match b {
        None => true,
        Some(Bound::Nanos(n)) => n < 1 << 52,
        Some(Bound::Percent(_)) => false,
    };
    if small(range.start) && small(range.end) {
        let again = TimeRange::parse(&range.to_string()).expect("a printed range parses");
        assert_eq!(again, range, "{text} printed as {range}");
    }
});
