//! Lock-step replay of one warp (ThreadFuser, Sections II and III).
//!
//! Each lane is a cursor over one SIMT thread's items ([`crate::lane`]). The warp is a
//! [`simt::CallStack`] whose program counters are [`Pc`]s: a function and a block of that function's dynamic
//! CFG, or one of a few pseudo positions between blocks. The loop looks at the top entry `(pc, active)` and at
//! what each active lane does next:
//!
//! 1. lanes whose SIMT thread ended leave the warp ([`simt::CallStack::exit_lanes`]);
//! 2. lanes that just acquired a lock are grouped with [`simt::lock_groups`]: lanes on the same lock run their
//!    critical sections one group after another ([`simt::CallStack::serialize`]) and reconverge at the block
//!    where the lock is released (the release most lanes used at that site in the DCFG pass), lanes on
//!    different locks run together;
//! 3. lanes that return leave the frame ([`simt::CallStack::ret`]); the frame is popped when all have;
//! 4. lanes that call enter the callee ([`simt::CallStack::call`]); lanes calling different functions are split
//!    by callee and run one callee after the other, all returning to the call's return site;
//! 5. otherwise every active lane's next item is a basic block. If it is the block at `pc` the warp executes it
//!    once: the warp instructions are the block's instructions, the thread instructions the same times the
//!    active lanes, counted for the program, the warp, the function of the frame (callees excluded, as in the
//!    paper) and the block; the memory accesses are coalesced per instruction ([`crate::memory`]). Then each
//!    lane's next item says where it goes (a block, the call site, the function exit) and the warp diverges
//!    there, reconverging at the executed block's immediate post-dominator. A lane found somewhere else than
//!    the stack expects (after `longjmp`, or a return to another place than the return site) is moved to where
//!    its trace goes; such *resyncs* are counted.
//!
//! Skipped regions (system calls, excluded functions, lock spinning) are counted per function and never
//! executed by the warp.

use simt::{lock_groups, CallStack, LaneMask};
use trace::SkipKind;

use crate::dcfg::Dcfgs;
use crate::dcfg::NO_NODE;
use crate::lane::{BlockItem, Intercept, Item, Lane, Lookups, MemAccess};
use crate::memory::{local_offset, Classifier, Segment};
use crate::program::Program;
use crate::stats::{LockStats, Stats, WarpSummary, MAX_LOCK_ADDRS};
use crate::tally::{record_warp_access, Tally};

/// A position of the warp: block `node` of function `func`'s dynamic CFG, or a pseudo position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pc {
    pub func: u32,
    pub node: u32,
}

/// The function's exit: lanes there return.
pub const EXIT: u32 = u32::MAX;
/// The function's entry, before its first block: lanes go to the block their trace starts at.
pub const ENTRY: u32 = u32::MAX - 1;
/// A call site whose return site is unknown.
pub const ORPHAN_CALL: u32 = u32::MAX - 2;
/// Flag of the call site after block `node`.
pub const CALL_FLAG: u32 = 1 << 31;
/// The pseudo function below every lane's first frame.
pub const ROOT_FN: u32 = u32::MAX;
const ROOT_A: Pc = Pc { func: ROOT_FN, node: 0 };
const ROOT_B: Pc = Pc { func: ROOT_FN, node: 1 };

impl Pc {
    /// A block (not a pseudo position).
    #[inline]
    pub fn is_block(self) -> bool {
        self.func != ROOT_FN && self.node < CALL_FLAG
    }
}

/// Replay configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayConfig {
    pub warp_size: u32,
    /// Bytes per memory transaction (a power of two).
    pub transaction_bytes: u32,
    /// See [`crate::Config::fast_paths`].
    pub fast_paths: bool,
}

/// One lane's memory access of an executed block, classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneAccess {
    /// Instruction index within the translated block.
    pub insn: u16,
    pub store: bool,
    pub seg: Segment,
    pub lane: u32,
    pub addr: u64,
    pub size: u16,
    /// For stack accesses: the offset in the lane's local memory ([`crate::memory::local_offset`]).
    pub local: u64,
    /// Order of the access in the block's list (sorting keeps each lane's accesses in program order).
    pub seq: u32,
}

/// Receives what the warp executes (the Accel-Sim writer).
pub trait Sink {
    /// Block `block` (as the first active lane has it) executed by `active`; `accesses` are sorted by
    /// instruction, direction, segment and lane.
    fn block(&mut self, block: &BlockItem, active: LaneMask, accesses: &[LaneAccess]);
    /// `lanes` finished.
    fn exit(&mut self, lanes: LaneMask);
}

