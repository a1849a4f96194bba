//! Table-driven `cvt` edge cases (PTX ISA §9.7.9.21 "cvt"): integer truncation and `.sat`,
//! float→int clamping and the NaN rule, `.ftz .sat .relu .satfinite`, tf32, e4m3, e5m2.

use scalar::convert::{convert, sign_extend, CvtModes, CvtRounding as R, Type::*};

fn cvt(bits: u64, from: scalar::Type, to: scalar::Type, r: R) -> u64 {
    convert(bits, from, to, CvtModes::rounding(r))
}
fn with(r: R, f: impl FnOnce(&mut CvtModes)) -> CvtModes {
    let mut m = CvtModes::rounding(r);
    f(&mut m);
    m
}
fn f32b(x: f32) -> u64 {
    u64::from(x.to_bits())
}
fn f64b(x: f64) -> u64 {
    x.to_bits()
}

#[test]
fn int_to_int() {
    // Sign/zero-extend from the source, truncate to the destination; .sat clamps instead.
    assert_eq!(cvt(0xFFFF_FFFF, S32, U8, R::None), 0xFF);
    assert_eq!(convert(0xFFFF_FFFF, S32, U8, with(R::None, |m| m.sat = true)), 0);
    assert_eq!(cvt(300, U32, S8, R::None), 44);
    assert_eq!(convert(300, U32, S8, with(R::None, |m| m.sat = true)), 127);
    assert_eq!(convert(0xFFFF_FF00, S32, S8, with(R::None, |m| m.sat = true)), 0x80); // -256 → -128
    assert_eq!(cvt(0xFFFF_FFFF, S32, S64, R::None), u64::MAX);
    assert_eq!(cvt(0xFFFF_FFFF, S32, U64, R::None), u64::MAX);
    assert_eq!(convert(0xFFFF_FFFF, S32, U64, with(R::None, |m| m.sat = true)), 0);
    assert_eq!(cvt(0xFFFF_FFFF, U32, S64, R::None), 0xFFFF_FFFF);
    assert_eq!(cvt(0x1_0000_0001, U64, U32, R::None), 1);
    assert_eq!(convert(0x1_0000_0001, U64, U32, with(R::None, |m| m.sat = true)), 0xFFFF_FFFF);
    assert_eq!(cvt(0x80, S8, S16, R::None), 0xFF80);
    assert_eq!(cvt(0x80, S8, U16, R::None), 0xFF80);
    assert_eq!(cvt(0xABCD_0080, S8, S32, R::None), 0xFFFF_FF80); // only the low 8 source bits
    assert_eq!(sign_extend(0xFF80, S16), 0xFFFF_FFFF_FFFF_FF80);
    assert_eq!(sign_extend(0xFF80, U16), 0xFF80);
}

