//! Lane masks tested as scalars: whether any or every lane of the groups' masks is set (branches on masks),
//! from the comparisons' scalars where a mask follows from them ([`LanePred`], [`StepCmp`]) and from the lane
//! bits elsewhere; lane 0 of a stepping value, and which sources are uniform or step in the group.

use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::types::{I32, I32X4, I64, I8};
use cranelift_codegen::ir::{Block, InstBuilder, InstructionData, Opcode, Value};
use cranelift_frontend::FunctionBuilder;
use ir::SpecialReg;
use program::Src;

use super::strides::{Stride, UNIFORM};
use super::{LaneLeaf, LanePred, Reg, StepCmp, Vector};

impl Vector<'_, '_> {
    /// Whether any lane of the `i32x4` masks (one per group) is set (an `i8`).
    pub(super) fn any_of(&mut self, masks: &[Value]) -> Value {
        let bits = self.masks_bits(masks, |b, x, y| b.ins().bor(x, y));
        self.b.ins().icmp_imm_s(IntCC::NotEqual, bits, 0)
    }

    /// Whether every lane of the `i32x4` masks (one per group) is set (an `i8`).
    pub(super) fn all_of(&mut self, masks: &[Value]) -> Value {
        let bits = self.masks_bits(masks, |b, x, y| b.ins().band(x, y));
        self.b.ins().icmp_imm_s(IntCC::Equal, bits, 0xF)
    }
}

impl<'b> Vector<'_, 'b> {
    /// The masks' lane bits ([`Vector::lane_bits`]) combined by `op`.
    fn masks_bits(&mut self, masks: &[Value], op: impl Fn(&mut FunctionBuilder<'b>, Value, Value) -> Value) -> Value {
        debug_assert!(masks.iter().all(|&m| self.b.func.dfg.value_type(m) == I32X4), "lane masks");
        let bits: Vec<Value> = masks.iter().map(|&m| self.lane_bits(m)).collect();
        bits[1..].iter().fold(bits[0], |a, &x| op(&mut self.b, a, x))
    }
}

impl Vector<'_, '_> {
    /// Branches to `yes` where any lane of the masks (one per group) is set, else to `no`; masks that follow
    /// from scalars ([`LanePred`]) are tested on lane 0 first (exactly, where they are uniform).
    pub(super) fn brif_any(&mut self, masks: &[Value], yes: Block, no: Block) {
        if let Some(ps) = self.lane_preds_of(masks) {
            let l0s: Vec<Value> = ps.iter().map(|p| self.pred_lane0(p)).collect();
            let l0 = l0s[1..].iter().fold(l0s[0], |a, &x| self.b.ins().bor(a, x));
            if ps.iter().all(LanePred::is_uniform) {
                self.b.ins().brif(l0, yes, &[], no, &[]);
                return;
            }
            let lanes = self.b.create_block();
            self.b.ins().brif(l0, yes, &[], lanes, &[]);
            self.b.switch_to_block(lanes);
        }
        let any = self.any_of(masks);
        self.b.ins().brif(any, yes, &[], no, &[]);
    }

    /// Branches to `yes` where every lane of the masks (one per group) is set, else to `no`; masks that follow
    /// from scalars ([`LanePred`]) are tested on them first.
    pub(super) fn brif_all(&mut self, masks: &[Value], yes: Block, no: Block) {
        if let Some(ps) = self.lane_preds_of(masks) {
            let alls: Vec<(Value, bool)> = ps.iter().map(|p| self.pred_all(p)).collect();
            let all = alls[1..].iter().fold(alls[0].0, |a, &(x, _)| self.b.ins().band(a, x));
            let exact = alls.iter().all(|&(_, e)| e);
            if exact {
                self.b.ins().brif(all, yes, &[], no, &[]);
                return;
            }
            let lanes = self.b.create_block();
            self.b.ins().brif(all, yes, &[], lanes, &[]);
            self.b.switch_to_block(lanes);
        }
        let all = self.all_of(masks);
        self.b.ins().brif(all, yes, &[], no, &[]);
    }

    /// The [`LanePred`] of a single group's mask.
    pub(super) fn lane_pred_of(&mut self, masks: &[Value]) -> Option<LanePred> {
        let &[m] = masks else { return None };
        self.lane_pred(m, false, 6)
    }

