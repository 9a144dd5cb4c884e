//! Writing Heph traces: the packet encoder, and a writer an application
//! can emit traces with (epoch first, then events as they end).

use std::io::Write;

use crate::packet::*;
use crate::reader::HephError;

fn put_str(out: &mut Vec<u8>, s: &str, what: &str) -> Result<(), HephError> {
    let n = u16::try_from(s.len()).map_err(|_| {
        HephError::Encode(format!("{what} is {} bytes; at most 65535 fit", s.len()))
    })?;
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

fn put_len(out: &mut Vec<u8>, n: usize, what: &str) -> Result<(), HephError> {
    let n = u16::try_from(n)
        .map_err(|_| HephError::Encode(format!("{what} has {n} elements; at most 65535 fit")))?;
    out.extend_from_slice(&n.to_be_bytes());
    Ok(())
}

fn put_value(out: &mut Vec<u8>, v: &Value) -> Result<(), HephError> {
    out.push(v.type_byte());
    match v {
        Value::U64(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_bits().to_be_bytes()),
        Value::Str(s) => put_str(out, s, "a string attribute")?,
        Value::U64s(a) => {
            put_len(out, a.len(), "an array")?;
            a.iter()
                .for_each(|x| out.extend_from_slice(&x.to_be_bytes()));
        }
        Value::I64s(a) => {
            put_len(out, a.len(), "an array")?;
            a.iter()
                .for_each(|x| out.extend_from_slice(&x.to_be_bytes()));
        }
        Value::F64s(a) => {
            put_len(out, a.len(), "an array")?;
            a.iter()
                .for_each(|x| out.extend_from_slice(&x.to_bits().to_be_bytes()));
        }
        Value::Strs(a) => {
            put_len(out, a.len(), "an array")?;
            for s in a {
                put_str(out, s, "a string in an array")?;
            }
        }
    }
    Ok(())
}

/// Patches the size field of the packet that starts at `start`.
fn seal(out: &mut [u8], start: usize) -> Result<(), HephError> {
    let size = u32::try_from(out.len() - start)
        .map_err(|_| HephError::Encode("a packet longer than 4 GiB".into()))?;
    out[start + 4..start + 8].copy_from_slice(&size.to_be_bytes());
    Ok(())
}

/// Appends the encoding of `p`; on error `out` is unchanged.
pub fn encode(out: &mut Vec<u8>, p: &Packet) -> Result<(), HephError> {
    let start = out.len();
    let r = encode_inner(out, p, start);
    if r.is_err() {
        out.truncate(start);
    }
    r
}

fn encode_inner(out: &mut Vec<u8>, p: &Packet, start: usize) -> Result<(), HephError> {
    match p {
        Packet::Metadata(m) => {
            out.extend_from_slice(&METADATA_MAGIC.to_be_bytes());
            out.extend_from_slice(&[0; 4]);
            put_str(out, &m.option, "the option name")?;
            match &m.value {
                OptionValue::Epoch(ns) => out.extend_from_slice(&ns.to_be_bytes()),
                OptionValue::Unknown(b) => out.extend_from_slice(b),
            }
        }
        Packet::Event(e) => {
            out.extend_from_slice(&EVENT_MAGIC.to_be_bytes());
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(&e.stream.to_be_bytes());
            out.extend_from_slice(&e.counter.to_be_bytes());
            out.extend_from_slice(&e.substream.to_be_bytes());
            out.extend_from_slice(&e.start.to_be_bytes());
            out.extend_from_slice(&e.end.to_be_bytes());
            put_str(out, &e.description, "the description")?;
            for a in &e.attributes {
                put_str(out, &a.name, "an attribute name")?;
                put_value(out, &a.value)?;
            }
        }
    }
    seal(out, start)
}

/// Writes a Heph trace to any `Write`; counts events per stream so the
/// application need not.
pub struct Writer<W: Write> {
    out: W,
    buf: Vec<u8>,
    counters: std::collections::HashMap<u32, u32>,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer {
            out,
            buf: Vec::with_capacity(1 << 16),
            counters: Default::default(),
        }
    }

    /// Writes the epoch option (ns since the Unix epoch); event times are
    /// relative to it.
    pub fn epoch(&mut self, ns_since_unix_epoch: u64) -> Result<(), HephError> {
        self.packet(&Packet::Metadata(Metadata {
            option: "epoch".into(),
            value: OptionValue::Epoch(ns_since_unix_epoch),
        }))
    }

    /// Writes one event of `stream`, numbering it with the stream's next
    /// counter value (wrapping after 2^32 - 1).
    #[allow(clippy::too_many_arguments)]
    pub fn event(
        &mut self,
        stream: u32,
        substream: u64,
        start: u64,
        end: u64,
        description: &str,
        attributes: &[(&str, Value)],
    ) -> Result<(), HephError> {
        let counter = self.counters.entry(stream).or_insert(0);
        let e = Event {
            stream,
            counter: *counter,
            substream,
            start,
            end,
            description: description.into(),
            attributes: attributes
                .iter()
                .map(|(n, v)| Attribute {
                    name: (*n).into(),
                    value: v.clone(),
                })
                .collect(),
        };
        self.packet(&Packet::Event(e))?;
        let c = self.counters.get_mut(&stream).expect("inserted above");
        *c = c.wrapping_add(1);
        Ok(())
    }

    /// Writes any packet as given (counters untouched).
    pub fn packet(&mut self, p: &Packet) -> Result<(), HephError> {
        encode(&mut self.buf, p)?;
        if self.buf.len() >= 1 << 16 {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<(), HephError> {
        self.out.write_all(&self.buf).map_err(HephError::Io)?;
        self.buf.clear();
        Ok(())
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> Result<W, HephError> {
        self.flush_buf()?;
        self.out.flush().map_err(HephError::Io)?;
        Ok(self.out)
    }
}
