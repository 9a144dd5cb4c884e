//! tramp-replay: drives the process's allocator (glibc's, or whatever is
//! preloaded: jemalloc, mimalloc, ...) through a replay plan made by
//! `tramp replay` from a trace (docs/formats/replay-plan.md), each traced
//! thread on a thread of its own, and reports time per operation, waits,
//! and memory over time as one JSON object on stdout.
//!
//! The plan is read from stdin, which must be a regular file (the header
//! and trailer are read by offset). The main thread decodes it and hands
//! each thread's operations over in batches through bounded queues, in
//! plan order; see `slots` for how order across threads is kept. With
//! `--serial` every operation runs on one replay thread in plan order.
//!
//! This binary sits in the capture crate because calling the C allocator is
//! `unsafe`, and the project keeps all `unsafe` code in this crate. It has
//! no dependencies, so that `tramp`'s build compiles it with plain rustc.

mod alloc;
#[path = "../../../../heap/src/replay/plan_format.rs"]
#[allow(dead_code)]
mod plan_format;
mod report;
mod sampler;
mod slots;
mod worker;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::FromRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use plan_format::{DecodeError, Header, Op};
use worker::{Batch, Item, Progress, Shared};

#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: rdtsc exists on every x86_64 CPU and has no preconditions.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

/// Operations per batch, and batches per replay thread (one being filled,
/// the rest queued or being executed).
const BATCH: usize = 4096;
const DEPTH: usize = 4;
const NONE: u32 = u32::MAX;

fn fail(msg: String) -> ! {
    eprintln!("tramp-replay: {msg}");
    std::process::exit(2);
}

/// Options from the command line.
struct Options {
    serial: bool,
    touch: bool,
    wait_limit_s: f64,
    sample_ms: u64,
}

fn options() -> Options {
    let mut o = Options {
        serial: false,
        touch: true,
        wait_limit_s: 60.0,
        sample_ms: 10,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--serial" => o.serial = true,
            "--no-touch" => o.touch = false,
            "--wait-limit" => {
                o.wait_limit_s = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| fail("--wait-limit needs seconds".into()))
            }
            "--sample-ms" => {
                o.sample_ms = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| fail("--sample-ms needs milliseconds".into()))
            }
            _ => fail(format!("unknown argument {a}")),
        }
    }
    o
}

/// A replay thread as the decoder sees it.
struct Lane {
    tx: Option<SyncSender<Batch>>,
    pool: Receiver<Batch>,
    cur: Batch,
    /// Items still to hand over (from the trailer).
    remaining: u64,
    handle: Option<JoinHandle<worker::Report>>,
}

/// The decoder: plan order in, batches out.
struct Decoder {
    shared: Arc<Shared>,
    lanes: Vec<Option<Lane>>,
    /// Items per plan thread (the trailer), and trace thread ids.
    items: Vec<u64>,
    /// Per slot: operations handed over so far, the lane of the last one,
    /// and the requested size it left (for live bytes in plan order).
    seq: Vec<u32>,
    last: Vec<u32>,
    size: Vec<u64>,
    /// Per plan heap: operations in it handed over so far.
    heap_ops: Vec<u64>,
    live: u64,
    peak_live: u64,
    serial: bool,
    heaps: usize,
    progress: Arc<Mutex<Vec<Arc<Progress>>>>,
    /// Per plan thread: items handed over, by kind.
    dispatched: Vec<[u64; 8]>,
    blocked: u64,
}

impl Decoder {
    fn lane(&mut self, t: u32) -> &mut Lane {
        let i = if self.serial { 0 } else { t as usize };
        if self.lanes[i].is_none() {
            let (tx, rx) = sync_channel::<Batch>(DEPTH);
            let (back, pool) = sync_channel::<Batch>(DEPTH);
            for _ in 1..DEPTH {
                back.send(Vec::with_capacity(BATCH)).expect("own channel");
            }
            let progress = Arc::new(Progress::default());
            self.progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(progress.clone());
            let sh = self.shared.clone();
            let heaps = self.heaps;
            let handle = std::thread::Builder::new()
                .name(format!("replay-{i}"))
                .spawn(move || worker::run(sh, rx, back, progress, heaps))
                .unwrap_or_else(|e| fail(format!("starting replay thread {i}: {e}")));
            let remaining = if self.serial {
                self.items.iter().sum()
            } else {
                self.items[i]
            };
            self.lanes[i] = Some(Lane {
                tx: Some(tx),
                pool,
                cur: Vec::with_capacity(BATCH),
                remaining,
                handle: Some(handle),
            });
        }
        self.lanes[i].as_mut().expect("just made")
    }

    /// Hands lane `i`'s filled batch over, if it has one.
    fn flush(&mut self, i: usize) {
        let Some(l) = self.lanes[i].as_mut() else {
            return;
        };
        if l.cur.is_empty() {
            return;
        }
        let Some(tx) = &l.tx else { return };
        let t = tsc();
        let mut next = l.pool.recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        next.clear();
        let full = std::mem::replace(&mut l.cur, next);
        // A replay thread that stopped (a wait timed out) drops its queue.
        let _ = tx.send(full);
        self.blocked += tsc().wrapping_sub(t);
    }

