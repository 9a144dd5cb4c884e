//! Allocation sites of a recorded trace: which code allocates most often,
//! most bytes, and leaves most bytes live at exit, symbolized to function,
//! file and line from the module map the recording wrote (with the
//! addr2line crate, reading the DWARF of the modules on this machine).

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_core::{Analysis, Record, RecordKind, Role};
use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK, Site};
use tramp_heap::{Heap, HeapEvent, HeapStep};

use crate::convert::Annotation;

/// Where code is: module, function, file and line (what is known).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Place {
    pub address: u64,
    pub module: Option<String>,
    /// The address relative to the module's load address.
    pub offset: Option<u64>,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
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

/// The module map a recorded trace carries in its `tramp:module` notes:
/// what names the code addresses of any analysis (allocation sites,
/// instructions of a pointer trace) afterwards, with [`Modules::names`].
#[derive(Default)]
pub struct ModuleMap {
    modules: Vec<(u64, String)>,
    stacks: Vec<(u64, Vec<u64>)>,
    stack_depth: u64,
}

impl ModuleMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in what a comment record says about modules, stacks and the
    /// stack depth (other records are ignored).
    pub fn note(&mut self, rec: &Record<'_>) {
        if rec.record_type().kind != RecordKind::Comment {
            return;
        }
        match rec
            .role(Role::Text)
            .and_then(|v| v.as_bytes())
            .and_then(Annotation::parse)
        {
            Some(Annotation::Module { base, path }) => self.modules.push((base, path)),
            Some(Annotation::Stack { id, frames }) => self.stacks.push((id, frames)),
            Some(Annotation::Process { stack_depth, .. }) => self.stack_depth = stack_depth,
            _ => {}
        }
    }

    /// How many modules and stacks are known (it grows as annotations
    /// are noted).
    pub fn len(&self) -> usize {
        self.modules.len() + self.stacks.len() + usize::from(self.stack_depth > 0)
    }

    /// Whether nothing is known yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Names for what was seen so far.
    pub fn names(&self) -> Names {
        Names {
            symbolizer: {
                let mut s = Symbolizer::default();
                for (base, path) in &self.modules {
                    s.add_module(*base, path);
                }
                s
            },
            stacks: self.stacks.iter().cloned().collect(),
            stack_depth: self.stack_depth,
        }
    }
}

/// A trace's modules: (load address, path); and, for a recording with
/// `--stack`, its call stacks by id.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Modules {
    pub modules: Vec<(u64, String)>,
    pub stacks: Vec<(u64, Vec<u64>)>,
    /// Frames per allocation site (0: sites are return addresses).
    pub stack_depth: u64,
}

impl Modules {
    /// Names code addresses and allocation sites of the trace.
    pub fn names(&self) -> Names {
        ModuleMap {
            modules: self.modules.clone(),
            stacks: self.stacks.clone(),
            stack_depth: self.stack_depth,
        }
        .names()
    }
}

/// Names for a trace's numbers: code addresses by function and line, and
/// allocation sites — with `--stack`, a site is a stack id, named by its
/// first two frames (`operator new ← main (list.cpp:5)`: what tells C++
/// allocations apart, which all come from `operator new`).
pub struct Names {
    symbolizer: Symbolizer,
    stacks: FxHashMap<u64, Vec<u64>>,
    stack_depth: u64,
}

impl Names {
    /// A code address (a return address or an instrumented instruction).
    pub fn code(&mut self, address: u64) -> Option<String> {
        self.symbolizer.name(address)
    }

    /// An allocation site.
    pub fn site(&mut self, site: u64) -> Option<String> {
        if self.stack_depth == 0 {
            return self.code(site);
        }
        let frames = self.stacks.get(&site)?.clone();
        let names: Vec<String> = frames
            .iter()
            .take(2)
            .map(|f| self.code(*f).unwrap_or_else(|| format!("{f:#x}")))
            .collect();
        (!names.is_empty()).then(|| names.join(" ← "))
    }
}

impl std::fmt::Display for Modules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (base, path) in &self.modules {
            writeln!(f, "{base:#x} {path}")?;
        }
        Ok(())
    }
}

impl tramp_core::Analysis for ModuleMap {
    type Report = Modules;

