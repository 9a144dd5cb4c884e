//! `tramp record`: run a program under the capture library.

use anyhow::{Context, Result};
use clap::Args;

/// Record the heap behaviour of a program: every malloc, free, calloc,
/// realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc
/// and pvalloc, with size, address, thread, time (ns) and allocation site.
///
/// The program runs with the capture library preloaded (it must be
/// dynamically linked: a static one is refused before it runs); its output
/// and exit status pass through unchanged. Every process it forks (and
/// every program they exec) is recorded into the one file named: one run,
/// one file (docs/recording.md; `tramp stats` lists the processes,
/// `--pid` takes one, `tramp convert --split` makes a file of each). A
/// HATF, pointer or `.tpack.zst` recording keeps a file per process
/// instead (`out.PROGRAM.PID.tpack`), which tramp lists. The trace
/// is tpack by default (tramp's packed form, docs/formats/tpack.md: every
/// event, address, time, thread and site, about 1 to 2 bytes per event);
/// an output named `*.hatf` is HATF and `*.hatf.txt` HATF text instead,
/// each optionally compressed by extension (`.zst`, `.gz`, `.xz`); other
/// names are refused before the program runs, as is an output (or
/// --stats-out) that cannot be created. Module maps, call stacks and
/// stalls are comment records (docs/formats/capture.md). A run that
/// recorded nothing (no heap call seen; with --pointers, no load or store)
/// says why on stderr and still exits with the program's status (with
/// --strict: 1 when the program itself succeeded).
///
/// Ctrl-C reaches the program, and SIGINT, SIGTERM or SIGHUP sent to tramp
/// alone are passed on to it; tramp then finishes every trace, which ends
/// with a `tramp:interrupted` comment.
///
/// Temporary data: each thread of the program appends its events (6 to 8
/// bytes each on CPython and Perl) to a raw log per process in a fresh
/// directory under $TMPDIR (else /tmp), named `tramp-record-XXXXXX` and
/// removed at the end.
/// tramp converts the logs while the program runs, on another core, and
/// punches out what it has read, so the directory holds at most
/// --temp-limit MiB per process (32 by default) plus one buffer per thread.
/// When the conversion falls behind, the program's threads wait rather
/// than drop events; the waits are reported at the end and kept in the
/// trace. On a file system that cannot punch holes (tramp says so) the
/// logs grow with the run: point TMPDIR at ext4, xfs, btrfs or tmpfs.
///
/// Measuring the program's own slowdown: compare the program's wall time
/// alone with `tramp record` in all (`hyperfine 'PROG' 'tramp record -o
/// /tmp/t.tpack -- PROG'`); for the capture library alone, run the program
/// with `LD_PRELOAD=~/.cache/tramp/libtramp_capture-*.so
/// TRAMP_CAPTURE_DIR=DIR` (it only forwards when TRAMP_CAPTURE_DIR is
/// unset). bench/record-vs-heaptrack.sh does both beside heaptrack.
#[derive(Args)]
pub struct RecordArgs {
    /// Output trace: `*.tpack`, `*.hatf` or `*.hatf.txt` (compressed by
    /// extension: `x.hatf.zst`); with --pointers, Meta-TF (`.mtf`,
    /// `.mtf.zst`). Default: PROGRAM.tpack (PROGRAM.mtf.zst with
    /// --pointers).
    #[arg(short, long)]
    output: Option<String>,
    /// Frames of call stack per allocation, at most 64 (default 64; with
    /// --pointers, 0). The capture unwinds with cached .eh_frame rules and
    /// reuses the outer frames it proves unchanged since the thread's last
    /// event; the trace stores the stacks as a tree (each stack once, one id
    /// per event). `--stack 0` keeps only the caller's return address
    /// (fastest).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=64))]
    stack: Option<u16>,
    /// Record a sample of the allocations instead of all of them, for long
    /// runs and production: each thread draws the bytes to its next sample
    /// point from an exponential distribution of mean BYTES; an allocation
    /// that holds a point is recorded with its stack (blocks of BYTES or
    /// more always), and only the frees and reallocs of recorded blocks are.
    /// The trace says so (`tramp:sampling mean=BYTES`), and `stats`,
    /// `report`, `diff` and the exporters report estimates: each recorded
    /// block of s bytes stands for 1 / (1 − exp(−s / BYTES)) blocks, with
    /// standard errors (docs/heap-profile.md, "Sampling"). 4096 is a
    /// common choice.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    sample: Option<u64>,
    /// With --sample: seed the samplers (each thread's in the order the
    /// threads first allocate), so that a single-threaded program's sample
    /// repeats run after run. Default: a new sample every run.
    #[arg(long, value_name = "N", requires = "sample", value_parser = clap::value_parser!(u64).range(1..))]
    sample_seed: Option<u64>,
    /// How a tpack trace is packed: `CODEC[,block=N][,threads=N]` as `tramp
    /// convert --policy` takes it (raw, zstd-N, xz-N, gzip-N). Default
    /// zstd-3,block=256K, which keeps up with the program; `tramp convert
    /// --policy zstd-9` re-packs smaller (level 9 and tpack's blocks of 1 Mi
    /// records, too slow to run beside the program: 17-18% smaller on
    /// CPython and Perl recordings, 23% on a loop of random frees). While
    /// the program runs the conversion keeps to one core; while the
    /// program waits for it (its log over half of --temp-limit) and after
    /// the program ends it codes blocks on `threads` (default the
    /// machine's cores, up to four; the trace is the same with any).
    #[arg(long, value_name = "CODEC")]
    pack: Option<String>,
    /// Unread raw log a process may leave in the temporary directory before
    /// its threads wait for the conversion (MiB, at least 1; the waits are
    /// counted in the trace as `tramp:stall` comments and reported at the
    /// end).
    #[arg(long, value_name = "MIB", default_value_t = tramp_api::record::TEMP_LIMIT_MIB)]
    temp_limit: f64,
    /// Print the trace's heap statistics after the program ends, on stderr
    /// (stdout is the program's), or into --stats-out. With several
    /// processes: a row per image (process, or program an exec started),
    /// their sum and the image that used the most, then that image's full
    /// statistics.
    #[arg(long)]
    stats: bool,
    /// With --stats: write the statistics to this file instead of stderr.
    #[arg(long, value_name = "FILE", requires = "stats")]
    stats_out: Option<String>,
    /// With --stats: JSON.
    #[arg(long, requires = "stats")]
    json: bool,
    /// After the program ends, write the started process's heap profile as
    /// one self-contained HTML page (see `tramp report`).
    #[arg(long, value_name = "FILE.html")]
    report: Option<String>,
    /// With --stats: also the top allocation sites (see `tramp stats --sites`).
    #[arg(long, requires = "stats")]
    sites: bool,
    /// Also record the program's 8-byte loads and stores (address, value,
    /// instruction), for `tramp rds`: the program must be built with `tramp
    /// cc` (uninstrumented code is not seen). The output is then a pointer
    /// trace in Meta-TF with its DTD embedded (default PROGRAM.mtf.zst;
    /// docs/formats/capture.md, "Pointer traces"). Every access costs an
    /// event: expect tens of times the program's own time.
    #[arg(long)]
    pointers: bool,
    /// Fail (exit 1, when the program itself exited 0) if nothing was
    /// recorded; without it that is a warning and the program's status
    /// passes through.
    #[arg(long)]
    strict: bool,
    /// Write no profile index after a tpack recording's last block (by
    /// default the profile is kept there as it is recorded, so `report`,
    /// `stats --sites` and `diff` read it, not the events; docs/index.md).
    #[arg(long)]
    no_index: bool,
    /// With --sites: how many sites per table.
    #[arg(long, default_value_t = 10, requires = "sites")]
    top: usize,
    /// Attach to this running process instead of starting one: gdb loads the
    /// capture library into it, which redirects the malloc family in every
    /// loaded module (and in those it loads later); at the end (--duration,
    /// Ctrl-C or SIGTERM to tramp, or the process's exit) the redirection
    /// is undone and the process runs on as before. Blocks allocated before
    /// the attach are unknown: their frees are counted as "allocated before
    /// the attach", never as anomalies, and the trace says it starts there
    /// (docs/heap-profile.md, "Attaching"). Needs gdb and the right to
    /// ptrace the process. Default output: PROGRAM.PID.tpack.
    #[arg(short = 'p', long = "pid", value_name = "PID", conflicts_with_all = ["command", "pointers"])]
    pid: Option<u32>,
    /// After the program ends, check the started process's trace against
    /// the budgets given (--max-peak, --max-leaked, --max-allocations,
    /// --max-temporary, --check-stack), as `tramp check` does, on stderr:
    /// the exit status is then 1 when a budget is exceeded, else the
    /// program's own. The budgets are checked before the program runs.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    budgets: super::check::BudgetArgs,
    /// With --check: count only the call stacks with a frame this regular
    /// expression matches (`tramp check --stack`).
    #[arg(long, value_name = "REGEX", requires = "check")]
    check_stack: Option<String>,
    /// With --pid: detach after this many seconds (default: at Ctrl-C,
    /// SIGTERM or the process's exit).
    #[arg(long, value_name = "SECONDS", requires = "pid")]
    duration: Option<f64>,
    /// The command and its arguments.
    #[arg(
        required_unless_present = "pid",
        trailing_var_arg = true,
        value_name = "CMD"
    )]
    command: Vec<std::ffi::OsString>,
}

