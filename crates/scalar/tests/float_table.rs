//! Table-driven edge cases for f32/f64/f16/bf16 non-rounding behaviour: NaN rules, min/max,
//! abs/neg/copysign, testp, .sat, .ftz, comparisons (PTX ISA §9.7.3, §9.7.4, setp/set).

use scalar::compare::{self, BoolOp, CmpOp};
use scalar::float::{self, MinMaxMods, Mods, TestP};
use scalar::half::{self, Bf16, HalfMods, F16};
use scalar::Rounding::{self, *};

const CN32: u32 = 0x7FFF_FFFF;
const CN64: u64 = 0x7FFF_FFFF_FFFF_FFFF;
const MIN_SUB: f32 = f32::from_bits(1);

fn f(b: u32) -> f32 {
    f32::from_bits(b)
}
fn d(b: u64) -> f64 {
    f64::from_bits(b)
}
const MM: MinMaxMods = MinMaxMods { ftz: false, nan: false, xorsign_abs: false };

#[test]
fn nan_results() {
    // f32: hardware returns the canonical NaN 0x7FFFFFFF whatever the operands' payloads.
    for r in [Rn, Rz, Rm, Rp] {
        assert_eq!(float::add(f(0x7FC0_0001), 1.0, r, Mods::NONE).to_bits(), CN32);
        assert_eq!(float::mul(f32::INFINITY, 0.0, r, Mods::NONE).to_bits(), CN32);
        assert_eq!(float::sqrt(-1.0f32, r, Mods::NONE).to_bits(), CN32);
        assert_eq!(float::fma(1.0, f(0xFF80_0001), 2.0, r, Mods::NONE).to_bits(), CN32);
        // f64: payloads propagate (first NaN operand, quieted); invalid ops give 0x7FFF…F.
        assert_eq!(float::add(d(0x7FF0_0000_0000_0001), 1.0, r, Mods::NONE).to_bits(), 0x7FF8_0000_0000_0001);
        assert_eq!(float::add(1.0, d(0xFFF8_0000_0000_0042), r, Mods::NONE).to_bits(), 0xFFF8_0000_0000_0042);
        assert_eq!(
            float::sub(d(0x7FF0_0000_0000_0005), d(0x7FF8_0000_0000_0007), r, Mods::NONE).to_bits(),
            0x7FF8_0000_0000_0005
        );
        assert_eq!(float::add(f64::INFINITY, f64::NEG_INFINITY, r, Mods::NONE).to_bits(), CN64);
        assert_eq!(float::div(0.0f64, 0.0, r, Mods::NONE).to_bits(), CN64);
        assert_eq!(float::fma(1.0, 2.0, d(0x7FF0_0000_0000_0009), r, Mods::NONE).to_bits(), 0x7FF8_0000_0000_0009);
        assert_eq!(float::sqrt(d(0xFFF0_0000_0000_0003), r, Mods::NONE).to_bits(), 0xFFF8_0000_0000_0003);
    }
    assert_eq!(float::rcp(d(0x7FF0_0000_0000_0001), Rz, Mods::NONE).to_bits(), 0x7FF8_0000_0000_0001);
    assert_eq!(float::round_integral(f(0xFFC0_1234), Rn, Mods::NONE).to_bits(), CN32);
}

