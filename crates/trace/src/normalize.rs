//! Normalising translated blocks to basic blocks.
//!
//! The tracer records blocks as QEMU translated them. A translated block ends at every control transfer, but
//! it may stop early (page boundary, size limit, an instruction QEMU ends blocks at) and it may start in the
//! middle of code another block covers (a jump target discovered later). The leaders are therefore exactly
//! the start addresses of all recorded blocks: every jump target was entered as a block start, and every early
//! stop is followed by a block starting where it stopped. Splitting every block at every leader inside it
//! yields basic blocks that partition the executed code.

use std::collections::{HashMap, HashSet};

use crate::meta::{Block, Flow};

/// A basic block of executed code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BasicBlock {
    pub addr: u64,
    /// One past the last byte.
    pub end: u64,
    pub insns: u32,
    pub terminator: Flow,
}

/// The part of a translated block that is one basic block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BbSpan {
    pub bb: u32,
    /// Index of the span's first instruction within the translated block.
    pub first: u16,
    pub len: u16,
}

/// Basic blocks of a trace and how each translated block splits into them.
#[derive(Debug, Clone, Default)]
pub struct BasicBlocks {
    pub blocks: Vec<BasicBlock>,
    spans: Vec<Vec<BbSpan>>,
}

impl BasicBlocks {
    pub fn compute(tbs: &[Block]) -> BasicBlocks {
        let leaders: HashSet<u64> = tbs.iter().map(|b| b.addr).collect();
        let mut ids: HashMap<(u64, u64), u32> = HashMap::new();
        let mut out = BasicBlocks::default();
        for tb in tbs {
            let mut spans = Vec::new();
            let mut start = 0usize;
            for i in 1..=tb.insns.len() {
                if i < tb.insns.len() && !leaders.contains(&tb.insns[i].addr) {
                    continue;
                }
                let first = &tb.insns[start];
                let last = &tb.insns[i - 1];
                let key = (first.addr, last.addr + last.bytes.len() as u64);
                let bb = *ids.entry(key).or_insert_with(|| {
                    out.blocks.push(BasicBlock {
                        addr: key.0,
                        end: key.1,
                        insns: (i - start) as u32,
                        terminator: last.flow,
                    });
                    (out.blocks.len() - 1) as u32
                });
                spans.push(BbSpan { bb, first: start as u16, len: (i - start) as u16 });
                start = i;
            }
            out.spans.push(spans);
        }
        out
    }

    /// The basic blocks translated block `tb` executes, in order.
    pub fn spans(&self, tb: u32) -> &[BbSpan] {
        self.spans.get(tb as usize).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::Insn;

    fn tb(id: u32, addr: u64, lens: &[u8], last: Flow) -> Block {
        let mut a = addr;
        let mut insns = Vec::new();
        for (k, &l) in lens.iter().enumerate() {
            let flow = if k + 1 == lens.len() { last } else { Flow::Next };
            insns.push(Insn {
                addr: a,
                bytes: vec![0x90; l as usize],
                flow,
                atomic: false,
                mnemonic: "nop".into(),
                mem: vec![],
            });
            a += u64::from(l);
        }
        Block { id, addr, first_insn: 0, insns }
    }

    #[test]
    fn splits_at_later_leaders() {
        // Block 0 covers 0x100..0x10a; block 1 starts at 0x104 (a loop back edge into its middle).
        let tbs = [tb(0, 0x100, &[2, 2, 3, 3], Flow::CondBranch), tb(1, 0x104, &[3, 3], Flow::CondBranch)];
        let bbs = BasicBlocks::compute(&tbs);
        assert_eq!(bbs.blocks.len(), 2);
        assert_eq!(bbs.spans(0).len(), 2);
        assert_eq!(bbs.spans(0)[0], BbSpan { bb: 0, first: 0, len: 2 });
        assert_eq!(bbs.spans(0)[1], BbSpan { bb: 1, first: 2, len: 2 });
        assert_eq!(bbs.spans(1), &[BbSpan { bb: 1, first: 0, len: 2 }]);
        assert_eq!(bbs.blocks[1], BasicBlock { addr: 0x104, end: 0x10a, insns: 2, terminator: Flow::CondBranch });
    }
}
