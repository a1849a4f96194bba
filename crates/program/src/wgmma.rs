//! Hopper's warpgroup matrix multiply, `wgmma.mma_async.sync.aligned.m64nNkK`: `D = A·B + D` (or `A·B` when
//! the scale-d predicate is false) over a 64×N accumulator held by the 128 threads of a warpgroup, four
//! consecutive warps of the CTA. A (64×K) comes from registers or from shared memory through a matrix
//! descriptor, B (K×N) from shared memory through a descriptor.
//!
//! # Schedule
//!
//! The instruction is asynchronous: it may read its shared-memory operands and write D at any time until a
//! `wgmma.wait_group` covers it, and touching its registers or shared operands before that is undefined.
//! lockstep completes it when it is issued, which is one of the schedules the hardware may pick (no defined
//! program can tell it from a later completion): `wgmma.wait_group` then has nothing to wait for,
//! `wgmma.commit_group` nothing to group, and `wgmma.fence`, which orders the warp's earlier register and
//! shared-memory accesses before the asynchronous reads, is already satisfied by program order; all three
//! are no-ops.
//!
//! The engines meet the four warps of the warpgroup at the instruction (a warp that reaches it waits for
//! the others, as at a barrier; the emulator's `machine/warpgroup.rs`, the JIT's `exec/warpgroup.rs`), check that
//! they pass the same descriptors ([`check_warpgroup`]) and report a warpgroup whose other warps cannot
//! reach it; then each warp executes its own quarter ([`exec`]): rows `16·r .. 16·r + 15` of D, where `r` is
//! the warp's rank in its warpgroup, need only those rows of A (from registers, exactly the ones warp `r`
//! holds), all of B, and that warp's accumulators.
//!
//! # Layouts (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate")
//!
//! - D: warp `r` holds rows `16r + g` and `16r + g + 8`; element `i` of lane `4g + t` is at row
//!   `16r + g + 8·((i >> 1) & 1)`, column `8·(i >> 2) + 2t + (i & 1)` (`tensor::Layout::WgmmaD`); `.f16`
//!   accumulators two to a register, low half first.
//! - A in registers: warp `r`'s rows `16r ..` in the `mma.m16n8k{K}` A layout of the element type.
//! - Descriptors (64 bits): start address bits 0–13, leading-dimension byte offset (LBO) bits 16–29,
//!   stride-dimension byte offset (SBO) bits 32–45, each in 16-byte units; base offset bits 49–51; swizzle
//!   mode bits 62–63 (0 none, 1 128-byte, 2 64-byte, 3 32-byte). With `W` the swizzle width in bytes and
//!   `e` the element size, element (mn, k) (mn a row of A or a column of B) lies at `start` plus:
//!   - K-major (imm-trans 0), no swizzle: 8×16-byte core matrices; `(mn % 8)·16 + (mn / 8)·SBO +
//!     (k·e) % 16 + ((k·e) / 16)·LBO`;
//!   - K-major, swizzled: rows of `W` bytes, eight to an atom; `(mn % 8)·W + (mn / 8)·SBO + k·e` (an
//!     instruction's K is 32 bytes, within one row; LBO is unused);
//!   - MN-major (imm-trans 1, `.f16`/`.bf16` only), no swizzle: `(mn·e) % 16 + ((mn·e) / 16)·SBO +
//!     (k % 8)·16 + (k / 8)·LBO`;
//!   - MN-major, swizzled: `(mn·e) % W + ((mn·e) / W)·LBO + (k % 8)·W + (k / 8)·SBO`;
//!
//!   and a swizzled address then has its bits 4.. exclusive-ored with its bits 7.. (3, 2 or 1 bits for
//!   128, 64 and 32 bytes), the pattern repeating every 1024, 512 or 256 bytes. A non-zero base offset
//!   (a pattern that does not start at such a boundary) is refused at run time.
//!
//! # Arithmetic
//!
//! As `mma` (`tensor.rs`): per element of D, `acc = C` then one `.f32` fused multiply-add per k in order,
//! rounded to nearest even; an `.f16` D is the final accumulator rounded to `.f16`. With scale-d false the
//! accumulator starts at -0.0, the identity of addition, so D is exactly A·B. imm-scale-a/b of -1 negate the
//! elements of A/B (exact). Integer forms sum exactly, then wrap to 32 bits or, with `.satfinite`, clamp.

use ir::{Operand, ScalarType, SpecialReg, Word};
use smallvec::SmallVec;