#[test]
fn sat_and_ftz() {
    // .sat clamps to [0.0, 1.0]; NaN results are flushed to +0.0f; -0.0 → +0.0 (our reading).
    assert_eq!(float::add(0.5f32, 0.7, Rn, Mods::SAT), 1.0);
    assert_eq!(float::add(0.25f32, 0.25, Rn, Mods::SAT), 0.5);
    assert_eq!(float::add(-1.0f32, 0.5, Rn, Mods::SAT).to_bits(), 0);
    assert_eq!(float::add(-0.0f32, -0.0, Rn, Mods::SAT).to_bits(), 0);
    assert_eq!(float::mul(f32::INFINITY, 0.0, Rn, Mods::SAT).to_bits(), 0);
    assert_eq!(float::fma(2.0f32, 2.0, f32::NEG_INFINITY, Rz, Mods::SAT).to_bits(), 0);
    assert_eq!(float::mul(f32::INFINITY, 1.0, Rn, Mods::SAT), 1.0);
    // .ftz flushes subnormal inputs...
    assert_eq!(float::add(MIN_SUB, MIN_SUB, Rn, Mods::NONE).to_bits(), 2);
    assert_eq!(float::add(MIN_SUB, MIN_SUB, Rn, Mods::FTZ).to_bits(), 0);
    assert_eq!(float::add(-MIN_SUB, 0.0, Rn, Mods::FTZ).to_bits(), 0); // -0 + +0 = +0
    assert_eq!(float::add(-MIN_SUB, -0.0, Rn, Mods::FTZ).to_bits(), 0x8000_0000);
    // ...and subnormal results, sign preserved...
    let min_norm = f32::MIN_POSITIVE;
    assert_eq!(float::mul(min_norm, 0.5, Rn, Mods::FTZ).to_bits(), 0);
    assert_eq!(float::mul(-min_norm, 0.5, Rn, Mods::FTZ).to_bits(), 0x8000_0000);
    // ...after rounding: (1 - 2^-24) * 2^-126 rounds (ties-to-even) up to 2^-126, which is normal.
    let a = f(0x3F7F_FFFF);
    assert_eq!(float::mul(a, min_norm, Rn, Mods::FTZ), min_norm);
    assert_eq!(float::mul(a, min_norm, Rz, Mods::FTZ).to_bits(), 0);
    assert_eq!(float::mul(a, min_norm, Rz, Mods::NONE).to_bits(), 0x007F_FFFF);
    assert_eq!(float::sqrt(MIN_SUB, Rn, Mods::FTZ).to_bits(), 0);
    assert_eq!(float::div(1.0f32, MIN_SUB, Rn, Mods::FTZ), f32::INFINITY);
    assert_eq!(float::rcp(-MIN_SUB, Rp, Mods::FTZ), f32::NEG_INFINITY);
    assert_eq!(float::round_integral(f(0x0000_0005), Rp, Mods::NONE), 1.0);
    assert_eq!(float::round_integral(f(0x0000_0005), Rp, Mods::FTZ).to_bits(), 0);
    assert_eq!(float::round_integral(-0.4f32, Rn, Mods::NONE).to_bits(), 0x8000_0000);
    assert_eq!(float::round_integral(2.5f32, Rn, Mods::NONE), 2.0);
    assert_eq!(float::round_integral(-2.5f32, Rm, Mods::NONE), -3.0);
}

#[test]
fn abs_neg_copysign() {
    assert_eq!(float::abs(-0.0f32, false).to_bits(), 0);
    assert_eq!(float::abs(-MIN_SUB, false), MIN_SUB);
    assert_eq!(float::abs(-MIN_SUB, true).to_bits(), 0);
    // abs.f32 NaN: unspecified → canonical; abs.f64 NaN: "passed through unchanged".
    assert_eq!(float::abs(f(0xFFC0_0001), false).to_bits(), CN32);
    assert_eq!(float::abs(d(0xFFF8_0000_0000_0001), false).to_bits(), 0xFFF8_0000_0000_0001);
    assert_eq!(float::neg(0.0f32, false).to_bits(), 0x8000_0000);
    assert_eq!(float::neg(MIN_SUB, true).to_bits(), 0x8000_0000);
    assert_eq!(float::neg(f(0x7FC0_0000), false).to_bits(), CN32);
    assert_eq!(float::neg(d(0x7FF8_0000_0000_0001), false).to_bits(), 0xFFF8_0000_0000_0001);
    assert_eq!(float::neg(f64::INFINITY, false), f64::NEG_INFINITY);
    // copysign d, a, b: b's magnitude, a's sign.
    assert_eq!(float::copysign(-1.0f32, 2.0), -2.0);
    assert_eq!(float::copysign(1.0f32, -2.0), 2.0);
    assert_eq!(float::copysign(1.0f32, f(0xFFC0_0001)).to_bits(), 0x7FC0_0001);
    assert_eq!(float::copysign(-0.0f64, 3.0), -3.0);
}

