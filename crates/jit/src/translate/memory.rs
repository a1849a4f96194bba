//! Memory: the host address of an operand, checked mode's bounds checks, loads and stores as the emulator
//! extends them, atomics (native, compare-and-swap loops, or the emulator's semantics), `cvta` and
//! `isspacep`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use program::{AtomOp, Dst, Extra, Kind, Op, Space, Src, Sub, SymAddr, Ty};

use super::{flags, native_rmw, ro, Translator, TyExt, I32, I64, I8};
use crate::abi::{ctx as cx, error, Helper};

impl Translator<'_, '_> {
    pub(super) fn address(&mut self, op: &Op) -> Value {
        self.address_of(&op.mem, op.m.space)
    }

    /// The host address of memory operand `mem` in `space`.
    pub(super) fn address_of(&mut self, mem: &program::MemRef, space: Space) -> Value {
        let base = match mem.base {
            Src::Sym(SymAddr::Shared(o), extra) => {
                let sh = self.ctx_i64(cx::SHARED);
                return self.b.ins().iadd_imm_s(sh, o as i64 + extra + mem.offset);
            }
            Src::Sym(sym, extra) => self.symbol(sym, extra),
            ref s => self.read(s),
        };
        let a = if mem.offset != 0 { self.b.ins().iadd_imm_s(base, mem.offset) } else { base };
        if space == Space::Shared {
            let sh = self.ctx_i64(cx::SHARED);
            self.b.ins().iadd(sh, a)
        } else {
            a
        }
    }

