//! glibc's mtrace log as HATF items.
//!
//! Lines (glibc malloc/mtrace-impl.c): `= Start` and `= End`; otherwise an
//! optional caller tag — `@ FILE:(SYMBOL±OFFSET)[0xOFF] `, `@ FILE:[0xOFF] `
//! (OFF from the module's load address), or `@ [0xADDRESS] ` — then
//! `+ PTR SIZE` (malloc, calloc, memalign, `realloc(NULL, n)`), `- PTR`
//! (free, `realloc(p, 0)`), `< OLD` followed by `> NEW SIZE` (a realloc
//! that succeeded) or `! OLD SIZE` (one that failed). Pointers are `%p`
//! (`0x…`, or `(nil)` for a failed allocation), sizes `%#lx`.
//!
//! The log has no times and no threads. Each caller's module gets a
//! synthetic load address (module k at (k + 1) × 2⁴⁰) announced by a
//! `tramp:module` note, so a site is that base plus the caller's offset
//! and tramp's symbolizer names it from the module's file when it is on
//! this machine (docs/formats/mtrace.md).

use std::collections::VecDeque;
use std::io::BufRead;

use rustc_hash::FxHashMap;
use tramp_core::lines::Lines;
use tramp_core::site::{SITE_RETURN_ADDRESS, encode_site};
use tramp_core::{Error, Position};
use tramp_hatf::records::ReadItems;
use tramp_hatf::{Event, EventKind, Item};
use tramp_symbols::Annotation;

use crate::error::AllocTraceError;

/// Synthetic load addresses are multiples of this.
pub const MODULE_SPACING: u64 = 1 << 40;

/// One item the reader has ready.
enum Ready {
    Event(EventKind, u64, u64, u64, u64),
    Comment(String),
}

/// Reads an mtrace log as HATF items.
pub struct MtraceReader<R> {
    lines: Lines<R>,
    items: u64,
    started: bool,
    /// Module path → synthetic base.
    modules: FxHashMap<String, u64>,
    /// The events so far: the time of the next (a logical clock).
    events: u64,
    ready: VecDeque<Ready>,
    attrs: Vec<u8>,
    comment: Vec<u8>,
    /// A `<` line waiting for its `>`: (old pointer, site).
    pending: Option<(u64, u64)>,
}

impl<R: BufRead> MtraceReader<R> {
    pub fn new(input: R) -> Self {
        MtraceReader {
            lines: Lines::new(input),
            items: 0,
            started: false,
            modules: FxHashMap::default(),
            events: 0,
            ready: VecDeque::new(),
            attrs: Vec::new(),
            comment: Vec::new(),
            pending: None,
        }
    }

    fn err(&self, e: AllocTraceError) -> Error {
        self.lines.error("mtrace", self.items, e)
    }

    fn event(&mut self, kind: EventKind, size: u64, address: u64, new: u64, site: u64) {
        self.ready
            .push_back(Ready::Event(kind, size, address, new, site));
    }

    /// The site of a caller tag (0: none), announcing its module first.
    fn site(&mut self, tag: &str) -> Result<u64, AllocTraceError> {
        // `FILE:(SYM±OFF)[0xOFF]`, `FILE:[0xOFF]` or `[0xADDRESS]`.
        let open = tag.rfind('[').ok_or(AllocTraceError::CallerTag)?;
        let inner = tag[open + 1..]
            .strip_suffix(']')
            .ok_or(AllocTraceError::CallerTag)?;
        let value = hex(inner)?;
        let head = &tag[..open];
        if head.is_empty() {
            return Ok(value);
        }
        // The file is what comes before the last `:` ahead of the symbol.
        let file = match head.find(":(") {
            Some(i) => &head[..i],
            None => head.strip_suffix(':').unwrap_or(head),
        };
        let next = (self.modules.len() as u64 + 1) * MODULE_SPACING;
        let base = match self.modules.get(file) {
            Some(&b) => b,
            None => {
                self.modules.insert(file.to_string(), next);
                let note = Annotation::Module {
                    base: next,
                    path: file.to_string(),
                };
                self.ready.push_back(Ready::Comment(note.to_comment()));
                next
            }
        };
        Ok(base.wrapping_add(value))
    }

    fn handle(&mut self) -> Result<(), AllocTraceError> {
        let text = String::from_utf8_lossy(self.lines.line()).into_owned();
        let mut rest = text.as_str();
        if rest.is_empty() {
            return Ok(());
        }
        if let Some(r) = rest.strip_prefix("= ") {
            self.ready
                .push_back(Ready::Comment(format!("mtrace: = {r}")));
            return Ok(());
        }
        let mut site = 0;
        if let Some(r) = rest.strip_prefix("@ ") {
            // The tag ends at the `] ` before the operation.
            let end = r.find("] ").ok_or(AllocTraceError::CallerTag)?;
            site = self.site(&r[..end + 1])?;
            rest = &r[end + 2..];
        }
        let mut f = rest.split(' ');
        let op = f.next().unwrap_or("");
        let mut field = || f.next().ok_or(AllocTraceError::Missing);
        if let Some((old, old_site)) = self.pending.take() {
            if op != ">" {
                return Err(AllocTraceError::UnpairedRealloc);
            }
            let new = pointer(field()?)?;
            let size = hex(field()?)?;
            let time = self.events;
            if new == old {
                self.event(EventKind::ReallocNoAlloc, size, old, new, old_site);
            } else {
                self.event(EventKind::ReallocAllocFree, size, old, new, old_site);
                self.event(EventKind::Alloc, size, new, 0, old_site);
                self.event(EventKind::Free, 0, old, 0, 0);
            }
            self.events = time + 1;
            return Ok(());
        }
        match op {
            "+" => {
                let ptr = pointer(field()?)?;
                let size = hex(field()?)?;
                // `(nil)`: the allocation failed, nothing changed.
                if ptr != 0 {
                    self.event(EventKind::Alloc, size, ptr, 0, site);
                    self.events += 1;
                }
            }
            "-" => {
                let ptr = pointer(field()?)?;
                self.event(EventKind::Free, 0, ptr, 0, 0);
                self.events += 1;
            }
            "<" => {
                let old = pointer(field()?)?;
                self.pending = Some((old, site));
            }
            "!" => {
                // A failed realloc: the old block stays.
                let old = pointer(field()?)?;
                let size = hex(field()?)?;
                self.ready.push_back(Ready::Comment(format!(
                    "mtrace: realloc of {old:#x} to {size} bytes failed"
                )));
            }
            _ => return Err(AllocTraceError::UnknownLine(text.clone())),
        }
        Ok(())
    }