#[test]
fn float_to_int() {
    assert_eq!(cvt(f32b(3.9), F32, S32, R::Rzi), 3);
    assert_eq!(cvt(f32b(-3.9), F32, S32, R::Rzi), 0xFFFF_FFFD);
    assert_eq!(cvt(f32b(2.5), F32, S32, R::Rni), 2);
    assert_eq!(cvt(f32b(3.5), F32, S32, R::Rni), 4);
    assert_eq!(cvt(f32b(-0.5), F32, S32, R::Rmi), 0xFFFF_FFFF);
    assert_eq!(cvt(f32b(0.1), F32, S32, R::Rpi), 1);
    assert_eq!(cvt(f32b(2.7), F32, S32, R::None), 2); // missing rounding → .rzi
                                                      // clamped to the destination range by default.
    assert_eq!(cvt(f32b(1e10), F32, S32, R::Rzi), 0x7FFF_FFFF);
    assert_eq!(cvt(f32b(-1e10), F32, S32, R::Rzi), 0x8000_0000);
    assert_eq!(cvt(f32b(-1.0), F32, U32, R::Rzi), 0);
    assert_eq!(cvt(f32b(f32::INFINITY), F32, U32, R::Rzi), 0xFFFF_FFFF);
    assert_eq!(cvt(f32b(f32::NEG_INFINITY), F32, S64, R::Rzi), 1 << 63);
    assert_eq!(cvt(f32b(300.0), F32, U8, R::Rni), 0xFF);
    assert_eq!(cvt(f32b(-300.0), F32, S8, R::Rni), 0x80);
    assert_eq!(cvt(f64b(1.8446744073709552e19), F64, U64, R::Rzi), u64::MAX);
    assert_eq!(cvt(f64b(-0.0), F64, U64, R::Rmi), 0);
    // NaN: 0 unless the source is .f64 or the destination is 64-bit: then 1 << (bits - 1).
    assert_eq!(cvt(f32b(f32::NAN), F32, S32, R::Rni), 0);
    assert_eq!(cvt(0x7E00, F16, S16, R::Rni), 0);
    assert_eq!(cvt(f64b(f64::NAN), F64, S32, R::Rni), 0x8000_0000);
    assert_eq!(cvt(f64b(f64::NAN), F64, U32, R::Rni), 0x8000_0000);
    assert_eq!(cvt(f64b(f64::NAN), F64, U8, R::Rni), 0x80);
    assert_eq!(cvt(f32b(f32::NAN), F32, U64, R::Rni), 1 << 63);
    assert_eq!(cvt(f32b(f32::NAN), F32, S64, R::Rni), 1 << 63);
    // .ftz flushes an f32 subnormal source first.
    let sub = 1u64;
    assert_eq!(cvt(sub, F32, S32, R::Rpi), 1);
    assert_eq!(convert(sub, F32, S32, with(R::Rpi, |m| m.ftz = true)), 0);
    assert_eq!(cvt(0x3C00, F16, U8, R::Rzi), 1);
    assert_eq!(cvt(0xC000, Bf16, S8, R::Rzi), 0xFE);
}

#[test]
fn int_to_float() {
    assert_eq!(cvt(0xFFFF_FFFF, U32, F32, R::Rn), 0x4F80_0000);
    assert_eq!(cvt(0xFFFF_FFFF, U32, F32, R::Rz), 0x4F7F_FFFF);
    assert_eq!(cvt(0xFFFF_FFFF, S32, F32, R::Rn), 0xBF80_0000);
    assert_eq!(cvt(65520, U32, F16, R::Rn), 0x7C00);
    assert_eq!(cvt(65520, U32, F16, R::Rz), 0x7BFF);
    assert_eq!(cvt(u64::MAX, S64, Bf16, R::Rn), 0xBF80);
    assert_eq!(cvt(u64::MAX, U64, F64, R::Rm), 0x43EF_FFFF_FFFF_FFFF);
    assert_eq!(cvt(0, S32, F32, R::Rm), 0); // +0, not -0
    assert_eq!(convert(5, S32, F32, with(R::Rn, |m| m.sat = true)), 0x3F80_0000);
    assert_eq!(convert(0xFFFF_FFFB, S32, F16, with(R::Rn, |m| m.relu = true)), 0);
    assert_eq!(cvt(0xFFFF_FFFF, U32, Tf32, R::Rn), 0x4F80_0000);
    assert_eq!(cvt(0xFFFF_FFFF, U32, E4m3, R::Rn), 0x7E); // saturates (satfinite is mandatory)
}

