//! Lane arithmetic: one decoded op applied to the operand arrays of a warp. The op and type are dispatched
//! once, outside the loop over lanes; per-lane results are written for every lane (the caller keeps only
//! the active ones), except where computing an inactive lane could be costly.

use simt::LaneMask;

use crate::machine::WARP;
use crate::program::{AtomOp, BoolOp, Cmp, Kind, Op, Part, Rnd, Sub};
use crate::types::Ty;

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
    if ty.is_float() && !matches!(op.kind, Kind::Mov | Kind::Cvt | Kind::Setp | Kind::Set | Kind::Selp | Kind::Slct | Kind::Pack | Kind::Unpack) {
        return float_op(op, exec, a, b, c, out);
    }
    let bits = ty.bits().min(64);
    let mask = ty.mask();
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
                let (r, cf) = carry_op(sub, x, y, false, bits);
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
                    Part::Wide => (mul_wide(ty, a[l], b[l]), crate::types::mask_bits(bits * 2), bits * 2),
                };
                if m.sat && m.part == Part::Hi && ty == Ty::S32 {
                    out[l] = (i64::from(prod as u32 as i32) + i64::from(c[l] as u32 as i32)).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32 as u64;
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
        Kind::Mul24 | Kind::Mad24 => {
            let ext = |v: u64| if ty.is_signed() { ((v as i64) << 40 >> 40) as u64 } else { v & 0xFF_FFFF };
            for l in lanes() {
                let p = (ext(a[l]) as i64 as i128) * (ext(b[l]) as i64 as i128);
                let p = if m.part == Part::Hi { (p >> 16) as u64 } else { p as u64 };
                out[l] = if op.kind == Kind::Mad24 { p.wrapping_add(c[l]) & mask } else { p & mask };
            }
        }
        Kind::Sad => each!(|l| {
            let diff = if ty.is_signed() { sx(a[l]).abs_diff(sx(b[l])) } else { (a[l] & mask).abs_diff(b[l] & mask) };
            c[l].wrapping_add(diff) & mask
        }),
        Kind::Div => each!(|l| int_div(ty, a[l], b[l])),
        Kind::Rem => each!(|l| int_rem(ty, a[l], b[l])),
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
                    if max { x.max(y) } else { x.min(y) }
                };
                out[l] = r & mask;
            }
        }
        Kind::And => each!(|l| a[l] & b[l] & mask),
        Kind::Or => each!(|l| (a[l] | b[l]) & mask),
        Kind::Xor => each!(|l| (a[l] ^ b[l]) & mask),
        Kind::Not => each!(|l| !a[l] & mask),
        Kind::Cnot => each!(|l| u64::from(a[l] & mask == 0)),
        Kind::Shl => each!(|l| if b[l] as u32 >= bits { 0 } else { (a[l] << (b[l] as u32)) & mask }),
        Kind::Shr => each!(|l| {
            let s = (b[l] as u32).min(bits.saturating_sub(1).max(0) + 1);
            if ty.is_signed() {
                let x = sx(a[l]);
                ((if s >= bits { x >> 63 } else { x >> s }) as u64) & mask
            } else if s >= bits {
                0
            } else {
                (a[l] & mask) >> s
            }
        }),
        Kind::Lop3 => each!(|l| lop3(a[l], b[l], c[l], d[l] as u8) & mask),
        Kind::Shf => {
            let Sub::Shf { left, clamp } = m.sub else { return false };
            each!(|l| {
                let n = if clamp { (c[l] as u32).min(32) } else { c[l] as u32 & 31 };
                let wide = ((b[l] & 0xFFFF_FFFF) << 32) | (a[l] & 0xFFFF_FFFF);
                if left {
                    ((wide << n) >> 32) & 0xFFFF_FFFF
                } else {
                    (wide >> n) & 0xFFFF_FFFF
                }
            })
        }
        Kind::Prmt => {
            let Sub::Prmt(mode) = m.sub else { return false };
            each!(|l| prmt(a[l] as u32, b[l] as u32, c[l] as u32, mode) as u64)
        }
        Kind::Bfe => each!(|l| bfe(ty, a[l], b[l] as u32 & 0xff, c[l] as u32 & 0xff)),
        Kind::Bfi => each!(|l| bfi(bits, a[l], b[l], c[l] as u32 & 0xff, d[l] as u32 & 0xff)),
        Kind::Brev => each!(|l| if bits == 64 { a[l].reverse_bits() } else { u64::from((a[l] as u32).reverse_bits()) }),
        Kind::Popc => each!(|l| u64::from((a[l] & mask).count_ones())),
        Kind::Clz => each!(|l| u64::from(if bits == 64 { a[l].leading_zeros() } else { (a[l] as u32).leading_zeros() })),
        Kind::Bfind => each!(|l| bfind(ty, a[l], m.sub == Sub::Shiftamt)),
        Kind::Fns => each!(|l| fns(a[l] as u32, b[l] as u32, c[l] as u32 as i32)),
        Kind::Bmsk => {
            let clamp = m.sub == Sub::Clamp(true);
            each!(|l| {
                let (pos, len) = (a[l] as u32, b[l] as u32);
                let (pos, len) = if clamp { (pos.min(32), len.min(32)) } else { (pos & 31, len & 31) };
                let end = (pos + len).min(32);
                if pos >= 32 { 0 } else { (crate::types::mask_bits(end) & !crate::types::mask_bits(pos)) & 0xFFFF_FFFF }
            })
        }
        Kind::Szext => {
            let clamp = m.sub == Sub::Clamp(true);
            each!(|l| {
                let n = b[l] as u32;
                let n = if clamp { n.min(32) } else { n & 31 };
                let v = a[l] as u32;
                let r = if n == 0 {
                    0
                } else if n >= 32 {
                    v
                } else if ty.is_signed() {
                    (((v << (32 - n)) as i32) >> (32 - n)) as u32
                } else {
                    v & ((1u32 << n) - 1)
                };
                u64::from(r)
            })
        }
        Kind::Dp4a => each!(|l| dp(4, op.ty, op.ty2, a[l] as u32, b[l] as u32, c[l] as u32, false)),
        Kind::Dp2a => each!(|l| dp(2, op.ty, op.ty2, a[l] as u32, b[l] as u32, c[l] as u32, m.part == Part::Hi)),
        Kind::Setp | Kind::Set => {
            let src = if op.kind == Kind::Set { op.ty2 } else { op.ty };
            for l in lanes() {
                let r = compare(src, m.cmp, a[l], b[l]);
                let (p, q) = combine(m.boolop, r, c[l] & 1 != 0);
                if op.kind == Kind::Setp {
                    out[l] = u64::from(p);
                    out2[l] = u64::from(q);
                } else {
                    out[l] = match op.ty {
                        Ty::F32 => u64::from(if p { 1.0f32 } else { 0.0 }.to_bits()),
                        _ => if p { op.ty.mask() } else { 0 },
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
            if ge { a[l] } else { b[l] }
        }),
        Kind::Mov => each!(|l| a[l] & mask),
        Kind::Pack => return true,
        Kind::Unpack => return true,
        Kind::Cvt => return crate::convert::cvt(op, exec, a, b, out),
        _ => return false,
    }
    true
}

