//! 128-bit registers and accesses (`.b128`, PTX ISA 9.7.9.4 `mov`, 9.7.9.8 `ld`, 9.7.9.10 `st`, 9.7.13.5
//! `atom`). A register slot holds 64 bits in both engines, so a `.reg .b128` register takes two consecutive
//! slots, the low half first. The instructions that take `.b128` operands decode to ops over those halves:
//!
//! - `ld.b128` / `ldu.b128` and `st.b128` are `ld.v2.b64` / `st.v2.b64` of the two halves (`Mods::b128`
//!   set: one 16-byte access, which the JIT makes with one instruction), aligned to 16 bytes like any
//!   16-byte access;
//! - `mov.b128` (copy, pack from two `.b64` or four `.b32` parts, unpack into them) is a [`Kind::Move128`];
//! - `atom.cas.b128` and `atom.exch.b128` are a [`Kind::Atom128`], atomic over the 16 bytes.
//!
//! What ptxas 13 refuses (`.v2.b128`, vector operands of `ld`/`st`/`atom`, `.b128` with other operations)
//! is refused, and so are 128-bit immediates (the ISA does not say how a 64-bit literal widens to 128 bits)
//! and `.b128` registers anywhere else.

use crate::{AtomOp, Decoder, Dst, Extra, Frame, InstId, Kind, Op, RegMap, Space, Src, Sub, Ty};
use ir::{AddressBase, Opcode, Operand};