/// Serialized lanes of a lock site that have not reconverged yet.
#[derive(Debug)]
struct Region {
    site: (u32, u64),
    groups: Vec<LaneMask>,
    union: LaneMask,
}

/// Where a lane goes after a block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A block missing from its function's graph (at this address).
    Missing(u64),
    Pc(Pc),
    End,
}

/// Why [`Warp::run_alone`] stopped going through a lane's queued items.
enum Stop {
    /// The block at the pc has accesses the general path groups ([`Warp::execute`]).
    Execute,
    /// The lane left the stack's top entry (a reconvergence point, a call or a return): the pc is where it went.
    Moved,
    /// A lock or the end: the general path moves the lane.
    Advance,
    /// The next block is missing from its function's graph.
    Missing(u64),
}

/// A lane running alone that takes its blocks as they are decoded ([`Warp::run_alone`]): each block that is
/// where the lane goes next, is not the reconvergence point and has no accesses to group is counted at once.
struct LoneRun<'t, 'a> {
    tally: &'t mut Tally<'a>,
    stack_base: &'t mut Option<u64>,
    /// The block the lane ran last.
    pc: Pc,
    reconverge: Option<Pc>,
    lane: u32,
    geometry: (u32, u32),
    /// Instructions of the blocks taken, not yet counted for their function (graph `slot`): one function's
    /// frame runs them all, so they are counted for it once ([`LoneRun::count_function`]).
    slot: u32,
    insns: u64,
}

impl LoneRun<'_, '_> {
    fn count_function(&mut self) {
        if self.insns > 0 {
            self.tally.count_function(self.slot, self.insns, self.insns);
            self.insns = 0;
        }
    }
}

impl Intercept for LoneRun<'_, '_> {
    #[inline(always)]
    fn block(&mut self, b: &BlockItem, mem: &[MemAccess]) -> bool {
        match block_pc(b) {
            Some(p) if Some(p) != self.reconverge && p.is_block() && b.distinct => {
                let insns = u64::from(b.insns);
                if b.slot != self.slot {
                    self.count_function();
                    self.slot = b.slot;
                }
                self.insns += insns;
                self.tally.count_block_only(b.slot, p.node, insns, insns);
                self.tally.lone_accesses(b.slot, mem, self.lane, self.stack_base, self.geometry);
                self.pc = p;
                true
            }
            _ => false,
        }
    }
}

/// The state of one warp.
pub struct Warp<'a> {
    cfg: &'a Dcfgs,
    conf: ReplayConfig,
    lanes: Vec<Lane<'a>>,
    /// First stack address each lane touched (the origin of its local memory).
    stack_base: Vec<Option<u64>>,
    stack: CallStack<Pc>,
    pub stats: Stats,
    regions: Vec<Region>,
    scratch: Vec<LaneAccess>,
    /// Scratch of [`Warp::execute_columns`].
    columns: Vec<(u32, usize)>,
    targets: Vec<(Target, LaneMask)>,
    paths: Vec<(Pc, LaneMask)>,
    sink: Option<&'a mut dyn Sink>,
    /// What the warp executed, per block and function (moved into `stats` at the end), and the progress reports.
    tally: Tally<'a>,
}

impl std::fmt::Debug for Warp<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warp").field("lanes", &self.lanes.len()).field("depth", &self.stack.depth()).finish()
    }
}

/// Thread instructions a warp replays between two progress reports ([`Warp::with_progress`]).
pub const PROGRESS_STEP: u64 = 1 << 24;

/// Maximum entries of a warp's reconvergence stack (all frames): deep recursion, not loops, fills it.
pub const MAX_STACK_DEPTH: usize = 1 << 16;

