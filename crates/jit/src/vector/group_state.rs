//! A group's state words and its move from group to group: the state address kept along `t`, the
//! dispatch of a group on its four threads' status and resume point (kernels with counted barriers), the
//! group's head (registers cleared, a bundle's other groups set up) and the next group's `t` and `tid`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64, I64X2};
use cranelift_codegen::ir::{Block, InstBuilder, JumpTableData, MemFlagsData, Value};
use cranelift_frontend::Variable;

use super::{ro, Dom, Reg, Vector, WIDTH};
use crate::abi::{ctx as cx, status, thread};
use crate::plan::Plan;

impl Vector<'_, '_> {
    /// The group's state words (`abi::thread`): word `k` of lane `l` at `group + k * WORD + l * 8`, so one
    /// word of the four lanes is one 32-byte vector.
    pub(super) fn group_state(&mut self) -> Value {
        self.gs_used = true;
        self.b.use_var(self.gs)
    }

    /// Sets the group's first thread, and its state words' address: kept from group to group (one add)
    /// rather than computed at each access from `t`.
    pub(super) fn set_t(&mut self, t: Value) {
        self.b.def_var(self.t, t);
        let threads = self.b.ins().load(I64, ro(), self.ctx, cx::THREADS);
        let t = self.b.ins().uextend(I64, t);
        let g = self.b.ins().ushr_imm_s(t, i64::from(thread::LANES.trailing_zeros()));
        let off = self.b.ins().imul_imm_s(g, self.group_bytes);
        let gs = self.b.ins().iadd(threads, off);
        self.b.def_var(self.gs, gs);
    }

    /// The state words `groups` groups after the current group's.
    pub(super) fn state_after(&mut self, groups: i64) -> Value {
        let gs = self.group_state();
        self.b.ins().iadd_imm_s(gs, self.group_bytes * groups)
    }

    /// Loads word `off` of the four lanes: lanes 0-1 and 2-3.
    pub(super) fn load_word(&mut self, off: i32) -> (Value, Value) {
        let gs = self.group_state();
        let fl = MemFlagsData::trusted();
        (self.b.ins().load(I64X2, fl, gs, off), self.b.ins().load(I64X2, fl, gs, off + 16))
    }

    pub(super) fn store_word(&mut self, off: i32, lo: Value, hi: Value) {
        let gs = self.group_state();
        let fl = MemFlagsData::trusted();
        self.b.ins().store(fl, lo, gs, off);
        self.b.ins().store(fl, hi, gs, off + 16);
    }

    /// The group's start: it runs here when its four threads are ready (the scalar loop's status test) at
    /// the same resume point, which it dispatches on; otherwise it is left to the scalar loop. Then the
    /// resume blocks (reload, continue after the yield point) and the finish (status done).
    pub(super) fn dispatch(&mut self, plan: &Plan, first: Block) {
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
    pub(super) fn group_head(&mut self) -> Value {
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
    pub(super) fn clear_registers(&mut self) {
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
    pub(super) fn move_to_next_group(&mut self, head: Block, reads_tid: bool) {
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
}