#[test]
fn min_max() {
    // "If values of both inputs are 0.0, then +0.0 > -0.0".
    assert_eq!(float::min(-0.0f32, 0.0, MM).to_bits(), 0x8000_0000);
    assert_eq!(float::min(0.0f32, -0.0, MM).to_bits(), 0x8000_0000);
    assert_eq!(float::max(-0.0f32, 0.0, MM).to_bits(), 0);
    assert_eq!(float::max(0.0f64, -0.0, MM).to_bits(), 0);
    // One NaN: the other operand; both NaN: canonical NaN.
    assert_eq!(float::min(f32::NAN, 1.0, MM), 1.0);
    assert_eq!(float::max(1.0f32, f(0xFFFF_0000), MM), 1.0);
    assert_eq!(float::min(f(0x7FC0_0001), f(0x7FC0_0002), MM).to_bits(), CN32);
    assert_eq!(float::max(d(0x7FF8_0000_0000_0001), f64::NAN, MM).to_bits(), CN64);
    assert_eq!(float::min(f64::NAN, -5.0, MM), -5.0);
    // .NaN: any NaN → canonical NaN.
    let nan = MinMaxMods { nan: true, ..MM };
    assert_eq!(float::min(f32::NAN, 1.0, nan).to_bits(), CN32);
    assert_eq!(float::max(1.0f32, f32::NAN, nan).to_bits(), CN32);
    assert_eq!(float::max(1.0f32, 2.0, nan), 2.0);
    // .xorsign.abs: magnitude min/max of |a|,|b|; sign = sign(a) ^ sign(b).
    let xa = MinMaxMods { xorsign_abs: true, ..MM };
    assert_eq!(float::min(-3.0f32, 2.0, xa), -2.0);
    assert_eq!(float::max(-3.0f32, 2.0, xa), -3.0);
    assert_eq!(float::max(-3.0f32, -2.0, xa), 3.0);
    assert_eq!(float::max(f(0xFFC0_0000), -2.0, xa), 2.0); // NaN sign bit counts in the XOR
    assert_eq!(float::max(f32::NAN, f32::NAN, xa).to_bits(), CN32);
    // .ftz
    let ftz = MinMaxMods { ftz: true, ..MM };
    assert_eq!(float::min(-MIN_SUB, 0.0, ftz).to_bits(), 0x8000_0000);
    assert_eq!(float::max(MIN_SUB, 0.0, ftz).to_bits(), 0);
    assert_eq!(float::max(MIN_SUB, 0.0, MM), MIN_SUB);
    assert_eq!(float::max(f32::NEG_INFINITY, f32::MIN, MM), f32::MIN);
}

#[test]
fn testp() {
    use TestP::*;
    let cases: [(f32, [bool; 6]); 7] = [
        // finite infinite number notanumber normal subnormal
        (0.0, [true, false, true, false, true, false]), // "zero is considered normal"
        (-0.0, [true, false, true, false, true, false]),
        (1.5, [true, false, true, false, true, false]),
        (MIN_SUB, [true, false, true, false, false, true]),
        (-f32::INFINITY, [false, true, true, false, false, false]),
        (f32::NAN, [false, false, false, true, false, false]),
        (f(0x807F_FFFF), [true, false, true, false, false, true]),
    ];
    for (x, want) in cases {
        for (op, w) in [Finite, Infinite, Number, NotANumber, Normal, Subnormal].into_iter().zip(want) {
            assert_eq!(float::testp(op, x), w, "{op:?} {x:e}");
            if !x.is_subnormal() {
                assert_eq!(float::testp(op, f64::from(x)), w, "{op:?} f64 {x:e}");
            }
        }
    }
    assert!(float::testp(Subnormal, d(1)));
    assert!(!float::testp(Subnormal, f64::from(MIN_SUB)));
}

