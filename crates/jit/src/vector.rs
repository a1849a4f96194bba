//! The SIMD path: a kernel's threads run four at a time, one group of consecutive threads in 128-bit vector
//! registers, the lanes in lock-step.
//!
//! A register of at most 32 bits is one `i32x4` (an `f32` is its bits), a 64-bit one two `i64x2` (lanes 0-1,
//! lanes 2-3), a predicate an `i32x4` mask of 0 / all ones; the lanes hold exactly the bits the scalar code
//! (and the emulator) keeps, and every op follows `translate.rs`'s native lowering lane by lane. The kernel
//! becomes `fn(ctx, lo, hi) -> u32`: it runs groups `t..t+4` from `lo` while a whole group fits below `hi`
//! and returns the first thread it did not finish (or, where the lane helper refuses an op, records that
//! thread's error). A group whose lanes disagree at a conditional branch (or a guarded `ret`/`exit`) not run
//! as masks stops there and is left to the scalar thread loop, which runs it again from the start:
//! [`translate`] makes sure no store can have happened by then. Loads and stores take one vector access
//! when the lanes' addresses are consecutive and every lane is active, else one access per active lane; the
//! lane strides of registers ([`lane_strides`]) decide at compile time where they can (uniform addresses: one
//! scalar load; strides of the access size: a check of lanes 0 and 3 at most; other strides: per lane).
//!
//! Kernels whose only yield points are counted barriers (`Plan::counted_barriers`, one plain `bar.sync`) run
//! here too, a pass over the CTA at a time, driven by `exec.rs`: a group starts only when its four threads
//! are ready (the scalar loop's status test with `CtaCtx::status_mask`) at the same resume point, and
//! dispatches on it. Each lane's homes are kept exactly as the scalar code keeps its thread's: the same eager
//! stores, the same spill and reload sets (`YieldPoint::spill`, `reload`), status and resume words in the
//! same form; a barrier also counts four arrivals (`CtaCtx::arrived`). Other groups are left to the scalar loop, which runs each thread
//! from its own status. A group may stop only before any store of its region (since the last resume point).
//!
//! Simple forward branches, `if`/`else` pairs and single-exit loops run as masks ([`Ifs`]): the ops a branch
//! skips execute under the lanes that do not take it, a loop's body under the lanes still looping, so a group
//! goes on where its lanes disagree there (`matmul_tiled16`'s guarded loads between shared stores, grid-stride
//! loops). Atomics run lane after lane (native instructions on global memory).
//!
//! Whole-CTA mode ([`translate`] with `whole_ctas`, tried first for kernels with counted barriers): where
//! every branch is uniform across the CTA (`uniform.rs`) or run as masks (every qualifying one is, `if`/`else`
//! pairs included), the function runs the whole CTA, one pass over the groups per region, with no thread
//! status and cheaper homes ([`Cta`]).
//!
//! Anything else is refused (the kernel then runs scalar only): ops or modifiers without an exact vector
//! form here, calls, warp collectives, matrix/texture ops, barriers other than one plain
//! `bar.sync` (or guarded ones), checked mode.
//!
//! This file holds the entry ([`translate`], [`refusal`]), the value and operand types the lowering shares,
//! and the translator's state ([`Vector`], [`Copy`](struct@Copy), [`Cta`]). The analyses of the program
//! before any code is emitted are in `ifs.rs` (what runs as masks), `regions.rs` (where a group may stop,
//! deferred stores), `strides.rs` (how lanes relate) and `whole_cta.rs`; the group loop in `group_loop.rs`,
//! `group_state.rs` and `homes.rs`; the lowering of ops by family in `control.rs`, `masks.rs`, `arith.rs`,
//! `float.rs`, `lane_helper.rs`, `operands.rs`, `lanes.rs`, `address.rs` and `memory.rs`.

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{AbiParam, Block, Endianness, MemFlagsData, Signature, StackSlot, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use program::{Kind, Program, Ty};

use crate::abi::thread;
use crate::plan::Plan;
use crate::translate::Env;
use crate::uniform::Uniform;
use ifs::{live_around, Ifs};
use regions::{stop_after_store, Deferred};
use strides::{lane_strides, Stride};
use whole_cta::{idle_ends, rematerialized, Remat};

mod address;
mod arith;
mod control;
mod float;
mod group_loop;
mod group_state;
mod homes;
mod ifs;
mod lane_helper;
mod lanes;
mod masks;
mod memory;
mod operands;
mod regions;
mod strides;
mod whole_cta;

/// Threads per group.
pub const WIDTH: u32 = 4;

/// Groups a bundle runs at once (kernels without yield points; [`Copy`]).
pub const GROUPS_AT_ONCE: usize = 4;

/// `fn(ctx, lo, hi) -> first thread not run`.
pub fn signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    s.params.extend([AbiParam::new(I64), AbiParam::new(I32), AbiParam::new(I32)]);
    s.returns.push(AbiParam::new(I32));
    s
}

