//! The live conversion on raw logs written by hand, chunk by chunk, as the
//! capture library would (docs/formats/capture.md): the merge by time with
//! its watermark, chunks seen half written, damage at the end, exec's
//! second log, late threads, and the disk given back.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use tramp_hatf::{EventKind, Item};
use tramp_record::live::{Session, can_punch, monotonic_ns};
use tramp_record::{ConvertStats, RecordOptions};

/// An event of a hand-made chunk: kind and fields after the time delta.
enum Ev {
    Start,
    /// pthread_create: a thread starts after this.
    Spawn,
    Alloc {
        size: u64,
        addr: u64,
    },
    Free {
        addr: u64,
    },
    /// A realloc whose call began `back` ns before its time.
    Realloc {
        size: u64,
        old: u64,
        new: u64,
        back: u64,
    },
    /// A stack's frames (no clock reading of its own): one new frame.
    Frames,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A chunk of thread `tid` spanning [base, end] ns, with events at the
/// given ns offsets from `base`. The TSC is the machine's one clock: here
/// it ticks once a ns and reads the ns. A chunk whose last event is a
/// spawn says so in its header, as the capture's do (it writes its buffer
/// right after a spawn).
fn chunk(tid: u32, base: u64, end: u64, events: &[(u64, Ev)]) -> Vec<u8> {
    let mut payload = Vec::new();
    let mut prev = 0;
    // Addresses and sites are zigzag differences from the chunk's last.
    let (mut prev_addr, mut prev_site) = (0i64, 0i64);
    let zz = |out: &mut Vec<u8>, v: u64, prev: &mut i64| {
        let d = (v as i64).wrapping_sub(*prev);
        *prev = v as i64;
        varint(out, ((d << 1) ^ (d >> 63)) as u64);
    };
    for (at, ev) in events {
        let dt = at - prev;
        prev = *at;
        match ev {
            Ev::Start => {
                payload.push(3);
                varint(&mut payload, dt);
            }
            Ev::Spawn => {
                payload.push(12);
                varint(&mut payload, dt);
            }
            Ev::Alloc { size, addr } => {
                payload.push(0);
                varint(&mut payload, *size);
                zz(&mut payload, *addr, &mut prev_addr);
                zz(&mut payload, 0x401000, &mut prev_site);
                varint(&mut payload, dt);
            }
            Ev::Free { addr } => {
                payload.push(1);
                zz(&mut payload, *addr, &mut prev_addr);
                varint(&mut payload, dt);
            }
            Ev::Realloc {
                size,
                old,
                new,
                back,
            } => {
                payload.push(2);
                varint(&mut payload, *size);
                zz(&mut payload, *old, &mut prev_addr);
                zz(&mut payload, *new, &mut prev_addr);
                zz(&mut payload, 0x401000, &mut prev_site);
                varint(&mut payload, dt);
                varint(&mut payload, *back);
            }
            Ev::Frames => {
                // keep 0, one listed frame; its time is the previous
                // event's (the delta is not advanced).
                payload.push(13);
                varint(&mut payload, 0);
                varint(&mut payload, 1);
                zz(&mut payload, 0x402000, &mut prev_site);
                prev = prev.min(*at);
            }
        }
    }
    let mut c = b"TRC1".to_vec();
    c.extend_from_slice(&tid.to_le_bytes());
    let spawn = matches!(events.last(), Some((_, Ev::Spawn)));
    let flag = if spawn { 1u32 << 31 } else { 0 };
    c.extend_from_slice(&(payload.len() as u32 | flag).to_le_bytes());
    for w in [base, base, end, end] {
        c.extend_from_slice(&w.to_le_bytes());
    }
    c.extend_from_slice(&payload);
    c
}

/// A chunk holding one allocation, `at` ns after `base`.
fn alloc_chunk(tid: u32, base: u64, end: u64, at: u64, size: u64, addr: u64) -> Vec<u8> {
    chunk(tid, base, end, &[(at, Ev::Alloc { size, addr })])
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// (kind, address, thread, time) of every event of a HATF trace.
fn events(path: &Path) -> Vec<(EventKind, u64, u64, u64)> {
    let mut r = tramp_hatf::Reader::new(std::fs::File::open(path).unwrap());
    let mut out = Vec::new();
    while let Some(item) = r.next_item().unwrap() {
        if let Item::Event(e) = item {
            out.push((e.kind, e.address, e.thread, e.time));
        }
    }
    out
}

/// The sizes of a HATF trace's allocations.
fn sizes(path: &Path) -> Vec<u64> {
    let mut r = tramp_hatf::Reader::new(std::fs::File::open(path).unwrap());
    let mut out = Vec::new();
    while let Some(item) = r.next_item().unwrap() {
        if let Item::Event(e) = item
            && e.kind == EventKind::Alloc
        {
            out.push(e.size);
        }
    }
    out
}

fn session(dir: &Path, out: &Path) -> Session {
    Session::new(dir, 100, &RecordOptions::new(out.to_path_buf()))
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let out = dir.path().join("t.hatf");
    (dir, logs, out)
}

const MS: u64 = 1_000_000;

#[test]
fn threads_merge_by_time_though_their_chunks_arrive_out_of_order() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    // Both threads start; each has flushed up to 0.4 and 0.5 ms.
    append(&log, &chunk(1, t, t + MS * 4 / 10, &[(50, Ev::Start)]));
    append(&log, &chunk(2, t, t + MS / 2, &[(100, Ev::Start)]));
    s.poll().unwrap();
    // Thread 1 flushes allocations at 1 and 3 ms; thread 2 still holds one
    // at 2 ms, so the 3 ms one must wait for it.
    let a = chunk(
        1,
        t + MS * 4 / 10,
        t + 4 * MS,
        &[
            (
                MS * 6 / 10,
                Ev::Alloc {
                    size: 1,
                    addr: 0x1000,
                },
            ),
            (
                MS * 26 / 10,
                Ev::Alloc {
                    size: 3,
                    addr: 0x3000,
                },
            ),
        ],
    );
    append(&log, &a);
    s.poll().unwrap();
    append(
        &log,
        &alloc_chunk(2, t + MS / 2, t + MS * 25 / 10, MS * 15 / 10, 2, 0x2000),
    );
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    let (pid, path, stats) = &done.traces[0];
    assert_eq!((*pid, path.as_path()), (100, out.as_path()));
    assert_eq!(stats.late, 0);
    assert_eq!(stats.allocs, 3);
    let allocs: Vec<(u64, u64)> = events(&out)
        .into_iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| (e.1, e.2))
        .collect();
    assert_eq!(allocs, [(0x1000, 1), (0x2000, 2), (0x3000, 1)]);
    // Times are ns since the process's first chunk began.
    let times: Vec<u64> = events(&out).iter().map(|e| e.3).collect();
    assert_eq!(times, [50, 100, MS, 2 * MS, 3 * MS]);
}

