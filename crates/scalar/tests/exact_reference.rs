//! Correct rounding in every mode, checked against the arbitrary-precision reference in
//! `common/mod.rs` on seeded random inputs biased to edge cases (subnormals, infinities, NaNs,
//! signed zeros, huge exponent gaps, close exponents and cancellation, half-ulp offsets that make
//! exact midpoints, values near the overflow threshold).

mod common;

use common::*;
use scalar::float::{self, Float, Mods};
use scalar::half::{self, Bf16, HalfMods, F16};
use scalar::round;
use scalar::{convert, CvtModes, CvtRounding, Format, Rounding, Type};

const N32: usize = 8000;
const N64: usize = 5000;
const NHALF: usize = 8000;

/// The NaN the public f32/f64 API must return for a NaN result with operands `ins`.
fn api_nan(fmt: Format, ins: &[u64]) -> u64 {
    if fmt == Format::F64 {
        for &x in ins {
            if is_nan_bits(fmt, x) {
                return x | (1 << 51);
            }
        }
    }
    fmt.canonical_nan()
}

fn check(fmt: Format, got: u64, want: u64, nan_want: u64, what: &str) {
    if is_nan_bits(fmt, want) {
        assert_eq!(got, nan_want, "{what}: expected NaN {nan_want:#x}, got {got:#x}");
    } else {
        assert_eq!(got, want, "{what}: got {got:#x}, want {want:#x}");
    }
}

// ------------------------------------------------------------ the reference is sane

#[test]
fn reference_round_to_nearest_matches_host() {
    let mut r = rng(1);
    for _ in 0..4000 {
        let x = gen(&mut r, Format::F64);
        let xf = f64::from_bits(x);
        if xf.is_nan() {
            continue;
        }
        assert_eq!(ref_convert(Format::F64, Format::F32, x, Rounding::Rn), u64::from((xf as f32).to_bits()), "{xf:e}");
        let v = r.i64(..) >> r.u32(0..63);
        assert_eq!(ref_from_int(Format::F64, i128::from(v), Rounding::Rn), (v as f64).to_bits());
        assert_eq!(ref_from_int(Format::F32, i128::from(v), Rounding::Rn), u64::from((v as f32).to_bits()));
        let u = r.u64(..) >> r.u32(0..64);
        assert_eq!(ref_from_int(Format::F32, i128::from(u), Rounding::Rn), u64::from((u as f32).to_bits()));
    }
    for fmt in [Format::F32, Format::F64] {
        for _ in 0..3000 {
            let a = gen(&mut r, fmt);
            let b = gen_related(&mut r, fmt, a);
            let c = gen_related(&mut r, fmt, a);
            let (want_add, want_mul, want_div, want_fma, want_sqrt) = (
                ref_add(fmt, a, b, &[Rounding::Rn])[0],
                ref_mul(fmt, a, b, &[Rounding::Rn])[0],
                ref_div(fmt, a, b, &[Rounding::Rn])[0],
                ref_fma(fmt, a, b, c, &[Rounding::Rn])[0],
                ref_sqrt(fmt, a, &[Rounding::Rn])[0],
            );
            let host_bits: [u64; 5] = if fmt == Format::F32 {
                let (x, y, z) = (f32::from_bits(a as u32), f32::from_bits(b as u32), f32::from_bits(c as u32));
                [(x + y), (x * y), (x / y), x.mul_add(y, z), x.sqrt()].map(|v| u64::from(v.to_bits()))
            } else {
                let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
                [(x + y), (x * y), (x / y), x.mul_add(y, z), x.sqrt()].map(f64::to_bits)
            };
            for (w, h) in [want_add, want_mul, want_div, want_fma, want_sqrt].into_iter().zip(host_bits) {
                if is_nan_bits(fmt, w) {
                    assert!(is_nan_bits(fmt, h));
                } else {
                    assert_eq!(w, h, "reference vs host {a:#x} {b:#x} {c:#x}");
                }
            }
        }
    }
}

// ------------------------------------------------------------ f32 / f64 arithmetic

type ModeFn = Box<dyn Fn(Rounding) -> u64>;

