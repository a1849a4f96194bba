//! Shared helpers for the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use graph::{AdjacencyGraph, BitSet, EntityRef, NodeId};

pub fn n(i: usize) -> NodeId {
    NodeId::new(i)
}

/// Graph with `count` nodes, entry 0.
pub fn graph(count: usize, edges: &[(usize, usize)]) -> AdjacencyGraph {
    graph_with_entry(count, 0, edges)
}

pub fn graph_with_entry(count: usize, entry: usize, edges: &[(usize, usize)]) -> AdjacencyGraph {
    AdjacencyGraph::new(count, n(entry), edges.iter().map(|&(a, b)| (n(a), n(b))))
}

pub fn edge_list(g: &AdjacencyGraph) -> Vec<(usize, usize)> {
    g.edges().map(|(a, b)| (a.index(), b.index())).collect()
}

/// A random graph of 1..=60 nodes drawn from one of several shapes, so that
/// the corpus mixes CFG-like graphs (mostly forward, a few back edges, some
/// exits) with arbitrary ones (irreducible cycles, dead parts, no exits).
pub fn random_graph(rng: &mut fastrand::Rng) -> AdjacencyGraph {
    let count = rng.usize(1..=60);
    let mut edges = Vec::new();
    match rng.u8(0..4) {
        0 => {
            // Uniform random edges, density from none to ~3 per node.
            let m = rng.usize(0..=3 * count);
            for _ in 0..m {
                edges.push((rng.usize(..count), rng.usize(..count)));
            }
        }
        1 => {
            // CFG-like: fall-through, forward jumps, rare back edges, exits.
            for i in 0..count {
                let exit = rng.u8(0..10) == 0;
                if exit {
                    continue;
                }
                if i + 1 < count && rng.u8(0..10) < 8 {
                    edges.push((i, i + 1));
                }
                if rng.bool() {
                    let t = if rng.u8(0..5) == 0 { rng.usize(..=i) } else { rng.usize(i..count) };
                    edges.push((i, t));
                }
            }
        }
        2 => {
            // Branchy: every node gets 0, 1 or 2 random successors.
            for i in 0..count {
                for _ in 0..rng.usize(0..=2) {
                    edges.push((i, rng.usize(..count)));
                }
            }
        }
        _ => {
            // Dense-ish Bernoulli graph.
            let p = rng.u32(1..=10);
            for a in 0..count {
                for b in 0..count {
                    if rng.u32(0..100) < p {
                        edges.push((a, b));
                    }
                }
            }
        }
    }
    let entry = if rng.u8(0..4) == 0 { rng.usize(..count) } else { 0 };
    graph_with_entry(count, entry, &edges)
}

/// Random `(uses, defs)` for every node of `g`.
pub fn random_transfer(rng: &mut fastrand::Rng, nodes: usize, vars: usize) -> Vec<(BitSet, BitSet)> {
    (0..nodes)
        .map(|_| {
            let density = rng.u32(0..25);
            let mut uses = BitSet::new(vars);
            let mut defs = BitSet::new(vars);
            for v in 0..vars {
                if rng.u32(0..100) < density {
                    uses.insert(v);
                }
                if rng.u32(0..100) < density {
                    defs.insert(v);
                }
            }
            (uses, defs)
        })
        .collect()
}
