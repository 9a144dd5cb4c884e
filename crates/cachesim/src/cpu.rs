//! Set-associative CPU caches over addresses, and inclusive hierarchies of
//! them with latencies (seed 002's Table 1 is [`Hierarchy::table1`]).

use std::fmt;

use serde::Serialize;

/// How a set chooses its victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Replacement {
    /// True LRU within the set.
    Lru,
    /// Tree pseudo-LRU (ways must be a power of two): one bit per inner
    /// node of a binary tree over the ways points towards the half to
    /// evict from; an access turns the bits on its path away from it.
    Plru,
}

/// A cache shape that cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GeometryError {
    #[error("a cache needs a non-zero size, line size and number of ways")]
    Zero,
    #[error("line size {0} is not a power of two")]
    Line(u32),
    #[error("{size} bytes is not a whole number of {ways}-way sets of {line}-byte lines")]
    Shape { size: u64, ways: u32, line: u32 },
    #[error("pseudo-LRU needs a power-of-two number of ways, not {0}")]
    PlruWays(u32),
    #[error("level {0}'s lines are larger than the next level's (inclusion needs the opposite)")]
    Lines(usize),
    #[error(
        "{size} bytes in {line}-byte lines needs {needed} bytes of tags and state, more than half of the {available} bytes of memory available"
    )]
    TooLarge {
        size: u64,
        line: u32,
        needed: u64,
        available: u64,
    },
}

/// Memory available to a new allocation (MemAvailable in /proc/meminfo),
/// if it can be read.
fn available_memory() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = m
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// One set-associative cache.
#[derive(Debug)]
pub struct SetAssoc {
    size: u64,
    ways: u32,
    line_shift: u32,
    sets: u64,
    repl: Replacement,
    /// Line number + 1 per (set, way); `EMPTY` (0) if invalid. Empty is
    /// zero so that the arrays come from zeroed memory, which the system
    /// maps only where a set is first used: a large, sparsely used cache
    /// costs what it holds, not its size.
    tags: Vec<u64>,
    /// LRU: last-use stamp per (set, way). PLRU: tree bits per set.
    state: Vec<u64>,
    clock: u64,
    /// Whether any line was ever filled (a clone of an unused cache takes
    /// fresh zeroed arrays instead of copying, which would touch them all).
    used: bool,
}

impl Clone for SetAssoc {
    fn clone(&self) -> SetAssoc {
        let (tags, state) = if self.used {
            (self.tags.clone(), self.state.clone())
        } else {
            (vec![EMPTY; self.tags.len()], vec![0; self.state.len()])
        };
        SetAssoc {
            tags,
            state,
            ..*self
        }
    }
}

const EMPTY: u64 = 0;

impl SetAssoc {
    /// `size` bytes in `ways`-way sets of `line`-byte lines.
    pub fn new(size: u64, ways: u32, line: u32, repl: Replacement) -> Result<Self, GeometryError> {
        if size == 0 || ways == 0 || line == 0 {
            return Err(GeometryError::Zero);
        }
        if !line.is_power_of_two() {
            return Err(GeometryError::Line(line));
        }
        let set_bytes = ways as u64 * line as u64;
        if !size.is_multiple_of(set_bytes) {
            return Err(GeometryError::Shape { size, ways, line });
        }
        if repl == Replacement::Plru && !ways.is_power_of_two() {
            return Err(GeometryError::PlruWays(ways));
        }
        let sets = size / set_bytes;
        let slots = sets * ways as u64;
        let state_len = match repl {
            Replacement::Lru => slots,
            Replacement::Plru => sets,
        };
        // Zeroed pages cost nothing until used, but a trace may use every
        // set: refuse what could not be held.
        let needed = (slots + state_len).saturating_mul(8);
        let available = available_memory().unwrap_or(u64::MAX);
        if needed > available / 2 || usize::try_from(slots).is_err() {
            return Err(GeometryError::TooLarge {
                size,
                line,
                needed,
                available,
            });
        }
        let (slots, state_len) = (slots as usize, state_len as usize);
        Ok(SetAssoc {
            size,
            ways,
            line_shift: line.trailing_zeros(),
            sets,
            repl,
            tags: vec![EMPTY; slots],
            state: vec![0; state_len],
            clock: 0,
            used: false,
        })
    }