use crate::tensor::{self, dst_list, src_list, Elem, Frag, Layout, MatrixOp};
use crate::types::Ty;
use crate::{Dst, OperandCx, Space, Src, WarpAccess, WARP};
use device::{ErrorKind, ExecError};

/// Where A comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AOperand {
    /// A shared-memory matrix descriptor.
    Desc(Src),
    /// Four registers holding the warp's 16 rows in the `mma` A layout `frag`.
    Regs(SmallVec<[Src; 4]>, Frag),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgmmaOp {
    pub n: u32,
    pub k: u32,
    pub a_elem: Elem,
    pub b_elem: Elem,
    /// The warp's 16 rows of D.
    pub d: Frag,
    pub a: AOperand,
    /// B's descriptor.
    pub b: Src,
    /// D's registers, written, and read as the accumulator.
    pub dsts: Vec<Dst>,
    pub accs: Vec<Src>,
    /// The scale-d predicate (or immediate): false ignores the accumulator.
    pub scale_d: Src,
    pub neg_a: bool,
    pub neg_b: bool,
    /// MN-major (transposed) shared-memory A / B.
    pub trans_a: bool,
    pub trans_b: bool,
    pub satfinite: bool,
}

impl WgmmaOp {
    pub fn operands(&self, mut src: impl FnMut(&Src), mut dst: impl FnMut(&Dst)) {
        self.dsts.iter().for_each(&mut dst);
        self.accs.iter().for_each(&mut src);
        match &self.a {
            AOperand::Desc(s) => src(s),
            AOperand::Regs(regs, _) => regs.iter().for_each(&mut src),
        }
        src(&self.b);
        src(&self.scale_d);
    }
}

fn elem_of(t: ScalarType) -> Option<Elem> {
    match t {
        ScalarType::E4m3 => Some(Elem::E4m3),
        ScalarType::E5m2 => Some(Elem::E5m2),
        _ => Elem::mma(t),
    }
}

