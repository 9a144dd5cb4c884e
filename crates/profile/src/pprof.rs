//! The heap profile as pprof's `profile.proto` (gzip-compressed), which
//! `go tool pprof`, Perfetto UI and Pyroscope open: one sample per call
//! stack with allocations, bytes, and objects and bytes live at the end of
//! the trace (`alloc_objects`, `alloc_space`, `inuse_objects`,
//! `inuse_space`, as Go's heap profiles name them), one location per code
//! address whose lines are its inlined chain (innermost first, as pprof
//! reads them), one mapping per module.
//!
//! The messages are the published proto's (google/pprof
//! proto/profile.proto), declared here with prost's derive: only the
//! fields tramp writes.

use std::collections::BTreeMap;
use std::io::Write;

use prost::Message;
use rustc_hash::FxHashMap;
use tramp_heap::Site;
use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK};
use tramp_symbols::Place;
use tramp_symbols::modules::Names;
use tramp_symbols::sites::SiteTotals;

#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// Leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Innermost first; the last is the function the others were inlined
    /// into.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
}

/// The sample types, in the order of each sample's values.
pub const SAMPLE_TYPES: [(&str, &str); 4] = [
    ("alloc_objects", "count"),
    ("alloc_space", "bytes"),
    ("inuse_objects", "count"),
    ("inuse_space", "bytes"),
];

/// Builds the profile from every site's totals (`SiteCounts::resolved`),
/// the trace's names (each code address is symbolized once, for its
/// location) and modules (load address, path).
/// A sampled trace's rows are estimates already; its `sampling` becomes
/// the profile's period, as in Go's heap profiles (whose values are scaled
/// too, and whose period is the sampling rate in bytes).
pub fn profile(
    rows: &[(Site, SiteTotals)],
    names: &mut Names,
    modules: &[(u64, String)],
    sampling: Option<tramp_heap::sampling::Sampling>,
) -> Profile {
    let mut b = Builder::default();
    b.string(""); // string_table[0] is "".
    let mut p = Profile {
        sample_type: SAMPLE_TYPES
            .iter()
            .map(|(t, u)| ValueType {
                r#type: b.string(t),
                unit: b.string(u),
            })
            .collect(),
        period_type: Some(ValueType {
            r#type: b.string("space"),
            unit: b.string("bytes"),
        }),
        // Every allocation is in the trace (1), or one every so many bytes.
        period: sampling.map_or(1, |s| i64::try_from(s.mean_bytes).unwrap_or(i64::MAX)),
        ..Profile::default()
    };
    // The whole run's allocations are what a trace shows best; the live
    // objects at its end are its leaks.
    p.default_sample_type = b.string("alloc_space");
    p.comment = vec![b.string("recorded and exported by tramp")];
    if let Some(s) = sampling {
        let note = format!(
            "sampled every {} bytes on average: values are estimates",
            s.mean_bytes
        );
        p.comment.push(b.string(&note));
    }
    // The recorded program (the trace's first module) is the profile's
    // first mapping, which pprof takes for the main binary (not the
    // dynamic loader, whose code may come first in a stack).
    let program = modules.first().cloned();
    let mut modules: Vec<(u64, String)> = modules.to_vec();
    modules.sort();
    if let Some((base, path)) = &program {
        b.mapping(path, *base, &modules);
    }
    let mut clamped = 0u64;
    for (site, t) in rows {
        let frames = match site.kind {
            SITE_STACK => names.stack(site.value),
            SITE_RETURN_ADDRESS => vec![site.value],
            _ => Vec::new(),
        };
        // One location per code address, its lines the address's inlined
        // chain.
        let ids = frames
            .iter()
            .map(|&pc| b.location(pc, names, &modules))
            .collect();
        // pprof's values are int64: a sum past 2^63 − 1 is written as that
        // (counted in `clamped`, and said).
        let mut v = |x: u128| {
            i64::try_from(x).unwrap_or_else(|_| {
                clamped += 1;
                i64::MAX
            })
        };
        let value = vec![
            v(u128::from(t.allocs)),
            v(t.bytes),
            v(u128::from(t.live_objects)),
            v(u128::from(t.live_bytes)),
        ];
        p.sample.push(Sample {
            location_id: ids,
            value,
        });
    }
    if clamped > 0 {
        let note = format!(
            "{clamped} values passed 2^63 - 1, pprof's largest, and are written as 2^63 - 1"
        );
        p.comment.push(b.string(&note));
    }
    p.mapping = b.mappings.into_values().collect();
    p.mapping.sort_by_key(|m| m.id);
    p.location = b.locations;
    p.function = b.functions;
    p.string_table = b.strings;
    p
}

