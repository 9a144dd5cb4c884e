//! The byte window every binary reader decodes from: the unconsumed bytes
//! of the input, refilled on demand, with the absolute offset of their
//! first byte. One [`Window`] over two kinds of storage: [`Stream`] (the
//! window's own buffer over any `Read`, moving the tail to the front and
//! growing only as far as a reader asks) and [`Slice`] (bytes already in
//! memory, where records borrow straight from the caller's bytes).
//!
//! A reader asks for what it needs next ([`Window::fill`]), decodes from
//! [`Window::buffered`], and [`Window::consume`]s what it used. The bytes
//! consumed last stay valid until the next fill, so a reader can lend a
//! record that borrows them.

use std::io::{self, Read};

/// Where a [`Window`]'s bytes live.
pub trait Storage {
    /// The bytes held, from the storage's start.
    fn data(&self) -> &[u8];
    /// Makes `need` bytes available from `pos` if the input has them.
    /// Returns the new `(pos, end, eof)`; bytes may move to the front (the
    /// window adds the distance moved to its base offset).
    fn refill(&mut self, pos: usize, end: usize, need: usize) -> io::Result<(usize, usize, bool)>;
}

/// A window's own buffer over any `Read`.
pub struct Stream<R> {
    input: R,
    buf: Vec<u8>,
    eof: bool,
    /// A read error that came after bytes this refill had read: those are
    /// delivered first, the error at the next refill.
    error: Option<io::Error>,
}

impl<R: Read> Stream<R> {
    /// A buffer of `capacity` bytes, grown when a reader needs more at once.
    pub fn new(input: R, capacity: usize) -> Self {
        Stream {
            input,
            buf: vec![0; capacity.max(1)],
            eof: false,
            error: None,
        }
    }
}

impl<R: Read> Storage for Stream<R> {
    #[inline(always)]
    fn data(&self) -> &[u8] {
        &self.buf
    }

    fn refill(
        &mut self,
        mut pos: usize,
        mut end: usize,
        need: usize,
    ) -> io::Result<(usize, usize, bool)> {
        if pos + need > self.buf.len() {
            self.buf.copy_within(pos..end, 0);
            end -= pos;
            pos = 0;
            if need > self.buf.len() {
                self.buf.resize(need.next_power_of_two(), 0);
            }
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let start = end;
        while end - pos < need && !self.eof {
            match self.input.read(&mut self.buf[end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Bytes read before the error (a damaged compressed
                // stream's last good ones) are kept: the error waits for
                // the next refill.
                Err(e) if end > start => {
                    self.error = Some(e);
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok((pos, end, self.eof))
    }
}

/// Bytes already in memory (a file read whole, a memory map).
pub struct Slice<'a>(&'a [u8]);

impl<'a> Slice<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Slice(bytes)
    }
}

impl Storage for Slice<'_> {
    #[inline(always)]
    fn data(&self) -> &[u8] {
        self.0
    }

    fn refill(
        &mut self,
        pos: usize,
        _end: usize,
        _need: usize,
    ) -> io::Result<(usize, usize, bool)> {
        Ok((pos, self.0.len(), true))
    }
}

/// The unconsumed bytes of an input and where they start.
pub struct Window<S> {
    src: S,
    pos: usize,
    end: usize,
    eof: bool,
    /// Absolute offset of `src.data()[0]`.
    base: u64,
}

impl<R: Read> Window<Stream<R>> {
    /// A window over a stream whose first byte is at absolute `offset`
    /// (non-zero when a header was read before it).
    pub fn stream(input: R, capacity: usize, offset: u64) -> Self {
        Window::new(Stream::new(input, capacity), offset)
    }
}

impl<'a> Window<Slice<'a>> {
    /// A window over bytes in memory.
    pub fn slice(bytes: &'a [u8]) -> Self {
        Window::new(Slice(bytes), 0)
    }
}

impl<S: Storage> Window<S> {
    pub fn new(src: S, offset: u64) -> Self {
        Window {
            src,
            pos: 0,
            end: 0,
            eof: false,
            base: offset,
        }
    }

    /// The bytes read and not yet consumed.
    #[inline(always)]
    pub fn buffered(&self) -> &[u8] {
        &self.src.data()[self.pos..self.end]
    }

    /// How many bytes are buffered.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.end - self.pos
    }

    /// Whether nothing is buffered.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.end == self.pos
    }

