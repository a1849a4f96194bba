//! Memory operands: the address of each lane (uniform, or lanes with their stride), one lane's address as a
//! scalar, the choice between one vector access and one access per lane (at compile time or by a run-time
//! test), and running per active lane.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32X4, I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, InstructionData, Opcode, Value};
use program::{Op, Space, Src, SymAddr};

use super::strides::{stride, Stride, UNIFORM};
use super::{ro, Addr, Dom, Narrow, Path, Reg, Vector, R, V, WIDTH};
use crate::abi::ctx as cx;

impl Vector<'_, '_> {
    pub(super) fn address(&mut self, op: &Op) -> R<Addr> {
        let off = op.mem.offset;
        if op.m.space == Space::Shared {
            // Offsets into the CTA's shared memory, as the scalar lowering adds them to its host address.
            let sh = self.b.ins().load(I64, ro(), self.ctx, cx::SHARED);
            return Ok(match op.mem.base {
                Src::Sym(SymAddr::Shared(o), extra) => {
                    Addr::Uniform(self.b.ins().iadd_imm_s(sh, o as i64 + extra + off))
                }
                Src::Reg(r) if self.strides[r as usize] == Some(UNIFORM) => {
                    let a = self.lane0(&op.mem.base)?;
                    let a = self.b.ins().iadd(sh, a);
                    Addr::Uniform(self.b.ins().iadd_imm_s(a, off))
                }
                ref s => {
                    let v = self.read(s, Dom::D)?;
                    let (l, h) = self.as_d(v, false);
                    let base = self.b.ins().iadd_imm_s(sh, off);
                    // A 32-bit register's own lanes (`Narrow`), lane 0 extended from them.
                    let w32 = match *s {
                        Src::Reg(r) if matches!(self.regs[r as usize], Reg::W(_)) => match self.read(s, Dom::W)? {
                            V::W(w) => Some(w),
                            V::D(..) => None,
                        },
                        _ => None,
                    };
                    let a0 = match w32 {
                        Some(w) => {
                            let x = self.b.ins().extractlane(w, 0);
                            self.b.ins().uextend(I64, x)
                        }
                        None => self.b.ins().extractlane(l, 0),
                    };
                    // The offset added last, where it folds into the access's displacement (and the sum
                    // before it is shared by the accesses through one register).
                    let a0 = self.b.ins().iadd(sh, a0);
                    let a0 = self.b.ins().iadd_imm_s(a0, off);
                    let sh = self.b.ins().splat(I64X2, sh);
                    // A 32-bit offset whose lanes wrap around between lanes 0 and 3 is far outside any CTA's
                    // shared memory: such an access is out of bounds whichever lanes it reaches, so the
                    // zero-extension is taken as exact.
                    let k = match (*s, self.address_stride(s)) {
                        (Src::Reg(r), Some(k))
                            if k.widened == 1
                                && matches!(self.regs[r as usize], Reg::W(_))
                                && self.strides[r as usize].is_some_and(|w| w.widened == 0) =>
                        {
                            Some(Stride { stride: k.stride, widened: 0 })
                        }
                        (_, k) => k,
                    };
                    let narrow = w32.map(|offsets| Narrow { offsets, base });
                    Addr::Lanes(self.b.ins().iadd(l, sh), self.b.ins().iadd(h, sh), k, a0, off, narrow)
                }
            });
        }
        if !matches!(op.m.space, Space::Global | Space::Generic | Space::Const | Space::Param | Space::Local) {
            return Err(format!("{:?} memory", op.m.space));
        }
        Ok(match op.mem.base {
            // A local variable: each lane's own (host) address.
            Src::Sym(SymAddr::Frame(o), extra) => {
                let (l, h) = self.frames(o as i64 + extra + off);
                let a0 = self.b.ins().extractlane(l, 0);
                Addr::Lanes(l, h, None, a0, 0, None)
            }
            Src::Sym(sym, extra) => Addr::Uniform(self.symbol(sym, extra + off)?),
            Src::Imm(a) => Addr::Uniform(self.b.ins().iconst(I64, a.wrapping_add(off as u64) as i64)),
            Src::Reg(r) if self.strides[r as usize] == Some(UNIFORM) => {
                let a = self.lane0(&op.mem.base)?;
                Addr::Uniform(self.b.ins().iadd_imm_s(a, off))
            }
            ref s => {
                let v = self.read(s, Dom::D)?;
                let (l, h) = self.as_d(v, false);
                let k = self.address_stride(s);
                // Lane 0 from scalars (vector_add 1.67 -> 1.56 ms, saxpy 1.47 -> 1.27 ms; whole-CTA mode,
                // since each region has its own group loop: reduce_tree -7%, where it once cost +10%).
                let a0 = self.lane_of(l, 0, 4);
                let a0 = self.b.ins().iadd_imm_s(a0, off);
                Addr::Lanes(l, h, k, a0, off, None)
            }
        })
    }

