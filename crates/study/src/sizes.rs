//! The size tables of the HATF paper on any heap trace, measured in one
//! streaming pass: every form is encoded as the records arrive, into
//! counters behind real compressors (gzip, the paper's; zstd and xz,
//! ours), so memory stays bounded whatever the trace's length. Each batch
//! of records is fed to every encoder, the encoders spread over threads
//! longest first (by the time each took on the batch before), so no thread
//! waits long for another at the batch's end.
//!
//! * Table 4: bytes per data record of Simple Binary, ASCII, HATF naive,
//!   HATF best, Split Stream, HATF SplitAddr and tpack, on the paper's
//!   content ([`crate::content`]).
//! * Table 7: the size policies; Table 8: the address policies (HATF, on
//!   the paper's content).
//! * Full content: HATF naive, HATF best and tpack on every record (times,
//!   threads, heaps, sites and comments kept).

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;
use tramp_core::{Analysis, Error, Record};
use tramp_hatf::records::record_to_item;
use tramp_hatf::splitaddr::Splitter;
use tramp_hatf::{Event, Item, OwnedItem, Policy};
use tramp_tpack::Codec;

use crate::ascii::write_line;
use crate::content::paper_event;
use crate::simple::SimpleWriter;
use crate::split::SplitWriter;

/// A compressor the tables report beside the uncompressed size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compressor {
    /// gzip at its default level 6 (the paper's compressor).
    Gzip,
    /// zstd at its default level 3.
    Zstd,
    /// xz at its default preset 6.
    Xz,
}

impl Compressor {
    pub fn parse_list(s: &str) -> Result<Vec<Compressor>, String> {
        s.split(',')
            .map(|c| match c.trim() {
                "gzip" => Ok(Compressor::Gzip),
                "zstd" => Ok(Compressor::Zstd),
                "xz" => Ok(Compressor::Xz),
                o => Err(format!("unknown compressor `{o}` (gzip, zstd, xz)")),
            })
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Compressor::Gzip => "gzip",
            Compressor::Zstd => "zstd",
            Compressor::Xz => "xz",
        }
    }

    /// tpack's own codec for this compressor (tpack compresses its streams
    /// itself, block by block).
    fn tpack_codec(self) -> Codec {
        match self {
            Compressor::Gzip => Codec::Gzip(6),
            Compressor::Zstd => Codec::Zstd(3),
            Compressor::Xz => Codec::Xz(6),
        }
    }
}

/// Counts bytes written.
#[derive(Default)]
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Comp {
    Gzip(Box<flate2::write::GzEncoder<Counter>>),
    Zstd(Box<zstd::stream::write::Encoder<'static, Counter>>),
    Xz(Box<liblzma::write::XzEncoder<Counter>>),
}

/// Bytes written, and what each compressor makes of them.
struct Meter {
    raw: u64,
    comps: Vec<Comp>,
    buf: Vec<u8>,
}

impl Meter {
    fn new(compressors: &[Compressor]) -> Meter {
        let comps = compressors
            .iter()
            .map(|c| match c {
                Compressor::Gzip => Comp::Gzip(Box::new(flate2::write::GzEncoder::new(
                    Counter::default(),
                    flate2::Compression::new(6),
                ))),
                Compressor::Zstd => Comp::Zstd(Box::new(
                    zstd::stream::write::Encoder::new(Counter::default(), 3).expect("zstd level 3"),
                )),
                Compressor::Xz => Comp::Xz(Box::new(liblzma::write::XzEncoder::new(
                    Counter::default(),
                    6,
                ))),
            })
            .collect();
        Meter {
            raw: 0,
            comps,
            buf: Vec::with_capacity(1 << 16),
        }
    }

    fn spill(&mut self) -> io::Result<()> {
        for c in &mut self.comps {
            match c {
                Comp::Gzip(e) => e.write_all(&self.buf)?,
                Comp::Zstd(e) => e.write_all(&self.buf)?,
                Comp::Xz(e) => e.write_all(&self.buf)?,
            }
        }
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> io::Result<Sizes> {
        self.spill()?;
        let compressed = self
            .comps
            .into_iter()
            .map(|c| {
                Ok(match c {
                    Comp::Gzip(e) => e.finish()?.0,
                    Comp::Zstd(e) => e.finish()?.0,
                    Comp::Xz(e) => e.finish()?.0,
                })
            })
            .collect::<io::Result<Vec<u64>>>()?;
        Ok(Sizes {
            raw: self.raw,
            compressed,
        })
    }
}

impl Write for Meter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.raw += b.len() as u64;
        self.buf.extend_from_slice(b);
        if self.buf.len() >= 1 << 16 {
            self.spill()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes of one encoding: uncompressed, and per compressor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Sizes {
    raw: u64,
    compressed: Vec<u64>,
}

impl Sizes {
    fn add(mut self, o: Sizes) -> Sizes {
        self.raw += o.raw;
        if self.compressed.is_empty() {
            self.compressed = o.compressed;
        } else {
            for (a, b) in self.compressed.iter_mut().zip(o.compressed) {
                *a += b;
            }
        }
        self
    }
}

/// Writes the same bytes to two writers.
struct Tee<A: Write, B: Write>(A, B);

impl<A: Write, B: Write> Write for Tee<A, B> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.write_all(b)?;
        self.1.write_all(b)?;
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()?;
        self.1.flush()
    }
}

/// Which table a row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    /// Table 4: the forms.
    Forms,
    /// Table 7: size policies.
    SizePolicies,
    /// Table 8: address policies.
    AddressPolicies,
    /// HATF and tpack on every record.
    FullContent,
}

