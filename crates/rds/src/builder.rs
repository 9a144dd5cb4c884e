//! The profile builder: live objects, the three events of the paper
//! (`edge_add`, `edge_traverse`, `node_delete`), the static shape graph
//! with online SCCs, instances, and the queue of edges whose sites are not
//! (yet) in one SCC.
//!
//! Objects are named by a key: the start address of a heap block, or a PTF
//! object id. Each gets a dynamic id from a counter at allocation
//! (reallocation keeps it). An edge whose two sites lie in one SCC joins
//! the two objects' instances (creating one if neither has any); other
//! edges are remembered on their source object — one per pointer field, so
//! the queue is bounded by live pointer fields — and revisited whenever
//! components of the static shape graph merge (the paper's Figure 3).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::instances::Instances;
use crate::scc::SccGraph;

/// Events within which a replaced edge counts as transient.
pub const TRANSIENT_WINDOW: u64 = 1000;

/// The shape of an instance's current edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// Every node has at most one successor and one predecessor, no cycle.
    List,
    /// At most one predecessor per node, no cycle.
    Tree,
    /// Shared nodes, no cycle.
    Dag,
    /// A directed cycle.
    Cyclic,
}

/// Profile data of one instance, merged when instances join.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InstanceProfile {
    pub id: u64,
    /// A site of the instance's type (the type is the SCC containing it).
    pub site: u32,
    /// Objects that ever joined.
    pub nodes: u64,
    /// Allocation time of the oldest node.
    pub first_birth: u64,
    /// Time of the last traversal (none: never traversed).
    pub last_traversal: Option<u64>,
    /// Time the last node died (none: alive at the end).
    pub death: Option<u64>,
    pub forward_edges: u64,
    pub backward_edges: u64,
    /// Edges replaced from the same field within the transient window.
    pub transient_edges: u64,
    pub accesses: u64,
    /// Cycles of the traversing loads in the CPU-cache model.
    pub latency_cycles: u64,
    pub chain_traversals: u64,
    pub sibling_traversals: u64,
    pub other_traversals: u64,
    #[serde(skip)]
    last_edge: Option<(u64, u64)>,
    /// Accesses between consecutive alteration points (only non-zero ones).
    #[serde(skip)]
    intervals: Vec<u64>,
    #[serde(skip)]
    current: u64,
    pub alterations: u64,
    pub shape: Option<Shape>,
    #[serde(skip)]
    pub create_pcs: FxHashSet<u64>,
    #[serde(skip)]
    pub traverse_pcs: FxHashSet<u64>,
    #[serde(skip)]
    pub free_pcs: FxHashSet<u64>,
}

impl InstanceProfile {
    fn merge(&mut self, o: InstanceProfile) {
        self.nodes += o.nodes;
        self.first_birth = self.first_birth.min(o.first_birth);
        self.last_traversal = self.last_traversal.max(o.last_traversal);
        self.forward_edges += o.forward_edges;
        self.backward_edges += o.backward_edges;
        self.transient_edges += o.transient_edges;
        self.accesses += o.accesses;
        self.latency_cycles += o.latency_cycles;
        self.chain_traversals += o.chain_traversals;
        self.sibling_traversals += o.sibling_traversals;
        self.other_traversals += o.other_traversals;
        self.intervals.extend(o.intervals);
        if o.current > 0 {
            self.intervals.push(o.current);
        }
        self.alterations += o.alterations;
        self.create_pcs.extend(o.create_pcs);
        self.traverse_pcs.extend(o.traverse_pcs);
        self.free_pcs.extend(o.free_pcs);
    }

    fn alter(&mut self) {
        self.alterations += 1;
        if self.current > 0 {
            self.intervals.push(self.current);
            self.current = 0;
        }
    }

    /// Edges (forward and backward).
    pub fn edges(&self) -> u64 {
        self.forward_edges + self.backward_edges
    }

