//! Float arithmetic and `cvt`, where the vector form is exact (as the scalar native lowering), and the
//! pinning of multiply-add chains in place.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I32X4, I64, I64X2, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, Opcode, StackSlotData, StackSlotKind, Value};
use program::{Kind, Op, Rnd, Src, Ty};

use super::{Dom, Vector, R, V};

/// A chain of multiply-adds is pinned in place every this many links ([`Vector::pin`]): matmul_tiled16 on
/// one worker 28.4 ms with every link, 25.3–25.9 ms with every fourth (every eighth: 28.4 ms).
const FMA_LINKS_PER_PIN: u8 = 4;

impl Vector<'_, '_> {
    /// A float source as `f32x4` (one vector) or `f64x2` (two), flushed with `.ftz`.
    pub(super) fn floats(&mut self, s: &Src, ty: Ty, ftz: bool) -> R<Vec<Value>> {
        Ok(match ty {
            Ty::F32 => {
                let v = self.read(s, Dom::W)?;
                let w = self.as_w(v);
                let f = self.cast(F32X4, w);
                vec![if ftz { self.flush(f) } else { f }]
            }
            Ty::F64 if !ftz => {
                let v = self.read(s, Dom::D)?;
                let (l, h) = self.as_d(v, false);
                vec![self.cast(F64X2, l), self.cast(F64X2, h)]
            }
            _ => return Err(format!("{ty:?} operands")),
        })
    }

    /// Float vectors back to lanes of bits.
    pub(super) fn float_bits(&mut self, r: &[Value]) -> V {
        match *r {
            [l, h] => V::D(self.cast(I64X2, l), self.cast(I64X2, h)),
            _ => V::W(self.cast(I32X4, r[0])),
        }
    }

    /// Flushes `f32` subnormals to zeros of the same sign (`.ftz`).
    fn flush(&mut self, x: Value) -> Value {
        let bits = self.cast(I32X4, x);
        let e = self.splat32(0x7F80_0000);
        let exp = self.b.ins().band(bits, e);
        let z = self.zero(Dom::W);
        let sub = self.b.ins().icmp(IntCC::Equal, exp, z);
        let s = self.splat32(0x8000_0000);
        let sign = self.b.ins().band(bits, s);
        let r = self.b.ins().bitselect(sub, sign, bits);
        self.cast(F32X4, r)
    }

