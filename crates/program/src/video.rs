//! The scalar video instructions (PTX ISA 9.7.18.1: `vadd`, `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`,
//! `vshr`, `vmad`, `vset`): decoding, with the operand selectors (`%r.b2`, `%r.h1`, `ir::Operand::Select`),
//! and one lane's result, written from the ISA's pseudocode.
//!
//! Every source is a 32-bit register whose selected byte, half-word or whole word is sign- or zero-extended
//! by its own type (`partSelectSignExtend`); the primary operation is exact (34 bits for the arithmetic,
//! wider for the shifts and `vmad`); `.sat` clamps to the destination's range, narrowed to the merged part
//! where there is a destination selector (`optSaturate`); then either the secondary operation with `c`
//! (`.add`, `.min`, `.max`; `c` signed by the destination type, `optSecOp`) or the merge of the result's low
//! byte or half-word into `c` at the destination selector (`optMerge`); the low 32 bits are written.
//! `vmad`: `(a·b) + c` in 128 bits, with `.po` (+1) or the negation of the product or of `c` (signed final
//! result, `signedFinal`), scaled by `.shr7`/`.shr15` (an arithmetic shift where the final result is signed),
//! clamped with `.sat` to the final result's 32-bit range. Operand negation (`-a`, `-b`, `-c`): the product
//! is negated where exactly one of a and b is, by `~(a·b) + 1`, and `c` by `~c + 1` in 32 bits before its
//! (then signed) extension; PTX (and ptxas) allow one of the two, and none with `.po`.

use ir::{Component, InstId, Opcode, Operand, Word};
use smallvec::SmallVec;

use crate::{Cmp, Decoder, Extra, Frame, Kind, Op, RegMap, Ty};

/// What a scalar video instruction computes (one per opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarArith {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    Shl,
    Shr,
    Mad,
    Set(Cmp),
}

/// The secondary operation with `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secondary {
    Add,
    Min,
    Max,
}

/// A decoded scalar video instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarVideoOp {
    pub op: ScalarArith,
    pub d_signed: bool,
    pub a_signed: bool,
    pub b_signed: bool,
    /// Selectors: `None` for the whole word.
    pub asel: Option<Component>,
    pub bsel: Option<Component>,
    /// The destination selector of the merge form.
    pub dsel: Option<Component>,
    pub sat: bool,
    pub secondary: Option<Secondary>,
    /// `vshl`/`vshr`: `.clamp` (amounts over 32 count as 32) rather than `.wrap` (amount mod 32).
    pub clamp: bool,
    /// `vmad`: `.po` (plus one).
    pub po: bool,
    /// `vmad`: `.shr7` / `.shr15` (0 without).
    pub scale: u8,
    /// `vmad`: the product negated (exactly one of `-a` and `-b`).
    pub neg_product: bool,
    /// `vmad`: `-c`.
    pub neg_c: bool,
}

/// The opcodes of the scalar video instructions.
pub(crate) fn is_scalar_video(opcode: Opcode) -> bool {
    use Opcode as O;
    matches!(opcode, O::Vadd | O::Vsub | O::Vabsdiff | O::Vmin | O::Vmax | O::Vshl | O::Vshr | O::Vmad | O::Vset)
}

/// `partSelectSignExtend`: the selected part of `x`, sign- or zero-extended.
fn part(x: u64, sel: Option<Component>, signed: bool) -> i128 {
    let (shift, bits) = match sel {
        Some(Component::B0) => (0, 8),
        Some(Component::B1) => (8, 8),
        Some(Component::B2) => (16, 8),
        Some(Component::B3) => (24, 8),
        Some(Component::H0) => (0, 16),
        Some(Component::H1) => (16, 16),
        _ => (0, 32),
    };
    let v = (x >> shift) & ((1u64 << bits) - 1);
    if signed && v >> (bits - 1) & 1 == 1 {
        i128::from(v) - (1i128 << bits)
    } else {
        i128::from(v)
    }
}

