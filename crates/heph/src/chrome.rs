//! Export to the Chrome Trace Event format (JSON object form), which
//! Perfetto and chrome://tracing open: each stream is a process, each
//! substream a thread (with `process_name`/`thread_name` metadata events),
//! each event a complete (`X`) event. Timestamps are microseconds after
//! the trace's epoch with three decimals (nanoseconds kept exactly); the
//! epoch itself is in `otherData`. Written as it streams: memory holds
//! only the set of streams and substreams seen.

use std::collections::HashSet;
use std::io::Write;

use crate::packet::{Event, OptionValue, Packet, Value};
use crate::reader::HephError;

/// Writes `ns` as microseconds with three decimals, exactly.
fn micros(out: &mut Vec<u8>, ns: u64) {
    let _ = write!(out, "{}.{:03}", ns / 1000, ns % 1000);
}

/// A JSON string, escaped by serde_json (quotes, backslashes, control
/// characters, and nothing that is not valid UTF-8 can reach here).
fn string(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("strings serialise");
}

/// A float as JSON: finite values as numbers; NaN and the infinities,
/// which JSON cannot hold, as the strings "NaN", "Infinity", "-Infinity".
fn float(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() {
        serde_json::to_writer(&mut *out, &x).expect("finite floats serialise");
    } else if x.is_nan() {
        out.extend_from_slice(b"\"NaN\"");
    } else if x > 0.0 {
        out.extend_from_slice(b"\"Infinity\"");
    } else {
        out.extend_from_slice(b"\"-Infinity\"");
    }
}

fn list<T>(out: &mut Vec<u8>, items: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, x);
    }
    out.push(b']');
}

fn value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U64(x) => {
            let _ = write!(out, "{x}");
        }
        Value::I64(x) => {
            let _ = write!(out, "{x}");
        }
        Value::F64(x) => float(out, *x),
        Value::Str(s) => string(out, s),
        Value::U64s(a) => list(out, a, |o, x| {
            let _ = write!(o, "{x}");
        }),
        Value::I64s(a) => list(out, a, |o, x| {
            let _ = write!(o, "{x}");
        }),
        Value::F64s(a) => list(out, a, |o, x| float(o, *x)),
        Value::Strs(a) => list(out, a, |o, s| string(o, s)),
    }
}

/// The fixed fields of an event being written.
struct Parts {
    stream: u32,
    substream: u64,
    start: u64,
    end: u64,
}

/// Streams packets out as Chrome trace JSON.
pub struct ChromeWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    events: u64,
    streams: HashSet<u32>,
    threads: HashSet<(u32, u64)>,
    epoch: Option<u64>,
}

