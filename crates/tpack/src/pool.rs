//! Coding whole blocks on threads for the writer: it fills a table of
//! records ([`crate::table`]), hands it to a free thread, and writes the
//! blocks that come back in the order it handed them out, so the file is
//! the one a single thread writes.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tramp_core::Error;

use crate::streams::STREAMS;
use crate::table::Table;
use crate::threads::next_job;
use crate::writer::{Encoder, Options, StreamTotal, add_totals};

/// A table of records for a thread to code, and where the block's bytes
/// go.
struct Job {
    table: Table,
    /// The records written before the table's first.
    first: u64,
    reply: SyncSender<Result<Coded, Error>>,
}

/// A table coded: its blocks' bytes, their stream totals, and the table
/// back for reuse.
struct Coded {
    bytes: Vec<u8>,
    totals: [StreamTotal; STREAMS],
    table: Table,
}

/// Threads coding whole tables into blocks, and the tables handed to them
/// in order. At most `threads` + 1 tables are being coded or wait to be
/// written (a table takes 32 bytes a record: 8 MiB for 256 Ki records),
/// besides the one being filled and two spares.
pub(crate) struct Pool {
    pub table: Table,
    jobs: Option<SyncSender<Job>>,
    /// Replies in file order.
    pending: VecDeque<Receiver<Result<Coded, Error>>>,
    spare: Vec<Table>,
    threads: usize,
    handles: Vec<JoinHandle<()>>,
}

impl Pool {
    pub fn start(opts: Options) -> std::io::Result<Pool> {
        // A table is handed over only when a thread is free to take it.
        let (jobs, rx) = sync_channel::<Job>(0);
        let rx = Arc::new(Mutex::new(rx));
        let mut handles = Vec::new();
        for i in 0..opts.threads {
            let rx = rx.clone();
            let codec = opts.codec;
            handles.push(
                std::thread::Builder::new()
                    .name(format!("tpack-encode-{i}"))
                    .spawn(move || {
                        let mut enc = Encoder::new(codec);
                        while let Some(job) = next_job(&rx) {
                            enc.totals = Default::default();
                            let mut bytes = Vec::new();
                            let r = enc.table(&job.table, job.first, &mut bytes);
                            let r = r.map(|()| Coded {
                                bytes,
                                totals: enc.totals,
                                table: job.table,
                            });
                            // The writer may be gone: then nobody waits.
                            let _ = job.reply.send(r);
                        }
                    })?,
            );
        }
        Ok(Pool {
            table: Table::default(),
            jobs: Some(jobs),
            pending: VecDeque::new(),
            spare: Vec::new(),
            threads: opts.threads,
            handles,
        })
    }

    /// Hands the table filled so far (the records before `end`) to a
    /// thread, and writes the blocks coded by then.
    pub fn submit(
        &mut self,
        end: u64,
        out: &mut impl Write,
        totals: &mut [StreamTotal; STREAMS],
    ) -> Result<(), Error> {
        if self.table.len() > 0 {
            let mut table = self.spare.pop().unwrap_or_default();
            table.clear();
            std::mem::swap(&mut table, &mut self.table);
            let first = end - table.len() as u64;
            let (reply, rx) = sync_channel(1);
            let sent = self.jobs.as_ref().is_some_and(|j| {
                j.send(Job {
                    table,
                    first,
                    reply,
                })
                .is_ok()
            });
            if !sent {
                return Err(stopped());
            }
            self.pending.push_back(rx);
        }
        self.drain(self.threads, out, totals)
    }

    /// Writes coded blocks in order: those ready, and waits for more while
    /// over `keep` are pending.
    pub fn drain(
        &mut self,
        keep: usize,
        out: &mut impl Write,
        totals: &mut [StreamTotal; STREAMS],
    ) -> Result<(), Error> {
        while let Some(rx) = self.pending.front() {
            let coded = if self.pending.len() > keep {
                rx.recv().map_err(|_| stopped())?
            } else {
                match rx.try_recv() {
                    Ok(c) => c,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Err(stopped()),
                }
            };
            self.pending.pop_front();
            let coded = coded?;
            out.write_all(&coded.bytes)?;
            add_totals(totals, &coded.totals);
            if self.spare.len() < 2 {
                self.spare.push(coded.table);
            }
        }
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // The threads stop once the channel closes, each after at most the
        // table it has (replies never block: one slot each).
        self.jobs = None;
        for h in self.handles.drain(..) {
            // A thread that panicked has nothing more to say here.
            let _ = h.join();
        }
    }
}

#[cold]
fn stopped() -> Error {
    std::io::Error::other("a tpack encoding thread stopped").into()
}
