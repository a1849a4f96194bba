//! Integer arithmetic: `add sub` (wrapping, `.sat`, carry chains), `mul mad` (`.lo .hi .wide`,
//! `mad.hi.sat.s32`, `mad.cc madc`), `mul24 mad24`, `sad`, `div rem`, `abs neg`, `min max`
//! (`.relu`), `dp4a dp2a`, and the packed-lane helper for `.u16x2 .s16x2 .u8x4 .s8x4` forms.
//!
//! Operands are raw register bits in a `u64`; only the low [`Width::bits`] bits are read, and
//! results are returned truncated to the width and zero-extended. Signed variants interpret the
//! low bits as two's complement.
//!
//! # Division by zero and overflow (the ISA says "unspecified, machine-specific value")
//! * `div` by zero: all ones (`u32`: `0xFFFFFFFF`; signed: `-1`) whatever the dividend.
//! * `rem` by zero: the dividend (so `a == (a / b) * b + a % b` still holds in wrapping arithmetic).
//! * `div.s` of `MIN / -1`: `MIN` (wrapping); `rem.s` of `MIN % -1`: `0`.
//! * `rem.s` takes the sign of the dividend (C semantics; the ISA says "machine-dependent").
//!
//! These follow the fix-up sequence NVIDIA's compiler emits for integer division; they were not
//! re-measured on hardware for this crate.

/// Integer operand width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Width {
    /// 8 bits.
    W8,
    /// 16 bits.
    W16,
    /// 32 bits.
    W32,
    /// 64 bits.
    W64,
}

impl Width {
    /// Number of bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            Width::W8 => 8,
            Width::W16 => 16,
            Width::W32 => 32,
            Width::W64 => 64,
        }
    }
    /// The width with `n` bits, if any.
    #[inline]
    pub const fn from_bits(n: u32) -> Option<Width> {
        match n {
            8 => Some(Width::W8),
            16 => Some(Width::W16),
            32 => Some(Width::W32),
            64 => Some(Width::W64),
            _ => None,
        }
    }
    /// The width twice as wide (`.wide` results); `W64` stays `W64`.
    #[inline]
    pub const fn double(self) -> Width {
        match self {
            Width::W8 => Width::W16,
            Width::W16 => Width::W32,
            Width::W32 | Width::W64 => Width::W64,
        }
    }
    /// All-ones mask of the width.
    #[inline]
    pub const fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits())
    }
    /// Truncate to the width (zero-extended).
    #[inline]
    pub const fn trunc(self, x: u64) -> u64 {
        x & self.mask()
    }
    /// Sign-extend the low bits.
    #[inline]
    pub const fn sext(self, x: u64) -> i64 {
        let s = 64 - self.bits();
        ((x << s) as i64) >> s
    }
    /// Smallest signed value.
    #[inline]
    pub const fn smin(self) -> i64 {
        i64::MIN >> (64 - self.bits())
    }
    /// Largest signed value.
    #[inline]
    pub const fn smax(self) -> i64 {
        i64::MAX >> (64 - self.bits())
    }
    /// The operand's value: sign- or zero-extended to `i128`.
    #[inline]
    pub const fn value(self, x: u64, signed: bool) -> i128 {
        if signed {
            self.sext(x) as i128
        } else {
            self.trunc(x) as i128
        }
    }
    /// Clamp an exact value to the width's signed or unsigned range and return its bits.
    #[inline]
    pub const fn saturate(self, v: i128, signed: bool) -> u64 {
        let (lo, hi) = if signed { (self.smin() as i128, self.smax() as i128) } else { (0, self.mask() as i128) };
        let c = if v < lo {
            lo
        } else if v > hi {
            hi
        } else {
            v
        };
        self.trunc(c as u64)
    }
}

/// `add` — wrapping.
#[inline]
pub fn add(a: u64, b: u64, w: Width) -> u64 {
    w.trunc(a.wrapping_add(b))
}

/// `sub` — wrapping.
#[inline]
pub fn sub(a: u64, b: u64, w: Width) -> u64 {
    w.trunc(a.wrapping_sub(b))
}

/// `add.sat.s32` (and `.sat` on other widths/signedness): the exact sum clamped to the range.
#[inline]
pub fn add_sat(a: u64, b: u64, w: Width, signed: bool) -> u64 {
    w.saturate(w.value(a, signed) + w.value(b, signed), signed)
}

/// `sub.sat.s32` (and other widths/signedness): the exact difference clamped to the range.
#[inline]
pub fn sub_sat(a: u64, b: u64, w: Width, signed: bool) -> u64 {
    w.saturate(w.value(a, signed) - w.value(b, signed), signed)
}

/// `add.cc` (`cin = false`) and `addc{.cc}`: `a + b + cin`, returning the carry-out.
#[inline]
pub fn add_cc(a: u64, b: u64, cin: bool, w: Width) -> (u64, bool) {
    let s = u128::from(w.trunc(a)) + u128::from(w.trunc(b)) + u128::from(cin);
    (w.trunc(s as u64), s >> w.bits() != 0)
}

