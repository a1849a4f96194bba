//! Operands: reading sources (registers, immediates, special registers, symbols, frames) as lanes and
//! writing destinations, blending with the old value in lanes a guard or a masked range turns off.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, Value};
use ir::SpecialReg;
use program::{Dst, Src, SymAddr};

use super::ifs::live_around;
use super::{ro, Dom, Reg, Vector, R, V};
use crate::abi::ctx as cx;

impl Vector<'_, '_> {
    fn ctx_u32(&mut self, off: i32) -> Value {
        let v = self.b.ins().load(I32, ro(), self.ctx, off);
        self.b.ins().uextend(I64, v)
    }

    fn iota(&mut self) -> Value {
        self.lanes32([0, 1, 2, 3])
    }

    /// A special register as 32-bit lanes.
    fn special(&mut self, s: SpecialReg, comp: u8) -> R<Value> {
        let c = i32::from(comp.min(2)) * 4;
        let comp_ok = comp < 3;
        let scalar = match s {
            SpecialReg::Tid if comp_ok => {
                let v = self.b.use_var(self.tid[comp as usize]);
                let v = self.b.ins().splat(I32X4, v);
                if comp == 0 {
                    let i = self.iota();
                    return Ok(self.b.ins().iadd(v, i));
                }
                return Ok(v);
            }
            SpecialReg::Laneid => {
                let t = self.b.use_var(self.t);
                let l = self.b.ins().band_imm_s(t, 31);
                let v = self.b.ins().splat(I32X4, l);
                let i = self.iota();
                return Ok(self.b.ins().iadd(v, i));
            }
            SpecialReg::Warpid => {
                let t = self.b.use_var(self.t);
                let w = self.b.ins().ushr_imm_s(t, 5);
                return Ok(self.b.ins().splat(I32X4, w));
            }
            SpecialReg::Ntid if comp_ok => self.ctx_u32(cx::NTID + c),
            SpecialReg::Ctaid | SpecialReg::Clusterid if comp_ok => self.ctx_u32(cx::CTAID + c),
            SpecialReg::Nctaid | SpecialReg::Nclusterid if comp_ok => self.ctx_u32(cx::NCTAID + c),
            SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe => {
                // Groups are aligned to 4 in their warp: lane bits 1 << (t & 31) times 1, 2, 4, 8.
                let t = self.b.use_var(self.t);
                let l = self.b.ins().band_imm_s(t, 31);
                let one = self.b.ins().iconst(I32, 1);
                let bit = self.b.ins().ishl(one, l);
                let bit = self.b.ins().splat(I32X4, bit);
                let k = self.lanes32([1, 2, 4, 8]);
                let eq = self.b.ins().imul(bit, k);
                let ones = self.splat32(1);
                let lt = self.b.ins().isub(eq, ones);
                let le = self.b.ins().bor(lt, eq);
                return Ok(match s {
                    SpecialReg::LanemaskEq => eq,
                    SpecialReg::LanemaskLt => lt,
                    SpecialReg::LanemaskLe => le,
                    SpecialReg::LanemaskGt => self.b.ins().bnot(le),
                    _ => self.b.ins().bnot(lt),
                });
            }
            SpecialReg::Nwarpid => return Ok(self.splat32(64)),
            SpecialReg::Nsmid | SpecialReg::ClusterNctarank => return Ok(self.splat32(1)),
            SpecialReg::IsExplicitCluster => return Ok(self.splat32(u32::from(self.env.explicit_cluster))),
            _ => return Err(format!("special register {s:?}")),
        };
        let n = self.b.ins().ireduce(I32, scalar);
        Ok(self.b.ins().splat(I32X4, n))
    }

