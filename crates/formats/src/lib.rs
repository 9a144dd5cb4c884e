//! tramp-formats: the registry of trace formats. It detects a format from an
//! input's first bytes or name, and opens sources and sinks by format, so
//! that the CLI only wires them together.

use std::fmt;

use tramp_core::io::{Compression, Input, Output};
use tramp_core::{Error, Sink, Source};
use tramp_hatf::Policy;
use tramp_hatf::records::{HatfSink, HatfSource, HatfTextSink, HatfTextSource};
use tramp_heph::records::{HephSink, HephSource};
use tramp_metatf::codec::{MetaSink, MetaSource};
use tramp_metatf::text::{MetaTextSink, MetaTextSource};
use tramp_ptf::records::{PtfSink, PtfSource};

/// Every format tramp reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// HATF 1.0 binary.
    Hatf,
    /// HATF's one-record-per-line text form.
    HatfText,
    /// A Meta-TF trace of any DTD (embedded, or given with --dtd).
    MetaTf,
    /// Meta-TF's text form (DTD on `#| ` lines, then one record per line).
    MetaTfText,
    /// PTF (POSSE Trace Format) binary: ASCII header, then LEB128 events.
    Ptf,
    /// PTF's ASCII form: `Trace begin`, one event per line, `Trace end`.
    PtfText,
    /// Heph's trace format: metadata and event packets, big-endian.
    Heph,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::Hatf,
        Format::HatfText,
        Format::MetaTf,
        Format::MetaTfText,
        Format::Ptf,
        Format::PtfText,
        Format::Heph,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Hatf => "hatf",
            Format::HatfText => "hatf-text",
            Format::MetaTf => "metatf",
            Format::MetaTfText => "metatf-text",
            Format::Ptf => "ptf",
            Format::PtfText => "ptf-text",
            Format::Heph => "heph",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Format::Hatf => "HATF 1.0 binary heap-allocation trace (extension .hatf)",
            Format::HatfText => "HATF text form, one record per line (extension .hatf.txt or .txt)",
            Format::MetaTf => {
                "Meta-TF trace of any DTD, \\x7fMTF header, DTD embedded (extension .mtf)"
            }
            Format::MetaTfText => {
                "Meta-TF text form: the DTD, then one record per line (extension .mtf.txt)"
            }
            Format::Ptf => {
                "PTF persistent-object-store trace, binary: `PTF 1.0` header, LEB128 events (extension .ptf)"
            }
            Format::PtfText => {
                "PTF ASCII form: notes, `Trace begin`, one event per line, `Trace end` (extension .ptf.txt)"
            }
            Format::Heph => {
                "Heph actor-runtime trace: metadata and event packets with typed attributes (extension .heph or .bin.log)"
            }
        }
    }

    pub fn parse(name: &str) -> Result<Format, Error> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                Error::Usage(format!(
                    "unknown format `{name}` (known: {})",
                    names.join(", ")
                ))
            })
    }

    /// The format a file name suggests (compression extensions ignored).
    pub fn from_path(path: &str) -> Option<Format> {
        let stem = Compression::strip_extension(path);
        if stem.ends_with(".heph") || stem.ends_with(".bin.log") {
            Some(Format::Heph)
        } else if stem.ends_with(".ptf.txt") {
            Some(Format::PtfText)
        } else if stem.ends_with(".ptf") {
            Some(Format::Ptf)
        } else if stem.ends_with(".mtf.txt") {
            Some(Format::MetaTfText)
        } else if stem.ends_with(".mtf") {
            Some(Format::MetaTf)
        } else if stem.ends_with(".hatf.txt") || stem.ends_with(".txt") {
            Some(Format::HatfText)
        } else if stem.ends_with(".hatf") {
            Some(Format::Hatf)
        } else {
            None
        }
    }

    /// Detects the format of an input from its first decompressed bytes,
    /// then its name. HATF binary has no magic number, but its first byte is
    /// a record tag (0–11), which no text form starts with.
    pub fn detect(head: &[u8], name: &str) -> Option<Format> {
        if head.starts_with(tramp_hatf::text::HEADER.as_bytes()) {
            return Some(Format::HatfText);
        }
        if head.starts_with(&tramp_metatf::codec::MAGIC) {
            return Some(Format::MetaTf);
        }
        if head.starts_with(tramp_metatf::text::HEADER.as_bytes()) {
            return Some(Format::MetaTfText);
        }
        if head.starts_with(&tramp_heph::packet::METADATA_MAGIC.to_be_bytes())
            || head.starts_with(&tramp_heph::packet::EVENT_MAGIC.to_be_bytes())
        {
            return Some(Format::Heph);
        }
        if head.starts_with(tramp_ptf::binary::VERSION_PREFIX.as_bytes()) {
            return Some(Format::Ptf);
        }
        if head.starts_with(tramp_ptf::ascii::BEGIN.as_bytes()) {
            return Some(Format::PtfText);
        }
        if let Some(f) = Format::from_path(name) {
            return Some(f);
        }
        match head.first() {
            None => Some(Format::Hatf),
            Some(b) if *b <= tramp_hatf::spec::TAG_METADATA => Some(Format::Hatf),
            _ => None,
        }
    }

    /// Whether records of this format carry HATF metadata, so that a HATF
    /// writer can keep the source's encoding decisions.
    pub fn carries_hatf_metadata(self) -> bool {
        matches!(self, Format::Hatf | Format::HatfText)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a source should yield besides data records.
#[derive(Clone, Debug, Default)]
pub struct SourceOptions {
    /// Yield format metadata records (HATF fieldSize/fieldInterpretation).
    pub metadata: bool,
    /// The DTD text for Meta-TF inputs that do not embed theirs.
    pub dtd: Option<String>,
}

impl SourceOptions {
    /// Yield metadata records too (for conversions that keep them).
    pub fn with_metadata() -> Self {
        SourceOptions {
            metadata: true,
            dtd: None,
        }
    }
}

/// Opens a source over an input, detecting the format unless one is given.
pub fn open_source(
    input: Input,
    format: Option<Format>,
    opts: SourceOptions,
) -> Result<(Box<dyn Source>, Format), Error> {
    let format = match format {
        Some(f) => f,
        None => Format::detect(&input.head, &input.name).ok_or_else(|| {
            Error::Usage(format!(
                "cannot tell the format of `{}`; name it with --format ({})",
                input.name,
                Format::ALL.map(|f| f.name()).join(", ")
            ))
        })?,
    };
    let source: Box<dyn Source> = match format {
        Format::Hatf => Box::new(HatfSource::new(input.reader, opts.metadata)),
        Format::HatfText => Box::new(HatfTextSource::new(input.reader)),
        Format::MetaTf => Box::new(MetaSource::open(input.reader, opts.dtd.as_deref())?),
        Format::MetaTfText => Box::new(MetaTextSource::open(input.reader, opts.dtd.as_deref())?),
        Format::Ptf | Format::PtfText => Box::new(PtfSource::open(input.reader)?),
        Format::Heph => Box::new(HephSource::new(input.reader)),
    };
    Ok((source, format))
}

/// How sinks encode.
#[derive(Clone, Copy, Debug)]
pub struct SinkOptions<'a> {
    /// HATF encoding policy.
    pub policy: Policy,
    /// The DTD text, for Meta-TF outputs.
    pub dtd: Option<&'a str>,
    /// Header notes, for PTF outputs.
    pub notes: &'a [String],
}