    /// The [`LanePred`] of each group's mask (every group's, or none). Several groups' (a bundle's) only
    /// where each is alike in its lanes: the lane-0 scalars of stepping values, four groups' worth, would be
    /// so many more live values (saxpy +29% on one worker where alu_loop gains 7%).
    pub(super) fn lane_preds_of(&mut self, masks: &[Value]) -> Option<Vec<LanePred>> {
        let ps: Vec<LanePred> = masks.iter().map(|&m| self.lane_pred(m, false, 6)).collect::<Option<_>>()?;
        (ps.len() == 1 || ps.iter().all(LanePred::is_uniform)).then_some(ps)
    }

    /// The [`LanePred`] of mask `m` (negated), following `not`, `and` and `or` to `depth`.
    pub(super) fn lane_pred(&mut self, m: Value, negated: bool, depth: u32) -> Option<LanePred> {
        if let Some(&leaf) = self.lane_leaves.get(&m) {
            return Some(match (leaf, negated) {
                (LaneLeaf::Step(c), false) => LanePred::Step(c),
                (LaneLeaf::Step(c), true) => LanePred::Step(StepCmp { cc: c.cc.complement(), ..c }),
                (LaneLeaf::Uniform(u), false) => LanePred::Uniform(u),
                (LaneLeaf::Uniform(u), true) => LanePred::Uniform(self.b.ins().bxor_imm_u(u, 1)),
            });
        }
        if depth == 0 {
            return None;
        }
        let inst = self.b.func.dfg.value_def(m).inst()?;
        match self.b.func.dfg.insts[inst] {
            InstructionData::Unary { opcode: Opcode::Bnot, arg } => self.lane_pred(arg, !negated, depth - 1),
            InstructionData::Binary { opcode: op @ (Opcode::Band | Opcode::Bor), args } => {
                let x = Box::new(self.lane_pred(args[0], negated, depth - 1)?);
                let y = Box::new(self.lane_pred(args[1], negated, depth - 1)?);
                // (`not (a and b)` is `not a or not b`.)
                Some(if (op == Opcode::Band) != negated { LanePred::And(x, y) } else { LanePred::Or(x, y) })
            }
            _ => None,
        }
    }

    /// Whether lane 0 of a [`LanePred`]'s mask is set (an `i8`): then some lane is.
    fn pred_lane0(&mut self, p: &LanePred) -> Value {
        match p {
            LanePred::Step(c) => self.b.ins().icmp(c.cc, c.x0, c.u),
            LanePred::Uniform(u) => *u,
            LanePred::And(x, y) | LanePred::Or(x, y) => {
                let (x, y) = (self.pred_lane0(x), self.pred_lane0(y));
                match p {
                    LanePred::And(..) => self.b.ins().band(x, y),
                    _ => self.b.ins().bor(x, y),
                }
            }
        }
    }

    /// Whether every lane of a [`LanePred`]'s mask is set (an `i8`), and whether that is exact (else it is a
    /// sufficient condition: false may still be every lane).
    pub(super) fn pred_all(&mut self, p: &LanePred) -> (Value, bool) {
        match p {
            LanePred::Step(c) => self.step_all(*c),
            LanePred::Uniform(u) => (*u, true),
            LanePred::And(x, y) => {
                let ((x, ex), (y, ey)) = (self.pred_all(x), self.pred_all(y));
                (self.b.ins().band(x, y), ex && ey)
            }
            LanePred::Or(a, b) => {
                // Exact where one side is alike in every lane (then every lane is set where it is, or where
                // every lane of the other side is).
                let ((x, ex), (y, ey)) = (self.pred_all(a), self.pred_all(b));
                let exact = (a.is_uniform() && ey) || (b.is_uniform() && ex);
                (self.b.ins().bor(x, y), exact)
            }
        }
    }
}

