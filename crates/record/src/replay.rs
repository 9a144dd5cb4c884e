//! Running a trace through a real allocator: the replay driver (a separate
//! process, with the allocator preloaded) executes the operation stream
//! that [`tramp_heap::replay`] derives from the trace's heap events.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use tramp_core::{Error, Progress, Run, Source, drive};
use tramp_heap::replay::{DriverReport, ReplayFeed, ReplayReport};

/// How to replay.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// A shared library preloaded into the driver (an allocator): the
    /// name it was given by, and its path.
    pub allocator: Option<(String, std::path::PathBuf)>,
    /// Do not write to the allocated memory.
    pub no_touch: bool,
    /// Most bytes the driver may hold live (requested sizes); the replay
    /// stops with an error before that.
    pub memory_limit: u64,
}

/// Checks that `lib` is an allocator the driver can be given: a shared
/// library (ELF, dynamic) that defines `malloc` and `free`, so that,
/// preloaded, the driver's calls resolve into it. Anything else (a text
/// file, a directory, a library without malloc) would leave the driver on
/// glibc's malloc while the report named `lib`.
pub fn check_allocator(lib: &Path) -> Result<(), Error> {
    use object::{Object, ObjectKind, ObjectSymbol};
    let name = lib.display();
    let refuse = |why: String| Err(Error::Usage(format!("--allocator {name}: {why}")));
    let meta =
        std::fs::metadata(lib).map_err(|e| Error::Usage(format!("--allocator {name}: {e}")))?;
    if !meta.is_file() {
        return refuse("not a file (a shared library is needed)".into());
    }
    let data = std::fs::read(lib)?;
    let Ok(obj) = object::File::parse(&*data) else {
        return refuse("not an ELF shared library".into());
    };
    if obj.kind() != ObjectKind::Dynamic {
        return refuse("not a shared library (an executable or object file)".into());
    }
    let defines = |want: &str| {
        obj.dynamic_symbols()
            .any(|s| s.is_definition() && s.name() == Ok(want))
    };
    let missing: Vec<&str> = ["malloc", "free"]
        .into_iter()
        .filter(|f| !defines(f))
        .collect();
    if !missing.is_empty() {
        return refuse(format!(
            "defines no {} of its own, so the driver's calls would not reach it",
            missing.join(" or ")
        ));
    }
    Ok(())
}

/// The default memory limit: half the machine's physical memory (from
/// /proc/meminfo), or 4 GiB where that cannot be read.
pub fn default_memory_limit() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(4 << 30, |kib| kib * 1024 / 2)
}

/// Feeds every record of `source` to the driver at `driver`, then collects
/// its measurements. The run says whether the trace was read to the end;
/// the replay covers the records before any damage.
pub fn replay(
    driver: &Path,
    source: &mut dyn Source,
    opts: &ReplayOptions,
    progress: &mut Progress,
) -> Result<(ReplayReport, Run), Error> {
    let mut cmd = Command::new(driver);
    if opts.no_touch {
        cmd.arg("--no-touch");
    }
    if let Some((_, lib)) = &opts.allocator {
        cmd.env("LD_PRELOAD", lib);
    }
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    let stdin = child.stdin.take().expect("piped");
    let mut feed = ReplayFeed::new(
        std::io::BufWriter::with_capacity(1 << 20, stdin),
        opts.memory_limit,
    );
    let run = drive(source, &mut [&mut feed], Vec::new(), progress);
    let (trace, operations, mut out) = feed.into_parts();
    out.flush()?;
    drop(out);
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(Error::Usage(format!(
            "the replay driver failed: {}",
            out.status
        )));
    }
    let driver: DriverReport = serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Usage(format!("the replay driver's report is unreadable: {e}")))?;
    let allocator = opts
        .allocator
        .as_ref()
        .map_or_else(|| "glibc (default)".into(), |(name, _)| name.clone());
    Ok((
        ReplayReport {
            allocator,
            trace,
            operations,
            driver,
        },
        run,
    ))
}
