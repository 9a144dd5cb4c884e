//! wee_alloc's allocation traces (rustwasm/wee_alloc test/traces/*.trace):
//! one operation a line, `Alloc(SIZE),` or `Free(K),` where K is the
//! 0-based ordinal of the allocation it frees. No addresses, threads or
//! times: blocks get synthetic addresses (`tramp_core::synthetic`, the
//! trace marked so) and the time is the number of operations before.
//! docs/formats/weealloc.md.

use std::io::BufRead;

use rustc_hash::FxHashMap;
use tramp_core::lines::Lines;
use tramp_core::synthetic::{SYNTHETIC_NOTE, SyntheticAddresses};
use tramp_core::{Error, Position};
use tramp_hatf::records::ReadItems;
use tramp_hatf::{Event, EventKind, Item};

use crate::error::AllocTraceError;

/// Reads a wee_alloc trace as HATF items.
pub struct WeeAllocReader<R> {
    lines: Lines<R>,
    items: u64,
    started: bool,
    /// Allocations so far (the next one's ordinal).
    allocs: u64,
    /// Live blocks by ordinal: address, size.
    live: FxHashMap<u64, (u64, u64)>,
    addresses: SyntheticAddresses,
    event: Event<'static>,
}

impl<R: BufRead> WeeAllocReader<R> {
    pub fn new(input: R) -> Self {
        WeeAllocReader {
            lines: Lines::new(input),
            items: 0,
            started: false,
            allocs: 0,
            live: FxHashMap::default(),
            addresses: SyntheticAddresses::new(),
            event: Event::new(EventKind::Alloc),
        }
    }

    fn err(&self, e: AllocTraceError) -> Error {
        self.lines.error("wee_alloc", self.items, e)
    }

    /// The operation of the current line, if it has one.
    fn handle(&mut self) -> Result<bool, AllocTraceError> {
        let text = String::from_utf8_lossy(self.lines.line());
        let t = text.trim();
        if t.is_empty() {
            return Ok(false);
        }
        let t = t.strip_suffix(',').unwrap_or(t);
        let (op, arg) = t
            .strip_suffix(')')
            .and_then(|t| t.split_once('('))
            .ok_or_else(|| AllocTraceError::UnknownLine(t.to_string()))?;
        let n: u64 = arg
            .trim()
            .parse()
            .map_err(|_| AllocTraceError::Number(arg.to_string()))?;
        let time = self.items;
        match op.trim() {
            "Alloc" => {
                let address = self.addresses.alloc(n).ok_or(AllocTraceError::Missing)?;
                self.live.insert(self.allocs, (address, n));
                self.allocs += 1;
                let mut e = Event::new(EventKind::Alloc);
                (e.size, e.address, e.time) = (n, address, time);
                self.event = e;
            }
            "Free" => {
                let (address, size) = self.live.remove(&n).ok_or(AllocTraceError::NotLive(n))?;
                self.addresses.free(address, size);
                let mut e = Event::new(EventKind::Free);
                (e.address, e.time) = (address, time);
                self.event = e;
            }
            _ => return Err(AllocTraceError::UnknownLine(t.to_string())),
        }
        Ok(true)
    }

    /// The next item, or `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        if !self.started {
            self.started = true;
            self.items += 1;
            return Ok(Some(Item::Comment(SYNTHETIC_NOTE.as_bytes())));
        }
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            if self.handle().map_err(|e| self.err(e))? {
                self.items += 1;
                return Ok(Some(Item::Event(self.event)));
            }
        }
    }

    pub fn position(&self) -> Position {
        self.lines.next(self.items)
    }
}

impl<R: BufRead> ReadItems for WeeAllocReader<R> {
    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        WeeAllocReader::next_item(self)
    }

    fn position(&self) -> Position {
        WeeAllocReader::position(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_core::synthetic::FIRST_ADDRESS;

    fn read(text: &str) -> Result<Vec<String>, Error> {
        let mut r = WeeAllocReader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(item) = r.next_item()? {
            out.push(match item {
                Item::Event(e) => format!("{} {} {:#x}", e.kind.name(), e.size, e.address),
                Item::Comment(c) => String::from_utf8_lossy(c).into_owned(),
                Item::Meta(_) => "meta".into(),
            });
        }
        Ok(out)
    }

    #[test]
    fn free_names_the_kth_allocation() {
        let got =
            read("Alloc(10),\nAlloc(40),\nFree(0),\nAlloc(12),\nFree(2),\nFree(1),\n").unwrap();
        let a = |o: u64| format!("{:#x}", FIRST_ADDRESS + o);
        assert_eq!(
            got,
            vec![
                SYNTHETIC_NOTE.to_string(),
                format!("alloc 10 {}", a(0)),
                format!("alloc 40 {}", a(16)),
                format!("free 0 {}", a(0)),
                // The third allocation takes the first's freed address.
                format!("alloc 12 {}", a(0)),
                format!("free 0 {}", a(0)),
                format!("free 0 {}", a(16)),
            ]
        );
    }

    #[test]
    fn damage_names_its_line() {
        for (text, what) in [
            ("Alloc(1),\nFree(3),\n", "line 2"),
            ("Alloc(1),\nFree(0),\nFree(0),\n", "line 3"),
            ("Alloc(x),\n", "line 1"),
            ("Realloc(1),\n", "line 1"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(what), "{text:?}: {e}");
        }
    }
}
