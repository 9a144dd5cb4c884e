//! Heap traces written as heaptrack's interpreted file (version 3), so
//! that `heaptrack_print` and `heaptrack_gui` open tramp's recordings.
//!
//! The file names allocation *infos* (a size and a call stack) and lists
//! them, their stacks and the symbols before the first event that uses
//! them, while a recording stores its symbols at its end. So the events go
//! to a temporary file as they come (`+`/`-` lines, `c` every millisecond
//! the clock moves, `R` for RSS samples), compressed as the output is, and
//! at the end the strings, instruction pointers, call tree and infos are
//! written, then the compressed events appended as they are (a zstd file
//! may hold several frames; heaptrack_print reads them as one text):
//! memory is proportional to the stacks and the live
//! objects, never to the events.
//!
//! A realloc is what heaptrack records: a `-` of the old block, then a `+`
//! of the new one (also when it stays in place), so heaptrack_print's
//! calls, temporaries, peak and leaks equal tramp's statistics of the same
//! trace. Addresses and threads are not written (heaptrack's file has
//! none): converting to it is lossy and needs `--lossy`.

use std::hash::BuildHasher;
use std::io::{Seek, SeekFrom, Write};

use rustc_hash::FxHashMap;
use tramp_core::linebuf::LineBuf;
use tramp_core::site::{SITE_RETURN_ADDRESS, SITE_STACK};
use tramp_core::{Error, Record, RecordKind, Role, Sink};
use tramp_heap::{Born, HeapEvent, HeapView, Keep, Site};
use tramp_io::Output;
use tramp_symbols::modules::Names;
use tramp_symbols::{Annotation, ModuleMap};

/// heaptrack 1.4.0, the version whose file layout is written.
const HEAPTRACK_VERSION: &str = "10400";
const FILE_VERSION: u32 = 3;

/// What the writer keeps per live object: its site (for its `+`) and a
/// slot, under which the info of its `+` is kept for its `-` (a vector
/// lookup instead of hashing the size and site again).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Kept {
    site: Site,
    slot: u32,
}

impl Keep for Kept {
    const SITE: bool = true;
    const SLOT: bool = true;
    fn keep(born: &Born) -> Kept {
        Kept {
            site: born.site,
            slot: born.slot,
        }
    }
    fn site(&self) -> Site {
        self.site
    }
    fn slot(&self) -> u32 {
        self.slot
    }
}

/// Writes heaptrack's interpreted file.
pub struct HeaptrackSink {
    out: Output,
    view: HeapView<Kept>,
    lines: EventLines,
    notes: ModuleMap,
    command: Option<String>,
    page_size: u64,
    pages: u64,
}

/// Entries in the cache in front of the info table: a power of two, small
/// enough to stay in the processor's second-level cache (24 bytes each).
const RECENT: usize = 1 << 14;

/// The event lines as they are written (to a temporary file), and the
/// allocation infos they name.
struct EventLines {
    /// The temporary file of event lines (compressed as the output is, so
    /// that it is appended to the file's head as it is), and the lines not
    /// yet in it.
    events: Output,
    file: std::fs::File,
    buf: LineBuf,
    /// The info of each live object, by its slot.
    slot_info: Vec<u32>,
    /// Recently used (size, site) pairs and their infos, by a hash of the
    /// pair: most `+` lines are found here without touching `infos`.
    recent: Vec<((u64, Site), u32)>,
    /// (size, site) → 0-based info index.
    infos: FxHashMap<(u64, Site), u32>,
    info_list: Vec<(u64, Site)>,
    /// The last millisecond written as a `c` line.
    ms: u64,
}

impl HeaptrackSink {
    pub fn new(out: Output) -> Result<HeaptrackSink, Error> {
        let file = tempfile::tempfile()?;
        let events = Output::to_writer(Box::new(file.try_clone()?), out.compression())?;
        Ok(HeaptrackSink {
            out,
            view: HeapView::new(),
            lines: EventLines {
                events,
                file,
                buf: LineBuf::new(),
                slot_info: Vec::new(),
                recent: vec![((u64::MAX, Site::default()), u32::MAX); RECENT],
                infos: FxHashMap::default(),
                info_list: Vec::new(),
                ms: 0,
            },
            notes: ModuleMap::new(),
            command: None,
            page_size: 4096,
            pages: 0,
        })
    }

