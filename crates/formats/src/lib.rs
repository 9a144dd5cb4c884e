//! tramp-formats: the registry of trace formats. Each format crate
//! describes its formats once ([`FormatDesc`]); this crate keeps the list,
//! detects a format from an input's first bytes or name, and opens sources
//! and sinks by format, so that the CLI only wires them together;
//! [`pipeline`] is the one way a trace is opened and run.

pub mod fidelity;
pub mod pipeline;

use tramp_core::{CreateOptions, Error, FormatDesc, Header, Sink, Sniff};
use tramp_io::{Compression, Input, Output};

/// A registered format.
pub type Format = &'static FormatDesc;

/// Every format tramp reads and writes, in the order `tramp formats` lists
/// them.
pub static ALL: [Format; 16] = [
    &tramp_hatf::format::HATF,
    &tramp_hatf::format::HATF_TEXT,
    &tramp_metatf::format::METATF,
    &tramp_metatf::format::METATF_TEXT,
    &tramp_ptf::format::PTF,
    &tramp_ptf::format::PTF_TEXT,
    &tramp_heph::format::HEPH,
    &tramp_tpack::format::TPACK,
    &tramp_desc::format::DESC,
    &tramp_heaptrack::format::HEAPTRACK,
    &tramp_alloctrace::format::MTRACE,
    &tramp_alloctrace::format::ANDROID,
    &tramp_alloctrace::format::WEE_ALLOC,
    &tramp_alloctrace::format::TRACE_RUN,
    &tramp_memtrace::format::LACKEY,
    &tramp_memtrace::format::DIN,
];

/// The names of every format, comma-separated (for messages and help).
pub fn names() -> String {
    ALL.map(|f| f.name).join(", ")
}

/// The format called `name`.
pub fn parse(name: &str) -> Result<Format, Error> {
    ALL.into_iter()
        .find(|f| f.name == name)
        .ok_or_else(|| Error::Format(format!("unknown format `{name}` (known: {})", names())))
}

/// The format a file name suggests (compression extensions ignored); the
/// longest matching extension wins (`.ptf.txt` over `.txt`).
pub fn from_path(path: &str) -> Option<Format> {
    let stem = Compression::strip_extension(path);
    ALL.into_iter()
        .flat_map(|f| f.extensions.iter().map(move |e| (f, e)))
        .filter(|(_, e)| stem.ends_with(*e))
        .max_by_key(|(_, e)| e.len())
        .map(|(f, _)| f)
}

/// The format an output is written in: `to` (a `--to` the command was
/// given; `None` in `has_to` when it has no such option) if given, else the
/// one the name says (as `tramp formats` lists the extensions); stdout,
/// which has no name, gets `stdout`. A name no format has is refused before
/// any work (it once got HATF bytes under any name). Also returns the
/// format the name says when it is another than `to`'s, for a warning.
pub fn for_output(
    name: &str,
    to: Option<Option<&str>>,
    stdout: Format,
) -> Result<(Format, Option<Format>), Error> {
    let has_to = to.is_some();
    let named = from_path(name);
    let format = match (to.flatten(), named) {
        (Some(t), _) => parse(t)?,
        (None, Some(f)) => f,
        (None, None) if name == "-" => stdout,
        (None, None) => {
            return Err(Error::Format(format!(
                "{name}: no format has this extension (see `tramp formats`){}",
                if has_to { "; name one with --to" } else { "" }
            )));
        }
    };
    Ok((format, named.filter(|f| f.name != format.name)))
}

/// Detects the format of an input: a format whose magic bytes start it,
/// else the one its name suggests, else one that its first bytes could be.
pub fn detect(head: &[u8], name: &str) -> Option<Format> {
    if let Some(f) = ALL.into_iter().find(|f| (f.sniff)(head) == Sniff::Yes) {
        return Some(f);
    }
    if let Some(f) = from_path(name) {
        return Some(f);
    }
    ALL.into_iter().find(|f| (f.sniff)(head) == Sniff::Maybe)
}

/// The format of an input, or an error that says how to name one.
pub fn detect_input(input: &Input) -> Result<Format, Error> {
    detect_input_named(input, "--format")
}

/// [`detect_input`] for a command whose option naming a format is `option`
/// (`tramp run`'s is `--trace-format`).
pub fn detect_input_named(input: &Input, option: &str) -> Result<Format, Error> {
    // An empty input would read as an empty HATF trace (HATF has no
    // header): said instead, since it is far more often a mistake (a
    // closed pipe, a file not yet written).
    if input.head.is_empty() {
        let name = if input.name == "-" {
            "stdin"
        } else {
            &input.name
        };
        return Err(Error::Format(format!(
            "{name} is empty: there is no trace in it (an empty HATF trace is read with {option} hatf)"
        )));
    }
    detect(&input.head, &input.name).ok_or_else(|| {
        Error::Format(format!(
            "cannot tell the format of `{}`; name it with {option} ({})",
            input.name,
            names()
        ))
    })
}

/// Creates a sink of `format` writing to `output`, for records read from
/// a source of format `from` with `header`.
pub fn create_sink(
    output: Output,
    format: Format,
    from: Option<Format>,
    policy: Option<&str>,
    header: &Header,
) -> Result<Box<dyn Sink>, Error> {
    let opts = CreateOptions {
        policy,
        same_family: from.is_some_and(|f| f.family == format.family),
        header,
    };
    (format.create)(Box::new(output), &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(f: Option<Format>) -> Option<&'static str> {
        f.map(|f| f.name)
    }

    #[test]
    fn detection_by_head_and_name() {
        assert_eq!(
            name(detect(b"# tramp hatf-text 1\n", "x")),
            Some("hatf-text")
        );
        assert_eq!(name(detect(&[0, 0, 0, 0, 1], "x")), Some("hatf"));
        assert_eq!(name(detect(&[11, 1, 0, 1], "-")), Some("hatf"));
        assert_eq!(
            name(detect(b"alloc size=1", "t.hatf.txt.zst")),
            Some("hatf-text")
        );
        assert_eq!(name(detect(b"hello", "x.bin")), None);
        assert_eq!(name(from_path("a.hatf.zst")), Some("hatf"));
        assert_eq!(name(from_path("a.ptf.txt")), Some("ptf-text"));
        assert_eq!(name(from_path("a.txt")), Some("hatf-text"));
        assert_eq!(name(from_path("x.bin.log")), Some("heph"));
        assert!(
            parse("nope")
                .unwrap_err()
                .to_string()
                .contains("known: hatf, hatf-text")
        );
    }

    #[test]
    fn names_and_families_are_consistent() {
        for f in ALL {
            assert_eq!(parse(f.name).unwrap(), f);
            if let Some(t) = f.text_form {
                // tpack and heaptrack hold HATF's records and print them as
                // HATF text.
                let family = if ["tpack", "heaptrack", "mtrace", "android", "wee_alloc"]
                    .contains(&f.family)
                {
                    "hatf"
                } else {
                    f.family
                };
                assert_eq!(parse(t).unwrap().family, family, "{}", f.name);
            }
            for e in f.extensions {
                assert_eq!(from_path(&format!("x{e}")).unwrap().name, f.name);
            }
        }
    }
}
