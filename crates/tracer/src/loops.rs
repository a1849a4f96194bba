//! Finding a function's outermost loop (for `--per-iteration`) by decoding its code statically.
//!
//! The function is decoded by recursive descent from its entry within its symbol range (calls fall through,
//! indirect jumps end a path), split into basic blocks, and its natural loops are computed with the `graph`
//! crate. The outermost loop is the top-level loop with the most instructions; each arrival at its header
//! starts an iteration, and a jump to one of its exit targets ends one.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use graph::{AdjacencyGraph, DominatorTree, EntityRef, LoopForest, NodeId};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction};

/// The loop chosen for per-iteration splitting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OuterLoop {
    pub header: u64,
    /// The header block can leave the loop (a top-tested loop): its last execution is the exit test, not an
    /// iteration.
    pub header_exits: bool,
    /// Addresses outside the loop that loop blocks jump or fall to.
    pub exits: Vec<u64>,
    /// Address ranges of the loop's blocks.
    pub body: Vec<(u64, u64)>,
}

struct Decoded {
    addr: u64,
    len: u64,
    flow: FlowControl,
    target: Option<u64>,
}

/// Analyses the function at `entry` whose code is `code` (starting at `base`).
pub fn outer_loop(code: &[u8], base: u64, entry: u64) -> Option<OuterLoop> {
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
        Some(Decoded { addr: a, len: i.len() as u64, flow, target })
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
    let entry_node = *index.get(&entry)?;
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
    let best = forest.loops().filter(|&l| forest.parent(l).is_none()).max_by_key(|&l| {
        (forest.body(l).into_iter().map(size).sum::<usize>(), std::cmp::Reverse(blocks[forest.header(l).index()].0))
    })?;
    let header = forest.header(best);
    let body = forest.body(best);
    let in_loop = |n: usize| body.iter().any(|b| b.index() == n);
    let mut exits = BTreeSet::new();
    let mut header_exits = false;
    for b in &body {
        for t in &succ_addr[b.index()] {
            let outside = index.get(t).is_none_or(|&j| !in_loop(j));
            if outside {
                exits.insert(*t);
                if *b == header {
                    header_exits = true;
                }
            }
        }
    }
    Some(OuterLoop {
        header: blocks[header.index()].0,
        header_exits,
        exits: exits.into_iter().collect(),
        body: body.iter().map(|b| blocks[b.index()]).collect(),
    })
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
        let l = outer_loop(&code, 0x1000, 0x1000).unwrap();
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
        let l = outer_loop(&code, 0x2000, 0x2000).unwrap();
        assert_eq!(l.header, 0x2008);
        assert!(l.header_exits);
        assert_eq!(l.exits, vec![0x200d]);
    }
}