    fn comment(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.notes.note(rec);
        let Some(text) = rec.role(Role::Text).and_then(|v| v.as_bytes()) else {
            return Ok(());
        };
        if let Some(line) = text.strip_prefix(b"heaptrack: ") {
            // What a heaptrack file said of itself (read by this crate).
            let line = String::from_utf8_lossy(line);
            if let Some(cmd) = line.strip_prefix("X ") {
                self.command = Some(cmd.to_string());
            } else if let Some(sys) = line.strip_prefix("I ") {
                let mut f = sys.split(' ').map(|v| u64::from_str_radix(v, 16).ok());
                if let (Some(Some(p)), Some(Some(n))) = (f.next(), f.next()) {
                    (self.page_size, self.pages) = (p.max(1), n);
                }
            }
        } else {
            match Annotation::parse(text) {
                Some(Annotation::Rss { time, bytes }) => {
                    self.lines.clock(time)?;
                    let pages = bytes / self.page_size;
                    self.lines.line(b'R', pages)?;
                }
                // A recording's first module is its program.
                Some(Annotation::Module { path, .. }) if self.command.is_none() => {
                    self.command = Some(path);
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl EventLines {
    fn info(&mut self, size: u64, site: Site) -> u32 {
        let key = (size, site);
        let h = rustc_hash::FxBuildHasher.hash_one(key) as usize;
        // The hash's high bits are its best mixed.
        let at = h >> (usize::BITS - RECENT.trailing_zeros());
        let (k, i) = self.recent[at];
        if k == key {
            return i;
        }
        let next = self.info_list.len() as u32;
        let i = *self.infos.entry(key).or_insert_with(|| {
            self.info_list.push(key);
            next
        });
        self.recent[at] = (key, i);
        i
    }

    /// A line `OP INDEX` (hex).
    fn line(&mut self, op: u8, v: u64) -> Result<(), Error> {
        self.buf.bytes(&[op, b' ']).hex(v).end(&mut self.events)?;
        Ok(())
    }

    /// A `c` line when the clock has moved on by a millisecond.
    fn clock(&mut self, ns: u64) -> Result<(), Error> {
        let ms = ns / 1_000_000;
        if ms > self.ms {
            self.ms = ms;
            self.line(b'c', ms)?;
        }
        Ok(())
    }

    /// A `+` of a new live object: its info is kept under its slot.
    fn plus(&mut self, size: u64, kept: Kept) -> Result<(), Error> {
        let i = self.info(size, kept.site);
        let slot = kept.slot as usize;
        if self.slot_info.len() <= slot {
            self.slot_info.resize(slot + 1, 0);
        }
        self.slot_info[slot] = i;
        self.line(b'+', i as u64)
    }

    /// A `-` of a live object, by the info its `+` had.
    fn minus(&mut self, kept: Kept) -> Result<(), Error> {
        let i = self.slot_info[kept.slot as usize];
        self.line(b'-', i as u64)
    }

    /// The heaptrack lines of one heap event.
    fn heap_event(&mut self, e: &HeapEvent<Kept>) -> Result<(), Error> {
        match *e {
            // A realloc's own records: its `-` went out with the realloc.
            HeapEvent::Alloc { object, .. } => self.plus(object.size, object.extra),
            HeapEvent::Free {
                object: Some(o),
                implied: false,
                ..
            } => self.minus(o.extra),
            // A block the trace never freed, under a new one: gone.
            HeapEvent::Displaced { object, .. } => self.minus(object.extra),
            HeapEvent::Realloc {
                from, resized, old, ..
            } => {
                if old != 0
                    && let Some(o) = from
                {
                    self.minus(o.extra)?;
                }
                if let Some((o, _)) = resized {
                    self.plus(o.size, o.extra)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl HeaptrackSink {
    /// The strings, instruction pointers, call tree and infos, in the
    /// order heaptrack reads them, then the events.
    fn write_file(self) -> Result<(), Error> {
        let HeaptrackSink {
            mut out,
            lines:
                EventLines {
                    mut events,
                    mut file,
                    mut buf,
                    info_list,
                    ms,
                    ..
                },
            notes,
            command,
            page_size,
            pages,
            ..
        } = self;
        let mut names = notes.names();
        let mut strings = Strings::default();
        // Instruction pointers: address → 1-based index, and their lines.
        let mut ips: FxHashMap<u64, u64> = FxHashMap::default();
        let mut ip_lines = String::new();
        // heaptrack's call tree: (parent, ip index) → 1-based index.
        let mut nodes: FxHashMap<(u64, u64), u64> = FxHashMap::default();
        let mut node_lines = String::new();
        let mut info_lines = String::new();
        let mut ip_of =
            |pc: u64, names: &mut Names, strings: &mut Strings, out: &mut String| -> u64 {
                if let Some(&i) = ips.get(&pc) {
                    return i;
                }
                let place = names.place(pc);
                let module = strings.index(place.module.as_deref());
                let mut line = format!("i {pc:x} {module:x}");
                if place.function.is_some() {
                    let f = strings.index(place.function.as_deref());
                    line.push_str(&format!(" {f:x}"));
                    if place.file.is_some() {
                        let file = strings.index(place.file.as_deref());
                        line.push_str(&format!(" {file:x} {:x}", place.line.unwrap_or(0)));
                        for inl in &place.inlined {
                            let f = strings.index(inl.function.as_deref());
                            let file = strings.index(inl.file.as_deref());
                            line.push_str(&format!(" {f:x} {file:x} {:x}", inl.line.unwrap_or(0)));
                        }
                    }
                }
                out.push_str(&line);
                out.push('\n');
                let i = ips.len() as u64 + 1;
                ips.insert(pc, i);
                i
            };
        let stacks = notes.stack_depth() > 0;
        for &(size, site) in &info_list {
            let site = site.resolved(stacks);
            let frames: Vec<u64> = match site.kind {
                SITE_STACK => names.stack(site.value),
                SITE_RETURN_ADDRESS => vec![site.value],
                _ => Vec::new(),
            };
            // Outermost first, each frame a node under the one before.
            let mut parent = 0;
            for &pc in frames.iter().rev() {
                let ip = ip_of(pc, &mut names, &mut strings, &mut ip_lines);
                let next = nodes.len() as u64 + 1;
                parent = *nodes.entry((parent, ip)).or_insert_with(|| {
                    node_lines.push_str(&format!("t {ip:x} {parent:x}\n"));
                    next
                });
            }
            info_lines.push_str(&format!("a {size:x} {parent:x}\n"));
        }
        writeln!(out, "v {HEAPTRACK_VERSION} {FILE_VERSION}")?;
        writeln!(
            out,
            "X {}",
            command.as_deref().unwrap_or("(recorded by tramp)")
        )?;
        writeln!(out, "I {page_size:x} {pages:x}")?;
        out.write_all(strings.lines.as_bytes())?;
        out.write_all(ip_lines.as_bytes())?;
        out.write_all(node_lines.as_bytes())?;
        out.write_all(info_lines.as_bytes())?;
        // The end of the run, as heaptrack writes it.
        buf.bytes(b"c ").hex(ms + 1);
        buf.end(&mut events)?;
        buf.flush(&mut events)?;
        events.finish()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(out.finish_with_tail(&mut file)?)
    }
}

/// heaptrack's string table: each string once, 1-based, 0 for none.
#[derive(Default)]
struct Strings {
    index: FxHashMap<String, u64>,
    lines: String,
}

impl Strings {
    fn index(&mut self, s: Option<&str>) -> u64 {
        let Some(s) = s else { return 0 };
        // A line break would end the line early; a sized string may hold
        // any other byte.
        let s = s.replace('\n', " ");
        if let Some(&i) = self.index.get(&s) {
            return i;
        }
        let i = self.index.len() as u64 + 1;
        self.lines.push_str(&format!("s {:x} {s}\n", s.len()));
        self.index.insert(s, i);
        i
    }
}

impl Sink for HeaptrackSink {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        if rec.record_type().kind == RecordKind::Comment {
            return self.comment(rec);
        }
        let lines = &mut self.lines;
        if let Some(t) = rec.role_u64(Role::Time) {
            lines.clock(t)?;
        }
        self.view
            .feed(rec, &mut |step| lines.heap_event(&step.event))
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.write_file()
    }
}