    fn flush_all(&mut self) {
        for i in 0..self.lanes.len() {
            self.flush(i);
        }
    }

    /// Hands over one item of plan thread `t`.
    fn item(&mut self, t: u32, mut it: Item, moved: bool, at: u64) {
        let lane_i = if self.serial { 0 } else { t as usize };
        if matches!(it.kind, worker::MALLOC | worker::FREE | worker::REALLOC) {
            let s = it.slot as usize;
            if s >= self.seq.len() {
                fail(format!(
                    "operation at byte {at}: slot {s} is past the plan's {} slots",
                    self.seq.len()
                ));
            }
            let prev = self.last[s];
            if prev != NONE && prev as usize != lane_i {
                // The operation before this one on the object is another
                // thread's: make sure it is handed over before this one
                // can wait for it.
                self.flush(prev as usize);
            }
            self.last[s] = lane_i as u32;
            it.seq = self.seq[s];
            self.seq[s] = self.seq[s].wrapping_add(1);
            let before = self.size[s];
            if moved {
                self.peak_live = self.peak_live.max(self.live + it.size);
            }
            self.live -= before;
            if it.kind != worker::FREE {
                self.live += it.size;
                self.size[s] = it.size;
            } else {
                self.size[s] = 0;
            }
            self.peak_live = self.peak_live.max(self.live);
        }
        if it.heap as usize >= self.heaps {
            fail(format!(
                "operation at byte {at}: heap {} is past the plan's {} heaps",
                it.heap, self.heaps
            ));
        }
        if it.kind == worker::HEAP_DESTROY {
            // It waits for every earlier operation in its heap, which may
            // sit in any thread's batch.
            it.size = self.heap_ops[it.heap as usize];
            self.flush_all();
        } else if it.heap != 0 && it.kind != worker::HEAP_CREATE {
            self.heap_ops[it.heap as usize] += 1;
        }
        self.dispatched[t as usize][it.kind as usize] += 1;
        let l = self.lane(t);
        if l.remaining == 0 {
            fail(format!(
                "operation at byte {at}: thread {t} has more operations than the trailer says"
            ));
        }
        l.remaining -= 1;
        l.cur.push(it);
        let (full, end) = (l.cur.len() >= BATCH - 1, l.remaining == 0);
        if end {
            l.cur.push(Item {
                kind: worker::END,
                ..Item::default()
            });
        }
        if full || end {
            self.flush(lane_i);
        }
        if end {
            // Its queue closes after the end item.
            if let Some(l) = self.lanes[lane_i].as_mut() {
                l.tx = None;
            }
        }
    }
}

/// Reads the plan on `file` and hands every operation over.
fn decode(file: &File, h: &Header, dec: &mut Decoder) {
    let end = h.trailer_offset();
    let mut buf = vec![0u8; 1 << 20];
    let (mut len, mut at, mut pos) = (0usize, 0usize, plan_format::HEADER_LEN as u64);
    let mut thread = NONE;
    loop {
        if len - at < plan_format::MAX_OP_LEN && pos < end {
            buf.copy_within(at..len, 0);
            len -= at;
            at = 0;
            let want = ((buf.len() - len) as u64).min(end - pos) as usize;
            let n = file
                .read_at(&mut buf[len..len + want], pos)
                .unwrap_or_else(|e| fail(format!("reading the plan at byte {pos}: {e}")));
            if n == 0 {
                fail(format!(
                    "the plan ends at byte {pos}, before the {end} bytes its header says"
                ));
            }
            len += n;
            pos += n as u64;
        }
        if at == len {
            break;
        }
        let offset = pos - (len - at) as u64;
        let (op, n) = match plan_format::decode(&buf[at..len]) {
            Ok(x) => x,
            Err(DecodeError::Truncated) => fail(format!(
                "the plan's body ends inside the operation at byte {offset}"
            )),
            Err(DecodeError::Bad(why)) => fail(format!("operation at byte {offset}: {why}")),
        };
        at += n;
        let check = |t: u32| {
            if t as usize >= dec.items.len() {
                fail(format!(
                    "operation at byte {offset}: thread {t} is past the plan's {} threads",
                    dec.items.len()
                ));
            }
        };
        let it = |kind: u8, slot: u32, size: u64, heap: u32| Item {
            size,
            slot,
            seq: 0,
            heap,
            kind,
        };
        let item = match op {
            Op::Switch { thread: t } => {
                check(t);
                thread = t;
                continue;
            }
            Op::ThreadStart { thread: t } => {
                check(t);
                dec.lane(t);
                continue;
            }
            Op::Malloc { slot, size, heap } => it(worker::MALLOC, slot, size, heap),
            Op::Free { slot, heap } => it(worker::FREE, slot, 0, heap),
            Op::Realloc {
                slot, size, heap, ..
            } => it(worker::REALLOC, slot, size, heap),
            Op::HeapCreate { heap } => it(worker::HEAP_CREATE, 0, 0, heap),
            Op::HeapDestroy { heap } => it(worker::HEAP_DESTROY, 0, 0, heap),
        };
        if thread == NONE {
            fail(format!(
                "operation at byte {offset} comes before any thread is named"
            ));
        }
        let moved = matches!(op, Op::Realloc { moved: true, .. });
        dec.item(thread, item, moved, offset);
    }
    // Threads the trailer promised more operations than the body has.
    for (t, l) in dec.lanes.iter().enumerate() {
        if let Some(l) = l
            && l.remaining != 0
        {
            fail(format!(
                "thread {t}: the trailer says {} more operations than the body has",
                l.remaining
            ));
        }
    }
}

