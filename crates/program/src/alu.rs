//! Lane arithmetic: one decoded op applied to the operand arrays of a warp. The op and type are dispatched
//! once, outside the loop over lanes; per-lane results are written for every lane (the caller keeps only
//! the active ones), except where computing an inactive lane could be costly.

use scalar::bits as sb;
use scalar::int::{self as si, Width};
use simt::LaneMask;

use crate::Ty;
use crate::WARP;
use crate::{AtomOp, BoolOp, Cmp, Kind, Op, Part, Sub};

type Lanes = [u64; WARP];

/// Runs `op` on the lanes of `exec`. `out2` receives a second result (`setp`'s complement predicate);
/// `carry` holds the carry flag of each lane (bit per lane). Returns `false` for a combination of operation,
/// type and modifiers the emulator does not implement.
#[allow(clippy::too_many_arguments)]
pub fn exec(
    op: &Op,
    exec: LaneMask,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    d: &Lanes,
    out: &mut Lanes,
    out2: &mut Lanes,
    carry: &mut u32,
) -> bool {
    let ty = op.ty;
    let m = &op.m;
    let lanes = || exec.iter().map(|l| l as usize);
    macro_rules! each {
        (|$l:ident| $e:expr) => {{
            for $l in lanes() {
                out[$l] = $e;
            }
        }};
    }
    if ty.is_float()
        && !matches!(
            op.kind,
            Kind::Mov
                | Kind::Cvt
                | Kind::CvtF8
                | Kind::Setp
                | Kind::Set
                | Kind::Selp
                | Kind::Slct
                | Kind::Pack
                | Kind::Unpack
        )
    {
        return crate::float::exec(op, exec, a, b, c, out);
    }
    let bits = ty.bits().min(64);
    let mask = ty.mask();
    let w = width(ty);
    let signed = ty.is_signed();
    let sx = |v: u64| ty.extend(v) as i64;
    match op.kind {
        Kind::Add | Kind::Sub if m.cc || op.kind == Kind::Add && m.sat => {
            if m.sat {
                // add.sat.s32 / sub.sat.s32 clamp to the s32 range.
                each!(|l| {
                    let (x, y) = (sx(a[l]) as i32, sx(b[l]) as i32);
                    (if op.kind == Kind::Add { x.saturating_add(y) } else { x.saturating_sub(y) }) as u32 as u64
                });
                return true;
            }
            let sub = op.kind == Kind::Sub;
            for l in lanes() {
                let (x, y) = (a[l] & mask, b[l] & mask);
                // `add.cc` has no carry in; `sub.cc` computes `a + !b + 1`.
                let (r, cf) = carry_op(sub, x, y, sub, bits);
                out[l] = r;
                set_bit(carry, l, cf);
            }
        }
        Kind::Sub if m.sat => each!(|l| (sx(a[l]) as i32).saturating_sub(sx(b[l]) as i32) as u32 as u64),
        Kind::Add => each!(|l| a[l].wrapping_add(b[l]) & mask),
        Kind::Sub => each!(|l| a[l].wrapping_sub(b[l]) & mask),
        Kind::Addc | Kind::Subc => {
            let sub = op.kind == Kind::Subc;
            for l in lanes() {
                let cin = (*carry >> l) & 1 != 0;
                let (r, cf) = carry_op(sub, a[l] & mask, b[l] & mask, cin, bits);
                out[l] = r;
                if m.cc {
                    set_bit(carry, l, cf);
                }
            }
        }
        Kind::Mul => match m.part {
            Part::Lo => each!(|l| a[l].wrapping_mul(b[l]) & mask),
            Part::Hi => each!(|l| mul_hi(ty, a[l], b[l])),
            Part::Wide => each!(|l| mul_wide(ty, a[l], b[l])),
        },
        Kind::Mad | Kind::Madc => {
            for l in lanes() {
                let (prod, wmask, wbits) = match m.part {
                    Part::Lo => (a[l].wrapping_mul(b[l]) & mask, mask, bits),
                    Part::Hi => (mul_hi(ty, a[l], b[l]), mask, bits),
                    Part::Wide => (mul_wide(ty, a[l], b[l]), crate::mask_bits(bits * 2), bits * 2),
                };
                if m.sat && m.part == Part::Hi && ty == Ty::S32 {
                    out[l] = (i64::from(prod as u32 as i32) + i64::from(c[l] as u32 as i32))
                        .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                        as u64;
                    continue;
                }
                let cin = op.kind == Kind::Madc && (*carry >> l) & 1 != 0;
                if m.cc || op.kind == Kind::Madc {
                    let (r, cf) = carry_op(false, prod, c[l] & wmask, cin, wbits);
                    out[l] = r;
                    if m.cc {
                        set_bit(carry, l, cf);
                    }
                } else {
                    out[l] = prod.wrapping_add(c[l]) & wmask;
                }
            }
        }
        Kind::Mul24 => each!(|l| si::mul24(a[l], b[l], signed, m.part == Part::Hi)),
        Kind::Mad24 => each!(|l| si::mad24(a[l], b[l], c[l], signed, m.part == Part::Hi, m.sat)),
        Kind::Sad => each!(|l| si::sad(a[l], b[l], c[l], w, signed)),
        Kind::CvtF8 => return crate::convert::cvt_fp8(op, exec, a, b, out),
        Kind::CvtTf32 => return crate::convert::cvt_tf32(op, exec, a, out),
        Kind::Packed16 => {
            let Sub::Packed16(k) = m.sub else { return false };
            each!(|l| packed16(k, signed, m.relu, a[l], b[l]))
        }
        Kind::SimdVideo => {
            let Some(crate::Extra::Video(v)) = op.extra.as_deref() else { return false };
            each!(|l| simd_video(v, a[l], b[l], c[l]))
        }
        Kind::ScalarVideo => {
            let Some(crate::Extra::ScalarVideo(v)) = op.extra.as_deref() else { return false };
            each!(|l| crate::video::exec(v, a[l], b[l], c[l]))
        }
        Kind::CvtPack => {
            let w = u32::from(m.vec);
            let (lo, hi) = if signed { (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1) } else { (0, (1i64 << w) - 1) };
            let sat = |v: u64| ((v as u32 as i32 as i64).clamp(lo, hi) as u64) & ((1u64 << w) - 1);
            each!(|l| {
                let packed = sat(b[l]) | sat(a[l]) << w;
                let rest = if w < 16 { (c[l] & 0xffff_ffff) << (2 * w) } else { 0 };
                (packed | rest) & 0xffff_ffff
            });
        }
        // `dp4a.atype.btype`, `dp2a.{lo,hi}.atype.btype`: `ty` is the first source's type, `ty2` the second's.
        Kind::Dp4a => each!(|l| si::dp4a(a[l], b[l], c[l], signed, op.ty2.is_signed())),
        Kind::Dp2a => each!(|l| si::dp2a(a[l], b[l], c[l], m.part == Part::Hi, signed, op.ty2.is_signed())),
        Kind::Div => each!(|l| si::div(a[l], b[l], w, signed)),
        Kind::Rem => each!(|l| si::rem(a[l], b[l], w, signed)),
        Kind::Abs => each!(|l| (sx(a[l]).wrapping_abs() as u64) & mask),
        Kind::Neg => each!(|l| (sx(a[l]).wrapping_neg() as u64) & mask),
        Kind::Min | Kind::Max => {
            let max = op.kind == Kind::Max;
            for l in lanes() {
                let r = if ty.is_signed() {
                    let (x, y) = (sx(a[l]), sx(b[l]));
                    let mut r = if max { x.max(y) } else { x.min(y) };
                    if m.relu {
                        r = r.max(0);
                    }
                    r as u64
                } else {
                    let (x, y) = (a[l] & mask, b[l] & mask);
                    if max {
                        x.max(y)
                    } else {
                        x.min(y)
                    }
                };
                out[l] = r & mask;
            }
        }
        Kind::And => each!(|l| a[l] & b[l] & mask),
        Kind::Or => each!(|l| (a[l] | b[l]) & mask),
        Kind::Xor => each!(|l| (a[l] ^ b[l]) & mask),
        Kind::Not => each!(|l| !a[l] & mask),
        Kind::Cnot => each!(|l| u64::from(a[l] & mask == 0)),
        Kind::Shl => each!(|l| sb::shl(a[l], b[l] as u32, w)),
        Kind::Shr => each!(|l| sb::shr(a[l], b[l] as u32, w, signed)),
        Kind::Lop3 => match (m.sub, m.boolop) {
            // lop3.BoolOp: d as lop3, p = (d != 0) BoolOp q, with q in operand d.
            (Sub::Lut(lut), Some(bop)) => {
                for l in lanes() {
                    out[l] = sb::lop3(a[l], b[l], c[l], lut, w);
                    out2[l] = u64::from(scalar::compare::bool_op(bop, out[l] != 0, d[l] & 1 != 0));
                }
            }
            _ => each!(|l| sb::lop3(a[l], b[l], c[l], d[l] as u8, w)),
        },
        Kind::Shf => {
            let Sub::Shf { left, clamp } = m.sub else { return false };
            let mode = if clamp { sb::ShfMode::Clamp } else { sb::ShfMode::Wrap };
            each!(|l| sb::shf(a[l], b[l], c[l], left, mode))
        }
        Kind::Prmt => {
            let Sub::Prmt(mode) = m.sub else { return false };
            let mode = match mode {
                1 => sb::PrmtMode::F4e,
                2 => sb::PrmtMode::B4e,
                3 => sb::PrmtMode::Rc8,
                4 => sb::PrmtMode::Ecl,
                5 => sb::PrmtMode::Ecr,
                6 => sb::PrmtMode::Rc16,
                _ => sb::PrmtMode::Generic,
            };
            each!(|l| sb::prmt(a[l], b[l], c[l], mode))
        }
        Kind::Bfe => each!(|l| sb::bfe(a[l], b[l], c[l], w, signed)),
        Kind::Bfi => each!(|l| sb::bfi(a[l], b[l], c[l], d[l], w)),
        Kind::Brev => each!(|l| if bits == 64 { a[l].reverse_bits() } else { u64::from((a[l] as u32).reverse_bits()) }),
        Kind::Popc => each!(|l| u64::from((a[l] & mask).count_ones())),
        Kind::Clz => {
            each!(|l| u64::from(if bits == 64 { a[l].leading_zeros() } else { (a[l] as u32).leading_zeros() }))
        }
        Kind::Bfind => each!(|l| sb::bfind(a[l], w, signed, m.sub == Sub::Shiftamt)),
        Kind::Fns => each!(|l| sb::fns(a[l], b[l], c[l] as u32 as i32)),
        Kind::Bmsk => {
            let mode = if m.sub == Sub::Clamp(true) { sb::ShfMode::Clamp } else { sb::ShfMode::Wrap };
            each!(|l| sb::bmsk(a[l], b[l], mode))
        }
        Kind::Szext => {
            let mode = if m.sub == Sub::Clamp(true) { sb::ShfMode::Clamp } else { sb::ShfMode::Wrap };
            each!(|l| sb::szext(a[l], b[l], mode, signed))
        }
        Kind::Setp | Kind::Set
            if matches!(if op.kind == Kind::Set { op.ty2 } else { op.ty }, Ty::F16x2 | Ty::Bf16x2) =>
        {
            // Two comparisons, one per half: `setp` sets p from the low halves and q from the high ones;
            // `set` writes each half's result in that half (0xffff for an integer destination, 1.0 as f16 or
            // bf16 for a packed one).
            let src = if op.kind == Kind::Set { op.ty2 } else { op.ty };
            let half = if src == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            let cmp = m.cmp.unwrap_or(Cmp::Eq);
            for l in lanes() {
                let at = |x: u64, k: u32| (x >> (16 * k)) & 0xffff;
                let c_in = c[l] & 1 != 0;
                let [lo, hi] =
                    [0, 1].map(|k| combine(m.boolop, compare(half, cmp, at(a[l], k), at(b[l], k), m.ftz), c_in).0);
                if op.kind == Kind::Setp {
                    out[l] = u64::from(lo);
                    out2[l] = u64::from(hi);
                } else {
                    let one: u64 = match op.ty {
                        Ty::F16x2 => 0x3c00,
                        Ty::Bf16x2 => 0x3f80,
                        _ => 0xffff,
                    };
                    out[l] = (if lo { one } else { 0 }) | (if hi { one } else { 0 }) << 16;
                }
            }
        }
        Kind::Setp | Kind::Set => {
            let src = if op.kind == Kind::Set { op.ty2 } else { op.ty };
            for l in lanes() {
                let r = compare(src, m.cmp.unwrap_or(Cmp::Eq), a[l], b[l], m.ftz);
                let (p, q) = combine(m.boolop, r, c[l] & 1 != 0);
                if op.kind == Kind::Setp {
                    out[l] = u64::from(p);
                    out2[l] = u64::from(q);
                } else {
                    out[l] = match op.ty {
                        Ty::F32 => u64::from(if p { 1.0f32 } else { 0.0 }.to_bits()),
                        _ => {
                            if p {
                                op.ty.mask()
                            } else {
                                0
                            }
                        }
                    };
                }
            }
        }
        Kind::Selp => each!(|l| if c[l] & 1 != 0 { a[l] } else { b[l] }),
        Kind::Slct => each!(|l| {
            let ge = match op.ty2 {
                Ty::F32 => f32::from_bits(c[l] as u32) >= 0.0,
                _ => c[l] as u32 as i32 >= 0,
            };
            if ge {
                a[l]
            } else {
                b[l]
            }
        }),
        Kind::Mov => each!(|l| a[l] & mask),
        Kind::Pack => return true,
        Kind::Unpack => return true,
        Kind::Cvt => return crate::convert::cvt(op, exec, a, b, out),
        _ => return false,
    }
    true
}

