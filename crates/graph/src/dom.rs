//! Dominator tree by the Semi-NCA algorithm.
//!
//! Semi-NCA (Georgiadis' variant of Lengauer–Tarjan) computes semidominators
//! with a path-compressed `eval` (`O(E log N)`), then derives each immediate
//! dominator by walking up the DFS tree from the node's parent to its
//! semidominator. That walk is quadratic only on contrived inputs and short in
//! practice. Unlike the Cooper–Harvey–Kennedy iteration there is no fixpoint
//! loop, so the cost does not grow with the number of passes that irregular
//! loop structure (common in dynamic x86 CFGs) would need.
//! Everything works on DFS preorder numbers internally and is iterative.

use std::marker::PhantomData;

use cranelift_entity::EntityRef;

use crate::{DepthFirst, Graph, NONE};

/// Immediate dominators of every node reachable from the entry.
///
/// `a` dominates `b` if every path from the entry to `b` passes through `a`
/// (so every node dominates itself). Nodes unreachable from the entry have
/// no immediate dominator, dominate nothing and are dominated by nothing.
#[derive(Clone, Debug)]
pub struct DominatorTree<N> {
    /// Indexed by node: index of the immediate dominator, or `NONE`.
    idom: Vec<u32>,
    rpo: Vec<N>,
    /// Indexed by node: position in `rpo`, or `NONE` if unreachable.
    rpo_num: Vec<u32>,
    /// Pre/post numbers of a DFS of the dominator tree: `a` dominates `b`
    /// iff `b`'s interval nests in `a`'s.
    tree_pre: Vec<u32>,
    tree_post: Vec<u32>,
    child_start: Vec<u32>,
    children: Vec<N>,
    _node: PhantomData<N>,
}

impl<N: EntityRef> DominatorTree<N> {
    /// Computes the dominator tree of `g` rooted at its entry.
    pub fn compute<G: Graph<Node = N>>(g: &G) -> Self {
        let dfs = DepthFirst::compute(g);
        let n = g.node_count();
        let pre = dfs.preorder();
        let pre_num = dfs.pre_nums();
        let k = pre.len();

        // DFS-tree parent, in preorder numbers; becomes the idom below.
        let mut idom: Vec<u32> = (0..k)
            .map(|i| match i {
                0 => 0,
                _ => pre_num[dfs.parents()[pre[i].index()] as usize],
            })
            .collect();
        let mut semi: Vec<u32> = (0..k as u32).collect();
        let mut label = semi.clone();
        let mut ancestor = idom.clone();
        let mut path = Vec::new();

        for w in (1..k).rev() {
            let mut s = semi[w];
            for p in g.predecessors(pre[w]) {
                let v = pre_num[p.index()];
                if v == NONE {
                    continue; // unreachable predecessor
                }
                let u = eval(v as usize, w + 1, &mut ancestor, &mut label, &semi, &mut path);
                s = s.min(semi[u as usize]);
            }
            semi[w] = s;
        }
        // idom(w) is the nearest ancestor of w's DFS parent that is at or
        // above semi(w); ancestors' idoms are final since we go in preorder.
        for w in 1..k {
            let s = semi[w];
            let mut d = idom[w];
            while d > s {
                d = idom[d as usize];
            }
            idom[w] = d;
        }

        let mut idom_node = vec![NONE; n];
        for w in 1..k {
            idom_node[pre[w].index()] = pre[idom[w] as usize].index() as u32;
        }
        let rpo: Vec<N> = dfs.reverse_postorder().collect();
        let mut rpo_num = vec![NONE; n];
        for (i, &b) in rpo.iter().enumerate() {
            rpo_num[b.index()] = i as u32;
        }
        Self::assemble(idom_node, rpo, rpo_num)
    }