#[test]
fn float_to_float() {
    assert_eq!(cvt(f32b(0.1), F32, F64, R::None), f64::from(0.1f32).to_bits());
    assert_eq!(cvt(f64b(1e300), F64, F32, R::Rn), 0x7F80_0000);
    assert_eq!(cvt(f64b(1e300), F64, F32, R::Rz), 0x7F7F_FFFF);
    assert_eq!(cvt(f64b(-1e-300), F64, F32, R::Rm), 0x8000_0001);
    assert_eq!(cvt(f64b(-1e-300), F64, F32, R::Rn), 0x8000_0000);
    assert_eq!(cvt(f64b(f64::NAN), F64, F32, R::Rn), 0x7FFF_FFFF);
    assert_eq!(cvt(0x7E00, F16, F32, R::None), 0x7FFF_FFFF);
    assert_eq!(cvt(0x7E00, F16, F64, R::None), 0x7FFF_FFFF_FFFF_FFFF);
    assert_eq!(cvt(0x8001, Bf16, F32, R::None), 0x8001_0000);
    assert_eq!(cvt(0x3C00, F16, Bf16, R::Rn), 0x3F80);
    assert_eq!(cvt(0x4780, Bf16, F16, R::Rn), 0x7C00); // 65536 overflows f16
    assert_eq!(cvt(0x4780, Bf16, F16, R::Rz), 0x7BFF);
    // .satfinite: ±inf → ±MAX, NaN stays NaN.
    let sf = |r| with(r, |m| m.satfinite = true);
    assert_eq!(convert(f32b(1e6), F32, F16, sf(R::Rn)), 0x7BFF);
    assert_eq!(convert(f32b(f32::NEG_INFINITY), F32, F16, sf(R::Rn)), 0xFBFF);
    assert_eq!(convert(f32b(f32::NAN), F32, F16, sf(R::Rn)), 0x7FFF);
    assert_eq!(convert(f32b(f32::INFINITY), F32, Bf16, sf(R::Rz)), 0x7F7F);
    // .relu: negative → +0, NaN → canonical NaN.
    let relu = |r| with(r, |m| m.relu = true);
    assert_eq!(convert(f32b(-2.0), F32, F16, relu(R::Rn)), 0);
    assert_eq!(convert(f32b(-0.0), F32, Bf16, relu(R::Rn)), 0);
    assert_eq!(convert(f32b(f32::NAN), F32, F16, relu(R::Rn)), 0x7FFF);
    assert_eq!(convert(f32b(3.0), F32, F16, relu(R::Rn)), 0x4200);
    // .sat: [0, 1], NaN → 0.
    let sat = |r| with(r, |m| m.sat = true);
    assert_eq!(convert(f32b(2.0), F32, F16, sat(R::Rn)), 0x3C00);
    assert_eq!(convert(f64b(f64::NAN), F64, F32, sat(R::Rn)), 0);
    assert_eq!(convert(f32b(0.5), F32, F32, sat(R::None)), f32b(0.5));
    assert_eq!(convert(f32b(-0.5), F32, F32, sat(R::None)), 0);
    // .ftz on f32 sources and results.
    let ftz = |r| with(r, |m| m.ftz = true);
    assert_eq!(convert(0x8000_0001, F32, F32, ftz(R::None)), 0x8000_0000);
    assert_eq!(convert(0x0000_0001, F32, F64, ftz(R::None)), 0);
    assert_eq!(convert(f64b(1e-40), F64, F32, ftz(R::Rn)), 0);
    assert_eq!(convert(f64b(1e-40), F64, F32, CvtModes::rounding(R::Rn)), f32b(1e-40));
    // integral rounding in the same type.
    assert_eq!(cvt(f32b(2.5), F32, F32, R::Rni), f32b(2.0));
    assert_eq!(cvt(f64b(-2.7), F64, F64, R::Rzi), f64b(-2.0));
    assert_eq!(cvt(0x3E00, F16, F16, R::Rpi), 0x4000); // 1.5 → 2
    assert_eq!(cvt(0xBE00, F16, F16, R::Rni), 0xC000); // -1.5 → -2
    assert_eq!(cvt(0x3F40, Bf16, Bf16, R::Rmi), 0); // 0.75 → +0
    assert_eq!(cvt(0xBF40, Bf16, Bf16, R::Rpi), 0x8000); // -0.75 → -0
}

