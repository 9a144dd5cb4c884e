//! The object graph: objects with numbered edge slots, and a root; marks
//! what the root reaches and collects the rest.

use rustc_hash::FxHashMap;

/// Slots beyond this are not stored (a bound on memory per object).
pub const MAX_SLOT: u64 = 1 << 24;

/// One object: what its user keeps, and its edges by slot (0 = null).
#[derive(Clone, Debug)]
pub struct Node<T> {
    pub data: T,
    edges: Vec<u64>,
    mark: u32,
}

impl<T> Node<T> {
    /// The edges, by slot (0 where null).
    pub fn edges(&self) -> &[u64] {
        &self.edges
    }
}

/// Objects by id (ids are never 0: 0 is the null reference).
#[derive(Clone, Debug)]
pub struct ObjectGraph<T = ()> {
    nodes: FxHashMap<u64, Node<T>>,
    root: Option<u64>,
    epoch: u32,
}

impl<T> Default for ObjectGraph<T> {
    fn default() -> Self {
        ObjectGraph {
            nodes: FxHashMap::default(),
            root: None,
            epoch: 0,
        }
    }
}

impl<T> ObjectGraph<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an object (replacing one of the same id).
    pub fn create(&mut self, id: u64, data: T) {
        self.create_with_slots(id, data, 0);
    }

    /// Adds an object whose edge slots `0..slots` are known up front (a
    /// format's pointer count): they are allocated with the object, which
    /// keeps marking's memory accesses close together.
    pub fn create_with_slots(&mut self, id: u64, data: T, slots: u64) {
        self.nodes.insert(
            id,
            Node {
                data,
                edges: vec![0; slots.min(MAX_SLOT) as usize],
                mark: 0,
            },
        );
    }

    /// Removes an object (and the root, if it was the root).
    pub fn delete(&mut self, id: u64) -> Option<Node<T>> {
        if self.root == Some(id) {
            self.root = None;
        }
        self.nodes.remove(&id)
    }

    pub fn get(&self, id: u64) -> Option<&Node<T>> {
        self.nodes.get(&id)
    }

    /// What the user keeps for object `id`.
    #[inline]
    pub fn data(&self, id: u64) -> Option<&T> {
        self.nodes.get(&id).map(|n| &n.data)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.nodes.contains_key(&id)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Sets `from`'s edge `slot` to `to` (`None`: null); returns the target
    /// it had. Edges of unknown objects, or past [`MAX_SLOT`], are not kept.
    pub fn link(&mut self, from: u64, slot: u64, to: Option<u64>) -> Option<u64> {
        let node = self.nodes.get_mut(&from)?;
        if slot >= MAX_SLOT {
            return None;
        }
        let i = slot as usize;
        let to = to.unwrap_or(0);
        if i >= node.edges.len() {
            if to == 0 {
                return None;
            }
            node.edges.resize(i + 1, 0);
        }
        let old = std::mem::replace(&mut node.edges[i], to);
        (old != 0).then_some(old)
    }

    /// Where `from`'s edge `slot` points.
    #[inline]
    pub fn edge(&self, from: u64, slot: u64) -> Option<u64> {
        let e = *self
            .nodes
            .get(&from)?
            .edges
            .get(usize::try_from(slot).ok()?)?;
        (e != 0).then_some(e)
    }

    pub fn root(&self) -> Option<u64> {
        self.root
    }

    pub fn set_root(&mut self, id: Option<u64>) {
        self.root = id;
    }

    /// Marks what the root reaches; returns how many objects that is.
    fn mark(&mut self) -> usize {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        let epoch = self.epoch;
        let mut n = 0;
        let mut stack: Vec<u64> = self.root.into_iter().collect();
        while let Some(o) = stack.pop() {
            if let Some(node) = self.nodes.get_mut(&o)
                && node.mark != epoch
            {
                node.mark = epoch;
                n += 1;
                stack.extend(node.edges.iter().copied().filter(|e| *e != 0));
            }
        }
        n
    }

    /// The ids the root reaches, in id order.
    pub fn reachable(&mut self) -> Vec<u64> {
        self.mark();
        let epoch = self.epoch;
        let mut ids: Vec<u64> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.mark == epoch)
            .map(|(k, _)| *k)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Removes every object the root does not reach; returns their ids in
    /// id order. Without a root nothing is collected.
    pub fn collect(&mut self) -> Vec<u64> {
        if self.root.is_none() {
            return Vec::new();
        }
        if self.mark() == self.nodes.len() {
            return Vec::new();
        }
        let epoch = self.epoch;
        let mut garbage: Vec<u64> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.mark != epoch)
            .map(|(k, _)| *k)
            .collect();
        garbage.sort_unstable();
        for g in &garbage {
            self.nodes.remove(g);
        }
        garbage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_reachability_and_collection() {
        let mut g = ObjectGraph::<()>::new();
        for id in 1..=5 {
            g.create(id, ());
        }
        assert_eq!(
            g.collect(),
            Vec::<u64>::new(),
            "no root: nothing is persistent yet"
        );
        g.set_root(Some(1));
        assert_eq!(g.link(1, 0, Some(2)), None);
        g.link(2, 3, Some(3));
        g.link(3, 0, Some(1)); // a cycle back to the root
        g.link(4, 0, Some(5));
        assert_eq!(g.edge(2, 3), Some(3));
        assert_eq!(g.edge(2, 2), None);
        assert_eq!(g.reachable(), vec![1, 2, 3]);
        assert_eq!(g.collect(), vec![4, 5]);
        assert_eq!(g.link(1, 0, None), Some(2));
        assert_eq!(g.collect(), vec![2, 3]);
        assert_eq!(g.len(), 1);
        assert_eq!(
            g.link(99, 0, Some(1)),
            None,
            "unknown objects keep no edges"
        );
        g.delete(1);
        assert_eq!(g.root(), None);
    }
}
