//! Correctly rounded floating-point reference arithmetic: every IEEE rounding mode for f32/f64 add, mul, fma,
//! div and sqrt, conversions between f64, f32, f16 and bf16 with any rounding, and PTX's float-to-integer
//! conversions. Exact results are compared with candidate results through error-free transformations
//! (Shewchuk expansions), so no result is ever rounded twice.

use std::cmp::Ordering;

/// An IEEE rounding mode (PTX `.rn`, `.rz`, `.rm`, `.rp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// To nearest, ties to even.
    Rn,
    /// Toward zero.
    Rz,
    /// Toward minus infinity.
    Rm,
    /// Toward plus infinity.
    Rp,
}

pub const ROUNDS: [Round; 4] = [Round::Rn, Round::Rz, Round::Rm, Round::Rp];

/// A binary floating-point format: `precision` significand bits (with the implicit one), `emin` the exponent
/// of the smallest normal number, `max` the largest finite value.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    pub precision: i32,
    pub emin: i32,
    pub max: f64,
}

pub const F16: Format = Format { precision: 11, emin: -14, max: 65504.0 };
pub const BF16: Format = Format { precision: 8, emin: -126, max: 3.3895313892515355e38 };
pub const F32: Format = Format { precision: 24, emin: -126, max: f32::MAX as f64 };
pub const F64: Format = Format { precision: 53, emin: -1022, max: f64::MAX };

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// `a * b` as an exact pair (product, error), valid without underflow.
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// The exact sum of some f64 terms, as a non-overlapping expansion (increasing magnitude).
#[derive(Clone, Debug)]
pub struct Sum(Vec<f64>);

impl Sum {
    pub fn of(terms: &[f64]) -> Sum {
        let mut s = Sum(Vec::new());
        for &t in terms {
            s.add(t);
        }
        s
    }

    pub fn add(&mut self, b: f64) {
        let mut q = b;
        let mut out = Vec::with_capacity(self.0.len() + 1);
        for &h in &self.0 {
            let (s, e) = two_sum(q, h);
            if e != 0.0 {
                out.push(e);
            }
            q = s;
        }
        out.push(q);
        self.0 = out;
    }

    /// Adds `a * b` exactly.
    pub fn add_prod(&mut self, a: f64, b: f64) {
        let (p, e) = two_prod(a, b);
        self.add(p);
        self.add(e);
    }

    pub fn sign(&self) -> Ordering {
        match self.0.iter().rev().find(|&&x| x != 0.0) {
            Some(&x) if x > 0.0 => Ordering::Greater,
            Some(_) => Ordering::Less,
            None => Ordering::Equal,
        }
    }

    pub fn approx(&self) -> f64 {
        self.0.iter().sum()
    }
}

/// A real number known exactly enough to compare it with any f64.
pub trait Exact {
    /// A close approximation (within a few ulps of f64).
    fn approx(&self) -> f64;
    /// The sign of `self - c`.
    fn cmp_with(&self, c: f64) -> Ordering;
}

impl Exact for Sum {
    fn approx(&self) -> f64 {
        Sum::approx(self)
    }
    fn cmp_with(&self, c: f64) -> Ordering {
        let mut s = self.clone();
        s.add(-c);
        s.sign()
    }
}

/// `num / den`, exactly.
#[derive(Clone, Copy, Debug)]
pub struct Quotient {
    pub num: f64,
    pub den: f64,
}

impl Exact for Quotient {
    fn approx(&self) -> f64 {
        self.num / self.den
    }
    fn cmp_with(&self, c: f64) -> Ordering {
        // sign(num/den - c) = sign(num - c*den) * sign(den)
        let mut s = Sum::of(&[self.num]);
        s.add_prod(-c, self.den);
        if self.den < 0.0 {
            s.sign().reverse()
        } else {
            s.sign()
        }
    }
}

/// `sqrt(x)` for `x >= 0`, exactly.
#[derive(Clone, Copy, Debug)]
pub struct Sqrt(pub f64);

