//! Scale tests: nothing may recurse on graph depth, and liveness must stay
//! fast at 10k nodes x 10k variables.

mod common;

use std::time::Instant;

use common::n;
use graph::{
    postorder, AdjacencyGraph, BitSet, DominatorTree, EntityRef, Liveness, LoopForest, PostDom, PostDominatorTree,
};

const DEPTH: usize = 1_000_000;

fn chain(len: usize, back_edge: bool) -> AdjacencyGraph {
    let edges = (0..len - 1).map(|i| (n(i), n(i + 1)));
    let back = back_edge.then(|| (n(len - 1), n(0)));
    AdjacencyGraph::new(len, n(0), edges.chain(back))
}

#[test]
fn million_node_chain_does_not_overflow() {
    let g = chain(DEPTH, false);
    let last = n(DEPTH - 1);

    let po = postorder(&g);
    assert_eq!(po.len(), DEPTH);
    assert_eq!(po[0], last);

    let dom = DominatorTree::compute(&g);
    assert_eq!(dom.idom(last), Some(n(DEPTH - 2)));
    assert!(dom.dominates(n(0), last));
    assert!(!dom.dominates(last, n(0)));
    assert_eq!(dom.nearest_common_dominator(n(10), n(DEPTH / 2)), Some(n(10)));

    let pd = PostDominatorTree::compute(&g);
    assert_eq!(pd.ipdom(n(0)), PostDom::Node(n(1)));
    assert_eq!(pd.ipdom(last), PostDom::VirtualExit);
    assert!(pd.post_dominates(last, n(0)));

    let lf = LoopForest::compute(&g, &dom);
    assert!(lf.is_empty());

    // One variable defined at the top and used at the bottom is live
    // everywhere in between.
    let none = BitSet::new(1);
    let one = BitSet::from_values(1, [0]);
    let lv = Liveness::compute(&g, 1, |b| match b.index() {
        0 => (&none, &one),
        i if i == DEPTH - 1 => (&one, &none),
        _ => (&none, &none),
    });
    assert!(lv.live_in(n(DEPTH / 2)).contains(0));
    assert!(!lv.live_in(n(0)).contains(0));
    assert_eq!(lv.node_visits(), DEPTH);
}

#[test]
fn long_cycle_does_not_overflow() {
    // The chain closed into one big loop with no exit: one pseudo-exit (the
    // latch), one natural loop containing every node.
    // 300k nodes: far past what a recursive search survives on a 2 MiB
    // test-thread stack, at a third of the cost of the 1M chain.
    let len = 300_000;
    let g = chain(len, true);
    let last = n(len - 1);
    let dom = DominatorTree::compute(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(pd.pseudo_exits(), [last]);
    assert_eq!(pd.ipdom(n(0)), PostDom::Node(n(1)));
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), 1);
    let l = lf.loops().next().unwrap();
    assert_eq!(lf.latches(l), [last]);
    assert_eq!(lf.body(l).len(), len);
    assert_eq!(lf.loop_depth(n(len / 2)), 1);
}

#[test]
fn deep_loop_nest_does_not_overflow() {
    // Node i -> i+1, and node (len-1-i) -> i: 100k nested loops.
    let len = 200_000;
    let edges = (0..len - 1).map(|i| (n(i), n(i + 1))).chain((0..len / 2).map(|i| (n(len - 1 - i), n(i))));
    let g = AdjacencyGraph::new(len, n(0), edges);
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), len / 2);
    assert_eq!(lf.loop_depth(n(len / 2)), (len / 2) as u32);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(pd.pseudo_exits().len(), 1);
}

/// Builds a structured (reducible) CFG like compiled code: sequences,
/// if/else, if-then and while loops (of under 400 nodes) nested up to
/// depth 4.
struct Structured {
    rng: fastrand::Rng,
    edges: Vec<(usize, usize)>,
    count: usize,
}

impl Structured {
    fn node(&mut self) -> usize {
        self.count += 1;
        self.count - 1
    }

    /// A single-entry single-exit region of about `budget` nodes.
    fn region(&mut self, budget: usize, depth: u32) -> (usize, usize) {
        if budget < 4 {
            let b = self.node();
            return (b, b);
        }
        match self.rng.u8(0..4) {
            0 if depth < 4 && budget < 400 => {
                // while loop: header -> body -> header, header -> exit
                let header = self.node();
                let (bin, bout) = self.region(budget - 2, depth + 1);
                let exit = self.node();
                self.edges.extend([(header, bin), (bout, header), (header, exit)]);
                (header, exit)
            }
            2 => {
                // if/else
                let head = self.node();
                let split = self.rng.usize(1..budget - 2);
                let (a_in, a_out) = self.region(split, depth);
                let (b_in, b_out) = self.region(budget - 2 - split, depth);
                let join = self.node();
                self.edges.extend([(head, a_in), (head, b_in), (a_out, join), (b_out, join)]);
                (head, join)
            }
            _ => {
                // sequence of two regions, the first sometimes an if-then
                let split = self.rng.usize(1..budget);
                let (a_in, a_out) = self.region(split, depth);
                let (b_in, b_out) = self.region(budget - split, depth);
                self.edges.push((a_out, b_in));
                if self.rng.u8(0..3) == 0 {
                    self.edges.push((a_in, b_in));
                }
                (a_in, b_out)
            }
        }
    }
}

#[test]
fn liveness_10k_nodes_10k_vars() {
    let vars = 10_000;
    let mut gen = Structured { rng: fastrand::Rng::with_seed(7), edges: Vec::new(), count: 0 };
    let (entry, _) = gen.region(15_000, 0);
    let nodes = gen.count;
    assert!(nodes >= 10_000, "{nodes} nodes");
    let g = AdjacencyGraph::new(nodes, n(entry), gen.edges.iter().map(|&(a, b)| (n(a), n(b))));
    let mut rng = gen.rng;
    let sets: Vec<(BitSet, BitSet)> = (0..nodes)
        .map(|_| {
            let uses = BitSet::from_values(vars, (0..8).map(|_| rng.usize(..vars)));
            let defs = BitSet::from_values(vars, (0..8).map(|_| rng.usize(..vars)));
            (uses, defs)
        })
        .collect();
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    let max_depth = lf.loops().map(|l| lf.depth(l)).max().unwrap_or(0) as usize;
    assert!(lf.is_reducible() && lf.len() > 100, "{} loops", lf.len());

    let start = Instant::now();
    let lv = Liveness::compute(&g, vars, |b| (&sets[b.index()].0, &sets[b.index()].1));
    let elapsed = start.elapsed();
    let live: usize = (0..nodes).map(|i| lv.live_in(n(i)).count()).sum();
    eprintln!(
        "liveness {nodes} nodes x {vars} vars, {} loops (depth <= {max_depth}): {elapsed:?}, \
         {} node visits, {:.0} live vars per node",
        lf.len(),
        lv.node_visits(),
        live as f64 / nodes as f64
    );
    // Sanity: live_in = uses | (live_out - defs) at every node.
    for (i, (uses, defs)) in sets.iter().enumerate() {
        let b = n(i);
        let mut expect = lv.live_out(b).clone();
        expect.subtract(defs);
        expect.union_with(uses);
        assert_eq!(lv.live_in(b), &expect);
    }
    // Sweeps in postorder converge in about (loop nesting depth + 2) passes
    // on reducible graphs; a FIFO worklist would blow well past this.
    assert!(lv.node_visits() <= (max_depth + 3) * nodes, "worklist is thrashing: {} visits", lv.node_visits());
}