/// One encoding's measured size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub table: Table,
    pub name: String,
    /// Bytes uncompressed (a form's header and every stream counted).
    pub bytes: u64,
    /// Bytes per compressor, in the report's compressor order.
    pub compressed: Vec<u64>,
    /// Bytes per data record, uncompressed.
    pub per_record: f64,
    /// Bytes per data record, per compressor.
    pub compressed_per_record: Vec<f64>,
}

/// One measured encoding: its table, name and sizes.
type Measured = (Table, String, Sizes);

/// An encoder fed every batch of records.
enum Job {
    Simple(SimpleWriter<Meter>),
    Ascii(Meter),
    /// HATF under a policy; `full` keeps every record, else the paper's content.
    Hatf {
        table: Table,
        name: String,
        full: bool,
        w: Box<tramp_hatf::Writer<Meter>>,
    },
    /// HATF best, measured itself and split into SplitAddr's two streams.
    Best {
        w: Box<tramp_hatf::Writer<Tee<Meter, Splitter<Meter, Meter>>>>,
    },
    Split(SplitWriter<Meter>),
    /// tpack: one model, written raw and sized under each compressor.
    Tpack {
        table: Table,
        full: bool,
        w: Box<tramp_tpack::Writer<Counter>>,
    },
}

impl Job {
    /// The format an I/O error of this job's encoder is reported under.
    fn format(&self) -> &'static str {
        match self {
            Job::Simple(_) => "simple binary",
            Job::Ascii(_) => "ascii",
            Job::Split(_) => "split stream",
            Job::Hatf { .. } | Job::Best { .. } => "hatf",
            Job::Tpack { .. } => "tpack",
        }
    }

    /// Encodes a batch; a failure comes with the study's number of the
    /// record (every record but HATF metadata counts), and an encoder's
    /// refusal names it.
    fn feed(&mut self, batch: &Batch) -> Result<(), (u64, Error)> {
        let mut record = batch.first;
        for it in &batch.items {
            if matches!(it.as_item(), Item::Meta(_)) {
                continue;
            }
            self.feed_one(it).map_err(|e| match e {
                Error::Io(io) => (record, Error::encode(self.format(), record, io)),
                e => (record, e),
            })?;
            record += 1;
        }
        Ok(())
    }

    fn feed_one(&mut self, it: &OwnedItem) -> Result<(), Error> {
        let item = it.as_item();
        let paper = paper_event(&item);
        match self {
            Job::Simple(w) => {
                if let Some(e) = paper {
                    w.write(&e)?
                }
            }
            Job::Ascii(m) => {
                if let Some(e) = paper {
                    write_line(m, &e)?
                }
            }
            Job::Hatf { full: true, w, .. } => w.write_item(&item)?,
            Job::Hatf { w, .. } => {
                if let Some(e) = paper {
                    w.write_event(&e)?
                }
            }
            Job::Best { w } => {
                if let Some(e) = paper {
                    w.write_event(&e)?
                }
            }
            Job::Split(w) => {
                if let Some(e) = paper {
                    w.write(&e)?
                }
            }
            Job::Tpack { full, w, .. } => {
                let item = if *full {
                    Some(item)
                } else {
                    paper.map(Item::Event)
                };
                if let Some(i) = item {
                    w.write_item(&i)?;
                }
            }
        }
        Ok(())
    }

    /// The rows this job measured: (table, name, sizes).
    fn finish(self) -> Result<Vec<Measured>, Error> {
        Ok(match self {
            Job::Simple(w) => vec![(
                Table::Forms,
                "Simple Binary".into(),
                w.into_inner()?.finish()?,
            )],
            Job::Ascii(m) => vec![(Table::Forms, "ASCII".into(), m.finish()?)],
            Job::Hatf { table, name, w, .. } => {
                vec![(table, name, w.into_inner()?.finish()?)]
            }
            Job::Best { w } => {
                let Tee(best, splitter) = w.into_inner()?;
                let best = best.finish()?;
                let (main, addrs) = splitter.finish()?;
                let split = main.finish()?.add(addrs.finish()?);
                vec![
                    (Table::Forms, "HATF (best)".into(), best.clone()),
                    (Table::Forms, "HATF SplitAddr".into(), split),
                    (Table::AddressPolicies, "HATF (best)".into(), best),
                ]
            }
            Job::Split(w) => {
                let mut total = Sizes::default();
                for m in w.into_inner() {
                    total = total.add(m.finish()?);
                }
                vec![(Table::Forms, "Split Stream".into(), total)]
            }
            Job::Tpack { table, w, .. } => {
                let (raw, compressed) = w.sizes()?;
                vec![(
                    table,
                    "tpack".into(),
                    Sizes {
                        raw: raw.0,
                        compressed,
                    },
                )]
            }
        })
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    pub compressors: Vec<Compressor>,
    /// The Simple Binary / Split Stream word: 8 for 64-bit traces, 4 for
    /// the paper's 32-bit form (a value over 32 bits is then an error).
    pub word: usize,
    /// Worker threads.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            compressors: vec![Compressor::Gzip, Compressor::Zstd],
            word: 8,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get().min(4)),
        }
    }
}

