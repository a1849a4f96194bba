//! Hand-built graphs with known answers. Each case also runs the reference
//! cross-check, so the reference itself is pinned to the expected answers.

mod common;

use common::{graph, graph_with_entry, n};
use graph::reference;
use graph::{
    postorder, reachable_from, reverse_postorder, AdjacencyGraph, BitSet, DepthFirst, DominatorTree, EntityRef, Graph,
    Liveness, LoopForest, NodeId, PostDom, PostDominatorTree,
};

type Pd = PostDom<NodeId>;

fn idoms(g: &AdjacencyGraph) -> Vec<Option<usize>> {
    let dom = DominatorTree::compute(g);
    (0..g.node_count()).map(|i| dom.idom(n(i)).map(|d| d.index())).collect()
}

fn ipdoms(pd: &PostDominatorTree<NodeId>) -> Vec<Pd> {
    (0..pd.node_count()).map(|i| pd.ipdom(n(i))).collect()
}

fn node(i: usize) -> Pd {
    PostDom::Node(n(i))
}

const VX: Pd = PostDom::VirtualExit;

fn indices(v: &[NodeId]) -> Vec<usize> {
    v.iter().map(|b| b.index()).collect()
}

fn check(g: &AdjacencyGraph) {
    if let Err(e) = reference::check_all(g) {
        panic!("reference mismatch: {e}");
    }
}

#[test]
fn diamond() {
    //   0
    //  / \
    // 1   2
    //  \ /
    //   3
    let g = graph(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    check(&g);
    assert_eq!(idoms(&g), [None, Some(0), Some(0), Some(0)]);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(3), node(3), node(3), VX]);
    assert_eq!(indices(pd.exits()), [3]);
    assert!(pd.pseudo_exits().is_empty());
    assert!(pd.post_dominates(n(3), n(0)));
    assert!(!pd.post_dominates(n(1), n(0)));
    assert_eq!(pd.nearest_common_post_dominator(n(1), n(2)), node(3));
    let dom = DominatorTree::compute(&g);
    assert!(dom.dominates(n(0), n(3)));
    assert!(!dom.dominates(n(1), n(3)));
    assert_eq!(indices(dom.children(n(0))).len(), 3);
    assert_eq!(dom.nearest_common_dominator(n(1), n(2)), Some(n(0)));
    assert!(LoopForest::compute(&g, &dom).is_empty());
}

#[test]
fn if_without_else() {
    // 0 -> 1 -> 2, 0 -> 2
    let g = graph(3, &[(0, 1), (0, 2), (1, 2)]);
    check(&g);
    assert_eq!(idoms(&g), [None, Some(0), Some(0)]);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(2), node(2), VX]);
}

#[test]
fn nested_loops() {
    // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2 (inner latch)
    // 3 -> 4 -> 1 (outer latch); 1 -> 5 (exit)
    let g = graph(6, &[(0, 1), (1, 2), (2, 3), (3, 2), (3, 4), (4, 1), (1, 5)]);
    check(&g);
    assert_eq!(idoms(&g), [None, Some(0), Some(1), Some(2), Some(3), Some(1)]);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(1), node(5), node(3), node(4), node(1), VX]);

    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), 2);
    assert!(lf.is_reducible());
    let outer = lf.loop_with_header(n(1)).unwrap();
    let inner = lf.loop_with_header(n(2)).unwrap();
    assert!(outer < inner, "outer loops are numbered first");
    assert_eq!(lf.parent(inner), Some(outer));
    assert_eq!(lf.parent(outer), None);
    assert_eq!(lf.children(outer), [inner]);
    assert_eq!((lf.depth(outer), lf.depth(inner)), (1, 2));
    assert_eq!(indices(&lf.body(outer)), [1, 2, 3, 4]);
    assert_eq!(indices(&lf.body(inner)), [2, 3]);
    assert_eq!(indices(lf.latches(outer)), [4]);
    assert_eq!(indices(lf.latches(inner)), [3]);
    assert_eq!(lf.innermost_loop(n(3)), Some(inner));
    assert_eq!(lf.innermost_loop(n(4)), Some(outer));
    assert_eq!(lf.innermost_loop(n(5)), None);
    assert_eq!((0..6).map(|i| lf.loop_depth(n(i))).collect::<Vec<_>>(), [0, 1, 2, 2, 1, 0]);
    assert!(lf.contains(outer, n(3)) && !lf.contains(inner, n(4)));
    assert_eq!(lf.back_edges().count(), 2);
}

