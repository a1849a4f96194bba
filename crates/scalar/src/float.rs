//! `.f32` and `.f64` arithmetic: `add sub mul fma/mad div rcp sqrt` with `.rn .rz .rm .rp` (all
//! correctly rounded), `.ftz`, `.sat`, and the bit-level instructions `abs neg min max copysign
//! testp`, plus integral rounding (`cvt.rni.f32.f32` and friends).
//!
//! # NaN results
//! * `.f32`: the PTX ISA says single-precision instructions return an unspecified NaN; NVIDIA
//!   hardware returns the canonical NaN `0x7FFFFFFF`, and so does every function here.
//! * `.f64`: the ISA says NaN payloads are supported. A NaN result with a NaN operand is the first
//!   NaN operand (in `a, b, c` order) with its quiet bit set; an invalid operation on non-NaN
//!   operands (`inf - inf`, `0 * inf`, `0/0`, `sqrt(-1)`) gives `0x7FFF_FFFF_FFFF_FFFF`, the same
//!   all-ones pattern the ISA calls canonical for `rcp.approx.ftz.f64`. Which payload hardware picks
//!   when two operands are NaN is not documented; this choice is ours.
//!
//! # Modifiers
//! [`Mods`] carries `.ftz` and `.sat`. `.ftz` flushes subnormal *inputs* and subnormal *results*
//! (after rounding) to a zero of the same sign. `.sat` clamps the result to `[+0.0, 1.0]`, maps NaN
//! to `+0.0`, and (our reading of "clamps to [0.0, 1.0]") maps `-0.0` to `+0.0`. The ISA allows
//! both only on `.f32`; the functions apply them to `.f64` too if asked.

use crate::round::{self, Format, Rounding};
use core::fmt::Debug;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// `f32` or `f64`: the two PTX floating-point register types with IEEE arithmetic.
pub trait Float: Copy + Debug + PartialEq + PartialOrd + Send + Sync + 'static + sealed::Sealed {
    /// The encoding.
    const FMT: Format;
    /// Bit width.
    const BITS: u32;
    /// `1.0`.
    const ONE: Self;
    /// The raw bits, zero-extended.
    fn bits(self) -> u64;
    /// From raw bits (the low `BITS` bits are used).
    fn from_bits64(bits: u64) -> Self;
    /// Host round-to-nearest addition (IEEE 754).
    fn rn_add(self, o: Self) -> Self;
    /// Host round-to-nearest subtraction.
    fn rn_sub(self, o: Self) -> Self;
    /// Host round-to-nearest multiplication.
    fn rn_mul(self, o: Self) -> Self;
    /// Host round-to-nearest division.
    fn rn_div(self, o: Self) -> Self;
    /// Host fused multiply-add, round to nearest.
    fn rn_fma(self, b: Self, c: Self) -> Self;
    /// Host square root, round to nearest.
    fn rn_sqrt(self) -> Self;
    /// Round to an integral value in the same format.
    fn integral(self, rnd: Rounding) -> Self;
    /// Whether this is a NaN.
    fn nan(self) -> bool;
    /// The NaN a PTX instruction returns when its result is NaN and its operands were `ins`.
    fn nan_result(ins: &[Self]) -> Self;
}

