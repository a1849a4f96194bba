//! Post-dominator tree: the dominator tree of the reversed graph, rooted at a
//! virtual exit. See the crate docs for the virtual-exit rule.

use std::marker::PhantomData;

use cranelift_entity::{entity_impl, EntityRef};

use crate::{DepthFirst, DominatorTree, Graph};

/// The immediate post-dominator of a node.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PostDom<N> {
    /// A real node: the reconvergence point for a branch at the queried node.
    Node(N),
    /// Only the virtual exit post-dominates the node: it is an exit or
    /// pseudo-exit, or its paths never meet again before leaving the graph.
    VirtualExit,
    /// The node is unreachable from the entry and has no post-dominator.
    Unreachable,
}

impl<N> PostDom<N> {
    /// The node, if this is [`PostDom::Node`].
    pub fn node(self) -> Option<N> {
        match self {
            PostDom::Node(n) => Some(n),
            _ => None,
        }
    }
}

/// Node of the augmented reversed graph: `0..n` are the original nodes,
/// `n` is the virtual exit.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Vx(u32);
entity_impl!(Vx, "v");

/// The reversed graph of the nodes reachable from the entry, plus a virtual
/// exit whose successors are the exits and pseudo-exits.
struct Augmented {
    exit: Vx,
    succ_start: Vec<u32>,
    succ: Vec<Vx>,
    pred_start: Vec<u32>,
    pred: Vec<Vx>,
}

impl Graph for Augmented {
    type Node = Vx;

    fn node_count(&self) -> usize {
        self.succ_start.len() - 1
    }

    fn entry(&self) -> Vx {
        self.exit
    }

    fn successors(&self, n: Vx) -> impl Iterator<Item = Vx> + '_ {
        let i = n.index();
        self.succ[self.succ_start[i] as usize..self.succ_start[i + 1] as usize].iter().copied()
    }

    fn predecessors(&self, n: Vx) -> impl Iterator<Item = Vx> + '_ {
        let i = n.index();
        self.pred[self.pred_start[i] as usize..self.pred_start[i + 1] as usize].iter().copied()
    }
}

/// Immediate post-dominators of every node reachable from the entry.
///
/// `a` post-dominates `b` if every path from `b` to the virtual exit passes
/// through `a` (reflexive). The immediate post-dominator of a branch node is
/// its SIMT reconvergence point.
#[derive(Clone, Debug)]
pub struct PostDominatorTree<N> {
    tree: DominatorTree<Vx>,
    exits: Vec<N>,
    pseudo_exits: Vec<N>,
    _node: PhantomData<N>,
}

impl<N: EntityRef> PostDominatorTree<N> {
    /// Post-dominators where the exits are the reachable nodes without
    /// successors (in index order), plus pseudo-exits for regions that
    /// cannot reach them.
    pub fn compute<G: Graph<Node = N>>(g: &G) -> Self {
        let dfs = DepthFirst::compute(g);
        let exits: Vec<N> = (0..g.node_count())
            .map(N::new)
            .filter(|&b| dfs.is_visited(b) && g.successors(b).next().is_none())
            .collect();
        Self::build(g, &dfs, exits)
    }

    /// Post-dominators with an explicit exit list (e.g. the `ret`/`exit`
    /// blocks of a kernel, or trace ends). Listed nodes are connected to the
    /// virtual exit even if they have successors; unlisted nodes without
    /// successors are not exits, but the pseudo-exit rule will then pick
    /// them. Unreachable and duplicate entries are ignored.
    pub fn compute_with_exits<G: Graph<Node = N>>(g: &G, exits: impl IntoIterator<Item = N>) -> Self {
        let dfs = DepthFirst::compute(g);
        let mut seen = vec![false; g.node_count()];
        let exits: Vec<N> = exits
            .into_iter()
            .filter(|&b| dfs.is_visited(b) && !std::mem::replace(&mut seen[b.index()], true))
            .collect();
        Self::build(g, &dfs, exits)
    }

