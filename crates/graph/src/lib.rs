//! Generic control-flow graph algorithms for lockstep.
//!
//! This crate knows nothing about PTX or x86. It works on any directed graph
//! that implements [`Graph`]: nodes are dense typed indices
//! (`cranelift_entity::EntityRef`) `0..node_count()`, with one entry node.
//! The PTX IR implements [`Graph`] for its basic-block CFG; the x86 trace
//! analyzer builds an [`AdjacencyGraph`] from observed control transfers.
//!
//! Every analysis is a separate struct computed from `&impl Graph`. Analyses
//! never mutate the graph; they return side tables indexed by node. If the
//! graph changes, recompute.
//!
//! # Contract of [`Graph`]
//!
//! * Nodes are `N::new(0) .. N::new(node_count())`; `entry()` is one of them.
//!   A graph with `node_count() == 0` is accepted and yields empty analyses.
//! * `successors`/`predecessors` must describe the same edge set (each edge
//!   `a -> b` appears in `successors(a)` and in `predecessors(b)`).
//!   Duplicate edges and self loops are allowed.
//! * The successor order is significant only in that it fixes the depth-first
//!   search order, which in turn fixes tie-breaking choices (reverse postorder,
//!   child order, which pseudo-exits are picked, which retreating edges are
//!   reported as irreducible). All results are deterministic for a given
//!   graph.
//!
//! # Analyses
//!
//! * [`DepthFirst`], [`postorder`], [`reverse_postorder`], [`reachable_from`]
//!   (`order.rs`): iterative depth-first search. Nothing outside
//!   [`reference`](mod@reference) recurses on graph depth, so a
//!   1,000,000-node chain is fine.
//! * [`DominatorTree`] (`dom.rs`): immediate dominators by the Semi-NCA
//!   algorithm (no fixpoint iteration), with O(1) `dominates` queries via pre/post
//!   numbering of the dominator tree. Nodes unreachable from the entry have
//!   no dominator and dominate nothing.
//! * [`PostDominatorTree`] (`postdom.rs`): dominators of the reversed graph
//!   rooted at a *virtual exit* (see below). The immediate post-dominator of a
//!   node is where the SIMT emulator reconverges a warp that diverged there.
//! * [`LoopForest`] (`loops.rs`): natural loops (back edges, bodies, nesting,
//!   depth, innermost loop of each node) plus the list of irreducible edges,
//!   which are reported rather than silently dropped.
//! * [`Liveness`] (`liveness.rs`): backward dataflow over block-level
//!   use/def sets, stored as dense [`BitSet`]s, solved by sweeps in DFS
//!   postorder (about loop-nesting-depth + 2 sweeps on reducible graphs).
//! * [`reference`](mod@reference) (`reference.rs`): slow, obviously-correct versions of all
//!   of the above, and `check_*` functions that compare fast against
//!   reference and describe the first mismatch. Other crates call these from
//!   their tests on real CFGs.
//!
//! # Example
//!
//! ```
//! use graph::{AdjacencyGraph, DominatorTree, NodeId, PostDom, PostDominatorTree};
//! use graph::EntityRef;
//!
//! // 0 branches to 1 and 2, which join at 3.
//! let n = NodeId::new;
//! let g = AdjacencyGraph::new(4, n(0), [(n(0), n(1)), (n(0), n(2)), (n(1), n(3)), (n(2), n(3))]);
//! let dom = DominatorTree::compute(&g);
//! assert_eq!(dom.idom(n(3)), Some(n(0)));
//! let pdom = PostDominatorTree::compute(&g);
//! assert_eq!(pdom.ipdom(n(0)), PostDom::Node(n(3))); // reconverge at the join
//! assert_eq!(pdom.ipdom(n(3)), PostDom::VirtualExit);
//! graph::reference::check_all(&g).unwrap();
//! ```
//!
//! # Why post-dominators: SIMT reconvergence
//!
//! When the threads of a warp disagree on a branch at node `b`, the emulator
//! runs one side, then the other, and merges the threads again at the first
//! node that *every* path from `b` must reach: the immediate post-dominator of
//! `b`. Reconverging there is the earliest point that is always safe (no
//! thread can skip it) and it is what hardware stacks (e.g. the PDOM
//! reconvergence stack) use. For a diamond it is the join; for an
//! if-without-else it is the fall-through block; for a branch leaving a loop
//! it is the loop exit target when all exits meet there.
//!
//! # The virtual exit
//!
//! A CFG may have several exits (several `ret`/`exit` blocks) or none at all
//! (a kernel that spins forever). Post-dominance needs a single root, so
//! [`PostDominatorTree`] adds a virtual exit node `X` and edges into it:
//!
//! 1. **Real exits.** By default, every node reachable from the entry that has
//!    no successors gets an edge to `X`. A caller may instead give an explicit
//!    list of exit nodes ([`PostDominatorTree::compute_with_exits`]); listed
//!    nodes get an edge to `X` even if they also have successors.
//! 2. **Pseudo-exits for non-terminating regions.** Some reachable nodes may
//!    still be unable to reach `X` (infinite loops). Walk the nodes reachable
//!    from the entry in depth-first *postorder* (the same DFS as
//!    [`postorder`]); whenever a node cannot yet reach `X`, add an edge from it
//!    to `X` (it becomes a *pseudo-exit*) and mark every node that can reach
//!    it. Repeat to the end of the postorder.
//!
//! Why the first node in postorder: when the scan meets a node `p` that
//! cannot reach `X`, every node finished before `p` already can, so none of
//! `p`'s successors finished before it: they were all on the DFS stack, i.e.
//! every successor of `p` is a DFS ancestor of `p` (or `p` itself). So `p`
//! is a latch closing a cycle (or, with an explicit exit list, a node with no
//! successors). Choosing the latch makes the loop body reconverge before the
//! back edge: in `loop { if c {A} else {B}; J }` the branch reconverges at
//! `J`, exactly as for a terminating loop, instead of only at the virtual
//! exit (never). A loop with several latches (`continue`) gets the first one
//! to finish as its pseudo-exit, and paths through the other latches
//! reconverge there. The rule is deterministic and linear time, adds nothing
//! when every node can reach an exit, and adds one pseudo-exit per
//! non-terminating region in the common cases (see
//! [`PostDominatorTree::pseudo_exits`]).
//!
//! Nodes unreachable from the entry are not part of the post-dominator tree
//! (they report [`PostDom::Unreachable`]), mirroring [`DominatorTree`]: dead
//! code cannot diverge, and leaving it out means it cannot perturb the
//! pseudo-exit choice for live code.