fn width(ty: Ty) -> Width {
    match ty.bits() {
        8 => Width::W8,
        16 => Width::W16,
        32 | 1 => Width::W32,
        _ => Width::W64,
    }
}

fn set_bit(bits: &mut u32, lane: usize, on: bool) {
    if on {
        *bits |= 1 << lane;
    } else {
        *bits &= !(1 << lane);
    }
}

/// `a + b + cin`, or for a subtraction `a + !b + cin` = `a - b - !cin`, in `bits` bits, with the adder's carry
/// out. As NVIDIA GPUs compute it, `CC.CF` is always that carry: after a subtraction it is NOT borrow
/// (`sub.cc` has a carry-in of 1; `subc` subtracts `!CF`), so `sub.cc` then `addc`, or `add.cc` then `subc`,
/// give the hardware's results (the ISA's prose calls the flag a borrow; chains of `sub.cc`/`subc` alone come
/// out the same either way).
fn carry_op(sub: bool, a: u64, b: u64, cin: bool, bits: u32) -> (u64, bool) {
    let mask = crate::mask_bits(bits);
    let (a, b, c) = (a as u128, b as u128, u128::from(cin));
    if sub {
        let borrow = 1 - c;
        let r = a.wrapping_sub(b).wrapping_sub(borrow);
        ((r as u64) & mask, a >= b + borrow)
    } else {
        let r = a + b + c;
        ((r as u64) & mask, r >> bits != 0)
    }
}