#[test]
fn loop_with_two_exits() {
    // 0 -> 1 (header); 1 -> 2 -> 3 -> 1 (latch)
    // exits: 1 -> 4, 2 -> 5; both continue to 6.
    let g = graph(7, &[(0, 1), (1, 2), (2, 3), (3, 1), (1, 4), (2, 5), (4, 6), (5, 6)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(1), node(6), node(6), node(1), node(6), node(6), VX]);
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), 1);
    let l = lf.loops().next().unwrap();
    assert_eq!(indices(&lf.body(l)), [1, 2, 3]);
    assert_eq!(idoms(&g)[6], Some(1));
}

#[test]
fn early_return() {
    // 0 -> 4 (early return), 0 -> 1 -> 2 -> 3 (return)
    let g = graph(5, &[(0, 4), (0, 1), (1, 2), (2, 3)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(indices(pd.exits()), [3, 4]);
    assert_eq!(ipdoms(&pd), [VX, node(2), node(3), VX, VX]);
    let mut roots: Vec<usize> = pd.virtual_exit_children().map(|b| b.index()).collect();
    roots.sort();
    assert_eq!(roots, [0, 3, 4]);
    assert_eq!(pd.nearest_common_post_dominator(n(1), n(4)), VX);
}

#[test]
fn explicit_exits() {
    // A trace 0 -> 1 -> 2 -> 3 where the caller says 2 is the exit; 3 has no
    // successors but is not listed, so the pseudo-exit rule picks it.
    let g = graph(4, &[(0, 1), (1, 2), (2, 3)]);
    let pd = PostDominatorTree::compute_with_exits(&g, [n(2), n(2)]);
    assert_eq!(indices(pd.exits()), [2]);
    assert_eq!(indices(pd.pseudo_exits()), [3]);
    assert_eq!(ipdoms(&pd), [node(1), node(2), VX, VX]);
    reference::check_post_dominators_with_exits(&g, &[n(2), n(2)]).unwrap();
    // Listing every exit explicitly gives the default answer.
    let g = graph(5, &[(0, 4), (0, 1), (1, 2), (2, 3)]);
    let a = PostDominatorTree::compute_with_exits(&g, [n(4), n(3)]);
    let b = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&a), ipdoms(&b));
    reference::check_post_dominators_with_exits(&g, &[n(4), n(3)]).unwrap();
}

#[test]
fn infinite_loop_without_exit() {
    // 0 -> 1; loop { 1 -> 2 | 3; 2, 3 -> 4; 4 -> 1 }: no node lacks successors.
    let g = graph(5, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert!(pd.exits().is_empty());
    // The latch is the pseudo-exit, so the branch at 1 reconverges at 4.
    assert_eq!(indices(pd.pseudo_exits()), [4]);
    assert_eq!(ipdoms(&pd), [node(1), node(4), node(4), node(4), VX]);
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), 1);
    assert_eq!(indices(lf.latches(lf.loop_with_header(n(1)).unwrap())), [4]);
}