#[test]
fn comparisons() {
    use CmpOp::*;
    let nan = f32::NAN;
    let table: [(CmpOp, f32, f32, bool); 22] = [
        (Eq, nan, nan, false),
        (Ne, nan, 1.0, false),
        (Neu, nan, 1.0, true),
        (Equ, nan, 1.0, true),
        (Equ, 1.0, 2.0, false),
        (Eq, -0.0, 0.0, true),
        (Lt, -0.0, 0.0, false),
        (Le, -0.0, 0.0, true),
        (Lt, 1.0, 2.0, true),
        (Ltu, 1.0, 2.0, true),
        (Ltu, nan, 2.0, true),
        (Gtu, 1.0, 2.0, false),
        (Geu, 1.0, nan, true),
        (Ge, 1.0, nan, false),
        (Gt, f32::INFINITY, f32::MAX, true),
        (Leu, 3.0, 3.0, true),
        (Num, 1.0, 2.0, true),
        (Num, 1.0, nan, false),
        (Nan, 1.0, nan, true),
        (Nan, 1.0, 2.0, false),
        (Ne, 1.0, 2.0, true),
        (Neu, 1.0, 1.0, false),
    ];
    for (op, a, b, want) in table {
        assert_eq!(compare::cmp_float(op, a, b, false), want, "{op:?} {a} {b}");
        assert_eq!(compare::cmp_float(op, f64::from(a), f64::from(b), false), want, "{op:?} f64");
        let (ha, hb) = (half::from_f32::<F16>(a, Rn), half::from_f32::<F16>(b, Rn));
        if b.is_nan() || half::to_f32::<F16>(hb) == b {
            assert_eq!(half::cmp::<F16>(op, ha, hb, false), want, "{op:?} f16");
        }
    }
    assert!(!compare::cmp_float(Eq, MIN_SUB, 0.0, false));
    assert!(compare::cmp_float(Eq, MIN_SUB, 0.0, true)); // setp.ftz
    use scalar::Width::*;
    assert!(compare::cmp_int(Lt, 0xFFFF_FFFF, 1, W32, true));
    assert!(!compare::cmp_int(Lt, 0xFFFF_FFFF, 1, W32, false));
    assert!(!compare::cmp_int(Lo, 0xFFFF_FFFF, 1, W32, true)); // lo is unsigned
    assert!(compare::cmp_int(Hi, 0x80, 0x7F, W8, true));
    assert!(!compare::cmp_int(Gt, 0x80, 0x7F, W8, true));
    assert!(compare::cmp_int(Eq, 0x1_0000_0005, 5, W32, false)); // upper bits ignored
    assert!(compare::cmp_int(Hs, 5, 5, W64, false));
    assert!(compare::cmp_int(Ls, 4, 5, W16, false));
    // set: 1.0f or 0xffffffff; BoolOp combination.
    assert_eq!(compare::set_result(true, true), 0x3F80_0000);
    assert_eq!(compare::set_result(true, false), 0xFFFF_FFFF);
    assert_eq!(compare::set_result(false, true), 0);
    assert!(compare::bool_op(BoolOp::Xor, true, false));
    assert!(!compare::bool_op(BoolOp::And, true, false));
    assert!(compare::bool_op(BoolOp::Or, false, true));
}

#[test]
fn half_conversions() {
    // f16 overflow: 65520 is the midpoint of 65504 and 65536 → ties-to-even overflows to inf.
    assert_eq!(half::from_f32::<F16>(65520.0, Rn), 0x7C00);
    assert_eq!(half::from_f32::<F16>(65520.0, Rz), 0x7BFF);
    assert_eq!(half::from_f32::<F16>(65519.0, Rn), 0x7BFF);
    assert_eq!(half::from_f32::<F16>(-1e10, Rp), 0xFBFF);
    assert_eq!(half::from_f32::<F16>(-1e10, Rm), 0xFC00);
    // subnormals: 2^-25 is half the smallest subnormal → ties to even (0); a hair more → 1.
    assert_eq!(half::from_f64::<F16>(2f64.powi(-25), Rn), 0);
    assert_eq!(half::from_f64::<F16>(2f64.powi(-25) * 1.000001, Rn), 1);
    assert_eq!(half::from_f64::<F16>(2f64.powi(-40), Rp), 1);
    assert_eq!(half::from_f64::<F16>(-2f64.powi(-40), Rz), 0x8000);
    // f64 → f16 rounds once: 1 + 2^-11 + 2^-40 is above the f16 midpoint 1 + 2^-11 (→ 0x3C01), but
    // rounding through f32 first would land exactly on the midpoint and tie to 0x3C00.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(half::from_f64::<F16>(x, Rn), 0x3C01);
    assert_eq!(half::from_f32::<F16>(x as f32, Rn), 0x3C00);
    // bf16 ties to even.
    assert_eq!(half::from_f32::<Bf16>(f(0x3F80_8000), Rn), 0x3F80);
    assert_eq!(half::from_f32::<Bf16>(f(0x3F81_8000), Rn), 0x3F82);
    assert_eq!(half::from_f32::<Bf16>(f(0x3F81_FFFF), Rz), 0x3F81);
    assert_eq!(half::from_f32::<Bf16>(f(0x3F81_0001), Rp), 0x3F82);
    assert_eq!(half::from_f32::<Bf16>(f32::MAX, Rn), 0x7F80);
    assert_eq!(half::from_f32::<Bf16>(f32::NAN, Rn), 0x7FFF);
    assert_eq!(half::to_f32::<F16>(0x3C00), 1.0);
    assert_eq!(half::to_f32::<F16>(0x0001), 2f32.powi(-24));
    assert_eq!(half::to_f32::<Bf16>(0x8001).to_bits(), 0x8001_0000);
    assert_eq!(half::to_f32::<F16>(0x7E01).to_bits(), CN32);
}

