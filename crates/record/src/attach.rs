//! `tramp record -p PID`: recording a process that is already running.
//!
//! gdb loads the capture library into the process and calls its
//! `tramp_attach`, which points every loaded module's GOT entries for the
//! malloc family (and `dlopen`, for modules loaded later) at the library
//! and starts its log; the log is converted as a recording's is. At the
//! end (`--duration`, Ctrl-C, SIGTERM, or the process's exit) gdb calls
//! `tramp_detach`, which writes the entries back and the last events out,
//! and leaves the process running as before. gdb, as heaptrack and memray
//! use it, rather than ptrace by hand: it finds `dlopen` in a process of
//! any build, runs a call in it on any thread and restores its registers,
//! and copes with signals arriving meanwhile; what tramp adds is that the
//! thread that makes the calls first leaves the allocator if it was
//! stopped inside it (a `dlopen` nested in a half-done `malloc` would
//! corrupt the heap), and that recording starts (`tramp_begin`) only
//! after every thread has been seen outside the allocator with the GOT
//! entries already ours, so that no call begun through an old entry
//! returns into the trace. docs/heap-profile.md, "Attaching", says what a
//! trace that starts at an attach holds.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tramp_core::Error;

use crate::launch::{RecordOptions, Recording};
use crate::live::Session;

/// How long gdb may take to attach or detach before it is stopped.
const GDB_TIMEOUT: Duration = Duration::from_secs(30);

/// gdb's part: leave the allocator, load the library, attach or detach.
/// `{LIB}`, `{CALL}` are filled in.
const SCRIPT: &str = r#"
import gdb
ALLOCATOR = ("malloc", "free", "calloc", "realloc", "memalign", "valloc",
             "pvalloc", "posix_memalign", "aligned_alloc", "reallocarray",
             "_int_", "tcache", "sysmalloc", "arena_", "unlink_chunk",
             "munmap_chunk", "mremap_chunk", "alloc_perturb", "_mid_memalign",
             "heap_trim", "systrim", "mtrim", "malloc_consolidate")

def allocator(name):
    # glibc's own names carry prefixes: __GI___libc_malloc, __libc_free.
    for p in ("__GI_", "__libc_", "__"):
        if name.startswith(p) and not name.startswith("_int_"):
            name = name[len(p):]
    return any(name.startswith(a) for a in ALLOCATOR)

def in_allocator():
    f = gdb.newest_frame()
    outer = None
    depth = 0
    while f is not None and depth < 64:
        if allocator(f.name() or ""):
            outer = f
        f = f.older()
        depth += 1
    return outer

def leave_allocator():
    for _ in range(32):
        f = in_allocator()
        if f is None:
            return True
        f.select()
        gdb.execute("finish", to_string=True)
    return in_allocator() is None

def all_threads_out():
    # Each thread seen outside the allocator once; after the GOT entries
    # are ours, a thread that left it can only enter it through them.
    first = gdb.selected_thread()
    ok = True
    for t in gdb.selected_inferior().threads():
        if t.is_valid():
            t.switch()
            ok = leave_allocator() and ok
    if first.is_valid():
        first.switch()
    return ok

if not leave_allocator():
    print("TRAMP-BUSY")
else:
    {CALL}
"#;

/// The Python of an attach: dlopen, then tramp_attach.
fn attach_call(lib: &str, dir: &str, opts: &RecordOptions) -> String {
    format!(
        "h = int(gdb.parse_and_eval('(long) dlopen(\"{lib}\", 2)'))\n    \
         if h == 0:\n        \
         print('TRAMP-DLOPEN ' + gdb.parse_and_eval('(char *) dlerror()').string())\n    \
         else:\n        \
         r = int(gdb.parse_and_eval('(int) tramp_attach(\"{dir}\", \"{lib}\", {}, {}, {})'))\n        \
         if r == 0 and not all_threads_out():\n            \
         gdb.parse_and_eval('(int) tramp_detach()')\n            \
         print('TRAMP-BUSY')\n        \
         else:\n            \
         if r == 0:\n                \
         r = int(gdb.parse_and_eval('(int) tramp_begin()'))\n            \
         print('TRAMP-ATTACH %d' % r)",
        opts.stack, opts.sample, opts.backlog
    )
}

const DETACH_CALL: &str =
    "print('TRAMP-DETACH %d' % int(gdb.parse_and_eval('(int) tramp_detach()')))";