#[test]
fn infinite_loop_with_two_latches() {
    // loop { if c { A; continue } B } with no exit: header 1, latches 2 and 3.
    // The first latch to finish in the DFS (2) becomes the pseudo-exit and
    // the path through the other latch reconverges there.
    let g = graph(4, &[(0, 1), (1, 2), (1, 3), (2, 1), (3, 1)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(indices(pd.pseudo_exits()), [2]);
    assert_eq!(ipdoms(&pd), [node(1), node(2), VX, node(1)]);
}

#[test]
fn infinite_loop_beside_an_exit() {
    // 0 -> 5 (exit) or 0 -> 1 <-> 2 forever.
    let g = graph(6, &[(0, 1), (0, 5), (1, 2), (2, 1)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(indices(pd.exits()), [5]);
    assert_eq!(indices(pd.pseudo_exits()), [2]);
    assert_eq!(pd.ipdom(n(0)), VX);
    assert_eq!(pd.ipdom(n(1)), node(2));
    assert_eq!(pd.ipdom(n(2)), VX);
    // Node 3 and 4 are unreachable.
    assert_eq!(pd.ipdom(n(3)), PostDom::Unreachable);
}

#[test]
fn two_separate_infinite_loops() {
    // 0 -> 1 <-> 2 and 0 -> 3 -> 3: two pseudo-exits, picked in postorder.
    let g = graph(4, &[(0, 1), (1, 2), (2, 1), (0, 3), (3, 3)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(indices(pd.pseudo_exits()), [2, 3]);
    assert_eq!(ipdoms(&pd), [VX, node(2), VX, VX]);
    assert_eq!(postorder(&g).iter().map(|b| b.index()).collect::<Vec<_>>(), [2, 1, 3, 0]);
}

#[test]
fn unreachable_nodes() {
    // 2 -> 1 and 3 -> 3 are dead code; 0 -> 1 is live.
    let g = graph(4, &[(0, 1), (2, 1), (3, 3)]);
    check(&g);
    let dom = DominatorTree::compute(&g);
    assert!(dom.is_reachable(n(1)) && !dom.is_reachable(n(2)) && !dom.is_reachable(n(3)));
    assert_eq!(idoms(&g), [None, Some(0), None, None]);
    assert!(!dom.dominates(n(2), n(2)), "unreachable nodes dominate nothing");
    assert!(!dom.dominates(n(0), n(2)));
    assert_eq!(dom.nearest_common_dominator(n(1), n(2)), None);
    assert_eq!(dom.rpo_number(n(3)), None);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(1), VX, PostDom::Unreachable, PostDom::Unreachable]);
    assert!(pd.pseudo_exits().is_empty(), "dead infinite loops are ignored");
    let lf = LoopForest::compute(&g, &dom);
    assert!(lf.is_empty(), "a dead self loop is no loop");
    assert_eq!(reachable_from(&g, [n(2)]).iter().collect::<Vec<_>>(), [1, 2]);

    // Liveness still covers dead code: var 0 is used in 2 and 1.
    let uses = [BitSet::new(2), BitSet::from_values(2, [0]), BitSet::from_values(2, [1]), BitSet::new(2)];
    let defs = [BitSet::from_values(2, [0]), BitSet::new(2), BitSet::new(2), BitSet::new(2)];
    let lv = Liveness::compute(&g, 2, |b| (&uses[b.index()], &defs[b.index()]));
    assert_eq!(lv.live_in(n(2)).iter().collect::<Vec<_>>(), [0, 1]);
    assert!(lv.live_in(n(0)).is_empty());
    reference::check_liveness(&g, 2, |b| (&uses[b.index()], &defs[b.index()])).unwrap();
}

#[test]
fn self_loop() {
    let g = graph(3, &[(0, 1), (1, 1), (1, 2)]);
    check(&g);
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), 1);
    let l = lf.loops().next().unwrap();
    assert_eq!(lf.header(l), n(1));
    assert_eq!(indices(lf.latches(l)), [1]);
    assert_eq!(indices(&lf.body(l)), [1]);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(1), node(2), VX]);
}

#[test]
fn irreducible() {
    // 0 enters the cycle 1 <-> 2 at both nodes; 2 -> 3 exits.
    let g = graph(4, &[(0, 1), (0, 2), (1, 2), (2, 1), (2, 3)]);
    check(&g);
    assert_eq!(idoms(&g), [None, Some(0), Some(0), Some(2)]);
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert!(lf.is_empty(), "the cycle has two entries: no natural loop");
    assert!(!lf.is_reducible());
    assert_eq!(lf.irreducible_edges(), [(n(2), n(1))]);
    let dfs = DepthFirst::compute(&g);
    assert!(dfs.is_retreating_edge(n(2), n(1)));
    assert!(!dfs.is_retreating_edge(n(1), n(2)));
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(ipdoms(&pd), [node(2), node(2), node(3), VX]);
}

#[test]
fn irreducible_inside_a_loop() {
    // Natural loop at 1 (latch 4) containing the irreducible pair 2 <-> 3.
    let g = graph(6, &[(0, 1), (1, 2), (1, 3), (2, 3), (3, 2), (3, 4), (4, 1), (4, 5)]);
    check(&g);
    let dom = DominatorTree::compute(&g);
    let lf = LoopForest::compute(&g, &dom);
    assert_eq!(lf.len(), 1);
    assert_eq!(indices(&lf.body(lf.loops().next().unwrap())), [1, 2, 3, 4]);
    assert_eq!(lf.irreducible_edges().len(), 1);
}

#[test]
fn single_node() {
    let g = graph(1, &[]);
    check(&g);
    let dom = DominatorTree::compute(&g);
    assert_eq!(dom.idom(n(0)), None);
    assert!(dom.dominates(n(0), n(0)));
    assert_eq!(dom.root(), Some(n(0)));
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(pd.ipdom(n(0)), VX);
    assert_eq!(indices(pd.exits()), [0]);
    assert!(LoopForest::compute(&g, &dom).is_empty());

    // With a self loop it is its own (only) loop and a pseudo-exit.
    let g = graph(1, &[(0, 0)]);
    check(&g);
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(indices(pd.pseudo_exits()), [0]);
    assert_eq!(pd.ipdom(n(0)), VX);
    let lf = LoopForest::compute(&g, &DominatorTree::compute(&g));
    assert_eq!(lf.len(), 1);
}

