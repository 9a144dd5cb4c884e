//! Android's malloc_debug `record_allocs` text, read and written.
//!
//! One operation a line (bionic's memory_trace, as AOSP's memory_replay
//! reads it): `TID: TYPE 0xPTR ARGS [START_NS END_NS]` with TYPE `malloc`
//! (SIZE), `calloc` (NMEMB SIZE), `memalign` (ALIGNMENT SIZE), `realloc`
//! (0xOLD SIZE), `free`, and `TID: thread_done 0x0 [END_NS]`; numbers
//! decimal, pointers hexadecimal. Threads and times are real; there are no
//! call sites. docs/formats/android.md.

use std::collections::VecDeque;
use std::io::BufRead;

use rustc_hash::FxHashSet;
use tramp_core::output::{Finish, OutStream};

/// The output a sink owns (a file, a pipe, memory in tests).
type Output = Box<dyn OutStream>;
use tramp_core::linebuf::LineBuf;
use tramp_core::lines::Lines;
use tramp_core::{Error, Position, ReallocOutcome, Record, RecordKind, Role, Sink};
use tramp_hatf::records::ReadItems;
use tramp_hatf::{Event, EventKind, Item};

use crate::error::AllocTraceError;

/// Reads a record_allocs file as HATF items.
pub struct AndroidReader<R> {
    lines: Lines<R>,
    items: u64,
    ready: VecDeque<Event<'static>>,
    threads: FxHashSet<u64>,
    /// The time of the last line that had one.
    time: u64,
}

impl<R: BufRead> AndroidReader<R> {
    pub fn new(input: R) -> Self {
        AndroidReader {
            lines: Lines::new(input),
            items: 0,
            ready: VecDeque::new(),
            threads: FxHashSet::default(),
            time: 0,
        }
    }

    fn err(&self, e: AllocTraceError) -> Error {
        self.lines.error("android", self.items, e)
    }

    fn push(&mut self, kind: EventKind, thread: u64, size: u64, address: u64, new: u64) {
        if self.threads.insert(thread) && kind != EventKind::DestroyThread {
            let mut c = Event::new(EventKind::CreateThread);
            (c.thread, c.time) = (thread, self.time);
            self.ready.push_back(c);
        }
        let mut e = Event::new(kind);
        (e.thread, e.size, e.address, e.new_address, e.time) =
            (thread, size, address, new, self.time);
        self.ready.push_back(e);
    }

    fn handle(&mut self) -> Result<(), AllocTraceError> {
        let text = String::from_utf8_lossy(self.lines.line()).into_owned();
        if text.trim().is_empty() {
            return Ok(());
        }
        let (tid, rest) = text
            .split_once(": ")
            .ok_or_else(|| AllocTraceError::UnknownLine(text.clone()))?;
        let tid = dec(tid)?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (op, ptr) = match f.as_slice() {
            [op, ptr, ..] => (*op, hex(ptr)?),
            _ => return Err(AllocTraceError::Missing),
        };
        // The operation's own fields, then two optional times.
        let args = match op {
            "malloc" => 1,
            "calloc" | "memalign" | "realloc" => 2,
            "free" => 0,
            "thread_done" => {
                if let Some(t) = f.get(2) {
                    self.time = dec(t)?;
                }
                if f.len() > 3 {
                    return Err(AllocTraceError::UnknownLine(text.clone()));
                }
                self.push(EventKind::DestroyThread, tid, 0, 0, 0);
                self.threads.remove(&tid);
                return Ok(());
            }
            _ => return Err(AllocTraceError::UnknownLine(text.clone())),
        };
        let a = &f[2..];
        match a.len() - args.min(a.len()) {
            _ if a.len() < args => return Err(AllocTraceError::Missing),
            0 => {}
            2 => {
                // START END: a call cannot end before it starts.
                let (start, end) = (dec(a[args])?, dec(a[args + 1])?);
                if end < start {
                    return Err(AllocTraceError::EndBeforeStart(start, end));
                }
                self.time = end;
            }
            _ => return Err(AllocTraceError::UnknownLine(text.clone())),
        }
        match op {
            "malloc" => self.push(EventKind::Alloc, tid, dec(a[0])?, ptr, 0),
            "calloc" => {
                // calloc fails (ENOMEM) when the product does not fit: a
                // record of one that returned a block is damage.
                let (count, size) = (dec(a[0])?, dec(a[1])?);
                let n = count
                    .checked_mul(size)
                    .ok_or(AllocTraceError::CallocOverflow(count, size))?;
                self.push(EventKind::Alloc, tid, n, ptr, 0)
            }
            "memalign" => self.push(EventKind::Alloc, tid, dec(a[1])?, ptr, 0),
            "free" if ptr != 0 => self.push(EventKind::Free, tid, 0, ptr, 0),
            "free" => {}
            _ => {
                // realloc: the new pointer first, then the old one.
                let (old, size) = (hex(a[0])?, dec(a[1])?);
                if old == 0 {
                    self.push(EventKind::ReallocAlloc, tid, size, 0, ptr);
                    self.push(EventKind::Alloc, tid, size, ptr, 0);
                } else if ptr == 0 {
                    self.push(EventKind::ReallocFree, tid, size, old, 0);
                    self.push(EventKind::Free, tid, 0, old, 0);
                } else if ptr == old {
                    self.push(EventKind::ReallocNoAlloc, tid, size, old, ptr);
                } else {
                    self.push(EventKind::ReallocAllocFree, tid, size, old, ptr);
                    self.push(EventKind::Alloc, tid, size, ptr, 0);
                    self.push(EventKind::Free, tid, 0, old, 0);
                }
            }
        }
        Ok(())
    }

