//! Untrusted bytes as a capture raw log, read the way `tramp record` reads
//! it while the program runs (the first part, a poll, the rest, a poll,
//! then the end): never a panic or a hang, and what converts is a valid
//! HATF trace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_hatf::Reader;
use tramp_record::RecordOptions;
use tramp_record::live::Session;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("tramp-fuzz-raw-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let path = logs.join("trace.1.1.raw");
    let out = dir.join("t.hatf");
    let split = data.first().map_or(0, |b| *b as usize * data.len() / 256);
    std::fs::write(&path, &data[..split]).unwrap();
    let mut s = Session::new(&logs, 1, &RecordOptions::new(out.clone()));
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
    if s.finish().is_ok() {
        let bytes = std::fs::read(&out).unwrap();
        let mut r = Reader::from_slice(&bytes);
        while r.next_item().expect("the converter writes valid HATF").is_some() {}
    }
});