fn run_binary<F: Float>(seed: u64, n: usize, name: &str) {
    let fmt = F::FMT;
    let mut r = rng(seed);
    for _ in 0..n {
        let a = gen(&mut r, fmt);
        let b = gen_related(&mut r, fmt, a);
        let (fa, fb) = (F::from_bits64(a), F::from_bits64(b));
        let (want, got_api, got_soft): (Vec<u64>, ModeFn, ModeFn) = match name {
            "add" => (
                ref_add(fmt, a, b, &MODES),
                Box::new(move |m| float::add(fa, fb, m, Mods::NONE).bits()),
                Box::new(move |m| round::add_bits(fmt, a, b, m)),
            ),
            "sub" => (
                ref_add(fmt, a, if is_nan_bits(fmt, b) { b } else { b ^ fmt.sign_bit() }, &MODES),
                Box::new(move |m| float::sub(fa, fb, m, Mods::NONE).bits()),
                Box::new(move |m| round::sub_bits(fmt, a, b, m)),
            ),
            "mul" => (
                ref_mul(fmt, a, b, &MODES),
                Box::new(move |m| float::mul(fa, fb, m, Mods::NONE).bits()),
                Box::new(move |m| round::mul_bits(fmt, a, b, m)),
            ),
            "div" => (
                ref_div(fmt, a, b, &MODES),
                Box::new(move |m| float::div(fa, fb, m, Mods::NONE).bits()),
                Box::new(move |m| round::div_bits(fmt, a, b, m)),
            ),
            _ => unreachable!(),
        };
        for (i, &m) in MODES.iter().enumerate() {
            let ctx = format!("{name} {m:?} {a:#x} {b:#x}");
            check(fmt, got_api(m), want[i], api_nan(fmt, &[a, b]), &ctx);
            check(fmt, got_soft(m), want[i], fmt.canonical_nan(), &ctx);
        }
    }
}

fn run_unary_fma<F: Float>(seed: u64, n: usize) {
    let fmt = F::FMT;
    let mut r = rng(seed);
    for _ in 0..n {
        let a = gen(&mut r, fmt);
        let b = gen_related(&mut r, fmt, a);
        // c near the product's magnitude to exercise cancellation
        let p = F::from_bits64(a).rn_mul(F::from_bits64(b)).bits();
        let c =
            if r.bool() && !is_nan_bits(fmt, p) { gen_related(&mut r, fmt, p) } else { gen_related(&mut r, fmt, a) };
        let want = ref_fma(fmt, a, b, c, &MODES);
        let sq = ref_sqrt(fmt, a, &MODES);
        let (fa, fb, fc) = (F::from_bits64(a), F::from_bits64(b), F::from_bits64(c));
        for (i, &m) in MODES.iter().enumerate() {
            let ctx = format!("fma {m:?} {a:#x} {b:#x} {c:#x}");
            check(fmt, float::fma(fa, fb, fc, m, Mods::NONE).bits(), want[i], api_nan(fmt, &[a, b, c]), &ctx);
            check(fmt, round::fma_bits(fmt, a, b, c, m), want[i], fmt.canonical_nan(), &ctx);
            let ctx = format!("sqrt {m:?} {a:#x}");
            check(fmt, float::sqrt(fa, m, Mods::NONE).bits(), sq[i], api_nan(fmt, &[a]), &ctx);
            check(fmt, round::sqrt_bits(fmt, a, m), sq[i], fmt.canonical_nan(), &ctx);
            // rcp = 1 / a
            let one = F::ONE.bits();
            let w = ref_div(fmt, one, a, &[m])[0];
            check(fmt, float::rcp(fa, m, Mods::NONE).bits(), w, api_nan(fmt, &[a]), &format!("rcp {m:?} {a:#x}"));
        }
    }
}

#[test]
fn f32_add_sub_all_modes() {
    run_binary::<f32>(10, N32, "add");
    run_binary::<f32>(11, N32, "sub");
}

#[test]
fn f32_mul_div_all_modes() {
    run_binary::<f32>(12, N32, "mul");
    run_binary::<f32>(13, N32, "div");
}

#[test]
fn f32_fma_sqrt_rcp_all_modes() {
    run_unary_fma::<f32>(14, N32);
}

#[test]
fn f64_add_sub_all_modes() {
    run_binary::<f64>(20, N64, "add");
    run_binary::<f64>(21, N64, "sub");
}

#[test]
fn f64_mul_div_all_modes() {
    run_binary::<f64>(22, N64, "mul");
    run_binary::<f64>(23, N64, "div");
}

#[test]
fn f64_fma_sqrt_rcp_all_modes() {
    run_unary_fma::<f64>(24, N64);
}

