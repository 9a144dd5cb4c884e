//! The interpreted heaptrack file (`heaptrack.APP.PID.zst`, what
//! `heaptrack` leaves and `heaptrack_print`/`heaptrack_gui` read) as HATF
//! items: one allocation per `+` line, one free per `-` line, the call
//! stacks as tramp's stack tree, the symbols as stored places.
//!
//! The file has no addresses: a `-` line names an allocation *info* (a
//! size and a call stack), not a block. The block it ends is the most
//! recent live one of that info (LIFO), and every block gets a synthetic
//! address from a size-class allocator of the reader's own (a freed
//! block's address is given to the next block of its 16-byte class, most
//! recent first), so the addresses stay as compact as a real heap's
//! (decisions in docs/formats/heaptrack.md). Times are heaptrack's 10 ms
//! clock.

use std::io::BufRead;

use tramp_core::lines::Lines;
use tramp_core::site::{SITE_STACK, encode_site};
use tramp_core::synthetic::SyntheticAddresses;
use tramp_core::{Error, Position};
use tramp_hatf::records::ReadItems;
use tramp_hatf::{Event, EventKind, Item};
use tramp_symbols::Annotation;
use tramp_symbols::symbolizer::{Inlined, Place};

use crate::error::HeaptrackError;

/// The newest file version read (heaptrack 1.3 and later write 3).
pub const MAX_FILE_VERSION: u64 = 3;
/// The most stack-tree nodes one `tramp:frames` note holds.
const FRAMES_PER_NOTE: usize = 512;
pub use tramp_core::synthetic::SYNTHETIC_NOTE;

/// What the reader hands out next, besides a line's own item.
/// (Event fields are kept as numbers in the reader and built into the
/// item at once: a whole `Event` stored and copied out again stalled on
/// store forwarding, a third of the reader's time.)
#[derive(Clone, Copy, PartialEq, Eq)]
enum Out {
    Alloc,
    Free,
    Comment,
}

/// Reads an interpreted heaptrack file as HATF items.
pub struct InterpretedReader<R> {
    lines: Lines<R>,
    /// The current line was read but not handled yet (a note went first).
    held: bool,
    items: u64,
    started: bool,
    /// A raw file (`heaptrack -r`): real addresses and instruction
    /// pointers, a module map; told by its `x` and `m` lines.
    raw: bool,
    /// The raw file's executable (its `x` line; module `x` in `m` lines).
    exe: String,
    /// The synthetic-addresses note is written (before the first info).
    noted: bool,
    version: u64,
    strings: Vec<String>,
    /// Instruction addresses by 1-based `i` index.
    ips: Vec<u64>,
    traces: u64,
    /// Allocation infos by 0-based index: size, trace.
    infos: Vec<(u64, u64)>,
    /// The live blocks of each info, most recent last.
    live: Vec<Vec<u64>>,
    /// The blocks' made-up addresses.
    addresses: SyntheticAddresses,
    /// The trace `attrs` holds the site of (u64::MAX: none yet).
    attrs_trace: u64,
    time: u64,
    page_size: u64,
    /// Stack-tree nodes read and not yet written: first id, (parent, pc).
    frames: (u64, Vec<(u64, u64)>),
    attrs: Vec<u8>,
    comment: Vec<u8>,
    out: Option<Out>,
    /// The size and address of the event in `out`.
    size: u64,
    address: u64,
    done: bool,
}

impl<R: BufRead> InterpretedReader<R> {
    pub fn new(input: R) -> Self {
        InterpretedReader {
            lines: Lines::new(input),
            held: false,
            items: 0,
            started: false,
            raw: false,
            exe: String::new(),
            noted: false,
            version: 0,
            strings: Vec::new(),
            ips: Vec::new(),
            traces: 0,
            infos: Vec::new(),
            live: Vec::new(),
            addresses: SyntheticAddresses::new(),
            attrs_trace: u64::MAX,
            time: 0,
            page_size: 4096,
            frames: (1, Vec::new()),
            attrs: Vec::new(),
            comment: Vec::new(),
            out: None,
            size: 0,
            address: 0,
            done: false,
        }
    }

    fn err(&self, e: HeaptrackError) -> Error {
        self.lines.error("heaptrack", self.items, e)
    }

    fn note(&mut self, a: &Annotation) {
        self.comment.clear();
        self.comment.extend_from_slice(a.to_comment().as_bytes());
        self.out = Some(Out::Comment);
    }

    fn text_note(&mut self, text: &str) {
        self.comment.clear();
        self.comment.extend_from_slice(text.as_bytes());
        self.out = Some(Out::Comment);
    }

    /// Writes the stack-tree nodes read so far as one note.
    fn flush_frames(&mut self) {
        let first = self.frames.0;
        let nodes = std::mem::take(&mut self.frames.1);
        self.frames.0 = first + nodes.len() as u64;
        self.note(&Annotation::Frames { first, nodes });
    }