/// The size tables of one trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizesReport {
    /// Records of the paper's content (alloc, free, realloc).
    pub data_records: u64,
    /// Every record but HATF metadata (events and comments), for the
    /// full-content rows.
    pub all_records: u64,
    /// The Simple Binary word in bytes.
    pub word: usize,
    pub compressors: Vec<Compressor>,
    pub rows: Vec<Row>,
    /// Tables 5 and 6, when timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<crate::timing::TimingReport>,
    /// Why the measurement failed, if it did (the tables are then empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

fn jobs(o: &Options) -> Result<Vec<Job>, Error> {
    let c = &o.compressors;
    let hatf = |table, name: &str, policy, full| Job::Hatf {
        table,
        name: name.into(),
        full,
        w: Box::new(tramp_hatf::Writer::new(Meter::new(c), policy)),
    };
    let tpack = |table, full| -> Result<Job, Error> {
        let codecs: Vec<Codec> = c.iter().map(|comp| comp.tpack_codec()).collect();
        let w = tramp_tpack::Writer::sizing(
            Counter::default(),
            tramp_tpack::Options {
                codec: Codec::Raw,
                ..Default::default()
            },
            &codecs,
        )?;
        Ok(Job::Tpack {
            table,
            full,
            w: Box::new(w),
        })
    };
    Ok(vec![
        Job::Best {
            w: Box::new(tramp_hatf::Writer::new(
                Tee(Meter::new(c), Splitter::new(Meter::new(c), Meter::new(c))),
                Policy::Best,
            )),
        },
        hatf(Table::FullContent, "HATF (best)", Policy::Best, true),
        Job::Simple(SimpleWriter::new(Meter::new(c), o.word)?),
        Job::Ascii(Meter::new(c)),
        hatf(Table::Forms, "HATF (naive)", Policy::Naive, false),
        Job::Split(SplitWriter::new(
            [Meter::new(c), Meter::new(c), Meter::new(c), Meter::new(c)],
            o.word,
        )),
        tpack(Table::Forms, false)?,
        hatf(Table::SizePolicies, "Small Size", Policy::SmallSize, false),
        hatf(Table::SizePolicies, "Same Size", Policy::SameSize, false),
        hatf(
            Table::SizePolicies,
            "Combined Size",
            Policy::CombinedSize,
            false,
        ),
        hatf(
            Table::AddressPolicies,
            "BaseOffset 1-byte",
            Policy::BaseOffset1,
            false,
        ),
        hatf(
            Table::AddressPolicies,
            "BaseOffset 2-bytes",
            Policy::BaseOffset2,
            false,
        ),
        hatf(
            Table::AddressPolicies,
            "Best BaseOffset",
            Policy::BestBaseOffset,
            false,
        ),
        hatf(Table::AddressPolicies, "Stride", Policy::Stride, false),
        hatf(Table::FullContent, "HATF (naive)", Policy::Naive, true),
        tpack(Table::FullContent, true)?,
    ])
}

