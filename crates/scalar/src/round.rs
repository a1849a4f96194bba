//! The exact rounding engine and a small soft-float core built on it.
//!
//! Every binary floating-point format this crate handles (f16, bf16, tf32, f32, f64, e4m3, e5m2) is
//! described by a [`Format`]. A finite value is unpacked into `sig * 2^exp` with an integer
//! significand; arithmetic is done exactly on integers (`u128`), and [`round_pack`] rounds the exact
//! result once, in any [`Rounding`] mode, to any format. Bits that do not fit in 128 bits are
//! folded into a *sticky* flag, which is placed at least two bits below the rounding position, so
//! the rounding decision is always the one the infinitely precise result would get.
//!
//! The soft-float operations ([`add_bits`], [`mul_bits`], [`fma_bits`], [`div_bits`],
//! [`sqrt_bits`]) are correctly rounded in every mode and for every format. They produce the
//! format's canonical NaN for every NaN result; the callers in [`crate::float`] and
//! [`crate::half`] apply PTX's NaN-payload rules on top.

/// IEEE 754 rounding direction.
///
/// PTX spells these `.rn`, `.rna` (cvt to tf32 only), `.rz`, `.rm`, `.rp`; the integer-rounding
/// spellings `.rni`, `.rzi`, `.rmi`, `.rpi` of `cvt` map to `Rn`, `Rz`, `Rm`, `Rp` applied to the
/// integral grid (see [`crate::convert`](mod@crate::convert)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Round to nearest, ties to even (`.rn`).
    #[default]
    Rn,
    /// Round to nearest, ties away from zero (`.rna`).
    Rna,
    /// Round toward zero (`.rz`).
    Rz,
    /// Round toward negative infinity (`.rm`).
    Rm,
    /// Round toward positive infinity (`.rp`).
    Rp,
}

/// A binary floating-point encoding: `1` sign bit, `exp_bits` exponent bits, `mant_bits` stored
/// fraction bits, packed in the low `1 + exp_bits + mant_bits` bits of a `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// Stored fraction bits (the implicit leading one is not counted).
    pub mant_bits: u32,
    /// Exponent field bits.
    pub exp_bits: u32,
    /// `false` for OCP `e4m3`: the all-ones exponent holds normal numbers, only `S.1111.111` is
    /// NaN, there is no infinity, and overflow always saturates to the largest finite value.
    pub has_inf: bool,
}

impl Format {
    /// IEEE binary16.
    pub const F16: Format = Format { mant_bits: 10, exp_bits: 5, has_inf: true };
    /// bfloat16 (the upper half of an f32).
    pub const BF16: Format = Format { mant_bits: 7, exp_bits: 8, has_inf: true };
    /// TensorFloat-32 in its own 19-bit packing (the emulator stores it in f32 layout, see
    /// [`crate::convert`](mod@crate::convert)).
    pub const TF32: Format = Format { mant_bits: 10, exp_bits: 8, has_inf: true };
    /// IEEE binary32.
    pub const F32: Format = Format { mant_bits: 23, exp_bits: 8, has_inf: true };
    /// IEEE binary64.
    pub const F64: Format = Format { mant_bits: 52, exp_bits: 11, has_inf: true };
    /// OCP FP8 E4M3 (bias 7, max 448, no infinity, NaN = `0x7F`/`0xFF`).
    pub const E4M3: Format = Format { mant_bits: 3, exp_bits: 4, has_inf: false };
    /// OCP FP8 E5M2 (IEEE-like, bias 15, max 57344).
    pub const E5M2: Format = Format { mant_bits: 2, exp_bits: 5, has_inf: true };

