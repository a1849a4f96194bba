//! Decoding of the instructions whose operands or types do not fit the general path: packing, FP8 and tf32
//! conversions, integer arithmetic on packed half-words, `cp.async`, SIMD video instructions. Each either fills the op or records why it is refused.

use smallvec::SmallVec;

use crate::{
    copy, Cmp, Decoder, Dst, Extra, Frame, InstId, Kind, Op, RegMap, Rnd, Space, Src, SymAddr, Ty, VideoArith, VideoOp,
};
use ir::{Component, Modifier, Opcode, Operand, Word};

impl Decoder<'_> {
    /// `vop2` / `vop4` `.dtype.atype.btype{.sat} d{.mask}, a{.asel}, b{.bsel}, c` (SIMD merge) or
    /// `.dtype.atype.btype.add d{.mask}, a{.asel}, b{.bsel}, c` (accumulate), and `vset2` / `vset4`
    /// `.atype.btype.cmp{.add}` with the same operands (PTX ISA 9.7.18.2). Masks: `.h0 .h1 .h10` or `.b0` ..
    /// `.b3210` (digits descending); selectors: `.hxy` (x, y from 0 to 3) or `.bxyzw` (from 0 to 7) over the
    /// half-words or bytes of {b, a}. What the ISA's syntax does not allow (and ptxas refuses) is refused.
    pub(crate) fn simd_video(
        &mut self,
        op: &mut Op,
        i: InstId,
        (arith, lanes): (VideoArith, u8),
        regs: &RegMap,
        frame: &Frame,
    ) {
        use ir::ScalarType as S;
        let inst = &self.body.insts[i];
        let set = arith == VideoArith::Set(Cmp::Eq);
        let types: SmallVec<[S; 3]> = inst.types().collect();
        let signed = |t: Option<&S>| match t {
            Some(S::U32) => Some(false),
            Some(S::S32) => Some(true),
            _ => None,
        };
        // vset has no destination type: its results are unsigned.
        let signs = if set {
            (types.len() == 2).then(|| (Some(false), signed(types.first()), signed(types.get(1))))
        } else {
            (types.len() == 3).then(|| (signed(types.first()), signed(types.get(1)), signed(types.get(2))))
        };
        let Some((Some(d_signed), Some(a_signed), Some(b_signed))) = signs else {
            let what = if set { ".atype.btype" } else { ".dtype.atype.btype" };
            self.unsupported(i, &format!("SIMD video instructions take {what}, each .u32 or .s32"));
            return;
        };
        let cmp = crate::video::comparisons(inst);
        let arith = match (set, cmp.as_slice()) {
            (false, []) => arith,
            (true, [c]) => VideoArith::Set(*c),
            _ => {
                self.unsupported(i, "`vset2`/`vset4` take one comparison (`.eq .ne .lt .le .gt .ge`); other SIMD video instructions none");
                return;
            }
        };
        let (sat, add) = (inst.has(Word::Sat), inst.has(Word::Add));
        let bad = inst.modifiers.iter().find(|m| match m {
            Modifier::Type(_) => false,
            Modifier::Word(w) => match w {
                Word::Sat => set,
                Word::Add | Word::Eq | Word::Ne | Word::Lt | Word::Le | Word::Gt | Word::Ge => false,
                _ => true,
            },
            _ => true,
        });
        if let Some(m) = bad {
            self.unsupported(i, &format!("`.{m}` is not a modifier of `{}` (PTX ISA 9.7.18.2)", inst.opcode));
            return;
        }
        if sat && add {
            self.unsupported(i, "`.sat` cannot be used with the secondary accumulate operation `.add`");
            return;
        }
        let ops = &inst.operands;
        let plain = |o: &Operand| matches!(o, Operand::Reg(_) | Operand::Select(..) | Operand::Imm(_));
        if ops.len() != 4 || !ops.iter().all(plain) || matches!(ops[3], Operand::Select(..)) {
            self.unsupported(
                i,
                "SIMD video instructions take `d{.mask}, a{.asel}, b{.bsel}, c`: 32-bit registers or immediates, no \
                 selector on c",
            );
            return;
        }
        let sel = |o: &Operand| match o {
            Operand::Select(_, c) => Some(*c),
            _ => None,
        };
        let half = lanes == 2;
        let mask = match sel(&ops[0]) {
            None => (1u8 << lanes) - 1,
            Some(c) => match simd_mask(c, half) {
                Some(m) => m,
                None => {
                    let want = if half { "`.h0`, `.h1` or `.h10`" } else { "`.b0` .. `.b3210` (digits descending)" };
                    self.unsupported(i, &format!("`.{c}` is not a destination mask of `{}`: {want}", inst.opcode));
                    return;
                }
            },
        };
        let default_a = [0, 1, 2, 3];
        let default_b = if half { [2, 3, 0, 0] } else { [4, 5, 6, 7] };
        let mut selectors = [default_a, default_b];
        for (k, o) in ops[1..3].iter().enumerate() {
            let Some(c) = sel(o) else { continue };
            match simd_selector(c, half) {
                Some(s) => selectors[k] = s,
                None => {
                    let want = if half { "`.hxy`, x and y from 0 to 3" } else { "`.bxyzw`, x .. w from 0 to 7" };
                    self.unsupported(i, &format!("`.{c}` is not a source selector of `{}`: {want}", inst.opcode));
                    return;
                }
            }
        }
        let whole = |o: &Operand| match o {
            Operand::Select(r, _) => Operand::Reg(*r),
            o => o.clone(),
        };
        op.kind = Kind::SimdVideo;
        op.ty = if d_signed { Ty::S32 } else { Ty::U32 };
        op.dst = self.dst(i, &whole(&ops[0]), regs);
        op.a = self.src(i, &whole(&ops[1]), Ty::B32, regs, frame);
        op.b = self.src(i, &whole(&ops[2]), Ty::B32, regs, frame);
        op.c = self.src(i, &ops[3], Ty::B32, regs, frame);
        op.extra = Some(Box::new(Extra::Video(VideoOp {
            op: arith,
            lanes,
            d_signed,
            a_signed,
            b_signed,
            sat,
            add,
            asel: selectors[0],
            bsel: selectors[1],
            mask,
        })));
    }

    /// `cvt.rn.satfinite{.relu}.f8x2.f32 d, a, b`, `cvt.rn.satfinite{.relu}.f8x2.f16x2 d, a` and
    /// `cvt.rn{.relu}.f16x2.f8x2 d, a`, for f8x2 = `.e4m3x2` or `.e5m2x2` (the first source, or the upper
    /// half, goes to the upper byte).
    pub(crate) fn cvt_fp8(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        use ir::ScalarType as S;
        let inst = &self.body.insts[i];
        let types: SmallVec<[S; 3]> = inst.types().collect();
        let fp8 = |t: S| match t {
            S::E4m3x2 => Some(0u8),
            S::E5m2x2 => Some(1u8),
            _ => None,
        };
        let ops = &inst.operands;
        let (to, from) = (types.first().copied(), types.get(1).copied());
        let shape = match (to.and_then(fp8), from.and_then(fp8), from, to) {
            (Some(f), None, Some(S::F32), _) if ops.len() == 3 => Some((f, Ty::U16, Ty::F32)),
            (Some(f), None, Some(S::F16x2), _) if ops.len() == 2 => Some((f, Ty::U16, Ty::F16x2)),
            (None, Some(f), _, Some(S::F16x2)) if ops.len() == 2 => Some((f, Ty::F16x2, Ty::U16)),
            _ => None,
        };
        let to_fp8 = to.and_then(fp8).is_some();
        let Some((format, ty, ty2)) = shape.filter(|_| op.m.rnd == Rnd::Rn && (!to_fp8 || inst.has(Word::Satfinite)))
        else {
            self.unsupported(
                i,
                "FP8 pair conversions are `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.{f32 (two sources),f16x2}` and \
                 `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}`",
            );
            return;
        };
        op.kind = Kind::CvtF8;
        op.ty = ty;
        op.ty2 = ty2;
        op.m.vec = format;
        op.dst = self.dst(i, &ops[0], regs);
        op.a = self.src(i, &ops[1], ty2, regs, frame);
        if ops.len() == 3 {
            op.b = self.src(i, &ops[2], ty2, regs, frame);
        }
    }

    /// `cvt.rna{.satfinite}.tf32.f32 d, a` (sm_80) and `cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32 d, a` (sm_90;
    /// `.satfinite` there sm_100), the forms of the PTX ISA's `cvt` syntax; the rounding is mandatory.
    pub(crate) fn cvt_tf32(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        use ir::ScalarType as S;
        let inst = &self.body.insts[i];
        let types: SmallVec<[S; 3]> = inst.types().collect();
        let rna = inst.has(Word::Rna);
        let rounding = usize::from(rna) + usize::from(inst.has(Word::Rn)) + usize::from(inst.has(Word::Rz));
        let bad = inst.modifiers.iter().any(|m| match m {
            Modifier::Type(_) => false,
            Modifier::Word(w) => !matches!(w, Word::Rna | Word::Rn | Word::Rz | Word::Satfinite | Word::Relu),
            _ => true,
        });
        let ops = &inst.operands;
        if types.as_slice() != [S::Tf32, S::F32] || rounding != 1 || bad || (rna && op.m.relu) || ops.len() != 2 {
            self.unsupported(
                i,
                "conversions to tf32 are `cvt.rna{.satfinite}.tf32.f32` and `cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32`",
            );
            return;
        }
        op.kind = Kind::CvtTf32;
        op.ty = Ty::B32;
        op.ty2 = Ty::F32;
        op.m.sat = inst.has(Word::Satfinite);
        op.dst = self.dst(i, &ops[0], regs);
        op.a = self.src(i, &ops[1], Ty::F32, regs, frame);
    }

    /// `add.{u16x2,s16x2}`, `min.u16x2`, `min{.relu}.s16x2`, `max.u16x2`, `max{.relu}.s16x2` `d, a, b` (PTX ISA
    /// 8.0, sm_90): the forms with packed half-words the ISA has (`sub` has none; `add.sat` on them is PTX 9.2
    /// for sm_120f, not run here).
    pub(crate) fn packed16(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        use ir::ScalarType as S;
        let inst = &self.body.insts[i];
        let types: SmallVec<[S; 3]> = inst.types().collect();
        let signed = match types.as_slice() {
            [S::U16x2] => false,
            [S::S16x2] => true,
            _ => {
                self.unsupported(i, "packed half-word instructions take one type, .u16x2 or .s16x2");
                return;
            }
        };
        let kind = match inst.opcode {
            Opcode::Add => Kind::Add,
            Opcode::Min => Kind::Min,
            Opcode::Max => Kind::Max,
            other => {
                self.unsupported(i, &format!("`{other}` has no .u16x2/.s16x2 form (those of `add`, `min`, `max` run)"));
                return;
            }
        };
        let relu_ok = signed && kind != Kind::Add;
        let bad = inst.modifiers.iter().find(|m| match m {
            Modifier::Type(_) => false,
            Modifier::Word(Word::Relu) => !relu_ok,
            _ => true,
        });
        if let Some(m) = bad {
            self.unsupported(
                i,
                &format!(
                    "`.{m}` is not a modifier of `{}` with packed half-words (only `min`/`max` .s16x2 take `.relu`)",
                    inst.opcode
                ),
            );
            return;
        }
        let ops = &inst.operands;
        if ops.len() != 3 {
            self.unsupported(i, "packed half-word instructions take d, a, b");
            return;
        }
        op.kind = Kind::Packed16;
        op.ty = if signed { Ty::S32 } else { Ty::U32 };
        op.ty2 = op.ty;
        op.m.sub = crate::Sub::Packed16(kind);
        op.dst = self.dst(i, &ops[0], regs);
        op.a = self.src(i, &ops[1], Ty::B32, regs, frame);
        op.b = self.src(i, &ops[2], Ty::B32, regs, frame);
    }

    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}` and
    /// its groups (`commit_group`, `wait_group`, `wait_all`: no-ops, as copies finish when issued).
    pub(crate) fn cp_async(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        if inst.has(Word::CommitGroup) || inst.has(Word::WaitGroup) || inst.has(Word::WaitAll) {
            op.kind = Kind::Nop;
            return;
        }
        if inst.has(Word::Bulk) {
            self.bulk_copy(op, i, regs, frame);
            return;
        }
        let ops = &inst.operands;
        let size = match ops.get(2) {
            Some(Operand::Imm(ir::Immediate::Int { value, .. })) if matches!(*value, 4 | 8 | 16) => *value as u32,
            _ => {
                self.unsupported(i, "`cp.async` copies 4, 8 or 16 bytes (an immediate cp-size)");
                return;
            }
        };
        let hint = inst.has(Word::L2CacheHint);
        let extra_operands = ops.len().saturating_sub(3 + usize::from(hint));
        if hint && (ops.len() < 4 || !self.cache_policy_ok(ops.last())) {
            self.unsupported(i, "`.L2::cache_hint` takes a last operand: the cache policy, a 64-bit register");
            return;
        }
        if ops.len() < 3 || extra_operands > 1 {
            self.unsupported(i, "`cp.async` takes [dst], [src], cp-size and at most one of src-size, ignore-src");
            return;
        }
        let (mut src_size, mut ignore_src) = (None, None);
        if extra_operands == 1 {
            match self.src(i, &ops[3], Ty::U32, regs, frame) {
                p @ Src::Pred(..) => ignore_src = Some(p),
                s => src_size = Some(s),
            }
        }
        let src = self.mem(i, ops.get(1), regs, frame);
        if !matches!(src.base, Src::Reg(_) | Src::Imm(_) | Src::Sym(SymAddr::Global(_), _)) {
            self.unsupported(i, "the source of `cp.async` must be a global address");
            return;
        }
        op.kind = Kind::CpAsync;
        op.m.space = Space::Shared;
        op.mem = self.mem(i, ops.first(), regs, frame);
        op.extra = Some(Box::new(Extra::Copy(copy::CopyOp { src, size, src_size, ignore_src })));
    }

    /// `elect.sync d|p, membermask` (PTX ISA 9.7.13.x): `d` a 32-bit register or `_`, `p` a predicate, the
    /// member mask a 32-bit register or an immediate. A warp collective like `vote` (`warp.rs`); the mask goes
    /// in `b`, where both engines look for the member mask of `vote`, `match` and `redux`.
    pub(crate) fn elect(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let reg_bits = |r: ir::RegId| self.body.regs[r].ty;
        let (d, p) = match inst.operands.first() {
            Some(Operand::Pair(d, p)) => (Some(*d), *p),
            Some(Operand::VectorPair(items, p)) if matches!(items.as_slice(), [Operand::Sink]) => (None, *p),
            _ => {
                self.unsupported(i, "`elect.sync` writes `d|p` (or `_|p`): a lane id and a predicate");
                return;
            }
        };
        let d_ok = d.is_none_or(|d| reg_bits(d) != ir::ScalarType::Pred && reg_bits(d).size() == 4);
        let mask_ok = match inst.operands.get(1) {
            Some(Operand::Reg(r)) => reg_bits(*r) != ir::ScalarType::Pred && reg_bits(*r).size() == 4,
            Some(Operand::Imm(ir::Immediate::Int { .. })) => true,
            _ => false,
        };
        let plain = inst.modifiers.iter().all(|m| matches!(m, Modifier::Word(Word::Sync)));
        if !d_ok || reg_bits(p) != ir::ScalarType::Pred || !mask_ok || inst.operands.len() != 2 || !plain {
            self.unsupported(
                i,
                "`elect.sync d|p, membermask` takes a 32-bit `d` (or `_`), a predicate `p` and a 32-bit member mask",
            );
            return;
        }
        op.kind = Kind::Elect;
        op.dst = d.map_or(Dst::Sink, |d| self.dst(i, &Operand::Reg(d), regs));
        op.dst2 = self.dst(i, &Operand::Reg(p), regs);
        op.b = self.src(i, &inst.operands[1], Ty::U32, regs, frame);
    }

    /// `cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}`: the element width and signedness from the
    /// conversion type (`.u16 .s16`, or `.u8 .s8 .u4 .s4 .u2 .s2` with `c`).
    pub(crate) fn cvt_pack(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        use ir::ScalarType as S;
        let inst = &self.body.insts[i];
        let types: SmallVec<[S; 3]> = inst.types().collect();
        let (width, signed) = match types.first() {
            Some(S::U16) => (16, false),
            Some(S::S16) => (16, true),
            Some(S::U8) => (8, false),
            Some(S::S8) => (8, true),
            Some(S::U4) => (4, false),
            Some(S::S4) => (4, true),
            Some(S::U2) => (2, false),
            Some(S::S2) => (2, true),
            _ => {
                self.unsupported(i, "`cvt.pack` converts to .u16 .s16 .u8 .s8 .u4 .s4 .u2 .s2");
                return;
            }
        };
        let ops = &inst.operands;
        let wants_c = width < 16;
        if types.get(1) != Some(&S::S32) || !inst.has(Word::Sat) || ops.len() != if wants_c { 4 } else { 3 } {
            self.unsupported(
                i,
                "`cvt.pack` takes `.sat`, .s32 sources a and b, and a .b32 c exactly when packing below 16 bits",
            );
            return;
        }
        op.kind = Kind::CvtPack;
        op.ty = if signed { Ty::S32 } else { Ty::U32 };
        op.m.vec = width;
        op.dst = self.dst(i, &ops[0], regs);
        op.a = self.src(i, &ops[1], Ty::S32, regs, frame);
        op.b = self.src(i, &ops[2], Ty::S32, regs, frame);
        if wants_c {
            op.c = self.src(i, &ops[3], Ty::B32, regs, frame);
        }
    }
}

/// The SIMD video opcodes: operation and lane count.
pub(crate) fn simd_video(opcode: Opcode) -> Option<(VideoArith, u8)> {
    use Opcode as O;
    Some(match opcode {
        O::Vadd2 => (VideoArith::Add, 2),
        O::Vadd4 => (VideoArith::Add, 4),
        O::Vsub2 => (VideoArith::Sub, 2),
        O::Vsub4 => (VideoArith::Sub, 4),
        O::Vavrg2 => (VideoArith::Avrg, 2),
        O::Vavrg4 => (VideoArith::Avrg, 4),
        O::Vabsdiff2 => (VideoArith::Absdiff, 2),
        O::Vabsdiff4 => (VideoArith::Absdiff, 4),
        O::Vmin2 => (VideoArith::Min, 2),
        O::Vmin4 => (VideoArith::Min, 4),
        O::Vmax2 => (VideoArith::Max, 2),
        O::Vmax4 => (VideoArith::Max, 4),
        // The comparison comes from the modifiers (`Eq` stands for any until decoded).
        O::Vset2 => (VideoArith::Set(Cmp::Eq), 2),
        O::Vset4 => (VideoArith::Set(Cmp::Eq), 4),
        _ => return None,
    })
}

/// A SIMD video destination mask: lane bits (bit i: lane i written). `.h0 .h1 .h10` for two lanes; `.b0`
/// .. `.b3`, and two to four distinct digits from 0 to 3 in descending order, for four (the ISA's list).
fn simd_mask(c: Component, half: bool) -> Option<u8> {
    use Component as C;
    match (c, half) {
        (C::H0, true) | (C::B0, false) => Some(1),
        (C::H1, true) | (C::B1, false) => Some(2),
        (C::B2, false) => Some(4),
        (C::B3, false) => Some(8),
        (C::Lanes(l), _) if l.half == half => {
            let top = if half { 1 } else { 3 };
            let d = l.digits();
            let descending = d.windows(2).all(|w| w[0] > w[1]);
            (descending && d.iter().all(|&x| x <= top)).then(|| d.iter().fold(0, |m, &x| m | 1 << x))
        }
        _ => None,
    }
}

/// A SIMD video source selector: for each result lane (lane 0 first), which half-word (0 to 3) or byte (0
/// to 7) of {b, a} it takes (a's are 0-1 or 0-3). `.hxy` has lane 1's first; `.bxyzw` lane 3's.
fn simd_selector(c: Component, half: bool) -> Option<[u8; 4]> {
    let Component::Lanes(l) = c else { return None };
    let n = if half { 2 } else { 4 };
    if l.half != half || usize::from(l.len) != n {
        return None;
    }
    let mut s = [0; 4];
    for (lane, &d) in l.digits().iter().rev().enumerate() {
        s[lane] = d;
    }
    Some(s)
}

/// Why an instruction the general path would take is refused: a modifier that changes its meaning and that
/// the engines do not honour (running it without would be silently wrong).
pub(crate) fn refused(inst: &ir::Inst) -> Option<&'static str> {
    match inst.opcode {
        Opcode::St | Opcode::Red if inst.has(Word::Async) => {
            Some("`st.async` / `red.async` without `.mbarrier::complete_tx::bytes` (the `.global` forms, sm_100) are not implemented")
        }
        Opcode::St if inst.has(Word::Bulk) => Some("`st.bulk` (bulk zero-fill stores, sm_100 and later: `ptxas` refuses it for sm_90) is not implemented"),
        _ if inst.has(Word::Oob) => Some(
            "the `.oob` modifier (zero for out-of-bounds NaN inputs) is not implemented: the ISA leaves the OOB-NaN \
             encoding to the implementation, and the NaN lockstep's tensor loads fill with (all-ones mantissa) is \
             also the canonical NaN, which `.oob` must not zero",
        ),
        _ => None,
    }
}
