//! Inputs: a path or `-`, decompressed by magic bytes, read ahead on a second
//! thread (`Pipelined`), counted for the progress bar.

#![allow(unused_imports)]

use super::*;

/// Reads until `buf` is full or the input ends; returns the count.
pub(crate) fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    match read_keeping(r, buf) {
        (n, None) => Ok(n),
        (_, Some(e)) => Err(e),
    }
}

/// Like [`read_up_to`], but an error does not lose the bytes read before
/// it: returns them with the error.
pub(crate) fn read_keeping(r: &mut dyn Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// A reader that fails with a stored error (once), then ends: what is left
/// of a stream after damage.
pub(crate) struct Failing(pub(crate) Option<io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// A decompressor whose errors say which compression failed and how far
/// into the compressed input: a cut or damaged `.gz` reads as
/// "gzip input damaged or cut short at compressed byte 1234: …".
pub(crate) struct Decompressing<R> {
    pub(crate) inner: R,
    pub(crate) compression: Compression,
    pub(crate) raw_read: Arc<AtomicU64>,
}

impl<R: Read> Read for Decompressing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                return e;
            }
            let name = match self.compression {
                Compression::Zstd => "zstd",
                Compression::Gzip => "gzip",
                Compression::Xz => "xz",
                Compression::None => "plain",
            };
            let at = self.raw_read.load(Ordering::Relaxed);
            // zstd repeats itself ("incomplete frame: incomplete frame").
            let mut why = e.to_string();
            if let Some((a, b)) = why.split_once(": ")
                && a == b
            {
                why = a.to_string();
            }
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{name} input damaged or cut short at compressed byte {at}: {why}"),
            )
        })
    }
}

/// Counts the raw (compressed) bytes read, for progress reporting.
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A reader whose source is read ahead on a background thread, in a few
/// fixed-size chunks (memory stays bounded); buffers are recycled.
pub struct Pipelined {
    pub(crate) chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    pub(crate) recycle: std::sync::mpsc::SyncSender<Vec<u8>>,
    pub(crate) current: Vec<u8>,
    pub(crate) at: usize,
    pub(crate) done: bool,
}

pub(crate) const PIPE_CHUNK: usize = 1 << 18;
pub(crate) const PIPE_DEPTH: usize = 4;

impl Pipelined {
    /// Starts reading `source` ahead on a new thread.
    pub fn spawn(source: impl Read + Send + 'static) -> Pipelined {
        Self::spawn_with_prefix(source, Vec::new())
    }

