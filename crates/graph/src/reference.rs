//! Slow, obviously-correct algorithms used to cross-check the fast ones.
//!
//! Everything here follows the textbook definition as literally as possible
//! (set-intersection fixpoints over `BTreeSet`s, recursive DFS, naive
//! round-robin dataflow) and works on plain node indices (`usize`). The cost
//! is at least quadratic and the DFS recurses once per level of depth, so use
//! these on graphs of up to a few thousand nodes: unit tests, fuzzing, and
//! cross-checking real CFGs from other crates.
//!
//! Predecessor lists are derived here from `successors` alone, so a [`Graph`]
//! implementation whose `predecessors` disagree with its `successors` shows
//! up as a mismatch in the `check_*` functions.
//!
//! The `check_*` functions run the fast analysis and the reference one on the
//! same graph and return `Err` with a description of the first mismatch.
//!
//! The virtual exit is represented by the index `node_count()`.

use std::collections::BTreeSet;
use std::fmt::Debug;

use cranelift_entity::EntityRef;

use crate::{BitSet, DepthFirst, DominatorTree, Graph, Liveness, LoopForest, PostDom, PostDominatorTree};

/// A set of node (or variable) indices.
pub type Set = BTreeSet<usize>;

/// The graph as plain successor/predecessor index lists.
struct Adj {
    entry: Option<usize>,
    succ: Vec<Vec<usize>>,
    pred: Vec<Vec<usize>>,
}

impl Adj {
    fn of<G: Graph>(g: &G) -> Adj {
        let n = g.node_count();
        let succ: Vec<Vec<usize>> =
            (0..n).map(|i| g.successors(G::Node::new(i)).map(|s| s.index()).collect()).collect();
        let mut pred = vec![Vec::new(); n];
        for (v, ss) in succ.iter().enumerate() {
            for &s in ss {
                pred[s].push(v);
            }
        }
        Adj { entry: (n > 0).then(|| g.entry().index()), succ, pred }
    }

    fn len(&self) -> usize {
        self.succ.len()
    }
}

/// Nodes reachable from the entry.
pub fn reachable<G: Graph>(g: &G) -> Set {
    reachable_in(&Adj::of(g))
}

fn reachable_in(a: &Adj) -> Set {
    let mut set = Set::new();
    let mut todo: Vec<usize> = a.entry.into_iter().collect();
    while let Some(v) = todo.pop() {
        if set.insert(v) {
            todo.extend(&a.succ[v]);
        }
    }
    set
}

/// Preorder and postorder of a recursive DFS from the entry, visiting
/// successors in order.
pub fn dfs_orders<G: Graph>(g: &G) -> (Vec<usize>, Vec<usize>) {
    dfs_orders_in(&Adj::of(g))
}

fn dfs_orders_in(a: &Adj) -> (Vec<usize>, Vec<usize>) {
    fn visit(a: &Adj, v: usize, seen: &mut [bool], pre: &mut Vec<usize>, post: &mut Vec<usize>) {
        seen[v] = true;
        pre.push(v);
        for &s in &a.succ[v] {
            if !seen[s] {
                visit(a, s, seen, pre, post);
            }
        }
        post.push(v);
    }
    let (mut pre, mut post) = (Vec::new(), Vec::new());
    if let Some(entry) = a.entry {
        let mut seen = vec![false; a.len()];
        visit(a, entry, &mut seen, &mut pre, &mut post);
    }
    (pre, post)
}

/// Postorder of a recursive DFS from the entry.
pub fn postorder<G: Graph>(g: &G) -> Vec<usize> {
    dfs_orders(g).1
}

/// `Dom(n) = {n} ∪ ⋂ Dom(p)` over reachable predecessors `p`, with
/// `Dom(entry) = {entry}`, iterated down from "all nodes". `None` for nodes
/// unreachable from the entry.
pub fn dominator_sets<G: Graph>(g: &G) -> Vec<Option<Set>> {
    dominator_sets_in(&Adj::of(g))
}