/// `a - (b + bin)` with the borrow-out: the ISA prose's reading of `sub.cc`/`subc` (`CC.CF` a borrow). The
/// engines keep the flag as hardware does, NOT borrow (`program::alu`); both agree on `sub.cc`/`subc` chains.
#[inline]
pub fn sub_cc(a: u64, b: u64, bin: bool, w: Width) -> (u64, bool) {
    let sub = i128::from(w.trunc(a)) - i128::from(w.trunc(b)) - i128::from(bin);
    (w.trunc(sub as u64), sub < 0)
}

/// The full `2w`-bit product of two `w`-bit operands, as bits.
#[inline]
pub fn mul_full(a: u64, b: u64, w: Width, signed: bool) -> u128 {
    // Wrapping is exact here: only u64 x u64 can exceed i128, and its bits are the same.
    w.value(a, signed).wrapping_mul(w.value(b, signed)) as u128
}

/// `mul.lo` — low half of the product (same for signed and unsigned).
#[inline]
pub fn mul_lo(a: u64, b: u64, w: Width) -> u64 {
    w.trunc(a.wrapping_mul(b))
}

/// `mul.hi` — high half of the `2w`-bit product.
#[inline]
pub fn mul_hi(a: u64, b: u64, w: Width, signed: bool) -> u64 {
    w.trunc((mul_full(a, b, w, signed) >> w.bits()) as u64)
}

/// `mul.wide` — the whole product, `2w` bits (`w` is 16 or 32 in PTX).
#[inline]
pub fn mul_wide(a: u64, b: u64, w: Width, signed: bool) -> u64 {
    w.double().trunc(mul_full(a, b, w, signed) as u64)
}

/// `mad.lo` — `lo(a * b) + c`, wrapping.
#[inline]
pub fn mad_lo(a: u64, b: u64, c: u64, w: Width) -> u64 {
    add(mul_lo(a, b, w), c, w)
}

/// `mad.hi` — `hi(a * b) + c`, wrapping.
#[inline]
pub fn mad_hi(a: u64, b: u64, c: u64, w: Width, signed: bool) -> u64 {
    add(mul_hi(a, b, w, signed), c, w)
}

/// `mad.wide` — `a * b + c` with `c` and the result `2w` bits wide, wrapping.
#[inline]
pub fn mad_wide(a: u64, b: u64, c: u64, w: Width, signed: bool) -> u64 {
    add(mul_wide(a, b, w, signed), c, w.double())
}

/// `mad.hi.sat.s32` — `hi(a * b) + c` clamped to the `s32` range.
#[inline]
pub fn mad_hi_sat_s32(a: u64, b: u64, c: u64) -> u64 {
    let w = Width::W32;
    let hi = mul_hi(a, b, w, true);
    add_sat(hi, c, w, true)
}

/// `mad{.lo,.hi}.cc` (`cin = false`) and `madc{.lo,.hi}{.cc}`: `part(a * b) + c + cin` with
/// carry-out of the addition (`hi` selects the high half of the product).
#[inline]
pub fn mad_cc(a: u64, b: u64, c: u64, cin: bool, w: Width, signed: bool, hi: bool) -> (u64, bool) {
    let t = if hi { mul_hi(a, b, w, signed) } else { mul_lo(a, b, w) };
    add_cc(t, c, cin, w)
}

/// The 48-bit product of `mul24`/`mad24`: the low 24 bits of each operand, sign- or
/// zero-extended, multiplied exactly.
#[inline]
fn mul24_full(a: u64, b: u64, signed: bool) -> i64 {
    let ext = |x: u64| -> i64 {
        if signed {
            ((x << 40) as i64) >> 40
        } else {
            (x & 0xFF_FFFF) as i64
        }
    };
    ext(a) * ext(b)
}

/// `mul24.lo` (bits 31..0) / `mul24.hi` (bits 47..16) of the 48-bit product.
#[inline]
pub fn mul24(a: u64, b: u64, signed: bool, hi: bool) -> u64 {
    let t = mul24_full(a, b, signed) as u64;
    Width::W32.trunc(if hi { t >> 16 } else { t })
}

/// `mad24.lo` / `mad24.hi` (`+ c`, wrapping) and `mad24.hi.sat.s32` (`sat`: the signed sum of
/// bits 47..16 and `c` clamped to the `s32` range; only meaningful with `hi && signed`).
#[inline]
pub fn mad24(a: u64, b: u64, c: u64, signed: bool, hi: bool, sat: bool) -> u64 {
    let t = mul24(a, b, signed, hi);
    if sat {
        add_sat(t, c, Width::W32, true)
    } else {
        add(t, c, Width::W32)
    }
}

