//! Register liveness of a function body: per-block upward-exposed uses and kills, solved by the generic
//! dataflow of the `graph` crate.

use graph::{BitSet, Graph, Liveness};

use crate::cfg::Cfg;
use crate::module::{BlockId, Body};
use crate::operands::Access;

/// Upward-exposed register uses and unconditional definitions of every block.
#[derive(Clone, Debug)]
pub struct BlockUseDefs {
    pub uses: Vec<BitSet>,
    pub defs: Vec<BitSet>,
}

impl BlockUseDefs {
    pub fn compute(body: &Body) -> BlockUseDefs {
        let n = body.regs.len();
        let mut uses = Vec::with_capacity(body.blocks.len());
        let mut defs = Vec::with_capacity(body.blocks.len());
        for block in body.blocks.values() {
            let mut u = BitSet::new(n);
            let mut d = BitSet::new(n);
            for &i in &block.insts {
                let inst = &body.insts[i];
                let mut written = Vec::new();
                inst.for_each_reg(|r, access| match access {
                    Access::Read => {
                        if !d.contains(r.as_u32() as usize) {
                            u.insert(r.as_u32() as usize);
                        }
                    }
                    // Only an unguarded write kills; a guarded one may keep the old value.
                    Access::Write if inst.guard.is_none() => written.push(r),
                    Access::Write => {}
                });
                for r in written {
                    d.insert(r.as_u32() as usize);
                }
            }
            uses.push(u);
            defs.push(d);
        }
        BlockUseDefs { uses, defs }
    }

    /// Solves liveness over `cfg`.
    pub fn liveness(&self, cfg: &Cfg, reg_count: usize) -> Liveness<BlockId> {
        Liveness::compute(cfg, reg_count, |b: BlockId| {
            (&self.uses[b.as_u32() as usize], &self.defs[b.as_u32() as usize])
        })
    }
}

/// Register liveness of `body`.
pub fn liveness(body: &Body, cfg: &Cfg) -> Liveness<BlockId> {
    debug_assert_eq!(cfg.node_count(), body.blocks.len());
    BlockUseDefs::compute(body).liveness(cfg, body.regs.len())
}