    /// Makes at least `need` bytes buffered unless the input ends first;
    /// returns whether they are.
    #[inline]
    pub fn fill(&mut self, need: usize) -> io::Result<bool> {
        if self.end - self.pos >= need {
            return Ok(true);
        }
        if !self.eof {
            let (pos, end, eof) = self.src.refill(self.pos, self.end, need)?;
            self.base += (self.pos - pos) as u64;
            (self.pos, self.end, self.eof) = (pos, end, eof);
        }
        Ok(self.end - self.pos >= need)
    }

    /// Buffers at least one byte more than now, unless the input has ended;
    /// returns whether it did.
    pub fn fill_more(&mut self) -> io::Result<bool> {
        let need = self.len() + 1;
        self.fill(need)
    }

    /// Whether the input has ended: nothing beyond what is buffered.
    #[inline(always)]
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// Whether the input is used up: ended, and nothing buffered.
    pub fn is_done(&self) -> bool {
        self.eof && self.pos == self.end
    }

    /// Consumes the first `n` buffered bytes and returns them; they stay
    /// valid until the next fill.
    ///
    /// `n` must not exceed [`Window::len`]: readers consume what they have
    /// decoded from [`Window::buffered`]. That is checked in debug builds
    /// only (this is the hottest call of every reader); in release builds
    /// a reader that broke it would read stale bytes, never out of bounds.
    #[inline(always)]
    pub fn consume(&mut self, n: usize) -> &[u8] {
        debug_assert!(n <= self.end - self.pos, "consumed more than was buffered");
        let at = self.pos;
        self.pos += n;
        &self.src.data()[at..at + n]
    }

    /// Consumes everything buffered.
    pub fn consume_all(&mut self) -> usize {
        let n = self.len();
        self.pos = self.end;
        n
    }

    /// The absolute offset of the first buffered byte (the next to decode).
    #[inline(always)]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read, with an
    /// interruption before each.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        interrupt: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    /// Reads `data` through a window in chunks of the sizes in `takes`,
    /// checking every chunk's bytes and offset against the input.
    fn walk<S: Storage>(mut w: Window<S>, data: &[u8], takes: &[usize]) {
        let mut at = 0usize;
        for &t in takes.iter().cycle() {
            if at == data.len() {
                break;
            }
            let want = t.min(data.len() - at);
            assert!(w.fill(want).unwrap());
            assert_eq!(w.offset(), at as u64);
            assert_eq!(&w.buffered()[..want], &data[at..at + want]);
            assert_eq!(w.consume(want), &data[at..at + want]);
            at += want;
        }
        assert!(!w.fill(1).unwrap());
        assert!(w.is_done());
        assert_eq!(w.offset(), data.len() as u64);
    }

    #[test]
    fn stream_and_slice_deliver_the_same_bytes_and_offsets() {
        let data = bytes(10_000);
        for takes in [&[1usize][..], &[3, 700, 1], &[4096], &[9999, 1]] {
            walk(Window::slice(&data), &data, takes);
            for (cap, step) in [(1, 1), (16, 5), (64, 1000), (1 << 16, 1 << 16)] {
                let input = Trickle {
                    data: &data,
                    step,
                    interrupt: false,
                };
                walk(Window::stream(input, cap, 0), &data, takes);
            }
        }
    }

    #[test]
    fn a_fill_past_the_end_says_so_and_keeps_the_tail() {
        let data = bytes(10);
        let mut w = Window::stream(&data[..], 4, 100);
        assert!(w.fill(3).unwrap());
        w.consume(3);
        assert!(!w.fill(8).unwrap());
        assert!(w.at_eof());
        assert_eq!(w.buffered(), &data[3..]);
        assert_eq!(w.offset(), 103);
        assert!(!w.fill_more().unwrap());
        assert_eq!(w.consume_all(), 7);
        assert!(w.is_done());
    }

    #[test]
    fn fill_more_reads_at_least_one_byte() {
        let data = bytes(5);
        let input = Trickle {
            data: &data,
            step: 1,
            interrupt: false,
        };
        let mut w = Window::stream(input, 2, 0);
        for n in 1..=5 {
            assert!(w.fill_more().unwrap());
            assert_eq!(w.len(), n);
        }
        assert!(!w.fill_more().unwrap());
    }

    #[test]
    fn io_errors_pass_through() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let mut w = Window::stream(Broken, 8, 0);
        assert_eq!(w.fill(1).unwrap_err().to_string(), "disk on fire");
    }
}
