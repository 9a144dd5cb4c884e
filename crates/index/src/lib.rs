//! tramp-index: a recording's profile index. What the heap profile's jobs
//! (`report`, `stats --sites`, `diff`, `record --report`) read of a trace
//! is a handful of finished analyses — the statistics, every site's
//! totals, the heap over time, lifetimes, the module map, the RSS samples.
//! [`Builder`] is the one set of analyses that makes them ([`Parts`]), from
//! a trace's events as the jobs read them and, while a program runs, from
//! the records `tramp record` writes; [`Index`] is the document a tpack
//! keeps after its last block (tramp-tpack's trailer), compressed JSON,
//! so that a job of an unfiltered recording reads milliseconds of index
//! instead of seconds of events. The events stay the truth: a missing or
//! disagreeing index is rebuilt from them (tramp-api decides when).
//! The layout is in docs/formats/tpack.md ("Trailer"); the decisions in
//! docs/index.md.

use serde::{Deserialize, Serialize};
use tramp_core::{Analysis, Error, Record};
use tramp_heap::lifetimes::Lifetimes;
use tramp_heap::timeline::Timeline;
use tramp_heap::{HeapStats, Lived};
use tramp_symbols::ModuleMap;
use tramp_symbols::Modules;
use tramp_symbols::notes::RssSamples;
use tramp_symbols::sites::{Finished, SiteCounts};

/// Time slices of the heap over time and of the RSS samples: the report's
/// resolution, bounded whatever the trace's length.
pub const SLICES: usize = 512;
/// The index document's version (`tramp_index` in its JSON).
pub const VERSION: u32 = 1;
/// The most bytes an index decompresses to: a forged length or a
/// compression bomb cannot ask for more memory.
pub const MAX_INDEX: u64 = 1 << 30;

/// The finished analyses of a heap profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parts {
    pub totals: tramp_heap::Report,
    pub sites: Finished,
    pub modules: Modules,
    pub timeline: tramp_heap::timeline::Report,
    pub lifetimes: tramp_heap::lifetimes::Report,
    /// RSS samples (time, bytes), at most [`SLICES`] × 2.
    pub rss: Vec<(u64, u64)>,
}

impl Parts {
    /// The site counts every site report reads.
    pub fn site_counts(&self) -> SiteCounts {
        SiteCounts::from_finished(self.sites.clone())
    }
}

type Stats = HeapStats<(SiteCounts, (Timeline, Lifetimes)), Lived>;

/// The analyses that make [`Parts`] from records.
pub struct Builder {
    stats: Stats,
    modules: ModuleMap,
    rss: RssSamples,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            stats: HeapStats::with((SiteCounts::new(), (Timeline::new(SLICES), Lifetimes::new()))),
            modules: ModuleMap::new(),
            rss: RssSamples::new(SLICES),
        }
    }
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Analysis for Builder {
    type Report = Parts;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.stats.observe(rec)?;
        if rec.record_type().kind == tramp_core::RecordKind::Comment {
            self.modules.observe(rec)?;
            self.rss.observe(rec)?;
        }
        Ok(())
    }

    fn warning(&mut self, warning: &tramp_core::Warning) {
        self.stats.warning(warning);
    }

    fn finish(self) -> Parts {
        let (totals, (sites, (timeline, lifetimes))) = self.stats.finish_with();
        let modules = Analysis::finish(self.modules);
        Parts {
            totals,
            sites: sites.finished(&modules),
            modules,
            timeline,
            lifetimes,
            rss: Analysis::finish(self.rss),
        }
    }
}

/// One process's profile in an index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The recorded process (its process note); `None`: every record of
    /// the file, whatever its process.
    pub pid: Option<u64>,
    pub parts: Parts,
}

/// The index document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// [`VERSION`].
    pub tramp_index: u32,
    /// The records the events hold (all of them: the index is of the
    /// unfiltered trace).
    pub records: u64,
    pub profiles: Vec<Entry>,
}

impl Index {
    /// The index of one whole trace's parts.
    pub fn whole(parts: Parts) -> Index {
        Index {
            tramp_index: VERSION,
            records: parts.totals.records,
            profiles: vec![Entry {
                pid: parts.modules.pid,
                parts,
            }],
        }
    }

    /// The profile of every record of the file (the entry, when it is the
    /// only one: a recording is one process today; else the entry of no
    /// pid), with the records it counts.
    pub fn into_whole_file(self) -> Option<(Parts, u64)> {
        let records = self.records;
        let mut profiles = self.profiles;
        let at = match profiles.len() {
            1 => 0,
            _ => profiles.iter().position(|e| e.pid.is_none())?,
        };
        Some((profiles.swap_remove(at).parts, records))
    }

    /// The document as stored: a zstd frame of its JSON.
    pub fn encode(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).expect("an index serializes");
        zstd::bulk::compress(&json, 9).expect("zstd compresses a buffer")
    }

    /// Reads a stored document back.
    pub fn decode(bytes: &[u8]) -> Result<Index, IndexError> {
        use std::io::Read;
        let mut json = Vec::new();
        zstd::stream::read::Decoder::new(bytes)
            .map_err(|e| IndexError::Compression(e.to_string()))?
            .take(MAX_INDEX + 1)
            .read_to_end(&mut json)
            .map_err(|e| IndexError::Compression(e.to_string()))?;
        if json.len() as u64 > MAX_INDEX {
            return Err(IndexError::TooLarge);
        }
        let index: Index = serde_json::from_slice(&json).map_err(IndexError::Json)?;
        if index.tramp_index != VERSION {
            return Err(IndexError::Version(index.tramp_index));
        }
        Ok(index)
    }
}

/// Why a stored index could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the index does not decompress: {0}")]
    Compression(String),
    #[error("the index decompresses to more than 1 GiB")]
    TooLarge,
    #[error("the index is not an index document: {0}")]
    Json(#[source] serde_json::Error),
    #[error("index version {0} (this tramp reads version 1)")]
    Version(u32),
}
