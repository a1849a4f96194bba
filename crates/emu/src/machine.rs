//! The interpreter: CTAs run one after another; inside a CTA, warps of 32 lanes run in lock-step under a
//! reconvergence stack (with call frames) until they finish or wait at a barrier; a barrier releases when
//! every thread of the CTA that has not exited has arrived.

use std::io::Write;

use device::{Dim3, ErrorKind, ExecError, LaunchConfig, LoadedModule, Location};
use ir::{FuncId, SpecialReg};
use simt::{CallStack, LaneMask};

use crate::dynstack::DynStack;
use crate::mem::{read_flat, resolve_generic, window, write_flat, GlobalMem};
use crate::stats::Collector;
use program::alu;
use program::printf;
use program::*;

mod wide;

pub use program::WARP;

mod grid;
pub use grid::Grid;
mod mbarrier;
mod warpgroup;
/// Deepest device-function call nesting before the emulator reports a stack overflow.
pub const MAX_CALL_DEPTH: usize = 256;
/// Largest per-thread local stack.
pub const MAX_LOCAL_BYTES: u64 = 1 << 20;

/// A program counter: function index in the high half, op index in the low half.
type Pc = u64;

fn pc(f: FuncId, op: u32) -> Pc {
    (u64::from(f.as_u32()) << 32) | u64::from(op)
}

fn split(pc: Pc) -> (FuncId, u32) {
    (FuncId::from_u32((pc >> 32) as u32), pc as u32)
}

/// The register file of one function invocation of a warp.
struct RegFrame {
    func: FuncId,
    regs: Vec<[u64; WARP]>,
    preds: Vec<u32>,
    /// Local-stack address of this invocation's frame.
    base: u64,
    /// Where the caller wants the return values (caller frame offsets or registers).
    rets: Vec<CallArg>,
    /// Each lane's dynamic stack pointer at the call, restored at the return (`alloca` frees there).
    dyn_sp: [u64; WARP],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpState {
    Ready,
    /// Waiting at barrier `id` for `expected` threads (0 = all threads of the CTA).
    Barrier {
        id: u32,
        expected: u32,
    },
    /// Waiting at the `wgmma.mma_async` at `at` for the rest of its warpgroup (`machine/warpgroup.rs`), with
    /// the lanes that reached it in `bar_lanes`.
    Warpgroup {
        at: Pc,
    },
    Done,
}

struct Warp {
    index: u32,
    /// `%tid` of each lane.
    tid: [Dim3; WARP],
    /// Lanes that exist (the last warp of a CTA may be partial).
    lanes: LaneMask,
    stack: CallStack<Pc>,
    frames: Vec<RegFrame>,
    /// One local stack per lane.
    local: Vec<Vec<u8>>,
    /// Top of the local stacks (the same for every lane).
    sp: u64,
    /// Each lane's dynamic stack (`alloca`).
    dynamic: DynStack,
    /// Carry flag of each lane (`add.cc` and friends).
    carry: u32,
    state: WarpState,
    /// Warp instructions issued (the emulator's `%clock`).
    clock: u64,
    /// Lanes that took part in the pending barrier, and the value each contributes to `bar.red`.
    bar_lanes: LaneMask,
    bar_values: [u64; WARP],
    bar_dst: Dst,
    bar_red: Option<AtomOp>,
    /// Where each lane's last mbarrier wait failed (`None` after one that succeeded): while lanes spin there,
    /// for a deadlock report. Lanes of different paths may spin on different objects.
    waits: [Option<WaitSite>; WARP],
}

/// An mbarrier wait that failed: the op and the object's shared offset.
#[derive(Clone, Copy, Debug)]
struct WaitSite {
    func: FuncId,
    op: u32,
    offset: u64,
}

/// Everything one launch needs.
pub struct Machine<'a> {
    pub module: &'a LoadedModule,
    pub programs: std::rc::Rc<Vec<Option<Program>>>,
    pub kernel: FuncId,
    pub config: LaunchConfig,
    pub params: &'a [u8],
    pub global: GlobalMem<'a>,
    pub shared_size: usize,
    pub stats: Option<Collector>,
    pub out: &'a mut dyn Write,
    /// The texture and surface objects the kernel's handles may name.
    pub textures: device::Textures,
    /// The device heap (`malloc`/`free` in kernels), when the runtime made one.
    pub heap: Option<std::sync::Arc<device::DeviceHeap>>,
    /// A cooperative launch: its grid workspace and spin loads (`machine/grid.rs`).
    pub grid: Option<grid::Grid>,
}

struct Cta {
    id: Dim3,
    shared: Vec<u8>,
    warps: Vec<Warp>,
    /// Threads that arrived at a barrier without waiting (`bar.arrive`), and the count they declared.
    arrivals: std::collections::HashMap<u32, (u32, u32)>,
    /// Changes of mbarrier objects so far: a round of waits that changes none made no progress.
    mbar_epoch: u64,
}

/// What a round of a CTA's warps came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Round {
    Finished,
    Progress,
    /// Every warp that ran only spun (a failed mbarrier wait, or a grid's spin load) and nothing changed.
    Quiet,
}

/// How a step of a warp ended.
enum Flow {
    Continue,
    Blocked,
    /// A wait failed: the warp stays ready, and the other warps take their turn.
    Yield,
    Done,
}

impl<'a> Machine<'a> {
    fn program(&self, f: FuncId) -> &Program {
        self.programs[f.as_u32() as usize].as_ref().expect("decoded program for every reachable function")
    }

    /// Runs every CTA of the grid, in order.
    pub fn run(&mut self) -> Result<(), ExecError> {
        if self.grid.is_some() {
            return self.run_grid();
        }
        let blocks = self.config.blocks();
        for b in 0..blocks {
            let id = self.config.grid.unflatten(b);
            self.run_cta(id)?;
        }
        Ok(())
    }

    fn new_cta(&self, id: Dim3) -> Cta {
        let threads = self.config.threads_per_block() as usize;
        let nwarps = threads.div_ceil(WARP);
        let kernel = self.program(self.kernel);
        let warps = (0..nwarps)
            .map(|w| {
                let n = (threads - w * WARP).min(WARP) as u32;
                let lanes = LaneMask::full(n);
                let frame = RegFrame {
                    func: self.kernel,
                    regs: vec![[0; WARP]; kernel.slots as usize],
                    preds: vec![0; kernel.preds as usize],
                    base: 0,
                    rets: vec![],
                    dyn_sp: [crate::dynstack::BASE; WARP],
                };
                Warp {
                    index: w as u32,
                    tid: std::array::from_fn(|l| self.thread_of(w as u32, l as u32)),
                    lanes,
                    stack: CallStack::with_max_depth(pc(self.kernel, 0), lanes, 4096),
                    frames: vec![frame],
                    local: vec![vec![0u8; kernel.frame.size as usize]; WARP],
                    sp: kernel.frame.size,
                    dynamic: DynStack::new(),
                    carry: 0,
                    state: WarpState::Ready,
                    clock: 0,
                    bar_lanes: LaneMask::EMPTY,
                    bar_values: [0; WARP],
                    bar_dst: Dst::None,
                    bar_red: None,
                    waits: [None; WARP],
                }
            })
            .collect();
        Cta { id, shared: vec![0u8; self.shared_size], warps, arrivals: Default::default(), mbar_epoch: 0 }
    }

    fn run_cta(&mut self, id: Dim3) -> Result<(), ExecError> {
        let mut cta = self.new_cta(id);
        self.count_cta(&cta);
        // Rounds in a row in which every warp that ran only spun at a failed mbarrier wait.
        let mut idle = 0;
        loop {
            match self.round(&mut cta)? {
                Round::Finished => return Ok(()),
                Round::Progress => idle = 0,
                Round::Quiet => {
                    idle += 1;
                    if idle >= program::mbarrier::IDLE_ROUNDS {
                        return Err(self.mbarrier_deadlock(&cta));
                    }
                }
            }
        }
    }

    fn count_cta(&mut self, cta: &Cta) {
        if let Some(s) = &mut self.stats {
            s.ctas += 1;
            s.warps += cta.warps.len() as u64;
        }
    }

