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
//!
//! This file holds the [`Translator`], its entry and the signatures and loop helpers the vector path shares;
//! the thread loop, homes, yield points and errors are in `thread_loop.rs`, the lowering of ops by family in
//! `ops.rs` (control and dispatch), `operands.rs`, `arith.rs`, `memory.rs` and `calls.rs`, and the rarer ops
//! in `wide.rs`, `atom_vec.rs`, `mbarrier.rs`, `stack.rs` and `cluster.rs`.

use std::collections::HashMap;

use ::ir::FuncId;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, AtomicRmwOp, Block, InstBuilder, MemFlagsData, Signature, StackSlot, Type, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use program::{AtomOp, Cmp, Program, Ty};

use crate::abi::{ctx as cx, Helper};
use crate::plan::Plan;

mod arith;
mod atom_vec;
mod calls;
mod cluster;
mod mbarrier;
mod memory;
mod operands;
mod ops;
mod stack;
mod thread_loop;
mod wide;

pub use stack::dyn_stack_start;

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
