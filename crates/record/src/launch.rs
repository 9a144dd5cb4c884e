//! Running a command under the capture library, then turning each recorded
//! process's raw logs into a HATF trace.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use tramp_core::Error;
use tramp_core::io::Output;
use tramp_hatf::{Field, Interp, Meta, Policy, Width, Writer};

use crate::convert::{ConvertStats, convert_process};

/// How to record.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The trace of the process started; forked children get the same name
    /// with `.PID` before the extension.
    pub output: PathBuf,
    /// Frames of call stack per allocation (0: the return address only).
    pub stack: usize,
}

/// What a recording produced.
#[derive(Debug)]
pub struct Recording {
    pub status: ExitStatus,
    /// One trace per process: (pid, path, what was converted).
    pub traces: Vec<(u64, PathBuf, ConvertStats)>,
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
    let (stem, ext) = match name.find(".hatf").or_else(|| name.find(".tpack")) {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    output.with_file_name(format!("{stem}.{pid}{ext}"))
}

/// Runs `cmd` under the capture library `lib` and writes one HATF trace per
/// process. The command's stdin, stdout and stderr are the caller's.
pub fn record(lib: &Path, cmd: &[OsString], opts: &RecordOptions) -> Result<Recording, Error> {
    let (program, args) = cmd
        .split_first()
        .ok_or_else(|| Error::Usage("no command to record".into()))?;
    // Removed when dropped, also when the command cannot start.
    let logs_dir = tempfile::Builder::new().prefix("tramp-record-").tempdir()?;
    let logs = logs_dir.path().to_path_buf();
    let mut preload = OsString::from(lib.as_os_str());
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut child = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", preload)
        .env("TRAMP_CAPTURE_DIR", &logs)
        .env("TRAMP_CAPTURE_STACK", opts.stack.to_string())
        .spawn()
        .map_err(|e| Error::Usage(format!("cannot run {}: {e}", program.to_string_lossy())))?;
    let root = child.id() as u64;
    let status = child.wait()?;
    let result = convert_all(&logs, root, opts);
    drop(logs_dir);
    Ok(Recording {
        status,
        traces: result?,
    })
}

/// Whether an output name asks for tpack (`.tpack`, possibly with a
/// compression extension after it); anything else is HATF.
pub fn is_tpack(name: &str) -> bool {
    tramp_core::io::Compression::strip_extension(name).ends_with(".tpack")
}

/// Groups `trace.PID.NANOS.raw` logs by process and converts each group.
pub fn convert_all(
    dir: &Path,
    root: u64,
    opts: &RecordOptions,
) -> Result<Vec<(u64, PathBuf, ConvertStats)>, Error> {
    let mut by_pid: std::collections::BTreeMap<u64, Vec<(u64, PathBuf)>> = Default::default();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let parts: Vec<&str> = name.split('.').collect();
        if let ["trace", pid, nanos, "raw"] = parts[..]
            && let (Ok(pid), Ok(nanos)) = (pid.parse::<u64>(), nanos.parse::<u64>())
        {
            by_pid.entry(pid).or_default().push((nanos, path));
        }
    }
    let mut out = Vec::new();
    for (pid, mut logs) in by_pid {
        logs.sort();
        let paths: Vec<PathBuf> = logs.into_iter().map(|(_, p)| p).collect();
        let target = if pid == root {
            opts.output.clone()
        } else {
            child_output(&opts.output, pid)
        };
        let name = target.to_string_lossy().into_owned();
        let file = Output::create(&name, None)?;
        let mut stats = if is_tpack(&name) {
            let mut w = tramp_tpack::Writer::new(file, tramp_tpack::Options::default())?;
            let stats = convert_process(&paths, &mut w)?;
            w.into_inner()?.finish()?;
            stats
        } else {
            let mut w = Writer::new(file, Policy::Naive);
            // Times as deltas from the previous event: a third smaller after
            // zstd than absolute nanoseconds (docs/formats/capture.md).
            w.write_meta(Meta::SetInterp(Field::Time, Interp::Delta(0)))?;
            w.write_meta(Meta::SetWidth(Field::Time, Width::Fixed(2)))?;
            let stats = convert_process(&paths, &mut w)?;
            w.into_inner()?.finish()?;
            stats
        };
        stats.pid = pid;
        out.push((pid, target, stats));
    }
    // The started process first.
    out.sort_by_key(|(pid, _, _)| (*pid != root, *pid));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