/// `sad` — `c + |a - b|` (wrapping in `w` bits).
#[inline]
pub fn sad(a: u64, b: u64, c: u64, w: Width, signed: bool) -> u64 {
    let (x, y) = (w.value(a, signed), w.value(b, signed));
    let d = if x < y { y - x } else { x - y };
    add(d as u64, c, w)
}

/// `div` — truncating division; see the module docs for division by zero and `MIN / -1`.
#[inline]
pub fn div(a: u64, b: u64, w: Width, signed: bool) -> u64 {
    if signed {
        let (x, y) = (w.sext(a), w.sext(b));
        if y == 0 {
            return w.mask();
        }
        // `wrapping_div` gives i64::MIN for i64::MIN / -1; narrower MIN / -1 fits and truncates
        // back to MIN.
        w.trunc(x.wrapping_div(y) as u64)
    } else {
        let (x, y) = (w.trunc(a), w.trunc(b));
        if y == 0 {
            return w.mask();
        }
        x / y
    }
}

/// `rem` — remainder of truncating division (sign of the dividend); `a % 0 = a`, `MIN % -1 = 0`.
#[inline]
pub fn rem(a: u64, b: u64, w: Width, signed: bool) -> u64 {
    if signed {
        let (x, y) = (w.sext(a), w.sext(b));
        if y == 0 {
            return w.trunc(a);
        }
        w.trunc(x.wrapping_rem(y) as u64)
    } else {
        let (x, y) = (w.trunc(a), w.trunc(b));
        if y == 0 {
            return x;
        }
        x % y
    }
}

/// `abs.s*` — wrapping (`abs(MIN) = MIN`).
#[inline]
pub fn abs(a: u64, w: Width) -> u64 {
    w.trunc(w.sext(a).unsigned_abs())
}

/// `neg.s*` — wrapping two's complement negation.
#[inline]
pub fn neg(a: u64, w: Width) -> u64 {
    w.trunc(a.wrapping_neg())
}

/// `min` (signed or unsigned); `relu` (`min.relu.s32`, `.s16x2`, `.s8x4`) clamps a negative
/// result to 0.
#[inline]
pub fn min(a: u64, b: u64, w: Width, signed: bool, relu: bool) -> u64 {
    let m = w.value(a, signed).min(w.value(b, signed));
    w.trunc(if relu { m.max(0) } else { m } as u64)
}

/// `max` (signed or unsigned), with optional `.relu`.
#[inline]
pub fn max(a: u64, b: u64, w: Width, signed: bool, relu: bool) -> u64 {
    let m = w.value(a, signed).max(w.value(b, signed));
    w.trunc(if relu { m.max(0) } else { m } as u64)
}

/// Apply a per-lane operation to packed lanes of width `lane` (`W8` for `.x4`, `W16` for `.x2`)
/// of two 32-bit registers: lane `i` of the result is `f(lane_i(a), lane_i(b))` truncated.
/// E.g. `min.relu.s16x2` is `lanes2(a, b, W16, |x, y| min(x, y, W16, true, true))`.
#[inline]
pub fn lanes2(a: u64, b: u64, lane: Width, f: impl Fn(u64, u64) -> u64) -> u64 {
    let n = lane.bits();
    let mut d = 0;
    let mut i = 0;
    while i < 32 {
        d |= lane.trunc(f(lane.trunc(a >> i), lane.trunc(b >> i))) << i;
        i += n;
    }
    d
}

/// Single-operand form of [`lanes2`] (e.g. `neg.s8x4`).
#[inline]
pub fn lanes1(a: u64, lane: Width, f: impl Fn(u64) -> u64) -> u64 {
    lanes2(a, 0, lane, |x, _| f(x))
}

#[inline]
fn byte(x: u64, i: u32, signed: bool) -> i64 {
    Width::W8.value(x >> (8 * i), signed) as i64
}

#[inline]
fn half(x: u64, i: u32, signed: bool) -> i64 {
    Width::W16.value(x >> (16 * i), signed) as i64
}

/// `dp4a.atype.btype` — `c + Σ a.byte[i] * b.byte[i]`, 32-bit wrapping.
#[inline]
pub fn dp4a(a: u64, b: u64, c: u64, a_signed: bool, b_signed: bool) -> u64 {
    let mut d = c as i64;
    for i in 0..4 {
        d = d.wrapping_add(byte(a, i, a_signed) * byte(b, i, b_signed));
    }
    Width::W32.trunc(d as u64)
}

/// `dp2a.{lo,hi}.atype.btype` — `c + Σ a.half[i] * b.byte[sel + i]` with `sel = 0` (`.lo`) or
/// `2` (`.hi`), 32-bit wrapping.
#[inline]
pub fn dp2a(a: u64, b: u64, c: u64, hi: bool, a_signed: bool, b_signed: bool) -> u64 {
    let sel = if hi { 2 } else { 0 };
    let mut d = c as i64;
    for i in 0..2 {
        d = d.wrapping_add(half(a, i, a_signed) * byte(b, sel + i, b_signed));
    }
    Width::W32.trunc(d as u64)
}
