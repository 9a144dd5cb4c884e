//! libCacheSim's binary request layouts beyond oracleGeneral, read as
//! streams of [`Request`]s, and lcs written:
//!
//! * vscsi (the CloudPhysics block traces): version 1 records of 32 bytes
//!   `{u32 sn, u32 len, u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts}`,
//!   version 2 of 40 `{u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn,
//!   u64 ts, u64 rt}`; the version is `ver >> 8`, and the first two records
//!   tell it (version 2 tried first, as libCacheSim does). Object = lbn,
//!   size = len.
//! * twr (Twitter's key-value traces): 20 bytes `{u32 time, u64 id, u32
//!   kv, u32 op_ttl}`, key size `kv >> 22` (10 bits), value size `kv &
//!   0x3fffff`, op `op_ttl >> 24`; size = key + value.
//! * lcs (libCacheSim's current layout): an 8192-byte header `{u64 start
//!   magic, u64 version, 1000 u64 of statistics, 21 unused u64, u64 end
//!   magic}`, then records: v1 24 bytes (oracleGeneral's), v2 28 (u32
//!   op:8|tenant:24 before the next access), v3 36 (i64 size, op/tenant,
//!   u32 ttl), v4–v8 v3 followed by 1, 2, 4, 8, 16 u32 features.
//!
//! Every layout is little-endian. libCacheSim's operation codes (its
//! `req_op_e`): set, add, cas, replace, append, prepend, delete, incr,
//! decr, write, update are writes; nop, get, gets, read are reads.
//! docs/formats/libcachesim.md.

use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};

use crate::request::{NEVER, Op, Request};
use crate::trace::{TraceError, fill};

/// lcs's start and end magic (the same number).
pub const LCS_MAGIC: u64 = 0x1234_5678_9abc_def0;
/// Bytes of an lcs header.
pub const LCS_HEADER: usize = 8192;

/// A libCacheSim binary layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// vscsi, version 1 or 2.
    Vscsi(u8),
    Twr,
    /// lcs, versions 1 to 8.
    Lcs(u8),
}

impl Layout {
    /// Bytes per record.
    pub fn record_len(self) -> usize {
        match self {
            Layout::Vscsi(1) => 32,
            Layout::Vscsi(_) => 40,
            Layout::Twr => 20,
            Layout::Lcs(1) => 24,
            Layout::Lcs(2) => 28,
            Layout::Lcs(v) => 36 + 4 * features(v),
        }
    }

    /// The name libCacheSim users know it by.
    pub fn name(self) -> String {
        match self {
            Layout::Vscsi(v) => format!("vscsi v{v}"),
            Layout::Twr => "twr".into(),
            Layout::Lcs(v) => format!("lcs v{v}"),
        }
    }
}

/// u32 features after an lcs v3 record, by version.
fn features(version: u8) -> usize {
    match version {
        4 => 1,
        5 => 2,
        6 => 4,
        7 => 8,
        8 => 16,
        _ => 0,
    }
}

/// Whether libCacheSim's operation code is a write.
pub fn op_of(code: u32) -> Op {
    match code {
        3..=11 | 13 | 14 => Op::Write,
        _ => Op::Read,
    }
}