    /// Total encoded width in bits.
    #[inline]
    pub const fn width(self) -> u32 {
        1 + self.exp_bits + self.mant_bits
    }
    /// Exponent bias.
    #[inline]
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    /// Unbiased exponent of the smallest normal number.
    #[inline]
    pub const fn emin(self) -> i32 {
        1 - self.bias()
    }
    /// The sign bit.
    #[inline]
    pub const fn sign_bit(self) -> u64 {
        1 << (self.exp_bits + self.mant_bits)
    }
    /// Mask of the stored fraction.
    #[inline]
    pub const fn mant_mask(self) -> u64 {
        (1 << self.mant_bits) - 1
    }
    /// Exponent field with all ones (infinity/NaN for IEEE formats).
    #[inline]
    pub const fn exp_all_ones(self) -> u64 {
        (1 << self.exp_bits) - 1
    }
    /// Bits of `+inf` (only meaningful when `has_inf`).
    #[inline]
    pub const fn inf(self) -> u64 {
        self.exp_all_ones() << self.mant_bits
    }
    /// Bits of the largest finite positive value.
    #[inline]
    pub const fn max_finite(self) -> u64 {
        if self.has_inf {
            self.inf() - 1
        } else {
            self.sign_bit() - 2
        }
    }
    /// The canonical NaN NVIDIA hardware produces: every bit set except the sign
    /// (`0x7FFF` f16/bf16, `0x7FFFFFFF` f32, `0x7FFF_FFFF_FFFF_FFFF` f64, `0x7F` e4m3/e5m2).
    #[inline]
    pub const fn canonical_nan(self) -> u64 {
        self.sign_bit() - 1
    }
    /// Mask of all encoded bits.
    #[inline]
    pub const fn mask(self) -> u64 {
        if self.width() == 64 {
            u64::MAX
        } else {
            (1 << self.width()) - 1
        }
    }
    /// Whether `bits` encodes a NaN.
    #[inline]
    pub const fn is_nan(self, bits: u64) -> bool {
        let mag = bits & (self.sign_bit() - 1);
        if self.has_inf {
            mag > self.inf()
        } else {
            mag == self.sign_bit() - 1
        }
    }
    /// Whether `bits` encodes a subnormal (nonzero, exponent field zero).
    #[inline]
    pub const fn is_subnormal(self, bits: u64) -> bool {
        let mag = bits & (self.sign_bit() - 1);
        mag != 0 && mag >> self.mant_bits == 0
    }
    /// Flush a subnormal to a zero of the same sign; other values unchanged.
    #[inline]
    pub const fn flush(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            bits & self.sign_bit()
        } else {
            bits
        }
    }
}

/// An unpacked encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A zero of the given sign.
    Zero {
        /// Sign.
        neg: bool,
    },
    /// `(-1)^neg * sig * 2^exp`, `sig != 0` (subnormals have no implicit bit).
    Finite {
        /// Sign.
        neg: bool,
        /// Exponent of the significand's least significant bit.
        exp: i32,
        /// Integer significand.
        sig: u64,
    },
    /// An infinity of the given sign.
    Inf {
        /// Sign.
        neg: bool,
    },
    /// Any NaN.
    Nan,
}

/// Decode `bits` (low `fmt.width()` bits) of format `fmt`.
#[inline]
pub fn unpack(fmt: Format, bits: u64) -> Class {
    let neg = bits & fmt.sign_bit() != 0;
    let field = (bits >> fmt.mant_bits) & fmt.exp_all_ones();
    let frac = bits & fmt.mant_mask();
    if field == fmt.exp_all_ones() {
        if fmt.has_inf {
            return if frac == 0 { Class::Inf { neg } } else { Class::Nan };
        }
        if frac == fmt.mant_mask() {
            return Class::Nan;
        }
    }
    if field == 0 {
        if frac == 0 {
            Class::Zero { neg }
        } else {
            Class::Finite { neg, exp: fmt.emin() - fmt.mant_bits as i32, sig: frac }
        }
    } else {
        Class::Finite { neg, exp: field as i32 - fmt.bias() - fmt.mant_bits as i32, sig: frac | (1 << fmt.mant_bits) }
    }
}

