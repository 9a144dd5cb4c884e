//! The heap profile of a trace read from where it is cheapest and still
//! true: a recording's profile index (`tramp_index`, after its last block)
//! when the job reads the whole of a tpack file that has one, else its
//! events, through the same analyses that made the index
//! ([`tramp_index::Builder`]). `--verify-index` reads the events and
//! compares their profile with the index's. Decisions: docs/index.md.

use serde::Serialize;
use tramp_core::{Analysis, Run};
use tramp_formats::Format;
use tramp_index::{Builder, Index, Parts};
use tramp_tpack::trailer::{Found, find};

use crate::Error;
use crate::input::{Opened, TraceSpec, detect};

/// What a profile job does with a recording's index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndexUse {
    /// Read the index when the job reads the whole of a tpack that has
    /// one; else the events.
    #[default]
    Read,
    /// Read the events and compare their profile with the index's (an
    /// error when they differ or there is none).
    Verify,
}

/// Where a job's profile came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "read", rename_all = "lowercase")]
pub enum Origin {
    /// The recording's index.
    Index,
    /// The events, which agreed with the index.
    Verified,
    /// The events; `note` says why not the index when a recording might
    /// have had one (none for a selection or another format).
    Events {
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

/// How much of the trace a job's profile covers, and where it came from.
pub struct Profiled {
    pub run: Run,
    /// The input, as messages name it.
    pub name: String,
    pub format: Format,
    pub origin: Origin,
    /// Which of several images the profile is of, and the others
    /// (tramp_index::choose), when the trace holds more than one.
    pub images: Option<String>,
}

/// What a tpack file's end holds, for a job that reads all of it.
enum Stored {
    /// Each image's profile, and the records the index counts.
    Index(Vec<Parts>, u64),
    /// There is none, or it cannot be used: why.
    Missing(String),
    /// Not a question for this input (a selection, stdin, another format).
    NotAsked,
}

/// The index stored in the file `spec` names, if the job reads all of it.
fn stored(spec: &TraceSpec, format: Format) -> Stored {
    if !spec.select.is_all() || spec.path == "-" || format.name != tramp_tpack::format::TPACK.name {
        return Stored::NotAsked;
    }
    let found = std::fs::File::open(&spec.path)
        .map_err(tramp_tpack::TpackError::Io)
        .and_then(|mut f| find(&mut f));
    match found {
        Ok(Found::Trailer(body)) => match Index::decode(&body) {
            Ok(index) => match index.into_images() {
                Some((images, records)) => Stored::Index(images, records),
                None => Stored::Missing("the index has no profile".into()),
            },
            Err(e) => Stored::Missing(format!("its index cannot be read: {e}")),
        },
        Ok(Found::None) => Stored::Missing(
            "it has no profile index (a converted trace, a recording cut short or made before \
             tpack version 5, or --no-index)"
                .into(),
        ),
        Ok(Found::Unreachable(why)) => Stored::Missing(format!("its index is unusable: {why}")),
        Err(tramp_tpack::TpackError::BadMagic) => {
            Stored::Missing("it is compressed as a whole, so its index is not at its end".into())
        }
        Err(e) => Stored::Missing(format!("its index cannot be read: {e}")),
    }
}

/// The profile of each image of the records `o` delivers.
pub fn images_from_events(o: &mut Opened) -> (Vec<Parts>, Run) {
    let mut builder = Builder::new();
    let run = o.run(&mut [&mut builder], Vec::new());
    (Analysis::finish(builder), run)
}

/// The heap profile of the trace `spec` names for the job `command`: from
/// its index or its events, as `wanted` says and the file allows.
pub fn profile(
    spec: &TraceSpec,
    command: &str,
    wanted: IndexUse,
) -> Result<(Parts, Profiled), Error> {
    let (images, mut p) = images(spec, command, wanted)?;
    let (parts, note) = tramp_index::choose(images);
    p.images = note;
    Ok((parts, p))
}

/// Each image's heap profile of the trace `spec` names (one, or a run's
/// several, in the trace's order), from its index or its events as
/// [`profile`] reads them.
pub fn images(
    spec: &TraceSpec,
    command: &str,
    wanted: IndexUse,
) -> Result<(Vec<Parts>, Profiled), Error> {
    let detected = detect(spec)?;
    let format = detected.format;
    let stored = match (stored(spec, format), wanted) {
        (Stored::Index(images, records), IndexUse::Read) => {
            let run = Run {
                records,
                ..Run::default()
            };
            let p = Profiled {
                run,
                name: spec.path.clone(),
                format,
                origin: Origin::Index,
                images: None,
            };
            return Ok((images, p));
        }
        (stored, _) => stored,
    };
    let mut o = detected.open(spec, false, true)?;
    crate::input::check_domains(&o, command, |d| d.heap, crate::heap::HEAP_EVENTS)?;
    let (images, run) = images_from_events(&mut o);
    let origin = match (stored, wanted) {
        (Stored::Index(stored, _), IndexUse::Verify) => {
            if stored.len() != images.len() {
                return Err(Error::IndexDisagrees {
                    path: spec.path.clone(),
                    field: format!("images ({} against {})", stored.len(), images.len()),
                });
            }
            for (i, (s, e)) in stored.iter().zip(&images).enumerate() {
                if let Some(field) = first_difference(s, e) {
                    let field = match images.len() {
                        1 => field,
                        _ => format!("profiles[{i}]{field}"),
                    };
                    return Err(Error::IndexDisagrees {
                        path: spec.path.clone(),
                        field,
                    });
                }
            }
            Origin::Verified
        }
        (Stored::Missing(why), IndexUse::Verify) => {
            return Err(Error::Invalid(format!(
                "--verify-index: {}: {why}",
                spec.path
            )));
        }
        (Stored::NotAsked, IndexUse::Verify) => {
            return Err(Error::Invalid(format!(
                "--verify-index: {} is not a whole tpack file read unfiltered",
                spec.path
            )));
        }
        (Stored::Missing(why), _) => Origin::Events {
            note: Some(format!(
                "{}: {why}; the profile is read from its events",
                spec.path
            )),
        },
        _ => Origin::Events { note: None },
    };
    let p = Profiled {
        run,
        name: o.name.clone(),
        format,
        origin,
        images: None,
    };
    Ok((images, p))
}

/// The first field (a JSON path) where two profiles differ, compared as
/// the index stores them.
pub fn first_difference(a: &Parts, b: &Parts) -> Option<String> {
    let (a, b) = (
        serde_json::to_value(a).expect("parts serialize"),
        serde_json::to_value(b).expect("parts serialize"),
    );
    differ(&a, &b, "")
}

fn differ(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value::{Array, Object};
    match (a, b) {
        (Object(x), Object(y)) => {
            for (k, v) in x {
                let here = format!("{at}.{k}");
                match y.get(k) {
                    Some(w) => {
                        if let Some(d) = differ(v, w, &here) {
                            return Some(d);
                        }
                    }
                    None => return Some(here),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{at}.{k}"))
        }
        (Array(x), Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{at} (length {} against {})", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (v, w))| differ(v, w, &format!("{at}[{i}]")))
        }
        _ if a == b => None,
        _ => Some(format!("{at} ({a} against {b})")),
    }
}

impl Profiled {
    /// The trace as messages and the report name it: `NAME (FORMAT)`.
    pub fn trace(&self) -> String {
        format!("{} ({})", self.name, self.format)
    }

    /// Why the profile was not read from an index the input might have
    /// had, if it was not.
    pub fn note(&self) -> Option<&str> {
        match &self.origin {
            Origin::Events { note } => note.as_deref(),
            _ => None,
        }
    }
}