impl Decoder<'_> {
    /// Decodes `mov`, `ld`, `ldu`, `st`, `atom` and `red` when they have a `.b128` type or operand; false for
    /// other instructions (left to the general path). A form that is not implemented is recorded as
    /// unsupported (and true returned).
    pub(crate) fn wide(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) -> bool {
        let inst = &self.body.insts[i];
        let is_wide = op.ty == Ty::B128 || inst.operands.iter().any(|o| names_wide(o, regs));
        if !is_wide
            || !matches!(inst.opcode, Opcode::Mov | Opcode::Ld | Opcode::Ldu | Opcode::St | Opcode::Atom | Opcode::Red)
        {
            return false;
        }
        if let Some(why) = crate::forms::refused(inst) {
            self.unsupported(i, why);
            return true;
        }
        if op.ty != Ty::B128 || inst.types().count() != 1 {
            self.unsupported(i, "a `.b128` register is an operand only of instructions of type `.b128`");
            return true;
        }
        if inst.operands.iter().any(|o| matches!(o, Operand::Address(_)) && names_wide(o, regs)) {
            self.unsupported(i, "a `.b128` register is not an address");
            return true;
        }
        if op.m.vec > 0 {
            self.unsupported(i, "`.b128` vectors are not valid PTX (a vector cannot exceed 128 bits)");
            return true;
        }
        let ops = &inst.operands;
        match inst.opcode {
            Opcode::Mov => self.move128(op, i, regs, frame),
            Opcode::Ld | Opcode::Ldu => match (ops.first().and_then(|o| wide_reg(o, regs)), ops.get(1)) {
                (Some((lo, hi)), Some(_)) => {
                    op.kind = Kind::Ld;
                    op.mem = self.mem(i, ops.get(1), regs, frame);
                    halves(op, Extra::Dsts([dst(lo), dst(hi)].into_iter().collect()));
                }
                _ => self.unsupported(i, "`ld.b128` loads into one `.b128` register"),
            },
            Opcode::St => match (ops.first(), ops.get(1).and_then(|o| wide_reg(o, regs))) {
                (Some(_), Some((lo, hi))) => {
                    op.kind = Kind::St;
                    op.mem = self.mem(i, ops.first(), regs, frame);
                    halves(op, Extra::Srcs([Src::Reg(lo), Src::Reg(hi)].into_iter().collect()));
                }
                _ => self
                    .unsupported(i, "`st.b128` stores one `.b128` register (128-bit immediates are not implemented)"),
            },
            _ => self.atomic128(op, i, regs, frame),
        }
        true
    }

    /// `mov.b128 d, a` between `.b128` registers, `mov.b128 d, {a, b}` / `{a, b, c, e}` (parts of 64 or 32
    /// bits, lowest first) and `mov.b128 {a, b}, d` / `{a, b, c, e}, d`.
    fn move128(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let ops = &self.body.insts[i].operands;
        let part_ty = |n: usize| match n {
            2 => Some(Ty::B64),
            4 => Some(Ty::B32),
            _ => None,
        };
        let (srcs, src_ty, dsts, dst_ty) = match (ops.first(), ops.get(1)) {
            (Some(d), Some(s)) => match (wide_reg(d, regs), wide_reg(s, regs), d, s) {
                (Some((dl, dh)), Some((sl, sh)), _, _) => {
                    (vec![Src::Reg(sl), Src::Reg(sh)], Ty::B64, vec![dst(dl), dst(dh)], Ty::B64)
                }
                (Some((dl, dh)), None, _, Operand::Vector(items)) => {
                    let Some(t) = part_ty(items.len()) else { return self.bad_move(i) };
                    let part = |o: &Operand| matches!(o, Operand::Reg(_) | Operand::RegElement(..) | Operand::Imm(_));
                    if items.iter().any(|o| !part(o) || names_wide(o, regs)) {
                        return self.bad_move(i);
                    }
                    let srcs = items.iter().map(|o| self.src(i, o, t, regs, frame)).collect();
                    (srcs, t, vec![dst(dl), dst(dh)], Ty::B64)
                }
                (None, Some((sl, sh)), Operand::Vector(items), _) => {
                    let Some(t) = part_ty(items.len()) else { return self.bad_move(i) };
                    let part = |o: &Operand| matches!(o, Operand::Reg(_) | Operand::RegElement(..) | Operand::Sink);
                    if items.iter().any(|o| !part(o) || names_wide(o, regs)) {
                        return self.bad_move(i);
                    }
                    let dsts = items.iter().map(|o| self.dst(i, o, regs)).collect();
                    (vec![Src::Reg(sl), Src::Reg(sh)], Ty::B64, dsts, t)
                }
                (Some(_), None, _, Operand::Imm(_)) => {
                    self.unsupported(i, "128-bit immediates are not implemented (`mov.b128 d, {lo, hi}` is)");
                    return;
                }
                _ => return self.bad_move(i),
            },
            _ => return self.bad_move(i),
        };
        op.kind = Kind::Move128;
        op.ty = dst_ty;
        op.ty2 = src_ty;
        let mut s = srcs.into_iter();
        [op.a, op.b, op.c, op.d] = [(); 4].map(|()| s.next().unwrap_or_default());
        op.extra = Some(Box::new(Extra::Dsts(dsts.into_iter().collect())));
    }

    fn bad_move(&mut self, i: InstId) {
        self.unsupported(
            i,
            "`mov.b128` moves a `.b128` register to another, or packs or unpacks it as two `.b64` or four `.b32` \
             registers",
        );
    }

    /// `atom{.sem}{.scope}{.space}.cas.b128 d, [a], b, c` and `atom...exch.b128 d, [a], b` (sm_90).
    fn atomic128(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let ops = &self.body.insts[i].operands;
        let aop = match op.m.sub {
            Sub::Atom(a @ (AtomOp::Cas | AtomOp::Exch)) => a,
            _ => {
                self.unsupported(
                    i,
                    "`.b128` atomics are `atom.cas` and `atom.exch` only (no `red`, no other operation)",
                );
                return;
            }
        };
        if self.body.insts[i].opcode != Opcode::Atom {
            self.unsupported(i, "`.b128` atomics are `atom.cas` and `atom.exch` only (no `red`, no other operation)");
            return;
        }
        if !matches!(op.m.space, Space::Global | Space::Shared | Space::Generic) {
            self.unsupported(i, "`atom.b128` works on global, shared or generic addresses");
            return;
        }
        let n = if aop == AtomOp::Cas { 4 } else { 3 };
        let d = match ops.first() {
            Some(Operand::Sink) => Some((Dst::Sink, Dst::Sink)),
            Some(o) => wide_reg(o, regs).map(|(lo, hi)| (dst(lo), dst(hi))),
            None => None,
        };
        let values: Option<Vec<(u32, u32)>> = ops.iter().skip(2).map(|o| wide_reg(o, regs)).collect();
        let (Some((dlo, dhi)), Some(values), true) = (d, values, ops.len() == n) else {
            self.unsupported(
                i,
                "`atom.b128` takes `.b128` registers for its result and values (128-bit immediates are not \
                 implemented)",
            );
            return;
        };
        op.kind = Kind::Atom128;
        op.mem = self.mem(i, ops.get(1), regs, frame);
        (op.dst, op.dst2) = (dlo, dhi);
        let reg = |k: usize, hi: bool| values.get(k).map_or(Src::None, |&(l, h)| Src::Reg(if hi { h } else { l }));
        [op.a, op.b, op.c, op.d] = [reg(0, false), reg(0, true), reg(1, false), reg(1, true)];
    }
}

