//! Converting the capture library's raw logs while the program that writes
//! them runs.
//!
//! Every log in the capture directory is read as it grows, whole chunks
//! only (a chunk is one `writev`, so a reader may see it half written and
//! waits for the rest). The bytes read are given back to the file system
//! at once by punching a hole over them, so the directory holds only what
//! is not read yet; the capture library waits when that passes its bound
//! (`TRAMP_CAPTURE_BACKLOG`), which is how a conversion that falls behind
//! slows the program instead of losing events.
//!
//! Each process's threads are merged by time into its trace. An event is
//! written once no thread can still deliver an earlier one: every thread
//! that is alive and has nothing queued has flushed past it (its last
//! chunk ends later), no thread started since (a spawn event) is still to
//! show up, or it is older than [`LAG_NS`] before the newest chunk read
//! (every thread that keeps allocating flushes its buffer at least every
//! few milliseconds). The lag counts in the log's own time, not the wall
//! clock: a conversion that falls behind the program (it then waits for
//! it) does not take everything it has yet to read for old.
//! The queued chunks are bounded ([`WINDOW_BYTES`]); when the window is
//! full the oldest events are written anyway. An event that then arrives
//! older than one already written (a thread that held a few events while
//! it blocked) is written in arrival order with its own time and counted
//! as late. The layout is in `docs/formats/capture.md`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};
use tramp_core::Error;
use tramp_hatf::{Field, Interp, Item, Meta, Policy, Width};
use tramp_io::Output;

use crate::clock::{Clock, Line};
use crate::convert::{ConvertStats, State, TraceOut};
use crate::launch::{RecordOptions, TraceKind, child_output, program_of};
use crate::pointers::{Access, PointerOut};
use crate::raw::{self, CHUNK_HEADER, ChunkDecoder, ChunkRef, RawError, RawEvent};
use tramp_symbols::Annotation;

/// Raw chunk bytes queued per process before the oldest events are
/// written regardless of threads that have not caught up.
pub const WINDOW_BYTES: usize = 64 << 20;
/// Events this much older than the newest chunk read are written even when
/// a thread that has not flushed since could still hold an earlier one.
pub const LAG_NS: u64 = 250_000_000;
/// Events of a chunk decoded at a time: a thread's queue holds 24 KiB of
/// decoded events, not a whole chunk's (up to ~2 MB; the time is the same).
const BATCH: usize = 512;
/// Bytes read from one log per poll (whole chunks, at least one).
const READ_BYTES: usize = 1 << 20;
/// Unread bytes one log may hold before the threads writing it wait for
/// the conversion (`TRAMP_CAPTURE_BACKLOG`, given to the capture library
/// when holes can be punched).
pub const BACKLOG_PER_LOG: u64 = 32 << 20;

/// The output of one process: tpack or HATF, by its name, or a pointer
/// trace.
enum Out {
    Tpack(Box<Indexed>),
    Hatf(Box<tramp_hatf::Writer<Output>>),
    HatfText(Box<tramp_hatf::text::TextWriter<Output>>),
    Pointers(Box<PointerOut>),
}

impl Out {
    fn create(target: &Path, opts: &RecordOptions) -> Result<Out, Error> {
        let name = target.to_string_lossy().into_owned();
        let kind = TraceKind::of(&name, opts.pointers)?;
        let file = Output::create(&name, None)?;
        Ok(if kind == TraceKind::Pointers {
            Out::Pointers(Box::new(PointerOut::new(file)?))
        } else if kind == TraceKind::HatfText {
            Out::HatfText(Box::new(tramp_hatf::text::TextWriter::new(file)))
        } else if kind == TraceKind::Tpack {
            // On this thread until the session spreads it.
            let pack = tramp_tpack::Options {
                threads: 1,
                ..opts.pack
            };
            Out::Tpack(Box::new(Indexed {
                w: tramp_tpack::Writer::new(file, pack)?,
                index: opts.index.then(tramp_index::Builder::new),
                bufs: tramp_hatf::records::TypedBufs::new(),
                records: 0,
            }))
        } else {
            let mut w = tramp_hatf::Writer::new(file, Policy::Naive);
            // Times as deltas from the previous event: a third smaller after
            // zstd than absolute nanoseconds (docs/formats/capture.md).
            w.write_meta(Meta::SetInterp(Field::Time, Interp::Delta(0)))?;
            w.write_meta(Meta::SetWidth(Field::Time, Width::Fixed(2)))?;
            Out::Hatf(Box::new(w))
        })
    }

