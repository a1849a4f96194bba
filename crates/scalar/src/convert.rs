//! `cvt` between every pair of `u8 u16 u32 u64 s8 s16 s32 s64 f16 bf16 f32 f64`, plus `tf32`
//! (destination, f32 layout) and the FP8 formats `e4m3` / `e5m2` (one value per call; the packed
//! `x2` forms are two calls).
//!
//! [`convert`] takes and returns raw bits: only the low `from.bits()` bits of the input are read,
//! and the result occupies the low `to.bits()` bits, zero-extended (use [`sign_extend`] when a
//! signed result is written to a wider register, as the ISA requires).
//!
//! # Rules (PTX ISA, `cvt`)
//! * **int → int**: sign- or zero-extend from the source type, then truncate (wrap) to the
//!   destination; with `.sat`, clamp to the destination's range instead.
//! * **int → float**: one rounding with `.rn .rz .rm .rp` (`.rna` too); default `.rn`. Overflow
//!   (e.g. `u32 → f16`) follows the mode: infinity, or the largest finite value for directed modes
//!   that round toward zero.
//! * **float → int**: round to an integer with `.rni .rzi .rmi .rpi` (a float rounding given
//!   instead acts as its integer form; missing rounding defaults to `.rzi`), then clamp to the
//!   destination range (always: "`.sat` is redundant"); `±inf` clamp. NaN gives 0, except when the
//!   source is `.f64` or the destination is 64-bit, where it gives `1 << (bits - 1)` (ISA text).
//!   `.ftz` flushes an `.f32` subnormal source to zero first (this matters for `.rmi`/`.rpi`).
//! * **float → float**: one rounding (`.rn .rna .rz .rm .rp`, default `.rn`) directly from the
//!   source format (`f64 → f16` is not rounded via f32); widening is exact. An integer rounding
//!   (`.rni…`) first rounds to an integral value in the source format (`cvt.rni.f32.f32`), then the
//!   value is converted with the corresponding float rounding. NaN gives the destination's
//!   canonical NaN (`0x7FFF`, `0x7FFFFFFF`, `0x7FFF_FFFF_FFFF_FFFF`, FP8 `0x7F`).
//! * **modifiers** on float destinations, applied in this order: `.ftz` (f32 source and f32
//!   result subnormals flushed, sign kept), `.satfinite` (`±inf` → `±MAX`, NaN stays NaN; always on
//!   for e4m3/e5m2, where the ISA makes it mandatory), `.sat` (clamp to `[+0, 1]`, NaN → `+0`),
//!   `.relu` (negative and `-0` → `+0`, NaN → canonical NaN).
//! * **tf32** destination: rounded to 10 fraction bits, written in f32 layout with the low 13 bits
//!   zero; NaN gives `0x7FFFFFFF`. As a source, tf32 bits are read as an f32.
//!
//! Not covered: `.rs` (stochastic) rounding, `e2m1 e2m3 e3m2 ue8m0 s2f6` formats, and the
//! `.scaled::n2::ue8m0` forms.

use crate::round::{self, Class, Format, Rounding};

/// A `cvt` operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `.u8`.
    U8,
    /// `.u16`.
    U16,
    /// `.u32`.
    U32,
    /// `.u64`.
    U64,
    /// `.s8`.
    S8,
    /// `.s16`.
    S16,
    /// `.s32`.
    S32,
    /// `.s64`.
    S64,
    /// `.f16`.
    F16,
    /// `.bf16`.
    Bf16,
    /// `.tf32` (32-bit register in f32 layout).
    Tf32,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
    /// `.e4m3` (one byte).
    E4m3,
    /// `.e5m2` (one byte).
    E5m2,
}

impl Type {
    /// Width in bits of one value of this type.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            Type::U8 | Type::S8 | Type::E4m3 | Type::E5m2 => 8,
            Type::U16 | Type::S16 | Type::F16 | Type::Bf16 => 16,
            Type::U32 | Type::S32 | Type::F32 | Type::Tf32 => 32,
            Type::U64 | Type::S64 | Type::F64 => 64,
        }
    }
    /// Whether this is an integer type.
    #[inline]
    pub const fn is_int(self) -> bool {
        matches!(self, Type::U8 | Type::U16 | Type::U32 | Type::U64 | Type::S8 | Type::S16 | Type::S32 | Type::S64)
    }
    /// Whether this is a signed integer type.
    #[inline]
    pub const fn is_signed(self) -> bool {
        matches!(self, Type::S8 | Type::S16 | Type::S32 | Type::S64)
    }
    /// The float encoding of a float type (`tf32` reads as f32).
    #[inline]
    pub const fn format(self) -> Option<Format> {
        match self {
            Type::F16 => Some(Format::F16),
            Type::Bf16 => Some(Format::BF16),
            Type::F32 | Type::Tf32 => Some(Format::F32),
            Type::F64 => Some(Format::F64),
            Type::E4m3 => Some(Format::E4M3),
            Type::E5m2 => Some(Format::E5M2),
            _ => None,
        }
    }
    #[inline]
    const fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits())
    }
}

/// Rounding modifier of `cvt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CvtRounding {
    /// None given (`.rn` for float results, `.rzi` for integer results).
    #[default]
    None,
    /// `.rn`.
    Rn,
    /// `.rna`.
    Rna,
    /// `.rz`.
    Rz,
    /// `.rm`.
    Rm,
    /// `.rp`.
    Rp,
    /// `.rni`.
    Rni,
    /// `.rzi`.
    Rzi,
    /// `.rmi`.
    Rmi,
    /// `.rpi`.
    Rpi,
}

