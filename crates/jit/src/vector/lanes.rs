//! Constants and lane moves: splats and vector constants, the lane bits of a mask, casts between the
//! 32-bit (`i32x4`) and 64-bit (`i64x2` pairs) forms of a value, blends and the emulator's masking and
//! extension of lanes. The vocabulary the lowering of every op is written in.

use cranelift_codegen::ir::types::{I32, I32X4, I64X2, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, InstructionData, Opcode, Type, Value};
use program::{Src, Ty};

use super::{dom, le, Dom, Vector, R, V};

impl Vector<'_, '_> {
    pub(super) fn zero(&mut self, d: Dom) -> Value {
        match d {
            Dom::W => self.vconst(I32X4, &[0; 16]),
            Dom::D => self.vconst(I64X2, &[0; 16]),
        }
    }

    fn vconst(&mut self, ty: Type, bytes: &[u8]) -> Value {
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(ty, c)
    }

    pub(super) fn lanes32(&mut self, l: [u32; 4]) -> Value {
        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.vconst(I32X4, &bytes)
    }

    pub(super) fn lanes64(&mut self, l: [u64; 2]) -> Value {
        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.vconst(I64X2, &bytes)
    }

    pub(super) fn splat32(&mut self, c: u32) -> Value {
        self.lanes32([c; 4])
    }

    pub(super) fn splat64(&mut self, c: u64) -> Value {
        self.lanes64([c; 2])
    }

    /// A scalar `i64` in every lane of the domain.
    pub(super) fn splat_scalar(&mut self, v: Value, d: Dom) -> V {
        match d {
            Dom::W => {
                let n = self.b.ins().ireduce(I32, v);
                V::W(self.b.ins().splat(I32X4, n))
            }
            Dom::D => {
                let s = self.b.ins().splat(I64X2, v);
                V::D(s, s)
            }
        }
    }

    /// The lanes of an `i32x4` mask as the low four bits of an `i32` (lane `l`: bit `l`; a lane counts as set
    /// when its sign bit is, as in a mask of 0 / all ones). Bitwise combinations of masks are followed
    /// through, so a test of `not p and w` needs no vector operation besides the sign-bit moves of `p` and `w`.
    pub(super) fn lane_bits(&mut self, m: Value) -> Value {
        self.lane_bits_within(m, 4)
    }

    /// [`Vector::lane_bits`], following at most `depth` bitwise ops (a mask shared by both operands of a long
    /// chain would otherwise be visited once per path).
    fn lane_bits_within(&mut self, m: Value, depth: u32) -> Value {
        if let (Some(inst), true) = (self.b.func.dfg.value_def(m).inst(), depth > 0) {
            match self.b.func.dfg.insts[inst] {
                InstructionData::Unary { opcode: Opcode::Bnot, arg } => {
                    let b = self.lane_bits_within(arg, depth - 1);
                    return self.b.ins().bxor_imm_s(b, 0xF);
                }
                InstructionData::Binary { opcode: op @ (Opcode::Band | Opcode::Bor | Opcode::Bxor), args } => {
                    let x = self.lane_bits_within(args[0], depth - 1);
                    let y = self.lane_bits_within(args[1], depth - 1);
                    return match op {
                        Opcode::Band => self.b.ins().band(x, y),
                        Opcode::Bor => self.b.ins().bor(x, y),
                        _ => self.b.ins().bxor(x, y),
                    };
                }
                _ => {}
            }
        }
        self.b.ins().vhigh_bits(I32, m)
    }

    pub(super) fn cast(&mut self, ty: Type, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == ty {
            return v;
        }
        // A cast back: the value cast (so that an `f32x4` load stays the float op's memory operand).
        if let Some(inst) = self.b.func.dfg.value_def(v).inst() {
            if let InstructionData::LoadNoOffset { opcode: Opcode::Bitcast, arg, .. } = self.b.func.dfg.insts[inst] {
                if self.b.func.dfg.value_type(arg) == ty {
                    return arg;
                }
            }
        }
        self.b.ins().bitcast(ty, le(), v)
    }

    /// 32-bit lanes extended to 64 bits.
    pub(super) fn widen(&mut self, w: Value, signed: bool) -> (Value, Value) {
        if signed {
            (self.b.ins().swiden_low(w), self.b.ins().swiden_high(w))
        } else {
            (self.b.ins().uwiden_low(w), self.b.ins().uwiden_high(w))
        }
    }

    /// The low 32 bits of 64-bit lanes.
    pub(super) fn narrow(&mut self, lo: Value, hi: Value) -> Value {
        let a = self.cast(I8X16, lo);
        let b = self.cast(I8X16, hi);
        let mask: [u8; 16] = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
        let s = self.b.ins().shuffle(a, b, imm);
        self.cast(I32X4, s)
    }