    /// A symbol's address (module variables and kernel parameters: the same for every lane).
    pub(super) fn symbol(&mut self, sym: SymAddr, extra: i64) -> R<Value> {
        let v = match sym {
            SymAddr::Global(addr) => {
                let globals = self.env.globals;
                let k = globals
                    .iter()
                    .position(|&(base, size)| addr >= base && addr < base + size.max(1))
                    .or_else(|| globals.iter().position(|&(base, size)| addr == base + size))
                    .ok_or("an address outside the module's variables")?;
                let table = self.b.ins().load(I64, ro(), self.ctx, cx::GLOBALS);
                let v = self.b.ins().load(I64, ro(), table, (k * 8) as i32);
                self.b.ins().iadd_imm_s(v, (addr - globals[k].0) as i64)
            }
            SymAddr::KernelParam(o) => {
                let p = self.b.ins().load(I64, ro(), self.ctx, cx::PARAMS);
                self.b.ins().iadd_imm_s(p, o as i64)
            }
            // A shared variable's address in its own space is its offset.
            SymAddr::Shared(o) => self.b.ins().iconst(I64, o as i64),
            _ => return Err(format!("{sym:?}")),
        };
        Ok(if extra == 0 { v } else { self.b.ins().iadd_imm_s(v, extra) })
    }

    /// The host address of offset `off` in each lane's local memory (its kernel frame: `abi`'s local area,
    /// `local_stride` bytes per thread), as 64-bit lanes 0-1 and 2-3.
    pub(super) fn frames(&mut self, off: i64) -> (Value, Value) {
        let locals = self.b.ins().load(I64, ro(), self.ctx, cx::LOCALS);
        let stride = self.b.ins().load(I64, ro(), self.ctx, cx::LOCAL_STRIDE);
        let t = self.b.use_var(self.t);
        let t = self.b.ins().uextend(I64, t);
        let first = self.b.ins().imul(t, stride);
        let base = self.b.ins().iadd(locals, first);
        let base = self.b.ins().iadd_imm_s(base, off);
        let base = self.b.ins().splat(I64X2, base);
        let s = self.b.ins().splat(I64X2, stride);
        let (k01, k23) = (self.lanes64([0, 1]), self.lanes64([2, 3]));
        let (d01, d23) = (self.b.ins().imul(s, k01), self.b.ins().imul(s, k23));
        (self.b.ins().iadd(base, d01), self.b.ins().iadd(base, d23))
    }

    /// A source as the emulator reads it (the raw bits) in lanes of the domain: narrower lanes zero-extended,
    /// wider ones truncated.
    pub(super) fn read(&mut self, s: &Src, d: Dom) -> R<V> {
        let v = match *s {
            Src::Reg(r) => match self.regs[r as usize] {
                Reg::W(x) => V::W(self.b.use_var(x)),
                Reg::D(l, h) => V::D(self.b.use_var(l), self.b.use_var(h)),
            },
            Src::Imm(c) => match d {
                Dom::W => V::W(self.splat32(c as u32)),
                Dom::D => {
                    let s = self.splat64(c);
                    V::D(s, s)
                }
            },
            Src::Special(sr, comp) => V::W(self.special(sr, comp)?),
            Src::Sym(SymAddr::Frame(o), off) => {
                let (l, h) = self.frames(o as i64 + off);
                V::D(l, h)
            }
            Src::Sym(sym, off) => {
                let a = self.symbol(sym, off)?;
                self.splat_scalar(a, d)
            }
            Src::Pred(..) => {
                let m = self.read_pred(s)?;
                let one = self.splat32(1);
                V::W(self.b.ins().band(m, one))
            }
            Src::None => V::W(self.zero(Dom::W)),
        };
        Ok(self.in_dom(v, d))
    }

    /// A predicate source as a lane mask.
    pub(super) fn read_pred(&mut self, s: &Src) -> R<Value> {
        match *s {
            Src::Pred(p, neg) => {
                let m = self.b.use_var(self.preds[p as usize]);
                if let Some(&leaf) = self.region_pred_leaves.get(&(p as usize)) {
                    self.lane_leaves.entry(m).or_insert(leaf);
                }
                Ok(if neg { self.b.ins().bnot(m) } else { m })
            }
            Src::Imm(c) => Ok(self.splat32(if c & 1 != 0 { u32::MAX } else { 0 })),
            _ => {
                let v = self.read(s, Dom::W)?;
                let w = self.as_w(v);
                let one = self.splat32(1);
                let bit = self.b.ins().band(w, one);
                Ok(self.b.ins().icmp(IntCC::Equal, bit, one))
            }
        }
    }

