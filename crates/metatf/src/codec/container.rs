//! The Meta-TF file around the record stream: the Appendix B header and
//! section index, the embedded DTD (section 0), and data sections, which
//! the reader decompresses into temporary files so memory stays bounded.

use std::io::{self, Read};

use super::{MAGIC, MAX_RECORD, MetaError, get, put};

/// The trace header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 1: 32-bit, 2: 64-bit (also the width of the header's own integers).
    pub class: u8,
    pub big_endian: bool,
    pub dtd_name: String,
    pub nrecords: u64,
    pub start: u64,
    /// (number, start, size); number 0 holds the embedded DTD.
    pub sections: Vec<(u8, u64, u64)>,
}

impl Header {
    fn int(&self) -> usize {
        if self.class == 2 { 8 } else { 4 }
    }

    /// Encodes the header and index (offsets as given).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.push(self.class);
        out.push(if self.big_endian { 2 } else { 1 });
        out.push(self.dtd_name.len() as u8);
        out.extend_from_slice(&[0; 9]);
        let (n, big) = (self.int(), self.big_endian);
        put(&mut out, self.sections.len() as u64, n, big);
        put(&mut out, self.start, n, big);
        put(&mut out, self.nrecords, n, big);
        out.extend_from_slice(self.dtd_name.as_bytes());
        for (num, start, size) in &self.sections {
            put(&mut out, *num as u64, n, big);
            put(&mut out, *start, n, big);
            put(&mut out, *size, n, big);
        }
        out
    }

    /// Length of the encoded header and index.
    pub fn encoded_len(&self) -> usize {
        16 + 3 * self.int() + self.dtd_name.len() + self.sections.len() * 3 * self.int()
    }
}

/// Reads exactly `n` bytes or reports how many there were.
fn read_n(r: &mut dyn Read, n: usize, what: &'static str) -> Result<Vec<u8>, MetaError> {
    let mut v = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match r.read(&mut v[got..]) {
            Ok(0) => {
                return Err(MetaError::Truncated {
                    record: what.into(),
                    needed: n,
                    available: got,
                });
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(MetaError::Unreadable {
                    what: what.into(),
                    why: e.to_string(),
                });
            }
        }
    }
    Ok(v)
}

/// Skips `n` bytes in bounded steps (a header may claim anything).
fn skip(r: &mut dyn Read, n: u64, what: &'static str) -> Result<(), MetaError> {
    let got = io::copy(&mut r.take(n), &mut io::sink()).unwrap_or(0);
    if got < n {
        return Err(MetaError::Truncated {
            record: what.into(),
            needed: n.min(usize::MAX as u64) as usize,
            available: got as usize,
        });
    }
    Ok(())
}

/// Reads the header, its index and the embedded DTD text (if any), leaving
/// `r` at the start of the record stream. Returns the bytes consumed.
pub fn read_header(r: &mut dyn Read) -> Result<(Header, Option<String>, u64), MetaError> {
    read_header_sections(r, &mut |_, _| Ok(()))
}

/// A data section read during the header: its number and the reader of
/// its (raw) bytes.
pub type SectionSink<'a> = dyn FnMut(u8, &mut dyn Read) -> Result<(), MetaError> + 'a;

