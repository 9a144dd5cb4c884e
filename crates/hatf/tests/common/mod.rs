//! Helpers shared by the HATF integration tests.
#![allow(dead_code)]

use tramp_hatf::text::{TextReader, TextWriter};
use tramp_hatf::{OwnedItem, Policy, Reader, Writer};

/// Encodes items with the given policy.
pub fn encode(items: &[OwnedItem], policy: Policy) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), policy);
    for i in items {
        w.write_item(&i.as_item()).expect("encodable");
    }
    w.into_inner().unwrap()
}

/// Decodes all items (metadata included when `meta`); panics on error.
pub fn decode(bytes: &[u8], meta: bool) -> Vec<OwnedItem> {
    let mut r = Reader::new(bytes).with_metadata(meta);
    let mut out = Vec::new();
    while let Some(i) = r.next_item().expect("decodes") {
        out.push(i.to_owned());
    }
    out
}

/// Decodes until the end or the first error; returns both.
pub fn decode_partial(bytes: &[u8], meta: bool) -> (Vec<OwnedItem>, Option<tramp_core::Error>) {
    let mut r = Reader::new(bytes).with_metadata(meta);
    let mut out = Vec::new();
    loop {
        match r.next_item() {
            Ok(Some(i)) => out.push(i.to_owned()),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

pub fn to_text(bytes: &[u8]) -> Vec<u8> {
    let mut r = Reader::new(bytes).with_metadata(true);
    let mut w = TextWriter::new(Vec::new());
    while let Some(i) = r.next_item().unwrap() {
        w.write_item(&i).unwrap();
    }
    w.into_inner().unwrap()
}

pub fn from_text(text: &[u8]) -> Vec<u8> {
    let mut r = TextReader::new(text);
    let mut w = Writer::new(Vec::new(), Policy::Explicit);
    while let Some(i) = r.next_item().unwrap() {
        w.write_item(&i).unwrap();
    }
    w.into_inner().unwrap()
}