/// Decodes `wgmma.mma_async`; `None` (after recording why) for forms lockstep does not run.
pub(crate) fn decode(
    cx: &mut OperandCx<'_, '_>,
    shape: Option<(u32, u32, Option<u32>)>,
    words: &[Word],
    types: &[ScalarType],
) -> Option<MatrixOp> {
    let fail = |cx: &mut OperandCx<'_, '_>, why: &str| {
        cx.unsupported(why);
        None
    };
    let has = |w: Word| words.contains(&w);
    if !has(Word::MmaAsync) {
        return fail(cx, "`wgmma` is `wgmma.mma_async`, `wgmma.fence`, `wgmma.commit_group` or `wgmma.wait_group`");
    }
    if has(Word::Sp) || has(Word::SpOrderedMetadata) {
        return fail(cx, "sparse `wgmma.mma_async.sp` is not implemented (its metadata operand selects A's elements)");
    }
    if !has(Word::Sync) || !has(Word::Aligned) {
        return fail(cx, "`wgmma.mma_async` needs `.sync.aligned`");
    }
    let Some((64, n, Some(k))) = shape else {
        return fail(cx, "`wgmma.mma_async` needs a shape `.m64nNkK`");
    };
    let elems: SmallVec<[Option<Elem>; 3]> = types.iter().map(|t| elem_of(*t)).collect();
    let [Some(d), Some(a), Some(b)] = *elems.as_slice() else {
        if types.contains(&ScalarType::B1) {
            return fail(cx, "`.b1` `wgmma.mma_async` (`.and.popc`) is not implemented");
        }
        return fail(cx, "`wgmma.mma_async` needs `.dtype.atype.btype`");
    };
    use Elem::*;
    let (ok, int, trans, scales) = match (a, b) {
        (F16 | Bf16, _) => (a == b && k == 16 && (d == F32 || (d == F16 && a == F16)), false, true, true),
        (Tf32, Tf32) => (k == 8 && d == F32, false, false, true),
        (E4m3 | E5m2, E4m3 | E5m2) => (k == 32 && matches!(d, F16 | F32), false, false, true),
        (S8 | U8, S8 | U8) => (k == 32 && d == S32, true, false, false),
        _ => (false, false, false, false),
    };
    if !ok {
        return fail(
            cx,
            "the `wgmma.mma_async` forms implemented are `.f32`/`.f16` `.f16`, `.f32` `.bf16` (k16), `.f32` `.tf32` \
             (k8), `.f32`/`.f16` `.e4m3`/`.e5m2` (k32) and `.s32` `.s8`/`.u8` (k32)",
        );
    }
    let n_ok = if int { n == 8 || n == 24 || (n % 16 == 0 && n <= 256) } else { n % 8 == 0 && (8..=256).contains(&n) };
    if !n_ok {
        return fail(cx, &format!("`wgmma.mma_async` has no N of {n} for these types"));
    }
    let satfinite = has(Word::Satfinite);
    if satfinite && !int {
        return fail(cx, "`.satfinite` is valid on integer `wgmma.mma_async` only");
    }
    let ops = &cx.inst().operands;
    let a_regs = matches!(ops.get(1), Some(Operand::Vector(_)));
    // d, a, b, scale-d, then imm-scale-a and imm-scale-b, then imm-trans-a (descriptor A only) and imm-trans-b.
    let count = 4 + if scales { 2 } else { 0 } + if trans { 2 - usize::from(a_regs) } else { 0 };
    if ops.len() != count {
        return fail(cx, &format!("this `wgmma.mma_async` form takes {count} operands, not {}", ops.len()));
    }
    let dfrag = Frag::mma(Layout::WgmmaD, (16, n, k), d);
    let dsts: Vec<Dst> = dst_list(cx, ops.first())?.into_vec();
    let accs: Vec<Src> = src_list(cx, ops.first())?.into_vec();
    tensor::check_count(cx, dsts.len(), dfrag.regs)?;
    let a_op = if a_regs {
        let frag = Frag::mma(Layout::MmaA, (16, 8, k), a);
        let regs = src_list(cx, ops.get(1))?;
        tensor::check_count(cx, regs.len(), frag.regs)?;
        AOperand::Regs(regs.into_iter().collect(), frag)
    } else {
        AOperand::Desc(cx.src(&ops[1], Ty::B64))
    };
    let b_desc = cx.src(&ops[2], Ty::B64);
    let scale_d = cx.src(&ops[3], Ty::Pred);
    let mut imms = SmallVec::<[i64; 4]>::new();
    for o in &ops[4..] {
        match cx.src(o, Ty::S32) {
            Src::Imm(v) => imms.push(i64::from(v as u32 as i32)),
            _ => return fail(cx, "imm-scale and imm-trans operands of `wgmma.mma_async` must be immediates"),
        }
    }
    let (mut neg_a, mut neg_b, mut trans_a, mut trans_b) = (false, false, false, false);
    if scales {
        if imms[..2].iter().any(|v| !matches!(v, 1 | -1)) {
            return fail(cx, "imm-scale-a and imm-scale-b are 1 or -1");
        }
        (neg_a, neg_b) = (imms[0] == -1, imms[1] == -1);
    }
    if trans {
        let t = &imms[2..];
        if t.iter().any(|v| !matches!(v, 0 | 1)) {
            return fail(cx, "imm-trans-a and imm-trans-b are 0 or 1");
        }
        (trans_a, trans_b) = if a_regs { (false, t[0] == 1) } else { (t[0] == 1, t[1] == 1) };
    }
    Some(MatrixOp::Wgmma(Box::new(WgmmaOp {
        n,
        k,
        a_elem: a,
        b_elem: b,
        d: dfrag,
        a: a_op,
        b: b_desc,
        dsts,
        accs,
        scale_d,
        neg_a,
        neg_b,
        trans_a,
        trans_b,
        satfinite,
    })))
}