    /// One round of a CTA: every ready warp runs until it finishes, blocks or yields; then the barriers
    /// whose threads have all arrived are released.
    fn round(&mut self, cta: &mut Cta) -> Result<Round, ExecError> {
        let mut progressed = false;
        let (epoch, mut quiet) = (cta.mbar_epoch, true);
        for w in 0..cta.warps.len() {
            if cta.warps[w].state != WarpState::Ready {
                continue;
            }
            progressed = true;
            loop {
                match self.step(cta, w)? {
                    Flow::Continue => {}
                    Flow::Yield => break,
                    Flow::Blocked => {
                        quiet = false;
                        break;
                    }
                    Flow::Done => {
                        cta.warps[w].state = WarpState::Done;
                        quiet = false;
                        break;
                    }
                }
            }
        }
        if cta.warps.iter().all(|w| w.state == WarpState::Done) {
            return Ok(Round::Finished);
        }
        if self.release_barriers(cta)? | self.release_warpgroups(cta)? {
            return Ok(Round::Progress);
        }
        if !progressed {
            if let Some(e) = self.stuck_warpgroup(cta) {
                return Err(e);
            }
            return Err(self.barrier_deadlock(cta));
        }
        Ok(if quiet && cta.mbar_epoch == epoch { Round::Quiet } else { Round::Progress })
    }

