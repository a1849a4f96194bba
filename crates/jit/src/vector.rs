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

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, F64, F64X2, I16X8, I32, I32X4, I64, I64X2, I8, I8X16};
use cranelift_codegen::ir::{
    AbiParam, Block, ConstantData, Endianness, InstBuilder, InstructionData, JumpTableData, MemFlagsData, Opcode,
    Signature, StackSlot, StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use ir::SpecialReg;
use program::{AtomOp, BoolOp, Cmp, Dst, Kind, Op, Part, Program, Rnd, Space, Src, Sub, SymAddr, Ty};

use crate::abi::{ctx as cx, status, thread, Helper};
use crate::plan::Plan;
use crate::translate::Env;
use crate::uniform::Uniform;

/// `k` where `src` is the immediate `2^k` (as type `ty` extends it, positive): a product by it is a shift.
fn power_of_two(src: &Src, ty: Ty) -> Option<i64> {
    match *src {
        Src::Imm(c) if (ty.extend(c) as i64) > 0 && ty.extend(c).is_power_of_two() => {
            Some(i64::from(ty.extend(c).trailing_zeros()))
        }
        _ => None,
    }
}

/// Threads per group.
pub const WIDTH: u32 = 4;

/// Groups a bundle runs at once (kernels without yield points; [`Copy`]).
pub const GROUPS_AT_ONCE: usize = 4;

/// A chain of multiply-adds is pinned in place every this many links ([`Vector::pin`]): matmul_tiled16 on
/// one worker 28.4 ms with every link, 25.3–25.9 ms with every fourth (every eighth: 28.4 ms).
const FMA_LINKS_PER_PIN: u8 = 4;

/// The longest range a converted branch skips that gets a second, all-lanes version
/// ([`Vector::all_lanes_ops`]).
const ALL_LANES_OPS: usize = 48;

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

/// Ops where a group may stop: where its lanes may disagree on the path (not at branches run as masks,
/// [`Ifs`]).
fn may_stop(op: &Op, i: usize, ifs: &Ifs) -> bool {
    (op.guard.is_some() && matches!(op.kind, Kind::Bra | Kind::Ret | Kind::Exit) && !ifs.converted(i))
        || op.kind == Kind::Brx
}

/// If-conversion: forward conditional branches `@p bra L` whose skipped ops the vector path runs under the
/// mask "not p" (and the masks of the branches around), so that lanes disagreeing there do not stop the
/// group. A branch qualifies when its range `i+1..L` holds no yield point, call, exit, indirect branch or
/// unconditional branch (but a jump to the next op), and every other branch in it, and every branch into
/// it, is a qualifying branch nested in it. Op indices stay as they are (resume points, homes and sites name them).
///
/// An `if`/`else` (`@p bra ELSE; ...; bra END; ELSE: ...; END:`) qualifies as a whole: the jump `bra END`
/// closing the first range is converted too, its range `ELSE..END` (which the same rules apply to, but that
/// the branch's jump to `ELSE` enters) runs under the lanes that took the branch.
///
/// A loop (`HEAD: ...; @p bra HEAD`, entered only by falling into `HEAD`, left only by falling out of its
/// latch) qualifies when its body `HEAD..latch` does by the same rules: the body runs under the mask of the
/// lanes still looping, which the latch narrows to those taking the branch, and the group goes round again
/// while any lane does.
///
/// A guarded `ret`/`exit` qualifies when the rest of the kernel does (its range ends past the last op): the
/// lanes that do not leave run it under the mask.
struct Ifs {
    /// By op: the innermost converted branch whose range holds it.
    inside: Vec<Option<usize>>,
    /// The converted branches.
    branches: Vec<bool>,
    /// By op: for a converted `bra END` closing an `if` range, the conditional branch of that `if`.
    else_of: Vec<Option<usize>>,
}

impl Ifs {
    /// The branches converted: those where a group could otherwise stop after a store, or with `all`, every
    /// qualifying branch.
    /// `uniform_latch(i)`: loop latch `i` decides alike in every lane (the loop is not converted).
    fn new(prog: &Program, plan: &Plan, all: bool, uniform_latch: &dyn Fn(usize) -> bool) -> Ifs {
        let n = prog.ops.len();
        // Branches into each op.
        let mut into: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        for (i, op) in prog.ops.iter().enumerate() {
            match (op.kind, op.extra.as_deref()) {
                (Kind::Bra, _) => into[(op.target as usize).min(n)].push(i),
                // An indirect branch's targets are never inside a range (no qualifying branch is its source).
                (Kind::Brx, Some(program::Extra::Targets(t))) => {
                    t.iter().for_each(|&x| into[(x as usize).min(n)].push(i))
                }
                _ => {}
            }
        }
        let yields: Vec<usize> = plan.yields.iter().map(|y| y.op as usize).collect();
        let mut branches = vec![false; n];
        // Qualifying branches and their `else` jumps.
        let mut qual = vec![false; n];
        // By conditional branch: the op that closes its range with a jump over an `else` range.
        let mut else_jump = vec![None; n];
        // Inner branches first: their ranges are shorter.
        let mut order: Vec<usize> =
            (0..n).filter(|&i| prog.ops[i].kind == Kind::Bra || is_exit(&prog.ops[i])).collect();
        // An `if`'s extent includes its `else` range; an exit's range is the rest of the kernel.
        let extent = |i: usize| {
            let target = range_target(prog, i);
            let end = match prog.ops.get(target.wrapping_sub(1)) {
                Some(last) if target > i + 1 && last.kind == Kind::Bra && last.guard.is_none() => {
                    (last.target as usize).max(target)
                }
                _ => target,
            };
            end.abs_diff(i)
        };
        order.sort_by_key(|&i| extent(i));
        for i in order {
            let op = &prog.ops[i];
            let exit = is_exit(op);
            let target = range_target(prog, i);
            let backward = target < i && target >= 1;
            if op.guard.is_none() || (!exit && ((target <= i && !backward) || target >= n)) {
                continue;
            }
            if backward && uniform_latch(i) {
                continue;
            }
            let last = &prog.ops[target - 1];
            let jump = (!backward
                && !exit
                && target - 1 > i
                && last.kind == Kind::Bra
                && last.guard.is_none()
                && (last.target as usize) > target
                && (last.target as usize) < n)
                .then_some(target - 1);
            // Ops `range` qualify, entered from outside only by `entry` (at the range's first op).
            let plain = |range: std::ops::Range<usize>, entry: Option<usize>, qual: &[bool]| {
                let (first, end) = (range.start, range.end);
                range.clone().all(|j| {
                    let o = &prog.ops[j];
                    let kind_ok = match o.kind {
                        _ if Some(j) == jump => true,
                        // A converted branch or loop nested in this one, or a jump to the next op (an empty
                        // `else`).
                        Kind::Bra => {
                            (qual[j] && (o.target as usize) <= end && (o.target as usize) >= first)
                                || (o.guard.is_none() && o.target as usize == j + 1)
                        }
                        // A converted exit nested in this one; an unguarded one where the range ends with the
                        // kernel (the lanes off the mask have left it already).
                        Kind::Ret | Kind::Exit => end == n && (o.guard.is_none() || qual[j]),
                        Kind::Brx | Kind::Trap | Kind::Call => false,
                        _ => !yields.contains(&j),
                    };
                    kind_ok
                        && into[j].iter().all(|&s| {
                            let next = prog.ops[s].guard.is_none() && s + 1 == j;
                            (s >= first && s < j && (qual[s] || next)) || (j == first && Some(s) == entry)
                        })
                })
            };
            branches[i] = if backward {
                // Fallen into from the op before, entered by no other branch than the latch.
                let before = &prog.ops[target - 1];
                let falls = before.guard.is_some()
                    || !matches!(before.kind, Kind::Bra | Kind::Brx | Kind::Ret | Kind::Exit | Kind::Trap);
                falls && plain(target..i, Some(i), &qual)
            } else {
                plain(i + 1..target, None, &qual)
                    && jump.is_none_or(|j| plain(target..prog.ops[j].target as usize, Some(i), &qual))
            };
            if branches[i] {
                qual[i] = true;
                else_jump[i] = jump;
                if let Some(j) = jump {
                    qual[j] = true;
                }
            }
        }
        // Masks cost every op of a range a blend or a test, also where the lanes agree: only the branches
        // where a group could otherwise stop after a store are converted (with the qualifying branches in
        // their ranges). Converting one adds no such point elsewhere: its range's stores reached its target
        // before too.
        let candidates = branches;
        let mut ifs = Ifs { inside: vec![None; n], branches: vec![false; n], else_of: vec![None; n] };
        let convert = |ifs: &mut Ifs, i: usize| {
            // The branch, with its `else` jump, and the qualifying branches in its ranges.
            let target = range_target(prog, i);
            let (start, end) = if target < i {
                (target, i + 1)
            } else {
                (i, else_jump[i].map_or(target, |j: usize| prog.ops[j].target as usize))
            };
            for k in start..end {
                if candidates[k] {
                    ifs.branches[k] = true;
                    if let Some(j) = else_jump[k] {
                        ifs.branches[j] = true;
                        ifs.else_of[j] = Some(k);
                    }
                }
            }
        };
        if all {
            for (i, _) in candidates.iter().enumerate().filter(|(_, &c)| c) {
                convert(&mut ifs, i);
            }
        }
        loop {
            let mut more = false;
            for i in stops_after_store(prog, plan, &ifs) {
                if candidates[i] && !ifs.branches[i] {
                    more = true;
                    convert(&mut ifs, i);
                }
            }
            if !more {
                break;
            }
        }
        // Each converted op's range: outer ranges first (earlier start, then longer), inner ones overwrite.
        let mut ranges: Vec<(usize, usize, usize)> = (0..n)
            .filter(|&i| ifs.branches[i])
            .map(|i| {
                let target = range_target(prog, i);
                if target < i {
                    (target, i, i)
                } else {
                    (i + 1, target, i)
                }
            })
            .collect();
        ranges.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
        for (start, end, i) in ranges {
            for x in &mut ifs.inside[start..end] {
                *x = Some(i);
            }
        }
        ifs
    }

    fn converted(&self, i: usize) -> bool {
        self.branches.get(i).copied().unwrap_or(false)
    }

    /// Whether converted op `i` is a loop's latch.
    fn is_latch(&self, prog: &Program, i: usize) -> bool {
        self.converted(i) && prog.ops[i].kind == Kind::Bra && (prog.ops[i].target as usize) < i
    }

    /// Where the lanes that did not run converted op `i`'s range go on: its target, after a latch, or (past
    /// the last op) nowhere, for an exit.
    fn range_end(&self, prog: &Program, i: usize) -> usize {
        if self.is_latch(prog, i) {
            i + 1
        } else {
            range_target(prog, i)
        }
    }
}

/// Whether liveness variable `v` is live where a converted range around op `i` ends (where the lanes off the
/// mask go on, or in the `else` range: a masked write of `v` at `i` must keep their old value).
fn live_around(ifs: &Ifs, live_at_end: &HashMap<usize, graph::BitSet>, i: usize, v: usize) -> bool {
    let mut r = ifs.inside[i];
    while let Some(k) = r {
        if live_at_end.get(&k).is_none_or(|l| v >= l.domain_size() || l.contains(v)) {
            return true;
        }
        r = match ifs.else_of[k] {
            Some(c) => ifs.inside[c],
            None => ifs.inside[k],
        };
    }
    false
}

/// A guarded `ret` or `exit`: converted, the rest of the kernel runs under the lanes that stay.
fn is_exit(op: &Op) -> bool {
    matches!(op.kind, Kind::Ret | Kind::Exit) && op.guard.is_some()
}

/// Where op `i`'s range ends: a branch's target, past the last op for an exit.
fn range_target(prog: &Program, i: usize) -> usize {
    if is_exit(&prog.ops[i]) {
        prog.ops.len()
    } else {
        prog.ops[i].target as usize
    }
}

/// Whole-CTA mode: converted branches `@p bra B` whose idle groups end their pass. `B` is a barrier or the
/// kernel's final `ret`, `p` is `setp.ge`/`setp.gt` of tid.x (a register only ever `mov`ed from it) against a
/// CTA-uniform value, or an equivalent (`@!p` of `lt`/`le`; `ne` against 0, `tid.x > 0`), so once
/// every lane of a group skips the range, every lane of every later group does (tid.x grows with the group in
/// a one-dimensional CTA; the code checks that). Every op a thread can run from a resume point to the branch
/// is a plain integer op or a branch without effects the later groups would miss: no memory access, no op
/// that may fail, no write of a register that lives across the barrier other than a uniform one (whose one
/// home the idle group stores, with the values every group would).
fn idle_ends(prog: &Program, plan: &Plan, ifs: &Ifs, uniform: &Uniform) -> Vec<usize> {
    let n = prog.ops.len();
    let ns = prog.slots as usize;
    let yield_at: HashMap<usize, usize> = plan.yields.iter().enumerate().map(|(k, y)| (y.op as usize, k)).collect();
    // The only write of each liveness variable, if it has one.
    let mut writes: Vec<Vec<usize>> = vec![Vec::new(); ns + prog.preds as usize];
    for (i, op) in prog.ops.iter().enumerate() {
        crate::plan::for_each_def(prog, op, |v| writes[v].push(i));
    }
    let only_write = |v: usize| match writes[v].as_slice() {
        &[w] => Some(&prog.ops[w]).filter(|o| o.guard.is_none() && ifs.inside[w].is_none()),
        _ => None,
    };
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        successors(prog, i, ifs, |j| {
            if j < n {
                preds[j].push(i);
            }
        });
    }
    let mut found = Vec::new();
    for b in 0..n {
        let op = &prog.ops[b];
        let target = op.target as usize;
        if op.kind != Kind::Bra
            || !ifs.converted(b)
            || target <= b
            || ifs.else_of[b].is_some()
            || ifs.inside[b].is_some()
            || (target >= 1 && ifs.else_of[target - 1] == Some(b))
        {
            continue;
        }
        // The barrier, or the kernel's end (where nothing is live).
        let live_after: &[usize] = match yield_at.get(&target) {
            Some(&k) => &plan.yields[k].live,
            None if prog
                .ops
                .get(target)
                .is_some_and(|o| matches!(o.kind, Kind::Ret | Kind::Exit) && o.guard.is_none()) =>
            {
                &[]
            }
            None => continue,
        };
        // `p` (or its negation, as the guard reads it): the range is skipped where tid.x >= u or tid.x > u,
        // u uniform; `tid.x != 0` is `tid.x > 0`.
        let Some((p, negated)) = op.guard else { continue };
        let Some(setp) = only_write(ns + p as usize) else { continue };
        let skip_above = match (setp.m.cmp, negated) {
            (Some(Cmp::Ge | Cmp::Gt), false) | (Some(Cmp::Lt | Cmp::Le), true) => true,
            (Some(Cmp::Ne), false) | (Some(Cmp::Eq), true) => setp.b == Src::Imm(0),
            _ => false,
        };
        let monotone = setp.kind == Kind::Setp
            && setp.dst2 == Dst::None
            && skip_above
            && matches!(setp.ty, Ty::U32 | Ty::S32 | Ty::B32)
            && uniform.src(&setp.b)
            && matches!(setp.a, Src::Reg(x) if only_write(x as usize).is_some_and(|m| {
                m.kind == Kind::Mov && m.a == Src::Special(SpecialReg::Tid, 0)
            }));
        if !monotone {
            continue;
        }
        // The ops from the resume points to the branch.
        let (mut seen, mut work, mut ok) = (vec![false; n], preds[b].clone(), true);
        while let Some(j) = work.pop() {
            if seen[j] || yield_at.contains_key(&j) {
                continue;
            }
            seen[j] = true;
            let o = &prog.ops[j];
            let plain = matches!(
                o.kind,
                Kind::Mov
                    | Kind::Add
                    | Kind::Sub
                    | Kind::Shl
                    | Kind::Shr
                    | Kind::And
                    | Kind::Or
                    | Kind::Xor
                    | Kind::Not
                    | Kind::Setp
                    | Kind::Selp
                    | Kind::Bra
            ) && !o.ty.is_float()
                && o.extra.is_none()
                && !o.m.cc;
            let mut writes_ok = true;
            crate::plan::for_each_def(prog, o, |v| writes_ok &= uniform.var(v) || !live_after.contains(&v));
            if !plain || !writes_ok {
                ok = false;
                break;
            }
            work.extend(preds[j].iter().copied());
        }
        if ok {
            found.push(b);
        }
    }
    found
}

/// Whole-CTA mode: the registers and predicates that need no home, each with the op that defines it. Such a
/// value is written once in the kernel, by a pure op of the kernel's straight-line start (before its first
/// yield point and first branch not run as masks, outside the ranges of those that are, which every lane
/// runs: every thread runs the op first), from constants, kernel parameters
/// (`ld.param`), `%ntid`, `%nctaid`, `%ctaid`, `%tid` and values of the same kind written before it. One that
/// does not depend on `%tid` is fixed for the CTA: a pass that reloads it computes it again before its group
/// loop (reduce_tree's `ntid`, `ctaid` and output pointer); one that does (`Remat::per_group`) is computed
/// again at each group's entry into such a pass, a few lane-wise ops where its home would cost a store in the
/// first region and a load in each later one (reduce_tree's `sdata + 4 * tid`, stencil_1d's index, its
/// address and its bound test).
fn rematerialized(prog: &Program, plan: &Plan, ifs: &Ifs) -> HashMap<usize, Remat> {
    let ns = prog.slots as usize;
    let mut defs = vec![0u32; ns + prog.preds as usize];
    // Targets of the branches that are not run as masks: where the straight line ends.
    let mut joins = vec![false; prog.ops.len() + 1];
    for (i, op) in prog.ops.iter().enumerate() {
        crate::plan::for_each_def(prog, op, |v| defs[v] += 1);
        if op.kind == Kind::Bra && !ifs.converted(i) {
            joins[(op.target as usize).min(prog.ops.len())] = true;
        }
    }
    let mut remat: HashMap<usize, Remat> = HashMap::new();
    for (i, op) in prog.ops.iter().enumerate() {
        let yields = plan.yields.iter().any(|y| y.op as usize == i);
        if joins[i]
            || yields
            || (op.kind == Kind::Bra && !ifs.converted(i))
            || matches!(op.kind, Kind::Brx | Kind::Call | Kind::Ret | Kind::Exit)
        {
            break;
        }
        // Ranges run as masks are skipped: every lane runs what follows them.
        if ifs.inside[i].is_some() || op.kind == Kind::Bra {
            continue;
        }
        let pure = matches!(
            op.kind,
            Kind::Mov
                | Kind::Cvta
                | Kind::Cvt
                | Kind::Add
                | Kind::Sub
                | Kind::Mul
                | Kind::Mad
                | Kind::Shl
                | Kind::Shr
                | Kind::And
                | Kind::Or
                | Kind::Xor
                | Kind::Setp
        ) || (op.kind == Kind::Ld
            && op.m.space == Space::Param
            && matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _)));
        let v = match op.dst {
            Dst::Reg(r, _) if op.kind != Kind::Setp => r as usize,
            Dst::Pred(p) if op.kind == Kind::Setp => ns + p as usize,
            _ => continue,
        };
        let mut per_group = false;
        let sources_ok = crate::plan::operands(op).all(|s| match *s {
            Src::Reg(u) => remat.get(&(u as usize)).map(|m| per_group |= m.per_group).is_some(),
            Src::Special(SpecialReg::Tid, _) => {
                per_group = true;
                true
            }
            Src::Special(sr, _) => matches!(sr, SpecialReg::Ntid | SpecialReg::Nctaid | SpecialReg::Ctaid),
            Src::Pred(..) => false,
            Src::None | Src::Imm(_) => true,
            Src::Sym(SymAddr::KernelParam(_), _) => op.kind == Kind::Ld,
            Src::Sym(SymAddr::Shared(_) | SymAddr::Global(_), _) => op.kind == Kind::Mov,
            Src::Sym(..) => false,
        });
        if pure
            && sources_ok
            && op.guard.is_none()
            && op.dst2 == Dst::None
            && op.extra.is_none()
            && !op.ty.is_float()
            && defs[v] == 1
        {
            remat.insert(v, Remat { op: i, per_group });
        }
    }
    remat
}

/// A value whole-CTA mode computes again rather than keep in a home ([`rematerialized`]).
#[derive(Clone, Copy, Debug)]
struct Remat {
    /// The op that writes it.
    op: usize,
    /// Whether it depends on `%tid` (computed at each group's entry rather than once per pass).
    per_group: bool,
}

/// Low bits known to be zero in lane 0 of every register (64: zero), whichever path computed the value: a
/// flow-insensitive fixpoint (the least over the writes). `tid.x`, `%laneid` and `ntid.x` start with two
/// (the vector path runs groups of four aligned threads, with `ntid.x % 4 == 0`); products add, sums take the
/// least. What [`lane_strides`] needs to know that widening a 32-bit index cannot wrap between lanes.
fn low_zeros(prog: &Program) -> Vec<u8> {
    let ns = prog.slots as usize;
    let mut z = vec![64u8; ns];
    let imm_zeros = |c: u64| c.trailing_zeros().min(64) as u8;
    let src = |z: &[u8], s: &Src| -> u8 {
        match *s {
            Src::Reg(r) => z[r as usize],
            Src::Imm(c) => imm_zeros(c),
            Src::Special(SpecialReg::Tid, 0) | Src::Special(SpecialReg::Laneid, _) => 2,
            Src::Special(SpecialReg::Ntid, 0) => 2,
            _ => 0,
        }
    };
    let mut changed = true;
    while changed {
        changed = false;
        for op in &prog.ops {
            let Dst::Reg(slot, mask) = op.dst else {
                crate::plan::for_each_def(prog, op, |v| {
                    if v < ns && z[v] != 0 {
                        z[v] = 0;
                        changed = true;
                    }
                });
                continue;
            };
            let (a, b, c) = (src(&z, &op.a), src(&z, &op.b), src(&z, &op.c));
            let plain = op.extra.is_none() && !op.m.cc && op.dst2 == Dst::None;
            let int = !op.ty.is_float();
            let r = match op.kind {
                _ if !plain => 0,
                Kind::Mov | Kind::Cvta => a,
                Kind::Cvt if int && !op.ty2.is_float() && !op.m.sat => a.min(op.ty.bits().min(op.ty2.bits()) as u8),
                Kind::Add | Kind::Sub if int => a.min(b),
                Kind::Mul if int && op.m.part != Part::Hi => a.saturating_add(b),
                Kind::Mad if int && op.m.part != Part::Hi => a.saturating_add(b).min(c),
                Kind::Shl => match op.b {
                    Src::Imm(k) if k < 64 => a.saturating_add(k as u8),
                    _ => a,
                },
                Kind::And if int => a.max(b),
                _ => 0,
            };
            // Bits past the register's width are not kept.
            let r = r.min(64).min(if mask == u64::MAX { 64 } else { mask.trailing_ones() as u8 });
            let slot = slot as usize;
            if r < z[slot] {
                z[slot] = r;
                changed = true;
            }
        }
    }
    z
}

/// How the four lanes of a register relate, whichever path computed the value: `lane l = lane 0 + l * stride`
/// modulo 2^(the register's bits), exactly when `widened` is 0; with `widened` 1, the value is 64 bits wide
/// and one of its terms was widened from 32 bits, where a wrap-around between lanes 0 and 3 (which a check
/// of those two lanes finds) would break the relation. Stride 0 is a value uniform in the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stride {
    stride: i64,
    widened: u8,
}

const UNIFORM: Stride = Stride { stride: 0, widened: 0 };

