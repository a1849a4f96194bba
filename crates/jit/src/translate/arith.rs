//! Native arithmetic: integer, logic, comparison, float and `cvt` lowerings where Cranelift has an exact
//! form, each returning `false` (or `None`) to leave the op to the `Alu` helper.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use program::{BoolOp, Cmp, Dst, Kind, Op, Part, Rnd, Ty};

use super::{int_cc, Translator, TyExt, I32, I64};

impl Translator<'_, '_> {
    /// Native lowering of the common arithmetic; `false` leaves the op to the helper.
    pub(super) fn native_alu(&mut self, op: &Op) -> bool {
        let ty = op.ty;
        let m = &op.m;
        if ty.is_float() && !matches!(op.kind, Kind::Mov | Kind::Cvt | Kind::Setp | Kind::Set | Kind::Selp | Kind::Slct)
        {
            return self.native_float(op);
        }
        if ty == Ty::B128 || ty == Ty::Other {
            return false;
        }
        let bits = ty.bits().min(64);
        match op.kind {
            Kind::Add | Kind::Sub if !m.cc && !m.sat => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let r = if op.kind == Kind::Add { self.b.ins().iadd(a, b) } else { self.b.ins().isub(a, b) };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Mul | Kind::Mad if !m.cc && !m.sat => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let (prod, wide) = match m.part {
                    Part::Lo => (self.b.ins().imul(a, b), false),
                    Part::Wide if bits <= 32 => {
                        let x = self.extend(a, ty);
                        let y = self.extend(b, ty);
                        (self.b.ins().imul(x, y), true)
                    }
                    Part::Hi if bits == 32 => {
                        let x = self.extend(a, ty);
                        let y = self.extend(b, ty);
                        let p = self.b.ins().imul(x, y);
                        let h = if ty.is_signed() {
                            self.b.ins().sshr_imm_s(p, 32)
                        } else {
                            self.b.ins().ushr_imm_s(p, 32)
                        };
                        (h, false)
                    }
                    Part::Hi if bits == 64 => {
                        let h = if ty.is_signed() { self.b.ins().smulhi(a, b) } else { self.b.ins().umulhi(a, b) };
                        (h, false)
                    }
                    _ => return false,
                };
                let r = if op.kind == Kind::Mad {
                    let c = self.read(&op.c);
                    self.b.ins().iadd(prod, c)
                } else {
                    prod
                };
                let r = if wide { self.mask(r, Ty::wide(ty)) } else { self.mask(r, ty) };
                self.write(op.dst, r);
            }
            Kind::Div | Kind::Rem if matches!(bits, 8 | 16 | 32 | 64) => {
                // The emulator's rules: `a / 0` is all ones, `a % 0` is `a`, `MIN / -1` wraps to MIN and
                // `MIN % -1` is 0. The divisor is made safe first, so the native division never traps.
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                let one = self.b.ins().iconst(I64, 1);
                let y = self.b.ins().select(zero, one, y);
                let signed = ty.is_signed();
                // Only 64-bit MIN / -1 overflows: narrower values are sign-extended into 64 bits.
                let minus1 = if signed && bits == 64 {
                    let m = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                    Some(m)
                } else {
                    None
                };
                let y = match minus1 {
                    Some(m) => self.b.ins().select(m, one, y),
                    None => y,
                };
                let r = match (op.kind, signed) {
                    (Kind::Div, true) => self.b.ins().sdiv(x, y),
                    (Kind::Div, false) => self.b.ins().udiv(x, y),
                    (_, true) => self.b.ins().srem(x, y),
                    (_, false) => self.b.ins().urem(x, y),
                };
                let r = match (minus1, op.kind) {
                    (Some(m), Kind::Div) => {
                        let neg = self.b.ins().ineg(x);
                        self.b.ins().select(m, neg, r)
                    }
                    (Some(m), _) => {
                        let z = self.b.ins().iconst(I64, 0);
                        self.b.ins().select(m, z, r)
                    }
                    (None, _) => r,
                };
                let by_zero =
                    if op.kind == Kind::Div { self.b.ins().iconst(I64, ty.mask() as i64) } else { self.mask(a, ty) };
                let r = self.b.ins().select(zero, by_zero, r);
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Abs | Kind::Neg if !ty.is_float() => {
                let a = self.read(&op.a);
                let x = self.extend(a, if ty.is_signed() { ty } else { Ty::signed_of(ty) });
                let r = if op.kind == Kind::Abs { self.b.ins().iabs(x) } else { self.b.ins().ineg(x) };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Min | Kind::Max if !m.relu => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                let r = match (op.kind, ty.is_signed()) {
                    (Kind::Min, true) => self.b.ins().smin(x, y),
                    (Kind::Min, false) => self.b.ins().umin(x, y),
                    (_, true) => self.b.ins().smax(x, y),
                    (_, false) => self.b.ins().umax(x, y),
                };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::And | Kind::Or | Kind::Xor => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let r = match op.kind {
                    Kind::And => self.b.ins().band(a, b),
                    Kind::Or => self.b.ins().bor(a, b),
                    _ => self.b.ins().bxor(a, b),
                };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Not => {
                let a = self.read(&op.a);
                let r = self.b.ins().bnot(a);
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Shl | Kind::Shr => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let amt = self.b.ins().band_imm_s(b, 0xFFFF_FFFF);
                let big = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, amt, i64::from(bits));
                let r = if op.kind == Kind::Shl {
                    let s = self.b.ins().ishl(a, amt);
                    let zero = self.b.ins().iconst(I64, 0);
                    self.b.ins().select(big, zero, s)
                } else if ty.is_signed() {
                    let x = self.extend(a, ty);
                    let clamped = self.b.ins().iconst(I64, 63);
                    let amt = self.b.ins().select(big, clamped, amt);
                    self.b.ins().sshr(x, amt)
                } else {
                    let x = self.mask(a, ty);
                    let s = self.b.ins().ushr(x, amt);
                    let zero = self.b.ins().iconst(I64, 0);
                    self.b.ins().select(big, zero, s)
                };
                let r = self.mask(r, ty);
                self.write(op.dst, r);
            }
            Kind::Popc => {
                let a = self.read(&op.a);
                let x = self.mask(a, ty);
                let r = self.b.ins().popcnt(x);
                self.write(op.dst, r);
            }
            Kind::Clz if bits == 32 || bits == 64 => {
                let a = self.read(&op.a);
                let r = if bits == 32 {
                    let x = self.b.ins().ireduce(I32, a);
                    let c = self.b.ins().clz(x);
                    self.b.ins().uextend(I64, c)
                } else {
                    self.b.ins().clz(a)
                };
                self.write(op.dst, r);
            }
            Kind::Brev if bits == 32 || bits == 64 => {
                let a = self.read(&op.a);
                let r = if bits == 32 {
                    let x = self.b.ins().ireduce(I32, a);
                    let c = self.b.ins().bitrev(x);
                    self.b.ins().uextend(I64, c)
                } else {
                    self.b.ins().bitrev(a)
                };
                self.write(op.dst, r);
            }
            Kind::Setp => {
                let Some(r) = self.compare(op) else { return false };
                let c = op.m.boolop.map(|_| self.read_pred(&op.c));
                let nr = self.b.ins().bxor_imm_s(r, 1);
                let (p, q) = match (op.m.boolop, c) {
                    (Some(bo), Some(c)) => (self.bool_op(bo, r, c), self.bool_op(bo, nr, c)),
                    _ => (r, nr),
                };
                self.write_bool(op.dst, p);
                if op.dst2 != Dst::None {
                    self.write_bool(op.dst2, q);
                }
            }
            Kind::Selp => {
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let c = self.read_pred(&op.c);
                let r = self.b.ins().select(c, a, b);
                self.write(op.dst, r);
            }
            Kind::Mov => {
                let a = self.read(&op.a);
                let r = if ty == Ty::Pred { a } else { self.mask(a, ty) };
                self.write(op.dst, r);
            }
            Kind::Cvt => return self.cvt(op),
            _ => return false,
        }
        true
    }

    fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    /// `a cmp b` as an `i8` 0/1, or `None` to leave the op to the helper.
    fn compare(&mut self, op: &Op) -> Option<Value> {
        let ty = op.ty;
        let cmp = op.m.cmp.unwrap_or(Cmp::Eq);
        match ty {
            Ty::F32 | Ty::F64 => {
                let cc = match cmp {
                    Cmp::Eq => FloatCC::Equal,
                    Cmp::Ne => FloatCC::OrderedNotEqual,
                    Cmp::Lt => FloatCC::LessThan,
                    Cmp::Le => FloatCC::LessThanOrEqual,
                    Cmp::Gt => FloatCC::GreaterThan,
                    Cmp::Ge => FloatCC::GreaterThanOrEqual,
                    Cmp::Equ => FloatCC::UnorderedOrEqual,
                    Cmp::Neu => FloatCC::NotEqual,
                    Cmp::Ltu => FloatCC::UnorderedOrLessThan,
                    Cmp::Leu => FloatCC::UnorderedOrLessThanOrEqual,
                    Cmp::Gtu => FloatCC::UnorderedOrGreaterThan,
                    Cmp::Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
                    Cmp::Num => FloatCC::Ordered,
                    Cmp::Nan => FloatCC::Unordered,
                    _ => return None,
                };
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let (x, y) = if ty == Ty::F32 {
                    let x = self.f32_of(a);
                    let y = self.f32_of(b);
                    if op.m.ftz {
                        (self.flush(x), self.flush(y))
                    } else {
                        (x, y)
                    }
                } else {
                    (self.f64_of(a), self.f64_of(b))
                };
                Some(self.b.ins().fcmp(cc, x, y))
            }
            _ if !ty.is_float() && ty != Ty::Pred && ty.bits() <= 64 => {
                let cc = int_cc(cmp, ty.is_signed())?;
                let a = self.read(&op.a);
                let b = self.read(&op.b);
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                Some(self.b.ins().icmp(cc, x, y))
            }
            _ => None,
        }
    }

