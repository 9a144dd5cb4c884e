//! Decoding on a second core: [`ReadAhead`] runs a [`Source`] on a worker
//! thread that copies its records into batches and hands them over, so
//! that decoding and whatever consumes the records (a script, an analysis)
//! run side by side. The stream is unchanged: the same records in the same
//! order, warnings where the source put them, and the source's error, or
//! its end, after every record before it. Memory: at most
//! [`ReadAhead::DEPTH`] + 2 batches of up to [`ReadAhead::BATCH`] records.
//!
//! Each record's slots and bytes are copied, so it suits sources that lend
//! a record its own bytes (description-driven binary records, text lines),
//! not ones that lend a whole block to every record.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError, channel, sync_channel};

use crate::stream::{Header, Item};
use crate::{Error, Position, Record, Schema, Slot, Source, Warning};

/// `source` decoded on a thread of its own ([`ReadAhead`]) when this
/// process may run on more than one core (its affinity mask, as
/// `std::thread::available_parallelism` reads it); else `source` itself:
/// on one core, decoding ahead only adds a copy per record and a thread's
/// switches to the same work.
pub fn on_a_spare_core(source: Box<dyn Source + Send>) -> Result<Box<dyn Source>, Error> {
    match std::thread::available_parallelism().map_or(1, |n| n.get()) {
        1 => Ok(source),
        _ => Ok(Box::new(ReadAhead::new(source)?)),
    }
}

/// One record of a batch: its type, where its slots and bytes are, and
/// the source's position after it (where the next record starts).
struct Entry {
    /// Record type index, or [`WARNING`] for the batch's next warning.
    ty: u32,
    slots: (u32, u32),
    bytes: (u32, u32),
    after: Position,
}

const WARNING: u32 = u32::MAX;

#[derive(Default)]
struct Batch {
    entries: Vec<Entry>,
    slots: Vec<Slot>,
    bytes: Vec<u8>,
    warnings: Vec<Warning>,
    /// How the source ended after this batch's records: `Some(Ok)` at its
    /// end, `Some(Err)` at an error; `None`: more batches follow.
    end: Option<Result<(), Error>>,
}

impl Batch {
    fn clear(&mut self) {
        self.entries.clear();
        self.slots.clear();
        self.bytes.clear();
        self.warnings.clear();
        self.end = None;
    }
}

/// A source decoded on its own thread (see the module's documentation).
pub struct ReadAhead {
    schema: Arc<Schema>,
    header: Header,
    full: Receiver<Batch>,
    empty: Sender<Batch>,
    cur: Batch,
    /// Next entry of `cur`, and the next warning.
    at: usize,
    warning: usize,
    position: Position,
    finished: bool,
}

impl ReadAhead {
    /// Records per batch (fewer when a batch's bytes reach 1 MiB).
    pub const BATCH: usize = 4096;
    /// Batches decoded ahead of the consumer.
    pub const DEPTH: usize = 4;

    /// Starts decoding `source` on a new thread (an error only when the
    /// system cannot start one).
    pub fn new<S: Source + Send + 'static>(source: S) -> Result<ReadAhead, Error> {
        let schema = source.schema().clone();
        let header = source.header().clone();
        let position = source.position();
        let (full_tx, full) = sync_channel(Self::DEPTH);
        let (empty, empty_rx) = channel();
        std::thread::Builder::new()
            .name("tramp-read-ahead".into())
            .spawn(move || decode(source, full_tx, empty_rx))?;
        Ok(ReadAhead {
            schema,
            header,
            full,
            empty,
            cur: Batch::default(),
            at: 0,
            warning: 0,
            position,
            finished: false,
        })
    }

    /// Moves to the next batch; false when the worker is gone without
    /// saying how the source ended (it panicked).
    #[cold]
    fn next_batch(&mut self) -> bool {
        let used = std::mem::take(&mut self.cur);
        let _ = self.empty.send(used);
        match self.full.recv() {
            Ok(b) => {
                self.cur = b;
                self.at = 0;
                self.warning = 0;
                true
            }
            Err(_) => false,
        }
    }
}