/// Hand-picked directed-rounding cases whose answers follow from the IEEE 754 definitions.
#[test]
fn directed_rounding_landmarks() {
    let one = 1.0f32;
    let tiny = f32::from_bits(1); // 2^-149
    let max = f32::MAX;
    let m = Mods::NONE;
    // 1 + 2^-149: inexact, just above 1.
    assert_eq!(float::add(one, tiny, Rounding::Rp, m), f32::from_bits(0x3F80_0001));
    assert_eq!(float::add(one, tiny, Rounding::Rz, m), one);
    assert_eq!(float::add(one, tiny, Rounding::Rm, m), one);
    assert_eq!(float::add(one, -tiny, Rounding::Rm, m), f32::from_bits(0x3F7F_FFFF));
    assert_eq!(float::add(one, -tiny, Rounding::Rz, m), f32::from_bits(0x3F7F_FFFF));
    assert_eq!(float::add(one, -tiny, Rounding::Rn, m), one);
    // overflow: directed modes toward zero give MAX, away give inf
    assert_eq!(float::mul(max, 2.0, Rounding::Rz, m), max);
    assert_eq!(float::mul(max, 2.0, Rounding::Rm, m), max);
    assert_eq!(float::mul(max, 2.0, Rounding::Rp, m), f32::INFINITY);
    assert_eq!(float::mul(-max, 2.0, Rounding::Rp, m), -max);
    assert_eq!(float::mul(-max, 2.0, Rounding::Rm, m), f32::NEG_INFINITY);
    // underflow: the smallest subnormal or zero
    assert_eq!(float::mul(tiny, 0.5, Rounding::Rp, m).to_bits(), 1);
    assert_eq!(float::mul(tiny, 0.5, Rounding::Rn, m).to_bits(), 0); // tie to even (0)
    assert_eq!(float::mul(tiny, 0.75, Rounding::Rn, m).to_bits(), 1);
    assert_eq!(float::mul(-tiny, 0.5, Rounding::Rm, m).to_bits(), 0x8000_0001);
    assert_eq!(float::mul(-tiny, 0.5, Rounding::Rz, m).to_bits(), 0x8000_0000);
    // exact zero sums: +0 except toward -inf
    assert_eq!(float::add(1.0f32, -1.0, Rounding::Rm, m).to_bits(), 0x8000_0000);
    assert_eq!(float::add(1.0f32, -1.0, Rounding::Rp, m).to_bits(), 0);
    assert_eq!(float::add(-0.0f32, -0.0, Rounding::Rp, m).to_bits(), 0x8000_0000);
    assert_eq!(float::add(0.0f32, -0.0, Rounding::Rm, m).to_bits(), 0x8000_0000);
    assert_eq!(float::add(0.0f32, -0.0, Rounding::Rn, m).to_bits(), 0);
    // fma: 0 * x + (-0) keeps the sum's zero rules; product exactness matters
    assert_eq!(float::fma(0.0f32, -3.0, 0.0, Rounding::Rn, m).to_bits(), 0);
    assert_eq!(float::fma(0.0f32, -3.0, -0.0, Rounding::Rn, m).to_bits(), 0x8000_0000);
    // fma(1+2^-23, 1-2^-23, -1) = -2^-46 exactly (a separate mul would give 0)
    let a = f32::from_bits(0x3F80_0001);
    let b = f32::from_bits(0x3F7F_FFFE);
    assert_eq!(float::fma(a, b, -1.0, Rounding::Rz, m), -(2.0f32.powi(-46)));
    // f64 sqrt(2) in all modes bracket the true value
    let s_rz = float::sqrt(2.0f64, Rounding::Rz, m);
    let s_rp = float::sqrt(2.0f64, Rounding::Rp, m);
    assert_eq!(s_rp.to_bits(), s_rz.to_bits() + 1);
    assert!(s_rz * s_rz < 2.0 || float::mul(s_rz, s_rz, Rounding::Rz, m) < 2.0);
    // division 1/3 in f32
    assert_eq!(float::div(1.0f32, 3.0, Rounding::Rz, m).to_bits(), 0x3EAA_AAAA);
    assert_eq!(float::div(1.0f32, 3.0, Rounding::Rp, m).to_bits(), 0x3EAA_AAAB);
    assert_eq!(float::div(1.0f32, 3.0, Rounding::Rn, m).to_bits(), 0x3EAA_AAAB);
    assert_eq!(float::div(-1.0f32, 3.0, Rounding::Rp, m).to_bits(), 0xBEAA_AAAA);
}

// ------------------------------------------------------------ f16 / bf16 arithmetic

