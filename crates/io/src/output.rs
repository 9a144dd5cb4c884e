//! Outputs: a path or `-`, compressed by name or choice, written through a
//! temporary file beside the target that is renamed into place when finished
//! (through links; devices and pipes directly).

#![allow(unused_imports)]

use super::*;

/// An output's temporary file, registered until it is renamed or dropped
/// (dropping it removes the file).
pub(crate) struct Pending {
    pub(crate) tmp: Option<tempfile::TempPath>,
    pub(crate) path: std::path::PathBuf,
    pub(crate) target: std::path::PathBuf,
    pub(crate) replaces: Option<FileId>,
}

impl Pending {
    pub(crate) fn new(tmp: tempfile::TempPath, target: std::path::PathBuf, name: &str) -> Pending {
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
    pub(crate) fn commit(mut self) -> io::Result<()> {
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

/// A temporary file beside `name`'s target (through symbolic links), and
/// what renames it over the target when finished.
pub(crate) fn pending_file(name: &str) -> io::Result<(File, Pending)> {
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
    pub(crate) file: File,
    pub(crate) commit: Option<Pending>,
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
    pub(crate) inner: OutputInner,
    /// The temporary file and the path it becomes on success (deleted if
    /// the output is dropped unfinished).
    pub(crate) commit: Option<Pending>,
    /// The name given, for errors.
    pub(crate) name: String,
}

pub(crate) enum OutputInner {
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
pub(crate) fn explain(name: &str, e: io::Error) -> io::Error {
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
pub(crate) fn resolve_links(mut path: std::path::PathBuf) -> io::Result<std::path::PathBuf> {
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
pub(crate) fn set_created_permissions(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // 0666 less the usual umask 022: what File::create gives by default.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
pub(crate) fn set_created_permissions(_: &Path) -> io::Result<()> {
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
