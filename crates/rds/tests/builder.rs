//! The profile builder step by step (the paper's Figure 3), online SCCs
//! against Tarjan's after every edge, instances against connected
//! components computed offline, shapes and the stability factor.

use std::collections::{BTreeSet, HashMap};

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use proptest::prelude::*;
use tramp_rds::builder::{Builder, Shape};
use tramp_rds::scc::SccGraph;

const A: u32 = 0; // the array's allocation site
const T: u32 = 1; // the tree node's

#[test]
fn figure3_step_by_step() {
    let mut b = Builder::new();
    let mut t = 0;
    let mut tick = || {
        t += 1;
        t
    };
    // dynid 0: the array; 1, 2, 3 and 4, 5, 6: the two trees.
    b.alloc(0, A, 80, tick());
    b.alloc(1, T, 24, tick());
    b.alloc(2, T, 24, tick());
    b.edge_add(1, 8, 2, 7, tick()); // 7: st8 [r14] = r8
    assert_eq!(b.live_instances(), vec![vec![1, 2]]);
    b.alloc(3, T, 24, tick());
    b.edge_add(1, 16, 3, 10, tick());
    assert_eq!(b.live_instances(), vec![vec![1, 2, 3]]);
    b.edge_add(0, 0, 1, 15, tick()); // A → T: queued
    assert_eq!(b.queued(), 1);
    assert_eq!(b.live_instances(), vec![vec![1, 2, 3]]);
    b.alloc(4, T, 24, tick());
    b.alloc(5, T, 24, tick());
    b.edge_add(4, 8, 5, 7, tick());
    assert_eq!(b.live_instances(), vec![vec![1, 2, 3], vec![4, 5]]);
    b.alloc(6, T, 24, tick());
    b.edge_add(4, 16, 6, 10, tick());
    b.edge_add(0, 8, 4, 17, tick());
    assert_eq!(b.live_instances(), vec![vec![1, 2, 3], vec![4, 5, 6]]);
    assert_eq!(b.queued(), 2, "the array-to-tree edges wait, never merged");
    assert!(b.ssg().is_scc(T) && !b.ssg().is_scc(A));
    let inst = b.instances();
    assert_eq!(inst.len(), 2);
    for p in &inst {
        assert_eq!(
            (p.forward_edges, p.backward_edges, p.shape),
            (2, 0, Some(Shape::Tree))
        );
        assert_eq!(
            p.create_pcs.iter().copied().collect::<BTreeSet<_>>(),
            BTreeSet::from([7, 10])
        );
    }
    // Were A and T to share an SCC (a tree node pointing back to the
    // array), the queued edges would join everything.
    b.edge_add(2, 0, 0, 99, tick());
    assert_eq!(b.live_instances(), vec![vec![0, 1, 2, 3, 4, 5, 6]]);
    assert_eq!(b.queued(), 0);
}

fn tarjan_partition(edges: &[(u32, u32)], n: u32) -> BTreeSet<BTreeSet<u32>> {
    let mut g: DiGraphMap<u32, (), std::hash::RandomState> = DiGraphMap::default();
    for i in 0..n {
        g.add_node(i);
    }
    for &(a, b) in edges {
        g.add_edge(a, b, ());
    }
    tarjan_scc(&g)
        .into_iter()
        .map(|c| c.into_iter().collect())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn online_sccs_equal_tarjans_after_every_edge(
        edges in proptest::collection::vec((0u32..12, 0u32..12), 1..60)
    ) {
        let n = 12;
        let mut g = SccGraph::new();
        g.ensure(n - 1);
        for k in 0..edges.len() {
            let (a, b) = edges[k];
            g.add_edge(a, b);
            let want = tarjan_partition(&edges[..=k], n);
            let mut got: HashMap<u32, BTreeSet<u32>> = HashMap::new();
            for v in 0..n {
                got.entry(g.component(v)).or_default().insert(v);
            }
            let got: BTreeSet<BTreeSet<u32>> = got.into_values().collect();
            prop_assert_eq!(&got, &want);
            // The order is topological: every edge between components
            // goes forwards.
            for &(x, y) in &edges[..=k] {
                if g.component(x) != g.component(y) {
                    prop_assert!(g.position(x) < g.position(y));
                }
            }
            // RDS SCCs: several nodes, or a self loop.
            for v in 0..n {
                let size = g.members(v).len();
                let self_loop = edges[..=k].iter().any(|&(x, y)| x == y && g.component(x) == g.component(v));
                prop_assert_eq!(g.is_scc(v), size > 1 || self_loop);
            }
        }
    }

    /// Instances are the connected components (ignoring direction) of the
    /// graph of objects whose two sites end up in one SCC — computed here
    /// offline from the final static shape graph, without self pointers.
    #[test]
    fn instances_equal_offline_components(
        sites in proptest::collection::vec(0u32..4, 2..25),
        edges in proptest::collection::vec((0usize..25, 0usize..25), 0..60)
    ) {
        let n = sites.len();
        let mut b = Builder::new();
        for (i, &s) in sites.iter().enumerate() {
            b.alloc(i as u64, s, 8, i as u64);
        }
        // Each (source, offset) field keeps its last value: use distinct
        // offsets so every edge stays.
        let mut kept = Vec::new();
        for (k, &(x, y)) in edges.iter().enumerate() {
            let (x, y) = (x % n, y % n);
            b.edge_add(x as u64, k as u64, y as u64, 0, 100 + k as u64);
            // A pointer from an object to itself is no shape edge.
            if x != y {
                kept.push((x, y));
            }
        }
        let mut ssg = SccGraph::new();
        ssg.ensure(3);
        for &(x, y) in &kept {
            ssg.add_edge(sites[x], sites[y]);
        }
        // Union-find offline.
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut Vec<usize>, x: usize) -> usize {
            if p[x] != x { let r = find(p, p[x]); p[x] = r; }
            p[x]
        }
        let mut linked = vec![false; n];
        for &(x, y) in &kept {
            if ssg.same_scc(sites[x], sites[y]) {
                let (a, c) = (find(&mut parent, x), find(&mut parent, y));
                parent[a] = c;
                linked[x] = true;
                linked[y] = true;
            }
        }
        let mut groups: HashMap<usize, Vec<u64>> = HashMap::new();
        for (i, &l) in linked.iter().enumerate() {
            if l {
                let r = find(&mut parent, i);
                groups.entry(r).or_default().push(i as u64);
            }
        }
        let mut want: Vec<Vec<u64>> = groups.into_values().collect();
        want.sort();
        prop_assert_eq!(b.live_instances(), want);
    }
}

