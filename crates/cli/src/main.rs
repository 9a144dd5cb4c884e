//! `tramp`: the command line. `main` only dispatches; each command's
//! arguments and wiring live in `cmd/`, everything else in the library
//! crates.

mod cmd;
mod signals;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// tramp: record, store, convert and analyse memory-behaviour traces.
#[derive(Parser)]
#[command(
    name = "tramp",
    version,
    about,
    long_about = None,
    propagate_version = true,
    disable_help_subcommand = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// A directory of separate debug information, searched before
    /// /usr/lib/debug when naming code (by build-id, DIR/.build-id/xx/….debug,
    /// and by .gnu_debuglink); may be given more than once.
    #[arg(long, global = true, value_name = "DIR")]
    debug_dir: Vec<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    Sample(cmd::sample::SampleArgs),
    Stats(cmd::stats::StatsArgs),
    Dump(cmd::dump::DumpArgs),
    Convert(cmd::convert::ConvertArgs),
    Sizes(cmd::sizes::SizesArgs),
    Cachesim(cmd::cachesim::CachesimArgs),
    Analyze(cmd::analyze::AnalyzeArgs),
    Run(cmd::run::RunArgs),
    Rds(cmd::rds::RdsArgs),
    /// List the trace formats tramp reads and writes, with the file
    /// extensions that select them
    Formats,
    Record(cmd::record::RecordArgs),
    Cc(cmd::cc::CcArgs),
    Header(cmd::cc::HeaderArgs),
    Replay(cmd::replay::ReplayArgs),
    Gen(cmd::gen_code::GenArgs),
    Verify(cmd::verify::VerifyArgs),
    Export(cmd::export::ExportArgs),
    Spans(cmd::spans::SpansArgs),
    Diff(cmd::diff::DiffArgs),
    Check(cmd::check::CheckArgs),
    Report(cmd::report::ReportArgs),
    Workload(cmd::workload::WorkloadArgs),
    /// Print the help of tramp, or of one command (`tramp help convert` is
    /// `tramp convert --help`)
    Help {
        /// The command whose help to print
        command: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tramp_symbols::debugfile::set_debug_dirs(cli.debug_dir.clone());
    if !matches!(cli.command, Command::Record(_)) {
        signals::clean_up_on_signals();
    }
    let result = match cli.command {
        Command::Sample(a) => cmd::sample::run(a),
        Command::Stats(a) => cmd::stats::run(a),
        Command::Dump(a) => cmd::dump::run(a),
        Command::Convert(a) => cmd::convert::run(a),
        Command::Sizes(a) => cmd::sizes::run(a),
        Command::Cachesim(a) => cmd::cachesim::run(a),
        Command::Analyze(a) => cmd::analyze::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Rds(a) => cmd::rds::run(a),
        Command::Formats => cmd::formats::run(),
        Command::Replay(a) => cmd::replay::run(a),
        Command::Gen(a) => cmd::gen_code::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Spans(a) => cmd::spans::run(a),
        Command::Diff(a) => cmd::diff::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Workload(a) => cmd::workload::run(a),
        Command::Header(a) => cmd::cc::header(a),
        Command::Help { command } => help(command.as_deref()),
        Command::Cc(a) => match cmd::cc::run(a) {
            // The compiler's exit status is ours.
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
        Command::Record(a) => match cmd::record::run(a) {
            // The recorded program's exit status is ours.
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if tramp_api::error::is_broken_pipe(e.as_ref()) {
                return ExitCode::SUCCESS;
            }
            // A description's diagnostics point at its lines; shown first.
            if let Some(
                tramp_api::Error::Description { diagnostics, .. }
                | tramp_api::Error::Script { diagnostics },
            ) = e.chain().find_map(|c| c.downcast_ref::<tramp_api::Error>())
            {
                eprint!("{diagnostics}");
            }
            eprintln!("tramp: error: {}", tramp_api::error::message(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// `tramp help [COMMAND]`: the long help of tramp or of one command.
fn help(command: Option<&str>) -> anyhow::Result<()> {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    let mut target = match command {
        None => cli,
        Some(name) => match cli.find_subcommand_mut(name) {
            Some(c) => c.clone(),
            None => anyhow::bail!("no command `{name}` (see `tramp help`)"),
        },
    };
    target.print_long_help()?;
    Ok(())
}
