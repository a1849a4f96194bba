//! `.approx` / `.full` instructions: the ISA's special-case tables, and sweeps proving the error
//! stays within both the ISA bound and the (tighter) bound documented in `scalar::approx`.
//!
//! References: the pure-Rust `libm` crate (an implementation independent of the host libm the
//! crate uses), correctly rounded IEEE operations, and exact big-integer checks for `rsqrt.f64`.

use num_bigint::BigUint;
use scalar::approx;
use scalar::float::{self, Mods};
use scalar::half::{self, Bf16, F16};
use scalar::Rounding;

const CN32: u32 = 0x7FFF_FFFF;

/// `|y - t|` in units of the f32 ulp at `t` (subnormal ulp below 2^-126).
fn ulp_err_f32(y: f32, t: f64) -> f64 {
    let e = if t == 0.0 { -126 } else { (t.abs().log2().floor() as i32).max(-126) };
    (f64::from(y) - t).abs() / 2f64.powi(e - 23)
}

fn sweep(seed: u64, n: usize, lo: f64, hi: f64) -> impl Iterator<Item = f32> {
    let mut r = fastrand::Rng::with_seed(seed);
    (0..n).map(move |_| (lo + (hi - lo) * r.f64()) as f32)
}

fn random_f32(seed: u64, n: usize) -> impl Iterator<Item = f32> {
    let mut r = fastrand::Rng::with_seed(seed);
    (0..n).map(move |_| f32::from_bits(r.u32(..)))
}

#[test]
fn special_cases() {
    let (inf, ninf, nan) = (f32::INFINITY, f32::NEG_INFINITY, f32::NAN);
    let bits = |x: f32| x.to_bits();
    // rcp.approx.f32: -Inf→-0, -0→-Inf, +0→+Inf, +Inf→+0, NaN→NaN.
    assert_eq!(bits(approx::rcp_f32(ninf, false)), 0x8000_0000);
    assert_eq!(approx::rcp_f32(-0.0, false), ninf);
    assert_eq!(approx::rcp_f32(0.0, false), inf);
    assert_eq!(bits(approx::rcp_f32(inf, false)), 0);
    assert_eq!(bits(approx::rcp_f32(nan, false)), CN32);
    // sqrt.approx: -Inf, -normal → NaN; -0 → -0; +Inf → +Inf.
    assert_eq!(bits(approx::sqrt_f32(ninf, false)), CN32);
    assert_eq!(bits(approx::sqrt_f32(-1.0, false)), CN32);
    assert_eq!(bits(approx::sqrt_f32(-0.0, false)), 0x8000_0000);
    assert_eq!(approx::sqrt_f32(inf, false), inf);
    // rsqrt.approx: -0 → -Inf, +0 → +Inf, +Inf → +0, negative → NaN.
    assert_eq!(approx::rsqrt_f32(-0.0, false), ninf);
    assert_eq!(approx::rsqrt_f32(0.0, false), inf);
    assert_eq!(bits(approx::rsqrt_f32(inf, false)), 0);
    assert_eq!(bits(approx::rsqrt_f32(-4.0, false)), CN32);
    assert_eq!(approx::rsqrt_f64(-0.0), f64::NEG_INFINITY);
    assert_eq!(approx::rsqrt_f64(4.0), 0.5);
    assert_eq!(approx::rsqrt_f64(f64::from_bits(0x7FF0_0000_0000_0001)).to_bits(), 0x7FF8_0000_0000_0001);
    // sin/cos: ±Inf → NaN, sin(±0) = ±0, cos(±0) = 1.
    assert_eq!(bits(approx::sin_f32(inf, false)), CN32);
    assert_eq!(bits(approx::cos_f32(ninf, false)), CN32);
    assert_eq!(bits(approx::sin_f32(-0.0, false)), 0x8000_0000);
    assert_eq!(approx::cos_f32(-0.0, false), 1.0);
    // lg2: ±0 → -Inf, negative → NaN, +Inf → +Inf.
    assert_eq!(approx::lg2_f32(0.0, false), ninf);
    assert_eq!(approx::lg2_f32(-0.0, false), ninf);
    assert_eq!(bits(approx::lg2_f32(-1.0, false)), CN32);
    assert_eq!(bits(approx::lg2_f32(ninf, false)), CN32);
    assert_eq!(approx::lg2_f32(inf, false), inf);
    assert_eq!(approx::lg2_f32(1024.0, false), 10.0);
    assert_eq!(approx::lg2_f32(f32::from_bits(1), false), -149.0);
    assert_eq!(approx::lg2_f32(f32::from_bits(1), true), ninf); // .ftz: subnormal input is 0
                                                                // ex2: -Inf → +0, ±0 → 1, +Inf → +Inf.
    assert_eq!(bits(approx::ex2_f32(ninf, false)), 0);
    assert_eq!(approx::ex2_f32(-0.0, false), 1.0);
    assert_eq!(approx::ex2_f32(inf, false), inf);
    assert_eq!(approx::ex2_f32(-149.0, false).to_bits(), 1);
    assert_eq!(approx::ex2_f32(-149.0, true).to_bits(), 0);
    assert_eq!(approx::ex2_f32(128.0, false), inf);
    // tanh: ±Inf → ±1, ±0 → ±0, subnormals pass through.
    assert_eq!(approx::tanh_f32(ninf), -1.0);
    assert_eq!(approx::tanh_f32(inf), 1.0);
    assert_eq!(bits(approx::tanh_f32(-0.0)), 0x8000_0000);
    assert_eq!(bits(approx::tanh_f32(f32::from_bits(0x8000_0123))), 0x8000_0123);
    assert_eq!(bits(approx::tanh_f32(nan)), CN32);
    // half ex2/tanh tables.
    assert_eq!(approx::ex2_half::<F16>(0xFC00, false), 0); // -Inf → +0
    assert_eq!(approx::ex2_half::<F16>(0x8000, false), 0x3C00);
    assert_eq!(approx::ex2_half::<F16>(0x7C00, false), 0x7C00);
    assert_eq!(approx::ex2_half::<Bf16>(0x8001, true), 0x3F80); // -subnormal → 1.0 (ftz)
    assert_eq!(approx::ex2_half::<Bf16>(0x7FC0, true), 0x7FFF);
    assert_eq!(approx::tanh_half::<F16>(0xFC00), 0xBC00);
    assert_eq!(approx::tanh_half::<Bf16>(0x8000), 0x8000);
    assert_eq!(approx::tanh_half::<F16>(0x0001), 0x0001);
}

