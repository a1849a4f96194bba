//! Natural loops and their nesting forest.
//!
//! A back edge is an edge `tail -> header` where `header` dominates `tail`.
//! All back edges into one header form one natural loop whose body is the
//! header plus every node that reaches a tail without passing through the
//! header. Natural loops with different headers are either disjoint or
//! nested, so they form a forest.
//!
//! A retreating edge (target still on the DFS stack) whose target does not
//! dominate its source makes the graph irreducible: the cycle it closes has
//! more than one entry and is no natural loop. Such edges are reported in
//! [`LoopForest::irreducible_edges`] instead of being dropped silently. Which
//! edges are listed depends on the DFS order; whether the list is empty does
//! not (a graph is reducible iff every retreating edge is a back edge, for
//! any DFS).

use cranelift_entity::{entity_impl, EntityRef, PrimaryMap};

use crate::{DominatorTree, Graph};

/// Handle of a natural loop in a [`LoopForest`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loop(u32);
entity_impl!(Loop, "loop");

#[derive(Clone, Debug)]
struct LoopData<N> {
    header: N,
    latches: Vec<N>,
    parent: Option<Loop>,
    children: Vec<Loop>,
    depth: u32,
    /// Loop-tree DFS numbers: `a` contains `b` iff `b`'s interval nests.
    tree_pre: u32,
    tree_post: u32,
    /// Range in `LoopForest::direct` of nodes whose innermost loop is this.
    direct: (u32, u32),
}

/// The natural loops of a graph, their nesting, and its irreducible edges.
///
/// Loops are numbered in reverse postorder of their headers, so a parent
/// always has a smaller number than its children and outer loops come first
/// when iterating.
#[derive(Clone, Debug)]
pub struct LoopForest<N> {
    loops: PrimaryMap<Loop, LoopData<N>>,
    /// Indexed by node.
    innermost: Vec<Option<Loop>>,
    /// Nodes grouped by innermost loop (see `LoopData::direct`).
    direct: Vec<N>,
    irreducible: Vec<(N, N)>,
    /// Indexed by node: position in reverse postorder (for sorting bodies).
    rpo_num: Vec<u32>,
}