/// Like [`read_header`], handing each data section's bytes to `data`.
pub fn read_header_sections(
    r: &mut dyn Read,
    data: &mut SectionSink<'_>,
) -> Result<(Header, Option<String>, u64), MetaError> {
    let fixed = read_n(r, 16, "header")?;
    if fixed[..4] != MAGIC {
        return Err(MetaError::Magic(fixed[..4].to_vec()));
    }
    let class = fixed[4];
    let big = match fixed[5] {
        1 => false,
        2 => true,
        v => {
            return Err(MetaError::Header {
                field: "byteorder",
                value: v as u64,
            });
        }
    };
    let n = match class {
        1 => 4,
        2 => 8,
        v => {
            return Err(MetaError::Header {
                field: "class",
                value: v as u64,
            });
        }
    };
    let dtdlen = fixed[6] as usize;
    let ints = read_n(r, 3 * n, "header")?;
    let nsections = get(&ints[..n], big);
    let start = get(&ints[n..2 * n], big);
    let nrecords = get(&ints[2 * n..], big);
    if nsections > 256 {
        return Err(MetaError::Header {
            field: "nsections",
            value: nsections,
        });
    }
    let name = read_n(r, dtdlen, "header")?;
    let dtd_name = String::from_utf8(name).map_err(|_| MetaError::Header {
        field: "dtd",
        value: dtdlen as u64,
    })?;
    let mut sections = Vec::new();
    for _ in 0..nsections {
        let e = read_n(r, 3 * n, "section index")?;
        let num = get(&e[..n], big);
        if num > 255 {
            return Err(MetaError::Header {
                field: "section number",
                value: num,
            });
        }
        sections.push((num as u8, get(&e[n..2 * n], big), get(&e[2 * n..], big)));
    }
    let mut consumed = (16 + 3 * n + dtdlen + nsections as usize * 3 * n) as u64;
    if start < consumed {
        return Err(MetaError::Index(format!(
            "the records start at byte {start}, inside the header"
        )));
    }
    let mut dtd = None;
    // Sections lie between the index and the record stream, in order.
    let mut ordered = sections.clone();
    ordered.sort_by_key(|(_, s, _)| *s);
    for (num, s, size) in ordered {
        if s < consumed || s.checked_add(size).is_none_or(|e| e > start) {
            return Err(MetaError::Index(format!("section {num} at {s}+{size}")));
        }
        skip(r, s - consumed, "section")?;
        if num != 0 {
            let mut body = r.take(size);
            data(num, &mut body)?;
            if body.limit() > 0 {
                let left = body.limit();
                skip(r, left, "section")?;
            }
            consumed = s + size;
            continue;
        }
        if size > MAX_RECORD as u64 {
            return Err(MetaError::Index(format!(
                "section {num} claims {size} bytes"
            )));
        }
        let body = read_n(r, size as usize, "section")?;
        consumed = s + size;
        if num == 0 {
            dtd = Some(String::from_utf8(body).map_err(|_| MetaError::BadDtd("not UTF-8".into()))?);
        }
    }
    skip(r, start - consumed, "header")?;
    let header = Header {
        class,
        big_endian: big,
        dtd_name,
        nrecords,
        start,
        sections,
    };
    Ok((header, dtd, start))
}

/// A data section as the reader uses it: decompressed into a temporary
/// file (memory stays bounded), read sequentially by `sectionStride`
/// fields, with a lookahead that is only consumed when a record completes.
pub struct DataSection {
    file: io::BufReader<std::fs::File>,
    pub size: u64,
    ahead: Vec<u8>,
    /// Bytes of `ahead` used by the record being decoded.
    used: usize,
}

impl DataSection {
    pub(super) fn load(r: &mut dyn Read) -> Result<DataSection, MetaError> {
        let io_err = |e: io::Error| MetaError::DataSection(e.to_string());
        let mut tmp = tempfile::tempfile().map_err(io_err)?;
        let mut head = [0u8; 4];
        let mut n = 0;
        while n < 4 {
            match r.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) => return Err(io_err(e)),
            }
        }
        let mut whole = io::Cursor::new(head[..n].to_vec()).chain(r);
        if head[..n] == [0x28, 0xB5, 0x2F, 0xFD] {
            zstd::stream::copy_decode(&mut whole, &mut tmp).map_err(io_err)?;
        } else {
            io::copy(&mut whole, &mut tmp).map_err(io_err)?;
        }
        use std::io::Seek;
        let size = tmp.stream_position().map_err(io_err)?;
        tmp.rewind().map_err(io_err)?;
        Ok(DataSection {
            file: io::BufReader::new(tmp),
            size,
            ahead: Vec::new(),
            used: 0,
        })
    }

    /// The next `n` bytes after those already used by this record.
    pub(super) fn next(&mut self, n: usize) -> Option<&[u8]> {
        while self.ahead.len() < self.used + n {
            let mut chunk = [0u8; 4096];
            let k = self.file.read(&mut chunk).ok()?;
            if k == 0 {
                return None;
            }
            self.ahead.extend_from_slice(&chunk[..k]);
        }
        let b = &self.ahead[self.used..self.used + n];
        self.used += n;
        Some(b)
    }

    pub(super) fn commit(&mut self) {
        self.ahead.drain(..self.used);
        self.used = 0;
    }

    pub(super) fn rollback(&mut self) {
        self.used = 0;
    }
}
