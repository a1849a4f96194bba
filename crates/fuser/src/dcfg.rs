//! Per-function dynamic control-flow graphs (ThreadFuser, Section III).
//!
//! One pass over every SIMT thread records, per function, the basic blocks executed in its frames and the
//! transfers between consecutive blocks of the same frame. A call is an edge from the calling block to its
//! return site (the block at the address after the call instruction), so a function's graph never contains
//! its callees; a frame left by a return, a tail call or the end of the SIMT thread marks its last block as an
//! exit. Each graph gets a virtual entry (node 0, with an edge to every block a frame started at) and, through
//! [`graph::PostDominatorTree::compute_with_exits`], a virtual exit: divergent lanes reconverge at the
//! immediate post-dominator of the block where they split, and at the latest at the end of the function.
//!
//! The same pass records where each lock acquired at a site is released (the reconvergence point of lanes
//! serialized on that lock) and the range of every OS thread's stack (from `rsp`-relative accesses).
//!
//! Node numbers are assigned in address order after merging the per-thread partial graphs, so the result does
//! not depend on how the pass was split across threads.

use std::collections::hash_map::Entry;

use graph::{EntityRef, Graph, NodeId, PostDom, PostDominatorTree};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use trace::NONE;

use crate::lane::{self, Item, ItemSink, NO_BB};
use crate::program::{Program, Ranges, Span, UNKNOWN_FN};

/// "No node".
pub const NO_NODE: u32 = u32::MAX;

/// How far above the highest stack address seen an OS thread's stack is assumed to reach (its callers' frames).
pub const CALLER_FRAMES: u64 = 64 << 10;

#[derive(Debug, Default, Clone)]
struct FnBuilder {
    /// Block start → end (0 for a return site that never executed).
    nodes: FxHashMap<u64, u64>,
    edges: FxHashSet<(u64, u64)>,
    entries: FxHashSet<u64>,
    exits: FxHashSet<u64>,
    /// Calling block → return site.
    ret_sites: FxHashMap<u64, u64>,
}

impl FnBuilder {
    fn merge(&mut self, o: FnBuilder) {
        for (a, e) in o.nodes {
            let x = self.nodes.entry(a).or_insert(e);
            *x = (*x).max(e);
        }
        self.edges.extend(o.edges);
        self.entries.extend(o.entries);
        self.exits.extend(o.exits);
        for (a, r) in o.ret_sites {
            self.ret_sites.entry(a).or_insert(r);
        }
    }
}

/// Partial result of the pass over some SIMT threads.
#[derive(Debug, Default, Clone)]
struct Builder {
    /// Function → index in `fns`.
    fn_index: FxHashMap<u32, u32>,
    fns: Vec<(u32, FnBuilder)>,
    /// Per basic block: the function whose frames ran it, [`MANY_FUNCS`] if several did, `NONE` if none did.
    bb_func: Vec<u32>,
    /// Per basic block: the last two (successor basic block, function index) edges recorded from it, so that
    /// a block run again after the same predecessor costs no hash-map work.
    seen: Vec<[(u32, u32); 2]>,
    /// Per translated block: the function index ([`Builder::fns`]) whose graph has all of the block's own
    /// nodes and inner edges once it ran whole in one of its frames, so that it runs again after a known
    /// transition without being cut into items ([`ItemSink::whole_block`]).
    tb_known: Vec<u32>,
    /// Acquire site (function, block) → release site (block in the same frame, or none) → times seen.
    locks: FxHashMap<(u32, u64), FxHashMap<Option<u64>, u64>>,
    /// OS thread → lowest and one-past-highest `rsp`-relative address.
    stacks: FxHashMap<u32, (u64, u64)>,
    errors: Vec<String>,
    thread_insns: u64,
}