macro_rules! impl_float {
    ($t:ty, $fmt:expr, $bits:expr, $ut:ty, $payload:expr) => {
        impl Float for $t {
            const FMT: Format = $fmt;
            const BITS: u32 = $bits;
            const ONE: Self = 1.0;
            #[inline]
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
            #[inline]
            fn from_bits64(bits: u64) -> Self {
                <$t>::from_bits(bits as $ut)
            }
            #[inline]
            fn rn_add(self, o: Self) -> Self {
                self + o
            }
            #[inline]
            fn rn_sub(self, o: Self) -> Self {
                self - o
            }
            #[inline]
            fn rn_mul(self, o: Self) -> Self {
                self * o
            }
            #[inline]
            fn rn_div(self, o: Self) -> Self {
                self / o
            }
            #[inline]
            fn rn_fma(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
            #[inline]
            fn rn_sqrt(self) -> Self {
                self.sqrt()
            }
            #[inline]
            fn integral(self, rnd: Rounding) -> Self {
                match rnd {
                    Rounding::Rn => self.round_ties_even(),
                    Rounding::Rna => self.round(),
                    Rounding::Rz => self.trunc(),
                    Rounding::Rm => self.floor(),
                    Rounding::Rp => self.ceil(),
                }
            }
            #[inline]
            fn nan(self) -> bool {
                self.is_nan()
            }
            #[inline]
            fn nan_result(ins: &[Self]) -> Self {
                if $payload {
                    for &x in ins {
                        if x.is_nan() {
                            return Self::from_bits64(x.bits() | (1 << (Self::FMT.mant_bits - 1)));
                        }
                    }
                }
                Self::from_bits64(Self::FMT.canonical_nan())
            }
        }
    };
}

impl_float!(f32, Format::F32, 32, u32, false);
impl_float!(f64, Format::F64, 64, u64, true);

/// The canonical NaN of `F` (`0x7FFFFFFF` / `0x7FFF_FFFF_FFFF_FFFF`).
#[inline]
pub fn canonical_nan<F: Float>() -> F {
    F::from_bits64(F::FMT.canonical_nan())
}

/// `.ftz` / `.sat` modifiers of an f32/f64 instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mods {
    /// `.ftz`: flush subnormal inputs and results to sign-preserving zero.
    pub ftz: bool,
    /// `.sat`: clamp the result to `[0.0, 1.0]`, NaN to `+0.0`.
    pub sat: bool,
}

impl Mods {
    /// No modifiers.
    pub const NONE: Mods = Mods { ftz: false, sat: false };
    /// `.ftz`.
    pub const FTZ: Mods = Mods { ftz: true, sat: false };
    /// `.sat`.
    pub const SAT: Mods = Mods { ftz: false, sat: true };
    /// `.ftz.sat`.
    pub const FTZ_SAT: Mods = Mods { ftz: true, sat: true };

    /// Apply `.ftz` to an operand.
    #[inline]
    pub fn input<F: Float>(self, x: F) -> F {
        if self.ftz {
            flush(x)
        } else {
            x
        }
    }

    /// Apply `.ftz` then `.sat` to a result.
    #[inline]
    pub fn output<F: Float>(self, x: F) -> F {
        let x = self.input(x);
        if self.sat {
            saturate(x)
        } else {
            x
        }
    }
}

/// Flush a subnormal to a zero of the same sign (`.ftz`).
#[inline]
pub fn flush<F: Float>(x: F) -> F {
    F::from_bits64(F::FMT.flush(x.bits()))
}

/// `.sat`: NaN and values `<= 0` (including `-0.0`) become `+0.0`, values `> 1` become `1.0`.
#[inline]
pub fn saturate<F: Float>(x: F) -> F {
    let b = x.bits();
    if x.nan() || b & F::FMT.sign_bit() != 0 {
        F::from_bits64(0)
    } else if x > F::ONE {
        F::ONE
    } else {
        x
    }
}

#[inline]
fn fix1<F: Float>(r: F, a: F) -> F {
    if r.nan() {
        F::nan_result(&[a])
    } else {
        r
    }
}

#[inline]
fn fix2<F: Float>(r: F, a: F, b: F) -> F {
    if r.nan() {
        F::nan_result(&[a, b])
    } else {
        r
    }
}

/// `add{.rnd}{.ftz}{.sat}` — correctly rounded `a + b`.
#[inline]
pub fn add<F: Float>(a: F, b: F, rnd: Rounding, m: Mods) -> F {
    let (a, b) = (m.input(a), m.input(b));
    let r = if rnd == Rounding::Rn {
        a.rn_add(b)
    } else {
        F::from_bits64(round::add_bits(F::FMT, a.bits(), b.bits(), rnd))
    };
    m.output(fix2(r, a, b))
}

