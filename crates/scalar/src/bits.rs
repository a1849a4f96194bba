//! Logic, shift and bit-manipulation instructions: `not and or xor cnot lop3 shl shr shf popc clz
//! brev bfind bfe bfi fns prmt szext bmsk`.
//!
//! Operands are raw bits in a `u64`; only the low [`Width::bits`] bits are read and results are
//! truncated to the width and zero-extended. Counts and positions (`popc`, `clz`, `bfind`, `fns`)
//! are `u32` values returned as `u64`.

use crate::int::Width;

/// `not` — bitwise complement.
#[inline]
pub fn not(a: u64, w: Width) -> u64 {
    w.trunc(!a)
}

/// `and`.
#[inline]
pub fn and(a: u64, b: u64, w: Width) -> u64 {
    w.trunc(a & b)
}

/// `or`.
#[inline]
pub fn or(a: u64, b: u64, w: Width) -> u64 {
    w.trunc(a | b)
}

/// `xor`.
#[inline]
pub fn xor(a: u64, b: u64, w: Width) -> u64 {
    w.trunc(a ^ b)
}

/// `cnot` — `1` if `a == 0`, else `0`.
#[inline]
pub fn cnot(a: u64, w: Width) -> u64 {
    u64::from(w.trunc(a) == 0)
}

/// `lop3.b32 d, a, b, c, immLut` — bit `i` of `d` is bit `(a_i << 2) | (b_i << 1) | c_i` of `lut`
/// (so that `lut = F(0xF0, 0xCC, 0xAA)`).
#[inline]
pub fn lop3(a: u64, b: u64, c: u64, lut: u8, w: Width) -> u64 {
    let mut d = 0u64;
    for i in 0..8u32 {
        if lut >> i & 1 == 1 {
            let ta = if i & 4 != 0 { a } else { !a };
            let tb = if i & 2 != 0 { b } else { !b };
            let tc = if i & 1 != 0 { c } else { !c };
            d |= ta & tb & tc;
        }
    }
    w.trunc(d)
}

/// `shl` — amounts `>= width` give 0 (the ISA clamps the amount to the width).
#[inline]
pub fn shl(a: u64, n: u32, w: Width) -> u64 {
    if n >= w.bits() {
        0
    } else {
        w.trunc(a << n)
    }
}

/// `shr.u` / `shr.b` (zero fill) and `shr.s` (sign fill); amounts `>= width` give 0 or the sign
/// replicated.
#[inline]
pub fn shr(a: u64, n: u32, w: Width, signed: bool) -> u64 {
    let n = n.min(w.bits() - 1 + u32::from(!signed));
    if signed {
        w.trunc((w.sext(a) >> n) as u64)
    } else if n >= w.bits() {
        0
    } else {
        w.trunc(a) >> n
    }
}

/// `shf` shift-amount mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShfMode {
    /// `.clamp`: `n = min(c, 32)`.
    Clamp,
    /// `.wrap`: `n = c & 31`.
    Wrap,
}

/// `shf.l.mode.b32` (`left`) / `shf.r.mode.b32` — funnel shift of the 64-bit value `b:a`
/// (`b` high); `.l` returns the high 32 bits of `(b:a) << n`, `.r` the low 32 bits of
/// `(b:a) >> n`.
#[inline]
pub fn shf(a: u64, b: u64, c: u64, left: bool, mode: ShfMode) -> u64 {
    let n = match mode {
        ShfMode::Clamp => (c & 0xFFFF_FFFF).min(32) as u32,
        ShfMode::Wrap => (c & 31) as u32,
    };
    let v = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
    if left {
        (v << n) >> 32
    } else {
        (v >> n) & 0xFFFF_FFFF
    }
}

/// `popc.b32` / `popc.b64`.
#[inline]
pub fn popc(a: u64, w: Width) -> u64 {
    u64::from(w.trunc(a).count_ones())
}

/// `clz.b32` / `clz.b64` (`clz(0)` is the width).
#[inline]
pub fn clz(a: u64, w: Width) -> u64 {
    u64::from(w.trunc(a).leading_zeros() - (64 - w.bits()))
}

/// `brev.b32` / `brev.b64`.
#[inline]
pub fn brev(a: u64, w: Width) -> u64 {
    a.reverse_bits() >> (64 - w.bits())
}

/// `bfind{.shiftamt}.{u,s}{32,64}` — position of the most significant non-sign bit
/// (`0xFFFFFFFF` if none); with `shiftamt`, `msb - position` instead.
#[inline]
pub fn bfind(a: u64, w: Width, signed: bool, shiftamt: bool) -> u64 {
    let mut x = w.trunc(a);
    let msb = w.bits() - 1;
    if signed && (x >> msb) & 1 == 1 {
        x = w.trunc(!x);
    }
    if x == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - x.leading_zeros();
    u64::from(if shiftamt { msb - pos } else { pos })
}

/// `bfe.{u,s}{32,64} d, a, pos, len` — extract `len` bits at `pos` (both taken `& 0xff`),
/// zero- or sign-extended. Bits beyond the msb read as the sign bit for signed types; `len == 0`
/// gives 0.
#[inline]
pub fn bfe(a: u64, pos: u64, len: u64, w: Width, signed: bool) -> u64 {
    let msb = u64::from(w.bits() - 1);
    let (pos, len) = (pos & 0xff, len & 0xff);
    let a = w.trunc(a);
    let sbit = if !signed || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
    // Field bits that exist: i < len and pos + i <= msb.
    let avail = if pos > msb { 0 } else { len.min(msb + 1 - pos) };
    let field = if avail == 0 { 0 } else { (a >> pos) & (u64::MAX >> (64 - avail)) };
    let fill = if sbit == 1 { w.trunc(u64::MAX << avail.min(63)) } else { 0 };
    let fill = if avail >= 64 { 0 } else { fill };
    w.trunc(field | fill)
}

