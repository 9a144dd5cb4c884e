//! Reading a byte stream into a buffer until it is full or the stream
//! ends: the one loop every fixed-size header read needs (a `read` may
//! return fewer bytes than asked, and `read_exact` cannot say how many it
//! got before the end).

use std::io::{self, Read};

/// Reads until `buf` is full or the input ends: the bytes read (fewer
/// than `buf.len()` only at the end of the input). An interrupted read is
/// tried again.
pub fn fill(input: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    #[test]
    fn fills_across_short_reads_and_stops_at_the_end() {
        // A reader that gives one byte a call.
        struct Trickle<'a>(&'a [u8]);
        impl std::io::Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(1);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut buf = [0u8; 4];
        assert_eq!(super::fill(&mut Trickle(b"abcdef"), &mut buf).unwrap(), 4);
        assert_eq!(&buf, b"abcd");
        assert_eq!(super::fill(&mut Trickle(b"xy"), &mut buf).unwrap(), 2);
    }
}