/// Where the discarded part of a significand lies relative to half a unit in the last place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rest {
    Zero,
    BelowHalf,
    Half,
    AboveHalf,
}

#[inline]
fn classify_rest(rem: u128, half: u128, sticky: bool) -> Rest {
    if rem == 0 && !sticky {
        Rest::Zero
    } else if rem < half {
        Rest::BelowHalf
    } else if rem == half {
        if sticky {
            Rest::AboveHalf
        } else {
            Rest::Half
        }
    } else {
        Rest::AboveHalf
    }
}

/// Whether a truncated magnitude must be incremented.
#[inline]
fn increments(rnd: Rounding, neg: bool, odd: bool, rest: Rest) -> bool {
    if rest == Rest::Zero {
        return false;
    }
    match rnd {
        Rounding::Rn => rest == Rest::AboveHalf || (rest == Rest::Half && odd),
        Rounding::Rna => rest >= Rest::Half,
        Rounding::Rz => false,
        Rounding::Rp => !neg,
        Rounding::Rm => neg,
    }
}

/// Whether an overflowing result of sign `neg` becomes infinity (else the largest finite value).
#[inline]
pub(crate) fn overflow_to_inf(rnd: Rounding, neg: bool) -> bool {
    match rnd {
        Rounding::Rn | Rounding::Rna => true,
        Rounding::Rz => false,
        Rounding::Rp => !neg,
        Rounding::Rm => neg,
    }
}

/// The result of an overflow of sign `neg` in format `fmt` under `rnd`.
#[inline]
pub fn overflow(fmt: Format, neg: bool, rnd: Rounding) -> u64 {
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if fmt.has_inf && overflow_to_inf(rnd, neg) {
        sign | fmt.inf()
    } else {
        sign | fmt.max_finite()
    }
}

/// Round `(-1)^neg * (sig + f) * 2^exp` to `fmt`, where `f` is an unknown fraction in `(0, 1)` if
/// `sticky` and `0` otherwise. Requires `sig != 0` whenever `sticky` is set (callers guarantee it,
/// and put `sig`'s top bit at least two bits above any position `fmt` can round at).
///
/// Overflow gives infinity or the largest finite value as IEEE 754 prescribes for `rnd`; formats
/// without infinity ([`Format::E4M3`]) always saturate to the largest finite value. Underflow
/// rounds into the subnormal range (no flushing; `.ftz` is applied by the callers).
#[inline]
pub fn round_pack(fmt: Format, neg: bool, exp: i32, sig: u128, sticky: bool, rnd: Rounding) -> u64 {
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if sig == 0 {
        debug_assert!(!sticky, "sticky without significand");
        return sign;
    }
    let lz = sig.leading_zeros();
    let norm = sig << lz; // top bit at 127
    let lsb_exp = exp - lz as i32; // exponent of bit 0 of `norm`
    let top_exp = lsb_exp + 127; // exponent of the leading one
    let mant = fmt.mant_bits as i32;
    let emin = fmt.emin();
    let normal = top_exp >= emin;
    let quantum_exp = if normal { top_exp - mant } else { emin - mant };
    // Number of low bits of `norm` below the result's last place (always > 0).
    let shift = (quantum_exp - lsb_exp) as u32;
    let (q, rest) = if shift < 128 {
        let q = norm >> shift;
        let rem = norm & ((1u128 << shift) - 1);
        (q, classify_rest(rem, 1u128 << (shift - 1), sticky))
    } else if shift == 128 {
        (0, classify_rest(norm, 1u128 << 127, sticky))
    } else {
        (0, Rest::BelowHalf)
    };
    let q = q as u64 + u64::from(increments(rnd, neg, q & 1 == 1, rest));
    // For normal results q is in [2^mant, 2^(mant+1)]; adding it to (biased-1)<<mant carries a
    // rounded-up significand into the exponent. Subnormals use field 0 and q in [0, 2^mant].
    let bits = if normal {
        let biased = (top_exp + fmt.bias()) as u64;
        if biased > fmt.exp_all_ones() {
            return overflow(fmt, neg, rnd);
        }
        ((biased - 1) << fmt.mant_bits) + q
    } else {
        q
    };
    if bits > fmt.max_finite() {
        return overflow(fmt, neg, rnd);
    }
    sign | bits
}

