//! valgrind cachegrind's cache model, so that a memory-access trace (a
//! lackey log) gives cachegrind's own miss counts: an I1 and a D1 cache,
//! both missing into one last-level cache (LL) that is not inclusive (a
//! line evicted from LL stays in I1 or D1), all three true LRU and
//! write-allocate, sets a power of two as cachegrind requires. An access
//! that straddles two lines looks up both and misses if either does; a
//! miss in I1 or D1 looks up the same bytes in LL. Data accesses larger
//! than the smallest line are cut to it, as cachegrind cuts them; an access
//! of no size (din) is one byte. A modify (lackey `M`) is a read then a
//! write of the same bytes; the write finds the lines the read brought in,
//! and cachegrind counts the pair once, as a read: so does this model.
//! docs/cachesim.md.

use std::fmt;

use serde::Serialize;

use crate::cpu::{Replacement, SetAssoc, SpecError};

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    /// An instruction fetch (I1).
    Fetch,
    /// A data read, or a modify (D1).
    Read,
    /// A data write (D1).
    Write,
}

/// Cachegrind's three caches and its counters.
#[derive(Clone, Debug)]
pub struct Cachegrind {
    i1: SetAssoc,
    d1: SetAssoc,
    ll: SetAssoc,
    /// The smallest line: larger data accesses are cut to it.
    min_line: u64,
    counts: CachegrindReport,
}

/// Cachegrind's summary counters (its `summary:` line, in its order) and
/// the geometry they came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CachegrindReport {
    /// `size,assoc,line` of I1, D1 and LL, as cachegrind's options take them.
    pub i1: String,
    pub d1: String,
    pub ll: String,
    /// Instruction fetches, their I1 misses and LL misses.
    pub ir: u64,
    pub i1mr: u64,
    pub ilmr: u64,
    /// Data reads (modifies included), their D1 and LL misses.
    pub dr: u64,
    pub d1mr: u64,
    pub dlmr: u64,
    /// Data writes, their D1 and LL misses.
    pub dw: u64,
    pub d1mw: u64,
    pub dlmw: u64,
}

impl CachegrindReport {
    /// The counters as cachegrind's `summary:` line lists them (`Ir I1mr
    /// ILmr Dr D1mr DLmr Dw D1mw DLmw`).
    pub fn summary(&self) -> [u64; 9] {
        [
            self.ir, self.i1mr, self.ilmr, self.dr, self.d1mr, self.dlmr, self.dw, self.d1mw,
            self.dlmw,
        ]
    }
}

/// Looks up every line `addr..addr+size` touches (one or two); a miss if
/// any missed.
fn refer(c: &mut SetAssoc, addr: u64, size: u64) -> bool {
    let line = c.line() as u64;
    let first = addr / line;
    let last = addr.saturating_add(size.max(1) - 1) / line;
    let mut miss = !c.access(addr).0;
    if last != first {
        miss |= !c.access(last * line).0;
    }
    miss
}

impl Cachegrind {
    /// I1, D1 and LL, each `(size, assoc, line)` in bytes.
    pub fn new(
        i1: (u64, u32, u32),
        d1: (u64, u32, u32),
        ll: (u64, u32, u32),
    ) -> Result<Self, SpecError> {
        let build = |name: &str, (size, ways, line): (u64, u32, u32)| {
            let c = SetAssoc::new(size, ways, line, Replacement::Lru)
                .map_err(|e| SpecError(format!("{name}: {e}")))?;
            if !c.sets().is_power_of_two() {
                return Err(SpecError(format!(
                    "{name}: {} sets is not a power of two (cachegrind requires one)",
                    c.sets()
                )));
            }
            Ok(c)
        };
        let (i1c, d1c, llc) = (build("I1", i1)?, build("D1", d1)?, build("LL", ll)?);
        let min_line = [i1.2, d1.2, ll.2].into_iter().min().unwrap_or(1) as u64;
        let g = |(s, a, l): (u64, u32, u32)| format!("{s},{a},{l}");
        Ok(Cachegrind {
            i1: i1c,
            d1: d1c,
            ll: llc,
            min_line,
            counts: CachegrindReport {
                i1: g(i1),
                d1: g(d1),
                ll: g(ll),
                ..CachegrindReport::default()
            },
        })
    }

    /// One access of `size` bytes at `addr`.
    #[inline]
    pub fn access(&mut self, r: Ref, addr: u64, size: u64) {
        let c = &mut self.counts;
        match r {
            Ref::Fetch => {
                c.ir += 1;
                if refer(&mut self.i1, addr, size) {
                    c.i1mr += 1;
                    if refer(&mut self.ll, addr, size) {
                        c.ilmr += 1;
                    }
                }
            }
            Ref::Read | Ref::Write => {
                let size = size.min(self.min_line);
                let (refs, l1, ll) = if r == Ref::Read {
                    (&mut c.dr, &mut c.d1mr, &mut c.dlmr)
                } else {
                    (&mut c.dw, &mut c.d1mw, &mut c.dlmw)
                };
                *refs += 1;
                if refer(&mut self.d1, addr, size) {
                    *l1 += 1;
                    if refer(&mut self.ll, addr, size) {
                        *ll += 1;
                    }
                }
            }
        }
    }

    pub fn report(&self) -> CachegrindReport {
        self.counts.clone()
    }
}

