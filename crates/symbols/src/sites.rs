//! Allocation-site tables: per-site totals from the heap view's events
//! ([`SiteCounts`], an analysis of heap events whose objects keep their
//! site), named with the trace's modules into the top sites by
//! allocations, by bytes, and by bytes live at exit.

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_core::Analysis;
use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK, Site};
use tramp_heap::{Heap, HeapEvent, HeapStep};

use crate::modules::{Modules, Names};
use crate::symbolizer::Place;

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
        SITE_RETURN_ADDRESS => vec![names.place(site.value)],
        SITE_STACK => {
            let frames = names.stack(site.value).to_vec();
            frames.iter().map(|f| names.place(*f)).collect()
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
