//! `tramp cc`: compile a C program whose pointer loads and stores `tramp
//! record --pointers` records; `tramp header`: the header that reports a
//! program's own allocator.

use anyhow::{Context, Result};
use clap::Args;

/// Compile (and link) a C program so that `tramp record --pointers` sees its
/// 8-byte loads and stores, for `tramp rds`.
///
/// Runs the compiler command given after `--` with the flags that make it
/// call a hook before every memory access, and, when the command links,
/// with a small stub that defines the hooks (compiled without
/// instrumentation, in a temporary directory removed afterwards).
///
/// With gcc: -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
/// (ThreadSanitizer's instrumentation, not its runtime; a command that
/// compiles and links runs as one `-c` per source, then the link without
/// -fsanitize=thread).
///
/// With clang: -fsanitize-coverage=edge,trace-loads,trace-stores
/// -fno-sanitize-link-runtime.
///
/// At -O0 every access the source makes is kept; optimizers drop stores
/// that nothing reads back.
///
/// The program runs normally on its own (the hooks do nothing); under
/// `tramp record --pointers -o prog.mtf -- ./prog` its loads and stores are
/// recorded with their address, value and instruction. The compiler is
/// recognised from `CC --version`; compile-only commands (`-c`) are
/// instrumented without the stub, so multi-file builds work: compile each
/// file with `tramp cc -- cc -c`, link with `tramp cc -- cc`.
/// docs/formats/capture.md ("Pointer traces") documents the hooks.
///
/// Every command also gets `-idirafter DIR` with tramp.h in DIR (see `tramp
/// header`), so `#include <tramp.h>` works without a copy.
///
/// Example: `tramp cc -- cc -O0 -g list.c -o list`
#[derive(Args)]
pub struct CcArgs {
    /// The compiler command and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CC"
    )]
    command: Vec<std::ffi::OsString>,
}

/// Compiles; returns the compiler's exit status.
pub fn run(a: CcArgs) -> Result<u8> {
    let status = tramp_record::cc::compile(&a.command).context("compiling with pointer hooks")?;
    Ok(status.code().map_or(1, |c| c as u8))
}

/// Print tramp.h, the header that reports a program's own allocator to
/// `tramp record`.
///
/// A pool that carves objects out of big malloc'd chunks calls
/// `TRAMP_ALLOC(ptr, size)` as it hands a block out, `TRAMP_FREE(ptr)` as it
/// takes one back (and `TRAMP_REALLOC(old, size, new)` when it resizes one).
/// Recorded, each block is an object of its own, with its call stack, in
/// every analysis (heap 1 of the trace, beside the chunk it lies in; `tramp
/// rds` follows pointers into it). Run alone, each report costs a load and
/// a branch. Programs that use heaptrack's heaptrack_api.h need no change:
/// `tramp record` also takes the calls its macros make.
///
/// Example: `tramp header > tramp.h`, or compile with `tramp cc`, which
/// puts the header on the include path.
#[derive(Args)]
pub struct HeaderArgs {}

/// Writes the header to stdout.
pub fn header(_: HeaderArgs) -> Result<()> {
    use std::io::Write;
    std::io::stdout()
        .write_all(tramp_record::cc::TRAMP_H.as_bytes())
        .context("writing tramp.h")
}