    /// Builds children lists and the tree numbering from the idom table.
    fn assemble(idom: Vec<u32>, rpo: Vec<N>, rpo_num: Vec<u32>) -> Self {
        let n = idom.len();
        let mut child_start = vec![0u32; n + 1];
        for &d in &idom {
            if d != NONE {
                child_start[d as usize + 1] += 1;
            }
        }
        for i in 0..n {
            child_start[i + 1] += child_start[i];
        }
        let mut fill = child_start.clone();
        let mut children = vec![N::new(0); child_start[n] as usize];
        // Filling in RPO makes each child list RPO-ordered.
        for &b in &rpo {
            let d = idom[b.index()];
            if d != NONE {
                children[fill[d as usize] as usize] = b;
                fill[d as usize] += 1;
            }
        }

        let mut tree = DominatorTree {
            idom,
            rpo,
            rpo_num,
            tree_pre: vec![NONE; n],
            tree_post: vec![NONE; n],
            child_start,
            children,
            _node: PhantomData,
        };
        if let Some(&root) = tree.rpo.first() {
            let (mut pre, mut post) = (0u32, 0u32);
            tree.tree_pre[root.index()] = pre;
            pre += 1;
            let mut stack = vec![(root, 0usize)];
            while let Some((node, cursor)) = stack.last_mut() {
                let node = *node;
                let kids = tree.children(node);
                if let Some(&c) = kids.get(*cursor) {
                    *cursor += 1;
                    tree.tree_pre[c.index()] = pre;
                    pre += 1;
                    stack.push((c, 0));
                } else {
                    tree.tree_post[node.index()] = post;
                    post += 1;
                    stack.pop();
                }
            }
        }
        tree
    }

    /// Number of nodes of the graph this was computed for.
    pub fn node_count(&self) -> usize {
        self.idom.len()
    }

    /// The root (the graph's entry), or None for an empty graph.
    pub fn root(&self) -> Option<N> {
        self.rpo.first().copied()
    }

    /// The immediate dominator of `n`; None for the entry and for nodes
    /// unreachable from it.
    pub fn idom(&self, n: N) -> Option<N> {
        let d = self.idom[n.index()];
        (d != NONE).then(|| N::new(d as usize))
    }

    /// True if `n` is reachable from the entry.
    pub fn is_reachable(&self, n: N) -> bool {
        self.rpo_num[n.index()] != NONE
    }

    /// True if `a` dominates `b` (reflexive). O(1). False if either node is
    /// unreachable.
    pub fn dominates(&self, a: N, b: N) -> bool {
        let (a, b) = (a.index(), b.index());
        self.tree_pre[a] != NONE
            && self.tree_pre[b] != NONE
            && self.tree_pre[a] <= self.tree_pre[b]
            && self.tree_post[b] <= self.tree_post[a]
    }

    /// True if `a` dominates `b` and `a != b`.
    pub fn strictly_dominates(&self, a: N, b: N) -> bool {
        a != b && self.dominates(a, b)
    }

    /// Reachable nodes in reverse postorder of the DFS from the entry; every
    /// node comes after its immediate dominator.
    pub fn reverse_postorder(&self) -> &[N] {
        &self.rpo
    }

    /// Position of `n` in [`reverse_postorder`](Self::reverse_postorder).
    pub fn rpo_number(&self, n: N) -> Option<usize> {
        let r = self.rpo_num[n.index()];
        (r != NONE).then_some(r as usize)
    }

    /// Nodes whose immediate dominator is `n`, in reverse postorder.
    pub fn children(&self, n: N) -> &[N] {
        let i = n.index();
        &self.children[self.child_start[i] as usize..self.child_start[i + 1] as usize]
    }

    /// The deepest node dominating both `a` and `b`; None if either is
    /// unreachable. O(depth of the tree).
    pub fn nearest_common_dominator(&self, a: N, b: N) -> Option<N> {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return None;
        }
        let mut x = a;
        while !self.dominates(x, b) {
            x = self.idom(x)?;
        }
        Some(x)
    }
}

/// Path-compressed `eval` of Lengauer–Tarjan, iterative. Nodes numbered
/// `>= last_linked` are already processed ("linked" into the forest); returns
/// the node of minimum semidominator on the forest path from `v` to its root.
fn eval(
    v: usize,
    last_linked: usize,
    ancestor: &mut [u32],
    label: &mut [u32],
    semi: &[u32],
    path: &mut Vec<u32>,
) -> u32 {
    if (ancestor[v] as usize) < last_linked {
        return label[v];
    }
    path.clear();
    let mut top = v;
    while ancestor[top] as usize >= last_linked {
        path.push(top as u32);
        top = ancestor[top] as usize;
    }
    let mut above = top;
    while let Some(x) = path.pop() {
        let x = x as usize;
        ancestor[x] = ancestor[above];
        if semi[label[above] as usize] < semi[label[x] as usize] {
            label[x] = label[above];
        }
        above = x;
    }
    label[v]
}