/// Records; returns the program's exit status (128 + signal if killed).
pub fn run(a: RecordArgs) -> Result<u8> {
    let request = tramp_api::record::Request {
        command: a.command.clone(),
        pid: a.pid,
        output: a.output.clone(),
        stack: a.stack.map(usize::from),
        pointers: a.pointers,
        index: !a.no_index,
        sample: a.sample,
        sample_seed: a.sample_seed,
        temp_limit: a.temp_limit,
        pack: a.pack.clone(),
        side_outputs: [("--stats-out", &a.stats_out), ("--report", &a.report)]
            .into_iter()
            .filter_map(|(flag, f)| Some((flag, f.clone()?)))
            .collect(),
    };
    // Everything that can be refused is refused before the program runs.
    let budgets = match a.check {
        true => Some(a.budgets.request(a.check_stack.clone()).budgets()?),
        false if a.budgets.any() => anyhow::bail!("budgets are checked with --check"),
        false => None,
    };
    let output = tramp_api::record::output(&request);
    let opts = tramp_api::record::options(&request, &output)?;
    let lib = tramp_record::launch::install_library(tramp_bundled::CAPTURE_LIBRARY)
        .context("installing the capture library")?;
    let rec = super::record_start::start(a.pid, a.duration, &a.command, &lib, &opts)?;
    for line in rec.notes() {
        eprintln!("tramp: {line}");
    }
    let code = rec.exit_code();
    // A run that recorded nothing is not a recording.
    let program = tramp_record::launch::program_name(a.pid, a.command.first());
    // The program's status passes through: nothing recorded is a warning
    // (--strict: a failure where the program succeeded).
    if let Some(why) = rec.nothing_captured(&program, a.pointers) {
        if a.strict && code == 0 {
            anyhow::bail!("{why} (--strict)");
        }
        eprintln!("tramp: warning: {why}");
        if rec.traces.is_empty() {
            return Ok(code);
        }
    }
    let after = super::record_after::After {
        stats: a.stats.then_some(a.sites.then_some(a.top)),
        json: a.json,
        stats_out: a.stats_out.as_deref(),
        report: a.report.as_deref(),
        budgets: budgets.as_ref(),
    };
    super::record_after::write(&rec, &output, after)?;
    Ok(code)
}
