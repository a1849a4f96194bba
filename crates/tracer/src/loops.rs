//! Finding a function's outermost loop (for `--per-iteration`) by decoding its code statically.
//!
//! The function is decoded by recursive descent from its entry within its symbol range (calls fall through,
//! indirect jumps end a path), split into basic blocks, and its natural loops are computed with the `graph`
//! crate. Every top-level loop runs iterations of the source loop (versions of it, remainder loops); each
//! arrival at a header starts an iteration, and a jump to one of its exit targets ends one.
//!
//! A loop may run its first iteration before the loop proper: gcc does so for OpenMP `collapse` loops, whose
//! first iteration computes the indices by division and the others step them. [`OuterLoop::peeled`] finds
//! such a copy on the straight path into the loop, between two tests that leave for the loop's exit, doing
//! the same kinds of memory accesses and calls as the loop body; its first block starts an iteration too.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use graph::{AdjacencyGraph, DominatorTree, EntityRef, LoopForest, NodeId};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction};

/// The loop chosen for per-iteration splitting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OuterLoop {
    pub header: u64,
    /// The header block can leave the loop and does no work but the test (a top-tested loop): its last
    /// execution is the exit test, not an iteration.
    pub header_exits: bool,
    /// Addresses outside the loop that loop blocks jump or fall to.
    pub exits: Vec<u64>,
    /// Address ranges of the loop's blocks.
    pub body: Vec<(u64, u64)>,
    /// The start of a first iteration peeled off before the loop, if there is one.
    pub peeled: Option<u64>,
}