/// Rows in the order the tables print them.
const ORDER: &[(Table, &str)] = &[
    (Table::Forms, "Simple Binary"),
    (Table::Forms, "ASCII"),
    (Table::Forms, "HATF (naive)"),
    (Table::Forms, "HATF (best)"),
    (Table::Forms, "Split Stream"),
    (Table::Forms, "HATF SplitAddr"),
    (Table::Forms, "tpack"),
    (Table::SizePolicies, "Naive"),
    (Table::SizePolicies, "Small Size"),
    (Table::SizePolicies, "Same Size"),
    (Table::SizePolicies, "Combined Size"),
    (Table::AddressPolicies, "Naive"),
    (Table::AddressPolicies, "BaseOffset 1-byte"),
    (Table::AddressPolicies, "BaseOffset 2-bytes"),
    (Table::AddressPolicies, "Best BaseOffset"),
    (Table::AddressPolicies, "Stride"),
    (Table::AddressPolicies, "HATF (best)"),
    (Table::FullContent, "HATF (naive)"),
    (Table::FullContent, "HATF (best)"),
    (Table::FullContent, "tpack"),
];

/// Records handed to the encoders together.
struct Batch {
    /// The study's number of the first record that is not HATF metadata.
    first: u64,
    items: Vec<OwnedItem>,
}

/// Records per batch handed to the workers.
const BATCH: usize = 1 << 14;

/// An encoder with its place in the study's order and the time it took
/// on the last batch.
struct Timed {
    id: usize,
    job: Job,
    last: Duration,
}

/// Feeds `batch` to every job on `threads` threads: each thread takes the
/// next job not yet fed, longest first (the time each took on the batch
/// before), which leaves little for one thread to finish alone. If jobs
/// fail, the error reported is the one of the earliest record, then of the
/// first job in the study's order: the same whatever the threads did.
fn feed_all(jobs: &mut [Timed], batch: &Batch, threads: usize) -> Result<(), Error> {
    jobs.sort_by_key(|t| std::cmp::Reverse(t.last));
    let next = Mutex::new(jobs.iter_mut());
    let failed = Mutex::new(Vec::new());
    let work = || -> Result<(), Error> {
        loop {
            let Some(t) = next.lock().map_err(|_| poisoned())?.next() else {
                return Ok(());
            };
            let start = Instant::now();
            if let Err((record, e)) = t.job.feed(batch) {
                failed
                    .lock()
                    .map_err(|_| poisoned())?
                    .push((record, t.id, e));
            }
            t.last = start.elapsed();
        }
    };
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .name("tramp-sizes".into())
                    .spawn_scoped(s, work)
            })
            .collect::<Result<_, _>>()?;
        let mine = work();
        helpers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(poisoned())))
            .fold(mine, Result::and)
    })?;
    let failed = failed.into_inner().map_err(|_| poisoned())?;
    match failed
        .into_iter()
        .min_by_key(|(record, id, _)| (*record, *id))
    {
        Some((_, _, e)) => Err(e),
        None => Ok(()),
    }
}