fn set_bit(bits: &mut u32, lane: usize, on: bool) {
    if on {
        *bits |= 1 << lane;
    } else {
        *bits &= !(1 << lane);
    }
}

/// `a + b + cin` (or `a - (b + cin)`) in `bits` bits, with the carry (borrow) out.
fn carry_op(sub: bool, a: u64, b: u64, cin: bool, bits: u32) -> (u64, bool) {
    let mask = crate::types::mask_bits(bits);
    let (a, b, c) = (a as u128, b as u128, u128::from(cin));
    if sub {
        let r = a.wrapping_sub(b).wrapping_sub(c);
        ((r as u64) & mask, a < b + c)
    } else {
        let r = a + b + c;
        ((r as u64) & mask, r >> bits != 0)
    }
}

fn mul_hi(ty: Ty, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let p = if ty.is_signed() {
        (ty.extend(a) as i64 as i128 * ty.extend(b) as i64 as i128) >> bits
    } else {
        ((a & ty.mask()) as i128 * (b & ty.mask()) as i128) >> bits
    };
    (p as u64) & ty.mask()
}

fn mul_wide(ty: Ty, a: u64, b: u64) -> u64 {
    let p = if ty.is_signed() {
        (ty.extend(a) as i64 as i128) * (ty.extend(b) as i64 as i128)
    } else {
        ((a & ty.mask()) as i128) * ((b & ty.mask()) as i128)
    };
    (p as u64) & crate::types::mask_bits(ty.bits() * 2)
}

/// Integer division. Division by zero gives what NVIDIA hardware gives: all ones for unsigned, and for
/// signed -1 when the dividend is non-negative, 1 otherwise; MIN / -1 wraps to MIN.
fn int_div(ty: Ty, a: u64, b: u64) -> u64 {
    let mask = ty.mask();
    if ty.is_signed() {
        let (x, y) = (ty.extend(a) as i64, ty.extend(b) as i64);
        let r = if y == 0 { if x >= 0 { -1 } else { 1 } } else { x.wrapping_div(y) };
        (r as u64) & mask
    } else {
        let (x, y) = (a & mask, b & mask);
        if y == 0 { mask } else { x / y }
    }
}

