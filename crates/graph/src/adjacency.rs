//! A concrete, immutable graph stored as compressed adjacency arrays.

use cranelift_entity::{entity_impl, EntityRef};

use crate::Graph;

/// A general-purpose node handle for [`AdjacencyGraph`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);
entity_impl!(NodeId, "n");

/// An immutable directed graph built from an edge list.
///
/// Successors of a node keep the order in which their edges were given;
/// predecessors likewise. Duplicate edges are kept (a conditional branch
/// whose two targets coincide is two edges). Both directions are stored as
/// compressed arrays, so `successors`/`predecessors` are slice iterations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdjacencyGraph<N = NodeId> {
    entry: N,
    succ_start: Vec<u32>,
    succ: Vec<N>,
    pred_start: Vec<u32>,
    pred: Vec<N>,
}

impl<N: EntityRef> AdjacencyGraph<N> {
    /// Builds a graph of `node_count` nodes from `edges` (`(from, to)` pairs).
    ///
    /// # Panics
    /// If an edge endpoint or `entry` is not below `node_count` (a graph with
    /// zero nodes is allowed; its `entry` is then never consulted by the
    /// analyses), or if there are `u32::MAX` or more edges.
    pub fn new(node_count: usize, entry: N, edges: impl IntoIterator<Item = (N, N)>) -> Self {
        assert!(
            node_count == 0 || entry.index() < node_count,
            "entry {} out of range for {node_count} nodes",
            entry.index()
        );
        let edges: Vec<(N, N)> = edges.into_iter().collect();
        for &(a, b) in &edges {
            assert!(
                a.index() < node_count && b.index() < node_count,
                "edge {} -> {} out of range for {node_count} nodes",
                a.index(),
                b.index()
            );
        }
        assert!(edges.len() < u32::MAX as usize, "too many edges");
        let (succ_start, succ) = bucket(node_count, edges.iter().map(|&(a, b)| (a, b)));
        let (pred_start, pred) = bucket(node_count, edges.iter().map(|&(a, b)| (b, a)));
        AdjacencyGraph { entry, succ_start, succ, pred_start, pred }
    }

    /// Builds a graph from per-node successor lists; node `i` has successors
    /// `succs[i]`.
    pub fn from_successors(entry: N, succs: &[Vec<N>]) -> Self {
        let edges = succs.iter().enumerate().flat_map(|(i, ss)| ss.iter().map(move |&s| (N::new(i), s)));
        Self::new(succs.len(), entry, edges)
    }

    /// The same nodes with every edge reversed and a new entry.
    pub fn reversed(&self, entry: N) -> Self {
        Self::new(self.node_count(), entry, self.edges().map(|(a, b)| (b, a)))
    }

    /// Successors of `n` as a slice.
    pub fn successor_slice(&self, n: N) -> &[N] {
        let i = n.index();
        &self.succ[self.succ_start[i] as usize..self.succ_start[i + 1] as usize]
    }

    /// Predecessors of `n` as a slice.
    pub fn predecessor_slice(&self, n: N) -> &[N] {
        let i = n.index();
        &self.pred[self.pred_start[i] as usize..self.pred_start[i + 1] as usize]
    }

    /// Number of edges (duplicates counted).
    pub fn edge_count(&self) -> usize {
        self.succ.len()
    }

    /// All edges, grouped by source node in index order.
    pub fn edges(&self) -> impl Iterator<Item = (N, N)> + '_ {
        (0..self.node_count()).flat_map(move |i| {
            let n = N::new(i);
            self.successor_slice(n).iter().map(move |&s| (n, s))
        })
    }

    /// All nodes in index order.
    pub fn nodes(&self) -> impl Iterator<Item = N> {
        (0..self.node_count()).map(N::new)
    }
}

impl<N: EntityRef> Graph for AdjacencyGraph<N> {
    type Node = N;

    fn node_count(&self) -> usize {
        self.succ_start.len() - 1
    }

    fn entry(&self) -> N {
        self.entry
    }

    fn successors(&self, n: N) -> impl Iterator<Item = N> + '_ {
        self.successor_slice(n).iter().copied()
    }

    fn predecessors(&self, n: N) -> impl Iterator<Item = N> + '_ {
        self.predecessor_slice(n).iter().copied()
    }
}

/// Stable counting sort of `(key, value)` pairs into compressed rows.
fn bucket<N: EntityRef>(rows: usize, pairs: impl Iterator<Item = (N, N)> + Clone) -> (Vec<u32>, Vec<N>) {
    let mut start = vec![0u32; rows + 1];
    for (k, _) in pairs.clone() {
        start[k.index() + 1] += 1;
    }
    for i in 0..rows {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut out = vec![N::new(0); start[rows] as usize];
    for (k, v) in pairs {
        let slot = &mut fill[k.index()];
        out[*slot as usize] = v;
        *slot += 1;
    }
    (start, out)
}
