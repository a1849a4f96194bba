//! Integer arithmetic, logic, shifts, comparisons (`setp`, recording how a mask follows from scalars) and
//! packing, with the dispatch of every op other than control to its lowering.

use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::types::{I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, Value};
use program::{BoolOp, Cmp, Dst, Kind, Op, Part, Space, Src, Ty};

use super::{dom, ro, Dom, LaneLeaf, StepCmp, Vector, R, V};
use crate::abi::ctx as cx;

/// `k` where `src` is the immediate `2^k` (as type `ty` extends it, positive): a product by it is a shift.
fn power_of_two(src: &Src, ty: Ty) -> Option<i64> {
    match *src {
        Src::Imm(c) if (ty.extend(c) as i64) > 0 && ty.extend(c).is_power_of_two() => {
            Some(i64::from(ty.extend(c).trailing_zeros()))
        }
        _ => None,
    }
}

impl Vector<'_, '_> {
    pub(super) fn lower_body(&mut self, op: &Op) -> R {
        let ty = op.ty;
        let m = &op.m;
        if ty == Ty::Pred && matches!(op.kind, Kind::Mov | Kind::And | Kind::Or | Kind::Xor | Kind::Not) {
            let a = self.read_pred(&op.a)?;
            let r = match op.kind {
                Kind::Mov => a,
                Kind::Not => self.b.ins().bnot(a),
                _ => {
                    let b = self.read_pred(&op.b)?;
                    match op.kind {
                        Kind::And => self.b.ins().band(a, b),
                        Kind::Or => self.b.ins().bor(a, b),
                        _ => self.b.ins().bxor(a, b),
                    }
                }
            };
            return self.write_mask(op.dst, r);
        }
        if ty.is_float() && !matches!(op.kind, Kind::Mov | Kind::Cvt | Kind::Setp | Kind::Selp | Kind::Ld | Kind::St) {
            return self.float(op);
        }
        if !matches!(op.kind, Kind::Ld | Kind::St | Kind::Nop) && (ty.bits() > 64 || ty == Ty::Other || ty == Ty::Pred)
        {
            return Err(format!("type {ty:?}"));
        }
        let d = dom(ty);
        match op.kind {
            Kind::Nop => Ok(()),
            Kind::Ld => self.load(op),
            Kind::St => self.store(op),
            Kind::Atom | Kind::Red => self.atomic(op),
            Kind::Mov => {
                let a = self.read(&op.a, d)?;
                let r = self.mask_ty(a, ty);
                self.write(op.dst, r)
            }
            Kind::Cvta if m.space != Space::Shared => {
                let a = self.read(&op.a, d)?;
                let r = self.mask_ty(a, ty);
                self.write(op.dst, r)
            }
            // Generic shared addresses are host addresses: the offset plus the shared memory's address.
            Kind::Cvta => {
                let a = self.read(&op.a, Dom::D)?;
                let sh = self.b.ins().load(I64, ro(), self.ctx, cx::SHARED);
                let sh = self.b.ins().splat(I64X2, sh);
                let to = matches!(m.sub, program::Sub::Cvta { to: true });
                let r = self.map(a, |me, x| if to { me.b.ins().isub(x, sh) } else { me.b.ins().iadd(x, sh) });
                let r = self.in_dom(r, d);
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Add | Kind::Sub if !m.cc && !m.sat => {
                let a = self.read(&op.a, d)?;
                let b = self.read(&op.b, d)?;
                let add = op.kind == Kind::Add;
                let r = self.map2(a, b, |me, x, y| if add { me.b.ins().iadd(x, y) } else { me.b.ins().isub(x, y) });
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Mul | Kind::Mad if !m.cc && !m.sat => self.mul(op),
            Kind::Abs | Kind::Neg => {
                let sty = if ty.is_signed() { ty } else { signed_of(ty) };
                let a = self.read(&op.a, d)?;
                let x = self.extend(a, sty);
                let r = match (op.kind, x) {
                    (Kind::Abs, V::W(x)) => V::W(self.b.ins().iabs(x)),
                    (Kind::Abs, _) => {
                        let z = self.zero(Dom::D);
                        self.map(x, |me, v| {
                            let n = me.b.ins().isub(z, v);
                            let neg = me.b.ins().icmp(IntCC::SignedLessThan, v, z);
                            me.b.ins().bitselect(neg, n, v)
                        })
                    }
                    _ => {
                        let z = self.zero(d);
                        self.map(x, |me, v| me.b.ins().isub(z, v))
                    }
                };
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Min | Kind::Max if !m.relu => {
                let a = self.read(&op.a, d)?;
                let b = self.read(&op.b, d)?;
                let x = self.extend(a, ty);
                let y = self.extend(b, ty);
                let cc = match (op.kind, ty.is_signed()) {
                    (Kind::Min, true) => IntCC::SignedLessThan,
                    (Kind::Min, false) => IntCC::UnsignedLessThan,
                    (_, true) => IntCC::SignedGreaterThan,
                    (_, false) => IntCC::UnsignedGreaterThan,
                };
                let r = self.map2(x, y, |me, x, y| {
                    let c = me.b.ins().icmp(cc, x, y);
                    me.b.ins().bitselect(c, x, y)
                });
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::And | Kind::Or | Kind::Xor => {
                let a = self.read(&op.a, d)?;
                let b = self.read(&op.b, d)?;
                let k = op.kind;
                let r = self.map2(a, b, |me, x, y| match k {
                    Kind::And => me.b.ins().band(x, y),
                    Kind::Or => me.b.ins().bor(x, y),
                    _ => me.b.ins().bxor(x, y),
                });
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Not => {
                let a = self.read(&op.a, d)?;
                let r = self.map(a, |me, x| me.b.ins().bnot(x));
                let r = self.mask_ty(r, ty);
                self.write(op.dst, r)
            }
            Kind::Shl | Kind::Shr => self.shift(op),
            Kind::Setp => {
                let r = self.compare(op)?;
                let nr = self.b.ins().bnot(r);
                let (p, q) = match m.boolop {
                    Some(bo) => {
                        let c = self.read_pred(&op.c)?;
                        (self.bool_op(bo, r, c), self.bool_op(bo, nr, c))
                    }
                    None => (r, nr),
                };
                self.write_mask(op.dst, p)?;
                if op.dst2 != Dst::None {
                    self.write_mask(op.dst2, q)?;
                }
                Ok(())
            }
            Kind::Selp => {
                // Not masked to the type: the raw bits of the chosen operand, in the destination's width.
                let dd = self.dst_dom(op.dst);
                let a = self.read(&op.a, dd)?;
                let b = self.read(&op.b, dd)?;
                let c = self.read_pred(&op.c)?;
                let r = self.select(c, a, b);
                self.write(op.dst, r)
            }
            Kind::Cvt => self.cvt(op),
            Kind::Pack => {
                let Some(program::Extra::Srcs(srcs)) = op.extra.as_deref() else { return Err("no sources".into()) };
                let part = ty.bits() / srcs.len().max(1) as u32;
                let mut acc = V::W(self.zero(Dom::W));
                acc = self.in_dom(acc, d);
                for (k, s) in srcs.iter().enumerate() {
                    let v = self.read(s, d)?;
                    let v = self.mask_bits(v, part);
                    let sh = i64::from(part * k as u32);
                    let v = if sh > 0 && sh < 64 { self.map(v, |me, x| me.b.ins().ishl_imm_s(x, sh)) } else { v };
                    acc = self.map2(acc, v, |me, x, y| me.b.ins().bor(x, y));
                }
                self.write(op.dst, acc)
            }
            Kind::Unpack => {
                let Some(program::Extra::Dsts(dsts)) = op.extra.as_deref() else {
                    return Err("no destinations".into());
                };
                let a = self.read(&op.a, d)?;
                let part = ty.bits() / dsts.len().max(1) as u32;
                for (k, dst) in dsts.iter().enumerate() {
                    let sh = i64::from(part * k as u32);
                    let v = if sh > 0 && sh < 64 { self.map(a, |me, x| me.b.ins().ushr_imm_s(x, sh)) } else { a };
                    self.write(*dst, v)?;
                }
                Ok(())
            }
            k => Err(format!("{k:?} with these modifiers")),
        }
    }

    fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    fn mul(&mut self, op: &Op) -> R {
        let ty = op.ty;
        let bits = ty.bits();
        let d = dom(ty);
        let mad = op.kind == Kind::Mad;
        let r = match op.m.part {
            Part::Lo => {
                let a = self.read(&op.a, d)?;
                let p = match power_of_two(&op.b, ty) {
                    // A shift: vector multiplies are slow (`pmulld`), and index scaling is common.
                    Some(k) => self.map(a, |me, x| me.b.ins().ishl_imm_s(x, k)),
                    None => {
                        let b = self.read(&op.b, d)?;
                        self.map2(a, b, |me, x, y| me.b.ins().imul(x, y))
                    }
                };
                let p = if mad {
                    let c = self.read(&op.c, d)?;
                    self.map2(p, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    p
                };
                self.mask_ty(p, ty)
            }
            // Products of at most 32 bits: in 32-bit lanes.
            Part::Wide if bits <= 16 => {
                let a = self.read(&op.a, Dom::W)?;
                let x = self.extend(a, ty);
                let p = match power_of_two(&op.b, ty) {
                    Some(k) => self.map(x, |me, x| me.b.ins().ishl_imm_s(x, k)),
                    None => {
                        let b = self.read(&op.b, Dom::W)?;
                        let y = self.extend(b, ty);
                        self.map2(x, y, |me, x, y| me.b.ins().imul(x, y))
                    }
                };
                let p = if mad {
                    let c = self.read(&op.c, Dom::W)?;
                    self.map2(p, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    p
                };
                self.mask_ty(p, wide(ty))
            }
            Part::Wide if bits == 32 => {
                let (xl, xh) = self.read_ext64(&op.a, ty)?;
                let p = match power_of_two(&op.b, ty) {
                    // A power of two: a shift (the common index scaling).
                    Some(s) => V::D(self.b.ins().ishl_imm_s(xl, s), self.b.ins().ishl_imm_s(xh, s)),
                    None => {
                        let (yl, yh) = self.read_ext64(&op.b, ty)?;
                        V::D(self.b.ins().imul(xl, yl), self.b.ins().imul(xh, yh))
                    }
                };
                if mad {
                    let c = self.read(&op.c, Dom::D)?;
                    self.map2(p, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    p
                }
            }
            Part::Hi if bits == 32 => {
                let (xl, xh) = self.read_ext64(&op.a, ty)?;
                let (yl, yh) = self.read_ext64(&op.b, ty)?;
                let pl = self.b.ins().imul(xl, yl);
                let ph = self.b.ins().imul(xh, yh);
                let (hl, hh) = if ty.is_signed() {
                    (self.b.ins().sshr_imm_s(pl, 32), self.b.ins().sshr_imm_s(ph, 32))
                } else {
                    (self.b.ins().ushr_imm_s(pl, 32), self.b.ins().ushr_imm_s(ph, 32))
                };
                let h = V::W(self.narrow(hl, hh));
                if mad {
                    let c = self.read(&op.c, Dom::W)?;
                    self.map2(h, c, |me, x, y| me.b.ins().iadd(x, y))
                } else {
                    h
                }
            }
            p => return Err(format!("{p:?} product of {bits} bits")),
        };
        self.write(op.dst, r)
    }

    fn shift(&mut self, op: &Op) -> R {
        let ty = op.ty;
        let bits = ty.bits();
        let d = dom(ty);
        let lane_bits = if d == Dom::W { 32 } else { 64 };
        let Src::Imm(amt) = op.b else { return Err("a shift by a register".into()) };
        let amt = amt & 0xFFFF_FFFF;
        let big = amt >= u64::from(bits);
        let a = self.read(&op.a, d)?;
        let r = match (op.kind, ty.is_signed()) {
            (Kind::Shl, _) | (_, false) if big => V::W(self.zero(Dom::W)),
            (Kind::Shl, _) => self.map(a, |me, x| me.b.ins().ishl_imm_s(x, amt as i64)),
            (_, true) => {
                let x = self.extend(a, ty);
                let s = amt.min(lane_bits - 1) as i64;
                self.map(x, |me, v| me.b.ins().sshr_imm_s(v, s))
            }
            _ => {
                let x = self.mask_ty(a, ty);
                self.map(x, |me, v| me.b.ins().ushr_imm_s(v, amt as i64))
            }
        };
        let r = self.in_dom(r, d);
        let r = self.mask_ty(r, ty);
        self.write(op.dst, r)
    }

    /// `a cmp b` as a lane mask.
    fn compare(&mut self, op: &Op) -> R<Value> {
        let ty = op.ty;
        let cmp = op.m.cmp.unwrap_or(Cmp::Eq);
        if ty == Ty::F32 || ty == Ty::F64 {
            let xs = self.floats(&op.a, ty, op.m.ftz)?;
            let ys = self.floats(&op.b, ty, op.m.ftz)?;
            let mut ms = Vec::new();
            for (x, y) in xs.into_iter().zip(ys) {
                ms.push(self.fcmp(cmp, x, y)?);
            }
            return Ok(match self.float_bits(&ms) {
                V::W(m) => m,
                V::D(l, h) => self.narrow(l, h),
            });
        }
        if ty.is_float() || ty == Ty::Pred || ty.bits() > 64 {
            return Err(format!("comparison of {ty:?}"));
        }
        let cc = crate::translate::int_cc(cmp, ty.is_signed()).ok_or(format!("integer comparison {cmp:?}"))?;
        let d = dom(ty);
        let a = self.read(&op.a, d)?;
        let b = self.read(&op.b, d)?;
        let x = self.extend(a, ty);
        let y = self.extend(b, ty);
        let r = self.map2(x, y, |me, x, y| me.b.ins().icmp(cc, x, y));
        let r = self.as_w(r);
        if let (true, V::W(x), V::W(y)) = (ty.bits() == 32, x, y) {
            let step = match (self.src_stride32(&op.a), self.src_stride32(&op.b)) {
                (Some(1), Some(0)) => Some((cc, x, y)),
                (Some(0), Some(1)) => Some((cc.swap_args(), y, x)),
                _ => None,
            };
            if let Some((cc, x, u)) = step {
                let x0 = self.lane32_of(x, 0, 6);
                let u = self.lane32_of(u, 0, 6);
                self.lane_leaves.insert(r, LaneLeaf::Step(StepCmp { cc, x0, u }));
            }
        }
        if self.src_uniform(&op.a) && self.src_uniform(&op.b) {
            // Alike in every lane: lane 0's comparison.
            let (x, y) = (self.lane(x, 0), self.lane(y, 0));
            let c = self.b.ins().icmp(cc, x, y);
            self.lane_leaves.insert(r, LaneLeaf::Uniform(c));
        }
        Ok(r)
    }

    /// A float comparison from the conditions x86 compares directly (so every one lowers).
    fn fcmp(&mut self, cmp: Cmp, x: Value, y: Value) -> R<Value> {
        let mut f = |cc: FloatCC, a: Value, b: Value| self.b.ins().fcmp(cc, a, b);
        let r = match cmp {
            Cmp::Eq => f(FloatCC::Equal, x, y),
            Cmp::Ne => {
                let ne = f(FloatCC::NotEqual, x, y);
                let ord = f(FloatCC::Ordered, x, y);
                self.b.ins().band(ne, ord)
            }
            Cmp::Lt => f(FloatCC::LessThan, x, y),
            Cmp::Le => f(FloatCC::LessThanOrEqual, x, y),
            Cmp::Gt => f(FloatCC::LessThan, y, x),
            Cmp::Ge => f(FloatCC::LessThanOrEqual, y, x),
            Cmp::Equ => {
                let eq = f(FloatCC::Equal, x, y);
                let uno = f(FloatCC::Unordered, x, y);
                self.b.ins().bor(eq, uno)
            }
            Cmp::Neu => f(FloatCC::NotEqual, x, y),
            // Unordered or less: not (x >= y); and so on.
            Cmp::Ltu => {
                let ge = f(FloatCC::LessThanOrEqual, y, x);
                self.b.ins().bnot(ge)
            }
            Cmp::Leu => {
                let gt = f(FloatCC::LessThan, y, x);
                self.b.ins().bnot(gt)
            }
            Cmp::Gtu => {
                let le = f(FloatCC::LessThanOrEqual, x, y);
                self.b.ins().bnot(le)
            }
            Cmp::Geu => {
                let lt = f(FloatCC::LessThan, x, y);
                self.b.ins().bnot(lt)
            }
            Cmp::Num => f(FloatCC::Ordered, x, y),
            Cmp::Nan => f(FloatCC::Unordered, x, y),
            c => return Err(format!("float comparison {c:?}")),
        };
        Ok(r)
    }
}

fn signed_of(t: Ty) -> Ty {
    match t.bits() {
        8 => Ty::S8,
        16 => Ty::S16,
        32 => Ty::S32,
        _ => Ty::S64,
    }
}

fn wide(t: Ty) -> Ty {
    match t.bits() {
        8 => Ty::U16,
        16 => Ty::U32,
        _ => Ty::U64,
    }
}