/// One lane of a scalar video instruction.
pub fn exec(v: &ScalarVideoOp, a: u64, b: u64, c: u64) -> u64 {
    let ta = part(a, v.asel, v.a_signed);
    if v.op == ScalarArith::Mad {
        return mad(v, ta, part(b, v.bsel, v.b_signed), c);
    }
    // vshl/vshr read b as unsigned whatever the instruction says.
    let b_signed = v.b_signed && !matches!(v.op, ScalarArith::Shl | ScalarArith::Shr);
    let tb = part(b, v.bsel, b_signed);
    let amount = |tb: i128| if v.clamp { tb.min(32) } else { tb & 0x1f };
    let mut tmp: i128 = match v.op {
        ScalarArith::Add => ta + tb,
        ScalarArith::Sub => ta - tb,
        ScalarArith::Absdiff => (ta - tb).abs(),
        ScalarArith::Min => ta.min(tb),
        ScalarArith::Max => ta.max(tb),
        ScalarArith::Shl => ta << amount(tb),
        ScalarArith::Shr => ta >> amount(tb),
        ScalarArith::Set(cmp) => i128::from(match cmp {
            Cmp::Eq => ta == tb,
            Cmp::Ne => ta != tb,
            Cmp::Lt => ta < tb,
            Cmp::Le => ta <= tb,
            Cmp::Gt => ta > tb,
            _ => ta >= tb,
        }),
        ScalarArith::Mad => unreachable!(),
    };
    if v.sat {
        let bits = match v.dsel {
            Some(Component::B0 | Component::B1 | Component::B2 | Component::B3) => 8,
            Some(Component::H0 | Component::H1) => 16,
            _ => 32,
        };
        let (lo, hi) =
            if v.d_signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
        tmp = tmp.clamp(lo, hi);
    }
    // vset's result, and so its d and c, are unsigned.
    let c_signed = v.d_signed && !matches!(v.op, ScalarArith::Set(_));
    let tc = part(c, None, c_signed);
    let d = match (v.secondary, v.dsel) {
        (Some(Secondary::Add), _) => tmp + tc,
        (Some(Secondary::Min), _) => tmp.min(tc),
        (Some(Secondary::Max), _) => tmp.max(tc),
        (None, Some(sel)) => {
            let c = i128::from(c as u32);
            match sel {
                Component::H0 => (tmp & 0xffff) | (c & 0xffff_0000),
                Component::H1 => ((tmp & 0xffff) << 16) | (c & 0xffff),
                Component::B0 => (tmp & 0xff) | (c & 0xffff_ff00),
                Component::B1 => ((tmp & 0xff) << 8) | (c & 0xffff_00ff),
                Component::B2 => ((tmp & 0xff) << 16) | (c & 0xff00_ffff),
                _ => ((tmp & 0xff) << 24) | (c & 0x00ff_ffff),
            }
        }
        (None, None) => tmp,
    };
    u64::from(d as u32)
}

/// `vmad`, from the ISA's pseudocode.
fn mad(v: &ScalarVideoOp, ta: i128, tb: i128, c: u64) -> u64 {
    let signed_final = v.a_signed || v.b_signed || v.neg_product || v.neg_c;
    let (mut product, mut c, mut lsb) = (ta * tb, c as u32, 0);
    if v.po {
        lsb = 1;
    } else if v.neg_product {
        product = !product;
        lsb = 1;
    } else if v.neg_c {
        c = !c;
        lsb = 1;
    }
    let tc = if signed_final { i128::from(c as i32) } else { i128::from(c) };
    let tmp = product + tc + lsb;
    // The scaled result is sign-extended where the final result is signed (the ISA's prose), which an
    // arithmetic shift of the exact value gives; an unsigned final result is never negative.
    let result = tmp >> v.scale;
    let result = if v.sat {
        if signed_final {
            result.clamp(i128::from(i32::MIN), i128::from(i32::MAX))
        } else {
            result.clamp(0, i128::from(u32::MAX))
        }
    } else {
        result
    };
    u64::from(result as u32)
}

