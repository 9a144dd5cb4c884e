//! Many caches, one pass: every (policy, size) pair is fed each request in
//! turn, so a trace read once — from a file or a pipe — gives a whole
//! table of miss ratios, or the miss-ratio curve of any policy.

use std::fmt;

use serde::Serialize;

use crate::cache::{Cache, CacheReport, Unit};
use crate::policy::PolicyKind;
use crate::request::Request;

/// Caches of several policies and sizes fed by the same requests.
pub struct Sweep {
    caches: Vec<Cache>,
    unit: Unit,
}

impl Sweep {
    /// One cache per policy and size, policies outermost.
    pub fn new(policies: &[PolicyKind], sizes: &[u64], unit: Unit) -> Sweep {
        let caches = policies
            .iter()
            .flat_map(|&p| sizes.iter().map(move |&s| Cache::new(p, s, unit)))
            .collect();
        Sweep { caches, unit }
    }

    /// Feeds one request to every cache.
    #[inline]
    pub fn access(&mut self, req: &Request) {
        for c in &mut self.caches {
            c.access(req);
        }
    }

    pub fn caches(&self) -> &[Cache] {
        &self.caches
    }

    /// The results, in the order the caches were made.
    pub fn report(&self) -> SweepReport {
        SweepReport {
            unit: self.unit,
            caches: self.caches.iter().map(Cache::report).collect(),
        }
    }
}

/// Results of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    pub unit: Unit,
    pub caches: Vec<CacheReport>,
}

impl SweepReport {
    /// The points (capacity, miss ratio) of each policy, in policy order.
    pub fn curves(&self) -> Vec<(String, Vec<(u64, f64)>)> {
        let mut out: Vec<(String, Vec<(u64, f64)>)> = Vec::new();
        for c in &self.caches {
            match out.last_mut() {
                Some((name, pts)) if *name == c.policy => pts.push((c.capacity, c.miss_ratio)),
                _ => out.push((c.policy.clone(), vec![(c.capacity, c.miss_ratio)])),
            }
        }
        out
    }
}

impl fmt::Display for SweepReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.unit {
            Unit::Objects => "objects",
            Unit::Bytes => "bytes",
        };
        writeln!(
            f,
            "{:<8} {:>14} {:>12} {:>12} {:>10} {:>10} {:>11}",
            "policy",
            format!("size ({unit})"),
            "requests",
            "misses",
            "miss ratio",
            "byte miss",
            "write-backs"
        )?;
        for c in &self.caches {
            writeln!(
                f,
                "{:<8} {:>14} {:>12} {:>12} {:>10.6} {:>10.6} {:>11}",
                c.policy,
                c.capacity,
                c.stats.requests(),
                c.stats.misses(),
                c.miss_ratio,
                c.byte_miss_ratio,
                c.stats.write_backs
            )?;
        }
        Ok(())
    }
}
