//! Shared test support: an arbitrary-precision reference for rounding, and biased generators.
//!
//! The reference is deliberately naive: values are `±mag * 2^exp` with an unbounded `BigUint`
//! magnitude, operations are exact, and `round_ref` rounds an exact value (plus an optional
//! sticky fraction, only used where the rounding quantum is at least 4x coarser than the last
//! exact bit) with textbook IEEE 754 rules. It shares no code with the crate under test except
//! the `Format` constants (field widths). Its round-to-nearest results are themselves checked
//! against the host FPU (`as` casts and native ops) in `exact_reference.rs`.

#![allow(dead_code)]

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Zero};
use scalar::{Format, Rounding};

pub const MODES: [Rounding; 5] = [Rounding::Rn, Rounding::Rna, Rounding::Rz, Rounding::Rm, Rounding::Rp];

/// An exactly known value.
#[derive(Clone, Debug)]
pub enum Val {
    Nan,
    Inf(bool),
    /// `(-1)^neg * mag * 2^exp`; `mag == 0` is a signed zero.
    Fin {
        neg: bool,
        mag: BigUint,
        exp: i64,
    },
}

fn width(f: Format) -> u32 {
    1 + f.exp_bits + f.mant_bits
}
fn bias(f: Format) -> i64 {
    (1i64 << (f.exp_bits - 1)) - 1
}

/// Decode IEEE-style bits (no e4m3 support).
pub fn decode(f: Format, bits: u64) -> Val {
    let neg = (bits >> (width(f) - 1)) & 1 == 1;
    let field = (bits >> f.mant_bits) & ((1 << f.exp_bits) - 1);
    let frac = bits & ((1 << f.mant_bits) - 1);
    let all = (1u64 << f.exp_bits) - 1;
    if field == all {
        return if frac == 0 { Val::Inf(neg) } else { Val::Nan };
    }
    let (mag, exp) = if field == 0 {
        (frac, 1 - bias(f) - i64::from(f.mant_bits))
    } else {
        (frac + (1 << f.mant_bits), field as i64 - bias(f) - i64::from(f.mant_bits))
    };
    Val::Fin { neg, mag: BigUint::from(mag), exp }
}

pub fn is_nan_bits(f: Format, bits: u64) -> bool {
    matches!(decode(f, bits), Val::Nan)
}

fn sign_bits(f: Format, neg: bool) -> u64 {
    if neg {
        1 << (width(f) - 1)
    } else {
        0
    }
}

/// Round `(-1)^neg * (mag + s) * 2^exp` to `f`, `s` in `(0,1)` iff `sticky`.
pub fn round_ref(f: Format, neg: bool, mag: &BigUint, exp: i64, sticky: bool, mode: Rounding) -> u64 {
    let sign = sign_bits(f, neg);
    if mag.is_zero() {
        assert!(!sticky);
        return sign;
    }
    let p = i64::from(f.mant_bits);
    let emin = 1 - bias(f);
    let emax = bias(f);
    let top = exp + mag.bits() as i64 - 1;
    let qe = top.max(emin) - p;
    let (mut q, cmp_half, inexact) = if qe <= exp {
        assert!(!sticky, "reference: sticky needs a coarse quantum");
        (mag << ((exp - qe) as usize), core::cmp::Ordering::Less, false)
    } else {
        let shift = (qe - exp) as usize;
        assert!(!sticky || shift >= 2, "reference: sticky too close to the rounding bit");
        let q = mag >> shift;
        let r = mag - (&q << shift);
        let half = BigUint::one() << (shift - 1);
        let mut c = r.cmp(&half);
        if c == core::cmp::Ordering::Equal && sticky {
            c = core::cmp::Ordering::Greater;
        }
        (q, c, !r.is_zero() || sticky)
    };
    use core::cmp::Ordering::*;
    let odd = q.bit(0);
    let up = inexact
        && match mode {
            Rounding::Rn => cmp_half == Greater || (cmp_half == Equal && odd),
            Rounding::Rna => cmp_half != Less,
            Rounding::Rz => false,
            Rounding::Rp => !neg,
            Rounding::Rm => neg,
        };
    if up {
        q += 1u32;
    }
    if q.is_zero() {
        return sign;
    }
    let rtop = qe + q.bits() as i64 - 1;
    if rtop > emax {
        let to_inf = match mode {
            Rounding::Rn | Rounding::Rna => true,
            Rounding::Rz => false,
            Rounding::Rp => !neg,
            Rounding::Rm => neg,
        };
        let inf = ((1u64 << f.exp_bits) - 1) << f.mant_bits;
        return sign | if to_inf { inf } else { inf - 1 };
    }
    let qbits = q.bits() as i64;
    let q64: u64 = q.try_into().expect("fits");
    if rtop < emin {
        // subnormal: qe == emin - p, q < 2^p
        return sign | q64;
    }
    // normalise to p+1 bits
    let extra = qbits - (p + 1);
    let sig = if extra >= 0 { q64 >> extra } else { q64 << (-extra) };
    let field = (rtop + bias(f)) as u64;
    sign | (field << f.mant_bits) | (sig - (1 << f.mant_bits))
}