impl Builder {
    fn merge(mut self, o: Builder) -> Builder {
        for (f, b) in o.fns {
            let i = self.func_index(f);
            self.fns[i as usize].1.merge(b);
        }
        if self.bb_func.is_empty() {
            self.bb_func = o.bb_func;
        } else {
            for (a, b) in self.bb_func.iter_mut().zip(o.bb_func) {
                *a = merge_func(*a, b);
            }
        }
        for (site, m) in o.locks {
            let x = self.locks.entry(site).or_default();
            for (r, n) in m {
                *x.entry(r).or_default() += n;
            }
        }
        for (os, (lo, hi)) in o.stacks {
            let x = self.stacks.entry(os).or_insert((lo, hi));
            x.0 = x.0.min(lo);
            x.1 = x.1.max(hi);
        }
        self.errors.extend(o.errors);
        self.thread_insns += o.thread_insns;
        self
    }

    fn func_index(&mut self, f: u32) -> u32 {
        match self.fn_index.entry(f) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                self.fns.push((f, FnBuilder::default()));
                *e.insert(self.fns.len() as u32 - 1)
            }
        }
    }

    /// Walks one SIMT thread.
    fn walk(&mut self, prog: &Program<'_>, simt: u32) {
        if self.bb_func.len() != prog.bbs.blocks.len() {
            self.bb_func = vec![NONE; prog.bbs.blocks.len()];
            self.seen = vec![[(NONE, NONE); 2]; prog.bbs.blocks.len()];
        }
        if self.tb_known.len() != prog.trace.blocks.len() {
            self.tb_known = vec![NONE; prog.trace.blocks.len()];
        }
        let os = prog.trace.simt[simt as usize].start.os;
        let walk = Walk { b: self, frames: Vec::new(), held: Vec::new(), done: false };
        let (_, walked) = lane::for_each_item(prog, simt, walk);
        if let Some(stack) = walked.stack {
            let x = self.stacks.entry(os).or_insert(stack);
            x.0 = x.0.min(stack.0);
            x.1 = x.1.max(stack.1);
        }
        if let Some(e) = walked.error {
            self.errors.push(format!("SIMT thread {simt}: {e}"));
        }
    }
}

/// A frame of the thread being walked.
struct FrameState {
    func: u32,
    /// Index of `func` in [`Builder::fns`].
    index: u32,
    /// Last block (start, end) run in this frame, and its basic block.
    last: Option<(u64, u64)>,
    last_bb: u32,
    /// A lock was acquired (or released) here; the next block of the frame is its site.
    await_acquire: Option<u64>,
    await_release: Option<(u32, u64)>,
}

impl FrameState {
    fn new(func: u32, index: u32) -> FrameState {
        FrameState { func, index, last: None, last_bb: NONE, await_acquire: None, await_release: None }
    }
}

/// The walk of one SIMT thread: takes its items as they are decoded and records them in the builder.
struct Walk<'b> {
    b: &'b mut Builder,
    frames: Vec<FrameState>,
    /// Locks held: (lock address, acquire site, frame depth).
    held: Vec<(u64, (u32, u64), usize)>,
    /// The thread ended (or a block came outside any frame): later items are ignored.
    done: bool,
}

