//! Operands: reading sources (registers, immediates, special registers, symbols) as the emulator's raw bits,
//! writing destinations masked to the register's width, the extensions and float views of those bits, and
//! calls of the runtime helpers.

use ::ir::SpecialReg;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use program::{Dst, Src, SymAddr, Ty};

use super::{helper_signature, ro, Translator, I32, I64, I8};
use crate::abi::{ctx as cx, Helper};

impl Translator<'_, '_> {
    pub(super) fn helper(&mut self, h: Helper, args: &[Value]) -> Option<Value> {
        let sig = self.b.import_signature(helper_signature(h, self.env.call_conv));
        let table = self.ctx_i64(cx::HELPERS);
        let f = self.b.ins().load(I64, ro(), table, (h as usize * 8) as i32);
        let call = self.b.ins().call_indirect(sig, f, args);
        self.b.inst_results(call).first().copied()
    }

    /// Where the current thread's local memory starts (its kernel frame).
    pub(super) fn local_base(&mut self) -> Value {
        let locals = self.ctx_i64(cx::LOCALS);
        let stride = self.ctx_i64(cx::LOCAL_STRIDE);
        let t = self.b.use_var(self.t);
        let t = self.b.ins().uextend(I64, t);
        let off = self.b.ins().imul(t, stride);
        self.b.ins().iadd(locals, off)
    }

    /// A 64-bit field of the context (pointers, sizes): constant for the launch.
    pub(super) fn ctx_i64(&mut self, off: i32) -> Value {
        self.b.ins().load(I64, ro(), self.ctx, off)
    }

    fn ctx_u32(&mut self, off: i32) -> Value {
        let v = self.b.ins().load(I32, ro(), self.ctx, off);
        self.b.ins().uextend(I64, v)
    }

    fn lane(&mut self) -> Value {
        let t = self.b.use_var(self.t);
        let t = self.b.ins().uextend(I64, t);
        self.b.ins().band_imm_s(t, 31)
    }

    fn special(&mut self, s: SpecialReg, comp: u8) -> Value {
        let c = i32::from(comp.min(2)) * 4;
        let comp_ok = comp < 3;
        match s {
            SpecialReg::Tid if comp_ok => {
                let v = self.b.use_var(self.tid[comp as usize]);
                self.b.ins().uextend(I64, v)
            }
            SpecialReg::Ntid if comp_ok => self.ctx_u32(cx::NTID + c),
            SpecialReg::Ctaid | SpecialReg::Clusterid if comp_ok => self.ctx_u32(cx::CTAID + c),
            SpecialReg::Nctaid | SpecialReg::Nclusterid if comp_ok => self.ctx_u32(cx::NCTAID + c),
            SpecialReg::Laneid => self.lane(),
            SpecialReg::Warpid => {
                let t = self.b.use_var(self.t);
                let t = self.b.ins().uextend(I64, t);
                self.b.ins().ushr_imm_s(t, 5)
            }
            SpecialReg::Nwarpid => self.b.ins().iconst(I64, 64),
            SpecialReg::Nsmid | SpecialReg::ClusterNctarank => self.b.ins().iconst(I64, 1),
            SpecialReg::IsExplicitCluster => self.b.ins().iconst(I64, i64::from(self.env.explicit_cluster)),
            SpecialReg::ClusterNctaid => self.b.ins().iconst(I64, i64::from(comp_ok)),
            SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe => {
                let lane = self.lane();
                let one = self.b.ins().iconst(I64, 1);
                let eq = self.b.ins().ishl(one, lane);
                let lt = self.b.ins().iadd_imm_s(eq, -1);
                let le = self.b.ins().bor(lt, eq);
                let m32 = 0xFFFF_FFFFi64;
                match s {
                    SpecialReg::LanemaskEq => eq,
                    SpecialReg::LanemaskLt => lt,
                    SpecialReg::LanemaskLe => le,
                    SpecialReg::LanemaskGt => {
                        let n = self.b.ins().bnot(le);
                        self.b.ins().band_imm_s(n, m32)
                    }
                    _ => {
                        let n = self.b.ins().bnot(lt);
                        self.b.ins().band_imm_s(n, m32)
                    }
                }
            }
            SpecialReg::Clock | SpecialReg::ClockHi | SpecialReg::Clock64 => {
                let c = self.helper(Helper::Clock, &[]).expect("clock");
                match s {
                    SpecialReg::Clock => self.b.ins().band_imm_s(c, 0xFFFF_FFFF),
                    SpecialReg::ClockHi => self.b.ins().ushr_imm_s(c, 32),
                    _ => c,
                }
            }
            SpecialReg::Globaltimer | SpecialReg::GlobaltimerLo | SpecialReg::GlobaltimerHi => {
                let c = self.helper(Helper::Clock, &[]).expect("clock");
                match s {
                    SpecialReg::GlobaltimerLo => self.b.ins().band_imm_s(c, 0xFFFF_FFFF),
                    SpecialReg::GlobaltimerHi => self.b.ins().ushr_imm_s(c, 32),
                    _ => c,
                }
            }
            SpecialReg::DynamicSmemSize => self.ctx_u32(cx::DYNAMIC_SHARED),
            SpecialReg::TotalSmemSize | SpecialReg::AggrSmemSize => self.ctx_i64(cx::SHARED_SIZE),
            // The grid workspace (`program::grid`): high half in %envreg1.
            SpecialReg::Envreg1 => {
                let w = self.ctx_i64(cx::WORKSPACE);
                self.b.ins().ushr_imm_s(w, 32)
            }
            SpecialReg::Envreg2 => {
                let w = self.ctx_i64(cx::WORKSPACE);
                self.b.ins().band_imm_s(w, 0xFFFF_FFFF)
            }
            _ => self.b.ins().iconst(I64, 0),
        }
    }

