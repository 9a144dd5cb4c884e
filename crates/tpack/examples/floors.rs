//! Estimates, for a heap trace, how many bits two things tpack keeps
//! carry whatever the coder, as measured empirical entropies (not
//! tpack's own coding): the time between events, and the frees that name
//! objects of an earlier block.
//!
//! `cargo run --release -p tramp-tpack --example floors TRACE.hatf [BLOCK]`
//!
//! * Time: the nanosecond delta between consecutive events, order 0 and
//!   given a context (the event's kind, the kind before it, and the bit
//!   length of the delta before it); and the first byte tpack stores for
//!   it (the delta when under 254, else 254), in tpack's four contexts
//!   (whether the event and the one before it are allocations), and in
//!   those split again by whether the delta before was under 64 ns.
//! * Frees across blocks: with blocks of BLOCK records (default 1 Mi,
//!   tpack's), the frees and realloc old addresses that name no object
//!   allocated in their block, and the order-0 entropy of each one's
//!   address minus the previous such address of the block (the value
//!   tpack stores for them).
//! * The paper's content without addresses: each allocation's size, and
//!   which live object each free names, as its rank by age among the
//!   objects live at that moment (0: the youngest), order 0 over the
//!   whole trace (no blocks).
//!
//! Plug-in entropies of this many samples are a slight underestimate, so
//! the figures are what a coder of these contexts could at best reach.

use rustc_hash::{FxHashMap, FxHashSet};
use tramp_hatf::{EventKind, Item};

/// Live objects by allocation number, counting those allocated after a
/// given one (a Fenwick tree, rebuilt twice as large when full).
#[derive(Default)]
struct Live {
    live: Vec<bool>,
    tree: Vec<u32>,
}

impl Live {
    fn add(&mut self, i: usize, v: i32) {
        let mut j = i + 1;
        while j <= self.tree.len() {
            self.tree[j - 1] = self.tree[j - 1].wrapping_add_signed(v);
            j += j & j.wrapping_neg();
        }
    }

    fn prefix(&self, i: usize) -> u32 {
        let (mut j, mut s) = (i, 0u32);
        while j > 0 {
            s += self.tree[j - 1];
            j -= j & j.wrapping_neg();
        }
        s
    }

    fn insert(&mut self, i: usize) {
        if i >= self.tree.len() {
            self.live.resize((2 * i).max(1024), false);
            self.tree = vec![0; self.live.len()];
            for k in 0..self.live.len() {
                if self.live[k] {
                    self.add(k, 1);
                }
            }
        }
        self.live[i] = true;
        self.add(i, 1);
    }

    /// Removes object `i`; returns how many live objects are younger.
    fn remove(&mut self, i: usize, count: usize) -> u32 {
        self.live[i] = false;
        self.add(i, -1);
        self.prefix(count) - self.prefix(i + 1)
    }
}

/// Entropy in bits of a table of counts, per sample, and the samples.
fn entropy<K>(counts: &FxHashMap<K, u64>) -> (f64, u64) {
    let n: u64 = counts.values().sum();
    let h = counts
        .values()
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum();
    (h, n)
}

