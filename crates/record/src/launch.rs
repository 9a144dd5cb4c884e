//! Running a command under the capture library, then turning each recorded
//! process's raw logs into a HATF trace.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use tramp_core::Error;

use crate::convert::ConvertStats;
use crate::live::{BACKLOG_PER_LOG, Session};

/// How to record.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The trace of the process started; forked children get the same name
    /// with `.PID` before the extension.
    pub output: PathBuf,
    /// Frames of call stack per allocation (0: the return address only;
    /// default 64).
    pub stack: usize,
    /// Byte-weighted Poisson sampling of allocations with this mean (0:
    /// every event; `tramp_heap::sampling`).
    pub sample: u64,
    /// The samplers' seed (0: from the clock), for a sample that repeats.
    pub sample_seed: u64,
    /// The processes are attached to, not started (`record -p`): every
    /// trace begins with `tramp:attached`.
    pub attached: bool,
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
    /// Write a tpack recording's profile index after its last block
    /// (`tramp_index`; the default), made while the program runs.
    pub index: bool,
    /// Set to a signal's number when the recording was interrupted by one
    /// (the caller's signal handler sets it); every trace then ends with a
    /// `tramp:interrupted` comment.
    pub interrupted: Arc<AtomicI32>,
    /// The started program's pid, published once it runs (0 before), for
    /// a signal handler that passes signals on to it.
    pub child: Arc<AtomicU32>,
}

/// The least `--temp-limit`: a thread flushes its events in chunks of up
/// to 1 MiB, so a bound below that would make every flush wait.
pub const LEAST_BACKLOG: u64 = 1 << 20;

/// The forms a recording can be written as, chosen by the output's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// `.tpack` (the default).
    Tpack,
    /// `.hatf`.
    Hatf,
    /// `.hatf.txt` or `.txt`: HATF's text form.
    HatfText,
    /// `.mtf`, with `--pointers` only.
    Pointers,
}

impl TraceKind {
    /// The form an output name asks for (after any `.zst`, `.gz` or `.xz`),
    /// or a usage error naming the forms a recording can take.
    pub fn of(name: &str, pointers: bool) -> Result<TraceKind, Error> {
        let bare = tramp_io::Compression::strip_extension(name);
        let kind = if bare.ends_with(".mtf") {
            if !pointers {
                return Err(Error::Usage(format!(
                    "{name}: a Meta-TF recording is a pointer trace: add --pointers, or name the output *.tpack, *.hatf or *.hatf.txt"
                )));
            }
            TraceKind::Pointers
        } else if pointers {
            return Err(Error::Usage(format!(
                "{name}: a pointer trace is Meta-TF (tpack and HATF hold no loads or stores): name it *.mtf or *.mtf.zst"
            )));
        } else if bare.ends_with(".tpack") {
            TraceKind::Tpack
        } else if bare.ends_with(".hatf") {
            TraceKind::Hatf
        } else if bare.ends_with(".txt") {
            TraceKind::HatfText
        } else {
            return Err(Error::Usage(format!(
                "{name}: a recording is written as tpack (*.tpack), HATF (*.hatf) or HATF text (*.hatf.txt), each optionally compressed (*.zst, *.gz, *.xz); with --pointers as Meta-TF (*.mtf): name the output one of these"
            )));
        };
        Ok(kind)
    }
}

/// Why a program cannot be recorded, told before it runs: a statically
/// linked executable has no dynamic loader, so nothing preloads the capture
/// library into it. `program` is looked up in PATH as the shell would;
/// what is not found or not ELF (a script: its interpreter is what runs)
/// is left to run.
pub fn check_recordable(program: &std::ffi::OsStr) -> Result<(), Error> {
    let Some(path) = find_program(program) else {
        return Ok(());
    };
    let Ok(file) = std::fs::File::open(&path) else {
        return Ok(());
    };
    let mut head = Vec::new();
    use std::io::Read;
    if file.take(1 << 20).read_to_end(&mut head).is_err() || !head.starts_with(b"\x7fELF") {
        return Ok(());
    }
    if is_static_elf(&head) == Some(true) {
        return Err(Error::Usage(format!(
            "{} is statically linked: it has no dynamic loader, so the capture library cannot be preloaded into it and nothing would be recorded (link it dynamically to record it)",
            path.display()
        )));
    }
    Ok(())
}

