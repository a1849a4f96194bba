//! `.f16` / `.bf16` (and, lane by lane, `.f16x2` / `.bf16x2`): conversions to and from f32/f64
//! in every rounding mode (one rounding, never via an intermediate format), exact arithmetic
//! `add sub mul fma` (computed exactly and rounded once), `min max neg abs`, comparisons.
//!
//! Values are raw `u16` bits. NaN results are the canonical NaN `0x7FFF`. `neg`/`abs` are pure
//! sign-bit operations (NaN payloads kept). Modifiers ([`HalfMods`]): `.ftz` flushes subnormal
//! inputs and results (PTX allows it on `.f16` only), `.sat` clamps to `[+0.0, 1.0]` with NaN →
//! `+0.0`, `.relu` turns negative results (and `-0.0`) into `+0.0` and NaN into the canonical NaN.

use crate::compare::{self, CmpOp};
use crate::float::MinMaxMods;
use crate::round::{self, Format, Rounding};

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::F16 {}
    impl Sealed for super::Bf16 {}
}

/// A 16-bit floating-point format: [`F16`] or [`Bf16`].
pub trait Half: Copy + core::fmt::Debug + sealed::Sealed + 'static {
    /// The encoding.
    const FMT: Format;
}

/// IEEE binary16 (`.f16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F16;
/// bfloat16 (`.bf16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bf16;

impl Half for F16 {
    const FMT: Format = Format::F16;
}
impl Half for Bf16 {
    const FMT: Format = Format::BF16;
}

/// The canonical half NaN.
pub const CANONICAL_NAN: u16 = 0x7FFF;

/// Modifiers of half-precision arithmetic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HalfMods {
    /// `.ftz`.
    pub ftz: bool,
    /// `.sat`.
    pub sat: bool,
    /// `.relu`.
    pub relu: bool,
}

impl HalfMods {
    /// No modifiers.
    pub const NONE: HalfMods = HalfMods { ftz: false, sat: false, relu: false };

    #[inline]
    fn input<H: Half>(self, x: u16) -> u64 {
        let x = u64::from(x);
        if self.ftz {
            H::FMT.flush(x)
        } else {
            x
        }
    }

    #[inline]
    fn output<H: Half>(self, r: u64) -> u16 {
        let fmt = H::FMT;
        let r = if self.ftz { fmt.flush(r) } else { r };
        let r = if self.sat { saturate_bits(fmt, r) } else { r };
        let r = if self.relu { relu_bits(fmt, r) } else { r };
        r as u16
    }
}

/// `.sat` on raw bits of any IEEE-like format: NaN and `<= 0` → `+0`, `> 1` → `1.0`.
#[inline]
pub fn saturate_bits(fmt: Format, r: u64) -> u64 {
    let one = (fmt.bias() as u64) << fmt.mant_bits;
    if fmt.is_nan(r) || r & fmt.sign_bit() != 0 {
        0
    } else if r > one {
        one
    } else {
        r
    }
}

/// `.relu` on raw bits: NaN → canonical NaN, negative (and `-0`) → `+0`.
#[inline]
pub fn relu_bits(fmt: Format, r: u64) -> u64 {
    if fmt.is_nan(r) {
        fmt.canonical_nan()
    } else if r & fmt.sign_bit() != 0 {
        0
    } else {
        r
    }
}

/// Exact widening to `f32` (NaN → `0x7FFFFFFF`).
#[inline]
pub fn to_f32<H: Half>(h: u16) -> f32 {
    f32::from_bits(round::convert_format(H::FMT, Format::F32, u64::from(h), Rounding::Rn) as u32)
}

/// Exact widening to `f64` (NaN → `0x7FFF_FFFF_FFFF_FFFF`).
#[inline]
pub fn to_f64<H: Half>(h: u16) -> f64 {
    f64::from_bits(round::convert_format(H::FMT, Format::F64, u64::from(h), Rounding::Rn))
}

/// `cvt.rnd.f16.f32` / `cvt.rnd.bf16.f32` — one rounding, any mode.
#[inline]
pub fn from_f32<H: Half>(x: f32, rnd: Rounding) -> u16 {
    round::convert_format(Format::F32, H::FMT, u64::from(x.to_bits()), rnd) as u16
}

/// `cvt.rnd.f16.f64` / `cvt.rnd.bf16.f64` — rounded once, directly from f64.
#[inline]
pub fn from_f64<H: Half>(x: f64, rnd: Rounding) -> u16 {
    round::convert_format(Format::F64, H::FMT, x.to_bits(), rnd) as u16
}

/// `add{.rnd}{.ftz}{.sat}.f16` / `.bf16` — exact sum rounded once.
#[inline]
pub fn add<H: Half>(a: u16, b: u16, rnd: Rounding, m: HalfMods) -> u16 {
    m.output::<H>(round::add_bits(H::FMT, m.input::<H>(a), m.input::<H>(b), rnd))
}

