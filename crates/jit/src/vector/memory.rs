//! Loads, stores and atomics: one vector or scalar access where the lanes allow it, else lane by lane;
//! uniform 32-bit loads fused into one 16-byte load; atomics lane after lane.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F32X4, F64, I16X8, I32, I32X4, I64, I64X2, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, MemFlagsData, Value};
use program::{AtomOp, Dst, Kind, Op, Space, Src, Sub, SymAddr, Ty};

use super::regions::writes_memory;
use super::{dom, ro, Addr, Dom, Vector, R, V};

impl Vector<'_, '_> {
    /// A uniform 32-bit load (the current op's, from `a`) as a lane of a 16-byte load that serves it and the
    /// three loads at the next offsets ([`Vector::quad_partners`]), broadcast: one load and four shuffles
    /// where each would be a load and a broadcast (matmul_tiled16's row of the `A` tile). `None` where no
    /// such load serves it.
    fn quad_lane(&mut self, a: Value, flags: MemFlagsData, ty: Ty) -> Option<Value> {
        let (v, k) = match self.quads.remove(&self.cur) {
            Some(q) => q,
            None => {
                let partners = self.quad_partners(self.cur)?;
                let v = self.b.ins().load(if ty == Ty::F32 { F32X4 } else { I32X4 }, flags, a, 0);
                for (k, j) in partners.into_iter().enumerate() {
                    self.quads.insert(j, (v, k as u8 + 1));
                }
                (v, 0)
            }
        };
        let ty = self.b.func.dfg.value_type(v);
        let bytes = self.cast(I8X16, v);
        let mask: Vec<u8> = (0..4).flat_map(|_| (0..4).map(move |b| 4 * k + b)).collect();
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
        let x = self.b.ins().shuffle(bytes, bytes, imm);
        Some(self.cast(ty, x))
    }

    /// For uniform load `i` (32 bits, one destination, unguarded, outside ranges run as masks): the loads
    /// from the same base at offsets 4, 8 and 12 further on, where all three follow in its basic block
    /// with no write to memory or to the base between. The four then read the 16 bytes that one load reads,
    /// at the first one's place: no store can come between, and a fault reads as the first one's.
    fn quad_partners(&self, i: usize) -> Option<[usize; 3]> {
        let ops = &self.prog.ops;
        let op = &ops[i];
        let like = |o: &Op| {
            o.kind == Kind::Ld
                && o.m.space == op.m.space
                && o.mem.base == op.mem.base
                && o.ty.bytes() == 4
                && o.ty == op.ty
                && o.extra.is_none()
                && o.guard.is_none()
                && matches!(o.dst, Dst::Reg(..))
                && self.dst_dom(o.dst) == Dom::W
        };
        // (Not in bundles: each group's ops would share the one map.)
        if !self.alt.is_empty() || self.all_lanes.is_some() || self.ifs.inside[i].is_some() || !like(op) {
            return None;
        }
        let base = match op.mem.base {
            Src::Reg(r) => Some(r as usize),
            _ => None,
        };
        let writes_base = |o: &Op| {
            let mut w = false;
            crate::plan::for_each_def(self.prog, o, |v| w |= Some(v) == base);
            w
        };
        if writes_base(op) {
            return None;
        }
        let mut found = [None; 3];
        for (j, o) in ops.iter().enumerate().take(i + 64).skip(i + 1) {
            let ends_block = self.blocks.contains_key(&j)
                || self.yield_at.contains_key(&j)
                || self.ifs.inside[j].is_some()
                || writes_memory(o)
                || matches!(o.kind, Kind::Bra | Kind::Brx | Kind::Ret | Kind::Exit | Kind::Trap | Kind::Call);
            if ends_block {
                break;
            }
            if like(o) {
                let d = o.mem.offset.wrapping_sub(op.mem.offset);
                if (4..=12).contains(&d) && d % 4 == 0 && found[(d / 4 - 1) as usize].is_none() {
                    found[(d / 4 - 1) as usize] = Some(j);
                }
            }
            if writes_base(o) || found.iter().all(Option::is_some) {
                break;
            }
        }
        Some([found[0]?, found[1]?, found[2]?])
    }

