//! mbarrier operations in the thread loop: each one a call of the `Mbarrier` helper for this thread
//! (`program::mbarrier` has the semantics). A wait (`test_wait`, `try_wait`) is a yield point
//! (`plan::YieldKind::Wait`) taken only when it fails: the thread stores what is live, marks itself waiting
//! and lets the next thread run; the runtime (`exec.rs`) runs it again in the next pass over the CTA, where
//! it goes on after the wait with a false result, as a GPU's `try_wait` returns after its time limit.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{InstBuilder, StackSlotData, StackSlotKind, Value};

use super::{trusted, Translator};
use crate::abi::{ctx as cx, error, status, thread, Helper};
use program::{Op, Space, Src};

impl Translator<'_, '_> {
    /// Calls the `Mbarrier` helper for `op` and fails the thread where it reports an error; returns the
    /// result (token, wait result or count) and the object's address.
    fn mbarrier_call(&mut self, op: &Op) -> (Value, Value) {
        let slot = *self.scratch.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 3))
        });
        let addr = if op.mem.base == Src::None { self.b.ins().iconst(I64, 0) } else { self.address(op) };
        let a = self.read(&op.a);
        let ops = self.ctx_i64(cx::OPS);
        let site = self.site();
        let opp = self.b.ins().load(I64, super::ro(), ops, (site * 8) as i32);
        let out = self.b.ins().stack_addr(I64, slot, 40);
        let r = self.helper(Helper::Mbarrier, &[self.ctx, opp, addr, a, out]).expect("mbarrier");
        let failed = self.b.ins().icmp_imm_u(IntCC::Equal, r, 1);
        self.fail_if(failed, error::HELPER, None, 0);
        // Out-of-bounds and misaligned objects are reported as shared accesses, by their offset.
        let offset = if op.m.space == Space::Shared {
            let sh = self.ctx_i64(cx::SHARED);
            self.b.ins().isub(addr, sh)
        } else {
            addr
        };
        let outside = self.b.ins().icmp_imm_u(IntCC::Equal, r, 2);
        self.fail_if(outside, error::OUT_OF_BOUNDS, Some(offset), 8);
        let misaligned = self.b.ins().icmp_imm_u(IntCC::Equal, r, 3);
        self.fail_if(misaligned, error::MISALIGNED, Some(offset), 8);
        (self.b.ins().stack_load(I64, I64, slot, 40), addr)
    }

    /// An mbarrier operation other than a wait.
    pub(super) fn mbarrier(&mut self, op: &Op) {
        let (v, _) = self.mbarrier_call(op);
        self.write(op.dst, v);
    }

    /// Yield point `k`, the wait at op `i`: the live registers are stored first (so their homes are clean
    /// on both paths, as the plan's clean-register analysis assumes after a yield point), then the wait runs;
    /// success reloads them, writes true and goes on, failure stops the thread with status `WAIT`.
    pub(super) fn lower_wait(&mut self, i: usize, k: usize) {
        let op = &self.prog.ops[i];
        let y = &self.plan.yields[k];
        let body = self.b.create_block();
        let fall = self.block(i + 1);
        self.guard_branch(op, body, op.guard.map(|_| fall));
        self.b.switch_to_block(body);
        self.filled = false;
        let tb = self.b.use_var(self.tb);
        self.store_live(&y.spill, tb);
        let (done, addr) = self.mbarrier_call(op);
        let passed = self.b.create_block();
        let stop = self.b.create_block();
        self.b.ins().brif(done, passed, &[], stop, &[]);
        self.b.switch_to_block(passed);
        // The plan's reload sets assume the thread stopped here: a register live after the wait but not read
        // before the next yield point was not reloaded at the last resume, and its variable may hold another
        // thread's value. Every live register's home is exact after the stores above.
        let tb = self.b.use_var(self.tb);
        for &v in &y.live {
            let off = self.plan.home_offset(v).expect("live registers have homes");
            self.reload(v, tb, off);
        }
        if self.uses_carry() {
            let c = self.b.ins().load(I64, trusted(), tb, self.plan.carry_offset());
            self.b.def_var(self.carry, c);
        }
        let one = self.b.ins().iconst(I64, 1);
        self.write(op.dst, one);
        self.b.ins().jump(fall, &[]);
        self.b.switch_to_block(stop);
        let tb = self.b.use_var(self.tb);
        self.b.ins().store(trusted(), addr, tb, self.plan.exchange_offset() + thread::POST_A);
        let word = i64::from(status::WAIT) | (k as i64 + 1) << 32;
        let w = self.b.ins().iconst(I64, word);
        self.b.ins().store(trusted(), w, tb, thread::STATUS);
        let next = self.next_thread.expect("yield points only in kernels");
        self.b.ins().jump(next, &[]);
        self.filled = true;
    }

    /// A bulk copy or reduction (tensor copies too), for this thread: its addresses and coordinates here, the
    /// copy in the `BulkCopy` helper.
    pub(super) fn bulk_copy(&mut self, op: &Op) {
        let Some(program::Extra::Bulk(bulk)) = op.extra.as_deref() else { return };
        // io = [dst, src, size, mbar], then a tensor copy's coordinates, or the values st.async / red.async
        // store (the op's a..d).
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 72, 3));
        let dst = self.address(op);
        let mbar = match &bulk.mbar {
            Some(m) => self.address_of(m, Space::Shared),
            None => self.b.ins().iconst(I64, 0),
        };
        let words: Vec<Value> = if bulk.stored > 0 {
            let zero = self.b.ins().iconst(I64, 0);
            let mut w = vec![dst, zero, zero, mbar];
            for s in [&op.a, &op.b, &op.c, &op.d].into_iter().take(bulk.stored as usize) {
                w.push(self.read(s));
            }
            w
        } else {
            let src = self.address_of(&bulk.src, bulk.src_space);
            let size = if op.a == Src::None { self.b.ins().iconst(I64, 0) } else { self.read(&op.a) };
            let coords: Vec<Value> = bulk.tensor.iter().flat_map(|t| t.coords.iter()).map(|c| self.read(c)).collect();
            [dst, src, size, mbar].into_iter().chain(coords).collect()
        };
        for (k, v) in words.into_iter().enumerate() {
            self.b.ins().stack_store(I64, v, slot, 8 * k as i32);
        }
        let ops = self.ctx_i64(cx::OPS);
        let site = self.site();
        let opp = self.b.ins().load(I64, super::ro(), ops, (site * 8) as i32);
        let io = self.b.ins().stack_addr(I64, slot, 0);
        let r = self.helper(Helper::BulkCopy, &[self.ctx, opp, io]).expect("bulk copy");
        let failed = self.b.ins().icmp_imm_u(IntCC::NotEqual, r, 0);
        self.fail_if(failed, error::TEXTURE, None, 0);
    }

    /// On resume after a failed wait: its result is false.
    pub(super) fn resume_wait(&mut self, op: &Op) {
        let zero = self.b.ins().iconst(I64, 0);
        self.write(op.dst, zero);
    }
}
