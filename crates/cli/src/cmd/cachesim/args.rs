//! `tramp cachesim`'s arguments, with the help text.

use clap::Args;

/// Simulate caches over a trace: miss ratios of replacement policies at
/// chosen sizes, and LRU miss-ratio curves.
///
/// Inputs: libCacheSim's csv (`time, object, size[, next_access_vtime]`, a
/// `#` header may name the columns; an `op` column marks writes), its
/// oracleGeneral binary layout (24-byte little-endian records: u32 time,
/// u64 object id, u32 size, i64 next access; detected by a name ending in
/// `.oracleGeneral` or `.oracleGeneral.bin`), its vscsi (block traces,
/// versions 1 and 2 told by the first records; `.vscsi`), twr (Twitter's
/// 20-byte records; `.twr`) and lcs (versions 1 to 8, detected by its
/// header's magic) layouts (docs/formats/libcachesim.md), memory-access
/// traces (valgrind lackey, Dinero IV din: the line of each access), or
/// any tramp format: heap
/// traces as requests for the cache line of each record's address
/// (allocations, reallocations, frees and stores write, loads read), PTF
/// traces as a persistent store's buffer pool of objects (reads read;
/// creation and writes write). zstd, gzip and xz are unwrapped.
///
/// Every policy follows libCacheSim 0.3.5's definition and agrees with it
/// exactly (docs/cachesim.md): lru, fifo, clock (1-bit; clock2 and clock3
/// for 2- and 3-bit counters), sieve, s3fifo, arc, 2q, lfu, slru (slru2 …
/// slru16), size, mq, gdsf, lfuda, lruk, lruprob, flashprob, random,
/// hyperbolic, beladysize, clock2qplus, lirs, wtinylfu, lecar, lhd,
/// clockpro, cacheus, and opt (Belady; next-access times from the trace,
/// or computed in memory when the trace has none). The randomized ones
/// draw what libCacheSim draws (its generator and hash table, reproduced);
/// `:seed=N` draws anew. Admission filters go in front of any policy:
/// `+bloom`, `+prob`, `+size`, `+sizeprob`, `+adaptsize`. All caches run
/// in one pass over the trace, on every core (--threads); --warmup leaves
/// the first requests uncounted.
///
/// Output: per cache, requests, misses, miss ratio, byte miss ratio and
/// write-backs (evictions of objects written while cached). With --mrc (or
/// without --size) the exact LRU miss-ratio curve from stack distances,
/// or SHARDS-sampled with --shards RATE; with --mrc=POLICIES any policy's
/// curve by miniature simulation (--mrc-check: its error against full
/// simulation). If the trace is damaged, the
/// results of every request before the damage are printed, then the error,
/// and the exit status is 1.
#[derive(Args)]
pub struct CachesimArgs {
    /// Trace file, or `-` for stdin.
    pub input: String,
    /// Input layout: csv, oracle, vscsi, twr, lcs, or a tramp format name
    /// (default: detected).
    #[arg(long = "format", short = 'f')]
    pub format: Option<String>,
    /// Policies, comma-separated: NAME[:PARAM=VALUE…][+FILTER[:PARAM=VALUE…]],
    /// parameters under libCacheSim's names (`s3fifo:small-size-ratio=0.2`,
    /// or short: `s3fifo:small=0.2:move=1`, `2q:ain=0.3`,
    /// `mq:lifetime=5000`), an admission filter after `+` (`lru+bloom`,
    /// `fifo+prob:prob=0.3`, `lru+size:size=4096`, `lru+sizeprob`,
    /// `lru+adaptsize`). Every
    /// policy and parameter: docs/cachesim.md.
    #[arg(long, short = 'p', value_delimiter = ',', default_value = "lru")]
    pub policy: Vec<String>,
    /// Cache sizes, comma-separated, in objects (or bytes with --bytes);
    /// k, M, G, T suffixes multiply by 1024s with --bytes, by 1000s without
    /// (`-s 1k` is 1,000 objects, `--bytes -s 1k` 1,024 bytes; `1.5M` works).
    /// A number below 1 or a percentage is a fraction of the working set
    /// (`-s 0.001,0.01,10%`: distinct objects, or their bytes), counted by
    /// a first pass over the file.
    #[arg(
        long,
        short = 's',
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub size: Vec<String>,
    /// Sizes are bytes and each object charges its size (default: objects,
    /// each of size 1, as libCacheSim's ignore_obj_size).
    #[arg(long)]
    pub bytes: bool,
    /// Miss-ratio curves: `--mrc` alone, LRU's exact curve from stack
    /// distances; `--mrc=lru,s3fifo,2q` also any other policy's, by
    /// miniature simulation (the objects sampled at --mini-rate fed to
    /// caches scaled down by it), at the --size points or 20 points from
    /// 0.1% to 100% of the working set.
    #[arg(long, value_name = "POLICIES", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', default_missing_value = "lru")]
    pub mrc: Option<Vec<String>>,
    /// Sampling rate of the miniature simulations (0 < RATE ≤ 1).
    #[arg(long, value_name = "RATE", default_value_t = 0.01)]
    pub mini_rate: f64,
    /// Also simulate every point of the miniature curves in full and
    /// report each curve's mean absolute error (over the points whose
    /// scaled cache holds at least 100 objects).
    #[arg(long)]
    pub mrc_check: bool,
    /// Sample the curve with SHARDS at this rate (0 < RATE < 1).
    #[arg(long, value_name = "RATE", value_parser = open_unit)]
    pub shards: Option<f64>,
    /// A TRAMP format description of the trace's layout
    /// (docs/formats/tramp.md); name the object with --key.
    #[arg(long, value_name = "FILE", conflicts_with = "format")]
    pub desc: Option<String>,
    /// Fields that name each request's object, for traces whose records
    /// have no object id or address: `RECORD.FIELD` or
    /// `RECORD.FIELD1,RECORD.FIELD2` (the pair names one object); other
    /// records are skipped. E.g. `--key IO.FILE,IO.PAGE` on the TRAMP
    /// paper's trace layout.
    #[arg(long, value_name = "RECORD.FIELD[,RECORD.FIELD]")]
    pub key: Option<String>,
    /// With --key: the requests whose FIELD equals VALUE are writes (e.g.
    /// `FUNCTION=1`); others are reads.
    #[arg(long, value_name = "FIELD=VALUE", requires = "key")]
    pub write: Option<String>,
    /// Cache-line size in bytes for heap-trace addresses.
    #[arg(long, default_value_t = 64)]
    pub line: u64,
    /// Also run the trace's memory accesses (heap events, loads, stores,
    /// fetches, modifies) through CPU caches. An inclusive hierarchy:
    /// `table1` (seed 002's Table 1: L1D 16 KB 4-way 1 cycle, L2 256 KB
    /// 8-way 6, L3 1.5 MB 12-way 13, memory 100; lines 64/128/128 bytes) or
    /// levels `SIZE:WAYS:LINE:LATENCY[:plru]` closest first, then
    /// `mem:LATENCY`, e.g. `32K:8:64:4,1M:16:64:14,mem:200`; prints hits per
    /// level and the average latency. Or valgrind cachegrind's model,
    /// `cachegrind:I1=SIZE,ASSOC,LINE:D1=…:LL=…` (each cache as cachegrind's
    /// `--I1`/`--D1`/`--LL` take it): fetches into I1, reads and writes into
    /// D1, both missing into a non-inclusive LL, accesses across two lines
    /// looking up both; prints cachegrind's counters (fed a lackey log of a
    /// program, the same as cachegrind's for it; docs/cachesim.md).
    #[arg(long, value_name = "SPEC")]
    pub cpu: Option<String>,
    /// Split each request of a libCacheSim layout (csv, oracle, vscsi,
    /// twr, lcs) into the fixed pages of this many bytes it touches, each a
    /// request of that size: the object id is the byte offset (vscsi's a
    /// 512-byte sector number) and the size the length.
    #[arg(long, value_name = "BYTES")]
    pub page: Option<u64>,
    /// Also write the requests simulated (after --page, --key, or the
    /// lines of a heap trace) as libCacheSim's lcs (version 3), for
    /// libCacheSim to read: the 8 KB header's statistics filled at the
    /// end, next-access times computed, each request's clock time its
    /// number. Needs a file (a pipe cannot seek back to the header).
    #[arg(long, value_name = "OUT.lcs")]
    pub lcs: Option<String>,
    /// Write the requests one cache (one --policy, one --size) misses, at
    /// their original times, as a new trace in the libCacheSim layout the
    /// name gives (`.oracleGeneral`, `.csv`, `.lcs`; next-access times
    /// filled in): the request stream of a second-level cache behind it.
    #[arg(long, value_name = "OUT", conflicts_with_all = ["lcs", "mrc", "svg", "cpu"])]
    pub emit_misses: Option<String>,
    /// Requests that warm the caches before counting starts: the first N
    /// requests (or a fraction of them: `0.2`, `20%`) fill the caches (and
    /// the curves' stacks) and are left out of every ratio.
    #[arg(long, value_name = "N", default_value = "0")]
    pub warmup: String,
    /// Threads the caches run on (default: one per core; the trace is
    /// still read once, and each cache sees every request in order, so the
    /// results do not depend on it).
    #[arg(long, value_name = "N", value_parser = threads)]
    pub threads: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the miss-ratio curves as SVG into FILE: each policy over the
    /// sizes given, and the LRU curve from stack distances (computed for
    /// the plot).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<String>,
    /// Simulate a heap trace whose addresses are synthetic (a heaptrack
    /// file's, made up by tramp) all the same; refused otherwise.
    #[arg(long)]
    pub synthetic_ok: bool,
    /// The part of a trace tramp reads as records that is simulated
    /// (a libCacheSim layout is refused: cut it with `tramp convert`).
    #[command(flatten)]
    pub select: crate::cmd::SelectArgs,
}

/// A rate strictly between 0 and 1 (`--shards`: 1 would be the exact
/// curve, which `--mrc` alone gives).
fn open_unit(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!(
            "{s} is not between 0 and 1 (exclusive); for the exact curve give --mrc alone"
        ))
    }
}

/// Cache threads: 1 to 1,024.
fn threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("{s} threads: give 1 to 1024")),
    }
}