impl ItemSink for Walk<'_> {
    #[inline]
    fn whole_block(&mut self, tb: u32, spans: &[Span]) -> bool {
        if self.done {
            return true;
        }
        let builder = &mut *self.b;
        let (Some(fr), Some(first), Some(last)) = (self.frames.last_mut(), spans.first(), spans.last()) else {
            return false;
        };
        // A lock awaiting its site, or a block or transition not recorded yet: the items' way.
        let known = builder.tb_known.get(tb as usize) == Some(&fr.index)
            && fr.await_acquire.is_none()
            && fr.await_release.is_none()
            && fr.last_bb != NONE
            && builder.seen[fr.last_bb as usize].contains(&(first.bb, fr.index));
        if !known {
            return false;
        }
        // The spans cover the whole block.
        builder.thread_insns += u64::from(last.first + last.len);
        fr.last = Some((last.addr, last.end));
        fr.last_bb = last.bb;
        true
    }

    #[inline]
    fn whole_block_done(&mut self, tb: u32) {
        if let (false, Some(fr)) = (self.done, self.frames.last()) {
            self.b.tb_known[tb as usize] = fr.index;
        }
    }

    fn push_back(&mut self, item: Item) {
        if self.done {
            return;
        }
        let frames = &mut self.frames;
        let builder = &mut *self.b;
        match item {
            Item::Enter { func } => {
                frames.push(FrameState::new(func, builder.func_index(func)));
            }
            Item::Block(b) => {
                builder.thread_insns += u64::from(b.insns);
                let depth = frames.len();
                let Some(fr) = frames.last_mut() else {
                    self.done = true;
                    return;
                };
                let known = fr.last_bb != NONE
                    && b.bb != NO_BB
                    && builder.seen[fr.last_bb as usize].contains(&(b.bb, fr.index));
                if !known {
                    let f = &mut builder.fns[fr.index as usize].1;
                    let e = f.nodes.entry(b.addr).or_insert(b.end);
                    *e = (*e).max(b.end);
                    match fr.last {
                        Some((l, _)) => {
                            f.edges.insert((l, b.addr));
                            if fr.last_bb != NONE && b.bb != NO_BB {
                                let s = &mut builder.seen[fr.last_bb as usize];
                                *s = [(b.bb, fr.index), s[0]];
                            }
                        }
                        None => {
                            f.entries.insert(b.addr);
                        }
                    }
                    if b.bb != NO_BB {
                        let x = &mut builder.bb_func[b.bb as usize];
                        *x = merge_func(*x, fr.func);
                    }
                }
                fr.last = Some((b.addr, b.end));
                fr.last_bb = if b.bb == NO_BB { NONE } else { b.bb };
                if let Some(lock) = fr.await_acquire.take() {
                    self.held.push((lock, (fr.func, b.addr), depth));
                }
                if let Some(site) = fr.await_release.take() {
                    *builder.locks.entry(site).or_default().entry(Some(b.addr)).or_default() += 1;
                }
            }
            Item::Call { callee, tail } => {
                if let Some(fr) = frames.last() {
                    if let Some((l, end)) = fr.last {
                        let f = &mut builder.fns[fr.index as usize].1;
                        if tail {
                            f.exits.insert(l);
                        } else {
                            f.nodes.entry(end).or_insert(0);
                            f.edges.insert((l, end));
                            f.ret_sites.entry(l).or_insert(end);
                        }
                    }
                }
                frames.push(FrameState::new(callee, builder.func_index(callee)));
            }
            Item::Ret => {
                if let Some(fr) = frames.pop() {
                    if let Some((l, _)) = fr.last {
                        builder.fns[fr.index as usize].1.exits.insert(l);
                    }
                }
                let depth = frames.len();
                self.held.retain(|h| h.2 <= depth);
            }
            Item::Lock { release, addr, .. } => {
                let depth = frames.len();
                if let Some(fr) = frames.last_mut() {
                    if !release {
                        fr.await_acquire = Some(addr);
                    } else if let Some(i) = self.held.iter().rposition(|h| h.0 == addr) {
                        let (_, site, d) = self.held.remove(i);
                        if d == depth {
                            fr.await_release = Some(site);
                        } else {
                            *builder.locks.entry(site).or_default().entry(None).or_default() += 1;
                        }
                    }
                }
            }
            Item::Skip { .. } => {}
            Item::End => {
                if let Some(fr) = frames.last() {
                    if let Some((l, _)) = fr.last {
                        builder.fns[fr.index as usize].1.exits.insert(l);
                    }
                }
                self.done = true;
            }
        }
    }
}

/// [`Builder::bb_func`] of a basic block run by several functions' frames.
const MANY_FUNCS: u32 = u32::MAX - 2;

fn merge_func(a: u32, b: u32) -> u32 {
    if a == NONE || a == b {
        b
    } else if b == NONE {
        a
    } else {
        MANY_FUNCS
    }
}

/// The dynamic CFG of one function, as a [`Graph`]: node 0 is the virtual entry, node `i + 1` is block `i`.
#[derive(Debug, Clone)]
pub struct FnCfg {
    pub func: u32,
    /// Dense number of node 0 among all graphs' blocks ([`Dcfgs::blocks`]).
    pub base: u32,
    /// Start address of each block, increasing.
    pub addrs: Vec<u64>,
    /// One past the end of each block (0 for a return site that never ran).
    pub ends: Vec<u64>,
    index: FxHashMap<u64, u32>,
    succ_start: Vec<u32>,
    succ: Vec<NodeId>,
    pred_start: Vec<u32>,
    pred: Vec<NodeId>,
    /// Block → immediate post-dominator block ([`NO_NODE`]: the virtual exit).
    ipdom: Vec<u32>,
    /// Calling block → return-site block ([`NO_NODE`] if the block calls nothing).
    ret_site: Vec<u32>,
    /// Blocks the function was left from.
    pub exits: Vec<u32>,
    pub edges: usize,
}

