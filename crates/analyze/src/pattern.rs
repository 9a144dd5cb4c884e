//! The access pattern of sampled objects (libCacheSim's `AccessPattern`):
//! every request to one object in [`SAMPLE`] (the objects whose id is a
//! multiple of it), its time and its request number, an object's
//! requests together — what scans and bursts look like.

use rustc_hash::FxHashMap;
use serde::Serialize;

/// One object in this many is sampled: those whose id divides by it
/// (libCacheSim's `access_pattern_sample_ratio_inv`, 10 by default).
pub const SAMPLE: u64 = 10;

/// The most requests the pattern keeps (8 bytes each): past it, the
/// requests of sampled objects are counted in `dropped_requests`, not
/// kept, so memory is bounded whatever the trace's length.
pub const MAX_POINTS: usize = 1 << 22;

/// The requests of one sampled object.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Accesses {
    /// Each request's time since the trace's first request.
    pub real: Vec<u64>,
    /// Each request's number (1 the trace's first).
    #[serde(rename = "virtual")]
    pub virtual_: Vec<u64>,
}

/// The sampled objects, in the order of their first request.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AccessPattern {
    /// One object in this many was sampled.
    pub sample: u64,
    pub objects: Vec<Accesses>,
    /// Requests to sampled objects past [`MAX_POINTS`].
    pub dropped_requests: u64,
}

pub(crate) struct Pattern {
    index: FxHashMap<u64, usize>,
    out: AccessPattern,
    points: usize,
}

impl Pattern {
    pub(crate) fn new() -> Pattern {
        Pattern {
            index: FxHashMap::default(),
            out: AccessPattern {
                sample: SAMPLE,
                ..AccessPattern::default()
            },
            points: 0,
        }
    }

    /// A request to `id` at `t` (since the first), the `vt`-th.
    #[inline]
    pub(crate) fn add(&mut self, id: u64, t: u64, vt: u64) {
        if !id.is_multiple_of(SAMPLE) {
            return;
        }
        if self.points >= MAX_POINTS {
            self.out.dropped_requests += 1;
            return;
        }
        self.points += 1;
        let objects = &mut self.out.objects;
        let i = *self.index.entry(id).or_insert_with(|| {
            objects.push(Accesses::default());
            objects.len() - 1
        });
        objects[i].real.push(t);
        objects[i].virtual_.push(vt);
    }

    pub(crate) fn finish(self) -> AccessPattern {
        self.out
    }
}