/// Creates a sink of `format` writing to `output`.
pub fn create_sink(
    output: Output,
    format: Format,
    opts: SinkOptions<'_>,
) -> Result<Box<dyn Sink>, Error> {
    let need_dtd = || {
        opts.dtd
            .ok_or_else(|| Error::Usage(format!("writing {format} needs a DTD: pass --dtd FILE")))
    };
    Ok(match format {
        Format::Hatf => Box::new(HatfSink::new(output, opts.policy)),
        Format::HatfText => Box::new(HatfTextSink::new(output)),
        Format::MetaTf => Box::new(MetaSink::new(output, need_dtd()?, false)?),
        Format::MetaTfText => Box::new(MetaTextSink::new(output, need_dtd()?)?),
        Format::Ptf => Box::new(PtfSink::new(output, false, opts.notes)?),
        Format::PtfText => Box::new(PtfSink::new(output, true, opts.notes)?),
        Format::Heph => Box::new(HephSink::new(output)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_by_head_and_name() {
        assert_eq!(
            Format::detect(b"# tramp hatf-text 1\n", "x"),
            Some(Format::HatfText)
        );
        assert_eq!(Format::detect(&[0, 0, 0, 0, 1], "x"), Some(Format::Hatf));
        assert_eq!(Format::detect(&[11, 1, 0, 1], "-"), Some(Format::Hatf));
        assert_eq!(
            Format::detect(b"alloc size=1", "t.hatf.txt.zst"),
            Some(Format::HatfText)
        );
        assert_eq!(Format::detect(b"hello", "x.bin"), None);
        assert_eq!(Format::from_path("a.hatf.zst"), Some(Format::Hatf));
        assert!(
            Format::parse("nope")
                .unwrap_err()
                .to_string()
                .contains("known: hatf, hatf-text")
        );
    }
}
