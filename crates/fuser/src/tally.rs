//! A warp's counters of what it executed: per block and per function, in arrays indexed by dense block number
//! ([`crate::dcfg::FnCfg::base`] + node) and graph index rather than hash maps (they are updated for every
//! block), with the numbers touched; moved into [`Stats`] when the warp ends. Also the progress reports.

use simt::{AccessKind, Coalesced, Efficiency, MemoryStats};

use crate::dcfg::Dcfgs;
use crate::lane::MemAccess;
use crate::memory::{local_offset, local_pieces, Segment, SEGMENTS};
use crate::stats::{FnStats, Stats};

pub(crate) struct Tally<'a> {
    cfg: &'a Dcfgs,
    block_eff: Vec<Efficiency>,
    blocks_touched: Vec<u32>,
    fn_stats: Vec<FnStats>,
    fns_touched: Vec<u32>,
    /// Told the thread instructions counted since it was last told, about every `progress_step` of them.
    on_progress: Option<&'a (dyn Fn(u64) + Sync)>,
    progress_step: u64,
    unreported: u64,
    scratch: Scratch,
}

/// Scratch vectors for coalescing: the pieces of accesses in the local-memory layout, and the blocks they touch.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub pieces: Vec<(u64, u32)>,
    pub blocks: Vec<(u64, u64)>,
}