fn dominator_sets_in(a: &Adj) -> Vec<Option<Set>> {
    let live = reachable_in(a);
    let mut dom: Vec<Option<Set>> = (0..a.len()).map(|v| live.contains(&v).then(|| live.clone())).collect();
    let Some(entry) = a.entry else { return dom };
    dom[entry] = Some(Set::from([entry]));
    loop {
        let mut changed = false;
        for &v in &live {
            if v == entry {
                continue;
            }
            let mut new: Option<Set> = None;
            for &p in &a.pred[v] {
                if let Some(dp) = &dom[p] {
                    new = Some(match new {
                        None => dp.clone(),
                        Some(acc) => acc.intersection(dp).copied().collect(),
                    });
                }
            }
            let mut new = new.expect("reachable non-entry node has a reachable predecessor");
            new.insert(v);
            if dom[v].as_ref() != Some(&new) {
                dom[v] = Some(new);
                changed = true;
            }
        }
        if !changed {
            return dom;
        }
    }
}

/// The immediate "dominator" of each node given dominator-like sets: the
/// strict dominator `d` whose own set equals the node's strict dominators.
fn immediate_from_sets(sets: &[Option<Set>]) -> Vec<Option<usize>> {
    sets.iter()
        .enumerate()
        .map(|(v, set)| {
            let mut strict = set.clone()?;
            strict.remove(&v);
            strict.iter().copied().find(|&d| sets[d].as_ref() == Some(&strict))
        })
        .collect()
}

/// Immediate dominators from [`dominator_sets`].
pub fn immediate_dominators<G: Graph>(g: &G) -> Vec<Option<usize>> {
    immediate_from_sets(&dominator_sets(g))
}

/// Reference post-dominator information (virtual exit = `node_count`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostDominators {
    /// Real exits connected to the virtual exit.
    pub exits: Vec<usize>,
    /// Nodes connected to the virtual exit by the pseudo-exit rule.
    pub pseudo_exits: Vec<usize>,
    /// Post-dominator set of each node (may contain the virtual exit);
    /// `None` for nodes unreachable from the entry.
    pub sets: Vec<Option<Set>>,
    /// Immediate post-dominator of each node.
    pub ipdom: Vec<PostDom<usize>>,
}

/// Post-dominators by `PDom(n) = {n} ∪ ⋂ PDom(s)` over the successors of `n`
/// in the graph augmented with a virtual exit, following the crate-level
/// virtual-exit rule literally: connect the exits (`exits`, or by default
/// reachable nodes without successors), then repeatedly connect the first
/// node in DFS postorder that cannot reach the virtual exit.
pub fn post_dominators<G: Graph>(g: &G, exits: Option<&[G::Node]>) -> PostDominators {
    let exits: Option<Vec<usize>> = exits.map(|e| e.iter().map(|b| b.index()).collect());
    post_dominators_in(&Adj::of(g), exits.as_deref())
}