    pub(super) fn as_w(&mut self, v: V) -> Value {
        match v {
            V::W(x) => x,
            V::D(l, h) => self.narrow(l, h),
        }
    }

    pub(super) fn as_d(&mut self, v: V, signed: bool) -> (Value, Value) {
        match v {
            V::D(l, h) => (l, h),
            V::W(x) => self.widen(x, signed),
        }
    }

    pub(super) fn in_dom(&mut self, v: V, d: Dom) -> V {
        match d {
            Dom::W => V::W(self.as_w(v)),
            Dom::D => {
                let (l, h) = self.as_d(v, false);
                V::D(l, h)
            }
        }
    }

    /// Applies `f` to each vector of the value (one for 32-bit lanes, two for 64-bit lanes).
    pub(super) fn map(&mut self, v: V, mut f: impl FnMut(&mut Self, Value) -> Value) -> V {
        match v {
            V::W(x) => V::W(f(self, x)),
            V::D(l, h) => {
                let l = f(self, l);
                V::D(l, f(self, h))
            }
        }
    }

    pub(super) fn map2(&mut self, a: V, b: V, mut f: impl FnMut(&mut Self, Value, Value) -> Value) -> V {
        match (a, b) {
            (V::W(x), V::W(y)) => V::W(f(self, x, y)),
            _ => {
                let (al, ah) = self.as_d(a, false);
                let (bl, bh) = self.as_d(b, false);
                let l = f(self, al, bl);
                V::D(l, f(self, ah, bh))
            }
        }
    }

    /// A 32-bit lane mask in the value's domain (64-bit lanes: sign-extended).
    fn mask_for(&mut self, m: Value, like: V) -> V {
        match like {
            V::W(_) => V::W(m),
            V::D(..) => {
                let (l, h) = self.widen(m, true);
                V::D(l, h)
            }
        }
    }

    /// Lanes of `x` where `m` is set, else of `y`.
    pub(super) fn select(&mut self, m: Value, x: V, y: V) -> V {
        let mm = self.mask_for(m, x);
        match (mm, x, y) {
            (V::W(m), V::W(x), V::W(y)) => {
                let m = self.cast(self.b.func.dfg.value_type(x), m);
                V::W(self.b.ins().bitselect(m, x, y))
            }
            (V::D(ml, mh), _, _) => {
                let (xl, xh) = self.as_d(x, false);
                let (yl, yh) = self.as_d(y, false);
                let l = self.b.ins().bitselect(ml, xl, yl);
                V::D(l, self.b.ins().bitselect(mh, xh, yh))
            }
            _ => x,
        }
    }

    /// A value of `ty` masked to its width (the emulator's `mask`).
    pub(super) fn mask_ty(&mut self, v: V, ty: Ty) -> V {
        self.mask_bits(v, ty.bits())
    }

    /// The low `bits` bits of every lane.
    pub(super) fn mask_bits(&mut self, v: V, bits: u32) -> V {
        match v {
            V::W(x) if bits < 32 => {
                let m = self.splat32(program::mask_bits(bits) as u32);
                V::W(self.b.ins().band(x, m))
            }
            V::D(..) if bits < 64 => {
                let m = self.splat64(program::mask_bits(bits));
                self.map(v, |me, x| me.b.ins().band(x, m))
            }
            _ => v,
        }
    }

    /// Lanes extended by `ty`'s signedness within their domain (the emulator's `Ty::extend`).
    pub(super) fn extend(&mut self, v: V, ty: Ty) -> V {
        let bits = ty.bits();
        match v {
            V::W(x) if bits < 32 && ty.is_signed() => {
                let s = i64::from(32 - bits);
                let y = self.b.ins().ishl_imm_s(x, s);
                V::W(self.b.ins().sshr_imm_s(y, s))
            }
            V::D(l, h) if bits <= 32 => {
                let w = self.narrow(l, h);
                let w = self.extend(V::W(w), ty);
                let w = self.as_w(w);
                let (l, h) = self.widen(w, ty.is_signed());
                V::D(l, h)
            }
            _ => self.mask_ty(v, ty),
        }
    }

    /// A source extended by `ty` into 64-bit lanes.
    pub(super) fn read_ext64(&mut self, s: &Src, ty: Ty) -> R<(Value, Value)> {
        let v = self.read(s, dom(ty))?;
        let v = self.extend(v, ty);
        Ok(self.as_d(v, ty.is_signed()))
    }
}
