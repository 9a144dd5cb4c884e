//! Running a command under the capture library, then turning each recorded
//! process's raw logs into a HATF trace.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use tramp_core::Error;

use crate::convert::ConvertStats;
use crate::live::{BACKLOG_PER_LOG, Session};

/// How to record.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The trace of the process started; forked children get the same name
    /// with `.PID` before the extension.
    pub output: PathBuf,
    /// Frames of call stack per allocation (0: the return address only).
    pub stack: usize,
    /// How tpack output is packed ([`RecordOptions::RECORD_PACK`] unless
    /// told otherwise). Its threads are those the conversion codes on
    /// while the program waits for it and after the program ends
    /// ([`tramp_tpack::writer::machine_threads`] unless told otherwise);
    /// while the program runs, it codes on its own thread.
    pub pack: tramp_tpack::Options,
    /// Unread raw log bytes a process may leave on disk before its threads
    /// wait for the conversion ([`BACKLOG_PER_LOG`] unless told otherwise).
    pub backlog: u64,
    /// Record the 8-byte loads and stores of programs built with `tramp cc`
    /// too; the output is then a pointer trace (Meta-TF, `.mtf`).
    pub pointers: bool,
}

impl RecordOptions {
    /// tpack's packing while recording: zstd level 3 in blocks of 256 Ki
    /// records, which keeps up with the program on one core. Level 9 is a
    /// quarter of the conversion's time for 3-9% less (in 1 Mi-record
    /// blocks); blocks of 1 Mi records (tpack's default) hold models four
    /// times larger, out of the cache, for 9-14% less on CPython and Perl
    /// (tpack version 2; docs/formats/capture.md). `tramp convert --policy
    /// zstd-9` re-packs.
    pub const RECORD_PACK: &str = "zstd-3,block=256K";

    /// Sets the tpack packing from `CODEC[,block=N][,threads=N]` (as
    /// `tramp convert --policy` takes it).
    pub fn set_pack(&mut self, spec: &str) -> Result<(), Error> {
        self.pack = tramp_tpack::Options::parse_for_machine(spec).ok_or_else(|| {
            Error::Usage(format!(
                "packing {spec:?}: expected CODEC[,block=N][,threads=N] (raw, zstd-N, xz-N, gzip-N)"
            ))
        })?;
        Ok(())
    }

    /// Options for `output` with the recording defaults.
    pub fn new(output: PathBuf) -> RecordOptions {
        RecordOptions {
            output,
            stack: 0,
            pack: tramp_tpack::Options::parse_for_machine(Self::RECORD_PACK)
                .expect("a valid codec"),
            backlog: BACKLOG_PER_LOG,
            pointers: false,
        }
    }
}

/// What a recording produced.
#[derive(Debug)]
pub struct Recording {
    pub status: ExitStatus,
    /// One trace per process: (pid, path, what was converted).
    pub traces: Vec<(u64, PathBuf, ConvertStats)>,
    /// The most temporary disk the raw logs held (bytes, sampled).
    pub peak_disk: u64,
    /// The bound per process that was in force (bytes).
    pub backlog: u64,
    /// Whether the temporary disk was bounded (the file system gives back
    /// punched holes).
    pub bounded: bool,
    /// Where the raw logs were.
    pub temp_dir: PathBuf,
}

impl Recording {
    /// The exit code to pass on: the program's, or 128 + the signal that
    /// killed it.
    pub fn exit_code(&self) -> u8 {
        use std::os::unix::process::ExitStatusExt;
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => c as u8,
            (None, Some(sig)) => (128 + sig) as u8,
            _ => 1,
        }
    }

    /// One line on the temporary disk the raw logs used.
    pub fn disk_summary(&self) -> String {
        let mb = self.peak_disk as f64 / (1 << 20) as f64;
        if self.bounded {
            format!(
                "temporary logs in {} peaked at {mb:.1} MiB (bound {:.1} MiB per process)",
                self.temp_dir.display(),
                self.backlog as f64 / (1 << 20) as f64
            )
        } else {
            format!(
                "temporary logs in {} peaked at {mb:.1} MiB, unbounded: its file system cannot punch holes (set TMPDIR to ext4, xfs, btrfs or tmpfs)",
                self.temp_dir.display()
            )
        }
    }

    /// The signal that killed the program, if one did.
    pub fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.status
            .code()
            .is_none()
            .then(|| self.status.signal())
            .flatten()
    }
}

/// Writes the capture library where the dynamic loader can map it: a
/// content-addressed file in the user's cache directory, written once.
pub fn install_library(lib: &[u8]) -> Result<PathBuf, Error> {
    install(lib, "libtramp_capture", ".so", false)
}

/// Writes the replay driver (an executable) to the cache directory.
pub fn install_replayer(bin: &[u8]) -> Result<PathBuf, Error> {
    install(bin, "tramp-replay", "", true)
}