impl<'b> Vector<'_, 'b> {
    /// Whether every lane of a [`StepCmp`]'s mask is set, from its scalars (an `i8`), and whether that is
    /// exact (else it is a sufficient condition: false may still be all lanes). Lanes 0..3 are `x0..x0+3`
    /// unless they wrap around (`x0 + 3` past the type's maximum); then they include the maximum and the
    /// minimum.
    fn step_all(&mut self, c: StepCmp) -> (Value, bool) {
        let signed = matches!(
            c.cc,
            IntCC::SignedLessThan
                | IntCC::SignedLessThanOrEqual
                | IntCC::SignedGreaterThan
                | IntCC::SignedGreaterThanOrEqual
        );
        let ext = |b: &mut FunctionBuilder<'b>, v: Value| {
            if signed {
                b.ins().sextend(I64, v)
            } else {
                b.ins().uextend(I64, v)
            }
        };
        let x = ext(&mut self.b, c.x0);
        let u = ext(&mut self.b, c.u);
        let top = if signed { i64::from(i32::MAX) } else { i64::from(u32::MAX) };
        let x3 = self.b.ins().iadd_imm_s(x, 3);
        match c.cc {
            // Lane 3 (past the maximum where lanes wrap: then the maximum is a lane, and not below `u`).
            IntCC::UnsignedLessThan | IntCC::SignedLessThan => (self.b.ins().icmp(c.cc, x3, u), true),
            // (Where lanes wrap, the maximum is a lane, and may equal `u`: the lane bits decide.)
            IntCC::UnsignedLessThanOrEqual | IntCC::SignedLessThanOrEqual => {
                let cc = if signed { IntCC::SignedLessThanOrEqual } else { IntCC::UnsignedLessThanOrEqual };
                (self.b.ins().icmp(cc, x3, u), false)
            }
            // Lane 0 where lanes do not wrap (where they do, the minimum is a lane: never above `u`, and equal
            // to it only where `u` is the minimum, which the lane bits decide).
            IntCC::UnsignedGreaterThan
            | IntCC::SignedGreaterThan
            | IntCC::UnsignedGreaterThanOrEqual
            | IntCC::SignedGreaterThanOrEqual => {
                let c0 = self.b.ins().icmp(c.cc, c.x0, c.u);
                let no_wrap = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, x3, top);
                let exact = matches!(c.cc, IntCC::UnsignedGreaterThan | IntCC::SignedGreaterThan);
                (self.b.ins().band(c0, no_wrap), exact)
            }
            // No lane equals `u` where `u` is not among `x0..x0+3` (modulo 2^32).
            IntCC::NotEqual => {
                let d = self.b.ins().isub(c.u, c.x0);
                (self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, d, 4), true)
            }
            // Four distinct lanes are never all equal to one value.
            _ => (self.b.ins().iconst(I8, 0), true),
        }
    }
}

impl Vector<'_, '_> {
    /// Lane `i` of an `i32x4` as a scalar, from the scalars and constants it was built of where it can (as
    /// `tid.x`'s lanes and sums with uniform values are).
    pub(super) fn lane32_of(&mut self, v: Value, i: u8, depth: u32) -> Value {
        if let (Some(inst), true) = (self.b.func.dfg.value_def(v).inst(), depth > 0) {
            match self.b.func.dfg.insts[inst] {
                InstructionData::Unary { opcode: Opcode::Splat, arg } => return arg,
                InstructionData::UnaryConst { opcode: Opcode::Vconst, constant_handle } => {
                    let bytes = self.b.func.dfg.constants.get(constant_handle).as_slice();
                    let at = usize::from(i) * 4;
                    let lane = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
                    return self.b.ins().iconst(I32, i64::from(lane));
                }
                InstructionData::Binary { opcode: op @ (Opcode::Iadd | Opcode::Isub | Opcode::Imul), args } => {
                    let x = self.lane32_of(args[0], i, depth - 1);
                    let y = self.lane32_of(args[1], i, depth - 1);
                    return match op {
                        Opcode::Iadd => self.b.ins().iadd(x, y),
                        Opcode::Isub => self.b.ins().isub(x, y),
                        _ => self.b.ins().imul(x, y),
                    };
                }
                _ => {}
            }
        }
        self.b.ins().extractlane(v, i)
    }

    /// Whether a source is the same in every lane of the group.
    pub(super) fn src_uniform(&self, s: &Src) -> bool {
        match *s {
            Src::Reg(r) => self.strides.get(r as usize).copied().flatten() == Some(UNIFORM),
            Src::Imm(_) => true,
            Src::Special(SpecialReg::Tid, c) => c > 0 && c < 3,
            Src::Special(sr, c) => c < 3 && crate::uniform::cta_uniform(sr),
            _ => false,
        }
    }

    /// The lane stride of a 32-bit source read as 32 bits, where known exactly.
    pub(super) fn src_stride32(&self, s: &Src) -> Option<i64> {
        match *s {
            Src::Reg(r) => match (self.regs[r as usize], self.strides.get(r as usize).copied().flatten()) {
                (Reg::W(_), Some(Stride { stride, widened: 0 })) => Some(stride),
                _ => None,
            },
            Src::Special(SpecialReg::Tid, 0) => Some(1),
            _ => self.src_uniform(s).then_some(0),
        }
    }
}