    /// Produces the next output, or `None` at the end.
    fn advance(&mut self) -> Result<bool, Error> {
        self.out = None;
        if !self.started {
            self.started = true;
            // Sites are stack-tree nodes (heaptrack keeps 64 frames at most).
            self.note(&Annotation::Process {
                pid: 0,
                ppid: 0,
                stack_depth: 64,
            });
            return Ok(true);
        }
        loop {
            if !self.held && (self.done || !self.lines.advance()?) {
                self.done = true;
                if !self.frames.1.is_empty() {
                    self.flush_frames();
                    return Ok(true);
                }
                return Ok(false);
            }
            self.held = false;
            let Some(&kind) = self.lines.line().first() else {
                continue; // an empty line
            };
            // Most lines are `+` and `-`, with no stack-tree nodes pending.
            if (kind == b'+' || kind == b'-') && self.frames.1.is_empty() {
                self.event(kind).map_err(|e| self.err(e))?;
                return Ok(true);
            }
            if kind != b't' && !self.frames.1.is_empty() {
                self.held = true;
                self.flush_frames();
                return Ok(true);
            }
            self.handle(kind).map_err(|e| self.err(e))?;
            if self.out.is_some() {
                return Ok(true);
            }
        }
    }

    /// A `+` or `-` line: an allocation or a free.
    #[inline]
    fn event(&mut self, kind: u8) -> Result<(), HeaptrackError> {
        if self.raw {
            return self.raw_event(kind);
        }
        let i = Fields::new(self.lines.line()).hex()?;
        if kind == b'+' {
            let &(size, trace) = self
                .infos
                .get(i as usize)
                .ok_or(HeaptrackError::Index("allocation info", i))?;
            let address = self
                .addresses
                .alloc(size)
                .ok_or(HeaptrackError::AddressSpace)?;
            self.live[i as usize].push(address);
            if trace != self.attrs_trace {
                self.attrs_trace = trace;
                encode_site(SITE_STACK, trace, &mut self.attrs);
            }
            (self.size, self.address) = (size, address);
            self.out = Some(Out::Alloc);
        } else {
            let live = self
                .live
                .get_mut(i as usize)
                .ok_or(HeaptrackError::Index("allocation info", i))?;
            // The most recent live block of the info; none (a file of an
            // attached process): a block never seen, freed.
            let address = match live.pop() {
                Some(a) => {
                    self.addresses.free(a, self.infos[i as usize].0);
                    a
                }
                None => self.addresses.fresh().ok_or(HeaptrackError::AddressSpace)?,
            };
            (self.size, self.address) = (0, address);
            self.out = Some(Out::Free);
        }
        Ok(())
    }

    /// A raw file's `+ SIZE TRACE PTR` or `- PTR` (a realloc is a `-`
    /// of the old block and a `+` of the new one).
    fn raw_event(&mut self, kind: u8) -> Result<(), HeaptrackError> {
        let mut f = Fields::new(self.lines.line());
        if kind == b'+' {
            let (size, trace, ptr) = (f.hex()?, f.hex()?, f.hex()?);
            if trace > self.traces {
                return Err(HeaptrackError::Index("trace", trace));
            }
            if trace != self.attrs_trace {
                self.attrs_trace = trace;
                encode_site(SITE_STACK, trace, &mut self.attrs);
            }
            (self.size, self.address) = (size, ptr);
            self.out = Some(Out::Alloc);
        } else {
            (self.size, self.address) = (0, f.hex()?);
            self.out = Some(Out::Free);
        }
        Ok(())
    }

    /// Handles the current line, whose first byte is `kind`.
    fn handle(&mut self, kind: u8) -> Result<(), HeaptrackError> {
        let line = self.lines.take();
        let r = self.handle_line(kind, &line);
        self.lines.put_back(line);
        r
    }