/// The shared-memory address of element (`mn`, `k`) of an operand with descriptor `desc` and `esz`-byte
/// elements, MN-major when `mn_major` (see the module documentation); an error for a layout lockstep does
/// not model.
pub fn element_address(desc: u64, esz: u32, mn_major: bool, mn: u32, k: u32) -> Result<u64, String> {
    let field = |at: u32| ((desc >> at) & 0x3FFF) << 4;
    let (start, lbo, sbo) = (field(0), field(16), field(32));
    let width: u64 = match desc >> 62 {
        0 => 0,
        1 => 128,
        2 => 64,
        _ => 32,
    };
    if width != 0 && (desc >> 49) & 7 != 0 {
        return Err(format!(
            "matrix descriptor {desc:#018x} has a non-zero base offset (a swizzle pattern that does not start at a \
             {}-byte boundary), which lockstep does not implement",
            width * 8
        ));
    }
    let (mn, k, e) = (u64::from(mn), u64::from(k), u64::from(esz));
    let off = match (mn_major, width) {
        (false, 0) => (mn % 8) * 16 + (mn / 8) * sbo + (k * e) % 16 + (k * e / 16) * lbo,
        (false, w) => (mn % 8) * w + (mn / 8) * sbo + k * e,
        (true, 0) => (mn * e) % 16 + (mn * e / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo,
        (true, w) => (mn * e) % w + (mn * e / w) * lbo + (k % 8) * w + (k / 8) * sbo,
    };
    let addr = start + off;
    Ok(if width == 0 { addr } else { addr ^ (((addr >> 7) & (width / 16 - 1)) << 4) })
}

/// The warp's rank in its warpgroup, checking that the CTA has the whole warpgroup.
pub fn warp_rank(x: &dyn WarpAccess) -> Result<u32, ExecError> {
    let comp = |s: SpecialReg, c: u8| x.read(&Src::Special(s, c))[0];
    let (nx, ny, nz) = (comp(SpecialReg::Ntid, 0), comp(SpecialReg::Ntid, 1), comp(SpecialReg::Ntid, 2));
    let flat = comp(SpecialReg::Tid, 0) + nx * (comp(SpecialReg::Tid, 1) + ny * comp(SpecialReg::Tid, 2));
    let group = flat / 128;
    if (group + 1) * 128 > nx * ny * nz {
        return Err(x.error(
            0,
            ErrorKind::Invalid(format!(
                "`wgmma.mma_async` in warpgroup {group} of a CTA of {} threads: a warpgroup is 128 threads",
                nx * ny * nz
            )),
        ));
    }
    Ok((flat / WARP as u64 % 4) as u32)
}

/// The value of a descriptor operand, which must be the same in every lane.
fn uniform(x: &dyn WarpAccess, src: &Src, what: &str) -> Result<u64, ExecError> {
    let v = x.read(src);
    match (1..WARP).find(|&l| v[l] != v[0]) {
        None => Ok(v[0]),
        Some(l) => Err(x.error(
            l as u32,
            ErrorKind::Invalid(format!(
                "`wgmma.mma_async` {what} descriptor differs between lanes: lane 0 has {:#x}, lane {l} {:#x}",
                v[0], v[l]
            )),
        )),
    }
}

/// The wgmma of a decoded op, if it is one.
pub fn of(op: &crate::Op) -> Option<&WgmmaOp> {
    match op.extra.as_deref() {
        Some(crate::Extra::Matrix(MatrixOp::Wgmma(w))) => Some(w),
        _ => None,
    }
}

/// The descriptors of A (`None`: A in registers) and B lane 0 of a warp gives: the warps of a warpgroup
/// must agree on them (`check_warpgroup`).
pub fn descriptors(x: &dyn WarpAccess, op: &WgmmaOp) -> (Option<u64>, u64) {
    let a = match &op.a {
        AOperand::Desc(s) => Some(x.read(s)[0]),
        AOperand::Regs(..) => None,
    };
    (a, x.read(&op.b)[0])
}

/// Why the four warps of a warpgroup, about to execute one `wgmma.mma_async`, may not: an error message if
/// their descriptors (`descriptors` of each warp, in rank order) differ.
pub fn check_warpgroup(descs: &[(Option<u64>, u64)]) -> Option<String> {
    let first = descs.first()?;
    let (w, d) = descs.iter().enumerate().find(|(_, d)| *d != first)?;
    let show = |d: &(Option<u64>, u64)| match d.0 {
        Some(a) => format!("A {a:#x}, B {:#x}", d.1),
        None => format!("B {:#x}", d.1),
    };
    Some(format!(
        "the warps of a warpgroup give `wgmma.mma_async` different descriptors: warp 0 of the warpgroup {}, warp {w}          {}",
        show(first),
        show(d)
    ))
}

/// The error of a warpgroup some of whose warps wait at a `wgmma.mma_async` that the others can no longer
/// reach (they exited, or wait elsewhere with nothing left to release them).
pub fn stuck_message(group: u32, waiting: &[u32], total: u32) -> String {
    format!(
        "`wgmma.mma_async` is executed by the whole warpgroup (`.sync.aligned`), but only warps {waiting:?} of the          {total} of warpgroup {group} reached it and the others cannot"
    )
}

/// Loads `rows × cols` elements (row-major: `at(r, c)` gives the operand's (mn, k)) from shared memory.
fn load(
    x: &mut dyn WarpAccess,
    desc: u64,
    elem: Elem,
    mn_major: bool,
    (rows, cols): (u32, u32),
    at: impl Fn(u32, u32) -> (u32, u32),
) -> Result<Vec<u64>, ExecError> {
    let mut out = Vec::with_capacity((rows * cols) as usize);
    for r in 0..rows {
        for c in 0..cols {
            let (mn, k) = at(r, c);
            let addr = element_address(desc, elem.bytes(), mn_major, mn, k)
                .map_err(|why| x.error(0, ErrorKind::Invalid(why)))?;
            out.push(x.load(0, Space::Shared, addr, elem.bytes())?);
        }
    }
    Ok(out)
}

/// Executes the warp's quarter of a `wgmma.mma_async` (the whole warp must execute it: `tensor::exec`).
pub(crate) fn exec(x: &mut dyn WarpAccess, op: &WgmmaOp) -> Result<(), ExecError> {
    let rank = warp_rank(x)?;
    let (n, k) = (op.n, op.k);
    // A: this warp's 16 rows, 16 × k; B: k × n; both row-major.
    let a = match &op.a {
        AOperand::Regs(srcs, frag) => {
            let regs: Vec<[u64; WARP]> = srcs.iter().map(|s| x.read(s)).collect();
            frag.gather(&regs)
        }
        AOperand::Desc(s) => {
            let desc = uniform(x, s, "A")?;
            load(x, desc, op.a_elem, op.trans_a, (16, k), |r, c| (16 * rank + r, c))?
        }
    };
    let b_desc = uniform(x, &op.b, "B")?;
    let b = load(x, b_desc, op.b_elem, op.trans_b, (k, n), |r, c| (c, r))?;
    // The accumulator, with the elements of lanes whose scale-d is false marked.
    let regs: Vec<[u64; WARP]> = op.accs.iter().map(|s| x.read(s)).collect();
    let scale = x.read(&op.scale_d);
    let keep_regs: Vec<[u64; WARP]> =
        (0..op.d.regs).map(|_| std::array::from_fn(|l| if scale[l] & 1 != 0 { u64::MAX } else { 0 })).collect();
    let c = op.d.gather(&regs);
    let keep = op.d.gather(&keep_regs);
    let tile: Vec<u64> = if op.a_elem.is_int() {
        let [a, b] = [(op.a_elem, a), (op.b_elem, b)].map(|(e, v)| v.into_iter().map(|x| e.to_i64(x)).collect());
        let c: Vec<i64> = c.iter().zip(&keep).map(|(&v, &kp)| if kp != 0 { Elem::S32.to_i64(v) } else { 0 }).collect();
        let (a, b): (Vec<i64>, Vec<i64>) = (a, b);
        tensor::integer_multiply_accumulate(16, n, k, &a, &b, &c, op.satfinite)
            .into_iter()
            .map(|v| u64::from(v as u32))
            .collect()
    } else {
        let signed = |e: Elem, neg: bool, v: Vec<u64>| -> Vec<f32> {
            v.into_iter().map(|x| if neg { -e.to_f32(x) } else { e.to_f32(x) }).collect()
        };
        let a = signed(op.a_elem, op.neg_a, a);
        let b = signed(op.b_elem, op.neg_b, b);
        let c: Vec<f32> =
            c.iter().zip(&keep).map(|(&v, &kp)| if kp != 0 { op.d.elem.to_f32(v) } else { -0.0 }).collect();
        tensor::multiply_accumulate(16, n, k, &a, &b, &c).into_iter().map(|v| op.d.elem.round_from(v)).collect()
    };
    let all = simt::LaneMask(u64::from(u32::MAX));
    for (dst, vals) in op.dsts.iter().zip(op.d.scatter(&tile)) {
        x.write(*dst, &vals, all);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_fields_and_swizzles() {
        let desc =
            |start: u64, lbo: u64, sbo: u64, mode: u64| start >> 4 | (lbo >> 4) << 16 | (sbo >> 4) << 32 | mode << 62;
        // K-major, no swizzle: core matrices of 8 rows × 16 bytes.
        let d = desc(0x400, 128, 256, 0);
        assert_eq!(element_address(d, 2, false, 9, 9), Ok(0x400 + 16 + 256 + 2 + 128));
        // K-major, 128-byte swizzle: row 3's second 16-byte chunk moves to chunk 1 ^ 3.
        let d = desc(0x400, 16, 1024, 1);
        assert_eq!(element_address(d, 2, false, 3, 8), Ok(0x400 + 3 * 128 + 2 * 16));
        // MN-major, 32-byte swizzle.
        let d = desc(0, 512, 256, 3);
        assert_eq!(element_address(d, 2, true, 17, 9), Ok(512 + 2 + 32 + 256));
        assert!(element_address(d | 1 << 49, 2, true, 0, 0).is_err());
    }
}