    /// Codes tpack blocks on this many threads from now on (other outputs
    /// have nothing to spread).
    fn set_threads(&mut self, threads: usize) -> Result<(), Error> {
        match self {
            Out::Tpack(t) => t.w.set_threads(threads),
            Out::Hatf(_) | Out::HatfText(_) | Out::Pointers(_) => Ok(()),
        }
    }

    fn finish(self) -> Result<(), Error> {
        match self {
            Out::Tpack(t) => t.finish()?,
            Out::Hatf(w) => w.into_inner()?.finish()?,
            Out::HatfText(w) => w.into_inner()?.finish()?,
            Out::Pointers(w) => w.finish()?,
        }
        Ok(())
    }
}

impl TraceOut for Out {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        match self {
            Out::Tpack(t) => t.write_item(item),
            Out::Hatf(w) => w.write_item(item),
            Out::HatfText(w) => TraceOut::write_item(&mut **w, item),
            Out::Pointers(w) => w.write_item(item),
        }
    }

    fn write_access(&mut self, a: &Access) -> Result<(), Error> {
        match self {
            Out::Pointers(w) => w.write_access(a),
            Out::Tpack(t) => t.w.write_access(a),
            Out::Hatf(w) => w.write_access(a),
            Out::HatfText(w) => w.write_access(a),
        }
    }
}

/// A tpack recording and its profile index, made from the records as they
/// are written (`tramp_index`; `--no-index`: none) and written after the
/// last block.
struct Indexed {
    w: tramp_tpack::Writer<Output>,
    index: Option<tramp_index::Builder>,
    bufs: tramp_hatf::records::TypedBufs,
    /// Records the index has seen.
    records: u64,
}

impl Indexed {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        if let Some(index) = &mut self.index {
            if let Item::Meta(_) = item {
                return self.w.write_item(item);
            }
            self.records += 1;
            let rec = self.bufs.record(item);
            // An analysis that refuses a record leaves no index (the
            // reports then read the events), never a lost recording.
            if tramp_core::Analysis::observe(index, &rec).is_err() {
                self.index = None;
            }
        }
        self.w.write_item(item)
    }

    fn finish(self) -> Result<(), Error> {
        let out = match self.index {
            Some(index) => {
                let images = tramp_core::Analysis::finish(index);
                let body = tramp_index::Index::of_images(images, self.records).encode();
                self.w.finish_with_trailer(&body)?
            }
            None => self.w.into_inner()?,
        };
        out.finish()?;
        Ok(())
    }
}

/// One raw log, read as it grows.
struct Log {
    path: PathBuf,
    file: File,
    /// Where the next unread chunk starts.
    offset: u64,
    /// Bytes before this offset are given back (hole punched).
    punched: u64,
    /// No more chunks will come (a newer log of the process exists and this
    /// one was read to its end, or it is damaged).
    finished: bool,
}

/// One thread of one log.
struct Stream {
    log: usize,
    tid: u32,
    /// Chunks read, not decoded yet.
    chunks: VecDeque<(ChunkRef, Vec<u8>)>,
    /// The chunk being decoded, [`BATCH`] events at a time.
    current: Option<ChunkDecoder>,
    /// Its events decoded and not written yet.
    events: VecDeque<RawEvent>,
    /// Where the thread's last chunk ended (TSC): its next events are later.
    last_end: u64,
    /// The thread's end was read (until a chunk of a new thread with the
    /// same id comes).
    ended: bool,
    /// A chunk failed to decode: the rest of this thread's log is ignored.
    broken: bool,
    first_base: u64,
}

