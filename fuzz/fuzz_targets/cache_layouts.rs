//! Untrusted bytes as libCacheSim's vscsi, twr and lcs layouts (and
//! their requests split into pages): never a panic or a hang; every whole
//! record is a request, a cut one the only error, named with its record
//! number; a header that is not lcs's is refused with a reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_cachesim::layouts::{self, Layout, LayoutReader};
use tramp_cachesim::trace::TraceError;

fn drain(data: &[u8], layout: Layout, start: u64) {
    let len = layout.record_len();
    let mut n = 0u64;
    let mut pages = Vec::new();
    for r in LayoutReader::new(data, layout, start) {
        match r {
            Ok(r) => {
                // 1 MiB pages: at most 4 Ki of them for the largest size
                // a record can say (the work is the bytes it claims).
                layouts::pages(&r, 512, 1 << 20, &mut pages);
                assert!(!pages.is_empty() && pages.len() as u64 <= (r.size as u64 >> 20) + 2);
                n += 1;
            }
            Err(TraceError::Cut { record, .. }) => assert_eq!(record, n),
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(n, (data.len() / len) as u64);
    // The batch reader gives the same requests and the same end.
    let mut r = LayoutReader::new(data, layout, start);
    let mut batch = Vec::new();
    let end = loop {
        match r.fill_batch(&mut batch, 7) {
            Ok(true) => {}
            Ok(false) => break None,
            Err(e) => break Some(e),
        }
    };
    assert_eq!(batch.len() as u64, n);
    assert_eq!(end.is_some(), data.len() % len != 0);
}

fuzz_target!(|data: &[u8]| {
    if let Some(v) = layouts::vscsi_version(data) {
        drain(data, Layout::Vscsi(v), 0);
    }
    drain(data, Layout::Twr, 0);
    match layouts::lcs_version(data) {
        Ok(v) => drain(&data[layouts::LCS_HEADER..], Layout::Lcs(v), 8192),
        Err(why) => assert!(!why.is_empty()),
    }
    // Every lcs version over whatever bytes there are.
    for v in 1..=8 {
        drain(data, Layout::Lcs(v), 0);
    }
});
