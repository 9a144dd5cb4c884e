//! Decoding tpack blocks on several threads at once. Blocks are
//! independent (the model starts afresh in each), so a thread reads the
//! blocks, each of `workers` threads decompresses and decodes whole blocks
//! into a compact table of records, and the reader hands the records on
//! in file order, with the warnings and errors where the serial reader
//! gives them.
//!
//! Memory is bounded: a decoded block takes 32 bytes a record (addresses
//! of reallocs, thread and heap changes, attribute values and comments
//! beside), 32 MiB for the default block of 1 Mi records, and blocks are
//! handed to workers only while the records out stay under a budget
//! ([`RECORD_BUDGET`], 4 Mi records), so at most `workers + 3` blocks and
//! about 128 MiB of them are alive besides one spare; a block larger than
//! the budget (up to 16 Mi records) is decoded alone.

use std::io::Read;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use tramp_core::{Error, Position, Warning};
use tramp_hatf::spec::EVENT_KINDS;
use tramp_hatf::{Event, Item};

use crate::framer::{Frame, Framer, RawBlock, Streams, unpack};
use crate::reader::{Decoder, Next};
use crate::streams::Stream;
use crate::threads::Threads;

/// The slot kind of a comment (event kinds are 0–9).
const COMMENT: u8 = u8::MAX;

/// One decoded record: the event's kind and its fields that change from
/// record to record; for a comment, only its text.
#[derive(Clone, Copy)]
struct Slot {
    kind: u8,
    /// 1 + the index of the attribute value or comment in `spans`; 0 for
    /// an event without attributes.
    span: u32,
    size: u64,
    address: u64,
    time: u64,
}

/// A block's records, decoded.
#[derive(Default)]
struct DecodedBlock {
    /// The offset of the block's header.
    start: u64,
    /// The records its header gave (what it counts for in [`InFlight`]).
    claimed: u64,
    slots: Vec<Slot>,
    /// The new address of every realloc, in order.
    new_addresses: Vec<u64>,
    /// The slot from which each (thread, heap) pair holds (both 0 before
    /// the first).
    changes: Vec<(u32, u64, u64)>,
    /// Attribute values and comments, each once (an attribute value the
    /// same as the previous event's is not stored again).
    bytes: Vec<u8>,
    spans: Vec<(u32, u32)>,
    /// What stopped decoding after the last slot (damage in the block).
    end: Option<Error>,
}

impl DecodedBlock {
    #[inline]
    fn span(&self, span: u32) -> &[u8] {
        match span.checked_sub(1) {
            Some(i) => {
                let (at, len) = self.spans[i as usize];
                &self.bytes[at as usize..(at + len) as usize]
            }
            None => &[],
        }
    }

    /// Stores bytes; returns their span number.
    fn store(&mut self, b: &[u8]) -> u32 {
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        self.spans.push((at, b.len() as u32));
        self.spans.len() as u32
    }
}

/// Whether events of this kind (an index in `EVENT_KINDS`) have a new
/// address: the reallocs.
#[inline]
fn has_new_address(kind: u8) -> bool {
    (2..=5).contains(&kind)
}

/// Records of the blocks handed to workers and not yet read past, kept
/// under a budget so that memory stays bounded whatever the block size: a
/// block is handed out only when it fits, or when none is out (a block
/// larger than the budget is then decoded alone).
#[derive(Default)]
struct InFlight {
    state: Mutex<(u64, bool)>,
    changed: Condvar,
}

impl InFlight {
    /// Waits until `n` more records fit; false when the reader is gone.
    fn acquire(&self, n: u64, budget: u64) -> bool {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while !g.1 && g.0 > 0 && g.0.saturating_add(n) > budget {
            g = self.changed.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        g.0 = g.0.saturating_add(n);
        !g.1
    }

    fn release(&self, n: u64) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.0 = g.0.saturating_sub(n);
        self.changed.notify_all();
    }

    /// The reader is gone: nothing waits any more.
    fn close(&self) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.1 = true;
        self.changed.notify_all();
    }
}

/// Records of decoded blocks that may be alive at once, beyond the block
/// being read (32 bytes each: 128 MiB).
pub const RECORD_BUDGET: u64 = 4 << 20;

/// A block for a worker, and where its records go.
struct Job {
    block: RawBlock,
    reply: SyncSender<DecodedBlock>,
}

/// What the reading thread hands the reader, in file order.
enum Ordered {
    /// A block, decoded by whichever worker took it.
    Block(Receiver<DecodedBlock>),
    Skipped(Warning),
    Failed(Error),
    End,
}

