//! Randomized comparison of the integer/bit functions with literal, bit-by-bit transcriptions of
//! the PTX ISA semantics pseudo-code (slow loops, no shortcuts), on inputs biased to boundaries.

use scalar::bits::{self, ShfMode};
use scalar::int::{self, Width};

const WIDTHS: [Width; 4] = [Width::W8, Width::W16, Width::W32, Width::W64];

fn bit(x: u64, i: u64) -> u64 {
    if i < 64 {
        (x >> i) & 1
    } else {
        0
    }
}

fn operand(r: &mut fastrand::Rng) -> u64 {
    match r.u32(0..6) {
        0 => [0, 1, u64::MAX, 1 << 63, (1 << 63) - 1, 0x8000_0000, 0x7FFF_FFFF, 0xFFFF_FFFF][r.usize(0..8)],
        1 => r.u64(..) >> r.u32(0..64),
        2 => !(r.u64(..) >> r.u32(0..64)),
        _ => r.u64(..),
    }
}

fn small(r: &mut fastrand::Rng) -> u64 {
    match r.u32(0..4) {
        0 => r.u64(0..70),
        1 => r.u64(0..300),
        2 => [0, 1, 31, 32, 33, 63, 64, 255, 256, 0xFFFF_FFFF][r.usize(0..10)],
        _ => r.u64(..) & 0xFFFF_FFFF,
    }
}

#[test]
fn bit_field_instructions_match_pseudocode() {
    let mut r = fastrand::Rng::with_seed(99);
    for _ in 0..20000 {
        let (a, b) = (operand(&mut r), operand(&mut r));
        let (p, l) = (small(&mut r), small(&mut r));
        for w in [Width::W32, Width::W64] {
            let msb = u64::from(w.bits() - 1);
            let aw = w.trunc(a);
            // bfe
            let (pos, len) = (p & 0xff, l & 0xff);
            for signed in [false, true] {
                let sbit = if !signed || len == 0 { 0 } else { bit(aw, (pos + len - 1).min(msb)) };
                let mut d = 0;
                for i in 0..=msb {
                    let v = if i < len && pos + i <= msb { bit(aw, pos + i) } else { sbit };
                    d |= v << i;
                }
                assert_eq!(bits::bfe(a, p, l, w, signed), d, "bfe {a:#x} {p} {l} {w:?} {signed}");
            }
            // bfi
            let mut f = w.trunc(b);
            let mut i = 0;
            while i < len && pos + i <= msb {
                f = (f & !(1 << (pos + i))) | (bit(a, i) << (pos + i));
                i += 1;
            }
            assert_eq!(bits::bfi(a, b, p, l, w), f, "bfi");
            // bfind
            for signed in [false, true] {
                let mut x = aw;
                if signed && bit(x, msb) == 1 {
                    x = w.trunc(!x);
                }
                let mut d = 0xFFFF_FFFFu64;
                for i in (0..=msb).rev() {
                    if bit(x, i) == 1 {
                        d = i;
                        break;
                    }
                }
                assert_eq!(bits::bfind(a, w, signed, false), d);
                let sa = if d != 0xFFFF_FFFF { msb - d } else { d };
                assert_eq!(bits::bfind(a, w, signed, true), sa);
            }
            // brev, popc, clz
            let mut rev = 0;
            let mut pop = 0;
            for i in 0..=msb {
                rev |= bit(aw, msb - i) << i;
                pop += bit(aw, i);
            }
            assert_eq!(bits::brev(a, w), rev);
            assert_eq!(bits::popc(a, w), pop);
            let mut n = 0;
            while n <= msb && bit(aw, msb - n) == 0 {
                n += 1;
            }
            assert_eq!(bits::clz(a, w), n);
        }
        // shf: u32 n = clamp ? min(c, 32) : c & 0x1f, on the 64-bit [b, a].
        let c = small(&mut r);
        for (mode, n) in [(ShfMode::Clamp, (c & 0xFFFF_FFFF).min(32)), (ShfMode::Wrap, c & 31)] {
            let v = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
            let l = ((u128::from(v) << n) >> 32) as u64 & 0xFFFF_FFFF;
            let rr = (v >> n) & 0xFFFF_FFFF;
            assert_eq!(bits::shf(a, b, c, true, mode), l);
            assert_eq!(bits::shf(a, b, c, false, mode), rr);
        }
        // szext per the ISA pseudo-code.
        for (mode, signed) in
            [(ShfMode::Clamp, true), (ShfMode::Wrap, true), (ShfMode::Clamp, false), (ShfMode::Wrap, false)]
        {
            let (a32, b32) = (a & 0xFFFF_FFFF, c & 0xFFFF_FFFF);
            let b1 = b32 & 0x1f;
            let too_large = b32 >= 32 && mode == ShfMode::Clamp;
            let mask = if too_large { 0 } else { (0xFFFF_FFFFu64 << b1) & 0xFFFF_FFFF };
            let sign_pos = (b1.wrapping_sub(1)) & 0x1f;
            let sb = !(b1 == 0 || too_large || !signed) && bit(a32, sign_pos) == 1;
            let d = (a32 & !mask & 0xFFFF_FFFF) | if sb { mask } else { 0 };
            assert_eq!(bits::szext(a, c, mode, signed), d, "szext {a32:#x} {b32}");
        }
        // lop3 by truth table, bit by bit.
        let (x, y, z) = (a & 0xFFFF_FFFF, b & 0xFFFF_FFFF, c & 0xFFFF_FFFF);
        let lut = r.u8(..);
        let mut d = 0;
        for i in 0..32 {
            let idx = (bit(x, i) << 2) | (bit(y, i) << 1) | bit(z, i);
            d |= u64::from((lut >> idx) & 1) << i;
        }
        assert_eq!(bits::lop3(x, y, z, lut, Width::W32), d);
        // fns, literally.
        let base = c & 31;
        let offset = (r.i32(-40..40)).clamp(i32::MIN, i32::MAX);
        let mut dd = 0xFFFF_FFFFu64;
        if offset == 0 {
            if bit(x, base) == 1 {
                dd = base;
            }
        } else {
            let mut pos = base as i64;
            let mut count = offset.unsigned_abs() - 1;
            let inc = if offset > 0 { 1 } else { -1 };
            while (0..32).contains(&pos) {
                if bit(x, pos as u64) == 1 {
                    if count == 0 {
                        dd = pos as u64;
                        break;
                    }
                    count -= 1;
                }
                pos += inc;
            }
        }
        assert_eq!(bits::fns(x, base, offset), dd, "fns {x:#x} {base} {offset}");
    }
}