struct Decoded {
    addr: u64,
    len: u64,
    flow: FlowControl,
    target: Option<u64>,
    /// What the instruction does that a copy of the loop body would do too: a memory access outside the
    /// stack (mnemonic and index scale) or a direct call (its target).
    work: Option<Work>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Work {
    Access(iced_x86::Mnemonic, u32),
    Call(u64),
}

fn work_of(i: &Instruction) -> Option<Work> {
    use iced_x86::{Mnemonic, OpKind, Register};
    if i.flow_control() == FlowControl::Call && i.op0_kind() == OpKind::NearBranch64 {
        return Some(Work::Call(i.near_branch_target()));
    }
    let memory = (0..i.op_count()).any(|k| i.op_kind(k) == OpKind::Memory);
    let address_only = matches!(i.mnemonic(), Mnemonic::Lea | Mnemonic::Nop);
    let stack = matches!(i.memory_base(), Register::RSP | Register::RBP) || i.is_stack_instruction();
    (memory && !address_only && !stack).then(|| Work::Access(i.mnemonic(), i.memory_index_scale()))
}

/// The top-level loops of the function at `entry` whose code is `code` (starting at `base`), largest first.
/// Each is a loop of the source's iterations: besides the loop itself, compilers emit versions of it (one for
/// unit strides, vectorized, one for the rest) and remainder loops, and only one version runs.
pub fn outer_loops(code: &[u8], base: u64, entry: u64) -> Vec<OuterLoop> {
    let end = base + code.len() as u64;
    let in_range = |a: u64| a >= base && a < end;
    let decode_at = |a: u64| -> Option<Decoded> {
        let off = usize::try_from(a.checked_sub(base)?).ok()?;
        let mut d = Decoder::with_ip(64, code.get(off..)?, a, DecoderOptions::NONE);
        let mut i = Instruction::default();
        d.decode_out(&mut i);
        if i.is_invalid() {
            return None;
        }
        let flow = i.flow_control();
        let target = match flow {
            FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch => Some(i.near_branch_target()),
            _ => None,
        };
        Some(Decoded { addr: a, len: i.len() as u64, flow, target, work: work_of(&i) })
    };
    // Recursive descent: collect instructions and leaders.
    let mut insns: BTreeMap<u64, Decoded> = BTreeMap::new();
    let mut leaders: BTreeSet<u64> = BTreeSet::new();
    let mut work = VecDeque::from([entry]);
    leaders.insert(entry);
    while let Some(mut a) = work.pop_front() {
        while in_range(a) && !insns.contains_key(&a) && insns.len() < 100_000 {
            let Some(d) = decode_at(a) else { break };
            let next = d.addr + d.len;
            let flow = d.flow;
            if let Some(t) = d.target {
                if in_range(t) {
                    leaders.insert(t);
                    work.push_back(t);
                }
            }
            insns.insert(a, d);
            match flow {
                FlowControl::ConditionalBranch => {
                    leaders.insert(next);
                    a = next;
                }
                FlowControl::UnconditionalBranch
                | FlowControl::IndirectBranch
                | FlowControl::Return
                | FlowControl::Exception
                | FlowControl::Interrupt => break,
                _ => a = next,
            }
        }
    }
    // Basic blocks.
    let mut blocks: Vec<(u64, u64)> = Vec::new(); // (start, end)
    let mut succ_addr: Vec<Vec<u64>> = Vec::new();
    for &l in &leaders {
        if !insns.contains_key(&l) {
            continue;
        }
        let mut a = l;
        let mut succ = Vec::new();
        loop {
            let d = &insns[&a];
            let next = d.addr + d.len;
            match d.flow {
                FlowControl::ConditionalBranch => {
                    succ.extend(d.target);
                    succ.push(next);
                    break;
                }
                FlowControl::UnconditionalBranch => {
                    succ.extend(d.target);
                    break;
                }
                FlowControl::IndirectBranch | FlowControl::Return | FlowControl::Exception | FlowControl::Interrupt => {
                    break
                }
                _ => {}
            }
            if leaders.contains(&next) || !insns.contains_key(&next) {
                if insns.contains_key(&next) {
                    succ.push(next);
                }
                break;
            }
            a = next;
        }
        let last = &insns[&a];
        blocks.push((l, last.addr + last.len));
        succ_addr.push(succ);
    }
    let index: BTreeMap<u64, usize> = blocks.iter().enumerate().map(|(i, b)| (b.0, i)).collect();
    let Some(&entry_node) = index.get(&entry) else { return Vec::new() };
    let mut edges = Vec::new();
    for (i, s) in succ_addr.iter().enumerate() {
        for t in s {
            if let Some(&j) = index.get(t) {
                edges.push((NodeId::new(i), NodeId::new(j)));
            }
        }
    }
    let g = AdjacencyGraph::new(blocks.len(), NodeId::new(entry_node), edges);
    let dom = DominatorTree::compute(&g);
    let forest = LoopForest::compute(&g, &dom);
    let size = |n: NodeId| {
        let (s, e) = blocks[n.index()];
        insns.range(s..e).count()
    };
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    for (i, s) in succ_addr.iter().enumerate() {
        for t in s {
            if let Some(&j) = index.get(t) {
                preds[j].push(i);
            }
        }
    }
    let cfg = Cfg { blocks: &blocks, succ: &succ_addr, preds: &preds, insns: &insns };
    let mut top: Vec<_> = forest.loops().filter(|&l| forest.parent(l).is_none()).collect();
    top.sort_by_key(|&l| {
        let size: usize = forest.body(l).into_iter().map(size).sum();
        (std::cmp::Reverse(size), blocks[forest.header(l).index()].0)
    });
    top.iter()
        .enumerate()
        .map(|(k, &l)| {
            let header = forest.header(l);
            let body = forest.body(l);
            let body_ix: Vec<usize> = body.iter().map(|b| b.index()).collect();
            let mut exits = BTreeSet::new();
            let mut header_exits = false;
            for &b in &body_ix {
                for t in &succ_addr[b] {
                    if index.get(t).is_none_or(|j| !body_ix.contains(j)) {
                        exits.insert(*t);
                        header_exits |= b == header.index();
                    }
                }
            }
            // A header that does the loop's work before its exit test (gcc -O0's OpenMP loops: the whole body,
            // then `jae exit`) runs a real iteration every time, the last included; only a header that is just
            // the test runs once more than the loop iterates.
            let header_exits = header_exits && cfg.work(&[header.index()]).is_empty();
            let peeled = if k == 0 { cfg.peeled(header.index(), &body_ix, &exits) } else { None };
            OuterLoop {
                header: blocks[header.index()].0,
                header_exits,
                exits: exits.into_iter().collect(),
                body: body.iter().map(|b| blocks[b.index()]).collect(),
                peeled,
            }
        })
        .collect()
}

struct Cfg<'a> {
    blocks: &'a [(u64, u64)],
    succ: &'a [Vec<u64>],
    preds: &'a [Vec<usize>],
    insns: &'a BTreeMap<u64, Decoded>,
}