impl Decoder<'_> {
    /// A scalar video instruction: `vop.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}`,
    /// `vshl`/`vshr` with `.clamp`/`.wrap`, `vmad.dtype.atype.btype{.po}{.sat}{.shr7|.shr15} d, {-}a, {-}b, {-}c`,
    /// `vset.atype.btype.cmp{.op2} d{.dsel}, a, b{, c}`. What the ISA's syntax does not allow is refused.
    pub(crate) fn scalar_video(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        use ir::ScalarType as S;
        let inst = &self.body.insts[i];
        let opcode = inst.opcode;
        let types: SmallVec<[S; 3]> = inst.types().collect();
        let signed = |t: &S| match t {
            S::U32 => Some(false),
            S::S32 => Some(true),
            _ => None,
        };
        let signs: Option<SmallVec<[bool; 3]>> = types.iter().map(signed).collect();
        // vset has no destination type: its result is unsigned.
        let want = if opcode == Opcode::Vset { 2 } else { 3 };
        let signs = match signs {
            Some(s) if s.len() == want => s,
            _ => {
                let what = if want == 2 { ".atype.btype" } else { ".dtype.atype.btype" };
                self.unsupported(i, &format!("scalar video instructions take {what}, each .u32 or .s32"));
                return;
            }
        };
        let (d_signed, a_signed, b_signed) =
            if want == 2 { (false, signs[0], signs[1]) } else { (signs[0], signs[1], signs[2]) };
        let cmp = comparisons(inst).first().copied();
        let arith = match opcode {
            Opcode::Vadd => ScalarArith::Add,
            Opcode::Vsub => ScalarArith::Sub,
            Opcode::Vabsdiff => ScalarArith::Absdiff,
            Opcode::Vmin => ScalarArith::Min,
            Opcode::Vmax => ScalarArith::Max,
            Opcode::Vshl => ScalarArith::Shl,
            Opcode::Vshr => ScalarArith::Shr,
            Opcode::Vmad => ScalarArith::Mad,
            _ => match cmp {
                Some(c) => ScalarArith::Set(c),
                None => {
                    self.unsupported(i, "`vset` needs a comparison (`.eq`, `.ne`, `.lt`, `.le`, `.gt`, `.ge`)");
                    return;
                }
            },
        };
        let secondary = [(Word::Add, Secondary::Add), (Word::Min, Secondary::Min), (Word::Max, Secondary::Max)]
            .into_iter()
            .find_map(|(w, s)| inst.has(w).then_some(s));
        let shift = matches!(arith, ScalarArith::Shl | ScalarArith::Shr);
        let is_mad = arith == ScalarArith::Mad;
        let allowed = |w: &Word| match w {
            Word::Sat => !matches!(arith, ScalarArith::Set(_)),
            Word::Add | Word::Min | Word::Max => !is_mad,
            Word::Clamp | Word::Wrap => shift,
            Word::Po | Word::Shr7 | Word::Shr15 => is_mad,
            Word::Eq | Word::Ne | Word::Lt | Word::Le | Word::Gt | Word::Ge => matches!(arith, ScalarArith::Set(_)),
            _ => false,
        };
        let bad = inst.modifiers.iter().find(|m| match m {
            ir::Modifier::Type(_) => false,
            ir::Modifier::Word(w) => !allowed(w),
            _ => true,
        });
        if let Some(m) = bad {
            self.unsupported(i, &format!("`.{m}` is not a modifier of `{opcode}` (PTX ISA 9.7.18.1)"));
            return;
        }
        if shift && inst.has(Word::Clamp) == inst.has(Word::Wrap) {
            self.unsupported(i, "`vshl`/`vshr` need one of `.clamp` and `.wrap`");
            return;
        }
        let ops = &inst.operands;
        let sel = |o: Option<&Operand>| match o {
            Some(Operand::Select(_, c) | Operand::Neg(_, Some(c))) => Some(*c),
            _ => None,
        };
        let negated = |k: usize| matches!(ops.get(k), Some(Operand::Neg(..)));
        let (neg_a, neg_b, neg_c) = (negated(1), negated(2), negated(3));
        if (neg_a || neg_b || neg_c || negated(0)) && !is_mad {
            self.unsupported(i, &format!("operand negation is not allowed for `{opcode}` (only `vmad`'s sources)"));
            return;
        }
        if negated(0) {
            self.unsupported(i, "the destination of `vmad` cannot be negated");
            return;
        }
        if (neg_a || neg_b || neg_c) && inst.has(Word::Po) {
            self.unsupported(i, "`vmad.po` takes no operand negation");
            return;
        }
        let neg_product = neg_a != neg_b;
        if neg_product && neg_c {
            self.unsupported(i, "`vmad` negates either the product (`-a` xor `-b`) or `c`, not both");
            return;
        }
        let lanes = |c: Option<Component>| matches!(c, Some(Component::Lanes(_)));
        if ops.iter().take(3).any(|o| lanes(sel(Some(o)))) {
            self.unsupported(
                i,
                "scalar video selectors are `.b0` .. `.b3`, `.h0`, `.h1` (lane lists such as `.h10` are the SIMD \
                 instructions')",
            );
            return;
        }
        let (dsel, asel, bsel) = (sel(ops.first()), sel(ops.get(1)), sel(ops.get(2)));
        let has_c = ops.len() == 4;
        let form_ok = if is_mad {
            has_c && dsel.is_none() && !(inst.has(Word::Shr7) && inst.has(Word::Shr15))
        } else {
            ops.len() == 3 && secondary.is_none() && dsel.is_none() || has_c && (secondary.is_some() != dsel.is_some())
        };
        if !form_ok {
            self.unsupported(
                i,
                "scalar video instructions take `d, a, b` or, with a secondary operation (`.add`/`.min`/`.max`) or a \
                 destination selector (`d.b0` .. `d.h1`) but not both, `d, a, b, c`; `vmad` takes `d, a, b, c`",
            );
            return;
        }
        let plain =
            |o: &Operand| matches!(o, Operand::Reg(_) | Operand::Select(..) | Operand::Neg(..) | Operand::Imm(_));
        if !ops.iter().all(plain) || matches!(ops.get(3), Some(Operand::Select(..) | Operand::Neg(_, Some(_)))) {
            self.unsupported(i, "scalar video operands are 32-bit registers (with selectors) or immediates");
            return;
        }
        let whole = |o: &Operand| match o {
            Operand::Select(r, _) | Operand::Neg(r, _) => Operand::Reg(*r),
            o => o.clone(),
        };
        op.kind = Kind::ScalarVideo;
        op.ty = if d_signed { Ty::S32 } else { Ty::U32 };
        op.dst = self.dst(i, &whole(&ops[0]), regs);
        op.a = self.src(i, &whole(&ops[1]), Ty::B32, regs, frame);
        op.b = self.src(i, &whole(&ops[2]), Ty::B32, regs, frame);
        if has_c {
            op.c = self.src(i, &whole(&ops[3]), Ty::B32, regs, frame);
        }
        let scale = if inst.has(Word::Shr7) {
            7
        } else if inst.has(Word::Shr15) {
            15
        } else {
            0
        };
        op.extra = Some(Box::new(Extra::ScalarVideo(ScalarVideoOp {
            op: arith,
            d_signed,
            a_signed,
            b_signed,
            asel,
            bsel,
            dsel,
            sat: inst.has(Word::Sat),
            secondary,
            clamp: inst.has(Word::Clamp),
            po: inst.has(Word::Po),
            scale,
            neg_product,
            neg_c,
        })));
    }
}

/// The comparisons a video instruction names (`vset`'s `.eq`..`.ge`; more than one is an error its caller
/// reports).
pub(crate) fn comparisons(inst: &ir::Inst) -> SmallVec<[Cmp; 2]> {
    [
        (Word::Eq, Cmp::Eq),
        (Word::Ne, Cmp::Ne),
        (Word::Lt, Cmp::Lt),
        (Word::Le, Cmp::Le),
        (Word::Gt, Cmp::Gt),
        (Word::Ge, Cmp::Ge),
    ]
    .into_iter()
    .filter(|(w, _)| inst.has(*w))
    .map(|(_, c)| c)
    .collect()
}
