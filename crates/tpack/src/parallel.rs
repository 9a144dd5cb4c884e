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
use std::ops::ControlFlow;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use tramp_core::{Error, Position, Warning};

use crate::framer::{Frame, Framer, RawBlock, Streams, unpack};
use crate::reader::{Decoder, Next};
use crate::streams::Stream;
use crate::table::{Cursor, Slot, Table, has_new_address};
use crate::threads::{Threads, next_job};

/// A block's records, decoded.
#[derive(Default)]
struct DecodedBlock {
    /// The offset of the block's header.
    start: u64,
    /// The records its header gave (what it counts for in [`InFlight`]).
    claimed: u64,
    table: Table,
    /// What stopped decoding after the last slot (damage in the block).
    end: Option<Error>,
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
    out.table.clear();
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
    out.table.slots.reserve((job.records as usize).min(kinds));
    dec.record = job.record_base;
    dec.start_block(job.start, job.records, streams, job.version);
    let t = &mut out.table;
    while dec.left > 0 {
        match dec.decode_record() {
            Ok(true) => {
                // Field by field (`black_box`): copied whole, the event's
                // word stores are read back by wider loads, which stall.
                let w = std::hint::black_box;
                let c = &dec.cur;
                let kind = w(c.kind) as u8;
                t.thread_heap(w(c.thread), w(c.heap));
                if has_new_address(kind) {
                    t.new_addresses.push(w(c.new_address));
                }
                let span = t.attributes(dec.has_attrs, dec.attributes_value(), dec.attrs_same);
                t.slots.push(Slot {
                    kind,
                    span,
                    size: w(c.size),
                    address: w(c.address),
                    time: w(c.time),
                });
            }
            Ok(false) => t.push_comment(&dec.comment),
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
    cursor: Cursor,
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
                    while let Some(job) = next_job(&jobs) {
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
            cursor: Cursor::default(),
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
                Some(b) if self.cursor.at < b.table.len() => break,
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
        self.record += 1;
        let item = self.cursor.next(&b.table);
        Ok(item.map(Next::Item))
    }

    /// Calls `f` with every entry in order until the end, an error, or `f`
    /// breaks: each block's records walked where they lie in its table,
    /// with no call through [`Parallel::next_entry`] but between blocks.
    pub fn each_entry(
        &mut self,
        mut f: impl FnMut(&Next<'_>) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        loop {
            if let Some(b) = &self.block {
                while let Some(item) = self.cursor.next(&b.table) {
                    self.record += 1;
                    if f(&Next::Item(item)).is_break() {
                        return Ok(());
                    }
                }
            }
            // The block is done: the next one's first entry, as pulled.
            match self.next_entry()? {
                Some(entry) => {
                    if f(&entry).is_break() {
                        return Ok(());
                    }
                }
                None => return Ok(()),
            }
        }
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
                    self.cursor = Cursor::default();
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