fn post_dominators_in(a: &Adj, exits: Option<&[usize]>) -> PostDominators {
    let n = a.len();
    let vexit = n;
    let live = reachable_in(a);
    let mut roots: Vec<usize> = match exits {
        None => live.iter().copied().filter(|&v| a.succ[v].is_empty()).collect(),
        Some(list) => {
            let mut out = Vec::new();
            for &e in list {
                if live.contains(&e) && !out.contains(&e) {
                    out.push(e);
                }
            }
            out
        }
    };
    let exit_count = roots.len();
    let po = dfs_orders_in(a).1;
    loop {
        // Nodes that can reach a root: grow until stable.
        let mut reach: Set = roots.iter().copied().collect();
        loop {
            let before = reach.len();
            for &v in &live {
                if a.succ[v].iter().any(|s| reach.contains(s)) {
                    reach.insert(v);
                }
            }
            if reach.len() == before {
                break;
            }
        }
        match po.iter().find(|v| !reach.contains(v)) {
            Some(&v) => roots.push(v),
            None => break,
        }
    }

    let aug_succs = |v: usize| -> Vec<usize> {
        let mut s = a.succ[v].clone();
        if roots.contains(&v) {
            s.push(vexit);
        }
        s
    };
    let mut all = live.clone();
    all.insert(vexit);
    let mut sets: Vec<Option<Set>> = (0..=n).map(|v| all.contains(&v).then(|| all.clone())).collect();
    sets[vexit] = Some(Set::from([vexit]));
    loop {
        let mut changed = false;
        for &v in &live {
            let mut new: Option<Set> = None;
            for s in aug_succs(v) {
                let ds = sets[s].as_ref().expect("successor of a reachable node is reachable");
                new = Some(match new {
                    None => ds.clone(),
                    Some(acc) => acc.intersection(ds).copied().collect(),
                });
            }
            let mut new = new.expect("every reachable node reaches the virtual exit");
            new.insert(v);
            if sets[v].as_ref() != Some(&new) {
                sets[v] = Some(new);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let imm = immediate_from_sets(&sets);
    let ipdom = (0..n)
        .map(|v| match imm[v] {
            _ if !live.contains(&v) => PostDom::Unreachable,
            Some(d) if d == vexit => PostDom::VirtualExit,
            Some(d) => PostDom::Node(d),
            None => unreachable!("every reachable node has a strict post-dominator"),
        })
        .collect();
    sets.truncate(n);
    PostDominators { pseudo_exits: roots[exit_count..].to_vec(), exits: roots[..exit_count].to_vec(), sets, ipdom }
}

/// A natural loop computed by definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NaturalLoop {
    /// The loop header.
    pub header: usize,
    /// Tails of back edges into the header.
    pub latches: Set,
    /// Header plus every node that reaches a latch without passing the header.
    pub body: Set,
    /// Header of the smallest other loop whose body contains this header.
    pub parent: Option<usize>,
    /// Number of loops whose body contains the header (this one included).
    pub depth: u32,
}

/// Natural loops by definition, sorted by header index.
pub fn natural_loops<G: Graph>(g: &G) -> Vec<NaturalLoop> {
    let a = Adj::of(g);
    natural_loops_in(&a, &dominator_sets_in(&a))
}

fn natural_loops_in(a: &Adj, dom: &[Option<Set>]) -> Vec<NaturalLoop> {
    let mut loops: Vec<NaturalLoop> = Vec::new();
    for t in 0..a.len() {
        let Some(dt) = &dom[t] else { continue };
        for &h in &a.succ[t] {
            if !dt.contains(&h) {
                continue;
            }
            let idx = match loops.iter().position(|l| l.header == h) {
                Some(i) => i,
                None => {
                    loops.push(NaturalLoop {
                        header: h,
                        latches: Set::new(),
                        body: Set::from([h]),
                        parent: None,
                        depth: 0,
                    });
                    loops.len() - 1
                }
            };
            let lp = &mut loops[idx];
            lp.latches.insert(t);
            // Walk backwards from the latch; the header is already in the
            // body, which stops the walk there.
            let mut stack = vec![t];
            while let Some(v) = stack.pop() {
                if lp.body.insert(v) {
                    stack.extend(a.pred[v].iter().copied().filter(|&p| dom[p].is_some()));
                }
            }
        }
    }
    loops.sort_by_key(|l| l.header);
    let snapshot = loops.clone();
    for lp in &mut loops {
        let containing: Vec<&NaturalLoop> = snapshot.iter().filter(|m| m.body.contains(&lp.header)).collect();
        lp.depth = containing.len() as u32;
        lp.parent = containing.iter().filter(|m| m.header != lp.header).min_by_key(|m| m.body.len()).map(|m| m.header);
    }
    loops
}

/// Edges `t -> h` followed while `h` is on the stack of a recursive DFS from
/// the entry (retreating edges) where `h` does not dominate `t`.
pub fn irreducible_edges<G: Graph>(g: &G) -> BTreeSet<(usize, usize)> {
    let a = Adj::of(g);
    irreducible_edges_in(&a, &dominator_sets_in(&a))
}

fn irreducible_edges_in(a: &Adj, dom: &[Option<Set>]) -> BTreeSet<(usize, usize)> {
    fn visit(a: &Adj, v: usize, dom: &[Option<Set>], state: &mut [u8], out: &mut BTreeSet<(usize, usize)>) {
        state[v] = 1; // on stack
        for &s in &a.succ[v] {
            match state[s] {
                0 => visit(a, s, dom, state, out),
                1 if !dom[v].as_ref().is_some_and(|d| d.contains(&s)) => {
                    out.insert((v, s));
                }
                _ => {}
            }
        }
        state[v] = 2; // finished
    }
    let mut out = BTreeSet::new();
    if let Some(entry) = a.entry {
        let mut state = vec![0u8; a.len()];
        visit(a, entry, dom, &mut state, &mut out);
    }
    out
}

/// Liveness by round-robin iteration over all nodes until nothing changes.
/// `uses_defs(b)` gives the upward-exposed uses and the defs of `b`.
/// Returns `(live_in, live_out)`.
pub fn liveness<G: Graph>(g: &G, mut uses_defs: impl FnMut(G::Node) -> (Set, Set)) -> (Vec<Set>, Vec<Set>) {
    let a = Adj::of(g);
    let n = a.len();
    let ud: Vec<(Set, Set)> = (0..n).map(|i| uses_defs(G::Node::new(i))).collect();
    let mut live_in = vec![Set::new(); n];
    let mut live_out = vec![Set::new(); n];
    loop {
        let mut changed = false;
        // Any order reaches the same fixpoint; reverse index order merely
        // converges sooner on graphs whose edges mostly go i -> i + 1.
        for b in (0..n).rev() {
            let out: Set = a.succ[b].iter().flat_map(|&s| live_in[s].iter().copied()).collect();
            let (uses, defs) = &ud[b];
            let inn: Set = uses.union(&out.difference(defs).copied().collect()).copied().collect();
            if inn != live_in[b] || out != live_out[b] {
                live_in[b] = inn;
                live_out[b] = out;
                changed = true;
            }
        }
        if !changed {
            return (live_in, live_out);
        }
    }
}

fn name<N: EntityRef + Debug>(i: usize) -> String {
    format!("{:?}", N::new(i))
}

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// Checks [`DepthFirst`] against a recursive DFS.
pub fn check_order<G: Graph>(g: &G) -> Result<(), String>
where
    G::Node: Debug,
{
    let fast = DepthFirst::compute(g);
    let a = Adj::of(g);
    let (pre, post) = dfs_orders_in(&a);
    let idx = |v: &[G::Node]| v.iter().map(|b| b.index()).collect::<Vec<_>>();
    ensure(idx(fast.preorder()) == pre, || format!("preorder: fast {:?}, reference {pre:?}", idx(fast.preorder())))?;
    ensure(idx(fast.postorder()) == post, || {
        format!("postorder: fast {:?}, reference {post:?}", idx(fast.postorder()))
    })?;
    let live = reachable_in(&a);
    for v in 0..g.node_count() {
        let b = G::Node::new(v);
        ensure(fast.is_visited(b) == live.contains(&v), || {
            format!("visited({}): fast {}, reference {}", name::<G::Node>(v), fast.is_visited(b), !fast.is_visited(b))
        })?;
    }
    Ok(())
}

/// Checks [`DominatorTree`] (idom, reachability, reverse postorder,
/// `dominates` on all pairs, children, nearest common dominator) against
/// [`dominator_sets`]. Quadratic in the node count or worse.
pub fn check_dominators<G: Graph>(g: &G) -> Result<(), String>
where
    G::Node: Debug,
{
    check_order(g)?;
    let n = g.node_count();
    let fast = DominatorTree::compute(g);
    let a = Adj::of(g);
    let sets = dominator_sets_in(&a);
    let imm = immediate_from_sets(&sets);
    let nm = name::<G::Node>;
    let node = G::Node::new;

    let mut rpo = dfs_orders_in(&a).1;
    rpo.reverse();
    let fast_rpo: Vec<usize> = fast.reverse_postorder().iter().map(|b| b.index()).collect();
    ensure(fast_rpo == rpo, || format!("reverse postorder: fast {fast_rpo:?}, reference {rpo:?}"))?;
    for v in 0..n {
        ensure(fast.is_reachable(node(v)) == sets[v].is_some(), || {
            format!("is_reachable({}): fast {}", nm(v), fast.is_reachable(node(v)))
        })?;
        let f = fast.idom(node(v)).map(|d| d.index());
        ensure(f == imm[v], || format!("idom({}): fast {:?}, reference {:?}", nm(v), f.map(nm), imm[v].map(nm)))?;
        let kids: Vec<usize> = fast.children(node(v)).iter().map(|c| c.index()).collect();
        let want: Vec<usize> = rpo.iter().copied().filter(|&c| imm[c] == Some(v)).collect();
        ensure(kids == want, || format!("children({}): fast {kids:?}, reference {want:?}", nm(v)))?;
    }
    for a in 0..n {
        for (b, set_b) in sets.iter().enumerate() {
            let want = set_b.as_ref().is_some_and(|s| s.contains(&a));
            ensure(fast.dominates(node(a), node(b)) == want, || {
                format!("dominates({}, {}): fast {}, reference {want}", nm(a), nm(b), !want)
            })?;
            ensure(fast.strictly_dominates(node(a), node(b)) == (want && a != b), || {
                format!("strictly_dominates({}, {}) wrong", nm(a), nm(b))
            })?;
        }
    }
    // The dominators of a node form a chain (its idom chain), so the
    // nearest common dominator is the first node up a's chain that also
    // dominates b.
    for a in 0..n {
        for (b, set_b) in sets.iter().enumerate() {
            let want = match (&sets[a], set_b) {
                (Some(_), Some(sb)) => {
                    let mut x = a;
                    while !sb.contains(&x) {
                        x = imm[x].expect("the entry dominates every reachable node");
                    }
                    Some(x)
                }
                _ => None,
            };
            let f = fast.nearest_common_dominator(node(a), node(b)).map(|d| d.index());
            ensure(f == want, || {
                format!("nearest_common_dominator({}, {}): fast {f:?}, reference {want:?}", nm(a), nm(b))
            })?;
        }
    }
    Ok(())
}

/// [`check_post_dominators_with_exits`] with the default exits (reachable
/// nodes without successors).
pub fn check_post_dominators<G: Graph>(g: &G) -> Result<(), String>
where
    G::Node: Debug,
{
    check_postdom_impl(g, None)
}

/// Checks [`PostDominatorTree`] (exits, pseudo-exits, ipdom, reachability,
/// `post_dominates` on all pairs, children, nearest common post-dominator)
/// against [`post_dominators`].
pub fn check_post_dominators_with_exits<G: Graph>(g: &G, exits: &[G::Node]) -> Result<(), String>
where
    G::Node: Debug,
{
    check_postdom_impl(g, Some(exits))
}

fn check_postdom_impl<G: Graph>(g: &G, exits: Option<&[G::Node]>) -> Result<(), String>
where
    G::Node: Debug,
{
    let n = g.node_count();
    let fast = match exits {
        None => PostDominatorTree::compute(g),
        Some(e) => PostDominatorTree::compute_with_exits(g, e.iter().copied()),
    };
    let r = post_dominators(g, exits);
    let nm = name::<G::Node>;
    let node = G::Node::new;
    let show = |p: PostDom<usize>| match p {
        PostDom::Node(v) => nm(v),
        other => format!("{other:?}"),
    };
    let lower = |p: PostDom<G::Node>| match p {
        PostDom::Node(b) => PostDom::Node(b.index()),
        PostDom::VirtualExit => PostDom::VirtualExit,
        PostDom::Unreachable => PostDom::Unreachable,
    };

    let fe: Vec<usize> = fast.exits().iter().map(|b| b.index()).collect();
    ensure(fe == r.exits, || format!("exits: fast {fe:?}, reference {:?}", r.exits))?;
    let fp: Vec<usize> = fast.pseudo_exits().iter().map(|b| b.index()).collect();
    ensure(fp == r.pseudo_exits, || format!("pseudo-exits: fast {fp:?}, reference {:?}", r.pseudo_exits))?;
    for v in 0..n {
        ensure(fast.is_reachable(node(v)) == r.sets[v].is_some(), || format!("is_reachable({}) mismatch", nm(v)))?;
        let f = lower(fast.ipdom(node(v)));
        ensure(f == r.ipdom[v], || format!("ipdom({}): fast {}, reference {}", nm(v), show(f), show(r.ipdom[v])))?;
        let mut kids: Vec<usize> = fast.children(node(v)).map(|c| c.index()).collect();
        kids.sort_unstable();
        let want: Vec<usize> = (0..n).filter(|&c| r.ipdom[c] == PostDom::Node(v)).collect();
        ensure(kids == want, || format!("post-dom children({}): fast {kids:?}, reference {want:?}", nm(v)))?;
    }
    let mut roots: Vec<usize> = fast.virtual_exit_children().map(|c| c.index()).collect();
    roots.sort_unstable();
    let want: Vec<usize> = (0..n).filter(|&c| r.ipdom[c] == PostDom::VirtualExit).collect();
    ensure(roots == want, || format!("virtual exit children: fast {roots:?}, reference {want:?}"))?;
    for a in 0..n {
        for b in 0..n {
            let want = r.sets[b].as_ref().is_some_and(|s| s.contains(&a));
            ensure(fast.post_dominates(node(a), node(b)) == want, || {
                format!("post_dominates({}, {}): fast {}, reference {want}", nm(a), nm(b), !want)
            })?;
        }
    }
    // Walk up a's post-dominator chain to the first node post-dominating b.
    let imm: Vec<Option<usize>> = r
        .ipdom
        .iter()
        .map(|p| match *p {
            PostDom::Node(d) => Some(d),
            _ => None,
        })
        .collect();
    for a in 0..n {
        for (b, set_b) in r.sets.iter().enumerate() {
            let want = match (&r.sets[a], set_b) {
                (Some(_), Some(sb)) => {
                    let mut x = Some(a);
                    while let Some(v) = x.filter(|v| !sb.contains(v)) {
                        x = imm[v];
                    }
                    x.map_or(PostDom::VirtualExit, PostDom::Node)
                }
                _ => PostDom::Unreachable,
            };
            let f = lower(fast.nearest_common_post_dominator(node(a), node(b)));
            ensure(f == want, || {
                format!(
                    "nearest_common_post_dominator({}, {}): fast {}, reference {}",
                    nm(a),
                    nm(b),
                    show(f),
                    show(want)
                )
            })?;
        }
    }
    Ok(())
}

/// Checks [`LoopForest`] (headers, latches, bodies, nesting, depths,
/// innermost loop per node, containment, irreducible edges) against
/// [`natural_loops`] and [`irreducible_edges`].
pub fn check_loops<G: Graph>(g: &G) -> Result<(), String>
where
    G::Node: Debug,
{
    let n = g.node_count();
    let dom = DominatorTree::compute(g);
    let fast = LoopForest::compute(g, &dom);
    let a = Adj::of(g);
    let dom_sets = dominator_sets_in(&a);
    let want = natural_loops_in(&a, &dom_sets);
    let nm = name::<G::Node>;
    let node = G::Node::new;

    let fast_headers: Set = fast.loops().map(|l| fast.header(l).index()).collect();
    let want_headers: Set = want.iter().map(|l| l.header).collect();
    ensure(fast_headers == want_headers, || {
        format!("loop headers: fast {fast_headers:?}, reference {want_headers:?}")
    })?;
    ensure(fast.len() == want.len(), || "duplicate loop headers".to_string())?;
    for l in fast.loops() {
        let h = fast.header(l).index();
        let r = want.iter().find(|x| x.header == h).expect("same headers");
        let latches: Set = fast.latches(l).iter().map(|b| b.index()).collect();
        ensure(latches == r.latches, || {
            format!("latches of loop at {}: fast {latches:?}, reference {:?}", nm(h), r.latches)
        })?;
        let body_vec: Vec<usize> = fast.body(l).iter().map(|b| b.index()).collect();
        let body: Set = body_vec.iter().copied().collect();
        ensure(body == r.body && body.len() == body_vec.len(), || {
            format!("body of loop at {}: fast {body_vec:?}, reference {:?}", nm(h), r.body)
        })?;
        let parent = fast.parent(l).map(|p| fast.header(p).index());
        ensure(parent == r.parent, || {
            format!("parent of loop at {}: fast {:?}, reference {:?}", nm(h), parent.map(nm), r.parent.map(nm))
        })?;
        ensure(fast.parent(l).is_none_or(|p| p < l), || format!("loop at {} numbered before its parent", nm(h)))?;
        ensure(fast.depth(l) == r.depth, || {
            format!("depth of loop at {}: fast {}, reference {}", nm(h), fast.depth(l), r.depth)
        })?;
        for &c in fast.children(l) {
            ensure(fast.parent(c) == Some(l), || format!("children of loop at {} inconsistent", nm(h)))?;
        }
        ensure(fast.loop_with_header(node(h)) == Some(l), || format!("loop_with_header({}) wrong", nm(h)))?;
        for v in 0..n {
            ensure(fast.contains(l, node(v)) == r.body.contains(&v), || {
                format!("contains(loop at {}, {}) wrong", nm(h), nm(v))
            })?;
        }
    }
    for v in 0..n {
        let inner = want.iter().filter(|l| l.body.contains(&v)).min_by_key(|l| l.body.len()).map(|l| l.header);
        let f = fast.innermost_loop(node(v)).map(|l| fast.header(l).index());
        ensure(f == inner, || {
            format!("innermost loop of {}: fast header {:?}, reference {:?}", nm(v), f.map(nm), inner.map(nm))
        })?;
        let depth = want.iter().filter(|l| l.body.contains(&v)).count() as u32;
        ensure(fast.loop_depth(node(v)) == depth, || {
            format!("loop_depth({}): fast {}, reference {depth}", nm(v), fast.loop_depth(node(v)))
        })?;
        ensure(fast.is_header(node(v)) == want_headers.contains(&v), || format!("is_header({}) wrong", nm(v)))?;
    }
    let irr: Vec<(usize, usize)> = fast.irreducible_edges().iter().map(|&(t, h)| (t.index(), h.index())).collect();
    let irr_set: BTreeSet<(usize, usize)> = irr.iter().copied().collect();
    let want_irr = irreducible_edges_in(&a, &dom_sets);
    ensure(irr_set == want_irr && irr.len() == irr_set.len(), || {
        format!("irreducible edges: fast {irr:?}, reference {want_irr:?}")
    })?;
    ensure(fast.is_reducible() == want_irr.is_empty(), || "is_reducible wrong".to_string())?;
    Ok(())
}

/// Checks [`Liveness`] against the round-robin [`liveness`], for the given
/// transfer sets (`(uses, defs)` per node, domain `var_count`).
pub fn check_liveness<'a, G, F>(g: &G, var_count: usize, mut transfer: F) -> Result<(), String>
where
    G: Graph,
    G::Node: Debug,
    F: FnMut(G::Node) -> (&'a BitSet, &'a BitSet),
{
    let n = g.node_count();
    let sets: Vec<(&BitSet, &BitSet)> = (0..n).map(|i| transfer(G::Node::new(i))).collect();
    let fast = Liveness::compute(g, var_count, |b| sets[b.index()]);
    let to_set = |s: &BitSet| s.iter().collect::<Set>();
    let (want_in, want_out) = liveness(g, |b| {
        let (u, d) = sets[b.index()];
        (to_set(u), to_set(d))
    });
    for v in 0..n {
        let b = G::Node::new(v);
        let fi = to_set(fast.live_in(b));
        ensure(fi == want_in[v], || {
            format!("live_in({}): fast {fi:?}, reference {:?}", name::<G::Node>(v), want_in[v])
        })?;
        let fo = to_set(fast.live_out(b));
        ensure(fo == want_out[v], || {
            format!("live_out({}): fast {fo:?}, reference {:?}", name::<G::Node>(v), want_out[v])
        })?;
    }
    Ok(())
}

/// Runs [`check_dominators`], [`check_post_dominators`] and [`check_loops`].
pub fn check_all<G: Graph>(g: &G) -> Result<(), String>
where
    G::Node: Debug,
{
    check_dominators(g)?;
    check_post_dominators(g)?;
    check_loops(g)
}