fn install(bytes: &[u8], stem: &str, ext: &str, executable: bool) -> Result<PathBuf, Error> {
    use std::os::unix::fs::PermissionsExt;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("tramp");
    std::fs::create_dir_all(&base)?;
    let path = base.join(format!("{stem}-{h:016x}{ext}"));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(path);
    }
    let tmp = base.join(format!(".{stem}-{h:016x}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
    std::fs::rename(&tmp, &path)?;
    prune(&base, stem, &path);
    Ok(path)
}

/// Removes the copies other tramp builds left in the cache (same stem,
/// another content hash), once they have not been touched for an hour: a
/// recording another build is starting right now keeps its copy.
fn prune(base: &Path, stem: &str, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(&format!("{stem}-")) && path != keep;
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < hour_ago);
        if ours && old {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The output name for a process other than the one started.
pub fn child_output(output: &Path, pid: u64) -> PathBuf {
    let name = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("trace.hatf");
    let (stem, ext) = match [".hatf", ".tpack", ".mtf"]
        .iter()
        .find_map(|e| name.find(e))
    {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    output.with_file_name(format!("{stem}.{pid}{ext}"))
}

/// Runs `cmd` under the capture library `lib` and writes one trace per
/// process, converting while the program runs. The command's stdin, stdout
/// and stderr are the caller's.
pub fn record(lib: &Path, cmd: &[OsString], opts: &RecordOptions) -> Result<Recording, Error> {
    let (program, args) = cmd
        .split_first()
        .ok_or_else(|| Error::Usage("no command to record".into()))?;
    let name = opts.output.to_string_lossy();
    let bare = tramp_core::io::Compression::strip_extension(&name);
    if opts.pointers && !bare.ends_with(".mtf") {
        return Err(Error::Usage(format!(
            "{name}: a pointer trace is Meta-TF (tpack and HATF hold no loads or stores): name it *.mtf or *.mtf.zst"
        )));
    }
    // Removed when dropped, also when the command cannot start.
    let logs_dir = tempfile::Builder::new().prefix("tramp-record-").tempdir()?;
    let logs = logs_dir.path().to_path_buf();
    let mut preload = OsString::from(lib.as_os_str());
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut command = Command::new(program);
    command
        .args(args)
        .env("LD_PRELOAD", preload)
        .env("TRAMP_CAPTURE_DIR", &logs)
        .env("TRAMP_CAPTURE_STACK", opts.stack.to_string())
        .env(
            "TRAMP_CAPTURE_POINTERS",
            if opts.pointers { "1" } else { "0" },
        );
    // The started process's pid names its trace; it is known once spawned.
    let mut session = Session::new(&logs, 0, opts);
    if session.bounded() {
        command.env("TRAMP_CAPTURE_BACKLOG", opts.backlog.max(1).to_string());
    }
    let mut child = command
        .spawn()
        .map_err(|e| Error::Usage(format!("cannot run {}: {e}", program.to_string_lossy())))?;
    let root = child.id() as u64;
    session.set_root(root);
    let mut failed = None;
    // Idle polls back off from 1 to 16 ms (a quiet program costs ~60
    // directory reads a second); anything read resets the wait.
    let mut idle_ms = 1;
    let status = loop {
        if failed.is_none() {
            match session.poll() {
                Ok(true) => idle_ms = 1,
                Ok(false) => {
                    std::thread::sleep(std::time::Duration::from_millis(idle_ms));
                    idle_ms = (idle_ms * 2).min(16);
                }
                Err(e) => failed = Some(e),
            }
        } else {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let done = session.finish()?;
    drop(logs_dir);
    Ok(Recording {
        status,
        traces: done.traces,
        peak_disk: done.peak_disk,
        backlog: opts.backlog,
        bounded: done.bounded,
        temp_dir: logs,
    })
}

/// Whether an output name asks for tpack (`.tpack`, possibly with a
/// compression extension after it); anything else is HATF.
pub fn is_tpack(name: &str) -> bool {
    tramp_core::io::Compression::strip_extension(name).ends_with(".tpack")
}

/// Converts the `trace.PID.NANOS.raw` logs a finished recording left in
/// `dir`, one trace per process (`root`'s is `opts.output`).
pub fn convert_all(
    dir: &Path,
    root: u64,
    opts: &RecordOptions,
) -> Result<Vec<(u64, PathBuf, ConvertStats)>, Error> {
    Ok(Session::new(dir, root, opts).finish()?.traces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_packs_zstd_3_in_blocks_of_256_ki_records() {
        // Smaller blocks than tpack's default keep the model in cache, so
        // the conversion keeps up beside the program (docs/formats/capture.md).
        let o = RecordOptions::new(PathBuf::from("x.tpack"));
        assert_eq!(o.pack.codec, tramp_tpack::Codec::Zstd(3));
        assert_eq!(o.pack.block_records, 256 * 1024);
        assert!(o.pack.block_records < tramp_tpack::Options::default().block_records);
    }

    #[test]
    fn child_outputs_carry_the_pid() {
        assert_eq!(
            child_output(Path::new("/x/ls.hatf.zst"), 42),
            Path::new("/x/ls.42.hatf.zst")
        );
        assert_eq!(child_output(Path::new("trace"), 7), Path::new("trace.7"));
        assert_eq!(
            child_output(Path::new("/x/ls.tpack"), 42),
            Path::new("/x/ls.42.tpack")
        );
        // Pointer traces (Meta-TF) keep their extensions after the pid too.
        assert_eq!(
            child_output(Path::new("fk.mtf.zst"), 9),
            Path::new("fk.9.mtf.zst")
        );
    }
}
