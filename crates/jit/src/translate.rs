//! Translation of one decoded function ([`program::Program`]) into a Cranelift function.
//!
//! Every register slot is a Cranelift variable of type `i64` holding the value's bits zero-extended, exactly as
//! the emulator keeps them (predicates are `i8` 0/1), so each op's lowering can follow the emulator's lane
//! semantics; the e-graph optimizer removes the extensions between ops of one block.
//!
//! A kernel becomes `fn(ctx, lo, hi)`: a loop over the CTA's threads `lo..hi` (thread fusion). Each thread
//! starts at its resume point and runs until it exits, or stops at a yield point (a barrier or a warp
//! collective): it posts its operands, spills the registers live there into its state words and records where
//! to resume; the runtime resumes it once the CTA (or warp) has caught up. A device function becomes
//! `fn(ctx, thread_block, frame, t) -> status`, called per thread.

use std::collections::HashMap;

use ::ir::{FuncId, SpecialReg};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, AtomicRmwOp, Block, InstBuilder, JumpTableData, MemFlagsData, Signature, StackSlot, StackSlotData,
    StackSlotKind, Type, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use program::{
    AtomOp, BoolOp, CallArg, Callee, Cmp, Dst, Extra, Kind, Op, Part, Program, Rnd, Space, Src, Sub, SymAddr, Ty,
};

use crate::abi::{ctx as cx, error, ret, status, thread, Helper};
use crate::plan::{Plan, YieldKind};

mod cluster;
mod stack;

pub use stack::dyn_stack_start;
mod atom_vec;
mod mbarrier;
mod wide;

const I64: Type = types::I64;
const I32: Type = types::I32;
const I8: Type = types::I8;

/// What translation needs to know beyond the function itself.
pub struct Env<'a> {
    pub programs: &'a HashMap<FuncId, Program>,
    /// First global site number of each function's ops.
    pub site_base: &'a HashMap<FuncId, u32>,
    /// Module variables: (device address, size) by the index the code loads from [`crate::abi::CtaCtx::globals`].
    pub globals: &'a [(u64, u64)],
    pub check: bool,
    /// Where each thread's dynamic stack starts in its local memory, when some function has a stack
    /// instruction (`stack.rs`).
    pub dyn_stack: Option<u64>,
    pub call_conv: CallConv,
    pub names: &'a HashMap<FuncId, String>,
    /// Global site numbers of the grid barrier polls, where a thread calls `Helper::GridSpin`: the strong
    /// loads of a kernel that reads the grid workspace (`program::grid`); empty for other kernels.
    pub spin_sites: &'a std::collections::HashSet<u32>,
    /// `%is_explicit_cluster` of the kernel (`program::cluster::explicit`).
    pub explicit_cluster: bool,
}

/// The integer condition of a comparison (`lt`, `le`, ... by the type's signedness; `lo`, `ls`, `hi`, `hs`
/// unsigned), or `None` for a float-only one.
pub(crate) fn int_cc(cmp: Cmp, signed: bool) -> Option<IntCC> {
    Some(match cmp {
        Cmp::Eq => IntCC::Equal,
        Cmp::Ne => IntCC::NotEqual,
        Cmp::Lt if signed => IntCC::SignedLessThan,
        Cmp::Le if signed => IntCC::SignedLessThanOrEqual,
        Cmp::Gt if signed => IntCC::SignedGreaterThan,
        Cmp::Ge if signed => IntCC::SignedGreaterThanOrEqual,
        Cmp::Lt | Cmp::Lo => IntCC::UnsignedLessThan,
        Cmp::Le | Cmp::Ls => IntCC::UnsignedLessThanOrEqual,
        Cmp::Gt | Cmp::Hi => IntCC::UnsignedGreaterThan,
        Cmp::Ge | Cmp::Hs => IntCC::UnsignedGreaterThanOrEqual,
        _ => return None,
    })
}

/// Where the code of the next op goes: into its own block when it starts one (falling through from the
/// current block unless that ended in a terminator), else on in the current block, or into a fresh
/// unreachable block after a terminator.
pub(crate) fn start_op(b: &mut FunctionBuilder<'_>, leader: Option<Block>, filled: &mut bool) {
    match leader {
        Some(blk) => {
            if !*filled {
                b.ins().jump(blk, &[]);
            }
            b.switch_to_block(blk);
        }
        None if *filled => {
            let blk = b.create_block();
            b.switch_to_block(blk);
        }
        None => return,
    }
    *filled = false;
}

/// The end of a thread loop's step: `to` set to the thread index `step` threads after `from`'s (the loop's
/// thread index is now `t_next`), then on to `head`. In a one-dimensional CTA tid.x is the thread index;
/// otherwise [`tid_carried`].
pub(crate) fn advance_tid(
    b: &mut FunctionBuilder<'_>,
    ctx: Value,
    (from, to): ([Variable; 3], [Variable; 3]),
    t_next: Value,
    step: i64,
    head: Block,
) {
    let one_d = one_dimensional(b, ctx);
    let (linear, carry) = (b.create_block(), b.create_block());
    b.ins().brif(one_d, linear, &[], carry, &[]);
    b.switch_to_block(linear);
    b.def_var(to[0], t_next);
    b.ins().jump(head, &[]);
    b.switch_to_block(carry);
    let next = tid_carried(b, ctx, from, step);
    for (v, x) in to.into_iter().zip(next) {
        b.def_var(v, x);
    }
    b.ins().jump(head, &[]);
}

/// Whether the CTA is one-dimensional (an `i8`).
pub(crate) fn one_dimensional(b: &mut FunctionBuilder<'_>, ctx: Value) -> Value {
    let nty = b.ins().load(I32, ro(), ctx, cx::NTID + 4);
    let ntz = b.ins().load(I32, ro(), ctx, cx::NTID + 8);
    // Both are at least 1: their OR is 1 only when both are.
    let yz = b.ins().bor(nty, ntz);
    b.ins().icmp_imm_u(IntCC::Equal, yz, 1)
}

/// The thread index `step` threads after `tid`'s: tid.x grows by `step` with carries into y and z (ntid.x is
/// a multiple of `step`).
pub(crate) fn tid_carried(b: &mut FunctionBuilder<'_>, ctx: Value, tid: [Variable; 3], step: i64) -> [Value; 3] {
    let ntx = b.ins().load(I32, ro(), ctx, cx::NTID);
    let nty = b.ins().load(I32, ro(), ctx, cx::NTID + 4);
    let (x, y, z) = (b.use_var(tid[0]), b.use_var(tid[1]), b.use_var(tid[2]));
    let x1 = b.ins().iadd_imm_s(x, step);
    let wrap_x = b.ins().icmp(IntCC::Equal, x1, ntx);
    let zero = b.ins().iconst(I32, 0);
    let nx = b.ins().select(wrap_x, zero, x1);
    let y1 = b.ins().iadd_imm_s(y, 1);
    let y1 = b.ins().select(wrap_x, y1, y);
    let wrap_y = b.ins().icmp(IntCC::Equal, y1, nty);
    let ny = b.ins().select(wrap_y, zero, y1);
    let z1 = b.ins().iadd_imm_s(z, 1);
    let nz = b.ins().select(wrap_y, z1, z);
    [nx, ny, nz]
}

pub fn kernel_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    s.params.extend([AbiParam::new(I64), AbiParam::new(I32), AbiParam::new(I32)]);
    s
}

pub fn device_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    s.params.extend([AbiParam::new(I64), AbiParam::new(I64), AbiParam::new(I64), AbiParam::new(I32)]);
    s.returns.push(AbiParam::new(I32));
    s
}

