//! Randomized cross-checks: fast analyses against the reference module on
//! thousands of seeded random graphs. A failure prints the seed and the edge
//! list, so it reproduces with `GRAPH_SEED=<seed> cargo test -p graph`.
//! `GRAPH_RANDOM_SCALE=<k>` multiplies the number of cases for a longer soak.

mod common;

use common::{edge_list, n, random_graph, random_transfer};
use graph::{reference, EntityRef, Graph};

const BASE_SEED: u64 = 0x1f2e_3d4c_5b6a_7988;

/// Runs `case` on `count` seeds; `GRAPH_SEED` replaces them by one seed.
fn for_seeds(count: u64, salt: u64, mut case: impl FnMut(u64, &mut fastrand::Rng) -> Result<(), String>) {
    let scale: u64 =
        std::env::var("GRAPH_RANDOM_SCALE").map_or(1, |s| s.parse().expect("GRAPH_RANDOM_SCALE must be a u64"));
    let count = count * scale;
    let seeds: Vec<u64> = match std::env::var("GRAPH_SEED") {
        Ok(s) => vec![s.parse().expect("GRAPH_SEED must be a u64")],
        Err(_) => (0..count).map(|i| BASE_SEED ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i).collect(),
    };
    for seed in seeds {
        let mut rng = fastrand::Rng::with_seed(seed);
        if let Err(e) = case(seed, &mut rng) {
            panic!("seed {seed}: {e}");
        }
    }
}

fn describe(g: &graph::AdjacencyGraph) -> String {
    format!("{} nodes, entry {}, edges {:?}", g.node_count(), g.entry().index(), edge_list(g))
}

#[test]
fn dominators_match_reference() {
    for_seeds(2000, 1, |_, rng| {
        let g = random_graph(rng);
        reference::check_dominators(&g).map_err(|e| format!("{e}\n{}", describe(&g)))
    });
}

#[test]
fn post_dominators_match_reference() {
    for_seeds(2000, 2, |_, rng| {
        let g = random_graph(rng);
        reference::check_post_dominators(&g).map_err(|e| format!("{e}\n{}", describe(&g)))
    });
}

#[test]
fn post_dominators_with_explicit_exits_match_reference() {
    for_seeds(1000, 3, |_, rng| {
        let g = random_graph(rng);
        let count = g.node_count();
        let exits: Vec<_> = (0..rng.usize(0..=4)).map(|_| n(rng.usize(..count))).collect();
        reference::check_post_dominators_with_exits(&g, &exits)
            .map_err(|e| format!("{e}\nexits {exits:?}\n{}", describe(&g)))
    });
}

#[test]
fn loops_match_reference() {
    for_seeds(2000, 4, |_, rng| {
        let g = random_graph(rng);
        reference::check_loops(&g).map_err(|e| format!("{e}\n{}", describe(&g)))
    });
}

#[test]
fn liveness_matches_reference() {
    for_seeds(600, 5, |_, rng| {
        let g = random_graph(rng);
        // Include domain sizes at and around word boundaries.
        let vars = [0, 1, 5, 63, 64, 65, 130][rng.usize(..7)];
        let sets = random_transfer(rng, g.node_count(), vars);
        reference::check_liveness(&g, vars, |b| {
            let (u, d) = &sets[b.index()];
            (u, d)
        })
        .map_err(|e| format!("{e}\nvars {vars}\n{}", describe(&g)))
    });
}

/// Properties that hold regardless of the reference: the pseudo-exit rule
/// only fires when some reachable node cannot reach a real exit, and every
/// pseudo-exit lies on a cycle or has no successors.
#[test]
fn pseudo_exit_properties() {
    for_seeds(2000, 6, |_, rng| {
        let g = random_graph(rng);
        let pd = graph::PostDominatorTree::compute(&g);
        let dom = graph::DominatorTree::compute(&g);
        let exits = pd.exits().to_vec();
        let all_reach_exit = (0..g.node_count()).map(n).filter(|&b| dom.is_reachable(b)).all(|b| {
            let r = graph::reachable_from(&g, [b]);
            exits.iter().any(|e| r.contains(e.index()))
        });
        if all_reach_exit != pd.pseudo_exits().is_empty() {
            return Err(format!(
                "pseudo-exits {:?} but all_reach_exit={all_reach_exit}\n{}",
                pd.pseudo_exits(),
                describe(&g)
            ));
        }
        for &p in pd.pseudo_exits() {
            // Every successor of a pseudo-exit was on the DFS stack: it
            // reaches back to p (p is a latch of some cycle through it).
            for s in g.successors(p) {
                if !graph::reachable_from(&g, [s]).contains(p.index()) {
                    return Err(format!(
                        "pseudo-exit {p:?} has successor {s:?} not on a cycle through it\n{}",
                        describe(&g)
                    ));
                }
            }
        }
        Ok(())
    });
}