impl Exact for Sqrt {
    fn approx(&self) -> f64 {
        self.0.sqrt()
    }
    fn cmp_with(&self, c: f64) -> Ordering {
        if c < 0.0 {
            return Ordering::Greater;
        }
        let mut s = Sum::of(&[self.0]);
        s.add_prod(-c, c);
        s.sign()
    }
}

/// `inner * 2^-k`, exactly: lets products that underflow be computed without losing their low bits.
#[derive(Clone, Debug)]
pub struct Scaled {
    pub inner: Sum,
    pub k: i32,
}

impl Exact for Scaled {
    fn approx(&self) -> f64 {
        self.inner.approx() * pow2(-self.k)
    }
    fn cmp_with(&self, c: f64) -> Ordering {
        self.inner.cmp_with(c * pow2(self.k))
    }
}

/// Scale used when a product underflows: operands are multiplied by 2^SCALE first.
const SCALE: i32 = 200;

/// An integer, exactly.
#[derive(Clone, Copy, Debug)]
pub struct Int(pub i128);

impl Exact for Int {
    fn approx(&self) -> f64 {
        self.0 as f64
    }
    fn cmp_with(&self, c: f64) -> Ordering {
        if c == f64::INFINITY {
            return Ordering::Less;
        }
        if c == f64::NEG_INFINITY {
            return Ordering::Greater;
        }
        let fl = c.floor();
        let fi = fl as i128;
        match self.0.cmp(&fi) {
            Ordering::Equal if c != fl => Ordering::Less,
            o => o,
        }
    }
}