impl<'a> Tally<'a> {
    pub fn new(cfg: &'a Dcfgs) -> Tally<'a> {
        Tally {
            cfg,
            block_eff: vec![Efficiency::default(); cfg.blocks()],
            blocks_touched: Vec::new(),
            fn_stats: vec![FnStats::default(); cfg.funcs.len()],
            fns_touched: Vec::new(),
            on_progress: None,
            progress_step: u64::MAX,
            unreported: 0,
            scratch: Scratch::default(),
        }
    }

    pub fn with_progress(&mut self, on_progress: &'a (dyn Fn(u64) + Sync), step: u64) {
        self.on_progress = Some(on_progress);
        self.progress_step = step.max(1);
    }

    /// Counts an executed block, node `node` of graph `slot`, for the block and its function (a warp's totals
    /// are summed from its functions' in [`Tally::flush`]).
    #[inline(always)]
    pub fn count_block(&mut self, slot: u32, node: u32, thread_insns: u64, warp_insns: u64) {
        self.count_block_only(slot, node, thread_insns, warp_insns);
        self.count_function(slot, thread_insns, warp_insns);
    }

    /// [`Tally::count_block`] without its function's count, for a caller that sums its function's blocks and
    /// counts them once ([`Tally::count_function`]).
    #[inline(always)]
    pub fn count_block_only(&mut self, slot: u32, node: u32, thread_insns: u64, warp_insns: u64) {
        self.unreported += thread_insns;
        if self.unreported >= self.progress_step {
            self.report_progress();
        }
        let dense = (self.cfg.funcs[slot as usize].base + node) as usize;
        let be = &mut self.block_eff[dense];
        if be.warp_instructions == 0 {
            self.blocks_touched.push(dense as u32);
        }
        be.thread_instructions += thread_insns;
        be.warp_instructions += warp_insns;
    }

    /// Counts instructions executed in blocks of graph `slot` for its function.
    #[inline(always)]
    pub fn count_function(&mut self, slot: u32, thread_insns: u64, warp_insns: u64) {
        let fstats = &mut self.fn_stats[slot as usize];
        if fstats.eff.warp_instructions == 0 {
            self.fns_touched.push(slot);
        }
        fstats.eff.thread_instructions += thread_insns;
        fstats.eff.warp_instructions += warp_insns;
    }

    /// The memory counters of graph `slot`'s function, and the scratch vectors to coalesce with.
    #[inline]
    pub fn fn_mem(&mut self, slot: u32) -> (&mut [MemoryStats; SEGMENTS], &mut Scratch) {
        (&mut self.fn_stats[slot as usize].mem, &mut self.scratch)
    }

    /// Counts the accesses of a block that lane `lane` ran alone, each a warp access of its own (its accesses
    /// are [`crate::lane::BlockItem::distinct`]), in transactions of `tb` bytes; stack accesses, also laid out
    /// as the local memory of warps of `ws` lanes from the lane's first stack address `stack_base`, the way
    /// [`record_warp_access`] does for any group.
    #[inline]
    pub fn lone_accesses(
        &mut self,
        slot: u32,
        accesses: &[MemAccess],
        lane: u32,
        stack_base: &mut Option<u64>,
        (tb, ws): (u32, u32),
    ) {
        let shift = tb.trailing_zeros();
        let mem = &mut self.fn_stats[slot as usize].mem;
        for m in accesses {
            if m.seg == Segment::Stack {
                let base = *stack_base.get_or_insert(m.addr);
                let access = (lane, m.addr, m.size, local_offset(base, m.addr, m.size));
                record_warp_access(mem, m.store, m.seg, std::iter::once(access), (tb, ws), &mut self.scratch);
                continue;
            }
            // One access: its transactions without coalescing (the bulk of a divergent program's accesses).
            let kind = if m.store { AccessKind::Store } else { AccessKind::Load };
            let size = u64::from(m.size);
            let transactions = if size == 0 { 0 } else { ((m.addr + size - 1) >> shift) - (m.addr >> shift) + 1 };
            mem[m.seg as usize].record(kind, &Coalesced { transactions, accesses: 1, bytes: size });
        }
    }

    #[cold]
    pub fn report_progress(&mut self) {
        if let (Some(f), n) = (self.on_progress, std::mem::take(&mut self.unreported)) {
            if n > 0 {
                f(n);
            }
        }
    }

    /// Moves the counters into `stats`, and adds the functions' up into the warp's totals.
    pub fn flush(&mut self, stats: &mut Stats) {
        for &i in &self.blocks_touched {
            let (g, node) = self.cfg.block_of(i);
            let e = std::mem::take(&mut self.block_eff[i as usize]);
            *stats.blocks.entry((g.func, g.addrs[node as usize])).or_default() += e;
        }
        for &i in &self.fns_touched {
            let f = self.cfg.funcs[i as usize].func;
            let s = std::mem::take(&mut self.fn_stats[i as usize]);
            // The warp's totals are its functions' (every block and access is counted for its function).
            stats.eff += s.eff;
            for (a, b) in stats.mem.iter_mut().zip(&s.mem) {
                *a += *b;
            }
            stats.func(f).merge(&s);
        }
        self.blocks_touched.clear();
        self.fns_touched.clear();
    }
}

/// Records one warp memory access of segment `seg`: its lanes' accesses `(lane, address, size, local offset)`
/// coalesced into transactions of `tb` bytes, and stack accesses also laid out as GPU local memory (warps of
/// `ws` lanes).
pub(crate) fn record_warp_access(
    mem: &mut [MemoryStats; SEGMENTS],
    store: bool,
    seg: Segment,
    accesses: impl Iterator<Item = (u32, u64, u16, u64)> + Clone,
    (tb, ws): (u32, u32),
    Scratch { pieces, blocks }: &mut Scratch,
) {
    let kind = if store { AccessKind::Store } else { AccessKind::Load };
    let c = simt::coalesce_with(accesses.clone().map(|a| (a.1, u32::from(a.2))), tb, blocks);
    mem[seg as usize].record(kind, &c);
    if seg == Segment::Stack {
        pieces.clear();
        for (lane, _, size, local) in accesses {
            local_pieces(local, size, lane, ws, pieces);
        }
        let mut local = simt::coalesce_with(pieces.iter().copied(), tb, blocks);
        local.accesses = c.accesses;
        local.bytes = c.bytes;
        mem[Segment::StackLocal as usize].record(kind, &local);
    }
}