/// Why the kernel cannot have a vector path, before looking at its ops (the translator refuses the ops it
/// has no exact form for).
pub fn refusal(prog: &Program, plan: &Plan, check: bool) -> Option<String> {
    if !prog.is_kernel {
        return Some("not a kernel".into());
    }
    if check {
        return Some("checked mode".into());
    }
    if !plan.yields.is_empty() && !plan.counted_barriers {
        return Some("warp collectives, matrix/texture ops, or barriers other than one plain `bar.sync`".into());
    }
    if plan.yields.iter().any(|y| prog.ops[y.op as usize].guard.is_some()) {
        return Some("a guarded barrier".into());
    }
    None
}

/// Translates the kernel's vector path into `b` (signature [`signature`]); `Err` names what it refused.
pub fn translate(
    b: FunctionBuilder<'_>,
    env: &Env<'_>,
    prog: &Program,
    plan: &Plan,
    frontend: cranelift_codegen::isa::TargetFrontendConfig,
    whole_ctas: bool,
    bundles: bool,
) -> Result<(), String> {
    if bundles && (whole_ctas || !plan.yields.is_empty()) {
        return Err("bundles of groups only for kernels without yield points".into());
    }
    if prog.slot_types.iter().any(|t| t.bits() > 64) {
        return Err("a register wider than 64 bits".into());
    }
    let ifs = if whole_ctas {
        // Every qualifying branch, but loops whose latch decides alike in every thread. Starting with no loop
        // masked, loops whose latch is found to vary are masked until no more are (masking only makes fewer
        // values uniform, so every loop left unmasked is uniform under the last answer).
        let mut varying_latches = vec![false; prog.ops.len()];
        loop {
            let ifs = Ifs::new(prog, plan, true, &|i| !varying_latches[i]);
            let u = Uniform::new(prog, |i| ifs.inside[i].is_some());
            let mut more = false;
            for (i, op) in prog.ops.iter().enumerate() {
                let backward = op.kind == Kind::Bra && (op.target as usize) < i;
                if backward && !varying_latches[i] && op.guard.is_some_and(|(p, _)| !u.pred(p)) {
                    varying_latches[i] = true;
                    more = true;
                }
            }
            if !more {
                break ifs;
            }
        }
    } else {
        Ifs::new(prog, plan, false, &|_| false)
    };
    let cta = if whole_ctas {
        if !plan.counted_barriers {
            return Err("no counted barriers".into());
        }
        let masked = |i: usize| ifs.inside[i].is_some();
        let uniform = Uniform::new(prog, masked);
        if !uniform.control_is_uniform(prog, |i| masked(i) || ifs.converted(i)) {
            return Err("branches that threads of a CTA may take differently, outside ranges run as masks".into());
        }
        Some(uniform)
    } else {
        None
    };
    let mut v = Vector::new(b, env, prog, plan, ifs, cta, bundles);
    let converted: Vec<usize> = (0..prog.ops.len()).filter(|&i| v.ifs.converted(i)).collect();
    let live = crate::plan::live_in_at(prog, &plan.leader, converted.iter().map(|&i| v.ifs.range_end(prog, i)));
    v.live_at_end = converted
        .iter()
        .map(|&i| {
            let end = v.ifs.range_end(prog, i);
            let none_live = || graph::BitSet::new(prog.slots as usize + prog.preds as usize);
            (
                i,
                live.get(&end).cloned().unwrap_or_else(|| {
                    if end >= prog.ops.len() {
                        none_live()
                    } else {
                        graph::BitSet::full(0)
                    }
                }),
            )
        })
        .collect();
    // Writes in ranges that need no blend compute every lane: their strides are known.
    v.strides = lane_strides(prog, &v.ifs, &|i, r| live_around(&v.ifs, &v.live_at_end, i, r));
    v.body(plan)?;
    // (In whole-CTA mode no group stops: every branch is uniform or run as masks.)
    if let Some(i) = stop_after_store(prog, plan, &v.ifs).filter(|_| !whole_ctas) {
        return Err(format!("op {i}: a group may stop there after a store"));
    }
    v.b.seal_all_blocks();
    v.b.finalize(frontend);
    Ok(())
}