    pub fn line(&self) -> u32 {
        1 << self.line_shift
    }
    pub fn sets(&self) -> u64 {
        self.sets
    }
    pub fn ways(&self) -> u32 {
        self.ways
    }
    pub fn size(&self) -> u64 {
        self.size
    }

    fn set_of(&self, line: u64) -> usize {
        (line % self.sets) as usize
    }

    fn way_of(&self, set: usize, line: u64) -> Option<usize> {
        let w = self.ways as usize;
        let tag = line.wrapping_add(1);
        self.tags[set * w..set * w + w]
            .iter()
            .position(|&t| t == tag)
    }

    fn touch(&mut self, set: usize, way: usize) {
        match self.repl {
            Replacement::Lru => {
                self.clock += 1;
                self.state[set * self.ways as usize + way] = self.clock;
            }
            Replacement::Plru => {
                // Walk from the root: at each node, point away from `way`.
                let mut bits = self.state[set];
                let (mut node, mut lo, mut n) = (0usize, 0usize, self.ways as usize);
                while n > 1 {
                    let half = n / 2;
                    if way < lo + half {
                        bits |= 1 << node; // evict from the right next
                        node = 2 * node + 1;
                    } else {
                        bits &= !(1 << node); // evict from the left next
                        node = 2 * node + 2;
                        lo += half;
                    }
                    n = half;
                }
                self.state[set] = bits;
            }
        }
    }

    fn victim(&self, set: usize) -> usize {
        let w = self.ways as usize;
        if let Some(free) = self.tags[set * w..set * w + w]
            .iter()
            .position(|&t| t == EMPTY)
        {
            return free;
        }
        match self.repl {
            Replacement::Lru => {
                let stamps = &self.state[set * w..set * w + w];
                (0..w).min_by_key(|&i| stamps[i]).expect("ways > 0")
            }
            Replacement::Plru => {
                let bits = self.state[set];
                let (mut node, mut lo, mut n) = (0usize, 0usize, w);
                while n > 1 {
                    let half = n / 2;
                    if bits & (1 << node) != 0 {
                        node = 2 * node + 2;
                        lo += half;
                    } else {
                        node = 2 * node + 1;
                    }
                    n = half;
                }
                lo
            }
        }
    }

    /// Looks up the line holding `addr`, filling it on a miss. Returns
    /// whether it hit and the address of the line evicted, if any.
    pub fn access(&mut self, addr: u64) -> (bool, Option<u64>) {
        let line = addr >> self.line_shift;
        let set = self.set_of(line);
        if let Some(way) = self.way_of(set, line) {
            self.touch(set, way);
            return (true, None);
        }
        self.used = true;
        let way = self.victim(set);
        let slot = set * self.ways as usize + way;
        let old = self.tags[slot];
        self.tags[slot] = line.wrapping_add(1);
        self.touch(set, way);
        (false, (old != EMPTY).then(|| (old - 1) << self.line_shift))
    }

    /// Whether the line holding `addr` is cached (no state change).
    pub fn contains(&self, addr: u64) -> bool {
        let line = addr >> self.line_shift;
        self.way_of(self.set_of(line), line).is_some()
    }

    /// Drops the line holding `addr` if cached.
    pub fn invalidate(&mut self, addr: u64) {
        let line = addr >> self.line_shift;
        let set = self.set_of(line);
        if let Some(way) = self.way_of(set, line) {
            self.tags[set * self.ways as usize + way] = EMPTY;
        }
    }

