//! The lowering of each op: branches, exits and guards, then the dispatch of the op's body to its family;
//! the ops that run through a helper for this thread (the `Alu` fallback, `cp.async`, textures and surfaces).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, StackSlotData, StackSlotKind};
use program::{Dst, Extra, Kind, Op, Src};

use super::{ro, Translator, I32, I64};
use crate::abi::{ctx as cx, error, Helper};

impl Translator<'_, '_> {
    pub(super) fn lower(&mut self, i: usize) {
        let op = &self.prog.ops[i];
        if let Some(y) = self.plan.yields.iter().position(|y| y.op as usize == i) {
            self.lower_yield(i, y);
            return;
        }
        match op.kind {
            Kind::Bra => {
                let target = self.block(op.target as usize);
                match op.guard {
                    Some((p, neg)) => {
                        let c = self.b.use_var(self.preds[p as usize]);
                        let fall = self.block(i + 1);
                        if neg {
                            self.b.ins().brif(c, fall, &[], target, &[]);
                        } else {
                            self.b.ins().brif(c, target, &[], fall, &[]);
                        }
                    }
                    None => {
                        self.b.ins().jump(target, &[]);
                    }
                }
                self.filled = true;
                return;
            }
            Kind::Ret | Kind::Exit | Kind::Trap => {
                let body = self.b.create_block();
                let fall = if op.guard.is_some() { Some(self.block(i + 1)) } else { None };
                self.guard_branch(op, body, fall);
                self.b.switch_to_block(body);
                match op.kind {
                    Kind::Trap => self.fail(error::TRAP, None, 0),
                    Kind::Exit => self.thread_exit(),
                    _ => self.function_end(),
                }
                self.filled = true;
                return;
            }
            _ => {}
        }
        let Some((p, neg)) = op.guard else {
            self.lower_body(op);
            self.store_eagerly(i);
            return;
        };
        let c = self.b.use_var(self.preds[p as usize]);
        let yes = self.b.create_block();
        let cont = self.b.create_block();
        if neg {
            self.b.ins().brif(c, cont, &[], yes, &[]);
        } else {
            self.b.ins().brif(c, yes, &[], cont, &[]);
        }
        self.b.switch_to_block(yes);
        self.filled = false;
        self.lower_body(op);
        if !self.filled {
            self.b.ins().jump(cont, &[]);
        }
        self.b.switch_to_block(cont);
        self.filled = false;
        self.store_eagerly(i);
    }

    /// Branches to `body` when the op's guard holds, else to `fall` (unguarded: always `body`).
    pub(super) fn guard_branch(&mut self, op: &Op, body: Block, fall: Option<Block>) {
        match (op.guard, fall) {
            (Some((p, neg)), Some(fall)) => {
                let c = self.b.use_var(self.preds[p as usize]);
                if neg {
                    self.b.ins().brif(c, fall, &[], body, &[]);
                } else {
                    self.b.ins().brif(c, body, &[], fall, &[]);
                }
            }
            _ => {
                self.b.ins().jump(body, &[]);
            }
        }
    }

    fn lower_body(&mut self, op: &Op) {
        match op.kind {
            Kind::Ld => self.load(op),
            Kind::St => self.store(op),
            Kind::Atom | Kind::Red => self.atomic(op),
            Kind::Atom128 => self.atomic128(op),
            Kind::Move128 => self.move128(op),
            Kind::Call => self.call(op),
            Kind::Texture => self.texture(op),
            Kind::CpAsync => self.cp_async(op),
            Kind::Mbarrier => self.mbarrier(op),
            Kind::BulkCopy => self.bulk_copy(op),
            Kind::Brx => self.brx(op),
            Kind::Bar => {
                // `bar.arrive` (a waiting barrier is a yield point).
                let a = self.read(&op.a);
                let a = self.b.ins().ireduce(I32, a);
                let bb = self.read(&op.b);
                let bb = self.b.ins().ireduce(I32, bb);
                self.helper(Helper::BarArrive, &[self.ctx, a, bb]);
            }
            Kind::Nop => {}
            Kind::Cvta => self.cvta(op),
            Kind::Isspacep => self.isspacep(op),
            Kind::Mapa => self.mapa(op),
            Kind::StackSave | Kind::StackRestore | Kind::Alloca => self.stack_op(op),
            Kind::Pack => {
                let Some(Extra::Srcs(srcs)) = op.extra.as_deref() else { return };
                let part = op.ty.bits() / srcs.len().max(1) as u32;
                let mut acc = self.b.ins().iconst(I64, 0);
                for (k, s) in srcs.iter().enumerate() {
                    let v = self.read(s);
                    let v = if part < 64 { self.b.ins().band_imm_s(v, program::mask_bits(part) as i64) } else { v };
                    let sh = part * k as u32;
                    let v = if sh > 0 && sh < 64 { self.b.ins().ishl_imm_s(v, i64::from(sh)) } else { v };
                    acc = self.b.ins().bor(acc, v);
                }
                self.write(op.dst, acc);
            }
            Kind::Unpack => {
                let Some(Extra::Dsts(dsts)) = op.extra.as_deref() else { return };
                let a = self.read(&op.a);
                let part = op.ty.bits() / dsts.len().max(1) as u32;
                for (k, d) in dsts.iter().enumerate() {
                    let sh = part * k as u32;
                    let v = if sh > 0 && sh < 64 { self.b.ins().ushr_imm_s(a, i64::from(sh)) } else { a };
                    self.write(*d, v);
                }
            }
            _ => {
                if !self.native_alu(op) {
                    self.fallback(op);
                }
            }
        }
    }