impl<N: EntityRef> LoopForest<N> {
    /// Finds the natural loops of `g`; `dom` must be `g`'s dominator tree.
    ///
    /// # Panics
    /// If `dom` was computed for a graph with a different node count.
    pub fn compute<G: Graph<Node = N>>(g: &G, dom: &DominatorTree<N>) -> Self {
        let n = g.node_count();
        assert_eq!(dom.node_count(), n, "dominator tree is for another graph");
        let rpo_of = |b: N| dom.rpo_number(b).map_or(u32::MAX, |r| r as u32);

        // (header, tail) back edges and (tail, header) irreducible edges.
        let mut back = Vec::new();
        let mut irreducible = Vec::new();
        for &t in dom.reverse_postorder() {
            for h in g.successors(t) {
                if dom.dominates(h, t) {
                    back.push((h, t));
                } else if rpo_of(h) <= rpo_of(t) {
                    irreducible.push((t, h));
                }
            }
        }
        irreducible.sort_by_key(|&(t, h)| (rpo_of(t), rpo_of(h)));
        irreducible.dedup();
        // Innermost headers first: an inner header is strictly dominated by
        // the outer one, hence later in reverse postorder.
        back.sort_by_key(|&(h, t)| (std::cmp::Reverse(rpo_of(h)), rpo_of(t)));
        back.dedup();

        let mut loops: PrimaryMap<Loop, LoopData<N>> = PrimaryMap::new();
        let mut innermost: Vec<Option<Loop>> = vec![None; n];
        let mut stack: Vec<N> = Vec::new();
        // Union-find over loops: `outermost[l]` leads, with path compression,
        // to the outermost loop found so far that contains `l`.
        let mut outermost: Vec<Loop> = Vec::new();
        let mut path: Vec<Loop> = Vec::new();
        for group in back.chunk_by(|a, b| a.0 == b.0) {
            let header = group[0].0;
            let lp = loops.push(LoopData {
                header,
                latches: group.iter().map(|&(_, t)| t).collect(),
                parent: None,
                children: Vec::new(),
                depth: 0,
                tree_pre: 0,
                tree_post: 0,
                direct: (0, 0),
            });
            outermost.push(lp);
            innermost[header.index()] = Some(lp);
            stack.extend(group.iter().map(|&(_, t)| t));
            // Walk backwards from the latches to the header. Nodes already in
            // an inner loop are skipped over by jumping to the header of that
            // loop's outermost ancestor, which becomes our child.
            while let Some(b) = stack.pop() {
                match innermost[b.index()] {
                    None => {
                        innermost[b.index()] = Some(lp);
                        stack.extend(g.predecessors(b).filter(|&p| dom.is_reachable(p)));
                    }
                    Some(inner) => {
                        let mut outer = inner;
                        while outermost[outer.index()] != outer {
                            path.push(outer);
                            outer = outermost[outer.index()];
                        }
                        for x in path.drain(..) {
                            outermost[x.index()] = outer;
                        }
                        if outer != lp {
                            loops[outer].parent = Some(lp);
                            outermost[outer.index()] = lp;
                            let h = loops[outer].header;
                            stack.extend(g.predecessors(h).filter(|&p| dom.is_reachable(p)));
                        }
                    }
                }
            }
        }

        // Renumber so that loops are in reverse postorder of headers.
        let count = loops.len();
        let renum = |l: Loop| Loop::new(count - 1 - l.index());
        let mut sorted: PrimaryMap<Loop, LoopData<N>> = PrimaryMap::with_capacity(count);
        for mut data in loops.into_iter().rev().map(|(_, d)| d) {
            data.parent = data.parent.map(renum);
            sorted.push(data);
        }
        let mut loops = sorted;
        for slot in innermost.iter_mut() {
            *slot = slot.map(renum);
        }
        for l in loops.keys() {
            if let Some(p) = loops[l].parent {
                loops[l].depth = loops[p].depth + 1;
                loops[p].children.push(l);
            } else {
                loops[l].depth = 1;
            }
        }
        for l in loops.keys() {
            loops[l].latches.sort_by_key(|&t| rpo_of(t));
        }

        // Loop-tree numbering for O(1) containment.
        let (mut pre, mut post) = (0u32, 0u32);
        let mut tree_stack: Vec<(Loop, usize)> = Vec::new();
        for root in loops.keys() {
            if loops[root].parent.is_some() {
                continue;
            }
            loops[root].tree_pre = pre;
            pre += 1;
            tree_stack.push((root, 0));
            while let Some((l, cursor)) = tree_stack.last_mut() {
                let l = *l;
                if let Some(&c) = loops[l].children.get(*cursor) {
                    *cursor += 1;
                    loops[c].tree_pre = pre;
                    pre += 1;
                    tree_stack.push((c, 0));
                } else {
                    loops[l].tree_post = post;
                    post += 1;
                    tree_stack.pop();
                }
            }
        }

        // Group nodes by innermost loop, each group in reverse postorder.
        let mut sizes = vec![0u32; count + 1];
        for &b in dom.reverse_postorder() {
            if let Some(l) = innermost[b.index()] {
                sizes[l.index() + 1] += 1;
            }
        }
        for i in 0..count {
            sizes[i + 1] += sizes[i];
        }
        let mut fill = sizes.clone();
        let mut direct = vec![N::new(0); sizes[count] as usize];
        for &b in dom.reverse_postorder() {
            if let Some(l) = innermost[b.index()] {
                direct[fill[l.index()] as usize] = b;
                fill[l.index()] += 1;
            }
        }
        for l in loops.keys() {
            loops[l].direct = (sizes[l.index()], sizes[l.index() + 1]);
        }

        LoopForest { loops, innermost, direct, irreducible, rpo_num: (0..n).map(|i| rpo_of(N::new(i))).collect() }
    }

