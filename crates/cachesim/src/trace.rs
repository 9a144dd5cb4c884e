//! Request traces in libCacheSim's layouts, read as streams.
//!
//! * csv: one request per line, fields separated by commas (spaces around
//!   them ignored), `#` lines are comments. A `#` header naming the columns
//!   (`time, object, size, next_access_vtime`, as the Twitter traces in
//!   libCacheSim's test data) chooses them by name; without one the columns
//!   are time, object, size, and an optional next-access time. An `op` column
//!   (`read`/`get` or `write`/`set`/…) marks writes.
//! * oracleGeneral: 24-byte little-endian records — u32 time, u64 object
//!   id, u32 size, i64 next access (−1 or i64::MAX: none).

use std::io::{self, BufRead, Read, Write};

use crate::request::{NEVER, Op, Request};

/// Bytes per oracleGeneral record.
pub const ORACLE_RECORD: usize = 24;

/// The longest csv line read (a longer one is damage, not a request).
pub const MAX_LINE: usize = 1 << 16;

/// Damage in a request trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("reading the trace: {0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {what}")]
    Csv { line: u64, what: String },
    #[error("line {line} is longer than {MAX_LINE} bytes (not a request)")]
    LongLine { line: u64 },
    #[error(
        "{layout} trace cut inside record {record} (byte offset {offset}): {len} of {whole} bytes"
    )]
    Cut {
        layout: String,
        record: u64,
        offset: u64,
        len: usize,
        whole: usize,
    },
    #[error("{0}")]
    Header(String),
    #[error(
        "oracleGeneral trace cut inside record {record} (byte offset {offset}): {len} of 24 bytes"
    )]
    Truncated {
        record: u64,
        offset: u64,
        len: usize,
    },
}

/// Which csv column holds what (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub id: usize,
    pub size: Option<usize>,
    pub next_access: Option<usize>,
    pub op: Option<usize>,
    /// The request's time (libCacheSim's `time` column, in seconds).
    pub time: Option<usize>,
    /// Its time to live (libCacheSim's `ttl` column).
    pub ttl: Option<usize>,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            id: 1,
            size: Some(2),
            next_access: Some(3),
            op: None,
            time: Some(0),
            ttl: None,
        }
    }
}

impl Columns {
    /// Columns named by a header line (without its `#`), if it names the
    /// object column.
    pub fn from_header(header: &str) -> Option<Columns> {
        let names: Vec<String> = header
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .collect();
        let find = |alts: &[&str]| names.iter().position(|n| alts.contains(&n.as_str()));
        Some(Columns {
            id: find(&["object", "obj_id", "id", "key", "obj", "object_id"])?,
            size: find(&["size", "obj_size", "object_size", "bytes"]),
            next_access: find(&["next_access_vtime", "next_access", "next"]),
            op: find(&["op", "operation", "type"]),
            time: find(&["time", "timestamp", "clock_time", "ts"]),
            ttl: find(&["ttl"]),
        })
    }
}

/// Reads libCacheSim csv requests.
pub struct CsvReader<R> {
    input: R,
    line: Vec<u8>,
    lineno: u64,
    cols: Columns,
    seen_data: bool,
}

impl<R: BufRead> CsvReader<R> {
    pub fn new(input: R) -> Self {
        CsvReader {
            input,
            line: Vec::with_capacity(128),
            lineno: 0,
            cols: Columns::default(),
            seen_data: false,
        }
    }

    /// Reads with the given columns (a header will not change them).
    pub fn with_columns(input: R, cols: Columns) -> Self {
        CsvReader {
            seen_data: true,
            cols,
            ..CsvReader::new(input)
        }
    }

    fn parse(&self) -> Result<Request, TraceError> {
        let text = trim_eol(&self.line);
        let mut fields = [&[][..]; 8];
        let mut n = 0;
        for f in text.split(|&b| b == b',') {
            if n == fields.len() {
                break;
            }
            fields[n] = f.trim_ascii();
            n += 1;
        }
        let fields = &fields[..n];
        let line = self.lineno;
        let get = |col: usize, what: &str| {
            fields.get(col).copied().ok_or_else(|| TraceError::Csv {
                line,
                what: format!("no {what} column (column {})", col + 1),
            })
        };
        let num = |col: usize, what: &str| -> Result<u64, TraceError> {
            let f = get(col, what)?;
            parse_u64(f).ok_or_else(|| TraceError::Csv {
                line,
                what: format!("{what} {:?} is not a number", String::from_utf8_lossy(f)),
            })
        };
        let id = num(self.cols.id, "object id")?;
        let size = match self.cols.size {
            Some(c) => {
                let s = num(c, "size")?;
                u32::try_from(s).map_err(|_| TraceError::Csv {
                    line,
                    what: format!("size {s} does not fit 32 bits"),
                })?
            }
            None => 1,
        };
        let next_access = match self.cols.next_access {
            Some(c) if c < fields.len() => {
                let f = fields[c];
                if f.first() == Some(&b'-') {
                    NEVER
                } else {
                    match parse_u64(f) {
                        Some(v) if v >= i64::MAX as u64 => NEVER,
                        Some(v) => v,
                        None => {
                            return Err(TraceError::Csv {
                                line,
                                what: format!(
                                    "next access {:?} is not a number",
                                    String::from_utf8_lossy(f)
                                ),
                            });
                        }
                    }
                }
            }
            _ => NEVER,
        };
        let op = match self.cols.op {
            Some(c) => op_of(get(c, "op")?),
            None => Op::Read,
        };
        let time = match self.cols.time {
            Some(c) if c < fields.len() && c != self.cols.id => num(c, "time")?,
            _ => 0,
        };
        let ttl = match self.cols.ttl {
            Some(c) if c < fields.len() => {
                let v = num(c, "ttl")?;
                u32::try_from(v).map_err(|_| TraceError::Csv {
                    line,
                    what: format!("ttl {v} does not fit 32 bits"),
                })?
            }
            _ => 0,
        };
        Ok(Request {
            id,
            size,
            op,
            next_access,
            time,
            ttl,
        })
    }
}

