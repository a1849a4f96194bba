//! Implementing `Graph` for a CFG type defined outside the crate, the way the
//! IR does: typed block indices, cranelift-entity maps, per-block bitsets.

use graph::cranelift_entity::{entity_impl, EntityRef, PrimaryMap, SecondaryMap};
use graph::{reference, BitSet, DominatorTree, Graph, Liveness, PostDom, PostDominatorTree};

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Block(u32);
entity_impl!(Block, "block");

#[derive(Default)]
struct Cfg {
    succs: PrimaryMap<Block, Vec<Block>>,
    preds: SecondaryMap<Block, Vec<Block>>,
}

impl Cfg {
    fn new(count: usize, edges: &[(usize, usize)]) -> Cfg {
        let mut cfg = Cfg::default();
        for _ in 0..count {
            cfg.succs.push(Vec::new());
        }
        for &(a, b) in edges {
            let (a, b) = (Block::new(a), Block::new(b));
            cfg.succs[a].push(b);
            cfg.preds[b].push(a);
        }
        cfg
    }
}

impl Graph for Cfg {
    type Node = Block;

    fn node_count(&self) -> usize {
        self.succs.len()
    }

    fn entry(&self) -> Block {
        Block::new(0)
    }

    fn successors(&self, n: Block) -> impl Iterator<Item = Block> + '_ {
        self.succs[n].iter().copied()
    }

    fn predecessors(&self, n: Block) -> impl Iterator<Item = Block> + '_ {
        self.preds[n].iter().copied()
    }
}

#[test]
fn external_cfg_type() {
    // 0 -> 1 -> {2, 3} -> 4 -> 1 (loop), 4 -> 5 (exit)
    let cfg = Cfg::new(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)]);
    reference::check_all(&cfg).unwrap();
    let dom = DominatorTree::compute(&cfg);
    assert_eq!(dom.idom(Block::new(4)), Some(Block::new(1)));
    let pd = PostDominatorTree::compute(&cfg);
    assert_eq!(pd.ipdom(Block::new(1)), PostDom::Node(Block::new(4)));
    assert_eq!(format!("{:?}", Block::new(4)), "block4");

    let vars = 3;
    let mut uses: SecondaryMap<Block, BitSet> = SecondaryMap::with_default(BitSet::new(vars));
    let mut defs: SecondaryMap<Block, BitSet> = SecondaryMap::with_default(BitSet::new(vars));
    defs[Block::new(0)].insert(0);
    uses[Block::new(5)].insert(0);
    defs[Block::new(2)].insert(1);
    uses[Block::new(4)].insert(1);
    let lv = Liveness::compute(&cfg, vars, |b| (&uses[b], &defs[b]));
    assert!(lv.live_in(Block::new(3)).contains(0));
    assert!(lv.live_in(Block::new(3)).contains(1), "v1 flows in along 3 -> 4");
    reference::check_liveness(&cfg, vars, |b| (&uses[b], &defs[b])).unwrap();
}

#[test]
fn inconsistent_predecessors_are_caught() {
    // An implementation that forgets a predecessor edge disagrees with the
    // reference, which derives predecessors from successors.
    let mut cfg = Cfg::new(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    cfg.preds[Block::new(3)].retain(|&p| p != Block::new(2));
    assert!(reference::check_dominators(&cfg).is_err());
}