#[test]
fn a_chunk_seen_half_written_is_read_when_whole() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let c = chunk(
        7,
        t,
        t + MS,
        &[
            (1, Ev::Start),
            (
                2,
                Ev::Alloc {
                    size: 8,
                    addr: 0x10,
                },
            ),
            (3, Ev::Free { addr: 0x10 }),
        ],
    );
    let mut s = session(&logs, &out);
    for cut in [10, 44, c.len() - 1] {
        let before = std::fs::metadata(&log).map_or(0, |m| m.len()) as usize;
        append(&log, &c[before..cut]);
        assert!(!s.poll().unwrap(), "nothing whole to read at {cut}");
    }
    append(&log, &c[c.len() - 1..]);
    assert!(s.poll().unwrap());
    let done = s.finish(None).unwrap();
    assert!(done.traces[0].2.damage.is_empty());
    let kinds: Vec<EventKind> = events(&out).iter().map(|e| e.0).collect();
    assert_eq!(
        kinds,
        [EventKind::CreateThread, EventKind::Alloc, EventKind::Free]
    );
}

#[test]
fn a_log_cut_short_keeps_every_whole_chunk_and_reports_the_cut() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    append(&log, &alloc_chunk(7, t, t + MS, 1, 8, 0x10));
    let second = chunk(7, t + MS, t + 2 * MS, &[(1, Ev::Free { addr: 0x10 })]);
    append(&log, &second[..second.len() - 3]);
    let done = session(&logs, &out).finish(None).unwrap();
    let stats = &done.traces[0].2;
    assert_eq!((stats.allocs, stats.frees), (1, 0));
    assert_eq!(stats.damage.len(), 1, "{:?}", stats.damage);
    assert!(
        stats.damage[0].contains("byte offset"),
        "{:?}",
        stats.damage
    );
    assert_eq!(events(&out).len(), 2); // createThread, alloc
}

