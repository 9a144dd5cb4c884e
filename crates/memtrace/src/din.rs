//! Dinero IV's `din` input: one access a line, `LABEL ADDRESS`, where the
//! label is 0 (data read), 1 (data write), 2 (instruction fetch), 3
//! (escape: an access of unknown kind) or 4 (escape: flush the cache), and
//! the address is hexadecimal (an optional `0x` is accepted); anything
//! after the address is ignored, as Dinero ignores it. din has no sizes:
//! the records' size is absent (a cache simulator takes one byte).
//! docs/formats/din.md.

use std::io::BufRead;

use crate::error::MemTraceError;
use crate::reader::{AccessLines, Parsed};
use crate::schema::{Access, hex};

/// Reads a din trace as memory-access records.
pub type DinReader<R> = AccessLines<R>;

/// A din reader over `input`.
pub fn reader<R: BufRead>(input: R) -> DinReader<R> {
    AccessLines::new(input, "din", parse)
}

/// The access of one line; `None` for a blank line.
pub fn parse(line: &[u8]) -> Result<Parsed, MemTraceError> {
    let bad = || MemTraceError::DinLine(String::from_utf8_lossy(line).into_owned());
    let mut words = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let Some(label) = words.next() else {
        return Ok(None);
    };
    let access = match label {
        b"0" => Access::Load,
        b"1" => Access::Store,
        b"2" => Access::Fetch,
        b"3" => Access::Unknown,
        b"4" => Access::Flush,
        _ => return Err(bad()),
    };
    let a = words.next().ok_or_else(bad)?;
    let digits = a
        .strip_prefix(b"0x")
        .or_else(|| a.strip_prefix(b"0X"))
        .unwrap_or(a);
    let address = hex(digits)
        .ok_or_else(|| MemTraceError::Address(String::from_utf8_lossy(a).into_owned()))?;
    Ok(Some((access, address, None)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_core::Error;

    fn read(text: &str) -> Result<Vec<String>, Error> {
        crate::reader::describe(text, parse)
    }

    #[test]
    fn labels_name_the_access() {
        let t = "2 400100\n0 7ffe1000 ignored words\n1 0x10\n\n3 20\n4 0\n";
        assert_eq!(
            read(t).unwrap(),
            vec![
                "fetch 0x400100",
                "load 0x7ffe1000",
                "store 0x10",
                "unknown 0x20",
                "flush 0x0"
            ]
        );
    }

    #[test]
    fn damage_names_its_line() {
        let e = read("0 10\n5 10\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`5 10`"), "{e}");
        assert!(read("0\n").is_err());
        assert!(read("0 zz\n").is_err());
    }
}