fn exponent(a: f64) -> i32 {
    // a > 0, normal in f64
    ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// The distance from `a >= 0` (a value of `fmt`) to the next larger value of `fmt`.
fn ulp_up(fmt: Format, a: f64) -> f64 {
    let e = if a == 0.0 { fmt.emin } else { exponent(a).max(fmt.emin) };
    pow2(e - (fmt.precision - 1))
}

/// The distance from `a > 0` to the next smaller value.
fn ulp_down(fmt: Format, a: f64) -> f64 {
    let e = exponent(a).max(fmt.emin);
    let is_pow2 = a == pow2(exponent(a));
    if is_pow2 && e > fmt.emin {
        pow2(e - 1 - (fmt.precision - 1))
    } else {
        pow2(e - (fmt.precision - 1))
    }
}

fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// The next value of `fmt` above `x` (`inf` above the largest).
pub fn next_up(fmt: Format, x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == f64::NEG_INFINITY {
        return -fmt.max;
    }
    if x >= 0.0 {
        if x >= fmt.max {
            return f64::INFINITY;
        }
        x + ulp_up(fmt, x)
    } else {
        let r = -(-x - ulp_down(fmt, -x));
        if r == 0.0 {
            -0.0
        } else {
            r
        }
    }
}

/// The next value of `fmt` below `x`.
pub fn next_down(fmt: Format, x: f64) -> f64 {
    -next_up(fmt, -x)
}

/// The largest value of `fmt` that is `<= a` for an f64 `a` (by scaling; exact for any f64).
fn floor_in(fmt: Format, a: f64) -> f64 {
    if a.abs() > fmt.max {
        return if a > 0.0 { fmt.max } else { f64::NEG_INFINITY };
    }
    if a == 0.0 {
        return 0.0;
    }
    let e = exponent(a.abs()).max(fmt.emin);
    let q = pow2(e - (fmt.precision - 1));
    let f = (a / q).floor() * q;
    if f < -fmt.max {
        f64::NEG_INFINITY
    } else {
        f
    }
}

/// Whether `x` (a finite value of `fmt`) has an even last significand bit.
fn is_even(fmt: Format, x: f64) -> bool {
    if x == 0.0 || x.is_infinite() {
        return true;
    }
    let a = x.abs();
    let e = exponent(a).max(fmt.emin);
    let q = pow2(e - (fmt.precision - 1));
    ((a / q) as u64).is_multiple_of(2)
}

/// Rounds an exact real to `fmt` with `mode`. The result is an f64 holding a value of `fmt` (or `±inf`).
/// A zero result is `+0` (`-0` under [`Round::Rm`]); callers that need IEEE signed-zero rules for exact
/// zeros handle them first.
pub fn round(x: &dyn Exact, fmt: Format, mode: Round) -> f64 {
    let a = x.approx();
    if a.is_nan() {
        return a;
    }
    // lo = the largest value of fmt <= x.
    let mut lo = if a.is_infinite() {
        if a > 0.0 {
            fmt.max
        } else {
            f64::NEG_INFINITY
        }
    } else {
        floor_in(fmt, a)
    };
    while lo != f64::NEG_INFINITY && x.cmp_with(lo) == Ordering::Less {
        lo = next_down(fmt, lo);
    }
    loop {
        let up = next_up(fmt, lo);
        if up != f64::INFINITY && x.cmp_with(up) != Ordering::Less {
            lo = up;
        } else {
            break;
        }
    }
    if lo != f64::NEG_INFINITY && x.cmp_with(lo) == Ordering::Equal {
        if lo == 0.0 {
            return if mode == Round::Rm { -0.0 } else { 0.0 };
        }
        return lo;
    }
    let hi = next_up(fmt, lo);
    let positive = lo >= 0.0 && !(lo == 0.0 && hi == 0.0);
    let pick = match mode {
        Round::Rm => lo,
        Round::Rp => hi,
        Round::Rz => {
            if positive {
                lo
            } else {
                hi
            }
        }
        Round::Rn => {
            if fmt.precision >= 53 {
                // The midpoint of two f64 values is no f64; f64 round-to-nearest results come from the
                // hardware operation itself (the callers short-circuit it), so this is only a fallback.
                return a;
            }
            // The midpoint (one f64 for narrower formats); beyond the largest finite value, the overflow
            // threshold.
            let l = if lo == f64::NEG_INFINITY { -fmt.max - ulp_up(fmt, fmt.max) } else { lo };
            let h = if hi == f64::INFINITY { fmt.max + ulp_up(fmt, fmt.max) } else { hi };
            let mid = l + (h - l) / 2.0;
            let d = match x.cmp_with(mid) {
                Ordering::Equal => {
                    if lo != f64::NEG_INFINITY && is_even(fmt, lo) {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    }
                }
                o => o,
            };
            if d == Ordering::Less {
                lo
            } else {
                hi
            }
        }
    };
    if pick == 0.0 {
        return if positive { 0.0 } else { -0.0 };
    }
    pick
}

fn any_special(xs: &[f64]) -> bool {
    xs.iter().any(|x| !x.is_finite())
}

fn exact_zero_sign(native_rn: f64, mode: Round) -> f64 {
    // IEEE: an exact zero sum of operands of opposite sign is +0, except -0 when rounding down; a sum of
    // zeros of the same sign keeps that sign.
    if (native_rn == 0.0 && native_rn.is_sign_negative()) || mode == Round::Rm {
        -0.0
    } else {
        0.0
    }
}

/// `x + y` rounded to f32.
pub fn add_f32(x: f32, y: f32, mode: Round) -> f32 {
    let (a, b) = (f64::from(x), f64::from(y));
    if any_special(&[a, b]) {
        return x + y;
    }
    let s = Sum::of(&[a, b]);
    if s.sign() == Ordering::Equal {
        return exact_zero_sign(f64::from(x + y), mode) as f32;
    }
    round(&s, F32, mode) as f32
}

pub fn sub_f32(x: f32, y: f32, mode: Round) -> f32 {
    add_f32(x, -y, mode)
}

/// `x * y` rounded to f32.
pub fn mul_f32(x: f32, y: f32, mode: Round) -> f32 {
    let p = f64::from(x) * f64::from(y); // exact
    if !p.is_finite() || p == 0.0 {
        return x * y;
    }
    round(&Sum::of(&[p]), F32, mode) as f32
}

/// `x * y + z` rounded once to f32.
pub fn fma_f32(x: f32, y: f32, z: f32, mode: Round) -> f32 {
    let p = f64::from(x) * f64::from(y); // exact
    let c = f64::from(z);
    if any_special(&[p, c]) {
        return x.mul_add(y, z);
    }
    let s = Sum::of(&[p, c]);
    if s.sign() == Ordering::Equal {
        return exact_zero_sign(p + c, mode) as f32;
    }
    round(&s, F32, mode) as f32
}

/// `x / y` rounded to f32.
pub fn div_f32(x: f32, y: f32, mode: Round) -> f32 {
    let (a, b) = (f64::from(x), f64::from(y));
    if any_special(&[a, b]) || a == 0.0 || b == 0.0 {
        return x / y;
    }
    round(&Quotient { num: a, den: b }, F32, mode) as f32
}

/// `sqrt(x)` rounded to f32.
pub fn sqrt_f32(x: f32, mode: Round) -> f32 {
    if !x.is_finite() || x <= 0.0 {
        return x.sqrt();
    }
    round(&Sqrt(f64::from(x)), F32, mode) as f32
}

/// `x + y` rounded to f64.
pub fn add_f64(x: f64, y: f64, mode: Round) -> f64 {
    if any_special(&[x, y]) || mode == Round::Rn {
        return x + y;
    }
    let s = Sum::of(&[x, y]);
    if s.sign() == Ordering::Equal {
        return exact_zero_sign(x + y, mode);
    }
    round(&s, F64, mode)
}

/// `x * y` rounded to f64 (exact through `two_prod` unless the result underflows).
pub fn mul_f64(x: f64, y: f64, mode: Round) -> f64 {
    let p = x * y;
    if !p.is_finite() || x == 0.0 || y == 0.0 || mode == Round::Rn {
        return p;
    }
    let mut s = Sum::of(&[]);
    if p.abs() < 1e-290 {
        // (x * 2^SCALE) * y is normal, so its two_prod is exact
        s.add_prod(x * pow2(SCALE), y);
        return round(&Scaled { inner: s, k: SCALE }, F64, mode);
    }
    s.add_prod(x, y);
    round(&s, F64, mode)
}

/// `x * y + z` rounded once to f64.
pub fn fma_f64(x: f64, y: f64, z: f64, mode: Round) -> f64 {
    let r = x.mul_add(y, z);
    if mode == Round::Rn || any_special(&[x, y, z, r]) {
        return r;
    }
    let tiny = (x * y).abs() < 1e-290 && x != 0.0 && y != 0.0;
    if tiny && z.abs() < 1e200 {
        let mut s = Sum::of(&[z * pow2(SCALE)]);
        s.add_prod(x * pow2(SCALE), y);
        if s.sign() == Ordering::Equal {
            return exact_zero_sign(r, mode);
        }
        return round(&Scaled { inner: s, k: SCALE }, F64, mode);
    }
    let mut s = Sum::of(&[z]);
    s.add_prod(x, y);
    if s.sign() == Ordering::Equal {
        return exact_zero_sign(r, mode);
    }
    round(&s, F64, mode)
}

/// `x / y` rounded to f64.
pub fn div_f64(x: f64, y: f64, mode: Round) -> f64 {
    if mode == Round::Rn || any_special(&[x, y]) || x == 0.0 || y == 0.0 {
        return x / y;
    }
    round(&Quotient { num: x, den: y }, F64, mode)
}

/// `sqrt(x)` rounded to f64.
pub fn sqrt_f64(x: f64, mode: Round) -> f64 {
    if mode == Round::Rn || !x.is_finite() || x <= 0.0 {
        return x.sqrt();
    }
    round(&Sqrt(x), F64, mode)
}

/// An f64 rounded to f32.
pub fn f64_to_f32(x: f64, mode: Round) -> f32 {
    if !x.is_finite() || x == 0.0 {
        return x as f32;
    }
    round(&Sum::of(&[x]), F32, mode) as f32
}

/// An integer rounded to f32 / f64.
pub fn int_to_f32(v: i128, mode: Round) -> f32 {
    if v == 0 {
        return 0.0;
    }
    round(&Int(v), F32, mode) as f32
}

pub fn int_to_f64(v: i128, mode: Round) -> f64 {
    if v == 0 {
        return 0.0;
    }
    if mode == Round::Rn {
        return v as f64;
    }
    round(&Int(v), F64, mode)
}

/// A float rounded to an integer with `mode` and saturated to `[min, max]`; NaN gives `nan`.
pub fn float_to_int(x: f64, mode: Round, min: i128, max: i128, nan: i128) -> i128 {
    if x.is_nan() {
        return nan;
    }
    let r = round_integral(x, mode);
    if r <= min as f64 {
        min
    } else if r >= max as f64 {
        max
    } else {
        r as i128
    }
}

/// PTX `cvt` from a float to an integer of `bits` bits: rounds with `mode`, saturates to the destination
/// range, and maps NaN to 0 — or, when the source is `.f64` or the destination 64 bits wide, to
/// `1 << (bits - 1)` (PTX ISA 9.0, `cvt`). `src_f64` says whether the source is `.f64`.
pub fn cvt_to_int(x: f64, src_f64: bool, mode: Round, bits: u32, signed: bool) -> i128 {
    let (min, max) =
        if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    let nan_bits = if src_f64 || bits == 64 { 1i128 << (bits - 1) } else { 0 };
    // the NaN result as a value of the destination type
    let nan = if signed && nan_bits != 0 { -nan_bits } else { nan_bits };
    float_to_int(x, mode, min, max, nan)
}

/// A float rounded to an integral value (PTX `cvt.rni/rzi/rmi/rpi` between float types).
pub fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::Rn => x.round_ties_even(),
        Round::Rz => x.trunc(),
        Round::Rm => x.floor(),
        Round::Rp => x.ceil(),
    }
}

