//! Code addresses of a recorded process to places: module, offset,
//! function, file and line of the code itself (the innermost of inlined
//! frames), and the chain of functions it was inlined into, read from the
//! DWARF of the modules on this machine (the addr2line crate), or from a
//! stripped library's exported symbols.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Where code is: module, function, file and line (what is known).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub address: u64,
    pub module: Option<String>,
    /// The address relative to the module's load address.
    pub offset: Option<u64>,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The functions the code was inlined into, innermost first, each with
    /// the place of its inlined call; the last is the function the
    /// address's machine code belongs to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inlined: Vec<Inlined>,
}

/// A function that another was inlined into, at the line of that call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inlined {
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl Place {
    /// The frames this place stands for, innermost first: itself, then one
    /// per function it was inlined into (same address and module).
    pub fn frames(&self) -> Vec<Place> {
        let mut v = vec![Place {
            inlined: Vec::new(),
            ..self.clone()
        }];
        v.extend(self.inlined.iter().map(|i| Place {
            address: self.address,
            module: self.module.clone(),
            offset: self.offset,
            function: i.function.clone(),
            file: i.file.clone(),
            line: i.line,
            inlined: Vec::new(),
        }));
        v
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let module = self
            .module
            .as_deref()
            .map(|m| m.rsplit('/').next().unwrap_or(m));
        match (&self.function, module, self.offset) {
            (Some(func), _, _) => write!(f, "{func}")?,
            (None, Some(m), Some(off)) => return write!(f, "{m}+{off:#x}"),
            // A module known by name only (a heaptrack file's frames).
            (None, Some(m), None) => return write!(f, "{:#x} ({m})", self.address),
            _ => return write!(f, "{:#x}", self.address),
        }
        // Without a line, the offset in the module tells two call sites in
        // one function apart (they read the same by name alone).
        match (&self.file, self.line, module, self.offset) {
            (Some(file), Some(line), _, _) => write!(f, " ({file}:{line})"),
            (_, _, Some(m), Some(off)) => write!(f, " ({m}+{off:#x})"),
            (_, _, Some(m), None) => write!(f, " ({m})"),
            _ => Ok(()),
        }
    }
}

/// Maps code addresses of a recorded process to places.
#[derive(Default)]
pub struct Symbolizer {
    /// (base, path), sorted by base.
    modules: Vec<(u64, String)>,
    loaders: HashMap<String, Option<addr2line::Loader>>,
    /// Exported symbols per module, sorted by address: the fallback for
    /// stripped libraries (their `.dynsym` survives stripping).
    dynsyms: HashMap<String, Vec<(u64, u64, String)>>,
    cache: FxHashMap<u64, Place>,
    /// Addresses looked up in the module files already (a stored place
    /// without a line is looked up once more, see [`Symbolizer::symbolize`]).
    upgraded: rustc_hash::FxHashSet<u64>,
}

impl Symbolizer {
    pub fn add_module(&mut self, base: u64, path: &str) {
        if let Err(i) = self.modules.binary_search_by_key(&base, |(b, _)| *b) {
            self.modules.insert(i, (base, path.to_string()));
        }
    }