/// One process: its logs (an exec starts a new one), threads and trace.
struct Proc {
    target: PathBuf,
    trace: Trace,
    logs: Vec<Log>,
    streams: Vec<Stream>,
    by_key: FxHashMap<(usize, u32), usize>,
    /// Streams with events, by the time of their first.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// Raw bytes queued in `chunks` of all streams.
    queued: usize,
    /// The merge's writing side.
    order: Order,
    /// Times of thread starts (pthread_create, from chunks flagged as
    /// ending with one) whose new thread has not shown up yet: nothing
    /// later is written until it does (or until [`LAG_NS`] passes: a thread
    /// that never allocates never shows up).
    spawns: Vec<u64>,
}

/// A recording's logs, converted while they are written.
pub struct Session {
    dir: PathBuf,
    root: u64,
    opts: RecordOptions,
    procs: BTreeMap<u64, Proc>,
    attached: FxHashSet<OsString>,
    punch: bool,
    peak_disk: u64,
    buf: Vec<u8>,
    /// Threads tpack is coded on when the program is not running, and
    /// those it is coded on now.
    spread_threads: usize,
    threads: usize,
    /// The run's TSC → ns line: every process's chunk pairs (see
    /// [`crate::clock`]).
    line: Line,
}

/// What a finished session produced.
pub struct Converted {
    /// One trace per process, the started one first: (pid, path, stats).
    pub traces: Vec<(u64, PathBuf, ConvertStats)>,
    /// The most temporary disk the logs held at any poll (bytes allocated).
    pub peak_disk: u64,
    /// Whether holes could be punched in the directory's file system (if
    /// not, the logs keep every byte until the end).
    pub bounded: bool,
}

impl Session {
    /// A session over the logs in `dir`; `root` is the pid of the started
    /// process (its trace is `opts.output`, others get their pid in the
    /// name).
    pub fn new(dir: &Path, root: u64, opts: &RecordOptions) -> Session {
        Session {
            dir: dir.to_path_buf(),
            root,
            opts: opts.clone(),
            procs: BTreeMap::new(),
            attached: FxHashSet::default(),
            punch: can_punch(dir),
            peak_disk: 0,
            buf: Vec::new(),
            spread_threads: opts.pack.threads,
            threads: 1,
            line: Line::default(),
        }
    }

    /// Sets the started process's pid (before the first poll).
    pub fn set_root(&mut self, root: u64) {
        self.root = root;
    }

    /// Whether read bytes are given back to the file system (so a bound
    /// on temporary disk holds).
    pub fn bounded(&self) -> bool {
        self.punch
    }

    /// Reads what the logs gained since the last poll and writes every
    /// event that is ready. Returns whether anything was read.
    pub fn poll(&mut self) -> Result<bool, Error> {
        self.attach_new()?;
        let mut progress = false;
        let mut disk = 0u64;
        let mut most = 0u64;
        for p in self.procs.values_mut() {
            progress |= p.read(self.punch, &mut self.buf, false)?;
            self.line.join(&p.order.clock.line);
        }
        for p in self.procs.values_mut() {
            p.order.clock.line.join(&self.line);
            p.emit_ready(false)?;
            for l in p.logs.iter().filter(|l| !l.finished) {
                let Ok(m) = l.file.metadata() else { continue };
                disk += m.blocks() * 512;
                // Unread bytes: what the writers wait on where holes are
                // punched, and what is behind where they are not.
                most = most.max(m.len().saturating_sub(l.offset));
            }
        }
        self.peak_disk = self.peak_disk.max(disk);
        self.spread(most)?;
        Ok(progress)
    }