impl CvtRounding {
    /// `(is_integer_rounding, direction)`; `None` maps to `(false, Rn)`.
    #[inline]
    pub const fn split(self) -> (bool, Rounding) {
        match self {
            CvtRounding::None | CvtRounding::Rn => (false, Rounding::Rn),
            CvtRounding::Rna => (false, Rounding::Rna),
            CvtRounding::Rz => (false, Rounding::Rz),
            CvtRounding::Rm => (false, Rounding::Rm),
            CvtRounding::Rp => (false, Rounding::Rp),
            CvtRounding::Rni => (true, Rounding::Rn),
            CvtRounding::Rzi => (true, Rounding::Rz),
            CvtRounding::Rmi => (true, Rounding::Rm),
            CvtRounding::Rpi => (true, Rounding::Rp),
        }
    }
}

/// Modifiers of one `cvt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CvtModes {
    /// Rounding modifier.
    pub rounding: CvtRounding,
    /// `.sat`.
    pub sat: bool,
    /// `.ftz`.
    pub ftz: bool,
    /// `.relu`.
    pub relu: bool,
    /// `.satfinite`.
    pub satfinite: bool,
}

impl CvtModes {
    /// Modes with only a rounding modifier.
    #[inline]
    pub const fn rounding(rounding: CvtRounding) -> CvtModes {
        CvtModes { rounding, sat: false, ftz: false, relu: false, satfinite: false }
    }
}

/// Sign-extend a signed-integer result of type `ty` to 64 bits (other types unchanged).
#[inline]
pub fn sign_extend(bits: u64, ty: Type) -> u64 {
    if ty.is_signed() {
        let s = 64 - ty.bits();
        (((bits << s) as i64) >> s) as u64
    } else {
        bits
    }
}

/// `cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.to.from d, a` on raw bits. See the module docs.
pub fn convert(bits: u64, from: Type, to: Type, m: CvtModes) -> u64 {
    let bits = bits & from.mask();
    match (from.format(), to.format()) {
        (None, None) => int_to_int(bits, from, to, m.sat),
        (None, Some(_)) => {
            let fmt = dest_format(to);
            let v = int_value(bits, from);
            let (_, rnd) = m.rounding.split();
            let r = round::from_int(fmt, v < 0, v.unsigned_abs(), rnd);
            finish(r, fmt, to, m)
        }
        (Some(ffmt), None) => float_to_int(bits, from, ffmt, to, m),
        (Some(ffmt), Some(_)) => {
            let src = if m.ftz && from == Type::F32 { ffmt.flush(bits) } else { bits };
            let (int_round, rnd) = m.rounding.split();
            let src = if int_round { round::round_integral_bits(ffmt, src, rnd) } else { src };
            let tfmt_eff = dest_format(to);
            let r = if from == to && !ffmt.is_nan(src) { src } else { round::convert_format(ffmt, tfmt_eff, src, rnd) };
            finish(r, tfmt_eff, to, m)
        }
    }
}

/// The format a float result is rounded to (`tf32` has its own precision).
#[inline]
fn dest_format(to: Type) -> Format {
    match to {
        Type::Tf32 => Format::TF32,
        _ => to.format().unwrap_or(Format::F32),
    }
}

/// Destination post-processing for float results (`r` in format `fmt`).
fn finish(r: u64, fmt: Format, to: Type, m: CvtModes) -> u64 {
    let mut r = r;
    if m.ftz && to == Type::F32 {
        r = fmt.flush(r);
    }
    let satfinite = m.satfinite || matches!(to, Type::E4m3 | Type::E5m2);
    if satfinite && fmt.has_inf && r & (fmt.sign_bit() - 1) == fmt.inf() {
        r = (r & fmt.sign_bit()) | fmt.max_finite();
    }
    if m.sat {
        r = crate::half::saturate_bits(fmt, r);
    }
    if m.relu {
        r = crate::half::relu_bits(fmt, r);
    }
    if to == Type::Tf32 {
        return if fmt.is_nan(r) { 0x7FFF_FFFF } else { r << 13 };
    }
    r
}

#[inline]
fn int_value(bits: u64, ty: Type) -> i128 {
    if ty.is_signed() {
        sign_extend(bits, ty) as i64 as i128
    } else {
        bits as i128
    }
}

#[inline]
fn int_range(ty: Type) -> (i128, i128) {
    let n = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
    } else {
        (0, (1i128 << n) - 1)
    }
}

fn int_to_int(bits: u64, from: Type, to: Type, sat: bool) -> u64 {
    let v = int_value(bits, from);
    let v = if sat {
        let (lo, hi) = int_range(to);
        v.clamp(lo, hi)
    } else {
        v
    };
    (v as u64) & to.mask()
}

fn float_to_int(bits: u64, from: Type, ffmt: Format, to: Type, m: CvtModes) -> u64 {
    let bits = if m.ftz && from == Type::F32 { ffmt.flush(bits) } else { bits };
    let rnd = match m.rounding {
        CvtRounding::None => Rounding::Rz,
        r => r.split().1,
    };
    let (lo, hi) = int_range(to);
    let v: i128 = match round::unpack(ffmt, bits) {
        Class::Nan => {
            return if from == Type::F64 || to.bits() == 64 { 1 << (to.bits() - 1) } else { 0 };
        }
        Class::Zero { .. } => 0,
        Class::Inf { neg } => {
            if neg {
                lo
            } else {
                hi
            }
        }
        Class::Finite { neg, exp, sig } => {
            let mag = round::to_integer(neg, exp, sig, rnd) as i128;
            if neg {
                -mag
            } else {
                mag
            }
        }
    };
    (v.clamp(lo, hi) as u64) & to.mask()
}
