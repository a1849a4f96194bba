//! Ops without a vector form here, lane by lane through the scalar JIT's `Alu` helper (the emulator's lane
//! semantics), a failing lane's error recorded for its thread: the fallback that keeps such kernels on the
//! vector path.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind};
use program::{Dst, Kind, Op};

use super::{ro, Dom, Vector, R, V, WIDTH};
use crate::abi::{ctx as cx, Helper};

impl Vector<'_, '_> {
    /// An arithmetic op without a vector form here: lane by lane through the emulator's lane semantics (the
    /// scalar JIT's `Alu` helper, with each lane's scratch words); where the helper refuses for an active lane,
    /// that lane's thread has the error (`exec.rs` reports it).
    pub(super) fn lane_helper(&mut self, op: &Op) -> R {
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
}

/// Ops the scalar JIT lowers natively or through the `Alu` helper (everything but memory, control, calls and
/// yield points).
pub(super) fn lane_helper_covers(op: &Op) -> bool {
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