/// Whether an operand names a `.b128` register (in a vector, list or address too).
pub(crate) fn names_wide(o: &Operand, regs: &RegMap) -> bool {
    let wide = |r: &ir::RegId| regs.width[r.as_u32() as usize] == 128;
    match o {
        Operand::Reg(r) | Operand::RegElement(r, _) | Operand::Select(r, _) | Operand::Not(r) | Operand::Neg(r, _) => {
            wide(r)
        }
        Operand::Pair(a, b) => wide(a) || wide(b),
        Operand::Address(a) => matches!(a.base, AddressBase::Reg(r) if wide(&r)),
        Operand::Vector(v) | Operand::Bracket(v) | Operand::List(v) => v.iter().any(|o| names_wide(o, regs)),
        Operand::VectorPair(v, p) => wide(p) || v.iter().any(|o| names_wide(o, regs)),
        _ => false,
    }
}

/// The slots of a `.b128` register operand (low half, high half).
fn wide_reg(o: &Operand, regs: &RegMap) -> Option<(u32, u32)> {
    match o {
        Operand::Reg(r) if regs.width[r.as_u32() as usize] == 128 => {
            let s = regs.slot[r.as_u32() as usize];
            Some((s, s + 1))
        }
        _ => None,
    }
}

fn dst(slot: u32) -> Dst {
    Dst::Reg(slot, u64::MAX)
}

/// A `.b128` access as a two-element access of 64-bit halves.
fn halves(op: &mut Op, extra: Extra) {
    op.ty = Ty::B64;
    op.ty2 = Ty::B64;
    op.m.vec = 2;
    op.m.b128 = true;
    op.extra = Some(Box::new(extra));
}

/// The 128-bit value of a [`Kind::Move128`]'s sources (`a` to `d`, `ty2` bits each, lowest first).
pub fn gather(op: &Op, parts: [u64; 4]) -> u128 {
    let bits = op.ty2.bits();
    let n = (128 / bits) as usize;
    parts
        .iter()
        .take(n)
        .enumerate()
        .fold(0u128, |v, (k, &p)| v | u128::from(p & crate::mask_bits(bits)) << (bits as usize * k))
}

/// Destination part `k` of a [`Kind::Move128`] (`ty` bits each, lowest first).
pub fn part(op: &Op, v: u128, k: usize) -> u64 {
    let bits = op.ty.bits();
    (v >> (bits as usize * k)) as u64 & crate::mask_bits(bits)
}

/// The value an [`Kind::Atom128`] stores over `old`, from its operands `b` and `c` (PTX ISA 9.7.13.5): `exch`
/// stores `b`; `cas` stores `c` where `old` equals `b`, else `old` again.
pub fn atomic_new(aop: AtomOp, old: u128, b: u128, c: u128) -> u128 {
    match aop {
        AtomOp::Cas if old == b => c,
        AtomOp::Cas => old,
        _ => b,
    }
}