    /// Flushes an f32 subnormal to a zero of the same sign (`.ftz`).
    fn flush(&mut self, x: Value) -> Value {
        let bits = self.b.ins().bitcast(I32, MemFlagsData::new(), x);
        let exp = self.b.ins().band_imm_s(bits, 0x7F80_0000);
        let sub = self.b.ins().icmp_imm_s(IntCC::Equal, exp, 0);
        let sign = self.b.ins().band_imm_s(bits, 0x8000_0000u32 as i32 as i64);
        let r = self.b.ins().select(sub, sign, bits);
        self.b.ins().bitcast(types::F32, MemFlagsData::new(), r)
    }

    fn native_float(&mut self, op: &Op) -> bool {
        let m = &op.m;
        let f32_ = match op.ty {
            Ty::F32 => true,
            Ty::F64 => false,
            _ => return false,
        };
        if !matches!(m.rnd, Rnd::None | Rnd::Rn) || m.sat || (m.ftz && !f32_) {
            return false;
        }
        let ftz = m.ftz;
        let arity = match op.kind {
            Kind::Add | Kind::Sub | Kind::Mul | Kind::Min | Kind::Max => 2,
            Kind::Div if !m.approx && !m.full => 2,
            Kind::Fma | Kind::Mad => 3,
            Kind::Sqrt | Kind::Rcp if !m.approx => 1,
            Kind::Abs | Kind::Neg => 1,
            _ => return false,
        };
        if matches!(op.kind, Kind::Min | Kind::Max) && m.nan {
            return false;
        }
        let srcs = [op.a, op.b, op.c];
        let mut v = Vec::with_capacity(3);
        for s in &srcs[..arity] {
            let raw = self.read(s);
            let x = if f32_ { self.f32_of(raw) } else { self.f64_of(raw) };
            v.push(if ftz { self.flush(x) } else { x });
        }
        let r = match op.kind {
            Kind::Add => self.b.ins().fadd(v[0], v[1]),
            Kind::Sub => self.b.ins().fsub(v[0], v[1]),
            Kind::Mul => self.b.ins().fmul(v[0], v[1]),
            Kind::Div => self.b.ins().fdiv(v[0], v[1]),
            Kind::Fma | Kind::Mad => self.b.ins().fma(v[0], v[1], v[2]),
            Kind::Sqrt => self.b.ins().sqrt(v[0]),
            Kind::Rcp => {
                let one = if f32_ { self.b.ins().f32const(1.0) } else { self.b.ins().f64const(1.0) };
                self.b.ins().fdiv(one, v[0])
            }
            Kind::Abs => self.b.ins().fabs(v[0]),
            Kind::Neg => self.b.ins().fneg(v[0]),
            Kind::Min | Kind::Max => {
                // PTX: a NaN operand yields the other operand; -0 orders below +0.
                let r =
                    if op.kind == Kind::Min { self.b.ins().fmin(v[0], v[1]) } else { self.b.ins().fmax(v[0], v[1]) };
                let a_nan = self.b.ins().fcmp(FloatCC::Unordered, v[0], v[0]);
                let b_nan = self.b.ins().fcmp(FloatCC::Unordered, v[1], v[1]);
                let r = self.b.ins().select(a_nan, v[1], r);
                self.b.ins().select(b_nan, v[0], r)
            }
            _ => return false,
        };
        let r = if ftz { self.flush(r) } else { r };
        let bits = if f32_ { self.bits_of_f32(r) } else { self.bits_of_f64(r) };
        self.write(op.dst, bits);
        true
    }

