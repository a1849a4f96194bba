//! The control-flow graph of a function body, as a [`graph::Graph`] over [`BlockId`]s.
//!
//! Edges: a block whose last instruction is not a terminator falls through to the next block in layout
//! order; `bra` goes to its label; `brx.idx` to every label of its `.branchtargets` table; `ret`, `exit` and
//! `trap` leave the function. A guarded (`@p`) terminator also falls through. The last block falls off the
//! end of the function, which is an implicit return.

use graph::cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;

use crate::module::{BlockId, Body, Opcode, Operand, TableTargets};

/// Successor and predecessor lists of every block; computed once from a [`Body`], never mutated.
#[derive(Clone, Debug, Default)]
pub struct Cfg {
    succs: SecondaryMap<BlockId, SmallVec<[BlockId; 2]>>,
    preds: SecondaryMap<BlockId, SmallVec<[BlockId; 2]>>,
    len: usize,
}

impl Cfg {
    pub fn compute(body: &Body) -> Cfg {
        let mut cfg = Cfg { len: body.blocks.len(), ..Cfg::default() };
        for (block, data) in body.blocks.iter() {
            let next = BlockId::new(block.index() + 1);
            let fallthrough = (next.index() < body.blocks.len()).then_some(next);
            let mut succs: SmallVec<[BlockId; 2]> = SmallVec::new();
            match data.insts.last().map(|&i| &body.insts[i]) {
                Some(inst) if inst.is_terminator() => {
                    match inst.opcode {
                        Opcode::Bra => succs.extend(inst.operands.iter().filter_map(|o| match o {
                            Operand::Label(b) => Some(*b),
                            _ => None,
                        })),
                        Opcode::Brx => {
                            for op in &inst.operands {
                                if let Operand::Table(t) = op {
                                    if let TableTargets::Branch(targets) = &body.tables[*t].targets {
                                        succs.extend(targets.iter().copied());
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                    if inst.guard.is_some() {
                        succs.extend(fallthrough);
                    }
                }
                _ => succs.extend(fallthrough),
            }
            let mut unique: SmallVec<[BlockId; 2]> = SmallVec::new();
            for s in succs {
                if !unique.contains(&s) {
                    unique.push(s);
                }
            }
            for &s in &unique {
                cfg.preds[s].push(block);
            }
            cfg.succs[block] = unique;
        }
        cfg
    }

    pub fn succs(&self, block: BlockId) -> &[BlockId] {
        &self.succs[block]
    }

    pub fn preds(&self, block: BlockId) -> &[BlockId] {
        &self.preds[block]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn edge_count(&self) -> usize {
        (0..self.len).map(|b| self.succs[BlockId::new(b)].len()).sum()
    }
}

impl graph::Graph for Cfg {
    type Node = BlockId;

    fn node_count(&self) -> usize {
        self.len
    }

    fn entry(&self) -> BlockId {
        BlockId::new(0)
    }

    fn successors(&self, n: BlockId) -> impl Iterator<Item = BlockId> + '_ {
        self.succs[n].iter().copied()
    }

    fn predecessors(&self, n: BlockId) -> impl Iterator<Item = BlockId> + '_ {
        self.preds[n].iter().copied()
    }
}
