//! What tramp does when it is signalled. Every command but `record`:
//! SIGINT, SIGTERM and SIGHUP remove the temporary files of unfinished
//! outputs and end the process (exit 128 + the signal), so an interrupted
//! `convert` leaves nothing behind. `record`: the signal is the program's
//! (a terminal's Ctrl-C reaches it directly; one sent to tramp alone is
//! passed on), and tramp finishes its traces, marking them interrupted.
//! Every command: SIGXFSZ (the file-size limit) is not fatal, so a write
//! past `ulimit -f` fails with an error and the output is removed like
//! any other failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

/// The signals that end a command.
const ENDING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

fn ignore_file_size_limit() {
    // A handler that only sets a flag: the write that passed the limit
    // returns EFBIG instead of the process being killed.
    let _ = signal_hook::flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)));
}

/// For every command but `record`: an ending signal removes unfinished
/// outputs, then exits.
pub fn clean_up_on_signals() {
    ignore_file_size_limit();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(ENDING) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("tramp-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                tramp_io::remove_unfinished();
                let name = signal_hook::low_level::signal_name(sig).unwrap_or("a signal");
                eprintln!("tramp: stopped by {name}; unfinished outputs removed");
                std::process::exit(128 + sig);
            }
        });
}

/// For `record`: an ending signal is noted (the trace is marked
/// interrupted) and, unless the terminal already sent it to the whole
/// process group, passed on to the program (`child`, once it is known).
pub fn pass_on_to(child: Arc<AtomicU32>, interrupted: Arc<AtomicI32>) {
    ignore_file_size_limit();
    let Ok(mut signals) = SignalsInfo::<WithOrigin>::new(ENDING) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("tramp-signals".into())
        .spawn(move || {
            for origin in signals.forever() {
                interrupted.store(origin.signal, Ordering::Relaxed);
                // A terminal's Ctrl-C comes from the kernel to the whole
                // foreground group: the program has it already.
                let from_terminal = matches!(origin.cause, Cause::Kernel);
                let pid = child.load(Ordering::Relaxed);
                let from_child = origin.process.is_some_and(|p| p.pid as u32 == pid);
                if from_terminal || from_child || pid == 0 {
                    continue;
                }
                if let (Some(pid), Some(sig)) = (
                    rustix::process::Pid::from_raw(pid as i32),
                    rustix::process::Signal::from_named_raw(origin.signal),
                ) {
                    let _ = rustix::process::kill_process(pid, sig);
                }
            }
        });
}