fn run_half<H: half::Half>(seed: u64) {
    let fmt = H::FMT;
    let mut r = rng(seed);
    let hm = HalfMods::NONE;
    for _ in 0..NHALF {
        let a = gen(&mut r, fmt);
        let b = gen_related(&mut r, fmt, a);
        let c = gen_related(&mut r, fmt, a);
        let add = ref_add(fmt, a, b, &MODES);
        let mul = ref_mul(fmt, a, b, &MODES);
        let fma = ref_fma(fmt, a, b, c, &MODES);
        let subw = ref_add(fmt, a, if is_nan_bits(fmt, b) { b } else { b ^ fmt.sign_bit() }, &MODES);
        let (x, y, z) = (a as u16, b as u16, c as u16);
        for (i, &m) in MODES.iter().enumerate() {
            let nan = fmt.canonical_nan();
            check(fmt, u64::from(half::add::<H>(x, y, m, hm)), add[i], nan, &format!("hadd {m:?} {a:#x} {b:#x}"));
            check(fmt, u64::from(half::sub::<H>(x, y, m, hm)), subw[i], nan, &format!("hsub {m:?} {a:#x} {b:#x}"));
            check(fmt, u64::from(half::mul::<H>(x, y, m, hm)), mul[i], nan, &format!("hmul {m:?} {a:#x} {b:#x}"));
            check(
                fmt,
                u64::from(half::fma::<H>(x, y, z, m, hm)),
                fma[i],
                nan,
                &format!("hfma {m:?} {a:#x} {b:#x} {c:#x}"),
            );
        }
    }
}

#[test]
fn f16_arithmetic_all_modes() {
    run_half::<F16>(30);
}

#[test]
fn bf16_arithmetic_all_modes() {
    run_half::<Bf16>(31);
}

// ------------------------------------------------------------ conversions

#[test]
fn float_narrowing_all_modes() {
    let mut r = rng(40);
    let cvt_r = |m: Rounding| match m {
        Rounding::Rn => CvtRounding::Rn,
        Rounding::Rna => CvtRounding::Rna,
        Rounding::Rz => CvtRounding::Rz,
        Rounding::Rm => CvtRounding::Rm,
        Rounding::Rp => CvtRounding::Rp,
    };
    for _ in 0..6000 {
        // f64 sources biased to the destination ranges: scale a random f64 near f32/f16 exponents
        let mut x = gen(&mut r, Format::F64);
        if r.bool() {
            let e = (1023 + r.i64(-160..=140)) as u64;
            x = (x & 0x800F_FFFF_FFFF_FFFF) | (e << 52);
        }
        let y = gen(&mut r, Format::F32);
        for m in MODES {
            for (to, tt) in [(Format::F32, Type::F32), (Format::F16, Type::F16), (Format::BF16, Type::Bf16)] {
                let want = ref_convert(Format::F64, to, x, m);
                let got = convert(x, Type::F64, tt, CvtModes::rounding(cvt_r(m)));
                check(to, got, want, to.canonical_nan(), &format!("cvt f64->{tt:?} {m:?} {x:#x}"));
            }
            for (to, tt) in [(Format::F16, Type::F16), (Format::BF16, Type::Bf16)] {
                let want = ref_convert(Format::F32, to, y, m);
                let got = convert(y, Type::F32, tt, CvtModes::rounding(cvt_r(m)));
                check(to, got, want, to.canonical_nan(), &format!("cvt f32->{tt:?} {m:?} {y:#x}"));
            }
            let h = half::from_f64::<F16>(f64::from_bits(x), m);
            check(Format::F16, u64::from(h), ref_convert(Format::F64, Format::F16, x, m), 0x7FFF, "from_f64");
            let h = half::from_f32::<Bf16>(f32::from_bits(y as u32), m);
            check(Format::BF16, u64::from(h), ref_convert(Format::F32, Format::BF16, y, m), 0x7FFF, "from_f32");
        }
        // widening is exact
        let h = gen(&mut r, Format::F16) as u16;
        if !is_nan_bits(Format::F16, u64::from(h)) {
            assert_eq!(
                u64::from(half::to_f32::<F16>(h).to_bits()),
                ref_convert(Format::F16, Format::F32, u64::from(h), Rounding::Rz)
            );
            assert_eq!(
                half::to_f64::<F16>(h).to_bits(),
                ref_convert(Format::F16, Format::F64, u64::from(h), Rounding::Rz)
            );
            assert_eq!(
                convert(u64::from(h), Type::F16, Type::F64, CvtModes::default()),
                half::to_f64::<F16>(h).to_bits()
            );
        }
    }
}