#[test]
fn garbage_in_a_log_stops_it_and_is_reported() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    append(&log, &alloc_chunk(7, t, t + MS, 1, 8, 0x10));
    append(&log, &[0x55; 100]);
    let mut s = session(&logs, &out);
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    let stats = &done.traces[0].2;
    assert_eq!(stats.allocs, 1);
    assert!(
        stats
            .damage
            .iter()
            .any(|d| d.contains("bad chunk magic at byte offset")),
        "{:?}",
        stats.damage
    );
}

/// The conversion of a log whose one chunk `c` (at offset 0) ends in a
/// free whose time varint never ends kept the `allocs` before it and
/// reported that free (event kind 1) at the payload's end.
fn kept_allocs_before_a_cut_short_free(stats: &ConvertStats, c: &[u8], allocs: u64) {
    assert_eq!(
        (stats.allocs, stats.frees),
        (allocs, 0),
        "{:?}",
        stats.damage
    );
    assert_eq!(stats.damage.len(), 1, "{:?}", stats.damage);
    let payload_len = c.len() - tramp_record::raw::CHUNK_HEADER;
    assert!(
        stats.damage[0].contains(&format!(
            "event 1 in the chunk at byte offset 0 is cut short or malformed at payload byte {payload_len}"
        )),
        "{:?}",
        stats.damage
    );
}

#[test]
fn damage_inside_a_chunk_keeps_the_events_before_it_and_says_where() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    // Sizes and addresses of one, two, three and nine varint bytes, then a
    // free whose time varint never ends (its last byte has the
    // continuation bit): the chunk's length is right, its payload is not.
    let big = 0x7fff_ffff_0000u64;
    let mut c = chunk(
        7,
        t,
        t + MS,
        &[
            (
                1,
                Ev::Alloc {
                    size: 8,
                    addr: 0x10,
                },
            ),
            (
                2,
                Ev::Alloc {
                    size: 300,
                    addr: 0x4000,
                },
            ),
            (
                3,
                Ev::Alloc {
                    size: 40_000,
                    addr: big,
                },
            ),
            (4, Ev::Free { addr: 0x4000 }),
        ],
    );
    let last = c.len() - 1;
    c[last] |= 0x80;
    append(&log, &c);
    let done = session(&logs, &out).finish(None).unwrap();
    kept_allocs_before_a_cut_short_free(&done.traces[0].2, &c, 3);
    let got: Vec<(u64, u64)> = events(&out)
        .into_iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| (e.1, e.3))
        .collect();
    // Times are ns after the earliest chunk's start (t), by the TSC deltas.
    assert_eq!(got, [(0x10, 1), (0x4000, 2), (big, 3)]);
    assert_eq!(sizes(&out), [8, 300, 40_000]);
}

#[test]
fn an_exec_continues_the_process_in_a_second_log() {
    let (_d, logs, out) = setup();
    let t = monotonic_ns();
    let first = logs.join("trace.100.1.raw");
    let second = logs.join("trace.100.2.raw");
    let mut s = session(&logs, &out);
    append(&first, &alloc_chunk(7, t, t + MS, 1, 8, 0x10));
    s.poll().unwrap();
    append(&second, &alloc_chunk(7, t + 2 * MS, t + 3 * MS, 1, 9, 0x20));
    s.poll().unwrap();
    // The first log is finished (a newer one exists and it was read to its
    // end): it is removed at once.
    assert!(!first.exists());
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces.len(), 1);
    let addrs: Vec<u64> = events(&out)
        .iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| e.1)
        .collect();
    assert_eq!(addrs, [0x10, 0x20]);
}