/// Integer remainder; `x % 0` gives `x`.
fn int_rem(ty: Ty, a: u64, b: u64) -> u64 {
    let mask = ty.mask();
    if ty.is_signed() {
        let (x, y) = (ty.extend(a) as i64, ty.extend(b) as i64);
        let r = if y == 0 { x } else { x.wrapping_rem(y) };
        (r as u64) & mask
    } else {
        let (x, y) = (a & mask, b & mask);
        if y == 0 { x } else { x % y }
    }
}

fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut r = 0u64;
    for k in 0..8u8 {
        if (lut >> k) & 1 != 0 {
            let x = if k & 4 != 0 { a } else { !a };
            let y = if k & 2 != 0 { b } else { !b };
            let z = if k & 1 != 0 { c } else { !c };
            r |= x & y & z;
        }
    }
    r
}

fn prmt(a: u32, b: u32, c: u32, mode: u8) -> u32 {
    let bytes = (u64::from(b) << 32 | u64::from(a)).to_le_bytes();
    let pick = |sel: u32| -> u8 {
        let byte = bytes[(sel & 7) as usize];
        if sel & 8 != 0 {
            if byte & 0x80 != 0 { 0xFF } else { 0 }
        } else {
            byte
        }
    };
    let sel: [u32; 4] = match mode {
        0 => [c & 0xF, (c >> 4) & 0xF, (c >> 8) & 0xF, (c >> 12) & 0xF],
        1 => {
            let s = c & 3;
            [s, (s + 1) & 7, (s + 2) & 7, (s + 3) & 7]
        }
        2 => {
            let s = c & 3;
            [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7]
        }
        3 => [c & 3; 4],
        // Edge clamp left: byte i is max(i, s); edge clamp right: min(i, s).
        4 => {
            let s = c & 3;
            [s, s.max(1), s.max(2), 3]
        }
        5 => {
            let s = c & 3;
            [0, s.min(1), s.min(2), s.min(3)]
        }
        _ => {
            let s = c & 1;
            [s * 2, s * 2 + 1, s * 2, s * 2 + 1]
        }
    };
    if mode == 0 {
        u32::from_le_bytes([pick(sel[0]), pick(sel[1]), pick(sel[2]), pick(sel[3])])
    } else {
        u32::from_le_bytes(sel.map(|s| bytes[(s & 7) as usize]))
    }
}

