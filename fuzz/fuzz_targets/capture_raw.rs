//! Untrusted bytes as a capture raw log, read the way `tramp record` reads
//! it while the program runs (the first part, a poll, the rest, a poll,
//! then the end): never a panic or a hang, and what converts is a valid
//! trace: HATF, or, when the steering first byte is odd, a pointer trace
//! (Meta-TF, as `tramp record --pointers` writes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_hatf::Reader;
use tramp_record::RecordOptions;
use tramp_record::live::Session;

fuzz_target!(|data: &[u8]| {
    // The first byte steers (not part of the log): odd for a pointer
    // trace, and where the log is cut between the two polls.
    let Some((&ctl, data)) = data.split_first() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("tramp-fuzz-raw-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let path = logs.join("trace.1.1.raw");
    let pointers = ctl & 1 == 1;
    let out = dir.join(if pointers { "t.mtf" } else { "t.hatf" });
    let split = ctl as usize * data.len() / 256;
    std::fs::write(&path, &data[..split]).unwrap();
    let mut opts = RecordOptions::new(out.clone());
    opts.pointers = pointers;
    let mut s = Session::new(&logs, 1, &opts);
    if s.poll().is_err() {
        return;
    }
    use std::io::Write;
    // A log found damaged is removed at once; the rest then makes a new one.
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&data[split..]).unwrap();
    drop(f);
    if s.poll().is_err() {
        return;
    }
    if s.finish(None).is_err() {
        return;
    }
    if pointers {
        use tramp_core::Source;
        let input = std::io::BufReader::new(std::fs::File::open(&out).unwrap());
        let mut src = tramp_metatf::codec::MetaSource::open(input, None)
            .expect("the converter writes a valid pointer trace");
        while src
            .next_record()
            .expect("the converter writes valid records")
            .is_some()
        {}
    } else {
        let bytes = std::fs::read(&out).unwrap();
        let mut r = Reader::from_slice(&bytes);
        while r.next_item().expect("the converter writes valid HATF").is_some() {}
    }
});
