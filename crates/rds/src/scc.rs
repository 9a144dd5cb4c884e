//! A directed graph whose strongly connected components are maintained as
//! edges arrive (Pearce and Kelly, *Online algorithms for topological order
//! and strongly connected components*, 2003).
//!
//! Components are kept in a topological order of the condensation. An edge
//! from a component to a later one changes nothing; an edge from a later
//! component `x` back to an earlier `y` searches only the affected region
//! between them: forwards from `y` over components up to `x`'s position,
//! backwards from `x` over components down to `y`'s. If `x` is reached
//! forwards, the components both reachable from `y` and reaching `x` form a
//! cycle and are merged; then the region's positions are handed out again:
//! the backward set takes the lowest (in its old order), the forward set
//! the highest, the merged component one between — which keeps every edge
//! pointing forwards. Cost: proportional to the region,
//! not the graph.

use rustc_hash::FxHashSet;

/// A graph of `u32` nodes with online SCCs.
#[derive(Clone, Debug, Default)]
pub struct SccGraph {
    /// Component of each node (union-find parent; roots are components).
    parent: Vec<u32>,
    /// Topological position of each component root.
    ord: Vec<u64>,
    /// Whether each component root is a strongly connected component in
    /// the RDS sense: more than one node, or a self loop.
    cyclic: Vec<bool>,
    /// Member nodes of each component root.
    members: Vec<Vec<u32>>,
    out: Vec<FxHashSet<u32>>,
    inc: Vec<FxHashSet<u32>>,
    next_ord: u64,
    /// Bumped whenever components merge.
    version: u64,
}

impl SccGraph {
    pub fn new() -> SccGraph {
        SccGraph::default()
    }