/// The four lanes of a value: 32-bit lanes, or 64-bit lanes as (lanes 0-1, lanes 2-3).
#[derive(Clone, Copy)]
enum V {
    W(Value),
    D(Value, Value),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dom {
    W,
    D,
}

fn dom(ty: Ty) -> Dom {
    if ty.bits() > 32 {
        Dom::D
    } else {
        Dom::W
    }
}

#[derive(Clone, Copy)]
enum Reg {
    W(Variable),
    D(Variable, Variable),
}

/// A memory operand: one address for all lanes, or one per lane (with their [`Stride`] when known).
#[derive(Clone, Copy)]
enum Addr {
    Uniform(Value),
    /// Lanes 0–1 and 2–3 less a constant offset (the last field), their stride if known, and lane 0 alone
    /// with the offset (computed as a scalar: what a vector access uses, without widening and adding whole
    /// vectors first). The offset stays out of the vectors: accesses at several offsets from one register
    /// (`stencil_1d`'s seven) share them, where a vector per offset would each live across the group loop.
    /// A shared-memory offset in a 32-bit register also keeps its `i32x4` offsets and the shared base
    /// (`Narrow`): one lane's address is then an extract and an add, where from the 64-bit vectors it takes
    /// widening, adding and extracting a 64-bit lane.
    Lanes(Value, Value, Option<Stride>, Value, i64, Option<Narrow>),
}

/// A 32-bit register's four shared-memory offsets (`i32x4`) and the base they are added to (`i64`, the
/// access's constant offset included).
#[derive(Clone, Copy)]
struct Narrow {
    offsets: Value,
    base: Value,
}

/// A lane mask made by comparing a 32-bit value whose lanes step by one (`x + l`, modulo 2^32) with a value
/// uniform in the group (`x cc u`): whether any or every lane is set follows, in the common cases, from
/// scalars. Lane 0 set means some lane is; for ordered comparisons, lanes 0 and 3 without a wrap-around
/// between them bound all four. A branch tests those first and the lane bits only where they do not decide
/// (a group at the edge of a range, once per pass): `tid < s` costs a compare where its vector form costs a
/// broadcast, an add, two compares, a sign-bit move and two tests.
#[derive(Clone, Copy)]
struct StepCmp {
    cc: IntCC,
    /// Lane 0 of `x`, and `u` (`i32`s).
    x0: Value,
    u: Value,
}

/// A lane mask whose lanes follow from scalars: a [`StepCmp`], a condition alike in every lane of the group
/// (an `i8`: a comparison of values uniform in the group), or `and` / `or` of such masks (negations pushed
/// to the leaves): `matmul_tiled16`'s `row >= M || col >= K`, where `row` is the same in a group and `col`
/// steps by one.
#[derive(Clone)]
enum LanePred {
    Step(StepCmp),
    Uniform(Value),
    And(Box<LanePred>, Box<LanePred>),
    Or(Box<LanePred>, Box<LanePred>),
}

impl LanePred {
    /// Whether every leaf is alike in every lane (so is the mask).
    fn is_uniform(&self) -> bool {
        match self {
            LanePred::Step(_) => false,
            LanePred::Uniform(_) => true,
            LanePred::And(x, y) | LanePred::Or(x, y) => x.is_uniform() && y.is_uniform(),
        }
    }
}

/// A leaf of a [`LanePred`], as the comparison that made a mask records it.
#[derive(Clone, Copy)]
enum LaneLeaf {
    Step(StepCmp),
    Uniform(Value),
}

/// How a load or store is made: one vector access, one access per lane, or either by a run-time test (an
/// `i8`, non-zero for the vector access).
enum Path {
    Vector,
    Lanes,
    Test(Value),
}

type R<T = ()> = Result<T, String>;

fn le() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

fn ro() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

struct Vector<'a, 'b> {
    b: FunctionBuilder<'b>,
    env: &'a Env<'a>,
    prog: &'a Program,
    regs: Vec<Reg>,
    preds: Vec<Variable>,
    /// The group's first thread and its `tid` (scalar `i32`s), and its state words (`group_state`).
    t: Variable,
    tid: [Variable; 3],
    gs: Variable,
    /// Bytes of a group's state words (`CtaCtx::group_bytes`, known here).
    group_bytes: i64,
    ctx: Value,
    hi: Value,
    blocks: HashMap<usize, Block>,
    /// The next group; the exit returning `t` (the end, or a diverged group); where a group's threads finish
    /// (with yield points: their status set to done, then the next group).
    next: Block,
    stop: Block,
    done: Block,
    /// With yield points: each one's index by op.
    yield_at: HashMap<usize, usize>,
    /// Converted branches, and each one's mask of the lanes that run its range.
    ifs: Ifs,
    /// [`lane_strides`]: addresses in registers of stride 0 are one address for the group, those of the
    /// access's size consecutive. Set once `live_at_end` is known (which writes under masks blend).
    strides: Vec<Option<Stride>>,
    deferred: Deferred,
    if_masks: HashMap<usize, Variable>,
    /// By converted `else` jump: the block computing its range's mask.
    else_entries: HashMap<usize, Block>,
    /// By converted loop's head: its latch and the block of its body (where the latch jumps).
    loop_bodies: HashMap<usize, (usize, Block)>,
    /// The current op's guard as a lane mask, and whether it is only the mask of the ranges around the op
    /// (no guard of its own).
    guard: Option<Value>,
    guard_is_range: bool,
    /// By converted branch (and `else` jump): what is live where its range ends, where its lanes that did
    /// not run the range go on. A write in a range keeps the other lanes' old value only if it is live at the
    /// end of a range around the write.
    live_at_end: HashMap<usize, graph::BitSet>,
    filled: bool,
    /// The op being lowered.
    cur: usize,
    /// Stack slot for the operands and results of `Alu` helper calls.
    scratch: Option<StackSlot>,
    /// Stack slot that [`Vector::pin`] stores to.
    pin_slot: Option<StackSlot>,
    /// Multiply-adds of a chain not pinned ([`Vector::pin`]): how many links since the last pin.
    unpinned: HashMap<Value, u8>,
    /// Uniform loads already made by an earlier op's 16-byte load ([`Vector::quad_partners`]): by op, the
    /// vector and the lane that holds the op's value.
    quads: HashMap<usize, (Value, u8)>,
    /// Whole-CTA mode ([`translate`] with `whole_ctas`).
    cta: Option<Cta>,
    /// A converted branch whose range has an all-lanes version ([`Vector::all_lanes_ops`]): the block
    /// deciding between the versions, filled after the branch, and the masks of the groups' lanes that run
    /// the range (as the branch computed them: their lane bits are the branch's); and, while that version is
    /// emitted, the branch.
    pending_all: Option<(usize, Block, Vec<Value>)>,
    all_lanes: Option<usize>,
    /// By register slot: whether any op reads it.
    read_anywhere: Vec<bool>,
    /// Whether an op of the region being emitted reads the group's state words (whole-CTA mode: else its
    /// group loop does not move them on).
    gs_used: bool,
    /// Whole-CTA mode: where a group of the region being emitted goes after reaching yield point `k` (index
    /// `k`) or the kernel's end (last): the region's next group (`Vector::emit_region`); and where the pass
    /// ends after the last group reached it.
    site_next: Vec<Block>,
    site_exit: Vec<Block>,
    /// By yield point: the registers stored there (those whose homes may be stale, and the eager stores
    /// deferred to it), with their homes' offsets.
    stores_at_yield: Vec<Vec<(usize, i32)>>,
    /// Bundles of groups ([`translate`] with `bundles`): the other groups' variables, each swapped in while
    /// an op runs for it ([`Vector::each_copy`]).
    alt: Vec<Copy>,
    /// By lane mask: how a comparison made it, where its lanes follow from scalars ([`LanePred`]).
    lane_leaves: HashMap<Value, LaneLeaf>,
    /// Whole-CTA mode: by predicate computed again at the group's entry into the region being emitted (and
    /// written nowhere else), how its comparison made it.
    region_pred_leaves: HashMap<usize, LaneLeaf>,
}

/// The variables of one group of four threads. In a bundle of [`GROUPS_AT_ONCE`] groups (kernels without
/// yield points), every op is emitted once per group, for the groups at `t`, `t + 4`, ..., each with its own
/// registers, predicates, masks and thread index; control is decided for all at once (a branch goes on
/// where all their lanes agree, a masked range runs while a lane of any group does). Independent groups in
/// flight let the CPU overlap their loop-carried chains (alu_loop's), for one loop's worth of overhead.
struct Copy {
    regs: Vec<Reg>,
    preds: Vec<Variable>,
    if_masks: HashMap<usize, Variable>,
    t: Variable,
    tid: [Variable; 3],
    gs: Variable,
}

/// Whole-CTA mode: every thread of the CTA takes the same path outside the ranges run as masks (uniform
/// control, `uniform.rs`), so every group reaches the same barrier. The function runs the CTA to its end: one
/// pass over the groups per region, each group entering at the region's resume point (one value for the
/// pass, so no thread status is read or written), then the next region from the barrier they reached.
///
/// Homes are private to the vector path here (no group goes to the scalar loop), so they take cheaper forms:
/// a register uniform across the CTA has one home, lane 0 of the first group's word, which each pass loads
/// once before its first group (the value its groups start from; each group stores the same value into
/// lane 0 of its own word, the first group's being the home); other
/// 32-bit registers and predicates keep their four lanes in the first half of their word as they are in
/// the vector register.
struct Cta {
    uniform: Uniform,
    /// The values of the uniform registers the region being emitted reloads, loaded before its group loop.
    at_pass: HashMap<usize, V>,
    /// By register or predicate: the op that computes it again before each pass that reloads it (or at each
    /// group's entry into such a pass), where it has no home ([`rematerialized`]).
    remat: HashMap<usize, Remat>,
    /// The pass's resume point (0: the kernel's start, `k + 1`: after yield point `k`), and where the groups
    /// of the pass stopped (a resume point, or [`Cta::EXIT`]).
    resume: Variable,
    reached: Variable,
    /// The first thread of the group's row (`t - tid.x`): in a region that reads `%tid`, the group loop moves
    /// `tid` on and `t` is `row + tid.x`.
    row: Variable,
    /// Converted branches where a group none of whose lanes runs the range ends the pass ([`idle_ends`]),
    /// and whether the CTA is one-dimensional (where that holds).
    idle_ends: Vec<usize>,
    one_d: Option<Value>,
    /// The uniform registers with a home that the region being emitted may store, each with its offset and
    /// the variable holding what its home is to hold after the pass: the home's value at the pass's start,
    /// and what each store would write. The groups of a pass store nothing; the pass's end stores these,
    /// once (every group would store the same values, and no group reads the homes during a pass).
    homes: Vec<(usize, i32, Variable)>,
}

impl Cta {
    const EXIT: i64 = u32::MAX as i64;
}

impl<'a, 'b> Vector<'a, 'b> {
    fn new(
        mut b: FunctionBuilder<'b>,
        env: &'a Env<'a>,
        prog: &'a Program,
        plan: &Plan,
        ifs: Ifs,
        uniform: Option<Uniform>,
        bundles: bool,
    ) -> Vector<'a, 'b> {
        let copy = |b: &mut FunctionBuilder<'b>| Copy {
            regs: prog
                .slot_types
                .iter()
                .map(|t| match dom(*t) {
                    Dom::W => Reg::W(b.declare_var(I32X4)),
                    Dom::D => Reg::D(b.declare_var(I64X2), b.declare_var(I64X2)),
                })
                .collect(),
            preds: (0..prog.preds).map(|_| b.declare_var(I32X4)).collect(),
            if_masks: (0..prog.ops.len()).filter(|&i| ifs.converted(i)).map(|i| (i, b.declare_var(I32X4))).collect(),
            t: b.declare_var(I32),
            tid: [b.declare_var(I32), b.declare_var(I32), b.declare_var(I32)],
            gs: b.declare_var(I64),
        };
        let Copy { regs, preds, if_masks, t, tid, gs } = copy(&mut b);
        let alt = if bundles { (1..GROUPS_AT_ONCE).map(|_| copy(&mut b)).collect() } else { Vec::new() };
        let cta = uniform.map(|uniform| Cta {
            idle_ends: idle_ends(prog, plan, &ifs, &uniform),
            remat: rematerialized(prog, plan, &ifs),
            uniform,
            at_pass: HashMap::new(),
            resume: b.declare_var(I32),
            reached: b.declare_var(I32),
            one_d: None,
            homes: Vec::new(),
            row: b.declare_var(I32),
        });
        let mut read_anywhere = vec![false; prog.slots as usize + prog.preds as usize];
        for op in &prog.ops {
            crate::plan::for_each_use(prog, op, |v| read_anywhere[v] = true);
        }
        let mut deferred = Deferred::new(prog, plan);
        if let Some(c) = &cta {
            // A region that computes a value of `%tid` again at each group's entry reads `%tid` there.
            for (k, reload) in deferred.reload.iter().enumerate() {
                deferred.reads_tid[k + 1] |= reload.iter().any(|v| c.remat.get(v).is_some_and(|m| m.per_group));
            }
        }
        let stores_at_yield = (0..plan.yields.len())
            .map(|k| {
                let deferred = deferred.store[k].iter().filter(|v| !plan.yields[k].spill.contains(v));
                plan.yields[k]
                    .spill
                    .iter()
                    .chain(deferred)
                    .map(|&v| (v, plan.home_offset(v).expect("live registers have homes")))
                    .collect()
            })
            .collect();
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ctx = b.block_params(entry)[0];
        let hi = b.block_params(entry)[2];
        let next = b.create_block();
        let stop = b.create_block();
        let done = b.create_block();
        Vector {
            b,
            env,
            prog,
            regs,
            preds,
            t,
            tid,
            gs,
            group_bytes: (plan.state_words() * thread::WORD) as i64,
            ctx,
            hi,
            blocks: HashMap::new(),
            next,
            stop,
            done,
            yield_at: plan.yields.iter().enumerate().map(|(k, y)| (y.op as usize, k)).collect(),
            strides: Vec::new(),
            deferred,
            ifs,
            if_masks,
            else_entries: HashMap::new(),
            loop_bodies: HashMap::new(),
            guard: None,
            guard_is_range: false,
            live_at_end: HashMap::new(),
            filled: false,
            cur: 0,
            scratch: None,
            pin_slot: None,
            unpinned: HashMap::new(),
            quads: HashMap::new(),
            cta,
            pending_all: None,
            all_lanes: None,
            read_anywhere,
            gs_used: false,
            site_next: Vec::new(),
            site_exit: Vec::new(),
            stores_at_yield,
            alt,
            lane_leaves: HashMap::new(),
            region_pred_leaves: HashMap::new(),
        }
    }

    /// Threads a round of the group loop moves on by: one group, or a bundle.
    fn step(&self) -> u32 {
        WIDTH * (1 + self.alt.len() as u32)
    }

    /// Swaps group `k + 1`'s variables in (or back out).
    fn swap_copy(&mut self, k: usize) {
        let alt = &mut self.alt[k];
        std::mem::swap(&mut self.regs, &mut alt.regs);
        std::mem::swap(&mut self.preds, &mut alt.preds);
        std::mem::swap(&mut self.if_masks, &mut alt.if_masks);
        std::mem::swap(&mut self.t, &mut alt.t);
        std::mem::swap(&mut self.tid, &mut alt.tid);
        std::mem::swap(&mut self.gs, &mut alt.gs);
    }

    /// Runs `f` for the group, then (in a bundle) for each other group with its variables swapped in.
    fn each_copy<T>(&mut self, mut f: impl FnMut(&mut Self) -> R<T>) -> R<Vec<T>> {
        let mut out = vec![f(self)?];
        for k in 0..self.alt.len() {
            self.swap_copy(k);
            let r = f(self);
            self.swap_copy(k);
            out.push(r?);
        }
        Ok(out)
    }
}