/// Exact signed sum of two finite values.
fn exact_sum(an: bool, am: &BigUint, ae: i64, bn: bool, bm: &BigUint, be: i64) -> (BigInt, i64) {
    let e = ae.min(be);
    let a = BigInt::from_biguint(if an { Sign::Minus } else { Sign::Plus }, am << ((ae - e) as usize));
    let b = BigInt::from_biguint(if bn { Sign::Minus } else { Sign::Plus }, bm << ((be - e) as usize));
    (a + b, e)
}

fn nan(f: Format) -> u64 {
    (1u64 << (width(f) - 1)) - 1
}

/// Reference `a + b` (NaN → canonical NaN of `f`).
pub fn ref_add(f: Format, a: u64, b: u64, modes: &[Rounding]) -> Vec<u64> {
    let out = |x: u64| vec![x; modes.len()];
    match (decode(f, a), decode(f, b)) {
        (Val::Nan, _) | (_, Val::Nan) => out(nan(f)),
        (Val::Inf(x), Val::Inf(y)) => out(if x == y { a } else { nan(f) }),
        (Val::Inf(_), _) => out(a),
        (_, Val::Inf(_)) => out(b),
        (Val::Fin { neg: an, mag: am, exp: ae }, Val::Fin { neg: bn, mag: bm, exp: be }) => {
            let (s, e) = exact_sum(an, &am, ae, bn, &bm, be);
            if s.is_zero() {
                return modes
                    .iter()
                    .map(|&m| {
                        if am.is_zero() && bm.is_zero() && an == bn {
                            sign_bits(f, an)
                        } else {
                            sign_bits(f, m == Rounding::Rm)
                        }
                    })
                    .collect();
            }
            let neg = s.sign() == Sign::Minus;
            let mag = s.magnitude();
            modes.iter().map(|&m| round_ref(f, neg, mag, e, false, m)).collect()
        }
    }
}

pub fn ref_mul(f: Format, a: u64, b: u64, modes: &[Rounding]) -> Vec<u64> {
    let out = |x: u64| vec![x; modes.len()];
    let neg = ((a ^ b) >> (width(f) - 1)) & 1 == 1;
    let inf = ((1u64 << f.exp_bits) - 1) << f.mant_bits;
    match (decode(f, a), decode(f, b)) {
        (Val::Nan, _) | (_, Val::Nan) => out(nan(f)),
        (Val::Inf(_), Val::Fin { mag, .. }) | (Val::Fin { mag, .. }, Val::Inf(_)) if mag.is_zero() => out(nan(f)),
        (Val::Inf(_), _) | (_, Val::Inf(_)) => out(sign_bits(f, neg) | inf),
        (Val::Fin { mag: am, exp: ae, .. }, Val::Fin { mag: bm, exp: be, .. }) => {
            let m = am * bm;
            modes.iter().map(|&r| round_ref(f, neg, &m, ae + be, false, r)).collect()
        }
    }
}