    /// Number of natural loops.
    pub fn len(&self) -> usize {
        self.loops.len()
    }

    /// True if the graph has no natural loop.
    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }

    /// All loops, outer loops before the loops they contain.
    pub fn loops(&self) -> impl ExactSizeIterator<Item = Loop> + DoubleEndedIterator {
        self.loops.keys()
    }

    /// The header (single entry) of `l`.
    pub fn header(&self, l: Loop) -> N {
        self.loops[l].header
    }

    /// Tails of the back edges into the header of `l`, in reverse postorder.
    pub fn latches(&self, l: Loop) -> &[N] {
        &self.loops[l].latches
    }

    /// The innermost loop strictly containing `l`.
    pub fn parent(&self, l: Loop) -> Option<Loop> {
        self.loops[l].parent
    }

    /// Loops whose parent is `l`.
    pub fn children(&self, l: Loop) -> &[Loop] {
        &self.loops[l].children
    }

    /// Nesting depth of `l`: 1 for an outermost loop.
    pub fn depth(&self, l: Loop) -> u32 {
        self.loops[l].depth
    }

    /// The innermost loop containing `n`, if any.
    pub fn innermost_loop(&self, n: N) -> Option<Loop> {
        self.innermost[n.index()]
    }

    /// Number of loops containing `n` (0 if none).
    pub fn loop_depth(&self, n: N) -> u32 {
        self.innermost_loop(n).map_or(0, |l| self.depth(l))
    }

    /// The loop headed by `n`, if `n` is a loop header.
    pub fn loop_with_header(&self, n: N) -> Option<Loop> {
        self.innermost_loop(n).filter(|&l| self.header(l) == n)
    }

    /// True if `n` is a loop header.
    pub fn is_header(&self, n: N) -> bool {
        self.loop_with_header(n).is_some()
    }

    /// True if `a` is `b` or contains it. O(1).
    pub fn loop_contains_loop(&self, a: Loop, b: Loop) -> bool {
        let (a, b) = (&self.loops[a], &self.loops[b]);
        a.tree_pre <= b.tree_pre && b.tree_post <= a.tree_post
    }

    /// True if node `n` is in the body of `l`. O(1).
    pub fn contains(&self, l: Loop, n: N) -> bool {
        self.innermost_loop(n).is_some_and(|m| self.loop_contains_loop(l, m))
    }

    /// The body of `l` (header, latches, inner loops' bodies) in reverse
    /// postorder. Allocates; O(body size · log).
    pub fn body(&self, l: Loop) -> Vec<N> {
        let mut out = Vec::new();
        let mut todo = vec![l];
        while let Some(x) = todo.pop() {
            let (s, e) = self.loops[x].direct;
            out.extend_from_slice(&self.direct[s as usize..e as usize]);
            todo.extend_from_slice(&self.loops[x].children);
        }
        out.sort_by_key(|b| self.rpo_num[b.index()]);
        out
    }

    /// All back edges as `(tail, header)`, grouped by loop.
    pub fn back_edges(&self) -> impl Iterator<Item = (N, N)> + '_ {
        self.loops.values().flat_map(|d| d.latches.iter().map(move |&t| (t, d.header)))
    }

    /// Retreating edges `(tail, head)` whose head does not dominate the tail,
    /// deduplicated, sorted by reverse postorder of tail then head. Empty iff
    /// the graph (restricted to nodes reachable from the entry) is reducible.
    pub fn irreducible_edges(&self) -> &[(N, N)] {
        &self.irreducible
    }

    /// True if there are no irreducible edges.
    pub fn is_reducible(&self) -> bool {
        self.irreducible.is_empty()
    }
}
