//! `tramp dump` of a recording: each allocation's site by function and
//! line, as a note after its line of HATF text (` # strdup (libc.so.6+0x9e9aa)`)
//! that the text reader ignores, so binary → text → binary stays
//! byte-identical. The site names come from the trace's own module map and
//! stacks, read as they pass (they come before their first use).

use std::io::Write;

use tramp_core::output::Finish;
use tramp_core::{Error, Record, RecordKind, Sink};
use tramp_hatf::text::TextWriter;
use tramp_hatf::{Event, Item};

use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK, Site, decode_site};
use tramp_symbols::{ModuleMap, Names};

/// Names sites from the annotations seen so far.
pub struct SiteNotes {
    map: ModuleMap,
    names: Option<Names>,
}

impl Default for SiteNotes {
    fn default() -> Self {
        SiteNotes::new()
    }
}

impl SiteNotes {
    pub fn new() -> SiteNotes {
        SiteNotes {
            map: ModuleMap::new(),
            names: None,
        }
    }

    /// Takes in a comment record (a module, a stack, the stack depth).
    pub fn comment(&mut self, rec: &Record<'_>) {
        if rec.record_type().kind == RecordKind::Comment {
            let before = self.map.len();
            self.map.note(rec);
            if self.map.len() != before {
                // A new module, stack or depth: names see it from here.
                self.names = None;
            }
        }
    }

    /// The note for an event: its site's name, when its attributes hold a
    /// site in a known module.
    pub fn note_event(&mut self, e: &Event<'_>) -> Option<String> {
        if e.attributes.is_empty() {
            return None;
        }
        let Site { kind, value: v } = decode_site(e.attributes)?;
        if kind != SITE_RETURN_ADDRESS && kind != SITE_STACK {
            return None;
        }
        let map = &self.map;
        let names = self.names.get_or_insert_with(|| map.names());
        names.site(v)
    }
}

/// HATF text with site notes: the sink `tramp dump` writes a recording
/// with.
pub struct NotedText<W: Write + Finish> {
    writer: TextWriter<W>,
    notes: SiteNotes,
    records: u64,
}

impl<W: Write + Finish> NotedText<W> {
    pub fn new(out: W) -> NotedText<W> {
        NotedText {
            writer: TextWriter::new(out),
            notes: SiteNotes::new(),
            records: 0,
        }
    }
}

impl<W: Write + Finish> Sink for NotedText<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.records += 1;
        let item = tramp_hatf::records::record_to_item(rec)
            .map_err(|e| Error::encode("hatf-text", self.records - 1, e))?;
        let Some(item) = item else {
            return Ok(());
        };
        let note = match &item {
            Item::Comment(_) => {
                self.notes.comment(rec);
                None
            }
            Item::Event(e) => self.notes.note_event(e),
            Item::Meta(_) => None,
        };
        Ok(self.writer.write_noted(&item, note.as_deref())?)
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        Ok(self.writer.into_inner()?.finish()?)
    }
}