#[test]
fn half_ops_modifiers() {
    let r: Rounding = Rn;
    let hm = HalfMods::NONE;
    // sat: fma.sat clamps to [0, 1]
    let sat = HalfMods { sat: true, ..hm };
    assert_eq!(half::add::<F16>(0x3A00, 0x3A00, r, sat), 0x3C00); // 0.75 + 0.75 → 1.0
    assert_eq!(half::add::<F16>(0xBC00, 0x3800, r, sat), 0); // -0.5 → +0
                                                             // relu: negative → 0, NaN → canonical.
    let relu = HalfMods { relu: true, ..hm };
    assert_eq!(half::fma::<Bf16>(0xBF80, 0x3F80, 0, r, relu), 0); // -1*1+0
    assert_eq!(half::fma::<F16>(0x7C00, 0, 0, r, relu), 0x7FFF); // inf*0 = NaN
    assert_eq!(half::fma::<F16>(0x3C00, 0x4000, 0x3C00, r, relu), 0x4200); // 1*2+1 = 3
                                                                           // ftz (f16 only in PTX): subnormal inputs and results flushed.
    let ftz = HalfMods { ftz: true, ..hm };
    assert_eq!(half::add::<F16>(0x0001, 0x0001, r, hm), 0x0002);
    assert_eq!(half::add::<F16>(0x0001, 0x0001, r, ftz), 0);
    assert_eq!(half::mul::<F16>(0x0400, 0x3800, r, ftz), 0); // 2^-14 * 0.5 is subnormal
    assert_eq!(half::mul::<F16>(0x8400, 0x3800, r, ftz), 0x8000);
    // NaN results canonical.
    assert_eq!(half::add::<F16>(0x7C01, 0x3C00, r, hm), 0x7FFF);
    assert_eq!(half::sub::<Bf16>(0x7F80, 0x7F80, r, hm), 0x7FFF);
    // neg/abs are sign-bit operations.
    assert_eq!(half::neg::<F16>(0x7E00, false), 0xFE00);
    assert_eq!(half::abs::<Bf16>(0xFFC1, false), 0x7FC1);
    assert_eq!(half::neg::<F16>(0x0001, true), 0x8000);
    // min/max
    assert_eq!(half::min::<F16>(0x8000, 0x0000, MM), 0x8000);
    assert_eq!(half::max::<F16>(0x8000, 0x0000, MM), 0x0000);
    assert_eq!(half::max::<F16>(0x7E00, 0x3C00, MM), 0x3C00);
    assert_eq!(half::max::<F16>(0x7E00, 0x7E01, MM), 0x7FFF);
    assert_eq!(half::max::<Bf16>(0x7FC0, 0x3F80, MinMaxMods { nan: true, ..MM }), 0x7FFF);
    assert_eq!(half::min::<F16>(0xC200, 0x4000, MinMaxMods { xorsign_abs: true, ..MM }), 0xC000);
    // packed: lane 0 = bits 15..0
    let add = |a, b| half::add::<F16>(a, b, r, hm);
    assert_eq!(half::x2(0x3C00_4000, 0x3C00_3C00, add), 0x4000_4200);
    let fma = |a, b, c| half::fma::<F16>(a, b, c, r, hm);
    assert_eq!(half::x2_3(0x4000_3C00, 0x4000_4000, 0x3C00_0000, fma), 0x4500_4000);
}