pub fn ref_fma(f: Format, a: u64, b: u64, c: u64, modes: &[Rounding]) -> Vec<u64> {
    let out = |x: u64| vec![x; modes.len()];
    let pneg = ((a ^ b) >> (width(f) - 1)) & 1 == 1;
    let inf = ((1u64 << f.exp_bits) - 1) << f.mant_bits;
    let (va, vb, vc) = (decode(f, a), decode(f, b), decode(f, c));
    if matches!(va, Val::Nan) || matches!(vb, Val::Nan) || matches!(vc, Val::Nan) {
        return out(nan(f));
    }
    let zero = |v: &Val| matches!(v, Val::Fin { mag, .. } if mag.is_zero());
    let isinf = |v: &Val| matches!(v, Val::Inf(_));
    if (isinf(&va) && zero(&vb)) || (zero(&va) && isinf(&vb)) {
        return out(nan(f));
    }
    if isinf(&va) || isinf(&vb) {
        return match vc {
            Val::Inf(n) if n != pneg => out(nan(f)),
            _ => out(sign_bits(f, pneg) | inf),
        };
    }
    if let Val::Inf(_) = vc {
        return out(c);
    }
    let (Val::Fin { mag: am, exp: ae, .. }, Val::Fin { mag: bm, exp: be, .. }, Val::Fin { neg: cn, mag: cm, exp: ce }) =
        (va, vb, vc)
    else {
        unreachable!()
    };
    let pm = am * bm;
    let (s, e) = exact_sum(pneg, &pm, ae + be, cn, &cm, ce);
    if s.is_zero() {
        return modes
            .iter()
            .map(|&m| {
                if pm.is_zero() && cm.is_zero() && pneg == cn {
                    sign_bits(f, cn)
                } else {
                    sign_bits(f, m == Rounding::Rm)
                }
            })
            .collect();
    }
    let neg = s.sign() == Sign::Minus;
    modes.iter().map(|&m| round_ref(f, neg, s.magnitude(), e, false, m)).collect()
}

pub fn ref_div(f: Format, a: u64, b: u64, modes: &[Rounding]) -> Vec<u64> {
    let out = |x: u64| vec![x; modes.len()];
    let neg = ((a ^ b) >> (width(f) - 1)) & 1 == 1;
    let inf = ((1u64 << f.exp_bits) - 1) << f.mant_bits;
    match (decode(f, a), decode(f, b)) {
        (Val::Nan, _) | (_, Val::Nan) | (Val::Inf(_), Val::Inf(_)) => out(nan(f)),
        (Val::Inf(_), _) => out(sign_bits(f, neg) | inf),
        (_, Val::Inf(_)) => out(sign_bits(f, neg)),
        (Val::Fin { mag: am, exp: ae, .. }, Val::Fin { mag: bm, exp: be, .. }) => {
            if bm.is_zero() {
                return out(if am.is_zero() { nan(f) } else { sign_bits(f, neg) | inf });
            }
            if am.is_zero() {
                return out(sign_bits(f, neg));
            }
            let p = i64::from(f.mant_bits);
            let k = (p + 4 + bm.bits() as i64 - am.bits() as i64).max(0) as usize;
            let n = &am << k;
            let q = &n / &bm;
            let sticky = !(&n % &bm).is_zero();
            modes.iter().map(|&m| round_ref(f, neg, &q, ae - be - k as i64, sticky, m)).collect()
        }
    }
}

pub fn ref_sqrt(f: Format, a: u64, modes: &[Rounding]) -> Vec<u64> {
    let out = |x: u64| vec![x; modes.len()];
    match decode(f, a) {
        Val::Nan | Val::Inf(true) => out(nan(f)),
        Val::Inf(false) => out(a),
        Val::Fin { neg, mag, exp } => {
            if mag.is_zero() {
                return out(a);
            }
            if neg {
                return out(nan(f));
            }
            let (mut m, mut e) = (mag, exp);
            if e & 1 != 0 {
                m <<= 1usize;
                e -= 1;
            }
            let k = i64::from(f.mant_bits) + 4;
            let n = m << ((2 * k) as usize);
            let r = n.sqrt();
            let sticky = &r * &r != n;
            modes.iter().map(|&md| round_ref(f, false, &r, (e - 2 * k) / 2, sticky, md)).collect()
        }
    }
}

/// Reference float → float conversion (NaN → canonical NaN of `to`).
pub fn ref_convert(from: Format, to: Format, bits: u64, mode: Rounding) -> u64 {
    match decode(from, bits) {
        Val::Nan => nan(to),
        Val::Inf(n) => sign_bits(to, n) | (((1u64 << to.exp_bits) - 1) << to.mant_bits),
        Val::Fin { neg, mag, exp } => round_ref(to, neg, &mag, exp, false, mode),
    }
}

/// Reference integer → float conversion.
pub fn ref_from_int(to: Format, v: i128, mode: Rounding) -> u64 {
    if v == 0 {
        return 0;
    }
    let mag = BigUint::from(v.unsigned_abs());
    round_ref(to, v < 0, &mag, 0, false, mode)
}

