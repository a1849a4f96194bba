//! The regions between resume points (the kernel's start, the op after each yield point): where a group may
//! stop and whether a store of its region can have run by then ([`stops_after_store`]: the scalar loop reruns
//! a stopped group from the region's start), and the eager home stores moved to the yield points
//! ([`Deferred`]). Analyses of the program, before any code is emitted.

use std::collections::HashMap;

use ir::SpecialReg;
use program::{Kind, Op, Program, Src};

use super::ifs::Ifs;
use crate::plan::Plan;

/// Ops where a group may stop: where its lanes may disagree on the path (not at branches run as masks,
/// [`Ifs`]).
fn may_stop(op: &Op, i: usize, ifs: &Ifs) -> bool {
    (op.guard.is_some() && matches!(op.kind, Kind::Bra | Kind::Ret | Kind::Exit) && !ifs.converted(i))
        || op.kind == Kind::Brx
}

/// Eager home stores (`Plan::eager`) the vector path moves to the yield points: those of registers that a
/// region containing the op reloads at its start. A group that stops in the region is rerun from the homes
/// it started with; the stores at a yield point happen only when the group completes its region. Each lane's
/// homes after a yield point are the scalar code's: the register holds at the yield point what the eager
/// store would have written, or a newer value the scalar code spills there.
pub(super) struct Deferred {
    /// By op: the registers whose eager store is deferred.
    pub(super) at: Vec<Vec<usize>>,
    /// By yield point: the registers to store besides `spill`, and the registers to reload after it
    /// (`reload`, and what the region stores before writing it).
    pub(super) store: Vec<Vec<usize>>,
    pub(super) reload: Vec<Vec<usize>>,
    /// By resume point (0: the kernel's start, `k + 1`: after yield point `k`): whether the region from it
    /// to the next yield points reads `%tid`.
    pub(super) reads_tid: Vec<bool>,
    /// By resume point: the ops of its region (those reached before the next yield points, these included).
    pub(super) ops: Vec<Vec<bool>>,
}

impl Deferred {
    pub(super) fn new(prog: &Program, plan: &Plan) -> Deferred {
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

pub(super) fn writes_memory(op: &Op) -> bool {
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

pub(super) fn successors(prog: &Program, i: usize, ifs: &Ifs, mut f: impl FnMut(usize)) {
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
pub(super) fn stop_after_store(prog: &Program, plan: &Plan, ifs: &Ifs) -> Option<usize> {
    stops_after_store(prog, plan, ifs).into_iter().min()
}

/// Every op where a group could stop after a store of its region ([`stop_after_store`]).
pub(super) fn stops_after_store(prog: &Program, plan: &Plan, ifs: &Ifs) -> Vec<usize> {
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