    /// The next item, or `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        while self.ready.is_empty() {
            if !self.lines.advance()? {
                return Ok(None);
            }
            self.handle().map_err(|e| self.err(e))?;
        }
        self.items += 1;
        Ok(self.ready.pop_front().map(Item::Event))
    }

    pub fn position(&self) -> Position {
        self.lines.next(self.items)
    }
}

impl<R: BufRead> ReadItems for AndroidReader<R> {
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        AndroidReader::next_item(self)
    }

    fn position(&self) -> Position {
        AndroidReader::position(self)
    }
}

fn dec(t: &str) -> Result<u64, AllocTraceError> {
    t.parse()
        .map_err(|_| AllocTraceError::Number(t.to_string()))
}

fn hex(t: &str) -> Result<u64, AllocTraceError> {
    let d = t.strip_prefix("0x").unwrap_or(t);
    if d.is_empty() || d.len() > 16 {
        return Err(AllocTraceError::Number(t.to_string()));
    }
    u64::from_str_radix(d, 16).map_err(|_| AllocTraceError::Number(t.to_string()))
}

/// Writes heap records as record_allocs text: every allocation a
/// `malloc`, frees, reallocs (the allocation and free records that follow
/// a realloc in HATF are part of it and not written again), thread ends;
/// each line with its time twice (start and end).
pub struct AndroidSink {
    out: Output,
    lines: LineBuf,
    /// A realloc's own alloc and free records are still to come.
    skip: u8,
}

impl AndroidSink {
    pub fn new(out: Output) -> AndroidSink {
        AndroidSink {
            out,
            lines: LineBuf::new(),
            skip: 0,
        }
    }
}

impl Sink for AndroidSink {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let kind = rec.record_type().kind;
        let u = |r: Role| rec.role_u64(r).unwrap_or(0);
        let l = &mut self.lines;
        match kind {
            RecordKind::Alloc | RecordKind::Free if self.skip > 0 => {
                self.skip -= 1;
                return Ok(());
            }
            RecordKind::Alloc => {
                l.dec(u(Role::Thread))
                    .bytes(b": malloc 0x")
                    .hex(u(Role::Address));
                l.bytes(b" ").dec(u(Role::Size));
            }
            RecordKind::Free => {
                l.dec(u(Role::Thread))
                    .bytes(b": free 0x")
                    .hex(u(Role::Address));
            }
            RecordKind::Realloc(outcome) => {
                self.skip = match outcome {
                    ReallocOutcome::Moved => 2,
                    ReallocOutcome::AllocOnly | ReallocOutcome::FreeOnly => 1,
                    ReallocOutcome::InPlace => 0,
                };
                let new = if outcome == ReallocOutcome::FreeOnly {
                    0
                } else {
                    u(Role::Address)
                };
                let old = if outcome == ReallocOutcome::AllocOnly {
                    0
                } else {
                    u(Role::OldAddress)
                };
                l.dec(u(Role::Thread)).bytes(b": realloc 0x").hex(new);
                l.bytes(b" 0x").hex(old).bytes(b" ").dec(u(Role::Size));
            }
            RecordKind::ThreadDestroy => {
                l.dec(u(Role::Thread)).bytes(b": thread_done 0x0 ");
                l.dec(u(Role::Time));
                return Ok(l.end(&mut self.out)?);
            }
            _ => return Ok(()),
        }
        // Start and end: the trace has one time per record.
        let time = u(Role::Time);
        l.bytes(b" ").dec(time).bytes(b" ").dec(time);
        Ok(l.end(&mut self.out)?)
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        self.lines.flush(&mut self.out)?;
        Ok(self.out.finish()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<String>, Error> {
        let mut r = AndroidReader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(Item::Event(e)) = r.next_item()? {
            out.push(format!(
                "{} t{} size={} {:#x}->{:#x} @{}",
                e.kind.name(),
                e.thread,
                e.size,
                e.address,
                e.new_address,
                e.time
            ));
        }
        Ok(out)
    }

    #[test]
    fn each_line_as_bionic_writes_it() {
        let got = read(
            "100: malloc 0x1000 24 5 9\n100: calloc 0x2000 4 8 10 11\n\
             101: memalign 0x3000 64 100\n100: realloc 0x4000 0x1000 48 12 13\n\
             100: realloc 0x5000 0x0 8\n100: free 0x2000 20 21\n100: free 0x0\n\
             100: thread_done 0x0 30\n",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                "createThread t100 size=0 0x0->0x0 @9",
                "alloc t100 size=24 0x1000->0x0 @9",
                "alloc t100 size=32 0x2000->0x0 @11",
                "createThread t101 size=0 0x0->0x0 @11",
                "alloc t101 size=100 0x3000->0x0 @11",
                "realloc/alloc-free t100 size=48 0x1000->0x4000 @13",
                "alloc t100 size=48 0x4000->0x0 @13",
                "free t100 size=0 0x1000->0x0 @13",
                "realloc/alloc t100 size=8 0x0->0x5000 @13",
                "alloc t100 size=8 0x5000->0x0 @13",
                "free t100 size=0 0x2000->0x0 @21",
                "destroyThread t100 size=0 0x0->0x0 @30",
            ]
        );
    }

    #[test]
    fn damage_names_its_line() {
        for (text, line) in [
            ("1: malloc 0x10 8\n1: malloc zz 8\n", "line 2"),
            ("1: malloc 0x10\n", "line 1"),
            ("1: frob 0x10 8\n", "line 1"),
            ("1: malloc 0x10 8 5\n", "line 1"),
            ("malloc 0x10 8\n", "line 1"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(line), "{text:?}: {e}");
        }
    }
}
