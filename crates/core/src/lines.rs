//! Lines of a text trace with where each is: the one line reader of the
//! text formats other tools write (heaptrack, mtrace, Android's
//! record_allocs, wee_alloc), so that damage is reported the same way in
//! each: its line, byte offset and record.

use std::io::BufRead;

use crate::error::{Error, Position};

/// Reads lines, keeping the current one (without its line break), its
/// 1-based number and byte offset.
pub struct Lines<R> {
    input: R,
    line: Vec<u8>,
    number: u64,
    offset: u64,
    next_offset: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(input: R) -> Self {
        Lines {
            input,
            line: Vec::new(),
            number: 0,
            offset: 0,
            next_offset: 0,
        }
    }

    /// Reads the next line; false at the end.
    #[inline]
    pub fn advance(&mut self) -> Result<bool, Error> {
        self.line.clear();
        let n = self.input.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Ok(false);
        }
        self.offset = self.next_offset;
        self.next_offset += n as u64;
        self.number += 1;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        }
        Ok(true)
    }

    /// The current line.
    #[inline]
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// Takes the current line out (to read it while changing the reader),
    /// to be given back with [`Lines::put_back`].
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.line)
    }

    pub fn put_back(&mut self, line: Vec<u8>) {
        self.line = line;
    }

    /// Where the current line is, as record `record`: for errors.
    pub fn here(&self, record: u64) -> Position {
        Position {
            offset: self.offset,
            record,
            line: self.number,
        }
    }

    /// Where the next line starts: a source's position.
    pub fn next(&self, record: u64) -> Position {
        Position {
            offset: self.next_offset,
            record,
            line: self.number,
        }
    }

    /// A decode error of `format` at the current line.
    pub fn error(
        &self,
        format: &'static str,
        record: u64,
        cause: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Error {
        Error::decode(format, self.here(record), cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_knows_where_it_is() {
        let mut l = Lines::new(&b"ab\ncde\n\nf"[..]);
        let mut seen = Vec::new();
        while l.advance().unwrap() {
            seen.push((l.line().to_vec(), l.here(0).line, l.here(0).offset));
        }
        assert_eq!(
            seen,
            vec![
                (b"ab".to_vec(), 1, 0),
                (b"cde".to_vec(), 2, 3),
                (b"".to_vec(), 3, 7),
                (b"f".to_vec(), 4, 8),
            ]
        );
        assert_eq!(l.next(5).offset, 9);
    }
}