#[test]
fn div_approx_and_full() {
    // For 2^126 < |b| < 2^128: a infinite → NaN, otherwise a sign-preserving zero.
    let big = f32::from_bits(0x7F00_0000); // 2^127
    assert_eq!(approx::div_approx_f32(1.0, big, false).to_bits(), 0);
    assert_eq!(approx::div_approx_f32(-1.0, big, false).to_bits(), 0x8000_0000);
    assert_eq!(approx::div_approx_f32(1e38, -big, false).to_bits(), 0x8000_0000);
    assert_eq!(approx::div_approx_f32(f32::INFINITY, big, false).to_bits(), CN32);
    assert_eq!(approx::div_approx_f32(f32::NAN, big, false).to_bits(), CN32);
    assert_eq!(approx::div_approx_f32(f32::from_bits(0x7E80_0000), f32::from_bits(0x7E80_0000), false), 1.0); // |b| = 2^126 is in range
    assert_eq!(approx::div_approx_f32(1.0, f32::INFINITY, false).to_bits(), 0);
    // div.full is correct over the full range (so 2^127 / 2^127 = 1).
    assert_eq!(approx::div_full_f32(big, big, false), 1.0);
    assert_eq!(approx::div_full_f32(1.0, 0.0, false), f32::INFINITY);
    assert_eq!(approx::div_full_f32(f32::from_bits(1), 2.0, true).to_bits(), 0);
    // In range, both equal the correctly rounded quotient (0 ulp, ISA bound 2 ulp).
    let mut r = fastrand::Rng::with_seed(7);
    for _ in 0..20000 {
        let a = f32::from_bits(r.u32(..));
        let b = f32::from_bits(r.u32(..));
        let exact = float::div(a, b, Rounding::Rn, Mods::NONE);
        if b.abs() >= f32::MIN_POSITIVE && b.abs() <= f32::from_bits(0x7E80_0000) {
            assert_eq!(approx::div_approx_f32(a, b, false).to_bits(), exact.to_bits(), "{a:e} / {b:e}");
        }
        assert_eq!(approx::div_full_f32(a, b, false).to_bits(), exact.to_bits());
        assert_eq!(approx::rcp_f32(a, false).to_bits(), float::rcp(a, Rounding::Rn, Mods::NONE).to_bits());
        assert_eq!(approx::sqrt_f32(a, false).to_bits(), float::sqrt(a, Rounding::Rn, Mods::NONE).to_bits());
    }
}

