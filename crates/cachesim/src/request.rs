//! What a cache is asked: one request for one object.

use serde::Serialize;

/// A next-access time meaning "never requested again" (or unknown).
pub const NEVER: u64 = u64::MAX;

/// Whether a request reads or writes its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
}

/// One request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The object (a key, a page number, a cache line).
    pub id: u64,
    /// Its size in bytes (ignored when a cache counts objects).
    pub size: u32,
    /// Read or write.
    pub op: Op,
    /// The request number of the object's next request ([`NEVER`] if none).
    /// Only Belady's OPT reads it; only its order matters.
    pub next_access: u64,
    /// When it was made, in the trace's clock (seconds for libCacheSim's
    /// layouts, nanoseconds for recordings; 0 when the trace has none).
    /// No cache reads it; trace analysis and the miss stream do.
    pub time: u64,
    /// Its time to live in the trace's clock, 0 for none (the layouts
    /// that carry one: twr, lcs v3 and later, csv's `ttl` column). No
    /// cache reads it; trace analysis does.
    pub ttl: u32,
}

impl Request {
    /// A read of `id` of `size` bytes with no next-access time.
    pub fn read(id: u64, size: u32) -> Request {
        Request {
            id,
            size,
            op: Op::Read,
            next_access: NEVER,
            time: 0,
            ttl: 0,
        }
    }

    /// The same request made at `time`.
    pub fn at(self, time: u64) -> Request {
        Request { time, ..self }
    }

    /// A write of `id` of `size` bytes with no next-access time.
    pub fn write(id: u64, size: u32) -> Request {
        Request {
            op: Op::Write,
            ..Request::read(id, size)
        }
    }
}

/// Fills in every request's next-access time (1-based request numbers, as
/// libCacheSim's traces number them), for Belady's OPT on traces without
/// them. Needs the whole trace in memory: one backward pass.
pub fn fill_next_access(requests: &mut [Request]) {
    let mut next = rustc_hash::FxHashMap::default();
    for (i, r) in requests.iter_mut().enumerate().rev() {
        r.next_access = next.insert(r.id, i as u64 + 1).unwrap_or(NEVER);
    }
}