/// A stride in a `bits`-wide register (32-bit strides as their signed representative); `None` past one
/// widened term, or where a widened term's stride is so large that lanes 0..3 could wrap more than once.
fn stride(stride: i64, widened: u8, bits: u32) -> Option<Stride> {
    let stride = if bits == 32 { i64::from(stride as i32) } else { stride };
    match (stride, widened) {
        (0, _) => Some(UNIFORM),
        (_, 0) => Some(Stride { stride, widened }),
        (s, 1) if s.unsigned_abs() <= 1 << 28 => Some(Stride { stride, widened }),
        _ => None,
    }
}

/// The stride of every register ([`Stride`]), `None` where unknown: a flow-insensitive fixpoint over the
/// writes (each must give the same stride). Sources: immediates, symbols other than local variables, the
/// CTA's special registers, `tid.y` and `tid.z` and kernel parameters are uniform (a group's threads share
/// `tid.y` and `tid.z`, as `ntid.x % 4 == 0`); `tid.x` and `%laneid` have stride 1. Loads of other memory
/// are not uniform: on the scalar loop, a thread may store between its group's loads. Guarded writes are
/// unknown, and so are writes in converted ranges that `blended(op, register)` says keep the old value in the
/// lanes off the mask (the others compute every lane, as an unmasked write would).
fn lane_strides(prog: &Program, ifs: &Ifs, blended: &dyn Fn(usize, usize) -> bool) -> Vec<Option<Stride>> {
    let zeros = low_zeros(prog);
    #[derive(Clone, Copy, PartialEq)]
    enum St {
        Unwritten,
        Known(Stride),
        Unknown,
    }
    let ns = prog.slots as usize;
    let mut st = vec![St::Unwritten; ns];
    let bits_of = |slot: usize| if dom(prog.slot_types[slot]) == Dom::W { 32 } else { 64 };
    // `None`: not known yet (an unwritten register); `Some(None)`: unknown.
    // An operand read as `want` bits: a 32-bit register read as 64 bits is zero-extended (widened), a wider
    // one truncated (modular, the stride stays).
    let src = |st: &[St], s: &Src, zero: bool, want: u32| -> Option<Option<Stride>> {
        Some(match *s {
            Src::Reg(r) => match st[r as usize] {
                // Read before any write reaches it: zero in every lane (second phase).
                St::Unwritten if zero => Some(UNIFORM),
                St::Unwritten => return None,
                St::Known(k) if bits_of(r as usize) < want => stride(i64::from(k.stride as i32), k.widened + 1, 64),
                St::Known(k) => stride(k.stride, k.widened, want.min(64)),
                St::Unknown => None,
            },
            Src::Imm(_) | Src::None => Some(UNIFORM),
            Src::Sym(sym, _) => (!matches!(sym, SymAddr::Frame(_))).then_some(UNIFORM),
            Src::Special(SpecialReg::Tid, 0) | Src::Special(SpecialReg::Laneid, _) => {
                Some(Stride { stride: 1, widened: 0 })
            }
            Src::Special(SpecialReg::Tid, c) => (c < 3).then_some(UNIFORM),
            // A group's four threads are in one warp.
            Src::Special(sr, _) => (crate::uniform::cta_uniform(sr) || sr == SpecialReg::Warpid).then_some(UNIFORM),
            Src::Pred(..) => None,
        })
    };
    let imm = |s: &Src| match *s {
        Src::Imm(c) => Some(c as i64),
        _ => None,
    };
    // First the registers some write determines, then those only read before being written.
    for zero in [false, true] {
        let mut changed = true;
        while changed {
            changed = false;
            for (i, op) in prog.ops.iter().enumerate() {
                let Dst::Reg(slot, mask) = op.dst else {
                    crate::plan::for_each_def(prog, op, |v| {
                        if v < ns && st[v] != St::Unknown {
                            st[v] = St::Unknown;
                            changed = true;
                        }
                    });
                    continue;
                };
                let slot = slot as usize;
                let bits = bits_of(slot);
                let want = |k: usize| match (op.kind, op.m.part, k) {
                    (Kind::Mul | Kind::Mad, Part::Wide, 0 | 1) => op.ty.bits(),
                    (Kind::Mul | Kind::Mad, Part::Wide, _) => 2 * op.ty.bits(),
                    (Kind::Cvt, _, _) => op.ty2.bits(),
                    _ => op.ty.bits(),
                };
                let ops: Vec<Option<Option<Stride>>> =
                    [&op.a, &op.b, &op.c, &op.d].iter().enumerate().map(|(k, s)| src(&st, s, zero, want(k))).collect();
                let result: Option<Option<Stride>> = if op.guard.is_some()
                    || (ifs.inside[i].is_some() && blended(i, slot))
                    || op.extra.is_some()
                    || op.m.cc
                    || op.dst2 != Dst::None
                {
                    Some(None)
                } else if ops.iter().any(|o| o.is_none()) {
                    None
                } else {
                    let o: Vec<Option<Stride>> = ops.into_iter().map(|o| o.expect("known")).collect();
                    let (a, b, c) = (o[0], o[1], o[2]);
                    let width_ok = op.ty.bits() == bits && mask == program::mask_bits(bits);
                    let wide_ok = op.ty.bits() == 32 && bits == 64 && mask == u64::MAX;
                    let lo = op.m.part == Part::Lo;
                    let all_uniform = o.iter().all(|x| *x == Some(UNIFORM));
                    let pure = matches!(
                        op.kind,
                        Kind::Mov
                            | Kind::Add
                            | Kind::Sub
                            | Kind::Mul
                            | Kind::Mad
                            | Kind::Shl
                            | Kind::Shr
                            | Kind::And
                            | Kind::Or
                            | Kind::Xor
                            | Kind::Not
                            | Kind::Neg
                            | Kind::Min
                            | Kind::Max
                            | Kind::Cvt
                            | Kind::Cvta
                    );
                    // A 32-bit value's stride in 64 bits, with one more widened term; exact (no wrap-around
                    // between lanes 0 and 3 is possible) when the stride is a positive power of two and lane 0
                    // a multiple of four strides: lanes 0..3 then stay between two multiples of 2^31.
                    let widen = |x: Stride, from: &Src| {
                        let s = i64::from(x.stride as i32);
                        let exact = x.widened == 0
                            && s > 0
                            && (s as u64).is_power_of_two()
                            && s <= 1 << 29
                            && matches!(*from, Src::Reg(r) if u32::from(zeros[r as usize]) >= 2 + s.trailing_zeros());
                        stride(s, x.widened + u8::from(!exact), 64)
                    };
                    let scaled = |x: Option<Stride>, k: Option<i64>, w: u8| {
                        x.zip(k).and_then(|(x, k)| stride(x.stride.wrapping_mul(k), x.widened + w, bits))
                    };
                    let sum = |x: Option<Stride>, y: Option<Stride>, neg: bool| {
                        x.zip(y).and_then(|(x, y)| {
                            let s = if neg { x.stride.wrapping_sub(y.stride) } else { x.stride.wrapping_add(y.stride) };
                            stride(s, x.widened + y.widened, bits)
                        })
                    };
                    let product = |me_a: Option<Stride>, me_b: Option<Stride>, sa: &Src, sb: &Src| {
                        if me_a == Some(UNIFORM) && me_b == Some(UNIFORM) {
                            Some(UNIFORM)
                        } else if let Some(k) = imm(sb) {
                            scaled(me_a, Some(k), 0)
                        } else if let Some(k) = imm(sa) {
                            scaled(me_b, Some(k), 0)
                        } else {
                            None
                        }
                    };
                    Some(match op.kind {
                        Kind::Ld if matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _)) => Some(UNIFORM),
                        _ if all_uniform && pure => Some(UNIFORM),
                        Kind::Mov | Kind::Cvta if width_ok => a,
                        Kind::Add if width_ok => sum(a, b, false),
                        Kind::Sub if width_ok => sum(a, b, true),
                        Kind::Mul if lo && width_ok => product(a, b, &op.a, &op.b),
                        Kind::Mad if lo && width_ok => sum(product(a, b, &op.a, &op.b), c, false),
                        Kind::Mul | Kind::Mad if op.m.part == Part::Wide && wide_ok => {
                            let signed = op.ty.is_signed();
                            let k = |s: &Src| {
                                imm(s).map(|c| if signed { i64::from(c as i32) } else { i64::from(c as u32) })
                            };
                            let p = match (a, b) {
                                (Some(x), Some(UNIFORM)) if x != UNIFORM => {
                                    k(&op.b).and_then(|k| scaled(widen(x, &op.a), Some(k), 0))
                                }
                                (Some(UNIFORM), Some(y)) if y != UNIFORM => {
                                    k(&op.a).and_then(|k| scaled(widen(y, &op.b), Some(k), 0))
                                }
                                _ => None,
                            };
                            if op.kind == Kind::Mad {
                                sum(p, c, false)
                            } else {
                                p
                            }
                        }
                        Kind::Shl if width_ok => match imm(&op.b) {
                            Some(k) if (0..i64::from(bits)).contains(&k) => scaled(a, Some(1 << k), 0),
                            _ => None,
                        },
                        // Integer conversions: the same width, or 32 to 64 bits.
                        Kind::Cvt
                            if !op.ty.is_float() && !op.ty2.is_float() && op.ty.bits() == op.ty2.bits() && width_ok =>
                        {
                            a
                        }
                        Kind::Cvt
                            if !op.ty2.is_float()
                                && op.ty2.bits() == 32
                                && op.ty.bits() == 64
                                && bits == 64
                                && mask == u64::MAX =>
                        {
                            a.and_then(|x| widen(x, &op.a))
                        }
                        _ => None,
                    })
                };
                let Some(r) = result else { continue };
                let new = match (st[slot], r) {
                    (St::Unknown, _) | (_, None) => St::Unknown,
                    (St::Unwritten, Some(k)) => St::Known(k),
                    (St::Known(x), Some(k)) if x == k => St::Known(x),
                    _ => St::Unknown,
                };
                if new != st[slot] {
                    st[slot] = new;
                    changed = true;
                }
            }
        }
    }
    st.into_iter()
        .map(|s| match s {
            // Never written: zero in every lane.
            St::Unwritten => Some(UNIFORM),
            St::Known(k) => Some(k),
            St::Unknown => None,
        })
        .collect()
}

/// Eager home stores (`Plan::eager`) the vector path moves to the yield points: those of registers that a
/// region containing the op reloads at its start. A group that stops in the region is rerun from the homes
/// it started with; the stores at a yield point happen only when the group completes its region. Each lane's
/// homes after a yield point are the scalar code's: the register holds at the yield point what the eager
/// store would have written, or a newer value the scalar code spills there.
struct Deferred {
    /// By op: the registers whose eager store is deferred.
    at: Vec<Vec<usize>>,
    /// By yield point: the registers to store besides `spill`, and the registers to reload after it
    /// (`reload`, and what the region stores before writing it).
    store: Vec<Vec<usize>>,
    reload: Vec<Vec<usize>>,
    /// By resume point (0: the kernel's start, `k + 1`: after yield point `k`): whether the region from it
    /// to the next yield points reads `%tid`.
    reads_tid: Vec<bool>,
    /// By resume point: the ops of its region (those reached before the next yield points, these included).
    ops: Vec<Vec<bool>>,
}

impl Deferred {
    fn new(prog: &Program, plan: &Plan) -> Deferred {
        let n = prog.ops.len();
        let none = Ifs { inside: vec![None; n], branches: vec![false; n], else_of: vec![None; n] };
        debug_assert!(none.else_of.len() == n);
        let yield_of: HashMap<usize, usize> = plan.yields.iter().enumerate().map(|(k, y)| (y.op as usize, k)).collect();
        // Ops reachable from `start` before the next yield point, and the yield points reached.
        let reach = |start: usize| {
            let (mut seen, mut yields, mut work) = (vec![false; n], Vec::new(), vec![start]);
            while let Some(i) = work.pop() {
                if i >= n || seen[i] {
                    continue;
                }
                seen[i] = true;
                match yield_of.get(&i) {
                    Some(&k) => yields.push(k),
                    None => successors(prog, i, &none, |j| work.push(j)),
                }
            }
            (seen, yields)
        };
        let regions: Vec<(Vec<bool>, Vec<usize>)> = plan.yields.iter().map(|y| reach(y.op as usize + 1)).collect();
        let mut at = vec![Vec::new(); n];
        for (k, (ops, _)) in regions.iter().enumerate() {
            for i in (0..n).filter(|&i| ops[i] && plan.eager[i]) {
                crate::plan::for_each_def(prog, &prog.ops[i], |v| {
                    if plan.yields[k].reload.contains(&v) && plan.home[v].is_some() && !at[i].contains(&v) {
                        at[i].push(v);
                    }
                });
            }
        }
        let mut store = vec![Vec::new(); plan.yields.len()];
        for i in (0..n).filter(|&i| !at[i].is_empty()) {
            for j in reach(i + 1).1 {
                for &v in &at[i] {
                    if plan.yields[j].live.contains(&v) && !store[j].contains(&v) {
                        store[j].push(v);
                    }
                }
            }
        }
        let mut reload: Vec<Vec<usize>> = plan.yields.iter().map(|y| y.reload.clone()).collect();
        for (k, (_, reached)) in regions.iter().enumerate() {
            for &j in reached {
                for &v in &store[j] {
                    // Not written since this resume point on some path: its value is the home's.
                    if plan.yields[k].live.contains(&v) && !reload[k].contains(&v) {
                        reload[k].push(v);
                    }
                }
            }
        }
        let tid = |i: usize| crate::plan::operands(&prog.ops[i]).any(|s| matches!(s, Src::Special(SpecialReg::Tid, _)));
        let reads = |ops: &[bool]| (0..n).any(|i| ops[i] && tid(i));
        let first = reach(0);
        let reads_tid = std::iter::once(reads(&first.0)).chain(regions.iter().map(|(ops, _)| reads(ops))).collect();
        let ops = std::iter::once(first.0).chain(regions.into_iter().map(|(ops, _)| ops)).collect();
        Deferred { at, store, reload, reads_tid, ops }
    }
}

fn writes_memory(op: &Op) -> bool {
    matches!(
        op.kind,
        Kind::St
            | Kind::Atom
            | Kind::Atom128
            | Kind::Red
            | Kind::Call
            | Kind::Texture
            | Kind::Matrix
            | Kind::CpAsync
            | Kind::Mbarrier
            | Kind::BulkCopy
    )
}

fn successors(prog: &Program, i: usize, ifs: &Ifs, mut f: impl FnMut(usize)) {
    let op = &prog.ops[i];
    if ifs.converted(i) {
        // The skipped ops run under a mask: only the fall-through (and a latch's loop).
        f(i + 1);
        if op.kind == Kind::Bra && (op.target as usize) < i {
            f(op.target as usize);
        }
        return;
    }
    let fall = op.guard.is_some() || !matches!(op.kind, Kind::Bra | Kind::Brx | Kind::Ret | Kind::Exit | Kind::Trap);
    if fall && i + 1 < prog.ops.len() {
        f(i + 1);
    }
    match (op.kind, op.extra.as_deref()) {
        (Kind::Bra, _) => f(op.target as usize),
        (Kind::Brx, Some(program::Extra::Targets(t))) => t.iter().for_each(|&x| f(x as usize)),
        _ => {}
    }
}

/// The first op where a group could stop after one of its lanes wrote memory since the start of its region
/// (the kernel's start or the last yield point, where the scalar loop would run the group again from), or
/// `None`. Forward dataflow over the ops from each region start, "a store may have run in this region" at
/// each op; a yield point ends its region.
///
/// The eager stores of register homes (`Plan::eager`) are no side effect here: where one would overwrite a
/// register its region's start reloads (the rerun would reload the new value), [`Deferred`] moves it to the
/// region's yield points; elsewhere a rerun writes the same values into the same homes again.
fn stop_after_store(prog: &Program, plan: &Plan, ifs: &Ifs) -> Option<usize> {
    stops_after_store(prog, plan, ifs).into_iter().min()
}