/// `sub{.rnd}{.ftz}{.sat}` — correctly rounded `a - b`.
#[inline]
pub fn sub<F: Float>(a: F, b: F, rnd: Rounding, m: Mods) -> F {
    let (a, b) = (m.input(a), m.input(b));
    let r = if rnd == Rounding::Rn {
        a.rn_sub(b)
    } else {
        F::from_bits64(round::sub_bits(F::FMT, a.bits(), b.bits(), rnd))
    };
    m.output(fix2(r, a, b))
}

/// `mul{.rnd}{.ftz}{.sat}` — correctly rounded `a * b`.
#[inline]
pub fn mul<F: Float>(a: F, b: F, rnd: Rounding, m: Mods) -> F {
    let (a, b) = (m.input(a), m.input(b));
    let r = if rnd == Rounding::Rn {
        a.rn_mul(b)
    } else {
        F::from_bits64(round::mul_bits(F::FMT, a.bits(), b.bits(), rnd))
    };
    m.output(fix2(r, a, b))
}

/// `fma.rnd{.ftz}{.sat}` and `mad.rnd` — `a * b + c` with a single rounding.
#[inline]
pub fn fma<F: Float>(a: F, b: F, c: F, rnd: Rounding, m: Mods) -> F {
    let (a, b, c) = (m.input(a), m.input(b), m.input(c));
    let r = if rnd == Rounding::Rn {
        a.rn_fma(b, c)
    } else {
        F::from_bits64(round::fma_bits(F::FMT, a.bits(), b.bits(), c.bits(), rnd))
    };
    m.output(if r.nan() { F::nan_result(&[a, b, c]) } else { r })
}

/// `div.rnd{.ftz}` — correctly rounded `a / b`.
#[inline]
pub fn div<F: Float>(a: F, b: F, rnd: Rounding, m: Mods) -> F {
    let (a, b) = (m.input(a), m.input(b));
    let r = if rnd == Rounding::Rn {
        a.rn_div(b)
    } else {
        F::from_bits64(round::div_bits(F::FMT, a.bits(), b.bits(), rnd))
    };
    m.output(fix2(r, a, b))
}

/// `rcp.rnd{.ftz}` — correctly rounded `1 / a`.
#[inline]
pub fn rcp<F: Float>(a: F, rnd: Rounding, m: Mods) -> F {
    let a = m.input(a);
    let r = if rnd == Rounding::Rn {
        F::ONE.rn_div(a)
    } else {
        F::from_bits64(round::div_bits(F::FMT, F::ONE.bits(), a.bits(), rnd))
    };
    m.output(fix1(r, a))
}

/// `sqrt.rnd{.ftz}` — correctly rounded square root (`sqrt(-0.0) = -0.0`, negative → NaN).
#[inline]
pub fn sqrt<F: Float>(a: F, rnd: Rounding, m: Mods) -> F {
    let a = m.input(a);
    let r = if rnd == Rounding::Rn { a.rn_sqrt() } else { F::from_bits64(round::sqrt_bits(F::FMT, a.bits(), rnd)) };
    m.output(fix1(r, a))
}

/// `cvt.{rni,rzi,rmi,rpi}{.ftz}{.sat}.f32.f32` / `.f64.f64` — round to an integral value
/// (`Rn` = `.rni`, ties to even). `-0.4` rounds to `-0.0`.
#[inline]
pub fn round_integral<F: Float>(a: F, rnd: Rounding, m: Mods) -> F {
    let a = m.input(a);
    m.output(fix1(a.integral(rnd), a))
}

/// `abs{.ftz}` — clear the sign bit. `abs.f32` of a NaN gives the canonical NaN (the ISA says
/// "unspecified NaN"); `abs.f64` passes a NaN through unchanged, as the ISA states.
#[inline]
pub fn abs<F: Float>(a: F, ftz: bool) -> F {
    if a.nan() {
        return if F::BITS == 32 { canonical_nan() } else { a };
    }
    let a = if ftz { flush(a) } else { a };
    F::from_bits64(a.bits() & !F::FMT.sign_bit())
}