mod adjacency;
mod bitset;
mod dom;
mod liveness;
mod loops;
mod order;
mod postdom;
pub mod reference;

pub use adjacency::{AdjacencyGraph, NodeId};
pub use bitset::BitSet;
pub use dom::DominatorTree;
pub use liveness::Liveness;
pub use loops::{Loop, LoopForest};
pub use order::{postorder, reachable_from, reverse_postorder, DepthFirst};
pub use postdom::{PostDom, PostDominatorTree};

/// Re-exported so that users name exactly the `EntityRef` this crate is
/// built against (two semver-incompatible copies would be distinct traits).
pub use cranelift_entity;
pub use cranelift_entity::EntityRef;

/// A directed graph whose nodes are dense typed indices `0..node_count()`,
/// with a distinguished entry node. See the crate docs for the contract.
pub trait Graph {
    /// Node handle; `N::new(i)` for `i < node_count()` are the nodes.
    type Node: EntityRef;

    /// Number of nodes.
    fn node_count(&self) -> usize;

    /// The entry node. Only called when `node_count() > 0`.
    fn entry(&self) -> Self::Node;

    /// Successors of `n`, in a stable order. Should be cheap (no allocation).
    fn successors(&self, n: Self::Node) -> impl Iterator<Item = Self::Node> + '_;

    /// Predecessors of `n`. Should be cheap (no allocation).
    fn predecessors(&self, n: Self::Node) -> impl Iterator<Item = Self::Node> + '_;
}

impl<G: Graph> Graph for &G {
    type Node = G::Node;

    fn node_count(&self) -> usize {
        (**self).node_count()
    }

    fn entry(&self) -> Self::Node {
        (**self).entry()
    }

    fn successors(&self, n: Self::Node) -> impl Iterator<Item = Self::Node> + '_ {
        (**self).successors(n)
    }

    fn predecessors(&self, n: Self::Node) -> impl Iterator<Item = Self::Node> + '_ {
        (**self).predecessors(n)
    }
}

/// Sentinel for "no number" in the internal `u32` tables.
const NONE: u32 = u32::MAX;