/// Reference rounding of a finite float value to an integer (unbounded); `None` for NaN/inf.
pub fn ref_to_integer(f: Format, bits: u64, mode: Rounding) -> Option<BigInt> {
    let Val::Fin { neg, mag, exp } = decode(f, bits) else {
        return None;
    };
    let m = if exp >= 0 {
        mag << (exp as usize)
    } else {
        let sh = (-exp) as usize;
        let q = &mag >> sh;
        let r = &mag - (&q << sh);
        let half = BigUint::one() << (sh - 1);
        let c = r.cmp(&half);
        let inexact = !r.is_zero();
        use core::cmp::Ordering::*;
        let up = inexact
            && match mode {
                Rounding::Rn => c == Greater || (c == Equal && q.bit(0)),
                Rounding::Rna => c != Less,
                Rounding::Rz => false,
                Rounding::Rp => !neg,
                Rounding::Rm => neg,
            };
        if up {
            q + 1u32
        } else {
            q
        }
    };
    Some(BigInt::from_biguint(if neg { Sign::Minus } else { Sign::Plus }, m))
}

// ---------------------------------------------------------------- generators

pub fn rng(seed: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed)
}

/// A random encoding of `f`, biased towards edge cases.
pub fn gen(r: &mut fastrand::Rng, f: Format) -> u64 {
    let w = width(f);
    let sign = if r.bool() { 1u64 << (w - 1) } else { 0 };
    let mmask = (1u64 << f.mant_bits) - 1;
    let all = (1u64 << f.exp_bits) - 1;
    let field = |e: u64| e << f.mant_bits;
    match r.u32(0..100) {
        0..=9 => {
            let specials = [
                0,
                1,
                mmask,
                field(1),
                field(1) | mmask,
                field(all - 1) | mmask,
                field(all - 1),
                field(all),
                field(all) | 1,
                field(all) | mmask,
                field(bias(f) as u64),
                field(bias(f) as u64) | 1,
                field(bias(f) as u64 - 1) | mmask,
                field(bias(f) as u64 + 1),
            ];
            sign | specials[r.usize(0..specials.len())]
        }
        10..=39 => r.u64(..) & ((1u64 << (w - 1)) - 1) | sign,
        40..=59 => {
            let e = (bias(f) as u64).saturating_add_signed(r.i64(-8..=8)).clamp(1, all - 1);
            sign | field(e) | (r.u64(..) & mmask)
        }
        60..=71 => sign | (r.u64(..) & mmask),
        72..=87 => {
            // few significant bits: easy exact halfway points
            let keep = r.u32(0..=f.mant_bits.min(6));
            let m = (r.u64(..) & mmask) >> (f.mant_bits - keep) << (f.mant_bits - keep);
            sign | field(r.u64(0..all)) | m
        }
        _ => {
            let e = all - 1 - r.u64(0..3.min(all - 1));
            sign | field(e) | (r.u64(..) & mmask)
        }
    }
}

/// A second operand related to `a` (close exponent, cancellation, half-ulp offsets) or random.
pub fn gen_related(r: &mut fastrand::Rng, f: Format, a: u64) -> u64 {
    let w = width(f);
    let smask = 1u64 << (w - 1);
    let all = (1u64 << f.exp_bits) - 1;
    let mag = a & (smask - 1);
    let efield = mag >> f.mant_bits;
    match r.u32(0..10) {
        0..=3 => gen(r, f),
        4 => (a ^ smask).wrapping_add(r.u64(0..4)).wrapping_sub(2) & (u64::MAX >> (64 - w)),
        5 => a.wrapping_add(r.u64(0..8)).wrapping_sub(4) & (u64::MAX >> (64 - w)),
        6 | 7 => {
            // power of two near half an ulp of a (odd multiples give midpoints), either sign
            let d = i64::from(f.mant_bits) + r.i64(-1..=3);
            let e = (efield as i64 - d).clamp(0, all as i64 - 1) as u64;
            let m = if r.bool() { 0 } else { r.u64(..) & ((1u64 << f.mant_bits) - 1) & !1 };
            (if r.bool() { smask } else { 0 }) | (e << f.mant_bits) | m
        }
        _ => {
            let e = (efield as i64 + r.i64(-3..=3)).clamp(0, all as i64 - 1) as u64;
            (if r.bool() { smask } else { 0 }) | (e << f.mant_bits) | (r.u64(..) & ((1u64 << f.mant_bits) - 1))
        }
    }
}