    /// The RDS stability factor with threshold `t`: the fewest intervals
    /// between alteration points that hold at least t of the accesses
    /// (None when never traversed).
    pub fn rsf(&self, t: f64) -> Option<u64> {
        if self.accesses == 0 {
            return None;
        }
        let mut v = self.intervals.clone();
        if self.current > 0 {
            v.push(self.current);
        }
        v.sort_unstable_by(|a, b| b.cmp(a));
        let need = t * self.accesses as f64;
        let mut sum = 0u64;
        for (k, a) in v.iter().enumerate() {
            sum += a;
            if sum as f64 >= need {
                return Some(k as u64 + 1);
            }
        }
        Some(v.len() as u64)
    }

    /// Lifetime: first node allocated to last traversal (or to death if
    /// never traversed).
    pub fn lifetime(&self, end: u64) -> u64 {
        let last = self.last_traversal.or(self.death).unwrap_or(end);
        last.saturating_sub(self.first_birth)
    }
}

struct Object {
    key: u64,
    dynid: u64,
    site: u32,
    size: u64,
    birth: u64,
    set: Option<u32>,
    /// Position in the set's member list.
    idx: u32,
    /// Current same-instance edges: (offset, target dynid, event added).
    out: Vec<(u64, u64, u64)>,
    /// Edges waiting for their sites to share an SCC: (offset, target
    /// dynid, the instruction that stored it).
    pending: Vec<(u64, u64, u64)>,
}

/// Counts over the whole run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub allocations: u64,
    pub frees: u64,
    pub edges_added: u64,
    pub edges_queued: u64,
    pub edges_merged_later: u64,
    pub traversals: u64,
    pub traversals_in_instances: u64,
    /// Stores and loads of pointer fields of objects not (yet) in an
    /// instance.
    pub unknown_targets: u64,
    /// Stores and loads of pointers from an object into itself: no shape
    /// edge (an array of records linked to each other is one node).
    pub self_pointers: u64,
    /// Stores of the value a field already held (no edge, no alteration).
    pub stores_unchanged: u64,
}

/// Builds an RDS profile from object and pointer events.
#[derive(Default)]
pub struct Builder {
    ssg: SccGraph,
    objects: Vec<Option<Object>>,
    free_slots: Vec<u32>,
    by_key: FxHashMap<u64, u32>,
    by_dynid: FxHashMap<u64, u32>,
    next_dynid: u64,
    sets: Instances,
    pending: FxHashSet<u32>,
    seen_version: u64,
    finished: Vec<InstanceProfile>,
    events: u64,
    first_time: Option<u64>,
    last_time: u64,
    pub counts: Counts,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    fn tick(&mut self, time: u64) {
        self.events += 1;
        self.first_time.get_or_insert(time);
        self.last_time = self.last_time.max(time);
    }

    fn obj(&self, slot: u32) -> &Object {
        self.objects[slot as usize].as_ref().expect("live object")
    }

    fn obj_mut(&mut self, slot: u32) -> &mut Object {
        self.objects[slot as usize].as_mut().expect("live object")
    }

    /// The static shape graph.
    pub fn ssg(&self) -> &SccGraph {
        &self.ssg
    }

