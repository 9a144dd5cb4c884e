//! Heap traces written as glibc's `trace_run` workload (`.wl`, the
//! dj/malloc branch's malloc/trace2wl.cc and trace_run.c), so allocator
//! people replay tramp recordings with the replayer they already trust,
//! threads replayed as threads.
//!
//! Integers are VLQ: 7 bits a byte, the most significant group first,
//! every byte but the last with its high bit set. The file starts with
//! `ALLOC_PTRS n`, `ALLOC_SYNCS n`, `NTHREADS n`, one `START_THREAD
//! offset` per thread (its stream's byte offset in the file) and `DONE`;
//! then each thread's stream: `MALLOC slot size`, `REALLOC new old size`,
//! `FREE slot`, `SYNC_W s` / `SYNC_R s`, ending in `DONE`. A slot names an
//! address (slot 0 is NULL). When a thread touches an address another
//! thread owned last, the owner writes `SYNC_W s` and the thread `SYNC_R
//! s` (a fresh s), so the replay keeps their order; a thread's first
//! operation waits the same way for the first thread's position.
//! docs/formats/tracerun.md.

use std::io::{BufWriter, Seek, SeekFrom, Write};

use rustc_hash::FxHashMap;
use tramp_core::output::{Finish, OutStream};

/// The output a sink owns (a file, a pipe, memory in tests).
type Output = Box<dyn OutStream>;
use tramp_core::{Error, ReallocOutcome, Record, RecordKind, Role, Sink};

pub const C_DONE: u8 = 1;
pub const C_MALLOC: u8 = 2;
pub const C_CALLOC: u8 = 3;
pub const C_REALLOC: u8 = 4;
pub const C_FREE: u8 = 5;
pub const C_SYNC_W: u8 = 6;
pub const C_SYNC_R: u8 = 7;
pub const C_ALLOC_PTRS: u8 = 8;
pub const C_ALLOC_SYNCS: u8 = 9;
pub const C_NTHREADS: u8 = 10;
pub const C_START_THREAD: u8 = 11;
pub const C_MEMALIGN: u8 = 12;

/// Appends `v` as a VLQ.
pub fn vlq(v: u64, out: &mut Vec<u8>) {
    let mut b = [0u8; 10];
    let mut i = b.len() - 1;
    b[i] = (v & 127) as u8;
    let mut v = v >> 7;
    while v > 0 {
        i -= 1;
        b[i] = (v & 127) as u8 | 128;
        v >>= 7;
    }
    out.extend_from_slice(&b[i..]);
}

/// One thread's stream, in a temporary file until the end.
struct Stream {
    file: BufWriter<std::fs::File>,
    len: u64,
}

/// Writes a `.wl` workload.
pub struct TraceRunSink {
    out: Output,
    /// By thread id, in order of first appearance.
    threads: Vec<(u64, Stream)>,
    thread_index: FxHashMap<u64, usize>,
    /// Address → (slot, the thread index that owns it last).
    slots: FxHashMap<u64, (u64, usize)>,
    syncs: u64,
    /// A realloc's own alloc and free records are still to come.
    skip: u8,
    buf: Vec<u8>,
}

impl TraceRunSink {
    pub fn new(out: Output) -> TraceRunSink {
        TraceRunSink {
            out,
            threads: Vec::new(),
            thread_index: FxHashMap::default(),
            slots: FxHashMap::default(),
            syncs: 0,
            skip: 0,
            buf: Vec::new(),
        }
    }

    fn emit(&mut self, t: usize, bytes: &[u8]) -> Result<(), Error> {
        let s = &mut self.threads[t].1;
        s.file.write_all(bytes)?;
        s.len += bytes.len() as u64;
        Ok(())
    }

    fn op(&mut self, t: usize, code: u8, args: &[u64]) -> Result<(), Error> {
        let mut b = std::mem::take(&mut self.buf);
        b.clear();
        b.push(code);
        for &a in args {
            vlq(a, &mut b);
        }
        let r = self.emit(t, &b);
        self.buf = b;
        r
    }