/// Whether an ELF file (its first bytes) has no program interpreter and no
/// dynamic section: `None` if its program headers are not within `head`.
fn is_static_elf(head: &[u8]) -> Option<bool> {
    let wide = *head.get(4)? == 2;
    let le = *head.get(5)? == 1;
    let u = |at: usize, n: usize| -> Option<u64> {
        let b = head.get(at..at + n)?;
        let mut v = 0u64;
        for i in 0..n {
            let byte = if le { b[i] } else { b[n - 1 - i] };
            v |= (byte as u64) << (8 * i);
        }
        Some(v)
    };
    let (phoff, phentsize, phnum) = if wide {
        (u(0x20, 8)?, u(0x36, 2)?, u(0x38, 2)?)
    } else {
        (u(0x1c, 4)?, u(0x2a, 2)?, u(0x2c, 2)?)
    };
    let mut dynamic = false;
    for i in 0..phnum {
        let at = usize::try_from(phoff.checked_add(i.checked_mul(phentsize)?)?).ok()?;
        match u(at, 4)? {
            // PT_INTERP, PT_DYNAMIC
            3 | 2 => dynamic = true,
            _ => {}
        }
    }
    Some(!dynamic)
}

/// `program` as the shell finds it: a path if it has a slash, else the
/// first executable of that name in PATH.
fn find_program(program: &std::ffi::OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PATH")?
        .to_string_lossy()
        .split(':')
        .map(|d| Path::new(if d.is_empty() { "." } else { d }).join(p))
        .find(|c| c.is_file())
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

    /// Samples allocations with this mean (`--sample`), the samplers seeded
    /// with `seed` (0: from the clock); a pointer trace needs every event.
    pub fn set_sample(&mut self, mean: u64, seed: u64) -> Result<(), Error> {
        if self.pointers {
            return Err(Error::Usage(
                "--sample records some allocations; --pointers needs them all".into(),
            ));
        }
        self.sample = mean;
        self.sample_seed = seed;
        Ok(())
    }

    /// Sets the tpack packing from `CODEC[,block=N][,threads=N]` (as
    /// `tramp convert --policy` takes it).
    pub fn set_pack(&mut self, spec: &str) -> Result<(), Error> {
        self.pack = tramp_tpack::Options::parse_for_machine_explained(spec)
            .map_err(|why| Error::Usage(format!("packing {spec:?}: {why}")))?;
        Ok(())
    }

    /// Options for `output` with the recording defaults.
    pub fn new(output: PathBuf) -> RecordOptions {
        RecordOptions {
            output,
            stack: 64,
            sample: 0,
            sample_seed: 0,
            attached: false,
            pack: tramp_tpack::Options::parse_for_machine(Self::RECORD_PACK)
                .expect("a valid codec"),
            backlog: BACKLOG_PER_LOG,
            pointers: false,
            index: true,
            interrupted: Arc::new(AtomicI32::new(0)),
            child: Arc::new(AtomicU32::new(0)),
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
    /// The trace the user named.
    pub output: PathBuf,
    /// The processes' traces were joined into `output` (one run, one
    /// file: crate::join); `traces` then all name it.
    pub joined: Option<crate::join::Joined>,
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

    /// The signal that interrupted the recording, if one did.
    pub fn interrupted(&self) -> Option<i32> {
        self.traces.iter().find_map(|(_, _, s)| s.interrupted)
    }

    /// Why the recording holds nothing, if it holds nothing it should:
    /// no process loaded the capture library, no process made a heap
    /// call, or (`pointers`) no load or store was seen.
    pub fn nothing_captured(&self, program: &str, pointers: bool) -> Option<String> {
        if self.traces.is_empty() {
            return Some(format!(
                "nothing was recorded: no process of the run loaded the capture library ({program} or what it ran is statically linked, or cleared LD_PRELOAD), so no trace was written"
            ));
        }
        let events: u64 = self
            .traces
            .iter()
            .map(|(_, _, s)| s.allocs + s.frees + s.reallocs)
            .sum();
        if events == 0 {
            return Some(format!(
                "nothing was recorded: the capture library was loaded but no process made a heap call it sees (the traces are kept: {})",
                self.files()
            ));
        }
        let accesses: u64 = self.traces.iter().map(|(_, _, s)| s.loads + s.stores).sum();
        if pointers && accesses == 0 {
            return Some(format!(
                "no loads or stores were recorded: {program} was not built with `tramp cc` (uninstrumented code is not seen); the heap events are kept: {}",
                self.files()
            ));
        }
        None
    }

    /// The traces written, comma-separated.
    fn files(&self) -> String {
        self.traces
            .iter()
            .map(|(_, p, _)| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
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

    /// What a front end tells the user once the program has ended, a line
    /// each (without the `tramp: ` prefix): each process's trace and its
    /// counts, damage, events written late, the temporary disk, the traces
    /// written, the signal that killed the program and the one that
    /// interrupted the recording.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (pid, path, st) in &self.traces {
            out.push(format!("pid {pid}: {st} -> {}", path.display()));
            for d in &st.damage {
                out.push(format!("pid {pid}: log damaged, events after it lost: {d}"));
            }
            if st.late > 0 {
                out.push(format!(
                    "pid {pid}: {} events ({:.2} %) were written late: a thread held them while others' later events were written, so they are out of time order in the trace (with their own times); none was lost",
                    st.late,
                    100.0 * st.late as f64 / st.records.max(1) as f64
                ));
            }
        }
        out.push(self.disk_summary());
        if let Some(j) = &self.joined {
            out.push(format!(
                "wrote the run's {} processes into one file, {} ({} records, {:.1} MiB joined in {:.0} ms; `tramp stats` lists them, `--pid` chooses one, `tramp convert --split` makes a file of each)",
                j.traces,
                self.output.display(),
                j.records,
                j.bytes as f64 / (1 << 20) as f64,
                j.seconds * 1e3
            ));
        } else if self.traces.len() > 1 {
            out.push(format!(
                "wrote {} traces, one per process:",
                self.traces.len()
            ));
            for (pid, path, _) in &self.traces {
                out.push(format!("  {} (pid {pid})", path.display()));
            }
        }
        if let Some(sig) = self.signal() {
            out.push(format!("the program was killed by signal {sig}"));
        }
        if let Some(sig) = self.interrupted() {
            out.push(format!(
                "the recording was interrupted by signal {sig}; every event until the program ended is kept, and the traces say so (a tramp:interrupted comment)"
            ));
        }
        out
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

/// The output name for a process other than the one started: the
/// program's name and pid before the extensions (`x.tpack` →
/// `x.python3.4242.tpack`).
pub fn child_output(output: &Path, program: &str, pid: u64) -> PathBuf {
    let name = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("trace.tpack");
    let (stem, ext) = match [".hatf", ".tpack", ".mtf", ".txt"]
        .iter()
        .filter_map(|e| name.find(e))
        .min()
    {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    let program: String = program
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .collect();
    output.with_file_name(format!("{stem}.{program}.{pid}{ext}"))
}

/// Refuses, before the program runs, a side output (`--stats-out`,
/// `--report`) that is the trace itself or cannot be created: the run
/// would otherwise be recorded whole and then fail.
pub fn check_side_output(file: &str, trace: &str) -> Result<(), Error> {
    // Compared as the files they would be: the directory resolved (links
    // and `..`), the name as given.
    let resolved = |p: &str| {
        let p = Path::new(p);
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        dir.canonicalize()
            .ok()
            .zip(p.file_name().map(|n| n.to_os_string()))
            .map(|(d, n)| d.join(n))
    };
    if file != "-" && (file == trace || resolved(file).is_some_and(|f| Some(f) == resolved(trace)))
    {
        return Err(Error::Usage(format!(
            "{file} is also the trace's output: name another file"
        )));
    }
    tramp_io::Output::check_creatable(file)?;
    Ok(())
}

/// The default name of a recording: `PROGRAM.tpack` for a command
/// (`PROGRAM.mtf.zst` with pointers), `PROGRAM.PID.tpack` for a process
/// attached to, `trace.tpack` when neither names one.
pub fn default_output(
    pid: Option<u32>,
    command: Option<&std::ffi::OsStr>,
    pointers: bool,
) -> String {
    let program = match (pid, command) {
        (Some(pid), _) => format!("{}.{pid}", program_of(pid as u64)),
        (None, Some(c)) => Path::new(c)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".into()),
        (None, None) => "trace".into(),
    };
    if pointers {
        format!("{program}.mtf.zst")
    } else {
        format!("{program}.tpack")
    }
}

/// The program a recording ran: the attached process's (`pid`), else the
/// command's file name, else `trace`.
pub fn program_name(pid: Option<u32>, command: Option<&OsString>) -> String {
    match (pid, command) {
        (Some(pid), _) => program_of(u64::from(pid)),
        (None, c) => c
            .and_then(|c| Path::new(c).file_name())
            .map_or("trace".into(), |n| n.to_string_lossy().into_owned()),
    }
}

/// The name of the program a process runs (its executable's file name,
/// else its `comm`), or `process` if it is gone.
pub fn program_of(pid: u64) -> String {
    if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe"))
        && let Some(n) = exe.file_name()
    {
        let n = n.to_string_lossy();
        // A deleted executable reads as `NAME (deleted)`.
        return n.trim_end_matches(" (deleted)").to_string();
    }
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_string())
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "process".into())
}

/// Runs `cmd` under the capture library `lib` and writes one trace per
/// process, converting while the program runs. The command's stdin, stdout
/// and stderr are the caller's.
pub fn record(lib: &Path, cmd: &[OsString], opts: &RecordOptions) -> Result<Recording, Error> {
    let (program, args) = cmd
        .split_first()
        .ok_or_else(|| Error::Usage("no command to record".into()))?;
    let name = opts.output.to_string_lossy();
    TraceKind::of(&name, opts.pointers)?;
    if opts.backlog < LEAST_BACKLOG {
        return Err(Error::Usage(format!(
            "a temporary-disk bound of {} bytes is below the least, {LEAST_BACKLOG} (1 MiB): a thread flushes up to 1 MiB at a time",
            opts.backlog
        )));
    }
    check_recordable(program)?;
    // Every trace's directory must take a file before the program runs:
    // a recording that cannot be written is refused, not lost at the end.
    tramp_io::Output::check_creatable(&name)?;
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
        .env("TRAMP_CAPTURE_SAMPLE", opts.sample.to_string())
        .env("TRAMP_CAPTURE_SEED", opts.sample_seed.to_string())
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
        .map_err(|e| Error::Program(format!("cannot run {}: {e}", program.to_string_lossy())))?;
    let root = child.id() as u64;
    opts.child.store(child.id(), Ordering::Relaxed);
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
    let interrupted = opts.interrupted.load(Ordering::Relaxed);
    let done = session.finish((interrupted != 0).then_some(interrupted))?;
    drop(logs_dir);
    let mut traces = done.traces;
    let joined = join_run(&opts.output, &mut traces)?;
    Ok(Recording {
        status,
        traces,
        peak_disk: done.peak_disk,
        backlog: opts.backlog,
        bounded: done.bounded,
        temp_dir: logs,
        output: opts.output.clone(),
        joined,
    })
}

/// Joins a run's traces into the one file named `output` when they are
/// plain tpack files and there are several (`traces` then all name it);
/// HATF and pointer traces, and compressed tpack, stay a file per
/// process (docs/recording.md, "One run, one file").
pub(crate) fn join_run(
    output: &Path,
    traces: &mut [(u64, PathBuf, ConvertStats)],
) -> Result<Option<crate::join::Joined>, Error> {
    let name = output.to_string_lossy();
    let plain = matches!(TraceKind::of(&name, false), Ok(TraceKind::Tpack))
        && tramp_io::Compression::from_path(&name) == tramp_io::Compression::None;
    if traces.len() < 2 || !plain {
        return Ok(None);
    }
    let paths: Vec<PathBuf> = traces.iter().map(|(_, p, _)| p.clone()).collect();
    let joined = crate::join::join(output, &paths)?;
    for t in traces.iter_mut() {
        t.1 = output.to_path_buf();
    }
    Ok(Some(joined))
}

/// Converts the `trace.PID.NANOS.raw` logs a finished recording left in
/// `dir`, one trace per process (`root`'s is `opts.output`).
pub fn convert_all(
    dir: &Path,
    root: u64,
    opts: &RecordOptions,
) -> Result<Vec<(u64, PathBuf, ConvertStats)>, Error> {
    Ok(Session::new(dir, root, opts).finish(None)?.traces)
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
    fn child_outputs_carry_the_program_and_pid() {
        assert_eq!(
            child_output(Path::new("/x/ls.hatf.zst"), "sort", 42),
            Path::new("/x/ls.sort.42.hatf.zst")
        );
        assert_eq!(
            child_output(Path::new("t.hatf.txt"), "sh", 7),
            Path::new("t.sh.7.hatf.txt")
        );
        assert_eq!(
            child_output(Path::new("/x/ls.tpack"), "a/b", 42),
            Path::new("/x/ls.a_b.42.tpack")
        );
        // Pointer traces (Meta-TF) keep their extensions after the pid too.
        assert_eq!(
            child_output(Path::new("fk.mtf.zst"), "fk", 9),
            Path::new("fk.fk.9.mtf.zst")
        );
    }

    #[test]
    fn a_recording_takes_the_forms_that_can_hold_it() {
        use TraceKind::*;
        for (name, pointers, kind) in [
            ("x.tpack", false, Some(Tpack)),
            ("x.tpack.zst", false, Some(Tpack)),
            ("x.hatf", false, Some(Hatf)),
            ("x.hatf.gz", false, Some(Hatf)),
            ("x.hatf.txt", false, Some(HatfText)),
            ("x.txt.xz", false, Some(HatfText)),
            ("x.mtf.zst", true, Some(Pointers)),
            ("x.mtf", false, None),
            ("x.tpack", true, None),
            ("x.ptf", false, None),
            ("x", false, None),
            ("x.zst", false, None),
        ] {
            assert_eq!(TraceKind::of(name, pointers).ok(), kind, "{name}");
        }
    }

    #[test]
    fn static_executables_are_told_from_dynamic_ones() {
        // This test binary is dynamically linked (it has an interpreter).
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(is_static_elf(&me), Some(false));
        // The same headers with every PT_INTERP and PT_DYNAMIC turned to
        // PT_NULL read as static.
        let mut stat = me.clone();
        let phoff = u64::from_le_bytes(me[0x20..0x28].try_into().unwrap()) as usize;
        let size = u16::from_le_bytes([me[0x36], me[0x37]]) as usize;
        let n = u16::from_le_bytes([me[0x38], me[0x39]]) as usize;
        for i in 0..n {
            let at = phoff + i * size;
            if matches!(stat[at], 2 | 3) {
                stat[at] = 0;
            }
        }
        assert_eq!(is_static_elf(&stat), Some(true));
        assert_eq!(is_static_elf(&me[..0x30]), None);
    }
}