#[test]
fn a_thread_that_shows_up_after_the_lag_is_written_late_and_counted() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    // Events a second old: past the lag, written at the first poll.
    let t = monotonic_ns() - 1_000 * MS;
    let mut s = session(&logs, &out);
    append(&log, &alloc_chunk(1, t, t + 10 * MS, 5 * MS, 1, 0x10));
    s.poll().unwrap();
    // A thread whose only chunk comes now, with an earlier event.
    append(&log, &alloc_chunk(2, t, t + 2 * MS, MS, 2, 0x20));
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 1, "thread 2's alloc");
    let allocs: Vec<(u64, u64)> = events(&out)
        .iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| (e.1, e.3))
        .collect();
    // Arrival order, each with its own time.
    assert_eq!(allocs, [(0x10, 5 * MS), (0x20, MS)]);
}

#[test]
fn read_bytes_are_given_back_to_the_file_system() {
    let (_d, logs, out) = setup();
    if !can_punch(&logs) {
        eprintln!("skipped: the temporary file system cannot punch holes");
        return;
    }
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    let mut n = 0u64;
    for k in 0..256u64 {
        let evs: Vec<(u64, Ev)> = (0..2000u64)
            .map(|i| {
                n += 1;
                (
                    i + 1,
                    Ev::Alloc {
                        size: 16,
                        addr: 0x10_0000 + 32 * (k * 2000 + i),
                    },
                )
            })
            .collect();
        append(&log, &chunk(7, t + k * MS, t + (k + 1) * MS, &evs));
    }
    let written = std::fs::metadata(&log).unwrap().len();
    assert!(written > 1 << 20);
    // A poll reads a bounded amount: poll until everything is read.
    while s.poll().unwrap() {}
    let on_disk = std::fs::metadata(&log).unwrap().blocks() * 512;
    assert!(
        on_disk < 64 << 10,
        "{on_disk} bytes still allocated of {written} read"
    );
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.allocs, n);
    assert!(done.peak_disk <= written + 4096);
}

/// A log over half the backlog bound is coded on every core (the
/// program's writers wait then) and on one again below a quarter; the
/// trace is the same, byte for byte, as when it is coded on one thread
/// until the end.
#[test]
fn a_conversion_behind_codes_on_every_core_to_the_same_trace() {
    let write_logs = |logs: &Path| {
        let log = logs.join("trace.100.1.raw");
        let t = 1_000 * MS;
        for k in 0..300u64 {
            let evs: Vec<(u64, Ev)> = (0..2000u64)
                .map(|i| {
                    let addr = 0x10_0000 + 32 * ((k * 2000 + i) % 5000);
                    let ev = if (k + i) % 3 == 2 {
                        Ev::Free { addr }
                    } else {
                        Ev::Alloc {
                            size: 16 + i % 7,
                            addr,
                        }
                    };
                    (i + 1, ev)
                })
                .collect();
            append(&log, &chunk(7, t + k * MS, t + (k + 1) * MS, &evs));
        }
    };
    let convert = |backlog: u64| {
        let (d, logs, _) = setup();
        let out = d.path().join("t.tpack");
        write_logs(&logs);
        let mut opts = RecordOptions::new(out.clone());
        opts.set_pack("zstd-1,block=5000").unwrap();
        opts.backlog = backlog;
        let mut s = Session::new(&logs, 100, &opts);
        while s.poll().unwrap() {}
        let done = s.finish(None).unwrap();
        let st = &done.traces[0].2;
        (std::fs::read(&out).unwrap(), (st.allocs, st.frees))
    };
    let (one, n) = convert(u64::MAX);
    // Bound of 1 MiB: a poll reads 1 MiB, so the log holds more than half
    // of it after the first few polls, and less than a quarter at the end.
    let (spread, m) = convert(1 << 20);
    // A free wherever (k + i) % 3 == 2.
    let frees = (0..300u64)
        .map(|k| (0..2000u64).filter(|i| (k + i) % 3 == 2).count() as u64)
        .sum::<u64>();
    assert_eq!(n, (600_000 - frees, frees));
    assert_eq!(m, n);
    assert!(one == spread, "{} vs {} bytes", one.len(), spread.len());
}

