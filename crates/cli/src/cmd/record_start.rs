//! How `tramp record` starts: the command under the capture library, or
//! the attach to a running process, with the signals passed on.

use anyhow::{Context, Result};

/// Starts the recording: the command under the capture library, or the
/// attach to a running process.
pub fn start(
    pid: Option<u32>,
    duration: Option<f64>,
    command: &[std::ffi::OsString],
    lib: &std::path::Path,
    opts: &tramp_record::RecordOptions,
) -> Result<tramp_record::Recording> {
    // Ctrl-C reaches the recorded program (same process group), which
    // flushes and ends; a signal sent to tramp alone is passed on to it.
    // tramp stays to convert what it recorded and marks the traces.
    if let Some(pid) = pid {
        // Ctrl-C and SIGTERM end the attach, not the process.
        crate::signals::pass_on_to(
            std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0)),
            opts.interrupted.clone(),
        );
        let duration = duration.map(|s| std::time::Duration::from_secs_f64(s.max(0.0)));
        let (rec, times) = tramp_record::attach::attach(lib, pid, duration, opts)
            .with_context(|| format!("attaching to process {pid}"))?;
        eprintln!("tramp: {times}");
        Ok(rec)
    } else {
        crate::signals::pass_on_to(opts.child.clone(), opts.interrupted.clone());
        tramp_record::record(lib, command, opts).context("recording")
    }
}