/// Round a nonzero integer magnitude `mag` with sign `neg` to `fmt`.
#[inline]
pub fn from_int(fmt: Format, neg: bool, mag: u128, rnd: Rounding) -> u64 {
    if mag == 0 {
        return 0;
    }
    round_pack(fmt, neg, 0, mag, false, rnd)
}

/// Convert between formats with a single rounding. NaN gives `to`'s canonical NaN.
#[inline]
pub fn convert_format(from: Format, to: Format, bits: u64, rnd: Rounding) -> u64 {
    match unpack(from, bits) {
        Class::Zero { neg } => sign_of(to, neg),
        Class::Inf { neg } => {
            if to.has_inf {
                sign_of(to, neg) | to.inf()
            } else {
                sign_of(to, neg) | to.max_finite()
            }
        }
        Class::Nan => to.canonical_nan(),
        Class::Finite { neg, exp, sig } => round_pack(to, neg, exp, u128::from(sig), false, rnd),
    }
}

#[inline]
fn sign_of(fmt: Format, neg: bool) -> u64 {
    if neg {
        fmt.sign_bit()
    } else {
        0
    }
}

/// Sign of an exact zero sum of two nonzero opposite terms (IEEE 754 §6.3).
#[inline]
fn exact_zero_sum(fmt: Format, rnd: Rounding) -> u64 {
    sign_of(fmt, rnd == Rounding::Rm)
}

/// Exact sum of `(-1)^xn * xs * 2^xe` and `(-1)^yn * ys * 2^ye` (`xs, ys < 2^120`, nonzero),
/// as `(neg, exp, sig, sticky)` suitable for [`round_pack`], or `None` for an exact zero.
fn add_exact(x: (bool, i32, u128), y: (bool, i32, u128)) -> Option<(bool, i32, u128, bool)> {
    let top = |(_, e, s): (bool, i32, u128)| e + (128 - s.leading_zeros() as i32);
    let (x, y) = if top(y) > top(x) { (y, x) } else { (x, y) };
    let (xn, mut xe, mut xs) = x;
    let (yn, ye, mut ys) = y;
    // Put x's leading one at bit 125 (exact left shift).
    let up = xs.leading_zeros() as i32 - 2;
    xs <<= up;
    xe -= up;
    let mut sticky = false;
    if ye >= xe {
        // y's top is not above x's, so this fits below bit 126.
        ys <<= (ye - xe) as u32;
    } else {
        let d = (xe - ye) as u32;
        if d >= 128 {
            sticky = ys != 0;
            ys = 0;
        } else {
            sticky = ys & ((1u128 << d) - 1) != 0;
            ys >>= d;
        }
    }
    if xn == yn {
        return Some((xn, xe, xs + ys, sticky));
    }
    // Subtraction. With sticky set, y lies entirely below x's top by > 2^18 so x > y.
    if sticky {
        return Some((xn, xe, xs - ys - 1, true));
    }
    match xs.cmp(&ys) {
        core::cmp::Ordering::Greater => Some((xn, xe, xs - ys, false)),
        core::cmp::Ordering::Less => Some((yn, xe, ys - xs, false)),
        core::cmp::Ordering::Equal => None,
    }
}