    /// Codes on every core while a log holds so much that its writers
    /// wait or soon will (half the backlog bound: they wait past the
    /// bound until the log is back to half), and on this thread alone
    /// again once it is down to a quarter: while the program runs, it
    /// needs its core.
    fn spread(&mut self, most: u64) -> Result<(), Error> {
        let threads = if most >= self.opts.backlog / 2 {
            self.spread_threads
        } else if most <= self.opts.backlog / 4 {
            1
        } else {
            self.threads
        };
        if threads != self.threads {
            self.threads = threads;
            for p in self.procs.values_mut() {
                p.trace.out.set_threads(threads)?;
            }
        }
        Ok(())
    }

    /// Reads the logs to their ends (the program has ended), writes every
    /// event left and finishes every trace; `interrupted`: the signal that
    /// interrupted the recording, noted at the end of every trace.
    pub fn finish(mut self, interrupted: Option<i32>) -> Result<Converted, Error> {
        self.attach_new()?;
        let mut out = Vec::new();
        for (pid, mut p) in std::mem::take(&mut self.procs) {
            // The program is gone: what is left to convert has every core.
            p.trace.out.set_threads(self.spread_threads)?;
            while p.read(self.punch, &mut self.buf, true)? {}
            self.line.join(&p.order.clock.line);
            p.order.clock.line.join(&self.line);
            p.emit_ready(true)?;
            if let Some(signal) = interrupted {
                p.trace.state.comment(
                    &mut p.trace.out,
                    &Annotation::Interrupted { signal },
                    &mut p.trace.stats,
                )?;
                p.trace.stats.interrupted = Some(signal);
            }
            p.trace
                .state
                .write_symbols(&mut p.trace.out, &mut p.trace.stats)?;
            p.trace.state.finish_stats(&mut p.trace.stats);
            p.trace.stats.pid = pid;
            p.trace.out.finish()?;
            // Other processes' traces are named by the program they ran
            // last, known for sure only now (after any exec).
            if pid != self.root {
                let named = child_output(&self.opts.output, &p.trace.stats.program, pid);
                if named != p.target {
                    std::fs::rename(&p.target, &named)?;
                    p.target = named;
                }
            }
            out.push((pid, p.target, p.trace.stats));
        }
        let root = self.root;
        out.sort_by_key(|(pid, _, _)| (*pid != root, *pid));
        Ok(Converted {
            traces: out,
            peak_disk: self.peak_disk,
            bounded: self.punch,
        })
    }

    /// Attaches logs that appeared since the last look, oldest first.
    fn attach_new(&mut self) -> Result<(), Error> {
        let mut new = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            if self.attached.contains(&name) {
                continue;
            }
            let s = name.to_string_lossy();
            let parts: Vec<&str> = s.split('.').collect();
            if let ["trace", pid, nanos, "raw"] = parts[..]
                && let (Ok(pid), Ok(nanos)) = (pid.parse::<u64>(), nanos.parse::<u64>())
            {
                new.push((nanos, pid, entry.path(), name.clone()));
            }
        }
        new.sort();
        for (_, pid, path, name) in new {
            // Writable: punching a hole needs it.
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)?;
            self.attached.insert(name);
            let p = match self.procs.entry(pid) {
                std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::btree_map::Entry::Vacant(v) => {
                    let program = program_of(pid);
                    let target = if pid == self.root {
                        self.opts.output.clone()
                    } else {
                        child_output(&self.opts.output, &program, pid)
                    };
                    let mut out = Out::create(&target, &self.opts)?;
                    out.set_threads(self.threads)?;
                    // An attach's trace says so first, before any thread's
                    // event (the process note comes with the first thread
                    // to make a call, and another's earlier events may be
                    // merged ahead of it).
                    if self.opts.attached {
                        let note = Annotation::Attached.to_comment();
                        out.write_item(&Item::Comment(note.as_bytes()))?;
                    }
                    let mut proc = Proc::new(target, out);
                    // Until the log's first module names the program.
                    proc.trace.stats.program = program;
                    proc.trace.stats.attached = self.opts.attached;
                    v.insert(proc)
                }
            };
            p.logs.push(Log {
                path,
                file,
                offset: 0,
                punched: 0,
                finished: false,
            });
        }
        Ok(())
    }
}