    /// Float arithmetic, under the same conditions as the scalar native lowering (`native_float`).
    pub(super) fn float(&mut self, op: &Op) -> R {
        let m = &op.m;
        let f32_ = match op.ty {
            Ty::F32 => true,
            Ty::F64 => false,
            t => return Err(format!("{t:?} arithmetic")),
        };
        if !matches!(m.rnd, Rnd::None | Rnd::Rn) || m.sat || (m.ftz && !f32_) {
            return Err("a rounding mode, .sat or .ftz without an exact vector form".into());
        }
        let arity = match op.kind {
            Kind::Add | Kind::Sub | Kind::Mul => 2,
            Kind::Min | Kind::Max if !m.nan => 2,
            Kind::Div if !m.approx && !m.full => 2,
            Kind::Fma | Kind::Mad => 3,
            Kind::Sqrt | Kind::Rcp if !m.approx => 1,
            Kind::Abs | Kind::Neg => 1,
            k => return Err(format!("float {k:?} with these modifiers")),
        };
        let mut srcs = Vec::new();
        for s in &[op.a, op.b, op.c][..arity] {
            srcs.push(self.floats(s, op.ty, m.ftz)?);
        }
        let parts = srcs[0].len();
        let mut out = Vec::new();
        for k in 0..parts {
            let v: Vec<Value> = srcs.iter().map(|s| s[k]).collect();
            let r = match op.kind {
                Kind::Add => self.b.ins().fadd(v[0], v[1]),
                Kind::Sub => self.b.ins().fsub(v[0], v[1]),
                Kind::Mul => self.b.ins().fmul(v[0], v[1]),
                Kind::Div => self.b.ins().fdiv(v[0], v[1]),
                Kind::Fma | Kind::Mad => {
                    let r = self.b.ins().fma(v[0], v[1], v[2]);
                    // Only chains need it (an addend that is itself a multiply-add; saxpy's one is not),
                    // and only every few links.
                    let chained = self
                        .b
                        .func
                        .dfg
                        .value_def(v[2])
                        .inst()
                        .is_some_and(|i| self.b.func.dfg.insts[i].opcode() == Opcode::Fma);
                    if chained {
                        let links = self.unpinned.get(&v[2]).map_or(1, |n| n + 1);
                        if links >= FMA_LINKS_PER_PIN {
                            self.pin(r);
                        } else {
                            self.unpinned.insert(r, links);
                        }
                    }
                    r
                }
                Kind::Sqrt => self.b.ins().sqrt(v[0]),
                Kind::Rcp => {
                    let one = if f32_ { self.b.ins().f32const(1.0) } else { self.b.ins().f64const(1.0) };
                    let one = self.b.ins().splat(if f32_ { F32X4 } else { F64X2 }, one);
                    self.b.ins().fdiv(one, v[0])
                }
                Kind::Abs => self.b.ins().fabs(v[0]),
                Kind::Neg => self.b.ins().fneg(v[0]),
                _ => {
                    // PTX: a NaN operand yields the other operand; -0 orders below +0.
                    let r = if op.kind == Kind::Min {
                        self.b.ins().fmin(v[0], v[1])
                    } else {
                        self.b.ins().fmax(v[0], v[1])
                    };
                    let a_nan = self.b.ins().fcmp(FloatCC::Unordered, v[0], v[0]);
                    let b_nan = self.b.ins().fcmp(FloatCC::Unordered, v[1], v[1]);
                    let fty = self.b.func.dfg.value_type(r);
                    let a_nan = self.cast(fty, a_nan);
                    let b_nan = self.cast(fty, b_nan);
                    let r = self.b.ins().bitselect(a_nan, v[1], r);
                    self.b.ins().bitselect(b_nan, v[0], r)
                }
            };
            out.push(if m.ftz { self.flush(r) } else { r });
        }
        let bits = self.float_bits(&out);
        self.write(op.dst, bits)
    }