    /// Checked mode: the access must lie inside its memory.
    pub(super) fn check_access(&mut self, op: &Op, addr: Value, size: u32, write: bool) {
        if !self.env.check {
            return;
        }
        match op.m.space {
            Space::Shared => {
                let sh = self.ctx_i64(cx::SHARED);
                let len = self.ctx_i64(cx::SHARED_SIZE);
                let off = self.b.ins().isub(addr, sh);
                let end = self.b.ins().iadd_imm_s(off, i64::from(size));
                let bad1 = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, len);
                let bad2 = self.b.ins().icmp(IntCC::UnsignedLessThan, end, off);
                let bad = self.b.ins().bor(bad1, bad2);
                let shared_off = off;
                self.fail_if(bad, error::OUT_OF_BOUNDS, Some(shared_off), size);
            }
            Space::Local => {
                // The current function's frame: [frame, frame + frame size), or what is allocated of the
                // thread's dynamic stack.
                let frame = self.b.use_var(self.frame);
                let off = self.b.ins().isub(addr, frame);
                let end = self.b.ins().iadd_imm_s(off, i64::from(size));
                let bad1 = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThan, end, self.prog.frame.size as i64);
                let bad2 = self.b.ins().icmp(IntCC::UnsignedLessThan, end, off);
                let mut bad = self.b.ins().bor(bad1, bad2);
                if let Some(outside) = self.outside_dyn_stack(addr, size) {
                    bad = self.b.ins().band(bad, outside);
                }
                self.fail_if(bad, error::OUT_OF_BOUNDS, Some(off), size);
            }
            Space::Param => {}
            _ => {
                let sz = self.b.ins().iconst(I32, i64::from(size));
                let w = self.b.ins().iconst(I32, i64::from(write));
                let r = self.helper(Helper::CheckAccess, &[self.ctx, addr, sz, w]).expect("check");
                // The helper's code: 0 ok, else an error code.
                let bad = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let blk_bad = self.b.create_block();
                let ok = self.b.create_block();
                self.b.ins().brif(bad, blk_bad, &[], ok, &[]);
                self.b.switch_to_block(blk_bad);
                self.fail_with(r, Some(addr), size);
                self.b.switch_to_block(ok);
                self.filled = false;
            }
        }
    }

    fn mem_type(bytes: u32) -> Type {
        match bytes {
            1 => types::I8,
            2 => types::I16,
            4 => I32,
            _ => I64,
        }
    }

    pub(super) fn load_value(&mut self, addr: Value, off: i32, ty: Ty) -> Value {
        self.load_with(flags(), addr, off, ty)
    }

    fn load_with(&mut self, flags: MemFlagsData, addr: Value, off: i32, ty: Ty) -> Value {
        // Floats load into float registers; the bits form folds away when the value feeds float ops.
        match ty {
            Ty::F32 => {
                let f = self.b.ins().load(types::F32, flags, addr, off);
                return self.bits_of_f32(f);
            }
            Ty::F64 => {
                let f = self.b.ins().load(types::F64, flags, addr, off);
                return self.bits_of_f64(f);
            }
            _ => {}
        }
        let bytes = ty.bytes();
        if bytes == 8 {
            return self.b.ins().load(I64, flags, addr, off);
        }
        let mt = Self::mem_type(bytes);
        if flags.readonly() && flags.can_move() {
            // Cranelift hoists a movable `load` out of loops, not an extending load: load narrow, then extend.
            let v = self.b.ins().load(mt, flags, addr, off);
            return if ty.is_signed() { self.b.ins().sextend(I64, v) } else { self.b.ins().uextend(I64, v) };
        }
        if ty.is_signed() {
            match mt {
                types::I8 => self.b.ins().sload8(I64, flags, addr, off),
                types::I16 => self.b.ins().sload16(I64, flags, addr, off),
                _ => self.b.ins().sload32(flags, addr, off),
            }
        } else {
            match mt {
                types::I8 => self.b.ins().uload8(I64, flags, addr, off),
                types::I16 => self.b.ins().uload16(I64, flags, addr, off),
                _ => self.b.ins().uload32(flags, addr, off),
            }
        }
    }

    pub(super) fn store_value(&mut self, v: Value, addr: Value, off: i32, bytes: u32) {
        match bytes {
            1 => self.b.ins().istore8(flags(), v, addr, off),
            2 => self.b.ins().istore16(flags(), v, addr, off),
            4 => self.b.ins().istore32(flags(), v, addr, off),
            _ => self.b.ins().store(flags(), v, addr, off),
        };
    }

    pub(super) fn load(&mut self, op: &Op) {
        let addr = self.address(op);
        let elem = op.ty.bytes();
        let dsts: Vec<Dst> = match op.extra.as_deref() {
            Some(Extra::Dsts(d)) => d.to_vec(),
            _ => vec![op.dst],
        };
        self.check_access(op, addr, elem * dsts.len() as u32, false);
        // Kernel parameters and constant memory do not change while the kernel runs.
        let kernel_param = self.is_kernel && matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _));
        let fl = if kernel_param {
            ro()
        } else if op.m.space == Space::Const {
            flags().with_readonly()
        } else {
            flags()
        };
        if op.m.b128 {
            return self.load128(fl, addr, &dsts);
        }
        for (k, d) in dsts.iter().enumerate() {
            let v = self.load_with(fl, addr, (elem as usize * k) as i32, op.ty);
            if k == 0 && self.env.spin_sites.contains(&self.site()) {
                // A grid barrier's poll (`cooperative.rs`): the helper sees what it read.
                let stop = self.helper(Helper::GridSpin, &[self.ctx, addr, v]).expect("grid spin");
                let stop = self.b.ins().icmp_imm_u(IntCC::NotEqual, stop, 0);
                self.fail_if(stop, error::HELPER, None, 0);
            }
            self.write(*d, v);
        }
    }

    pub(super) fn store(&mut self, op: &Op) {
        let addr = self.address(op);
        let elem = op.ty.bytes();
        let srcs: Vec<Src> = match op.extra.as_deref() {
            Some(Extra::Srcs(s)) => s.to_vec(),
            _ => vec![op.a],
        };
        if self.env.check && op.m.space == Space::Const {
            self.fail_and_continue(error::READ_ONLY, Some(addr), elem);
            return;
        }
        self.check_access(op, addr, elem * srcs.len() as u32, true);
        if let (true, [lo, hi]) = (op.m.b128, &srcs[..]) {
            let (lo, hi) = (self.read(lo), self.read(hi));
            return self.store128(addr, lo, hi);
        }
        for (k, s) in srcs.iter().enumerate() {
            let v = self.read(s);
            let off = (elem as usize * k) as i32;
            match op.ty {
                Ty::F32 => {
                    let f = self.f32_of(v);
                    self.b.ins().store(flags(), f, addr, off);
                }
                Ty::F64 => {
                    let f = self.f64_of(v);
                    self.b.ins().store(flags(), f, addr, off);
                }
                _ => self.store_value(v, addr, off, elem),
            }
        }
    }

    pub(super) fn atomic(&mut self, op: &Op) {
        if op.m.vec > 0 {
            return self.atomic_vector(op);
        }
        let addr = self.address(op);
        self.check_access(op, addr, op.ty.bytes(), true);
        let a = self.read(&op.a);
        let bv = self.read(&op.b);
        let old = self.atomic_element(op, addr, a, bv);
        if op.kind == Kind::Atom {
            let v = self.extend(old, op.ty);
            self.write(op.dst, v);
        }
    }

    /// One atomic of `op`'s type at host address `addr`: its old value.
    pub(super) fn atomic_element(&mut self, op: &Op, addr: Value, a: Value, bv: Value) -> Value {
        let Sub::Atom(aop) = op.m.sub else { return a };
        let elem = op.ty.bytes();
        let mt = Self::mem_type(elem);
        let shared = op.m.space == Space::Shared;
        let rmw = native_rmw(aop, op.ty);
        let narrow = |me: &mut Self, v: Value| if mt == I64 { v } else { me.b.ins().ireduce(mt, v) };
        let widen = |me: &mut Self, v: Value| if mt == I64 { v } else { me.b.ins().uextend(I64, v) };
        if elem == 1 || shared {
            // A CTA's shared memory belongs to one worker thread: no other thread can race (and the ISA has
            // no 8-bit atomics). 16-bit global ones (`cas.b16`, `.f16`/`.bf16` add, min, max) are real atomics:
            // other CTAs run on other workers.
            self.atomic_plain(op, addr, a, bv)
        } else if let Some(r) = rmw {
            let x = narrow(self, a);
            let old = self.b.ins().atomic_rmw(mt, flags(), r, addr, x);
            widen(self, old)
        } else if aop == AtomOp::Cas {
            let (e, x) = (narrow(self, a), narrow(self, bv));
            let old = self.b.ins().atomic_cas(flags(), addr, e, x);
            widen(self, old)
        } else {
            self.atomic_cas_loop(op, mt, addr, a, bv)
        }
    }

    /// The new value of an atomic from the old one: inline for float add, else the emulator's semantics.
    fn atomic_new(&mut self, op: &Op, old: Value, a: Value, b: Value) -> Value {
        match (op.m.sub, op.ty) {
            (Sub::Atom(AtomOp::Add), Ty::F32) => {
                let x = self.f32_of(old);
                let y = self.f32_of(a);
                let s = self.b.ins().fadd(x, y);
                self.bits_of_f32(s)
            }
            (Sub::Atom(AtomOp::Add), Ty::F64) => {
                let x = self.f64_of(old);
                let y = self.f64_of(a);
                let s = self.b.ins().fadd(x, y);
                self.bits_of_f64(s)
            }
            _ => {
                let ops = self.ctx_i64(cx::OPS);
                let site = self.site();
                let opp = self.b.ins().load(I64, ro(), ops, (site * 8) as i32);
                self.helper(Helper::AtomicNew, &[opp, old, a, b]).expect("atomic")
            }
        }
    }

    fn atomic_plain(&mut self, op: &Op, addr: Value, a: Value, b: Value) -> Value {
        let elem = op.ty.bytes();
        let old = self.load_value(addr, 0, if op.ty.is_signed() { Ty::from_bits_unsigned(elem) } else { op.ty });
        let old = self.mask(old, op.ty);
        let new = match (op.m.sub, op.ty.is_float()) {
            (Sub::Atom(AtomOp::Add), false) => self.b.ins().iadd(old, a),
            (Sub::Atom(AtomOp::And), _) => self.b.ins().band(old, a),
            (Sub::Atom(AtomOp::Or), _) => self.b.ins().bor(old, a),
            (Sub::Atom(AtomOp::Xor), _) => self.b.ins().bxor(old, a),
            (Sub::Atom(AtomOp::Exch), _) => a,
            _ => self.atomic_new(op, old, a, b),
        };
        self.store_value(new, addr, 0, elem);
        old
    }

    fn atomic_cas_loop(&mut self, op: &Op, mt: Type, addr: Value, a: Value, b: Value) -> Value {
        let head = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, I64);
        let cur0 = self.b.ins().load(mt, flags(), addr, 0);
        self.b.append_block_param(head, mt);
        self.b.ins().jump(head, &[cur0.into()]);
        self.b.switch_to_block(head);
        let cur = self.b.block_params(head)[0];
        let old = if mt == I64 { cur } else { self.b.ins().uextend(I64, cur) };
        let new = self.atomic_new(op, old, a, b);
        let new = if mt == I64 { new } else { self.b.ins().ireduce(mt, new) };
        let seen = self.b.ins().atomic_cas(flags(), addr, cur, new);
        let same = self.b.ins().icmp(IntCC::Equal, seen, cur);
        self.b.ins().brif(same, done, &[old.into()], head, &[seen.into()]);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    pub(super) fn cvta(&mut self, op: &Op) {
        let a = self.read(&op.a);
        let to = matches!(op.m.sub, Sub::Cvta { to: true });
        let v = if op.m.space == Space::Shared {
            let sh = self.ctx_i64(cx::SHARED);
            if to {
                self.b.ins().isub(a, sh)
            } else {
                self.b.ins().iadd(a, sh)
            }
        } else {
            // Global, local and parameter addresses are host addresses in every space.
            a
        };
        let v = self.mask(v, op.ty);
        self.write(op.dst, v);
    }

    pub(super) fn isspacep(&mut self, op: &Op) {
        let a = self.read(&op.a);
        let in_range = |me: &mut Self, base: Value, len: Value| {
            let off = me.b.ins().isub(a, base);
            me.b.ins().icmp(IntCC::UnsignedLessThan, off, len)
        };
        let sh = self.ctx_i64(cx::SHARED);
        let shl = self.ctx_i64(cx::SHARED_SIZE);
        let is_shared = in_range(self, sh, shl);
        let base = self.local_base();
        let len = self.ctx_i64(cx::LOCAL_STRIDE);
        let is_local = in_range(self, base, len);
        let r = match op.m.space {
            Space::Shared => is_shared,
            Space::Local => is_local,
            Space::Param => {
                let p = self.ctx_i64(cx::PARAMS);
                let len = self.b.ins().iconst(I64, 4096);
                in_range(self, p, len)
            }
            space => {
                let only_const = self.b.ins().iconst(I32, i64::from(space == Space::Const));
                let r = self.helper(Helper::IsGlobal, &[self.ctx, a, only_const]).expect("isspacep");
                self.b.ins().ireduce(I8, r)
            }
        };
        self.write_bool(op.dst, r);
    }
}