    /// The next item, or `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        if !self.started {
            self.started = true;
            // Sites are return addresses (no stacks).
            let note = Annotation::Process {
                pid: 0,
                ppid: 0,
                stack_depth: 0,
            };
            self.ready.push_back(Ready::Comment(note.to_comment()));
        }
        while self.ready.is_empty() {
            if !self.lines.advance()? {
                if self.pending.is_some() {
                    return Err(self.err(AllocTraceError::UnpairedRealloc));
                }
                return Ok(None);
            }
            self.handle().map_err(|e| self.err(e))?;
        }
        self.items += 1;
        Ok(match self.ready.pop_front() {
            Some(Ready::Event(kind, size, address, new_address, site)) => {
                self.attrs.clear();
                if site != 0 && kind != EventKind::Free {
                    encode_site(SITE_RETURN_ADDRESS, site, &mut self.attrs);
                }
                Some(Item::Event(Event {
                    kind,
                    size,
                    address,
                    new_address,
                    thread: 0,
                    heap: 0,
                    time: self.events,
                    attributes: &self.attrs,
                }))
            }
            Some(Ready::Comment(text)) => {
                self.comment = text.into_bytes();
                Some(Item::Comment(&self.comment))
            }
            None => None,
        })
    }

    pub fn position(&self) -> Position {
        self.lines.next(self.items)
    }
}

impl<R: BufRead> ReadItems for MtraceReader<R> {
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        MtraceReader::next_item(self)
    }

    fn position(&self) -> Position {
        MtraceReader::position(self)
    }
}

/// A `%p` pointer: `0x…`, or `(nil)` for null.
fn pointer(t: &str) -> Result<u64, AllocTraceError> {
    if t == "(nil)" {
        return Ok(0);
    }
    hex(t)
}

/// A hexadecimal number with or without `0x` (`%#lx` prints 0 as `0`).
fn hex(t: &str) -> Result<u64, AllocTraceError> {
    let d = t.strip_prefix("0x").unwrap_or(t);
    if d.is_empty() || d.len() > 16 {
        return Err(AllocTraceError::Number(t.to_string()));
    }
    u64::from_str_radix(d, 16).map_err(|_| AllocTraceError::Number(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<String>, Error> {
        let mut r = MtraceReader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(item) = r.next_item()? {
            out.push(match item {
                Item::Event(e) => format!(
                    "{} size={} address={:#x} new={:#x} site={:?}",
                    e.kind.name(),
                    e.size,
                    e.address,
                    e.new_address,
                    tramp_core::site::decode_site(e.attributes).map(|s| s.value)
                ),
                Item::Comment(c) => String::from_utf8_lossy(c).into_owned(),
                Item::Meta(_) => "meta".into(),
            });
        }
        Ok(out)
    }

    #[test]
    fn each_line_is_what_glibc_wrote() {
        let got = read(
            "= Start\n@ ./prog:[0x11a0] + 0x5000 0xa\n@ ./prog:(main+0x20)[0x11c8] < 0x5000\n\
             @ ./prog:(main+0x20)[0x11c8] > 0x6000 0x64\n@ [0x7f0000001000] - 0x6000\n\
             + (nil) 0x10\n@ /lib/libc.so.6:[0x99] ! 0x7000 0x20\n= End\n",
        )
        .unwrap();
        let base = MODULE_SPACING;
        assert_eq!(
            got,
            vec![
                "tramp:process pid=0 ppid=0 stack=0".to_string(),
                "mtrace: = Start".into(),
                format!("tramp:module {base:#x} ./prog"),
                format!(
                    "alloc size=10 address=0x5000 new=0x0 site=Some({})",
                    base + 0x11a0
                ),
                format!(
                    "realloc/alloc-free size=100 address=0x5000 new=0x6000 site=Some({})",
                    base + 0x11c8
                ),
                format!(
                    "alloc size=100 address=0x6000 new=0x0 site=Some({})",
                    base + 0x11c8
                ),
                "free size=0 address=0x5000 new=0x0 site=None".into(),
                "free size=0 address=0x6000 new=0x0 site=None".into(),
                format!("tramp:module {:#x} /lib/libc.so.6", 2 * base),
                "mtrace: realloc of 0x7000 to 32 bytes failed".into(),
                "mtrace: = End".into(),
            ]
        );
    }

    #[test]
    fn damage_names_its_line() {
        let e = read("= Start\n+ 0x10 zz\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("zz"), "{e}");
        let e = read("= Start\n< 0x10\n- 0x10\n").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = read("= Start\n< 0x10\n").unwrap_err().to_string();
        assert!(e.contains("`<`"), "{e}");
        let e = read("hello\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