fn main() {
    let opts = options();
    // SAFETY: fd 0 is this process's stdin, owned by nobody else here.
    let file = unsafe { File::from_raw_fd(0) };
    let mut head = [0u8; plan_format::HEADER_LEN];
    let n = file.read_at(&mut head, 0).unwrap_or_else(|e| {
        fail(format!(
            "reading the plan (stdin must be a regular file): {e}"
        ))
    });
    let h = Header::decode(&head[..n]).unwrap_or_else(|e| fail(e));
    let len = file
        .metadata()
        .unwrap_or_else(|e| fail(format!("reading the plan: {e}")))
        .len();
    h.check(len).unwrap_or_else(|e| fail(e));
    let mut trailer = vec![0u8; h.threads as usize * plan_format::TRAILER_ROW];
    if file.read_at(&mut trailer, h.trailer_offset()).ok() != Some(trailer.len()) {
        fail(format!(
            "the plan has no trailer of {} threads at byte {}",
            h.threads,
            h.trailer_offset()
        ));
    }
    let rows: Vec<(u64, u64)> = trailer
        .chunks_exact(plan_format::TRAILER_ROW)
        .map(|c| plan_format::decode_trailer_row(c.try_into().expect("16 bytes")))
        .collect();
    let heaps = alloc::Heaps::find(h.heaps as usize);
    let shared = Arc::new(Shared {
        slots: (0..h.slots).map(|_| slots::Slot::default()).collect(),
        heaps,
        heap_done: (0..h.heaps).map(|_| AtomicU64::new(0)).collect(),
        touch: opts.touch,
        wait_limit_cycles: 0,
        abort: AtomicBool::new(false),
    });
    let lanes = if opts.serial { 1 } else { h.threads as usize };
    let mut dec = Decoder {
        shared,
        lanes: (0..lanes).map(|_| None).collect(),
        items: rows.iter().map(|r| r.1).collect(),
        seq: vec![0; h.slots as usize],
        last: vec![NONE; h.slots as usize],
        size: vec![0; h.slots as usize],
        heap_ops: vec![0; h.heaps as usize],
        live: 0,
        peak_live: 0,
        serial: opts.serial,
        heaps: h.heaps as usize,
        progress: Arc::new(Mutex::new(Vec::new())),
        dispatched: vec![[0; 8]; h.threads as usize],
        blocked: 0,
    };
    // The cycles a wait may take: calibrated over 20 ms.
    let (c0, i0) = (tsc(), Instant::now());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let cycles_per_s = tsc().wrapping_sub(c0) as f64 / i0.elapsed().as_secs_f64();
    Arc::get_mut(&mut dec.shared)
        .expect("no replay thread yet")
        .wait_limit_cycles = (opts.wait_limit_s * cycles_per_s) as u64;
    let rss_before = report::hwm_kib();
    let sampler = sampler::Sampler::start(dec.progress.clone(), opts.sample_ms);
    let wall = Instant::now();
    let t_start = tsc();
    decode(&file, &h, &mut dec);
    let decoded = tsc();
    let mut reports = Vec::new();
    for (i, l) in dec.lanes.iter_mut().enumerate() {
        if let Some(l) = l {
            l.tx = None;
            if let Some(hd) = l.handle.take() {
                match hd.join() {
                    Ok(r) => reports.push((i, r)),
                    Err(_) => fail(format!("replay thread {i} panicked")),
                }
            }
        }
    }
    let t_end = tsc();
    let secs = wall.elapsed().as_secs_f64();
    let samples = sampler.stop(secs);
    let run = report::Run {
        header: h,
        trace_threads: rows.iter().map(|r| r.0).collect(),
        reports,
        dispatched: dec.dispatched,
        serial: opts.serial,
        seconds: secs,
        ns_per_cycle: if t_end > t_start {
            secs * 1e9 / (t_end - t_start) as f64
        } else {
            0.0
        },
        decode_cycles: decoded.wrapping_sub(t_start).saturating_sub(dec.blocked),
        peak_live_bytes: dec.peak_live,
        rss_before_kib: rss_before,
        slots_kib: (h.slots as i64 * std::mem::size_of::<slots::Slot>() as i64
            + h.slots as i64 * 16)
            / 1024,
        samples,
        heaps: dec.shared.heaps.describe(),
        aborted: dec.shared.abort.load(std::sync::atomic::Ordering::Relaxed),
    };
    println!("{}", run.json());
    if run.aborted {
        std::process::exit(3);
    }
}