    /// Whether `address` lies in tramp's capture library (a module named
    /// `libtramp_capture*.so`).
    pub fn in_capture_library(&self, address: u64) -> bool {
        let i = self.modules.partition_point(|(b, _)| *b <= address);
        i > 0 && {
            let path = &self.modules[i - 1].1;
            path.rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("libtramp_capture"))
        }
    }

    /// The place of a return address as text, when it lies in a known
    /// module (else `None`: the number is not a code address of this
    /// trace, such as a PTF format id).
    pub fn name(&mut self, address: u64) -> Option<String> {
        let place = self.symbolize(address);
        place.module.is_some().then(|| place.to_string())
    }

    /// Takes a place known already (stored in the trace by `tramp record`),
    /// so that the address is never looked up in a module file.
    pub fn know(&mut self, place: Place) {
        self.cache.insert(place.address, place);
    }

    /// The place of a return address (the call before it is looked up).
    /// A place the trace stored without a line is looked up again: debug
    /// information installed since the recording (a `-dbg` package, a
    /// `--debug-dir`) then gives its file and line — taken only when it
    /// names the same function, so that a rebuilt program cannot give an
    /// old address another function's line.
    pub fn symbolize(&mut self, address: u64) -> Place {
        if let Some(p) = self.cache.get(&address) {
            if p.line.is_some() || p.module.is_none() || self.upgraded.contains(&address) {
                return p.clone();
            }
            let stored = p.clone();
            self.upgraded.insert(address);
            let fresh = self.lookup(address);
            let place = if fresh.line.is_some() && fresh.function == stored.function {
                fresh
            } else {
                stored
            };
            self.cache.insert(address, place.clone());
            return place;
        }
        let place = self.lookup(address);
        self.upgraded.insert(address);
        self.cache.insert(address, place.clone());
        place
    }

    fn lookup(&mut self, address: u64) -> Place {
        let mut place = Place {
            address,
            ..Place::default()
        };
        let i = self.modules.partition_point(|(b, _)| *b <= address);
        if i == 0 {
            return place;
        }
        let (base, path) = self.modules[i - 1].clone();
        place.module = Some(path.clone());
        place.offset = Some(address - base);
        // The module's own DWARF, else its separate debug file (which
        // holds the full symbol table too: functions by their own names,
        // not the nearest exported one).
        let loader = self
            .loaders
            .entry(path.clone())
            .or_insert_with(|| {
                let debug = crate::debugfile::find(std::path::Path::new(&path));
                addr2line::Loader::new(debug.as_deref().unwrap_or(std::path::Path::new(&path))).ok()
            })
            .as_ref();
        let Some(loader) = loader else { return place };
        // A return address points after the call: look up the call itself.
        let probe = address.wrapping_sub(base).wrapping_sub(1);
        if let Ok(mut frames) = loader.find_frames(probe) {
            // The innermost frame (first) is the code itself, inlined or not;
            // the outermost is the real function. Report the innermost name.
            let name = |f: &addr2line::Frame<'_, _>| {
                f.function
                    .as_ref()
                    .and_then(|f| f.demangle().ok())
                    .map(|s| s.into_owned())
            };
            if let Ok(Some(frame)) = frames.next() {
                place.function = name(&frame);
                if let Some(loc) = frame.location {
                    place.file = loc.file.map(str::to_string);
                    place.line = loc.line;
                }
                // The callers it was inlined into, each at its call's line.
                while let Ok(Some(outer)) = frames.next() {
                    let loc = outer.location.as_ref();
                    place.inlined.push(Inlined {
                        function: name(&outer),
                        file: loc.and_then(|l| l.file).map(str::to_string),
                        line: loc.and_then(|l| l.line),
                    });
                }
            }
        }
        if place.function.is_none() {
            place.function = loader
                .find_symbol(probe)
                .map(|s| addr2line::demangle_auto(s.into(), None).into_owned());
        }
        if place.function.is_none() {
            let syms = self
                .dynsyms
                .entry(path.clone())
                .or_insert_with(|| dynamic_symbols(&path));
            let i = syms.partition_point(|(a, _, _)| *a <= probe);
            if i > 0 {
                let (a, size, name) = &syms[i - 1];
                if probe < a + (*size).max(1) {
                    place.function = Some(addr2line::demangle_auto(name.into(), None).into_owned());
                }
            }
        }
        if place.file.is_none()
            && let Ok(Some(loc)) = loader.find_location(probe)
        {
            place.file = loc.file.map(str::to_string);
            place.line = loc.line;
        }
        place
    }
}

/// The defined function symbols of `.dynsym`, sorted by address.
fn dynamic_symbols(path: &str) -> Vec<(u64, u64, String)> {
    use object::{Object, ObjectSymbol, SymbolKind};
    // Read, not mapped: no unsafe outside the capture library.
    let Ok(data) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(obj) = object::File::parse(&*data) else {
        return Vec::new();
    };
    let mut v: Vec<(u64, u64, String)> = obj
        .dynamic_symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_call_sites_in_one_function_read_apart() {
        let place = |offset: u64, line: Option<u32>| Place {
            address: 0x7f00_0000_0000 + offset,
            module: Some("/lib/x86_64-linux-gnu/libc.so.6".into()),
            offset: Some(offset),
            function: Some("strdup".into()),
            file: line.map(|_| "strdup.c".into()),
            line,
            inlined: Vec::new(),
        };
        assert_eq!(
            place(0x9e9aa, None).to_string(),
            "strdup (libc.so.6+0x9e9aa)"
        );
        assert_ne!(
            place(0x9e9aa, None).to_string(),
            place(0x9e9c0, None).to_string()
        );
        assert_eq!(place(0x9e9aa, Some(41)).to_string(), "strdup (strdup.c:41)");
        let bare = Place {
            function: None,
            ..place(0x10, None)
        };
        assert_eq!(bare.to_string(), "libc.so.6+0x10");
    }
}
