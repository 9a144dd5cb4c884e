//! `tramp run`: a TRAMP command-language script over traces.

use anyhow::Result;
use clap::Args;

/// Run a TRAMP script (the command language of Touati and Smith's TRAMP)
/// over traces, record by record.
///
/// The script is Algol-like (`preprocess begin … end`, `procedure main
/// begin … end`, `postprocess begin … end`; `set`, `if … then … else …
/// endif`, `while`, `for (k in a)`, `delete k from a`, `echo`, `update
/// FIELD = e`, `spit()`, `spit_int`, `spit_char`, `swap()`) or Lisp-like
/// (`(defun begin …)`, `(defun main …)`, `(defun end …)`), told apart by
/// its first character. Every record's fields are variables named
/// RECORD_FIELD (e.g. `IO_FILE`, for HATF `alloc_size`), `RECORD_TYPE` is
/// the current record's type and record names are constants (`RECORD_TYPE
/// == IO`). Buffers: `make_buffer(LRU, 2048)`, `read_buffer(b, k1, k2)`,
/// `write_buffer`, `prefetch_buffer`, `print_buffer(b)`, `hits(b)`,
/// `misses(b)`, with every policy of `tramp cachesim` but OPT. When the
/// record loop never reads a buffer request's answer (buffer calls only as
/// statements; no `print_buffer`, `hits`, `misses` or `make_buffer` in main
/// or the procedures), the buffers are simulated on a second core, with
/// the same output. See docs/formats/tramp.md.
///
/// Traces are read in the layout a TRAMP format description gives
/// (`--format FILE`, or the TRAMP_FORMAT environment variable), or in any
/// tramp format (HATF, Meta-TF, PTF, Heph, tpack; detected); `-` is stdin;
/// zstd, gzip and xz are unwrapped. A script with no main procedure needs
/// no trace. `echo` and `print_buffer` write to stdout; `spit` writes to
/// -o OUT (default stdout). A name the script reads that is neither a
/// field nor set by any statement is an error with its line and column;
/// runtime errors name the record number. Damage in a trace: postprocess
/// runs on the records before it, and the exit status is 1.
#[derive(Args)]
pub struct RunArgs {
    /// The script file (`-`: read it from stdin).
    pub script: String,
    /// Trace files (`-` for stdin), read one after another.
    pub traces: Vec<String>,
    /// A TRAMP format description of the traces (default: $TRAMP_FORMAT,
    /// else the traces are in a tramp format). `--desc` is the same, as
    /// the other commands spell it.
    #[arg(long = "format", short = 'f', value_name = "DESC", alias = "desc")]
    pub format: Option<String>,
    /// Where `spit`, `spit_int` and `spit_char` write (default: stdout).
    /// Records spat go out in the format the name says, as `tramp formats`
    /// lists the extensions (`-o x.tpack` packs them), else in the trace's
    /// own; an output that is one of the inputs is refused before the
    /// script runs.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<String>,
    /// The tramp format of the traces when they are not described (default:
    /// detected); see `tramp formats`.
    #[arg(long = "trace-format", value_name = "NAME")]
    pub trace_format: Option<String>,
    /// The part of each trace the script reads (`--time` counts from each
    /// trace's own first timed record); see docs/select.md.
    #[command(flatten)]
    pub select: super::SelectArgs,
}

pub fn run(a: RunArgs) -> Result<()> {
    let desc = a
        .format
        .clone()
        .or_else(|| std::env::var("TRAMP_FORMAT").ok().filter(|s| !s.is_empty()));
    let request = tramp_api::script::Request {
        script: &a.script,
        desc: desc.as_deref(),
        traces: &a.traces,
        output: a.output.as_deref(),
        format: a.trace_format.as_deref(),
        select: &a.select.selection(),
    };
    Ok(tramp_api::script::run(&request, &mut std::io::stdout())?)
}