/// Flushes an f32 subnormal to a zero of the same sign (`.ftz`).
pub fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        if x.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        x
    }
}

/// Clamps to `[+0, 1]`; NaN and `-0.0` give `+0.0` (`.sat`, whose clamp is `max(x, +0.0)` with
/// `-0.0 < +0.0`).
pub fn sat(x: f32) -> f32 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(1.0)
    }
}

/// The value of an f16 bit pattern.
pub fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((bits >> 10) & 0x1f);
    let m = f64::from(bits & 0x3ff);
    sign * match e {
        0 => m * pow2(-24),
        31 => {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => (1024.0 + m) * pow2(e - 25),
    }
}

/// The f16 bit pattern of `x` rounded with `mode` (NaN becomes the canonical `0x7fff`).
pub fn f16_bits(x: f64, mode: Round) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let r = if x.is_infinite() || x == 0.0 { x } else { round(&Sum::of(&[x]), F16, mode) };
    let a = r.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    if a < pow2(-14) {
        return sign | (a / pow2(-24)) as u16;
    }
    let e = exponent(a);
    let m = (a / pow2(e - 10)) as u16 - 1024;
    sign | (((e + 15) as u16) << 10) | m
}

/// The value of a bf16 bit pattern.
pub fn bf16_to_f64(bits: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(bits) << 16))
}