fn mul_hi(ty: Ty, a: u64, b: u64) -> u64 {
    si::mul_hi(a, b, width(ty), ty.is_signed())
}

fn mul_wide(ty: Ty, a: u64, b: u64) -> u64 {
    si::mul_wide(a, b, width(ty), ty.is_signed())
}

/// Evaluates a comparison on two values of type `ty` (`.ftz` flushes f32 subnormal operands).
pub fn compare(ty: Ty, cmp: Cmp, a: u64, b: u64, ftz: bool) -> bool {
    use scalar::compare as sc;
    use scalar::half as sh;
    match ty {
        Ty::F32 => sc::cmp_float(cmp, f32::from_bits(a as u32), f32::from_bits(b as u32), ftz),
        Ty::F64 => sc::cmp_float(cmp, f64::from_bits(a), f64::from_bits(b), false),
        Ty::F16 => sh::cmp::<sh::F16>(cmp, a as u16, b as u16, ftz),
        Ty::Bf16 => sh::cmp::<sh::Bf16>(cmp, a as u16, b as u16, ftz),
        _ => sc::cmp_int(cmp, a, b, width(ty), ty.is_signed()),
    }
}

/// `setp`'s two results: `(a cmp b) op c` and `!(a cmp b) op c`.
fn combine(op: Option<BoolOp>, r: bool, c: bool) -> (bool, bool) {
    match op {
        None => (r, !r),
        Some(op) => (scalar::compare::bool_op(op, r, c), scalar::compare::bool_op(op, !r, c)),
    }
}

