//! Traces that start when `tramp record -p` attached to a running process:
//! the blocks the process allocated before are unknown to the trace, so
//! their frees (and the reallocs that end them) are counted apart, as
//! "allocated before the attach", never as anomalies.

/// The comment such a trace carries before its first event.
pub const COMMENT: &str = "tramp:attached";

/// Whether a comment says the trace starts at an attach.
pub fn is_attached_note(comment: &[u8]) -> bool {
    comment == COMMENT.as_bytes()
}