impl Graph for FnCfg {
    type Node = NodeId;

    fn node_count(&self) -> usize {
        self.addrs.len() + 1
    }

    fn entry(&self) -> NodeId {
        NodeId::new(0)
    }

    fn successors(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let i = n.index();
        self.succ[self.succ_start[i] as usize..self.succ_start[i + 1] as usize].iter().copied()
    }

    fn predecessors(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let i = n.index();
        self.pred[self.pred_start[i] as usize..self.pred_start[i + 1] as usize].iter().copied()
    }
}

fn csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<NodeId>) {
    let mut start = vec![0u32; n + 1];
    for &(a, _) in edges {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut out = vec![NodeId::new(0); edges.len()];
    for &(a, b) in edges {
        out[fill[a as usize] as usize] = NodeId::new(b as usize);
        fill[a as usize] += 1;
    }
    (start, out)
}

impl FnCfg {
    fn build(func: u32, b: FnBuilder) -> FnCfg {
        let mut nodes: Vec<(u64, u64)> = b.nodes.into_iter().collect();
        nodes.sort_unstable();
        let addrs: Vec<u64> = nodes.iter().map(|n| n.0).collect();
        let ends: Vec<u64> = nodes.iter().map(|n| n.1).collect();
        let index: FxHashMap<u64, u32> = addrs.iter().enumerate().map(|(i, &a)| (a, i as u32)).collect();
        let g = |a: u64| index.get(&a).map(|&i| i + 1);
        let mut edges: Vec<(u32, u32)> = b.edges.iter().filter_map(|&(x, y)| Some((g(x)?, g(y)?))).collect();
        let mut entries: Vec<u32> = b.entries.iter().filter_map(|&a| g(a)).collect();
        entries.sort_unstable();
        edges.extend(entries.iter().map(|&e| (0, e)));
        edges.sort_unstable();
        let n = addrs.len() + 1;
        let (succ_start, succ) = csr(n, &edges);
        let rev: Vec<(u32, u32)> = {
            let mut r: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
            r.sort_unstable();
            r
        };
        let (pred_start, pred) = csr(n, &rev);
        let mut exits: Vec<u32> = b.exits.iter().filter_map(|&a| g(a)).collect();
        exits.sort_unstable();
        let mut ret_site = vec![NO_NODE; addrs.len()];
        for (&call, &ret) in &b.ret_sites {
            if let (Some(c), Some(r)) = (g(call), g(ret)) {
                ret_site[c as usize - 1] = r - 1;
            }
        }
        let mut cfg = FnCfg {
            func,
            base: 0,
            addrs,
            ends,
            index,
            succ_start,
            succ,
            pred_start,
            pred,
            ipdom: Vec::new(),
            ret_site,
            exits: exits.iter().map(|&e| e - 1).collect(),
            edges: edges.len() - entries.len(),
        };
        let pdt = PostDominatorTree::compute_with_exits(&cfg, exits.iter().map(|&e| NodeId::new(e as usize)));
        cfg.ipdom = (1..n)
            .map(|i| match pdt.ipdom(NodeId::new(i)) {
                PostDom::Node(p) if p.index() > 0 => p.index() as u32 - 1,
                _ => NO_NODE,
            })
            .collect();
        cfg
    }

    /// The block starting at `addr`.
    #[inline]
    pub fn node(&self, addr: u64) -> Option<u32> {
        self.index.get(&addr).copied()
    }

    /// Immediate post-dominator of block `n` (`None`: the virtual exit).
    #[inline]
    pub fn ipdom(&self, n: u32) -> Option<u32> {
        self.ipdom.get(n as usize).copied().filter(|&p| p != NO_NODE)
    }

    /// Return site of calling block `n`.
    #[inline]
    pub fn ret_site(&self, n: u32) -> Option<u32> {
        self.ret_site.get(n as usize).copied().filter(|&p| p != NO_NODE)
    }

    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }
}