impl Cfg<'_> {
    fn work(&self, blocks: &[usize]) -> BTreeSet<Work> {
        blocks
            .iter()
            .flat_map(|&b| self.insns.range(self.blocks[b].0..self.blocks[b].1))
            .filter_map(|(_, d)| d.work)
            .collect()
    }

    /// Whether block `b` ends in a conditional branch one of whose targets is an exit of the loop.
    fn tests_for_exit(&self, b: usize, exits: &BTreeSet<u64>) -> bool {
        let last = self.insns.range(self.blocks[b].0..self.blocks[b].1).next_back();
        last.is_some_and(|(_, d)| d.flow == FlowControl::ConditionalBranch)
            && self.succ[b].iter().any(|t| exits.contains(t))
    }

    /// The first block of a peeled first iteration. Walking back from the loop's only entry along blocks with
    /// one predecessor, the first test for the loop's exit ends the peeled copy; it starts after the next
    /// test, or at the block where paths join. The copy must do at least half of the kinds of work the loop
    /// body does (set-up code that computes a chunk's bounds does none).
    fn peeled(&self, header: usize, body: &[usize], exits: &BTreeSet<u64>) -> Option<u64> {
        let mut outside = self.preds[header].iter().filter(|p| !body.contains(p));
        let (&first, None) = (outside.next()?, outside.next()) else { return None };
        let mut chain = vec![first];
        let (mut near, mut far) = (None, None);
        while chain.len() < 32 {
            let b = *chain.last().expect("nonempty");
            if self.tests_for_exit(b, exits) {
                if near.is_some() {
                    far = Some(chain.len() - 1);
                    break;
                }
                near = Some(chain.len() - 1);
            }
            match self.preds[b].as_slice() {
                [p] if !body.contains(p) && !chain.contains(p) => chain.push(*p),
                _ => break,
            }
        }
        let peel = &chain[near?..far.unwrap_or(chain.len())];
        let body_work = self.work(body);
        let shared = self.work(peel).intersection(&body_work).count();
        let start = self.blocks[*peel.last()?].0;
        (!body_work.is_empty() && 2 * shared >= body_work.len()).then_some(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_loop_in_a_loop() {
        // f: xor eax,eax ; mov ecx,10
        // outer (0x7): mov edx,5
        // inner (0xc): add eax,edx ; dec edx ; jne inner
        //        dec ecx ; jne outer ; ret
        let code = [
            0x31, 0xc0, // 0x0 xor eax,eax
            0xb9, 0x0a, 0x00, 0x00, 0x00, // 0x2 mov ecx,10
            0xba, 0x05, 0x00, 0x00, 0x00, // 0x7 mov edx,5
            0x01, 0xd0, // 0xc add eax,edx
            0xff, 0xca, // 0xe dec edx
            0x75, 0xfa, // 0x10 jne 0xc
            0xff, 0xc9, // 0x12 dec ecx
            0x75, 0xf1, // 0x14 jne 0x7
            0xc3, // 0x16 ret
        ];
        let l = outer_loops(&code, 0x1000, 0x1000).remove(0);
        assert_eq!(l.header, 0x1007);
        assert!(!l.header_exits);
        assert_eq!(l.exits, vec![0x1016]);
    }

    #[test]
    fn top_tested_loop() {
        // 0x0 xor eax,eax ; 0x2 jmp cond(0x8)
        // 0x4 add eax,1 ; 0x7 nop
        // cond 0x8: cmp eax,10 ; 0xb jl 0x4 ; 0xd ret
        let code = [0x31, 0xc0, 0xeb, 0x04, 0x83, 0xc0, 0x01, 0x90, 0x83, 0xf8, 0x0a, 0x7c, 0xf7, 0xc3];
        let l = outer_loops(&code, 0x2000, 0x2000).remove(0);
        assert_eq!(l.header, 0x2008);
        assert!(l.header_exits);
        assert_eq!(l.exits, vec![0x200d]);
    }
}
