//! Inputs and outputs: a path or `-` (stdin/stdout), compressed input
//! unwrapped by its magic bytes (zstd, gzip, xz), output compressed by file
//! extension or by explicit choice. An output path is written through a
//! temporary file in the same directory, renamed over the path only when
//! [`Output::finish`] succeeds: a failed or interrupted run leaves no
//! partial file behind (nor an old file half-overwritten). A device or a
//! named pipe (`/dev/null`, a FIFO) is written into directly, and a
//! symbolic link is written through to the file it names.
//!
//! Two promises are kept here, in one place, for every command: no output
//! is ever written over a file the same process reads (inputs and outputs
//! are compared by device and inode, so a link or another spelling of the
//! path is caught too), and the temporary files of unfinished outputs can
//! be removed from a signal handler ([`remove_unfinished`]).
//!
//! [`progress`] is the progress bar on stderr the driver reports to.

pub mod progress;
pub use progress::Progress;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Cursor, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A regular file's identity: (device, inode).
type FileId = (u64, u64);

/// What this process reads and writes, for the promises above.
#[derive(Default)]
struct Guard {
    /// Regular files opened as inputs: identity and the name given.
    inputs: Vec<(FileId, String)>,
    /// Existing files that unfinished outputs will replace.
    outputs: Vec<(FileId, String)>,
    /// Temporary files of outputs not yet finished.
    unfinished: Vec<std::path::PathBuf>,
    /// Directories made for outputs not yet finished (parents first).
    made_dirs: Vec<std::path::PathBuf>,
}

static GUARD: std::sync::Mutex<Option<Guard>> = std::sync::Mutex::new(None);

fn with_guard<T>(f: impl FnOnce(&mut Guard) -> T) -> T {
    // A poisoned lock still holds valid lists (each change is one push or
    // one retain).
    let mut g = GUARD.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Guard::default))
}

/// The identity of a regular file (devices, pipes and missing paths have
/// none that matters: they are never replaced).
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

fn same_file_error(output: &str, input: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        if output == input {
            format!(
                "{output} is also this command's input: tramp never writes over its input; choose another output"
            )
        } else {
            format!(
                "{output} is the same file as this command's input {input}: tramp never writes over its input; choose another output"
            )
        },
    )
}

/// Notes that this process reads the file `name` (a path; `-` and
/// non-files are ignored): an output onto the same file is then refused,
/// and reading a file an unfinished output will replace is refused too.
/// [`Input::open`] notes its inputs itself; commands note the other files
/// they read (scripts, descriptions).
pub fn note_input(name: &str) -> io::Result<()> {
    if name == "-" {
        return Ok(());
    }
    let Some(id) = file_id(Path::new(name)) else {
        return Ok(());
    };
    with_guard(|g| {
        if let Some((_, out)) = g.outputs.iter().find(|(o, _)| *o == id) {
            return Err(same_file_error(out, name));
        }
        if !g.inputs.iter().any(|(i, _)| *i == id) {
            g.inputs.push((id, name.to_string()));
        }
        Ok(())
    })
}

/// Refuses an output whose file (after links) is one of this process's
/// inputs. Commands call it for every output before any work, so that a
/// run that would be refused at its end is refused at its start; every
/// [`Output::create`] checks again.
pub fn check_output(name: &str) -> io::Result<()> {
    if name == "-" {
        return Ok(());
    }
    let target = resolve_links(std::path::PathBuf::from(name))?;
    let Some(id) = file_id(&target) else {
        return Ok(());
    };
    with_guard(|g| match g.inputs.iter().find(|(i, _)| *i == id) {
        Some((_, input)) => Err(same_file_error(name, input)),
        None => Ok(()),
    })
}