#[test]
fn sin_cos_bounds() {
    let mut worst_2pi = 0f64;
    let mut worst_100pi = 0f64;
    let mut worst_far = 0f64;
    let pi = core::f64::consts::PI;
    let xs = sweep(1, 60000, -100.0 * pi, 100.0 * pi)
        .chain(sweep(2, 30000, -2.0 * pi, 2.0 * pi))
        .chain(sweep(3, 10000, -1e6, 1e6));
    for x in xs {
        for (ours, reference) in
            [(approx::sin_f32(x, false), libm::sin(f64::from(x))), (approx::cos_f32(x, false), libm::cos(f64::from(x)))]
        {
            let err = (f64::from(ours) - reference).abs();
            let ax = f64::from(x).abs();
            if ax <= 2.0 * pi {
                worst_2pi = worst_2pi.max(err);
            } else if ax <= 100.0 * pi {
                worst_100pi = worst_100pi.max(err);
            } else {
                worst_far = worst_far.max(err);
            }
        }
    }
    // ISA: 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi]; ours: < 2^-24.9 everywhere.
    let ours = 2f64.powf(-24.9);
    assert!(worst_2pi <= 2f64.powf(-20.5) && worst_2pi < ours, "{worst_2pi:e}");
    assert!(worst_100pi <= 2f64.powf(-14.7) && worst_100pi < ours, "{worst_100pi:e}");
    assert!(worst_far < ours, "{worst_far:e}");
}

#[test]
fn lg2_ex2_tanh_rsqrt_bounds() {
    let mut worst = [0f64; 4];
    for x in random_f32(11, 60000).chain(sweep(12, 20000, 0.4, 2.1)) {
        if x > 0.0 && x.is_finite() {
            let ours = approx::lg2_f32(x, false);
            let t = libm::log2(f64::from(x));
            if x > 0.5 && x < 2.0 {
                assert!((f64::from(ours) - t).abs() <= 2f64.powi(-22), "lg2 abs {x:e}");
            } else {
                assert!(((f64::from(ours) - t) / t).abs() <= 2f64.powi(-22), "lg2 rel {x:e}");
            }
            worst[0] = worst[0].max(ulp_err_f32(ours, t));
            let ours = approx::rsqrt_f32(x, false);
            let t = 1.0 / f64::from(x).sqrt();
            let rel = ((f64::from(ours) - t) / t).abs();
            assert!(rel <= 2f64.powf(-23.9), "rsqrt {x:e}: {rel:e}");
        }
    }
    for x in sweep(13, 60000, -151.0, 129.0).chain(sweep(14, 20000, -2.0, 2.0)) {
        let ours = approx::ex2_f32(x, false);
        let t = libm::exp2(f64::from(x));
        if t < f64::from(f32::MAX) {
            let e = ulp_err_f32(ours, t);
            assert!(e <= 2.0, "ex2 {x:e}: {e}");
            worst[1] = worst[1].max(e);
        }
    }
    for x in random_f32(15, 60000).chain(sweep(16, 20000, -10.0, 10.0)) {
        if x.is_finite() {
            let ours = approx::tanh_f32(x);
            let t = libm::tanh(f64::from(x));
            if t != 0.0 {
                assert!(((f64::from(ours) - t) / t).abs() <= 2f64.powi(-11), "tanh {x:e}");
            }
            worst[2] = worst[2].max(ulp_err_f32(ours, t));
        }
    }
    // Documented: 0.5 ulp + 2^-28 ulp (the reference itself is only f64-accurate, so allow 2^-20).
    for (name, w) in ["lg2", "ex2", "tanh"].iter().zip(worst) {
        assert!(w <= 0.5 + 2f64.powi(-20), "{name}: worst {w} ulp");
    }
}

/// `|r - 1/sqrt(x)| <= 1.5 ulp(r)`, decided exactly: with `r± = r ± 1.5 ulp`,
/// `r-^2 * x <= 1 <= r+^2 * x`.
fn rsqrt_within(x: f64, r: f64) -> bool {
    let parts = |v: f64| -> (u64, i64) {
        let b = v.to_bits();
        let e = ((b >> 52) & 0x7FF) as i64;
        let m = b & ((1 << 52) - 1);
        if e == 0 {
            (m, -1074)
        } else {
            (m | (1 << 52), e - 1075)
        }
    };
    let (mr, er) = parts(r);
    let (mx, ex) = parts(x);
    // r ± 1.5 ulp = (2 mr ± 3) * 2^(er - 1); squared times x = (2mr±3)^2 * mx * 2^(2er - 2 + ex).
    let side = |k: u64| -> core::cmp::Ordering {
        let v = BigUint::from(k) * BigUint::from(k) * BigUint::from(mx);
        let e = 2 * er - 2 + ex;
        if e >= 0 {
            (v << e as usize).cmp(&BigUint::from(1u32))
        } else {
            v.cmp(&(BigUint::from(1u32) << (-e) as usize))
        }
    };
    side(2 * mr - 3) != core::cmp::Ordering::Greater && side(2 * mr + 3) != core::cmp::Ordering::Less
}

