//! Table-driven edge cases for integer arithmetic (PTX ISA §9.7.1, §9.7.2). Each expected value
//! is derived by hand from the ISA's semantics pseudo-code cited in the comment.

use scalar::int::{self, Width::*};

#[test]
fn add_sub_wrap_and_saturate() {
    // add / sub: "d = a + b" wrapping at the type width.
    assert_eq!(int::add(0xFFFF_FFFF, 1, W32), 0);
    assert_eq!(int::add(0xFF, 1, W8), 0);
    assert_eq!(int::add(0x7FFF, 1, W16), 0x8000);
    assert_eq!(int::sub(0, 1, W64), u64::MAX);
    assert_eq!(int::sub(0, 1, W16), 0xFFFF);
    // .sat "limits result to MININT..MAXINT (no overflow) for the size and signedness".
    assert_eq!(int::add_sat(0x7FFF_FFFF, 1, W32, true), 0x7FFF_FFFF);
    assert_eq!(int::add_sat(0x8000_0000, 0xFFFF_FFFF, W32, true), 0x8000_0000);
    assert_eq!(int::add_sat(5, 0xFFFF_FFFD, W32, true), 2);
    assert_eq!(int::sub_sat(0x8000_0000, 1, W32, true), 0x8000_0000);
    assert_eq!(int::sub_sat(0x7FFF_FFFF, 0xFFFF_FFFF, W32, true), 0x7FFF_FFFF);
    assert_eq!(int::add_sat(0xFFFF_FFFF, 1, W32, false), 0xFFFF_FFFF); // add.sat.u32
    assert_eq!(int::sub_sat(1, 2, W8, false), 0); // .u8x4 lane
    assert_eq!(int::add_sat(0x7F, 1, W8, true), 0x7F); // .s8x4 lane
}

#[test]
fn carry_chains() {
    // add.cc: carry-out of a + b; addc: a + b + CC.CF.
    assert_eq!(int::add_cc(0xFFFF_FFFF, 1, false, W32), (0, true));
    assert_eq!(int::add_cc(0xFFFF_FFFF, 0, true, W32), (0, true));
    assert_eq!(int::add_cc(0xFFFF_FFFE, 0, true, W32), (0xFFFF_FFFF, false));
    assert_eq!(int::add_cc(u64::MAX, u64::MAX, true, W64), (u64::MAX, true));
    // 128-bit add via two 64-bit halves: (2^64 - 1) + 1 = 2^64.
    let (lo, c) = int::add_cc(u64::MAX, 1, false, W64);
    let (hi, c2) = int::add_cc(0, 0, c, W64);
    assert_eq!((lo, hi, c2), (0, 1, false));
    // sub.cc: borrow-out; subc: a - (b + CC.CF).
    assert_eq!(int::sub_cc(0, 1, false, W32), (0xFFFF_FFFF, true));
    assert_eq!(int::sub_cc(1, 1, false, W32), (0, false));
    assert_eq!(int::sub_cc(1, 0, true, W32), (0, false));
    assert_eq!(int::sub_cc(0, 0, true, W32), (0xFFFF_FFFF, true));
    // mad.lo.cc / madc.hi: the ISA's extended-precision multiply example, [r3..r0] = [r5,r4]*[r7,r6].
    let (r4, r5, r6, r7) = (0xFFFF_FFFFu64, 0xFFFF_FFFFu64, 0xFFFF_FFFFu64, 0xFFFF_FFFFu64);
    let r0 = int::mul_lo(r4, r6, W32);
    let r1 = int::mul_hi(r4, r6, W32, false);
    let (r1, c) = int::mad_cc(r5, r6, r1, false, W32, false, false);
    let (r2, _) = int::mad_cc(r5, r6, 0, c, W32, false, true);
    let (r1, c) = int::mad_cc(r4, r7, r1, false, W32, false, false);
    let (r2, c) = int::mad_cc(r4, r7, r2, c, W32, false, true);
    let (r3, _) = int::add_cc(0, 0, c, W32);
    let (r2, c) = int::mad_cc(r5, r7, r2, false, W32, false, false);
    let (r3, _) = int::mad_cc(r5, r7, r3, c, W32, false, true);
    let got = (u128::from(r3) << 96) | (u128::from(r2) << 64) | (u128::from(r1) << 32) | u128::from(r0);
    assert_eq!(got, u128::from(u64::MAX) * u128::from(u64::MAX));
}

