//! Running a trace through real allocators: the trace becomes a replay
//! plan once ([`tramp_heap::replay`], in an unnamed temporary file that
//! the kernel removes however tramp ends), then the replay driver (a
//! separate process, with each allocator preloaded) executes the plan,
//! once per allocator and repetition, alternating allocators so that
//! drift in the machine touches them alike. [`report`] holds what comes
//! back and the side-by-side study.

pub mod report;

use std::io::{BufWriter, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use tramp_core::{Error, Run, Source, drive};
use tramp_heap::replay::ReplayFeed;
use tramp_io::Progress;

pub use report::{AllocatorRuns, DriverReport, Fidelity, Study};

/// An allocator to replay with: its name in the report and the library to
/// preload (`None`: the C library's own malloc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocator {
    pub name: String,
    pub path: Option<PathBuf>,
}

impl Allocator {
    pub fn glibc() -> Allocator {
        Allocator {
            name: "glibc".into(),
            path: None,
        }
    }

    /// `glibc` (or `libc`, `system`), or a shared library's path, checked
    /// to be an allocator; named after the library (`libjemalloc.so.2` is
    /// `jemalloc`) unless `name` is given.
    pub fn parse(spec: &str, name: Option<&str>) -> Result<Allocator, Error> {
        if matches!(spec, "glibc" | "libc" | "system") {
            return Ok(Allocator {
                name: name.unwrap_or("glibc").into(),
                path: None,
            });
        }
        let path = std::fs::canonicalize(spec)
            .map_err(|e| Error::Usage(format!("--allocator {spec}: {e}")))?;
        check_allocator(&path)?;
        let name = name.map(str::to_string).unwrap_or_else(|| {
            let f = Path::new(spec)
                .file_name()
                .map_or(spec.into(), |f| f.to_string_lossy().into_owned());
            let f = f.strip_prefix("lib").unwrap_or(&f);
            f.split(".so").next().unwrap_or(f).to_string()
        });
        Ok(Allocator {
            name,
            path: Some(path),
        })
    }

    /// A comma-separated list of allocators.
    pub fn parse_list(list: &str) -> Result<Vec<Allocator>, Error> {
        list.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| Allocator::parse(s.trim(), None))
            .collect()
    }

    /// mimalloc-bench's way of naming allocators of one's own: a file of
    /// `name path` lines (`#` starts a comment).
    pub fn parse_external(text: &str, file: &str) -> Result<Vec<Allocator>, Error> {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut w = line.split_whitespace();
            let (Some(name), Some(path), None) = (w.next(), w.next(), w.next()) else {
                return Err(Error::Usage(format!(
                    "{file}, line {}: expected `name path`, found `{line}`",
                    i + 1
                )));
            };
            out.push(Allocator::parse(path, Some(name))?);
        }
        Ok(out)
    }
}

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The allocators, each run `repeat` times, alternated.
    pub allocators: Vec<Allocator>,
    pub repeat: usize,
    /// Do not write to the allocated memory.
    pub no_touch: bool,
    /// Every operation on one thread, in trace order.
    pub serial: bool,
    /// Most bytes the driver may hold live (requested sizes); the replay
    /// stops with an error before that.
    pub memory_limit: u64,
    /// Seconds a replay thread may wait for another's operation before
    /// the replay is abandoned as stuck.
    pub wait_limit: f64,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            allocators: vec![Allocator::glibc()],
            repeat: 1,
            no_touch: false,
            serial: false,
            memory_limit: default_memory_limit(),
            wait_limit: 60.0,
        }
    }
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

/// A trace made into a replay plan.
pub struct Plan {
    /// The plan, in an unnamed temporary file.
    pub file: std::fs::File,
    pub plan: tramp_heap::replay::PlanReport,
    pub trace: tramp_heap::Report,
    /// Seconds spent reading the trace and writing the plan.
    pub seconds: f64,
}