/// `bfi.b32` / `bfi.b64 f, a, b, pos, len` — insert the low `len` bits of `a` into `b` at `pos`
/// (both taken `& 0xff`); bits beyond the msb are dropped.
#[inline]
pub fn bfi(a: u64, b: u64, pos: u64, len: u64, w: Width) -> u64 {
    let bits = u64::from(w.bits());
    let (pos, len) = (pos & 0xff, len & 0xff);
    if len == 0 || pos >= bits {
        return w.trunc(b);
    }
    let n = len.min(bits - pos);
    let mask = (u64::MAX >> (64 - n)) << pos;
    w.trunc((b & !mask) | ((a << pos) & mask))
}

/// `fns.b32 d, mask, base, offset` — position of the `offset`-th set bit of `mask` counting from
/// `base` (upwards for `offset > 0`, downwards for `offset < 0`, `base` itself for `0`), or
/// `0xFFFFFFFF`. The ISA leaves `base > 31` undefined; we return `0xFFFFFFFF` for it.
#[inline]
pub fn fns(mask: u64, base: u64, offset: i32) -> u64 {
    const NONE: u64 = 0xFFFF_FFFF;
    let mask = mask & 0xFFFF_FFFF;
    let base = base & 0xFFFF_FFFF;
    if base > 31 {
        return NONE;
    }
    if offset == 0 {
        return if mask >> base & 1 == 1 { base } else { NONE };
    }
    let mut count = offset.unsigned_abs() - 1;
    let mut m = if offset > 0 { mask >> base << base } else { mask & (u64::MAX >> (63 - base)) };
    while m != 0 {
        let pos = if offset > 0 { m.trailing_zeros() } else { 63 - m.leading_zeros() };
        if count == 0 {
            return u64::from(pos);
        }
        count -= 1;
        m &= !(1u64 << pos);
    }
    NONE
}

/// `prmt` byte-selection mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    /// Generic form: four 4-bit selectors in `c[15:0]`; selector bit 3 replicates the byte's sign.
    #[default]
    Generic,
    /// `.f4e` forward 4 extract.
    F4e,
    /// `.b4e` backward 4 extract.
    B4e,
    /// `.rc8` replicate 8.
    Rc8,
    /// `.ecl` edge clamp left.
    Ecl,
    /// `.ecr` edge clamp right.
    Ecr,
    /// `.rc16` replicate 16.
    Rc16,
}

/// `prmt.b32{.mode} d, a, b, c` — pick bytes of `b:a` (`a` = bytes 0-3, `b` = bytes 4-7).
#[inline]
pub fn prmt(a: u64, b: u64, c: u64, mode: PrmtMode) -> u64 {
    let src = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
    let k = (c & 3) as u32;
    let mut d = 0u64;
    for i in 0..4u32 {
        let sel = match mode {
            PrmtMode::Generic => ((c >> (4 * i)) & 0xf) as u32,
            PrmtMode::F4e => k + i,
            PrmtMode::B4e => (k + 8 - i) & 7,
            PrmtMode::Rc8 => k,
            PrmtMode::Ecl => k.max(i),
            PrmtMode::Ecr => k.min(i),
            PrmtMode::Rc16 => (k & 1) * 2 + (i & 1),
        };
        let byte = (src >> (8 * (sel & 7))) & 0xff;
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        d |= byte << (8 * i);
    }
    d
}

/// `szext.{clamp,wrap}.{u32,s32} d, a, b` — sign- or zero-extend the low `N = b` bits of `a`.
/// `N == 0` gives 0; `N >= 32` gives `a` with `.clamp` and uses `N & 31` with `.wrap`.
#[inline]
pub fn szext(a: u64, b: u64, mode: ShfMode, signed: bool) -> u64 {
    let a = a & 0xFFFF_FFFF;
    let b = b & 0xFFFF_FFFF;
    let n = (b & 31) as u32;
    let too_large = b >= 32 && mode == ShfMode::Clamp;
    if too_large {
        return a;
    }
    let mask = (u64::MAX << n) & 0xFFFF_FFFF;
    let sign = n != 0 && signed && (a >> (n.wrapping_sub(1) & 31)) & 1 == 1;
    (a & !mask & 0xFFFF_FFFF) | if sign { mask } else { 0 }
}

/// `bmsk.{clamp,wrap}.b32 d, a, b` — a mask of `b` ones starting at bit `a`.
#[inline]
pub fn bmsk(a: u64, b: u64, mode: ShfMode) -> u64 {
    let (a, b) = (a & 0xFFFF_FFFF, b & 0xFFFF_FFFF);
    let a1 = (a & 31) as u32;
    let b1 = (b & 31) as u32;
    let mut mask0 = (0xFFFF_FFFFu64 << a1) & 0xFFFF_FFFF;
    let sum = a1 + b1;
    let mut over = sum >= 32;
    if mode == ShfMode::Clamp {
        if a >= 32 {
            over = true;
            mask0 = 0;
        }
        if b >= 32 {
            over = true;
        }
    }
    let mask1 = if over {
        0
    } else if b1 == 0 {
        0xFFFF_FFFF
    } else {
        (0xFFFF_FFFFu64 << sum) & 0xFFFF_FFFF
    };
    mask0 & !mask1 & 0xFFFF_FFFF
}