/// Why a process cannot be attached to, if it cannot: no such process, not
/// ours to trace, or statically linked (no dynamic loader to load the
/// library with).
pub fn check_attachable(pid: u32) -> Result<PathBuf, Error> {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    if !proc.exists() {
        return Err(Error::Attach(format!("no process {pid}")));
    }
    if gone(pid) {
        return Err(Error::Attach(format!("process {pid} has exited")));
    }
    let exe = std::fs::read_link(proc.join("exe")).map_err(|e| {
        Error::Attach(format!(
            "process {pid}: its executable cannot be read ({e}): it is not ours to trace \
             (another user's, or ptrace is restricted)"
        ))
    })?;
    let maps = std::fs::read_to_string(proc.join("maps")).unwrap_or_default();
    if !maps.contains("/libc.so") || !maps.contains("/ld-linux") {
        return Err(Error::Attach(format!(
            "process {pid} ({}) is statically linked (no dynamic loader and no libc.so in its \
             memory map): the capture library cannot be loaded into it",
            exe.display()
        )));
    }
    Ok(exe)
}

/// Runs gdb on `pid` with the Python `call` (after leaving the allocator)
/// and returns its output; errors name gdb's own complaint.
fn gdb(pid: u32, dir: &Path, call: &str) -> Result<String, Error> {
    let script = dir.join(format!("gdb-{}.py", std::process::id()));
    let text = SCRIPT.replace("{CALL}", call);
    std::fs::File::create(&script)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::Attach(format!("writing gdb's script: {e}")))?;
    let mut child = Command::new("gdb")
        .args(["-nx", "-batch", "-p", &pid.to_string()])
        .args(["-ex", "set confirm off", "-ex", "set pagination off"])
        .arg("-ex")
        .arg(format!("source {}", script.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::Attach(format!(
                "cannot run gdb ({e}): attaching to a process needs gdb (Debian: apt install gdb)"
            ))
        })?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > GDB_TIMEOUT {
            // Killing gdb detaches it (the kernel ends its tracing); the
            // process carries on from where it was stopped.
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&script);
            return Err(Error::Attach(format!(
                "gdb did not finish within {} s on process {pid}",
                GDB_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = std::fs::remove_file(&script);
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut s, &mut out);
    }
    let mut err = String::new();
    if let Some(mut s) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut s, &mut err);
    }
    if gone(pid) || err.contains("No such process") || err.contains("exited") {
        return Err(Error::Attach(format!(
            "process {pid} exited during the attach"
        )));
    }
    if err.contains("ptrace: Operation not permitted") {
        return Err(Error::Attach(format!(
            "process {pid}: ptrace is not permitted (another user's process, or \
             /proc/sys/kernel/yama/ptrace_scope forbids it: run as its user with \
             ptrace_scope 0, or with CAP_SYS_PTRACE)"
        )));
    }
    if err.contains("Couldn't write extended state status") {
        // gdb before 14 sizes the XSAVE area from the features it knows;
        // Linux wants the whole area written back, which AMX's tile state
        // makes larger: every call into the process fails.
        return Err(Error::Attach(format!(
            "gdb cannot call functions in process {pid} on this machine: its XSAVE area \
             (with this CPU's AMX state) is larger than this gdb writes back (gdb \
             before 14; Linux refuses the write: {}); attaching needs gdb 14 or \
             later, `tramp record -- CMD` works with any",
            err.lines()
                .find(|l| l.contains("extended state"))
                .unwrap_or("")
                .trim()
        )));
    }
    if !status.success() && !out.contains("TRAMP-") {
        return Err(Error::Attach(format!(
            "gdb could not attach to process {pid}: {}",
            err.lines().last().unwrap_or("")
        )));
    }
    Ok(out + &err)
}

/// The process has ended (gone, or a zombie waiting for its parent).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "PID (COMM) STATE …": COMM may hold spaces and parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_none_or(|state| matches!(state, 'Z' | 'X')),
        Err(_) => true,
    }
}

/// The number after `tag` in gdb's output.
fn answer(out: &str, tag: &str) -> Option<i64> {
    out.lines()
        .find_map(|l| l.strip_prefix(tag))
        .and_then(|v| v.trim().parse().ok())
}

