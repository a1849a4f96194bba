//! Control flow: branches run as masks (loop latches, `else` jumps, converted forward branches and exits),
//! branches where a group goes on only if its lanes agree, the all-lanes version of a masked range, and the
//! guard of each other op as a lane mask.

use cranelift_codegen::ir::types::I32;
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use cranelift_frontend::Variable;
use program::{Kind, Op, Src};

use super::lane_helper::lane_helper_covers;
use super::{Cta, LanePred, Vector, R};
use crate::plan::Plan;

/// The longest range a converted branch skips that gets a second, all-lanes version
/// ([`Vector::all_lanes_ops`]).
const ALL_LANES_OPS: usize = 48;

impl Vector<'_, '_> {
    pub(super) fn lower(&mut self, i: usize) -> R {
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
    pub(super) fn within(&mut self, i: usize) -> Option<Value> {
        let r = self.ifs.inside[i].filter(|&r| self.all_lanes != Some(r))?;
        Some(self.b.use_var(self.if_masks[&r]))
    }

    /// The ops of converted branch `i`'s range (`start..end`) where they get a second version for groups
    /// whose lanes all run them: a plain forward branch's range, or a loop's body (`i` its latch), of
    /// straight-line ops (no branch, exit, call or yield point, no branch target but the first op, no range
    /// nested in it), at most [`ALL_LANES_OPS`] of them. That version runs without masks: no test of the mask
    /// at each access, no blend at each write (`stencil_1d`'s seven shared loads under `if (i < n)`,
    /// `reduce_tree`'s `if (tid < s)` step, `histogram256`'s grid-stride loop but for its last round).
    pub(super) fn all_lanes_ops(&self, i: usize) -> Option<(usize, usize)> {
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
    pub(super) fn emit_all_lanes(&mut self, branch: usize, masked: Block, plan: &Plan, runs: Option<Vec<Value>>) -> R {
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

    pub(super) fn block(&self, op: usize) -> R<Block> {
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
}
