//! `tramp cc`: compile a C program whose pointer loads and stores `tramp
//! record --pointers` records.

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
