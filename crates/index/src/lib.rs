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
use tramp_heap::images::PerImage;
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

/// The analyses that make one image's [`Parts`] from its records.
pub struct ImageBuilder {
    stats: Stats,
    modules: ModuleMap,
    rss: RssSamples,
}

impl Default for ImageBuilder {
    fn default() -> Self {
        ImageBuilder {
            stats: HeapStats::with((SiteCounts::new(), (Timeline::new(SLICES), Lifetimes::new()))),
            modules: ModuleMap::new(),
            rss: RssSamples::new(SLICES),
        }
    }
}

impl Analysis for ImageBuilder {
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

/// The analyses that make [`Parts`] from records, afresh for each image
/// of the trace (a process of a run, or the program an exec started:
/// tramp_heap::images::PerImage), so that no image's heap, stacks or
/// modules mix with another's.
pub struct Builder {
    per: PerImage<ImageBuilder, fn() -> ImageBuilder>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            per: PerImage::new(ImageBuilder::default as fn() -> ImageBuilder),
        }
    }
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Analysis for Builder {
    /// Each image's parts, in the trace's order (at least one).
    type Report = Vec<Parts>;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        self.per.observe(rec)
    }

    fn warning(&mut self, warning: &tramp_core::Warning) {
        self.per.warning(warning);
    }

    fn finish(self) -> Vec<Parts> {
        Analysis::finish(self.per)
    }
}

/// The one profile a job shows of a trace's images
/// (tramp_heap::images::choose: the one whose heap peaked highest), with
/// the note naming the others.
pub fn choose(images: Vec<Parts>) -> (Parts, Option<String>) {
    tramp_heap::images::choose(images, |p| {
        (p.totals.max_live_bytes, p.totals.processes.first().cloned())
    })
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
    /// The index of a whole trace's images' parts (`records`: the
    /// records of the file).
    pub fn of_images(images: Vec<Parts>, records: u64) -> Index {
        Index {
            tramp_index: VERSION,
            records,
            profiles: images
                .into_iter()
                .map(|parts| Entry {
                    pid: parts.modules.pid,
                    parts,
                })
                .collect(),
        }
    }

    /// The index of one whole trace's parts.
    pub fn whole(parts: Parts) -> Index {
        let records = parts.totals.records;
        Index::of_images(vec![parts], records)
    }

    /// The index of files joined one after another: their entries in turn.
    pub fn join(indexes: Vec<Index>) -> Index {
        let records = indexes.iter().map(|i| i.records).sum();
        let profiles = indexes.into_iter().flat_map(|i| i.profiles).collect();
        Index {
            tramp_index: VERSION,
            records,
            profiles,
        }
    }

    /// Every image's profile, in the file's order, with the records the
    /// file holds; `None` when it has no entry.
    pub fn into_images(self) -> Option<(Vec<Parts>, u64)> {
        let images: Vec<Parts> = self.profiles.into_iter().map(|e| e.parts).collect();
        (!images.is_empty()).then_some((images, self.records))
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