/// `neg{.ftz}` — flip the sign bit. NaN: canonical NaN for `.f32`, sign flipped for `.f64` (the
/// ISA says "unspecified NaN" for both; our choice).
#[inline]
pub fn neg<F: Float>(a: F, ftz: bool) -> F {
    if a.nan() && F::BITS == 32 {
        return canonical_nan();
    }
    let a = if ftz { flush(a) } else { a };
    F::from_bits64(a.bits() ^ F::FMT.sign_bit())
}

/// `copysign.type d, a, b` — `b` with the sign bit of `a` (pure bit operation, NaNs included).
#[inline]
pub fn copysign<F: Float>(a: F, b: F) -> F {
    let s = F::FMT.sign_bit();
    F::from_bits64((b.bits() & !s) | (a.bits() & s))
}

/// Modifiers of float `min` / `max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MinMaxMods {
    /// `.ftz`.
    pub ftz: bool,
    /// `.NaN`: any NaN operand gives the canonical NaN.
    pub nan: bool,
    /// `.xorsign.abs`: compare magnitudes; the result's sign is the XOR of the operands' signs.
    pub xorsign_abs: bool,
}

/// `a < b` in the order PTX `min`/`max` use: numeric, with `-0.0 < +0.0`. Operands are not NaN.
#[inline]
fn less<F: Float>(a: F, b: F) -> bool {
    a < b || (a == b && a.bits() & F::FMT.sign_bit() > b.bits() & F::FMT.sign_bit())
}

#[inline]
fn min_max<F: Float>(a: F, b: F, mm: MinMaxMods, want_min: bool) -> F {
    let s = F::FMT.sign_bit();
    let (mut a, mut b) = if mm.ftz { (flush(a), flush(b)) } else { (a, b) };
    let xsign = (a.bits() ^ b.bits()) & s;
    if mm.xorsign_abs {
        a = F::from_bits64(a.bits() & !s);
        b = F::from_bits64(b.bits() & !s);
    }
    let d = match (a.nan(), b.nan()) {
        (true, true) => return canonical_nan(),
        (true, false) | (false, true) if mm.nan => return canonical_nan(),
        (true, false) => b,
        (false, true) => a,
        (false, false) => {
            if less(a, b) == want_min {
                a
            } else {
                b
            }
        }
    };
    if mm.xorsign_abs {
        F::from_bits64((d.bits() & !s) | xsign)
    } else {
        d
    }
}

/// `min{.ftz}{.NaN}{.xorsign.abs}` — ISA semantics: one NaN operand returns the other operand;
/// both NaN (or any NaN with `.NaN`) gives the canonical NaN; `-0.0 < +0.0`.
#[inline]
pub fn min<F: Float>(a: F, b: F, mm: MinMaxMods) -> F {
    min_max(a, b, mm, true)
}

/// `max{.ftz}{.NaN}{.xorsign.abs}` — see [`min`]; `+0.0 > -0.0`.
#[inline]
pub fn max<F: Float>(a: F, b: F, mm: MinMaxMods) -> F {
    min_max(a, b, mm, false)
}

/// The property tested by `testp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TestP {
    /// Not infinite and not NaN.
    Finite,
    /// `±inf`.
    Infinite,
    /// Not NaN.
    Number,
    /// NaN.
    NotANumber,
    /// Normal, and — as the ISA's special case — `±0.0`.
    Normal,
    /// Subnormal (nonzero).
    Subnormal,
}

/// `testp.op.type p, a`.
#[inline]
pub fn testp<F: Float>(op: TestP, a: F) -> bool {
    testp_bits(F::FMT, op, a.bits())
}

/// `testp` on the raw bits of any IEEE-like format.
#[inline]
pub fn testp_bits(fmt: Format, op: TestP, bits: u64) -> bool {
    let mag = bits & (fmt.sign_bit() - 1);
    let is_nan = fmt.is_nan(bits);
    let is_inf = fmt.has_inf && mag == fmt.inf();
    let finite = !is_nan && !is_inf;
    let sub = fmt.is_subnormal(bits);
    match op {
        TestP::Finite => finite,
        TestP::Infinite => is_inf,
        TestP::Number => !is_nan,
        TestP::NotANumber => is_nan,
        TestP::Normal => finite && !sub,
        TestP::Subnormal => sub,
    }
}