    /// Writes lanes to a register (masked to its width, as the emulator does; a narrower value zero-extended),
    /// keeping the old value in lanes the op's guard turns off.
    pub(super) fn write(&mut self, d: Dst, v: V) -> R {
        let Dst::Reg(slot, mask) = d else {
            if let Dst::Pred(_) = d {
                // Non-zero lanes are true.
                let z = self.zero(Dom::D);
                let m = match v {
                    V::W(x) => {
                        let z = self.zero(Dom::W);
                        let eq = self.b.ins().icmp(IntCC::Equal, x, z);
                        self.b.ins().bnot(eq)
                    }
                    V::D(l, h) => {
                        let el = self.b.ins().icmp(IntCC::Equal, l, z);
                        let eh = self.b.ins().icmp(IntCC::Equal, h, z);
                        let eq = self.narrow(el, eh);
                        self.b.ins().bnot(eq)
                    }
                };
                return self.write_mask(d, m);
            }
            return Ok(());
        };
        match self.regs[slot as usize] {
            Reg::W(var) => {
                let mut x = self.as_w(v);
                if mask as u32 != u32::MAX {
                    let m = self.splat32(mask as u32);
                    x = self.b.ins().band(x, m);
                }
                if let Some(g) = self.guard.filter(|_| self.keeps_old(slot as usize)) {
                    let old = self.b.use_var(var);
                    x = self.b.ins().bitselect(g, x, old);
                }
                self.b.def_var(var, x);
            }
            Reg::D(lv, hv) => {
                let (l, h) = self.as_d(v, false);
                let mut x = V::D(l, h);
                if mask != u64::MAX {
                    let m = self.splat64(mask);
                    x = self.map(x, |me, y| me.b.ins().band(y, m));
                }
                if let Some(g) = self.guard.filter(|_| self.keeps_old(slot as usize)) {
                    let old = V::D(self.b.use_var(lv), self.b.use_var(hv));
                    x = self.select(g, x, old);
                }
                let (l, h) = self.as_d(x, false);
                self.b.def_var(lv, l);
                self.b.def_var(hv, h);
            }
        }
        Ok(())
    }

    /// Writes a lane mask: to a predicate, or as 0/1 to a register.
    pub(super) fn write_mask(&mut self, d: Dst, m: Value) -> R {
        match d {
            Dst::Pred(p) => {
                let var = self.preds[p as usize];
                let keep = self.keeps_old(self.prog.slots as usize + p as usize);
                let m = match self.guard.filter(|_| keep) {
                    Some(g) => {
                        let old = self.b.use_var(var);
                        self.b.ins().bitselect(g, m, old)
                    }
                    None => m,
                };
                self.b.def_var(var, m);
                Ok(())
            }
            _ => {
                let one = self.splat32(1);
                let v = self.b.ins().band(m, one);
                self.write(d, V::W(v))
            }
        }
    }

    /// Whether a masked write of liveness variable `v` must keep the old value in the lanes off the mask: the
    /// op has a guard of its own, or `v` is live where a range around the op ends (its other lanes go on
    /// there, or in the `else` range, with the value they had).
    fn keeps_old(&self, v: usize) -> bool {
        !self.guard_is_range || live_around(&self.ifs, &self.live_at_end, self.cur, v)
    }

    /// The domain of a destination register (32-bit lanes for anything else).
    pub(super) fn dst_dom(&self, d: Dst) -> Dom {
        match d {
            Dst::Reg(slot, _) => match self.regs[slot as usize] {
                Reg::W(_) => Dom::W,
                Reg::D(..) => Dom::D,
            },
            _ => Dom::W,
        }
    }
}