/// Attaches to `pid` with the capture library `lib`, records until
/// `duration` passes, the caller's signal handler sets
/// `opts.interrupted`, or the process exits, detaches, and returns the
/// recording (its status is success: the process runs on).
pub fn attach(
    lib: &Path,
    pid: u32,
    duration: Option<Duration>,
    opts: &RecordOptions,
) -> Result<(Recording, AttachTimes), Error> {
    check_attachable(pid)?;
    let name = opts.output.to_string_lossy();
    crate::launch::TraceKind::of(&name, opts.pointers)?;
    tramp_io::Output::check_creatable(&name)?;
    let logs_dir = tempfile::Builder::new().prefix("tramp-attach-").tempdir()?;
    let logs = logs_dir.path().to_path_buf();
    let quoted = |p: &Path| {
        let s = p.to_string_lossy().into_owned();
        if s.contains(['"', '\'', '\\', '\n']) {
            Err(Error::Attach(format!("{s}: a path gdb cannot be given")))
        } else {
            Ok(s)
        }
    };
    let (lib_s, dir_s) = (quoted(lib)?, quoted(&logs)?);
    let mut attached = opts.clone();
    attached.attached = true;
    let opts = &attached;
    let mut session = Session::new(&logs, pid as u64, opts);
    // The log's bound holds only where read bytes can be given back.
    let mut bounded = opts.clone();
    if !session.bounded() {
        bounded.backlog = 0;
    }
    let t0 = Instant::now();
    let out = gdb(pid, &logs, &attach_call(&lib_s, &dir_s, &bounded))?;
    let attach_time = t0.elapsed();
    if out.contains("TRAMP-BUSY") {
        return Err(Error::Attach(format!(
            "process {pid} stayed inside the allocator: the attach was undone (nothing \
             recorded, its GOT its own again); try again"
        )));
    }
    if let Some(why) = out.lines().find_map(|l| l.strip_prefix("TRAMP-DLOPEN ")) {
        return Err(Error::Attach(format!(
            "process {pid} could not load the capture library: {why}"
        )));
    }
    match answer(&out, "TRAMP-ATTACH ") {
        Some(0) => {}
        Some(1) => {
            return Err(Error::Attach(format!(
                "process {pid} is already being recorded (by tramp record or an attach)"
            )));
        }
        Some(code) => {
            return Err(Error::Attach(format!(
                "process {pid}: the capture library could not start (code {code}: 2, its log \
                 could not be opened; 3, its own functions were not found)"
            )));
        }
        None => {
            return Err(Error::Attach(format!(
                "gdb did not attach to process {pid}: {}",
                out.lines().last().unwrap_or("")
            )));
        }
    }
    let alive = || !gone(pid);
    let start = Instant::now();
    let mut failed = None;
    let mut idle_ms = 1;
    loop {
        match session.poll() {
            Ok(true) => idle_ms = 1,
            Ok(false) => {
                std::thread::sleep(Duration::from_millis(idle_ms));
                idle_ms = (idle_ms * 2).min(16);
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
        if opts.interrupted.load(Ordering::Relaxed) != 0
            || duration.is_some_and(|d| start.elapsed() >= d)
            || !alive()
        {
            break;
        }
    }
    // Detach whatever happened, unless the process is gone.
    let t1 = Instant::now();
    let detached = if alive() {
        let out = gdb(pid, &logs, DETACH_CALL);
        Some(out.map(|o| answer(&o, "TRAMP-DETACH ")))
    } else {
        None
    };
    let detach_time = t1.elapsed();
    if let Some(e) = failed {
        return Err(e);
    }
    let interrupted = opts.interrupted.load(Ordering::Relaxed);
    let done = session.finish((interrupted != 0).then_some(interrupted))?;
    drop(logs_dir);
    let restored = match detached {
        Some(Ok(Some(n))) => Some(n),
        Some(Err(e)) => return Err(e),
        _ => None,
    };
    Ok((
        Recording {
            status: std::os::unix::process::ExitStatusExt::from_raw(0),
            traces: done.traces,
            peak_disk: done.peak_disk,
            backlog: opts.backlog,
            bounded: done.bounded,
            temp_dir: logs,
            output: opts.output.clone(),
            joined: None,
        },
        AttachTimes {
            pid,
            attach: attach_time,
            detach: detach_time,
            restored,
        },
    ))
}

/// How the attach went.
#[derive(Clone, Debug)]
pub struct AttachTimes {
    pub pid: u32,
    pub attach: Duration,
    pub detach: Duration,
    /// GOT entries written back at the detach (`None`: the process had
    /// exited).
    pub restored: Option<i64>,
}

impl std::fmt::Display for AttachTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "attached to process {} in {:.2} s, detached in {:.2} s",
            self.pid,
            self.attach.as_secs_f64(),
            self.detach.as_secs_f64()
        )?;
        match self.restored {
            Some(n) => write!(f, " ({n} GOT entries restored; it runs on)"),
            None => write!(f, " (it exited while attached)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_process_is_refused_by_name() {
        // Pids wrap below 2^22 on Linux.
        let e = check_attachable(4_000_000).unwrap_err().to_string();
        assert!(e.contains("no process 4000000"), "{e}");
    }

    #[test]
    fn answers_are_read_from_gdbs_output() {
        let out = "warning: x\nTRAMP-ATTACH 0\n[Inferior 1 detached]\n";
        assert_eq!(answer(out, "TRAMP-ATTACH "), Some(0));
        assert_eq!(answer(out, "TRAMP-DETACH "), None);
    }
}