/// Writes the profile gzip-compressed, as pprof expects it on disk.
pub fn write(p: &Profile, out: impl Write) -> std::io::Result<()> {
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&p.encode_to_vec())?;
    gz.finish()?;
    Ok(())
}

#[derive(Default)]
struct Builder {
    strings: Vec<String>,
    string_ids: FxHashMap<String, i64>,
    functions: Vec<Function>,
    function_ids: FxHashMap<(i64, i64), u64>,
    locations: Vec<Location>,
    location_ids: FxHashMap<u64, u64>,
    /// By module path.
    mappings: BTreeMap<String, Mapping>,
}

impl Builder {
    fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    fn function(&mut self, name: &str, file: &str) -> u64 {
        let key = (self.string(name), self.string(file));
        let next = self.functions.len() as u64 + 1;
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        self.functions.push(Function {
            id: next,
            name: key.0,
            system_name: key.0,
            filename: key.1,
        });
        self.function_ids.insert(key, next);
        next
    }

    /// The mapping of a module (its load address from the trace's module
    /// notes when known), its range grown to hold `address`.
    fn mapping(&mut self, path: &str, address: u64, modules: &[(u64, String)]) -> u64 {
        let next = self.mappings.len() as u64 + 1;
        let filename = self.string(path);
        let m = self.mappings.entry(path.to_string()).or_insert_with(|| {
            let start = modules
                .iter()
                .find(|(_, p)| p == path)
                .map_or(address, |(b, _)| *b);
            Mapping {
                id: next,
                memory_start: start.min(address),
                memory_limit: address + 1,
                filename,
                ..Mapping::default()
            }
        });
        m.memory_start = m.memory_start.min(address);
        m.memory_limit = m.memory_limit.max(address + 1);
        m.id
    }

    /// The location of one code address (symbolized the first time).
    fn location(&mut self, address: u64, names: &mut Names, modules: &[(u64, String)]) -> u64 {
        if let Some(&id) = self.location_ids.get(&address) {
            return id;
        }
        let frames = names.place(address).frames();
        let mapping_id = match &frames[0].module {
            Some(m) => {
                let id = self.mapping(m, address, modules);
                let has = |f: fn(&Place) -> bool| frames.iter().all(f);
                let (functions, files, lines) = (
                    has(|p| p.function.is_some()),
                    has(|p| p.file.is_some()),
                    has(|p| p.line.is_some()),
                );
                let inline = frames.len() > 1;
                if let Some(mp) = self.mappings.values_mut().find(|x| x.id == id) {
                    mp.has_functions |= functions;
                    mp.has_filenames |= files;
                    mp.has_line_numbers |= lines;
                    mp.has_inline_frames |= inline;
                }
                id
            }
            None => 0,
        };
        let line = frames
            .iter()
            .map(|p| {
                // A frame without a name is named as the site tables name
                // it (module+offset, or its address).
                let name = match &p.function {
                    Some(f) => f.clone(),
                    None => p.to_string(),
                };
                let file = p.file.as_deref().unwrap_or("");
                Line {
                    function_id: self.function(&name, file),
                    line: p.line.map_or(0, i64::from),
                }
            })
            .collect();
        let id = self.locations.len() as u64 + 1;
        self.locations.push(Location {
            id,
            mapping_id,
            address,
            line,
        });
        self.location_ids.insert(address, id);
        id
    }
}