/// The worker: fills batches until the source ends or the consumer leaves.
fn decode<S: Source>(mut source: S, full: SyncSender<Batch>, empty: Receiver<Batch>) {
    loop {
        let mut b = match empty.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty) => Batch::default(),
            Err(TryRecvError::Disconnected) => return,
        };
        b.clear();
        while b.entries.len() < ReadAhead::BATCH && b.bytes.len() < 1 << 20 {
            match source.next_item() {
                Ok(Some(Item::Record(r))) => {
                    let (ty, slots, bytes) = r.parts();
                    let s0 = b.slots.len() as u32;
                    let b0 = b.bytes.len() as u32;
                    b.slots.extend_from_slice(slots);
                    b.bytes.extend_from_slice(bytes);
                    let ty = ty.index as u32;
                    b.entries.push(Entry {
                        ty,
                        slots: (s0, slots.len() as u32),
                        bytes: (b0, bytes.len() as u32),
                        after: position_of(&source),
                    });
                }
                Ok(Some(Item::Warning(w))) => {
                    b.warnings.push(w);
                    b.entries.push(Entry {
                        ty: WARNING,
                        slots: (0, 0),
                        bytes: (0, 0),
                        after: source.position(),
                    });
                }
                Ok(None) => {
                    b.end = Some(Ok(()));
                    break;
                }
                Err(e) => {
                    b.end = Some(Err(e));
                    break;
                }
            }
        }
        let last = b.end.is_some();
        if full.send(b).is_err() || last {
            return;
        }
    }
}

/// The source's position, copied field by field: the position comes back
/// through memory, and copying it whole read it back in a wide load that
/// store forwarding cannot serve (half of this thread's time on HATF).
#[inline(always)]
fn position_of<S: Source>(source: &S) -> Position {
    let p = source.position();
    Position {
        offset: std::hint::black_box(p.offset),
        record: std::hint::black_box(p.record),
        line: std::hint::black_box(p.line),
    }
}

impl Source for ReadAhead {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        // The common case: the next entry of this batch is a record.
        if let Some(e) = self.cur.entries.get(self.at)
            && e.ty != WARNING
        {
            self.at += 1;
            self.position = e.after;
            let e = &self.cur.entries[self.at - 1];
            return Ok(Some(self.lend(e)));
        }
        loop {
            match self.next_item()? {
                None => return Ok(None),
                Some(Item::Warning(_)) => continue,
                Some(Item::Record(_)) => break,
            }
        }
        // The record just taken, lent again (the borrow checker cannot see
        // that the loop above ended on it).
        let e = &self.cur.entries[self.at - 1];
        Ok(Some(self.lend(e)))
    }

    #[inline]
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        while self.at == self.cur.entries.len() {
            if self.finished {
                return Ok(None);
            }
            if let Some(end) = self.cur.end.take() {
                self.finished = true;
                end?;
                return Ok(None);
            }
            if !self.next_batch() {
                self.finished = true;
                return Err(Error::Usage(
                    "the thread decoding the input stopped (it panicked)".into(),
                ));
            }
        }
        let e = &self.cur.entries[self.at];
        self.at += 1;
        self.position = e.after;
        if e.ty == WARNING {
            let w = self.cur.warnings[self.warning].clone();
            self.warning += 1;
            return Ok(Some(Item::Warning(w)));
        }
        Ok(Some(Item::Record(self.lend(e))))
    }

    /// The batch's records are handed out where they lie: the default's
    /// pull returned each through memory, and the caller read it back in
    /// wide loads that store forwarding cannot serve (half of the
    /// consumer's time on plain HATF).
    fn each_item(&mut self, f: &mut dyn FnMut(&Item<'_>) -> ControlFlow<()>) -> Result<(), Error> {
        loop {
            let (mut at, mut warning) = (self.at, self.warning);
            let mut stopped = false;
            let cur = &self.cur;
            while let Some(e) = cur.entries.get(at) {
                at += 1;
                let flow = if e.ty == WARNING {
                    warning += 1;
                    f(&Item::Warning(cur.warnings[warning - 1].clone()))
                } else {
                    f(&Item::Record(lend(&self.schema, cur, e)))
                };
                if flow.is_break() {
                    stopped = true;
                    break;
                }
            }
            if at > self.at {
                self.position = self.cur.entries[at - 1].after;
            }
            (self.at, self.warning) = (at, warning);
            if stopped {
                return Ok(());
            }
            // The batch is used up: the next one (or the end) as a pull.
            match self.next_item()? {
                None => return Ok(()),
                Some(item) => {
                    if f(&item).is_break() {
                        return Ok(());
                    }
                }
            }
        }
    }

    fn position(&self) -> Position {
        self.position
    }

    fn header(&self) -> &Header {
        &self.header
    }
}

