//! The thread loop around a kernel's ops and how a thread leaves it: the prologue that resumes each thread
//! of `lo..hi` where it stopped (reloading what it needs from its homes), the stores of register homes
//! (eagerly after an op, and at a yield point with the status and resume point), a thread's exit, and the
//! errors that stop it. What makes a kernel a loop over threads; the ops themselves are lowered elsewhere.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, JumpTableData, Type, Value};
use cranelift_frontend::Variable;
use program::{Dst, Kind, Src, Sub};

use super::{advance_tid, ro, trusted, Translator, I32, I64, I8};
use crate::abi::{ctx as cx, ret, status, thread};
use crate::plan::YieldKind;

impl Translator<'_, '_> {
    pub(super) fn kernel_prologue(&mut self, lo: Value, hi: Value, first: Block) {
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

    pub(super) fn reload(&mut self, v: usize, tb: Value, off: i32) {
        let (var, ty) = self.liveness_var(v);
        let value = self.b.ins().load(ty, trusted(), tb, off);
        self.b.def_var(var, value);
    }

    /// Whether any op reads or writes the carry flag (`.cc`, `addc`, `subc`, `madc`).
    pub(super) fn uses_carry(&self) -> bool {
        self.prog.ops.iter().any(|o| o.m.cc || matches!(o.kind, Kind::Addc | Kind::Subc | Kind::Madc))
    }

    pub(super) fn init_tid_from_t(&mut self) {
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
    pub(super) fn thread_exit(&mut self) {
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

    pub(super) fn function_end(&mut self) {
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
    pub(super) fn fail(&mut self, code: u32, addr: Option<Value>, size: u32) {
        let c = self.b.ins().iconst(I32, i64::from(code));
        self.fail_with(c, addr, size);
    }

    /// [`Self::fail`] in the middle of an op's lowering: what follows goes into a fresh (unreachable) block.
    pub(super) fn fail_and_continue(&mut self, code: u32, addr: Option<Value>, size: u32) {
        self.fail(code, addr, size);
        let blk = self.b.create_block();
        self.b.switch_to_block(blk);
        self.filled = false;
    }

    /// [`Self::fail`] with an error code computed at run time (an `i32` value).
    pub(super) fn fail_with(&mut self, code: Value, addr: Option<Value>, size: u32) {
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
    pub(super) fn stop_on_error(&mut self) {
        if self.is_kernel {
            self.b.ins().return_(&[]);
        } else {
            let r = self.b.ins().iconst(I32, i64::from(ret::ERROR));
            self.b.ins().return_(&[r]);
        }
        self.filled = true;
    }

    /// Branches to a failure path when `cond` is non-zero, and continues otherwise.
    pub(super) fn fail_if(&mut self, cond: Value, code: u32, addr: Option<Value>, size: u32) {
        let bad = self.b.create_block();
        let ok = self.b.create_block();
        self.b.ins().brif(cond, bad, &[], ok, &[]);
        self.b.switch_to_block(bad);
        self.fail(code, addr, size);
        self.b.switch_to_block(ok);
        self.filled = false;
    }

    /// Stores the registers op `i` wrote into their homes when the plan says so
    /// ([`Plan::eager`](crate::plan::Plan::eager)).
    pub(super) fn store_eagerly(&mut self, i: usize) {
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
    pub(super) fn store_live(&mut self, spill: &[usize], tb: Value) {
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

    pub(super) fn lower_yield(&mut self, i: usize, k: usize) {
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
}
