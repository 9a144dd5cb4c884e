//! Call stacks as a tree, the way a recording stores them: a node is a
//! frame under its caller's node (parent id + frame → id), so an event
//! carries one id and the trace holds each stack once, sharing the frames
//! its stacks have in common. Node 0 is the empty stack (the root).
//!
//! `tramp record` interns stacks with [`StackTree`] and writes each new
//! node in a `tramp:frames` note before its first use; readers rebuild the
//! stacks with [`Stacks`].

use rustc_hash::FxHashMap;

/// Slots of the recent-node memo in front of the map.
const MEMO_BITS: u32 = 14;

/// The writer's side: interns (parent, frame) pairs. A program's stacks
/// change mostly at their inner end, among a few recent nodes: a small
/// direct-mapped memo answers those without touching the (large) map.
pub struct StackTree {
    ids: FxHashMap<(u64, u64), u64>,
    memo: Vec<(u64, u64, u64)>,
    /// Nodes made since the last [`take_new`](Self::take_new): (parent,
    /// frame), their ids following on from `first_new`.
    new: Vec<(u64, u64)>,
    first_new: u64,
}

impl Default for StackTree {
    fn default() -> Self {
        StackTree {
            ids: FxHashMap::default(),
            memo: vec![(0, 0, 0); 1 << MEMO_BITS],
            new: Vec::new(),
            first_new: 0,
        }
    }
}

impl StackTree {
    pub fn new() -> Self {
        Self::default()
    }

    /// The node of `frame` called from the stack `parent`.
    #[inline]
    pub fn node(&mut self, parent: u64, frame: u64) -> u64 {
        let slot = ((frame ^ parent.wrapping_mul(tramp_core::rng::GOLDEN))
            .wrapping_mul(0x2545_f491_4f6c_dd1d)
            >> (64 - MEMO_BITS)) as usize;
        let m = self.memo[slot];
        if m.2 != 0 && m.0 == parent && m.1 == frame {
            return m.2;
        }
        let id = self.lookup(parent, frame);
        self.memo[slot] = (parent, frame, id);
        id
    }

    fn lookup(&mut self, parent: u64, frame: u64) -> u64 {
        let next = self.ids.len() as u64 + 1;
        let id = *self.ids.entry((parent, frame)).or_insert(next);
        if id == next {
            if self.new.is_empty() {
                self.first_new = id;
            }
            self.new.push((parent, frame));
        }
        id
    }

    /// The node of a whole stack given outermost first.
    pub fn intern(&mut self, outer_first: &[u64]) -> u64 {
        outer_first
            .iter()
            .fold(0, |parent, &f| self.node(parent, f))
    }

    /// The nodes made since the last call (the first one's id, and each
    /// node's parent and frame), to be written before they are used.
    pub fn take_new(&mut self) -> Option<(u64, Vec<(u64, u64)>)> {
        (!self.new.is_empty()).then(|| (self.first_new, std::mem::take(&mut self.new)))
    }

    /// Nodes so far.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Every frame of every stack (an address once per node it is in).
    pub fn frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.ids.keys().map(|(_, frame)| *frame)
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The reader's side: the nodes a trace defined, and the stacks they make.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stacks {
    /// (parent, frame) of node `i + 1`; nodes a trace did not define (a
    /// damaged trace) are (0, 0).
    nodes: Vec<(u64, u64)>,
}

/// More nodes than a trace could need: a note that claims an id past it is
/// damage, not a reason to allocate.
const MAX_NODES: u64 = 1 << 32;

impl Stacks {
    /// Takes in a run of nodes from `first` on. Returns false for ids out
    /// of range (the note is ignored).
    pub fn define(&mut self, first: u64, nodes: &[(u64, u64)]) -> bool {
        if first == 0 || first.saturating_add(nodes.len() as u64) > MAX_NODES {
            return false;
        }
        let end = (first - 1) as usize + nodes.len();
        // Ids come in order in a recording; a gap is filled with empty nodes
        // only up to the next id (linear in what the trace holds).
        if first as usize - 1 > self.nodes.len() {
            return false;
        }
        if self.nodes.len() < end {
            self.nodes.resize(end, (0, 0));
        }
        self.nodes[(first - 1) as usize..end].copy_from_slice(nodes);
        true
    }

    /// The frames of stack `id`, innermost first (empty for an unknown id).
    /// A parent must have a smaller id, so a damaged note cannot loop.
    pub fn frames(&self, id: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut id = id;
        while id != 0 {
            let Some(&(parent, frame)) = self.nodes.get((id - 1) as usize) else {
                break;
            };
            out.push(frame);
            if parent >= id {
                break;
            }
            id = parent;
        }
        out
    }

    /// The innermost frame of stack `id` for which `keep` holds, walking
    /// out from it (what [`Stacks::frames`] filtered would start with,
    /// without making the list).
    pub fn innermost(&self, id: u64, keep: impl Fn(u64) -> bool) -> Option<u64> {
        let mut id = id;
        while id != 0 {
            let &(parent, frame) = self.nodes.get((id - 1) as usize)?;
            if keep(frame) {
                return Some(frame);
            }
            if parent >= id {
                return None;
            }
            id = parent;
        }
        None
    }

    /// Nodes defined.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_core::rng::SplitMix64;

    #[test]
    fn ids_round_trip_to_the_same_frames() {
        // Random stacks over a few frames, so that they share prefixes.
        let mut rng = SplitMix64::new(7);
        let mut tree = StackTree::new();
        let mut read = Stacks::default();
        let mut seen = Vec::new();
        for _ in 0..2000 {
            let depth = 1 + (rng.next_u64() % 12) as usize;
            let outer_first: Vec<u64> = (0..depth)
                .map(|_| 0x400000 + rng.next_u64() % 6 * 16)
                .collect();
            let id = tree.intern(&outer_first);
            if let Some((first, nodes)) = tree.take_new() {
                assert!(read.define(first, &nodes));
            }
            seen.push((id, outer_first));
        }
        for (id, outer_first) in &seen {
            let mut inner_first = outer_first.clone();
            inner_first.reverse();
            assert_eq!(&read.frames(*id), &inner_first);
            // The innermost frame kept is the first of the filtered list.
            let keep = |pc: u64| pc.is_multiple_of(32);
            assert_eq!(
                read.innermost(*id, keep),
                inner_first.iter().copied().find(|&pc| keep(pc))
            );
            // Interning again gives the same id and no new node.
            assert_eq!(tree.intern(outer_first), *id);
            assert!(tree.take_new().is_none());
        }
        // Shared prefixes are stored once: fewer nodes than frames.
        let frames: usize = seen.iter().map(|(_, f)| f.len()).sum();
        assert!(tree.len() < frames);
    }

    #[test]
    fn damaged_nodes_do_not_loop_or_allocate() {
        let mut s = Stacks::default();
        assert!(!s.define(0, &[(0, 1)]));
        assert!(!s.define(u64::MAX, &[(0, 1)]));
        assert!(!s.define(1000, &[(0, 1)]));
        assert!(s.define(1, &[(2, 0x10), (1, 0x20)]));
        assert_eq!(s.frames(1), vec![0x10]);
        assert_eq!(s.frames(2), vec![0x20, 0x10]);
        assert!(s.frames(99).is_empty());
    }
}
