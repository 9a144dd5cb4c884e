//! Untrusted bytes as a Meta-TF trace: with the trace's embedded DTD or a
//! fixed one, reading never panics or hangs and memory stays bounded; the
//! pulling reader (`next_record`) and the visiting one (`for_each_record`,
//! its own fast loop) deliver the same records and stop at the same place.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_core::Source;
use tramp_metatf::codec::MetaSource;

const FSTRACE: &str = include_str!("../../crates/metatf/tests/dtd/good/fstrace.dtd");
const LIMIT: usize = 100_000;

fn text(rec: &tramp_core::Record<'_>) -> String {
    let mut s = String::new();
    tramp_core::text::format_record(&mut s, rec);
    s
}

fuzz_target!(|data: &[u8]| {
    for dtd in [None, Some(FSTRACE)] {
        let Ok(mut src) = MetaSource::open(data, dtd) else {
            continue;
        };
        let mut pulled = Vec::new();
        let pull_end = loop {
            match src.next_record() {
                Ok(Some(rec)) => pulled.push(text(&rec)),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e.to_string()),
            }
            if pulled.len() > LIMIT {
                return;
            }
        };
        let mut src = MetaSource::open(data, dtd).expect("opened once");
        let mut visited = Vec::new();
        let visit_end = src
            .for_each_record(|rec| visited.push(text(rec)))
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(pulled, visited);
        assert_eq!(pull_end, visit_end);
    }
});