impl Proc {
    fn new(target: PathBuf, out: Out) -> Proc {
        Proc {
            target,
            trace: Trace {
                out,
                state: State::default(),
                stats: ConvertStats::default(),
            },
            logs: Vec::new(),
            streams: Vec::new(),
            by_key: FxHashMap::default(),
            heap: BinaryHeap::new(),
            queued: 0,
            order: Order::default(),
            spawns: Vec::new(),
        }
    }

    /// Reads new whole chunks of every unfinished log into the streams'
    /// queues. `end`: the writers are gone, so a chunk cut short is damage.
    /// Returns whether anything was read.
    fn read(&mut self, punch: bool, buf: &mut Vec<u8>, end: bool) -> Result<bool, Error> {
        let mut progress = false;
        let n = self.logs.len();
        for li in 0..n {
            if self.logs[li].finished {
                continue;
            }
            let superseded = li + 1 < n;
            let size = self.logs[li].file.metadata()?.len();
            let log = &mut self.logs[li];
            let avail = size.saturating_sub(log.offset);
            let want = avail.min(READ_BYTES as u64) as usize;
            buf.resize(want, 0);
            log.file
                .read_exact_at(buf, log.offset)
                .map_err(|e| Error::Usage(format!("{}: {e}", log.path.display())))?;
            let base = log.offset;
            let mut at = 0usize;
            let mut damage = None;
            while buf.len() - at >= CHUNK_HEADER {
                let hdr: &[u8; CHUNK_HEADER] = buf[at..at + CHUNK_HEADER]
                    .try_into()
                    .expect("a whole header");
                let c = match raw::parse_header(hdr, base + at as u64) {
                    Ok(c) => c,
                    Err(e) => {
                        damage = Some(e);
                        break;
                    }
                };
                let whole = CHUNK_HEADER + c.len as usize;
                if buf.len() - at < whole {
                    // Cut short in this read (still being written, or the
                    // read stopped at READ_BYTES): read from here next time.
                    break;
                }
                let payload = buf[at + CHUNK_HEADER..at + whole].to_vec();
                at += whole;
                self.queue_chunk(li, c, payload);
                progress = true;
            }
            let log = &mut self.logs[li];
            log.offset += at as u64;
            let rest = size - log.offset;
            if let Some(e) = damage {
                self.trace
                    .stats
                    .damage
                    .push(format!("{}: {e}", log.path.display()));
                log.finished = true;
            } else if end && rest > 0 && at == 0 && want as u64 == avail {
                // The writer is gone and what is left is not a whole chunk.
                let e = if rest < CHUNK_HEADER as u64 {
                    RawError::Event {
                        offset: log.offset,
                        kind: 255,
                        at: 0,
                    }
                } else {
                    let len = u32::from_le_bytes(buf[8..12].try_into().expect("4 bytes"));
                    RawError::Length {
                        offset: log.offset,
                        len,
                    }
                };
                self.trace
                    .stats
                    .damage
                    .push(format!("{}: {e}", log.path.display()));
                log.finished = true;
            } else if rest == 0 && (superseded || end) {
                log.finished = true;
            }
            // Give what was read back to the file system (whole blocks).
            let upto = log.offset & !4095;
            if punch && upto > log.punched {
                let _ = rustix::fs::fallocate(
                    &log.file,
                    rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
                    log.punched,
                    upto - log.punched,
                );
                log.punched = upto;
            }
            if log.finished {
                // Nothing more will be read: the file's bytes can go too.
                let _ = std::fs::remove_file(&log.path);
            }
        }
        // Decode the front chunk of streams that have none decoded.
        for i in 0..self.streams.len() {
            if self.streams[i].events.is_empty() && self.refill(i) {
                let t = self.streams[i].events.front().map_or(0, RawEvent::key);
                self.heap.push(Reverse((t, i)));
            }
        }
        Ok(progress)
    }