    /// Releases every barrier whose expected threads have all arrived. Returns whether any was released.
    fn release_barriers(&mut self, cta: &mut Cta) -> Result<bool, ExecError> {
        let mut released = false;
        // `bar.sync` without a thread count waits for every thread of the CTA: threads that exited never
        // arrive, and the CTA then deadlocks (reported by `barrier_deadlock`).
        let total: u32 = cta.warps.iter().map(|w| w.lanes.count()).sum();
        let mut ids: Vec<u32> = cta
            .warps
            .iter()
            .filter_map(|w| match w.state {
                WarpState::Barrier { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let waiting: Vec<usize> = (0..cta.warps.len())
                .filter(|&w| matches!(cta.warps[w].state, WarpState::Barrier { id: b, .. } if b == id))
                .collect();
            let (arrived_only, declared) = cta.arrivals.get(&id).copied().unwrap_or((0, 0));
            let arrived: u32 = waiting.iter().map(|&w| cta.warps[w].bar_lanes.count()).sum::<u32>() + arrived_only;
            let expected = waiting
                .iter()
                .find_map(|&w| match cta.warps[w].state {
                    WarpState::Barrier { expected, .. } if expected > 0 => Some(expected),
                    _ => None,
                })
                .or((declared > 0).then_some(declared))
                .unwrap_or(total);
            if arrived < expected {
                continue;
            }
            cta.arrivals.remove(&id);
            // bar.red: combine the contributions of every arrived thread.
            let red = waiting.iter().find_map(|&w| cta.warps[w].bar_red);
            let mut acc: u64 = match red {
                Some(AtomOp::And) => 1,
                _ => 0,
            };
            if let Some(op) = red {
                for &w in &waiting {
                    let warp = &cta.warps[w];
                    for lane in warp.bar_lanes.iter() {
                        let v = warp.bar_values[lane as usize];
                        acc = match op {
                            AtomOp::Popc => acc + u64::from(v != 0),
                            AtomOp::And => acc & u64::from(v != 0),
                            AtomOp::Or => acc | u64::from(v != 0),
                            _ => acc,
                        };
                    }
                }
            }
            for &w in &waiting {
                let warp = &mut cta.warps[w];
                if red.is_some() {
                    let lanes = warp.bar_lanes;
                    let dst = warp.bar_dst;
                    let frame = warp.frames.last_mut().expect("a frame");
                    let mut vals = [acc; WARP];
                    if matches!(dst, Dst::Pred(_)) {
                        vals = [u64::from(acc != 0); WARP];
                    }
                    write_dst(frame, dst, &vals, lanes);
                }
                warp.state = WarpState::Ready;
                warp.bar_lanes = LaneMask::EMPTY;
                warp.bar_red = None;
            }
            released = true;
        }
        Ok(released)
    }

    fn barrier_deadlock(&self, cta: &Cta) -> ExecError {
        let waiting: Vec<&Warp> = cta.warps.iter().filter(|w| matches!(w.state, WarpState::Barrier { .. })).collect();
        let total: u32 = cta.warps.iter().map(|w| w.lanes.count()).sum();
        let exited: u32 = total
            - cta
                .warps
                .iter()
                .filter(|w| w.state != WarpState::Done)
                .map(|w| w.stack.live_lanes().count())
                .sum::<u32>();
        let first = waiting.first();
        let (line, instruction, function) = match first.and_then(|w| w.stack.top()) {
            Some((p, _)) => {
                let (f, op) = split(p);
                let prog = self.program(f);
                let op = op.saturating_sub(1) as usize;
                match prog.ops.get(op) {
                    Some(o) => (Some(self.line(f, o)), Some(self.text(f, o)), Some(prog.name.clone())),
                    None => (None, None, Some(prog.name.clone())),
                }
            }
            None => (None, None, None),
        };
        // One clause per barrier that threads wait at.
        let mut ids: Vec<(u32, u32)> = waiting
            .iter()
            .filter_map(|w| match w.state {
                WarpState::Barrier { id, expected } => Some((id, expected)),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup_by_key(|(id, _)| *id);
        let waits: Vec<String> = ids
            .iter()
            .map(|&(id, expected)| {
                let n: u32 = waiting
                    .iter()
                    .filter(|w| matches!(w.state, WarpState::Barrier { id: b, .. } if b == id))
                    .map(|w| w.bar_lanes.count())
                    .sum::<u32>()
                    + cta.arrivals.get(&id).map_or(0, |a| a.0);
                let expected = if expected == 0 { total } else { expected };
                format!("barrier {id} reached by {n} of the {expected} threads it waits for")
            })
            .collect();
        let detail = format!(
            "{}; {exited} of the CTA's {total} threads exited without reaching it, and no other thread can arrive",
            waits.join(", ")
        );
        ExecError::new(
            ErrorKind::BarrierDivergence(detail),
            Location {
                kernel: self.program(self.kernel).name.clone(),
                function,
                block: Some(cta.id),
                thread: first.map(|w| self.thread_of(w.index, w.bar_lanes.first().unwrap_or(0))),
                line,
                instruction,
            },
        )
    }

    fn thread_of(&self, warp: u32, lane: u32) -> Dim3 {
        self.config.block.unflatten(u64::from(warp) * WARP as u64 + u64::from(lane))
    }

    fn line(&self, f: FuncId, op: &Op) -> u32 {
        program::inst_line(&self.module.module, f, op.inst)
    }

    /// The instruction as the user wrote it (or as the printer spells it, for a module built without text).
    fn text(&self, f: FuncId, op: &Op) -> String {
        program::inst_text(&self.module.module, f, op.inst)
    }

    fn error(&self, cta: &Cta, w: usize, lane: u32, f: FuncId, op: &Op, kind: ErrorKind) -> ExecError {
        ExecError::new(
            kind,
            Location {
                kernel: self.program(self.kernel).name.clone(),
                function: Some(self.program(f).name.clone()),
                block: Some(cta.id),
                thread: Some(self.thread_of(cta.warps[w].index, lane)),
                line: Some(self.line(f, op)),
                instruction: Some(self.text(f, op)),
            },
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn access_error(&self, cta: &Cta, w: usize, lane: u32, f: FuncId, op: &Op, space: Space, e: MemFault) -> ExecError {
        let dspace = match space {
            Space::Global => device::Space::Global,
            Space::Shared => device::Space::Shared,
            Space::Local => device::Space::Local,
            Space::Const => device::Space::Const,
            Space::Param => device::Space::Param,
            Space::Generic => device::Space::Generic,
        };
        let kind = match e {
            MemFault::Bounds { address, size, detail } => {
                ErrorKind::OutOfBounds { space: dspace, address, size, detail }
            }
            MemFault::Misaligned { address, size } => ErrorKind::Misaligned { space: dspace, address, size },
            MemFault::ReadOnly { address } => ErrorKind::ReadOnly { space: dspace, address },
        };
        self.error(cta, w, lane, f, op, kind)
    }

    /// Executes one warp instruction.
    fn step(&mut self, cta: &mut Cta, w: usize) -> Result<Flow, ExecError> {
        let Some((pc_now, active)) = cta.warps[w].stack.top() else { return Ok(Flow::Done) };
        let (f, opi) = split(pc_now);
        let programs = self.programs.clone();
        let prog = programs[f.as_u32() as usize].as_ref().expect("program");
        self.exec(cta, w, prog, f, opi, active)
    }

    fn exec(
        &mut self,
        cta: &mut Cta,
        w: usize,
        prog: &Program,
        f: FuncId,
        opi: u32,
        active: LaneMask,
    ) -> Result<Flow, ExecError> {
        let Some(op) = prog.ops.get(opi as usize) else {
            // Falling off the end of a function is a return.
            return self.do_return(cta, w, active);
        };
        let warp = &mut cta.warps[w];
        warp.clock += 1;
        let frame = warp.frames.last().expect("a frame");
        let exec_mask = match op.guard {
            Some((p, neg)) => {
                let bits = frame.preds[p as usize] ^ if neg { u32::MAX } else { 0 };
                active & LaneMask(u64::from(bits))
            }
            None => active,
        };
        if let Some(s) = &mut self.stats {
            s.instruction(f, opi, active.count());
        }
        let next = pc(f, opi + 1);
        match op.kind {
            Kind::Bra => {
                let warp = &mut cta.warps[w];
                let target = pc(f, op.target);
                let reconverge = op.reconverge.map(|r| pc(f, r));
                if let Some(s) = &mut self.stats {
                    s.branch(f, opi, active, exec_mask);
                }
                if exec_mask == active {
                    warp.stack.set_pc(target);
                } else if exec_mask.is_empty() {
                    warp.stack.set_pc(next);
                } else {
                    warp.stack
                        .branch(target, exec_mask, next, reconverge)
                        .map_err(|e| self.stack_error(cta, w, f, op, e))?;
                }
                return Ok(Flow::Continue);
            }
            Kind::Brx => return self.brx(cta, w, f, opi, op, active, exec_mask),
            Kind::Call => return self.call(cta, w, f, opi, op, active, exec_mask),
            Kind::Ret => {
                if exec_mask.is_empty() {
                    cta.warps[w].stack.set_pc(next);
                    return Ok(Flow::Continue);
                }
                if exec_mask != active {
                    // Lanes with a false guard continue after the `ret`.
                    let warp = &mut cta.warps[w];
                    warp.stack
                        .branch(pc(f, opi), exec_mask, next, None)
                        .map_err(|e| self.stack_error(cta, w, f, op, e))?;
                    return Ok(Flow::Continue);
                }
                return self.do_return(cta, w, exec_mask);
            }
            Kind::Exit => {
                let warp = &mut cta.warps[w];
                let stayed = warp.stack.exit_lanes(exec_mask);
                if !stayed.is_empty() {
                    warp.stack.set_pc(next);
                }
                self.sync_frames(cta, w);
                return Ok(if cta.warps[w].stack.is_finished() { Flow::Done } else { Flow::Continue });
            }
            Kind::Trap => {
                if !exec_mask.is_empty() {
                    let lane = exec_mask.first().unwrap_or(0);
                    return Err(self.error(cta, w, lane, f, op, ErrorKind::Trap));
                }
                cta.warps[w].stack.set_pc(next);
                return Ok(Flow::Continue);
            }
            Kind::Bar => {
                cta.warps[w].stack.set_pc(next);
                return self.barrier(cta, w, f, op, active, exec_mask);
            }
            Kind::Mbarrier => {
                cta.warps[w].stack.set_pc(next);
                let flow = self.mbarrier(cta, w, f, opi, op, exec_mask)?;
                if matches!(flow, Flow::Yield) && cta.warps[w].stack.top() == Some((next, active)) {
                    // The path spins on a failed wait. The lanes it waits for may be on another path of this
                    // warp: as under independent thread scheduling, a waiting path of the warp runs next.
                    cta.warps[w].stack.defer_active_path();
                }
                return Ok(flow);
            }
            Kind::Matrix if !exec_mask.is_empty() && program::wgmma::of(op).is_some() => {
                // The warp waits here for its warpgroup (`machine/warpgroup.rs`), which moves it on.
                let warp = &mut cta.warps[w];
                warp.bar_lanes = exec_mask;
                warp.state = WarpState::Warpgroup { at: pc(f, opi) };
                return Ok(Flow::Blocked);
            }
            _ => {}
        }
        if !exec_mask.is_empty() {
            self.exec_data(cta, w, f, op, exec_mask)?;
        }
        cta.warps[w].stack.set_pc(next);
        if let Some(g) = &self.grid {
            if g.spins(f, opi) {
                // Another CTA may be the one to write what this warp polls for: its CTA's turn ends.
                return Ok(Flow::Yield);
            }
        }
        Ok(Flow::Continue)
    }

    fn stack_error(&self, cta: &Cta, w: usize, f: FuncId, op: &Op, e: simt::StackError) -> ExecError {
        let lane = cta.warps[w].stack.active_mask().first().unwrap_or(0);
        self.error(cta, w, lane, f, op, ErrorKind::Invalid(format!("reconvergence stack: {e:?}")))
    }

    fn barrier(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        active: LaneMask,
        exec: LaneMask,
    ) -> Result<Flow, ExecError> {
        let Sub::Bar { wait, red } = op.m.sub else { return Ok(Flow::Continue) };
        if exec.is_empty() {
            return Ok(Flow::Continue);
        }
        let live = cta.warps[w].stack.live_lanes();
        if exec != live || exec != active {
            let lane = (live - exec).first().unwrap_or(0);
            let detail = format!(
                "only {} of the {} live lanes of warp {} reached the barrier together (lane mask {exec}); the others \
                 are on another path of a divergent branch",
                exec.count(),
                live.count(),
                cta.warps[w].index
            );
            return Err(self.error(cta, w, lane, f, op, ErrorKind::BarrierDivergence(detail)));
        }
        let id = self.read_uniform(cta, w, &op.a, exec) as u32;
        let expected = match op.b {
            Src::None => 0,
            ref s => self.read_uniform(cta, w, s, exec) as u32,
        };
        if !wait {
            // `bar.arrive`: these threads count toward the barrier without waiting for it.
            let e = cta.arrivals.entry(id).or_default();
            e.0 += exec.count();
            if expected > 0 {
                e.1 = expected;
            }
            return Ok(Flow::Continue);
        }
        let mut values = [0u64; WARP];
        if red.is_some() {
            values = read_src(self, cta, w, &op.c);
        }
        let warp = &mut cta.warps[w];
        warp.bar_lanes = exec;
        warp.bar_values = values;
        warp.bar_dst = op.dst;
        warp.bar_red = red;
        warp.state = WarpState::Barrier { id, expected };
        Ok(Flow::Blocked)
    }

    fn read_uniform(&self, cta: &Cta, w: usize, src: &Src, exec: LaneMask) -> u64 {
        let vals = read_src(self, cta, w, src);
        vals[exec.first().unwrap_or(0) as usize]
    }

    #[allow(clippy::too_many_arguments)]
    fn brx(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        opi: u32,
        op: &Op,
        active: LaneMask,
        exec: LaneMask,
    ) -> Result<Flow, ExecError> {
        let next = pc(f, opi + 1);
        let Some(Extra::Targets(targets)) = op.extra.as_deref() else { return Ok(Flow::Continue) };
        let index = read_src(self, cta, w, &op.a);
        let mut groups: Vec<(Pc, LaneMask)> = Vec::new();
        for lane in exec.iter() {
            let i = index[lane as usize] as usize;
            let Some(&t) = targets.get(i) else {
                let kind = ErrorKind::Invalid(format!(
                    "`brx.idx` index {i} is outside its table of {} targets",
                    targets.len()
                ));
                return Err(self.error(cta, w, lane, f, op, kind));
            };
            let target = pc(f, t);
            match groups.iter_mut().find(|(p, _)| *p == target) {
                Some((_, m)) => m.insert(lane),
                None => groups.push((target, LaneMask::single(lane))),
            }
        }
        let rest = active - exec;
        if !rest.is_empty() {
            groups.push((next, rest));
        }
        if let Some(s) = &mut self.stats {
            s.branch(f, opi, active, if groups.len() > 1 { LaneMask::EMPTY } else { active });
        }
        let warp = &mut cta.warps[w];
        if groups.len() == 1 {
            warp.stack.set_pc(groups[0].0);
        } else {
            let reconverge = op.reconverge.map(|r| pc(f, r));
            warp.stack.diverge(&groups, reconverge).map_err(|e| self.stack_error(cta, w, f, op, e))?;
        }
        Ok(Flow::Continue)
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        opi: u32,
        op: &Op,
        active: LaneMask,
        exec: LaneMask,
    ) -> Result<Flow, ExecError> {
        let next = pc(f, opi + 1);
        let Some(Extra::Call { callee, args, rets }) = op.extra.as_deref() else { return Ok(Flow::Continue) };
        if exec.is_empty() {
            cta.warps[w].stack.set_pc(next);
            return Ok(Flow::Continue);
        }
        if exec != active {
            // A predicated call: the lanes whose guard is false skip it.
            let warp = &mut cta.warps[w];
            warp.stack.branch(pc(f, opi), exec, next, Some(next)).map_err(|e| self.stack_error(cta, w, f, op, e))?;
            return Ok(Flow::Continue);
        }
        // Which function each lane calls.
        let (target, lanes) = match *callee {
            Callee::Direct(g) => (g, exec),
            Callee::Indirect(src) => {
                let addrs = read_src(self, cta, w, &src);
                let first = exec.first().unwrap_or(0);
                let mut lanes = LaneMask::EMPTY;
                for lane in exec.iter() {
                    if addrs[lane as usize] == addrs[first as usize] {
                        lanes.insert(lane);
                    }
                }
                match self.module.function_at(addrs[first as usize]) {
                    Some(g) => (g, lanes),
                    None => {
                        let kind = ErrorKind::Invalid(format!(
                            "indirect call to {:#x}, which is not a function",
                            addrs[first as usize]
                        ));
                        return Err(self.error(cta, w, first, f, op, kind));
                    }
                }
            }
        };
        let callee_fn = &self.module.module.functions[target];
        if callee_fn.body.is_none() {
            if callee_fn.name == "__assertfail" {
                return Err(self.assert_fail(cta, w, f, op, args, lanes));
            }
            if callee_fn.name == "vprintf" {
                self.vprintf(cta, w, f, op, args, rets, lanes)?;
                cta.warps[w].stack.set_pc(next);
                return Ok(Flow::Continue);
            }
            if matches!(callee_fn.name.as_str(), "malloc" | "free") {
                self.heap_call(cta, w, f, op, callee_fn.name == "malloc", args, rets, lanes)?;
                cta.warps[w].stack.set_pc(next);
                return Ok(Flow::Continue);
            }
            let kind = ErrorKind::Unsupported(vec![format!("call to `{}`, which has no body", callee_fn.name)]);
            return Err(self.error(cta, w, lanes.first().unwrap_or(0), f, op, kind));
        }
        if cta.warps[w].frames.len() >= MAX_CALL_DEPTH {
            return Err(self.error(
                cta,
                w,
                lanes.first().unwrap_or(0),
                f,
                op,
                ErrorKind::StackOverflow(MAX_CALL_DEPTH as u32),
            ));
        }
        // The callee's frame and register file.
        let programs = self.programs.clone();
        let Some(callee_prog) = programs[target.as_u32() as usize].as_ref() else {
            let kind = ErrorKind::Invalid(format!("call to `{}`, which was not decoded", callee_fn.name));
            return Err(self.error(cta, w, lanes.first().unwrap_or(0), f, op, kind));
        };
        let (slots, preds, frame_size, params) =
            (callee_prog.slots, callee_prog.preds, callee_prog.frame.size, &callee_prog.frame.params);
        let base = cta.warps[w].sp;
        let new_sp = base + frame_size;
        if new_sp > MAX_LOCAL_BYTES {
            return Err(self.error(
                cta,
                w,
                lanes.first().unwrap_or(0),
                f,
                op,
                ErrorKind::StackOverflow(cta.warps[w].frames.len() as u32),
            ));
        }
        let caller_base = cta.warps[w].frames.last().expect("frame").base;
        {
            let warp = &mut cta.warps[w];
            for lane in lanes.iter() {
                let stack = &mut warp.local[lane as usize];
                if (stack.len() as u64) < new_sp {
                    stack.resize(new_sp as usize, 0);
                }
                stack[base as usize..new_sp as usize].fill(0);
            }
        }
        // Copy the arguments into the callee's parameter slots.
        for (k, arg) in args.iter().enumerate() {
            let Some(&(off, size)) = params.get(k) else { break };
            for lane in lanes.iter() {
                let warp = &mut cta.warps[w];
                let value_bytes: Vec<u8> = match *arg {
                    CallArg::Frame(src_off, src_size) => {
                        let start = (caller_base + src_off) as usize;
                        let n = src_size.min(size) as usize;
                        warp.local[lane as usize][start..start + n].to_vec()
                    }
                    CallArg::Reg(slot, bytes) => {
                        let v = warp.frames.last().expect("frame").regs[slot as usize][lane as usize];
                        v.to_le_bytes()[..bytes.min(8) as usize].to_vec()
                    }
                    CallArg::Imm(v) => v.to_le_bytes()[..size.min(8) as usize].to_vec(),
                };
                let dst = (base + off) as usize;
                let n = value_bytes.len().min(size as usize);
                warp.local[lane as usize][dst..dst + n].copy_from_slice(&value_bytes[..n]);
            }
        }
        let warp = &mut cta.warps[w];
        warp.stack.call(pc(target, 0), lanes, next).map_err(|e| self.stack_error(cta, w, f, op, e))?;
        let warp = &mut cta.warps[w];
        warp.sp = new_sp;
        warp.frames.push(RegFrame {
            func: target,
            regs: vec![[0; WARP]; slots as usize],
            preds: vec![0; preds as usize],
            base,
            rets: rets.clone(),
            dyn_sp: warp.dynamic.sp,
        });
        Ok(Flow::Continue)
    }

    /// `stacksave`, `stackrestore`, `alloca` (`program::stack`) on each executing lane's dynamic stack.
    fn stack_op(&mut self, cta: &mut Cta, w: usize, f: FuncId, op: &Op, exec: LaneMask) -> Result<(), ExecError> {
        let a = read_src(self, cta, w, &op.a);
        let mut out = [0u64; WARP];
        for lane in exec.iter() {
            let l = lane as usize;
            let dynamic = &mut cta.warps[w].dynamic;
            let r = match op.kind {
                Kind::StackSave => Ok(dynamic.sp[l]),
                Kind::StackRestore => dynamic.restore(lane, a[l]).map(|_| 0),
                _ => dynamic.alloca(
                    lane,
                    a[l],
                    match op.b {
                        Src::Imm(align) => align,
                        _ => program::stack::MIN_ALIGN,
                    },
                ),
            };
            out[l] = r.map_err(|e| self.error(cta, w, lane, f, op, ErrorKind::Invalid(e)))?;
        }
        if op.kind != Kind::StackRestore {
            let frame = cta.warps[w].frames.last_mut().expect("frame");
            write_dst(frame, op.dst, &out, exec);
        }
        Ok(())
    }

    fn do_return(&mut self, cta: &mut Cta, w: usize, lanes: LaneMask) -> Result<Flow, ExecError> {
        let warp = &mut cta.warps[w];
        if warp.frames.len() == 1 {
            // `ret` in the kernel is `exit`.
            warp.stack.exit_lanes(lanes);
            return Ok(if warp.stack.is_finished() { Flow::Done } else { Flow::Continue });
        }
        warp.stack.ret(lanes);
        self.sync_frames(cta, w);
        Ok(if cta.warps[w].stack.is_finished() { Flow::Done } else { Flow::Continue })
    }

    /// Pops register frames the call stack no longer has, copying return values to the caller.
    fn sync_frames(&mut self, cta: &mut Cta, w: usize) {
        let warp = &mut cta.warps[w];
        let depth = warp.stack.call_depth().max(1);
        while warp.frames.len() > depth {
            let frame = warp.frames.pop().expect("frame");
            let returns = self.programs[frame.func.as_u32() as usize]
                .as_ref()
                .map(|p| p.frame.returns.clone())
                .unwrap_or_default();
            let caller = warp.frames.last_mut().expect("caller frame");
            for (k, ret) in frame.rets.iter().enumerate() {
                let Some(&(off, size)) = returns.get(k) else { break };
                for lane in 0..WARP {
                    let stack = &mut warp.local[lane];
                    let start = (frame.base + off) as usize;
                    let Some(src) = stack.get(start..start + size as usize) else { continue };
                    let src = src.to_vec();
                    match *ret {
                        CallArg::Frame(dst_off, dst_size) => {
                            let d = (caller.base + dst_off) as usize;
                            let n = dst_size.min(size) as usize;
                            if let Some(dst) = stack.get_mut(d..d + n) {
                                dst.copy_from_slice(&src[..n]);
                            }
                        }
                        CallArg::Reg(slot, _) => {
                            caller.regs[slot as usize][lane] = crate::mem::load_le(&src[..src.len().min(8)]);
                        }
                        CallArg::Imm(_) => {}
                    }
                }
            }
            warp.sp = frame.base;
            warp.dynamic.sp = frame.dyn_sp;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn vprintf(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        args: &[CallArg],
        rets: &[CallArg],
        lanes: LaneMask,
    ) -> Result<(), ExecError> {
        let base = cta.warps[w].frames.last().expect("frame").base;
        for lane in lanes.iter() {
            let word = |k: usize, warp: &Warp| -> u64 {
                match args.get(k) {
                    Some(CallArg::Frame(off, _)) => {
                        let start = (base + off) as usize;
                        warp.local[lane as usize].get(start..start + 8).map_or(0, crate::mem::load_le)
                    }
                    Some(CallArg::Reg(slot, _)) => {
                        warp.frames.last().expect("frame").regs[*slot as usize][lane as usize]
                    }
                    Some(CallArg::Imm(v)) => *v,
                    None => 0,
                }
            };
            let (fmt_addr, args_addr) = (word(0, &cta.warps[w]), word(1, &cta.warps[w]));
            let text =
                printf::format(fmt_addr, args_addr, &mut |addr, size| self.load_generic(cta, w, lane, addr, size))
                    .map_err(|e| self.access_error(cta, w, lane, f, op, Space::Generic, e))?;
            let _ = self.out.write_all(&text);
            // vprintf returns the number of arguments; nvcc ignores it, but keep it defined.
            if let Some(CallArg::Frame(off, _)) = rets.first() {
                let start = (base + off) as usize;
                if let Some(dst) = cta.warps[w].local[lane as usize].get_mut(start..start + 4) {
                    dst.copy_from_slice(&(text.len() as u32).to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// `malloc(size)` / `free(ptr)` on the device heap, lane by lane in lane order.
    #[allow(clippy::too_many_arguments)]
    fn heap_call(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        malloc: bool,
        args: &[CallArg],
        rets: &[CallArg],
        lanes: LaneMask,
    ) -> Result<(), ExecError> {
        let Some(heap) = self.heap.clone() else {
            let kind = ErrorKind::Invalid("the kernel calls malloc or free but the runtime made no device heap".into());
            return Err(self.error(cta, w, lanes.first().unwrap_or(0), f, op, kind));
        };
        let base = cta.warps[w].frames.last().expect("frame").base;
        for lane in lanes.iter() {
            let arg = match args.first() {
                Some(CallArg::Frame(off, _)) => {
                    let start = (base + off) as usize;
                    cta.warps[w].local[lane as usize].get(start..start + 8).map_or(0, crate::mem::load_le)
                }
                Some(CallArg::Reg(slot, _)) => {
                    cta.warps[w].frames.last().expect("frame").regs[*slot as usize][lane as usize]
                }
                Some(CallArg::Imm(v)) => *v,
                None => 0,
            };
            if !malloc {
                if let Err(m) = heap.free(arg) {
                    return Err(self.error(cta, w, lane, f, op, ErrorKind::Invalid(m)));
                }
                continue;
            }
            let ptr = heap.malloc(arg);
            match rets.first() {
                Some(CallArg::Frame(off, _)) => {
                    let start = (base + off) as usize;
                    if let Some(dst) = cta.warps[w].local[lane as usize].get_mut(start..start + 8) {
                        dst.copy_from_slice(&ptr.to_le_bytes());
                    }
                }
                Some(CallArg::Reg(slot, _)) => {
                    cta.warps[w].frames.last_mut().expect("frame").regs[*slot as usize][lane as usize] = ptr;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `assert()` failed on the device: `__assertfail(message, file, line, function, char_size)`.
    fn assert_fail(&mut self, cta: &Cta, w: usize, f: FuncId, op: &Op, args: &[CallArg], lanes: LaneMask) -> ExecError {
        let lane = lanes.first().unwrap_or(0);
        let base = cta.warps[w].frames.last().expect("frame").base;
        let word = |k: usize, size: usize| -> u64 {
            match args.get(k) {
                Some(CallArg::Frame(off, _)) => {
                    let start = (base + off) as usize;
                    cta.warps[w].local[lane as usize].get(start..start + size).map_or(0, crate::mem::load_le)
                }
                Some(CallArg::Reg(slot, _)) => {
                    cta.warps[w].frames.last().expect("frame").regs[*slot as usize][lane as usize]
                }
                Some(CallArg::Imm(v)) => *v,
                None => 0,
            }
        };
        let (msg, file, line, func) = (word(0, 8), word(1, 8), word(2, 4), word(3, 8));
        let mut string = |addr: u64| -> String {
            let mut bytes = Vec::new();
            for i in 0..1024 {
                match self.load_generic(cta, w, lane, addr + i, 1) {
                    Ok(0) | Err(_) => break,
                    Ok(b) => bytes.push(b as u8),
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let text = format!(
            "device assertion `{}` failed at {}:{} in `{}`",
            string(msg),
            string(file),
            line as u32,
            string(func)
        );
        self.error(cta, w, lane, f, op, ErrorKind::Assert(text))
    }

    /// A generic load for one lane (used by printf).
    fn load_generic(&mut self, cta: &Cta, w: usize, lane: u32, address: u64, size: u32) -> Result<u64, MemFault> {
        let (space, addr) = resolve_generic(address);
        self.load(cta, w, lane, space, addr, size)
    }

    fn load(&mut self, cta: &Cta, w: usize, lane: u32, space: Space, address: u64, size: u32) -> Result<u64, MemFault> {
        match space {
            Space::Global | Space::Const => self.global.read(address, size).map_err(MemFault::from),
            Space::Shared => read_flat(&cta.shared, address, size)
                .ok_or_else(|| MemFault::bounds(address, size, cta.shared.len(), "the CTA's shared memory")),
            Space::Local if DynStack::contains(address) => cta.warps[w].dynamic.read(lane, address, size),
            Space::Local => {
                let stack = &cta.warps[w].local[lane as usize];
                let limit = cta.warps[w].sp.min(stack.len() as u64) as usize;
                read_flat(&stack[..limit], address, size)
                    .ok_or_else(|| MemFault::bounds(address, size, limit, "the thread's local memory"))
            }
            Space::Param => {
                if cta.warps[w].frames.len() == 1 {
                    read_flat(self.params, address, size)
                        .ok_or_else(|| MemFault::bounds(address, size, self.params.len(), "the kernel parameters"))
                } else {
                    let stack = &cta.warps[w].local[lane as usize];
                    read_flat(stack, address, size)
                        .ok_or_else(|| MemFault::bounds(address, size, stack.len(), "the function parameters"))
                }
            }
            Space::Generic => {
                let (s, a) = resolve_generic(address);
                self.load(cta, w, lane, s, a, size)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        cta: &mut Cta,
        w: usize,
        lane: u32,
        space: Space,
        address: u64,
        size: u32,
        value: u64,
    ) -> Result<(), MemFault> {
        match space {
            Space::Global => self.global.write(address, size, value).map_err(MemFault::from),
            Space::Const => Err(MemFault::ReadOnly { address }),
            Space::Shared => {
                let len = cta.shared.len();
                write_flat(&mut cta.shared, address, size, value)
                    .ok_or_else(|| MemFault::bounds(address, size, len, "the CTA's shared memory"))
            }
            Space::Local if DynStack::contains(address) => cta.warps[w].dynamic.write(lane, address, size, value),
            Space::Local => {
                let sp = cta.warps[w].sp;
                let stack = &mut cta.warps[w].local[lane as usize];
                let limit = sp.min(stack.len() as u64) as usize;
                write_flat(&mut stack[..limit], address, size, value)
                    .ok_or_else(|| MemFault::bounds(address, size, limit, "the thread's local memory"))
            }
            Space::Param => {
                if cta.warps[w].frames.len() == 1 {
                    Err(MemFault::ReadOnly { address })
                } else {
                    let stack = &mut cta.warps[w].local[lane as usize];
                    let len = stack.len();
                    write_flat(stack, address, size, value)
                        .ok_or_else(|| MemFault::bounds(address, size, len, "the function parameters"))
                }
            }
            Space::Generic => {
                let (s, a) = resolve_generic(address);
                self.store(cta, w, lane, s, a, size, value)
            }
        }
    }

    /// Address of `[base + offset]` for every lane, in the instruction's space (frame-relative symbols
    /// resolved to the local stack, generic symbols to their window).
    fn addresses(&self, cta: &Cta, w: usize, op: &Op, exec: LaneMask) -> [u64; WARP] {
        self.addresses_of(cta, w, &op.mem, op.m.space, exec)
    }

    /// [`Self::addresses`] of any memory operand, in `space`.
    fn addresses_of(&self, cta: &Cta, w: usize, mem: &MemRef, space: Space, exec: LaneMask) -> [u64; WARP] {
        let mut out = [0u64; WARP];
        let frame = cta.warps[w].frames.last().expect("frame");
        match mem.base {
            Src::Reg(r) => {
                let regs = &frame.regs[r as usize];
                for lane in exec.iter() {
                    out[lane as usize] = regs[lane as usize].wrapping_add(mem.offset as u64);
                }
            }
            Src::Sym(sym, extra) => {
                let a = self.symbol_value(frame, sym, space).wrapping_add(extra as u64).wrapping_add(mem.offset as u64);
                out = [a; WARP];
            }
            Src::Imm(v) => out = [v.wrapping_add(mem.offset as u64); WARP],
            _ => {}
        }
        out
    }

    /// The value of a symbol operand: its address in `space` (generic addresses use the windows).
    fn symbol_value(&self, frame: &RegFrame, sym: SymAddr, space: Space) -> u64 {
        let (addr, own) = match sym {
            SymAddr::Global(a) => (a, Space::Global),
            SymAddr::Shared(o) => (o, Space::Shared),
            SymAddr::Frame(o) => (frame.base + o, Space::Local),
            SymAddr::KernelParam(o) => (o, Space::Param),
            SymAddr::Func(a) => (a, Space::Global),
        };
        if space == Space::Generic {
            addr.wrapping_add(window(own))
        } else {
            addr
        }
    }

    fn exec_data(&mut self, cta: &mut Cta, w: usize, f: FuncId, op: &Op, exec: LaneMask) -> Result<(), ExecError> {
        match op.kind {
            Kind::Ld => self.exec_load(cta, w, f, op, exec),
            Kind::St => self.exec_store(cta, w, f, op, exec),
            Kind::Atom | Kind::Red => self.exec_atomic(cta, w, f, op, exec),
            Kind::Atom128 => self.exec_atomic128(cta, w, f, op, exec),
            Kind::Move128 => {
                self.exec_move128(cta, w, op, exec);
                Ok(())
            }
            Kind::Nop | Kind::WarpSync => Ok(()),
            Kind::Shfl | Kind::Vote | Kind::Match | Kind::Redux | Kind::Activemask | Kind::Elect => {
                let active = cta.warps[w].stack.active_mask();
                self.exec_warp_op(cta, w, op, exec, active);
                Ok(())
            }
            Kind::Cvta | Kind::Isspacep => {
                self.exec_space(cta, w, op, exec);
                Ok(())
            }
            Kind::Mapa => {
                let (a, rank) = (read_src(self, cta, w, &op.a), read_src(self, cta, w, &op.b));
                if let Some(lane) = exec.iter().find(|&l| rank[l as usize] as u32 != 0) {
                    let kind = ErrorKind::Invalid(program::cluster::rank_error(u64::from(rank[lane as usize] as u32)));
                    return Err(self.error(cta, w, lane, f, op, kind));
                }
                let frame = cta.warps[w].frames.last_mut().expect("frame");
                write_dst(frame, op.dst, &a, exec);
                Ok(())
            }
            Kind::StackSave | Kind::StackRestore | Kind::Alloca => self.stack_op(cta, w, f, op, exec),
            Kind::Matrix => program::tensor::exec(&mut WarpCx { m: self, cta, w, f, op }, exec, op),
            Kind::BulkCopy => self.bulk_copy(cta, w, f, op, exec),
            Kind::Texture => program::texture::exec(&mut WarpCx { m: self, cta, w, f, op }, exec, op),
            Kind::CpAsync => {
                let cx = WarpCx { m: self, cta, w, f, op };
                // Statistics: a global load of the source addresses and a shared store, cp-size bytes each.
                if let (true, Some(Extra::Copy(c))) = (cx.m.stats.is_some(), op.extra.as_deref()) {
                    let (src, dst) = (c.src_addresses(&cx), program::WarpAccess::addresses(&cx, exec));
                    if let Some(s) = &mut cx.m.stats {
                        s.memory(op, Space::Global, true, exec, &src, c.size, &cx.cta.shared);
                        s.memory(op, Space::Shared, false, exec, &dst, c.size, &cx.cta.shared);
                    }
                }
                let mut cx = cx;
                program::copy::exec(&mut cx, exec, op)
            }
            Kind::Pack => {
                // `mov.bN d, {a, b, ...}`: element k goes to bits [k*part, (k+1)*part).
                let Some(Extra::Srcs(srcs)) = op.extra.as_deref() else { return Ok(()) };
                let part = op.ty.bits() / srcs.len().max(1) as u32;
                let mut out = [0u64; WARP];
                for (k, s) in srcs.iter().enumerate() {
                    let v = read_src(self, cta, w, s);
                    for lane in exec.iter() {
                        let l = lane as usize;
                        out[l] |= (v[l] & program::mask_bits(part)) << (part * k as u32);
                    }
                }
                let frame = cta.warps[w].frames.last_mut().expect("frame");
                write_dst(frame, op.dst, &out, exec);
                Ok(())
            }
            _ => {
                let a = read_src(self, cta, w, &op.a);
                let b = read_src(self, cta, w, &op.b);
                let c = read_src(self, cta, w, &op.c);
                let d = read_src(self, cta, w, &op.d);
                let warp = &mut cta.warps[w];
                let mut out = [0u64; WARP];
                let mut out2 = [0u64; WARP];
                let mut carry = warp.carry;
                let ok = alu::exec(op, exec, &a, &b, &c, &d, &mut out, &mut out2, &mut carry);
                if !ok {
                    let lane = exec.first().unwrap_or(0);
                    let kind = ErrorKind::Unsupported(vec![format!(
                        "`{}` with type {:?} in the emulator",
                        self.text(f, op),
                        op.ty
                    )]);
                    return Err(self.error(cta, w, lane, f, op, kind));
                }
                let warp = &mut cta.warps[w];
                warp.carry = carry;
                let frame = warp.frames.last_mut().expect("frame");
                match op.kind {
                    Kind::Unpack => {
                        if let Some(Extra::Dsts(dsts)) = op.extra.as_deref() {
                            let part = op.ty.bits() / dsts.len().max(1) as u32;
                            for (k, d) in dsts.iter().enumerate() {
                                let mut vals = [0u64; WARP];
                                for lane in exec.iter() {
                                    vals[lane as usize] = a[lane as usize] >> (part * k as u32);
                                }
                                write_dst(frame, *d, &vals, exec);
                            }
                        }
                    }
                    _ => {
                        write_dst(frame, op.dst, &out, exec);
                        if op.dst2 != Dst::None {
                            write_dst(frame, op.dst2, &out2, exec);
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// PTX requires every access (a whole vector access included) to be naturally aligned.
    #[allow(clippy::too_many_arguments)]
    fn check_aligned(
        &self,
        cta: &Cta,
        w: usize,
        lane: u32,
        f: FuncId,
        op: &Op,
        space: Space,
        address: u64,
        size: u32,
    ) -> Result<(), ExecError> {
        if address.is_multiple_of(u64::from(size)) {
            Ok(())
        } else {
            Err(self.access_error(cta, w, lane, f, op, space, MemFault::Misaligned { address, size }))
        }
    }

    fn exec_load(&mut self, cta: &mut Cta, w: usize, f: FuncId, op: &Op, exec: LaneMask) -> Result<(), ExecError> {
        let space = op.m.space;
        let elem = op.ty.bytes();
        let n = u32::from(op.m.vec.max(1));
        let addrs = self.addresses(cta, w, op, exec);
        let mut vals = vec![[0u64; WARP]; n as usize];
        for lane in exec.iter() {
            let base = addrs[lane as usize];
            self.check_aligned(cta, w, lane, f, op, space, base, elem * n)?;
            for (k, v) in vals.iter_mut().enumerate() {
                let addr = base + u64::from(elem) * k as u64;
                let raw = self
                    .load(cta, w, lane, space, addr, elem)
                    .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
                v[lane as usize] = op.ty.extend(raw);
            }
        }
        if let Some(s) = &mut self.stats {
            s.memory(op, space, true, exec, &addrs, elem * n, &cta.shared);
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        match op.extra.as_deref() {
            Some(Extra::Dsts(dsts)) => {
                for (d, v) in dsts.iter().zip(&vals) {
                    write_dst(frame, *d, v, exec);
                }
            }
            _ => write_dst(frame, op.dst, &vals[0], exec),
        }
        Ok(())
    }

    fn exec_store(&mut self, cta: &mut Cta, w: usize, f: FuncId, op: &Op, exec: LaneMask) -> Result<(), ExecError> {
        if let Some(g) = &mut self.grid {
            g.writes += 1;
        }
        let space = op.m.space;
        let elem = op.ty.bytes();
        let addrs = self.addresses(cta, w, op, exec);
        let vals: Vec<[u64; WARP]> = match op.extra.as_deref() {
            Some(Extra::Srcs(srcs)) => srcs.iter().map(|s| read_src(self, cta, w, s)).collect(),
            _ => vec![read_src(self, cta, w, &op.a)],
        };
        let n = vals.len() as u32;
        if let Some(s) = &mut self.stats {
            s.memory(op, space, false, exec, &addrs, elem * n, &cta.shared);
        }
        for lane in exec.iter() {
            let base = addrs[lane as usize];
            self.check_aligned(cta, w, lane, f, op, space, base, elem * n)?;
            for (k, v) in vals.iter().enumerate() {
                let addr = base + u64::from(elem) * k as u64;
                self.store(cta, w, lane, space, addr, elem, v[lane as usize])
                    .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
            }
        }
        Ok(())
    }

    fn exec_atomic(&mut self, cta: &mut Cta, w: usize, f: FuncId, op: &Op, exec: LaneMask) -> Result<(), ExecError> {
        if let Some(g) = &mut self.grid {
            g.writes += 1;
        }
        let space = op.m.space;
        let elem = op.ty.bytes();
        let addrs = self.addresses(cta, w, op, exec);
        let vector = match op.extra.as_deref() {
            Some(Extra::AtomVec(v)) => Some(v),
            _ => None,
        };
        let n = vector.map_or(1, |v| v.len() as u32);
        if let Some(s) = &mut self.stats {
            s.atomic(op, space, exec, &addrs, elem * n);
        }
        let Some(v) = vector else {
            let a = read_src(self, cta, w, &op.a);
            let b = read_src(self, cta, w, &op.b);
            let dst = if op.kind == Kind::Atom { op.dst } else { Dst::None };
            return self.atomic_elements(cta, w, f, op, exec, &addrs, [&a, &b], dst);
        };
        // A vector atomic is aligned as a whole, then runs one atomic per element (PTX ISA 9.7.13.5).
        for lane in exec.iter() {
            let addr = addrs[lane as usize];
            if !addr.is_multiple_of(u64::from(elem * n)) {
                let fault = MemFault::Misaligned { address: addr, size: elem * n };
                return Err(self.access_error(cta, w, lane, f, op, space, fault));
            }
        }
        let zero = [0u64; WARP];
        // Every source is read before any destination is written (they may name the same registers).
        let srcs: Vec<_> = v.srcs.iter().map(|s| read_src(self, cta, w, s)).collect();
        for (k, a) in srcs.iter().enumerate() {
            let at = addrs.map(|x| x + u64::from(elem) * k as u64);
            let dst = v.dsts.get(k).copied().unwrap_or(Dst::None);
            self.atomic_elements(cta, w, f, op, exec, &at, [a, &zero], dst)?;
        }
        Ok(())
    }

    /// One scalar atomic per active lane at `addrs`, with operands `a` and `b`; the old values go to `dst`.
    #[allow(clippy::too_many_arguments)]
    fn atomic_elements(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
        addrs: &[u64; WARP],
        [a, b]: [&[u64; WARP]; 2],
        dst: Dst,
    ) -> Result<(), ExecError> {
        let space = op.m.space;
        let elem = op.ty.bytes();
        let Sub::Atom(aop) = op.m.sub else { return Ok(()) };
        let mut old_vals = [0u64; WARP];
        for lane in exec.iter() {
            let addr = addrs[lane as usize];
            if !addr.is_multiple_of(u64::from(elem)) {
                return Err(self.access_error(
                    cta,
                    w,
                    lane,
                    f,
                    op,
                    space,
                    MemFault::Misaligned { address: addr, size: elem },
                ));
            }
            let old = self
                .load(cta, w, lane, space, addr, elem)
                .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
            let new = alu::atomic(aop, op.ty, old, a[lane as usize], b[lane as usize]);
            self.store(cta, w, lane, space, addr, elem, new)
                .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
            old_vals[lane as usize] = op.ty.extend(old);
        }
        if dst != Dst::None {
            let frame = cta.warps[w].frames.last_mut().expect("frame");
            write_dst(frame, dst, &old_vals, exec);
        }
        Ok(())
    }

    fn exec_space(&mut self, cta: &mut Cta, w: usize, op: &Op, exec: LaneMask) {
        let a = read_src(self, cta, w, &op.a);
        let mut out = [0u64; WARP];
        let space = op.m.space;
        for lane in exec.iter() {
            let v = a[lane as usize];
            out[lane as usize] = match op.kind {
                Kind::Cvta => match op.m.sub {
                    Sub::Cvta { to: true } => v.wrapping_sub(window(space)),
                    _ => v.wrapping_add(window(space)),
                },
                _ => {
                    let (s, _) = resolve_generic(v);
                    let is = match space {
                        Space::Global => s == Space::Global && self.global.contains(v),
                        Space::Const => s == Space::Global && self.global.is_const(v),
                        other => s == other,
                    };
                    u64::from(is)
                }
            };
            if op.kind == Kind::Cvta {
                out[lane as usize] &= op.ty.mask();
            }
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        write_dst(frame, op.dst, &out, exec);
    }

    fn exec_warp_op(&mut self, cta: &mut Cta, w: usize, op: &Op, exec: LaneMask, active: LaneMask) {
        let a = read_src(self, cta, w, &op.a);
        let b = read_src(self, cta, w, &op.b);
        let c = read_src(self, cta, w, &op.c);
        let mut out = [0u64; WARP];
        let mut out2 = [0u64; WARP];
        program::warp::exec(op, exec, active, [&a, &b, &c], &mut out, &mut out2);
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        write_dst(frame, op.dst, &out, exec);
        if op.dst2 != Dst::None {
            write_dst(frame, op.dst2, &out2, exec);
        }
    }

    /// The value of a special register for every lane.
    fn special(&self, cta: &Cta, w: usize, s: SpecialReg, comp: u8) -> [u64; WARP] {
        let warp = &cta.warps[w];
        let mut out = [0u64; WARP];
        let pick = |d: Dim3| {
            u64::from(match comp {
                0 => d.x,
                1 => d.y,
                2 => d.z,
                _ => 0,
            })
        };
        for (lane, o) in out.iter_mut().enumerate() {
            let tid = warp.tid[lane];
            *o = match s {
                SpecialReg::Tid => pick(tid),
                SpecialReg::Ntid => pick(self.config.block),
                SpecialReg::Ctaid => pick(cta.id),
                SpecialReg::Nctaid => pick(self.config.grid),
                SpecialReg::Laneid => lane as u64,
                SpecialReg::Warpid => u64::from(warp.index),
                SpecialReg::Nwarpid => 64,
                SpecialReg::Smid | SpecialReg::Gridid => 0,
                SpecialReg::Nsmid => 1,
                SpecialReg::LanemaskEq => 1 << lane,
                SpecialReg::LanemaskLt => (1u64 << lane) - 1,
                SpecialReg::LanemaskLe => (1u64 << (lane + 1)) - 1,
                SpecialReg::LanemaskGt => !((1u64 << (lane + 1)) - 1) & 0xFFFF_FFFF,
                SpecialReg::LanemaskGe => !((1u64 << lane) - 1) & 0xFFFF_FFFF,
                SpecialReg::Clock | SpecialReg::ClockHi | SpecialReg::Clock64 => {
                    let c = warp.clock;
                    match s {
                        SpecialReg::Clock => c & 0xFFFF_FFFF,
                        SpecialReg::ClockHi => c >> 32,
                        _ => c,
                    }
                }
                SpecialReg::Globaltimer | SpecialReg::GlobaltimerLo | SpecialReg::GlobaltimerHi => warp.clock * 1000,
                // Launches have no clusters: every CTA is a cluster of one.
                SpecialReg::Clusterid => pick(cta.id),
                SpecialReg::Nclusterid => pick(self.config.grid),
                SpecialReg::ClusterCtaid => 0,
                SpecialReg::ClusterNctaid => u64::from(comp < 3),
                SpecialReg::ClusterCtarank => 0,
                SpecialReg::IsExplicitCluster => {
                    u64::from(program::cluster::explicit(&self.module.module.functions[self.kernel]))
                }
                SpecialReg::ClusterNctarank => 1,
                SpecialReg::DynamicSmemSize => u64::from(self.config.dynamic_shared),
                SpecialReg::TotalSmemSize | SpecialReg::AggrSmemSize => self.shared_size as u64,
                // The grid workspace of a cooperative launch (null otherwise), high half in %envreg1.
                SpecialReg::Envreg1 => self.grid.as_ref().map_or(0, |g| program::grid::envreg(g.workspace, true)),
                SpecialReg::Envreg2 => self.grid.as_ref().map_or(0, |g| program::grid::envreg(g.workspace, false)),
                _ => 0,
            };
        }
        out
    }
}

/// One warp instruction's view of the machine, for the instruction families implemented in their own files
/// (`tensor.rs`, `texture.rs`): operand reads and writes, checked memory accesses, and errors that carry the
/// instruction's location.
pub(crate) struct WarpCx<'x, 'a> {
    m: &'x mut Machine<'a>,
    cta: &'x mut Cta,
    w: usize,
    f: FuncId,
    op: &'x Op,
}

impl WarpAccess for WarpCx<'_, '_> {
    /// A source operand's value in every lane.
    fn read(&self, src: &Src) -> [u64; WARP] {
        read_src(self.m, self.cta, self.w, src)
    }

    /// Writes `vals` to `dst` in the lanes of `mask`.
    fn write(&mut self, dst: Dst, vals: &[u64; WARP], mask: LaneMask) {
        let frame = self.cta.warps[self.w].frames.last_mut().expect("frame");
        write_dst(frame, dst, vals, mask);
    }

    /// The address `[base + offset]` of the instruction's memory operand in each lane of `exec`.
    fn addresses(&self, exec: LaneMask) -> [u64; WARP] {
        self.m.addresses(self.cta, self.w, self.op, exec)
    }

    /// Reads `size` bytes for `lane`, with the same checks (and errors) as `ld`.
    fn load(&mut self, lane: u32, space: Space, address: u64, size: u32) -> Result<u64, ExecError> {
        self.m
            .load(self.cta, self.w, lane, space, address, size)
            .map_err(|e| self.m.access_error(self.cta, self.w, lane, self.f, self.op, space, e))
    }

    /// Writes `size` bytes for `lane`, with the same checks (and errors) as `st`.
    fn store(&mut self, lane: u32, space: Space, address: u64, size: u32, value: u64) -> Result<(), ExecError> {
        self.m
            .store(self.cta, self.w, lane, space, address, size, value)
            .map_err(|e| self.m.access_error(self.cta, self.w, lane, self.f, self.op, space, e))
    }

    /// A misaligned-access error for `lane`.
    fn misaligned(&self, lane: u32, space: Space, address: u64, size: u32) -> ExecError {
        self.m.access_error(self.cta, self.w, lane, self.f, self.op, space, MemFault::Misaligned { address, size })
    }

    /// An error of `lane` at this instruction.
    fn error(&self, lane: u32, kind: ErrorKind) -> ExecError {
        self.m.error(self.cta, self.w, lane, self.f, self.op, kind)
    }

    /// The texture and surface objects of the launch.
    fn textures(&self) -> &device::Textures {
        &self.m.textures
    }
}

/// A memory access that failed, before it is given a location.
#[derive(Debug)]
pub enum MemFault {
    Bounds { address: u64, size: u32, detail: Option<String> },
    Misaligned { address: u64, size: u32 },
    ReadOnly { address: u64 },
}

impl MemFault {
    fn bounds(address: u64, size: u32, len: usize, what: &str) -> MemFault {
        MemFault::Bounds { address, size, detail: Some(format!("{what} has {len} bytes")) }
    }
}

impl From<device::AccessError> for MemFault {
    fn from(e: device::AccessError) -> MemFault {
        match e {
            device::AccessError::OutOfBounds { address, size, nearest } => {
                MemFault::Bounds { address, size, detail: nearest }
            }
            device::AccessError::Misaligned { address, size } => MemFault::Misaligned { address, size },
            device::AccessError::ReadOnly { address, .. } => MemFault::ReadOnly { address },
        }
    }
}

/// The member mask of a `.sync` warp operation: its operand, or the whole warp when it has none.
/// Reads a source operand for every lane.
fn read_src(m: &Machine<'_>, cta: &Cta, w: usize, src: &Src) -> [u64; WARP] {
    let frame = cta.warps[w].frames.last().expect("frame");
    match *src {
        Src::Reg(r) => frame.regs[r as usize],
        Src::Pred(p, neg) => {
            let bits = frame.preds[p as usize] ^ if neg { u32::MAX } else { 0 };
            let mut out = [0u64; WARP];
            for (lane, o) in out.iter_mut().enumerate() {
                *o = u64::from((bits >> lane) & 1);
            }
            out
        }
        Src::Imm(v) => [v; WARP],
        Src::Special(s, c) => m.special(cta, w, s, c),
        Src::Sym(sym, off) => {
            // A symbol as a value: its address in its own space (generic when `cvta` follows).
            let a = m.symbol_value(frame, sym, Space::Global).wrapping_add(off as u64);
            [a; WARP]
        }
        Src::None => [0; WARP],
    }
}

/// Writes `vals` to a destination for the lanes of `mask`.
fn write_dst(frame: &mut RegFrame, dst: Dst, vals: &[u64; WARP], mask: LaneMask) {
    match dst {
        Dst::Reg(slot, width) => {
            let reg = &mut frame.regs[slot as usize];
            if mask.0 as u32 == u32::MAX {
                for (r, v) in reg.iter_mut().zip(vals) {
                    *r = v & width;
                }
            } else {
                for lane in mask.iter() {
                    reg[lane as usize] = vals[lane as usize] & width;
                }
            }
        }
        Dst::Pred(p) => {
            let mut bits = frame.preds[p as usize];
            for lane in mask.iter() {
                if vals[lane as usize] & 1 != 0 {
                    bits |= 1 << lane;
                } else {
                    bits &= !(1 << lane);
                }
            }
            frame.preds[p as usize] = bits;
        }
        Dst::Sink | Dst::None => {}
    }
}

impl Machine<'_> {
    /// Decoded programs indexed by function id.
    pub fn index_programs(
        module: &LoadedModule,
        programs: std::collections::HashMap<FuncId, Program>,
    ) -> std::rc::Rc<Vec<Option<Program>>> {
        let mut v: Vec<Option<Program>> = (0..module.module.functions.len()).map(|_| None).collect();
        for (f, p) in programs {
            v[f.as_u32() as usize] = Some(p);
        }
        std::rc::Rc::new(v)
    }
}