/// Removes the temporary file of every output not yet finished. For a
/// signal handler: the process is about to exit without unwinding, so no
/// destructor would remove them.
pub fn remove_unfinished() {
    let (paths, dirs) = with_guard(|g| {
        (
            std::mem::take(&mut g.unfinished),
            std::mem::take(&mut g.made_dirs),
        )
    });
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
    // Innermost first; a directory something else wrote into stays.
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Directories a run made for its outputs: removed when it fails or is
/// interrupted (those left empty: a file something else put there keeps
/// its directory), kept once [`MadeDirs::keep`] says the run succeeded.
#[derive(Debug, Default)]
pub struct MadeDirs {
    dirs: Vec<std::path::PathBuf>,
}

impl MadeDirs {
    pub fn new() -> MadeDirs {
        MadeDirs::default()
    }

    /// Creates `dir` and its missing parents, noting the ones it made.
    pub fn create(&mut self, dir: &Path) -> io::Result<()> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        std::fs::create_dir_all(dir)?;
        for m in missing.into_iter().rev() {
            with_guard(|g| g.made_dirs.push(m.clone()));
            self.dirs.push(m);
        }
        Ok(())
    }

    /// The run succeeded: the directories stay.
    pub fn keep(mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        with_guard(|g| g.made_dirs.retain(|d| !dirs.contains(d)));
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        with_guard(|g| g.made_dirs.retain(|d| !dirs.contains(d)));
        for d in dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// An output's temporary file, registered until it is renamed or dropped
/// (dropping it removes the file).
struct Pending {
    tmp: Option<tempfile::TempPath>,
    path: std::path::PathBuf,
    target: std::path::PathBuf,
    replaces: Option<FileId>,
}

impl Pending {
    fn new(tmp: tempfile::TempPath, target: std::path::PathBuf, name: &str) -> Pending {
        let replaces = file_id(&target);
        let path = tmp.to_path_buf();
        with_guard(|g| {
            g.unfinished.push(path.clone());
            if let Some(id) = replaces {
                g.outputs.push((id, name.to_string()));
            }
        });
        Pending {
            tmp: Some(tmp),
            path,
            target,
            replaces,
        }
    }

    /// Renames the temporary file over the target (on failure the
    /// temporary file is removed and the error names the target).
    fn commit(mut self) -> io::Result<()> {
        let tmp = self.tmp.take().expect("a pending output is committed once");
        // Temporary files are private (0600); the output gets the
        // permissions a newly created file would have had.
        set_created_permissions(&tmp)?;
        tmp.persist(&self.target).map_err(|e| {
            io::Error::new(
                e.error.kind(),
                format!(
                    "renaming the finished output onto {}: {}",
                    self.target.display(),
                    e.error
                ),
            )
        })?;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Removed first, deregistered after: a signal in between finds a
        // path that is gone, never a file left behind.
        drop(self.tmp.take());
        with_guard(|g| {
            g.unfinished.retain(|p| *p != self.path);
            if let Some(id) = self.replaces
                && let Some(i) = g.outputs.iter().position(|(o, _)| *o == id)
            {
                g.outputs.remove(i);
            }
        });
    }
}

/// A compression wrapper around a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
    Gzip,
    Xz,
}

impl Compression {
    /// Recognises a compressed stream by its first bytes.
    pub fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
            Compression::Zstd
        } else if head.starts_with(&[0x1F, 0x8B]) {
            Compression::Gzip
        } else if head.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// Chooses compression from a file name's last extension.
    pub fn from_path(path: &str) -> Compression {
        let ext = Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        match ext {
            "zst" | "zstd" => Compression::Zstd,
            "gz" => Compression::Gzip,
            "xz" => Compression::Xz,
            _ => Compression::None,
        }
    }

    /// Parses a user's choice: `none`, `zstd`, `gzip` or `xz`.
    pub fn parse(s: &str) -> Option<Compression> {
        Some(match s {
            "none" => Compression::None,
            "zstd" | "zst" => Compression::Zstd,
            "gzip" | "gz" => Compression::Gzip,
            "xz" => Compression::Xz,
            _ => return None,
        })
    }

    /// The compression's name, as `--compress` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
        }
    }

    /// The file name with the compression's extension removed.
    pub fn strip_extension(path: &str) -> &str {
        match Compression::from_path(path) {
            Compression::None => path,
            _ => path.rsplit_once('.').map_or(path, |(stem, _)| stem),
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the count.
fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    match read_keeping(r, buf) {
        (n, None) => Ok(n),
        (_, Some(e)) => Err(e),
    }
}

/// Like [`read_up_to`], but an error does not lose the bytes read before
/// it: returns them with the error.
fn read_keeping(r: &mut dyn Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
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
struct Failing(Option<io::Error>);

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
struct Decompressing<R> {
    inner: R,
    compression: Compression,
    raw_read: Arc<AtomicU64>,
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
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
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
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    recycle: std::sync::mpsc::SyncSender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    done: bool,
}

const PIPE_CHUNK: usize = 1 << 18;
const PIPE_DEPTH: usize = 4;

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
    raw_read: Arc<AtomicU64>,
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

/// A temporary file beside `name`'s target (through symbolic links), and
/// what renames it over the target when finished.
fn pending_file(name: &str) -> io::Result<(File, Pending)> {
    // Through a symbolic link, the file it names is replaced and the
    // link stays.
    check_output(name)?;
    let target = resolve_links(std::path::PathBuf::from(name))?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    // tempfile's errors name the temporary file; the user named the
    // output.
    let tmp = tempfile::Builder::new()
        .prefix(".tramp-")
        .suffix(".part")
        .tempfile_in(&dir)
        .map_err(|e| {
            let why = match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code).to_string(),
                None => e.kind().to_string(),
            };
            io::Error::new(
                e.kind(),
                format!("cannot create a file in {}: {why}", dir.display()),
            )
        })?;
    let (file, path) = tmp.into_parts();
    Ok((file, Pending::new(path, target, name)))
}