    /// The lines of one set in way order (None: invalid), for tests and
    /// debugging.
    pub fn set_lines(&self, set: usize) -> Vec<Option<u64>> {
        let w = self.ways as usize;
        self.tags[set * w..set * w + w]
            .iter()
            .map(|&t| (t != EMPTY).then(|| t - 1))
            .collect()
    }
}

/// One level of a hierarchy.
#[derive(Clone, Debug)]
pub struct Level {
    pub name: String,
    pub cache: SetAssoc,
    /// Cycles to hit in this level.
    pub latency: u64,
    pub hits: u64,
}

/// An inclusive hierarchy: a line in a level is in every level below it; a
/// line evicted from a level is invalidated above it.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    levels: Vec<Level>,
    memory_latency: u64,
    accesses: u64,
    memory: u64,
    cycles: u64,
}

impl Hierarchy {
    /// Levels from the closest to the farthest; `memory_latency` cycles when
    /// every level misses.
    pub fn new(levels: Vec<Level>, memory_latency: u64) -> Result<Self, GeometryError> {
        for i in 1..levels.len() {
            if levels[i - 1].cache.line() > levels[i].cache.line() {
                return Err(GeometryError::Lines(i - 1));
            }
        }
        Ok(Hierarchy {
            levels,
            memory_latency,
            accesses: 0,
            memory: 0,
            cycles: 0,
        })
    }

    /// Seed 002's Table 1 (an Itanium 2): L1D 16 KB 4-way 1 cycle, L2
    /// 256 KB 8-way 6 cycles, L3 1.5 MB 12-way 13 cycles, memory 100 cycles.
    /// The table gives no line sizes; these are the Itanium 2's (64 bytes
    /// in L1D, 128 in L2 and L3). All levels true LRU.
    pub fn table1() -> Hierarchy {
        let level = |name: &str, size, ways, line, latency| Level {
            name: name.to_string(),
            cache: SetAssoc::new(size, ways, line, Replacement::Lru).expect("valid shape"),
            latency,
            hits: 0,
        };
        Hierarchy::new(
            vec![
                level("L1D", 16 << 10, 4, 64, 1),
                level("L2", 256 << 10, 8, 128, 6),
                level("L3", 1536 << 10, 12, 128, 13),
            ],
            100,
        )
        .expect("lines grow downwards")
    }

    /// One access; returns its latency in cycles.
    pub fn access(&mut self, addr: u64) -> u64 {
        self.accesses += 1;
        let hit_at = self
            .levels
            .iter()
            .position(|l| l.cache.contains(addr))
            .unwrap_or(self.levels.len());
        let latency = match self.levels.get_mut(hit_at) {
            Some(l) => {
                l.cache.access(addr); // recency
                l.hits += 1;
                l.latency
            }
            None => {
                self.memory += 1;
                self.memory_latency
            }
        };
        // Fill from the farthest missing level up, so an eviction's
        // back-invalidation never removes what was just filled above.
        for i in (0..hit_at).rev() {
            if let (_, Some(victim)) = self.levels[i].cache.access(addr) {
                let span = self.levels[i].cache.line() as u64;
                for upper in &mut self.levels[..i] {
                    let step = upper.cache.line() as u64;
                    let mut a = victim;
                    while a < victim + span {
                        upper.cache.invalidate(a);
                        a += step;
                    }
                }
            }
        }
        self.cycles += latency;
        latency
    }

    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    pub fn report(&self) -> HierarchyReport {
        HierarchyReport {
            accesses: self.accesses,
            levels: self
                .levels
                .iter()
                .map(|l| LevelReport {
                    name: l.name.clone(),
                    size: l.cache.size(),
                    ways: l.cache.ways(),
                    line: l.cache.line(),
                    latency: l.latency,
                    hits: l.hits,
                })
                .collect(),
            memory_latency: self.memory_latency,
            memory: self.memory,
            cycles: self.cycles,
            average_latency: if self.accesses == 0 {
                0.0
            } else {
                self.cycles as f64 / self.accesses as f64
            },
        }
    }
}

