//! The ASCII form (the paper's Table 4): one line per record — the type as
//! its HATF tag, the size in decimal (allocs and reallocs), the addresses
//! in hexadecimal without `0x`:
//!
//! ```text
//! 0 24 55550000          alloc size address
//! 1 55550000             free address
//! 3 100 55550000 55560000  realloc size old new (tags 2-5)
//! ```

use std::io::{self, BufRead, Write};

use tramp_hatf::{Event, EventKind, Item};

use crate::content::paper_event;

/// Writes one event as a line.
pub fn write_line(out: &mut impl Write, e: &Event<'_>) -> io::Result<()> {
    match e.kind {
        EventKind::Alloc => writeln!(out, "0 {} {:x}", e.size, e.address),
        EventKind::Free => writeln!(out, "1 {:x}", e.address),
        k => writeln!(
            out,
            "{} {} {:x} {:x}",
            k.tag(),
            e.size,
            e.address,
            e.new_address
        ),
    }
}

fn bad(line: u64, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("ASCII line {line}: {why}"),
    )
}

/// Parses one line (without its newline).
pub fn parse_line(s: &str, line: u64) -> io::Result<Event<'static>> {
    let mut it = s.split(' ');
    let mut next = |what: &str| it.next().ok_or_else(|| bad(line, &format!("no {what}")));
    let tag: u8 = next("type")?.parse().map_err(|_| bad(line, "bad type"))?;
    let kind = EventKind::from_tag(tag)
        .filter(|_| tag <= 5)
        .ok_or_else(|| bad(line, "unknown type"))?;
    let dec = |s: &str| s.parse::<u64>().map_err(|_| bad(line, "bad size"));
    let hex = |s: &str| u64::from_str_radix(s, 16).map_err(|_| bad(line, "bad address"));
    let mut e = Event::new(kind);
    match kind {
        EventKind::Alloc => {
            e.size = dec(next("size")?)?;
            e.address = hex(next("address")?)?;
        }
        EventKind::Free => e.address = hex(next("address")?)?,
        _ => {
            e.size = dec(next("size")?)?;
            e.address = hex(next("old address")?)?;
            e.new_address = hex(next("new address")?)?;
        }
    }
    if it.next().is_some() {
        return Err(bad(line, "extra fields"));
    }
    Ok(paper_event(&Item::Event(e)).expect("a paper type"))
}

/// Reads ASCII records line by line.
pub struct AsciiReader<R: BufRead> {
    input: R,
    line: String,
    number: u64,
}

impl<R: BufRead> AsciiReader<R> {
    pub fn new(input: R) -> Self {
        AsciiReader {
            input,
            line: String::new(),
            number: 0,
        }
    }

    pub fn next_event(&mut self) -> io::Result<Option<Event<'static>>> {
        self.line.clear();
        if self.input.read_line(&mut self.line)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        let Some(l) = self.line.strip_suffix('\n') else {
            return Err(bad(self.number, "cut short (no newline)"));
        };
        parse_line(l, self.number).map(Some)
    }
}
