//! Damaged input: truncation at every offset, unknown tags, invalid widths.
//! Every record before the damage is delivered, then a precise error.

mod common;
use common::*;
use tramp_hatf::{OwnedItem, Policy};
use tramp_workloads::sample::Sample;

fn sample_bytes() -> (Vec<u8>, Vec<OwnedItem>) {
    let items: Vec<OwnedItem> = Sample::new(400, 7).collect();
    let bytes = encode(&items, Policy::Naive);
    (bytes, items)
}

/// Byte offsets where records end, from a metadata-including decode.
fn record_ends(bytes: &[u8]) -> Vec<usize> {
    let mut r = tramp_hatf::Reader::new(bytes).with_metadata(true);
    let mut ends = Vec::new();
    while r.next_item().unwrap().is_some() {
        ends.push(r.position().offset as usize);
    }
    ends
}

#[test]
fn truncation_at_every_offset_delivers_the_prefix_then_errors() {
    let (bytes, _) = sample_bytes();
    let full = decode(&bytes, true);
    let ends = record_ends(&bytes);
    assert_eq!(ends.len(), full.len());
    for cut in 0..bytes.len() {
        let (got, err) = decode_partial(&bytes[..cut], true);
        let complete = ends.iter().filter(|e| **e <= cut).count();
        assert_eq!(got.len(), complete, "cut at {cut}");
        assert_eq!(&got[..], &full[..complete], "cut at {cut}");
        let at_boundary = cut == 0 || ends.contains(&cut);
        match err {
            None => assert!(at_boundary, "cut at {cut} mid-record gave no error"),
            Some(e) => {
                assert!(!at_boundary, "cut at {cut} on a boundary gave {e}");
                let pos = e.position().unwrap();
                let start = if complete == 0 { 0 } else { ends[complete - 1] };
                assert_eq!(pos.offset as usize, start, "{e}");
                assert_eq!(pos.record as usize, complete, "{e}");
                assert!(e.to_string().contains("cut short"), "{e}");
            }
        }
    }
}

#[test]
fn unknown_tag_is_reported_with_offset_and_record() {
    let bytes = [1, 0, 0, 0, 1, 12, 0, 0];
    let (got, err) = decode_partial(&bytes, false);
    assert_eq!(got.len(), 1);
    let msg = err.unwrap().to_string();
    assert_eq!(
        msg,
        "hatf input invalid at byte offset 5, record 1: unknown record tag 12 (valid tags are 0-11)"
    );
}

#[test]
fn invalid_metadata_is_rejected() {
    let cases: [(&[u8], &str); 6] = [
        (&[11, 1, 0, 3], "invalid width code 3"),
        (&[11, 1, 6, 1], "unknown field code 6"),
        (&[11, 3, 0, 1], "unknown metadata operation 3"),
        (&[11, 2, 0, 5], "unknown interpretation code 5"),
        (
            &[11, 1, 0, 9],
            "width v1 is only legal for the attributes field, not for size",
        ),
        (
            &[11, 2, 5, 3, 0, 0, 0, 0, 0, 0, 0, 0],
            "the attributes field only takes",
        ),
    ];
    for (bytes, want) in cases {
        let (got, err) = decode_partial(bytes, true);
        assert!(got.is_empty());
        let msg = err.expect("error").to_string();
        assert!(msg.contains(want), "{bytes:?}: {msg}");
        assert!(msg.contains("byte offset 0, record 0"), "{msg}");
    }
}

#[test]
fn absurd_attribute_length_at_end_is_truncation_not_allocation() {
    // attributes v2 with a length of 65535 and only two bytes present.
    let bytes = [11, 2, 5, 0, 11, 1, 5, 10, 1, 0, 0, 0, 1, 0xFF, 0xFF, 1, 2];
    let (got, err) = decode_partial(&bytes, false);
    assert!(got.is_empty());
    let msg = err.unwrap().to_string();
    assert!(
        msg.contains("needs 65542 bytes but the input ends after 9"),
        "{msg}"
    );
}

#[test]
fn truncation_is_the_same_for_borrowed_bytes_and_visits() {
    let (bytes, _) = sample_bytes();
    for cut in (0..bytes.len()).step_by(7) {
        let (want, want_err) = decode_partial(&bytes[..cut], true);
        let mut r = tramp_hatf::Reader::from_slice(&bytes[..cut]).with_metadata(true);
        let mut got = Vec::new();
        let err = loop {
            match r.next_item() {
                Ok(Some(i)) => got.push(i.to_owned()),
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        assert_eq!(got, want, "cut {cut}");
        assert_eq!(err, want_err.as_ref().map(|e| e.to_string()), "cut {cut}");
        let mut visited = Vec::new();
        let res = tramp_hatf::Reader::from_slice(&bytes[..cut])
            .with_metadata(true)
            .for_each_item(|i| visited.push(i.to_owned()));
        assert_eq!(visited, want, "cut {cut}");
        assert_eq!(res.err().map(|e| e.to_string()), err, "cut {cut}");
    }
}

#[test]
fn reader_is_finished_after_an_error() {
    let mut r = tramp_hatf::Reader::new(&[12u8, 0, 0][..]);
    assert!(r.next_item().is_err());
    assert!(r.next_item().unwrap().is_none());
}

#[test]
fn large_trace_streams_through_a_small_pipe() {
    // A reader over a source that returns a few bytes at a time.
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(3).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let (bytes, _) = sample_bytes();
    let mut r = tramp_hatf::Reader::new(Trickle(&bytes)).with_metadata(true);
    let mut n = 0;
    while r.next_item().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, decode(&bytes, true).len());
}

/// Found by the hatf_reader fuzz target: metadata that makes a stride
/// field zero bytes wide once overflowed a shift (a panic with overflow
/// checks on). Both readers decode it alike, and the stride applies.
#[test]
fn a_zero_width_stride_field_reads_no_bytes() {
    let data = include_bytes!("fixtures/zero-width-stride.hatf");
    let mut slice = Vec::new();
    let mut r = tramp_hatf::Reader::from_slice(data).with_metadata(true);
    let slice_end = loop {
        match r.next_item() {
            Ok(Some(i)) => slice.push(i.to_owned()),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    let mut streamed = Vec::new();
    let stream_end = tramp_hatf::Reader::new(&data[..])
        .with_metadata(true)
        .for_each_item(|i| streamed.push(i.to_owned()))
        .err()
        .map(|e| e.to_string());
    assert_eq!(streamed, slice);
    assert_eq!(stream_end, slice_end);
    assert!(slice.len() >= 2, "the comment and the metadata decode");
}