    /// A new object: `key` (address or object id), allocation `site`.
    pub fn alloc(&mut self, key: u64, site: u32, size: u64, time: u64) {
        self.tick(time);
        if self.by_key.contains_key(&key) {
            self.node_delete(key, 0, time);
        }
        self.ssg.ensure(site);
        let dynid = self.next_dynid;
        self.next_dynid += 1;
        self.counts.allocations += 1;
        let o = Object {
            key,
            dynid,
            site,
            size,
            birth: time,
            set: None,
            idx: 0,
            out: Vec::new(),
            pending: Vec::new(),
        };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.objects[s as usize] = Some(o);
                s
            }
            None => {
                self.objects.push(Some(o));
                (self.objects.len() - 1) as u32
            }
        };
        self.by_key.insert(key, slot);
        self.by_dynid.insert(dynid, slot);
    }

    /// A reallocation: the object keeps its dynamic id under a new key.
    pub fn realloc(&mut self, old: u64, new: u64, size: u64, time: u64) {
        self.tick(time);
        if let Some(slot) = self.by_key.remove(&old) {
            if let Some(other) = self.by_key.get(&new).copied()
                && other != slot
            {
                let k = self.obj(other).key;
                self.node_delete(k, 0, time);
            }
            let o = self.obj_mut(slot);
            o.key = new;
            o.size = size;
            self.by_key.insert(new, slot);
        }
    }

    /// The object holding `addr` (its key and the offset), for heap traces
    /// where pointers may point inside a block. `blocks` is an ordered map
    /// of live blocks kept by the caller.
    pub fn lookup(&self, key: u64) -> bool {
        self.by_key.contains_key(&key)
    }

    /// Size of a live object.
    pub fn size_of(&self, key: u64) -> Option<u64> {
        self.by_key.get(&key).map(|&s| self.obj(s).size)
    }

    /// A pointer field of `src` at `offset` set to point to `dst`.
    pub fn edge_add(&mut self, src: u64, offset: u64, dst: u64, pc: u64, time: u64) {
        self.tick(time);
        let (Some(&s), Some(&d)) = (self.by_key.get(&src), self.by_key.get(&dst)) else {
            self.counts.unknown_targets += 1;
            return;
        };
        if s == d {
            // A pointer into the object itself is no edge of the shape; the
            // field no longer holds one.
            self.counts.self_pointers += 1;
            self.replace_field(s, offset);
            return;
        }
        // A store of the value the field already holds (the recursive
        // `t->l = ins(t->l, k)` stores back every field on its path) is no
        // new edge and no alteration: an edge is a distinct (field,
        // target) pair alive at a time.
        let dd = self.obj(d).dynid;
        let o = self.obj(s);
        if o.out.iter().any(|e| e.0 == offset && e.1 == dd)
            || o.pending.iter().any(|p| p.0 == offset && p.1 == dd)
        {
            self.counts.stores_unchanged += 1;
            return;
        }
        self.counts.edges_added += 1;
        // The field's old value, if it was an instance edge, is replaced.
        self.replace_field(s, offset);
        let (ss, ds) = (self.obj(s).site, self.obj(d).site);
        self.ssg.add_edge(ss, ds);
        if self.ssg.same_scc(ss, ds) {
            self.join(s, d, offset, pc);
        } else {
            let o = self.obj_mut(s);
            o.pending.retain(|p| p.0 != offset);
            o.pending.push((offset, dd, pc));
            self.pending.insert(s);
            self.counts.edges_queued += 1;
        }
        if self.ssg.version() != self.seen_version {
            self.seen_version = self.ssg.version();
            self.revisit();
        }
    }

    /// A pointer field of `src` at `offset` set to null (or a non-pointer).
    pub fn edge_clear(&mut self, src: u64, offset: u64, time: u64) {
        self.tick(time);
        if let Some(&s) = self.by_key.get(&src) {
            self.replace_field(s, offset);
        }
    }

    /// Removes the instance edge at (slot, offset) if there is one.
    fn replace_field(&mut self, s: u32, offset: u64) {
        let events = self.events;
        let o = self.obj_mut(s);
        o.pending.retain(|p| p.0 != offset);
        let Some(i) = o.out.iter().position(|e| e.0 == offset) else {
            return;
        };
        let (_, target, added) = o.out.swap_remove(i);
        let (src_dynid, set) = (o.dynid, o.set);
        if let Some(set) = set {
            let p = &mut self.sets.get_mut(set).profile;
            p.alter();
            if events.saturating_sub(added) <= TRANSIENT_WINDOW {
                // Transient: it does not count as an edge of the shape.
                p.transient_edges += 1;
                if src_dynid < target {
                    p.forward_edges = p.forward_edges.saturating_sub(1);
                } else {
                    p.backward_edges = p.backward_edges.saturating_sub(1);
                }
            }
        }
    }

    /// Joins the instances of `s` and `d` with the edge s.offset → d.
    fn join(&mut self, s: u32, d: u32, offset: u64, pc: u64) {
        let set = match (self.obj(s).set, self.obj(d).set) {
            (None, None) => {
                let mut members = vec![s];
                if d != s {
                    members.push(d);
                }
                let profile = InstanceProfile {
                    site: self.obj(s).site,
                    nodes: members.len() as u64,
                    first_birth: self.obj(s).birth.min(self.obj(d).birth),
                    ..InstanceProfile::default()
                };
                let n = members.len();
                let set = self.sets.create(members, profile);
                self.obj_mut(s).set = Some(set);
                self.obj_mut(s).idx = 0;
                if n == 2 {
                    self.obj_mut(d).set = Some(set);
                    self.obj_mut(d).idx = 1;
                }
                set
            }
            (Some(a), None) | (None, Some(a)) => {
                let lone = if self.obj(s).set.is_none() { s } else { d };
                let birth = self.obj(lone).birth;
                let set = self.sets.get_mut(a);
                set.members.push(lone);
                set.profile.nodes += 1;
                set.profile.first_birth = set.profile.first_birth.min(birth);
                let idx = (set.members.len() - 1) as u32;
                let o = self.obj_mut(lone);
                o.set = Some(a);
                o.idx = idx;
                a
            }
            (Some(a), Some(b)) if a == b => a,
            (Some(a), Some(b)) => {
                let (keep, gone) = self.sets.union(a, b);
                for m in &gone.members {
                    let idx = self.sets.get(keep).members.len() as u32;
                    self.sets.get_mut(keep).members.push(*m);
                    let o = self.obj_mut(*m);
                    o.set = Some(keep);
                    o.idx = idx;
                }
                self.sets.get_mut(keep).profile.merge(gone.profile);
                keep
            }
        };
        let (sd, dd) = (self.obj(s).dynid, self.obj(d).dynid);
        let events = self.events;
        self.obj_mut(s).out.push((offset, dd, events));
        let p = &mut self.sets.get_mut(set).profile;
        p.alter();
        if sd < dd {
            p.forward_edges += 1;
        } else {
            p.backward_edges += 1;
        }
        p.create_pcs.insert(pc);
    }

    /// Edges that waited for an SCC: those whose sites now share one join.
    fn revisit(&mut self) {
        let waiting: Vec<u32> = self.pending.iter().copied().collect();
        for s in waiting {
            let Some(o) = self.objects[s as usize].as_ref() else {
                self.pending.remove(&s);
                continue;
            };
            let items = o.pending.clone();
            let mut keep = Vec::new();
            for (off, dyn_target, pc) in items {
                let Some(&d) = self.by_dynid.get(&dyn_target) else {
                    continue;
                };
                let (ss, ds) = (self.obj(s).site, self.obj(d).site);
                if self.ssg.same_scc(ss, ds) {
                    self.counts.edges_merged_later += 1;
                    self.join(s, d, off, pc);
                } else {
                    keep.push((off, dyn_target, pc));
                }
            }
            let empty = keep.is_empty();
            self.obj_mut(s).pending = keep;
            if empty {
                self.pending.remove(&s);
            }
        }
    }

    /// A load of the pointer field of `src` at `offset`, which points to
    /// `dst` (None: the target of the field's current instance edge).
    /// `latency`: the load's cycles in a CPU-cache model, if one runs.
    pub fn edge_traverse(
        &mut self,
        src: u64,
        offset: u64,
        dst: Option<u64>,
        pc: u64,
        time: u64,
        latency: u64,
    ) {
        self.tick(time);
        self.counts.traversals += 1;
        let Some(&s) = self.by_key.get(&src) else {
            self.counts.unknown_targets += 1;
            return;
        };
        let target = match dst {
            Some(k) => match self.by_key.get(&k) {
                Some(&d) => Some(d),
                None => {
                    self.counts.unknown_targets += 1;
                    return;
                }
            },
            None => self
                .obj(s)
                .out
                .iter()
                .find(|e| e.0 == offset)
                .and_then(|e| self.by_dynid.get(&e.1).copied()),
        };
        let Some(d) = target else {
            return;
        };
        if d == s {
            self.counts.self_pointers += 1;
            return;
        }
        let (Some(a), Some(b)) = (self.obj(s).set, self.obj(d).set) else {
            return;
        };
        if a != b {
            return;
        }
        self.counts.traversals_in_instances += 1;
        let (u, v) = (self.obj(s).dynid, self.obj(d).dynid);
        let p = &mut self.sets.get_mut(a).profile;
        p.accesses += 1;
        p.current += 1;
        p.latency_cycles += latency;
        p.last_traversal = Some(time);
        p.traverse_pcs.insert(pc);
        match p.last_edge {
            Some((_, lv)) if lv == u => p.chain_traversals += 1,
            Some((lu, _)) if lu == u => p.sibling_traversals += 1,
            Some(_) => p.other_traversals += 1,
            None => {}
        }
        p.last_edge = Some((u, v));
    }

    /// An object freed.
    pub fn node_delete(&mut self, key: u64, pc: u64, time: u64) {
        self.tick(time);
        let Some(slot) = self.by_key.remove(&key) else {
            return;
        };
        self.counts.frees += 1;
        let o = self.objects[slot as usize].take().expect("live object");
        self.free_slots.push(slot);
        self.by_dynid.remove(&o.dynid);
        self.pending.remove(&slot);
        if let Some(set) = o.set {
            if self.sets.get(set).profile.shape.is_none() {
                let shape = self.shape_of(set, Some(&o));
                self.sets.get_mut(set).profile.shape = Some(shape);
            }
            let s = self.sets.get_mut(set);
            let last = s.members.pop().expect("member");
            if last != slot {
                s.members[o.idx as usize] = last;
                self.obj_mut(last).idx = o.idx;
            }
            let s = self.sets.get_mut(set);
            s.profile.free_pcs.insert(pc);
            if !o.out.is_empty() {
                s.profile.alter();
            }
            if s.members.is_empty() {
                let mut done = self.sets.finish(set);
                done.profile.death = Some(time);
                self.finished.push(done.profile);
            }
        }
    }

    /// The shape of a set's current edges (plus a departing object's).
    fn shape_of(&self, set: u32, departing: Option<&Object>) -> Shape {
        let members: Vec<&Object> = self
            .sets
            .get(set)
            .members
            .iter()
            .filter_map(|&m| self.objects[m as usize].as_ref())
            .chain(departing)
            .collect();
        let index: FxHashMap<u64, usize> = members
            .iter()
            .enumerate()
            .map(|(i, o)| (o.dynid, i))
            .collect();
        let n = members.len();
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut indeg = vec![0u32; n];
        for (i, o) in members.iter().enumerate() {
            for &(_, t, _) in &o.out {
                if let Some(&j) = index.get(&t) {
                    succ[i].push(j);
                    indeg[j] += 1;
                }
            }
        }
        // Kahn: a cycle leaves nodes unremoved.
        let mut deg = indeg.clone();
        let mut queue: Vec<usize> = (0..n).filter(|&i| deg[i] == 0).collect();
        let mut removed = 0;
        while let Some(i) = queue.pop() {
            removed += 1;
            for &j in &succ[i] {
                deg[j] -= 1;
                if deg[j] == 0 {
                    queue.push(j);
                }
            }
        }
        if removed < n {
            Shape::Cyclic
        } else if indeg.iter().any(|&d| d > 1) {
            Shape::Dag
        } else if succ.iter().any(|s| s.len() > 1) {
            Shape::Tree
        } else {
            Shape::List
        }
    }

    /// Instances finished so far, and the live ones (with their shape now).
    pub fn instances(&self) -> Vec<InstanceProfile> {
        let mut v = self.finished.clone();
        for (i, s) in self.sets.live() {
            let mut p = s.profile.clone();
            if p.shape.is_none() {
                p.shape = Some(self.shape_of(i, None));
            }
            v.push(p);
        }
        v.sort_by_key(|p| p.id);
        v
    }

    /// The live members of each live instance, as sets of keys (tests).
    pub fn live_instances(&self) -> Vec<Vec<u64>> {
        let mut v: Vec<Vec<u64>> = self
            .sets
            .live()
            .map(|(_, s)| {
                let mut m: Vec<u64> = s.members.iter().map(|&x| self.obj(x).key).collect();
                m.sort_unstable();
                m
            })
            .collect();
        v.sort();
        v
    }

    /// Edges waiting for an SCC (source key, offset, target dynid).
    pub fn queued(&self) -> usize {
        self.pending
            .iter()
            .filter_map(|&s| self.objects[s as usize].as_ref())
            .map(|o| o.pending.len())
            .sum()
    }

    /// First and last event times.
    pub fn span(&self) -> (u64, u64) {
        (self.first_time.unwrap_or(0), self.last_time)
    }

    /// Live objects.
    pub fn live_objects(&self) -> usize {
        self.by_key.len()
    }
}
