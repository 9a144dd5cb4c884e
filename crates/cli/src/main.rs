//! `tramp`: the command line. Argument handling and wiring of sources,
//! sinks and analyses from the library crates; no trace logic lives here.

mod commands;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// tramp: record, store, convert and analyse memory-behaviour traces.
#[derive(Parser)]
#[command(name = "tramp", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Sample(commands::SampleArgs),
    Stats(commands::StatsArgs),
    Dump(commands::DumpArgs),
    Convert(commands::ConvertArgs),
    /// List the trace formats tramp reads and writes, with the file
    /// extensions that select them
    Formats,
    Record(commands::RecordArgs),
    Replay(commands::ReplayArgs),
    Gen(commands::GenArgs),
    Verify(commands::VerifyArgs),
    Export(commands::ExportArgs),
    Spans(commands::SpansArgs),
    Workload(commands::WorkloadArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sample(a) => commands::sample(a),
        Command::Stats(a) => commands::stats(a),
        Command::Dump(a) => commands::dump(a),
        Command::Convert(a) => commands::convert(a),
        Command::Formats => commands::formats(),
        Command::Replay(a) => commands::replay(a),
        Command::Gen(a) => commands::gen_code(a),
        Command::Verify(a) => commands::verify(a),
        Command::Export(a) => commands::export(a),
        Command::Spans(a) => commands::spans(a),
        Command::Workload(a) => commands::workload(a),
        Command::Record(a) => match commands::record(a) {
            // The recorded program's exit status is ours.
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("tramp: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `tramp dump big.hatf | head` closes the pipe early; that is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || matches!(c.downcast_ref::<tramp_core::Error>(), Some(tramp_core::Error::Io(io)) if io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
