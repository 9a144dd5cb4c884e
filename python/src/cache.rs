//! Caches from Python: `tramp.cachesim`'s table as columns, and
//! `tramp.Cache`, one cache driven request by request as in libcachesim,
//! which can also take a whole trace (`process`).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use tramp_api::cachesim::Request;
use tramp_cachesim::{PolicySpec, Unit};

use crate::errors::{invalid, raise};

/// What `tramp.cachesim` and `tramp.mrc` ask of the library.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Ask {
    pub path: String,
    pub format: Option<String>,
    pub policies: Vec<String>,
    pub sizes: Vec<String>,
    pub bytes: bool,
    pub warmup: Option<String>,
    pub threads: Option<usize>,
    pub curves: Option<Vec<String>>,
    pub shards: Option<f64>,
    pub mini_rate: Option<f64>,
}

impl Ask {
    fn request(self) -> Request {
        let mut r = Request::new(self.path);
        r.format = self.format;
        r.policies = self.policies;
        r.sizes = self.sizes;
        r.bytes = self.bytes;
        r.warmup = self.warmup.unwrap_or_else(|| "0".into());
        r.threads = self.threads;
        r.curves = self.curves;
        r.shards = self.shards;
        if let Some(m) = self.mini_rate {
            r.mini_rate = m;
        }
        r
    }
}

/// The simulation `ask` names, as the JSON `tramp cachesim --json`
/// prints; `strict`: damage raises.
#[pyfunction]
pub fn simulate_json(py: Python<'_>, ask: Ask) -> PyResult<String> {
    let r = ask.request();
    let sim = py
        .detach(|| {
            tramp_api::cachesim::plan(&r).and_then(|p| tramp_api::cachesim::simulate(p, None))
        })
        .map_err(raise)?;
    let json = tramp_core::render(&sim.outcome(), true);
    crate::errors::ended(json, sim.into_result().err(), true)
}

/// The policy as given (`s3fifo:small=0.2`) split into its bare name
/// (`s3fifo`), its parameters set (libCacheSim's names: `small-size-ratio=0.2`;
/// an admission filter after `+`) and its canonical whole name, which
/// the simulation's table calls it.
#[pyfunction]
pub fn policy_parts(policy: &str) -> PyResult<(String, String, String)> {
    let spec: PolicySpec = policy.parse().map_err(|e| invalid(format!("{e}")))?;
    let whole = spec.to_string();
    let bare = policy
        .split([':', '+'])
        .next()
        .unwrap_or(policy)
        .to_string();
    let kind = spec.kind.to_string();
    let params = whole
        .strip_prefix(&kind)
        .unwrap_or("")
        .trim_start_matches(':')
        .to_string();
    Ok((bare, params, whole))
}

/// One cache, fed request by request.
#[pyclass(module = "tramp", name = "Cache")]
pub struct Cache {
    /// Behind a lock because a Python object may be reached from any
    /// thread; uncontended, it costs a few ns a request.
    inner: Mutex<tramp_cachesim::Cache>,
    policy: String,
    size: u64,
    bytes: bool,
}

impl Cache {
    fn cache(&self) -> MutexGuard<'_, tramp_cachesim::Cache> {
        // A panic while the lock was held cannot leave a cache half
        // updated in a way later requests notice more than its numbers.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl Cache {
    /// A cache of `policy` (`lru`, `s3fifo:small=0.2`, …; `tramp
    /// cachesim --list-policies`) holding `size` objects, or `size` bytes
    /// with `bytes=True`.
    #[new]
    #[pyo3(signature = (policy, size, bytes=false))]
    fn new(policy: &str, size: u64, bytes: bool) -> PyResult<Cache> {
        let spec: PolicySpec = policy.parse().map_err(|e| invalid(format!("{e}")))?;
        if size == 0 {
            return Err(invalid("a cache needs a size above 0"));
        }
        spec.check_capacity(size)
            .map_err(|e| invalid(e.to_string()))?;
        let unit = if bytes { Unit::Bytes } else { Unit::Objects };
        Ok(Cache {
            inner: Mutex::new(tramp_cachesim::Cache::of(&spec, size, unit)),
            policy: policy.to_string(),
            size,
            bytes,
        })
    }

    /// Requests `obj_id` (of `size` bytes); True on a hit.
    #[pyo3(signature = (obj_id, size=1))]
    fn get(&self, obj_id: u64, size: u32) -> bool {
        self.cache()
            .access(&tramp_cachesim::Request::read(obj_id, size))
    }

    /// Feeds every request of a trace (a `tramp.Trace` or a path; any
    /// layout `tramp cachesim` reads) and gives the miss ratio and byte miss ratio of those
    /// requests.
    #[pyo3(signature = (trace, format=None))]
    fn process(
        &self,
        py: Python<'_>,
        trace: &Bound<'_, PyAny>,
        format: Option<String>,
    ) -> PyResult<(f64, f64)> {
        // A `tramp.Trace` (its path and format), or a path.
        let (path, named) = match trace.getattr("path") {
            Ok(p) => (p.extract::<String>()?, trace.getattr("format")?.extract()?),
            Err(_) => (trace.str()?.to_string(), None),
        };
        let mut r = Request::new(path);
        r.format = format.or(named);
        let (before, after) = py
            .detach(|| {
                let mut cache = self.cache();
                let before = cache.stats().clone();
                tramp_api::cachesim::process(&mut *cache, &r)
                    .map(|()| (before, cache.stats().clone()))
            })
            .map_err(raise)?;
        let requests = after.requests() - before.requests();
        let misses = after.misses() - before.misses();
        let bytes = after.bytes - before.bytes;
        let missed = after.bytes_missed - before.bytes_missed;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        Ok((ratio(misses, requests), ratio(missed, bytes)))
    }

    /// Requests, misses and their ratios so far (the cache's statistics,
    /// as `tramp cachesim --json` gives a cache's).
    fn stats(&self) -> BTreeMap<&'static str, f64> {
        let cache = self.cache();
        let s = cache.stats();
        BTreeMap::from([
            ("requests", s.requests() as f64),
            ("misses", s.misses() as f64),
            ("miss_ratio", s.miss_ratio()),
            ("byte_miss_ratio", s.byte_miss_ratio()),
            ("bytes", s.bytes as f64),
            ("bytes_missed", s.bytes_missed as f64),
        ])
    }

    /// Objects in the cache now.
    fn __len__(&self) -> usize {
        self.cache().policy().len()
    }

    fn __repr__(&self) -> String {
        let unit = if self.bytes { "bytes" } else { "objects" };
        format!("tramp.Cache({:?}, {} {unit})", self.policy, self.size)
    }
}

/// `tramp analyze --json` of the trace: libCacheSim's traceAnalyzer's
/// stat block and series; damage raises with the analysis before it.
#[pyfunction]
#[pyo3(signature = (path, format=None, window=60))]
pub fn analyze_json(
    py: Python<'_>,
    path: String,
    format: Option<String>,
    window: u64,
) -> PyResult<String> {
    if window == 0 {
        return Err(invalid("window 0: a window is at least one time unit"));
    }
    let mut r = Request::new(path);
    r.format = format;
    let opts = tramp_analyze::Options {
        window,
        ..Default::default()
    };
    let (a, damage) = py
        .detach(|| tramp_api::cachesim::analyze(&r, opts))
        .map_err(raise)?;
    let json = tramp_core::render(&tramp_api::cachesim::analyzed(&a, damage.as_ref()), true);
    crate::errors::ended(json, damage, true)
}
