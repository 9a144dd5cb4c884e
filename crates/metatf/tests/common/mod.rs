//! Helpers shared by the Meta-TF integration tests.

// Not every test file uses every helper.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tramp_core::{Record, Source, Value};
use tramp_metatf::codec::MetaSource;

/// A `Finish` writer whose bytes stay readable after the sink that owns it
/// has finished: clone it before handing it over, then call `bytes`.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    /// Everything written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().clone()
    }
}

impl std::io::Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl tramp_core::output::Finish for Capture {
    fn finish(self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A record as comparable text: its type name and each field's value.
pub type Flat = (String, Vec<String>);

/// A field value as text (`-` when absent; lists element by element).
pub fn flat(v: Option<Value<'_>>) -> String {
    match v {
        None => "-".into(),
        Some(Value::U64(x)) => x.to_string(),
        Some(Value::Bytes(b)) => format!("{b:02x?}"),
        Some(Value::List(l)) => format!(
            "[{}]",
            l.iter()
                .map(|x| flat(Some(x)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Some(other) => format!("{other:?}"),
    }
}

/// A record as [`Flat`] text.
pub fn flat_record(rec: &Record<'_>) -> Flat {
    (
        rec.record_type().name.clone(),
        rec.fields().map(|(_, v)| flat(v)).collect(),
    )
}

/// Every record of a Meta-TF trace (its embedded DTD), pulled one by one.
pub fn read_flat(bytes: &[u8]) -> Vec<Flat> {
    let mut src = MetaSource::open(bytes, None).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = src.next_record().unwrap() {
        out.push(flat_record(&rec));
    }
    out
}
