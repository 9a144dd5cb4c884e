//! Text lines built without formatting machinery: the one writer of the
//! line formats tramp exports for other tools (heaptrack's events,
//! Android's record_allocs), where a line is a few numbers and `write!`
//! would be most of the time taken. Lines gather in a buffer that goes to
//! the output when it is full.

use std::io::{self, Write};

/// Bytes gathered before they go to the output.
const FLUSH_AT: usize = 1 << 16;

/// A buffer of text lines in front of an output.
#[derive(Debug, Default)]
pub struct LineBuf {
    buf: Vec<u8>,
}

impl LineBuf {
    pub fn new() -> LineBuf {
        LineBuf {
            buf: Vec::with_capacity(FLUSH_AT + 128),
        }
    }

    /// Appends bytes as they are.
    #[inline]
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    /// Appends a number in decimal.
    #[inline]
    pub fn dec(&mut self, v: u64) -> &mut Self {
        let mut f = itoa::Buffer::new();
        self.buf.extend_from_slice(f.format(v).as_bytes());
        self
    }

    /// Appends a number in lower-case hexadecimal, without `0x`.
    #[inline]
    pub fn hex(&mut self, v: u64) -> &mut Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        // All sixteen digits, then the copy starts at the first one that
        // counts (a fixed-length copy: no call to memcpy).
        let mut b = [0u8; 16];
        for (k, d) in b.iter_mut().enumerate() {
            *d = DIGITS[((v >> (60 - 4 * k)) & 15) as usize];
        }
        let digits = ((64 - v.leading_zeros() as usize).div_ceil(4)).max(1);
        let n = self.buf.len();
        self.buf.extend_from_slice(&b);
        self.buf.copy_within(n + 16 - digits..n + 16, n);
        self.buf.truncate(n + digits);
        self
    }

    /// Ends the line, and sends what is gathered to `out` when it is full.
    #[inline]
    pub fn end<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_AT {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Sends everything gathered to `out`.
    pub fn flush<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn numbers_read_as_format_writes_them(vs in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut out = Vec::new();
            let mut l = LineBuf::new();
            let mut want = String::new();
            for &v in &vs {
                l.bytes(b"x ").dec(v).bytes(b" 0x").hex(v);
                l.end(&mut out).unwrap();
                want.push_str(&format!("x {v} {v:#x}\n"));
            }
            l.flush(&mut out).unwrap();
            prop_assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn a_full_buffer_goes_out_whole_lines_at_a_time() {
        let mut out = Vec::new();
        let mut l = LineBuf::new();
        let mut lines = 0;
        while out.is_empty() {
            l.hex(u64::MAX).end(&mut out).unwrap();
            lines += 1;
        }
        assert_eq!(out.len(), lines * 17);
        assert!(out.len() >= FLUSH_AT);
    }
}