#[test]
fn arithmetic_matches_exact_integers() {
    let mut r = fastrand::Rng::with_seed(98);
    for _ in 0..20000 {
        let (a, b, c) = (operand(&mut r), operand(&mut r), operand(&mut r));
        for w in WIDTHS {
            let n = w.bits();
            let m = w.mask();
            for signed in [false, true] {
                let (x, y) = (w.value(a, signed), w.value(b, signed));
                let cv = w.value(c, signed);
                let p = x.wrapping_mul(y); // exact except u64 * u64 (only its bits are used)
                let pbits = (x as u128).wrapping_mul(y as u128);
                assert_eq!(int::mul_lo(a, b, w), (pbits as u64) & m);
                assert_eq!(int::mul_hi(a, b, w, signed), ((pbits >> n) as u64) & m, "mul.hi {w:?}");
                if n <= 32 {
                    assert_eq!(int::mul_wide(a, b, w, signed), (p as u64) & w.double().mask());
                }
                // div / rem: truncation toward zero, remainder has the dividend's sign.
                if y != 0 {
                    let q = int::div(a, b, w, signed);
                    let rm = int::rem(a, b, w, signed);
                    let (qv, rv) = (w.value(q, signed), w.value(rm, signed));
                    let min_over = signed && x == i128::from(w.smin()) && y == -1;
                    if min_over {
                        assert_eq!((qv, rv), (x, 0));
                    } else {
                        assert_eq!(qv, x / y);
                        assert_eq!(rv, x % y);
                    }
                }
                // saturating add/sub against clamped exact values.
                let (lo, hi) = if signed { (i128::from(w.smin()), i128::from(w.smax())) } else { (0, i128::from(m)) };
                assert_eq!(w.value(int::add_sat(a, b, w, signed), signed), (x + y).clamp(lo, hi));
                assert_eq!(w.value(int::sub_sat(a, b, w, signed), signed), (x - y).clamp(lo, hi));
                assert_eq!(int::add(a, b, w), ((x + y) as u64) & m);
                assert_eq!(int::sad(a, b, c, w, signed), (((x - y).abs() + cv) as u64) & m);
                assert_eq!(w.value(int::min(a, b, w, signed, false), signed), x.min(y));
                assert_eq!(w.value(int::max(a, b, w, signed, true), signed), x.max(y).max(0));
            }
            // carries
            let (s, co) = int::add_cc(a, b, c & 1 == 1, w);
            let exact = u128::from(a & m) + u128::from(b & m) + u128::from(c & 1);
            assert_eq!((s, co), ((exact as u64) & m, exact > u128::from(m)));
            let (d, bo) = int::sub_cc(a, b, c & 1 == 1, w);
            let exact = i128::from(a & m) - i128::from(b & m) - i128::from(c & 1);
            assert_eq!((d, bo), ((exact as u64) & m, exact < 0));
            // shifts
            let sh = small(&mut r) as u32;
            let want_shl = if u64::from(sh) >= u64::from(n) { 0 } else { ((a & m) << sh) & m };
            assert_eq!(bits::shl(a, sh, w), want_shl);
            let want_shr_s = (w.sext(a) >> sh.min(n - 1)) as u64 & m;
            assert_eq!(bits::shr(a, sh, w, true), want_shr_s);
        }
    }
}