fn trim_eol(b: &[u8]) -> &[u8] {
    let mut b = b;
    while let [rest @ .., b'\n' | b'\r'] = b {
        b = rest;
    }
    b
}

fn op_of(f: &[u8]) -> Op {
    let f = f.to_ascii_lowercase();
    match f.as_slice() {
        b"write" | b"set" | b"put" | b"update" | b"add" | b"replace" | b"w" | b"cas"
        | b"append" | b"prepend" | b"incr" | b"decr" | b"delete" => Op::Write,
        _ => Op::Read,
    }
}

fn parse_u64(f: &[u8]) -> Option<u64> {
    if f.is_empty() || f.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in f {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

impl<R: BufRead> Iterator for CsvReader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.line.clear();
            let limit = (MAX_LINE + 1) as u64;
            match (&mut self.input)
                .take(limit)
                .read_until(b'\n', &mut self.line)
            {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(e.into())),
            }
            self.lineno += 1;
            if self.line.len() > MAX_LINE {
                return Some(Err(TraceError::LongLine { line: self.lineno }));
            }
            let text = trim_eol(&self.line).trim_ascii();
            if text.is_empty() {
                continue;
            }
            if text[0] == b'#' {
                if !self.seen_data
                    && let Some(c) = std::str::from_utf8(&text[1..])
                        .ok()
                        .and_then(Columns::from_header)
                {
                    self.cols = c;
                }
                continue;
            }
            self.seen_data = true;
            return Some(self.parse());
        }
    }
}

/// Reads oracleGeneral requests (every one a read).
pub struct OracleReader<R> {
    input: R,
    record: u64,
}

impl<R: BufRead> OracleReader<R> {
    pub fn new(input: R) -> Self {
        OracleReader { input, record: 0 }
    }
}

impl<R: BufRead> Iterator for OracleReader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut b = [0u8; ORACLE_RECORD];
        match next_fixed(&mut self.input, &mut b, |r| {
            decode_oracle(r.try_into().expect("24 bytes"))
        }) {
            Err(e) => Some(Err(e.into())),
            Ok(Ok(None)) => None,
            Ok(Ok(Some(r))) => {
                self.record += 1;
                Some(Ok(r))
            }
            Ok(Err(len)) => Some(Err(TraceError::Truncated {
                record: self.record,
                offset: self.record * ORACLE_RECORD as u64,
                len,
            })),
        }
    }
}

/// The next record of `buf.len()` bytes, decoded by `decode`: read in
/// place from the input's buffer when it is whole there, else gathered in
/// `buf`. `Ok(None)` at the end; `Err(n)` when the input ends `n` bytes
/// into a record.
#[inline]
pub fn next_fixed<R: BufRead, T>(
    input: &mut R,
    buf: &mut [u8],
    decode: impl FnOnce(&[u8]) -> T,
) -> io::Result<Result<Option<T>, usize>> {
    let len = buf.len();
    let here = input.fill_buf()?;
    if here.len() >= len {
        let t = decode(&here[..len]);
        input.consume(len);
        return Ok(Ok(Some(t)));
    }
    match fill(input, buf)? {
        0 => Ok(Ok(None)),
        n if n < len => Ok(Err(n)),
        _ => Ok(Ok(Some(decode(buf)))),
    }
}

pub use tramp_core::reading::fill;

/// One oracleGeneral record.
pub fn decode_oracle(b: &[u8; ORACLE_RECORD]) -> Request {
    let id = u64::from_le_bytes(b[4..12].try_into().expect("8 bytes"));
    let size = u32::from_le_bytes(b[12..16].try_into().expect("4 bytes"));
    let next = i64::from_le_bytes(b[16..24].try_into().expect("8 bytes"));
    Request {
        id,
        size,
        op: Op::Read,
        next_access: if next < 0 || next == i64::MAX {
            NEVER
        } else {
            next as u64
        },
        time: u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")) as u64,
        ttl: 0,
    }
}

/// Writes one oracleGeneral record (`time` in the trace's unit).
pub fn write_oracle(out: &mut impl Write, time: u32, req: &Request) -> io::Result<()> {
    let next = if req.next_access == NEVER {
        -1i64
    } else {
        req.next_access.min(i64::MAX as u64) as i64
    };
    out.write_all(&time.to_le_bytes())?;
    out.write_all(&req.id.to_le_bytes())?;
    out.write_all(&req.size.to_le_bytes())?;
    out.write_all(&next.to_le_bytes())
}

/// Whether `prefix` (the first bytes of a trace) looks like libCacheSim
/// csv: printable text whose first data line has at least two
/// comma-separated fields.
pub fn looks_like_csv(prefix: &[u8]) -> bool {
    if prefix.is_empty()
        || !prefix
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b))
    {
        return false;
    }
    prefix
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty() && l[0] != b'#')
        .is_some_and(|l| l.contains(&b','))
        || prefix.starts_with(b"#")
}