    fn queue_chunk(&mut self, log: usize, c: ChunkRef, payload: Vec<u8>) {
        // A thread showing up: a new one (not the first of its log, the
        // process's main thread), or one that ended and whose id is used
        // again. It answers the oldest spawn still waiting.
        let appears = match self.by_key.get(&(log, c.tid)) {
            Some(&i) => self.streams[i].ended,
            None => self.streams.iter().any(|s| s.log == log),
        };
        if appears {
            // Its spawn is in a chunk read before (the log holds it first),
            // but not necessarily the oldest one waiting: threads start in
            // any order. It takes the latest spawn before its first chunk,
            // so that an older spawn whose thread has not shown up keeps
            // holding what is later.
            let spawn = (self.spawns.iter().enumerate())
                .filter(|&(_, &t)| t < c.base_tsc)
                .max_by_key(|&(_, &t)| t)
                .map(|(j, _)| j);
            if let Some(j) = spawn {
                self.spawns.swap_remove(j);
            }
        }
        if c.spawn {
            self.spawns.push(c.end_tsc);
        }
        let i = *self.by_key.entry((log, c.tid)).or_insert_with(|| {
            self.streams.push(Stream {
                log,
                tid: c.tid,
                chunks: VecDeque::new(),
                current: None,
                events: VecDeque::new(),
                last_end: c.base_tsc,
                ended: false,
                broken: false,
                first_base: c.base_tsc,
            });
            self.streams.len() - 1
        });
        let s = &mut self.streams[i];
        if s.broken {
            return;
        }
        s.ended = false;
        s.last_end = c.end_tsc;
        self.order.clock.pair(c.base_ns, c.base_tsc);
        self.order.clock.pair(c.end_ns, c.end_tsc);
        self.queued += payload.len();
        s.chunks.push_back((c, payload));
    }

    /// Decodes the stream's next events (a batch of its current chunk, or
    /// of the next queued one); false when it has none.
    fn refill(&mut self, i: usize) -> bool {
        let s = &mut self.streams[i];
        while s.events.is_empty() {
            let dec = match &mut s.current {
                Some(d) => d,
                None => {
                    let Some((c, payload)) = s.chunks.pop_front() else {
                        return false;
                    };
                    self.queued -= payload.len();
                    s.current.insert(ChunkDecoder::new(c, payload))
                }
            };
            // Straight into the stream's queue (it is empty).
            if let Err(e) = dec.decode(&mut s.events, BATCH) {
                let path = &self.logs[s.log].path;
                self.trace
                    .stats
                    .damage
                    .push(format!("{}: {e}", path.display()));
                s.broken = true;
                self.queued -= s.chunks.iter().map(|(_, p)| p.len()).sum::<usize>();
                s.chunks.clear();
                s.current = None;
            } else if dec.done() {
                s.current = None;
            }
            if s.events
                .back()
                .is_some_and(|e| matches!(e, RawEvent::ThreadEnd { .. }))
                && s.current.is_none()
                && s.chunks.is_empty()
            {
                s.ended = true;
            }
        }
        true
    }

    /// Whether a stream may still deliver events.
    fn open(&self, s: &Stream) -> bool {
        !s.ended && !s.broken && !self.logs[s.log].finished
    }

