//! The group loop: the function's body, one loop over the groups (or, in whole-CTA mode, one per region
//! and pass), the blocks of the ops, and the ops emitted in order with their eager stores and all-lanes
//! versions. What drives the emission; the ops themselves are lowered elsewhere.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, JumpTableData, MemFlagsData, Value};
use cranelift_frontend::Variable;

use super::{ro, Cta, Vector, R, WIDTH};
use crate::abi::ctx as cx;
use crate::plan::Plan;

impl Vector<'_, '_> {
    pub(super) fn body(&mut self, plan: &Plan) -> R {
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
}