/// The dynamic CFGs of all functions and what else the pass found.
#[derive(Debug, Default)]
pub struct Dcfgs {
    /// The graphs, by increasing function id.
    pub funcs: Vec<FnCfg>,
    /// Function id → index in `funcs` ([`NO_NODE`]: no graph); [`UNKNOWN_FN`]'s is `unknown`.
    slots: Vec<u32>,
    unknown: u32,
    /// Per basic block ([`trace::BasicBlocks`] index): the function whose frames ran it and its node there
    /// (function [`NO_NODE`] when several functions or none did): the replay's lookup without hashing.
    bb_node: Vec<(u32, u32)>,
    /// Acquire site (function, block) → release block in the same frame (`None`: elsewhere).
    pub lock_release: FxHashMap<(u32, u64), Option<u64>>,
    /// The stacks of all OS threads.
    pub stacks: Ranges,
    /// Per OS thread: (lowest, one past highest) stack address seen.
    pub stack_of: Vec<(u32, u64, u64)>,
    /// Problems met reading event streams.
    pub errors: Vec<String>,
    /// Thread instructions seen by the pass.
    pub thread_insns: u64,
}

impl Dcfgs {
    /// Reads every SIMT thread (in parallel) and builds the graphs.
    pub fn build(prog: &Program<'_>) -> Dcfgs {
        Dcfgs::build_with_progress(prog, &|_, _| {})
    }

    /// [`Dcfgs::build`], calling `progress(SIMT threads read, all)` after each SIMT thread.
    pub fn build_with_progress(prog: &Program<'_>, progress: &(dyn Fn(u64, u64) + Sync)) -> Dcfgs {
        let n = prog.trace.simt.len() as u32;
        let done = std::sync::atomic::AtomicU64::new(0);
        let b = (0..n)
            .into_par_iter()
            .fold(Builder::default, |mut b, s| {
                b.walk(prog, s);
                let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(d, u64::from(n));
                b
            })
            .reduce(Builder::default, Builder::merge);
        let mut fns: Vec<(u32, FnBuilder)> = b.fns;
        fns.sort_unstable_by_key(|f| f.0);
        let mut funcs: Vec<FnCfg> = fns.into_par_iter().map(|(f, fb)| FnCfg::build(f, fb)).collect();
        let mut base = 0u32;
        for g in &mut funcs {
            g.base = base;
            base += g.addrs.len() as u32;
        }
        let mut slots = vec![NO_NODE; prog.trace.symbols.len()];
        let mut unknown = NO_NODE;
        for (i, g) in funcs.iter().enumerate() {
            match slots.get_mut(g.func as usize) {
                Some(s) => *s = i as u32,
                None if g.func == UNKNOWN_FN => unknown = i as u32,
                None => {}
            }
        }
        let slot = |f: u32| if f == UNKNOWN_FN { Some(unknown) } else { slots.get(f as usize).copied() };
        let bb_node = b
            .bb_func
            .iter()
            .zip(&prog.bbs.blocks)
            .map(|(&f, bb)| {
                slot(f)
                    .and_then(|i| funcs.get(i as usize))
                    .and_then(|g| g.node(bb.addr))
                    .map_or((NO_NODE, NO_NODE), |n| (f, n))
            })
            .collect();
        let lock_release = b
            .locks
            .into_iter()
            .map(|(site, m)| {
                // The release most lanes used; ties go to a release in the same frame, then the lowest address.
                let best = m
                    .into_iter()
                    .max_by_key(|&(r, n)| (n, r.is_some(), std::cmp::Reverse(r.unwrap_or(0))))
                    .map(|x| x.0);
                (site, best.flatten())
            })
            .collect();
        // The red zone below the lowest `rsp` seen, and the frames above the highest: with `--function` only
        // the traced function's frames are seen, and its callers' (an OpenMP loop's shared variables, a worker's
        // arguments) lie above them.
        let mut stack_of: Vec<(u32, u64, u64)> = b.stacks.iter().map(|(&os, &(lo, hi))| (os, lo, hi)).collect();
        stack_of.sort_unstable();
        let stacks = Ranges::new(
            stack_of.iter().map(|&(_, lo, hi)| (lo.saturating_sub(128), hi.saturating_add(CALLER_FRAMES))).collect(),
        );
        let mut errors = b.errors;
        errors.sort();
        Dcfgs { funcs, slots, unknown, bb_node, lock_release, stacks, stack_of, errors, thread_insns: b.thread_insns }
    }

