//! Call trees of the heap profile, as heaptrack shows them: top-down (from
//! the outermost caller to the allocating frame: where the program's work
//! allocates) and bottom-up (from the allocating frame to its callers:
//! which functions allocate, and who calls them). Every node carries all
//! five costs of the stacks through it.

use std::fmt;

use serde::Serialize;
use tramp_symbols::sites::SiteTotals;

use crate::diff::Costs;

/// Which way the stacks are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    TopDown,
    BottomUp,
}

/// One frame of a call tree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Node {
    pub frame: String,
    pub costs: Costs,
    /// Callees (top-down) or callers (bottom-up), the most bytes first.
    pub children: Vec<Node>,
}

/// A call tree: its roots (outermost callers, or allocating frames).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tree {
    pub direction: Direction,
    pub roots: Vec<Node>,
    /// How many levels the text shows.
    #[serde(skip)]
    pub depth: usize,
}

fn insert(nodes: &mut Vec<Node>, frames: &[String], c: &Costs) {
    let Some((first, rest)) = frames.split_first() else {
        return;
    };
    let i = match nodes.iter().position(|n| n.frame == *first) {
        Some(i) => i,
        None => {
            nodes.push(Node {
                frame: first.clone(),
                ..Node::default()
            });
            nodes.len() - 1
        }
    };
    nodes[i].costs.add(c);
    insert(&mut nodes[i].children, rest, c);
}

fn sort(nodes: &mut [Node]) {
    nodes.sort_by(|a, b| {
        b.costs
            .bytes
            .cmp(&a.costs.bytes)
            .then(a.frame.cmp(&b.frame))
    });
    for n in nodes {
        sort(&mut n.children);
    }
}

impl Tree {
    /// The tree of `stacks` (frames outermost first) read `direction`.
    pub fn new(stacks: &[(Vec<String>, SiteTotals)], direction: Direction, depth: usize) -> Tree {
        let mut roots = Vec::new();
        for (frames, t) in stacks {
            let c = Costs::from(t);
            let frames: Vec<String> = match direction {
                Direction::TopDown => frames
                    .iter()
                    .take(crate::flame::MAX_DEPTH)
                    .cloned()
                    .collect(),
                Direction::BottomUp => frames
                    .iter()
                    .rev()
                    .take(crate::flame::MAX_DEPTH)
                    .cloned()
                    .collect(),
            };
            insert(&mut roots, &frames, &c);
        }
        sort(&mut roots);
        Tree {
            direction,
            roots,
            depth,
        }
    }
}

fn write_nodes(
    f: &mut fmt::Formatter<'_>,
    nodes: &[Node],
    level: usize,
    depth: usize,
) -> fmt::Result {
    if level >= depth {
        return Ok(());
    }
    for n in nodes {
        let c = &n.costs;
        writeln!(
            f,
            "{:>12} {:>14} {:>10} {:>14} {:>14}  {:indent$}{}",
            c.allocations,
            c.bytes,
            c.temporary,
            c.peak,
            c.leaked,
            "",
            n.frame,
            indent = 2 * level
        )?;
        write_nodes(f, &n.children, level + 1, depth)?;
    }
    Ok(())
}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>12} {:>14} {:>10} {:>14} {:>14}  {}",
            "allocations",
            "bytes",
            "temporary",
            "peak bytes",
            "leaked bytes",
            match self.direction {
                Direction::TopDown => "callers, then their callees",
                Direction::BottomUp => "allocating frames, then their callers",
            }
        )?;
        write_nodes(f, &self.roots, 0, self.depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::stack as s;

    fn t(allocs: u64, bytes: u64) -> SiteTotals {
        crate::testing::totals(allocs, bytes, 0)
    }

    /// main calls parse and run; both call xmalloc. Top-down: main 60 B
    /// (parse 40, run 20); bottom-up: xmalloc 60 B, called by parse (40)
    /// and run (20), both called by main.
    #[test]
    fn both_directions_sum_the_stacks_through_each_frame() {
        let stacks = vec![
            (s(&["main", "parse", "xmalloc"]), t(4, 40)),
            (s(&["main", "run", "xmalloc"]), t(2, 20)),
        ];
        let td = Tree::new(&stacks, Direction::TopDown, 10);
        assert_eq!(td.roots.len(), 1);
        assert_eq!(
            (td.roots[0].frame.as_str(), td.roots[0].costs.bytes),
            ("main", 60)
        );
        let kids: Vec<(&str, u128)> = td.roots[0]
            .children
            .iter()
            .map(|n| (n.frame.as_str(), n.costs.bytes))
            .collect();
        assert_eq!(kids, vec![("parse", 40), ("run", 20)]);
        let bu = Tree::new(&stacks, Direction::BottomUp, 10);
        assert_eq!(
            (bu.roots[0].frame.as_str(), bu.roots[0].costs.allocations),
            ("xmalloc", 6)
        );
        let callers: Vec<(&str, u128)> = bu.roots[0]
            .children
            .iter()
            .map(|n| (n.frame.as_str(), n.costs.bytes))
            .collect();
        assert_eq!(callers, vec![("parse", 40), ("run", 20)]);
        assert_eq!(bu.roots[0].children[0].children[0].frame, "main");
        assert!(bu.to_string().contains("  xmalloc\n") || bu.to_string().contains(" xmalloc\n"));
    }
}