/// One atomic read-modify-write: the new value stored, from the old value and the operands.
pub fn atomic(op: AtomOp, ty: Ty, old: u64, a: u64, b: u64) -> u64 {
    let mask = ty.mask();
    match op {
        AtomOp::Add => match ty {
            Ty::F32 => u64::from((f32::from_bits(old as u32) + f32::from_bits(a as u32)).to_bits()),
            Ty::F64 => (f64::from_bits(old) + f64::from_bits(a)).to_bits(),
            Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2 => crate::convert::half_atomic(op, ty, old, a),
            _ => old.wrapping_add(a) & mask,
        },
        AtomOp::Min | AtomOp::Max if matches!(ty, Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2) => {
            crate::convert::half_atomic(op, ty, old, a)
        }
        AtomOp::Min | AtomOp::Max | AtomOp::And | AtomOp::Or | AtomOp::Xor => reduce(op, ty, old, a) & mask,
        AtomOp::Inc => {
            let (o, a) = (old & mask, a & mask);
            if o >= a {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, a) = (old & mask, a & mask);
            if o == 0 || o > a {
                a
            } else {
                o - 1
            }
        }
        AtomOp::Cas => {
            if old & mask == a & mask {
                b & mask
            } else {
                old
            }
        }
        AtomOp::Exch => a & mask,
        AtomOp::Popc => old,
    }
}