    /// Like [`spawn`](Self::spawn), with `prefix` read before `source`.
    pub fn spawn_with_prefix(mut source: impl Read + Send + 'static, prefix: Vec<u8>) -> Pipelined {
        let (tx, chunks) = std::sync::mpsc::sync_channel::<io::Result<Vec<u8>>>(PIPE_DEPTH);
        let (recycle, spare) = std::sync::mpsc::sync_channel::<Vec<u8>>(PIPE_DEPTH + 2);
        // Named, so that profiles tell its time from its reader's
        // (`std::thread::spawn` would also panic if no thread can start).
        let worker = std::thread::Builder::new().name("tramp-read-bytes".into());
        let started = worker.spawn(move || {
            loop {
                let mut buf = spare.try_recv().unwrap_or_default();
                buf.resize(PIPE_CHUNK, 0);
                match read_keeping(&mut source, &mut buf) {
                    (0, None) => return,
                    (n, None) => {
                        buf.truncate(n);
                        if tx.send(Ok(buf)).is_err() {
                            return;
                        }
                    }
                    (n, Some(e)) => {
                        // Every byte decompressed before the damage goes
                        // first, then the error.
                        buf.truncate(n);
                        if n > 0 && tx.send(Ok(buf)).is_err() {
                            return;
                        }
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        started.expect("a thread to read the input ahead");
        Pipelined {
            chunks,
            recycle,
            current: prefix,
            at: 0,
            done: false,
        }
    }
}

impl BufRead for Pipelined {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.current.len() {
            if self.done {
                return Ok(&[]);
            }
            match self.chunks.recv() {
                Ok(Ok(next)) => {
                    let old = std::mem::replace(&mut self.current, next);
                    let _ = self.recycle.try_send(old);
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(&[]);
                }
            }
        }
        Ok(&self.current[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.current.len());
    }
}

impl Read for Pipelined {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = out.len().min(avail.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// How many leading bytes of the decompressed input are kept for format
/// detection.
pub const HEAD_LEN: usize = 4096;

/// An opened input: decompressed bytes, the first bytes for format
/// detection, and counters for progress.
pub struct Input {
    /// The decompressed stream, starting at byte 0.
    pub reader: Box<dyn BufRead + Send>,
    /// Up to [`HEAD_LEN`] first bytes of the decompressed stream.
    pub head: Vec<u8>,
    /// The compression that was unwrapped.
    pub compression: Compression,
    /// The name given (a path, or `-`).
    pub name: String,
    /// Size of the raw file, when known (not for pipes).
    pub raw_len: Option<u64>,
    pub(crate) raw_read: Arc<AtomicU64>,
}

impl Input {
    /// Opens a path, or stdin for `-`, unwrapping zstd, gzip or xz.
    pub fn open(name: &str) -> io::Result<Input> {
        let (raw, raw_len): (Box<dyn Read + Send>, Option<u64>) = if name == "-" {
            (Box::new(io::stdin()), None)
        } else {
            note_input(name)?;
            let f = File::open(name)?;
            let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
            (Box::new(f), len)
        };
        Self::from_reader(name, raw, raw_len)
    }

    /// Reads a whole text input (a path or `-`, compressed or not): text
    /// that is not UTF-8 is an error naming `what`, the line, the column
    /// and the byte offset.
    pub fn read_text(name: &str, what: &str) -> Result<String, tramp_core::Error> {
        let mut input = Input::open(name)?;
        let mut bytes = Vec::new();
        input.reader.read_to_end(&mut bytes)?;
        String::from_utf8(bytes).map_err(|e| {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
            let line_start = bytes[..at]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1);
            let column = at - line_start + 1;
            tramp_core::Error::Usage(format!(
                "{what} {name} is not UTF-8: line {line}, column {column} (byte offset {at})"
            ))
        })
    }

    /// Wraps any reader (in-memory buffers, pipes) the same way as `open`.
    pub fn from_reader(
        name: &str,
        raw: Box<dyn Read + Send>,
        raw_len: Option<u64>,
    ) -> io::Result<Input> {
        let raw_read = Arc::new(AtomicU64::new(0));
        let mut counted = Counting {
            inner: raw,
            count: raw_read.clone(),
        };
        let mut magic = [0u8; 6];
        let n = read_up_to(&mut counted, &mut magic)?;
        let compression = Compression::from_magic(&magic[..n]);
        let rejoined = Cursor::new(magic[..n].to_vec()).chain(counted);
        let decoder: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(rejoined),
            Compression::Zstd => Box::new(zstd::Decoder::new(rejoined)?),
            Compression::Gzip => {
                Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(rejoined)))
            }
            Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(
                BufReader::new(rejoined),
            )),
        };
        let mut inner: Box<dyn Read + Send> = match compression {
            Compression::None => decoder,
            _ => Box::new(Decompressing {
                inner: decoder,
                compression,
                raw_read: raw_read.clone(),
            }),
        };
        let mut head = vec![0u8; HEAD_LEN];
        let (k, damage) = read_keeping(&mut inner, &mut head);
        head.truncate(k);
        if let (0, Some(e)) = (k, &damage) {
            // Nothing decompressed at all: the stream is cut or damaged
            // from its start, which is what to say (not "empty").
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        if let Some(e) = damage {
            // Damage within the first bytes: they are still delivered, then
            // the error.
            inner = Box::new(Failing(Some(e)));
        }
        let reader: Box<dyn BufRead + Send> = match compression {
            Compression::None => Box::new(BufReader::with_capacity(
                1 << 18,
                Cursor::new(head.clone()).chain(inner),
            )),
            // Pipelined output is already chunked: no second buffer, the head
            // goes back in front.
            _ => Box::new(Pipelined::spawn_with_prefix(inner, head.clone())),
        };
        Ok(Input {
            reader,
            head,
            compression,
            name: name.to_string(),
            raw_len,
            raw_read,
        })
    }

    /// Raw bytes consumed so far (compressed bytes for compressed input).
    pub fn raw_position(&self) -> Arc<AtomicU64> {
        self.raw_read.clone()
    }
}