    /// Any op the emulator's lane arithmetic covers, through the `Alu` helper.
    fn fallback(&mut self, op: &Op) {
        // io = [a, b, c, d, carry, out, out2] in a stack slot of this function.
        let slot = *self.scratch.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 3))
        });
        let srcs = [op.a, op.b, op.c, op.d];
        for (k, s) in srcs.iter().enumerate() {
            let v = self.read(s);
            self.b.ins().stack_store(I64, v, slot, 8 * k as i32);
        }
        let c = self.b.use_var(self.carry);
        self.b.ins().stack_store(I64, c, slot, 32);
        let ops = self.ctx_i64(cx::OPS);
        let site = self.site();
        let opp = self.b.ins().load(I64, ro(), ops, (site * 8) as i32);
        let io = self.b.ins().stack_addr(I64, slot, 0);
        let ok = self.helper(Helper::Alu, &[opp, io]).expect("alu");
        let bad = self.b.ins().icmp_imm_s(IntCC::Equal, ok, 0);
        self.fail_if(bad, error::UNSUPPORTED, None, 0);
        let c = self.b.ins().stack_load(I64, I64, slot, 32);
        self.b.def_var(self.carry, c);
        let out = self.b.ins().stack_load(I64, I64, slot, 40);
        self.write(op.dst, out);
        if op.dst2 != Dst::None {
            let out2 = self.b.ins().stack_load(I64, I64, slot, 48);
            self.write(op.dst2, out2);
        }
    }

    /// `cp.async`, for this thread: the addresses and the number of source bytes here, the copy in the
    /// `CpAsync` helper (with the checks of `ld` and `st`).
    fn cp_async(&mut self, op: &Op) {
        let Some(Extra::Copy(c)) = op.extra.as_deref() else { return };
        let dst = self.address(op);
        let src = match c.src.base {
            Src::Sym(sym, extra) => self.symbol(sym, extra),
            ref s => self.read(s),
        };
        let src = if c.src.offset != 0 { self.b.ins().iadd_imm_s(src, c.src.offset) } else { src };
        let size = i64::from(c.size);
        let mut n = match &c.src_size {
            Some(s) => {
                let v = self.read(s);
                let v = self.b.ins().band_imm_u(v, 0xffff_ffff);
                let cap = self.b.ins().iconst(I64, size);
                self.b.ins().umin(v, cap)
            }
            None => self.b.ins().iconst(I64, size),
        };
        if let Some(p) = &c.ignore_src {
            let g = self.read(p);
            let zero = self.b.ins().iconst(I64, 0);
            n = self.b.ins().select(g, zero, n);
        }
        let size_v = self.b.ins().iconst(I64, size);
        let r = self.helper(Helper::CpAsync, &[self.ctx, dst, src, n, size_v]).expect("cp.async");
        let bad_src = self.b.ins().icmp_imm_u(IntCC::Equal, r, 1);
        self.fail_if(bad_src, error::OUT_OF_BOUNDS, Some(src), c.size);
        let bad_dst = self.b.ins().icmp_imm_u(IntCC::Equal, r, 2);
        self.fail_if(bad_dst, error::OUT_OF_BOUNDS, Some(dst), c.size);
        let misaligned = self.b.ins().icmp_imm_u(IntCC::Equal, r, 3);
        self.fail_if(misaligned, error::MISALIGNED, Some(dst), c.size);
    }

    /// A texture or surface instruction, for this thread alone: its sources, and its destinations' old
    /// values, go to a stack slot in `TexOp::operands` order; the `Texture` helper runs the emulator's
    /// semantics (`program::texture`) for this one lane and writes the results there; they are read back.
    /// (They were yield points once, resolved per warp by the runtime: 6.6 Mpixel/s.)
    fn texture(&mut self, op: &Op) {
        let Some(Extra::Texture(t)) = op.extra.as_deref() else { return };
        let (mut srcs, mut dsts) = (Vec::new(), Vec::new());
        t.operands(|s| srcs.push(*s), |d| dsts.push(*d));
        let words = (srcs.len() + dsts.len()).max(1) as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8 * words, 3));
        for (k, s) in srcs.iter().enumerate() {
            let v = self.read(s);
            self.b.ins().stack_store(I64, v, slot, 8 * k as i32);
        }
        let old = |d: &Dst| match *d {
            Dst::Reg(r, _) => Src::Reg(r),
            Dst::Pred(p) => Src::Pred(p, false),
            _ => Src::Imm(0),
        };
        for (k, d) in dsts.iter().enumerate() {
            let v = self.read(&old(d));
            self.b.ins().stack_store(I64, v, slot, 8 * (srcs.len() + k) as i32);
        }
        let ops = self.ctx_i64(cx::OPS);
        let site = self.site();
        let opp = self.b.ins().load(I64, ro(), ops, (site * 8) as i32);
        let io = self.b.ins().stack_addr(I64, slot, 0);
        let t = self.b.use_var(self.t);
        let bad = self.helper(Helper::Texture, &[self.ctx, t, opp, io]).expect("texture");
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, bad, 0);
        self.fail_if(bad, error::TEXTURE, None, 0);
        for (k, d) in dsts.iter().enumerate() {
            let v = self.b.ins().stack_load(I64, I64, slot, 8 * (srcs.len() + k) as i32);
            self.write(*d, v);
        }
    }
}
