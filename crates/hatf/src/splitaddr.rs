//! HATF SplitAddr (the HATF paper's §3, Table 4): a HATF trace with every
//! address that no interpretation encodes — an address field under `none`
//! — moved to a stream of its own, so that each stream compresses
//! independently. The main stream is the HATF trace without those bytes;
//! the address stream is those bytes, in record order (big-endian, in the
//! width in effect). [`Splitter`] turns HATF bytes into the two streams,
//! [`Joiner`] turns them back into the same HATF bytes for any HATF reader.
//! Both walk the records with the encoding state, in constant memory.

use std::io::{self, Read, Write};

use crate::error::HatfError;
use crate::reader::{decode_meta, frame_len};
use crate::spec::{EventKind, Field, Interp, TAG_COMMENT, TAG_METADATA, Width};
use crate::state::State;

fn invalid(e: HatfError, record: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("HATF record {record}: {e}"),
    )
}

/// For each field of an event record of `kind`, in binary order: its width
/// and whether its bytes go to the address stream.
fn fields(state: &State, kind: EventKind) -> impl Iterator<Item = (usize, bool)> + '_ {
    kind.layout()
        .iter()
        .filter(|f| **f != Field::Attributes)
        .map(move |f| {
            let st = state.field(*f);
            let n = st.width.bytes();
            (
                n,
                *f == Field::Address && st.interp == Interp::None && n > 0,
            )
        })
}

/// Splits HATF bytes written into it into a main stream and an address
/// stream.
pub struct Splitter<M: Write, A: Write> {
    main: M,
    addrs: A,
    state: State,
    buf: Vec<u8>,
    record: u64,
}

impl<M: Write, A: Write> Splitter<M, A> {
    pub fn new(main: M, addrs: A) -> Self {
        Splitter {
            main,
            addrs,
            state: State::new(),
            buf: Vec::new(),
            record: 0,
        }
    }

    /// Splits every whole record buffered so far.
    fn drain(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.buf.len() {
            let rec = &self.buf[at..];
            let len = match frame_len(&self.state, rec).map_err(|e| invalid(e, self.record))? {
                Ok(len) => len,
                Err(_) => break,
            };
            let rec = &rec[..len];
            match rec[0] {
                TAG_METADATA => {
                    let m = decode_meta(rec).map_err(|e| invalid(e, self.record))?;
                    self.state.apply(&m).map_err(|e| invalid(e, self.record))?;
                    self.main.write_all(rec)?;
                }
                TAG_COMMENT => self.main.write_all(rec)?,
                tag => {
                    let kind = EventKind::from_tag(tag).expect("frame_len checked the tag");
                    self.main.write_all(&rec[..1])?;
                    let mut p = 1;
                    for (n, side) in fields(&self.state, kind) {
                        if side {
                            self.addrs.write_all(&rec[p..p + n])?;
                        } else {
                            self.main.write_all(&rec[p..p + n])?;
                        }
                        p += n;
                    }
                    self.main.write_all(&rec[p..])?;
                }
            }
            self.record += 1;
            at += len;
        }
        self.buf.drain(..at);
        Ok(())
    }

    /// Ends the split; bytes of a record cut short are an error.
    pub fn finish(mut self) -> io::Result<(M, A)> {
        self.drain()?;
        if !self.buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("HATF record {} cut short", self.record),
            ));
        }
        self.main.flush()?;
        self.addrs.flush()?;
        Ok((self.main, self.addrs))
    }
}

impl<M: Write, A: Write> Write for Splitter<M, A> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= 1 << 16 {
            self.drain()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()
    }
}

/// Joins a main stream and an address stream back into HATF bytes.
pub struct Joiner<M: Read, A: Read> {
    main: M,
    addrs: A,
    state: State,
    out: Vec<u8>,
    pos: usize,
    record: u64,
    done: bool,
}

impl<M: Read, A: Read> Joiner<M, A> {
    pub fn new(main: M, addrs: A) -> Self {
        Joiner {
            main,
            addrs,
            state: State::new(),
            out: Vec::new(),
            pos: 0,
            record: 0,
            done: false,
        }
    }

    fn cut(&self, what: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "SplitAddr {what} stream cut short in record {}",
                self.record
            ),
        )
    }

    fn take(r: &mut impl Read, out: &mut Vec<u8>, n: usize) -> io::Result<bool> {
        let at = out.len();
        out.resize(at + n, 0);
        match r.read_exact(&mut out[at..]) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Rebuilds the next record into `out`; false at the end.
    fn next_record(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.pos = 0;
        let mut tag = [0u8; 1];
        match self.main.read(&mut tag)? {
            0 => {
                let mut extra = [0u8; 1];
                if self.addrs.read(&mut extra)? != 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "SplitAddr address stream longer than its records",
                    ));
                }
                return Ok(false);
            }
            _ => self.out.push(tag[0]),
        }
        match tag[0] {
            TAG_METADATA => {
                if !Self::take(&mut self.main, &mut self.out, 3)? {
                    return Err(self.cut("main"));
                }
                // Ok(len) or Err(len): the header says how long it is.
                let len =
                    match frame_len(&self.state, &self.out).map_err(|e| invalid(e, self.record))? {
                        Ok(l) | Err(l) => l,
                    };
                if !Self::take(&mut self.main, &mut self.out, len - 4)? {
                    return Err(self.cut("main"));
                }
                let m = decode_meta(&self.out).map_err(|e| invalid(e, self.record))?;
                self.state.apply(&m).map_err(|e| invalid(e, self.record))?;
            }
            TAG_COMMENT => {
                if !Self::take(&mut self.main, &mut self.out, 2)? {
                    return Err(self.cut("main"));
                }
                let n = u16::from_be_bytes([self.out[1], self.out[2]]) as usize;
                if !Self::take(&mut self.main, &mut self.out, n)? {
                    return Err(self.cut("main"));
                }
            }
            tag => {
                let kind = EventKind::from_tag(tag)
                    .ok_or_else(|| invalid(HatfError::UnknownTag(tag), self.record))?;
                let layout: Vec<(usize, bool)> = fields(&self.state, kind).collect();
                for (n, side) in layout {
                    let ok = if side {
                        Self::take(&mut self.addrs, &mut self.out, n)?
                    } else {
                        Self::take(&mut self.main, &mut self.out, n)?
                    };
                    if !ok {
                        return Err(self.cut(if side { "address" } else { "main" }));
                    }
                }
                let len = match self.state.field(Field::Attributes).width {
                    Width::Fixed(n) => n as usize,
                    Width::V1 => {
                        if !Self::take(&mut self.main, &mut self.out, 1)? {
                            return Err(self.cut("main"));
                        }
                        self.out[self.out.len() - 1] as usize
                    }
                    Width::V2 => {
                        if !Self::take(&mut self.main, &mut self.out, 2)? {
                            return Err(self.cut("main"));
                        }
                        let l = self.out.len();
                        u16::from_be_bytes([self.out[l - 2], self.out[l - 1]]) as usize
                    }
                };
                if !Self::take(&mut self.main, &mut self.out, len)? {
                    return Err(self.cut("main"));
                }
            }
        }
        self.record += 1;
        Ok(true)
    }
}

impl<M: Read, A: Read> Read for Joiner<M, A> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.out.len() {
            if self.done || !self.next_record()? {
                self.done = true;
                return Ok(0);
            }
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