    /// Makes sure node `n` exists.
    pub fn ensure(&mut self, n: u32) {
        while self.parent.len() <= n as usize {
            let i = self.parent.len() as u32;
            self.parent.push(i);
            self.ord.push(self.next_ord);
            self.next_ord += 1;
            self.cyclic.push(false);
            self.members.push(vec![i]);
            self.out.push(FxHashSet::default());
            self.inc.push(FxHashSet::default());
        }
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The component (its root node) of `n`.
    pub fn component(&self, mut n: u32) -> u32 {
        while self.parent[n as usize] != n {
            n = self.parent[n as usize];
        }
        n
    }

    /// Whether `n`'s component is an SCC in the RDS sense (a single node
    /// counts only with a self loop).
    pub fn is_scc(&self, n: u32) -> bool {
        self.cyclic[self.component(n) as usize]
    }

    /// Whether `a` and `b` lie on one cycle (same component, and that
    /// component is an SCC).
    pub fn same_scc(&self, a: u32, b: u32) -> bool {
        let c = self.component(a);
        c == self.component(b) && self.cyclic[c as usize]
    }

    /// Changes whenever components merge (so callers can revisit what
    /// waited for a merge).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Members of `n`'s component.
    pub fn members(&self, n: u32) -> &[u32] {
        &self.members[self.component(n) as usize]
    }

    /// Topological position of `n`'s component (for tests).
    pub fn position(&self, n: u32) -> u64 {
        self.ord[self.component(n) as usize]
    }

    /// Whether the edge a → b is there.
    pub fn has_edge(&self, a: u32, b: u32) -> bool {
        (a as usize) < self.out.len() && self.out[a as usize].contains(&b)
    }

    /// Adds the edge a → b; returns whether components merged.
    pub fn add_edge(&mut self, a: u32, b: u32) -> bool {
        self.ensure(a.max(b));
        if !self.out[a as usize].insert(b) {
            return false;
        }
        self.inc[b as usize].insert(a);
        let (ca, cb) = (self.component(a), self.component(b));
        if ca == cb {
            if !self.cyclic[ca as usize] {
                // A self loop, or an edge inside a component that already
                // is a cycle; the first makes a single node an SCC.
                self.cyclic[ca as usize] = true;
                self.version += 1;
                return true;
            }
            return false;
        }
        let (lb, ub) = (self.ord[cb as usize], self.ord[ca as usize]);
        if lb < ub {
            // b's component is earlier than a's: the region [lb, ub] is
            // affected. (An edge to a later component keeps the order.)
            return self.reorder(ca, cb, lb, ub);
        }
        false
    }

    /// Component-level successors of component root `c`.
    fn succ(&self, c: u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.members[c as usize]
            .iter()
            .flat_map(|&m| self.out[m as usize].iter().map(|&t| self.component(t)))
            .filter(|&t| t != c)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn pred(&self, c: u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.members[c as usize]
            .iter()
            .flat_map(|&m| self.inc[m as usize].iter().map(|&t| self.component(t)))
            .filter(|&t| t != c)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn reorder(&mut self, ca: u32, cb: u32, lb: u64, ub: u64) -> bool {
        // Forwards from cb within positions ≤ ub.
        let mut fwd: FxHashSet<u32> = FxHashSet::default();
        let mut stack = vec![cb];
        fwd.insert(cb);
        while let Some(c) = stack.pop() {
            for s in self.succ(c) {
                if self.ord[s as usize] <= ub && fwd.insert(s) {
                    stack.push(s);
                }
            }
        }
        // Backwards from ca within positions ≥ lb.
        let mut bwd: FxHashSet<u32> = FxHashSet::default();
        let mut stack = vec![ca];
        bwd.insert(ca);
        while let Some(c) = stack.pop() {
            for p in self.pred(c) {
                if self.ord[p as usize] >= lb && bwd.insert(p) {
                    stack.push(p);
                }
            }
        }
        let mut pool: Vec<u64> = fwd
            .iter()
            .chain(bwd.iter())
            .map(|&c| self.ord[c as usize])
            .collect();
        pool.sort_unstable();
        pool.dedup();
        let merged = fwd.contains(&ca);
        let by_ord = |set: &FxHashSet<u32>, ord: &[u64]| {
            let mut v: Vec<u32> = set.iter().copied().collect();
            v.sort_unstable_by_key(|&c| ord[c as usize]);
            v
        };
        // The backward set moves down (lowest positions), the forward set
        // up (highest), the merged cycle between them: edges into the
        // region come from positions below it, edges out of it go above,
        // so only the region's own order matters.
        let (before, middle, after): (Vec<u32>, Option<u32>, Vec<u32>) = if merged {
            let cycle: Vec<u32> = fwd.intersection(&bwd).copied().collect();
            let before: FxHashSet<u32> = bwd.difference(&fwd).copied().collect();
            let after: FxHashSet<u32> = fwd.difference(&bwd).copied().collect();
            let (b, a) = (by_ord(&before, &self.ord), by_ord(&after, &self.ord));
            let root = self.merge(&cycle);
            (b, Some(root), a)
        } else {
            (by_ord(&bwd, &self.ord), None, by_ord(&fwd, &self.ord))
        };
        for (c, &o) in before.iter().zip(&pool) {
            self.ord[*c as usize] = o;
        }
        if let Some(m) = middle {
            self.ord[m as usize] = pool[before.len()];
        }
        let top = pool.len() - after.len();
        for (c, &o) in after.iter().zip(&pool[top..]) {
            self.ord[*c as usize] = o;
        }
        merged
    }

    /// Merges components into one; returns its root.
    fn merge(&mut self, comps: &[u32]) -> u32 {
        let root = *comps
            .iter()
            .max_by_key(|&&c| self.members[c as usize].len())
            .expect("a cycle has components");
        for &c in comps {
            if c != root {
                self.parent[c as usize] = root;
                let m = std::mem::take(&mut self.members[c as usize]);
                // Path compression by hand: members point at the root.
                for &x in &m {
                    self.parent[x as usize] = root;
                }
                self.members[root as usize].extend(m);
            }
        }
        self.cyclic[root as usize] = true;
        self.version += 1;
        root
    }
}