/// Reads every record of `source` into a replay plan. The run says whether
/// the trace was read to the end; the plan covers the records before any
/// damage.
pub fn make_plan(
    source: &mut dyn Source,
    opts: &ReplayOptions,
    progress: &mut Progress,
) -> Result<(Plan, Run), Error> {
    let t = Instant::now();
    let file = tempfile::tempfile()?;
    let mut feed = ReplayFeed::new(BufWriter::with_capacity(1 << 20, file), opts.memory_limit)?;
    // One address space: a run's second image would replay its frees
    // against the first's blocks.
    let mut one = tramp_heap::images::OneImage::new("replay");
    let run = drive(source, &mut [&mut one, &mut feed], Vec::new(), progress);
    let (trace, plan, out) = feed.finish()?;
    let mut file = out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
    file.seek(SeekFrom::Start(0))?;
    Ok((
        Plan {
            file,
            plan,
            trace,
            seconds: t.elapsed().as_secs_f64(),
        },
        run,
    ))
}

/// The environment variables that tune allocators, as this process has
/// them (the driver inherits them): `MALLOC_*`, `GLIBC_TUNABLES`,
/// `MIMALLOC_*`, `JE_MALLOC_CONF` and the like.
pub fn allocator_environment() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            k.starts_with("MALLOC_")
                || k.starts_with("MIMALLOC_")
                || k.starts_with("GLIBC_TUNABLES")
                || k.ends_with("MALLOC_CONF")
                || k.starts_with("TCMALLOC_")
        })
        .collect();
    v.sort();
    v
}

/// Runs the driver at `driver` once on `plan` with `alloc` preloaded, and
/// checks that its malloc resolved into the library named.
pub fn run_driver(
    driver: &Path,
    plan: &std::fs::File,
    alloc: &Allocator,
    opts: &ReplayOptions,
) -> Result<DriverReport, Error> {
    let mut cmd = Command::new(driver);
    if opts.no_touch {
        cmd.arg("--no-touch");
    }
    if opts.serial {
        cmd.arg("--serial");
    }
    cmd.args(["--wait-limit", &opts.wait_limit.to_string()]);
    match &alloc.path {
        Some(lib) => cmd.env("LD_PRELOAD", lib),
        None => cmd.env_remove("LD_PRELOAD"),
    };
    let out = cmd
        .stdin(Stdio::from(plan.try_clone()?))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Option<DriverReport> = serde_json::from_slice(&out.stdout).ok();
    let report = match (out.status.code(), report) {
        (Some(0), Some(r)) => r,
        (Some(3), Some(r)) => {
            return Err(Error::Program(format!(
                "replaying with {}: {} wait(s) for another thread's operation passed {} s (--wait-limit); the replay was abandoned: {}",
                alloc.name,
                r.waits_timed_out,
                opts.wait_limit,
                stderr.trim()
            )));
        }
        (_, _) => {
            return Err(Error::Program(format!(
                "the replay driver failed with {} ({}): {}",
                alloc.name,
                out.status,
                stderr.trim()
            )));
        }
    };
    // The driver's malloc must be the library named.
    let from = std::fs::canonicalize(&report.malloc_from).unwrap_or_default();
    let ok = match &alloc.path {
        Some(lib) => from == *lib,
        None => report.malloc_from.contains("libc.so"),
    };
    if !ok {
        return Err(Error::Program(format!(
            "replaying with {}: the driver's malloc resolved into {}, not {}",
            alloc.name,
            report.malloc_from,
            alloc
                .path
                .as_ref()
                .map_or("the C library".into(), |p| p.display().to_string())
        )));
    }
    Ok(report)
}

/// Makes the plan, runs every allocator `repeat` times (alternated), and
/// gathers the study. `each` is told of every run as it ends.
pub fn study(
    driver: &Path,
    source: &mut dyn Source,
    opts: &ReplayOptions,
    progress: &mut Progress,
    each: &mut dyn FnMut(&str, usize, &DriverReport),
) -> Result<(Study, Run), Error> {
    let (plan, run) = make_plan(source, opts, progress)?;
    let mut runs: Vec<AllocatorRuns> = opts.allocators.iter().map(AllocatorRuns::new).collect();
    for rep in 0..opts.repeat.max(1) {
        for (a, r) in opts.allocators.iter().zip(runs.iter_mut()) {
            let d = run_driver(driver, &plan.file, a, opts)?;
            each(&a.name, rep, &d);
            r.runs.push(d);
        }
    }
    Ok((Study::new(plan, runs, opts, allocator_environment()), run))
}
