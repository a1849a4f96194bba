//! Register homes on the vector path: the eager stores after an op, a barrier's stores with its status,
//! resume point and arrivals, in the scalar code's form for each lane, the reloads after a yield point, and
//! whole-CTA mode's cheaper forms (one home for a CTA-uniform register, values computed again instead of
//! reloaded).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};

use super::{ro, Dom, Reg, Vector, R, V, WIDTH};
use crate::abi::{ctx as cx, status, thread};
use crate::plan::Plan;

impl Vector<'_, '_> {
    /// The registers the region after yield point `k` reads before writing them, from their homes (in
    /// whole-CTA mode, those that depend on `%tid` and have none computed again).
    pub(super) fn reload_after(&mut self, plan: &Plan, k: usize) {
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
    pub(super) fn store_eagerly(&mut self, i: usize, plan: &Plan) {
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
    pub(super) fn cta_w(&self, v: usize) -> bool {
        self.cta.is_some() && (v >= self.prog.slots as usize || matches!(self.regs[v], Reg::W(_)))
    }

    /// Whole-CTA mode, before a region's group loop (once per pass of the region): the uniform registers
    /// among `reloads` (what the region reloads), from their one home each (in the CTA's first group), or
    /// computed again (with the uniform values the per-group ones read).
    pub(super) fn load_uniform_homes(&mut self, plan: &Plan, reloads: &[usize]) -> R {
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
    pub(super) fn lower_yield(&mut self, k: usize) {
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
    pub(super) fn yield_stores(&mut self, k: usize) {
        for (v, off) in self.stores_at_yield[k].clone() {
            self.store_home(v, off, None);
        }
    }
}