/// libCacheSim's code for an operation (what lcs v2+ stores).
fn code_of(op: Op) -> u32 {
    match op {
        Op::Read => 1,
        Op::Write => 3,
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The vscsi version the first two records of `head` agree on (2 tried
/// first), if any; `head` needs 80 bytes.
pub fn vscsi_version(head: &[u8]) -> Option<u8> {
    if head.len() < 80 {
        return None;
    }
    let v2 = (0..2).all(|i| u16_at(head, i * 40 + 2) >> 8 == 2);
    let v1 = (0..2).all(|i| u16_at(head, i * 32 + 14) >> 8 == 1);
    if v2 {
        Some(2)
    } else if v1 {
        Some(1)
    } else {
        None
    }
}

/// The lcs version an 8192-byte header names, checking both magics.
pub fn lcs_version(head: &[u8]) -> Result<u8, String> {
    if head.len() < LCS_HEADER {
        return Err(format!(
            "an lcs header is {LCS_HEADER} bytes; the file has {}",
            head.len()
        ));
    }
    if u64_at(head, 0) != LCS_MAGIC {
        return Err(format!(
            "start magic {:#x} is not lcs's {LCS_MAGIC:#x}",
            u64_at(head, 0)
        ));
    }
    if u64_at(head, LCS_HEADER - 8) != LCS_MAGIC {
        return Err(format!(
            "end magic {:#x} (byte offset {}) is not lcs's {LCS_MAGIC:#x}",
            u64_at(head, LCS_HEADER - 8),
            LCS_HEADER - 8
        ));
    }
    match u64_at(head, 8) {
        v @ 1..=8 => Ok(v as u8),
        v => Err(format!("lcs version {v} is not one of 1 to 8")),
    }
}

/// The request of one record of `layout`.
#[inline(always)]
pub fn decode(layout: Layout, b: &[u8]) -> Request {
    let next = |at: usize| {
        let n = u64_at(b, at) as i64;
        if n < 0 || n == i64::MAX {
            NEVER
        } else {
            n as u64
        }
    };
    match layout {
        Layout::Vscsi(1) => Request {
            id: u64_at(b, 16),
            size: u32_at(b, 4),
            op: Op::Read,
            next_access: NEVER,
            time: u64_at(b, 24),
            ttl: 0,
        },
        Layout::Vscsi(_) => Request {
            id: u64_at(b, 16),
            size: u32_at(b, 8),
            op: Op::Read,
            next_access: NEVER,
            time: u64_at(b, 24),
            ttl: 0,
        },
        Layout::Twr => {
            let kv = u32_at(b, 12);
            Request {
                id: u64_at(b, 4),
                size: ((kv >> 22) & 0x3ff) + (kv & 0x3f_ffff),
                op: op_of(u32_at(b, 16) >> 24),
                next_access: NEVER,
                time: u32_at(b, 0) as u64,
                ttl: u32_at(b, 16) & 0xff_ffff,
            }
        }
        Layout::Lcs(1) => Request {
            id: u64_at(b, 4),
            size: u32_at(b, 12),
            op: Op::Read,
            next_access: next(16),
            time: u32_at(b, 0) as u64,
            ttl: 0,
        },
        Layout::Lcs(2) => Request {
            id: u64_at(b, 4),
            size: u32_at(b, 12),
            op: op_of(u32_at(b, 16) & 0xff),
            next_access: next(20),
            time: u32_at(b, 0) as u64,
            ttl: 0,
        },
        Layout::Lcs(_) => Request {
            id: u64_at(b, 4),
            // Sizes past 32 bits saturate (tramp's requests are 32-bit,
            // as libCacheSim's were before v3).
            size: (u64_at(b, 12) as i64).clamp(0, u32::MAX as i64) as u32,
            op: op_of(u32_at(b, 20) & 0xff),
            next_access: next(28),
            time: u32_at(b, 0) as u64,
            // A negative ttl (libCacheSim's is signed) is none.
            ttl: (u32_at(b, 24) as i32).max(0) as u32,
        },
    }
}

/// Reads the records of a libCacheSim binary layout (after lcs's header).
pub struct LayoutReader<R> {
    input: R,
    layout: Layout,
    /// Records read, and the byte offset of the first.
    record: u64,
    start: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> LayoutReader<R> {
    /// `input` positioned at the first record; `start` is that record's
    /// byte offset in the file (8192 for lcs), for errors.
    pub fn new(input: R, layout: Layout, start: u64) -> Self {
        LayoutReader {
            input,
            layout,
            record: 0,
            start,
            buf: vec![0; layout.record_len()],
        }
    }
}

impl<R: BufRead> LayoutReader<R> {
    /// The next record decoded in place, when it lies whole in the input's
    /// buffer (inlined into its callers: a request handed back through
    /// memory stalled the loop on reading it back).
    #[inline(always)]
    fn in_place(&mut self) -> io::Result<Option<Request>> {
        let len = self.buf.len();
        let here = self.input.fill_buf()?;
        if here.len() < len {
            return Ok(None);
        }
        let r = decode(self.layout, &here[..len]);
        self.input.consume(len);
        self.record += 1;
        Ok(Some(r))
    }

    /// Up to `max` requests appended to `out`, decoded in a row (a caller
    /// that reads them from `out` later reads memory written long before,
    /// not a request just returned: see docs/benchmarks.md, issue 36).
    /// `Ok(false)` at the end of the input; an error after the requests
    /// before it were appended.
    pub fn fill_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<bool, TraceError> {
        for _ in 0..max {
            // Whole records straight from the input's buffer into `out`.
            if let Some(r) = self.in_place()? {
                out.push(r);
                continue;
            }
            match self.next() {
                Some(Ok(r)) => out.push(r),
                Some(Err(e)) => return Err(e),
                None => return Ok(false),
            }
        }
        Ok(true)
    }
}

impl<R: BufRead> Iterator for LayoutReader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.in_place() {
            Err(e) => return Some(Err(e.into())),
            Ok(Some(r)) => return Some(Ok(r)),
            Ok(None) => {}
        }
        let len = self.buf.len();
        match fill(&mut self.input, &mut self.buf) {
            Err(e) => Some(Err(e.into())),
            Ok(0) => None,
            Ok(got) if got < len => Some(Err(TraceError::Cut {
                layout: self.layout.name(),
                record: self.record,
                offset: self.start + self.record * len as u64,
                len: got,
                whole: len,
            })),
            Ok(_) => {
                self.record += 1;
                Some(Ok(decode(self.layout, &self.buf)))
            }
        }
    }
}

/// What an lcs header's statistics say (the fields libCacheSim fills and
/// prints; the others are left 0, which its readers take as unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LcsStats {
    pub n_req: i64,
    pub n_obj: i64,
    pub n_req_byte: i64,
    pub n_obj_byte: i64,
    pub start_time: i64,
    pub end_time: i64,
    pub n_read: i64,
    pub n_write: i64,
    pub n_delete: i64,
    pub smallest_obj_size: i64,
    pub largest_obj_size: i64,
}

/// Statistics of an lcs header (`head` the file's first 8192 bytes).
pub fn lcs_stats(head: &[u8]) -> LcsStats {
    let i = |k: usize| u64_at(head, 16 + 8 * k) as i64;
    LcsStats {
        n_req: i(1),
        n_obj: i(2),
        n_req_byte: i(3),
        n_obj_byte: i(4),
        start_time: i(5),
        end_time: i(6),
        n_read: i(7),
        n_write: i(8),
        n_delete: i(9),
        smallest_obj_size: i(10),
        largest_obj_size: i(11),
    }
}

/// The lcs version [`LcsWriter`] writes: 3, the first that carries a
/// request's TTL beside its operation.
pub const LCS_WRITTEN: u8 = 3;

/// Writes lcs version 3 (time, id, 64-bit size, operation, TTL, next
/// access):
/// the header first with zero statistics, the records, then the header
/// again with the statistics, written over the first (so the output must
/// be a file that can seek back; a pipe is refused by the caller).
pub struct LcsWriter<W: Write + Seek> {
    out: io::BufWriter<W>,
    stats: LcsStats,
    /// Objects seen (for n_obj and n_obj_byte): id → size.
    seen: rustc_hash::FxHashMap<u64, u32>,
}

impl<W: Write + Seek> LcsWriter<W> {
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(&lcs_header(LCS_WRITTEN as u64, &LcsStats::default()))?;
        Ok(LcsWriter {
            out,
            stats: LcsStats {
                smallest_obj_size: i64::MAX,
                start_time: i64::MAX,
                ..LcsStats::default()
            },
            seen: Default::default(),
        })
    }

    /// One request at `time` (the trace's clock; seconds in libCacheSim).
    pub fn write(&mut self, time: u32, req: &Request) -> io::Result<()> {
        let s = &mut self.stats;
        s.n_req += 1;
        s.n_req_byte += req.size as i64;
        match req.op {
            Op::Read => s.n_read += 1,
            Op::Write => s.n_write += 1,
        }
        s.start_time = s.start_time.min(time as i64);
        s.end_time = s.end_time.max(time as i64);
        s.smallest_obj_size = s.smallest_obj_size.min(req.size as i64);
        s.largest_obj_size = s.largest_obj_size.max(req.size as i64);
        if self.seen.insert(req.id, req.size).is_none() {
            s.n_obj += 1;
            s.n_obj_byte += req.size as i64;
        }
        let next = if req.next_access == NEVER {
            -1i64
        } else {
            req.next_access.min(i64::MAX as u64 - 1) as i64
        };
        let mut b = [0u8; 36];
        b[0..4].copy_from_slice(&time.to_le_bytes());
        b[4..12].copy_from_slice(&req.id.to_le_bytes());
        b[12..20].copy_from_slice(&(req.size as i64).to_le_bytes());
        b[20..24].copy_from_slice(&code_of(req.op).to_le_bytes());
        b[24..28].copy_from_slice(&req.ttl.min(i32::MAX as u32).to_le_bytes());
        b[28..36].copy_from_slice(&next.to_le_bytes());
        self.out.write_all(&b)
    }

    /// Fills the header's statistics and returns the output.
    pub fn finish(self) -> io::Result<(W, LcsStats)> {
        let mut stats = self.stats;
        if stats.n_req == 0 {
            stats.smallest_obj_size = 0;
            stats.start_time = 0;
        }
        let mut out = self.out.into_inner().map_err(|e| e.into_error())?;
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&lcs_header(LCS_WRITTEN as u64, &stats))?;
        out.seek(SeekFrom::End(0))?;
        out.flush()?;
        Ok((out, stats))
    }
}