/// A chunk is decoded a batch of events at a time: damage after several
/// batches keeps every event before it, in order, and a second chunk of
/// the thread after the damaged one is not read.
#[test]
fn damage_past_the_first_batches_of_a_chunk_keeps_every_event_before_it() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let n = 2000u64;
    let evs: Vec<(u64, Ev)> = (0..n)
        .map(|i| {
            (
                1,
                Ev::Alloc {
                    size: 16,
                    addr: 0x10_0000 + 32 * i,
                },
            )
        })
        .chain([(1, Ev::Free { addr: 0x10_0000 })])
        .collect();
    let mut c = chunk(7, t, t + MS, &evs);
    let last = c.len() - 1;
    c[last] |= 0x80;
    append(&log, &c);
    append(&log, &alloc_chunk(7, t + MS, t + 2 * MS, MS, 8, 0x9000));
    let done = session(&logs, &out).finish(None).unwrap();
    kept_allocs_before_a_cut_short_free(&done.traces[0].2, &c, n);
    let addrs: Vec<u64> = events(&out)
        .into_iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| e.1)
        .collect();
    let want: Vec<u64> = (0..n).map(|i| 0x10_0000 + 32 * i).collect();
    assert!(
        addrs == want,
        "{} addresses, not the {n} in order",
        addrs.len()
    );
}

/// A thread started after a spawn event is waited for: the starting
/// thread's later events are not written before the new thread's first
/// chunk comes, so none of its events is late.
#[test]
fn a_spawned_thread_is_waited_for() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    // The main thread starts and spawns at 1 ms (its buffer is written
    // then), allocates at 3 ms and has flushed to 4 ms; the new thread's
    // chunk is not there yet.
    append(
        &log,
        &chunk(1, t, t + MS, &[(50, Ev::Start), (MS, Ev::Spawn)]),
    );
    append(&log, &alloc_chunk(1, t + MS, t + 4 * MS, 2 * MS, 3, 0x3000));
    s.poll().unwrap();
    // Its first events, at 1.5 and 2 ms.
    append(
        &log,
        &chunk(
            2,
            t + MS,
            t + 5 * MS / 2,
            &[
                (MS / 2, Ev::Start),
                (
                    MS,
                    Ev::Alloc {
                        size: 2,
                        addr: 0x2000,
                    },
                ),
            ],
        ),
    );
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 0);
    let allocs: Vec<(u64, u64)> = events(&out)
        .into_iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| (e.1, e.2))
        .collect();
    assert_eq!(allocs, [(0x2000, 2), (0x3000, 1)]);
}

/// The lag that lets a blocked thread's silence be passed counts in the
/// log's time: events read long after they happened (a conversion behind
/// the program) still wait for a thread that has not flushed past them.
#[test]
fn the_lag_counts_in_the_logs_time_not_the_wall_clock() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    // Five seconds ago, by the wall clock.
    let t = monotonic_ns() - 5_000_000_000;
    let mut s = session(&logs, &out);
    append(&log, &chunk(1, t, t + MS / 2, &[(50, Ev::Start)]));
    append(&log, &chunk(2, t, t + MS / 2, &[(60, Ev::Start)]));
    // Thread 1 allocates at 3 ms; thread 2 has flushed only to 0.5 ms.
    append(
        &log,
        &alloc_chunk(1, t + MS / 2, t + 4 * MS, 5 * MS / 2, 3, 0x3000),
    );
    s.poll().unwrap();
    append(
        &log,
        &alloc_chunk(2, t + MS / 2, t + 5 * MS / 2, 3 * MS / 2, 2, 0x2000),
    );
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 0);
    let allocs: Vec<u64> = events(&out)
        .into_iter()
        .filter(|e| e.0 == EventKind::Alloc)
        .map(|e| e.1)
        .collect();
    assert_eq!(allocs, [0x2000, 0x3000]);
}

/// (kind, address, new address, thread) of a heap event.
type HeapEv = (EventKind, u64, u64, u64);

/// Where the first event `want` takes is among `evs` (a panic listing
/// them if none).
fn position(evs: &[HeapEv], want: &dyn Fn(&HeapEv) -> bool) -> usize {
    evs.iter()
        .position(want)
        .unwrap_or_else(|| panic!("{evs:?}"))
}