    fn cvt(&mut self, op: &Op) -> bool {
        let (dt, st) = (op.ty, op.ty2);
        let m = &op.m;
        if m.sat || m.ftz || m.relu {
            return false;
        }
        let int = |t: Ty| !t.is_float() && t != Ty::Pred && t.bits() <= 64;
        let a = self.read(&op.a);
        if int(dt) && int(st) {
            if m.rnd != Rnd::None {
                return false;
            }
            // Like the emulator: signed results stay sign-extended, so a wider register gets the right value.
            let x = self.extend(a, st);
            let r = self.extend(x, dt);
            self.write(op.dst, r);
            return true;
        }
        let fty = |t: Ty| match t {
            Ty::F32 => Some(types::F32),
            Ty::F64 => Some(types::F64),
            _ => None,
        };
        let to_float = |me: &mut Self, v: Value, t: Ty| if t == Ty::F32 { me.f32_of(v) } else { me.f64_of(v) };
        let from_float =
            |me: &mut Self, f: Value, t: Ty| if t == Ty::F32 { me.bits_of_f32(f) } else { me.bits_of_f64(f) };
        match (fty(dt), fty(st)) {
            (Some(d), Some(_)) => {
                let x = to_float(self, a, st);
                let r = if dt == st {
                    match m.rnd {
                        Rnd::Rni => self.b.ins().nearest(x),
                        Rnd::Rzi => self.b.ins().trunc(x),
                        Rnd::Rmi => self.b.ins().floor(x),
                        Rnd::Rpi => self.b.ins().ceil(x),
                        Rnd::None | Rnd::Rn => x,
                        _ => return false,
                    }
                } else if d == types::F64 {
                    if m.rnd != Rnd::None {
                        return false;
                    }
                    self.b.ins().fpromote(types::F64, x)
                } else {
                    if !matches!(m.rnd, Rnd::Rn) {
                        return false;
                    }
                    self.b.ins().fdemote(types::F32, x)
                };
                let bits = from_float(self, r, dt);
                self.write(op.dst, bits);
                true
            }
            (Some(d), None) if int(st) => {
                if m.rnd != Rnd::Rn {
                    return false;
                }
                let x = self.extend(a, st);
                let r =
                    if st.is_signed() { self.b.ins().fcvt_from_sint(d, x) } else { self.b.ins().fcvt_from_uint(d, x) };
                let bits = from_float(self, r, dt);
                self.write(op.dst, bits);
                true
            }
            (None, Some(_)) if int(dt) && dt.bits() >= 32 => {
                let x = to_float(self, a, st);
                // A float rounding acts as its integer form; none means `.rzi`.
                let x = match m.rnd {
                    Rnd::Rzi | Rnd::Rz | Rnd::None => x,
                    Rnd::Rni | Rnd::Rn => self.b.ins().nearest(x),
                    Rnd::Rmi | Rnd::Rm => self.b.ins().floor(x),
                    Rnd::Rpi | Rnd::Rp => self.b.ins().ceil(x),
                    _ => return false,
                };
                let it = if dt.bits() == 32 { I32 } else { I64 };
                let r = if dt.is_signed() {
                    self.b.ins().fcvt_to_sint_sat(it, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(it, x)
                };
                let r = match (it == I32, dt.is_signed()) {
                    (true, true) => self.b.ins().sextend(I64, r),
                    (true, false) => self.b.ins().uextend(I64, r),
                    _ => r,
                };
                // NaN gives 0, except from `.f64` or into 64 bits, where it gives the top bit (the ISA's rule),
                // sign-extended for a signed destination.
                let r = if st == Ty::F64 || dt.bits() == 64 {
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                    let top_bit = 1u64 << (dt.bits() - 1);
                    let top = if dt.is_signed() {
                        (top_bit as i64) << (64 - dt.bits()) >> (64 - dt.bits())
                    } else {
                        top_bit as i64
                    };
                    let top = self.b.ins().iconst(I64, top);
                    self.b.ins().select(nan, top, r)
                } else {
                    r
                };
                self.write(op.dst, r);
                true
            }
            _ => false,
        }
    }
}