    fn build<G: Graph<Node = N>>(g: &G, dfs: &DepthFirst<N>, exits: Vec<N>) -> Self {
        let n = g.node_count();
        // Mark what reaches an exit; then the pseudo-exit scan in postorder.
        let mut reaches_exit = vec![false; n];
        let mut stack = Vec::new();
        let mut mark_from = |root: N, reaches_exit: &mut Vec<bool>| {
            reaches_exit[root.index()] = true;
            stack.push(root);
            while let Some(b) = stack.pop() {
                for p in g.predecessors(b) {
                    if dfs.is_visited(p) && !reaches_exit[p.index()] {
                        reaches_exit[p.index()] = true;
                        stack.push(p);
                    }
                }
            }
        };
        for &e in &exits {
            if !reaches_exit[e.index()] {
                mark_from(e, &mut reaches_exit);
            }
        }
        let mut pseudo_exits = Vec::new();
        for &b in dfs.postorder() {
            if !reaches_exit[b.index()] {
                pseudo_exits.push(b);
                mark_from(b, &mut reaches_exit);
            }
        }

        // Build the augmented reversed graph over live nodes. Dead nodes get
        // no edges, so they stay unreachable from the virtual exit.
        let exit = Vx::new(n);
        let mut is_root = vec![false; n];
        for &r in exits.iter().chain(&pseudo_exits) {
            is_root[r.index()] = true;
        }
        let mut succ_start = Vec::with_capacity(n + 2);
        let mut succ = Vec::new();
        let mut pred_start = Vec::with_capacity(n + 2);
        let mut pred = Vec::new();
        for (i, &root) in is_root.iter().enumerate() {
            succ_start.push(succ.len() as u32);
            pred_start.push(pred.len() as u32);
            let b = N::new(i);
            if !dfs.is_visited(b) {
                continue;
            }
            succ.extend(g.predecessors(b).filter(|&p| dfs.is_visited(p)).map(|p| Vx::new(p.index())));
            pred.extend(g.successors(b).map(|s| Vx::new(s.index())));
            if root {
                pred.push(exit);
            }
        }
        succ_start.push(succ.len() as u32);
        succ.extend(exits.iter().chain(&pseudo_exits).map(|r| Vx::new(r.index())));
        succ_start.push(succ.len() as u32);
        pred_start.push(pred.len() as u32);
        pred_start.push(pred.len() as u32);

        let aug = Augmented { exit, succ_start, succ, pred_start, pred };
        PostDominatorTree { tree: DominatorTree::compute(&aug), exits, pseudo_exits, _node: PhantomData }
    }

    fn vx(n: N) -> Vx {
        Vx::new(n.index())
    }

    fn exit(&self) -> Vx {
        Vx::new(self.node_count())
    }

    fn lift(&self, v: Option<Vx>) -> PostDom<N> {
        match v {
            Some(v) if v == self.exit() => PostDom::VirtualExit,
            Some(v) => PostDom::Node(N::new(v.index())),
            None => PostDom::Unreachable,
        }
    }

    /// Number of nodes of the graph (the virtual exit not counted).
    pub fn node_count(&self) -> usize {
        self.tree.node_count() - 1
    }

    /// The immediate post-dominator of `n`: the reconvergence point of a
    /// divergent branch at `n`.
    pub fn ipdom(&self, n: N) -> PostDom<N> {
        if !self.is_reachable(n) {
            return PostDom::Unreachable;
        }
        self.lift(self.tree.idom(Self::vx(n)))
    }

    /// True if `n` is reachable from the entry (and so in the tree).
    pub fn is_reachable(&self, n: N) -> bool {
        self.tree.is_reachable(Self::vx(n))
    }

    /// True if `a` post-dominates `b` (reflexive). O(1). False if either is
    /// unreachable from the entry.
    pub fn post_dominates(&self, a: N, b: N) -> bool {
        self.tree.dominates(Self::vx(a), Self::vx(b))
    }

    /// True if `a` post-dominates `b` and `a != b`.
    pub fn strictly_post_dominates(&self, a: N, b: N) -> bool {
        a != b && self.post_dominates(a, b)
    }

    /// Nodes whose immediate post-dominator is `n`.
    pub fn children(&self, n: N) -> impl Iterator<Item = N> + '_ {
        self.tree.children(Self::vx(n)).iter().map(|v| N::new(v.index()))
    }

    /// Nodes whose immediate post-dominator is the virtual exit.
    pub fn virtual_exit_children(&self) -> impl Iterator<Item = N> + '_ {
        self.tree.children(self.exit()).iter().map(|v| N::new(v.index()))
    }

    /// The deepest common post-dominator of `a` and `b` (where threads that
    /// went to `a` and to `b` reconverge).
    pub fn nearest_common_post_dominator(&self, a: N, b: N) -> PostDom<N> {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return PostDom::Unreachable;
        }
        self.lift(self.tree.nearest_common_dominator(Self::vx(a), Self::vx(b)))
    }

    /// The real exits connected to the virtual exit (reachable, deduplicated;
    /// default: nodes without successors in index order).
    pub fn exits(&self) -> &[N] {
        &self.exits
    }

    /// Nodes the virtual-exit rule connected to the virtual exit because they
    /// could not reach a real exit, in the order they were picked.
    pub fn pseudo_exits(&self) -> &[N] {
        &self.pseudo_exits
    }
}