/// An output file that can be sought in (a writer that fills its header in
/// at the end), written to a temporary file renamed over the target when
/// finished and removed if dropped unfinished, as [`Output`] is. Standard
/// output, pipes and devices are refused: they cannot seek back.
pub struct FileOutput {
    file: File,
    commit: Option<Pending>,
}

impl FileOutput {
    pub fn create(name: &str, why: &str) -> io::Result<FileOutput> {
        let refuse = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: {why} needs a file it can seek back in, not a pipe or a device"),
            )
        };
        if name == "-" {
            return Err(refuse());
        }
        match std::fs::metadata(name) {
            Ok(m) if m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{name} is a directory"),
                ));
            }
            Ok(m) if !m.is_file() => return Err(refuse()),
            _ => {}
        }
        let (file, pending) = pending_file(name)?;
        Ok(FileOutput {
            file,
            commit: Some(pending),
        })
    }

    /// The temporary file, to write and seek in.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Flushes and renames the file over the target.
    pub fn finish(mut self) -> io::Result<()> {
        self.file.sync_data().ok();
        match self.commit.take() {
            Some(p) => p.commit(),
            None => Ok(()),
        }
    }
}

/// An output that compresses as it writes; call [`Output::finish`] to flush
/// the compressed stream's end.
pub struct Output {
    inner: OutputInner,
    /// The temporary file and the path it becomes on success (deleted if
    /// the output is dropped unfinished).
    commit: Option<Pending>,
    /// The name given, for errors.
    name: String,
}