/// Decompresses and decodes one block into `out` (a block read before, its
/// buffers reused: fresh pages cost a fault each). The streams' buffers
/// are lent and given back for the next block.
fn decode(
    dec: &mut Decoder,
    job: &RawBlock,
    streams: Streams,
    mut out: DecodedBlock,
) -> (DecodedBlock, Streams) {
    out.start = job.start;
    out.claimed = u64::from(job.records);
    out.slots.clear();
    out.new_addresses.clear();
    out.changes.clear();
    out.bytes.clear();
    out.spans.clear();
    out.end = None;
    let streams = match unpack(&job.body, streams, job.position(), job.version) {
        Ok(s) => s,
        Err(e) => {
            out.end = Some(e);
            return (out, Streams::default());
        }
    };
    // Room for the records the block can hold: one kind byte each. The
    // header's count alone is not trusted (a damaged one could ask for
    // terabytes); past this, the table grows only as records decode.
    let kinds = streams[Stream::Kind as usize].len();
    out.slots.reserve((job.records as usize).min(kinds));
    dec.record = job.record_base;
    dec.start_block(job.start, job.records, streams, job.version);
    let (mut thread, mut heap) = (0, 0);
    // The span of the attributes of the last event that had any (0: none
    // yet).
    let mut last_attr = 0u32;
    while dec.left > 0 {
        match dec.decode_record() {
            Ok(true) => {
                // Field by field (`black_box`): copied whole, the event's
                // word stores are read back by wider loads, which stall.
                let w = std::hint::black_box;
                let c = &dec.cur;
                let kind = w(c.kind) as u8;
                let (t, h) = (w(c.thread), w(c.heap));
                if (t, h) != (thread, heap) {
                    (thread, heap) = (t, h);
                    out.changes.push((out.slots.len() as u32, thread, heap));
                }
                if has_new_address(kind) {
                    out.new_addresses.push(w(c.new_address));
                }
                let span = if !dec.has_attrs {
                    0
                } else if dec.attrs_same && last_attr != 0 {
                    last_attr
                } else {
                    last_attr = out.store(dec.attributes_value());
                    last_attr
                };
                out.slots.push(Slot {
                    kind,
                    span,
                    size: w(c.size),
                    address: w(c.address),
                    time: w(c.time),
                });
            }
            Ok(false) => {
                let span = out.store(&dec.comment);
                out.slots.push(Slot {
                    kind: COMMENT,
                    span,
                    size: 0,
                    address: 0,
                    time: 0,
                });
            }
            Err(e) => {
                out.end = Some(e);
                break;
            }
        }
    }
    if out.end.is_none() {
        out.end = dec.trailing_error();
    }
    dec.left = 0;
    let streams = dec.take_streams();
    (out, streams)
}

/// The reader's side: decoded blocks in order, taken record by record.
pub(crate) struct Parallel {
    order: Receiver<Ordered>,
    /// Blocks read, back to the workers for reuse.
    spare: SyncSender<DecodedBlock>,
    in_flight: Arc<InFlight>,
    block: Option<DecodedBlock>,
    /// The next slot of `block`, and where its side tables stand.
    at: usize,
    new_at: usize,
    change_at: usize,
    thread: u64,
    heap: u64,
    block_start: u64,
    record: u64,
    done: bool,
    /// Last, so that the channels above are closed when it is dropped.
    threads: Threads,
}