    /// The stride of a register read as a 64-bit address (a 32-bit one zero-extended: widened).
    fn address_stride(&self, s: &Src) -> Option<Stride> {
        let Src::Reg(r) = *s else { return None };
        let k = self.strides[r as usize]?;
        match self.regs[r as usize] {
            Reg::W(_) => stride(i64::from(k.stride as i32), k.widened + 1, 64),
            Reg::D(..) => Some(k),
        }
    }

    /// Lane 0 of a source as a 64-bit address (zero-extended, as the scalar code reads it).
    fn lane0(&mut self, s: &Src) -> R<Value> {
        let v = self.read(s, Dom::D)?;
        let (l, _) = self.as_d(v, false);
        Ok(self.b.ins().extractlane(l, 0))
    }

    /// Lane `i` of a value as a scalar (`i32` or `i64`).
    pub(super) fn lane(&mut self, v: V, i: u8) -> Value {
        match v {
            V::W(w) => self.b.ins().extractlane(w, i),
            V::D(l, h) => self.b.ins().extractlane(if i < 2 { l } else { h }, i % 2),
        }
    }

    /// Lane `i`'s address plus `off`.
    pub(super) fn lane_addr(&mut self, a: Addr, i: u8, off: i64) -> Value {
        let (v, off) = match a {
            Addr::Uniform(v) => (v, off),
            Addr::Lanes(_, _, _, a0, ..) if i == 0 => (a0, off),
            Addr::Lanes(.., Some(Narrow { offsets, base })) => {
                let x = self.b.ins().extractlane(offsets, i);
                let x = self.b.ins().uextend(I64, x);
                (self.b.ins().iadd(base, x), off)
            }
            Addr::Lanes(l, h, _, _, o, None) => (self.lane(V::D(l, h), i), off + o),
        };
        if off == 0 {
            v
        } else {
            self.b.ins().iadd_imm_s(v, off)
        }
    }

    /// An `i8` that is non-zero when one vector access serves the group: every lane active and, for
    /// per-lane addresses, `size` bytes apart in lane order. `None` when that is always the case.
    fn whole_group(&mut self, a: Addr, size: u32) -> Option<Value> {
        let consecutive = match a {
            Addr::Uniform(_) => None,
            // Consecutive by construction.
            Addr::Lanes(_, _, Some(Stride { widened: 0, .. }), ..) => None,
            // Unless a widened term wrapped around between lanes 0 and 3.
            Addr::Lanes(_, h, Some(_), a0, off, _) => {
                let a3 = self.b.ins().extractlane(h, 1);
                let a3 = self.b.ins().iadd_imm_s(a3, off);
                let d = self.b.ins().isub(a3, a0);
                Some(self.b.ins().icmp_imm_u(IntCC::Equal, d, 3 * i64::from(size)))
            }
            Addr::Lanes(l, h, None, a0, off, _) => {
                let raw = self.b.ins().iadd_imm_s(a0, -off);
                let base = self.b.ins().splat(I64X2, raw);
                let s = u64::from(size);
                let dl = self.lanes64([0, s]);
                let dh = self.lanes64([2 * s, 3 * s]);
                let el = self.b.ins().iadd(base, dl);
                let eh = self.b.ins().iadd(base, dh);
                let ok_l = self.b.ins().icmp(IntCC::Equal, l, el);
                let ok_h = self.b.ins().icmp(IntCC::Equal, h, eh);
                let ok = self.b.ins().band(ok_l, ok_h);
                Some(self.b.ins().vall_true(ok))
            }
        };
        // Every lane active: computed once per mask. A branch on the test itself would have Cranelift repeat
        // it at every access's branch; a branch on this `band` reads one register.
        let active = self.guard.map(|g| {
            let exact = self.lane_pred_of(&[g]).map(|p| self.pred_all(&p)).filter(|&(_, exact)| exact);
            let all = match exact {
                Some((all, _)) => all,
                None => self.all_of(&[g]),
            };
            self.b.ins().band_imm_u(all, 1)
        });
        match (consecutive, active) {
            (Some(c), Some(a)) => Some(self.b.ins().band(c, a)),
            (c, a) => c.or(a),
        }
    }