/// Every heap event of a trace, in order.
fn heap_events(path: &Path) -> Vec<HeapEv> {
    let mut r = tramp_hatf::Reader::new(std::fs::File::open(path).unwrap());
    let mut out = Vec::new();
    while let Some(item) = r.next_item().unwrap() {
        if let Item::Event(e) = item
            && !matches!(
                e.kind,
                EventKind::CreateThread | EventKind::DestroyThread | EventKind::CreateHeap
            )
        {
            out.push((e.kind, e.address, e.new_address, e.thread));
        }
    }
    out
}

/// A realloc that moved its block, read before (1 ms) and after (3 ms)
/// its call, is placed where neither address is out of order: after
/// another thread's free of the new block at 1.5 ms (which the allocator
/// saw first: it made the new block from it), before a third thread's
/// allocation of the old block at 2 ms (which it handed out after the
/// realloc freed it). Written at either reading alone, one of the two
/// would come out of order.
#[test]
fn a_moved_realloc_goes_between_the_uses_of_its_two_addresses() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    let (p, q) = (0x1000, 0x2000);
    three_threads(&log, t);
    // Thread 1 allocates p, thread 3 allocates q, before everything else.
    append(&log, &alloc_chunk(1, t + 100, t + 200, 10, 16, p));
    append(&log, &alloc_chunk(3, t + 100, t + 200, 20, 16, q));
    // Thread 1's realloc p -> q: after the call at 3 ms, begun at 1 ms.
    let moved = [realloc_at(p, q, 3 * MS, 2 * MS)];
    append(&log, &chunk(1, t + 200, t + 4 * MS, &moved));
    // Thread 2 allocates p at 2 ms; thread 3 freed q at 1.5 ms.
    append(
        &log,
        &alloc_chunk(2, t + 200, t + 4 * MS, 2 * MS - 200, 8, p),
    );
    free_at_one_and_a_half_ms(&log, t, q, 4 * MS);
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 0);
    let evs = heap_events(&out);
    let at = |want: &dyn Fn(&HeapEv) -> bool| position(&evs, want);
    let free_q = at(&|e| e.0 == EventKind::Free && e.1 == q && e.3 == 3);
    let realloc = at(&|e| e.0 == EventKind::ReallocAllocFree && e.1 == p && e.2 == q);
    let alloc_p = at(&|e| e.0 == EventKind::Alloc && e.1 == p && e.3 == 2);
    assert!(free_q < realloc && realloc < alloc_p, "{evs:?}");
}

/// Threads 1, 2 and 3 start (their first chunks, at `t`).
fn three_threads(log: &Path, t: u64) {
    for (thread, at) in [(1, 10), (2, 20), (3, 30)] {
        append(log, &chunk(thread, t, t + 100, &[(at, Ev::Start)]));
    }
}

/// A moved realloc of `old` to `new` (64 bytes) whose call returned at
/// `at` and began `back` before (times of the chunk that starts 200 ns in).
fn realloc_at(old: u64, new: u64, at: u64, back: u64) -> (u64, Ev) {
    (
        at - 200,
        Ev::Realloc {
            size: 64,
            old,
            new,
            back,
        },
    )
}

/// Thread 3's free of `addr` at 1.5 ms, in a chunk to 5 ms.
fn free_at_one_and_a_half_ms(log: &Path, t: u64, addr: u64, end: u64) {
    let free = [(MS * 3 / 2 - 200, Ev::Free { addr })];
    append(log, &chunk(3, t + 200, t + end, &free));
}