/// `cachegrind:I1=SIZE,ASSOC,LINE:D1=…:LL=…`, each cache as cachegrind's
/// `--I1`, `--D1` and `--LL` options take it (SIZE in bytes, or with K, M
/// or G for powers of 1024); all three are needed.
impl std::str::FromStr for Cachegrind {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let rest = s
            .trim()
            .strip_prefix("cachegrind")
            .ok_or_else(|| SpecError(format!("{s:?} does not start with `cachegrind`")))?;
        let (mut i1, mut d1, mut ll) = (None, None, None);
        for part in rest.split(':').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = |why: &str| SpecError(format!("{part:?}: {why}"));
            let (name, geometry) = part
                .split_once('=')
                .ok_or_else(|| bad("a cache is I1=SIZE,ASSOC,LINE (or D1=, LL=)"))?;
            let f: Vec<&str> = geometry.split(',').map(str::trim).collect();
            if f.len() != 3 {
                return Err(bad("a cache is SIZE,ASSOC,LINE"));
            }
            let size = crate::units::parse(f[0], crate::cache::Unit::Bytes).map_err(|e| bad(&e))?;
            let assoc = f[1].parse().map_err(|_| bad("ASSOC is not a number"))?;
            let line = f[2].parse().map_err(|_| bad("LINE is not a number"))?;
            let slot = match name.to_ascii_uppercase().as_str() {
                "I1" => &mut i1,
                "D1" => &mut d1,
                "LL" => &mut ll,
                _ => return Err(bad("the caches are I1, D1 and LL")),
            };
            *slot = Some((size, assoc, line));
        }
        let need = |c: Option<(u64, u32, u32)>, n: &str| {
            c.ok_or_else(|| {
                SpecError(format!(
                    "{s:?}: {n}= is missing (cachegrind:I1=…:D1=…:LL=…)"
                ))
            })
        };
        Cachegrind::new(need(i1, "I1")?, need(d1, "D1")?, need(ll, "LL")?)
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The counts as cachegrind prints its summary.
impl fmt::Display for CachegrindReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |v: u64| {
            let s = v.to_string();
            let mut out = String::new();
            for (i, c) in s.chars().enumerate() {
                if i > 0 && (s.len() - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
            out
        };
        writeln!(
            f,
            "cachegrind model: I1 {}  D1 {}  LL {} (size,assoc,line)",
            self.i1, self.d1, self.ll
        )?;
        writeln!(f, "I   refs:      {}", n(self.ir))?;
        writeln!(f, "I1  misses:    {}", n(self.i1mr))?;
        writeln!(f, "LLi misses:    {}", n(self.ilmr))?;
        writeln!(f, "I1  miss rate: {:.2}%", pct(self.i1mr, self.ir))?;
        writeln!(f, "LLi miss rate: {:.2}%", pct(self.ilmr, self.ir))?;
        let both = |a: u64, b: u64| format!("{}  ({} rd + {} wr)", n(a + b), n(a), n(b));
        writeln!(f, "D   refs:      {}", both(self.dr, self.dw))?;
        writeln!(f, "D1  misses:    {}", both(self.d1mr, self.d1mw))?;
        writeln!(f, "LLd misses:    {}", both(self.dlmr, self.dlmw))?;
        writeln!(
            f,
            "D1  miss rate: {:.1}%",
            pct(self.d1mr + self.d1mw, self.dr + self.dw)
        )?;
        writeln!(
            f,
            "LLd miss rate: {:.1}%",
            pct(self.dlmr + self.dlmw, self.dr + self.dw)
        )?;
        writeln!(
            f,
            "LL refs:       {}",
            both(self.i1mr + self.d1mr, self.d1mw)
        )?;
        writeln!(
            f,
            "LL misses:     {}",
            both(self.ilmr + self.dlmr, self.dlmw)
        )?;
        write!(
            f,
            "summary: {}",
            self.summary().map(|v| v.to_string()).join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Cachegrind {
        // 2 sets of 2 ways of 16-byte lines each; LL 4 sets of 2 ways.
        Cachegrind::new((64, 2, 16), (64, 2, 16), (128, 2, 16)).unwrap()
    }

    #[test]
    fn a_straddling_access_looks_up_both_lines_and_misses_once() {
        let mut c = tiny();
        c.access(Ref::Read, 14, 4); // lines 0 and 1: one miss, both filled
        c.access(Ref::Read, 0, 1); // line 0: hit
        c.access(Ref::Read, 16, 1); // line 1: hit
        let r = c.report();
        assert_eq!((r.dr, r.d1mr, r.dlmr), (3, 1, 1));
    }

    #[test]
    fn ll_is_not_inclusive_and_is_shared() {
        let mut c = tiny();
        // Fetch line 0 (I1 and LL miss), read it as data: D1 misses, LL hits.
        c.access(Ref::Fetch, 0, 4);
        c.access(Ref::Read, 0, 4);
        // Lines 0, 4, 8 share D1 set 0 (2 ways) and LL set 0 (2 ways).
        c.access(Ref::Write, 64, 1);
        c.access(Ref::Write, 128, 1); // LL evicts line 0; I1 still holds it
        c.access(Ref::Fetch, 0, 4); // I1 hit: no back-invalidation
        let r = c.report();
        assert_eq!(r.summary(), [2, 1, 1, 1, 1, 0, 2, 2, 2]);
    }

    #[test]
    fn geometry_is_checked_as_cachegrind_checks_it() {
        assert!(
            "cachegrind:I1=32K,8,64:D1=32K,8,64:LL=8M,16,64"
                .parse::<Cachegrind>()
                .is_ok()
        );
        // 3 MB 16-way of 64 bytes: 3072 sets.
        let e = "cachegrind:I1=32K,8,64:D1=32K,8,64:LL=3M,16,64"
            .parse::<Cachegrind>()
            .unwrap_err();
        assert!(e.0.contains("power of two"), "{e}");
        assert!(
            "cachegrind:I1=32K,8,64:D1=32K,8,64"
                .parse::<Cachegrind>()
                .is_err()
        );
        assert!("cachegrind:I2=32K,8,64".parse::<Cachegrind>().is_err());
    }
}