/// Sets the next-access time of every record of `layout` (lcs 1 to 3, or
/// oracleGeneral as lcs 1 without a header) in `file` from byte `start`
/// on: the 1-based number of the object's next request, −1 when it has
/// none. One backward pass, a block of records at a time; memory is one
/// entry per object.
pub fn fill_next_access<F: Read + Write + Seek>(
    file: &mut F,
    layout: Layout,
    start: u64,
) -> io::Result<()> {
    let len = layout.record_len() as u64;
    let (id_at, next_at) = match layout {
        Layout::Lcs(1) => (4, 16),
        Layout::Lcs(2) => (4, 20),
        Layout::Lcs(3) => (4, 28),
        _ => {
            return Err(io::Error::other(format!(
                "next-access times are filled in for lcs v1 to v3, not {}",
                layout.name()
            )));
        }
    };
    let end = file.seek(SeekFrom::End(0))?;
    let n = (end.saturating_sub(start)) / len;
    let block = 1u64 << 16;
    let mut later: rustc_hash::FxHashMap<u64, u64> = Default::default();
    let mut buf = Vec::new();
    let mut hi = n;
    while hi > 0 {
        let lo = hi.saturating_sub(block);
        buf.resize(((hi - lo) * len) as usize, 0);
        file.seek(SeekFrom::Start(start + lo * len))?;
        file.read_exact(&mut buf)?;
        for k in (0..hi - lo).rev() {
            let rec = &mut buf[(k * len) as usize..((k + 1) * len) as usize];
            let id = u64_at(rec, id_at);
            let here = lo + k + 1;
            let next = later.insert(id, here).map_or(-1i64, |j| j as i64);
            rec[next_at..next_at + 8].copy_from_slice(&next.to_le_bytes());
        }
        file.seek(SeekFrom::Start(start + lo * len))?;
        file.write_all(&buf)?;
        hi = lo;
    }
    file.flush()
}