fn bfe(ty: Ty, a: u64, pos: u32, len: u32) -> u64 {
    let msb = ty.bits() - 1;
    let sbit = if !ty.is_signed() || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

fn bfi(bits: u32, a: u64, b: u64, pos: u32, len: u32) -> u64 {
    let mut f = b;
    let msb = bits - 1;
    for i in 0..len {
        if pos + i > msb {
            break;
        }
        let bit = (a >> i) & 1;
        f = (f & !(1 << (pos + i))) | (bit << (pos + i));
    }
    f & crate::types::mask_bits(bits)
}

fn bfind(ty: Ty, a: u64, shiftamt: bool) -> u64 {
    let bits = ty.bits();
    let mut v = a & ty.mask();
    if ty.is_signed() && (v >> (bits - 1)) & 1 != 0 {
        v = !v & ty.mask();
    }
    if v == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - v.leading_zeros();
    u64::from(if shiftamt { bits - 1 - pos } else { pos })
}

/// `fns.b32 d, mask, base, offset`: the position of the `offset`-th set bit of `mask` counting from
/// `base` (upwards for positive offsets, downwards for negative), or all ones.
fn fns(mask: u32, base: u32, offset: i32) -> u64 {
    if base > 31 {
        return 0xFFFF_FFFF;
    }
    if offset == 0 {
        return if (mask >> base) & 1 != 0 { u64::from(base) } else { 0xFFFF_FFFF };
    }
    let mut remaining = offset.unsigned_abs();
    let mut pos = base as i32;
    loop {
        if (0..32).contains(&pos) && (mask >> pos) & 1 != 0 {
            remaining -= 1;
            if remaining == 0 {
                return pos as u64;
            }
        }
        pos += if offset > 0 { 1 } else { -1 };
        if !(0..32).contains(&pos) {
            return 0xFFFF_FFFF;
        }
    }
}

fn dp(n: u32, ta: Ty, tb: Ty, a: u32, b: u32, c: u32, hi: bool) -> u64 {
    let mut acc = i64::from(c as i32);
    let width = 32 / n.max(1) * if n == 2 { 1 } else { 1 };
    let _ = width;
    for k in 0..n {
        let av = if n == 4 {
            let x = (a >> (8 * k)) & 0xFF;
            if ta.is_signed() { i64::from(x as u8 as i8) } else { i64::from(x) }
        } else {
            let x = (a >> (16 * k)) & 0xFFFF;
            if ta.is_signed() { i64::from(x as u16 as i16) } else { i64::from(x) }
        };
        let shift = if n == 2 { if hi { 16 + 8 * k } else { 8 * k } } else { 8 * k };
        let x = (b >> shift) & 0xFF;
        let bv = if tb.is_signed() { i64::from(x as u8 as i8) } else { i64::from(x) };
        acc += av * bv;
    }
    if !ta.is_signed() && !tb.is_signed() {
        u64::from((acc as u32).wrapping_add(0))
    } else {
        u64::from(acc as u32)
    }
}

/// Evaluates a comparison on two values of type `ty`.
pub fn compare(ty: Ty, cmp: Cmp, a: u64, b: u64) -> bool {
    match ty {
        Ty::F32 | Ty::F64 | Ty::F16 | Ty::Bf16 => {
            let (x, y) = match ty {
                Ty::F32 => (f64::from(f32::from_bits(a as u32)), f64::from(f32::from_bits(b as u32))),
                Ty::F64 => (f64::from_bits(a), f64::from_bits(b)),
                Ty::F16 => (crate::convert::f16_to_f64(a as u16), crate::convert::f16_to_f64(b as u16)),
                _ => (f64::from(f32::from_bits((a as u32) << 16)), f64::from(f32::from_bits((b as u32) << 16))),
            };
            let unordered = x.is_nan() || y.is_nan();
            match cmp {
                Cmp::Eq => x == y,
                Cmp::Ne => !unordered && x != y,
                Cmp::Lt => x < y,
                Cmp::Le => x <= y,
                Cmp::Gt => x > y,
                Cmp::Ge => x >= y,
                Cmp::Equ => unordered || x == y,
                Cmp::Neu => unordered || x != y,
                Cmp::Ltu => unordered || x < y,
                Cmp::Leu => unordered || x <= y,
                Cmp::Gtu => unordered || x > y,
                Cmp::Geu => unordered || x >= y,
                Cmp::Num => !unordered,
                Cmp::Nan => unordered,
                Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
            }
        }
        _ => {
            let (sa, sb) = (ty.extend(a) as i64, ty.extend(b) as i64);
            let (ua, ub) = (a & ty.mask(), b & ty.mask());
            let signed = ty.is_signed();
            match cmp {
                Cmp::Eq => ua == ub,
                Cmp::Ne => ua != ub,
                Cmp::Lt => if signed { sa < sb } else { ua < ub },
                Cmp::Le => if signed { sa <= sb } else { ua <= ub },
                Cmp::Gt => if signed { sa > sb } else { ua > ub },
                Cmp::Ge => if signed { sa >= sb } else { ua >= ub },
                Cmp::Lo => ua < ub,
                Cmp::Ls => ua <= ub,
                Cmp::Hi => ua > ub,
                Cmp::Hs => ua >= ub,
                _ => false,
            }
        }
    }
}

fn combine(op: BoolOp, r: bool, c: bool) -> (bool, bool) {
    match op {
        BoolOp::None => (r, !r),
        BoolOp::And => (r && c, !r && c),
        BoolOp::Or => (r || c, !r || c),
        BoolOp::Xor => (r ^ c, !r ^ c),
    }
}

/// One atomic read-modify-write: the new value stored, from the old value and the operands.
pub fn atomic(op: AtomOp, ty: Ty, old: u64, a: u64, b: u64) -> u64 {
    let mask = ty.mask();
    match op {
        AtomOp::Add => match ty {
            Ty::F32 => u64::from((f32::from_bits(old as u32) + f32::from_bits(a as u32)).to_bits()),
            Ty::F64 => (f64::from_bits(old) + f64::from_bits(a)).to_bits(),
            Ty::F16 => crate::convert::f16_add(old as u16, a as u16) as u64,
            _ => old.wrapping_add(a) & mask,
        },
        AtomOp::Min | AtomOp::Max | AtomOp::And | AtomOp::Or | AtomOp::Xor => reduce(op, ty, old, a) & mask,
        AtomOp::Inc => {
            let (o, a) = (old & mask, a & mask);
            if o >= a { 0 } else { o + 1 }
        }
        AtomOp::Dec => {
            let (o, a) = (old & mask, a & mask);
            if o == 0 || o > a { a } else { o - 1 }
        }
        AtomOp::Cas => {
            if old & mask == a & mask { b & mask } else { old }
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
                    if max { a.max(b) } else { a.min(b) }
                }
            }
        }
        AtomOp::And => x & y,
        AtomOp::Or => x | y,
        AtomOp::Xor => x ^ y,
        _ => y,
    }
}

/// Floating-point arithmetic (f32, f64; f16/bf16 through `convert`).
fn float_op(op: &Op, exec: LaneMask, a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) -> bool {
    crate::float::exec(op, exec, a, b, c, out)
}

// Keep `Rnd` in scope for readers: rounding is handled in `float` and `convert`.
#[allow(dead_code)]
const _RND: Rnd = Rnd::None;