#[test]
fn tf32() {
    // cvt.rna.tf32.f32: 10 fraction bits, ties away from zero, f32 layout with low 13 bits zero.
    assert_eq!(cvt(0x3F80_1000, F32, Tf32, R::Rna), 0x3F80_2000);
    assert_eq!(cvt(0x3F80_1000, F32, Tf32, R::Rn), 0x3F80_0000);
    assert_eq!(cvt(0x3F80_3000, F32, Tf32, R::Rn), 0x3F80_4000);
    assert_eq!(cvt(0x3F80_1FFF, F32, Tf32, R::Rz), 0x3F80_0000);
    assert_eq!(cvt(0xBF80_1000, F32, Tf32, R::Rna), 0xBF80_2000);
    assert_eq!(cvt(0x7F7F_FFFF, F32, Tf32, R::Rna), 0x7F80_0000);
    assert_eq!(convert(0x7F7F_FFFF, F32, Tf32, with(R::Rna, |m| m.satfinite = true)), 0x7F7F_E000);
    assert_eq!(cvt(0x7FC0_0000, F32, Tf32, R::Rna), 0x7FFF_FFFF);
    assert_eq!(convert(0xBF80_0000, F32, Tf32, with(R::Rn, |m| m.relu = true)), 0);
    assert_eq!(cvt(0x0000_1000, F32, Tf32, R::Rna), 0x0000_2000); // subnormal tie away
    assert_eq!(cvt(0x3F80_2000, Tf32, F32, R::None), 0x3F80_2000);
}

#[test]
fn fp8() {
    // e4m3: bias 7, max 448 (0x7E), NaN 0x7F, no infinity; satfinite is mandatory.
    assert_eq!(cvt(f32b(1.0), F32, E4m3, R::Rn), 0x38);
    assert_eq!(cvt(f32b(448.0), F32, E4m3, R::Rn), 0x7E);
    assert_eq!(cvt(f32b(464.0), F32, E4m3, R::Rn), 0x7E); // tie between 448 and (NaN slot) 480 → even
    assert_eq!(cvt(f32b(500.0), F32, E4m3, R::Rn), 0x7E);
    assert_eq!(cvt(f32b(-1000.0), F32, E4m3, R::Rn), 0xFE);
    assert_eq!(cvt(f32b(f32::INFINITY), F32, E4m3, R::Rn), 0x7E);
    assert_eq!(cvt(f32b(f32::NAN), F32, E4m3, R::Rn), 0x7F);
    assert_eq!(cvt(f32b(2f32.powi(-9)), F32, E4m3, R::Rn), 0x01);
    assert_eq!(cvt(f32b(2f32.powi(-10)), F32, E4m3, R::Rn), 0x00);
    assert_eq!(cvt(f32b(1.5 * 2f32.powi(-10)), F32, E4m3, R::Rn), 0x01);
    assert_eq!(cvt(f32b(-0.0), F32, E4m3, R::Rn), 0x80);
    assert_eq!(convert(f32b(-1.0), F32, E4m3, with(R::Rn, |m| m.relu = true)), 0);
    assert_eq!(cvt(0x3C00, F16, E4m3, R::Rn), 0x38);
    assert_eq!(cvt(0x7E, E4m3, F16, R::Rn), 0x5F00);
    assert_eq!(cvt(0xFE, E4m3, F16, R::Rn), 0xDF00);
    assert_eq!(cvt(0x7F, E4m3, F16, R::Rn), 0x7FFF);
    assert_eq!(cvt(0x01, E4m3, F16, R::Rn), 0x1800);
    assert_eq!(cvt(0x78, E4m3, F16, R::Rn), 0x5C00); // 256: exponent field 15 is finite in e4m3
                                                     // e5m2: IEEE-like (the top byte of an f16), max 57344 (0x7B), NaN 0x7F.
    assert_eq!(cvt(f32b(1.0), F32, E5m2, R::Rn), 0x3C);
    assert_eq!(cvt(f32b(57344.0), F32, E5m2, R::Rn), 0x7B);
    assert_eq!(cvt(f32b(61440.0), F32, E5m2, R::Rn), 0x7B); // tie rounds to inf → saturated
    assert_eq!(cvt(f32b(f32::NEG_INFINITY), F32, E5m2, R::Rn), 0xFB);
    assert_eq!(cvt(f32b(f32::NAN), F32, E5m2, R::Rn), 0x7F);
    assert_eq!(cvt(0x7C, E5m2, F16, R::Rn), 0x7C00);
    assert_eq!(cvt(0x3C, E5m2, F16, R::Rn), 0x3C00);
    assert_eq!(cvt(0x01, E5m2, F16, R::Rn), 0x0100);
}