    /// `from` releases to `to`: a SYNC_W / SYNC_R pair.
    fn sync(&mut self, from: usize, to: usize) -> Result<(), Error> {
        if from == to {
            return Ok(());
        }
        self.syncs += 1;
        let s = self.syncs;
        self.op(from, C_SYNC_W, &[s])?;
        self.op(to, C_SYNC_R, &[s])
    }

    /// The index of thread `tid`, its stream started after the first
    /// thread's position so far.
    fn thread(&mut self, tid: u64) -> Result<usize, Error> {
        if let Some(&t) = self.thread_index.get(&tid) {
            return Ok(t);
        }
        let t = self.threads.len();
        self.threads.push((
            tid,
            Stream {
                file: BufWriter::new(tempfile::tempfile()?),
                len: 0,
            },
        ));
        self.thread_index.insert(tid, t);
        if t > 0 {
            self.sync(0, t)?;
        }
        Ok(t)
    }

    /// The slot of `address` (0 for NULL), now owned by thread `t` (a sync
    /// first when another thread owned it last).
    fn slot(&mut self, t: usize, address: u64) -> Result<u64, Error> {
        if address == 0 {
            return Ok(0);
        }
        let next = self.slots.len() as u64 + 1;
        let (slot, owner) = *self.slots.entry(address).or_insert((next, t));
        if owner != t {
            self.sync(owner, t)?;
        }
        self.slots.insert(address, (slot, t));
        Ok(slot)
    }
}

impl Sink for TraceRunSink {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let kind = rec.record_type().kind;
        if !matches!(
            kind,
            RecordKind::Alloc | RecordKind::Free | RecordKind::Realloc(_)
        ) {
            return Ok(());
        }
        let u = |r: Role| rec.role_u64(r).unwrap_or(0);
        let t = self.thread(u(Role::Thread))?;
        match kind {
            RecordKind::Alloc | RecordKind::Free if self.skip > 0 => self.skip -= 1,
            RecordKind::Alloc => {
                let slot = self.slot(t, u(Role::Address))?;
                self.op(t, C_MALLOC, &[slot, u(Role::Size)])?;
            }
            RecordKind::Free => {
                let slot = self.slot(t, u(Role::Address))?;
                self.op(t, C_FREE, &[slot])?;
            }
            RecordKind::Realloc(outcome) => {
                self.skip = match outcome {
                    ReallocOutcome::Moved => 2,
                    ReallocOutcome::AllocOnly | ReallocOutcome::FreeOnly => 1,
                    ReallocOutcome::InPlace => 0,
                };
                let old = if outcome == ReallocOutcome::AllocOnly {
                    0
                } else {
                    self.slot(t, u(Role::OldAddress))?
                };
                let new = if outcome == ReallocOutcome::FreeOnly {
                    0
                } else {
                    self.slot(t, u(Role::Address))?
                };
                self.op(t, C_REALLOC, &[new, old, u(Role::Size)])?;
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        let TraceRunSink {
            mut out,
            threads,
            slots,
            syncs,
            ..
        } = *self;
        let mut streams = Vec::new();
        for (_, mut s) in threads {
            s.file.write_all(&[C_DONE])?;
            s.len += 1;
            streams.push(s);
        }
        // Each stream's offset depends on the header's length, which
        // depends on the offsets' encodings: repeat until it settles.
        let mut header = Vec::new();
        let mut len = 0;
        loop {
            header.clear();
            header.push(C_ALLOC_PTRS);
            vlq(slots.len() as u64 + 1, &mut header);
            header.push(C_ALLOC_SYNCS);
            vlq(syncs, &mut header);
            header.push(C_NTHREADS);
            vlq(streams.len() as u64, &mut header);
            let mut off = len;
            for s in &streams {
                header.push(C_START_THREAD);
                vlq(off, &mut header);
                off += s.len;
            }
            header.push(C_DONE);
            if header.len() as u64 == len {
                break;
            }
            len = header.len() as u64;
        }
        out.write_all(&header)?;
        for s in streams {
            let mut f = s.file.into_inner().map_err(|e| Error::Io(e.into_error()))?;
            f.seek(SeekFrom::Start(0))?;
            std::io::copy(&mut f, &mut out)?;
        }
        Ok(out.finish()?)
    }
}