fn poisoned() -> Error {
    Error::Usage("a sizes thread panicked".into())
}

/// Feeds every batch to every job, then collects their rows. A failure
/// ends it at once: the queue closes, so the reading side stops at its
/// next batch and reports the failure.
fn worker(jobs: Vec<Job>, rx: Receiver<Batch>, threads: usize) -> Result<Vec<Measured>, Error> {
    let mut jobs: Vec<Timed> = jobs
        .into_iter()
        .enumerate()
        .map(|(id, job)| Timed {
            id,
            job,
            last: Duration::ZERO,
        })
        .collect();
    for batch in rx {
        feed_all(&mut jobs, &batch, threads)?;
    }
    let mut rows = Vec::new();
    for t in jobs {
        rows.extend(t.job.finish()?);
    }
    Ok(rows)
}

/// The study as an [`Analysis`]: every record is mapped to HATF's items,
/// batched, and handed to the worker threads; the first data records are
/// also kept for the timing tables.
pub struct SizesAnalysis {
    opts: Options,
    /// The feeding thread's queue (`None` once closed).
    tx: Option<SyncSender<Batch>>,
    handle: Option<JoinHandle<Result<Vec<Measured>, Error>>>,
    batch: Vec<OwnedItem>,
    /// The study's number of the batch's first record.
    batch_first: u64,
    /// Why the feeding thread stopped early, once it has.
    stopped: Option<String>,
    data_records: u64,
    all_records: u64,
    /// Data records to time (Tables 5 and 6); 0: no timing.
    timing_records: usize,
    timed: Vec<Event<'static>>,
}

impl SizesAnalysis {
    /// Starts the workers. `timing_records`: how many data records to time
    /// for Tables 5 and 6 (0: none).
    pub fn new(opts: Options, timing_records: usize) -> Result<SizesAnalysis, Error> {
        let all = jobs(&opts)?;
        let threads = opts.threads.max(1);
        let (tx, rx) = sync_channel::<Batch>(2);
        let handle = std::thread::Builder::new()
            .name("tramp-sizes".into())
            .spawn(move || worker(all, rx, threads))?;
        Ok(SizesAnalysis {
            opts,
            tx: Some(tx),
            handle: Some(handle),
            batch: Vec::with_capacity(BATCH),
            batch_first: 0,
            stopped: None,
            data_records: 0,
            all_records: 0,
            timing_records,
            timed: Vec::new(),
        })
    }

    /// Hands the batch to the feeding thread; if it stopped, it failed,
    /// and its error is returned.
    fn send(&mut self) -> Result<(), Error> {
        let items = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let batch = Batch {
            first: self.batch_first,
            items,
        };
        self.batch_first = self.all_records;
        if let Some(why) = &self.stopped {
            return Err(Error::Usage(why.clone()));
        }
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if !sent {
            let e = self
                .join()
                .err()
                .unwrap_or_else(|| Error::Usage("the sizes thread stopped".into()));
            // Kept for the report the driver asks for after the error.
            self.stopped = Some(e.to_string());
            return Err(e);
        }
        Ok(())
    }

