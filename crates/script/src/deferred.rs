//! Buffers simulated on a thread of their own.
//!
//! Most simulation scripts (the paper's Figure 8) make a buffer request
//! per record as a statement and look at the buffers only in postprocess
//! (`print_buffer`). Nothing the record loop does then depends on a
//! request's answer, so the requests can be served on another core while
//! the script goes on: the machine queues them in batches, in order, to a
//! thread that owns the caches, and takes the caches back (every request
//! served) before postprocess. The answers are the same as in line; only
//! the work moves.
//!
//! [`answers_unread`] decides when that holds: in main and the
//! procedures, every buffer call is a statement (its hit or miss flows
//! nowhere), and no buffer is made, printed or counted. Anything else runs
//! in line.

use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;

use tramp_cachesim::Cache;

use crate::tree::{BufferOp, Node, Script};

/// Whether no answer of a buffer request made while records run is ever
/// read (see the module's documentation).
pub fn answers_unread(script: &Script) -> bool {
    script
        .main
        .iter()
        .chain(&script.procedures)
        .all(|n| !reads_answers(n, false))
}

/// Whether evaluating `n` reads a buffer's state; `used`: whether `n`'s own
/// value is used by its parent.
fn reads_answers(n: &Node, used: bool) -> bool {
    use Node::*;
    let any = |v: &[Node]| v.iter().any(|c| reads_answers(c, true));
    match n {
        MakeBuffer(..) | PrintBuffer(_) | BufferCount(..) => true,
        Buffer(_, b, keys) => used || reads_answers(b, true) || any(keys),
        BufferVars(..) => used,
        // Statements: their parts' values are not their value.
        Seq(v) => v.iter().any(|c| reads_answers(c, false)),
        If(arms, otherwise) => {
            arms.iter()
                .any(|(c, body)| reads_answers(c, true) || reads_answers(body, false))
                || otherwise
                    .as_deref()
                    .is_some_and(|e| reads_answers(e, false))
        }
        While(c, body) => reads_answers(c, true) || reads_answers(body, false),
        For(_, _, body) => reads_answers(body, false),
        Int(_)
        | Float(_)
        | Str(_)
        | Var(_)
        | Field { .. }
        | RecordType
        | Call(_)
        | Nl
        | Spit
        | Swap
        | Print
        | TypeIs(_)
        | FieldCmp { .. }
        | AddVar(..)
        | AddField { .. }
        | LoadField { .. } => false,
        SetVar(_, e) | Neg(e) | Not(e) | SpitInt(e) | SpitChar(e) => reads_answers(e, true),
        Update { value, .. } => reads_answers(value, true),
        Elem(_, k) | Found(_, k, _) | Delete(_, k) => any(k),
        SetElem(_, k, e) => any(k) || reads_answers(e, true),
        Bin(_, a, b) => reads_answers(a, true) || reads_answers(b, true),
        And(v) | Or(v) | Echo(v, _) => any(v),
    }
}

/// One queued request: the buffer, the object and what was asked.
#[derive(Clone, Copy)]
struct Queued {
    id: u64,
    buffer: u32,
    op: BufferOp,
}

/// Requests per batch handed to the simulating thread.
const BATCH: usize = 8192;
/// Batches queued ahead of the simulating thread (then the script waits).
const DEPTH: usize = 4;

/// The simulating thread and the batch being filled.
pub struct Simulator {
    batch: Vec<Queued>,
    full: Option<SyncSender<Vec<Queued>>>,
    empty: Receiver<Vec<Queued>>,
    worker: Option<JoinHandle<Vec<Cache>>>,
}

impl Simulator {
    /// Moves `caches` to a new thread that serves the requests queued with
    /// [`Simulator::push`]; `Err` gives the caches back when no thread
    /// could be started.
    pub fn start(caches: Vec<Cache>) -> Result<Simulator, Vec<Cache>> {
        let (full, batches) = sync_channel::<Vec<Queued>>(DEPTH);
        let (give_back, empty) = channel();
        // The caches reach the thread through a channel so that they come
        // back if the thread cannot be started.
        let (hand, caches_rx) = channel::<Vec<Cache>>();
        let worker = std::thread::Builder::new()
            .name("tramp-buffers".into())
            .spawn(move || {
                let mut caches = caches_rx.recv().unwrap_or_default();
                for mut batch in batches {
                    serve(&mut caches, &batch);
                    batch.clear();
                    let _ = give_back.send(batch);
                }
                caches
            });
        match worker {
            Ok(w) => {
                hand.send(caches).expect("the thread waits for its caches");
                Ok(Simulator {
                    batch: Vec::with_capacity(BATCH),
                    full: Some(full),
                    empty,
                    worker: Some(w),
                })
            }
            Err(_) => Err(caches),
        }
    }

    /// Queues a request to buffer `b` (which exists) for object `id`.
    #[inline]
    pub fn push(&mut self, op: BufferOp, b: usize, id: u64) {
        self.batch.push(Queued {
            id,
            buffer: b as u32,
            op,
        });
        if self.batch.len() == BATCH {
            self.hand_over();
        }
    }

    #[cold]
    fn hand_over(&mut self) {
        let next = match self.empty.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => Vec::with_capacity(BATCH),
        };
        let full = std::mem::replace(&mut self.batch, next);
        if let Some(tx) = &self.full {
            // A send fails only if the thread is gone (it panicked); `finish`
            // reports that.
            let _ = tx.send(full);
        }
    }

    /// Serves every queued request and gives the caches back (`None` if
    /// the simulating thread panicked).
    pub fn finish(mut self) -> Option<Vec<Cache>> {
        if !self.batch.is_empty() {
            self.hand_over();
        }
        self.full = None;
        self.worker.take()?.join().ok()
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        // Ends the thread (its channel closes) and waits for it, so that no
        // thread outlives the run.
        self.full = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// Serves a batch of requests in order.
fn serve(caches: &mut [Cache], batch: &[Queued]) {
    for q in batch {
        q.op.serve(&mut caches[q.buffer as usize], q.id);
    }
}