    fn observe(&mut self, rec: &Record<'_>) -> Result<(), tramp_core::Error> {
        self.note(rec);
        Ok(())
    }

    fn finish(self) -> Modules {
        Modules {
            modules: self.modules,
            stacks: self.stacks,
            stack_depth: self.stack_depth,
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
}

impl Symbolizer {
    pub fn add_module(&mut self, base: u64, path: &str) {
        if let Err(i) = self.modules.binary_search_by_key(&base, |(b, _)| *b) {
            self.modules.insert(i, (base, path.to_string()));
        }
    }

    /// The place of a return address as text, when it lies in a known
    /// module (else `None`: the number is not a code address of this
    /// trace, such as a PTF format id).
    pub fn name(&mut self, address: u64) -> Option<String> {
        let place = self.symbolize(address);
        place.module.is_some().then(|| place.to_string())
    }

    /// The place of a return address (the call before it is looked up).
    pub fn symbolize(&mut self, address: u64) -> Place {
        if let Some(p) = self.cache.get(&address) {
            return p.clone();
        }
        let place = self.lookup(address);
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
        let loader = self
            .loaders
            .entry(path.clone())
            .or_insert_with(|| addr2line::Loader::new(&path).ok())
            .as_ref();
        let Some(loader) = loader else { return place };
        // A return address points after the call: look up the call itself.
        let probe = address.wrapping_sub(base).wrapping_sub(1);
        if let Ok(mut frames) = loader.find_frames(probe) {
            // The innermost frame (first) is the code itself, inlined or not;
            // the outermost is the real function. Report the innermost name.
            if let Ok(Some(frame)) = frames.next() {
                place.function = frame
                    .function
                    .as_ref()
                    .and_then(|f| f.demangle().ok())
                    .map(|s| s.into_owned());
                if let Some(loc) = frame.location {
                    place.file = loc.file.map(str::to_string);
                    place.line = loc.line;
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

/// Totals for one site.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SiteTotals {
    pub allocs: u64,
    pub bytes: u64,
    pub live_objects: u64,
    pub live_bytes: u64,
}

/// One row of a site table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SiteRow {
    /// Innermost frame first (one entry for return-address sites).
    pub stack: Vec<Place>,
    #[serde(flatten)]
    pub totals: SiteTotals,
}

/// The three site tables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SitesReport {
    pub sites: u64,
    pub by_count: Vec<SiteRow>,
    pub by_bytes: Vec<SiteRow>,
    pub by_live_bytes_at_exit: Vec<SiteRow>,
}

/// Per-site totals from the heap view's events: what each allocation site
/// allocated and still holds. The live objects (and each one's site) are
/// the view's, so this keeps one row per site and nothing per object.
#[derive(Default)]
pub struct SiteCounts {
    /// One row per site, in order of first allocation.
    rows: Vec<(Site, SiteTotals)>,
    index: FxHashMap<Site, usize>,
    /// The row of the last site looked up (allocations repeat sites).
    last: Option<(Site, usize)>,
}

impl SiteCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// The row of `site`, made if `make`.
    #[inline]
    fn row(&mut self, site: Site, make: bool) -> Option<&mut SiteTotals> {
        let i = match self.last {
            Some((s, i)) if s == site => i,
            _ => {
                let i = match self.index.get(&site) {
                    Some(i) => *i,
                    None if make => {
                        self.rows.push((site, SiteTotals::default()));
                        self.index.insert(site, self.rows.len() - 1);
                        self.rows.len() - 1
                    }
                    None => return None,
                };
                self.last = Some((site, i));
                i
            }
        };
        Some(&mut self.rows[i].1)
    }

    fn forget(&mut self, site: Site, size: u64) {
        if let Some(t) = self.row(site, false) {
            t.live_objects -= 1;
            t.live_bytes -= size;
        }
    }

    /// The top `n` sites by allocation count, by bytes, and by bytes live
    /// at the end of the trace (leaks), named with the trace's modules
    /// (whose process notes also say what a plain site number is).
    pub fn report(&self, modules: &Modules, n: usize) -> SitesReport {
        let stacks = modules.stack_depth > 0;
        let mut resolved: FxHashMap<Site, SiteTotals> = FxHashMap::default();
        for (site, t) in &self.rows {
            let r = resolved.entry(site.resolved(stacks)).or_default();
            r.allocs += t.allocs;
            r.bytes += t.bytes;
            r.live_objects += t.live_objects;
            r.live_bytes += t.live_bytes;
        }
        let mut all: Vec<(Site, SiteTotals)> = resolved.into_iter().collect();
        all.sort_by_key(|(k, _)| *k);
        let mut names = modules.names();
        let top = |key: &dyn Fn(&SiteTotals) -> u64, names: &mut Names| -> Vec<SiteRow> {
            let mut v: Vec<&(Site, SiteTotals)> = all.iter().filter(|(_, t)| key(t) > 0).collect();
            v.sort_by(|a, b| key(&b.1).cmp(&key(&a.1)).then(a.0.cmp(&b.0)));
            v.into_iter()
                .take(n)
                .map(|(site, t)| SiteRow {
                    stack: stack_of(names, *site),
                    totals: t.clone(),
                })
                .collect()
        };
        SitesReport {
            sites: all.len() as u64,
            by_count: top(&|t| t.allocs, &mut names),
            by_bytes: top(&|t| t.bytes, &mut names),
            by_live_bytes_at_exit: top(&|t| t.live_bytes, &mut names),
        }
    }
}

fn stack_of(names: &mut Names, site: Site) -> Vec<Place> {
    match site.kind {
        SITE_RETURN_ADDRESS => vec![names.symbolizer.symbolize(site.value)],
        SITE_STACK => {
            let frames = names.stacks.get(&site.value).cloned().unwrap_or_default();
            frames
                .iter()
                .map(|f| names.symbolizer.symbolize(*f))
                .collect()
        }
        _ => vec![],
    }
}

impl Analysis<Heap<Site>> for SiteCounts {
    type Report = SiteCounts;

    #[inline]
    fn observe(&mut self, step: &HeapStep<Site>) -> Result<(), tramp_core::Error> {
        match step.event {
            HeapEvent::Alloc { object, .. } => {
                let t = self.row(object.extra, true).expect("made");
                t.allocs += 1;
                t.bytes += object.size;
                t.live_objects += 1;
                t.live_bytes += object.size;
            }
            HeapEvent::Displaced { object, .. }
            | HeapEvent::Free {
                object: Some(object),
                ..
            } => self.forget(object.extra, object.size),
            HeapEvent::Realloc {
                resized: Some((object, before)),
                ..
            } => {
                if let Some(t) = self.row(object.extra, false) {
                    t.live_bytes = t.live_bytes - before + object.size;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> SiteCounts {
        self
    }
}

impl std::fmt::Display for SitesReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "\nallocation sites: {}", self.sites)?;
        for (title, rows) in [
            ("by allocations", &self.by_count),
            ("by bytes allocated", &self.by_bytes),
            ("by bytes live at exit (leaks)", &self.by_live_bytes_at_exit),
        ] {
            writeln!(f, "\ntop sites {title}")?;
            writeln!(
                f,
                "  {:>12} {:>16} {:>12} {:>16}  site",
                "allocs", "bytes", "live", "live bytes"
            )?;
            for r in rows {
                let t = &r.totals;
                let first = r
                    .stack
                    .first()
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "(unknown)".into());
                writeln!(
                    f,
                    "  {:>12} {:>16} {:>12} {:>16}  {first}",
                    t.allocs, t.bytes, t.live_objects, t.live_bytes
                )?;
                for p in r.stack.iter().skip(1).take(4) {
                    writeln!(f, "  {:>60}  <- {p}", "")?;
                }
            }
        }
        Ok(())
    }
}

/// Heap statistics with the site tables: the statistics' JSON object gains
/// a `sites` key (keys in sorted order); the text shows the site tables
/// after the statistics.
#[derive(Clone, Debug)]
pub struct WithSites {
    pub heap: tramp_heap::Report,
    pub sites: SitesReport,
}

impl Serialize for WithSites {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut v = serde_json::to_value(&self.heap).map_err(S::Error::custom)?;
        v["sites"] = serde_json::to_value(&self.sites).map_err(S::Error::custom)?;
        v.serialize(s)
    }
}

impl std::fmt::Display for WithSites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.heap, self.sites)
    }
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