impl<'a> Warp<'a> {
    /// A warp of the SIMT threads `simts` (lane `i` runs `simts[i]`).
    pub fn new(
        prog: &'a Program<'a>,
        cfg: &'a Dcfgs,
        classifier: &'a Classifier,
        conf: ReplayConfig,
        simts: &[u32],
        sink: Option<&'a mut dyn Sink>,
    ) -> Warp<'a> {
        let lookups = Lookups { cfg, classifier };
        let lanes: Vec<Lane<'a>> = simts.iter().map(|&s| Lane::new(prog, lookups, s)).collect();
        Warp::with_lanes(cfg, conf, lanes, sink)
    }

    /// A warp of the given lanes (lane `i` is `lanes[i]`).
    pub fn with_lanes(
        cfg: &'a Dcfgs,
        conf: ReplayConfig,
        lanes: Vec<Lane<'a>>,
        sink: Option<&'a mut dyn Sink>,
    ) -> Warp<'a> {
        let mask = LaneMask::full(lanes.len() as u32);
        Warp {
            cfg,
            conf,
            stack_base: vec![None; lanes.len()],
            lanes,
            stack: CallStack::with_max_depth(ROOT_A, mask, MAX_STACK_DEPTH),
            stats: Stats::default(),
            regions: Vec::new(),
            scratch: Vec::new(),
            columns: Vec::new(),
            targets: Vec::new(),
            paths: Vec::new(),
            sink,
            tally: Tally::new(cfg),
        }
    }

    /// Replays the warp to the end and returns its counters.
    pub fn run(mut self, index: u32) -> Stats {
        let lanes = self.lanes.len() as u32;
        let mut idle = 0u32;
        while let Some((pc, active)) = self.stack.top() {
            self.stats.max_depth = self.stats.max_depth.max(self.stack.depth());
            if self.conf.fast_paths && pc.is_block() && self.sink.is_none() {
                let ran = if active.count() == 1 { self.run_alone(pc, active) } else { self.run_together(pc, active) };
                match ran {
                    Ok(true) => {
                        idle = 0;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        self.fail(e);
                        break;
                    }
                }
            }
            match self.step(pc, active) {
                Ok(true) => idle = 0,
                Ok(false) => {
                    idle += 1;
                    if idle > 4 * 64 + 16 {
                        self.fail(format!("no progress at {pc:?} with lanes {active}"));
                        break;
                    }
                }
                Err(e) => {
                    self.fail(e);
                    break;
                }
            }
        }
        self.tally.report_progress();
        self.tally.flush(&mut self.stats);
        for l in &self.lanes {
            if let Some(e) = &l.error {
                self.stats.errors.push(format!("SIMT thread {}: {e}", l.simt));
            }
        }
        self.stats.warps.push(WarpSummary { index, lanes, eff: self.stats.eff });
        self.stats
    }

    /// Calls `on_progress` with the thread instructions replayed as this warp runs, about every `step` of them
    /// ([`PROGRESS_STEP`] for the analysis) and the rest at the end: a long replay of few warps shows its
    /// progress.
    pub fn with_progress(mut self, on_progress: &'a (dyn Fn(u64) + Sync), step: u64) -> Warp<'a> {
        self.tally.with_progress(on_progress, step);
        self
    }

    fn fail(&mut self, why: String) {
        let simts: Vec<u32> = self.lanes.iter().map(|l| l.simt).collect();
        self.stats.errors.push(format!("warp of SIMT threads {simts:?}: {why}; the rest of the warp is not replayed"));
    }

    /// Counts a skipped region in function `func`.
    fn skip(&mut self, func: u32, kind: SkipKind, insns: u64) {
        count_skip(&mut self.stats, func, kind, insns);
    }

    /// Consumes skipped regions and lock releases at the front of `lane`'s items.
    fn settle_lane(&mut self, lane: u32, pc: Pc) {
        loop {
            match *self.lanes[lane as usize].peek() {
                Item::Skip { kind, insns } => {
                    self.lanes[lane as usize].pop();
                    self.skip(pc.func, kind, insns);
                }
                Item::Lock { release: true, .. } => {
                    self.lanes[lane as usize].pop();
                    self.stats.lock_releases += 1;
                }
                _ => return,
            }
        }
    }

    fn lock_site(&self, pc: Pc) -> (u32, u64) {
        let addr = if pc.is_block() {
            self.cfg.func(pc.func).and_then(|f| f.addrs.get(pc.node as usize).copied()).unwrap_or(0)
        } else {
            0
        };
        (pc.func, addr)
    }

    /// One step; `Ok(true)` when an item was consumed or a block executed.
    fn step(&mut self, pc: Pc, active: LaneMask) -> Result<bool, String> {
        let mut exit = LaneMask::EMPTY;
        let mut ret = LaneMask::EMPTY;
        let mut acquire: Vec<(u32, u64)> = Vec::new();
        let mut acquire_kind = None;
        let mut call: Option<(u32, bool)> = None;
        let mut call_mask = LaneMask::EMPTY;
        let mut enter: Option<u32> = None;
        let mut enter_mask = LaneMask::EMPTY;
        let mut aligned = true;
        for lane in active {
            self.settle_lane(lane, pc);
            match *self.lanes[lane as usize].peek() {
                Item::End => exit.insert(lane),
                Item::Ret => ret.insert(lane),
                Item::Lock { kind, addr, .. } => {
                    acquire.push((lane, addr));
                    acquire_kind.get_or_insert(kind);
                }
                Item::Call { callee, tail } => {
                    if call.is_none() || call == Some((callee, tail)) {
                        call = Some((callee, tail));
                        call_mask.insert(lane);
                    }
                }
                Item::Enter { func } => {
                    if enter.is_none() || enter == Some(func) {
                        enter = Some(func);
                        enter_mask.insert(lane);
                    }
                }
                Item::Block(b) => {
                    if !at(pc, &b) {
                        aligned = false;
                    }
                }
                Item::Skip { .. } => unreachable!("skips are settled"),
            }
        }
        if !exit.is_empty() {
            for lane in exit {
                self.lanes[lane as usize].pop();
            }
            if let Some(s) = self.sink.as_deref_mut() {
                s.exit(exit);
            }
            self.stack.exit_lanes(exit);
            return Ok(true);
        }
        if !acquire.is_empty() {
            for &(lane, addr) in &acquire {
                self.lanes[lane as usize].pop();
                let site = self.lock_site(pc);
                let kind = acquire_kind.unwrap_or(trace::LockKind::Mutex);
                let l = self.stats.locks.entry(site).or_insert_with(|| LockStats::new(kind));
                l.acquisitions += 1;
                if l.addrs.len() < MAX_LOCK_ADDRS {
                    l.addrs.insert(addr);
                }
            }
            let groups = lock_groups(active, acquire.iter().copied());
            if groups.len() > 1 {
                let site = self.lock_site(pc);
                let reconverge = self
                    .cfg
                    .lock_release
                    .get(&site)
                    .copied()
                    .flatten()
                    .and_then(|a| self.cfg.node(pc.func, a))
                    .map(|node| Pc { func: pc.func, node });
                self.stack.serialize(&groups, reconverge).map_err(|e| format!("serializing a lock: {e}"))?;
                let l = self.stats.locks.get_mut(&site).expect("counted above");
                l.contended += 1;
                l.max_groups = l.max_groups.max(groups.len() as u32);
                let union = groups.iter().fold(LaneMask::EMPTY, |a, &g| a | g);
                self.regions.push(Region { site, groups, union });
            }
            return Ok(true);
        }
        if !ret.is_empty() {
            for lane in ret {
                self.lanes[lane as usize].pop();
            }
            if pc.func != ROOT_FN {
                self.stack.ret(ret);
            } else {
                self.stats.resyncs += 1;
            }
            return Ok(true);
        }
        if let Some((callee, tail)) = call {
            if pc.func != ROOT_FN && is_call_site(pc.node) {
                for lane in call_mask {
                    self.lanes[lane as usize].pop();
                }
                let return_pc = if tail { Pc { func: pc.func, node: EXIT } } else { self.return_pc(pc) };
                self.stack
                    .call(Pc { func: callee, node: ENTRY }, call_mask, return_pc)
                    .map_err(|e| format!("call: {e}"))?;
                return Ok(true);
            }
            if pc.func == ROOT_FN {
                return Err("a lane calls a function outside any frame".into());
            }
        }
        if let Some(func) = enter {
            if pc.func != ROOT_FN {
                return Err(format!("a lane starts a new outermost frame inside function {}", pc.func));
            }
            for lane in enter_mask {
                self.lanes[lane as usize].pop();
            }
            let return_pc = if pc == ROOT_A { ROOT_B } else { ROOT_A };
            self.stack.call(Pc { func, node: ENTRY }, enter_mask, return_pc).map_err(|e| format!("enter: {e}"))?;
            return Ok(true);
        }
        if !aligned || !pc.is_block() || call.is_some() {
            // Lanes are not where the stack expects them: move each where its trace goes.
            if pc.is_block() {
                self.stats.resyncs += 1;
            }
            let mut paths: Vec<(Pc, LaneMask)> = Vec::new();
            for lane in active {
                let to = match *self.lanes[lane as usize].peek() {
                    Item::Block(b) => {
                        block_pc(&b).ok_or_else(|| format!("block {:#x} missing from the DCFG", b.addr))?
                    }
                    _ => Pc { func: pc.func, node: ORPHAN_CALL },
                };
                add_path(&mut paths, to, lane);
            }
            self.stack.diverge(&paths, None).map_err(|e| e.to_string())?;
            return Ok(false);
        }
        self.execute(pc, active);
        self.advance(pc, active)?;
        Ok(true)
    }

    /// Runs blocks while one lane is active and its items are the blocks the stack expects, until the stack's
    /// top changes: [`Warp::step`] and [`Warp::advance`] for that case, without their per-step gathering of
    /// what each lane does (most steps of a divergent program are such steps). The lane's queued items are
    /// gone through in place and removed together. Returns whether it ran a block.
    fn run_alone(&mut self, start: Pc, active: LaneMask) -> Result<bool, String> {
        let lane = active.first().expect("one lane") as usize;
        // The stack's top entry keeps its place while the lane runs alone, so it is told the pc once at the end
        // (writing it per block and reading it back in the reconvergence check stalls on the store).
        let reconverge = self.stack.entries().last().and_then(|e| e.reconverge);
        if !matches!(self.lanes[lane].peek(), Item::Block(b) if at(start, b)) {
            return Ok(false);
        }
        let geometry = (self.conf.transaction_bytes, self.conf.warp_size);
        // The block at `pc` is the lane's next item (`run`), or `pc` is where the lane went after it ran.
        let mut pc = start;
        let mut run = true;
        loop {
            if self.lanes[lane].can_intercept() && self.regions.is_empty() {
                // Nothing queued (so the block at `pc` ran): the next blocks are run as they are decoded, until
                // one is not simply the next step of this run; it and what follows are queued.
                debug_assert!(!run, "the block to run is queued");
                let mut lone = LoneRun {
                    tally: &mut self.tally,
                    stack_base: &mut self.stack_base[lane],
                    pc,
                    reconverge,
                    lane: lane as u32,
                    geometry,
                    slot: NO_NODE,
                    insns: 0,
                };
                self.lanes[lane].fill_intercepted(&mut lone);
                lone.count_function();
                pc = lone.pc;
                if self.lanes[lane].queued().is_empty() {
                    continue;
                }
            }
            self.lanes[lane].peek();
            let l = &self.lanes[lane];
            let items = l.queued();
            let mut k = 0;
            let mut stop = None;
            while k < items.len() {
                match &items[k] {
                    Item::Block(b) if run => {
                        if !b.distinct {
                            // Accesses the general path groups.
                            stop = Some(Stop::Execute);
                            break;
                        }
                        let insns = u64::from(b.insns);
                        self.tally.count_block(b.slot, pc.node, insns, insns);
                        if !self.regions.is_empty() {
                            account_regions(&mut self.regions, &mut self.stats, active, insns);
                        }
                        let base = &mut self.stack_base[lane];
                        self.tally.lone_accesses(b.slot, l.mem(b), lane as u32, base, geometry);
                        run = false;
                        k += 1;
                    }
                    // Where the lane goes; a next block found here is the one the loop runs next.
                    &Item::Skip { kind, insns } => {
                        count_skip(&mut self.stats, pc.func, kind, insns);
                        k += 1;
                    }
                    Item::Block(next) => match block_pc(next) {
                        // One lane goes one way: the pc moves, and the entry is left at its reconvergence point.
                        Some(p) if Some(p) != reconverge && p.is_block() => {
                            pc = p;
                            run = true;
                        }
                        Some(p) => {
                            pc = p;
                            stop = Some(Stop::Moved);
                            break;
                        }
                        None => {
                            stop = Some(Stop::Missing(next.addr));
                            break;
                        }
                    },
                    Item::Call { .. } => {
                        pc = Pc { func: pc.func, node: pc.node | CALL_FLAG };
                        stop = Some(Stop::Moved);
                        break;
                    }
                    Item::Ret | Item::Enter { .. } => {
                        pc = Pc { func: pc.func, node: EXIT };
                        stop = Some(Stop::Moved);
                        break;
                    }
                    // Locks and the end: the general path.
                    Item::Lock { .. } | Item::End => {
                        stop = Some(Stop::Advance);
                        break;
                    }
                }
            }
            self.lanes[lane].consume(k);
            match stop {
                None => {}
                Some(Stop::Execute) => {
                    self.execute(pc, active);
                    run = false;
                }
                Some(Stop::Moved) => break,
                Some(Stop::Advance) => {
                    self.stack.set_pc(pc);
                    self.advance(pc, active)?;
                    return Ok(true);
                }
                Some(Stop::Missing(addr)) => {
                    self.stack.set_pc(pc);
                    return Err(format!("block {addr:#x} missing"));
                }
            }
        }
        self.stack.set_pc(pc);
        Ok(true)
    }

    /// Runs blocks while all active lanes are at the block the stack expects and all go on to one block, until
    /// the stack's top changes: [`Warp::step`] and [`Warp::advance`] for lanes that stay together (a loop all
    /// of them run), without building paths for a divergence that does not happen. Returns whether it ran a
    /// block.
    fn run_together(&mut self, start: Pc, active: LaneMask) -> Result<bool, String> {
        for lane in active {
            if !matches!(self.lanes[lane as usize].peek(), Item::Block(b) if at(start, b)) {
                return Ok(false);
            }
        }
        // As in `run_alone`, the stack is told the pc once at the end.
        let reconverge = self.stack.entries().last().and_then(|e| e.reconverge);
        let mut pc = start;
        loop {
            self.execute(pc, active);
            // Where the lanes go: on to one block (no skipped region, lock, call, return or end first) keeps them
            // here.
            let mut next: Option<Pc> = None;
            for lane in active {
                let to = match self.lanes[lane as usize].peek() {
                    Item::Block(b) => block_pc(b),
                    _ => None,
                };
                if to.is_none() || (next.is_some() && next != to) {
                    next = None;
                    break;
                }
                next = to;
            }
            let Some(to) = next else {
                self.stack.set_pc(pc);
                self.advance(pc, active)?;
                return Ok(true);
            };
            pc = to;
            if Some(pc) == reconverge {
                break;
            }
        }
        self.stack.set_pc(pc);
        Ok(true)
    }

    /// Where lanes calling at `pc` come back to.
    fn return_pc(&self, pc: Pc) -> Pc {
        if pc.node != ORPHAN_CALL && is_call_site(pc.node) {
            let n = pc.node & !CALL_FLAG;
            if let Some(r) = self.cfg.func(pc.func).and_then(|f| f.ret_site(n)) {
                return Pc { func: pc.func, node: r };
            }
        }
        Pc { func: pc.func, node: EXIT }
    }

    /// Runs the block at `pc` for `active` (whose next items are that block) and consumes it.
    fn execute(&mut self, pc: Pc, active: LaneMask) {
        if self.conf.fast_paths && self.sink.is_none() && self.execute_columns(pc, active) {
            return;
        }
        let mut warp_insns = 0u64;
        let mut thread_insns = 0u64;
        let mut first: Option<BlockItem> = None;
        self.scratch.clear();
        for lane in active {
            let l = &mut self.lanes[lane as usize];
            let Item::Block(b) = *l.peek() else { unreachable!("aligned lanes are at a block") };
            // Lanes reach a basic block through different translated blocks (falling into it, or jumping to
            // it): its instructions are numbered as in the first lane's, so that one instruction of all lanes
            // is one warp access.
            let renumber = first.get_or_insert(b).first.wrapping_sub(b.first);
            warp_insns = warp_insns.max(u64::from(b.insns));
            thread_insns += u64::from(b.insns);
            for m in l.mem(&b) {
                let seg = m.seg;
                let local = if seg == Segment::Stack {
                    let base = *self.stack_base[lane as usize].get_or_insert(m.addr);
                    local_offset(base, m.addr, m.size)
                } else {
                    0
                };
                self.scratch.push(LaneAccess {
                    insn: m.insn.wrapping_add(renumber),
                    store: m.store,
                    seg,
                    lane,
                    addr: m.addr,
                    size: m.size,
                    local,
                    seq: self.scratch.len() as u32,
                });
            }
        }
        let first = first.expect("an active lane");
        self.count_block(pc, first.slot, active, thread_insns, warp_insns);
        let (fmem, scratch) = self.tally.fn_mem(first.slot);
        // Memory.
        if !self.scratch.is_empty() {
            // Each lane's accesses stay in program order (the Accel-Sim writer pairs them up).
            let key = |a: &LaneAccess| (a.insn, a.store, a.seg, a.lane, a.seq);
            if !self.scratch.is_sorted_by_key(key) {
                self.scratch.sort_unstable_by_key(key);
            }
            let tb = self.conf.transaction_bytes;
            let ws = self.conf.warp_size;
            let mut i = 0;
            while i < self.scratch.len() {
                let a0 = self.scratch[i];
                let mut j = i;
                while j < self.scratch.len()
                    && (self.scratch[j].insn, self.scratch[j].store, self.scratch[j].seg) == (a0.insn, a0.store, a0.seg)
                {
                    j += 1;
                }
                let group = self.scratch[i..j].iter().map(|a| (a.lane, a.addr, a.size, a.local));
                record_warp_access(fmem, a0.store, a0.seg, group, (tb, ws), scratch);
                i = j;
            }
        }
        if let Some(s) = self.sink.as_deref_mut() {
            s.block(&first, active, &self.scratch);
        }
        for lane in active {
            self.lanes[lane as usize].pop();
        }
    }

    /// [`Warp::execute`] for lanes whose accesses line up (most blocks lanes run together): each lane's are
    /// distinct ([`BlockItem::distinct`]) and are the same instructions, directions and segments in the same
    /// order as the first lane's, so that the `j`-th accesses of all lanes make one warp access; no gathering
    /// and sorting. Returns `false`, having done nothing, otherwise.
    fn execute_columns(&mut self, pc: Pc, active: LaneMask) -> bool {
        // The active lanes and where their block's accesses start; the blocks stay in the lanes' queues.
        let mut columns = std::mem::take(&mut self.columns);
        columns.clear();
        let lanes = &self.lanes;
        let Some((lane0, first)) = active.first().and_then(|l| Some((l, lanes[l as usize].front_block()?))) else {
            self.columns = columns;
            return false;
        };
        let first_mem = lanes[lane0 as usize].mem(first);
        let (mut thread_insns, mut warp_insns) = (0u64, 0u64);
        for lane in active {
            let l = &lanes[lane as usize];
            let Some(b) = l.front_block() else {
                self.columns = columns;
                return false;
            };
            let renumber = first.first.wrapping_sub(b.first);
            let mem = l.mem(b);
            let lined_up = b.distinct
                && mem.len() == first_mem.len()
                && mem
                    .iter()
                    .zip(first_mem)
                    .all(|(m, f)| (m.insn.wrapping_add(renumber), m.store, m.seg) == (f.insn, f.store, f.seg));
            if !lined_up {
                self.columns = columns;
                return false;
            }
            thread_insns += u64::from(b.insns);
            warp_insns = warp_insns.max(u64::from(b.insns));
            columns.push((lane, l.mem_index(b)));
        }
        let accesses = first_mem.len();
        let slot = first.slot;
        self.count_block(pc, slot, active, thread_insns, warp_insns);
        let (tb, ws) = (self.conf.transaction_bytes, self.conf.warp_size);
        let lanes = &self.lanes;
        let (fmem, scratch) = self.tally.fn_mem(slot);
        for j in 0..accesses {
            let access = |&(lane, start): &(u32, usize)| lanes[lane as usize].mem_at(start + j);
            let f = access(&columns[0]);
            if f.seg == Segment::Stack {
                // A lane's first stack access sets the origin of its local memory (as the general path does).
                for col in &columns {
                    self.stack_base[col.0 as usize].get_or_insert(access(col).addr);
                }
            }
            let stack_base = &self.stack_base;
            let group = columns.iter().map(|col| {
                let m = access(col);
                let local = if m.seg == Segment::Stack {
                    local_offset(stack_base[col.0 as usize].unwrap_or(m.addr), m.addr, m.size)
                } else {
                    0
                };
                (col.0, m.addr, m.size, local)
            });
            record_warp_access(fmem, f.store, f.seg, group, (tb, ws), scratch);
        }
        for lane in active {
            self.lanes[lane as usize].consume(1);
        }
        self.columns = columns;
        true
    }

    /// Counts an executed block's instructions for the block, its function (graph `slot`) and the serialized
    /// lock regions it belongs to.
    #[inline(always)]
    fn count_block(&mut self, pc: Pc, slot: u32, active: LaneMask, thread_insns: u64, warp_insns: u64) {
        // A block with a node (the stack's pc is one) has its function's graph.
        self.tally.count_block(slot, pc.node, thread_insns, warp_insns);
        if !self.regions.is_empty() {
            account_regions(&mut self.regions, &mut self.stats, active, warp_insns);
        }
    }

    /// Where `lane` goes after a block of `pc`, consuming skipped regions on the way.
    fn target(&mut self, lane: u32, pc: Pc) -> Target {
        let mut k = 0;
        loop {
            let item = *self.lanes[lane as usize].peek_nth(k);
            match item {
                Item::Skip { kind, insns } if k == 0 => {
                    self.lanes[lane as usize].pop();
                    self.skip(pc.func, kind, insns);
                }
                Item::Skip { .. } | Item::Lock { .. } => k += 1,
                Item::Block(b) => {
                    return match block_pc(&b) {
                        Some(p) => Target::Pc(p),
                        None => Target::Missing(b.addr),
                    }
                }
                Item::Call { .. } => return Target::Pc(Pc { func: pc.func, node: pc.node | CALL_FLAG }),
                Item::Ret | Item::Enter { .. } => return Target::Pc(Pc { func: pc.func, node: EXIT }),
                Item::End => return Target::End,
            }
        }
    }

    /// Moves the lanes that executed the block at `pc` to where their traces go.
    fn advance(&mut self, pc: Pc, active: LaneMask) -> Result<(), String> {
        let mut targets = std::mem::take(&mut self.targets);
        targets.clear();
        let mut exit = LaneMask::EMPTY;
        for lane in active {
            match self.target(lane, pc) {
                Target::End => exit.insert(lane),
                t => match targets.iter_mut().find(|x| x.0 == t) {
                    Some(x) => x.1.insert(lane),
                    None => targets.push((t, LaneMask::single(lane))),
                },
            }
        }
        let mut paths = std::mem::take(&mut self.paths);
        paths.clear();
        for &(t, mask) in &targets {
            let to = match t {
                Target::Missing(addr) => return Err(format!("block {addr:#x} missing")),
                Target::Pc(p) => p,
                Target::End => continue,
            };
            match paths.iter_mut().find(|p| p.0 == to) {
                Some(p) => p.1 |= mask,
                None => paths.push((to, mask)),
            }
        }
        self.targets = targets;
        let result = self.advance_to(pc, exit, &paths);
        self.paths = paths;
        result
    }

    fn advance_to(&mut self, pc: Pc, exit: LaneMask, paths: &[(Pc, LaneMask)]) -> Result<(), String> {
        if !exit.is_empty() {
            for lane in exit {
                // Drop what is left before the end (a lock event right before it).
                while !matches!(self.lanes[lane as usize].pop(), Item::End) {}
            }
            if let Some(s) = self.sink.as_deref_mut() {
                s.exit(exit);
            }
            let rest = self.stack.exit_lanes(exit);
            if rest.is_empty() {
                return Ok(());
            }
        }
        let reconverge = self.cfg.func(pc.func).and_then(|f| f.ipdom(pc.node)).map(|node| Pc { func: pc.func, node });
        self.stack.diverge(paths, reconverge).map_err(|e| format!("divergence after {pc:?}: {e}"))
    }
}