/// Correctly rounded `a + b` in `fmt`.
pub fn add_bits(fmt: Format, a: u64, b: u64, rnd: Rounding) -> u64 {
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf { neg: x }, Class::Inf { neg: y }) => {
            if x == y {
                a
            } else {
                fmt.canonical_nan()
            }
        }
        (Class::Inf { .. }, _) => a,
        (_, Class::Inf { .. }) => b,
        (Class::Zero { neg: x }, Class::Zero { neg: y }) => {
            if x == y {
                a
            } else {
                exact_zero_sum(fmt, rnd)
            }
        }
        (Class::Zero { .. }, _) => b,
        (_, Class::Zero { .. }) => a,
        (Class::Finite { neg: xn, exp: xe, sig: xs }, Class::Finite { neg: yn, exp: ye, sig: ys }) => {
            match add_exact((xn, xe, u128::from(xs)), (yn, ye, u128::from(ys))) {
                Some((n, e, s, st)) => round_pack(fmt, n, e, s, st, rnd),
                None => exact_zero_sum(fmt, rnd),
            }
        }
    }
}

/// Correctly rounded `a - b` in `fmt`.
#[inline]
pub fn sub_bits(fmt: Format, a: u64, b: u64, rnd: Rounding) -> u64 {
    let nb = if fmt.is_nan(b) { b } else { b ^ fmt.sign_bit() };
    add_bits(fmt, a, nb, rnd)
}

/// Correctly rounded `a * b` in `fmt`.
pub fn mul_bits(fmt: Format, a: u64, b: u64, rnd: Rounding) -> u64 {
    let neg = (a ^ b) & fmt.sign_bit() != 0;
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf { .. }, Class::Zero { .. }) | (Class::Zero { .. }, Class::Inf { .. }) => fmt.canonical_nan(),
        (Class::Inf { .. }, _) | (_, Class::Inf { .. }) => sign_of(fmt, neg) | fmt.inf(),
        (Class::Zero { .. }, _) | (_, Class::Zero { .. }) => sign_of(fmt, neg),
        (Class::Finite { exp: xe, sig: xs, .. }, Class::Finite { exp: ye, sig: ys, .. }) => {
            round_pack(fmt, neg, xe + ye, u128::from(xs) * u128::from(ys), false, rnd)
        }
    }
}

/// Correctly rounded fused `a * b + c` in `fmt` (one rounding).
pub fn fma_bits(fmt: Format, a: u64, b: u64, c: u64, rnd: Rounding) -> u64 {
    let pneg = (a ^ b) & fmt.sign_bit() != 0;
    let (ca, cb, cc) = (unpack(fmt, a), unpack(fmt, b), unpack(fmt, c));
    if matches!(ca, Class::Nan) || matches!(cb, Class::Nan) || matches!(cc, Class::Nan) {
        return fmt.canonical_nan();
    }
    let a_inf = matches!(ca, Class::Inf { .. });
    let b_inf = matches!(cb, Class::Inf { .. });
    let a_zero = matches!(ca, Class::Zero { .. });
    let b_zero = matches!(cb, Class::Zero { .. });
    if (a_inf && b_zero) || (a_zero && b_inf) {
        return fmt.canonical_nan();
    }
    if a_inf || b_inf {
        return match cc {
            Class::Inf { neg } if neg != pneg => fmt.canonical_nan(),
            _ => sign_of(fmt, pneg) | fmt.inf(),
        };
    }
    if let Class::Inf { .. } = cc {
        return c;
    }
    if a_zero || b_zero {
        return match cc {
            Class::Zero { neg } => {
                if neg == pneg {
                    c
                } else {
                    exact_zero_sum(fmt, rnd)
                }
            }
            _ => c,
        };
    }
    let (Class::Finite { exp: xe, sig: xs, .. }, Class::Finite { exp: ye, sig: ys, .. }) = (ca, cb) else {
        unreachable!("finite operands")
    };
    let prod = (pneg, xe + ye, u128::from(xs) * u128::from(ys));
    match cc {
        Class::Finite { neg, exp, sig } => match add_exact(prod, (neg, exp, u128::from(sig))) {
            Some((n, e, s, st)) => round_pack(fmt, n, e, s, st, rnd),
            None => exact_zero_sum(fmt, rnd),
        },
        _ => round_pack(fmt, prod.0, prod.1, prod.2, false, rnd),
    }
}

