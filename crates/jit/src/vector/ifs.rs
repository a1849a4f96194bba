//! If-conversion: which forward branches, `if`/`else` pairs, single-exit loops and guarded exits the vector
//! path runs as masks over the ops they skip or repeat ([`Ifs`]), and where a masked write must keep the
//! other lanes' values ([`live_around`]). A compile-time analysis of the program, apart from the emission that
//! uses it.

use std::collections::HashMap;

use program::{Kind, Op, Program};

use super::regions::stops_after_store;
use crate::plan::Plan;

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
pub(super) struct Ifs {
    /// By op: the innermost converted branch whose range holds it.
    pub(super) inside: Vec<Option<usize>>,
    /// The converted branches.
    pub(super) branches: Vec<bool>,
    /// By op: for a converted `bra END` closing an `if` range, the conditional branch of that `if`.
    pub(super) else_of: Vec<Option<usize>>,
}

impl Ifs {
    /// The branches converted: those where a group could otherwise stop after a store, or with `all`, every
    /// qualifying branch.
    /// `uniform_latch(i)`: loop latch `i` decides alike in every lane (the loop is not converted).
    pub(super) fn new(prog: &Program, plan: &Plan, all: bool, uniform_latch: &dyn Fn(usize) -> bool) -> Ifs {
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

    pub(super) fn converted(&self, i: usize) -> bool {
        self.branches.get(i).copied().unwrap_or(false)
    }

    /// Whether converted op `i` is a loop's latch.
    pub(super) fn is_latch(&self, prog: &Program, i: usize) -> bool {
        self.converted(i) && prog.ops[i].kind == Kind::Bra && (prog.ops[i].target as usize) < i
    }

    /// Where the lanes that did not run converted op `i`'s range go on: its target, after a latch, or (past
    /// the last op) nowhere, for an exit.
    pub(super) fn range_end(&self, prog: &Program, i: usize) -> usize {
        if self.is_latch(prog, i) {
            i + 1
        } else {
            range_target(prog, i)
        }
    }
}

/// Whether liveness variable `v` is live where a converted range around op `i` ends (where the lanes off the
/// mask go on, or in the `else` range: a masked write of `v` at `i` must keep their old value).
pub(super) fn live_around(ifs: &Ifs, live_at_end: &HashMap<usize, graph::BitSet>, i: usize, v: usize) -> bool {
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
