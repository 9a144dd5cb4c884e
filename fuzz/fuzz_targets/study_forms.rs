//! Untrusted bytes into the readers of the HATF paper's comparison forms
//! (Simple Binary, ASCII, Split Stream, HATF SplitAddr's joiner): no panic,
//! no hang; a SplitAddr pair that joins is a HATF trace a reader takes.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use tramp_study::ascii::AsciiReader;
use tramp_study::simple::SimpleReader;
use tramp_study::split::SplitReader;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = SimpleReader::new(data) {
        while let Ok(Some(_)) = r.next_event() {}
    }
    let mut r = AsciiReader::new(data);
    while let Ok(Some(_)) = r.next_event() {}
    // Four streams: the input cut in four at its first bytes' say.
    let n = data.len();
    let cut = |i: usize| data.get(i).map_or(0, |b| *b as usize * n / 256);
    let mut c = [cut(0), cut(1), cut(2)];
    c.sort();
    let parts = [&data[..c[0]], &data[c[0]..c[1]], &data[c[1]..c[2]], &data[c[2]..]];
    for word in [4, 8] {
        let mut r = SplitReader::new(parts, word);
        while let Ok(Some(_)) = r.next_event() {}
    }
    let (main, addrs) = data.split_at(cut(3).min(n));
    let mut joined = Vec::new();
    if tramp_hatf::splitaddr::Joiner::new(main, addrs)
        .read_to_end(&mut joined)
        .is_ok()
    {
        let mut r = tramp_hatf::Reader::from_slice(&joined);
        while let Ok(Some(_)) = r.next_item() {}
    }
});