/// A list of `n` nodes at keys 1..=n, built by appending (forward edges).
fn list(b: &mut Builder, n: u64, t: &mut u64) {
    for k in 1..=n {
        *t += 1;
        b.alloc(k, 1, 16, *t);
        if k > 1 {
            *t += 1;
            b.edge_add(k - 1, 8, k, 1, *t);
        }
    }
}

#[test]
fn a_list_built_then_only_traversed_has_rsf_1() {
    let mut b = Builder::new();
    let mut t = 0;
    list(&mut b, 50, &mut t);
    for _ in 0..10 {
        for k in 1..50 {
            t += 1;
            b.edge_traverse(k, 8, None, 2, t, 1);
        }
    }
    let p = &b.instances()[0];
    assert_eq!(p.accesses, 490);
    assert_eq!(p.rsf(0.99), Some(1));
    assert_eq!(p.shape, Some(Shape::List));
    assert_eq!((p.forward_edges, p.backward_edges), (49, 0));
    assert_eq!(p.chain_traversals, 10 * 48);
}

#[test]
fn alterations_between_traversals_raise_the_rsf() {
    let mut b = Builder::new();
    let mut t = 0;
    list(&mut b, 10, &mut t);
    // Traverse, grow, traverse, grow, traverse: three equal intervals.
    for round in 0..3 {
        for k in 1..10 {
            t += 1;
            b.edge_traverse(k, 8, None, 2, t, 1);
        }
        t += 1;
        b.alloc(100 + round, 1, 16, t);
        b.edge_add(100 + round, 8, 1, 3, t + 1);
        t += 1;
    }
    let p = &b.instances()[0];
    assert_eq!(p.accesses, 27);
    assert_eq!(p.rsf(0.99), Some(3));
}

#[test]
fn shapes_and_backward_edges() {
    // A list built bottom-up (each new node points to the older head):
    // backward edges.
    let mut b = Builder::new();
    for k in 1..=5u64 {
        b.alloc(k, 1, 16, k);
        if k > 1 {
            b.edge_add(k, 8, k - 1, 0, 10 + k);
        }
    }
    let p = &b.instances()[0];
    assert_eq!(
        (p.forward_edges, p.backward_edges, p.shape),
        (0, 4, Some(Shape::List))
    );
    // A doubly linked list is cyclic; a node with two parents a DAG.
    let mut b = Builder::new();
    for k in 1..=3u64 {
        b.alloc(k, 1, 16, k);
    }
    b.edge_add(1, 0, 2, 0, 10);
    b.edge_add(2, 8, 1, 0, 11);
    assert_eq!(b.instances()[0].shape, Some(Shape::Cyclic));
    let mut b = Builder::new();
    for k in 1..=3u64 {
        b.alloc(k, 1, 16, k);
    }
    b.edge_add(1, 0, 3, 0, 10);
    b.edge_add(2, 0, 3, 0, 11);
    assert_eq!(b.instances()[0].shape, Some(Shape::Dag));
    assert_eq!(b.instances()[0].nodes, 3);
}

#[test]
fn freeing_every_node_finishes_the_instance_and_frees_memory() {
    let mut b = Builder::new();
    let mut t = 0;
    list(&mut b, 20, &mut t);
    for k in 1..=20 {
        b.node_delete(k, 5, 1000 + k);
    }
    assert_eq!(b.live_objects(), 0);
    assert!(b.live_instances().is_empty());
    let p = &b.instances()[0];
    assert_eq!(p.death, Some(1020));
    assert_eq!(p.shape, Some(Shape::List));
    assert!(p.free_pcs.contains(&5));
}

#[test]
fn a_pointer_into_its_own_object_is_no_edge() {
    let mut b = Builder::new();
    // An array of records linked to each other: one object.
    b.alloc(1, 0, 64, 1);
    b.edge_add(1, 8, 1, 5, 2);
    b.edge_add(1, 24, 1, 5, 3);
    b.edge_traverse(1, 8, Some(1), 6, 4, 1);
    assert!(!b.ssg().is_scc(0), "no self loop in the shape graph");
    assert!(b.live_instances().is_empty());
    assert_eq!(b.counts.self_pointers, 3);
    // Between two objects of the site, edges are shape edges as before.
    b.alloc(2, 0, 64, 5);
    b.edge_add(2, 0, 1, 7, 6);
    b.edge_add(1, 0, 2, 7, 7);
    assert!(b.ssg().is_scc(0));
    assert_eq!(b.live_instances(), vec![vec![1, 2]]);
}