/// Whether block `b` is the block at `pc`.
#[inline]
fn at(pc: Pc, b: &BlockItem) -> bool {
    pc.is_block() && b.func == pc.func && b.node == pc.node
}

/// The pc of block `b` (its lane looked its node up).
#[inline]
fn block_pc(b: &BlockItem) -> Option<Pc> {
    (b.node != NO_NODE).then_some(Pc { func: b.func, node: b.node })
}

/// Counts a block's warp instructions for the serialized lock `regions` it belongs to.
fn account_regions(regions: &mut Vec<Region>, stats: &mut Stats, active: LaneMask, warp_insns: u64) {
    while let Some(r) = regions.last() {
        if active.is_subset_of(r.union) {
            if let Some(k) = r.groups.iter().position(|&g| active.is_subset_of(g)) {
                let site = r.site;
                if let Some(l) = stats.locks.get_mut(&site) {
                    l.critical_warp_insns += warp_insns;
                    if k > 0 {
                        l.serialized_warp_insns += warp_insns;
                    }
                }
                return;
            }
            // Lanes of several groups together: they reconverged.
            regions.pop();
        } else if active.intersects(r.union) {
            regions.pop();
        } else {
            return;
        }
    }
}

/// Counts a skipped region in function `func`.
fn count_skip(stats: &mut Stats, func: u32, kind: SkipKind, insns: u64) {
    stats.skipped[kind as usize] += insns;
    stats.skip_regions[kind as usize] += 1;
    stats.func(func).skipped += insns;
}

fn add_path(paths: &mut Vec<(Pc, LaneMask)>, to: Pc, lane: u32) {
    match paths.iter_mut().find(|p| p.0 == to) {
        Some(p) => p.1.insert(lane),
        None => paths.push((to, LaneMask::single(lane))),
    }
}

/// Whether `node` is a call site (after a block, or [`ORPHAN_CALL`]).
#[inline]
pub fn is_call_site(node: u32) -> bool {
    node == ORPHAN_CALL || (node & CALL_FLAG != 0 && node < ORPHAN_CALL)
}