    /// The device address of a module variable (loaded from the context's table).
    fn global(&mut self, addr: u64) -> Value {
        let k = self
            .env
            .globals
            .iter()
            .position(|&(base, size)| addr >= base && addr < base + size.max(1))
            .or_else(|| self.env.globals.iter().position(|&(base, size)| addr == base + size))
            .expect("a module variable");
        let (base, _) = self.env.globals[k];
        let table = self.ctx_i64(cx::GLOBALS);
        let v = self.b.ins().load(I64, ro(), table, (k * 8) as i32);
        if addr == base {
            v
        } else {
            self.b.ins().iadd_imm_s(v, (addr - base) as i64)
        }
    }

    /// A symbol as a value: its address in its own space (shared: the offset; local, parameters: host
    /// addresses, which are also their generic addresses in the JIT).
    pub(super) fn symbol(&mut self, sym: SymAddr, extra: i64) -> Value {
        let v = match sym {
            SymAddr::Global(a) => self.global(a),
            SymAddr::Shared(o) => self.b.ins().iconst(I64, o as i64),
            SymAddr::Frame(o) => {
                let f = self.b.use_var(self.frame);
                self.b.ins().iadd_imm_s(f, o as i64)
            }
            SymAddr::KernelParam(o) => {
                let p = self.ctx_i64(cx::PARAMS);
                self.b.ins().iadd_imm_s(p, o as i64)
            }
            SymAddr::Func(a) => self.b.ins().iconst(I64, a as i64),
        };
        if extra == 0 {
            v
        } else {
            self.b.ins().iadd_imm_s(v, extra)
        }
    }

    /// A source operand as the emulator reads it: the raw `u64` bits.
    pub(super) fn read(&mut self, s: &Src) -> Value {
        match *s {
            Src::Reg(r) => self.b.use_var(self.regs[r as usize]),
            Src::Pred(p, neg) => {
                let v = self.b.use_var(self.preds[p as usize]);
                let v = self.b.ins().uextend(I64, v);
                if neg {
                    self.b.ins().bxor_imm_s(v, 1)
                } else {
                    v
                }
            }
            Src::Imm(v) => self.b.ins().iconst(I64, v as i64),
            Src::Special(s, c) => self.special(s, c),
            Src::Sym(sym, off) => self.symbol(sym, off),
            Src::None => self.b.ins().iconst(I64, 0),
        }
    }

    /// A predicate source as an `i8` 0/1.
    pub(super) fn read_pred(&mut self, s: &Src) -> Value {
        match *s {
            Src::Pred(p, neg) => {
                let v = self.b.use_var(self.preds[p as usize]);
                if neg {
                    self.b.ins().bxor_imm_s(v, 1)
                } else {
                    v
                }
            }
            _ => {
                let v = self.read(s);
                let v = self.b.ins().band_imm_s(v, 1);
                self.b.ins().ireduce(I8, v)
            }
        }
    }