/// The bf16 bit pattern of `x` rounded with `mode` (NaN becomes the canonical `0x7fff`).
pub fn bf16_bits(x: f64, mode: Round) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let r = if x.is_infinite() || x == 0.0 { x } else { round(&Sum::of(&[x]), BF16, mode) };
    ((r as f32).to_bits() >> 16) as u16
}

/// Distance in units in the last place between two f32 values (`u64::MAX` when only one is NaN).
pub fn ulp_diff_f32(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u64::MAX };
    }
    let key = |x: f32| {
        let b = x.to_bits() as i64;
        if b & 0x8000_0000 != 0 {
            -(b & 0x7fff_ffff)
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

/// Distance in units in the last place between two f64 values.
pub fn ulp_diff_f64(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u64::MAX };
    }
    let key = |x: f64| {
        let b = x.to_bits() as i128;
        if b & (1 << 63) != 0 {
            -(b & 0x7fff_ffff_ffff_ffff)
        } else {
            b
        }
    };
    key(a).abs_diff(key(b)).min(u128::from(u64::MAX)) as u64
}

/// Distance in units in the last place between two f16 (or bf16) bit patterns; `nan` tells which patterns
/// are NaN.
pub fn ulp_diff_16(a: u16, b: u16, is_nan: fn(u16) -> bool) -> u64 {
    if is_nan(a) || is_nan(b) {
        return if is_nan(a) && is_nan(b) { 0 } else { u64::MAX };
    }
    let key = |x: u16| {
        let b = i64::from(x);
        if b & 0x8000 != 0 {
            -(b & 0x7fff)
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

pub fn f16_is_nan(b: u16) -> bool {
    b & 0x7c00 == 0x7c00 && b & 0x3ff != 0
}

pub fn bf16_is_nan(b: u16) -> bool {
    b & 0x7f80 == 0x7f80 && b & 0x7f != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_of_sums() {
        let x = 1.0f32;
        let y = f32::EPSILON / 4.0;
        assert_eq!(add_f32(x, y, Round::Rn), 1.0);
        assert_eq!(add_f32(x, y, Round::Rz), 1.0);
        assert_eq!(add_f32(x, y, Round::Rm), 1.0);
        assert_eq!(add_f32(x, y, Round::Rp), 1.0 + f32::EPSILON);
        assert_eq!(add_f32(-x, -y, Round::Rm), -1.0 - f32::EPSILON);
        assert_eq!(add_f32(-x, -y, Round::Rz), -1.0);
        // a tie: 1 + eps/2 rounds to even (1.0); 1 + 3eps/2 to 1 + 2eps
        assert_eq!(add_f32(1.0, f32::EPSILON / 2.0, Round::Rn), 1.0);
        assert_eq!(add_f32(1.0 + f32::EPSILON, f32::EPSILON / 2.0, Round::Rn), 1.0 + 2.0 * f32::EPSILON);
        // far apart operands
        assert_eq!(add_f32(1e30, 1e-30, Round::Rp), next_up(F32, 1e30f32 as f64) as f32);
        assert_eq!(add_f32(1e30, -1e-30, Round::Rz), next_down(F32, 1e30f32 as f64) as f32);
        assert_eq!(add_f32(1.0, -1.0, Round::Rm).to_bits(), (-0.0f32).to_bits());
        assert_eq!(add_f32(1.0, -1.0, Round::Rn).to_bits(), 0.0f32.to_bits());
        // overflow
        assert_eq!(add_f32(f32::MAX, f32::MAX, Round::Rz), f32::MAX);
        assert_eq!(add_f32(f32::MAX, f32::MAX, Round::Rn), f32::INFINITY);
        assert_eq!(add_f32(-f32::MAX, -f32::MAX, Round::Rp), -f32::MAX);
        // an underflowing f64 product
        let t = mul_f64(2.5, 1e-310, Round::Rz);
        assert!(t <= 2.5e-310 && mul_f64(2.5, 1e-310, Round::Rp) > t);
        assert_eq!(mul_f64(2.5, 1e-310, Round::Rn), 2.5 * 1e-310);
    }

    #[test]
    fn round_to_nearest_matches_hardware() {
        let mut r = crate::data::Rng::new(1);
        for _ in 0..20000 {
            let x = f32::from_bits(r.next_u32() & 0xBFFF_FFFF);
            let y = f32::from_bits(r.next_u32() & 0xBFFF_FFFF);
            let z = f32::from_bits(r.next_u32() & 0xBFFF_FFFF);
            assert_eq!(add_f32(x, y, Round::Rn).to_bits(), (x + y).to_bits(), "{x} + {y}");
            assert_eq!(mul_f32(x, y, Round::Rn).to_bits(), (x * y).to_bits(), "{x} * {y}");
            assert_eq!(fma_f32(x, y, z, Round::Rn).to_bits(), x.mul_add(y, z).to_bits(), "fma {x} {y} {z}");
            assert_eq!(div_f32(x, y, Round::Rn).to_bits(), (x / y).to_bits(), "{x} / {y}");
            assert_eq!(sqrt_f32(x.abs(), Round::Rn).to_bits(), x.abs().sqrt().to_bits(), "sqrt {x}");
            let d = f64::from_bits(r.next_u64());
            if d.is_finite() {
                assert_eq!(f64_to_f32(d, Round::Rn).to_bits(), (d as f32).to_bits(), "{d}");
            }
            for m in ROUNDS {
                let lo = add_f32(x, y, m);
                assert!(ulp_diff_f32(lo, x + y) <= 1 || !(x + y).is_finite());
            }
            let a = f64::from(x) * 1.7;
            let b = f64::from(y) * 0.3;
            assert_eq!(add_f64(a, b, Round::Rn), a + b);
            assert_eq!(div_f64(a, b, Round::Rn).to_bits(), (a / b).to_bits());
            assert_eq!(fma_f64(a, b, a, Round::Rn).to_bits(), a.mul_add(b, a).to_bits());
        }
    }

    #[test]
    fn directed_modes_bracket_the_exact_value() {
        let mut r = crate::data::Rng::new(2);
        for _ in 0..5000 {
            let x = r.f32_in(-100.0, 100.0);
            let y = r.f32_in(-100.0, 100.0);
            let exact = f64::from(x) / f64::from(y);
            let (lo, hi) = (div_f32(x, y, Round::Rm), div_f32(x, y, Round::Rp));
            assert!(f64::from(lo) <= exact && exact <= f64::from(hi));
            assert!(ulp_diff_f32(lo, hi) <= 1);
            let z = div_f32(x, y, Round::Rz);
            assert!(f64::from(z).abs() <= exact.abs());
        }
    }

    #[test]
    fn half_and_bfloat() {
        assert_eq!(f16_bits(1.0, Round::Rn), 0x3c00);
        assert_eq!(f16_bits(65504.0, Round::Rn), 0x7bff);
        assert_eq!(f16_bits(65520.0, Round::Rn), 0x7c00);
        assert_eq!(f16_bits(65520.0, Round::Rz), 0x7bff);
        assert_eq!(f16_bits(6.0e-8, Round::Rn), 0x0001);
        assert_eq!(f16_bits(-2.0, Round::Rn), 0xc000);
        assert_eq!(f16_bits(1.0 + 1.0 / 2048.0, Round::Rn), 0x3c00);
        assert_eq!(f16_bits(1.0 + 1.0 / 2048.0, Round::Rp), 0x3c01);
        assert_eq!(f16_to_f64(0x3555), 0.333251953125);
        assert_eq!(bf16_bits(1.0, Round::Rn), 0x3f80);
        assert_eq!(bf16_bits(1.00390625, Round::Rn), 0x3f80);
        assert_eq!(bf16_bits(1.01171875, Round::Rn), 0x3f82);
        assert_eq!(bf16_bits(1.01171875, Round::Rz), 0x3f81);
        assert_eq!(bf16_to_f64(0x4049), 3.140625);
        for b in 0..=0xffffu16 {
            if f16_is_nan(b) {
                continue;
            }
            assert_eq!(f16_bits(f16_to_f64(b), Round::Rn), b);
        }
    }

    #[test]
    fn integer_conversions() {
        assert_eq!(int_to_f32(16_777_217, Round::Rn), 16_777_216.0);
        assert_eq!(int_to_f32(16_777_217, Round::Rp), 16_777_218.0);
        assert_eq!(int_to_f32(-16_777_217, Round::Rz), -16_777_216.0);
        assert_eq!(int_to_f32(-16_777_217, Round::Rm), -16_777_218.0);
        assert_eq!(int_to_f64(i128::from(u64::MAX), Round::Rz), 18_446_744_073_709_549_568.0);
        assert_eq!(cvt_to_int(2.5, false, Round::Rn, 32, true), 2);
        assert_eq!(cvt_to_int(-2.5, false, Round::Rm, 32, true), -3);
        assert_eq!(cvt_to_int(1e20, false, Round::Rz, 32, true), i32::MAX.into());
        assert_eq!(cvt_to_int(-1.0, false, Round::Rz, 32, false), 0);
        assert_eq!(cvt_to_int(f64::NAN, false, Round::Rz, 32, true), 0);
        assert_eq!(cvt_to_int(f64::NAN, true, Round::Rz, 32, true), i32::MIN.into());
        assert_eq!(cvt_to_int(f64::NAN, false, Round::Rz, 64, false), 1 << 63);
        assert_eq!(cvt_to_int(f64::NAN, true, Round::Rz, 32, false), 1 << 31);
    }
}