/// Correctly rounded `a / b` in `fmt`.
pub fn div_bits(fmt: Format, a: u64, b: u64, rnd: Rounding) -> u64 {
    let neg = (a ^ b) & fmt.sign_bit() != 0;
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf { .. }, Class::Inf { .. }) | (Class::Zero { .. }, Class::Zero { .. }) => fmt.canonical_nan(),
        (Class::Inf { .. }, _) | (_, Class::Zero { .. }) => sign_of(fmt, neg) | fmt.inf(),
        (_, Class::Inf { .. }) | (Class::Zero { .. }, _) => sign_of(fmt, neg),
        (Class::Finite { exp: xe, sig: xs, .. }, Class::Finite { exp: ye, sig: ys, .. }) => {
            // Dividend's leading one at bit 126, divisor's at bit 63: quotient has 63 or 64 bits.
            let sa = xs.leading_zeros() + 63;
            let sb = ys.leading_zeros();
            let na = u128::from(xs) << sa;
            let nb = u128::from(ys << sb);
            let q = na / nb;
            let sticky = na % nb != 0;
            let exp = (xe - sa as i32) - (ye - sb as i32);
            round_pack(fmt, neg, exp, q, sticky, rnd)
        }
    }
}

/// Correctly rounded `sqrt(a)` in `fmt` (`sqrt(-0) = -0`).
pub fn sqrt_bits(fmt: Format, a: u64, rnd: Rounding) -> u64 {
    match unpack(fmt, a) {
        Class::Nan | Class::Inf { neg: true } | Class::Finite { neg: true, .. } => fmt.canonical_nan(),
        Class::Inf { neg: false } | Class::Zero { .. } => a,
        Class::Finite { exp, sig, .. } => {
            // Leading one at bit 126 or 125 so that the exponent is even; the root has 63 bits.
            let mut up = sig.leading_zeros() as i32 + 63;
            if (exp - up) & 1 != 0 {
                up -= 1;
            }
            let n = u128::from(sig) << up;
            let r = n.isqrt();
            let sticky = r * r != n;
            round_pack(fmt, false, (exp - up) / 2, r, sticky, rnd)
        }
    }
}

/// Round a finite value of `fmt` to an integral value of the same format.
pub fn round_integral_bits(fmt: Format, a: u64, rnd: Rounding) -> u64 {
    match unpack(fmt, a) {
        Class::Nan => fmt.canonical_nan(),
        Class::Zero { .. } | Class::Inf { .. } => a,
        Class::Finite { neg, exp, sig } => {
            if exp >= 0 {
                return a;
            }
            match to_integer(neg, exp, sig, rnd) {
                0 => sign_of(fmt, neg),
                m => round_pack(fmt, neg, 0, m, false, Rounding::Rn),
            }
        }
    }
}

/// `|round((-1)^neg * sig * 2^exp)|` to an integer with `rnd`; saturates at `2^100`.
#[inline]
pub fn to_integer(neg: bool, exp: i32, sig: u64, rnd: Rounding) -> u128 {
    let sig = u128::from(sig);
    if exp >= 0 {
        let len = 128 - sig.leading_zeros() as i32;
        return if len + exp > 100 { 1 << 100 } else { sig << exp };
    }
    let shift = (-exp) as u32;
    let (q, rest) = if shift < 128 {
        let q = sig >> shift;
        (q, classify_rest(sig & ((1u128 << shift) - 1), 1u128 << (shift - 1), false))
    } else {
        (0, Rest::BelowHalf)
    };
    q + u128::from(increments(rnd, neg, q & 1 == 1, rest))
}