    /// One lane's load with the scalar lowering's extension (an `i64`).
    fn load_scalar(&mut self, flags: MemFlagsData, addr: Value, ty: Ty) -> R<Value> {
        let b = &mut self.b;
        if flags.readonly() && flags.can_move() && ty.bytes() < 8 {
            // Cranelift hoists a movable `load` out of the group loop, not an extending load.
            let mt = match ty.bytes() {
                4 => I32,
                2 => cranelift_codegen::ir::types::I16,
                1 => cranelift_codegen::ir::types::I8,
                n => return Err(format!("a {n}-byte access")),
            };
            let v = b.ins().load(mt, flags, addr, 0);
            return Ok(if ty.is_signed() { b.ins().sextend(I64, v) } else { b.ins().uextend(I64, v) });
        }
        Ok(match (ty.bytes(), ty.is_signed()) {
            (8, _) => b.ins().load(I64, flags, addr, 0),
            (4, true) => b.ins().sload32(flags, addr, 0),
            (4, false) => b.ins().uload32(flags, addr, 0),
            (2, true) => b.ins().sload16(I64, flags, addr, 0),
            (2, false) => b.ins().uload16(I64, flags, addr, 0),
            (1, true) => b.ins().sload8(I64, flags, addr, 0),
            (1, false) => b.ins().uload8(I64, flags, addr, 0),
            (n, _) => return Err(format!("a {n}-byte access")),
        })
    }

