//! tramp-ptf: the POSSE Trace Format (PTF 1.0) for persistent object
//! stores — its events ([`event`]), its ASCII ([`ascii`]) and binary
//! ([`binary`]) forms, per-trace statistics ([`stats`]) and the tramp
//! source/sink adapters ([`records`]). The verifier of §3's rules, which
//! simulates persistence by reachability on the object graph, is
//! `tramp_graph::verify`. Layout decisions are in `docs/formats/ptf.md`.

pub mod ascii;
pub mod binary;
pub mod error;
pub mod event;
pub mod format;
mod out;
pub mod records;
pub mod stats;

pub use error::PtfError;
pub use event::{Event, EventType, FormatObject, Oid};

/// Reads events of either form: implemented by both readers.
pub trait EventSource {
    /// The next event, `Ok(None)` after the last one.
    fn next_event(&mut self) -> Result<Option<Event>, PtfError>;
    /// Where the last event read (or the error) starts: (line, 0 for the
    /// binary form; byte offset).
    fn location(&self) -> (u64, u64);
    /// The user notes of the trace (binary header lines, or the ASCII
    /// lines before `Trace begin`).
    fn notes(&self) -> &[String];
    /// After a malformed event, go on with the next one instead of ending,
    /// where the form allows it (ASCII lines; the verifier asks for this).
    fn resume_after_bad_lines(&mut self, _yes: bool) {}
}

/// Writes events of either form.
pub trait EventSink {
    fn write_event(&mut self, e: &Event) -> Result<(), PtfError>;
    /// Ends the trace (ASCII: `Trace end`) and flushes.
    fn finish(&mut self) -> Result<(), PtfError>;
}

/// Opens a reader for `input`, choosing the form from the first bytes: a
/// binary trace starts with `PTF ` (its version line), an ASCII trace
/// with notes or `Trace begin`.
pub fn open(
    mut input: Box<dyn std::io::BufRead + Send>,
) -> Result<Box<dyn EventSource + Send>, PtfError> {
    let head = input.fill_buf().map_err(PtfError::io(0))?;
    if head.starts_with(binary::VERSION_PREFIX.as_bytes()) {
        Ok(Box::new(binary::BinaryReader::new(input)?))
    } else {
        Ok(Box::new(ascii::AsciiReader::new(input)?))
    }
}