/// Entry `e` of `batch` as a record of `schema`.
#[inline(always)]
fn lend<'a>(schema: &'a Schema, batch: &'a Batch, e: &Entry) -> Record<'a> {
    let (s, sn) = (e.slots.0 as usize, e.slots.1 as usize);
    let (b, bn) = (e.bytes.0 as usize, e.bytes.1 as usize);
    Record::new(
        &schema.types[e.ty as usize],
        &batch.slots[s..s + sn],
        &batch.bytes[b..b + bn],
    )
}

impl ReadAhead {
    #[inline]
    fn lend<'a>(&'a self, e: &Entry) -> Record<'a> {
        lend(&self.schema, &self.cur, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{FieldDef, FieldType, RecordKind};
    use crate::{RecordBuf, Value};
    use proptest::prelude::*;

    /// What a scripted source yields at each step.
    #[derive(Clone, Debug)]
    enum Step {
        Record(u64, String, Vec<i64>),
        Warning(u64),
    }

    /// A source that plays `steps`, then ends or fails.
    struct Scripted {
        schema: Arc<Schema>,
        steps: Vec<Step>,
        at: usize,
        fail: bool,
        buf: RecordBuf,
    }

    fn schema() -> Arc<Schema> {
        let mut s = Schema::new("scripted");
        s.add_type(
            "a",
            RecordKind::Other,
            vec![FieldDef::new("n", FieldType::U64, None)],
        );
        s.add_type(
            "b",
            RecordKind::Other,
            vec![
                FieldDef::new("name", FieldType::Str, None),
                FieldDef::new("list", FieldType::List(Box::new(FieldType::I64)), None),
            ],
        );
        s.shared()
    }

    impl Source for Scripted {
        fn schema(&self) -> &Arc<Schema> {
            &self.schema
        }
        fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
            // Past the warnings, the next item is a record or the end.
            while let Some(Step::Warning(_)) = self.steps.get(self.at) {
                self.at += 1;
            }
            Ok(match self.next_item()? {
                Some(Item::Record(r)) => Some(r),
                _ => None,
            })
        }
        fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
            let Some(step) = self.steps.get(self.at).cloned() else {
                if self.fail {
                    return Err(Error::decode(
                        "scripted",
                        self.position(),
                        "damaged".to_string(),
                    ));
                }
                return Ok(None);
            };
            self.at += 1;
            Ok(Some(match step {
                Step::Warning(skipped) => Item::Warning(Warning {
                    format: "scripted",
                    offset: self.at as u64,
                    message: "skipped".into(),
                    skipped,
                }),
                Step::Record(n, name, list) => {
                    let s = &self.schema;
                    if name.is_empty() {
                        self.buf.reset(&s.types[0]);
                        self.buf.set_u64(0, n);
                    } else {
                        self.buf.reset(&s.types[1]);
                        self.buf.set_str(0, &name);
                        let l = self.buf.push_list(list.iter().map(|&v| Value::I64(v)));
                        self.buf.set_slot(1, l);
                    }
                    Item::Record(self.buf.as_record(&s.types[self.buf.type_index()]))
                }
            }))
        }
        fn position(&self) -> Position {
            Position::new(self.at as u64 * 10, self.at as u64)
        }
    }

    /// Everything a consumer can see of a stream, as text.
    fn observe(src: &mut dyn Source) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match src.next_item() {
                Ok(None) => break,
                Ok(Some(Item::Warning(w))) => out.push(format!("warning {w}")),
                Ok(Some(Item::Record(r))) => {
                    let fields: Vec<String> = r.fields().map(|f| format!("{f:?}")).collect();
                    out.push(format!("{} {fields:?}", r.record_type().name));
                }
                Err(e) => {
                    out.push(format!("error {e}"));
                    break;
                }
            }
            out.push(format!("at {}", src.position()));
        }
        out.push(format!("end at {}", src.position()));
        out
    }

    fn scripted(steps: &[Step], fail: bool) -> Scripted {
        Scripted {
            schema: schema(),
            steps: steps.to_vec(),
            at: 0,
            fail,
            buf: RecordBuf::new(),
        }
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (any::<u64>(), "[a-z]{0,12}", proptest::collection::vec(any::<i64>(), 0..4))
                .prop_map(|(n, s, l)| Step::Record(n, s, l)),
            1 => (0u64..100).prop_map(Step::Warning),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The same records, warnings, positions and end, across several
        /// batches.
        #[test]
        fn read_ahead_yields_what_the_source_yields(
            steps in proptest::collection::vec(step(), 0..3 * ReadAhead::BATCH),
            fail in any::<bool>(),
        ) {
            let make = || scripted(&steps, fail);
            let want = observe(&mut make());
            let got = observe(&mut ReadAhead::new(make()).unwrap());
            prop_assert_eq!(got, want);
        }
    }

    /// What a consumer pushed to sees: the items, then the position, as
    /// text; after `stop` items it breaks off and pulls the rest.
    fn observe_pushed(src: &mut dyn Source, stop: usize) -> Vec<String> {
        let mut out = Vec::new();
        src.each_item(&mut |item| {
            out.push(match item {
                Item::Warning(w) => format!("warning {w}"),
                Item::Record(r) => {
                    let fields: Vec<String> = r.fields().map(|f| format!("{f:?}")).collect();
                    format!("{} {fields:?}", r.record_type().name)
                }
            });
            if out.len() == stop {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .map_err(|e| out.push(format!("error {e}")))
        .ok();
        out.push(format!("broke at {}", src.position()));
        // After an error a source is finished (what it yields then is
        // not part of the contract).
        if !out.iter().any(|l| l.starts_with("error")) {
            out.extend(observe(src));
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Pushed (the driver's way), the read-ahead hands out the records
        /// and warnings the source pushes, and stands where it does when
        /// the consumer breaks off.
        #[test]
        fn read_ahead_pushed_yields_what_the_source_pushes(
            steps in proptest::collection::vec(step(), 0..3 * ReadAhead::BATCH),
            fail in any::<bool>(),
            stop in 1usize..3 * ReadAhead::BATCH,
        ) {
            let make = || scripted(&steps, fail);
            let want = observe_pushed(&mut make(), stop);
            let got = observe_pushed(&mut ReadAhead::new(make()).unwrap(), stop);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn next_record_skips_warnings_and_a_consumer_may_stop_early() {
        let steps: Vec<Step> = (0..10_000)
            .map(|i| {
                if i % 7 == 0 {
                    Step::Warning(1)
                } else {
                    Step::Record(i, String::new(), vec![])
                }
            })
            .collect();
        let mut r = ReadAhead::new(scripted(&steps, false)).unwrap();
        let mut seen = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            seen.push(rec.get(0).and_then(|v| v.as_u64()).unwrap());
            if seen.len() == 5000 {
                break;
            }
        }
        let want: Vec<u64> = (0..10_000).filter(|i| i % 7 != 0).take(5000).collect();
        assert_eq!(seen, want);
        drop(r); // the worker, blocked on a full channel, ends
    }
}