/// A hierarchy described in text: `table1`, or levels
/// `SIZE:WAYS:LINE:LATENCY[:plru]` from the closest out, comma-separated,
/// then `mem:LATENCY` (SIZE may end in K, M or G, powers of 1024). E.g.
/// `32K:8:64:4,1M:16:64:14,mem:200`.
impl std::str::FromStr for Hierarchy {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "table1" {
            return Ok(Hierarchy::table1());
        }
        let mut levels = Vec::new();
        let mut memory = None;
        for part in s.split(',').map(str::trim) {
            let bad = |why: &str| SpecError(format!("{part:?}: {why}"));
            let f: Vec<&str> = part.split(':').collect();
            if f[0].eq_ignore_ascii_case("mem") {
                let lat = f.get(1).and_then(|v| v.parse().ok());
                memory = Some(lat.ok_or_else(|| bad("memory latency is not a number"))?);
                continue;
            }
            if !(4..=5).contains(&f.len()) {
                return Err(bad("a level is SIZE:WAYS:LINE:LATENCY[:plru]"));
            }
            let size = crate::units::parse(f[0], crate::cache::Unit::Bytes).map_err(|e| bad(&e))?;
            let ways = f[1].parse().map_err(|_| bad("ways is not a number"))?;
            let line = f[2].parse().map_err(|_| bad("line is not a number"))?;
            let latency = f[3].parse().map_err(|_| bad("latency is not a number"))?;
            let repl = match f.get(4).map(|r| r.to_ascii_lowercase()) {
                None => Replacement::Lru,
                Some(r) if r == "lru" => Replacement::Lru,
                Some(r) if r == "plru" => Replacement::Plru,
                Some(_) => return Err(bad("replacement is lru or plru")),
            };
            let cache = SetAssoc::new(size, ways, line, repl).map_err(|e| bad(&e.to_string()))?;
            levels.push(Level {
                name: format!("L{}", levels.len() + 1),
                cache,
                latency,
                hits: 0,
            });
        }
        if levels.is_empty() {
            return Err(SpecError(format!("{s:?} names no cache level")));
        }
        let memory = memory.ok_or_else(|| SpecError(format!("{s:?} lacks mem:LATENCY")))?;
        Hierarchy::new(levels, memory).map_err(|e| SpecError(e.to_string()))
    }
}

/// A hierarchy description that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("cache hierarchy {0}")]
pub struct SpecError(pub String);

/// Hits per level and the average latency.
#[derive(Clone, Debug, Serialize)]
pub struct HierarchyReport {
    pub accesses: u64,
    pub levels: Vec<LevelReport>,
    pub memory_latency: u64,
    /// Accesses that went to memory.
    pub memory: u64,
    pub cycles: u64,
    pub average_latency: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LevelReport {
    pub name: String,
    pub size: u64,
    pub ways: u32,
    pub line: u32,
    pub latency: u64,
    pub hits: u64,
}

impl fmt::Display for HierarchyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<6} {:>10} {:>5} {:>5} {:>8} {:>12} {:>8}",
            "level", "size", "ways", "line", "latency", "hits", "share"
        )?;
        let share = |n: u64| {
            if self.accesses == 0 {
                0.0
            } else {
                n as f64 / self.accesses as f64
            }
        };
        for l in &self.levels {
            writeln!(
                f,
                "{:<6} {:>10} {:>5} {:>5} {:>8} {:>12} {:>8.4}",
                l.name,
                l.size,
                l.ways,
                l.line,
                l.latency,
                l.hits,
                share(l.hits)
            )?;
        }
        writeln!(
            f,
            "{:<6} {:>10} {:>5} {:>5} {:>8} {:>12} {:>8.4}",
            "memory",
            "",
            "",
            "",
            self.memory_latency,
            self.memory,
            share(self.memory)
        )?;
        write!(
            f,
            "{} accesses, {} cycles, average latency {:.3} cycles",
            self.accesses, self.cycles, self.average_latency
        )
    }
}
