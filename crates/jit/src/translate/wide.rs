//! The scalar JIT's 128-bit register moves, accesses and atomics (`program::wide`): a `.b128` register is two
//! `i64` variables, low half first. (The vector path refuses kernels with `.b128` registers.)

use cranelift_codegen::ir::{types, AtomicRmwOp, InstBuilder, MemFlagsData, Value};
use program::{AtomOp, Dst, Extra, Op, Space, Sub};

use super::{flags, Translator};
use crate::abi::{ctx as cx, error};

const LOW32: i64 = 0xffff_ffff;

impl Translator<'_, '_> {
    /// `mov.b128`: the two 64-bit halves made of the source parts, then split into the destination parts
    /// (every source read before any destination is written).
    pub(super) fn move128(&mut self, op: &Op) {
        let Some(Extra::Dsts(dsts)) = op.extra.as_deref() else { return };
        let [a, b, c, d] = [op.a, op.b, op.c, op.d];
        let halves = if op.ty2.bits() == 64 {
            [self.read(&a), self.read(&b)]
        } else {
            let (a, b, c, d) = (self.read(&a), self.read(&b), self.read(&c), self.read(&d));
            [self.pair32(a, b), self.pair32(c, d)]
        };
        if op.ty.bits() == 64 {
            for (dst, v) in dsts.iter().zip(halves) {
                self.write(*dst, v);
            }
        } else {
            for (k, dst) in dsts.iter().enumerate() {
                let h = halves[k / 2];
                let v = if k % 2 == 0 { self.b.ins().band_imm_s(h, LOW32) } else { self.b.ins().ushr_imm_s(h, 32) };
                self.write(*dst, v);
            }
        }
    }

    /// `lo | hi << 32` of two 32-bit parts.
    fn pair32(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.b.ins().band_imm_s(lo, LOW32);
        let hi = self.b.ins().ishl_imm_s(hi, 32);
        self.b.ins().bor(lo, hi)
    }

    /// `ld.b128` (decoded as two halves): one 16-byte load, so that a `.relaxed`, `.acquire` or `.volatile`
    /// load is single-copy atomic as on the GPU (x86 makes aligned 16-byte vector accesses atomic on processors
    /// with AVX).
    pub(super) fn load128(&mut self, fl: MemFlagsData, addr: Value, dsts: &[Dst]) {
        let v = self.b.ins().load(types::I64X2, fl, addr, 0);
        for (k, d) in dsts.iter().enumerate().take(2) {
            let half = self.b.ins().extractlane(v, k as u8);
            self.write(*d, half);
        }
    }

    /// `st.b128`: one 16-byte store of the two halves.
    pub(super) fn store128(&mut self, addr: Value, lo: Value, hi: Value) {
        let v = self.b.ins().scalar_to_vector(types::I64X2, lo);
        let v = self.b.ins().insertlane(v, hi, 1);
        self.b.ins().store(flags(), v, addr, 0);
    }

    /// `atom.cas.b128` / `atom.exch.b128`: `lock cmpxchg16b` (Cranelift's 128-bit atomics), on shared memory
    /// too. The instruction needs a 16-byte aligned address, which is checked in every mode.
    pub(super) fn atomic128(&mut self, op: &Op) {
        let Sub::Atom(aop) = op.m.sub else { return };
        let addr = self.address(op);
        self.check_access(op, addr, 16, true);
        let low_bits = self.b.ins().band_imm_s(addr, 15);
        let reported = if op.m.space == Space::Shared {
            let sh = self.ctx_i64(cx::SHARED);
            self.b.ins().isub(addr, sh)
        } else {
            addr
        };
        self.fail_if(low_bits, error::MISALIGNED, Some(reported), 16);
        let [a, b, c, d] = [op.a, op.b, op.c, op.d].map(|s| self.read(&s));
        let first = self.b.ins().iconcat(a, b);
        let old = if aop == AtomOp::Cas {
            let new = self.b.ins().iconcat(c, d);
            self.b.ins().atomic_cas(flags(), addr, first, new)
        } else {
            self.b.ins().atomic_rmw(types::I128, flags(), AtomicRmwOp::Xchg, addr, first)
        };
        let (lo, hi) = self.b.ins().isplit(old);
        self.write(op.dst, lo);
        self.write(op.dst2, hi);
    }
}
