//! Statistics of a PTF trace: events per type, objects created per format,
//! edges written and read, data reads and writes, maximum live objects.

use std::collections::BTreeMap;
use std::fmt;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::event::{self, Event, EventType, NULL, Oid};

/// Accumulates statistics event by event (memory: one entry per live
/// object and per format).
#[derive(Default)]
pub struct PtfStats {
    events: u64,
    per_type: BTreeMap<EventType, u64>,
    format_names: FxHashMap<Oid, String>,
    per_format: BTreeMap<Oid, u64>,
    live: FxHashSet<Oid>,
    max_live: u64,
    max_live_at: u64,
    edges_written: u64,
    null_edges_written: u64,
    edges_read: u64,
    data_reads: u64,
    data_writes: u64,
    array_elements_read: u64,
    array_elements_written: u64,
}

impl PtfStats {
    pub fn new() -> Self {
        PtfStats::default()
    }

    pub fn observe(&mut self, e: &Event) {
        self.events += 1;
        *self.per_type.entry(e.event_type()).or_default() += 1;
        match e {
            Event::FormatObject(f) => {
                self.format_names.insert(f.id, f.name.clone());
            }
            Event::CreateObject { format, oid } | Event::CreateArrayObject { format, oid, .. } => {
                *self.per_format.entry(*format).or_default() += 1;
                self.live.insert(*oid);
                if self.live.len() as u64 > self.max_live {
                    self.max_live = self.live.len() as u64;
                    self.max_live_at = self.events;
                }
            }
            Event::DeleteObject { oid, .. } => {
                self.live.remove(oid);
            }
            Event::EdgeWrite { to, .. } => {
                self.edges_written += 1;
                if *to == NULL {
                    self.null_edges_written += 1;
                }
            }
            Event::EdgeRead { .. } => self.edges_read += 1,
            Event::DataRead { .. } => self.data_reads += 1,
            Event::DataWrite { .. } => self.data_writes += 1,
            Event::ArrayDataRead { length, .. } => {
                self.data_reads += 1;
                self.array_elements_read += length;
            }
            Event::ArrayDataWrite { length, .. } => {
                self.data_writes += 1;
                self.array_elements_written += length;
            }
            Event::SetRoot { .. } | Event::GetRoot | Event::NoGcStart | Event::NoGcEnd => {}
        }
    }

    pub fn report(&self) -> Report {
        let name = |f: &Oid| {
            self.format_names
                .get(f)
                .cloned()
                .or_else(|| event::scalar(*f).map(|(n, _)| n.to_string()))
                .unwrap_or_else(|| "?".into())
        };
        Report {
            events: self.events,
            per_type: EventType::ALL
                .iter()
                .map(|t| (*t, self.per_type.get(t).copied().unwrap_or(0)))
                .collect(),
            per_format: self
                .per_format
                .iter()
                .map(|(f, n)| (*f, name(f), *n))
                .collect(),
            objects_created: self.per_format.values().sum(),
            live_at_end: self.live.len() as u64,
            max_live: self.max_live,
            max_live_at: self.max_live_at,
            edges_written: self.edges_written,
            null_edges_written: self.null_edges_written,
            edges_read: self.edges_read,
            data_reads: self.data_reads,
            data_writes: self.data_writes,
            array_elements_read: self.array_elements_read,
            array_elements_written: self.array_elements_written,
        }
    }
}

/// The statistics of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub events: u64,
    pub per_type: Vec<(EventType, u64)>,
    /// (format id, class name, objects created with it).
    pub per_format: Vec<(Oid, String, u64)>,
    pub objects_created: u64,
    pub live_at_end: u64,
    pub max_live: u64,
    /// The event at which the maximum was first reached.
    pub max_live_at: u64,
    pub edges_written: u64,
    pub null_edges_written: u64,
    pub edges_read: u64,
    /// `dr` and `adr` events.
    pub data_reads: u64,
    /// `dw` and `adw` events.
    pub data_writes: u64,
    pub array_elements_read: u64,
    pub array_elements_written: u64,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use tramp_core::numbers::grouped as g;
        writeln!(f, "events                  {:>12}", g(self.events))?;
        writeln!(f, "objects created         {:>12}", g(self.objects_created))?;
        writeln!(
            f,
            "max live objects        {:>12}  (at event {})",
            g(self.max_live),
            g(self.max_live_at)
        )?;
        writeln!(f, "live at end             {:>12}", g(self.live_at_end))?;
        writeln!(
            f,
            "edges written           {:>12}  ({} null)",
            g(self.edges_written),
            g(self.null_edges_written)
        )?;
        writeln!(f, "edges read              {:>12}", g(self.edges_read))?;
        writeln!(
            f,
            "data reads              {:>12}  ({} array elements)",
            g(self.data_reads),
            g(self.array_elements_read)
        )?;
        writeln!(
            f,
            "data writes             {:>12}  ({} array elements)",
            g(self.data_writes),
            g(self.array_elements_written)
        )?;
        writeln!(f, "\nevents per type")?;
        for (t, n) in &self.per_type {
            writeln!(
                f,
                "  {:<4} {:<22} {:>12}",
                t.mnemonic(),
                t.long_name(),
                g(*n)
            )?;
        }
        writeln!(f, "\nobjects per format")?;
        for (id, name, n) in &self.per_format {
            writeln!(f, "  {:>6} {:<22} {:>12}", id, name, g(*n))?;
        }
        Ok(())
    }
}

impl serde::Serialize for Report {
    /// One JSON object, keys in sorted order; per-type counts keyed by
    /// mnemonic, per-format rows as objects.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let per_type: serde_json::Map<String, serde_json::Value> = self
            .per_type
            .iter()
            .map(|(t, n)| (t.mnemonic().to_string(), (*n).into()))
            .collect();
        let per_format: Vec<serde_json::Value> = self
            .per_format
            .iter()
            .map(|(id, name, n)| serde_json::json!({"format": id, "name": name, "objects": n}))
            .collect();
        serde_json::json!({
            "events": self.events,
            "objects_created": self.objects_created,
            "max_live_objects": self.max_live,
            "max_live_at_event": self.max_live_at,
            "live_at_end": self.live_at_end,
            "edges_written": self.edges_written,
            "null_edges_written": self.null_edges_written,
            "edges_read": self.edges_read,
            "data_reads": self.data_reads,
            "data_writes": self.data_writes,
            "array_elements_read": self.array_elements_read,
            "array_elements_written": self.array_elements_written,
            "events_per_type": per_type,
            "objects_per_format": per_format,
        })
        .serialize(s)
    }
}

/// PTF statistics over records (of PTF's schema, or any schema whose
/// record types are named by PTF mnemonics).
impl tramp_core::Analysis for PtfStats {
    type Report = Report;

    fn observe(&mut self, rec: &tramp_core::Record<'_>) -> Result<(), tramp_core::Error> {
        let e = crate::records::record_to_event(rec).map_err(|e| tramp_core::Error::Schema {
            record_type: rec.record_type().name.clone(),
            message: e.to_string(),
        })?;
        PtfStats::observe(self, &e);
        Ok(())
    }

    fn finish(self) -> Report {
        self.report()
    }
}