/// Combines two values with a reduction operator (`redux`, `atom.min`, ...).
pub fn reduce(op: AtomOp, ty: Ty, x: u64, y: u64) -> u64 {
    match op {
        AtomOp::Add => x.wrapping_add(y),
        AtomOp::Min | AtomOp::Max => {
            let max = op == AtomOp::Max;
            match ty {
                Ty::F32 => {
                    let (a, b) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
                    u64::from((if max { a.max(b) } else { a.min(b) }).to_bits())
                }
                Ty::F64 => {
                    let (a, b) = (f64::from_bits(x), f64::from_bits(y));
                    (if max { a.max(b) } else { a.min(b) }).to_bits()
                }
                _ if ty.is_signed() => {
                    let (a, b) = (ty.extend(x) as i64, ty.extend(y) as i64);
                    (if max { a.max(b) } else { a.min(b) }) as u64
                }
                _ => {
                    let (a, b) = (x & ty.mask(), y & ty.mask());
                    if max {
                        a.max(b)
                    } else {
                        a.min(b)
                    }
                }
            }
        }
        AtomOp::And => x & y,
        AtomOp::Or => x | y,
        AtomOp::Xor => x ^ y,
        _ => y,
    }
}

/// `add`, `min` or `max` on the two half-words of a and b (PTX ISA 9.7.1.1, 9.7.1.12, 9.7.1.13): each half
/// on its own, sign-extended for `.s16x2`; `add` wraps around within its half, `.relu` clamps a negative
/// result to 0.
fn packed16(k: Kind, signed: bool, relu: bool, a: u64, b: u64) -> u64 {
    let half = |x: u64, i: u32| {
        let h = (x >> (16 * i)) as u16;
        if signed {
            i64::from(h as i16)
        } else {
            i64::from(h)
        }
    };
    (0..2).fold(0, |d, i| {
        let (x, y) = (half(a, i), half(b, i));
        let r = match k {
            Kind::Add => x + y,
            Kind::Min => x.min(y),
            _ => x.max(y),
        };
        let r = if relu { r.max(0) } else { r };
        d | (r as u64 & 0xffff) << (16 * i)
    })
}

/// A SIMD video instruction (`VideoOp`), from the ISA's pseudocode (9.7.18.2): each lane's operands
/// taken by `asel`/`bsel` from the half-words or bytes of {b, a} and sign- or zero-extended by their
/// operand's type (`extractAndSignExt`), the operation (`vavrg` rounds half away from zero; `vset` gives 1
/// or 0), `.sat` to the destination's lane range; then with `.add`, c plus the masked lanes' results, else
/// the masked lanes' results (low bits) with c's other lanes; 32-bit results.
fn simd_video(v: &crate::VideoOp, a: u64, b: u64, c: u64) -> u64 {
    use crate::VideoArith as V;
    let bits = if v.lanes == 4 { 8 } else { 16 };
    let both = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    let part = |p: u8, signed: bool| -> i64 {
        let raw = (both >> (u32::from(p) * bits)) & ((1 << bits) - 1);
        if signed && raw >> (bits - 1) != 0 {
            raw as i64 - (1 << bits)
        } else {
            raw as i64
        }
    };
    let (lo, hi) = if v.d_signed { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
    let lane_mask = (1u64 << bits) - 1;
    let (mut merged, mut sum) = (c & 0xffff_ffff, c as i64);
    for i in 0..usize::from(v.lanes) {
        if v.mask >> i & 1 == 0 {
            continue;
        }
        let (x, y) = (part(v.asel[i], v.a_signed), part(v.bsel[i], v.b_signed));
        let mut r = match v.op {
            V::Add => x + y,
            V::Sub => x - y,
            V::Avrg if x + y >= 0 => (x + y + 1) >> 1,
            V::Avrg => (x + y) >> 1,
            V::Absdiff => (x - y).abs(),
            V::Min => x.min(y),
            V::Max => x.max(y),
            V::Set(cmp) => i64::from(match cmp {
                crate::Cmp::Eq => x == y,
                crate::Cmp::Ne => x != y,
                crate::Cmp::Lt => x < y,
                crate::Cmp::Le => x <= y,
                crate::Cmp::Gt => x > y,
                _ => x >= y,
            }),
        };
        if v.sat {
            r = r.clamp(lo, hi);
        }
        sum = sum.wrapping_add(r);
        let shift = i as u32 * bits;
        merged = merged & !(lane_mask << shift) | (r as u64 & lane_mask) << shift;
    }
    if v.add {
        sum as u64 & 0xffff_ffff
    } else {
        merged
    }
}