enum OutputInner {
    Plain(BufWriter<Box<dyn Write + Send>>),
    Zstd(zstd::Encoder<'static, BufWriter<Box<dyn Write + Send>>>),
    Gzip(flate2::write::GzEncoder<BufWriter<Box<dyn Write + Send>>>),
    Xz(liblzma::write::XzEncoder<BufWriter<Box<dyn Write + Send>>>),
}

impl Output {
    /// Creates a path, or stdout for `-`. `compression` of `None` means:
    /// choose by the path's extension.
    pub fn create(name: &str, compression: Option<Compression>) -> io::Result<Output> {
        let c = compression.unwrap_or_else(|| Compression::from_path(name));
        if name == "-" {
            return Self::to_writer(Box::new(io::stdout()), c);
        }
        let target = std::path::PathBuf::from(name);
        match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{name} is a directory"),
                ));
            }
            // A device, a named pipe or a socket (`-o /dev/null`, a FIFO
            // another program reads): written into as it is. A file
            // renamed over it would replace the node itself, and a
            // /dev/null turned into a regular file breaks every program on
            // the machine.
            Ok(m) if !m.is_file() => {
                let f = std::fs::OpenOptions::new().write(true).open(&target)?;
                return Self::to_writer(Box::new(f), c);
            }
            _ => {}
        }
        let (file, pending) = pending_file(name)?;
        let mut out = Self::to_writer(Box::new(file), c)?;
        out.commit = Some(pending);
        out.name = name.to_string();
        Ok(out)
    }

    /// Checks, before any work, that [`create`](Self::create) would
    /// succeed for `name`: not a directory, not one of this process's
    /// inputs, and its directory takes a new file (one is made and
    /// removed). Devices and pipes are not opened (a FIFO would wait for
    /// its reader).
    pub fn check_creatable(name: &str) -> io::Result<()> {
        if name == "-" {
            return Ok(());
        }
        match std::fs::metadata(name) {
            Ok(m) if m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{name} is a directory"),
                ));
            }
            Ok(m) if !m.is_file() => return Ok(()),
            _ => {}
        }
        drop(Self::create(name, Some(Compression::None))?);
        Ok(())
    }

    /// Wraps any writer.
    pub fn to_writer(raw: Box<dyn Write + Send>, compression: Compression) -> io::Result<Output> {
        let w = BufWriter::with_capacity(1 << 18, raw);
        let inner = match compression {
            Compression::None => OutputInner::Plain(w),
            Compression::Zstd => {
                let mut e = zstd::Encoder::new(w, 3)?;
                // One worker thread: compression overlaps with producing
                // the records.
                e.multithread(1)?;
                OutputInner::Zstd(e)
            }
            Compression::Gzip => OutputInner::Gzip(flate2::write::GzEncoder::new(
                w,
                flate2::Compression::default(),
            )),
            Compression::Xz => OutputInner::Xz(liblzma::write::XzEncoder::new(w, 6)),
        };
        Ok(Output {
            inner,
            commit: None,
            name: "-".into(),
        })
    }

    /// The compression this output writes.
    pub fn compression(&self) -> Compression {
        match self.inner {
            OutputInner::Plain(_) => Compression::None,
            OutputInner::Zstd(_) => Compression::Zstd,
            OutputInner::Gzip(_) => Compression::Gzip,
            OutputInner::Xz(_) => Compression::Xz,
        }
    }

    /// Ends the compressed stream, appends `tail` as it is, and finishes
    /// as [`finish`](Self::finish) does. `tail` is a whole stream of this
    /// output's [`compression`](Self::compression) (or plain bytes for a
    /// plain output): zstd, gzip and xz each read a file of several
    /// streams one after another as the concatenation of their contents.
    /// A writer that learns its file's head only at the end compresses
    /// its body as it goes and appends it here.
    pub fn finish_with_tail(self, tail: &mut dyn io::Read) -> io::Result<()> {
        let name = self.name;
        let explain = |e| explain(&name, e);
        let mut w = match self.inner {
            OutputInner::Plain(w) => w,
            OutputInner::Zstd(e) => e.finish().map_err(explain)?,
            OutputInner::Gzip(e) => e.finish().map_err(explain)?,
            OutputInner::Xz(e) => e.finish().map_err(explain)?,
        };
        io::copy(tail, &mut w).map_err(explain)?;
        w.flush().map_err(explain)?;
        drop(w);
        if let Some(pending) = self.commit {
            pending.commit()?;
        }
        Ok(())
    }

    /// Ends the compressed stream, flushes everything, and renames the
    /// temporary file over the output path.
    pub fn finish(self) -> io::Result<()> {
        self.finish_with_tail(&mut io::empty())
    }
}

/// An output's write error, with the two a user can act on said plainly
/// (a full disk, the file-size limit); others pass unchanged.
fn explain(name: &str, e: io::Error) -> io::Error {
    let why = match e.kind() {
        io::ErrorKind::StorageFull => "the disk is full",
        io::ErrorKind::FileTooLarge => "the file-size limit (`ulimit -f`) is reached",
        io::ErrorKind::QuotaExceeded => "the disk quota is exhausted",
        _ => return e,
    };
    io::Error::new(
        e.kind(),
        format!("writing {name}: {why} ({e}); the unfinished output was removed"),
    )
}

