//! Iterative depth-first search and the orders derived from it.
//!
//! The search keeps an explicit stack of successor iterators, so it visits
//! nodes in exactly the order a recursive DFS would (which the reference
//! module relies on) while using heap memory instead of call-stack frames.

use std::marker::PhantomData;

use cranelift_entity::EntityRef;

use crate::{BitSet, Graph, NONE};

/// The result of one depth-first search (or forest of searches): preorder,
/// postorder, DFS-tree parents and the numbering of each visited node.
#[derive(Clone, Debug)]
pub struct DepthFirst<N> {
    preorder: Vec<N>,
    postorder: Vec<N>,
    /// Indexed by node: position in `preorder`, or `NONE` if unvisited.
    pre_num: Vec<u32>,
    /// Indexed by node: position in `postorder`, or `NONE` if unvisited.
    post_num: Vec<u32>,
    /// Indexed by node: index of the DFS-tree parent, or `NONE`.
    parent: Vec<u32>,
    _node: PhantomData<N>,
}

impl<N: EntityRef> DepthFirst<N> {
    /// DFS from the entry of `g`.
    pub fn compute<G: Graph<Node = N>>(g: &G) -> Self {
        if g.node_count() == 0 {
            Self::compute_from(g, [])
        } else {
            Self::compute_from(g, [g.entry()])
        }
    }

    /// A DFS forest: a search from each of `roots` in turn, skipping roots
    /// already visited by an earlier search.
    pub fn compute_from<G: Graph<Node = N>>(g: &G, roots: impl IntoIterator<Item = N>) -> Self {
        let n = g.node_count();
        assert!(n < NONE as usize, "graph too large");
        let mut dfs = DepthFirst {
            preorder: Vec::new(),
            postorder: Vec::new(),
            pre_num: vec![NONE; n],
            post_num: vec![NONE; n],
            parent: vec![NONE; n],
            _node: PhantomData,
        };
        let mut stack = Vec::new();
        for root in roots {
            if dfs.pre_num[root.index()] != NONE {
                continue;
            }
            dfs.pre_num[root.index()] = dfs.preorder.len() as u32;
            dfs.preorder.push(root);
            stack.push((root, g.successors(root)));
            while let Some((node, succs)) = stack.last_mut() {
                let node = *node;
                match succs.next() {
                    Some(s) => {
                        if dfs.pre_num[s.index()] == NONE {
                            dfs.pre_num[s.index()] = dfs.preorder.len() as u32;
                            dfs.preorder.push(s);
                            dfs.parent[s.index()] = node.index() as u32;
                            stack.push((s, g.successors(s)));
                        }
                    }
                    None => {
                        dfs.post_num[node.index()] = dfs.postorder.len() as u32;
                        dfs.postorder.push(node);
                        stack.pop();
                    }
                }
            }
        }
        dfs
    }

    /// Visited nodes in the order they were first reached.
    pub fn preorder(&self) -> &[N] {
        &self.preorder
    }

    /// Visited nodes in the order they were finished.
    pub fn postorder(&self) -> &[N] {
        &self.postorder
    }

    /// Visited nodes in reverse postorder (a topological order of the
    /// graph with retreating edges removed).
    pub fn reverse_postorder(&self) -> impl DoubleEndedIterator<Item = N> + ExactSizeIterator + '_ {
        self.postorder.iter().rev().copied()
    }

    /// Number of visited nodes.
    pub fn visited_count(&self) -> usize {
        self.preorder.len()
    }

    /// True if the search reached `n`.
    pub fn is_visited(&self, n: N) -> bool {
        self.pre_num[n.index()] != NONE
    }

    /// Position of `n` in [`preorder`](Self::preorder).
    pub fn preorder_number(&self, n: N) -> Option<usize> {
        num(self.pre_num[n.index()])
    }

    /// Position of `n` in [`postorder`](Self::postorder).
    pub fn postorder_number(&self, n: N) -> Option<usize> {
        num(self.post_num[n.index()])
    }

    /// The node from which the search first reached `n` (None for roots and
    /// unvisited nodes).
    pub fn parent(&self, n: N) -> Option<N> {
        num(self.parent[n.index()]).map(N::new)
    }

    /// True if the edge `from -> to` is retreating for this search: `to` was
    /// still on the DFS stack when the edge was followed (includes self
    /// loops). False if either end is unvisited.
    pub fn is_retreating_edge(&self, from: N, to: N) -> bool {
        let (pf, pt) = (self.post_num[from.index()], self.post_num[to.index()]);
        pf != NONE && pt != NONE && pt >= pf
    }

    pub(crate) fn pre_nums(&self) -> &[u32] {
        &self.pre_num
    }

    pub(crate) fn parents(&self) -> &[u32] {
        &self.parent
    }
}

fn num(x: u32) -> Option<usize> {
    (x != NONE).then_some(x as usize)
}

/// Nodes reachable from the entry, in DFS postorder.
pub fn postorder<G: Graph>(g: &G) -> Vec<G::Node> {
    DepthFirst::compute(g).postorder
}

/// Nodes reachable from the entry, in reverse DFS postorder.
pub fn reverse_postorder<G: Graph>(g: &G) -> Vec<G::Node> {
    let mut v = postorder(g);
    v.reverse();
    v
}

/// The set of node indices reachable from any of `roots` (roots included),
/// over the domain `0..g.node_count()`.
pub fn reachable_from<G: Graph>(g: &G, roots: impl IntoIterator<Item = G::Node>) -> BitSet {
    let mut seen = BitSet::new(g.node_count());
    let mut stack: Vec<G::Node> = Vec::new();
    for r in roots {
        if seen.insert(r.index()) {
            stack.push(r);
        }
        while let Some(n) = stack.pop() {
            for s in g.successors(n) {
                if seen.insert(s.index()) {
                    stack.push(s);
                }
            }
        }
    }
    seen
}
