//! valgrind lackey's memory trace (`valgrind --tool=lackey --trace-mem=yes
//! --log-file=F PROG`): one access a line, `I  ADDR,SIZE` for an
//! instruction fetch and ` L`, ` S`, ` M` (load, store, modify) for data,
//! the address in hexadecimal without `0x`, the size in decimal bytes.
//! valgrind's own `==PID==` lines are skipped. Any other line is damage:
//! a program's output mixed into the log (lackey writes to stderr unless
//! given `--log-file`) would otherwise become wrong accesses.
//! docs/formats/lackey.md.

use std::io::BufRead;

use crate::error::MemTraceError;
use crate::reader::{AccessLines, Parsed};
use crate::schema::{Access, hex, size};

/// Reads a lackey log as memory-access records.
pub type LackeyReader<R> = AccessLines<R>;

/// A lackey reader over `input`.
pub fn reader<R: BufRead>(input: R) -> LackeyReader<R> {
    AccessLines::new(input, "lackey", parse)
}

/// The access of one line, `None` for valgrind's own lines.
#[inline]
pub fn parse(line: &[u8]) -> Result<Parsed, MemTraceError> {
    let bad = || MemTraceError::LackeyLine(String::from_utf8_lossy(line).into_owned());
    let (access, rest) = match line {
        [b'I', b' ', b' ', rest @ ..] => (Access::Fetch, rest),
        [b' ', b'L', b' ', rest @ ..] => (Access::Load, rest),
        [b' ', b'S', b' ', rest @ ..] => (Access::Store, rest),
        [b' ', b'M', b' ', rest @ ..] => (Access::Modify, rest),
        [b'=', b'=', ..] => return Ok(None),
        _ => return Err(bad()),
    };
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    let comma = rest.iter().position(|&b| b == b',').ok_or_else(bad)?;
    let (a, s) = (&rest[..comma], &rest[comma + 1..]);
    let address =
        hex(a).ok_or_else(|| MemTraceError::Address(String::from_utf8_lossy(a).into_owned()))?;
    let size =
        size(s).ok_or_else(|| MemTraceError::Size(String::from_utf8_lossy(s).into_owned()))?;
    Ok(Some((access, address, Some(size))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_core::{Error, Source};

    fn read(text: &str) -> Result<Vec<String>, Error> {
        crate::reader::describe(text, parse)
    }

    #[test]
    fn each_access_line_is_a_record_and_valgrinds_lines_are_skipped() {
        let log = "==123== Lackey, an example Valgrind tool\n==123== \nI  004014f0,2\n L 1fff000add,8\n S 0047c796,32\n M 00400000,4\n==123== Counted 1 call to main()\n";
        assert_eq!(
            read(log).unwrap(),
            vec![
                "fetch 0x4014f0 2",
                "load 0x1fff000add 8",
                "store 0x47c796 32",
                "modify 0x400000 4"
            ]
        );
    }

    #[test]
    fn damage_names_its_line_and_keeps_what_came_before() {
        let log = "I  004014f0,2\nhello from the program\n L 10,4\n";
        let mut r = reader(log.as_bytes());
        assert!(r.next_record().unwrap().is_some());
        let e = r.next_record().unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("hello from the program"),
            "{e}"
        );
        for bad in [
            " L 10,0\n",
            " L 10,x\n",
            " L 1g,4\n",
            " L 10\n",
            " L 11112222333344445,4\n",
        ] {
            assert!(read(bad).is_err(), "{bad:?}");
        }
    }
}