#[test]
fn int_to_float_all_modes() {
    let mut r = rng(41);
    let types = [Type::U8, Type::U16, Type::U32, Type::U64, Type::S8, Type::S16, Type::S32, Type::S64];
    let dests =
        [(Type::F16, Format::F16), (Type::Bf16, Format::BF16), (Type::F32, Format::F32), (Type::F64, Format::F64)];
    let cvt_r = [CvtRounding::Rn, CvtRounding::Rna, CvtRounding::Rz, CvtRounding::Rm, CvtRounding::Rp];
    for _ in 0..3000 {
        let raw = r.u64(..) >> r.u32(0..64);
        let raw = if r.u32(0..8) == 0 {
            [0, 1, u64::MAX, 1 << 63, (1 << 63) - 1, 0xFFFF_FFFF, 0x8000_0000][r.usize(0..7)]
        } else {
            raw
        };
        for &t in &types {
            let bits = raw & (u64::MAX >> (64 - t.bits()));
            let v: i128 =
                if t.is_signed() { i128::from(scalar::convert::sign_extend(bits, t) as i64) } else { i128::from(bits) };
            for &(dt, df) in &dests {
                for (i, &m) in MODES.iter().enumerate() {
                    let want = ref_from_int(df, v, m);
                    let got = convert(bits, t, dt, CvtModes::rounding(cvt_r[i]));
                    assert_eq!(got, want, "cvt {t:?}->{dt:?} {m:?} {v}");
                }
            }
        }
    }
}

#[test]
fn float_to_int_all_modes() {
    let mut r = rng(42);
    let ints = [Type::U8, Type::U16, Type::U32, Type::U64, Type::S8, Type::S16, Type::S32, Type::S64];
    let srcs =
        [(Type::F16, Format::F16), (Type::Bf16, Format::BF16), (Type::F32, Format::F32), (Type::F64, Format::F64)];
    let irnd = [
        (CvtRounding::Rni, Rounding::Rn),
        (CvtRounding::Rzi, Rounding::Rz),
        (CvtRounding::Rmi, Rounding::Rm),
        (CvtRounding::Rpi, Rounding::Rp),
    ];
    for _ in 0..2500 {
        for &(st, sf) in &srcs {
            let mut x = gen(&mut r, sf);
            if r.bool() {
                // magnitudes around the integer ranges: exponent 0..70
                let e = (sf.bias() as u64 + r.u64(0..70)).min((1 << sf.exp_bits) - 2);
                x = (x & !(((1u64 << sf.exp_bits) - 1) << sf.mant_bits)) | (e << sf.mant_bits);
            }
            for &dt in &ints {
                for &(cr, m) in &irnd {
                    let got = convert(x, st, dt, CvtModes::rounding(cr));
                    let n = dt.bits();
                    let (lo, hi): (i128, i128) = if dt.is_signed() {
                        (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
                    } else {
                        (0, (1i128 << n) - 1)
                    };
                    let want = match decode(sf, x) {
                        Val::Nan => {
                            if st == Type::F64 || n == 64 {
                                1u64 << (n - 1)
                            } else {
                                0
                            }
                        }
                        Val::Inf(neg) => (if neg { lo } else { hi }) as u64 & (u64::MAX >> (64 - n)),
                        Val::Fin { .. } => {
                            let v = ref_to_integer(sf, x, m).unwrap();
                            let v: i128 = v.clamp(lo.into(), hi.into()).try_into().unwrap();
                            (v as u64) & (u64::MAX >> (64 - n))
                        }
                    };
                    assert_eq!(got, want, "cvt {st:?}->{dt:?} {cr:?} {x:#x}");
                }
            }
        }
    }
}

#[test]
fn integral_rounding_all_modes() {
    let mut r = rng(43);
    let cr = [
        (CvtRounding::Rni, Rounding::Rn),
        (CvtRounding::Rzi, Rounding::Rz),
        (CvtRounding::Rmi, Rounding::Rm),
        (CvtRounding::Rpi, Rounding::Rp),
    ];
    for _ in 0..4000 {
        for (t, f) in
            [(Type::F32, Format::F32), (Type::F64, Format::F64), (Type::F16, Format::F16), (Type::Bf16, Format::BF16)]
        {
            let x = gen(&mut r, f);
            for &(c, m) in &cr {
                let got = convert(x, t, t, CvtModes::rounding(c));
                let want = match decode(f, x) {
                    Val::Nan => f.canonical_nan(),
                    Val::Inf(_) => x,
                    Val::Fin { neg, .. } => {
                        let v = ref_to_integer(f, x, m).unwrap();
                        if v == 0.into() {
                            if neg {
                                f.sign_bit()
                            } else {
                                0
                            }
                        } else {
                            let mag = v.magnitude().clone();
                            round_ref(f, neg, &mag, 0, false, Rounding::Rn)
                        }
                    }
                };
                assert_eq!(got, want, "cvt.{c:?} {t:?} {x:#x}");
                if t == Type::F32 {
                    let api = float::round_integral(f32::from_bits(x as u32), m, Mods::NONE).to_bits();
                    assert_eq!(u64::from(api), want);
                }
            }
        }
    }
}