    fn join(&mut self) -> Result<Vec<Measured>, Error> {
        self.tx = None;
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(poisoned()),
            None => Err(Error::Usage("the sizes thread was already joined".into())),
        }
    }

    /// Takes one HATF item.
    pub fn push(&mut self, item: OwnedItem) -> Result<(), Error> {
        let it = item.as_item();
        if !matches!(it, Item::Meta(_)) {
            self.all_records += 1;
            if let Some(e) = paper_event(&it) {
                self.data_records += 1;
                if self.timed.len() < self.timing_records {
                    self.timed.push(e);
                }
            }
        }
        self.batch.push(item);
        if self.batch.len() >= BATCH {
            self.send()?;
        }
        Ok(())
    }

    /// Ends the run: the last batch, the workers' rows, the timing tables.
    pub fn report(mut self) -> Result<SizesReport, Error> {
        self.send()?;
        let rows = self.join()?;
        let per = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        let mut out = Vec::new();
        for (table, name) in ORDER {
            // Table 7's and 8's naive row is Table 4's HATF (naive).
            let (t, n) = match (table, *name) {
                (Table::SizePolicies | Table::AddressPolicies, "Naive") => {
                    (Table::Forms, "HATF (naive)")
                }
                _ => (*table, *name),
            };
            if let Some((_, _, sz)) = rows.iter().find(|(rt, rn, _)| *rt == t && rn == n) {
                let d = if *table == Table::FullContent {
                    self.all_records
                } else {
                    self.data_records
                };
                out.push(Row {
                    table: *table,
                    name: name.to_string(),
                    bytes: sz.raw,
                    compressed: sz.compressed.clone(),
                    per_record: per(sz.raw, d),
                    compressed_per_record: sz.compressed.iter().map(|c| per(*c, d)).collect(),
                });
            }
        }
        let timing = if self.timing_records > 0 {
            Some(crate::timing::measure(&self.timed)?)
        } else {
            None
        };
        Ok(SizesReport {
            data_records: self.data_records,
            all_records: self.all_records,
            word: self.opts.word,
            compressors: self.opts.compressors.clone(),
            rows: out,
            timing,
            failed: None,
        })
    }
}

impl Analysis for SizesAnalysis {
    type Report = SizesReport;

    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        match record_to_item(rec) {
            Ok(Some(item)) => self.push(item.to_owned()),
            Ok(None) => Ok(()),
            Err(e) => Err(Error::encode("hatf", self.all_records, e)),
        }
    }

    fn finish(self) -> SizesReport {
        let opts = self.opts.clone();
        let (d, a) = (self.data_records, self.all_records);
        self.report().unwrap_or_else(|e| SizesReport {
            data_records: d,
            all_records: a,
            word: opts.word,
            compressors: opts.compressors,
            rows: Vec::new(),
            timing: None,
            failed: Some(e.to_string()),
        })
    }
}

/// Measures every form and policy on HATF items (for tests and callers
/// without a source).
pub fn measure(
    items: impl IntoIterator<Item = OwnedItem>,
    o: &Options,
    timing_records: usize,
) -> Result<SizesReport, Error> {
    let mut a = SizesAnalysis::new(o.clone(), timing_records)?;
    for i in items {
        a.push(i)?;
    }
    a.report()
}

impl SizesReport {
    fn table(&self, f: &mut fmt::Formatter<'_>, t: Table, title: &str) -> fmt::Result {
        writeln!(f, "{title}")?;
        write!(f, "  {:<22} {:>10}", "", "bytes/rec")?;
        for c in &self.compressors {
            write!(f, " {:>9}", c.name())?;
        }
        writeln!(f, " {:>14}", "bytes")?;
        for r in self.rows.iter().filter(|r| r.table == t) {
            write!(f, "  {:<22} {:>10.3}", r.name, r.per_record)?;
            for c in &r.compressed_per_record {
                write!(f, " {c:>9.3}")?;
            }
            writeln!(f, " {:>14}", r.bytes)?;
        }
        writeln!(f)
    }
}

impl fmt::Display for SizesReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = &self.failed {
            return writeln!(f, "sizes failed: {e}");
        }
        writeln!(
            f,
            "{} data records (alloc, free, realloc: the paper's content); {} records in all",
            self.data_records, self.all_records
        )?;
        writeln!(
            f,
            "Simple Binary: four {}-byte words per record; Split Stream: a 1-byte type and three {}-byte fields",
            self.word, self.word
        )?;
        writeln!(
            f,
            "compressed columns: each stream compressed on its own (gzip -6, zstd -3, xz -6; tpack compresses its streams itself)\n"
        )?;
        self.table(
            f,
            Table::Forms,
            "Table 4: bytes per data record, uncompressed and compressed",
        )?;
        self.table(f, Table::SizePolicies, "Table 7: HATF size policies")?;
        self.table(f, Table::AddressPolicies, "Table 8: HATF address policies")?;
        self.table(
            f,
            Table::FullContent,
            "Every record (times, threads, heaps, sites, comments), bytes per record",
        )?;
        if let Some(t) = &self.timing {
            write!(f, "{t}")?;
        }
        Ok(())
    }
}
