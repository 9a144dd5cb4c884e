//! What a format crate tells the registry about each format it provides:
//! one [`FormatDesc`] with its name, file extensions, content sniffing, and
//! the functions that open a source and create a sink.

use std::io::BufRead;

use crate::output::OutStream;
use std::sync::Arc;

use crate::{Error, Header, Schema, Sink, Source};

/// What a format's first bytes say about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniff {
    /// Not this format.
    No,
    /// Could be this format (no magic number to tell): used only when no
    /// format claims the bytes and the file name says nothing.
    Maybe,
    /// This format's magic bytes.
    Yes,
}

impl Sniff {
    /// `Yes` when `head` starts with one of `magics`, else `No`.
    pub fn magic(head: &[u8], magics: &[&[u8]]) -> Sniff {
        if magics.iter().any(|m| head.starts_with(m)) {
            Sniff::Yes
        } else {
            Sniff::No
        }
    }
}

/// What a format's writer holds of records of another format.
#[derive(Clone, Copy)]
pub enum Holds {
    /// The records of a fixed schema: a foreign record goes to the type of
    /// its kind (a realloc to its outcome's), its fields by role.
    ByRole(fn() -> Arc<Schema>),
    /// The records of the schema the output's header describes (a Meta-TF
    /// DTD): a foreign record goes to the type of its name, else of its
    /// kind; its fields by name, else by role.
    ByName(fn(&Header) -> Result<Arc<Schema>, Error>),
    /// Records of its own schema only, for the reason given.
    OwnOnly(&'static str),
    /// Its own family's records and nothing else.
    Nothing,
}

/// How to open a source.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// Yield format metadata records (HATF fieldSize/fieldInterpretation).
    pub metadata: bool,
    /// The DTD text, for Meta-TF inputs that do not embed theirs.
    pub dtd: Option<String>,
    /// A TRAMP format description's text, for described traces.
    pub desc: Option<String>,
    /// The time range a selection reads, `[lo, hi)` in ns from the first
    /// event (`tramp_core::select`): a reader may skip what lies wholly
    /// outside it (tpack skips blocks by their summaries). The selection
    /// still filters the records; this only saves reading.
    pub time_window: Option<(u64, u64)>,
}

/// How to create a sink.
#[derive(Clone, Copy, Debug)]
pub struct CreateOptions<'a> {
    /// The encoding policy by name (HATF: `naive`, `explicit`); `None` for
    /// the format's default.
    pub policy: Option<&'a str>,
    /// Whether the records come from a format of the same family (so their
    /// metadata records may be kept as they are).
    pub same_family: bool,
    /// What the output's header carries (a DTD, notes).
    pub header: &'a Header,
}

/// Opens a source over decompressed input bytes.
pub type OpenFn =
    fn(Box<dyn BufRead + Send>, &OpenOptions) -> Result<Box<dyn Source + Send>, Error>;
/// Creates a sink writing to an output.
pub type CreateFn = fn(Box<dyn OutStream>, &CreateOptions<'_>) -> Result<Box<dyn Sink>, Error>;

/// One format, as its crate describes it to the registry.
pub struct FormatDesc {
    /// Short name (`hatf`, `ptf-text`, …), as given to `--format`/`--to`.
    pub name: &'static str,
    /// Formats of one family share a record schema and header (a binary
    /// form and its text form).
    pub family: &'static str,
    /// One line for `tramp formats`.
    pub about: &'static str,
    /// File name endings that select it (compression extensions aside).
    pub extensions: &'static [&'static str],
    /// Tells the format from its first decompressed bytes.
    pub sniff: fn(&[u8]) -> Sniff,
    /// The format `tramp dump` prints it in; `None` for tramp's generic
    /// text form.
    pub text_form: Option<&'static str>,
    /// What its writer holds of another format's records (the conversion
    /// audit reads this and nothing else about the format).
    pub holds: Holds,
    pub open: OpenFn,
    pub create: CreateFn,
}

impl std::fmt::Debug for FormatDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl std::fmt::Display for FormatDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for FormatDesc {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for FormatDesc {}