    /// Writes every event no thread can precede any more (see the module
    /// doc); with `all`, every event. Times are TSC readings, the one
    /// clock every thread's events are ordered by.
    fn emit_ready(&mut self, all: bool) -> Result<(), Error> {
        // Until the run's pairs give a rate, nothing is timed (a window
        // that fills is written all the same, at the best rate there is).
        if !all && !self.order.clock.line.known() && self.queued <= WINDOW_BYTES {
            return Ok(());
        }
        let mut wm = u64::MAX;
        for s in &self.streams {
            if s.events.is_empty() && self.open(s) {
                wm = wm.min(s.last_end);
            }
        }
        // The log's own clock: the latest chunk end read. (The wall clock
        // ran ahead of it whenever the conversion fell behind, and then
        // every event read was "old": 4 to 6 % of larson's were late.)
        let read_to = self.streams.iter().map(|s| s.last_end).max().unwrap_or(0);
        let lag = read_to.saturating_sub(self.order.clock.ticks(LAG_NS));
        // A spawn whose thread has not shown up holds back what is later;
        // one older than the lag never will (its thread did not allocate).
        self.spawns.retain(|&t| t > lag);
        if let Some(&t) = self.spawns.iter().min() {
            wm = wm.min(t);
        }
        while let Some(Reverse((_, first))) = self.heap.pop() {
            // Events of stream `i` are written while they stay the oldest
            // (no heap traffic for a thread's run of events).
            let i = first;
            let next_other = self.heap.peek().map_or(u64::MAX, |Reverse((t, _))| *t);
            loop {
                let t = self.streams[i]
                    .events
                    .front()
                    .map_or(u64::MAX, RawEvent::key);
                let forced = self.queued > WINDOW_BYTES;
                if !(all || forced || t <= wm || t <= lag) {
                    self.heap.push(Reverse((t, i)));
                    return Ok(());
                }
                if self.order.t0.is_none() {
                    let first = self.streams.iter().map(|s| s.first_base).min();
                    self.order.t0 = Some(self.order.clock.at(first.unwrap_or(0)));
                }
                // Written from the queue and popped after: moved out
                // first, the event (a 1-byte tag before its fields) was
                // copied by overlapping moves whose read-back stalled
                // (15 % of the conversion on CPython).
                let s = &self.streams[i];
                let ev = s.events.front().expect("streams in the heap have events");
                self.order.put(ev, s.log, s.tid, &mut self.trace)?;
                self.streams[i].events.pop_front();
                if self.streams[i].events.is_empty() && !self.refill(i) {
                    if self.open(&self.streams[i]) {
                        wm = wm.min(self.streams[i].last_end);
                    }
                    break;
                }
                let t = self.streams[i].events.front().map_or(0, RawEvent::key);
                if t > next_other {
                    self.heap.push(Reverse((t, i)));
                    break;
                }
            }
        }
        if all {
            self.order.settle(u64::MAX, None, &mut self.trace)?;
        }
        Ok(())
    }
}

/// Moved reallocs held open at most (one per thread of the process).
const MAX_OPEN: usize = 1024;

/// A realloc that moved its block, held until its place in the merge.
struct Opened {
    ev: RawEvent,
    log: usize,
    tid: u32,
}

/// A process's trace being written: the output, the conversion's state and
/// its counts.
struct Trace {
    out: Out,
    state: State,
    stats: ConvertStats,
}

/// The writing side of a process's merge: events in merge order become
/// trace records with ns times, and reallocs that moved their block are
/// placed where the order per address is the allocator's.
///
/// A moved realloc of `old` to `new` carries two readings: `began`, before
/// the call (the old block existed until then at least), and its `time`,
/// after it (the new block existed from then at the latest). Inside the
/// call, the allocator made the new block before it freed the old one (it
/// copies from one to the other), so another thread's free of `new`
/// (stamped before its call) is earlier than any other thread's allocation
/// of `old` (stamped after its call). The realloc is opened when the merge
/// reaches `began` and written at the first of: an event written that
/// starts a block at `old` (it must follow the realloc; a moved realloc
/// into `old` counts when it is written, not when it is opened), an event
/// read at or after `time`, the end. Frees of `new` in the window are
/// written before it.
#[derive(Default)]
struct Order {
    /// The process's TSC → ns map: the run's line (every process's chunk
    /// headers) and this process's monotone guard.
    clock: Clock,
    /// The ns that trace times count from (the first chunk's start).
    t0: Option<u64>,
    /// The latest TSC written.
    last: u64,
    /// Reallocs that moved their block, waiting for their place.
    open: Vec<Opened>,
}