#[test]
fn f64_rsqrt_and_gross_approximations() {
    let mut r = fastrand::Rng::with_seed(21);
    for i in 0..6000 {
        let x = f64::from_bits(r.u64(..) >> 1);
        if !x.is_finite() || x == 0.0 {
            continue;
        }
        let y = approx::rsqrt_f64(x);
        assert!(rsqrt_within(x, y), "rsqrt.f64 {x:e} -> {y:e}");
        // gross: relative error < 2^-19, low word zero.
        let g = approx::rcp_ftz_f64(if i % 2 == 0 { x } else { -x });
        let xs = f64::from_bits(x.to_bits() & 0xFFFF_FFFF_0000_0000);
        if xs >= f64::MIN_POSITIVE && 1.0 / x >= f64::MIN_POSITIVE {
            assert_eq!(g.to_bits() & 0xFFFF_FFFF, 0);
            let t = if i % 2 == 0 { 1.0 / x } else { -1.0 / x };
            assert!(((g - t) / t).abs() < 2f64.powi(-19), "rcp gross {x:e}");
            let g = approx::rsqrt_ftz_f64(x);
            let t = 1.0 / x.sqrt();
            assert!(((g - t) / t).abs() < 2f64.powi(-19), "rsqrt gross {x:e}");
            assert_eq!(g.to_bits() & 0xFFFF_FFFF, 0);
        }
    }
    // Tables (rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64).
    let sub = f64::from_bits(0x0000_0001_0000_0000);
    assert_eq!(approx::rcp_ftz_f64(f64::NEG_INFINITY).to_bits(), 0x8000_0000_0000_0000);
    assert_eq!(approx::rcp_ftz_f64(-sub), f64::NEG_INFINITY);
    assert_eq!(approx::rcp_ftz_f64(f64::from_bits(1)), f64::INFINITY); // upper word 0 → +0
    assert_eq!(approx::rcp_ftz_f64(0.0), f64::INFINITY);
    assert_eq!(approx::rcp_ftz_f64(f64::INFINITY).to_bits(), 0);
    assert_eq!(approx::rcp_ftz_f64(f64::NAN).to_bits(), approx::GROSS_F64_NAN);
    assert_eq!(approx::rcp_ftz_f64(f64::MAX).to_bits(), 0); // 1/MAX is subnormal → flushed
    assert_eq!(approx::rcp_ftz_f64(2.0), 0.5);
    assert_eq!(approx::rsqrt_ftz_f64(f64::NEG_INFINITY).to_bits(), approx::GROSS_F64_NAN);
    assert_eq!(approx::rsqrt_ftz_f64(-sub), f64::NEG_INFINITY);
    assert_eq!(approx::rsqrt_ftz_f64(-0.0), f64::NEG_INFINITY);
    assert_eq!(approx::rsqrt_ftz_f64(sub), f64::INFINITY);
    assert_eq!(approx::rsqrt_ftz_f64(f64::INFINITY).to_bits(), 0);
    assert_eq!(approx::rsqrt_ftz_f64(-1.0).to_bits(), approx::GROSS_F64_NAN);
    assert_eq!(approx::rsqrt_ftz_f64(4.0), 0.5);
}

#[test]
fn half_exhaustive() {
    for h in 0..=u16::MAX {
        for is_bf in [false, true] {
            let (x, ex2, th) = if is_bf {
                (half::to_f64::<Bf16>(h), approx::ex2_half::<Bf16>(h, true), approx::tanh_half::<Bf16>(h))
            } else {
                (half::to_f64::<F16>(h), approx::ex2_half::<F16>(h, false), approx::tanh_half::<F16>(h))
            };
            if !x.is_finite() {
                continue;
            }
            let to = |v: u16| {
                if is_bf {
                    half::to_f64::<Bf16>(v)
                } else {
                    half::to_f64::<F16>(v)
                }
            };
            let (rel_bound, abs_bound) =
                if is_bf { (2f64.powi(-7), 2f64.powi(-8)) } else { (2f64.powf(-9.9), 2f64.powf(-10.987)) };
            let xf = if is_bf && (h & 0x7F80) == 0 { 0.0 } else { x }; // ex2.ftz.bf16 flushes
            let t = libm::exp2(xf);
            let max = if is_bf { 3.3895313892515355e38 } else { 65504.0 };
            let min_normal = if is_bf { f64::from(f32::MIN_POSITIVE) } else { 2f64.powi(-14) };
            if t <= max && t >= min_normal {
                let e = ((to(ex2) - t) / t).abs();
                assert!(e <= rel_bound, "ex2 {h:#x} bf={is_bf}: {e:e}");
            }
            let t = libm::tanh(x);
            assert!((to(th) - t).abs() <= abs_bound, "tanh {h:#x} bf={is_bf}");
        }
    }
}