#[test]
fn multiply_variants() {
    // mul.hi/.lo/.wide: t = a*b (2n bits); d = t<2n-1..n> / t<n-1..0> / t.
    assert_eq!(int::mul_lo(0xFFFF_FFFF, 0xFFFF_FFFF, W32), 1);
    assert_eq!(int::mul_hi(0xFFFF_FFFF, 0xFFFF_FFFF, W32, false), 0xFFFF_FFFE);
    assert_eq!(int::mul_hi(0xFFFF_FFFF, 0xFFFF_FFFF, W32, true), 0); // (-1)*(-1) = 1
    assert_eq!(int::mul_hi(0xFFFF_FFFF, 2, W32, true), 0xFFFF_FFFF); // -2 → hi = -1
    assert_eq!(int::mul_wide(0xFFFF, 0xFFFF, W16, true), 1);
    assert_eq!(int::mul_wide(0x8000, 0x8000, W16, true), 0x4000_0000);
    assert_eq!(int::mul_wide(0xFFFF_FFFF, 0xFFFF_FFFF, W32, false), 0xFFFF_FFFE_0000_0001);
    assert_eq!(int::mul_wide(0xFFFF_FFFF, 3, W32, true), (-3i64) as u64);
    assert_eq!(int::mul_hi(u64::MAX, u64::MAX, W64, false), u64::MAX - 1);
    assert_eq!(int::mul_hi(1 << 63, 1 << 63, W64, true), 1 << 62);
    // mad.lo/.hi/.wide: t<..> + c.
    assert_eq!(int::mad_lo(3, 4, 5, W32), 17);
    assert_eq!(int::mad_hi(0xFFFF_FFFF, 0xFFFF_FFFF, 2, W32, false), 0);
    assert_eq!(int::mad_wide(0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFF, W32, false), 0xFFFF_FFFF_0000_0000);
    assert_eq!(int::mad_wide(0xFFFF_FFFF, 0xFFFF_FFFF, 0x1_FFFF_FFFF, W32, false), 0); // wraps at 64 bits
                                                                                       // mad.hi.sat.s32: "limits result to MININT..MAXINT".
    assert_eq!(int::mad_hi_sat_s32(0x4000_0000, 0x4000_0000, 0x7FFF_FFFF), 0x7FFF_FFFF);
    assert_eq!(int::mad_hi_sat_s32(0x8000_0000, 0x7FFF_FFFF, 0x8000_0000), 0x8000_0000);
    assert_eq!(int::mad_hi_sat_s32(2, 3, 7), 7);
    // mul24: 24x24 → 48 bits; .hi = t<47..16>, .lo = t<31..0>; upper 8 operand bits ignored.
    assert_eq!(int::mul24(0xFF00_0002, 0x0000_0003, false, false), 6);
    assert_eq!(int::mul24(0x00FF_FFFF, 0x00FF_FFFF, false, true), 0xFFFF_FE00); // (2^24-1)^2 >> 16
    assert_eq!(int::mul24(0x00FF_FFFF, 0x00FF_FFFF, false, false), 0xFE00_0001);
    assert_eq!(int::mul24(0x00FF_FFFF, 0x0000_0002, true, false), 0xFFFF_FFFE); // -1 * 2
    assert_eq!(int::mul24(0x0080_0000, 0x0080_0000, true, true), 0x4000_0000); // (-2^23)^2 = 2^46
    assert_eq!(int::mad24(2, 3, 10, false, false, false), 16);
    assert_eq!(int::mad24(0x0080_0000, 0x0080_0000, 0x7FFF_FFFF, true, true, true), 0x7FFF_FFFF);
}

#[test]
fn sad_div_rem_abs_neg() {
    // sad: d = c + ((a<b) ? b-a : a-b).
    assert_eq!(int::sad(3, 10, 100, W32, false), 107);
    assert_eq!(int::sad(0xFFFF_FFFF, 1, 0, W32, true), 2); // |-1 - 1|
    assert_eq!(int::sad(0xFFFF_FFFF, 1, 0, W32, false), 0xFFFF_FFFE);
    // div/rem: truncation; see crate docs for the division-by-zero choice.
    assert_eq!(int::div(7, 2, W32, false), 3);
    assert_eq!(int::div((-7i64) as u64, 2, W32, true), (-3i32) as u32 as u64);
    assert_eq!(int::rem((-7i64) as u64, 2, W32, true), (-1i32) as u32 as u64);
    assert_eq!(int::rem(7, (-2i64) as u64, W32, true), 1);
    assert_eq!(int::div(5, 0, W32, false), 0xFFFF_FFFF);
    assert_eq!(int::div(5, 0, W32, true), 0xFFFF_FFFF);
    assert_eq!(int::div((-5i64) as u64, 0, W64, true), u64::MAX);
    assert_eq!(int::div(5, 0, W16, false), 0xFFFF);
    assert_eq!(int::rem(5, 0, W32, false), 5);
    assert_eq!(int::rem(0xFFFF_FFFB, 0, W32, true), 0xFFFF_FFFB);
    assert_eq!(int::div(0x8000_0000, 0xFFFF_FFFF, W32, true), 0x8000_0000);
    assert_eq!(int::rem(0x8000_0000, 0xFFFF_FFFF, W32, true), 0);
    assert_eq!(int::div(1 << 63, u64::MAX, W64, true), 1 << 63);
    assert_eq!(int::rem(1 << 63, u64::MAX, W64, true), 0);
    assert_eq!(int::div(0x8000, 0xFFFF, W16, true), 0x8000);
    // abs/neg wrap at MIN.
    assert_eq!(int::abs(0x8000_0000, W32), 0x8000_0000);
    assert_eq!(int::abs(0xFFFF_FFFB, W32), 5);
    assert_eq!(int::abs(1 << 63, W64), 1 << 63);
    assert_eq!(int::neg(1, W16), 0xFFFF);
    assert_eq!(int::neg(0x8000_0000, W32), 0x8000_0000);
}

