//! Whole-CTA mode's analyses of the program: the converted branches whose idle groups end a pass
//! ([`idle_ends`]), and the registers computed again instead of kept in a home ([`rematerialized`]). Only
//! that mode uses them (`Cta`).

use std::collections::HashMap;

use ir::SpecialReg;
use program::{Cmp, Dst, Kind, Program, Space, Src, SymAddr, Ty};

use super::ifs::Ifs;
use super::regions::successors;
use crate::plan::Plan;
use crate::uniform::Uniform;

/// Whole-CTA mode: converted branches `@p bra B` whose idle groups end their pass. `B` is a barrier or the
/// kernel's final `ret`, `p` is `setp.ge`/`setp.gt` of tid.x (a register only ever `mov`ed from it) against a
/// CTA-uniform value, or an equivalent (`@!p` of `lt`/`le`; `ne` against 0, `tid.x > 0`), so once
/// every lane of a group skips the range, every lane of every later group does (tid.x grows with the group in
/// a one-dimensional CTA; the code checks that). Every op a thread can run from a resume point to the branch
/// is a plain integer op or a branch without effects the later groups would miss: no memory access, no op
/// that may fail, no write of a register that lives across the barrier other than a uniform one (whose one
/// home the idle group stores, with the values every group would).
pub(super) fn idle_ends(prog: &Program, plan: &Plan, ifs: &Ifs, uniform: &Uniform) -> Vec<usize> {
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
pub(super) fn rematerialized(prog: &Program, plan: &Plan, ifs: &Ifs) -> HashMap<usize, Remat> {
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
pub(super) struct Remat {
    /// The op that writes it.
    pub(super) op: usize,
    /// Whether it depends on `%tid` (computed at each group's entry rather than once per pass).
    pub(super) per_group: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kernel;

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
}