    pub(super) fn load(&mut self, op: &Op) -> R {
        let addr = self.address(op)?;
        let ty = op.ty;
        let elem = ty.bytes();
        let dsts: Vec<Dst> = match op.extra.as_deref() {
            Some(program::Extra::Dsts(d)) => d.to_vec(),
            _ => vec![op.dst],
        };
        let kernel_param = matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _));
        let flags = if kernel_param {
            ro()
        } else if op.m.space == Space::Const {
            MemFlagsData::new().with_readonly()
        } else {
            MemFlagsData::new()
        };
        for (k, &d) in dsts.iter().enumerate() {
            if matches!(d, Dst::Pred(_)) {
                return Err("a load into a predicate".into());
            }
            let off = i64::from(elem) * k as i64;
            let dd = self.dst_dom(d);
            // The loaded lanes go through variables: the vector and per-lane paths both define them.
            let (va, vb) = match dd {
                Dom::W => (self.b.declare_var(I32X4), None),
                Dom::D => (self.b.declare_var(I64X2), Some(self.b.declare_var(I64X2))),
            };
            let z = self.zero(dd);
            self.b.def_var(va, z);
            if let Some(vb) = vb {
                self.b.def_var(vb, z);
            }
            // Bytes and half words into 32-bit lanes: one narrow load, extended lane by lane.
            let narrow = (elem == 1 || elem == 2) && dd == Dom::W;
            let vector_form = matches!(addr, Addr::Uniform(_)) || elem == 4 || elem == 8 || narrow;
            let path = self.path(vector_form, addr, elem);
            self.two_ways(
                path,
                |me| {
                    let v = match addr {
                        Addr::Lanes(_, _, _, a0, ..) if narrow => {
                            let (st, vt, parts) = if elem == 1 { (I32, I32X4, 2) } else { (I64, I64X2, 1) };
                            let x = me.b.ins().load(st, flags, a0, off as i32);
                            let x = me.b.ins().scalar_to_vector(vt, x);
                            let mut x = me.cast(if elem == 1 { I8X16 } else { I16X8 }, x);
                            for _ in 0..parts {
                                x = if ty.is_signed() { me.b.ins().swiden_low(x) } else { me.b.ins().uwiden_low(x) };
                            }
                            V::W(x)
                        }
                        Addr::Uniform(a) => {
                            let a = if off == 0 { a } else { me.b.ins().iadd_imm_s(a, off) };
                            let quad = (dsts.len() == 1 && dd == Dom::W && me.guard.is_none())
                                .then(|| me.quad_lane(a, flags, ty))
                                .flatten();
                            if let Some(x) = quad {
                                V::W(me.cast(I32X4, x))
                            } else if ty == Ty::F32 && dd == Dom::W {
                                // Loaded as a float: a float op reads it as a broadcast from memory.
                                let f = me.b.ins().load(F32, flags, a, 0);
                                let f = me.b.ins().splat(F32X4, f);
                                V::W(me.cast(I32X4, f))
                            } else {
                                let s = me.load_scalar(flags, a, ty)?;
                                me.splat_scalar(s, dd)
                            }
                        }
                        Addr::Lanes(_, _, _, a0, ..) if ty == Ty::F32 && dd == Dom::W => {
                            // Loaded as floats: a float op can take the load as its memory operand.
                            let f = me.b.ins().load(F32X4, flags, a0, off as i32);
                            V::W(me.cast(I32X4, f))
                        }
                        Addr::Lanes(_, _, _, a0, ..) => {
                            if elem == 4 {
                                let w = me.b.ins().load(I32X4, flags, a0, off as i32);
                                match dd {
                                    Dom::W => V::W(w),
                                    Dom::D => {
                                        let (l, h) = me.widen(w, ty.is_signed());
                                        V::D(l, h)
                                    }
                                }
                            } else {
                                let l = me.b.ins().load(I64X2, flags, a0, off as i32);
                                let h = me.b.ins().load(I64X2, flags, a0, off as i32 + 16);
                                me.in_dom(V::D(l, h), dd)
                            }
                        }
                    };
                    match v {
                        V::W(w) => me.b.def_var(va, w),
                        V::D(l, h) => {
                            me.b.def_var(va, l);
                            me.b.def_var(vb.expect("64-bit lanes"), h);
                        }
                    }
                    Ok(())
                },
                |me| {
                    let each = |me: &mut Self| {
                        me.anchor(addr, None);
                        me.per_lane(|me, i| {
                            let a = me.lane_addr(addr, i, off);
                            let s = me.load_scalar(flags, a, ty)?;
                            match vb {
                                None => {
                                    let s = me.b.ins().ireduce(I32, s);
                                    let cur = me.b.use_var(va);
                                    let v = me.b.ins().insertlane(cur, s, i);
                                    me.b.def_var(va, v);
                                }
                                Some(vb) => {
                                    let var = if i < 2 { va } else { vb };
                                    let cur = me.b.use_var(var);
                                    let v = me.b.ins().insertlane(cur, s, i % 2);
                                    me.b.def_var(var, v);
                                }
                            }
                            Ok(())
                        })
                    };
                    // Unless the lanes are known to differ.
                    let (Addr::Lanes(l, h, None, a0, ..), None) = (addr, me.guard) else { return each(me) };
                    // Every lane at one address (an index uniform in the group, as a tile's row): one load.
                    let l0 = me.b.ins().extractlane(l, 0);
                    let s = me.b.ins().splat(I64X2, l0);
                    let el = me.b.ins().icmp(IntCC::Equal, l, s);
                    let eh = me.b.ins().icmp(IntCC::Equal, h, s);
                    let e = me.b.ins().band(el, eh);
                    let same = me.b.ins().vall_true(e);
                    let (one, lanes, done) = (me.b.create_block(), me.b.create_block(), me.b.create_block());
                    me.b.ins().brif(same, one, &[], lanes, &[]);
                    me.b.switch_to_block(one);
                    let a = if off == 0 { a0 } else { me.b.ins().iadd_imm_s(a0, off) };
                    let x = me.load_scalar(flags, a, ty)?;
                    match me.splat_scalar(x, dd) {
                        V::W(w) => me.b.def_var(va, w),
                        V::D(l, h) => {
                            me.b.def_var(va, l);
                            me.b.def_var(vb.expect("64-bit lanes"), h);
                        }
                    }
                    me.b.ins().jump(done, &[]);
                    me.b.switch_to_block(lanes);
                    each(me)?;
                    me.b.ins().jump(done, &[]);
                    me.b.switch_to_block(done);
                    Ok(())
                },
            )?;
            let v = match vb {
                None => V::W(self.b.use_var(va)),
                Some(vb) => V::D(self.b.use_var(va), self.b.use_var(vb)),
            };
            self.write(d, v)?;
        }
        Ok(())
    }

    pub(super) fn store(&mut self, op: &Op) -> R {
        let addr = self.address(op)?;
        let ty = op.ty;
        let elem = ty.bytes();
        if elem > 8 {
            return Err(format!("a {elem}-byte store"));
        }
        let srcs: Vec<Src> = match op.extra.as_deref() {
            Some(program::Extra::Srcs(s)) => s.to_vec(),
            _ => vec![op.a],
        };
        for (k, s) in srcs.iter().enumerate() {
            let off = i64::from(elem) * k as i64;
            let v = self.read(s, dom(ty))?;
            let vector_form = matches!(addr, Addr::Lanes(..)) && (elem == 4 || elem == 8);
            let path = self.path(vector_form, addr, elem);
            self.two_ways(
                path,
                |me| {
                    let Addr::Lanes(_, _, _, a0, ..) = addr else { return Err("a uniform vector store".into()) };
                    let fl = MemFlagsData::new();
                    match v {
                        V::W(w) => {
                            me.b.ins().store(fl, w, a0, off as i32);
                        }
                        V::D(l, h) => {
                            me.b.ins().store(fl, l, a0, off as i32);
                            me.b.ins().store(fl, h, a0, off as i32 + 16);
                        }
                    }
                    Ok(())
                },
                |me| {
                    me.anchor(addr, Some(v));
                    me.per_lane(|me, i| {
                        let a = me.lane_addr(addr, i, 0);
                        let x = me.lane(v, i);
                        let fl = MemFlagsData::new();
                        let o = off as i32;
                        match elem {
                            1 => me.b.ins().istore8(fl, x, a, o),
                            2 => me.b.ins().istore16(fl, x, a, o),
                            4 if me.b.func.dfg.value_type(x) == I64 => me.b.ins().istore32(fl, x, a, o),
                            _ => me.b.ins().store(fl, x, a, o),
                        };
                        Ok(())
                    })
                },
            )?;
        }
        Ok(())
    }

    /// `atom` and `red` on 32- and 64-bit words of shared or global memory: the active lanes one after the
    /// other in lane order, as the scalar loop runs the group's threads. Global memory takes the native
    /// atomic instruction (other workers may race); a CTA's shared memory belongs to one worker, so a load,
    /// the operation and a store serve (float addition included).
    pub(super) fn atomic(&mut self, op: &Op) -> R {
        let Sub::Atom(aop) = op.m.sub else { return Err("an atomic without an operation".into()) };
        if op.m.vec > 0 {
            // One atomic per element (crate::translate::atom_vec): kept to the scalar path.
            return Err("vector atomics".into());
        }
        let shared = match op.m.space {
            Space::Shared => true,
            Space::Global => false,
            s => return Err(format!("{s:?} atomics")),
        };
        let elem = op.ty.bytes();
        if op.extra.is_some() || !(elem == 4 || elem == 8) || op.b != Src::None {
            return Err("vector, narrow or compare-and-swap atomics".into());
        }
        let int = !op.ty.is_float();
        let rmw = crate::translate::native_rmw(aop, op.ty);
        let float_add = aop == AtomOp::Add && !int && shared;
        if rmw.is_none() && !float_add {
            return Err(format!("atom.{aop:?}.{:?} in {:?} memory", op.ty, op.m.space));
        }
        let d = dom(op.ty);
        if op.kind == Kind::Atom && op.dst != Dst::Sink && self.dst_dom(op.dst) != d {
            return Err("an atomic's result in a register of another width".into());
        }
        let mt = if elem == 4 { I32 } else { I64 };
        let a = self.read(&op.a, d)?;
        let addr = self.address(op)?;
        let (lo, hi) = (self.b.declare_var(if d == Dom::W { I32X4 } else { I64X2 }), self.b.declare_var(I64X2));
        let z = self.zero(d);
        self.b.def_var(lo, z);
        let z64 = self.zero(Dom::D);
        self.b.def_var(hi, z64);
        let result_read = match op.dst {
            Dst::Reg(slot, _) if op.kind == Kind::Atom => self.read_anywhere[slot as usize],
            _ => false,
        };
        self.anchor(addr, Some(a));
        self.per_lane(|me, i| {
            let ad = me.lane_addr(addr, i, 0);
            let x = me.lane(a, i);
            let fl = MemFlagsData::new();
            let old = match rmw {
                Some(r) if !shared => me.b.ins().atomic_rmw(mt, fl, r, ad, x),
                _ => {
                    let old = me.b.ins().load(mt, fl, ad, 0);
                    let new = match aop {
                        AtomOp::Add if int => me.b.ins().iadd(old, x),
                        AtomOp::Add => {
                            let ft = if mt == I32 { F32 } else { F64 };
                            let (p, q) = (
                                me.b.ins().bitcast(ft, MemFlagsData::new(), old),
                                me.b.ins().bitcast(ft, MemFlagsData::new(), x),
                            );
                            let sum = me.b.ins().fadd(p, q);
                            me.b.ins().bitcast(mt, MemFlagsData::new(), sum)
                        }
                        AtomOp::And => me.b.ins().band(old, x),
                        AtomOp::Or => me.b.ins().bor(old, x),
                        AtomOp::Xor => me.b.ins().bxor(old, x),
                        AtomOp::Exch => x,
                        AtomOp::Min if op.ty.is_signed() => me.b.ins().smin(old, x),
                        AtomOp::Min => me.b.ins().umin(old, x),
                        AtomOp::Max if op.ty.is_signed() => me.b.ins().smax(old, x),
                        _ => me.b.ins().umax(old, x),
                    };
                    me.b.ins().store(fl, new, ad, 0);
                    old
                }
            };
            match d {
                // A result no op reads (a histogram's count) is not collected.
                _ if !result_read => {}
                Dom::W => {
                    let v = me.b.use_var(lo);
                    let v = me.b.ins().insertlane(v, old, i);
                    me.b.def_var(lo, v);
                }
                Dom::D => {
                    let var = if i < 2 { lo } else { hi };
                    let v = me.b.use_var(var);
                    let v = me.b.ins().insertlane(v, old, i % 2);
                    me.b.def_var(var, v);
                }
            }
            Ok(())
        })?;
        if op.kind == Kind::Atom {
            let v = match d {
                Dom::W => V::W(self.b.use_var(lo)),
                Dom::D => V::D(self.b.use_var(lo), self.b.use_var(hi)),
            };
            self.write(op.dst, v)?;
        }
        Ok(())
    }
}