/// An lcs header of `version` with `stats`.
pub fn lcs_header(version: u64, stats: &LcsStats) -> Vec<u8> {
    let mut h = vec![0u8; LCS_HEADER];
    h[0..8].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    h[8..16].copy_from_slice(&version.to_le_bytes());
    let fields = [
        1, // the statistics' own version (libCacheSim's CURR_STAT_VERSION)
        stats.n_req,
        stats.n_obj,
        stats.n_req_byte,
        stats.n_obj_byte,
        stats.start_time,
        stats.end_time,
        stats.n_read,
        stats.n_write,
        stats.n_delete,
        stats.smallest_obj_size,
        stats.largest_obj_size,
    ];
    for (k, v) in fields.iter().enumerate() {
        h[16 + 8 * k..24 + 8 * k].copy_from_slice(&v.to_le_bytes());
    }
    h[LCS_HEADER - 8..].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    h
}

/// Splits a block request into fixed pages: the byte range `[offset,
/// offset + size)` (offset = the object id × `unit`: 512 for vscsi's
/// sectors, 1 for byte addresses) becomes one request per `page`-byte page
/// it touches, each of size `page`, with the request's operation. A
/// request of size 0 touches its first page.
pub fn pages(req: &Request, unit: u64, page: u64, out: &mut Vec<Request>) {
    out.clear();
    let start = req.id.saturating_mul(unit);
    let end = start.saturating_add((req.size as u64).max(1) - 1);
    for p in start / page..=end / page {
        out.push(Request {
            id: p,
            size: page.min(u32::MAX as u64) as u32,
            op: req.op,
            next_access: NEVER,
            time: req.time,
            ttl: req.ttl,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layout_decodes_its_fields_at_their_offsets() {
        // vscsi v2: cmd 0x2a, ver 0x0200, sn 7, len 4096, nSG 1, lbn 100,
        // ts 5_000_000, rt 3.
        let mut v2 = Vec::new();
        v2.extend_from_slice(&0x2au16.to_le_bytes());
        v2.extend_from_slice(&0x0200u16.to_le_bytes());
        for x in [7u32, 4096, 1] {
            v2.extend_from_slice(&x.to_le_bytes());
        }
        for x in [100u64, 5_000_000, 3] {
            v2.extend_from_slice(&x.to_le_bytes());
        }
        assert_eq!(v2.len(), 40);
        let r = decode(Layout::Vscsi(2), &v2);
        assert_eq!((r.id, r.size), (100, 4096));
        // twr: key 10 bytes, value 300, op 3 (set).
        let mut twr = Vec::new();
        twr.extend_from_slice(&9u32.to_le_bytes());
        twr.extend_from_slice(&0xdead_beefu64.to_le_bytes());
        twr.extend_from_slice(&((10u32 << 22) | 300).to_le_bytes());
        twr.extend_from_slice(&((3u32 << 24) | 60).to_le_bytes());
        let r = decode(Layout::Twr, &twr);
        assert_eq!((r.id, r.size, r.op), (0xdead_beef, 310, Op::Write));
        // lcs v3: size as i64, op get, next access -1.
        let mut v3 = vec![0u8; 36];
        v3[4..12].copy_from_slice(&42u64.to_le_bytes());
        v3[12..20].copy_from_slice(&(1i64 << 40).to_le_bytes());
        v3[20..24].copy_from_slice(&((5u32 << 8) | 1).to_le_bytes());
        v3[28..36].copy_from_slice(&(-1i64).to_le_bytes());
        let r = decode(Layout::Lcs(3), &v3);
        assert_eq!(
            (r.id, r.size, r.op, r.next_access),
            (42, u32::MAX, Op::Read, NEVER)
        );
    }

    #[test]
    fn the_first_records_tell_vscsis_version() {
        let rec1 = |ver: u16| {
            let mut b = vec![0u8; 32];
            b[14..16].copy_from_slice(&ver.to_le_bytes());
            b
        };
        let v1: Vec<u8> = [rec1(0x0100), rec1(0x0100), rec1(0x0100)].concat();
        assert_eq!(vscsi_version(&v1), Some(1));
        let mut v2 = vec![0u8; 80];
        v2[2..4].copy_from_slice(&0x0200u16.to_le_bytes());
        v2[42..44].copy_from_slice(&0x0200u16.to_le_bytes());
        assert_eq!(vscsi_version(&v2), Some(2));
        assert_eq!(vscsi_version(&[0u8; 80]), None);
        assert_eq!(vscsi_version(&[0u8; 79]), None);
    }

    #[test]
    fn lcs_written_reads_back_with_its_statistics_in_the_header() {
        let reqs = [
            Request {
                id: 1,
                size: 100,
                op: Op::Read,
                next_access: 2,
                time: 10,
                ttl: 0,
            },
            Request {
                id: 2,
                size: 50,
                op: Op::Write,
                next_access: NEVER,
                time: 11,
                ttl: 0,
            },
            Request {
                id: 1,
                size: 100,
                op: Op::Read,
                next_access: NEVER,
                time: 12,
                ttl: 3600,
            },
        ];
        let mut w = LcsWriter::new(io::Cursor::new(Vec::new())).unwrap();
        for (t, r) in reqs.iter().enumerate() {
            w.write(10 + t as u32, r).unwrap();
        }
        let (out, _) = w.finish().unwrap();
        let bytes = out.into_inner();
        assert_eq!(bytes.len(), LCS_HEADER + 3 * 36);
        assert_eq!(lcs_version(&bytes).unwrap(), 3);
        // The third record's bytes, laid out by hand: time 12, id 1, size
        // 100 (i64), op 1 (get), ttl 3600, next access -1.
        let mut want = Vec::new();
        want.extend_from_slice(&12u32.to_le_bytes());
        want.extend_from_slice(&1u64.to_le_bytes());
        want.extend_from_slice(&100i64.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(&3600u32.to_le_bytes());
        want.extend_from_slice(&(-1i64).to_le_bytes());
        assert_eq!(&bytes[LCS_HEADER + 72..], &want[..]);
        let s = lcs_stats(&bytes);
        assert_eq!(
            (
                s.n_req,
                s.n_obj,
                s.n_req_byte,
                s.n_obj_byte,
                s.n_read,
                s.n_write
            ),
            (3, 2, 250, 150, 2, 1)
        );
        assert_eq!(
            (
                s.start_time,
                s.end_time,
                s.smallest_obj_size,
                s.largest_obj_size
            ),
            (10, 12, 50, 100)
        );
        let back: Vec<Request> = LayoutReader::new(&bytes[LCS_HEADER..], Layout::Lcs(3), 8192)
            .map(Result::unwrap)
            .collect();
        assert_eq!(back, reqs);
        // Next-access times computed again: request 1's object comes back
        // as request 3 (1-based).
        let mut f = io::Cursor::new(bytes);
        fill_next_access(&mut f, Layout::Lcs(3), LCS_HEADER as u64).unwrap();
        let bytes = f.into_inner();
        let nexts: Vec<u64> = LayoutReader::new(&bytes[LCS_HEADER..], Layout::Lcs(3), 8192)
            .map(|r| r.unwrap().next_access)
            .collect();
        assert_eq!(nexts, vec![3, NEVER, NEVER]);
    }

    #[test]
    fn a_cut_record_names_its_offset() {
        let e = LayoutReader::new(&[0u8; 30][..], Layout::Twr, 0)
            .nth(1)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("record 1") && e.contains("byte offset 20") && e.contains("10 of 20"),
            "{e}"
        );
    }

    #[test]
    fn block_requests_split_into_the_pages_they_touch() {
        let mut out = Vec::new();
        // Sectors 7..15 (bytes 3584..7680): pages 0 and 1 of 4096.
        let r = Request {
            id: 7,
            size: 4096,
            op: Op::Write,
            next_access: NEVER,
            time: 0,
            ttl: 0,
        };
        pages(&r, 512, 4096, &mut out);
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0, 1]);
        assert!(out.iter().all(|p| p.size == 4096 && p.op == Op::Write));
        let r = Request {
            id: 8,
            size: 4096,
            op: Op::Read,
            next_access: NEVER,
            time: 0,
            ttl: 0,
        };
        pages(&r, 512, 4096, &mut out);
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), vec![1]);
    }
}