/// Every op where a group could stop after a store of its region ([`stop_after_store`]).
fn stops_after_store(prog: &Program, plan: &Plan, ifs: &Ifs) -> Vec<usize> {
    let n = prog.ops.len();
    let mut found = Vec::new();
    let starts = std::iter::once((0, ())).chain(plan.yields.iter().map(|y| (y.op as usize + 1, ())));
    for (start, _) in starts {
        let mut seen = vec![false; n];
        let mut stored = vec![false; n];
        let mut work = vec![(start, false)];
        while let Some((i, s)) = work.pop() {
            if i >= n || (seen[i] && (stored[i] || !s)) {
                continue;
            }
            seen[i] = true;
            stored[i] |= s;
            let op = &prog.ops[i];
            if stored[i] && may_stop(op, i, ifs) && !found.contains(&i) {
                found.push(i);
            }
            // Yield points are unguarded (`refusal`): their region ends there.
            if plan.yields.iter().any(|y| y.op as usize == i) {
                continue;
            }
            let after = stored[i] || writes_memory(op);
            successors(prog, i, ifs, |j| work.push((j, after)));
        }
    }
    found
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

    /// Whether any lane of the `i32x4` masks (one per group) is set (an `i8`).
    fn any_of(&mut self, masks: &[Value]) -> Value {
        let bits = self.masks_bits(masks, |b, x, y| b.ins().bor(x, y));
        self.b.ins().icmp_imm_s(IntCC::NotEqual, bits, 0)
    }

    /// Whether every lane of the `i32x4` masks (one per group) is set (an `i8`).
    fn all_of(&mut self, masks: &[Value]) -> Value {
        let bits = self.masks_bits(masks, |b, x, y| b.ins().band(x, y));
        self.b.ins().icmp_imm_s(IntCC::Equal, bits, 0xF)
    }

    /// The masks' lane bits ([`Vector::lane_bits`]) combined by `op`.
    fn masks_bits(&mut self, masks: &[Value], op: impl Fn(&mut FunctionBuilder<'b>, Value, Value) -> Value) -> Value {
        debug_assert!(masks.iter().all(|&m| self.b.func.dfg.value_type(m) == I32X4), "lane masks");
        let bits: Vec<Value> = masks.iter().map(|&m| self.lane_bits(m)).collect();
        bits[1..].iter().fold(bits[0], |a, &x| op(&mut self.b, a, x))
    }

    /// Branches to `yes` where any lane of the masks (one per group) is set, else to `no`; masks that follow
    /// from scalars ([`LanePred`]) are tested on lane 0 first (exactly, where they are uniform).
    fn brif_any(&mut self, masks: &[Value], yes: Block, no: Block) {
        if let Some(ps) = self.lane_preds_of(masks) {
            let l0s: Vec<Value> = ps.iter().map(|p| self.pred_lane0(p)).collect();
            let l0 = l0s[1..].iter().fold(l0s[0], |a, &x| self.b.ins().bor(a, x));
            if ps.iter().all(LanePred::is_uniform) {
                self.b.ins().brif(l0, yes, &[], no, &[]);
                return;
            }
            let lanes = self.b.create_block();
            self.b.ins().brif(l0, yes, &[], lanes, &[]);
            self.b.switch_to_block(lanes);
        }
        let any = self.any_of(masks);
        self.b.ins().brif(any, yes, &[], no, &[]);
    }

    /// Branches to `yes` where every lane of the masks (one per group) is set, else to `no`; masks that follow
    /// from scalars ([`LanePred`]) are tested on them first.
    fn brif_all(&mut self, masks: &[Value], yes: Block, no: Block) {
        if let Some(ps) = self.lane_preds_of(masks) {
            let alls: Vec<(Value, bool)> = ps.iter().map(|p| self.pred_all(p)).collect();
            let all = alls[1..].iter().fold(alls[0].0, |a, &(x, _)| self.b.ins().band(a, x));
            let exact = alls.iter().all(|&(_, e)| e);
            if exact {
                self.b.ins().brif(all, yes, &[], no, &[]);
                return;
            }
            let lanes = self.b.create_block();
            self.b.ins().brif(all, yes, &[], lanes, &[]);
            self.b.switch_to_block(lanes);
        }
        let all = self.all_of(masks);
        self.b.ins().brif(all, yes, &[], no, &[]);
    }

    /// The [`LanePred`] of a single group's mask.
    fn lane_pred_of(&mut self, masks: &[Value]) -> Option<LanePred> {
        let &[m] = masks else { return None };
        self.lane_pred(m, false, 6)
    }

    /// The [`LanePred`] of each group's mask (every group's, or none). Several groups' (a bundle's) only
    /// where each is alike in its lanes: the lane-0 scalars of stepping values, four groups' worth, would be
    /// so many more live values (saxpy +29% on one worker where alu_loop gains 7%).
    fn lane_preds_of(&mut self, masks: &[Value]) -> Option<Vec<LanePred>> {
        let ps: Vec<LanePred> = masks.iter().map(|&m| self.lane_pred(m, false, 6)).collect::<Option<_>>()?;
        (ps.len() == 1 || ps.iter().all(LanePred::is_uniform)).then_some(ps)
    }

    /// The [`LanePred`] of mask `m` (negated), following `not`, `and` and `or` to `depth`.
    fn lane_pred(&mut self, m: Value, negated: bool, depth: u32) -> Option<LanePred> {
        if let Some(&leaf) = self.lane_leaves.get(&m) {
            return Some(match (leaf, negated) {
                (LaneLeaf::Step(c), false) => LanePred::Step(c),
                (LaneLeaf::Step(c), true) => LanePred::Step(StepCmp { cc: c.cc.complement(), ..c }),
                (LaneLeaf::Uniform(u), false) => LanePred::Uniform(u),
                (LaneLeaf::Uniform(u), true) => LanePred::Uniform(self.b.ins().bxor_imm_u(u, 1)),
            });
        }
        if depth == 0 {
            return None;
        }
        let inst = self.b.func.dfg.value_def(m).inst()?;
        match self.b.func.dfg.insts[inst] {
            InstructionData::Unary { opcode: Opcode::Bnot, arg } => self.lane_pred(arg, !negated, depth - 1),
            InstructionData::Binary { opcode: op @ (Opcode::Band | Opcode::Bor), args } => {
                let x = Box::new(self.lane_pred(args[0], negated, depth - 1)?);
                let y = Box::new(self.lane_pred(args[1], negated, depth - 1)?);
                // (`not (a and b)` is `not a or not b`.)
                Some(if (op == Opcode::Band) != negated { LanePred::And(x, y) } else { LanePred::Or(x, y) })
            }
            _ => None,
        }
    }

    /// Whether lane 0 of a [`LanePred`]'s mask is set (an `i8`): then some lane is.
    fn pred_lane0(&mut self, p: &LanePred) -> Value {
        match p {
            LanePred::Step(c) => self.b.ins().icmp(c.cc, c.x0, c.u),
            LanePred::Uniform(u) => *u,
            LanePred::And(x, y) | LanePred::Or(x, y) => {
                let (x, y) = (self.pred_lane0(x), self.pred_lane0(y));
                match p {
                    LanePred::And(..) => self.b.ins().band(x, y),
                    _ => self.b.ins().bor(x, y),
                }
            }
        }
    }

    /// Whether every lane of a [`LanePred`]'s mask is set (an `i8`), and whether that is exact (else it is a
    /// sufficient condition: false may still be every lane).
    fn pred_all(&mut self, p: &LanePred) -> (Value, bool) {
        match p {
            LanePred::Step(c) => self.step_all(*c),
            LanePred::Uniform(u) => (*u, true),
            LanePred::And(x, y) => {
                let ((x, ex), (y, ey)) = (self.pred_all(x), self.pred_all(y));
                (self.b.ins().band(x, y), ex && ey)
            }
            LanePred::Or(a, b) => {
                // Exact where one side is alike in every lane (then every lane is set where it is, or where
                // every lane of the other side is).
                let ((x, ex), (y, ey)) = (self.pred_all(a), self.pred_all(b));
                let exact = (a.is_uniform() && ey) || (b.is_uniform() && ex);
                (self.b.ins().bor(x, y), exact)
            }
        }
    }

    /// Whether every lane of a [`StepCmp`]'s mask is set, from its scalars (an `i8`), and whether that is
    /// exact (else it is a sufficient condition: false may still be all lanes). Lanes 0..3 are `x0..x0+3`
    /// unless they wrap around (`x0 + 3` past the type's maximum); then they include the maximum and the
    /// minimum.
    fn step_all(&mut self, c: StepCmp) -> (Value, bool) {
        let signed = matches!(
            c.cc,
            IntCC::SignedLessThan
                | IntCC::SignedLessThanOrEqual
                | IntCC::SignedGreaterThan
                | IntCC::SignedGreaterThanOrEqual
        );
        let ext = |b: &mut FunctionBuilder<'b>, v: Value| {
            if signed {
                b.ins().sextend(I64, v)
            } else {
                b.ins().uextend(I64, v)
            }
        };
        let x = ext(&mut self.b, c.x0);
        let u = ext(&mut self.b, c.u);
        let top = if signed { i64::from(i32::MAX) } else { i64::from(u32::MAX) };
        let x3 = self.b.ins().iadd_imm_s(x, 3);
        match c.cc {
            // Lane 3 (past the maximum where lanes wrap: then the maximum is a lane, and not below `u`).
            IntCC::UnsignedLessThan | IntCC::SignedLessThan => (self.b.ins().icmp(c.cc, x3, u), true),
            // (Where lanes wrap, the maximum is a lane, and may equal `u`: the lane bits decide.)
            IntCC::UnsignedLessThanOrEqual | IntCC::SignedLessThanOrEqual => {
                let cc = if signed { IntCC::SignedLessThanOrEqual } else { IntCC::UnsignedLessThanOrEqual };
                (self.b.ins().icmp(cc, x3, u), false)
            }
            // Lane 0 where lanes do not wrap (where they do, the minimum is a lane: never above `u`, and equal
            // to it only where `u` is the minimum, which the lane bits decide).
            IntCC::UnsignedGreaterThan
            | IntCC::SignedGreaterThan
            | IntCC::UnsignedGreaterThanOrEqual
            | IntCC::SignedGreaterThanOrEqual => {
                let c0 = self.b.ins().icmp(c.cc, c.x0, c.u);
                let no_wrap = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, x3, top);
                let exact = matches!(c.cc, IntCC::UnsignedGreaterThan | IntCC::SignedGreaterThan);
                (self.b.ins().band(c0, no_wrap), exact)
            }
            // No lane equals `u` where `u` is not among `x0..x0+3` (modulo 2^32).
            IntCC::NotEqual => {
                let d = self.b.ins().isub(c.u, c.x0);
                (self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, d, 4), true)
            }
            // Four distinct lanes are never all equal to one value.
            _ => (self.b.ins().iconst(I8, 0), true),
        }
    }

    /// Lane `i` of an `i32x4` as a scalar, from the scalars and constants it was built of where it can (as
    /// `tid.x`'s lanes and sums with uniform values are).
    fn lane32_of(&mut self, v: Value, i: u8, depth: u32) -> Value {
        if let (Some(inst), true) = (self.b.func.dfg.value_def(v).inst(), depth > 0) {
            match self.b.func.dfg.insts[inst] {
                InstructionData::Unary { opcode: Opcode::Splat, arg } => return arg,
                InstructionData::UnaryConst { opcode: Opcode::Vconst, constant_handle } => {
                    let bytes = self.b.func.dfg.constants.get(constant_handle).as_slice();
                    let at = usize::from(i) * 4;
                    let lane = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
                    return self.b.ins().iconst(I32, i64::from(lane));
                }
                InstructionData::Binary { opcode: op @ (Opcode::Iadd | Opcode::Isub | Opcode::Imul), args } => {
                    let x = self.lane32_of(args[0], i, depth - 1);
                    let y = self.lane32_of(args[1], i, depth - 1);
                    return match op {
                        Opcode::Iadd => self.b.ins().iadd(x, y),
                        Opcode::Isub => self.b.ins().isub(x, y),
                        _ => self.b.ins().imul(x, y),
                    };
                }
                _ => {}
            }
        }
        self.b.ins().extractlane(v, i)
    }

    /// Whether a source is the same in every lane of the group.
    fn src_uniform(&self, s: &Src) -> bool {
        match *s {
            Src::Reg(r) => self.strides.get(r as usize).copied().flatten() == Some(UNIFORM),
            Src::Imm(_) => true,
            Src::Special(SpecialReg::Tid, c) => c > 0 && c < 3,
            Src::Special(sr, c) => c < 3 && crate::uniform::cta_uniform(sr),
            _ => false,
        }
    }

    /// The lane stride of a 32-bit source read as 32 bits, where known exactly.
    fn src_stride32(&self, s: &Src) -> Option<i64> {
        match *s {
            Src::Reg(r) => match (self.regs[r as usize], self.strides.get(r as usize).copied().flatten()) {
                (Reg::W(_), Some(Stride { stride, widened: 0 })) => Some(stride),
                _ => None,
            },
            Src::Special(SpecialReg::Tid, 0) => Some(1),
            _ => self.src_uniform(s).then_some(0),
        }
    }

    // ---------------------------------------------------------------- the group loop

    fn body(&mut self, plan: &Plan) -> R {
        let entry = self.b.current_block().expect("entry");
        let lo = self.b.block_params(entry)[1];
        if self.cta.is_none() {
            let all = vec![true; self.prog.ops.len()];
            self.op_blocks(plan, &all);
        }
        // Whole-CTA mode runs from the CTA's first thread (`exec.rs` passes `lo = 0`): no divisions.
        let lo = if self.cta.is_some() { self.b.ins().iconst(I32, 0) } else { lo };
        self.set_t(lo);
        let (x, y, z) = if self.cta.is_some() {
            (lo, lo, lo)
        } else {
            let ntx = self.b.ins().load(I32, ro(), self.ctx, cx::NTID);
            let nty = self.b.ins().load(I32, ro(), self.ctx, cx::NTID + 4);
            let x = self.b.ins().urem(lo, ntx);
            let q = self.b.ins().udiv(lo, ntx);
            (x, self.b.ins().urem(q, nty), self.b.ins().udiv(q, nty))
        };
        self.b.def_var(self.tid[0], x);
        self.b.def_var(self.tid[1], y);
        self.b.def_var(self.tid[2], z);
        // Whole-CTA mode: each pass starts again from the first group, in the loop of its region.
        let pass = self.cta.as_ref().map(|c| (c.resume, c.reached, self.b.create_block()));
        if let Some((resume, reached, pass)) = pass {
            let zero = self.b.ins().iconst(I32, 0);
            self.b.def_var(resume, zero);
            self.b.def_var(reached, zero);
            let one_d = crate::translate::one_dimensional(&mut self.b, self.ctx);
            let cta = self.cta.as_mut().expect("whole-CTA mode");
            cta.one_d = Some(one_d);
            let row = cta.row;
            self.b.ins().jump(pass, &[]);
            self.b.switch_to_block(pass);
            self.set_t(lo);
            self.b.def_var(row, lo);
            self.b.def_var(self.tid[0], x);
            self.b.def_var(self.tid[1], y);
            self.b.def_var(self.tid[2], z);
            let heads: Vec<Block> = (0..=plan.yields.len()).map(|_| self.b.create_block()).collect();
            let r = self.b.use_var(resume);
            let targets: Vec<_> = heads.iter().map(|&h| self.b.func.dfg.block_call(h, &[])).collect();
            let default = self.b.func.dfg.block_call(self.stop, &[]);
            let jt = self.b.create_jump_table(JumpTableData::new(default, &targets));
            self.b.ins().br_table(r, jt);
            let end = self.b.create_block();
            for (r, &head) in heads.iter().enumerate() {
                self.emit_region(r, head, end, plan)?;
            }
            // The pass's end: the CTA's, or the barrier's release and the next pass.
            self.b.switch_to_block(end);
            let r = self.b.use_var(reached);
            let finished = self.b.ins().icmp_imm_s(IntCC::Equal, r, Cta::EXIT);
            let (last, again) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(finished, last, &[], again, &[]);
            self.b.switch_to_block(last);
            let fl = MemFlagsData::trusted();
            let n = self.b.ins().load(I32, ro(), self.ctx, cx::THREAD_COUNT);
            self.b.ins().store(fl, n, self.ctx, cx::FINISHED);
            self.b.ins().return_(&[self.hi]);
            self.b.switch_to_block(again);
            let ph = self.b.ins().load(I32, fl, self.ctx, cx::PHASE);
            let ph = self.b.ins().iadd_imm_s(ph, 1);
            self.b.ins().store(fl, ph, self.ctx, cx::PHASE);
            self.b.def_var(resume, r);
            self.b.ins().jump(pass, &[]);
            self.b.switch_to_block(self.stop);
            let t = self.b.use_var(self.t);
            self.b.ins().return_(&[t]);
            return Ok(());
        }
        let head = self.b.create_block();
        self.b.ins().jump(head, &[]);

        // Head: stop unless a whole group fits below `hi`.
        self.b.switch_to_block(head);
        let done = self.group_head();
        let first = self.blocks[&0];
        if plan.yields.is_empty() {
            self.b.ins().brif(done, self.stop, &[], first, &[]);
            self.b.switch_to_block(self.done);
            self.b.ins().jump(self.next, &[]);
        } else {
            let dispatch = self.b.create_block();
            self.b.ins().brif(done, self.stop, &[], dispatch, &[]);
            self.b.switch_to_block(dispatch);
            self.dispatch(plan, first);
        }

        self.b.switch_to_block(self.stop);
        let t = self.b.use_var(self.t);
        self.b.ins().return_(&[t]);

        // Next group: t += 4, tid.x += 4 with carries into y and z (ntid.x is a multiple of 4); in a
        // one-dimensional CTA, tid.x is t.
        self.b.switch_to_block(self.next);
        self.move_to_next_group(head, true);

        self.filled = true;
        let all = vec![true; self.prog.ops.len()];
        self.emit_ops(plan, &all)?;
        if !self.filled {
            self.b.ins().jump(self.done, &[]);
        }
        Ok(())
    }

    /// Blocks for the leaders among `ops`, and the bodies of the converted loops among them: `blocks` holds
    /// a converted loop head's entry from outside (which sets the loop's mask), the latch jumps to its body.
    fn op_blocks(&mut self, plan: &Plan, ops: &[bool]) {
        self.blocks.clear();
        self.loop_bodies.clear();
        self.else_entries.clear();
        for i in (0..ops.len()).filter(|&i| ops[i] && plan.leader[i]) {
            let blk = self.b.create_block();
            self.blocks.insert(i, blk);
        }
        for i in (0..ops.len()).filter(|&i| ops[i] && self.ifs.is_latch(self.prog, i)) {
            let head = self.prog.ops[i].target as usize;
            let body = self.b.create_block();
            self.loop_bodies.insert(head, (i, body));
        }
    }

    /// Whole-CTA mode: the loop over the groups of a pass of region `r` (from resume point `r`), with its own
    /// copy of the region's ops (regions that meet before a barrier each have theirs), entered at `entry`
    /// (which loads the region's uniform homes); its head takes the next group or ends the pass (`end`);
    /// each barrier the region reaches, and the kernel's end, go on to the
    /// next group with what the region needs known here (whether it reads `%tid`). One loop per region lets
    /// Cranelift hoist each region's invariants to its own pass, and leaves no resume point to test.
    fn emit_region(&mut self, r: usize, entry: Block, end: Block, plan: &Plan) -> R {
        self.region_pred_leaves.clear();
        let ops = self.deferred.ops[r].clone();
        self.op_blocks(plan, &ops);
        self.quads.clear();
        self.site_next = (0..=plan.yields.len()).map(|_| self.b.create_block()).collect();
        // Where the pass ends after a group reached each barrier (the uniform homes are stored there), or the
        // kernel's end.
        self.site_exit = (0..plan.yields.len()).map(|_| self.b.create_block()).chain([end]).collect();
        self.done = self.b.create_block();
        // Before the loop: the uniform registers the region reloads.
        let head = self.b.create_block();
        self.b.switch_to_block(entry);
        let reloads = if r == 0 { Vec::new() } else { self.deferred.reload[r - 1].clone() };
        self.load_uniform_homes(plan, &reloads)?;
        let homes = self.uniform_homes_stored(plan, &ops);
        let mut at_start = Vec::new();
        if !homes.is_empty() {
            let threads = self.b.ins().load(I64, ro(), self.ctx, cx::THREADS);
            for &(v, off) in &homes {
                let ty = if self.cta_w(v) { I32 } else { I64 };
                at_start.push(self.b.ins().load(ty, MemFlagsData::trusted(), threads, off));
            }
        }
        let vars: Vec<Variable> =
            homes.iter().map(|&(v, _)| self.b.declare_var(if self.cta_w(v) { I32 } else { I64 })).collect();
        self.cta.as_mut().expect("whole-CTA mode").homes =
            homes.iter().zip(&vars).map(|(&(v, off), &var)| (v, off, var)).collect();
        // The bound is tested once before the pass and then where a group hands over to the next
        // (`next_group_of_pass`), not at the head of each group.
        let t = self.b.use_var(self.t);
        let step = i64::from(self.step());
        let first_end = self.b.ins().iadd_imm_s(t, step);
        let none = self.b.ins().icmp(IntCC::UnsignedGreaterThan, first_end, self.hi);
        self.b.ins().brif(none, end, &[], head, &[]);
        self.b.switch_to_block(head);
        // (The bound is tested where a group hands over: no `t` is read here.)
        self.clear_registers();
        for (&var, &x) in vars.iter().zip(&at_start) {
            self.b.def_var(var, x);
        }
        if self.deferred.reads_tid[r] {
            let row = self.cta.as_ref().expect("whole-CTA mode").row;
            let (row, x) = (self.b.use_var(row), self.b.use_var(self.tid[0]));
            let t = self.b.ins().iadd(row, x);
            self.b.def_var(self.t, t);
        }
        self.gs_used = false;
        let enter = self.b.create_block();
        self.b.ins().jump(enter, &[]);
        self.b.switch_to_block(enter);
        let start = match r {
            0 => 0,
            _ => {
                self.reload_after(plan, r - 1);
                plan.yields[r - 1].op as usize + 1
            }
        };
        // (A yield point last in the kernel leaves an empty region: the kernel's end.)
        let first = if start < ops.len() { self.block(start)? } else { self.done };
        self.b.ins().jump(first, &[]);
        self.filled = true;
        self.emit_ops(plan, &ops)?;
        if !self.filled {
            self.b.ins().jump(self.done, &[]);
        }
        let reached = self.cta.as_ref().expect("whole-CTA mode").reached;
        self.b.switch_to_block(self.done);
        let exit = self.b.ins().iconst(I32, Cta::EXIT);
        self.b.def_var(reached, exit);
        let after_exit = self.site_next[plan.yields.len()];
        self.b.ins().jump(after_exit, &[]);
        // A group that reached a barrier or the end: the next group, or the pass's end after the last.
        let reads_tid = self.deferred.reads_tid[r];
        let homes = std::mem::take(&mut self.cta.as_mut().expect("whole-CTA mode").homes);
        for (site, exit) in self.site_next.clone().into_iter().zip(self.site_exit.clone()) {
            self.b.switch_to_block(site);
            self.next_group_of_pass(head, exit, reads_tid);
            if exit != end {
                self.b.switch_to_block(exit);
                if !homes.is_empty() {
                    let threads = self.b.ins().load(I64, ro(), self.ctx, cx::THREADS);
                    for &(_, off, var) in &homes {
                        let x = self.b.use_var(var);
                        self.b.ins().store(MemFlagsData::trusted(), x, threads, off);
                    }
                }
                self.b.ins().jump(end, &[]);
            }
        }
        Ok(())
    }

    /// Whole-CTA mode: the uniform registers with a home that region `ops` may store (eagerly after an op,
    /// or at a barrier), with their homes' offsets.
    fn uniform_homes_stored(&self, plan: &Plan, ops: &[bool]) -> Vec<(usize, i32)> {
        let c = self.cta.as_ref().expect("whole-CTA mode");
        let mut vs = Vec::new();
        for i in (0..ops.len()).filter(|&i| ops[i]) {
            match self.yield_at.get(&i) {
                Some(&k) => vs.extend(self.stores_at_yield[k].iter().map(|&(v, _)| v)),
                None if plan.eager[i] => crate::plan::for_each_def(self.prog, &self.prog.ops[i], |v| vs.push(v)),
                None => {}
            }
        }
        vs.sort_unstable();
        vs.dedup();
        vs.into_iter()
            .filter(|&v| c.uniform.var(v) && !c.remat.contains_key(&v))
            .filter_map(|v| Some((v, plan.home_offset(v)?)))
            .collect()
    }

    /// Whole-CTA mode, from the current block: `t` and `tid` moved on to the next group, then on to `head`,
    /// or to `end` after the CTA's last group. Where the region reads `%tid`, the one test is whether `tid.x`
    /// reaches `ntid.x` (in a one-dimensional CTA only after the last group; elsewhere at each row's end,
    /// where the carry into y and z is made and the bound tested); else whether `t` reaches `hi`.
    fn next_group_of_pass(&mut self, head: Block, end: Block, reads_tid: bool) {
        debug_assert!(self.alt.is_empty(), "whole-CTA mode runs no bundles");
        let step = i64::from(self.step());
        if self.gs_used {
            let gs = self.state_after(step / i64::from(WIDTH));
            self.b.def_var(self.gs, gs);
        }
        // Whether the group after the one starting at thread `next` is past the CTA's end.
        let past = |me: &mut Self, next: Value| {
            let following = me.b.ins().iadd_imm_s(next, step);
            me.b.ins().icmp(IntCC::UnsignedGreaterThan, following, me.hi)
        };
        if !reads_tid {
            let t = self.b.use_var(self.t);
            let next = self.b.ins().iadd_imm_s(t, step);
            self.b.def_var(self.t, next);
            let last = past(self, next);
            self.b.ins().brif(last, end, &[], head, &[]);
            return;
        }
        // `t` is `row + tid.x` (set at the group's head): only `tid.x` moves on within a row.
        let ntx = self.b.ins().load(I32, ro(), self.ctx, cx::NTID);
        let x = self.b.use_var(self.tid[0]);
        let x4 = self.b.ins().iadd_imm_s(x, step);
        let row_end = self.b.ins().icmp(IntCC::Equal, x4, ntx);
        let (wrap, same_row) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(row_end, wrap, &[], same_row, &[]);
        self.b.switch_to_block(same_row);
        self.b.def_var(self.tid[0], x4);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(wrap);
        let carried = crate::translate::tid_carried(&mut self.b, self.ctx, self.tid, step);
        for (v, x) in self.tid.into_iter().zip(carried) {
            self.b.def_var(v, x);
        }
        let row = self.cta.as_ref().expect("whole-CTA mode").row;
        let r = self.b.use_var(row);
        let next = self.b.ins().iadd(r, ntx);
        self.b.def_var(row, next);
        self.b.def_var(self.t, next);
        let last = past(self, next);
        self.b.ins().brif(last, end, &[], head, &[]);
    }

    /// The ops among `ops` (a region's, or all) in order, from the current block.
    fn emit_ops(&mut self, plan: &Plan, ops: &[bool]) -> R {
        for i in (0..self.prog.ops.len()).filter(|&i| ops[i]) {
            let leader = plan.leader[i].then(|| self.blocks[&i]);
            crate::translate::start_op(&mut self.b, leader, &mut self.filled);
            if let Some(&(latch, body)) = self.loop_bodies.get(&i) {
                // Entering the loop: every lane of the ranges around it loops.
                let _ = self.each_copy(|me| {
                    let m = match me.ifs.inside[latch] {
                        Some(r) => me.b.use_var(me.if_masks[&r]),
                        None => me.b.ins().iconst(I32, -1),
                    };
                    let m = if me.ifs.inside[latch].is_some() { m } else { me.b.ins().splat(I32X4, m) };
                    me.b.def_var(me.if_masks[&latch], m);
                    Ok(())
                });
                self.b.ins().jump(body, &[]);
                self.b.switch_to_block(body);
                if self.all_lanes_ops(latch).is_some() {
                    // Each round: the body without masks while every lane loops, else the masked body.
                    let masked = self.b.create_block();
                    self.emit_all_lanes(latch, masked, plan, None)?;
                    self.b.switch_to_block(masked);
                    self.filled = false;
                }
            }
            self.cur = i;
            if let Some(&k) = self.yield_at.get(&i) {
                self.lower_yield(k);
                continue;
            }
            self.lower(i).map_err(|e| format!("op {i} ({:?}): {e}", self.prog.ops[i].kind))?;
            if plan.eager[i] && !self.filled {
                self.store_eagerly(i, plan);
            }
            if let Some((branch, decide, runs)) = self.pending_all.take() {
                self.b.switch_to_block(decide);
                let masked = self.block(branch + 1)?;
                self.emit_all_lanes(branch, masked, plan, Some(runs))?;
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- yield points (counted barriers)

    /// The group's state words (`abi::thread`): word `k` of lane `l` at `group + k * WORD + l * 8`, so one
    /// word of the four lanes is one 32-byte vector.
    fn group_state(&mut self) -> Value {
        self.gs_used = true;
        self.b.use_var(self.gs)
    }

    /// Sets the group's first thread, and its state words' address: kept from group to group (one add)
    /// rather than computed at each access from `t`.
    fn set_t(&mut self, t: Value) {
        self.b.def_var(self.t, t);
        let threads = self.b.ins().load(I64, ro(), self.ctx, cx::THREADS);
        let t = self.b.ins().uextend(I64, t);
        let g = self.b.ins().ushr_imm_s(t, i64::from(thread::LANES.trailing_zeros()));
        let off = self.b.ins().imul_imm_s(g, self.group_bytes);
        let gs = self.b.ins().iadd(threads, off);
        self.b.def_var(self.gs, gs);
    }

    /// The state words `groups` groups after the current group's.
    fn state_after(&mut self, groups: i64) -> Value {
        let gs = self.group_state();
        self.b.ins().iadd_imm_s(gs, self.group_bytes * groups)
    }

    /// Loads word `off` of the four lanes: lanes 0-1 and 2-3.
    fn load_word(&mut self, off: i32) -> (Value, Value) {
        let gs = self.group_state();
        let fl = MemFlagsData::trusted();
        (self.b.ins().load(I64X2, fl, gs, off), self.b.ins().load(I64X2, fl, gs, off + 16))
    }

    fn store_word(&mut self, off: i32, lo: Value, hi: Value) {
        let gs = self.group_state();
        let fl = MemFlagsData::trusted();
        self.b.ins().store(fl, lo, gs, off);
        self.b.ins().store(fl, hi, gs, off + 16);
    }

    /// The group's start: it runs here when its four threads are ready (the scalar loop's status test) at
    /// the same resume point, which it dispatches on; otherwise it is left to the scalar loop. Then the
    /// resume blocks (reload, continue after the yield point) and the finish (status done).
    fn dispatch(&mut self, plan: &Plan, first: Block) {
        const _: () = assert!(WIDTH as i32 == thread::LANES);
        let gs = self.group_state();
        let words: Vec<Value> = (0..WIDTH as i32)
            .map(|l| self.b.ins().load(I64, MemFlagsData::trusted(), gs, thread::STATUS + 8 * l))
            .collect();
        let mut same = self.b.ins().icmp(IntCC::Equal, words[0], words[1]);
        for w in &words[2..] {
            let e = self.b.ins().icmp(IntCC::Equal, words[0], *w);
            same = self.b.ins().band(same, e);
        }
        const _: () = assert!(thread::RESUME == thread::STATUS + 4);
        let status = self.b.ins().ireduce(I32, words[0]);
        let mask = self.b.ins().load(I32, MemFlagsData::trusted(), self.ctx, cx::STATUS_MASK);
        let busy = self.b.ins().band(status, mask);
        let ready = self.b.ins().icmp_imm_s(IntCC::Equal, busy, 0);
        let go = self.b.ins().band(same, ready);
        let run = self.b.create_block();
        self.b.ins().brif(go, run, &[], self.stop, &[]);
        self.b.switch_to_block(run);
        let resume = self.b.ins().ushr_imm_s(words[0], 32);
        let resume = self.b.ins().ireduce(I32, resume);
        self.resume_blocks(plan, first, resume);

        self.b.switch_to_block(self.done);
        let d = self.splat64(u64::from(status::DONE));
        self.store_word(thread::STATUS, d, d);
        let fl = MemFlagsData::trusted();
        let f = self.b.ins().load(I32, fl, self.ctx, cx::FINISHED);
        let f = self.b.ins().iadd_imm_s(f, i64::from(WIDTH));
        self.b.ins().store(fl, f, self.ctx, cx::FINISHED);
        self.b.ins().jump(self.next, &[]);
    }

    /// At a group's head: every register starts at zero (their values are only read after being written,
    /// or reloaded, in correct kernels), so nothing is carried from one group to the next, which would keep
    /// every register live around the group loop (and spilled). Returns whether no whole group fits below
    /// `hi`.
    fn group_head(&mut self) -> Value {
        self.clear_registers();
        let t = self.b.use_var(self.t);
        let mut prev = self.tid;
        for (k, (t2, tid2, gs2)) in
            self.alt.iter().map(|a| (a.t, a.tid, a.gs)).collect::<Vec<_>>().into_iter().enumerate()
        {
            // The next group of the bundle: four threads on.
            let t4 = self.b.ins().iadd_imm_s(t, i64::from(WIDTH) * (k as i64 + 1));
            self.b.def_var(t2, t4);
            let gs = self.state_after(k as i64 + 1);
            self.b.def_var(gs2, gs);
            let next = self.tid_after(prev);
            for (v, x) in tid2.into_iter().zip(next) {
                self.b.def_var(v, x);
            }
            prev = tid2;
        }
        let t64 = self.b.ins().uextend(I64, t);
        let step = i64::from(self.step());
        let end = self.b.ins().iadd_imm_s(t64, step);
        let hi64 = self.b.ins().uextend(I64, self.hi);
        self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, hi64)
    }

    /// The registers of every group of a bundle at zero ([`Vector::group_head`]).
    fn clear_registers(&mut self) {
        let z32 = self.zero(Dom::W);
        let z64 = self.zero(Dom::D);
        let _ = self.each_copy(|me| {
            for r in me.regs.clone() {
                match r {
                    Reg::W(v) => me.b.def_var(v, z32),
                    Reg::D(l, h) => {
                        me.b.def_var(l, z64);
                        me.b.def_var(h, z64);
                    }
                }
            }
            for p in me.preds.clone().into_iter().chain(me.if_masks.values().copied()) {
                me.b.def_var(p, z32);
            }
            Ok(())
        });
    }

    /// From the current block: `t` and `tid` moved on to the next group (or bundle), then on to `head`. In
    /// whole-CTA mode, passes whose region reads no `%tid` leave it (`reads_tid`; the next pass starts it
    /// again from the CTA's first thread).
    fn move_to_next_group(&mut self, head: Block, reads_tid: bool) {
        let t = self.b.use_var(self.t);
        let step = i64::from(self.step());
        let next = self.b.ins().iadd_imm_s(t, step);
        self.b.def_var(self.t, next);
        let gs = self.state_after(step / i64::from(WIDTH));
        self.b.def_var(self.gs, gs);
        if !reads_tid {
            self.b.ins().jump(head, &[]);
            return;
        }
        // Four threads after the group's (or the bundle's last group's).
        let from = self.alt.last().map_or(self.tid, |a| a.tid);
        crate::translate::advance_tid(&mut self.b, self.ctx, (from, self.tid), next, i64::from(WIDTH), head);
    }

    /// The thread index four threads after `tid`'s: tid.x grows by 4 (ntid.x is a multiple of 4), carrying
    /// into y and z in a CTA of more than one dimension.
    fn tid_after(&mut self, tid: [Variable; 3]) -> [Value; 3] {
        let one_d = crate::translate::one_dimensional(&mut self.b, self.ctx);
        let (general, join) = (self.b.create_block(), self.b.create_block());
        for _ in 0..3 {
            self.b.append_block_param(join, I32);
        }
        let (x, y, z) = (self.b.use_var(tid[0]), self.b.use_var(tid[1]), self.b.use_var(tid[2]));
        let x4 = self.b.ins().iadd_imm_s(x, i64::from(WIDTH));
        self.b.ins().brif(one_d, join, &[x4.into(), y.into(), z.into()], general, &[]);
        self.b.switch_to_block(general);
        let [nx, ny, nz] = crate::translate::tid_carried(&mut self.b, self.ctx, tid, i64::from(WIDTH));
        self.b.ins().jump(join, &[nx.into(), ny.into(), nz.into()]);
        self.b.switch_to_block(join);
        let p = self.b.block_params(join);
        [p[0], p[1], p[2]]
    }

    /// Branches on `resume` (0: the kernel's start, `k + 1`: after yield point `k`) to `first` or to a block
    /// that reloads what the region after yield point `k` reads, then goes on there.
    fn resume_blocks(&mut self, plan: &Plan, first: Block, resume: Value) {
        let mut targets = vec![self.b.func.dfg.block_call(first, &[])];
        let resume_blocks: Vec<Block> = plan.yields.iter().map(|_| self.b.create_block()).collect();
        for &rb in &resume_blocks {
            targets.push(self.b.func.dfg.block_call(rb, &[]));
        }
        let default = self.b.func.dfg.block_call(self.stop, &[]);
        let jt = self.b.create_jump_table(JumpTableData::new(default, &targets));
        self.b.ins().br_table(resume, jt);

        for (k, &rb) in resume_blocks.iter().enumerate() {
            self.b.switch_to_block(rb);
            self.reload_after(plan, k);
            let cont = self.blocks[&(plan.yields[k].op as usize + 1)];
            self.b.ins().jump(cont, &[]);
        }
    }

    /// The registers the region after yield point `k` reads before writing them, from their homes (in
    /// whole-CTA mode, those that depend on `%tid` and have none computed again).
    fn reload_after(&mut self, plan: &Plan, k: usize) {
        let reloads = self.deferred.reload[k].clone();
        let per_group =
            |me: &Self, v: &usize| me.cta.as_ref().is_some_and(|c| c.remat.get(v).is_some_and(|m| m.per_group));
        let homed: Vec<usize> = reloads.iter().copied().filter(|v| !per_group(self, v)).collect();
        for v in homed {
            let off = plan.home_offset(v).expect("live registers have homes");
            self.reload(v, off);
        }
        if self.cta.is_some() {
            self.rematerialize(&reloads, true).expect("a rematerialized op lowered once lowers again");
            // A predicate computed again here (written nowhere else) holds this value in the whole region, which
            // this block dominates: its reads there keep what decides it from scalars ([`LanePred`]).
            let ns = self.prog.slots as usize;
            self.region_pred_leaves.clear();
            let preds: Vec<usize> =
                reloads.iter().filter(|&&v| v >= ns && per_group(self, &v)).map(|&v| v - ns).collect();
            for p in preds {
                let m = self.b.use_var(self.preds[p]);
                if let Some(&leaf) = self.lane_leaves.get(&m) {
                    self.region_pred_leaves.insert(p, leaf);
                }
            }
        }
    }

    /// Whole-CTA mode: lowers again the ops of the rematerialized values among `vars` and of those they
    /// read, in the kernel's order: the uniform ones before a pass (`per_group` false), the others at a
    /// group's entry (the uniform values they read set again from the pass's, `Cta::at_pass`). Returns the
    /// uniform values among them.
    fn rematerialize(&mut self, vars: &[usize], per_group: bool) -> R<Vec<usize>> {
        let remat = &self.cta.as_ref().expect("whole-CTA mode").remat;
        let (mut seen, mut ops, mut uniform) = (Vec::new(), Vec::new(), Vec::new());
        let mut work: Vec<usize> = vars.iter().copied().filter(|v| remat.contains_key(v)).collect();
        while let Some(v) = work.pop() {
            let m = remat[&v];
            if !seen.contains(&m.op) {
                seen.push(m.op);
                if m.per_group == per_group {
                    ops.push(m.op);
                }
                if !m.per_group {
                    uniform.push(v);
                }
                crate::plan::for_each_use(self.prog, &self.prog.ops[m.op], |u| {
                    if remat.contains_key(&u) {
                        work.push(u);
                    }
                });
            }
        }
        ops.sort_unstable();
        if per_group {
            for &v in &uniform {
                self.set_from_pass(v);
            }
        }
        let cur = self.cur;
        for i in ops {
            self.cur = i;
            self.lower(i)?;
        }
        self.cur = cur;
        self.quads.clear();
        Ok(uniform)
    }

    /// The scalar code's eager stores (`Plan::eager`): the registers op `i` wrote that have homes, right after
    /// it, for the lanes that ran it (a converted branch's range: not for the others, whose homes may hold
    /// what their registers no longer do). With them and the scalar code's spill and reload sets, each lane's
    /// homes hold what the scalar code's would: the clean-register analysis holds whichever path runs a
    /// thread's regions.
    fn store_eagerly(&mut self, i: usize, plan: &Plan) {
        let mut defs = Vec::new();
        crate::plan::for_each_def(self.prog, &self.prog.ops[i], |v| defs.push(v));
        defs.retain(|v| !self.deferred.at[i].contains(v));
        let _ = self.each_copy(|me| {
            for &v in &defs {
                if let Some(off) = plan.home_offset(v) {
                    let within = me.within(i);
                    me.store_home(v, off, within);
                }
            }
            Ok(())
        });
    }

    /// Stores a liveness variable (register slots, then predicates) into each lane's home (or each lane of
    /// `mask`), in the scalar code's form: 64-bit words, a 32-bit register zero-extended, a predicate 0/1.
    fn store_home(&mut self, v: usize, off: i32, mask: Option<Value>) {
        let ns = self.prog.slots as usize;
        if self.cta.is_some() {
            let fl = MemFlagsData::trusted();
            let w = if v >= ns {
                Some(self.b.use_var(self.preds[v - ns]))
            } else if let Reg::W(var) = self.regs[v] {
                Some(self.b.use_var(var))
            } else {
                None
            };
            if self.cta.as_ref().is_some_and(|c| c.remat.contains_key(&v)) {
                // Computed again where it is reloaded (`rematerialized`).
                return;
            }
            if self.cta_uniform(v) {
                // Never written under a mask: such writes make a register vary (`uniform.rs`).
                debug_assert!(mask.is_none(), "a uniform register written in a masked range");
                // Lane 0 into the CTA's one home (a predicate as 0 / all ones; a 32-bit value as its low 32 bits,
                // all that `load_uniform_homes` reads back).
                let x = match (w, self.regs.get(v)) {
                    (Some(w), _) => self.b.ins().extractlane(w, 0),
                    (None, Some(&Reg::D(lv, _))) => {
                        let l = self.b.use_var(lv);
                        self.b.ins().extractlane(l, 0)
                    }
                    _ => unreachable!("a register or a predicate"),
                };
                // What the home is to hold after the pass, stored there once (`Cta::homes`).
                let var = self.cta.as_ref().and_then(|c| c.homes.iter().find(|h| h.0 == v)).map(|h| h.2);
                let var = var.expect("a uniform home the region stores is among the region's");
                self.b.def_var(var, x);
                return;
            }
            if let Some(mut w) = w {
                let gs = self.group_state();
                if let Some(m) = mask {
                    let old = self.b.ins().load(I32X4, fl, gs, off);
                    w = self.b.ins().bitselect(m, w, old);
                }
                self.b.ins().store(fl, w, gs, off);
                return;
            }
        }
        let (lo, hi) = if v >= ns {
            let m = self.b.use_var(self.preds[v - ns]);
            let one = self.splat32(1);
            let b = self.b.ins().band(m, one);
            self.widen(b, false)
        } else {
            match self.regs[v] {
                Reg::W(var) => {
                    let w = self.b.use_var(var);
                    self.widen(w, false)
                }
                Reg::D(lv, hv) => (self.b.use_var(lv), self.b.use_var(hv)),
            }
        };
        let (lo, hi) = match mask {
            // Lanes off the mask keep their homes.
            Some(m) => {
                let (ml, mh) = self.widen(m, true);
                let (ol, oh) = self.load_word(off);
                (self.b.ins().bitselect(ml, lo, ol), self.b.ins().bitselect(mh, hi, oh))
            }
            None => (lo, hi),
        };
        self.store_word(off, lo, hi);
    }

    /// Whether liveness variable `v` is uniform across the CTA in whole-CTA mode (one home for the CTA).
    fn cta_uniform(&self, v: usize) -> bool {
        self.cta.as_ref().is_some_and(|c| c.uniform.var(v))
    }

    /// Whole-CTA mode: a register or predicate that keeps its four lanes as they are (one 16-byte half word).
    fn cta_w(&self, v: usize) -> bool {
        self.cta.is_some() && (v >= self.prog.slots as usize || matches!(self.regs[v], Reg::W(_)))
    }

    /// Whole-CTA mode, before a region's group loop (once per pass of the region): the uniform registers
    /// among `reloads` (what the region reloads), from their one home each (in the CTA's first group), or
    /// computed again (with the uniform values the per-group ones read).
    fn load_uniform_homes(&mut self, plan: &Plan, reloads: &[usize]) -> R {
        self.cta.as_mut().expect("whole-CTA mode").at_pass.clear();
        let remat = self.cta.as_ref().map(|c| c.remat.clone()).unwrap_or_default();
        let vars: Vec<usize> =
            reloads.iter().copied().filter(|&v| self.cta_uniform(v) && !remat.contains_key(&v)).collect();
        // Every group's head clears the registers: the uniform values the per-group ones read are kept too.
        for v in self.rematerialize(reloads, false)? {
            let val = match self.regs.get(v) {
                Some(&Reg::W(var)) => V::W(self.b.use_var(var)),
                Some(&Reg::D(l, h)) => V::D(self.b.use_var(l), self.b.use_var(h)),
                None => V::W(self.b.use_var(self.preds[v - self.prog.slots as usize])),
            };
            self.cta.as_mut().expect("whole-CTA mode").at_pass.insert(v, val);
        }
        let threads = self.b.ins().load(I64, ro(), self.ctx, cx::THREADS);
        for v in vars {
            let off = plan.home_offset(v).expect("live registers have homes");
            let fl = MemFlagsData::trusted();
            let val = if self.cta_w(v) {
                // Its low 32 bits: all that `store_home` writes of a 32-bit register or a predicate.
                let w = self.b.ins().load(I32, fl, threads, off);
                V::W(self.b.ins().splat(I32X4, w))
            } else {
                let x = self.b.ins().load(I64, fl, threads, off);
                let d = self.b.ins().splat(I64X2, x);
                V::D(d, d)
            };
            self.cta.as_mut().expect("whole-CTA mode").at_pass.insert(v, val);
        }
        Ok(())
    }

    /// Whole-CTA mode: sets a uniform liveness variable to its value for the pass (`Cta::at_pass`).
    fn set_from_pass(&mut self, v: usize) {
        let ns = self.prog.slots as usize;
        let val = self.cta.as_ref().expect("whole-CTA mode").at_pass[&v];
        match (val, v >= ns, self.regs.get(v)) {
            (V::W(m), true, _) => self.b.def_var(self.preds[v - ns], m),
            (V::W(w), false, Some(Reg::W(var))) => self.b.def_var(*var, w),
            (V::D(l, h), false, Some(Reg::D(lv, hv))) => {
                self.b.def_var(*lv, l);
                self.b.def_var(*hv, h);
            }
            _ => unreachable!("the pass value has the register's form"),
        }
    }

    /// Loads a liveness variable (register slots, then predicates) from each lane's home.
    fn reload(&mut self, v: usize, off: i32) {
        let ns = self.prog.slots as usize;
        if self.cta.as_ref().is_some_and(|c| c.at_pass.contains_key(&v)) {
            self.set_from_pass(v);
            return;
        }
        if self.cta_w(v) {
            let gs = self.group_state();
            let w = self.b.ins().load(I32X4, MemFlagsData::trusted(), gs, off);
            match self.regs.get(v) {
                Some(Reg::W(var)) if v < ns => self.b.def_var(*var, w),
                _ => self.b.def_var(self.preds[v - ns], w),
            }
            return;
        }
        let (lo, hi) = self.load_word(off);
        if v >= ns {
            // The scalar code stores a predicate as its low byte: non-zero is true.
            let w = self.narrow(lo, hi);
            let byte = self.splat32(0xFF);
            let b = self.b.ins().band(w, byte);
            let z = self.zero(Dom::W);
            let f = self.b.ins().icmp(IntCC::Equal, b, z);
            let m = self.b.ins().bnot(f);
            self.b.def_var(self.preds[v - ns], m);
            return;
        }
        match self.regs[v] {
            Reg::W(var) => {
                let w = self.narrow(lo, hi);
                self.b.def_var(var, w);
            }
            Reg::D(lv, hv) => {
                self.b.def_var(lv, lo);
                self.b.def_var(hv, hi);
            }
        }
    }

    /// A barrier: the registers whose homes may be stale (`YieldPoint::spill`), status and resume point, as
    /// the scalar code stores them for each lane, and four arrivals.
    fn lower_yield(&mut self, k: usize) {
        let fl = MemFlagsData::trusted();
        self.yield_stores(k);
        if let Some(reached) = self.cta.as_ref().map(|c| c.reached) {
            let r = self.b.ins().iconst(I32, k as i64 + 1);
            self.b.def_var(reached, r);
            let next = self.site_next[k];
            self.b.ins().jump(next, &[]);
            self.filled = true;
            return;
        }
        let word = self.splat64(u64::from(status::BARRIER) | (k as u64 + 1) << 32);
        self.store_word(thread::STATUS, word, word);
        let a = self.b.ins().load(I32, fl, self.ctx, cx::ARRIVED);
        let a = self.b.ins().iadd_imm_s(a, i64::from(WIDTH));
        self.b.ins().store(fl, a, self.ctx, cx::ARRIVED);
        self.b.ins().jump(self.next, &[]);
        self.filled = true;
    }

    /// The stores at yield point `k`: the registers whose homes may be stale, and the eager stores deferred
    /// to it.
    fn yield_stores(&mut self, k: usize) {
        for (v, off) in self.stores_at_yield[k].clone() {
            self.store_home(v, off, None);
        }
    }

    // ---------------------------------------------------------------- constants and lane moves

    fn zero(&mut self, d: Dom) -> Value {
        match d {
            Dom::W => self.vconst(I32X4, &[0; 16]),
            Dom::D => self.vconst(I64X2, &[0; 16]),
        }
    }

    fn vconst(&mut self, ty: Type, bytes: &[u8]) -> Value {
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(ty, c)
    }

    fn lanes32(&mut self, l: [u32; 4]) -> Value {
        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.vconst(I32X4, &bytes)
    }

    fn lanes64(&mut self, l: [u64; 2]) -> Value {
        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.vconst(I64X2, &bytes)
    }

    fn splat32(&mut self, c: u32) -> Value {
        self.lanes32([c; 4])
    }

    fn splat64(&mut self, c: u64) -> Value {
        self.lanes64([c; 2])
    }

    /// A scalar `i64` in every lane of the domain.
    fn splat_scalar(&mut self, v: Value, d: Dom) -> V {
        match d {
            Dom::W => {
                let n = self.b.ins().ireduce(I32, v);
                V::W(self.b.ins().splat(I32X4, n))
            }
            Dom::D => {
                let s = self.b.ins().splat(I64X2, v);
                V::D(s, s)
            }
        }
    }

    /// The lanes of an `i32x4` mask as the low four bits of an `i32` (lane `l`: bit `l`; a lane counts as set
    /// when its sign bit is, as in a mask of 0 / all ones). Bitwise combinations of masks are followed
    /// through, so a test of `not p and w` needs no vector operation besides the sign-bit moves of `p` and `w`.
    fn lane_bits(&mut self, m: Value) -> Value {
        self.lane_bits_within(m, 4)
    }

    /// [`Vector::lane_bits`], following at most `depth` bitwise ops (a mask shared by both operands of a long
    /// chain would otherwise be visited once per path).
    fn lane_bits_within(&mut self, m: Value, depth: u32) -> Value {
        if let (Some(inst), true) = (self.b.func.dfg.value_def(m).inst(), depth > 0) {
            match self.b.func.dfg.insts[inst] {
                InstructionData::Unary { opcode: Opcode::Bnot, arg } => {
                    let b = self.lane_bits_within(arg, depth - 1);
                    return self.b.ins().bxor_imm_s(b, 0xF);
                }
                InstructionData::Binary { opcode: op @ (Opcode::Band | Opcode::Bor | Opcode::Bxor), args } => {
                    let x = self.lane_bits_within(args[0], depth - 1);
                    let y = self.lane_bits_within(args[1], depth - 1);
                    return match op {
                        Opcode::Band => self.b.ins().band(x, y),
                        Opcode::Bor => self.b.ins().bor(x, y),
                        _ => self.b.ins().bxor(x, y),
                    };
                }
                _ => {}
            }
        }
        self.b.ins().vhigh_bits(I32, m)
    }

    fn cast(&mut self, ty: Type, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == ty {
            return v;
        }
        // A cast back: the value cast (so that an `f32x4` load stays the float op's memory operand).
        if let Some(inst) = self.b.func.dfg.value_def(v).inst() {
            if let InstructionData::LoadNoOffset { opcode: Opcode::Bitcast, arg, .. } = self.b.func.dfg.insts[inst] {
                if self.b.func.dfg.value_type(arg) == ty {
                    return arg;
                }
            }
        }
        self.b.ins().bitcast(ty, le(), v)
    }

    /// 32-bit lanes extended to 64 bits.
    fn widen(&mut self, w: Value, signed: bool) -> (Value, Value) {
        if signed {
            (self.b.ins().swiden_low(w), self.b.ins().swiden_high(w))
        } else {
            (self.b.ins().uwiden_low(w), self.b.ins().uwiden_high(w))
        }
    }

    /// The low 32 bits of 64-bit lanes.
    fn narrow(&mut self, lo: Value, hi: Value) -> Value {
        let a = self.cast(I8X16, lo);
        let b = self.cast(I8X16, hi);
        let mask: [u8; 16] = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
        let s = self.b.ins().shuffle(a, b, imm);
        self.cast(I32X4, s)
    }

    fn as_w(&mut self, v: V) -> Value {
        match v {
            V::W(x) => x,
            V::D(l, h) => self.narrow(l, h),
        }
    }

    fn as_d(&mut self, v: V, signed: bool) -> (Value, Value) {
        match v {
            V::D(l, h) => (l, h),
            V::W(x) => self.widen(x, signed),
        }
    }

    fn in_dom(&mut self, v: V, d: Dom) -> V {
        match d {
            Dom::W => V::W(self.as_w(v)),
            Dom::D => {
                let (l, h) = self.as_d(v, false);
                V::D(l, h)
            }
        }
    }

    /// Applies `f` to each vector of the value (one for 32-bit lanes, two for 64-bit lanes).
    fn map(&mut self, v: V, mut f: impl FnMut(&mut Self, Value) -> Value) -> V {
        match v {
            V::W(x) => V::W(f(self, x)),
            V::D(l, h) => {
                let l = f(self, l);
                V::D(l, f(self, h))
            }
        }
    }

    fn map2(&mut self, a: V, b: V, mut f: impl FnMut(&mut Self, Value, Value) -> Value) -> V {
        match (a, b) {
            (V::W(x), V::W(y)) => V::W(f(self, x, y)),
            _ => {
                let (al, ah) = self.as_d(a, false);
                let (bl, bh) = self.as_d(b, false);
                let l = f(self, al, bl);
                V::D(l, f(self, ah, bh))
            }
        }
    }

    /// A 32-bit lane mask in the value's domain (64-bit lanes: sign-extended).
    fn mask_for(&mut self, m: Value, like: V) -> V {
        match like {
            V::W(_) => V::W(m),
            V::D(..) => {
                let (l, h) = self.widen(m, true);
                V::D(l, h)
            }
        }
    }

    /// Lanes of `x` where `m` is set, else of `y`.
    fn select(&mut self, m: Value, x: V, y: V) -> V {
        let mm = self.mask_for(m, x);
        match (mm, x, y) {
            (V::W(m), V::W(x), V::W(y)) => {
                let m = self.cast(self.b.func.dfg.value_type(x), m);
                V::W(self.b.ins().bitselect(m, x, y))
            }
            (V::D(ml, mh), _, _) => {
                let (xl, xh) = self.as_d(x, false);
                let (yl, yh) = self.as_d(y, false);
                let l = self.b.ins().bitselect(ml, xl, yl);
                V::D(l, self.b.ins().bitselect(mh, xh, yh))
            }
            _ => x,
        }
    }

    /// A value of `ty` masked to its width (the emulator's `mask`).
    fn mask_ty(&mut self, v: V, ty: Ty) -> V {
        self.mask_bits(v, ty.bits())
    }

    /// The low `bits` bits of every lane.
    fn mask_bits(&mut self, v: V, bits: u32) -> V {
        match v {
            V::W(x) if bits < 32 => {
                let m = self.splat32(program::mask_bits(bits) as u32);
                V::W(self.b.ins().band(x, m))
            }
            V::D(..) if bits < 64 => {
                let m = self.splat64(program::mask_bits(bits));
                self.map(v, |me, x| me.b.ins().band(x, m))
            }
            _ => v,
        }
    }

    /// Lanes extended by `ty`'s signedness within their domain (the emulator's `Ty::extend`).
    fn extend(&mut self, v: V, ty: Ty) -> V {
        let bits = ty.bits();
        match v {
            V::W(x) if bits < 32 && ty.is_signed() => {
                let s = i64::from(32 - bits);
                let y = self.b.ins().ishl_imm_s(x, s);
                V::W(self.b.ins().sshr_imm_s(y, s))
            }
            V::D(l, h) if bits <= 32 => {
                let w = self.narrow(l, h);
                let w = self.extend(V::W(w), ty);
                let w = self.as_w(w);
                let (l, h) = self.widen(w, ty.is_signed());
                V::D(l, h)
            }
            _ => self.mask_ty(v, ty),
        }
    }

    /// A source extended by `ty` into 64-bit lanes.
    fn read_ext64(&mut self, s: &Src, ty: Ty) -> R<(Value, Value)> {
        let v = self.read(s, dom(ty))?;
        let v = self.extend(v, ty);
        Ok(self.as_d(v, ty.is_signed()))
    }

    // ---------------------------------------------------------------- operands

    fn ctx_u32(&mut self, off: i32) -> Value {
        let v = self.b.ins().load(I32, ro(), self.ctx, off);
        self.b.ins().uextend(I64, v)
    }

    fn iota(&mut self) -> Value {
        self.lanes32([0, 1, 2, 3])
    }

    /// A special register as 32-bit lanes.
    fn special(&mut self, s: SpecialReg, comp: u8) -> R<Value> {
        let c = i32::from(comp.min(2)) * 4;
        let comp_ok = comp < 3;
        let scalar = match s {
            SpecialReg::Tid if comp_ok => {
                let v = self.b.use_var(self.tid[comp as usize]);
                let v = self.b.ins().splat(I32X4, v);
                if comp == 0 {
                    let i = self.iota();
                    return Ok(self.b.ins().iadd(v, i));
                }
                return Ok(v);
            }
            SpecialReg::Laneid => {
                let t = self.b.use_var(self.t);
                let l = self.b.ins().band_imm_s(t, 31);
                let v = self.b.ins().splat(I32X4, l);
                let i = self.iota();
                return Ok(self.b.ins().iadd(v, i));
            }
            SpecialReg::Warpid => {
                let t = self.b.use_var(self.t);
                let w = self.b.ins().ushr_imm_s(t, 5);
                return Ok(self.b.ins().splat(I32X4, w));
            }
            SpecialReg::Ntid if comp_ok => self.ctx_u32(cx::NTID + c),
            SpecialReg::Ctaid | SpecialReg::Clusterid if comp_ok => self.ctx_u32(cx::CTAID + c),
            SpecialReg::Nctaid | SpecialReg::Nclusterid if comp_ok => self.ctx_u32(cx::NCTAID + c),
            SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe => {
                // Groups are aligned to 4 in their warp: lane bits 1 << (t & 31) times 1, 2, 4, 8.
                let t = self.b.use_var(self.t);
                let l = self.b.ins().band_imm_s(t, 31);
                let one = self.b.ins().iconst(I32, 1);
                let bit = self.b.ins().ishl(one, l);
                let bit = self.b.ins().splat(I32X4, bit);
                let k = self.lanes32([1, 2, 4, 8]);
                let eq = self.b.ins().imul(bit, k);
                let ones = self.splat32(1);
                let lt = self.b.ins().isub(eq, ones);
                let le = self.b.ins().bor(lt, eq);
                return Ok(match s {
                    SpecialReg::LanemaskEq => eq,
                    SpecialReg::LanemaskLt => lt,
                    SpecialReg::LanemaskLe => le,
                    SpecialReg::LanemaskGt => self.b.ins().bnot(le),
                    _ => self.b.ins().bnot(lt),
                });
            }
            SpecialReg::Nwarpid => return Ok(self.splat32(64)),
            SpecialReg::Nsmid | SpecialReg::ClusterNctarank => return Ok(self.splat32(1)),
            SpecialReg::IsExplicitCluster => return Ok(self.splat32(u32::from(self.env.explicit_cluster))),
            _ => return Err(format!("special register {s:?}")),
        };
        let n = self.b.ins().ireduce(I32, scalar);
        Ok(self.b.ins().splat(I32X4, n))
    }

    /// A symbol's address (module variables and kernel parameters: the same for every lane).
    fn symbol(&mut self, sym: SymAddr, extra: i64) -> R<Value> {
        let v = match sym {
            SymAddr::Global(addr) => {
                let globals = self.env.globals;
                let k = globals
                    .iter()
                    .position(|&(base, size)| addr >= base && addr < base + size.max(1))
                    .or_else(|| globals.iter().position(|&(base, size)| addr == base + size))
                    .ok_or("an address outside the module's variables")?;
                let table = self.b.ins().load(I64, ro(), self.ctx, cx::GLOBALS);
                let v = self.b.ins().load(I64, ro(), table, (k * 8) as i32);
                self.b.ins().iadd_imm_s(v, (addr - globals[k].0) as i64)
            }
            SymAddr::KernelParam(o) => {
                let p = self.b.ins().load(I64, ro(), self.ctx, cx::PARAMS);
                self.b.ins().iadd_imm_s(p, o as i64)
            }
            // A shared variable's address in its own space is its offset.
            SymAddr::Shared(o) => self.b.ins().iconst(I64, o as i64),
            _ => return Err(format!("{sym:?}")),
        };
        Ok(if extra == 0 { v } else { self.b.ins().iadd_imm_s(v, extra) })
    }

    /// The host address of offset `off` in each lane's local memory (its kernel frame: `abi`'s local area,
    /// `local_stride` bytes per thread), as 64-bit lanes 0-1 and 2-3.
    fn frames(&mut self, off: i64) -> (Value, Value) {
        let locals = self.b.ins().load(I64, ro(), self.ctx, cx::LOCALS);
        let stride = self.b.ins().load(I64, ro(), self.ctx, cx::LOCAL_STRIDE);
        let t = self.b.use_var(self.t);
        let t = self.b.ins().uextend(I64, t);
        let first = self.b.ins().imul(t, stride);
        let base = self.b.ins().iadd(locals, first);
        let base = self.b.ins().iadd_imm_s(base, off);
        let base = self.b.ins().splat(I64X2, base);
        let s = self.b.ins().splat(I64X2, stride);
        let (k01, k23) = (self.lanes64([0, 1]), self.lanes64([2, 3]));
        let (d01, d23) = (self.b.ins().imul(s, k01), self.b.ins().imul(s, k23));
        (self.b.ins().iadd(base, d01), self.b.ins().iadd(base, d23))
    }

    /// A source as the emulator reads it (the raw bits) in lanes of the domain: narrower lanes zero-extended,
    /// wider ones truncated.
    fn read(&mut self, s: &Src, d: Dom) -> R<V> {
        let v = match *s {
            Src::Reg(r) => match self.regs[r as usize] {
                Reg::W(x) => V::W(self.b.use_var(x)),
                Reg::D(l, h) => V::D(self.b.use_var(l), self.b.use_var(h)),
            },
            Src::Imm(c) => match d {
                Dom::W => V::W(self.splat32(c as u32)),
                Dom::D => {
                    let s = self.splat64(c);
                    V::D(s, s)
                }
            },
            Src::Special(sr, comp) => V::W(self.special(sr, comp)?),
            Src::Sym(SymAddr::Frame(o), off) => {
                let (l, h) = self.frames(o as i64 + off);
                V::D(l, h)
            }
            Src::Sym(sym, off) => {
                let a = self.symbol(sym, off)?;
                self.splat_scalar(a, d)
            }
            Src::Pred(..) => {
                let m = self.read_pred(s)?;
                let one = self.splat32(1);
                V::W(self.b.ins().band(m, one))
            }
            Src::None => V::W(self.zero(Dom::W)),
        };
        Ok(self.in_dom(v, d))
    }

    /// A predicate source as a lane mask.
    fn read_pred(&mut self, s: &Src) -> R<Value> {
        match *s {
            Src::Pred(p, neg) => {
                let m = self.b.use_var(self.preds[p as usize]);
                if let Some(&leaf) = self.region_pred_leaves.get(&(p as usize)) {
                    self.lane_leaves.entry(m).or_insert(leaf);
                }
                Ok(if neg { self.b.ins().bnot(m) } else { m })
            }
            Src::Imm(c) => Ok(self.splat32(if c & 1 != 0 { u32::MAX } else { 0 })),
            _ => {
                let v = self.read(s, Dom::W)?;
                let w = self.as_w(v);
                let one = self.splat32(1);
                let bit = self.b.ins().band(w, one);
                Ok(self.b.ins().icmp(IntCC::Equal, bit, one))
            }
        }
    }

    /// Writes lanes to a register (masked to its width, as the emulator does; a narrower value zero-extended),
    /// keeping the old value in lanes the op's guard turns off.
    fn write(&mut self, d: Dst, v: V) -> R {
        let Dst::Reg(slot, mask) = d else {
            if let Dst::Pred(_) = d {
                // Non-zero lanes are true.
                let z = self.zero(Dom::D);
                let m = match v {
                    V::W(x) => {
                        let z = self.zero(Dom::W);
                        let eq = self.b.ins().icmp(IntCC::Equal, x, z);
                        self.b.ins().bnot(eq)
                    }
                    V::D(l, h) => {
                        let el = self.b.ins().icmp(IntCC::Equal, l, z);
                        let eh = self.b.ins().icmp(IntCC::Equal, h, z);
                        let eq = self.narrow(el, eh);
                        self.b.ins().bnot(eq)
                    }
                };
                return self.write_mask(d, m);
            }
            return Ok(());
        };
        match self.regs[slot as usize] {
            Reg::W(var) => {
                let mut x = self.as_w(v);
                if mask as u32 != u32::MAX {
                    let m = self.splat32(mask as u32);
                    x = self.b.ins().band(x, m);
                }
                if let Some(g) = self.guard.filter(|_| self.keeps_old(slot as usize)) {
                    let old = self.b.use_var(var);
                    x = self.b.ins().bitselect(g, x, old);
                }
                self.b.def_var(var, x);
            }
            Reg::D(lv, hv) => {
                let (l, h) = self.as_d(v, false);
                let mut x = V::D(l, h);
                if mask != u64::MAX {
                    let m = self.splat64(mask);
                    x = self.map(x, |me, y| me.b.ins().band(y, m));
                }
                if let Some(g) = self.guard.filter(|_| self.keeps_old(slot as usize)) {
                    let old = V::D(self.b.use_var(lv), self.b.use_var(hv));
                    x = self.select(g, x, old);
                }
                let (l, h) = self.as_d(x, false);
                self.b.def_var(lv, l);
                self.b.def_var(hv, h);
            }
        }
        Ok(())
    }

    /// Writes a lane mask: to a predicate, or as 0/1 to a register.
    fn write_mask(&mut self, d: Dst, m: Value) -> R {
        match d {
            Dst::Pred(p) => {
                let var = self.preds[p as usize];
                let keep = self.keeps_old(self.prog.slots as usize + p as usize);
                let m = match self.guard.filter(|_| keep) {
                    Some(g) => {
                        let old = self.b.use_var(var);
                        self.b.ins().bitselect(g, m, old)
                    }
                    None => m,
                };
                self.b.def_var(var, m);
                Ok(())
            }
            _ => {
                let one = self.splat32(1);
                let v = self.b.ins().band(m, one);
                self.write(d, V::W(v))
            }
        }
    }

    /// Whether a masked write of liveness variable `v` must keep the old value in the lanes off the mask: the
    /// op has a guard of its own, or `v` is live where a range around the op ends (its other lanes go on
    /// there, or in the `else` range, with the value they had).
    fn keeps_old(&self, v: usize) -> bool {
        !self.guard_is_range || live_around(&self.ifs, &self.live_at_end, self.cur, v)
    }

    /// The domain of a destination register (32-bit lanes for anything else).
    fn dst_dom(&self, d: Dst) -> Dom {
        match d {
            Dst::Reg(slot, _) => match self.regs[slot as usize] {
                Reg::W(_) => Dom::W,
                Reg::D(..) => Dom::D,
            },
            _ => Dom::W,
        }
    }

    // ---------------------------------------------------------------- ops

    fn lower(&mut self, i: usize) -> R {
        let op = &self.prog.ops[i];
        match op.kind {
            Kind::Bra if self.ifs.is_latch(self.prog, i) => {
                // The lanes still looping that take the branch go round again, while there are any.
                let Some((p, neg)) = op.guard else { return Err("an unguarded latch".into()) };
                let masks = self.each_copy(|me| {
                    let again = me.read_pred(&Src::Pred(p, neg))?;
                    let m = me.b.use_var(me.if_masks[&i]);
                    let m = me.b.ins().band(m, again);
                    me.b.def_var(me.if_masks[&i], m);
                    Ok(m)
                })?;
                let any = self.any_of(&masks);
                let body = self.loop_bodies[&(op.target as usize)].1;
                let after = self.block(i + 1)?;
                self.b.ins().brif(any, body, &[], after, &[]);
                self.filled = true;
                return Ok(());
            }
            Kind::Bra if self.ifs.converted(i) && op.guard.is_none() => {
                // The jump over an `else` range: the lanes of the `if` that took its branch run that range,
                // which the `if`'s branch also enters where no lane ran the first range.
                let cond = self.ifs.else_of[i].ok_or("an unguarded branch")?;
                let entry = self.else_entry(i);
                self.b.ins().jump(entry, &[]);
                self.b.switch_to_block(entry);
                let runs = self.each_copy(|me| {
                    let ran = me.b.use_var(me.if_masks[&cond]);
                    let mut run = me.b.ins().bnot(ran);
                    if let Some(r) = me.ifs.inside[cond] {
                        let w = me.b.use_var(me.if_masks[&r]);
                        run = me.b.ins().band(run, w);
                    }
                    me.b.def_var(me.if_masks[&i], run);
                    Ok(run)
                })?;
                let any = self.any_of(&runs);
                let (range, target) = (self.block(i + 1)?, self.block(op.target as usize)?);
                self.b.ins().brif(any, range, &[], target, &[]);
                self.filled = true;
                return Ok(());
            }
            Kind::Bra if self.ifs.converted(i) => {
                // Where no lane runs it, the range is skipped as the branch would (to the `else` range's
                // entry, where it has one).
                let runs = self.each_copy(|me| {
                    let within = me.within(i);
                    me.range_mask(i, within)
                })?;
                let mut range = self.block(i + 1)?;
                if self.all_lanes_ops(i).is_some() {
                    let decide = self.b.create_block();
                    self.pending_all = Some((i, decide, runs.clone()));
                    range = decide;
                }
                let target = match (op.target as usize).checked_sub(1).filter(|&j| self.ifs.else_of[j] == Some(i)) {
                    Some(j) => self.else_entry(j),
                    None => self.block(op.target as usize)?,
                };
                let idle_end = self.cta.as_ref().filter(|c| c.idle_ends.contains(&i)).map(|c| (c.reached, c.one_d));
                if let Some((reached, Some(one_d))) = idle_end {
                    // No lane runs the range, nor will any in the pass's later groups: in a one-dimensional CTA
                    // (where tid.x grows with the group), the pass ends at the barrier (or the kernel's end)
                    // that the range skips to, with nothing to run before it (`idle_ends`).
                    let (idle, ends) = (self.b.create_block(), self.b.create_block());
                    self.brif_any(&runs, range, idle);
                    self.b.switch_to_block(idle);
                    self.b.ins().brif(one_d, ends, &[], target, &[]);
                    self.b.switch_to_block(ends);
                    let at = op.target as usize;
                    let (site, r) = match self.yield_at.get(&at) {
                        Some(&k) => {
                            self.yield_stores(k);
                            (k, k as i64 + 1)
                        }
                        None => (self.site_exit.len() - 1, Cta::EXIT),
                    };
                    let r = self.b.ins().iconst(I32, r);
                    self.b.def_var(reached, r);
                    let exit = self.site_exit[site];
                    self.b.ins().jump(exit, &[]);
                } else {
                    self.brif_any(&runs, range, target);
                }
                self.filled = true;
                return Ok(());
            }
            Kind::Bra => {
                let target = self.block(op.target as usize)?;
                match op.guard {
                    Some(_) => {
                        let fall = self.block(i + 1)?;
                        self.branch(op, target, fall);
                    }
                    None => {
                        self.b.ins().jump(target, &[]);
                    }
                }
                self.filled = true;
                return Ok(());
            }
            Kind::Ret | Kind::Exit if self.ifs.converted(i) => {
                // Lanes that do not take it run the rest of the kernel, while there are any.
                let runs = self.each_copy(|me| {
                    let within = me.within(i);
                    me.range_mask(i, within)
                })?;
                let any = self.any_of(&runs);
                let rest = self.block(i + 1)?;
                let done = self.done;
                self.b.ins().brif(any, rest, &[], done, &[]);
                self.filled = true;
                return Ok(());
            }
            Kind::Ret | Kind::Exit => {
                match op.guard {
                    Some(_) => {
                        let fall = self.block(i + 1)?;
                        let done = self.done;
                        self.branch(op, done, fall);
                    }
                    None => {
                        self.b.ins().jump(self.done, &[]);
                    }
                }
                self.filled = true;
                return Ok(());
            }
            _ => {}
        }
        self.each_copy(|me| me.lower_data(i)).map(|_| ())
    }

    /// An op other than control, for the group whose variables are in.
    fn lower_data(&mut self, i: usize) -> R {
        let op = &self.prog.ops[i];
        // The lanes that run this op: those of the converted branches around it.
        let within = self.within(i);
        self.guard_is_range = op.guard.is_none();
        self.guard = match (op.guard, within) {
            (Some((p, neg)), w) => {
                let g = self.read_pred(&Src::Pred(p, neg))?;
                Some(match w {
                    Some(w) => self.b.ins().band(g, w),
                    None => g,
                })
            }
            (None, w) => w,
        };
        let r = match self.lower_body(op) {
            Err(e) if lane_helper_covers(op) => self.lane_helper(op).map_err(|h| format!("{e}; {h}")),
            r => r,
        };
        self.guard = None;
        r
    }

    /// The lanes that run op `i`: the mask of the converted branches around it, none where every lane does
    /// (outside them, or in the all-lanes version of its range).
    fn within(&mut self, i: usize) -> Option<Value> {
        let r = self.ifs.inside[i].filter(|&r| self.all_lanes != Some(r))?;
        Some(self.b.use_var(self.if_masks[&r]))
    }

    /// The ops of converted branch `i`'s range (`start..end`) where they get a second version for groups
    /// whose lanes all run them: a plain forward branch's range, or a loop's body (`i` its latch), of
    /// straight-line ops (no branch, exit, call or yield point, no branch target but the first op, no range
    /// nested in it), at most [`ALL_LANES_OPS`] of them. That version runs without masks: no test of the mask
    /// at each access, no blend at each write (`stencil_1d`'s seven shared loads under `if (i < n)`,
    /// `reduce_tree`'s `if (tid < s)` step, `histogram256`'s grid-stride loop but for its last round).
    fn all_lanes_ops(&self, i: usize) -> Option<(usize, usize)> {
        let op = &self.prog.ops[i];
        let target = op.target as usize;
        if op.kind != Kind::Bra || op.guard.is_none() || self.all_lanes.is_some() || target > self.prog.ops.len() {
            return None;
        }
        let (start, end) = if target < i {
            (target, i)
        } else if target > i + 1 && self.ifs.else_of[target - 1] != Some(i) {
            (i + 1, target)
        } else {
            return None;
        };
        let straight = (start..end).all(|j| {
            let o = &self.prog.ops[j];
            self.ifs.inside[j] == Some(i)
                && !matches!(o.kind, Kind::Bra | Kind::Brx | Kind::Ret | Kind::Exit | Kind::Call)
                && !self.yield_at.contains_key(&j)
                && (j == start || !self.blocks.contains_key(&j))
        });
        (straight && end - start <= ALL_LANES_OPS).then_some((start, end))
    }

    /// In the current block, where the lanes of converted branch `branch`'s mask run its range: groups
    /// whose lanes all do take a version of the range without masks (emitted here), the others `masked`.
    /// The unmasked version goes on where the range ends (for a loop's body, at its latch).
    fn emit_all_lanes(&mut self, branch: usize, masked: Block, plan: &Plan, runs: Option<Vec<Value>>) -> R {
        let (start, end) = self.all_lanes_ops(branch).ok_or("not an all-lanes range")?;
        let runs = match runs {
            Some(r) => r,
            None => self.each_copy(|me| Ok(me.b.use_var(me.if_masks[&branch])))?,
        };
        let fast = self.b.create_block();
        self.brif_all(&runs, fast, masked);
        self.b.switch_to_block(fast);
        self.all_lanes = Some(branch);
        self.filled = false;
        // A loop's latch too: it narrows the mask (all lanes, here) to those going round again.
        let last = if start > branch { end } else { end + 1 };
        for j in start..last {
            self.cur = j;
            self.lower(j).map_err(|e| format!("op {j} ({:?}): {e}", self.prog.ops[j].kind))?;
            if plan.eager[j] && !self.filled {
                self.store_eagerly(j, plan);
            }
        }
        self.all_lanes = None;
        if !self.filled {
            let after = self.block(end)?;
            self.b.ins().jump(after, &[]);
        }
        self.filled = true;
        Ok(())
    }

    /// The mask of converted branch or exit `i`'s range: the lanes around it (`within`) that do not take it.
    fn range_mask(&mut self, i: usize, within: Option<Value>) -> R<Value> {
        let Some((p, neg)) = self.prog.ops[i].guard else { return Err("an unguarded branch or exit".into()) };
        let mut run = self.read_pred(&Src::Pred(p, !neg))?;
        if let Some(w) = within {
            run = self.b.ins().band(run, w);
        }
        self.b.def_var(self.if_masks[&i], run);
        Ok(run)
    }

    /// The block computing the mask of the `else` range after jump `j`.
    fn else_entry(&mut self, j: usize) -> Block {
        if let Some(&b) = self.else_entries.get(&j) {
            return b;
        }
        let b = self.b.create_block();
        self.else_entries.insert(j, b);
        b
    }

    fn block(&self, op: usize) -> R<Block> {
        self.blocks.get(&op).copied().ok_or_else(|| "a branch past the end".to_string())
    }

    /// A conditional branch: all lanes taken to `target`, none to `fall`, else the group stops here.
    fn branch(&mut self, op: &Op, target: Block, fall: Block) {
        let Some((p, neg)) = op.guard else { return };
        let m = self.b.use_var(self.preds[p as usize]);
        if self.cta.as_ref().is_some_and(|c| c.uniform.pred(p)) {
            // Every lane holds the same value (whole-CTA mode's uniform control): lane 0's, from the scalars
            // that decide it where it has them.
            let l0 = match self.lane_pred(m, false, 6) {
                Some(LanePred::Uniform(u)) => u,
                _ => self.b.ins().extractlane(m, 0),
            };
            let (t, f) = if neg { (fall, target) } else { (target, fall) };
            self.b.ins().brif(l0, t, &[], f, &[]);
            return;
        }
        // Every group of a bundle.
        let others: Vec<Variable> = self.alt.iter().map(|a| a.preds[p as usize]).collect();
        let ms: Vec<Value> = std::iter::once(m).chain(others.into_iter().map(|v| self.b.use_var(v))).collect();
        let ms: Vec<Value> = ms.into_iter().map(|m| if neg { self.b.ins().bnot(m) } else { m }).collect();
        if self.lane_preds_of(&ms).is_some() {
            // Where every lane agrees, as scalars: first on the likelier way (a loop goes round, a forward
            // branch over a bound test is not taken), then on the other.
            let not_taken: Vec<Value> = ms.iter().map(|&m| self.b.ins().bnot(m)).collect();
            let (mut first, mut second) = ((ms, target), (not_taken, fall));
            if (op.target as usize) > self.cur {
                std::mem::swap(&mut first, &mut second);
            }
            let (other, mixed) = (self.b.create_block(), self.b.create_block());
            self.brif_all(&first.0, first.1, other);
            self.b.switch_to_block(other);
            self.brif_all(&second.0, second.1, mixed);
            self.b.switch_to_block(mixed);
            self.b.ins().jump(self.stop, &[]);
            return;
        }
        let all = self.all_of(&ms);
        let mixed = self.b.create_block();
        self.b.ins().brif(all, target, &[], mixed, &[]);
        self.b.switch_to_block(mixed);
        let any = self.any_of(&ms);
        self.b.ins().brif(any, self.stop, &[], fall, &[]);
    }

    fn lower_body(&mut self, op: &Op) -> R {
        let ty = op.ty;
        let m = &op.m;
        if ty == Ty::Pred && matches!(op.kind, Kind::Mov | Kind::And | Kind::Or | Kind::Xor | Kind::Not) {
            let a = self.read_pred(&op.a)?;
            let r = match op.kind {
                Kind::Mov => a,
                Kind::Not => self.b.ins().bnot(a),
                _ => {
                    let b = self.read_pred(&op.b)?;
                    match op.kind {
                        Kind::And => self.b.ins().band(a, b),
                        Kind::Or => self.b.ins().bor(a, b),
                        _ => self.b.ins().bxor(a, b),
                    }
                }
            };
            return self.write_mask(op.dst, r);
        }
        if ty.is_float() && !matches!(op.kind, Kind::Mov | Kind::Cvt | Kind::Setp | Kind::Selp | Kind::Ld | Kind::St) {
            return self.float(op);
        }
        if !matches!(op.kind, Kind::Ld | Kind::St | Kind::Nop) && (ty.bits() > 64 || ty == Ty::Other || ty == Ty::Pred)
        {
            return Err(format!("type {ty:?}"));
        }
        let d = dom(ty);
        match op.kind {
            Kind::Nop => Ok(()),
            Kind::Ld => self.load(op),
            Kind::St => self.store(op),
            Kind::Atom | Kind::Red => self.atomic(op),
            Kind::Mov => {
                let a = self.read(&op.a, d)?;
                let r = self.mask_ty(a, ty);
                self.write(op.dst, r)
            }
            Kind::Cvta if m.space != Space::Shared => {
                let a = self.read(&op.a, d)?;
                let r = self.mask_ty(a, ty);
                self.write(op.dst, r)
            }
            // Generic shared addresses are host addresses: the offset plus the shared memory's address.
            Kind::Cvta => {
                let a = self.read(&op.a, Dom::D)?;
                let sh = self.b.ins().load(I64, ro(), self.ctx, cx::SHARED);
                let sh = self.b.ins().splat(I64X2, sh);
                let to = matches!(m.sub, program::Sub::Cvta { to: true });
                let r = self.map(a, |me, x| if to { me.b.ins().isub(x, sh) } else { me.b.ins().iadd(x, sh) });
                let r = self.in_dom(r, d);
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Add | Kind::Sub if !m.cc && !m.sat => {
                let a = self.read(&op.a, d)?;
                let b = self.read(&op.b, d)?;
                let add = op.kind == Kind::Add;
                let r = self.map2(a, b, |me, x, y| if add { me.b.ins().iadd(x, y) } else { me.b.ins().isub(x, y) });
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Mul | Kind::Mad if !m.cc && !m.sat => self.mul(op),
            Kind::Abs | Kind::Neg => {
                let sty = if ty.is_signed() { ty } else { signed_of(ty) };
                let a = self.read(&op.a, d)?;
                let x = self.extend(a, sty);
                let r = match (op.kind, x) {
                    (Kind::Abs, V::W(x)) => V::W(self.b.ins().iabs(x)),
                    (Kind::Abs, _) => {
                        let z = self.zero(Dom::D);
                        self.map(x, |me, v| {
                            let n = me.b.ins().isub(z, v);
                            let neg = me.b.ins().icmp(IntCC::SignedLessThan, v, z);
                            me.b.ins().bitselect(neg, n, v)
                        })
                    }
                    _ => {
                        let z = self.zero(d);
                        self.map(x, |me, v| me.b.ins().isub(z, v))
                    }
                };
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Min | Kind::Max if !m.relu => {
                let a = self.read(&op.a, d)?;
                let b = self.read(&op.b, d)?;
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                let cc = match (op.kind, ty.is_signed()) {
                    (Kind::Min, true) => IntCC::SignedLessThan,
                    (Kind::Min, false) => IntCC::UnsignedLessThan,
                    (_, true) => IntCC::SignedGreaterThan,
                    (_, false) => IntCC::UnsignedGreaterThan,
                };
                let r = self.map2(x, y, |me, x, y| {
                    let c = me.b.ins().icmp(cc, x, y);
                    me.b.ins().bitselect(c, x, y)
                });
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::And | Kind::Or | Kind::Xor => {
                let a = self.read(&op.a, d)?;
                let b = self.read(&op.b, d)?;
                let k = op.kind;
                let r = self.map2(a, b, |me, x, y| match k {
                    Kind::And => me.b.ins().band(x, y),
                    Kind::Or => me.b.ins().bor(x, y),
                    _ => me.b.ins().bxor(x, y),
                });
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Not => {
                let a = self.read(&op.a, d)?;
                let r = self.map(a, |me, x| me.b.ins().bnot(x));
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Shl | Kind::Shr => self.shift(op),
            Kind::Setp => {
                let r = self.compare(op)?;
                let nr = self.b.ins().bnot(r);
                let (p, q) = match m.boolop {
                    Some(bo) => {
                        let c = self.read_pred(&op.c)?;
                        (self.bool_op(bo, r, c), self.bool_op(bo, nr, c))
                    }
                    None => (r, nr),
                };
                self.write_mask(op.dst, p)?;
                if op.dst2 != Dst::None {
                    self.write_mask(op.dst2, q)?;
                }
                Ok(())
            }
            Kind::Selp => {
                // Not masked to the type: the raw bits of the chosen operand, in the destination's width.
                let dd = self.dst_dom(op.dst);
                let a = self.read(&op.a, dd)?;
                let b = self.read(&op.b, dd)?;
                let c = self.read_pred(&op.c)?;
                let r = self.select(c, a, b);
                self.write(op.dst, r)
            }
            Kind::Cvt => self.cvt(op),
            Kind::Pack => {
                let Some(program::Extra::Srcs(srcs)) = op.extra.as_deref() else { return Err("no sources".into()) };
                let part = ty.bits() / srcs.len().max(1) as u32;
                let mut acc = V::W(self.zero(Dom::W));
                acc = self.in_dom(acc, d);
                for (k, s) in srcs.iter().enumerate() {
                    let v = self.read(s, d)?;
                    let v = self.mask_bits(v, part);
                    let sh = i64::from(part * k as u32);
                    let v = if sh > 0 && sh < 64 { self.map(v, |me, x| me.b.ins().ishl_imm_s(x, sh)) } else { v };
                    acc = self.map2(acc, v, |me, x, y| me.b.ins().bor(x, y));
                }
                self.write(op.dst, acc)
            }
            Kind::Unpack => {
                let Some(program::Extra::Dsts(dsts)) = op.extra.as_deref() else {
                    return Err("no destinations".into());
                };
                let a = self.read(&op.a, d)?;
                let part = ty.bits() / dsts.len().max(1) as u32;
                for (k, dst) in dsts.iter().enumerate() {
                    let sh = i64::from(part * k as u32);
                    let v = if sh > 0 && sh < 64 { self.map(a, |me, x| me.b.ins().ushr_imm_s(x, sh)) } else { a };
                    self.write(*dst, v)?;
                }
                Ok(())
            }
            k => Err(format!("{k:?} with these modifiers")),
        }
    }

    fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    fn mul(&mut self, op: &Op) -> R {
        let ty = op.ty;
        let bits = ty.bits();
        let d = dom(ty);
        let mad = op.kind == Kind::Mad;
        let r = match op.m.part {
            Part::Lo => {
                let a = self.read(&op.a, d)?;
                let p = match power_of_two(&op.b, ty) {
                    // A shift: vector multiplies are slow (`pmulld`), and index scaling is common.
                    Some(k) => self.map(a, |me, x| me.b.ins().ishl_imm_s(x, k)),
                    None => {
                        let b = self.read(&op.b, d)?;
                        self.map2(a, b, |me, x, y| me.b.ins().imul(x, y))
                    }
                };
                let p = if mad {
                    let c = self.read(&op.c, d)?;
                    self.map2(p, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    p
                };
                self.mask_ty(p, ty)
            }
            // Products of at most 32 bits: in 32-bit lanes.
            Part::Wide if bits <= 16 => {
                let a = self.read(&op.a, Dom::W)?;
                let x = self.extend(a, ty);
                let p = match power_of_two(&op.b, ty) {
                    Some(k) => self.map(x, |me, x| me.b.ins().ishl_imm_s(x, k)),
                    None => {
                        let b = self.read(&op.b, Dom::W)?;
                        let y = self.extend(b, ty);
                        self.map2(x, y, |me, x, y| me.b.ins().imul(x, y))
                    }
                };
                let p = if mad {
                    let c = self.read(&op.c, Dom::W)?;
                    self.map2(p, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    p
                };
                self.mask_ty(p, wide(ty))
            }
            Part::Wide if bits == 32 => {
                let (xl, xh) = self.read_ext64(&op.a, ty)?;
                let p = match power_of_two(&op.b, ty) {
                    // A power of two: a shift (the common index scaling).
                    Some(s) => V::D(self.b.ins().ishl_imm_s(xl, s), self.b.ins().ishl_imm_s(xh, s)),
                    None => {
                        let (yl, yh) = self.read_ext64(&op.b, ty)?;
                        V::D(self.b.ins().imul(xl, yl), self.b.ins().imul(xh, yh))
                    }
                };
                if mad {
                    let c = self.read(&op.c, Dom::D)?;
                    self.map2(p, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    p
                }
            }
            Part::Hi if bits == 32 => {
                let (xl, xh) = self.read_ext64(&op.a, ty)?;
                let (yl, yh) = self.read_ext64(&op.b, ty)?;
                let pl = self.b.ins().imul(xl, yl);
                let ph = self.b.ins().imul(xh, yh);
                let (hl, hh) = if ty.is_signed() {
                    (self.b.ins().sshr_imm_s(pl, 32), self.b.ins().sshr_imm_s(ph, 32))
                } else {
                    (self.b.ins().ushr_imm_s(pl, 32), self.b.ins().ushr_imm_s(ph, 32))
                };
                let h = V::W(self.narrow(hl, hh));
                if mad {
                    let c = self.read(&op.c, Dom::W)?;
                    self.map2(h, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    h
                }
            }
            p => return Err(format!("{p:?} product of {bits} bits")),
        };
        self.write(op.dst, r)
    }

    fn shift(&mut self, op: &Op) -> R {
        let ty = op.ty;
        let bits = ty.bits();
        let d = dom(ty);
        let lane_bits = if d == Dom::W { 32 } else { 64 };
        let Src::Imm(amt) = op.b else { return Err("a shift by a register".into()) };
        let amt = amt & 0xFFFF_FFFF;
        let big = amt >= u64::from(bits);
        let a = self.read(&op.a, d)?;
        let r = match (op.kind, ty.is_signed()) {
            (Kind::Shl, _) | (_, false) if big => V::W(self.zero(Dom::W)),
            (Kind::Shl, _) => self.map(a, |me, x| me.b.ins().ishl_imm_s(x, amt as i64)),
            (_, true) => {
                let x = self.extend(a, ty);
                let s = amt.min(lane_bits - 1) as i64;
                self.map(x, |me, v| me.b.ins().sshr_imm_s(v, s))
            }
            _ => {
                let x = self.mask_ty(a, ty);
                self.map(x, |me, v| me.b.ins().ushr_imm_s(v, amt as i64))
            }
        };
        let r = self.in_dom(r, d);
        let r = self.mask_ty(r, ty);
        self.write(op.dst, r)
    }

    /// `a cmp b` as a lane mask.
    fn compare(&mut self, op: &Op) -> R<Value> {
        let ty = op.ty;
        let cmp = op.m.cmp.unwrap_or(Cmp::Eq);
        if ty == Ty::F32 || ty == Ty::F64 {
            let xs = self.floats(&op.a, ty, op.m.ftz)?;
            let ys = self.floats(&op.b, ty, op.m.ftz)?;
            let mut ms = Vec::new();
            for (x, y) in xs.into_iter().zip(ys) {
                ms.push(self.fcmp(cmp, x, y)?);
            }
            return Ok(match self.float_bits(&ms) {
                V::W(m) => m,
                V::D(l, h) => self.narrow(l, h),
            });
        }
        if ty.is_float() || ty == Ty::Pred || ty.bits() > 64 {
            return Err(format!("comparison of {ty:?}"));
        }
        let cc = crate::translate::int_cc(cmp, ty.is_signed()).ok_or(format!("integer comparison {cmp:?}"))?;
        let d = dom(ty);
        let a = self.read(&op.a, d)?;
        let b = self.read(&op.b, d)?;
        let x = self.extend(a, ty);
        let y = self.extend(b, ty);
        let r = self.map2(x, y, |me, x, y| me.b.ins().icmp(cc, x, y));
        let r = self.as_w(r);
        if let (true, V::W(x), V::W(y)) = (ty.bits() == 32, x, y) {
            let step = match (self.src_stride32(&op.a), self.src_stride32(&op.b)) {
                (Some(1), Some(0)) => Some((cc, x, y)),
                (Some(0), Some(1)) => Some((cc.swap_args(), y, x)),
                _ => None,
            };
            if let Some((cc, x, u)) = step {
                let x0 = self.lane32_of(x, 0, 6);
                let u = self.lane32_of(u, 0, 6);
                self.lane_leaves.insert(r, LaneLeaf::Step(StepCmp { cc, x0, u }));
            }
        }
        if self.src_uniform(&op.a) && self.src_uniform(&op.b) {
            // Alike in every lane: lane 0's comparison.
            let (x, y) = (self.lane(x, 0), self.lane(y, 0));
            let c = self.b.ins().icmp(cc, x, y);
            self.lane_leaves.insert(r, LaneLeaf::Uniform(c));
        }
        Ok(r)
    }

    /// A float comparison from the conditions x86 compares directly (so every one lowers).
    fn fcmp(&mut self, cmp: Cmp, x: Value, y: Value) -> R<Value> {
        let mut f = |cc: FloatCC, a: Value, b: Value| self.b.ins().fcmp(cc, a, b);
        let r = match cmp {
            Cmp::Eq => f(FloatCC::Equal, x, y),
            Cmp::Ne => {
                let ne = f(FloatCC::NotEqual, x, y);
                let ord = f(FloatCC::Ordered, x, y);
                self.b.ins().band(ne, ord)
            }
            Cmp::Lt => f(FloatCC::LessThan, x, y),
            Cmp::Le => f(FloatCC::LessThanOrEqual, x, y),
            Cmp::Gt => f(FloatCC::LessThan, y, x),
            Cmp::Ge => f(FloatCC::LessThanOrEqual, y, x),
            Cmp::Equ => {
                let eq = f(FloatCC::Equal, x, y);
                let uno = f(FloatCC::Unordered, x, y);
                self.b.ins().bor(eq, uno)
            }
            Cmp::Neu => f(FloatCC::NotEqual, x, y),
            // Unordered or less: not (x >= y); and so on.
            Cmp::Ltu => {
                let ge = f(FloatCC::LessThanOrEqual, y, x);
                self.b.ins().bnot(ge)
            }
            Cmp::Leu => {
                let gt = f(FloatCC::LessThan, y, x);
                self.b.ins().bnot(gt)
            }
            Cmp::Gtu => {
                let le = f(FloatCC::LessThanOrEqual, x, y);
                self.b.ins().bnot(le)
            }
            Cmp::Geu => {
                let lt = f(FloatCC::LessThan, x, y);
                self.b.ins().bnot(lt)
            }
            Cmp::Num => f(FloatCC::Ordered, x, y),
            Cmp::Nan => f(FloatCC::Unordered, x, y),
            c => return Err(format!("float comparison {c:?}")),
        };
        Ok(r)
    }

    // ---------------------------------------------------------------- floats

    /// A float source as `f32x4` (one vector) or `f64x2` (two), flushed with `.ftz`.
    fn floats(&mut self, s: &Src, ty: Ty, ftz: bool) -> R<Vec<Value>> {
        Ok(match ty {
            Ty::F32 => {
                let v = self.read(s, Dom::W)?;
                let w = self.as_w(v);
                let f = self.cast(F32X4, w);
                vec![if ftz { self.flush(f) } else { f }]
            }
            Ty::F64 if !ftz => {
                let v = self.read(s, Dom::D)?;
                let (l, h) = self.as_d(v, false);
                vec![self.cast(F64X2, l), self.cast(F64X2, h)]
            }
            _ => return Err(format!("{ty:?} operands")),
        })
    }

    /// Float vectors back to lanes of bits.
    fn float_bits(&mut self, r: &[Value]) -> V {
        match *r {
            [l, h] => V::D(self.cast(I64X2, l), self.cast(I64X2, h)),
            _ => V::W(self.cast(I32X4, r[0])),
        }
    }

    /// Flushes `f32` subnormals to zeros of the same sign (`.ftz`).
    fn flush(&mut self, x: Value) -> Value {
        let bits = self.cast(I32X4, x);
        let e = self.splat32(0x7F80_0000);
        let exp = self.b.ins().band(bits, e);
        let z = self.zero(Dom::W);
        let sub = self.b.ins().icmp(IntCC::Equal, exp, z);
        let s = self.splat32(0x8000_0000);
        let sign = self.b.ins().band(bits, s);
        let r = self.b.ins().bitselect(sub, sign, bits);
        self.cast(F32X4, r)
    }

    /// Float arithmetic, under the same conditions as the scalar native lowering (`native_float`).
    fn float(&mut self, op: &Op) -> R {
        let m = &op.m;
        let f32_ = match op.ty {
            Ty::F32 => true,
            Ty::F64 => false,
            t => return Err(format!("{t:?} arithmetic")),
        };
        if !matches!(m.rnd, Rnd::None | Rnd::Rn) || m.sat || (m.ftz && !f32_) {
            return Err("a rounding mode, .sat or .ftz without an exact vector form".into());
        }
        let arity = match op.kind {
            Kind::Add | Kind::Sub | Kind::Mul => 2,
            Kind::Min | Kind::Max if !m.nan => 2,
            Kind::Div if !m.approx && !m.full => 2,
            Kind::Fma | Kind::Mad => 3,
            Kind::Sqrt | Kind::Rcp if !m.approx => 1,
            Kind::Abs | Kind::Neg => 1,
            k => return Err(format!("float {k:?} with these modifiers")),
        };
        let mut srcs = Vec::new();
        for s in &[op.a, op.b, op.c][..arity] {
            srcs.push(self.floats(s, op.ty, m.ftz)?);
        }
        let parts = srcs[0].len();
        let mut out = Vec::new();
        for k in 0..parts {
            let v: Vec<Value> = srcs.iter().map(|s| s[k]).collect();
            let r = match op.kind {
                Kind::Add => self.b.ins().fadd(v[0], v[1]),
                Kind::Sub => self.b.ins().fsub(v[0], v[1]),
                Kind::Mul => self.b.ins().fmul(v[0], v[1]),
                Kind::Div => self.b.ins().fdiv(v[0], v[1]),
                Kind::Fma | Kind::Mad => {
                    let r = self.b.ins().fma(v[0], v[1], v[2]);
                    // Only chains need it (an addend that is itself a multiply-add; saxpy's one is not),
                    // and only every few links.
                    let chained = self
                        .b
                        .func
                        .dfg
                        .value_def(v[2])
                        .inst()
                        .is_some_and(|i| self.b.func.dfg.insts[i].opcode() == Opcode::Fma);
                    if chained {
                        let links = self.unpinned.get(&v[2]).map_or(1, |n| n + 1);
                        if links >= FMA_LINKS_PER_PIN {
                            self.pin(r);
                        } else {
                            self.unpinned.insert(r, links);
                        }
                    }
                    r
                }
                Kind::Sqrt => self.b.ins().sqrt(v[0]),
                Kind::Rcp => {
                    let one = if f32_ { self.b.ins().f32const(1.0) } else { self.b.ins().f64const(1.0) };
                    let one = self.b.ins().splat(if f32_ { F32X4 } else { F64X2 }, one);
                    self.b.ins().fdiv(one, v[0])
                }
                Kind::Abs => self.b.ins().fabs(v[0]),
                Kind::Neg => self.b.ins().fneg(v[0]),
                _ => {
                    // PTX: a NaN operand yields the other operand; -0 orders below +0.
                    let r = if op.kind == Kind::Min {
                        self.b.ins().fmin(v[0], v[1])
                    } else {
                        self.b.ins().fmax(v[0], v[1])
                    };
                    let a_nan = self.b.ins().fcmp(FloatCC::Unordered, v[0], v[0]);
                    let b_nan = self.b.ins().fcmp(FloatCC::Unordered, v[1], v[1]);
                    let fty = self.b.func.dfg.value_type(r);
                    let a_nan = self.cast(fty, a_nan);
                    let b_nan = self.cast(fty, b_nan);
                    let r = self.b.ins().bitselect(a_nan, v[1], r);
                    self.b.ins().bitselect(b_nan, v[0], r)
                }
            };
            out.push(if m.ftz { self.flush(r) } else { r });
        }
        let bits = self.float_bits(&out);
        self.write(op.dst, bits)
    }

    /// Keeps a multiply-add where the PTX has it. Cranelift's e-graph places a pure value lazily, right before
    /// its first use by an instruction with effects: a chain of multiply-adds into an accumulator that only a
    /// barrier's home store uses would all come after the chain's loads, every loaded operand live at once
    /// and spilled (`matmul_tiled16`'s unrolled tile product). A store of each result to a stack slot is such
    /// a use: one store where the spills were many (matmul_tiled16 on one worker: 63 ms → 40 ms). Other
    /// float ops showed no such effect (stencil_1d's sum of seven loads). A pin every
    /// [`FMA_LINKS_PER_PIN`] links keeps as few loads live (those of the links in between, placed before
    /// the pinned one), with fewer stores.
    fn pin(&mut self, v: Value) {
        let slot = *self.pin_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4))
        });
        self.b.ins().stack_store(I64, v, slot, 0);
    }

    /// `cvt`, where the scalar lowering is native and the vector form exact.
    fn cvt(&mut self, op: &Op) -> R {
        let (dt, st) = (op.ty, op.ty2);
        let m = &op.m;
        if m.sat || m.ftz || m.relu {
            return Err("cvt with .sat, .ftz or .relu".into());
        }
        let int = |t: Ty| !t.is_float() && t != Ty::Pred && t.bits() <= 64;
        // Integer results are kept sign-extended by the emulator: a wider register gets the extension.
        let into_dst = |me: &mut Self, w: Value| -> V {
            match me.dst_dom(op.dst) {
                Dom::W => V::W(w),
                Dom::D => {
                    let (l, h) = me.widen(w, dt.is_signed());
                    V::D(l, h)
                }
            }
        };
        if int(dt) && int(st) {
            if m.rnd != Rnd::None {
                return Err("cvt between integers with a rounding".into());
            }
            let r = if dt.bits() <= 32 && st.bits() <= 32 {
                let a = self.read(&op.a, Dom::W)?;
                let x = self.extend(a, st);
                let r = self.extend(x, dt);
                let w = self.as_w(r);
                into_dst(self, w)
            } else {
                let (l, h) = self.read_ext64(&op.a, st)?;
                self.extend(V::D(l, h), dt)
            };
            return self.write(op.dst, r);
        }
        match (dt, st) {
            (Ty::F32, Ty::F32) | (Ty::F64, Ty::F64) => {
                let xs = self.floats(&op.a, st, false)?;
                let mut out = Vec::new();
                for x in xs {
                    out.push(match m.rnd {
                        Rnd::Rni => self.b.ins().nearest(x),
                        Rnd::Rzi => self.b.ins().trunc(x),
                        Rnd::Rmi => self.b.ins().floor(x),
                        Rnd::Rpi => self.b.ins().ceil(x),
                        Rnd::None | Rnd::Rn => x,
                        r => return Err(format!("cvt.{r:?} between equal float types")),
                    });
                }
                let bits = self.float_bits(&out);
                self.write(op.dst, bits)
            }
            (Ty::F64, Ty::F32) if m.rnd == Rnd::None => {
                let x = self.floats(&op.a, st, false)?[0];
                let xi = self.cast(I8X16, x);
                // Lanes 2-3 moved down for the second promotion.
                let mask: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
                let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
                let up = self.b.ins().shuffle(xi, xi, imm);
                let up = self.cast(F32X4, up);
                let l = self.b.ins().fvpromote_low(x);
                let h = self.b.ins().fvpromote_low(up);
                let bits = self.float_bits(&[l, h]);
                self.write(op.dst, bits)
            }
            (Ty::F32, Ty::F64) if m.rnd == Rnd::Rn => {
                let xs = self.floats(&op.a, st, false)?;
                let l = self.b.ins().fvdemote(xs[0]);
                let h = self.b.ins().fvdemote(xs[1]);
                let l = self.cast(I8X16, l);
                let h = self.cast(I8X16, h);
                let mask: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
                let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
                let r = self.b.ins().shuffle(l, h, imm);
                let r = self.cast(I32X4, r);
                self.write(op.dst, V::W(r))
            }
            (Ty::F32, _) if int(st) && st.bits() <= 32 && m.rnd == Rnd::Rn => {
                let a = self.read(&op.a, Dom::W)?;
                let x = self.extend(a, st);
                let x = self.as_w(x);
                let f = if st.is_signed() {
                    self.b.ins().fcvt_from_sint(F32X4, x)
                } else {
                    self.b.ins().fcvt_from_uint(F32X4, x)
                };
                let bits = self.float_bits(&[f]);
                self.write(op.dst, bits)
            }
            (_, Ty::F32) if int(dt) && dt.bits() == 32 => {
                let x = self.floats(&op.a, st, false)?[0];
                // A float rounding acts as its integer form; none means `.rzi`.
                let x = match m.rnd {
                    Rnd::Rzi | Rnd::Rz | Rnd::None => x,
                    Rnd::Rni | Rnd::Rn => self.b.ins().nearest(x),
                    Rnd::Rmi | Rnd::Rm => self.b.ins().floor(x),
                    Rnd::Rpi | Rnd::Rp => self.b.ins().ceil(x),
                    r => return Err(format!("cvt.{r:?} to an integer")),
                };
                // NaN gives 0 here (from `.f32` into 32 bits), as in the scalar lowering.
                let r = if dt.is_signed() {
                    self.b.ins().fcvt_to_sint_sat(I32X4, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(I32X4, x)
                };
                let r = into_dst(self, r);
                self.write(op.dst, r)
            }
            _ => Err(format!("cvt.{dt:?}.{st:?} ({:?})", m.rnd)),
        }
    }

    /// An arithmetic op without a vector form here: lane by lane through the emulator's lane semantics (the
    /// scalar JIT's `Alu` helper, with each lane's scratch words); where the helper refuses for an active lane,
    /// that lane's thread has the error (`exec.rs` reports it).
    fn lane_helper(&mut self, op: &Op) -> R {
        if op.m.cc || matches!(op.kind, Kind::Addc | Kind::Subc | Kind::Madc) {
            return Err("the carry flag".into());
        }
        let mut srcs = Vec::new();
        for s in [&op.a, &op.b, &op.c, &op.d] {
            let v = self.read(s, Dom::D)?;
            srcs.push(self.as_d(v, false));
        }
        let site = self.env.site_base.get(&self.prog.func).ok_or("no site numbers")? + self.cur as u32;
        let table = self.b.ins().load(I64, ro(), self.ctx, cx::OPS);
        let opp = self.b.ins().load(I64, ro(), table, (site * 8) as i32);
        let helpers = self.b.ins().load(I64, ro(), self.ctx, cx::HELPERS);
        let f = self.b.ins().load(I64, ro(), helpers, (Helper::Alu as usize * 8) as i32);
        let mut sig = Signature::new(self.env.call_conv);
        sig.params.extend([AbiParam::new(I64), AbiParam::new(I64)]);
        sig.returns.push(AbiParam::new(I32));
        let sig = self.b.import_signature(sig);
        let z = self.zero(Dom::D);
        let mut out = [[z, z], [z, z]];
        // io = [a, b, c, d, carry, out, out2], one lane at a time, in a stack slot.
        let slot = *self.scratch.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 3))
        });
        for i in 0..WIDTH as u8 {
            for (k, &(l, h)) in srcs.iter().enumerate() {
                let x = self.lane(V::D(l, h), i);
                self.b.ins().stack_store(I64, x, slot, 8 * k as i32);
            }
            let zero = self.b.ins().iconst(I64, 0);
            self.b.ins().stack_store(I64, zero, slot, 32);
            let io = self.b.ins().stack_addr(I64, slot, 0);
            let call = self.b.ins().call_indirect(sig, f, &[opp, io]);
            let ok = self.b.inst_results(call)[0];
            let cont = self.b.create_block();
            {
                // The error of this lane, if it runs the op (the emulator's order: op by op, lane by lane).
                let bad = self.b.create_block();
                let ok = match self.guard {
                    Some(g) => {
                        let active = self.b.ins().extractlane(g, i);
                        let off = self.b.ins().icmp_imm_s(IntCC::Equal, active, 0);
                        let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, ok, 0);
                        self.b.ins().bor(ok, off)
                    }
                    None => ok,
                };
                self.b.ins().brif(ok, cont, &[], bad, &[]);
                self.b.switch_to_block(bad);
                let fl = MemFlagsData::trusted();
                let code = self.b.ins().iconst(I32, i64::from(crate::abi::error::UNSUPPORTED));
                self.b.ins().store(fl, code, self.ctx, cx::ERROR_CODE);
                let s = self.b.ins().iconst(I32, i64::from(site));
                self.b.ins().store(fl, s, self.ctx, cx::ERROR_SITE);
                let t = self.b.use_var(self.t);
                let lane = self.b.ins().iadd_imm_s(t, i64::from(i));
                self.b.ins().store(fl, lane, self.ctx, cx::ERROR_THREAD);
                self.b.ins().return_(&[t]);
            }
            self.b.switch_to_block(cont);
            for (k, o) in out.iter_mut().enumerate() {
                let r = self.b.ins().stack_load(I64, I64, slot, 40 + 8 * k as i32);
                let half = &mut o[usize::from(i / 2)];
                *half = self.b.ins().insertlane(*half, r, i % 2);
            }
        }
        self.write(op.dst, V::D(out[0][0], out[0][1]))?;
        if op.dst2 != Dst::None {
            self.write(op.dst2, V::D(out[1][0], out[1][1]))?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- memory

    fn address(&mut self, op: &Op) -> R<Addr> {
        let off = op.mem.offset;
        if op.m.space == Space::Shared {
            // Offsets into the CTA's shared memory, as the scalar lowering adds them to its host address.
            let sh = self.b.ins().load(I64, ro(), self.ctx, cx::SHARED);
            return Ok(match op.mem.base {
                Src::Sym(SymAddr::Shared(o), extra) => {
                    Addr::Uniform(self.b.ins().iadd_imm_s(sh, o as i64 + extra + off))
                }
                Src::Reg(r) if self.strides[r as usize] == Some(UNIFORM) => {
                    let a = self.lane0(&op.mem.base)?;
                    let a = self.b.ins().iadd(sh, a);
                    Addr::Uniform(self.b.ins().iadd_imm_s(a, off))
                }
                ref s => {
                    let v = self.read(s, Dom::D)?;
                    let (l, h) = self.as_d(v, false);
                    let base = self.b.ins().iadd_imm_s(sh, off);
                    // A 32-bit register's own lanes (`Narrow`), lane 0 extended from them.
                    let w32 = match *s {
                        Src::Reg(r) if matches!(self.regs[r as usize], Reg::W(_)) => match self.read(s, Dom::W)? {
                            V::W(w) => Some(w),
                            V::D(..) => None,
                        },
                        _ => None,
                    };
                    let a0 = match w32 {
                        Some(w) => {
                            let x = self.b.ins().extractlane(w, 0);
                            self.b.ins().uextend(I64, x)
                        }
                        None => self.b.ins().extractlane(l, 0),
                    };
                    // The offset added last, where it folds into the access's displacement (and the sum
                    // before it is shared by the accesses through one register).
                    let a0 = self.b.ins().iadd(sh, a0);
                    let a0 = self.b.ins().iadd_imm_s(a0, off);
                    let sh = self.b.ins().splat(I64X2, sh);
                    // A 32-bit offset whose lanes wrap around between lanes 0 and 3 is far outside any CTA's
                    // shared memory: such an access is out of bounds whichever lanes it reaches, so the
                    // zero-extension is taken as exact.
                    let k = match (*s, self.address_stride(s)) {
                        (Src::Reg(r), Some(k))
                            if k.widened == 1
                                && matches!(self.regs[r as usize], Reg::W(_))
                                && self.strides[r as usize].is_some_and(|w| w.widened == 0) =>
                        {
                            Some(Stride { stride: k.stride, widened: 0 })
                        }
                        (_, k) => k,
                    };
                    let narrow = w32.map(|offsets| Narrow { offsets, base });
                    Addr::Lanes(self.b.ins().iadd(l, sh), self.b.ins().iadd(h, sh), k, a0, off, narrow)
                }
            });
        }
        if !matches!(op.m.space, Space::Global | Space::Generic | Space::Const | Space::Param | Space::Local) {
            return Err(format!("{:?} memory", op.m.space));
        }
        Ok(match op.mem.base {
            // A local variable: each lane's own (host) address.
            Src::Sym(SymAddr::Frame(o), extra) => {
                let (l, h) = self.frames(o as i64 + extra + off);
                let a0 = self.b.ins().extractlane(l, 0);
                Addr::Lanes(l, h, None, a0, 0, None)
            }
            Src::Sym(sym, extra) => Addr::Uniform(self.symbol(sym, extra + off)?),
            Src::Imm(a) => Addr::Uniform(self.b.ins().iconst(I64, a.wrapping_add(off as u64) as i64)),
            Src::Reg(r) if self.strides[r as usize] == Some(UNIFORM) => {
                let a = self.lane0(&op.mem.base)?;
                Addr::Uniform(self.b.ins().iadd_imm_s(a, off))
            }
            ref s => {
                let v = self.read(s, Dom::D)?;
                let (l, h) = self.as_d(v, false);
                let k = self.address_stride(s);
                // Lane 0 from scalars (vector_add 1.67 -> 1.56 ms, saxpy 1.47 -> 1.27 ms; whole-CTA mode,
                // since each region has its own group loop: reduce_tree -7%, where it once cost +10%).
                let a0 = self.lane_of(l, 0, 4);
                let a0 = self.b.ins().iadd_imm_s(a0, off);
                Addr::Lanes(l, h, k, a0, off, None)
            }
        })
    }

    /// The stride of a register read as a 64-bit address (a 32-bit one zero-extended: widened).
    fn address_stride(&self, s: &Src) -> Option<Stride> {
        let Src::Reg(r) = *s else { return None };
        let k = self.strides[r as usize]?;
        match self.regs[r as usize] {
            Reg::W(_) => stride(i64::from(k.stride as i32), k.widened + 1, 64),
            Reg::D(..) => Some(k),
        }
    }

    /// Lane 0 of a source as a 64-bit address (zero-extended, as the scalar code reads it).
    fn lane0(&mut self, s: &Src) -> R<Value> {
        let v = self.read(s, Dom::D)?;
        let (l, _) = self.as_d(v, false);
        Ok(self.b.ins().extractlane(l, 0))
    }

    /// Lane `i` of a value as a scalar (`i32` or `i64`).
    fn lane(&mut self, v: V, i: u8) -> Value {
        match v {
            V::W(w) => self.b.ins().extractlane(w, i),
            V::D(l, h) => self.b.ins().extractlane(if i < 2 { l } else { h }, i % 2),
        }
    }

    /// Lane `i`'s address plus `off`.
    fn lane_addr(&mut self, a: Addr, i: u8, off: i64) -> Value {
        let (v, off) = match a {
            Addr::Uniform(v) => (v, off),
            Addr::Lanes(_, _, _, a0, ..) if i == 0 => (a0, off),
            Addr::Lanes(.., Some(Narrow { offsets, base })) => {
                let x = self.b.ins().extractlane(offsets, i);
                let x = self.b.ins().uextend(I64, x);
                (self.b.ins().iadd(base, x), off)
            }
            Addr::Lanes(l, h, _, _, o, None) => (self.lane(V::D(l, h), i), off + o),
        };
        if off == 0 {
            v
        } else {
            self.b.ins().iadd_imm_s(v, off)
        }
    }

    /// An `i8` that is non-zero when one vector access serves the group: every lane active and, for
    /// per-lane addresses, `size` bytes apart in lane order. `None` when that is always the case.
    fn whole_group(&mut self, a: Addr, size: u32) -> Option<Value> {
        let consecutive = match a {
            Addr::Uniform(_) => None,
            // Consecutive by construction.
            Addr::Lanes(_, _, Some(Stride { widened: 0, .. }), ..) => None,
            // Unless a widened term wrapped around between lanes 0 and 3.
            Addr::Lanes(_, h, Some(_), a0, off, _) => {
                let a3 = self.b.ins().extractlane(h, 1);
                let a3 = self.b.ins().iadd_imm_s(a3, off);
                let d = self.b.ins().isub(a3, a0);
                Some(self.b.ins().icmp_imm_u(IntCC::Equal, d, 3 * i64::from(size)))
            }
            Addr::Lanes(l, h, None, a0, off, _) => {
                let raw = self.b.ins().iadd_imm_s(a0, -off);
                let base = self.b.ins().splat(I64X2, raw);
                let s = u64::from(size);
                let dl = self.lanes64([0, s]);
                let dh = self.lanes64([2 * s, 3 * s]);
                let el = self.b.ins().iadd(base, dl);
                let eh = self.b.ins().iadd(base, dh);
                let ok_l = self.b.ins().icmp(IntCC::Equal, l, el);
                let ok_h = self.b.ins().icmp(IntCC::Equal, h, eh);
                let ok = self.b.ins().band(ok_l, ok_h);
                Some(self.b.ins().vall_true(ok))
            }
        };
        // Every lane active: computed once per mask. A branch on the test itself would have Cranelift repeat
        // it at every access's branch; a branch on this `band` reads one register.
        let active = self.guard.map(|g| {
            let exact = self.lane_pred_of(&[g]).map(|p| self.pred_all(&p)).filter(|&(_, exact)| exact);
            let all = match exact {
                Some((all, _)) => all,
                None => self.all_of(&[g]),
            };
            self.b.ins().band_imm_u(all, 1)
        });
        match (consecutive, active) {
            (Some(c), Some(a)) => Some(self.b.ins().band(c, a)),
            (c, a) => c.or(a),
        }
    }

    /// Lane `i` of a 64-bit-lane vector, computed from scalars where the vector is a sum of splats and
    /// widened (or shifted) 32-bit lanes, as addresses are: a 32-bit lane moved out and extended is cheaper
    /// than widening and adding whole vectors to take one lane.
    fn lane_of(&mut self, v: Value, i: u8, depth: u32) -> Value {
        if let (Some(inst), true) = (self.b.func.dfg.value_def(v).inst(), depth > 0) {
            let dfg = &self.b.func.dfg;
            let from32 = |x: Value| dfg.value_type(x) == I32X4;
            match dfg.insts[inst] {
                InstructionData::Unary { opcode: Opcode::Splat, arg } => return arg,
                InstructionData::Unary {
                    opcode: op @ (Opcode::UwidenLow | Opcode::UwidenHigh | Opcode::SwidenLow | Opcode::SwidenHigh),
                    arg,
                } if from32(arg) => {
                    let lane = if matches!(op, Opcode::UwidenLow | Opcode::SwidenLow) { i } else { i + 2 };
                    let x = self.b.ins().extractlane(arg, lane);
                    return if matches!(op, Opcode::UwidenLow | Opcode::UwidenHigh) {
                        self.b.ins().uextend(I64, x)
                    } else {
                        self.b.ins().sextend(I64, x)
                    };
                }
                InstructionData::Binary { opcode: Opcode::Iadd, args } => {
                    let x = self.lane_of(args[0], i, depth - 1);
                    let y = self.lane_of(args[1], i, depth - 1);
                    return self.b.ins().iadd(x, y);
                }
                // A vector shift's amount is a scalar.
                InstructionData::Binary { opcode: Opcode::Ishl, args } => {
                    let x = self.lane_of(args[0], i, depth - 1);
                    return self.b.ins().ishl(x, args[1]);
                }
                _ => {}
            }
        }
        self.b.ins().extractlane(v, i)
    }

    /// Under a guard, places the vectors the lanes of an access read (its address, its value) before the
    /// lanes' branches: Cranelift computes a pure value lazily, in the block of its first use, so each lane's
    /// block would otherwise recompute the whole vector (`histogram256`'s shared atomics did, four times).
    fn anchor(&mut self, addr: Addr, value: Option<V>) {
        if self.guard.is_none() {
            return;
        }
        let mut vs = Vec::new();
        match addr {
            Addr::Lanes(.., Some(Narrow { offsets, .. })) => vs.push(offsets),
            Addr::Lanes(l, h, ..) => vs.extend([l, h]),
            Addr::Uniform(_) => {}
        }
        match value {
            Some(V::W(w)) => vs.push(w),
            Some(V::D(l, h)) => vs.extend([l, h]),
            None => {}
        }
        for v in vs {
            self.pin(v);
        }
    }

    /// A uniform 32-bit load (the current op's, from `a`) as a lane of a 16-byte load that serves it and the
    /// three loads at the next offsets ([`Vector::quad_partners`]), broadcast: one load and four shuffles
    /// where each would be a load and a broadcast (matmul_tiled16's row of the `A` tile). `None` where no
    /// such load serves it.
    fn quad_lane(&mut self, a: Value, flags: MemFlagsData, ty: Ty) -> Option<Value> {
        let (v, k) = match self.quads.remove(&self.cur) {
            Some(q) => q,
            None => {
                let partners = self.quad_partners(self.cur)?;
                let v = self.b.ins().load(if ty == Ty::F32 { F32X4 } else { I32X4 }, flags, a, 0);
                for (k, j) in partners.into_iter().enumerate() {
                    self.quads.insert(j, (v, k as u8 + 1));
                }
                (v, 0)
            }
        };
        let ty = self.b.func.dfg.value_type(v);
        let bytes = self.cast(I8X16, v);
        let mask: Vec<u8> = (0..4).flat_map(|_| (0..4).map(move |b| 4 * k + b)).collect();
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
        let x = self.b.ins().shuffle(bytes, bytes, imm);
        Some(self.cast(ty, x))
    }

    /// For uniform load `i` (32 bits, one destination, unguarded, outside ranges run as masks): the loads
    /// from the same base at offsets 4, 8 and 12 further on, where all three follow in its basic block
    /// with no write to memory or to the base between. The four then read the 16 bytes that one load reads,
    /// at the first one's place: no store can come between, and a fault reads as the first one's.
    fn quad_partners(&self, i: usize) -> Option<[usize; 3]> {
        let ops = &self.prog.ops;
        let op = &ops[i];
        let like = |o: &Op| {
            o.kind == Kind::Ld
                && o.m.space == op.m.space
                && o.mem.base == op.mem.base
                && o.ty.bytes() == 4
                && o.ty == op.ty
                && o.extra.is_none()
                && o.guard.is_none()
                && matches!(o.dst, Dst::Reg(..))
                && self.dst_dom(o.dst) == Dom::W
        };
        // (Not in bundles: each group's ops would share the one map.)
        if !self.alt.is_empty() || self.all_lanes.is_some() || self.ifs.inside[i].is_some() || !like(op) {
            return None;
        }
        let base = match op.mem.base {
            Src::Reg(r) => Some(r as usize),
            _ => None,
        };
        let writes_base = |o: &Op| {
            let mut w = false;
            crate::plan::for_each_def(self.prog, o, |v| w |= Some(v) == base);
            w
        };
        if writes_base(op) {
            return None;
        }
        let mut found = [None; 3];
        for (j, o) in ops.iter().enumerate().take(i + 64).skip(i + 1) {
            let ends_block = self.blocks.contains_key(&j)
                || self.yield_at.contains_key(&j)
                || self.ifs.inside[j].is_some()
                || writes_memory(o)
                || matches!(o.kind, Kind::Bra | Kind::Brx | Kind::Ret | Kind::Exit | Kind::Trap | Kind::Call);
            if ends_block {
                break;
            }
            if like(o) {
                let d = o.mem.offset.wrapping_sub(op.mem.offset);
                if (4..=12).contains(&d) && d % 4 == 0 && found[(d / 4 - 1) as usize].is_none() {
                    found[(d / 4 - 1) as usize] = Some(j);
                }
            }
            if writes_base(o) || found.iter().all(Option::is_some) {
                break;
            }
        }
        Some([found[0]?, found[1]?, found[2]?])
    }

    /// Runs `each(lane)` for every lane (or, under a guard, every active lane), in lane order.
    fn per_lane(&mut self, mut each: impl FnMut(&mut Self, u8) -> R) -> R {
        for i in 0..WIDTH as u8 {
            match self.guard {
                Some(g) => {
                    let bits = self.lane_bits(g);
                    let on = self.b.ins().band_imm_s(bits, 1 << i);
                    let yes = self.b.create_block();
                    let cont = self.b.create_block();
                    self.b.ins().brif(on, yes, &[], cont, &[]);
                    self.b.switch_to_block(yes);
                    each(self, i)?;
                    self.b.ins().jump(cont, &[]);
                    self.b.switch_to_block(cont);
                }
                None => each(self, i)?,
            }
        }
        Ok(())
    }

    /// How an access with a vector form (`vector_form`) is made.
    fn path(&mut self, vector_form: bool, a: Addr, size: u32) -> Path {
        // Lanes known not to be `size` bytes apart.
        let apart = matches!(a, Addr::Lanes(_, _, Some(k), ..) if k.stride != i64::from(size));
        if !vector_form || apart {
            return Path::Lanes;
        }
        match self.whole_group(a, size) {
            Some(test) => Path::Test(test),
            None => Path::Vector,
        }
    }

    /// Emits the access on its path (both, behind the run-time test, for [`Path::Test`]).
    fn two_ways(&mut self, path: Path, vector: impl FnOnce(&mut Self) -> R, lanes: impl FnOnce(&mut Self) -> R) -> R {
        let fast = match path {
            Path::Vector => return vector(self),
            Path::Lanes => return lanes(self),
            Path::Test(fast) => fast,
        };
        let yes = self.b.create_block();
        let no = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(fast, yes, &[], no, &[]);
        self.b.switch_to_block(yes);
        vector(self)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(no);
        lanes(self)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// One lane's load with the scalar lowering's extension (an `i64`).
    fn load_scalar(&mut self, flags: MemFlagsData, addr: Value, ty: Ty) -> R<Value> {
        let b = &mut self.b;
        if flags.readonly() && flags.can_move() && ty.bytes() < 8 {
            // Cranelift hoists a movable `load` out of the group loop, not an extending load.
            let mt = match ty.bytes() {
                4 => I32,
                2 => cranelift_codegen::ir::types::I16,
                1 => cranelift_codegen::ir::types::I8,
                n => return Err(format!("a {n}-byte access")),
            };
            let v = b.ins().load(mt, flags, addr, 0);
            return Ok(if ty.is_signed() { b.ins().sextend(I64, v) } else { b.ins().uextend(I64, v) });
        }
        Ok(match (ty.bytes(), ty.is_signed()) {
            (8, _) => b.ins().load(I64, flags, addr, 0),
            (4, true) => b.ins().sload32(flags, addr, 0),
            (4, false) => b.ins().uload32(flags, addr, 0),
            (2, true) => b.ins().sload16(I64, flags, addr, 0),
            (2, false) => b.ins().uload16(I64, flags, addr, 0),
            (1, true) => b.ins().sload8(I64, flags, addr, 0),
            (1, false) => b.ins().uload8(I64, flags, addr, 0),
            (n, _) => return Err(format!("a {n}-byte access")),
        })
    }

    fn load(&mut self, op: &Op) -> R {
        let addr = self.address(op)?;
        let ty = op.ty;
        let elem = ty.bytes();
        let dsts: Vec<Dst> = match op.extra.as_deref() {
            Some(program::Extra::Dsts(d)) => d.to_vec(),
            _ => vec![op.dst],
        };
        let kernel_param = matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _));
        let flags = if kernel_param {
            ro()
        } else if op.m.space == Space::Const {
            MemFlagsData::new().with_readonly()
        } else {
            MemFlagsData::new()
        };
        for (k, &d) in dsts.iter().enumerate() {
            if matches!(d, Dst::Pred(_)) {
                return Err("a load into a predicate".into());
            }
            let off = i64::from(elem) * k as i64;
            let dd = self.dst_dom(d);
            // The loaded lanes go through variables: the vector and per-lane paths both define them.
            let (va, vb) = match dd {
                Dom::W => (self.b.declare_var(I32X4), None),
                Dom::D => (self.b.declare_var(I64X2), Some(self.b.declare_var(I64X2))),
            };
            let z = self.zero(dd);
            self.b.def_var(va, z);
            if let Some(vb) = vb {
                self.b.def_var(vb, z);
            }
            // Bytes and half words into 32-bit lanes: one narrow load, extended lane by lane.
            let narrow = (elem == 1 || elem == 2) && dd == Dom::W;
            let vector_form = matches!(addr, Addr::Uniform(_)) || elem == 4 || elem == 8 || narrow;
            let path = self.path(vector_form, addr, elem);
            self.two_ways(
                path,
                |me| {
                    let v = match addr {
                        Addr::Lanes(_, _, _, a0, ..) if narrow => {
                            let (st, vt, parts) = if elem == 1 { (I32, I32X4, 2) } else { (I64, I64X2, 1) };
                            let x = me.b.ins().load(st, flags, a0, off as i32);
                            let x = me.b.ins().scalar_to_vector(vt, x);
                            let mut x = me.cast(if elem == 1 { I8X16 } else { I16X8 }, x);
                            for _ in 0..parts {
                                x = if ty.is_signed() { me.b.ins().swiden_low(x) } else { me.b.ins().uwiden_low(x) };
                            }
                            V::W(x)
                        }
                        Addr::Uniform(a) => {
                            let a = if off == 0 { a } else { me.b.ins().iadd_imm_s(a, off) };
                            let quad = (dsts.len() == 1 && dd == Dom::W && me.guard.is_none())
                                .then(|| me.quad_lane(a, flags, ty))
                                .flatten();
                            if let Some(x) = quad {
                                V::W(me.cast(I32X4, x))
                            } else if ty == Ty::F32 && dd == Dom::W {
                                // Loaded as a float: a float op reads it as a broadcast from memory.
                                let f = me.b.ins().load(F32, flags, a, 0);
                                let f = me.b.ins().splat(F32X4, f);
                                V::W(me.cast(I32X4, f))
                            } else {
                                let s = me.load_scalar(flags, a, ty)?;
                                me.splat_scalar(s, dd)
                            }
                        }
                        Addr::Lanes(_, _, _, a0, ..) if ty == Ty::F32 && dd == Dom::W => {
                            // Loaded as floats: a float op can take the load as its memory operand.
                            let f = me.b.ins().load(F32X4, flags, a0, off as i32);
                            V::W(me.cast(I32X4, f))
                        }
                        Addr::Lanes(_, _, _, a0, ..) => {
                            if elem == 4 {
                                let w = me.b.ins().load(I32X4, flags, a0, off as i32);
                                match dd {
                                    Dom::W => V::W(w),
                                    Dom::D => {
                                        let (l, h) = me.widen(w, ty.is_signed());
                                        V::D(l, h)
                                    }
                                }
                            } else {
                                let l = me.b.ins().load(I64X2, flags, a0, off as i32);
                                let h = me.b.ins().load(I64X2, flags, a0, off as i32 + 16);
                                me.in_dom(V::D(l, h), dd)
                            }
                        }
                    };
                    match v {
                        V::W(w) => me.b.def_var(va, w),
                        V::D(l, h) => {
                            me.b.def_var(va, l);
                            me.b.def_var(vb.expect("64-bit lanes"), h);
                        }
                    }
                    Ok(())
                },
                |me| {
                    let each = |me: &mut Self| {
                        me.anchor(addr, None);
                        me.per_lane(|me, i| {
                            let a = me.lane_addr(addr, i, off);
                            let s = me.load_scalar(flags, a, ty)?;
                            match vb {
                                None => {
                                    let s = me.b.ins().ireduce(I32, s);
                                    let cur = me.b.use_var(va);
                                    let v = me.b.ins().insertlane(cur, s, i);
                                    me.b.def_var(va, v);
                                }
                                Some(vb) => {
                                    let var = if i < 2 { va } else { vb };
                                    let cur = me.b.use_var(var);
                                    let v = me.b.ins().insertlane(cur, s, i % 2);
                                    me.b.def_var(var, v);
                                }
                            }
                            Ok(())
                        })
                    };
                    // Unless the lanes are known to differ.
                    let (Addr::Lanes(l, h, None, a0, ..), None) = (addr, me.guard) else { return each(me) };
                    // Every lane at one address (an index uniform in the group, as a tile's row): one load.
                    let l0 = me.b.ins().extractlane(l, 0);
                    let s = me.b.ins().splat(I64X2, l0);
                    let el = me.b.ins().icmp(IntCC::Equal, l, s);
                    let eh = me.b.ins().icmp(IntCC::Equal, h, s);
                    let e = me.b.ins().band(el, eh);
                    let same = me.b.ins().vall_true(e);
                    let (one, lanes, done) = (me.b.create_block(), me.b.create_block(), me.b.create_block());
                    me.b.ins().brif(same, one, &[], lanes, &[]);
                    me.b.switch_to_block(one);
                    let a = if off == 0 { a0 } else { me.b.ins().iadd_imm_s(a0, off) };
                    let x = me.load_scalar(flags, a, ty)?;
                    match me.splat_scalar(x, dd) {
                        V::W(w) => me.b.def_var(va, w),
                        V::D(l, h) => {
                            me.b.def_var(va, l);
                            me.b.def_var(vb.expect("64-bit lanes"), h);
                        }
                    }
                    me.b.ins().jump(done, &[]);
                    me.b.switch_to_block(lanes);
                    each(me)?;
                    me.b.ins().jump(done, &[]);
                    me.b.switch_to_block(done);
                    Ok(())
                },
            )?;
            let v = match vb {
                None => V::W(self.b.use_var(va)),
                Some(vb) => V::D(self.b.use_var(va), self.b.use_var(vb)),
            };
            self.write(d, v)?;
        }
        Ok(())
    }

    fn store(&mut self, op: &Op) -> R {
        let addr = self.address(op)?;
        let ty = op.ty;
        let elem = ty.bytes();
        if elem > 8 {
            return Err(format!("a {elem}-byte store"));
        }
        let srcs: Vec<Src> = match op.extra.as_deref() {
            Some(program::Extra::Srcs(s)) => s.to_vec(),
            _ => vec![op.a],
        };
        for (k, s) in srcs.iter().enumerate() {
            let off = i64::from(elem) * k as i64;
            let v = self.read(s, dom(ty))?;
            let vector_form = matches!(addr, Addr::Lanes(..)) && (elem == 4 || elem == 8);
            let path = self.path(vector_form, addr, elem);
            self.two_ways(
                path,
                |me| {
                    let Addr::Lanes(_, _, _, a0, ..) = addr else { return Err("a uniform vector store".into()) };
                    let fl = MemFlagsData::new();
                    match v {
                        V::W(w) => {
                            me.b.ins().store(fl, w, a0, off as i32);
                        }
                        V::D(l, h) => {
                            me.b.ins().store(fl, l, a0, off as i32);
                            me.b.ins().store(fl, h, a0, off as i32 + 16);
                        }
                    }
                    Ok(())
                },
                |me| {
                    me.anchor(addr, Some(v));
                    me.per_lane(|me, i| {
                        let a = me.lane_addr(addr, i, 0);
                        let x = me.lane(v, i);
                        let fl = MemFlagsData::new();
                        let o = off as i32;
                        match elem {
                            1 => me.b.ins().istore8(fl, x, a, o),
                            2 => me.b.ins().istore16(fl, x, a, o),
                            4 if me.b.func.dfg.value_type(x) == I64 => me.b.ins().istore32(fl, x, a, o),
                            _ => me.b.ins().store(fl, x, a, o),
                        };
                        Ok(())
                    })
                },
            )?;
        }
        Ok(())
    }
}

impl Vector<'_, '_> {
    /// `atom` and `red` on 32- and 64-bit words of shared or global memory: the active lanes one after the
    /// other in lane order, as the scalar loop runs the group's threads. Global memory takes the native
    /// atomic instruction (other workers may race); a CTA's shared memory belongs to one worker, so a load,
    /// the operation and a store serve (float addition included).
    fn atomic(&mut self, op: &Op) -> R {
        let Sub::Atom(aop) = op.m.sub else { return Err("an atomic without an operation".into()) };
        if op.m.vec > 0 {
            // One atomic per element (crate::translate::atom_vec): kept to the scalar path.
            return Err("vector atomics".into());
        }
        let shared = match op.m.space {
            Space::Shared => true,
            Space::Global => false,
            s => return Err(format!("{s:?} atomics")),
        };
        let elem = op.ty.bytes();
        if op.extra.is_some() || !(elem == 4 || elem == 8) || op.b != Src::None {
            return Err("vector, narrow or compare-and-swap atomics".into());
        }
        let int = !op.ty.is_float();
        let rmw = crate::translate::native_rmw(aop, op.ty);
        let float_add = aop == AtomOp::Add && !int && shared;
        if rmw.is_none() && !float_add {
            return Err(format!("atom.{aop:?}.{:?} in {:?} memory", op.ty, op.m.space));
        }
        let d = dom(op.ty);
        if op.kind == Kind::Atom && op.dst != Dst::Sink && self.dst_dom(op.dst) != d {
            return Err("an atomic's result in a register of another width".into());
        }
        let mt = if elem == 4 { I32 } else { I64 };
        let a = self.read(&op.a, d)?;
        let addr = self.address(op)?;
        let (lo, hi) = (self.b.declare_var(if d == Dom::W { I32X4 } else { I64X2 }), self.b.declare_var(I64X2));
        let z = self.zero(d);
        self.b.def_var(lo, z);
        let z64 = self.zero(Dom::D);
        self.b.def_var(hi, z64);
        let result_read = match op.dst {
            Dst::Reg(slot, _) if op.kind == Kind::Atom => self.read_anywhere[slot as usize],
            _ => false,
        };
        self.anchor(addr, Some(a));
        self.per_lane(|me, i| {
            let ad = me.lane_addr(addr, i, 0);
            let x = me.lane(a, i);
            let fl = MemFlagsData::new();
            let old = match rmw {
                Some(r) if !shared => me.b.ins().atomic_rmw(mt, fl, r, ad, x),
                _ => {
                    let old = me.b.ins().load(mt, fl, ad, 0);
                    let new = match aop {
                        AtomOp::Add if int => me.b.ins().iadd(old, x),
                        AtomOp::Add => {
                            let ft = if mt == I32 { F32 } else { F64 };
                            let (p, q) = (
                                me.b.ins().bitcast(ft, MemFlagsData::new(), old),
                                me.b.ins().bitcast(ft, MemFlagsData::new(), x),
                            );
                            let sum = me.b.ins().fadd(p, q);
                            me.b.ins().bitcast(mt, MemFlagsData::new(), sum)
                        }
                        AtomOp::And => me.b.ins().band(old, x),
                        AtomOp::Or => me.b.ins().bor(old, x),
                        AtomOp::Xor => me.b.ins().bxor(old, x),
                        AtomOp::Exch => x,
                        AtomOp::Min if op.ty.is_signed() => me.b.ins().smin(old, x),
                        AtomOp::Min => me.b.ins().umin(old, x),
                        AtomOp::Max if op.ty.is_signed() => me.b.ins().smax(old, x),
                        _ => me.b.ins().umax(old, x),
                    };
                    me.b.ins().store(fl, new, ad, 0);
                    old
                }
            };
            match d {
                // A result no op reads (a histogram's count) is not collected.
                _ if !result_read => {}
                Dom::W => {
                    let v = me.b.use_var(lo);
                    let v = me.b.ins().insertlane(v, old, i);
                    me.b.def_var(lo, v);
                }
                Dom::D => {
                    let var = if i < 2 { lo } else { hi };
                    let v = me.b.use_var(var);
                    let v = me.b.ins().insertlane(v, old, i % 2);
                    me.b.def_var(var, v);
                }
            }
            Ok(())
        })?;
        if op.kind == Kind::Atom {
            let v = match d {
                Dom::W => V::W(self.b.use_var(lo)),
                Dom::D => V::D(self.b.use_var(lo), self.b.use_var(hi)),
            };
            self.write(op.dst, v)?;
        }
        Ok(())
    }
}

/// Ops the scalar JIT lowers natively or through the `Alu` helper (everything but memory, control, calls and
/// yield points).
fn lane_helper_covers(op: &Op) -> bool {
    !matches!(
        op.kind,
        Kind::Ld
            | Kind::St
            | Kind::Atom
            | Kind::Atom128
            | Kind::Move128
            | Kind::Red
            | Kind::Call
            | Kind::Brx
            | Kind::Bra
            | Kind::Ret
            | Kind::Exit
            | Kind::Trap
            | Kind::Bar
            | Kind::Nop
            | Kind::Cvta
            | Kind::Isspacep
            | Kind::Mapa
            | Kind::StackSave
            | Kind::StackRestore
            | Kind::Alloca
            | Kind::Pack
            | Kind::Unpack
            | Kind::Shfl
            | Kind::Vote
            | Kind::Match
            | Kind::Redux
            | Kind::Activemask
            | Kind::Elect
            | Kind::WarpSync
            | Kind::Matrix
            | Kind::Texture
            | Kind::CpAsync
            | Kind::Mbarrier
            | Kind::BulkCopy
    )
}

fn signed_of(t: Ty) -> Ty {
    match t.bits() {
        8 => Ty::S8,
        16 => Ty::S16,
        32 => Ty::S32,
        _ => Ty::S64,
    }
}

fn wide(t: Ty) -> Ty {
    match t.bits() {
        8 => Ty::U16,
        16 => Ty::U32,
        _ => Ty::U64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kernel;

    /// The stride of the last register written (`%rd3` in the kernels below).
    fn last_stride(body: &str) -> Option<Stride> {
        let prog = kernel(body);
        let plan = Plan::new(&prog);
        let ifs = Ifs::new(&prog, &plan, false, &|_| false);
        let strides = lane_strides(&prog, &ifs, &|_, _| true);
        let last = prog.ops.iter().rev().find_map(|o| match o.dst {
            Dst::Reg(r, _) => Some(r as usize),
            _ => None,
        });
        strides[last.expect("a write")]
    }

    #[test]
    fn a_widened_index_of_aligned_lanes_needs_no_check_and_others_do() {
        let head = ".reg .b32 %r<6>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\n\
                    mov.u32 %r5, %tid.x;\n";
        // blockIdx.x * blockDim.x + threadIdx.x: lane 0 is a multiple of four, lanes 0..3 cannot wrap.
        let aligned = format!(
            "{head}mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmad.lo.s32 %r4, %r2, %r3, %r5;\n\
             mul.wide.s32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nret;"
        );
        assert_eq!(last_stride(&aligned), Some(Stride { stride: 4, widened: 0 }));
        // threadIdx.x + n: lane 0 may be 2^31 - 2, where the signed widening wraps between lanes.
        let offset =
            format!("{head}add.s32 %r2, %r1, %r5;\nmul.wide.s32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\nret;");
        assert_eq!(last_stride(&offset), Some(Stride { stride: 4, widened: 1 }));
    }

    /// Whole-CTA mode computes again, before each pass or at each group's entry, the registers and predicates
    /// the kernel's straight-line start writes once from parameters, `%ntid`, `%nctaid`, `%ctaid`, `%tid` and
    /// constants (those of `%tid` per group), past ranges run as masks; not those of `%clock`, written twice,
    /// under a guard, in such a range, or after the first yield point.
    #[test]
    fn registers_of_parameters_and_cta_constants_are_rematerialized() {
        let prog = kernel(
            ".reg .b32 %r<14>;\n.reg .b64 %rd<4>;\n.reg .pred %p<3>;\nld.param.u64 %rd1, [p];\n\
             ld.param.u32 %r1, [n];\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmov.u32 %r5, %tid.x;\n\
             mad.lo.s32 %r4, %r2, %r3, %r5;\nadd.s32 %r6, %r1, 1;\ncvta.to.global.u64 %rd2, %rd1;\n\
             mov.u32 %r8, %clock;\nmov.u32 %r9, %nctaid.x;\nmov.u32 %r9, 7;\nsetp.eq.u32 %p1, %r1, 0;\n\
             setp.lt.u32 %p2, %r4, %r1;\n@%p1 mov.u32 %r10, %r1;\n@%p2 bra SKIP;\nadd.s32 %r12, %r1, 2;\n\
             SKIP:\nshl.b32 %r13, %r4, 2;\nbar.sync 0;\nL:\nmov.u32 %r7, %ctaid.x;\nadd.s32 %r11, %r6, %r7;\n\
             add.s32 %r11, %r11, %r13;\nst.global.u32 [%rd2], %r11;\nst.global.u32 [%rd2+4], %r12;\nret;",
        );
        let plan = Plan::new(&prog);
        let ifs = Ifs::new(&prog, &plan, true, &|_| true);
        assert!(ifs.converted(14));
        let remat = rematerialized(&prog, &plan, &ifs);
        let mut ops: Vec<(usize, bool)> = remat.values().map(|m| (m.op, m.per_group)).collect();
        ops.sort_unstable();
        // The ops writing `%rd1`, `%r1`, `%r2`, `%r3`, `%r5` and `%r4` (per group), `%r6`, `%rd2`, `%p1`,
        // `%p2` and `%r13` (per group).
        let expected = [
            (0, false),
            (1, false),
            (2, false),
            (3, false),
            (4, true),
            (5, true),
            (6, false),
            (7, false),
            (11, false),
            (12, true),
            (16, true),
        ];
        assert_eq!(ops, expected, "{:?}", prog.ops.iter().map(|o| o.kind).collect::<Vec<_>>());
    }

    /// An address computed under a mask (`if (i < n) x = in[i]`) has its stride where the write needs no
    /// blend, and none where the lanes off the mask keep their old value.
    #[test]
    fn writes_under_a_mask_have_strides_unless_blended() {
        let prog = kernel(
            ".reg .b32 %r<6>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\nld.param.u64 %rd1, [p];\n\
             ld.param.u32 %r1, [n];\nmov.u32 %r5, %tid.x;\nsetp.ge.u32 %p1, %r5, %r1;\n@%p1 bra SKIP;\n\
             mul.wide.u32 %rd2, %r5, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r5;\nSKIP:\nret;",
        );
        let plan = Plan::new(&prog);
        let ifs = Ifs::new(&prog, &plan, true, &|_| false);
        let (add, rd3) = prog
            .ops
            .iter()
            .enumerate()
            .find_map(|(i, o)| match (o.kind, o.dst) {
                (Kind::Add, Dst::Reg(r, _)) => Some((i, r as usize)),
                _ => None,
            })
            .expect("the add");
        assert!(ifs.inside[add].is_some(), "the address is computed under the mask");
        let unblended = lane_strides(&prog, &ifs, &|_, _| false);
        assert_eq!(unblended[rd3], Some(Stride { stride: 4, widened: 0 }));
        let blended = lane_strides(&prog, &ifs, &|_, _| true);
        assert_eq!(blended[rd3], None);
    }
}