impl<W: Write> ChromeWriter<W> {
    pub fn new(out: W) -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        ChromeWriter {
            out,
            buf,
            events: 0,
            streams: HashSet::new(),
            threads: HashSet::new(),
            epoch: None,
        }
    }

    fn sep(&mut self) {
        if self.events > 0 {
            self.buf.push(b',');
        }
        self.buf.push(b'\n');
        self.events += 1;
    }

    fn meta(&mut self, pid: u32, tid: u64, what: &str, name: &str) {
        self.sep();
        let _ = write!(
            self.buf,
            "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{what}\",\"args\":{{\"name\":"
        );
        string(&mut self.buf, name);
        self.buf.extend_from_slice(b"}}");
    }

    /// Adds one packet (metadata packets set the epoch; others are noted
    /// in `otherData`).
    pub fn packet(&mut self, p: &Packet) -> Result<(), HephError> {
        match p {
            Packet::Metadata(m) => {
                if let OptionValue::Epoch(ns) = m.value {
                    self.epoch = Some(ns);
                }
            }
            Packet::Event(e) => self.event(e),
        }
        self.spill()
    }

    /// Adds one borrowed packet (the fast path: no owned copy of the
    /// event).
    pub fn packet_ref(&mut self, p: &crate::PacketRef<'_>) -> Result<(), HephError> {
        match p {
            crate::PacketRef::Metadata {
                option: "epoch",
                value,
            } if value.len() == 8 => {
                self.epoch = Some(u64::from_be_bytes((*value).try_into().expect("8 bytes")));
            }
            crate::PacketRef::Metadata { .. } => {}
            crate::PacketRef::Event(e) => {
                let attrs: Vec<(&str, Value)> =
                    e.attributes().map(|(n, v)| (n, v.to_value())).collect();
                let parts = Parts {
                    stream: e.stream,
                    substream: e.substream,
                    start: e.start,
                    end: e.end,
                };
                self.event_parts(parts, e.description, attrs.iter().map(|(n, v)| (*n, v)));
            }
        }
        self.spill()
    }

    fn spill(&mut self) -> Result<(), HephError> {
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(&self.buf).map_err(HephError::Io)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn event(&mut self, e: &Event) {
        let parts = Parts {
            stream: e.stream,
            substream: e.substream,
            start: e.start,
            end: e.end,
        };
        self.event_parts(
            parts,
            &e.description,
            e.attributes.iter().map(|a| (a.name.as_str(), &a.value)),
        );
    }

    fn event_parts<'v>(
        &mut self,
        e: Parts,
        description: &str,
        attributes: impl Iterator<Item = (&'v str, &'v Value)>,
    ) {
        let e = Parts {
            end: e.end.max(e.start),
            ..e
        };
        if self.streams.insert(e.stream) {
            self.meta(e.stream, 0, "process_name", &format!("stream {}", e.stream));
        }
        if self.threads.insert((e.stream, e.substream)) {
            self.meta(
                e.stream,
                e.substream,
                "thread_name",
                &format!("substream {}", e.substream),
            );
        }
        self.sep();
        let b = &mut self.buf;
        let _ = write!(
            b,
            "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":",
            e.stream, e.substream
        );
        micros(b, e.start);
        b.extend_from_slice(b",\"dur\":");
        micros(b, e.end - e.start);
        b.extend_from_slice(b",\"name\":");
        string(b, description);
        b.extend_from_slice(b",\"cat\":\"\"");
        let mut seen: Vec<&str> = Vec::new();
        for (i, (name, v)) in attributes.enumerate() {
            b.extend_from_slice(if i == 0 { b",\"args\":{" } else { b"," });
            // JSON objects need distinct keys: a repeated name gets its
            // position appended (decision 8).
            if seen.contains(&name) {
                string(b, &format!("{name} #{}", i + 1));
            } else {
                string(b, name);
                seen.push(name);
            }
            b.push(b':');
            value(b, v);
        }
        if !seen.is_empty() {
            b.push(b'}');
        }
        b.push(b'}');
    }

    /// Closes the JSON (with the epoch in `otherData`) and flushes.
    pub fn finish(mut self) -> Result<W, HephError> {
        self.buf
            .extend_from_slice(b"\n],\"otherData\":{\"epoch_ns\":");
        match self.epoch {
            Some(ns) => {
                let _ = write!(self.buf, "\"{ns}\"");
            }
            None => self.buf.extend_from_slice(b"null"),
        }
        self.buf.extend_from_slice(b",\"generator\":\"tramp\"}}\n");
        self.out.write_all(&self.buf).map_err(HephError::Io)?;
        self.out.flush().map_err(HephError::Io)?;
        Ok(self.out)
    }
}

/// Exports every packet `reader` yields to `out` (damage the reader skips
/// stays in its warnings); returns `out`, to be finished by the caller.
pub fn export<R: std::io::Read, W: Write>(
    reader: &mut crate::Reader<R>,
    out: W,
    progress: &mut tramp_io::Progress,
) -> Result<W, HephError> {
    let mut w = ChromeWriter::new(out);
    let mut n = 0u64;
    while let Some(p) = reader.next_ref()? {
        w.packet_ref(&p)?;
        n += 1;
        progress.record(n);
    }
    progress.finish();
    w.finish()
}