/// Conditional entropy H(value | context) in bits per sample, from counts
/// keyed by (context, value).
fn conditional(counts: &FxHashMap<(u32, u64), u64>) -> f64 {
    let mut per_ctx: FxHashMap<u32, u64> = FxHashMap::default();
    for (&(c, _), &n) in counts {
        *per_ctx.entry(c).or_default() += n;
    }
    let total: u64 = per_ctx.values().sum();
    counts
        .iter()
        .map(|(&(c, _), &n)| {
            let p = n as f64 / total as f64;
            -p * (n as f64 / per_ctx[&c] as f64).log2()
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let block: u64 = args.get(2).map_or(1 << 20, |b| b.parse().expect("BLOCK"));
    let input = tramp_io::Input::open(&args[1]).expect("input");
    let mut r = tramp_hatf::Reader::new(input.reader);

    let mut records = 0u64;
    let mut events = 0u64;
    let mut prev_time: Option<u64> = None;
    let mut prev_kind = 0u32;
    let mut prev_bits = 0u32;
    let mut t0: FxHashMap<u64, u64> = FxHashMap::default();
    let mut t1: FxHashMap<(u32, u64), u64> = FxHashMap::default();
    let mut first4: FxHashMap<(u32, u64), u64> = FxHashMap::default();
    let mut first8: FxHashMap<(u32, u64), u64> = FxHashMap::default();
    let mut prev_short = false;

    let mut in_block: FxHashSet<u64> = FxHashSet::default();
    let mut prev_cross: Option<u64> = None;
    let mut cross: FxHashMap<i64, u64> = FxHashMap::default();

    let mut sizes: FxHashMap<u64, u64> = FxHashMap::default();
    let mut ranks: FxHashMap<u32, u64> = FxHashMap::default();
    let mut objects: FxHashMap<u64, usize> = FxHashMap::default();
    let mut live = Live::default();
    let mut allocated = 0usize;

    while let Some(item) = r.next_item().expect("a readable trace") {
        if matches!(item, Item::Meta(_)) {
            continue;
        }
        // Blocks are cut by records (comments included), as tpack cuts them.
        if records.is_multiple_of(block) {
            in_block.clear();
            prev_cross = None;
        }
        records += 1;
        let Item::Event(e) = item else {
            continue;
        };
        if matches!(
            e.kind,
            EventKind::CreateHeap
                | EventKind::DestroyHeap
                | EventKind::CreateThread
                | EventKind::DestroyThread
        ) {
            continue;
        }
        events += 1;
        let kind = e.kind as u32;
        if let Some(p) = prev_time {
            let d = e.time.wrapping_sub(p);
            *t0.entry(d).or_default() += 1;
            let ctx = kind << 16 | prev_kind << 8 | prev_bits;
            *t1.entry((ctx, d)).or_default() += 1;
            prev_bits = 64 - d.leading_zeros();
            let ctx4 = u32::from(e.kind == EventKind::Alloc) << 1 | u32::from(prev_kind == 0);
            let first = d.min(254);
            *first4.entry((ctx4, first)).or_default() += 1;
            *first8
                .entry((ctx4 << 1 | u32::from(prev_short), first))
                .or_default() += 1;
            prev_short = d < 64;
        }
        prev_time = Some(e.time);
        prev_kind = kind;

        // The address a free or a realloc names as its old object.
        let freed = matches!(
            e.kind,
            EventKind::Free
                | EventKind::ReallocAllocFree
                | EventKind::ReallocFree
                | EventKind::ReallocNoAlloc
        )
        .then_some(e.address);
        if let Some(a) = freed.filter(|a| *a != 0)
            && !in_block.remove(&a)
        {
            let d = prev_cross.map_or(0, |p| a.wrapping_sub(p) as i64);
            *cross.entry(d).or_default() += 1;
            prev_cross = Some(a);
        }
        if let Some(i) = freed.and_then(|a| objects.remove(&a)) {
            *ranks.entry(live.remove(i, allocated)).or_default() += 1;
        }
        let made = match e.kind {
            EventKind::Alloc => Some(e.address),
            EventKind::ReallocAllocFree | EventKind::ReallocAlloc | EventKind::ReallocNoAlloc => {
                Some(e.new_address)
            }
            _ => None,
        };
        if let Some(a) = made {
            in_block.insert(a);
            *sizes.entry(e.size).or_default() += 1;
            objects.insert(a, allocated);
            live.insert(allocated);
            allocated += 1;
        }
    }

    let (h0, n) = entropy(&t0);
    let h1 = conditional(&t1).max(0.0);
    let h0 = h0.max(0.0);
    println!("{records} records, {events} events (malloc, free, realloc)");
    println!(
        "time deltas: {n} values, {} distinct; order 0 {h0:.2} bits ({:.3} B/event); \
         given kind, last kind and last delta's bit length {h1:.2} bits ({:.3} B/event)",
        t0.len(),
        h0 / 8.0,
        h1 / 8.0
    );
    let (f4, f8) = (conditional(&first4).max(0.0), conditional(&first8).max(0.0));
    println!(
        "time's first byte: in tpack's 4 contexts {f4:.2} bits ({:.3} B/event); \
         in 8, split by the last delta < 64 ns, {f8:.2} bits ({:.3} B/event)",
        f4 / 8.0,
        f8 / 8.0
    );
    let (hc, nc) = entropy(&cross);
    println!(
        "frees across blocks of {block} records: {nc} ({:.1} % of events); \
         address − the block's previous such address: {} distinct, order 0 {hc:.2} bits each \
         ({:.3} B/event)",
        100.0 * nc as f64 / events as f64,
        cross.len(),
        hc * nc as f64 / 8.0 / events as f64
    );
    let (hs, ns) = entropy(&sizes);
    let (hr, nr) = entropy(&ranks);
    println!(
        "sizes: {ns} allocations, {} distinct, order 0 {hs:.2} bits each; \
         frees of known objects: {nr}, rank by age among the live, {} distinct, \
         order 0 {hr:.2} bits each; together {:.3} B/event",
        sizes.len(),
        ranks.len(),
        (hs * ns as f64 + hr * nr as f64) / 8.0 / events as f64
    );
}