    /// The index in `funcs` of function `f`'s graph.
    #[inline]
    pub fn slot(&self, f: u32) -> Option<u32> {
        let i = if f == UNKNOWN_FN { self.unknown } else { *self.slots.get(f as usize)? };
        (i != NO_NODE).then_some(i)
    }

    /// The graph of function `f`.
    #[inline]
    pub fn func(&self, f: u32) -> Option<&FnCfg> {
        self.funcs.get(self.slot(f)? as usize)
    }

    /// Block of function `f` starting at `addr`.
    #[inline]
    pub fn node(&self, f: u32, addr: u64) -> Option<u32> {
        self.func(f)?.node(addr)
    }

    /// The node of basic block `bb` ([`crate::lane::BlockItem::bb`]) when function `f`'s frame runs it: one
    /// array lookup for the blocks only one function runs, `None` otherwise (use [`Dcfgs::node`]).
    #[inline]
    pub fn bb_node(&self, f: u32, bb: u32) -> Option<u32> {
        match self.bb_node.get(bb as usize) {
            Some(&(g, n)) if g == f => Some(n),
            _ => None,
        }
    }

    /// The graph and node of dense block number `i` (see [`FnCfg::base`]).
    pub fn block_of(&self, i: u32) -> (&FnCfg, u32) {
        let k = self.funcs.partition_point(|g| g.base <= i) - 1;
        (&self.funcs[k], i - self.funcs[k].base)
    }

    /// Blocks in all graphs (the dense block numbers [`FnCfg::base`] + node run below it).
    pub fn blocks(&self) -> usize {
        self.funcs.iter().map(FnCfg::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diamond() -> FnCfg {
        // 0x10 branches to 0x20 and 0x30, which join at 0x40; 0x40 returns.
        let mut b = FnBuilder::default();
        for (a, e) in [(0x10, 0x20), (0x20, 0x30), (0x30, 0x40), (0x40, 0x50)] {
            b.nodes.insert(a, e);
        }
        b.edges.extend([(0x10, 0x20), (0x10, 0x30), (0x20, 0x40), (0x30, 0x40)]);
        b.entries.insert(0x10);
        b.exits.insert(0x40);
        FnCfg::build(7, b)
    }

    #[test]
    fn diamond_reconverges_at_the_join() {
        let g = diamond();
        assert_eq!(g.len(), 4);
        let n = |a| g.node(a).unwrap();
        assert_eq!(g.ipdom(n(0x10)), Some(n(0x40)));
        assert_eq!(g.ipdom(n(0x20)), Some(n(0x40)));
        assert_eq!(g.ipdom(n(0x40)), None, "the exit reconverges at the virtual exit");
        graph::reference::check_all(&g).unwrap();
    }

    #[test]
    fn return_sites_and_loops() {
        // 0x10 calls (return site 0x18); 0x18 loops on itself and exits to 0x30, which returns.
        let mut b = FnBuilder::default();
        for (a, e) in [(0x10, 0x18), (0x18, 0x30), (0x30, 0x31)] {
            b.nodes.insert(a, e);
        }
        b.edges.extend([(0x10, 0x18), (0x18, 0x18), (0x18, 0x30)]);
        b.ret_sites.insert(0x10, 0x18);
        b.entries.insert(0x10);
        b.exits.insert(0x30);
        let g = FnCfg::build(1, b);
        let n = |a| g.node(a).unwrap();
        assert_eq!(g.ret_site(n(0x10)), Some(n(0x18)));
        assert_eq!(g.ret_site(n(0x18)), None);
        assert_eq!(g.ipdom(n(0x18)), Some(n(0x30)));
    }
}
