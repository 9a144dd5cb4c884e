//! "Split Stream" (the paper's Table 4): the four fields of the Simple
//! Binary form in four streams, each compressed on its own — the type in
//! one byte per record (the paper's 13 bytes per record uncompressed are
//! 1 + 3 × 4), size, address and new address in the word size. As a
//! container it is a directory of four files, `type`, `size`, `address`
//! and `new-address`, each optionally compressed (`.gz`, `.zst`, `.xz`);
//! reading opens all four and takes one record from each at a time.

use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use tramp_hatf::Event;
use tramp_io::{Compression, Input, Output};

use crate::content::{fields, from_fields};

/// The streams, in field order.
pub const STREAMS: [&str; 4] = ["type", "size", "address", "new-address"];

/// Bytes of each stream's value.
pub fn widths(word: usize) -> [usize; 4] {
    [1, word, word, word]
}

/// Splits events into four writers.
pub struct SplitWriter<W: Write> {
    outs: [W; 4],
    word: usize,
}

impl<W: Write> SplitWriter<W> {
    pub fn new(outs: [W; 4], word: usize) -> Self {
        SplitWriter { outs, word }
    }

    pub fn write(&mut self, e: &Event<'_>) -> io::Result<()> {
        for ((v, out), n) in fields(e)
            .into_iter()
            .zip(&mut self.outs)
            .zip(widths(self.word))
        {
            if n < 8 && v >> (8 * n) != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{v:#x} does not fit {n} bytes"),
                ));
            }
            out.write_all(&v.to_le_bytes()[..n])?;
        }
        Ok(())
    }

    pub fn into_inner(self) -> [W; 4] {
        self.outs
    }
}

/// Reads events from four readers.
pub struct SplitReader<R: Read> {
    ins: [R; 4],
    word: usize,
    record: u64,
}

impl<R: Read> SplitReader<R> {
    pub fn new(ins: [R; 4], word: usize) -> Self {
        SplitReader {
            ins,
            word,
            record: 0,
        }
    }

    pub fn next_event(&mut self) -> io::Result<Option<Event<'static>>> {
        let mut f = [0u64; 4];
        for (i, ((v, r), n)) in f
            .iter_mut()
            .zip(&mut self.ins)
            .zip(widths(self.word))
            .enumerate()
        {
            let mut b = [0u8; 8];
            let mut got = 0;
            while got < n {
                match r.read(&mut b[got..n])? {
                    0 if got == 0 && i == 0 => return Ok(None),
                    0 => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!(
                                "Split Stream record {}: the {} stream ends early",
                                self.record, STREAMS[i]
                            ),
                        ));
                    }
                    k => got += k,
                }
            }
            *v = u64::from_le_bytes(b);
        }
        let e = from_fields(f).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("Split Stream record {}: unknown type {}", self.record, f[0]),
            )
        })?;
        self.record += 1;
        Ok(Some(e))
    }
}

/// The file name of a stream with a compression's extension.
fn file_name(stream: &str, c: Compression) -> String {
    match c {
        Compression::None => stream.to_string(),
        Compression::Gzip => format!("{stream}.gz"),
        Compression::Zstd => format!("{stream}.zst"),
        Compression::Xz => format!("{stream}.xz"),
    }
}

/// Creates a Split Stream directory (each file written through a temporary
/// file renamed on finish). The word size is in a file `word`.
pub fn create(dir: &Path, word: usize, c: Compression) -> io::Result<SplitWriter<Output>> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("word"), format!("{word}\n"))?;
    let outs = STREAMS.map(|s| {
        let p = dir.join(file_name(s, c));
        Output::create(&p.to_string_lossy(), Some(c))
    });
    let [a, b, c2, d] = outs;
    Ok(SplitWriter::new([a?, b?, c2?, d?], word))
}

/// Finishes the four files of [`create`].
pub fn finish(w: SplitWriter<Output>) -> io::Result<()> {
    for o in w.into_inner() {
        o.finish()?;
    }
    Ok(())
}

/// Opens a Split Stream directory (each file compressed or not).
pub fn open(dir: &Path) -> io::Result<SplitReader<BufReader<Box<dyn io::BufRead + Send>>>> {
    let word: usize = std::fs::read_to_string(dir.join("word"))?
        .trim()
        .parse()
        .ok()
        .filter(|w| *w == 4 || *w == 8)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad word file"))?;
    let mut ins = Vec::new();
    for s in STREAMS {
        let found = [
            Compression::None,
            Compression::Gzip,
            Compression::Zstd,
            Compression::Xz,
        ]
        .into_iter()
        .map(|c| dir.join(file_name(s, c)))
        .find(|p| p.exists())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no {s} stream in {}", dir.display()),
            )
        })?;
        ins.push(BufReader::new(
            Input::open(&found.to_string_lossy())?.reader,
        ));
    }
    let ins: [_; 4] = ins
        .try_into()
        .map_err(|_| io::Error::other("four streams"))?;
    Ok(SplitReader::new(ins, word))
}