    fn handle_line(&mut self, kind: u8, line: &[u8]) -> Result<(), HeaptrackError> {
        let mut f = Fields::new(line);
        match kind {
            b'v' => {
                let _heaptrack = f.hex()?;
                self.version = f.hex_or(1)?;
                if self.version == 0 || self.version > MAX_FILE_VERSION {
                    return Err(HeaptrackError::Version(self.version));
                }
            }
            b'x' => {
                self.raw_line()?;
                let exe = if self.version >= 3 {
                    f.sized()?
                } else {
                    f.rest()
                };
                self.exe = String::from_utf8_lossy(exe).into_owned();
            }
            b'm' => {
                self.raw_line()?;
                let path = if self.version >= 3 {
                    f.sized()?
                } else {
                    f.next().unwrap_or(b"")
                };
                // `m 1 -`: the module cache was reset (nothing to say).
                if path != b"-" {
                    let path = if path == b"x" {
                        self.exe.clone()
                    } else {
                        String::from_utf8_lossy(path).into_owned()
                    };
                    let base = f.hex()?;
                    self.note(&Annotation::Module { base, path });
                }
            }
            b's' => {
                let s = if self.version >= 3 {
                    f.sized()?
                } else {
                    f.rest()
                };
                self.strings.push(String::from_utf8_lossy(s).into_owned());
            }
            b'i' => {
                let ip = f.hex()?;
                let module = f.hex()?;
                let mut place = Place {
                    address: ip,
                    module: self.string(module)?,
                    ..Place::default()
                };
                if let Some(function) = f.hex_opt()? {
                    place.function = self.string(function)?;
                    if let Some(file) = f.hex_opt()? {
                        place.file = self.string(file)?;
                        place.line = Some(line_number(f.hex()?)?);
                    }
                    while let Some(function) = f.hex_opt()? {
                        let file = f.hex()?;
                        let line = line_number(f.hex()?)?;
                        place.inlined.push(Inlined {
                            function: self.string(function)?,
                            file: self.string(file)?,
                            line: Some(line),
                        });
                    }
                }
                self.ips.push(ip);
                self.note(&Annotation::Symbol(place));
            }
            b't' => {
                let ip = f.hex()?;
                let parent = f.hex()?;
                // A raw file names the instruction pointer itself.
                let pc = if self.raw {
                    ip
                } else {
                    if ip == 0 || ip > self.ips.len() as u64 {
                        return Err(HeaptrackError::Index("instruction", ip));
                    }
                    self.ips[ip as usize - 1]
                };
                if parent > self.traces {
                    return Err(HeaptrackError::Index("trace", parent));
                }
                self.traces += 1;
                self.frames.1.push((parent, pc));
                if self.frames.1.len() >= FRAMES_PER_NOTE {
                    self.flush_frames();
                }
            }
            b'a' => {
                if self.raw {
                    return Err(HeaptrackError::Mixed);
                }
                let size = f.hex()?;
                let trace = f.hex()?;
                if trace > self.traces {
                    return Err(HeaptrackError::Index("trace", trace));
                }
                self.infos.push((size, trace));
                self.live.push(Vec::new());
                // The addresses of an interpreted file are made up; said
                // before its first allocation.
                if !std::mem::replace(&mut self.noted, true) {
                    self.text_note(SYNTHETIC_NOTE);
                }
            }
            b'+' | b'-' => self.event(kind)?,
            b'c' => {
                let ms = f.hex()?;
                self.time = ms.saturating_mul(1_000_000);
            }
            b'R' => {
                let pages = f.hex()?;
                self.note(&Annotation::Rss {
                    time: self.time,
                    bytes: pages.saturating_mul(self.page_size),
                });
            }
            b'I' => {
                self.page_size = f.hex()?;
                let _pages = f.hex()?;
                let text = format!("heaptrack: {}", String::from_utf8_lossy(line));
                self.text_note(&text);
            }
            b'S' => {
                let text = String::from_utf8_lossy(f.rest()).into_owned();
                self.note(&Annotation::LsanSuppressions(text + "\n"));
            }
            b'X' | b'A' => {
                let text = format!("heaptrack: {}", String::from_utf8_lossy(line));
                self.text_note(&text);
            }
            b'#' => {}
            _ => return Err(HeaptrackError::UnknownLine(kind as char)),
        }
        Ok(())
    }

    /// An `x` or `m` line: the file is raw, which an interpreted file's
    /// allocation infos, read already, contradict.
    fn raw_line(&mut self) -> Result<(), HeaptrackError> {
        if self.noted {
            return Err(HeaptrackError::Mixed);
        }
        self.raw = true;
        Ok(())
    }

    /// The string of a 1-based index (0: none).
    fn string(&self, i: u64) -> Result<Option<String>, HeaptrackError> {
        if i == 0 {
            return Ok(None);
        }
        self.strings
            .get(i as usize - 1)
            .map(|s| Some(s.clone()))
            .ok_or(HeaptrackError::Index("string", i))
    }

    /// The next item, or `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        if !self.advance()? {
            return Ok(None);
        }
        self.items += 1;
        Ok(match self.out {
            Some(out @ (Out::Alloc | Out::Free)) => {
                let alloc = out == Out::Alloc;
                Some(Item::Event(Event {
                    kind: if alloc {
                        EventKind::Alloc
                    } else {
                        EventKind::Free
                    },
                    size: self.size,
                    address: self.address,
                    new_address: 0,
                    thread: 0,
                    heap: 0,
                    time: self.time,
                    attributes: if alloc { &self.attrs } else { &[] },
                }))
            }
            Some(Out::Comment) => Some(Item::Comment(&self.comment)),
            None => None,
        })
    }

    pub fn position(&self) -> Position {
        self.lines.next(self.items)
    }
}