/// `sub{.rnd}{.ftz}{.sat}.f16` / `.bf16`.
#[inline]
pub fn sub<H: Half>(a: u16, b: u16, rnd: Rounding, m: HalfMods) -> u16 {
    m.output::<H>(round::sub_bits(H::FMT, m.input::<H>(a), m.input::<H>(b), rnd))
}

/// `mul{.rnd}{.ftz}{.sat}.f16` / `.bf16`.
#[inline]
pub fn mul<H: Half>(a: u16, b: u16, rnd: Rounding, m: HalfMods) -> u16 {
    m.output::<H>(round::mul_bits(H::FMT, m.input::<H>(a), m.input::<H>(b), rnd))
}

/// `fma.rnd{.ftz}{.sat|.relu}.f16` / `.bf16` — `a * b + c` with a single rounding.
#[inline]
pub fn fma<H: Half>(a: u16, b: u16, c: u16, rnd: Rounding, m: HalfMods) -> u16 {
    let (a, b, c) = (m.input::<H>(a), m.input::<H>(b), m.input::<H>(c));
    m.output::<H>(round::fma_bits(H::FMT, a, b, c, rnd))
}

/// `neg{.ftz}.f16` / `.bf16` — flip the sign bit.
#[inline]
pub fn neg<H: Half>(a: u16, ftz: bool) -> u16 {
    let a = if ftz { H::FMT.flush(u64::from(a)) as u16 } else { a };
    a ^ 0x8000
}

/// `abs{.ftz}.f16` / `.bf16` — clear the sign bit.
#[inline]
pub fn abs<H: Half>(a: u16, ftz: bool) -> u16 {
    let a = if ftz { H::FMT.flush(u64::from(a)) as u16 } else { a };
    a & 0x7FFF
}

#[inline]
fn min_max<H: Half>(a: u16, b: u16, mm: MinMaxMods, want_min: bool) -> u16 {
    let fmt = H::FMT;
    let (mut a, mut b) = if mm.ftz { (fmt.flush(u64::from(a)) as u16, fmt.flush(u64::from(b)) as u16) } else { (a, b) };
    let xsign = (a ^ b) & 0x8000;
    if mm.xorsign_abs {
        a &= 0x7FFF;
        b &= 0x7FFF;
    }
    let (an, bn) = (fmt.is_nan(u64::from(a)), fmt.is_nan(u64::from(b)));
    let d = match (an, bn) {
        (true, true) => return CANONICAL_NAN,
        (true, false) | (false, true) if mm.nan => return CANONICAL_NAN,
        (true, false) => b,
        (false, true) => a,
        (false, false) => {
            let (x, y) = (to_f32::<H>(a), to_f32::<H>(b));
            let less = x < y || (x == y && a & 0x8000 > b & 0x8000);
            if less == want_min {
                a
            } else {
                b
            }
        }
    };
    if mm.xorsign_abs {
        (d & 0x7FFF) | xsign
    } else {
        d
    }
}

/// `min{.ftz}{.NaN}{.xorsign.abs}.f16` / `.bf16` — same rules as [`crate::float::min`].
#[inline]
pub fn min<H: Half>(a: u16, b: u16, mm: MinMaxMods) -> u16 {
    min_max::<H>(a, b, mm, true)
}

/// `max{.ftz}{.NaN}{.xorsign.abs}.f16` / `.bf16`.
#[inline]
pub fn max<H: Half>(a: u16, b: u16, mm: MinMaxMods) -> u16 {
    min_max::<H>(a, b, mm, false)
}

/// `setp.op{.ftz}.f16` / `.bf16` — compared exactly after widening to f32.
#[inline]
pub fn cmp<H: Half>(op: CmpOp, a: u16, b: u16, ftz: bool) -> bool {
    let f = |x: u16| {
        let x = if ftz { H::FMT.flush(u64::from(x)) as u16 } else { x };
        to_f32::<H>(x)
    };
    compare::cmp_float(op, f(a), f(b), false)
}

/// Apply `f` to both 16-bit lanes of packed operands (`.f16x2` / `.bf16x2`): lane 0 is bits
/// 15..0, lane 1 bits 31..16.
#[inline]
pub fn x2(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    let lo = f(a as u16, b as u16);
    let hi = f((a >> 16) as u16, (b >> 16) as u16);
    (u32::from(hi) << 16) | u32::from(lo)
}

/// Three-operand form of [`x2`] (packed `fma`).
#[inline]
pub fn x2_3(a: u32, b: u32, c: u32, f: impl Fn(u16, u16, u16) -> u16) -> u32 {
    let lo = f(a as u16, b as u16, c as u16);
    let hi = f((a >> 16) as u16, (b >> 16) as u16, (c >> 16) as u16);
    (u32::from(hi) << 16) | u32::from(lo)
}
