//! A recording's profile index: the trailer found from a file's end (its
//! block headers walked, its checksum and count checked) and the document
//! decoded. Any bytes give a trailer, "none", "unreachable" or an error,
//! never a panic, and memory bounded by the input (a claimed length is
//! checked against the file before it is read; the document decompresses
//! to at most 1 GiB). Even first bytes: the data is a document alone.
//! A first byte of 3 modulo 4: the data is a file to join (its blocks
//! copied, each checksum checked: an error, never a panic, and no more
//! memory than its largest block).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.first().is_some_and(|b| b & 3 == 3) {
        let mut out = Vec::new();
        if let Ok(c) = tramp_tpack::join::copy_blocks(&mut &data[1..], &mut out) {
            assert_eq!(out.len() as u64, c.bytes);
        }
        return;
    }
    if data.first().is_some_and(|b| b & 1 == 0) {
        let _ = tramp_index::Index::decode(&data[1..]);
        return;
    }
    if let Ok(tramp_tpack::trailer::Found::Trailer(body)) =
        tramp_tpack::trailer::find(&mut std::io::Cursor::new(data))
    {
        let _ = tramp_index::Index::decode(&body);
    }
});