impl<R: BufRead> ReadItems for InterpretedReader<R> {
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        InterpretedReader::next_item(self)
    }

    fn position(&self) -> Position {
        InterpretedReader::position(self)
    }
}

fn line_number(v: u64) -> Result<u32, HeaptrackError> {
    u32::try_from(v).map_err(|_| HeaptrackError::Number)
}

/// The space-separated fields after a line's kind.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn new(line: &'a [u8]) -> Self {
        Fields {
            rest: line.get(1..).unwrap_or(&[]),
        }
    }

    /// The next field, if any (one separating space skipped).
    fn next(&mut self) -> Option<&'a [u8]> {
        let r = self.rest.strip_prefix(b" ")?;
        let end = r.iter().position(|&b| b == b' ').unwrap_or(r.len());
        let (field, rest) = r.split_at(end);
        self.rest = rest;
        (!field.is_empty()).then_some(field)
    }

    fn hex_opt(&mut self) -> Result<Option<u64>, HeaptrackError> {
        match self.next() {
            None => Ok(None),
            Some(f) => parse_hex(f).map(Some),
        }
    }

    fn hex(&mut self) -> Result<u64, HeaptrackError> {
        self.hex_opt()?.ok_or(HeaptrackError::Missing)
    }

    fn hex_or(&mut self, default: u64) -> Result<u64, HeaptrackError> {
        Ok(self.hex_opt()?.unwrap_or(default))
    }

    /// A sized string: its length in hex, a space, that many bytes.
    fn sized(&mut self) -> Result<&'a [u8], HeaptrackError> {
        let n = self.hex()? as usize;
        let r = self
            .rest
            .strip_prefix(b" ")
            .ok_or(HeaptrackError::Missing)?;
        if r.len() < n {
            return Err(HeaptrackError::ShortString(n, r.len()));
        }
        let (s, rest) = r.split_at(n);
        self.rest = rest;
        Ok(s)
    }

    /// The rest of the line after one space.
    fn rest(&mut self) -> &'a [u8] {
        let r = self.rest.strip_prefix(b" ").unwrap_or(self.rest);
        self.rest = &[];
        r
    }
}

fn parse_hex(f: &[u8]) -> Result<u64, HeaptrackError> {
    if f.len() > 16 {
        return Err(HeaptrackError::Number);
    }
    let mut v: u64 = 0;
    for &b in f {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(HeaptrackError::Number),
        };
        v = (v << 4) | d as u64;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Result<Vec<String>, Error> {
        let mut r = InterpretedReader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(item) = r.next_item()? {
            out.push(match item {
                Item::Event(e) => format!(
                    "{} size={} address={:#x} time={} attrs={:?}",
                    e.kind.name(),
                    e.size,
                    e.address,
                    e.time,
                    e.attributes
                ),
                Item::Comment(c) => String::from_utf8_lossy(c).into_owned(),
                Item::Meta(_) => "meta".into(),
            });
        }
        Ok(out)
    }

    #[test]
    fn a_free_ends_the_most_recent_live_block_of_its_info() {
        let text = "v 10400 3\ns 4 main\ns 6 prog.c\ni 401000 0 1 2 a\nt 1 0\na 10 1\n\
                    + 0\n+ 0\nc a\n- 0\n- 0\n";
        let got = items(text).unwrap();
        let events: Vec<&String> = got.iter().filter(|l| !l.starts_with("tramp:")).collect();
        assert_eq!(
            events,
            vec![
                "alloc size=16 address=0x10000000 time=0 attrs=[2, 1]",
                "alloc size=16 address=0x10000010 time=0 attrs=[2, 1]",
                // LIFO: the second block first; 0xa ms.
                "free size=0 address=0x10000010 time=10000000 attrs=[]",
                "free size=0 address=0x10000000 time=10000000 attrs=[]",
            ]
        );
        assert!(
            got.contains(&"tramp:frames 1 0 0x401000".to_string()),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|l| l.starts_with("tramp:symbol 0x401000\t\t\tmain\tprog.c\t10")),
            "{got:?}"
        );
    }

    #[test]
    fn damage_names_its_line() {
        let e = items("v 10400 3\na 10 5\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("trace"), "{e}");
        let e = items("v 10400 3\n+ zz\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = items("v 10400 3\ns 40 short\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = items("v 10400 9\n").unwrap_err().to_string();
        assert!(e.contains("version 9"), "{e}");
        // An interpreted file's info, then a raw file's module line.
        let e = items("v 10400 3\na 10 0\nm 1 x 400000\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("raw"), "{e}");
    }
}