fn helper_signature(h: Helper, cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    let p = |t: Type| AbiParam::new(t);
    match h {
        Helper::Alu => {
            s.params.extend([p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
        Helper::AtomicNew => {
            s.params.extend([p(I64), p(I64), p(I64), p(I64)]);
            s.returns.push(p(I64));
        }
        Helper::Printf => {
            s.params.extend([p(I64), p(I32), p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
        Helper::AssertFail => s.params.extend([p(I64), p(I32), p(I64), p(I64), p(I64), p(I64)]),
        Helper::CheckAccess => {
            s.params.extend([p(I64), p(I64), p(I32), p(I32)]);
            s.returns.push(p(I32));
        }
        Helper::Clock => s.returns.push(p(I64)),
        Helper::BarArrive => s.params.extend([p(I64), p(I32), p(I32)]),
        Helper::IsGlobal => {
            s.params.extend([p(I64), p(I64), p(I32)]);
            s.returns.push(p(I32));
        }
        Helper::Malloc => {
            s.params.extend([p(I64), p(I64)]);
            s.returns.push(p(I64));
        }
        Helper::Free => {
            s.params.extend([p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
        Helper::Texture => {
            s.params.extend([p(I64), p(I32), p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
        Helper::BulkCopy => {
            s.params.extend([p(I64), p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
        Helper::GridSpin => {
            s.params.extend([p(I64), p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
        Helper::CpAsync | Helper::Mbarrier => {
            s.params.extend([p(I64), p(I64), p(I64), p(I64), p(I64)]);
            s.returns.push(p(I32));
        }
    }
    s
}

/// The native read-modify-write instruction of an atomic operation on `ty`, where there is one (both
/// translators: float addition, increments, compare-and-swap have none).
pub(crate) fn native_rmw(aop: AtomOp, ty: Ty) -> Option<AtomicRmwOp> {
    let int = !ty.is_float();
    match aop {
        AtomOp::Add if int => Some(AtomicRmwOp::Add),
        AtomOp::And => Some(AtomicRmwOp::And),
        AtomOp::Or => Some(AtomicRmwOp::Or),
        AtomOp::Xor => Some(AtomicRmwOp::Xor),
        AtomOp::Exch => Some(AtomicRmwOp::Xchg),
        AtomOp::Min if int => Some(if ty.is_signed() { AtomicRmwOp::Smin } else { AtomicRmwOp::Umin }),
        AtomOp::Max if int => Some(if ty.is_signed() { AtomicRmwOp::Smax } else { AtomicRmwOp::Umax }),
        _ => None,
    }
}

fn flags() -> MemFlagsData {
    MemFlagsData::new()
}

fn trusted() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// Loads of what never changes during a launch (context fields, tables, kernel parameters): Cranelift may
/// merge them and hoist them out of loops, the thread loop included.
fn ro() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

pub struct Translator<'a, 'b> {
    b: FunctionBuilder<'b>,
    env: &'a Env<'a>,
    prog: &'a Program,
    plan: &'a Plan,
    func: FuncId,
    is_kernel: bool,
    regs: Vec<Variable>,
    preds: Vec<Variable>,
    carry: Variable,
    /// Linear thread index within the CTA, its state words (`abi::thread`), its current frame.
    t: Variable,
    tb: Variable,
    frame: Variable,
    tid: [Variable; 3],
    /// Kernels with counted barriers: threads that reached the barrier in this pass over the CTA, and the
    /// mask applied to a thread's status before deciding to skip it (all ones; zero in a pass that follows
    /// a release, where every thread waits at the barrier and continues).
    arrived: Variable,
    status_mask: Variable,
    ctx: Value,
    blocks: HashMap<usize, Block>,
    /// Kernel: where a thread goes when it stops (the loop's next iteration).
    next_thread: Option<Block>,
    resume_blocks: Vec<Block>,
    filled: bool,
    /// Op being translated (for error sites).
    cur: usize,
    /// Stack slot for the operands and results of `Alu` helper calls.
    scratch: Option<StackSlot>,
    /// A device function that allocates: the thread's dynamic stack pointer at its entry (`stack.rs`).
    dyn_entry: Option<Variable>,
}

impl<'a, 'b> Translator<'a, 'b> {
    pub fn new(
        b: FunctionBuilder<'b>,
        env: &'a Env<'a>,
        func: FuncId,
        prog: &'a Program,
        plan: &'a Plan,
    ) -> Translator<'a, 'b> {
        let mut b = b;
        let regs = (0..prog.slots).map(|_| b.declare_var(I64)).collect();
        let preds = (0..prog.preds).map(|_| b.declare_var(I8)).collect();
        let carry = b.declare_var(I64);
        let t = b.declare_var(I32);
        let tb = b.declare_var(I64);
        let frame = b.declare_var(I64);
        let tid = [b.declare_var(I32), b.declare_var(I32), b.declare_var(I32)];
        let arrived = b.declare_var(I32);
        let status_mask = b.declare_var(I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ctx = b.block_params(entry)[0];
        Translator {
            b,
            env,
            prog,
            plan,
            func,
            is_kernel: prog.is_kernel,
            regs,
            preds,
            carry,
            t,
            tb,
            frame,
            tid,
            arrived,
            status_mask,
            ctx,
            blocks: HashMap::new(),
            next_thread: None,
            resume_blocks: Vec::new(),
            filled: false,
            cur: 0,
            scratch: None,
            dyn_entry: None,
        }
    }

    pub fn translate(mut self, frontend: cranelift_codegen::isa::TargetFrontendConfig) {
        let entry = self.b.current_block().expect("entry");
        let params: Vec<Value> = self.b.block_params(entry).to_vec();
        for (i, &lead) in self.plan.leader.iter().enumerate() {
            if lead {
                let blk = self.b.create_block();
                self.blocks.insert(i, blk);
            }
        }
        let first = self.block(0);
        if self.is_kernel {
            self.kernel_prologue(params[1], params[2], first);
        } else {
            self.b.def_var(self.tb, params[1]);
            self.b.def_var(self.frame, params[2]);
            self.b.def_var(self.t, params[3]);
            let zero = self.b.ins().iconst(I64, 0);
            self.b.def_var(self.carry, zero);
            self.init_tid_from_t();
            self.save_dyn_stack();
            self.b.ins().jump(first, &[]);
        }
        self.filled = true;
        let n = self.prog.ops.len();
        for i in 0..n {
            let leader = self.plan.leader[i].then(|| self.block(i));
            start_op(&mut self.b, leader, &mut self.filled);
            self.cur = i;
            self.lower(i);
        }
        if !self.filled {
            self.function_end();
        }
        self.b.seal_all_blocks();
        self.b.finalize(frontend);
    }

    fn block(&self, op: usize) -> Block {
        self.blocks[&op]
    }

    fn site(&self) -> u32 {
        self.env.site_base[&self.func] + self.cur as u32
    }

    // ---------------------------------------------------------------- kernel loop

    fn kernel_prologue(&mut self, lo: Value, hi: Value, first: Block) {
        let head = self.b.create_block();
        let start = self.b.create_block();
        let next = self.b.create_block();
        let exit = self.b.create_block();
        self.next_thread = Some(next);
        self.b.def_var(self.t, lo);
        // tid of thread `lo`, then advanced incrementally by the loop.
        self.init_tid_from_t();
        let zero = self.b.ins().iconst(I32, 0);
        self.b.def_var(self.arrived, zero);
        let ones = self.b.ins().iconst(I32, -1);
        self.b.def_var(self.status_mask, ones);
        self.b.ins().jump(head, &[]);

        self.b.switch_to_block(head);
        let t = self.b.use_var(self.t);
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, t, hi);
        self.b.ins().brif(done, exit, &[], start, &[]);

        self.b.switch_to_block(start);
        // The thread's state words: lane t % LANES of group t / LANES.
        let threads = self.ctx_i64(cx::THREADS);
        let group_bytes = self.ctx_i64(cx::GROUP_BYTES);
        let t64 = self.b.ins().uextend(I64, t);
        let group = self.b.ins().ushr_imm_s(t64, i64::from(thread::LANES.trailing_zeros()));
        let off = self.b.ins().imul(group, group_bytes);
        let lane = self.b.ins().band_imm_s(t64, i64::from(thread::LANES - 1));
        let lane = self.b.ins().ishl_imm_s(lane, 3);
        let off = self.b.ins().iadd(off, lane);
        let tb = self.b.ins().iadd(threads, off);
        self.b.def_var(self.tb, tb);
        let frame = self.local_base();
        self.b.def_var(self.frame, frame);
        // Without yield points every thread runs to its end in one call: no status to check or record.
        if !self.plan.yields.is_empty() {
            let st = self.b.ins().load(I32, trusted(), tb, thread::STATUS);
            let mask = self.b.use_var(self.status_mask);
            let skip = self.b.ins().band(st, mask);
            let ready = self.b.create_block();
            self.b.ins().brif(skip, next, &[], ready, &[]);
            self.b.switch_to_block(ready);
        }
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(self.carry, zero);
        if self.plan.yields.is_empty() {
            self.b.ins().jump(first, &[]);
        } else {
            let resume = self.b.ins().load(I32, trusted(), tb, thread::RESUME);
            let mut targets = vec![self.b.func.dfg.block_call(first, &[])];
            for _ in &self.plan.yields {
                let rb = self.b.create_block();
                self.resume_blocks.push(rb);
                targets.push(self.b.func.dfg.block_call(rb, &[]));
            }
            let default = self.b.func.dfg.block_call(next, &[]);
            let jt = self.b.create_jump_table(JumpTableData::new(default, &targets));
            self.b.ins().br_table(resume, jt);
        }

        // Next thread: t += 1, and tid advanced with carries into y and z (in a one-dimensional CTA, tid.x
        // is t).
        self.b.switch_to_block(next);
        let t = self.b.use_var(self.t);
        let t1 = self.b.ins().iadd_imm_s(t, 1);
        self.b.def_var(self.t, t1);
        advance_tid(&mut self.b, self.ctx, (self.tid, self.tid), t1, 1, head);

        self.b.switch_to_block(exit);
        if self.plan.counted_barriers {
            // Every thread of the CTA waits at the barrier: release them all and run the next pass here.
            let arrived = self.b.use_var(self.arrived);
            let n = self.b.ins().load(I32, ro(), self.ctx, cx::THREAD_COUNT);
            let all = self.b.ins().icmp(IntCC::Equal, arrived, n);
            let release = self.b.create_block();
            let leave = self.b.create_block();
            self.b.ins().brif(all, release, &[], leave, &[]);
            self.b.switch_to_block(release);
            let zero = self.b.ins().iconst(I32, 0);
            self.b.def_var(self.arrived, zero);
            self.b.def_var(self.status_mask, zero);
            self.b.def_var(self.t, lo);
            self.init_tid_from_t();
            let phase = self.b.ins().load(I32, trusted(), self.ctx, cx::PHASE);
            let phase = self.b.ins().iadd_imm_s(phase, 1);
            self.b.ins().store(trusted(), phase, self.ctx, cx::PHASE);
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(leave);
        }
        self.b.ins().return_(&[]);

        // Resume points: reload what was live, take the collective's results, continue after the yield.
        for k in 0..self.plan.yields.len() {
            let rb = self.resume_blocks[k];
            self.b.switch_to_block(rb);
            let y = &self.plan.yields[k];
            let tb = self.b.use_var(self.tb);
            for &v in &y.reload {
                let off = self.plan.home_offset(v).expect("live registers have homes");
                self.reload(v, tb, off);
            }
            if self.uses_carry() {
                let c = self.b.ins().load(I64, trusted(), tb, self.plan.carry_offset());
                self.b.def_var(self.carry, c);
            }
            let op = &self.prog.ops[y.op as usize];
            match y.kind {
                YieldKind::Barrier => {
                    if matches!(op.m.sub, Sub::Bar { red: Some(_), .. }) {
                        let out = self.b.ins().load(I64, trusted(), tb, self.plan.exchange_offset() + thread::OUT);
                        self.write(op.dst, out);
                    }
                }
                YieldKind::Collective => {
                    if op.dst != Dst::None {
                        let out = self.b.ins().load(I64, trusted(), tb, self.plan.exchange_offset() + thread::OUT);
                        self.write(op.dst, out);
                    }
                    if op.dst2 != Dst::None {
                        let out2 = self.b.ins().load(I64, trusted(), tb, self.plan.exchange_offset() + thread::OUT2);
                        self.write(op.dst2, out2);
                    }
                }
                // The runtime wrote the results into the spill words just reloaded.
                YieldKind::Runtime => {}
                YieldKind::Wait => self.resume_wait(op),
            }
            let cont = self.block(y.op as usize + 1);
            self.b.ins().jump(cont, &[]);
        }
    }

    /// The Cranelift variable of a liveness variable (register slots, then predicates).
    fn liveness_var(&self, v: usize) -> (Variable, Type) {
        let ns = self.prog.slots as usize;
        if v < ns {
            (self.regs[v], I64)
        } else {
            (self.preds[v - ns], I8)
        }
    }

    fn use_liveness_var(&mut self, v: usize) -> Value {
        let (var, _) = self.liveness_var(v);
        self.b.use_var(var)
    }

    fn reload(&mut self, v: usize, tb: Value, off: i32) {
        let (var, ty) = self.liveness_var(v);
        let value = self.b.ins().load(ty, trusted(), tb, off);
        self.b.def_var(var, value);
    }

    /// Whether any op reads or writes the carry flag (`.cc`, `addc`, `subc`, `madc`).
    fn uses_carry(&self) -> bool {
        self.prog.ops.iter().any(|o| o.m.cc || matches!(o.kind, Kind::Addc | Kind::Subc | Kind::Madc))
    }

    fn init_tid_from_t(&mut self) {
        let t = self.b.use_var(self.t);
        let ntx = self.b.ins().load(I32, ro(), self.ctx, cx::NTID);
        let nty = self.b.ins().load(I32, ro(), self.ctx, cx::NTID + 4);
        let x = self.b.ins().urem(t, ntx);
        let q = self.b.ins().udiv(t, ntx);
        let y = self.b.ins().urem(q, nty);
        let z = self.b.ins().udiv(q, nty);
        self.b.def_var(self.tid[0], x);
        self.b.def_var(self.tid[1], y);
        self.b.def_var(self.tid[2], z);
    }

    /// The thread finished (`ret`/`exit` of the kernel, or `exit` anywhere).
    fn thread_exit(&mut self) {
        if self.is_kernel {
            if !self.plan.yields.is_empty() {
                let tb = self.b.use_var(self.tb);
                let done = self.b.ins().iconst(I32, i64::from(status::DONE));
                self.b.ins().store(trusted(), done, tb, thread::STATUS);
                let f = self.b.ins().load(I32, trusted(), self.ctx, cx::FINISHED);
                let f = self.b.ins().iadd_imm_s(f, 1);
                self.b.ins().store(trusted(), f, self.ctx, cx::FINISHED);
            }
            let next = self.next_thread.expect("kernel loop");
            self.b.ins().jump(next, &[]);
        } else {
            let r = self.b.ins().iconst(I32, i64::from(ret::EXIT));
            self.b.ins().return_(&[r]);
        }
        self.filled = true;
    }

    fn function_end(&mut self) {
        if self.is_kernel {
            self.thread_exit();
        } else {
            self.restore_dyn_stack();
            let r = self.b.ins().iconst(I32, i64::from(ret::OK));
            self.b.ins().return_(&[r]);
            self.filled = true;
        }
    }

    /// Records an error in the context and stops (the kernel returns at once; a device function returns
    /// `ERROR` to its caller, which does the same).
    fn fail(&mut self, code: u32, addr: Option<Value>, size: u32) {
        let c = self.b.ins().iconst(I32, i64::from(code));
        self.fail_with(c, addr, size);
    }

    /// [`Self::fail`] in the middle of an op's lowering: what follows goes into a fresh (unreachable) block.
    fn fail_and_continue(&mut self, code: u32, addr: Option<Value>, size: u32) {
        self.fail(code, addr, size);
        let blk = self.b.create_block();
        self.b.switch_to_block(blk);
        self.filled = false;
    }

    /// [`Self::fail`] with an error code computed at run time (an `i32` value).
    fn fail_with(&mut self, code: Value, addr: Option<Value>, size: u32) {
        let site = self.site();
        self.b.ins().store(trusted(), code, self.ctx, cx::ERROR_CODE);
        let s = self.b.ins().iconst(I32, i64::from(site));
        self.b.ins().store(trusted(), s, self.ctx, cx::ERROR_SITE);
        let t = self.b.use_var(self.t);
        self.b.ins().store(trusted(), t, self.ctx, cx::ERROR_THREAD);
        if let Some(a) = addr {
            self.b.ins().store(trusted(), a, self.ctx, cx::ERROR_ADDR);
            let sz = self.b.ins().iconst(I64, i64::from(size));
            self.b.ins().store(trusted(), sz, self.ctx, cx::ERROR_SIZE);
        }
        self.stop_on_error();
    }

    /// Leaves the function after an error was recorded.
    fn stop_on_error(&mut self) {
        if self.is_kernel {
            self.b.ins().return_(&[]);
        } else {
            let r = self.b.ins().iconst(I32, i64::from(ret::ERROR));
            self.b.ins().return_(&[r]);
        }
        self.filled = true;
    }

    /// Branches to a failure path when `cond` is non-zero, and continues otherwise.
    fn fail_if(&mut self, cond: Value, code: u32, addr: Option<Value>, size: u32) {
        let bad = self.b.create_block();
        let ok = self.b.create_block();
        self.b.ins().brif(cond, bad, &[], ok, &[]);
        self.b.switch_to_block(bad);
        self.fail(code, addr, size);
        self.b.switch_to_block(ok);
        self.filled = false;
    }

    // ---------------------------------------------------------------- operands

    fn helper(&mut self, h: Helper, args: &[Value]) -> Option<Value> {
        let sig = self.b.import_signature(helper_signature(h, self.env.call_conv));
        let table = self.ctx_i64(cx::HELPERS);
        let f = self.b.ins().load(I64, ro(), table, (h as usize * 8) as i32);
        let call = self.b.ins().call_indirect(sig, f, args);
        self.b.inst_results(call).first().copied()
    }

    /// Where the current thread's local memory starts (its kernel frame).
    fn local_base(&mut self) -> Value {
        let locals = self.ctx_i64(cx::LOCALS);
        let stride = self.ctx_i64(cx::LOCAL_STRIDE);
        let t = self.b.use_var(self.t);
        let t = self.b.ins().uextend(I64, t);
        let off = self.b.ins().imul(t, stride);
        self.b.ins().iadd(locals, off)
    }

    /// A 64-bit field of the context (pointers, sizes): constant for the launch.
    fn ctx_i64(&mut self, off: i32) -> Value {
        self.b.ins().load(I64, ro(), self.ctx, off)
    }

    fn ctx_u32(&mut self, off: i32) -> Value {
        let v = self.b.ins().load(I32, ro(), self.ctx, off);
        self.b.ins().uextend(I64, v)
    }

    fn lane(&mut self) -> Value {
        let t = self.b.use_var(self.t);
        let t = self.b.ins().uextend(I64, t);
        self.b.ins().band_imm_s(t, 31)
    }

    fn special(&mut self, s: SpecialReg, comp: u8) -> Value {
        let c = i32::from(comp.min(2)) * 4;
        let comp_ok = comp < 3;
        match s {
            SpecialReg::Tid if comp_ok => {
                let v = self.b.use_var(self.tid[comp as usize]);
                self.b.ins().uextend(I64, v)
            }
            SpecialReg::Ntid if comp_ok => self.ctx_u32(cx::NTID + c),
            SpecialReg::Ctaid | SpecialReg::Clusterid if comp_ok => self.ctx_u32(cx::CTAID + c),
            SpecialReg::Nctaid | SpecialReg::Nclusterid if comp_ok => self.ctx_u32(cx::NCTAID + c),
            SpecialReg::Laneid => self.lane(),
            SpecialReg::Warpid => {
                let t = self.b.use_var(self.t);
                let t = self.b.ins().uextend(I64, t);
                self.b.ins().ushr_imm_s(t, 5)
            }
            SpecialReg::Nwarpid => self.b.ins().iconst(I64, 64),
            SpecialReg::Nsmid | SpecialReg::ClusterNctarank => self.b.ins().iconst(I64, 1),
            SpecialReg::ClusterNctaid => self.b.ins().iconst(I64, i64::from(comp_ok)),
            SpecialReg::IsExplicitCluster => self.b.ins().iconst(I64, i64::from(self.env.explicit_cluster)),
            SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe => {
                let lane = self.lane();
                let one = self.b.ins().iconst(I64, 1);
                let eq = self.b.ins().ishl(one, lane);
                let lt = self.b.ins().iadd_imm_s(eq, -1);
                let le = self.b.ins().bor(lt, eq);
                let m32 = 0xFFFF_FFFFi64;
                match s {
                    SpecialReg::LanemaskEq => eq,
                    SpecialReg::LanemaskLt => lt,
                    SpecialReg::LanemaskLe => le,
                    SpecialReg::LanemaskGt => {
                        let n = self.b.ins().bnot(le);
                        self.b.ins().band_imm_s(n, m32)
                    }
                    _ => {
                        let n = self.b.ins().bnot(lt);
                        self.b.ins().band_imm_s(n, m32)
                    }
                }
            }
            SpecialReg::Clock | SpecialReg::ClockHi | SpecialReg::Clock64 => {
                let c = self.helper(Helper::Clock, &[]).expect("clock");
                match s {
                    SpecialReg::Clock => self.b.ins().band_imm_s(c, 0xFFFF_FFFF),
                    SpecialReg::ClockHi => self.b.ins().ushr_imm_s(c, 32),
                    _ => c,
                }
            }
            SpecialReg::Globaltimer | SpecialReg::GlobaltimerLo | SpecialReg::GlobaltimerHi => {
                let c = self.helper(Helper::Clock, &[]).expect("clock");
                match s {
                    SpecialReg::GlobaltimerLo => self.b.ins().band_imm_s(c, 0xFFFF_FFFF),
                    SpecialReg::GlobaltimerHi => self.b.ins().ushr_imm_s(c, 32),
                    _ => c,
                }
            }
            SpecialReg::DynamicSmemSize => self.ctx_u32(cx::DYNAMIC_SHARED),
            SpecialReg::TotalSmemSize | SpecialReg::AggrSmemSize => self.ctx_i64(cx::SHARED_SIZE),
            // The grid workspace (`program::grid`): high half in %envreg1.
            SpecialReg::Envreg1 => {
                let w = self.ctx_i64(cx::WORKSPACE);
                self.b.ins().ushr_imm_s(w, 32)
            }
            SpecialReg::Envreg2 => {
                let w = self.ctx_i64(cx::WORKSPACE);
                self.b.ins().band_imm_s(w, 0xFFFF_FFFF)
            }
            _ => self.b.ins().iconst(I64, 0),
        }
    }

    /// The device address of a module variable (loaded from the context's table).
    fn global(&mut self, addr: u64) -> Value {
        let k = self
            .env
            .globals
            .iter()
            .position(|&(base, size)| addr >= base && addr < base + size.max(1))
            .or_else(|| self.env.globals.iter().position(|&(base, size)| addr == base + size))
            .expect("a module variable");
        let (base, _) = self.env.globals[k];
        let table = self.ctx_i64(cx::GLOBALS);
        let v = self.b.ins().load(I64, ro(), table, (k * 8) as i32);
        if addr == base {
            v
        } else {
            self.b.ins().iadd_imm_s(v, (addr - base) as i64)
        }
    }

    /// A symbol as a value: its address in its own space (shared: the offset; local, parameters: host
    /// addresses, which are also their generic addresses in the JIT).
    fn symbol(&mut self, sym: SymAddr, extra: i64) -> Value {
        let v = match sym {
            SymAddr::Global(a) => self.global(a),
            SymAddr::Shared(o) => self.b.ins().iconst(I64, o as i64),
            SymAddr::Frame(o) => {
                let f = self.b.use_var(self.frame);
                self.b.ins().iadd_imm_s(f, o as i64)
            }
            SymAddr::KernelParam(o) => {
                let p = self.ctx_i64(cx::PARAMS);
                self.b.ins().iadd_imm_s(p, o as i64)
            }
            SymAddr::Func(a) => self.b.ins().iconst(I64, a as i64),
        };
        if extra == 0 {
            v
        } else {
            self.b.ins().iadd_imm_s(v, extra)
        }
    }

    /// A source operand as the emulator reads it: the raw `u64` bits.
    fn read(&mut self, s: &Src) -> Value {
        match *s {
            Src::Reg(r) => self.b.use_var(self.regs[r as usize]),
            Src::Pred(p, neg) => {
                let v = self.b.use_var(self.preds[p as usize]);
                let v = self.b.ins().uextend(I64, v);
                if neg {
                    self.b.ins().bxor_imm_s(v, 1)
                } else {
                    v
                }
            }
            Src::Imm(v) => self.b.ins().iconst(I64, v as i64),
            Src::Special(s, c) => self.special(s, c),
            Src::Sym(sym, off) => self.symbol(sym, off),
            Src::None => self.b.ins().iconst(I64, 0),
        }
    }

    /// A predicate source as an `i8` 0/1.
    fn read_pred(&mut self, s: &Src) -> Value {
        match *s {
            Src::Pred(p, neg) => {
                let v = self.b.use_var(self.preds[p as usize]);
                if neg {
                    self.b.ins().bxor_imm_s(v, 1)
                } else {
                    v
                }
            }
            _ => {
                let v = self.read(s);
                let v = self.b.ins().band_imm_s(v, 1);
                self.b.ins().ireduce(I8, v)
            }
        }
    }

    /// Writes raw bits to a destination (masked to the register's width, as the emulator does).
    fn write(&mut self, d: Dst, v: Value) {
        match d {
            Dst::Reg(slot, mask) => {
                // A value zero-extended from no more bits than the register has needs no mask.
                let narrow = self.zero_extended_bits(v).is_some_and(|k| k <= mask.count_ones());
                let v = if mask == u64::MAX || narrow { v } else { self.b.ins().band_imm_s(v, mask as i64) };
                self.b.def_var(self.regs[slot as usize], v);
            }
            Dst::Pred(p) => {
                let z = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                self.b.def_var(self.preds[p as usize], z);
            }
            Dst::Sink | Dst::None => {}
        }
    }

    fn write_bool(&mut self, d: Dst, b8: Value) {
        match d {
            Dst::Pred(p) => self.b.def_var(self.preds[p as usize], b8),
            _ => {
                let v = self.b.ins().uextend(I64, b8);
                self.write(d, v);
            }
        }
    }

    fn mask(&mut self, v: Value, ty: Ty) -> Value {
        let bits = ty.bits();
        if bits >= 64 || self.zero_extended_bits(v).is_some_and(|k| k <= bits) {
            v
        } else {
            self.b.ins().band_imm_s(v, ty.mask() as i64)
        }
    }

    /// How many low bits of `v` can be non-zero, when its definition shows it (a zero-extending load or
    /// extension, or an AND with a low mask): masks to that width or more are then no-ops, which Cranelift
    /// does not see by itself.
    fn zero_extended_bits(&self, v: Value) -> Option<u32> {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else { return None };
        match dfg.insts[inst].opcode() {
            Opcode::Uextend => dfg.inst_args(inst).first().map(|&x| dfg.value_type(x).bits()),
            Opcode::Uload8 => Some(8),
            Opcode::Uload16 => Some(16),
            Opcode::Uload32 => Some(32),
            Opcode::Band => dfg.inst_args(inst).iter().find_map(|&x| {
                let ValueDef::Result(c, 0) = dfg.value_def(x) else { return None };
                match dfg.insts[c] {
                    InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => {
                        let m = imm.bits() as u64;
                        (m & m.wrapping_add(1) == 0).then(|| 64 - m.leading_zeros())
                    }
                    _ => None,
                }
            }),
            _ => None,
        }
    }

    /// The value extended to 64 bits by the type's signedness (the emulator's `Ty::extend`).
    fn extend(&mut self, v: Value, ty: Ty) -> Value {
        match ty {
            Ty::S8 | Ty::S16 | Ty::S32 => {
                let narrow = match ty {
                    Ty::S8 => types::I8,
                    Ty::S16 => types::I16,
                    _ => I32,
                };
                let n = self.b.ins().ireduce(narrow, v);
                self.b.ins().sextend(I64, n)
            }
            _ => self.mask(v, ty),
        }
    }

    /// The argument of `v`'s defining instruction when that is `opcode` (one value argument).
    fn unary_def(&self, v: Value, opcode: cranelift_codegen::ir::Opcode) -> Option<Value> {
        let dfg = &self.b.func.dfg;
        let cranelift_codegen::ir::ValueDef::Result(inst, 0) = dfg.value_def(v) else { return None };
        (dfg.insts[inst].opcode() == opcode).then(|| dfg.inst_args(inst).first().copied()).flatten()
    }

    /// `v`'s bits as an `f32`. When `v` holds the bits of an `f32` computed in this block, that value itself:
    /// registers are `i64` bits, and Cranelift does not fold the float → int → float moves between ops.
    fn f32_of(&mut self, v: Value) -> Value {
        use cranelift_codegen::ir::Opcode as O;
        if let Some(f) = self.unary_def(v, O::Uextend).and_then(|n| self.unary_def(n, O::Bitcast)) {
            if self.b.func.dfg.value_type(f) == types::F32 {
                return f;
            }
        }
        let n = self.b.ins().ireduce(I32, v);
        self.b.ins().bitcast(types::F32, MemFlagsData::new(), n)
    }

    fn f64_of(&mut self, v: Value) -> Value {
        use cranelift_codegen::ir::Opcode as O;
        if let Some(f) = self.unary_def(v, O::Bitcast) {
            if self.b.func.dfg.value_type(f) == types::F64 {
                return f;
            }
        }
        self.b.ins().bitcast(types::F64, MemFlagsData::new(), v)
    }

    fn bits_of_f32(&mut self, f: Value) -> Value {
        let n = self.b.ins().bitcast(I32, MemFlagsData::new(), f);
        self.b.ins().uextend(I64, n)
    }

    fn bits_of_f64(&mut self, f: Value) -> Value {
        self.b.ins().bitcast(I64, MemFlagsData::new(), f)
    }

    // ---------------------------------------------------------------- ops

    fn lower(&mut self, i: usize) {
        let op = &self.prog.ops[i];
        if let Some(y) = self.plan.yields.iter().position(|y| y.op as usize == i) {
            self.lower_yield(i, y);
            return;
        }
        match op.kind {
            Kind::Bra => {
                let target = self.block(op.target as usize);
                match op.guard {
                    Some((p, neg)) => {
                        let c = self.b.use_var(self.preds[p as usize]);
                        let fall = self.block(i + 1);
                        if neg {
                            self.b.ins().brif(c, fall, &[], target, &[]);
                        } else {
                            self.b.ins().brif(c, target, &[], fall, &[]);
                        }
                    }
                    None => {
                        self.b.ins().jump(target, &[]);
                    }
                }
                self.filled = true;
                return;
            }
            Kind::Ret | Kind::Exit | Kind::Trap => {
                let body = self.b.create_block();
                let fall = if op.guard.is_some() { Some(self.block(i + 1)) } else { None };
                self.guard_branch(op, body, fall);
                self.b.switch_to_block(body);
                match op.kind {
                    Kind::Trap => self.fail(error::TRAP, None, 0),
                    Kind::Exit => self.thread_exit(),
                    _ => self.function_end(),
                }
                self.filled = true;
                return;
            }
            _ => {}
        }
        let Some((p, neg)) = op.guard else {
            self.lower_body(op);
            self.store_eagerly(i);
            return;
        };
        let c = self.b.use_var(self.preds[p as usize]);
        let yes = self.b.create_block();
        let cont = self.b.create_block();
        if neg {
            self.b.ins().brif(c, cont, &[], yes, &[]);
        } else {
            self.b.ins().brif(c, yes, &[], cont, &[]);
        }
        self.b.switch_to_block(yes);
        self.filled = false;
        self.lower_body(op);
        if !self.filled {
            self.b.ins().jump(cont, &[]);
        }
        self.b.switch_to_block(cont);
        self.filled = false;
        self.store_eagerly(i);
    }

    /// Stores the registers op `i` wrote into their homes when the plan says so ([`Plan::eager`]).
    fn store_eagerly(&mut self, i: usize) {
        if !self.plan.eager.get(i).copied().unwrap_or(false) || self.filled {
            return;
        }
        let mut defs = Vec::new();
        crate::plan::for_each_def(self.prog, &self.prog.ops[i], |v| defs.push(v));
        for v in defs {
            if let Some(off) = self.plan.home_offset(v) {
                let tb = self.b.use_var(self.tb);
                let value = self.use_liveness_var(v);
                self.b.ins().store(trusted(), value, tb, off);
            }
        }
    }

    /// Stores the registers live across a yield point (`spill`) and the carry flag into the thread's homes,
    /// where the thread reloads them when it resumes.
    fn store_live(&mut self, spill: &[usize], tb: Value) {
        for &v in spill {
            let off = self.plan.home_offset(v).expect("live registers have homes");
            let value = self.use_liveness_var(v);
            self.b.ins().store(trusted(), value, tb, off);
        }
        if self.uses_carry() {
            let cv = self.b.use_var(self.carry);
            self.b.ins().store(trusted(), cv, tb, self.plan.carry_offset());
        }
    }
    /// Branches to `body` when the op's guard holds, else to `fall` (unguarded: always `body`).
    fn guard_branch(&mut self, op: &Op, body: Block, fall: Option<Block>) {
        match (op.guard, fall) {
            (Some((p, neg)), Some(fall)) => {
                let c = self.b.use_var(self.preds[p as usize]);
                if neg {
                    self.b.ins().brif(c, fall, &[], body, &[]);
                } else {
                    self.b.ins().brif(c, body, &[], fall, &[]);
                }
            }
            _ => {
                self.b.ins().jump(body, &[]);
            }
        }
    }

    fn lower_yield(&mut self, i: usize, k: usize) {
        let op = &self.prog.ops[i];
        let y = &self.plan.yields[k];
        if y.kind == YieldKind::Wait {
            self.lower_wait(i, k);
            return;
        }
        let body = self.b.create_block();
        let fall = self.block(i + 1);
        self.guard_branch(op, body, op.guard.map(|_| fall));
        self.b.switch_to_block(body);
        self.filled = false;
        let tb = self.b.use_var(self.tb);
        let (a, bb, c, st) = match y.kind {
            YieldKind::Barrier => {
                let red = matches!(op.m.sub, Sub::Bar { red: Some(_), .. });
                let a = self.read(&op.a);
                let bb = self.read(&op.b);
                let c = if red { self.read(&op.c) } else { self.b.ins().iconst(I64, 0) };
                (a, bb, c, status::BARRIER)
            }
            YieldKind::Collective | YieldKind::Runtime | YieldKind::Wait => {
                let a = self.read(&op.a);
                let bb = self.read(&op.b);
                let c = self.read(&op.c);
                (a, bb, c, status::COLLECTIVE)
            }
        };
        // A barrier's id and count are usually immediates: the runtime then reads them from the op.
        let constant = |s: &Src| matches!(s, Src::Imm(_) | Src::None);
        let barrier = y.kind == YieldKind::Barrier;
        if !(barrier && constant(&op.a)) {
            self.b.ins().store(trusted(), a, tb, self.plan.exchange_offset() + thread::POST_A);
        }
        if !(barrier && constant(&op.b)) {
            self.b.ins().store(trusted(), bb, tb, self.plan.exchange_offset() + thread::POST_B);
        }
        if y.kind != YieldKind::Barrier || matches!(op.m.sub, Sub::Bar { red: Some(_), .. }) {
            self.b.ins().store(trusted(), c, tb, self.plan.exchange_offset() + thread::POST_C);
        }
        if op.kind == Kind::Shfl && op.d != Src::None {
            let d = self.read(&op.d);
            self.b.ins().store(trusted(), d, tb, self.plan.exchange_offset() + thread::POST_D);
        }
        self.store_live(&y.spill, tb);
        // Status and resume point in one store (they are adjacent words).
        const _: () = assert!(thread::RESUME == thread::STATUS + 4);
        let word = i64::from(st) | (k as i64 + 1) << 32;
        let w = self.b.ins().iconst(I64, word);
        self.b.ins().store(trusted(), w, tb, thread::STATUS);
        if self.plan.counted_barriers {
            let a = self.b.use_var(self.arrived);
            let a = self.b.ins().iadd_imm_s(a, 1);
            self.b.def_var(self.arrived, a);
        }
        let next = self.next_thread.expect("yield points only in kernels");
        self.b.ins().jump(next, &[]);
        self.filled = true;
    }

    fn lower_body(&mut self, op: &Op) {
        match op.kind {
            Kind::Ld => self.load(op),
            Kind::St => self.store(op),
            Kind::Atom | Kind::Red => self.atomic(op),
            Kind::Atom128 => self.atomic128(op),
            Kind::Move128 => self.move128(op),
            Kind::Call => self.call(op),
            Kind::Texture => self.texture(op),
            Kind::CpAsync => self.cp_async(op),
            Kind::Mbarrier => self.mbarrier(op),
            Kind::BulkCopy => self.bulk_copy(op),
            Kind::Brx => self.brx(op),
            Kind::Bar => {
                // `bar.arrive` (a waiting barrier is a yield point).
                let a = self.read(&op.a);
                let a = self.b.ins().ireduce(I32, a);
                let bb = self.read(&op.b);
                let bb = self.b.ins().ireduce(I32, bb);
                self.helper(Helper::BarArrive, &[self.ctx, a, bb]);
            }
            Kind::Nop => {}
            Kind::Cvta => self.cvta(op),
            Kind::Isspacep => self.isspacep(op),
            Kind::Mapa => self.mapa(op),
            Kind::StackSave | Kind::StackRestore | Kind::Alloca => self.stack_op(op),
            Kind::Pack => {
                let Some(Extra::Srcs(srcs)) = op.extra.as_deref() else { return };
                let part = op.ty.bits() / srcs.len().max(1) as u32;
                let mut acc = self.b.ins().iconst(I64, 0);
                for (k, s) in srcs.iter().enumerate() {
                    let v = self.read(s);
                    let v = if part < 64 { self.b.ins().band_imm_s(v, program::mask_bits(part) as i64) } else { v };
                    let sh = part * k as u32;
                    let v = if sh > 0 && sh < 64 { self.b.ins().ishl_imm_s(v, i64::from(sh)) } else { v };
                    acc = self.b.ins().bor(acc, v);
                }
                self.write(op.dst, acc);
            }
            Kind::Unpack => {
                let Some(Extra::Dsts(dsts)) = op.extra.as_deref() else { return };
                let a = self.read(&op.a);
                let part = op.ty.bits() / dsts.len().max(1) as u32;
                for (k, d) in dsts.iter().enumerate() {
                    let sh = part * k as u32;
                    let v = if sh > 0 && sh < 64 { self.b.ins().ushr_imm_s(a, i64::from(sh)) } else { a };
                    self.write(*d, v);
                }
            }
            _ => {
                if !self.native_alu(op) {
                    self.fallback(op);
                }
            }
        }
    }

    /// Any op the emulator's lane arithmetic covers, through the `Alu` helper.
    fn fallback(&mut self, op: &Op) {
        // io = [a, b, c, d, carry, out, out2] in a stack slot of this function.
        let slot = *self.scratch.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 3))
        });
        let srcs = [op.a, op.b, op.c, op.d];
        for (k, s) in srcs.iter().enumerate() {
            let v = self.read(s);
            self.b.ins().stack_store(I64, v, slot, 8 * k as i32);
        }
        let c = self.b.use_var(self.carry);
        self.b.ins().stack_store(I64, c, slot, 32);
        let ops = self.ctx_i64(cx::OPS);
        let site = self.site();
        let opp = self.b.ins().load(I64, ro(), ops, (site * 8) as i32);
        let io = self.b.ins().stack_addr(I64, slot, 0);
        let ok = self.helper(Helper::Alu, &[opp, io]).expect("alu");
        let bad = self.b.ins().icmp_imm_s(IntCC::Equal, ok, 0);
        self.fail_if(bad, error::UNSUPPORTED, None, 0);
        let c = self.b.ins().stack_load(I64, I64, slot, 32);
        self.b.def_var(self.carry, c);
        let out = self.b.ins().stack_load(I64, I64, slot, 40);
        self.write(op.dst, out);
        if op.dst2 != Dst::None {
            let out2 = self.b.ins().stack_load(I64, I64, slot, 48);
            self.write(op.dst2, out2);
        }
    }

    /// `cp.async`, for this thread: the addresses and the number of source bytes here, the copy in the
    /// `CpAsync` helper (with the checks of `ld` and `st`).
    fn cp_async(&mut self, op: &Op) {
        let Some(Extra::Copy(c)) = op.extra.as_deref() else { return };
        let dst = self.address(op);
        let src = match c.src.base {
            Src::Sym(sym, extra) => self.symbol(sym, extra),
            ref s => self.read(s),
        };
        let src = if c.src.offset != 0 { self.b.ins().iadd_imm_s(src, c.src.offset) } else { src };
        let size = i64::from(c.size);
        let mut n = match &c.src_size {
            Some(s) => {
                let v = self.read(s);
                let v = self.b.ins().band_imm_u(v, 0xffff_ffff);
                let cap = self.b.ins().iconst(I64, size);
                self.b.ins().umin(v, cap)
            }
            None => self.b.ins().iconst(I64, size),
        };
        if let Some(p) = &c.ignore_src {
            let g = self.read(p);
            let zero = self.b.ins().iconst(I64, 0);
            n = self.b.ins().select(g, zero, n);
        }
        let size_v = self.b.ins().iconst(I64, size);
        let r = self.helper(Helper::CpAsync, &[self.ctx, dst, src, n, size_v]).expect("cp.async");
        let bad_src = self.b.ins().icmp_imm_u(IntCC::Equal, r, 1);
        self.fail_if(bad_src, error::OUT_OF_BOUNDS, Some(src), c.size);
        let bad_dst = self.b.ins().icmp_imm_u(IntCC::Equal, r, 2);
        self.fail_if(bad_dst, error::OUT_OF_BOUNDS, Some(dst), c.size);
        let misaligned = self.b.ins().icmp_imm_u(IntCC::Equal, r, 3);
        self.fail_if(misaligned, error::MISALIGNED, Some(dst), c.size);
    }

    /// A texture or surface instruction, for this thread alone: its sources, and its destinations' old
    /// values, go to a stack slot in `TexOp::operands` order; the `Texture` helper runs the emulator's
    /// semantics (`program::texture`) for this one lane and writes the results there; they are read back.
    /// (They were yield points once, resolved per warp by the runtime: 6.6 Mpixel/s.)
    fn texture(&mut self, op: &Op) {
        let Some(Extra::Texture(t)) = op.extra.as_deref() else { return };
        let (mut srcs, mut dsts) = (Vec::new(), Vec::new());
        t.operands(|s| srcs.push(*s), |d| dsts.push(*d));
        let words = (srcs.len() + dsts.len()).max(1) as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8 * words, 3));
        for (k, s) in srcs.iter().enumerate() {
            let v = self.read(s);
            self.b.ins().stack_store(I64, v, slot, 8 * k as i32);
        }
        let old = |d: &Dst| match *d {
            Dst::Reg(r, _) => Src::Reg(r),
            Dst::Pred(p) => Src::Pred(p, false),
            _ => Src::Imm(0),
        };
        for (k, d) in dsts.iter().enumerate() {
            let v = self.read(&old(d));
            self.b.ins().stack_store(I64, v, slot, 8 * (srcs.len() + k) as i32);
        }
        let ops = self.ctx_i64(cx::OPS);
        let site = self.site();
        let opp = self.b.ins().load(I64, ro(), ops, (site * 8) as i32);
        let io = self.b.ins().stack_addr(I64, slot, 0);
        let t = self.b.use_var(self.t);
        let bad = self.helper(Helper::Texture, &[self.ctx, t, opp, io]).expect("texture");
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, bad, 0);
        self.fail_if(bad, error::TEXTURE, None, 0);
        for (k, d) in dsts.iter().enumerate() {
            let v = self.b.ins().stack_load(I64, I64, slot, 8 * (srcs.len() + k) as i32);
            self.write(*d, v);
        }
    }

    fn address(&mut self, op: &Op) -> Value {
        self.address_of(&op.mem, op.m.space)
    }

    /// The host address of memory operand `mem` in `space`.
    fn address_of(&mut self, mem: &program::MemRef, space: Space) -> Value {
        let base = match mem.base {
            Src::Sym(SymAddr::Shared(o), extra) => {
                let sh = self.ctx_i64(cx::SHARED);
                return self.b.ins().iadd_imm_s(sh, o as i64 + extra + mem.offset);
            }
            Src::Sym(sym, extra) => self.symbol(sym, extra),
            ref s => self.read(s),
        };
        let a = if mem.offset != 0 { self.b.ins().iadd_imm_s(base, mem.offset) } else { base };
        if space == Space::Shared {
            let sh = self.ctx_i64(cx::SHARED);
            self.b.ins().iadd(sh, a)
        } else {
            a
        }
    }

    /// Checked mode: the access must lie inside its memory.
    fn check_access(&mut self, op: &Op, addr: Value, size: u32, write: bool) {
        if !self.env.check {
            return;
        }
        match op.m.space {
            Space::Shared => {
                let sh = self.ctx_i64(cx::SHARED);
                let len = self.ctx_i64(cx::SHARED_SIZE);
                let off = self.b.ins().isub(addr, sh);
                let end = self.b.ins().iadd_imm_s(off, i64::from(size));
                let bad1 = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, len);
                let bad2 = self.b.ins().icmp(IntCC::UnsignedLessThan, end, off);
                let bad = self.b.ins().bor(bad1, bad2);
                let shared_off = off;
                self.fail_if(bad, error::OUT_OF_BOUNDS, Some(shared_off), size);
            }
            Space::Local => {
                // The current function's frame: [frame, frame + frame size), or what is allocated of the
                // thread's dynamic stack.
                let frame = self.b.use_var(self.frame);
                let off = self.b.ins().isub(addr, frame);
                let end = self.b.ins().iadd_imm_s(off, i64::from(size));
                let bad1 = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThan, end, self.prog.frame.size as i64);
                let bad2 = self.b.ins().icmp(IntCC::UnsignedLessThan, end, off);
                let mut bad = self.b.ins().bor(bad1, bad2);
                if let Some(outside) = self.outside_dyn_stack(addr, size) {
                    bad = self.b.ins().band(bad, outside);
                }
                self.fail_if(bad, error::OUT_OF_BOUNDS, Some(off), size);
            }
            Space::Param => {}
            _ => {
                let sz = self.b.ins().iconst(I32, i64::from(size));
                let w = self.b.ins().iconst(I32, i64::from(write));
                let r = self.helper(Helper::CheckAccess, &[self.ctx, addr, sz, w]).expect("check");
                // The helper's code: 0 ok, else an error code.
                let bad = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let blk_bad = self.b.create_block();
                let ok = self.b.create_block();
                self.b.ins().brif(bad, blk_bad, &[], ok, &[]);
                self.b.switch_to_block(blk_bad);
                self.fail_with(r, Some(addr), size);
                self.b.switch_to_block(ok);
                self.filled = false;
            }
        }
    }

    fn mem_type(bytes: u32) -> Type {
        match bytes {
            1 => types::I8,
            2 => types::I16,
            4 => I32,
            _ => I64,
        }
    }

    fn load_value(&mut self, addr: Value, off: i32, ty: Ty) -> Value {
        self.load_with(flags(), addr, off, ty)
    }

    fn load_with(&mut self, flags: MemFlagsData, addr: Value, off: i32, ty: Ty) -> Value {
        // Floats load into float registers; the bits form folds away when the value feeds float ops.
        match ty {
            Ty::F32 => {
                let f = self.b.ins().load(types::F32, flags, addr, off);
                return self.bits_of_f32(f);
            }
            Ty::F64 => {
                let f = self.b.ins().load(types::F64, flags, addr, off);
                return self.bits_of_f64(f);
            }
            _ => {}
        }
        let bytes = ty.bytes();
        if bytes == 8 {
            return self.b.ins().load(I64, flags, addr, off);
        }
        let mt = Self::mem_type(bytes);
        if flags.readonly() && flags.can_move() {
            // Cranelift hoists a movable `load` out of loops, not an extending load: load narrow, then extend.
            let v = self.b.ins().load(mt, flags, addr, off);
            return if ty.is_signed() { self.b.ins().sextend(I64, v) } else { self.b.ins().uextend(I64, v) };
        }
        if ty.is_signed() {
            match mt {
                types::I8 => self.b.ins().sload8(I64, flags, addr, off),
                types::I16 => self.b.ins().sload16(I64, flags, addr, off),
                _ => self.b.ins().sload32(flags, addr, off),
            }
        } else {
            match mt {
                types::I8 => self.b.ins().uload8(I64, flags, addr, off),
                types::I16 => self.b.ins().uload16(I64, flags, addr, off),
                _ => self.b.ins().uload32(flags, addr, off),
            }
        }
    }

    fn store_value(&mut self, v: Value, addr: Value, off: i32, bytes: u32) {
        match bytes {
            1 => self.b.ins().istore8(flags(), v, addr, off),
            2 => self.b.ins().istore16(flags(), v, addr, off),
            4 => self.b.ins().istore32(flags(), v, addr, off),
            _ => self.b.ins().store(flags(), v, addr, off),
        };
    }

    fn load(&mut self, op: &Op) {
        let addr = self.address(op);
        let elem = op.ty.bytes();
        let dsts: Vec<Dst> = match op.extra.as_deref() {
            Some(Extra::Dsts(d)) => d.to_vec(),
            _ => vec![op.dst],
        };
        self.check_access(op, addr, elem * dsts.len() as u32, false);
        // Kernel parameters and constant memory do not change while the kernel runs.
        let kernel_param = self.is_kernel && matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _));
        let fl = if kernel_param {
            ro()
        } else if op.m.space == Space::Const {
            flags().with_readonly()
        } else {
            flags()
        };
        if op.m.b128 {
            return self.load128(fl, addr, &dsts);
        }
        for (k, d) in dsts.iter().enumerate() {
            let v = self.load_with(fl, addr, (elem as usize * k) as i32, op.ty);
            if k == 0 && self.env.spin_sites.contains(&self.site()) {
                // A grid barrier's poll (`cooperative.rs`): the helper sees what it read.
                let stop = self.helper(Helper::GridSpin, &[self.ctx, addr, v]).expect("grid spin");
                let stop = self.b.ins().icmp_imm_u(IntCC::NotEqual, stop, 0);
                self.fail_if(stop, error::HELPER, None, 0);
            }
            self.write(*d, v);
        }
    }

    fn store(&mut self, op: &Op) {
        let addr = self.address(op);
        let elem = op.ty.bytes();
        let srcs: Vec<Src> = match op.extra.as_deref() {
            Some(Extra::Srcs(s)) => s.to_vec(),
            _ => vec![op.a],
        };
        if self.env.check && op.m.space == Space::Const {
            self.fail_and_continue(error::READ_ONLY, Some(addr), elem);
            return;
        }
        self.check_access(op, addr, elem * srcs.len() as u32, true);
        if let (true, [lo, hi]) = (op.m.b128, &srcs[..]) {
            let (lo, hi) = (self.read(lo), self.read(hi));
            return self.store128(addr, lo, hi);
        }
        for (k, s) in srcs.iter().enumerate() {
            let v = self.read(s);
            let off = (elem as usize * k) as i32;
            match op.ty {
                Ty::F32 => {
                    let f = self.f32_of(v);
                    self.b.ins().store(flags(), f, addr, off);
                }
                Ty::F64 => {
                    let f = self.f64_of(v);
                    self.b.ins().store(flags(), f, addr, off);
                }
                _ => self.store_value(v, addr, off, elem),
            }
        }
    }

    fn atomic(&mut self, op: &Op) {
        if op.m.vec > 0 {
            return self.atomic_vector(op);
        }
        let addr = self.address(op);
        self.check_access(op, addr, op.ty.bytes(), true);
        let a = self.read(&op.a);
        let bv = self.read(&op.b);
        let old = self.atomic_element(op, addr, a, bv);
        if op.kind == Kind::Atom {
            let v = self.extend(old, op.ty);
            self.write(op.dst, v);
        }
    }

    /// One atomic of `op`'s type at host address `addr`: its old value.
    fn atomic_element(&mut self, op: &Op, addr: Value, a: Value, bv: Value) -> Value {
        let Sub::Atom(aop) = op.m.sub else { return a };
        let elem = op.ty.bytes();
        let mt = Self::mem_type(elem);
        let shared = op.m.space == Space::Shared;
        let rmw = native_rmw(aop, op.ty);
        let narrow = |me: &mut Self, v: Value| if mt == I64 { v } else { me.b.ins().ireduce(mt, v) };
        let widen = |me: &mut Self, v: Value| if mt == I64 { v } else { me.b.ins().uextend(I64, v) };
        if elem == 1 || shared {
            // A CTA's shared memory belongs to one worker thread: no other thread can race (and the ISA has
            // no 8-bit atomics). 16-bit global ones (`cas.b16`, `.f16`/`.bf16` add, min, max) are real atomics:
            // other CTAs run on other workers.
            self.atomic_plain(op, addr, a, bv)
        } else if let Some(r) = rmw {
            let x = narrow(self, a);
            let old = self.b.ins().atomic_rmw(mt, flags(), r, addr, x);
            widen(self, old)
        } else if aop == AtomOp::Cas {
            let (e, x) = (narrow(self, a), narrow(self, bv));
            let old = self.b.ins().atomic_cas(flags(), addr, e, x);
            widen(self, old)
        } else {
            self.atomic_cas_loop(op, mt, addr, a, bv)
        }
    }

    /// The new value of an atomic from the old one: inline for float add, else the emulator's semantics.
    fn atomic_new(&mut self, op: &Op, old: Value, a: Value, b: Value) -> Value {
        match (op.m.sub, op.ty) {
            (Sub::Atom(AtomOp::Add), Ty::F32) => {
                let x = self.f32_of(old);
                let y = self.f32_of(a);
                let s = self.b.ins().fadd(x, y);
                self.bits_of_f32(s)
            }
            (Sub::Atom(AtomOp::Add), Ty::F64) => {
                let x = self.f64_of(old);
                let y = self.f64_of(a);
                let s = self.b.ins().fadd(x, y);
                self.bits_of_f64(s)
            }
            _ => {
                let ops = self.ctx_i64(cx::OPS);
                let site = self.site();
                let opp = self.b.ins().load(I64, ro(), ops, (site * 8) as i32);
                self.helper(Helper::AtomicNew, &[opp, old, a, b]).expect("atomic")
            }
        }
    }

    fn atomic_plain(&mut self, op: &Op, addr: Value, a: Value, b: Value) -> Value {
        let elem = op.ty.bytes();
        let old = self.load_value(addr, 0, if op.ty.is_signed() { Ty::from_bits_unsigned(elem) } else { op.ty });
        let old = self.mask(old, op.ty);
        let new = match (op.m.sub, op.ty.is_float()) {
            (Sub::Atom(AtomOp::Add), false) => self.b.ins().iadd(old, a),
            (Sub::Atom(AtomOp::And), _) => self.b.ins().band(old, a),
            (Sub::Atom(AtomOp::Or), _) => self.b.ins().bor(old, a),
            (Sub::Atom(AtomOp::Xor), _) => self.b.ins().bxor(old, a),
            (Sub::Atom(AtomOp::Exch), _) => a,
            _ => self.atomic_new(op, old, a, b),
        };
        self.store_value(new, addr, 0, elem);
        old
    }

    fn atomic_cas_loop(&mut self, op: &Op, mt: Type, addr: Value, a: Value, b: Value) -> Value {
        let head = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, I64);
        let cur0 = self.b.ins().load(mt, flags(), addr, 0);
        self.b.append_block_param(head, mt);
        self.b.ins().jump(head, &[cur0.into()]);
        self.b.switch_to_block(head);
        let cur = self.b.block_params(head)[0];
        let old = if mt == I64 { cur } else { self.b.ins().uextend(I64, cur) };
        let new = self.atomic_new(op, old, a, b);
        let new = if mt == I64 { new } else { self.b.ins().ireduce(mt, new) };
        let seen = self.b.ins().atomic_cas(flags(), addr, cur, new);
        let same = self.b.ins().icmp(IntCC::Equal, seen, cur);
        self.b.ins().brif(same, done, &[old.into()], head, &[seen.into()]);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    fn cvta(&mut self, op: &Op) {
        let a = self.read(&op.a);
        let to = matches!(op.m.sub, Sub::Cvta { to: true });
        let v = if op.m.space == Space::Shared {
            let sh = self.ctx_i64(cx::SHARED);
            if to {
                self.b.ins().isub(a, sh)
            } else {
                self.b.ins().iadd(a, sh)
            }
        } else {
            // Global, local and parameter addresses are host addresses in every space.
            a
        };
        let v = self.mask(v, op.ty);
        self.write(op.dst, v);
    }

    fn isspacep(&mut self, op: &Op) {
        let a = self.read(&op.a);
        let in_range = |me: &mut Self, base: Value, len: Value| {
            let off = me.b.ins().isub(a, base);
            me.b.ins().icmp(IntCC::UnsignedLessThan, off, len)
        };
        let sh = self.ctx_i64(cx::SHARED);
        let shl = self.ctx_i64(cx::SHARED_SIZE);
        let is_shared = in_range(self, sh, shl);
        let base = self.local_base();
        let len = self.ctx_i64(cx::LOCAL_STRIDE);
        let is_local = in_range(self, base, len);
        let r = match op.m.space {
            Space::Shared => is_shared,
            Space::Local => is_local,
            Space::Param => {
                let p = self.ctx_i64(cx::PARAMS);
                let len = self.b.ins().iconst(I64, 4096);
                in_range(self, p, len)
            }
            space => {
                let only_const = self.b.ins().iconst(I32, i64::from(space == Space::Const));
                let r = self.helper(Helper::IsGlobal, &[self.ctx, a, only_const]).expect("isspacep");
                self.b.ins().ireduce(I8, r)
            }
        };
        self.write_bool(op.dst, r);
    }

    // ---------------------------------------------------------------- control

    fn brx(&mut self, op: &Op) {
        let Some(Extra::Targets(targets)) = op.extra.as_deref() else { return };
        let idx = self.read(&op.a);
        let idx = self.b.ins().ireduce(I32, idx);
        let bad = self.b.create_block();
        let blocks: Vec<Block> = targets.iter().map(|&t| self.blocks[&(t as usize)]).collect();
        let calls: Vec<_> = blocks.into_iter().map(|b| self.b.func.dfg.block_call(b, &[])).collect();
        let default = self.b.func.dfg.block_call(bad, &[]);
        let jt = self.b.create_jump_table(JumpTableData::new(default, &calls));
        self.b.ins().br_table(idx, jt);
        self.b.switch_to_block(bad);
        self.fail(error::UNSUPPORTED, None, 0);
    }

    fn call(&mut self, op: &Op) {
        let Some(Extra::Call { callee, args, rets }) = op.extra.as_deref() else { return };
        let frame = self.b.use_var(self.frame);
        // The function whose frame layout the call uses: the callee, or for an indirect call any defined
        // function with the prototype's parameters (all possible targets share it).
        let layout = match *callee {
            Callee::Direct(f) => match self.env.programs.get(&f) {
                Some(p) => p,
                None => {
                    self.builtin_call(f, args, rets);
                    return;
                }
            },
            Callee::Indirect(_) => {
                let sizes = |p: &&Program| {
                    !p.is_kernel
                        && p.frame.params.len() == args.len()
                        && p.frame.returns.len() == rets.len()
                        && args.iter().zip(&p.frame.params).all(|(a, &(_, size))| match *a {
                            CallArg::Frame(_, s) | CallArg::Reg(_, s) => s == size,
                            CallArg::Imm(_) => true,
                        })
                };
                let mut candidates: Vec<&Program> = self.env.programs.values().filter(sizes).collect();
                candidates.sort_by_key(|p| std::cmp::Reverse(p.frame.size));
                match candidates.first().copied() {
                    Some(p) => p,
                    None => {
                        self.fail_and_continue(error::UNSUPPORTED, None, 0);
                        return;
                    }
                }
            }
        };
        let callee_frame = self.b.ins().iadd_imm_s(frame, self.prog.frame.size as i64);
        // The callee's frame must fit in the thread's local memory.
        let limit = self.frames_end();
        let end = self.b.ins().iadd_imm_s(callee_frame, layout.frame.size as i64);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, limit);
        self.fail_if(over, error::STACK_OVERFLOW, None, 0);
        for (k, arg) in args.iter().enumerate() {
            let Some(&(off, size)) = layout.frame.params.get(k) else { continue };
            self.copy_in(arg, callee_frame, off as i32, size);
        }
        let sig = self.b.import_signature(device_signature(self.env.call_conv));
        let table = self.ctx_i64(cx::FUNCS);
        let fp = match *callee {
            Callee::Direct(f) => self.b.ins().load(I64, ro(), table, (f.as_u32() * 8) as i32),
            Callee::Indirect(src) => {
                // A function address is FUNCTION_WINDOW + 16 * id; anything else, or a function this kernel
                // cannot reach, is an error.
                let token = self.read(&src);
                let off = self.b.ins().iadd_imm_s(token, device::module::FUNCTION_WINDOW.wrapping_neg() as i64);
                let idx = self.b.ins().ushr_imm_s(off, 4);
                let low = self.b.ins().band_imm_s(off, 15);
                let n = self.env.names.len() as i64;
                let out = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, idx, n);
                let odd = self.b.ins().icmp_imm_s(IntCC::NotEqual, low, 0);
                let bad = self.b.ins().bor(out, odd);
                self.fail_if(bad, error::BAD_CALL, Some(token), 0);
                let byte = self.b.ins().ishl_imm_s(idx, 3);
                let at = self.b.ins().iadd(table, byte);
                let fp = self.b.ins().load(I64, ro(), at, 0);
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, fp, 0);
                self.fail_if(none, error::BAD_CALL, Some(token), 0);
                fp
            }
        };
        let t = self.b.use_var(self.t);
        let tb = self.b.use_var(self.tb);
        let call = self.b.ins().call_indirect(sig, fp, &[self.ctx, tb, callee_frame, t]);
        let r = self.b.inst_results(call)[0];
        let ok = self.b.create_block();
        let not_ok = self.b.create_block();
        self.b.ins().brif(r, not_ok, &[], ok, &[]);
        self.b.switch_to_block(not_ok);
        let is_exit = self.b.ins().icmp_imm_s(IntCC::Equal, r, i64::from(ret::EXIT));
        let exit = self.b.create_block();
        let err = self.b.create_block();
        self.b.ins().brif(is_exit, exit, &[], err, &[]);
        self.b.switch_to_block(exit);
        self.thread_exit();
        self.b.switch_to_block(err);
        self.stop_on_error();
        self.b.switch_to_block(ok);
        self.filled = false;
        for (k, r) in rets.iter().enumerate() {
            let Some(&(off, size)) = layout.frame.returns.get(k) else { continue };
            self.copy_out(r, callee_frame, off as i32, size);
        }
    }

    /// Copies a call argument into the callee's frame.
    fn copy_in(&mut self, arg: &CallArg, dst: Value, off: i32, size: u64) {
        match *arg {
            CallArg::Frame(src_off, sz) => {
                let frame = self.b.use_var(self.frame);
                self.copy_bytes(frame, src_off as i32, dst, off, sz.min(size));
            }
            CallArg::Reg(slot, sz) => {
                let v = self.b.use_var(self.regs[slot as usize]);
                self.store_value(v, dst, off, sz.min(size).min(8) as u32);
            }
            CallArg::Imm(v) => {
                let v = self.b.ins().iconst(I64, v as i64);
                self.store_value(v, dst, off, size.min(8) as u32);
            }
        }
    }

    fn copy_out(&mut self, r: &CallArg, src: Value, off: i32, size: u64) {
        match *r {
            CallArg::Frame(dst_off, sz) => {
                let frame = self.b.use_var(self.frame);
                self.copy_bytes(src, off, frame, dst_off as i32, sz.min(size));
            }
            CallArg::Reg(slot, sz) => {
                let ty = match sz.min(size) {
                    1 => Ty::U8,
                    2 => Ty::U16,
                    4 => Ty::U32,
                    _ => Ty::U64,
                };
                let v = self.load_value(src, off, ty);
                self.b.def_var(self.regs[slot as usize], v);
            }
            CallArg::Imm(_) => {}
        }
    }

    fn copy_bytes(&mut self, src: Value, so: i32, dst: Value, d_o: i32, len: u64) {
        let mut k = 0u64;
        while k < len {
            let chunk = match len - k {
                8.. => 8,
                4..=7 => 4,
                2..=3 => 2,
                _ => 1,
            };
            let ty = match chunk {
                8 => Ty::U64,
                4 => Ty::U32,
                2 => Ty::U16,
                _ => Ty::U8,
            };
            let v = self.load_value(src, so + k as i32, ty);
            self.store_value(v, dst, d_o + k as i32, chunk as u32);
            k += chunk;
        }
    }

    /// Calls of functions declared but not defined: `vprintf`, `__assertfail`, `malloc` and `free`.
    fn builtin_call(&mut self, f: FuncId, args: &[CallArg], rets: &[CallArg]) {
        let arg = |me: &mut Self, k: usize| -> Value {
            match args.get(k) {
                Some(CallArg::Frame(off, _)) => {
                    let frame = me.b.use_var(me.frame);
                    me.b.ins().load(I64, flags(), frame, *off as i32)
                }
                Some(CallArg::Reg(slot, _)) => me.b.use_var(me.regs[*slot as usize]),
                Some(CallArg::Imm(v)) => me.b.ins().iconst(I64, *v as i64),
                None => me.b.ins().iconst(I64, 0),
            }
        };
        let name = self.env.func_name(f);
        if name == "vprintf" {
            let fmt = arg(self, 0);
            let a = arg(self, 1);
            let t = self.b.use_var(self.t);
            let n = self.helper(Helper::Printf, &[self.ctx, t, fmt, a]).expect("printf");
            let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
            self.fail_if(bad, error::HELPER, None, 0);
            if let Some(r) = rets.first() {
                let v = self.b.ins().uextend(I64, n);
                match *r {
                    CallArg::Frame(off, _) => {
                        let frame = self.b.use_var(self.frame);
                        self.store_value(v, frame, off as i32, 4);
                    }
                    CallArg::Reg(slot, _) => self.b.def_var(self.regs[slot as usize], v),
                    CallArg::Imm(_) => {}
                }
            }
        } else if name == "malloc" || name == "free" {
            let a = arg(self, 0);
            if name == "malloc" {
                let ptr = self.helper(Helper::Malloc, &[self.ctx, a]).expect("malloc");
                if let Some(r) = rets.first() {
                    match *r {
                        CallArg::Frame(off, _) => {
                            let frame = self.b.use_var(self.frame);
                            self.store_value(ptr, frame, off as i32, 8);
                        }
                        CallArg::Reg(slot, _) => self.b.def_var(self.regs[slot as usize], ptr),
                        CallArg::Imm(_) => {}
                    }
                }
            } else {
                let bad = self.helper(Helper::Free, &[self.ctx, a]).expect("free");
                let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, bad, 0);
                self.fail_if(bad, error::HELPER, None, 0);
            }
        } else {
            // `__assertfail(message, file, line, function, char_size)`.
            let vals: Vec<Value> = (0..4).map(|k| arg(self, k)).collect();
            let t = self.b.use_var(self.t);
            self.helper(Helper::AssertFail, &[self.ctx, t, vals[0], vals[1], vals[2], vals[3]]);
            self.fail_and_continue(error::ASSERT, None, 0);
        }
    }

    // ---------------------------------------------------------------- arithmetic

    /// Native lowering of the common arithmetic; `false` leaves the op to the helper.
    fn native_alu(&mut self, op: &Op) -> bool {
        let ty = op.ty;
        let m = &op.m;
        if ty.is_float() && !matches!(op.kind, Kind::Mov | Kind::Cvt | Kind::Setp | Kind::Set | Kind::Selp | Kind::Slct)
        {
            return self.native_float(op);
        }
        if ty == Ty::B128 || ty == Ty::Other {
            return false;
        }
        let bits = ty.bits().min(64);
        match op.kind {
            Kind::Add | Kind::Sub if !m.cc && !m.sat => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let r = if op.kind == Kind::Add { self.b.ins().iadd(a, b) } else { self.b.ins().isub(a, b) };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Mul | Kind::Mad if !m.cc && !m.sat => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let (prod, wide) = match m.part {
                    Part::Lo => (self.b.ins().imul(a, b), false),
                    Part::Wide if bits <= 32 => {
                        let x = self.extend(a, ty);
                        let y = self.extend(b, ty);
                        (self.b.ins().imul(x, y), true)
                    }
                    Part::Hi if bits == 32 => {
                        let x = self.extend(a, ty);
                        let y = self.extend(b, ty);
                        let p = self.b.ins().imul(x, y);
                        let h = if ty.is_signed() {
                            self.b.ins().sshr_imm_s(p, 32)
                        } else {
                            self.b.ins().ushr_imm_s(p, 32)
                        };
                        (h, false)
                    }
                    Part::Hi if bits == 64 => {
                        let h = if ty.is_signed() { self.b.ins().smulhi(a, b) } else { self.b.ins().umulhi(a, b) };
                        (h, false)
                    }
                    _ => return false,
                };
                let r = if op.kind == Kind::Mad {
                    let c = self.read(&op.c);
                    self.b.ins().iadd(prod, c)
                } else {
                    prod
                };
                let r = if wide { self.mask(r, Ty::wide(ty)) } else { self.mask(r, ty) };
                self.write(op.dst, r);
            }
            Kind::Div | Kind::Rem if matches!(bits, 8 | 16 | 32 | 64) => {
                // The emulator's rules: `a / 0` is all ones, `a % 0` is `a`, `MIN / -1` wraps to MIN and
                // `MIN % -1` is 0. The divisor is made safe first, so the native division never traps.
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                let one = self.b.ins().iconst(I64, 1);
                let y = self.b.ins().select(zero, one, y);
                let signed = ty.is_signed();
                // Only 64-bit MIN / -1 overflows: narrower values are sign-extended into 64 bits.
                let minus1 = if signed && bits == 64 {
                    let m = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                    Some(m)
                } else {
                    None
                };
                let y = match minus1 {
                    Some(m) => self.b.ins().select(m, one, y),
                    None => y,
                };
                let r = match (op.kind, signed) {
                    (Kind::Div, true) => self.b.ins().sdiv(x, y),
                    (Kind::Div, false) => self.b.ins().udiv(x, y),
                    (_, true) => self.b.ins().srem(x, y),
                    (_, false) => self.b.ins().urem(x, y),
                };
                let r = match (minus1, op.kind) {
                    (Some(m), Kind::Div) => {
                        let neg = self.b.ins().ineg(x);
                        self.b.ins().select(m, neg, r)
                    }
                    (Some(m), _) => {
                        let z = self.b.ins().iconst(I64, 0);
                        self.b.ins().select(m, z, r)
                    }
                    (None, _) => r,
                };
                let by_zero =
                    if op.kind == Kind::Div { self.b.ins().iconst(I64, ty.mask() as i64) } else { self.mask(a, ty) };
                let r = self.b.ins().select(zero, by_zero, r);
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Abs | Kind::Neg if !ty.is_float() => {
                let a = self.read(&op.a);
                let x = self.extend(a, if ty.is_signed() { ty } else { Ty::signed_of(ty) });
                let r = if op.kind == Kind::Abs { self.b.ins().iabs(x) } else { self.b.ins().ineg(x) };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Min | Kind::Max if !m.relu => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                let r = match (op.kind, ty.is_signed()) {
                    (Kind::Min, true) => self.b.ins().smin(x, y),
                    (Kind::Min, false) => self.b.ins().umin(x, y),
                    (_, true) => self.b.ins().smax(x, y),
                    (_, false) => self.b.ins().umax(x, y),
                };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::And | Kind::Or | Kind::Xor => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let r = match op.kind {
                    Kind::And => self.b.ins().band(a, b),
                    Kind::Or => self.b.ins().bor(a, b),
                    _ => self.b.ins().bxor(a, b),
                };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Not => {
                let a = self.read(&op.a);
                let r = self.b.ins().bnot(a);
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Shl | Kind::Shr => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let amt = self.b.ins().band_imm_s(b, 0xFFFF_FFFF);
                let big = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, amt, i64::from(bits));
                let r = if op.kind == Kind::Shl {
                    let s = self.b.ins().ishl(a, amt);
                    let zero = self.b.ins().iconst(I64, 0);
                    self.b.ins().select(big, zero, s)
                } else if ty.is_signed() {
                    let x = self.extend(a, ty);
                    let clamped = self.b.ins().iconst(I64, 63);
                    let amt = self.b.ins().select(big, clamped, amt);
                    self.b.ins().sshr(x, amt)
                } else {
                    let x = self.mask(a, ty);
                    let s = self.b.ins().ushr(x, amt);
                    let zero = self.b.ins().iconst(I64, 0);
                    self.b.ins().select(big, zero, s)
                };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Popc => {
                let a = self.read(&op.a);
                let x = self.mask(a, ty);
                let r = self.b.ins().popcnt(x);
                self.write(op.dst, r);
            }
            Kind::Clz if bits == 32 || bits == 64 => {
                let a = self.read(&op.a);
                let r = if bits == 32 {
                    let x = self.b.ins().ireduce(I32, a);
                    let c = self.b.ins().clz(x);
                    self.b.ins().uextend(I64, c)
                } else {
                    self.b.ins().clz(a)
                };
                self.write(op.dst, r);
            }
            Kind::Brev if bits == 32 || bits == 64 => {
                let a = self.read(&op.a);
                let r = if bits == 32 {
                    let x = self.b.ins().ireduce(I32, a);
                    let c = self.b.ins().bitrev(x);
                    self.b.ins().uextend(I64, c)
                } else {
                    self.b.ins().bitrev(a)
                };
                self.write(op.dst, r);
            }
            Kind::Setp => {
                let Some(r) = self.compare(op) else { return false };
                let c = op.m.boolop.map(|_| self.read_pred(&op.c));
                let nr = self.b.ins().bxor_imm_s(r, 1);
                let (p, q) = match (op.m.boolop, c) {
                    (Some(bo), Some(c)) => (self.bool_op(bo, r, c), self.bool_op(bo, nr, c)),
                    _ => (r, nr),
                };
                self.write_bool(op.dst, p);
                if op.dst2 != Dst::None {
                    self.write_bool(op.dst2, q);
                }
            }
            Kind::Selp => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let c = self.read_pred(&op.c);
                let r = self.b.ins().select(c, a, b);
                self.write(op.dst, r);
            }
            Kind::Mov => {
                let a = self.read(&op.a);
                let r = if ty == Ty::Pred { a } else { self.mask(a, ty) };
                self.write(op.dst, r);
            }
            Kind::Cvt => return self.cvt(op),
            _ => return false,
        }
        true
    }

    fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    /// `a cmp b` as an `i8` 0/1, or `None` to leave the op to the helper.
    fn compare(&mut self, op: &Op) -> Option<Value> {
        let ty = op.ty;
        let cmp = op.m.cmp.unwrap_or(Cmp::Eq);
        match ty {
            Ty::F32 | Ty::F64 => {
                let cc = match cmp {
                    Cmp::Eq => FloatCC::Equal,
                    Cmp::Ne => FloatCC::OrderedNotEqual,
                    Cmp::Lt => FloatCC::LessThan,
                    Cmp::Le => FloatCC::LessThanOrEqual,
                    Cmp::Gt => FloatCC::GreaterThan,
                    Cmp::Ge => FloatCC::GreaterThanOrEqual,
                    Cmp::Equ => FloatCC::UnorderedOrEqual,
                    Cmp::Neu => FloatCC::NotEqual,
                    Cmp::Ltu => FloatCC::UnorderedOrLessThan,
                    Cmp::Leu => FloatCC::UnorderedOrLessThanOrEqual,
                    Cmp::Gtu => FloatCC::UnorderedOrGreaterThan,
                    Cmp::Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
                    Cmp::Num => FloatCC::Ordered,
                    Cmp::Nan => FloatCC::Unordered,
                    _ => return None,
                };
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let (x, y) = if ty == Ty::F32 {
                    let x = self.f32_of(a);
                    let y = self.f32_of(b);
                    if op.m.ftz {
                        (self.flush(x), self.flush(y))
                    } else {
                        (x, y)
                    }
                } else {
                    (self.f64_of(a), self.f64_of(b))
                };
                Some(self.b.ins().fcmp(cc, x, y))
            }
            _ if !ty.is_float() && ty != Ty::Pred && ty.bits() <= 64 => {
                let cc = int_cc(cmp, ty.is_signed())?;
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                Some(self.b.ins().icmp(cc, x, y))
            }
            _ => None,
        }
    }

    /// Flushes an f32 subnormal to a zero of the same sign (`.ftz`).
    fn flush(&mut self, x: Value) -> Value {
        let bits = self.b.ins().bitcast(I32, MemFlagsData::new(), x);
        let exp = self.b.ins().band_imm_s(bits, 0x7F80_0000);
        let sub = self.b.ins().icmp_imm_s(IntCC::Equal, exp, 0);
        let sign = self.b.ins().band_imm_s(bits, 0x8000_0000u32 as i32 as i64);
        let r = self.b.ins().select(sub, sign, bits);
        self.b.ins().bitcast(types::F32, MemFlagsData::new(), r)
    }

    fn native_float(&mut self, op: &Op) -> bool {
        let m = &op.m;
        let f32_ = match op.ty {
            Ty::F32 => true,
            Ty::F64 => false,
            _ => return false,
        };
        if !matches!(m.rnd, Rnd::None | Rnd::Rn) || m.sat || (m.ftz && !f32_) {
            return false;
        }
        let ftz = m.ftz;
        let arity = match op.kind {
            Kind::Add | Kind::Sub | Kind::Mul | Kind::Min | Kind::Max => 2,
            Kind::Div if !m.approx && !m.full => 2,
            Kind::Fma | Kind::Mad => 3,
            Kind::Sqrt | Kind::Rcp if !m.approx => 1,
            Kind::Abs | Kind::Neg => 1,
            _ => return false,
        };
        if matches!(op.kind, Kind::Min | Kind::Max) && m.nan {
            return false;
        }
        let srcs = [op.a, op.b, op.c];
        let mut v = Vec::with_capacity(3);
        for s in &srcs[..arity] {
            let raw = self.read(s);
            let x = if f32_ { self.f32_of(raw) } else { self.f64_of(raw) };
            v.push(if ftz { self.flush(x) } else { x });
        }
        let r = match op.kind {
            Kind::Add => self.b.ins().fadd(v[0], v[1]),
            Kind::Sub => self.b.ins().fsub(v[0], v[1]),
            Kind::Mul => self.b.ins().fmul(v[0], v[1]),
            Kind::Div => self.b.ins().fdiv(v[0], v[1]),
            Kind::Fma | Kind::Mad => self.b.ins().fma(v[0], v[1], v[2]),
            Kind::Sqrt => self.b.ins().sqrt(v[0]),
            Kind::Rcp => {
                let one = if f32_ { self.b.ins().f32const(1.0) } else { self.b.ins().f64const(1.0) };
                self.b.ins().fdiv(one, v[0])
            }
            Kind::Abs => self.b.ins().fabs(v[0]),
            Kind::Neg => self.b.ins().fneg(v[0]),
            Kind::Min | Kind::Max => {
                // PTX: a NaN operand yields the other operand; -0 orders below +0.
                let r =
                    if op.kind == Kind::Min { self.b.ins().fmin(v[0], v[1]) } else { self.b.ins().fmax(v[0], v[1]) };
                let a_nan = self.b.ins().fcmp(FloatCC::Unordered, v[0], v[0]);
                let b_nan = self.b.ins().fcmp(FloatCC::Unordered, v[1], v[1]);
                let r = self.b.ins().select(a_nan, v[1], r);
                self.b.ins().select(b_nan, v[0], r)
            }
            _ => return false,
        };
        let r = if ftz { self.flush(r) } else { r };
        let bits = if f32_ { self.bits_of_f32(r) } else { self.bits_of_f64(r) };
        self.write(op.dst, bits);
        true
    }

    fn cvt(&mut self, op: &Op) -> bool {
        let (dt, st) = (op.ty, op.ty2);
        let m = &op.m;
        if m.sat || m.ftz || m.relu {
            return false;
        }
        let int = |t: Ty| !t.is_float() && t != Ty::Pred && t.bits() <= 64;
        let a = self.read(&op.a);
        if int(dt) && int(st) {
            if m.rnd != Rnd::None {
                return false;
            }
            // Like the emulator: signed results stay sign-extended, so a wider register gets the right value.
            let x = self.extend(a, st);
            let r = self.extend(x, dt);
            self.write(op.dst, r);
            return true;
        }
        let fty = |t: Ty| match t {
            Ty::F32 => Some(types::F32),
            Ty::F64 => Some(types::F64),
            _ => None,
        };
        let to_float = |me: &mut Self, v: Value, t: Ty| if t == Ty::F32 { me.f32_of(v) } else { me.f64_of(v) };
        let from_float =
            |me: &mut Self, f: Value, t: Ty| if t == Ty::F32 { me.bits_of_f32(f) } else { me.bits_of_f64(f) };
        match (fty(dt), fty(st)) {
            (Some(d), Some(_)) => {
                let x = to_float(self, a, st);
                let r = if dt == st {
                    match m.rnd {
                        Rnd::Rni => self.b.ins().nearest(x),
                        Rnd::Rzi => self.b.ins().trunc(x),
                        Rnd::Rmi => self.b.ins().floor(x),
                        Rnd::Rpi => self.b.ins().ceil(x),
                        Rnd::None | Rnd::Rn => x,
                        _ => return false,
                    }
                } else if d == types::F64 {
                    if m.rnd != Rnd::None {
                        return false;
                    }
                    self.b.ins().fpromote(types::F64, x)
                } else {
                    if !matches!(m.rnd, Rnd::Rn) {
                        return false;
                    }
                    self.b.ins().fdemote(types::F32, x)
                };
                let bits = from_float(self, r, dt);
                self.write(op.dst, bits);
                true
            }
            (Some(d), None) if int(st) => {
                if m.rnd != Rnd::Rn {
                    return false;
                }
                let x = self.extend(a, st);
                let r =
                    if st.is_signed() { self.b.ins().fcvt_from_sint(d, x) } else { self.b.ins().fcvt_from_uint(d, x) };
                let bits = from_float(self, r, dt);
                self.write(op.dst, bits);
                true
            }
            (None, Some(_)) if int(dt) && dt.bits() >= 32 => {
                let x = to_float(self, a, st);
                // A float rounding acts as its integer form; none means `.rzi`.
                let x = match m.rnd {
                    Rnd::Rzi | Rnd::Rz | Rnd::None => x,
                    Rnd::Rni | Rnd::Rn => self.b.ins().nearest(x),
                    Rnd::Rmi | Rnd::Rm => self.b.ins().floor(x),
                    Rnd::Rpi | Rnd::Rp => self.b.ins().ceil(x),
                    _ => return false,
                };
                let it = if dt.bits() == 32 { I32 } else { I64 };
                let r = if dt.is_signed() {
                    self.b.ins().fcvt_to_sint_sat(it, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(it, x)
                };
                let r = match (it == I32, dt.is_signed()) {
                    (true, true) => self.b.ins().sextend(I64, r),
                    (true, false) => self.b.ins().uextend(I64, r),
                    _ => r,
                };
                // NaN gives 0, except from `.f64` or into 64 bits, where it gives the top bit (the ISA's rule),
                // sign-extended for a signed destination.
                let r = if st == Ty::F64 || dt.bits() == 64 {
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                    let top_bit = 1u64 << (dt.bits() - 1);
                    let top = if dt.is_signed() {
                        (top_bit as i64) << (64 - dt.bits()) >> (64 - dt.bits())
                    } else {
                        top_bit as i64
                    };
                    let top = self.b.ins().iconst(I64, top);
                    self.b.ins().select(nan, top, r)
                } else {
                    r
                };
                self.write(op.dst, r);
                true
            }
            _ => false,
        }
    }
}

impl Env<'_> {
    fn func_name(&self, f: FuncId) -> &str {
        self.names.get(&f).map_or("", String::as_str)
    }
}

/// Helper type functions the lowering needs.
trait TyExt {
    fn wide(t: Ty) -> Ty;
    fn signed_of(t: Ty) -> Ty;
    fn from_bits_unsigned(bytes: u32) -> Ty;
}

impl TyExt for Ty {
    fn wide(t: Ty) -> Ty {
        match t.bits() {
            8 => Ty::U16,
            16 => Ty::U32,
            _ => Ty::U64,
        }
    }
    fn signed_of(t: Ty) -> Ty {
        match t.bits() {
            8 => Ty::S8,
            16 => Ty::S16,
            32 => Ty::S32,
            _ => Ty::S64,
        }
    }
    fn from_bits_unsigned(bytes: u32) -> Ty {
        match bytes {
            1 => Ty::U8,
            2 => Ty::U16,
            4 => Ty::U32,
            _ => Ty::U64,
        }
    }
}