impl Order {
    /// One event, in merge order (by [`RawEvent::key`]).
    fn put(&mut self, ev: &RawEvent, log: usize, tid: u32, t: &mut Trace) -> Result<(), Error> {
        let key = ev.key();
        if !self.open.is_empty() {
            // A moved realloc starts its new block no earlier than its
            // second reading, not at `key`, its first: an open realloc
            // whose old block that is waits until this one is written
            // (`settle` writes it first then). Settling it now put it
            // before frees its own window still held (1 in about 100
            // slots.c recordings under load).
            let starts = if ev.moves() { None } else { ev.starts() };
            self.settle(key, starts, t)?;
        }
        if ev.moves() {
            self.open.push(Opened {
                ev: ev.clone(),
                log,
                tid,
            });
            // A thread has at most one open at a time (its next event
            // closes it); more than this many is a damaged log, whose
            // oldest is written at once so that the work stays linear.
            if self.open.len() > MAX_OPEN {
                let oldest = self.open.iter().map(|o| o.ev.time()).min();
                self.settle(oldest.unwrap_or(0), None, t)?;
            }
            return Ok(());
        }
        self.write(ev, log, tid, key, t)
    }

    /// Writes the open reallocs whose window closed by `key`, and those
    /// whose old block is `starts` (an event about to start a block there),
    /// each after what it must follow.
    fn settle(&mut self, key: u64, starts: Option<u64>, t: &mut Trace) -> Result<(), Error> {
        loop {
            let pick = self
                .open
                .iter()
                .enumerate()
                .filter(|(_, o)| o.ev.time() <= key || starts.is_some_and(|a| o.ev.old() == a))
                .min_by_key(|(_, o)| o.ev.time())
                .map(|(j, _)| j);
            let Some(j) = pick else { return Ok(()) };
            let o = self.open.swap_remove(j);
            let RawEvent::Realloc { began, time, .. } = o.ev else {
                unreachable!("only moved reallocs are opened")
            };
            // Its new block may be where another open realloc moved from.
            if !self.open.is_empty() {
                self.settle(self.last.max(began).min(time), o.ev.starts(), t)?;
            }
            let at = self.last.max(began).min(time);
            self.write(&o.ev, o.log, o.tid, at, t)?;
        }
    }

    /// Writes one event at TSC reading `tsc`.
    fn write(
        &mut self,
        ev: &RawEvent,
        log: usize,
        tid: u32,
        tsc: u64,
        t: &mut Trace,
    ) -> Result<(), Error> {
        if tsc < self.last {
            t.stats.late += 1;
        } else {
            self.last = tsc;
        }
        let time = self.clock.ns(tsc).saturating_sub(self.t0.unwrap_or(0));
        t.state.clock0 = self.t0;
        t.state.emit(ev, time, log, tid, &mut t.out, &mut t.stats)
    }
}

/// CLOCK_MONOTONIC in ns, the clock of the chunk headers.
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Whether the file system of `dir` gives back the blocks of a punched
/// hole (ext4, xfs, btrfs and tmpfs do).
pub fn can_punch(dir: &Path) -> bool {
    let Ok(f) = tempfile::tempfile_in(dir) else {
        return false;
    };
    if f.write_all_at(&[1u8; 1 << 16], 0).is_err() || f.sync_all().is_err() {
        return false;
    }
    let before = f.metadata().map_or(0, |m| m.blocks());
    let punched = rustix::fs::fallocate(
        &f,
        rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
        0,
        1 << 16,
    )
    .is_ok();
    punched && f.metadata().map_or(0, |m| m.blocks()) < before
}