    /// Writes raw bits to a destination (masked to the register's width, as the emulator does).
    pub(super) fn write(&mut self, d: Dst, v: Value) {
        match d {
            Dst::Reg(slot, mask) => {
                // A value zero-extended from no more bits than the register has needs no mask.
                let narrow = self.zero_extended_bits(v).is_some_and(|k| k <= mask.count_ones());
                let v = if mask == u64::MAX || narrow { v } else { self.b.ins().band_imm_s(v, mask as i64) };
                self.b.def_var(self.regs[slot as usize], v);
            }
            Dst::Pred(p) => {
                let z = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                self.b.def_var(self.preds[p as usize], z);
            }
            Dst::Sink | Dst::None => {}
        }
    }

    pub(super) fn write_bool(&mut self, d: Dst, b8: Value) {
        match d {
            Dst::Pred(p) => self.b.def_var(self.preds[p as usize], b8),
            _ => {
                let v = self.b.ins().uextend(I64, b8);
                self.write(d, v);
            }
        }
    }

    pub(super) fn mask(&mut self, v: Value, ty: Ty) -> Value {
        let bits = ty.bits();
        if bits >= 64 || self.zero_extended_bits(v).is_some_and(|k| k <= bits) {
            v
        } else {
            self.b.ins().band_imm_s(v, ty.mask() as i64)
        }
    }

    /// How many low bits of `v` can be non-zero, when its definition shows it (a zero-extending load or
    /// extension, or an AND with a low mask): masks to that width or more are then no-ops, which Cranelift
    /// does not see by itself.
    fn zero_extended_bits(&self, v: Value) -> Option<u32> {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else { return None };
        match dfg.insts[inst].opcode() {
            Opcode::Uextend => dfg.inst_args(inst).first().map(|&x| dfg.value_type(x).bits()),
            Opcode::Uload8 => Some(8),
            Opcode::Uload16 => Some(16),
            Opcode::Uload32 => Some(32),
            Opcode::Band => dfg.inst_args(inst).iter().find_map(|&x| {
                let ValueDef::Result(c, 0) = dfg.value_def(x) else { return None };
                match dfg.insts[c] {
                    InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => {
                        let m = imm.bits() as u64;
                        (m & m.wrapping_add(1) == 0).then(|| 64 - m.leading_zeros())
                    }
                    _ => None,
                }
            }),
            _ => None,
        }
    }

    /// The value extended to 64 bits by the type's signedness (the emulator's `Ty::extend`).
    pub(super) fn extend(&mut self, v: Value, ty: Ty) -> Value {
        match ty {
            Ty::S8 | Ty::S16 | Ty::S32 => {
                let narrow = match ty {
                    Ty::S8 => types::I8,
                    Ty::S16 => types::I16,
                    _ => I32,
                };
                let n = self.b.ins().ireduce(narrow, v);
                self.b.ins().sextend(I64, n)
            }
            _ => self.mask(v, ty),
        }
    }

    /// The argument of `v`'s defining instruction when that is `opcode` (one value argument).
    fn unary_def(&self, v: Value, opcode: cranelift_codegen::ir::Opcode) -> Option<Value> {
        let dfg = &self.b.func.dfg;
        let cranelift_codegen::ir::ValueDef::Result(inst, 0) = dfg.value_def(v) else { return None };
        (dfg.insts[inst].opcode() == opcode).then(|| dfg.inst_args(inst).first().copied()).flatten()
    }

    /// `v`'s bits as an `f32`. When `v` holds the bits of an `f32` computed in this block, that value itself:
    /// registers are `i64` bits, and Cranelift does not fold the float → int → float moves between ops.
    pub(super) fn f32_of(&mut self, v: Value) -> Value {
        use cranelift_codegen::ir::Opcode as O;
        if let Some(f) = self.unary_def(v, O::Uextend).and_then(|n| self.unary_def(n, O::Bitcast)) {
            if self.b.func.dfg.value_type(f) == types::F32 {
                return f;
            }
        }
        let n = self.b.ins().ireduce(I32, v);
        self.b.ins().bitcast(types::F32, MemFlagsData::new(), n)
    }

    pub(super) fn f64_of(&mut self, v: Value) -> Value {
        use cranelift_codegen::ir::Opcode as O;
        if let Some(f) = self.unary_def(v, O::Bitcast) {
            if self.b.func.dfg.value_type(f) == types::F64 {
                return f;
            }
        }
        self.b.ins().bitcast(types::F64, MemFlagsData::new(), v)
    }

    pub(super) fn bits_of_f32(&mut self, f: Value) -> Value {
        let n = self.b.ins().bitcast(I32, MemFlagsData::new(), f);
        self.b.ins().uextend(I64, n)
    }

    pub(super) fn bits_of_f64(&mut self, f: Value) -> Value {
        self.b.ins().bitcast(I64, MemFlagsData::new(), f)
    }
}