#[test]
fn empty_graph() {
    let g = graph(0, &[]);
    check(&g);
    let dom = DominatorTree::compute(&g);
    assert_eq!(dom.root(), None);
    assert!(dom.reverse_postorder().is_empty());
    let pd = PostDominatorTree::compute(&g);
    assert_eq!(pd.node_count(), 0);
    assert!(LoopForest::compute(&g, &dom).is_empty());
    let lv = Liveness::compute(&g, 3, |_| unreachable!());
    assert_eq!(lv.node_visits(), 0);
}

#[test]
fn duplicate_edges_and_nonzero_entry() {
    // Entry 2; both targets of 2's branch are 0; 0 -> 1 twice; 1 -> 2 back.
    let g = graph_with_entry(3, 2, &[(2, 0), (2, 0), (0, 1), (0, 1), (1, 2)]);
    check(&g);
    assert_eq!(idoms(&g), [Some(2), Some(0), None]);
    let lf = LoopForest::compute(&g, &DominatorTree::compute(&g));
    assert_eq!(lf.len(), 1);
    assert_eq!(indices(lf.latches(lf.loops().next().unwrap())), [1]);
    assert_eq!(reverse_postorder(&g), [n(2), n(0), n(1)]);
}

#[test]
fn liveness_diamond() {
    // v0 defined in 0, used in 3; v1 defined in 1 and 2, used in 3;
    // v2 used in 1 only (live into 0 from the entry).
    let g = graph(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    let vars = 3;
    let s = |vals: &[usize]| BitSet::from_values(vars, vals.iter().copied());
    let uses = [s(&[]), s(&[2]), s(&[]), s(&[0, 1])];
    let defs = [s(&[0]), s(&[1]), s(&[1]), s(&[])];
    let lv = Liveness::compute(&g, vars, |b| (&uses[b.index()], &defs[b.index()]));
    let get = |f: &dyn Fn(NodeId) -> Vec<usize>| (0..4).map(|i| f(n(i))).collect::<Vec<_>>();
    assert_eq!(get(&|b| lv.live_in(b).iter().collect()), [vec![2], vec![0, 2], vec![0], vec![0, 1]]);
    assert_eq!(get(&|b| lv.live_out(b).iter().collect()), [vec![0, 2], vec![0, 1], vec![0, 1], vec![]]);
    reference::check_liveness(&g, vars, |b| (&uses[b.index()], &defs[b.index()])).unwrap();
}

#[test]
fn liveness_around_a_loop() {
    // 0 -> 1 -> 2 -> 1, 1 -> 3. v0 defined before the loop and used after it
    // stays live through the whole loop.
    let g = graph(4, &[(0, 1), (1, 2), (2, 1), (1, 3)]);
    let s = |vals: &[usize]| BitSet::from_values(1, vals.iter().copied());
    let uses = [s(&[]), s(&[]), s(&[]), s(&[0])];
    let defs = [s(&[0]), s(&[]), s(&[]), s(&[])];
    let lv = Liveness::compute(&g, 1, |b| (&uses[b.index()], &defs[b.index()]));
    assert!(lv.live_in(n(2)).contains(0) && lv.live_out(n(2)).contains(0));
    assert!(!lv.live_in(n(0)).contains(0));
}

#[test]
fn bitset_basics() {
    let mut a = BitSet::new(130);
    assert!(a.insert(0) && a.insert(64) && a.insert(129) && !a.insert(64));
    assert_eq!(a.iter().collect::<Vec<_>>(), [0, 64, 129]);
    assert_eq!(a.count(), 3);
    let full = BitSet::full(130);
    assert_eq!(full.count(), 130);
    assert!(a.is_subset(&full));
    let mut b = full.clone();
    assert!(b.subtract(&a));
    assert_eq!(b.count(), 127);
    assert!(!b.contains(64) && b.contains(63));
    assert!(b.union_with(&a));
    assert_eq!(b, full);
    assert!(b.intersect_with(&a));
    assert_eq!(b, a);
    assert!(a.remove(129) && !a.remove(129) && !a.contains(1000));
    assert_eq!(format!("{a:?}"), "{0, 64}");
    a.clear();
    assert!(a.is_empty());
}