impl Parallel {
    /// Starts the reading thread and `workers` decoding threads.
    pub fn start<R: Read + Send + 'static>(
        framer: Framer<R>,
        workers: usize,
        budget: u64,
    ) -> std::io::Result<Parallel> {
        let workers = workers.max(1);
        let in_flight = Arc::new(InFlight::default());
        // A worker takes a block only when it is free, and the reading
        // thread runs ahead of the reader by `workers` blocks: every
        // worker busy while the reader takes a block, few blocks waiting.
        // Alive at once: the reader's block, `workers` waiting for it, one
        // more given to a worker while the reading thread waits to say so,
        // and one spare for reuse.
        let (job_tx, job_rx) = sync_channel::<Job>(0);
        let (order_tx, order) = sync_channel::<Ordered>(workers);
        let jobs = Arc::new(Mutex::new(job_rx));
        let (spare, spares) = sync_channel::<DecodedBlock>(1);
        let spares = Arc::new(Mutex::new(spares));
        let mut threads = Threads::default();
        for i in 0..workers {
            let jobs = jobs.clone();
            let spares = spares.clone();
            let token = threads.token();
            let h = std::thread::Builder::new()
                .name(format!("tpack-decode-{i}"))
                .spawn(move || {
                    let _running = token;
                    let mut dec = Decoder::new();
                    let mut spare = Streams::default();
                    loop {
                        let job = {
                            let rx = jobs.lock().unwrap_or_else(|p| p.into_inner());
                            match rx.recv() {
                                Ok(j) => j,
                                Err(_) => break,
                            }
                        };
                        let reuse = spares
                            .lock()
                            .ok()
                            .and_then(|r| r.try_recv().ok())
                            .unwrap_or_default();
                        let (block, streams) = decode(&mut dec, &job.block, spare, reuse);
                        spare = streams;
                        // The reader may be gone; the next job tells.
                        let _ = job.reply.send(block);
                    }
                })?;
            threads.push(h);
        }
        let token = threads.token();
        let flight = in_flight.clone();
        let h = std::thread::Builder::new()
            .name("tpack-blocks".into())
            .spawn(move || {
                let _running = token;
                let mut framer = framer;
                loop {
                    let msg = match framer.next_raw() {
                        Ok(Frame::Block(block)) => {
                            if !flight.acquire(u64::from(block.records), budget) {
                                break;
                            }
                            let (reply, rx) = sync_channel(1);
                            if job_tx.send(Job { block, reply }).is_err() {
                                break;
                            }
                            Ordered::Block(rx)
                        }
                        Ok(Frame::Skipped(w)) => Ordered::Skipped(w),
                        Ok(Frame::End) => Ordered::End,
                        Err(e) => Ordered::Failed(e),
                    };
                    let last = matches!(msg, Ordered::End | Ordered::Failed(_));
                    // A send fails when the reader was dropped: stop.
                    if order_tx.send(msg).is_err() || last {
                        break;
                    }
                }
            })?;
        threads.push(h);
        Ok(Parallel {
            order,
            spare,
            in_flight,
            block: None,
            at: 0,
            new_at: 0,
            change_at: 0,
            thread: 0,
            heap: 0,
            block_start: 0,
            record: 0,
            done: false,
            threads,
        })
    }

    pub fn position(&self) -> Position {
        Position::new(self.block_start, self.record)
    }

    /// The next item or warning, `Ok(None)` at the end.
    #[inline]
    pub fn next_entry(&mut self) -> Result<Option<Next<'_>>, Error> {
        loop {
            match &self.block {
                Some(b) if self.at < b.slots.len() => break,
                Some(_) => {
                    if let Some(mut b) = self.block.take() {
                        self.in_flight.release(b.claimed);
                        let end = b.end.take();
                        // Workers may have spares enough; then it is freed.
                        let _ = self.spare.try_send(b);
                        if let Some(e) = end {
                            self.done = true;
                            return Err(e);
                        }
                    }
                }
                None => {}
            }
            if let Some(w) = self.next_block()? {
                return Ok(Some(Next::Warning(w)));
            }
            if self.done {
                return Ok(None);
            }
        }
        let Some(b) = &self.block else {
            unreachable!("the loop stops only at a slot")
        };
        let i = self.at;
        let s = b.slots[i];
        self.at += 1;
        self.record += 1;
        if s.kind == COMMENT {
            return Ok(Some(Next::Item(Item::Comment(b.span(s.span)))));
        }
        while let Some(&(from, thread, heap)) = b.changes.get(self.change_at)
            && from as usize <= i
        {
            self.thread = thread;
            self.heap = heap;
            self.change_at += 1;
        }
        let new_address = if has_new_address(s.kind) {
            let a = b.new_addresses.get(self.new_at).copied().unwrap_or(0);
            self.new_at += 1;
            a
        } else {
            0
        };
        Ok(Some(Next::Item(Item::Event(Event {
            kind: EVENT_KINDS[s.kind as usize],
            size: s.size,
            address: s.address,
            new_address,
            thread: self.thread,
            heap: self.heap,
            time: s.time,
            attributes: b.span(s.span),
        }))))
    }

    /// Takes the next block, or returns the damage skipped, or sets `done`.
    #[inline(never)]
    fn next_block(&mut self) -> Result<Option<Warning>, Error> {
        if self.done {
            return Ok(None);
        }
        let next = self.order.recv();
        // The reading thread's last message (or its end): it has stopped
        // handing out blocks, and the workers stop with it.
        self.threads.finished = matches!(next, Ok(Ordered::End | Ordered::Failed(_)) | Err(_));
        match next {
            Ok(Ordered::Block(rx)) => match rx.recv() {
                Ok(b) => {
                    self.block_start = b.start;
                    (self.at, self.new_at, self.change_at) = (0, 0, 0);
                    (self.thread, self.heap) = (0, 0);
                    self.block = Some(b);
                    Ok(None)
                }
                Err(_) => {
                    self.done = true;
                    Err(stopped())
                }
            },
            Ok(Ordered::Skipped(w)) => {
                self.block_start = w.offset;
                Ok(Some(w))
            }
            Ok(Ordered::Failed(e)) => {
                self.done = true;
                Err(e)
            }
            Ok(Ordered::End) => {
                self.done = true;
                Ok(None)
            }
            Err(_) => {
                self.done = true;
                Err(stopped())
            }
        }
    }
}

impl Drop for Parallel {
    fn drop(&mut self) {
        // The reading thread may be waiting for room: let it go.
        self.in_flight.close();
    }
}

#[cold]
fn stopped() -> Error {
    std::io::Error::other("a tpack decoding thread stopped").into()
}