#[test]
fn min_max_relu_and_lanes() {
    assert_eq!(int::min(0xFFFF_FFFF, 1, W32, true, false), 0xFFFF_FFFF);
    assert_eq!(int::min(0xFFFF_FFFF, 1, W32, false, false), 1);
    assert_eq!(int::max(0xFFFF_FFFF, 1, W32, true, false), 1);
    // min.relu.s32 "clamps the result to 0 if negative".
    assert_eq!(int::min(0xFFFF_FFFF, 1, W32, true, true), 0);
    assert_eq!(int::max(0xFFFF_FFF0, 0xFFFF_FFFF, W32, true, true), 0);
    assert_eq!(int::max(u64::MAX, 0, W64, false, false), u64::MAX);
    // .s16x2: lanes a[0:15], a[16:31] processed independently.
    let a = 0x8000_0005; // lanes: 5, -32768
    let b = 0x0001_FFFF; // lanes: -1, 1
    assert_eq!(int::lanes2(a, b, W16, |x, y| int::min(x, y, W16, true, false)), 0x8000_FFFF);
    assert_eq!(int::lanes2(a, b, W16, |x, y| int::min(x, y, W16, true, true)), 0x0000_0000);
    assert_eq!(int::lanes2(a, b, W16, |x, y| int::max(x, y, W16, false, false)), 0x8000_FFFF);
    // add.u16x2 wraps per lane (no carry between lanes).
    assert_eq!(int::lanes2(0xFFFF_FFFF, 0x0001_0001, W16, |x, y| int::add(x, y, W16)), 0);
    // neg.s8x4
    assert_eq!(int::lanes1(0x80_01_FF_00, W8, |x| int::neg(x, W8)), 0x80_FF_01_00);
}

#[test]
fn dot_products() {
    // dp4a.u32.u32: c + Σ bytes.
    assert_eq!(int::dp4a(0x01_02_03_04, 0x01_01_01_01, 10, false, false), 20);
    assert_eq!(int::dp4a(0xFF_FF_FF_FF, 0xFF_FF_FF_FF, 0, false, false), 4 * 255 * 255);
    // .s32.s32: each byte sign-extended: (-1)*(-1)*4 = 4.
    assert_eq!(int::dp4a(0xFF_FF_FF_FF, 0xFF_FF_FF_FF, 0, true, true), 4);
    // mixed: a unsigned 255, b signed -1 → -255*4 + 0.
    assert_eq!(int::dp4a(0xFF_FF_FF_FF, 0xFF_FF_FF_FF, 0, false, true), (-1020i32) as u32 as u64);
    // wraps at 32 bits.
    assert_eq!(int::dp4a(0x0000_0001, 0x0000_0001, 0xFFFF_FFFF, false, false), 0);
    // dp2a.lo: a halves × b bytes 0,1; .hi: bytes 2,3.
    assert_eq!(int::dp2a(0x0002_0003, 0x04_03_02_01, 0, false, false, false), 3 + 2 * 2);
    assert_eq!(int::dp2a(0x0002_0003, 0x04_03_02_01, 0, true, false, false), 3 * 3 + 2 * 4);
    assert_eq!(int::dp2a(0xFFFF_0001, 0x00_00_FF_01, 5, false, true, true), (5 + 1 + 1) as u64);
}

#[test]
fn width_helpers() {
    assert_eq!(W8.sext(0x80), -128);
    assert_eq!(W32.smin(), i64::from(i32::MIN));
    assert_eq!(W64.mask(), u64::MAX);
    assert_eq!(W16.double(), W32);
    assert_eq!(scalar::Width::from_bits(24), None);
}
