//! `cvt` on lanes, through `scalar::convert`.

use scalar::convert::{self as sc, CvtModes, CvtRounding, Type};
use scalar::half::{self as sh, HalfMods, F16};
use scalar::round::Rounding;
use simt::LaneMask;

use crate::Ty;
use crate::WARP;
use crate::{Op, Rnd};

fn scalar_type(t: Ty) -> Option<Type> {
    Some(match t {
        Ty::U8 | Ty::B8 => Type::U8,
        Ty::U16 | Ty::B16 => Type::U16,
        Ty::U32 | Ty::B32 => Type::U32,
        Ty::U64 | Ty::B64 => Type::U64,
        Ty::S8 => Type::S8,
        Ty::S16 => Type::S16,
        Ty::S32 => Type::S32,
        Ty::S64 => Type::S64,
        Ty::F16 => Type::F16,
        Ty::Bf16 => Type::Bf16,
        Ty::F32 => Type::F32,
        Ty::F64 => Type::F64,
        _ => return None,
    })
}

fn cvt_rounding(r: Rnd) -> CvtRounding {
    match r {
        Rnd::None => CvtRounding::None,
        Rnd::Rn => CvtRounding::Rn,
        Rnd::Rna => CvtRounding::Rna,
        Rnd::Rz => CvtRounding::Rz,
        Rnd::Rm => CvtRounding::Rm,
        Rnd::Rp => CvtRounding::Rp,
        Rnd::Rni => CvtRounding::Rni,
        Rnd::Rzi => CvtRounding::Rzi,
        Rnd::Rmi => CvtRounding::Rmi,
        Rnd::Rpi => CvtRounding::Rpi,
    }
}

/// `cvt.{modes}.dtype.stype d, a`: `op.ty` is the destination type, `op.ty2` the source type.
pub fn cvt(op: &Op, exec: LaneMask, a: &[u64; WARP], b: &[u64; WARP], out: &mut [u64; WARP]) -> bool {
    let modes =
        CvtModes { rounding: cvt_rounding(op.m.rnd), sat: op.m.sat, ftz: op.m.ftz, relu: op.m.relu, satfinite: false };
    // `cvt.rn.f16x2.f32 d, a, b` packs {a, b} with `a` in the upper half.
    let half = match op.ty {
        Ty::F16x2 => Some(Type::F16),
        Ty::Bf16x2 => Some(Type::Bf16),
        _ => None,
    };
    if let (Some(half), Some(from)) = (half, scalar_type(op.ty2)) {
        for l in exec.iter() {
            let l = l as usize;
            let hi = sc::convert(a[l], from, half, modes);
            let lo = sc::convert(b[l], from, half, modes);
            out[l] = (hi << 16) | (lo & 0xFFFF);
        }
        return true;
    }
    let (Some(to), Some(from)) = (scalar_type(op.ty), scalar_type(op.ty2)) else { return false };
    for l in exec.iter() {
        let l = l as usize;
        let r = sc::convert(a[l], from, to, modes);
        // Integer results are kept sign-extended so that a wider destination register gets the right value.
        out[l] = sc::sign_extend(r, to);
    }
    true
}

/// `cvt` to or from a pair of FP8 values (see `Kind::CvtF8`): each element converted on its own by
/// `scalar::convert`, with `.satfinite` (mandatory towards FP8) and `.relu` as given.
pub fn cvt_fp8(op: &Op, exec: LaneMask, a: &[u64; WARP], b: &[u64; WARP], out: &mut [u64; WARP]) -> bool {
    let fp8 = if op.m.vec == 1 { Type::E5m2 } else { Type::E4m3 };
    let modes = CvtModes { rounding: CvtRounding::Rn, sat: false, ftz: false, relu: op.m.relu, satfinite: true };
    for l in exec.iter() {
        let l = l as usize;
        out[l] = match (op.ty, op.ty2) {
            (Ty::U16, Ty::F32) => {
                sc::convert(a[l], Type::F32, fp8, modes) << 8 | sc::convert(b[l], Type::F32, fp8, modes)
            }
            (Ty::U16, _) => {
                sc::convert(a[l] >> 16 & 0xFFFF, Type::F16, fp8, modes) << 8
                    | sc::convert(a[l] & 0xFFFF, Type::F16, fp8, modes)
            }
            _ => {
                let modes = CvtModes { satfinite: false, ..modes };
                sc::convert(a[l] >> 8 & 0xFF, fp8, Type::F16, modes) << 16
                    | sc::convert(a[l] & 0xFF, fp8, Type::F16, modes)
            }
        };
    }
    true
}

/// `cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32` (see `Kind::CvtTf32`), by `scalar::convert`: rounded at
/// the tf32 precision, the low 13 bits zero; NaN gives the canonical NaN `0x7FFFFFFF`.
pub fn cvt_tf32(op: &Op, exec: LaneMask, a: &[u64; WARP], out: &mut [u64; WARP]) -> bool {
    let modes =
        CvtModes { rounding: cvt_rounding(op.m.rnd), sat: false, ftz: false, relu: op.m.relu, satfinite: op.m.sat };
    for l in exec.iter() {
        let l = l as usize;
        out[l] = sc::convert(a[l], Type::F32, Type::Tf32, modes);
    }
    true
}

/// `atom.add/.min/.max` on f16/bf16 values, packed pairs included (`.noftz`: subnormals are kept; `.min` and
/// `.max` as the plain `min`/`max` instructions: a NaN operand gives the other one).
pub fn half_atomic(aop: crate::AtomOp, ty: Ty, old: u64, a: u64) -> u64 {
    let m = HalfMods::default();
    let mm = scalar::MinMaxMods::default();
    let f16 = |x: u64, y: u64| {
        let (x, y) = (x as u16, y as u16);
        u64::from(match aop {
            crate::AtomOp::Min => sh::min::<F16>(x, y, mm),
            crate::AtomOp::Max => sh::max::<F16>(x, y, mm),
            _ => sh::add::<F16>(x, y, Rounding::Rn, m),
        })
    };
    let bf16 = |x: u64, y: u64| {
        let (x, y) = (x as u16, y as u16);
        u64::from(match aop {
            crate::AtomOp::Min => sh::min::<sh::Bf16>(x, y, mm),
            crate::AtomOp::Max => sh::max::<sh::Bf16>(x, y, mm),
            _ => sh::add::<sh::Bf16>(x, y, Rounding::Rn, m),
        })
    };
    match ty {
        Ty::F16 => f16(old, a),
        Ty::Bf16 => bf16(old, a),
        Ty::F16x2 => f16(old, a) | f16(old >> 16, a >> 16) << 16,
        _ => bf16(old, a) | bf16(old >> 16, a >> 16) << 16,
    }
}
