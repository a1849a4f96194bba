//! The interpreter: CTAs run one after another; inside a CTA, warps of 32 lanes run in lock-step under a
//! reconvergence stack (with call frames) until they finish or wait at a barrier; a barrier releases when
//! every thread of the CTA that has not exited has arrived. Here: the warp and CTA state, the scheduler's
//! rounds, one warp instruction's dispatch and control flow, registers and special registers; in `machine/`:
//! barriers, calls (and the runtime's device functions), memory instructions, mbarriers, warpgroups,
//! cooperative grids and 128-bit ops.

use std::io::Write;

use device::{Dim3, ErrorKind, ExecError, LaunchConfig, LoadedModule, Location};
use ir::{FuncId, SpecialReg};
use simt::{CallStack, LaneMask};

use crate::dynstack::DynStack;
use crate::mem::GlobalMem;
use crate::stats::Collector;
use program::alu;
use program::*;

mod barrier;
mod calls;
mod grid;
mod mbarrier;
mod memory;
mod warpgroup;
mod wide;

pub use grid::Grid;
pub use memory::MemFault;
pub use program::WARP;

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