/// `path` with every symbolic link along its last component followed (a
/// dangling link gives the path it names; a loop is an error).
fn resolve_links(mut path: std::path::PathBuf) -> io::Result<std::path::PathBuf> {
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

#[cfg(unix)]
fn set_created_permissions(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // 0666 less the usual umask 022: what File::create gives by default.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_created_permissions(_: &Path) -> io::Result<()> {
    Ok(())
}

pub use tramp_core::output::{Finish, OutStream};

impl Finish for Output {
    fn finish(self) -> io::Result<()> {
        Output::finish(self)
    }
}

impl OutStream for Output {
    fn finish_boxed(self: Box<Self>) -> io::Result<()> {
        Output::finish(*self)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            OutputInner::Plain(w) => w.write(buf),
            OutputInner::Zstd(w) => w.write(buf),
            OutputInner::Gzip(w) => w.write(buf),
            OutputInner::Xz(w) => w.write(buf),
        }
        .map_err(|e| explain(&self.name, e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            OutputInner::Plain(w) => w.write_all(buf),
            OutputInner::Zstd(w) => w.write_all(buf),
            OutputInner::Gzip(w) => w.write_all(buf),
            OutputInner::Xz(w) => w.write_all(buf),
        }
        .map_err(|e| explain(&self.name, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            OutputInner::Plain(w) => w.flush(),
            OutputInner::Zstd(w) => w.flush(),
            OutputInner::Gzip(w) => w.flush(),
            OutputInner::Xz(w) => w.flush(),
        }
        .map_err(|e| explain(&self.name, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: Compression) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        let path = path.to_str().unwrap();
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        let mut out = Output::create(path, Some(c)).unwrap();
        out.write_all(&data).unwrap();
        out.finish().unwrap();
        let mut input = Input::open(path).unwrap();
        assert_eq!(input.compression, c);
        assert_eq!(&input.head[..], &data[..HEAD_LEN]);
        let mut back = Vec::new();
        input.reader.read_to_end(&mut back).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn every_compression_round_trips_and_is_detected_by_magic() {
        for c in [
            Compression::None,
            Compression::Zstd,
            Compression::Gzip,
            Compression::Xz,
        ] {
            round_trip(c);
        }
    }

    #[test]
    fn a_tail_compressed_apart_reads_as_the_rest_of_the_output() {
        for c in [
            Compression::None,
            Compression::Zstd,
            Compression::Gzip,
            Compression::Xz,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.txt");
            let path = path.to_str().unwrap();
            // The tail, compressed as it is made, into a file of its own.
            let mut tail = tempfile::tempfile().unwrap();
            let mut t = Output::to_writer(Box::new(tail.try_clone().unwrap()), c).unwrap();
            t.write_all(b"and the body after it\n").unwrap();
            t.finish().unwrap();
            io::Seek::seek(&mut tail, io::SeekFrom::Start(0)).unwrap();
            let mut out = Output::create(path, Some(c)).unwrap();
            assert_eq!(out.compression(), c);
            out.write_all(b"the head, known last\n").unwrap();
            out.finish_with_tail(&mut tail).unwrap();
            let mut back = String::new();
            // Not `Input::open`: it would record the file as this test
            // process's input, and a file of another test given the same
            // inode after this one is gone would be refused as output.
            let raw = Box::new(File::open(path).unwrap());
            let mut input = Input::from_reader(path, raw, None).unwrap();
            input.reader.read_to_string(&mut back).unwrap();
            assert_eq!(
                back, "the head, known last\nand the body after it\n",
                "{c:?}"
            );
        }
    }

    /// Names in `dir`, sorted.
    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_output_appears_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.hatf.zst");
        let name = path.to_str().unwrap();
        std::fs::write(&path, b"the old file").unwrap();
        // Dropped unfinished (a failed conversion): the old file stays as
        // it was and nothing else is left in the directory.
        let mut out = Output::create(name, None).unwrap();
        out.write_all(b"partial").unwrap();
        assert_eq!(
            listing(dir.path()).len(),
            2,
            "the temporary file exists meanwhile"
        );
        drop(out);
        assert_eq!(listing(dir.path()), vec!["t.hatf.zst".to_string()]);
        assert_eq!(std::fs::read(&path).unwrap(), b"the old file");
        // Finished: the new content replaces it, readable by others.
        let mut out = Output::create(name, None).unwrap();
        out.write_all(b"complete").unwrap();
        out.finish().unwrap();
        assert_eq!(listing(dir.path()), vec!["t.hatf.zst".to_string()]);
        let mut back = Vec::new();
        Input::open(name)
            .unwrap()
            .reader
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, b"complete");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn an_output_into_a_missing_directory_or_onto_a_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir/t.hatf");
        assert!(Output::create(missing.to_str().unwrap(), None).is_err());
        assert!(Output::create(dir.path().to_str().unwrap(), None).is_err());
        assert!(listing(dir.path()).is_empty());
    }

    #[test]
    fn a_device_is_written_into_not_replaced() {
        // Only checked, never finished: were the output a temporary file,
        // finishing would rename it over /dev/null.
        let out = Output::create("/dev/null", None).unwrap();
        assert!(out.commit.is_none(), "/dev/null must be written directly");
        drop(out);
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let t = std::fs::metadata("/dev/null").unwrap().file_type();
            assert!(t.is_char_device());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_into_and_stays_a_pipe() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut out = Output::create(fifo.to_str().unwrap(), None).unwrap();
        out.write_all(b"through the pipe").unwrap();
        out.finish().unwrap();
        // Checked before joining: a pipe replaced by a file would leave
        // the reader waiting forever.
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert_eq!(listing(dir.path()), vec!["pipe".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_stays_and_its_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.hatf");
        let link = dir.path().join("link.hatf");
        std::fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink("real.hatf", &link).unwrap();
        let mut out = Output::create(link.to_str().unwrap(), None).unwrap();
        out.write_all(b"new").unwrap();
        out.finish().unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A dangling link gets the file it names.
        let dangling = dir.path().join("dangling.hatf");
        std::os::unix::fs::symlink("made.hatf", &dangling).unwrap();
        let mut out = Output::create(dangling.to_str().unwrap(), None).unwrap();
        out.write_all(b"made").unwrap();
        out.finish().unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("made.hatf")).unwrap(),
            b"made"
        );
        // A loop is an error, and nothing is written.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(Output::create(a.to_str().unwrap(), None).is_err());
    }

    #[test]
    fn extension_chooses_compression() {
        assert_eq!(Compression::from_path("a.hatf.zst"), Compression::Zstd);
        assert_eq!(Compression::from_path("a.hatf.gz"), Compression::Gzip);
        assert_eq!(Compression::from_path("a.hatf.xz"), Compression::Xz);
        assert_eq!(Compression::from_path("a.hatf"), Compression::None);
        assert_eq!(Compression::strip_extension("a.hatf.zst"), "a.hatf");
    }

    #[test]
    fn short_and_empty_inputs_open() {
        for data in [&b""[..], b"\x28", b"abc"] {
            let mut input =
                Input::from_reader("mem", Box::new(Cursor::new(data.to_vec())), None).unwrap();
            let mut back = Vec::new();
            input.reader.read_to_end(&mut back).unwrap();
            assert_eq!(back, data);
        }
    }

    #[test]
    fn corrupt_compressed_input_is_an_error_not_a_panic() {
        let mut data = vec![0x28, 0xB5, 0x2F, 0xFD];
        data.extend_from_slice(&[0xFF; 32]);
        match Input::from_reader("mem", Box::new(Cursor::new(data)), None) {
            Err(_) => {}
            Ok(mut input) => {
                let mut back = Vec::new();
                assert!(input.reader.read_to_end(&mut back).is_err());
            }
        }
    }
}