    /// Lane `i` of a 64-bit-lane vector, computed from scalars where the vector is a sum of splats and
    /// widened (or shifted) 32-bit lanes, as addresses are: a 32-bit lane moved out and extended is cheaper
    /// than widening and adding whole vectors to take one lane.
    fn lane_of(&mut self, v: Value, i: u8, depth: u32) -> Value {
        if let (Some(inst), true) = (self.b.func.dfg.value_def(v).inst(), depth > 0) {
            let dfg = &self.b.func.dfg;
            let from32 = |x: Value| dfg.value_type(x) == I32X4;
            match dfg.insts[inst] {
                InstructionData::Unary { opcode: Opcode::Splat, arg } => return arg,
                InstructionData::Unary {
                    opcode: op @ (Opcode::UwidenLow | Opcode::UwidenHigh | Opcode::SwidenLow | Opcode::SwidenHigh),
                    arg,
                } if from32(arg) => {
                    let lane = if matches!(op, Opcode::UwidenLow | Opcode::SwidenLow) { i } else { i + 2 };
                    let x = self.b.ins().extractlane(arg, lane);
                    return if matches!(op, Opcode::UwidenLow | Opcode::UwidenHigh) {
                        self.b.ins().uextend(I64, x)
                    } else {
                        self.b.ins().sextend(I64, x)
                    };
                }
                InstructionData::Binary { opcode: Opcode::Iadd, args } => {
                    let x = self.lane_of(args[0], i, depth - 1);
                    let y = self.lane_of(args[1], i, depth - 1);
                    return self.b.ins().iadd(x, y);
                }
                // A vector shift's amount is a scalar.
                InstructionData::Binary { opcode: Opcode::Ishl, args } => {
                    let x = self.lane_of(args[0], i, depth - 1);
                    return self.b.ins().ishl(x, args[1]);
                }
                _ => {}
            }
        }
        self.b.ins().extractlane(v, i)
    }

    /// Under a guard, places the vectors the lanes of an access read (its address, its value) before the
    /// lanes' branches: Cranelift computes a pure value lazily, in the block of its first use, so each lane's
    /// block would otherwise recompute the whole vector (`histogram256`'s shared atomics did, four times).
    pub(super) fn anchor(&mut self, addr: Addr, value: Option<V>) {
        if self.guard.is_none() {
            return;
        }
        let mut vs = Vec::new();
        match addr {
            Addr::Lanes(.., Some(Narrow { offsets, .. })) => vs.push(offsets),
            Addr::Lanes(l, h, ..) => vs.extend([l, h]),
            Addr::Uniform(_) => {}
        }
        match value {
            Some(V::W(w)) => vs.push(w),
            Some(V::D(l, h)) => vs.extend([l, h]),
            None => {}
        }
        for v in vs {
            self.pin(v);
        }
    }

    /// Runs `each(lane)` for every lane (or, under a guard, every active lane), in lane order.
    pub(super) fn per_lane(&mut self, mut each: impl FnMut(&mut Self, u8) -> R) -> R {
        for i in 0..WIDTH as u8 {
            match self.guard {
                Some(g) => {
                    let bits = self.lane_bits(g);
                    let on = self.b.ins().band_imm_s(bits, 1 << i);
                    let yes = self.b.create_block();
                    let cont = self.b.create_block();
                    self.b.ins().brif(on, yes, &[], cont, &[]);
                    self.b.switch_to_block(yes);
                    each(self, i)?;
                    self.b.ins().jump(cont, &[]);
                    self.b.switch_to_block(cont);
                }
                None => each(self, i)?,
            }
        }
        Ok(())
    }

    /// How an access with a vector form (`vector_form`) is made.
    pub(super) fn path(&mut self, vector_form: bool, a: Addr, size: u32) -> Path {
        // Lanes known not to be `size` bytes apart.
        let apart = matches!(a, Addr::Lanes(_, _, Some(k), ..) if k.stride != i64::from(size));
        if !vector_form || apart {
            return Path::Lanes;
        }
        match self.whole_group(a, size) {
            Some(test) => Path::Test(test),
            None => Path::Vector,
        }
    }

    /// Emits the access on its path (both, behind the run-time test, for [`Path::Test`]).
    pub(super) fn two_ways(
        &mut self,
        path: Path,
        vector: impl FnOnce(&mut Self) -> R,
        lanes: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let fast = match path {
            Path::Vector => return vector(self),
            Path::Lanes => return lanes(self),
            Path::Test(fast) => fast,
        };
        let yes = self.b.create_block();
        let no = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(fast, yes, &[], no, &[]);
        self.b.switch_to_block(yes);
        vector(self)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(no);
        lanes(self)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }
}