/// Two moved reallocs chained by an address: thread 1's p -> q (begun at
/// 1 ms, done at 3 ms) and thread 2's r -> p (begun at 1.2 ms, done at 4
/// ms: it got p once thread 1's realloc had freed it), with thread 3's
/// free of q at 1.5 ms, which thread 1's realloc saw first. Thread 1's
/// realloc must follow that free and precede thread 2's realloc. Opening
/// thread 2's realloc at its first reading once wrote thread 1's there, as
/// if p were taken at 1.2 ms, before the free of q (1 in about 100
/// recordings of slots.c under load: one double free and one allocation
/// of a live address).
#[test]
fn a_realloc_into_the_block_another_realloc_freed_waits_for_its_place() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    let (p, q, r) = (0x1000, 0x2000, 0x3000);
    three_threads(&log, t);
    append(&log, &alloc_chunk(1, t + 100, t + 200, 10, 16, p));
    append(&log, &alloc_chunk(2, t + 100, t + 200, 15, 16, r));
    append(&log, &alloc_chunk(3, t + 100, t + 200, 20, 16, q));
    let first = [realloc_at(p, q, 3 * MS, 2 * MS)];
    append(&log, &chunk(1, t + 200, t + 5 * MS, &first));
    let second = [realloc_at(r, p, 4 * MS, 4 * MS - 6 * MS / 5)];
    append(&log, &chunk(2, t + 200, t + 5 * MS, &second));
    free_at_one_and_a_half_ms(&log, t, q, 5 * MS);
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 0);
    let evs = heap_events(&out);
    let at = |want: &dyn Fn(&HeapEv) -> bool| position(&evs, want);
    let free_q = at(&|e| e.0 == EventKind::Free && e.1 == q && e.3 == 3);
    let first = at(&|e| e.0 == EventKind::ReallocAllocFree && e.1 == p && e.2 == q);
    let second = at(&|e| e.0 == EventKind::ReallocAllocFree && e.1 == r && e.2 == p);
    assert!(free_q < first && first < second, "{evs:?}");
}

/// Threads show up in any order: the second thread started showing up
/// first does not release what is later than the first one's spawn.
#[test]
fn spawned_threads_that_show_up_out_of_order_are_each_waited_for() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    append(
        &log,
        &chunk(1, t, t + MS, &[(50, Ev::Start), (MS, Ev::Spawn)]),
    );
    append(&log, &chunk(1, t + MS, t + 2 * MS, &[(MS, Ev::Spawn)]));
    // The main thread allocates at 5 ms and has flushed to 6 ms.
    append(
        &log,
        &alloc_chunk(1, t + 2 * MS, t + 6 * MS, 3 * MS, 1, 0x5000),
    );
    // The second thread (started at 2 ms) shows up first, allocating at
    // 3 ms; the first (started at 1 ms) holds an allocation at 4 ms.
    append(
        &log,
        &chunk(
            3,
            t + 2 * MS + 10,
            t + 7 * MS,
            &[(
                MS - 10,
                Ev::Alloc {
                    size: 3,
                    addr: 0x3000,
                },
            )],
        ),
    );
    s.poll().unwrap();
    append(
        &log,
        &chunk(
            2,
            t + MS + 10,
            t + 7 * MS,
            &[(
                3 * MS - 10,
                Ev::Alloc {
                    size: 4,
                    addr: 0x4000,
                },
            )],
        ),
    );
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 0);
    let allocs: Vec<u64> = heap_events(&out).iter().map(|e| e.1).collect();
    assert_eq!(allocs, [0x3000, 0x4000, 0x5000]);
}

/// A stack's frames, written after the thread blocked, carry the reading
/// of the allocation they belong to, not the previous event's: nothing is
/// late.
#[test]
fn frames_written_after_a_block_are_not_late() {
    let (_d, logs, out) = setup();
    let log = logs.join("trace.100.1.raw");
    let t = monotonic_ns();
    let mut s = session(&logs, &out);
    append(&log, &chunk(1, t, t + 100, &[(10, Ev::Start)]));
    append(&log, &chunk(2, t, t + 100, &[(20, Ev::Start)]));
    // Thread 1 allocated at 1 ms, blocked, and allocates at 9 ms with a new
    // stack; thread 2 allocated at 5 ms.
    append(
        &log,
        &chunk(
            1,
            t + 100,
            t + 10 * MS,
            &[
                (
                    MS,
                    Ev::Alloc {
                        size: 1,
                        addr: 0x1000,
                    },
                ),
                (MS, Ev::Frames),
                (
                    9 * MS,
                    Ev::Alloc {
                        size: 9,
                        addr: 0x9000,
                    },
                ),
            ],
        ),
    );
    append(
        &log,
        &alloc_chunk(2, t + 100, t + 10 * MS, 5 * MS, 5, 0x5000),
    );
    s.poll().unwrap();
    let done = s.finish(None).unwrap();
    assert_eq!(done.traces[0].2.late, 0);
    let allocs: Vec<u64> = heap_events(&out).iter().map(|e| e.1).collect();
    assert_eq!(allocs, [0x1000, 0x5000, 0x9000]);
}