    /// Keeps a multiply-add where the PTX has it. Cranelift's e-graph places a pure value lazily, right before
    /// its first use by an instruction with effects: a chain of multiply-adds into an accumulator that only a
    /// barrier's home store uses would all come after the chain's loads, every loaded operand live at once
    /// and spilled (`matmul_tiled16`'s unrolled tile product). A store of each result to a stack slot is such
    /// a use: one store where the spills were many (matmul_tiled16 on one worker: 63 ms → 40 ms). Other
    /// float ops showed no such effect (stencil_1d's sum of seven loads). A pin every
    /// [`FMA_LINKS_PER_PIN`] links keeps as few loads live (those of the links in between, placed before
    /// the pinned one), with fewer stores.
    pub(super) fn pin(&mut self, v: Value) {
        let slot = *self.pin_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4))
        });
        self.b.ins().stack_store(I64, v, slot, 0);
    }

    /// `cvt`, where the scalar lowering is native and the vector form exact.
    pub(super) fn cvt(&mut self, op: &Op) -> R {
        let (dt, st) = (op.ty, op.ty2);
        let m = &op.m;
        if m.sat || m.ftz || m.relu {
            return Err("cvt with .sat, .ftz or .relu".into());
        }
        let int = |t: Ty| !t.is_float() && t != Ty::Pred && t.bits() <= 64;
        // Integer results are kept sign-extended by the emulator: a wider register gets the extension.
        let into_dst = |me: &mut Self, w: Value| -> V {
            match me.dst_dom(op.dst) {
                Dom::W => V::W(w),
                Dom::D => {
                    let (l, h) = me.widen(w, dt.is_signed());
                    V::D(l, h)
                }
            }
        };
        if int(dt) && int(st) {
            if m.rnd != Rnd::None {
                return Err("cvt between integers with a rounding".into());
            }
            let r = if dt.bits() <= 32 && st.bits() <= 32 {
                let a = self.read(&op.a, Dom::W)?;
                let x = self.extend(a, st);
                let r = self.extend(x, dt);
                let w = self.as_w(r);
                into_dst(self, w)
            } else {
                let (l, h) = self.read_ext64(&op.a, st)?;
                self.extend(V::D(l, h), dt)
            };
            return self.write(op.dst, r);
        }
        match (dt, st) {
            (Ty::F32, Ty::F32) | (Ty::F64, Ty::F64) => {
                let xs = self.floats(&op.a, st, false)?;
                let mut out = Vec::new();
                for x in xs {
                    out.push(match m.rnd {
                        Rnd::Rni => self.b.ins().nearest(x),
                        Rnd::Rzi => self.b.ins().trunc(x),
                        Rnd::Rmi => self.b.ins().floor(x),
                        Rnd::Rpi => self.b.ins().ceil(x),
                        Rnd::None | Rnd::Rn => x,
                        r => return Err(format!("cvt.{r:?} between equal float types")),
                    });
                }
                let bits = self.float_bits(&out);
                self.write(op.dst, bits)
            }
            (Ty::F64, Ty::F32) if m.rnd == Rnd::None => {
                let x = self.floats(&op.a, st, false)?[0];
                let xi = self.cast(I8X16, x);
                // Lanes 2-3 moved down for the second promotion.
                let mask: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
                let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
                let up = self.b.ins().shuffle(xi, xi, imm);
                let up = self.cast(F32X4, up);
                let l = self.b.ins().fvpromote_low(x);
                let h = self.b.ins().fvpromote_low(up);
                let bits = self.float_bits(&[l, h]);
                self.write(op.dst, bits)
            }
            (Ty::F32, Ty::F64) if m.rnd == Rnd::Rn => {
                let xs = self.floats(&op.a, st, false)?;
                let l = self.b.ins().fvdemote(xs[0]);
                let h = self.b.ins().fvdemote(xs[1]);
                let l = self.cast(I8X16, l);
                let h = self.cast(I8X16, h);
                let mask: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
                let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
                let r = self.b.ins().shuffle(l, h, imm);
                let r = self.cast(I32X4, r);
                self.write(op.dst, V::W(r))
            }
            (Ty::F32, _) if int(st) && st.bits() <= 32 && m.rnd == Rnd::Rn => {
                let a = self.read(&op.a, Dom::W)?;
                let x = self.extend(a, st);
                let x = self.as_w(x);
                let f = if st.is_signed() {
                    self.b.ins().fcvt_from_sint(F32X4, x)
                } else {
                    self.b.ins().fcvt_from_uint(F32X4, x)
                };
                let bits = self.float_bits(&[f]);
                self.write(op.dst, bits)
            }
            (_, Ty::F32) if int(dt) && dt.bits() == 32 => {
                let x = self.floats(&op.a, st, false)?[0];
                // A float rounding acts as its integer form; none means `.rzi`.
                let x = match m.rnd {
                    Rnd::Rzi | Rnd::Rz | Rnd::None => x,
                    Rnd::Rni | Rnd::Rn => self.b.ins().nearest(x),
                    Rnd::Rmi | Rnd::Rm => self.b.ins().floor(x),
                    Rnd::Rpi | Rnd::Rp => self.b.ins().ceil(x),
                    r => return Err(format!("cvt.{r:?} to an integer")),
                };
                // NaN gives 0 here (from `.f32` into 32 bits), as in the scalar lowering.
                let r = if dt.is_signed() {
                    self.b.ins().fcvt_to_sint_sat(I32X4, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(I32X4, x)
                };
                let r = into_dst(self, r);
                self.write(op.dst, r)
            }
            _ => Err(format!("cvt.{dt:?}.{st:?} ({:?})", m.rnd)),
        }
    }
}
