//! corpus/cuda/float_math.cu: f32/f64 arithmetic with explicit rounding, approximate instructions and libm
//! functions, on every variant including `-use_fast_math`.
//!
//! Tolerances:
//! - Correctly rounded operations (`add/sub/mul/fma/div/sqrt/rcp` with `.rn/.rz/.rm/.rp`, `min/max`,
//!   `copysign`, `abs`, `.sat`, `.ftz`, `fmodf`/`remainderf`, which are exact) are compared **exactly**: the
//!   reference rounds each operation from the exact value (`conformance::fp`).
//! - `.approx`/`.full` instructions get the error bound the PTX ISA documents (`div.approx`/`div.full`:
//!   2 ulp; `rcp.approx`: 1 ulp; `sqrt.approx`: 2^-23 relative; `rsqrt.approx.f32`: 2^-22.9 relative;
//!   `sin/cos.approx`: 2^-20.5 absolute on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi]; `lg2.approx`: 2^-22
//!   absolute on (0.5, 2), else relative; `ex2.approx`: 2 ulp; `tanh.approx`: 2^-11 relative; the "gross"
//!   f64 `rcp/rsqrt.approx`: 2^-19 relative). Intrinsics built on them (`__expf = ex2(x * log2 e)`, ...)
//!   add the error of their argument's rounding (for `__expf`, `|x| * 2^-24` relative).
//! - Accurate libm functions get the maximum ulp errors of the CUDA Programming Guide (at most 4 ulp, used
//!   as a bound for all of them); with `-use_fast_math` the single-precision ones become the intrinsics above.
//! - An output that is a sum of such terms is compared within the sum of the terms' bounds plus the
//!   rounding of each addition (`conformance::math::Approx`), so cancellation cannot hide an error.

use conformance::prelude::*;
use std::f64::consts::PI;

const SRC: &str = "float_math";

fn p2(e: f64) -> f64 {
    e.exp2()
}

/// f32 result of a sum of approximated terms: the expected value and its tolerance (the bound of the terms,
/// each f32 addition, and the final rounding to f32).
fn f32_sum(terms: &[Approx]) -> (f32, Tol) {
    let s = math::sum(terms, math::U32);
    let v = s.value as f32;
    let err = s.err + s.value.abs() * math::U32 * 2.0;
    (v, Tol::Abs(err.max(f64::from(f32::MIN_POSITIVE))))
}

fn f64_sum(terms: &[Approx]) -> (f64, Tol) {
    let s = math::sum(terms, math::U64);
    let err = s.err + s.value.abs() * math::U64 * 2.0;
    (s.value, Tol::Abs(err.max(f64::MIN_POSITIVE)))
}

/// An exact f32 term (a correctly rounded result the reference computed exactly).
fn ex(v: f32) -> Approx {
    Approx::exact(f64::from(v))
}

/// A term within `ulps` f32 ulps (relative `ulps * 2^-23`).
fn ulps32(v: f64, ulps: f64) -> Approx {
    Approx::term(v, ulps * p2(-23.0), ulps * p2(-149.0))
}

fn ulps64(v: f64, ulps: f64) -> Approx {
    Approx::term(v, ulps * p2(-52.0), 0.0)
}

// ---- f32_arith ------------------------------------------------------------------------------------------

/// IEEE `remainder`: x - n*y with n = x/y rounded to nearest even (exact).
fn remainder(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        return f64::NAN;
    }
    if y.is_infinite() {
        return x;
    }
    let ay = y.abs();
    let a = x.abs() % (2.0 * ay);
    let (odd, t) = if a >= ay { (true, a - ay) } else { (false, a) };
    let r = if t > ay / 2.0 || (t == ay / 2.0 && odd) { t - ay } else { t };
    if x.is_sign_negative() {
        -r
    } else {
        r
    }
}

fn f32_arith_inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let rows: &[(f32, f32, f32)] = &[
        (0.0, 1.0, 1.0),
        (-0.0, 2.0, -0.0),
        (1.0, 0.0, 3.0),
        (f32::INFINITY, 1.0, 2.0),
        (f32::NAN, 1.0, 1.0),
        (1.0, f32::INFINITY, 2.0),
        (2.0, 3.0, f32::NEG_INFINITY),
        (3.0, 3.0, 3.0),
        (5.0, 2.0, 0.5),
        (-7.0, 2.0, 0.25),
        (5.5, -2.0, 4.0),
        (1e10, 3.0, 7.0),
        (0.1, 0.2, 0.3),
        (1.0, 1e-7, -1.0),
        (16777216.0, 1.0, 0.5),
        (0.75, 0.5, -0.125),
        (2.0, 0.25, 0.5),
        (-3.0, -0.5, 0.5),
        (1.5, 1.5, -2.25),
        (100.0, 1e-3, 1e6),
    ];
    let mut rng = Rng::new(500);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &(x, y, z) in rows {
        a.push(x);
        b.push(y);
        c.push(z);
    }
    while a.len() < 96 {
        let scale = if rng.next_u32().is_multiple_of(2) { 100.0 } else { 2.0 };
        a.push(rng.f32_in(-scale, scale));
        b.push(rng.f32_in(-scale, scale));
        c.push(rng.f32_in(-scale, scale));
    }
    (a, b, c)
}

#[test]
fn f32_arith() {
    use Round::*;
    let (a, b, c) = f32_arith_inputs();
    let n = a.len();
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::input(&c), Arg::output::<f32>(16 * n)];
    let case = Case::new("f32_arith", Shape::linear(1, n as u32), args, move |ctx| {
        let fast = ctx.variant.fast_math();
        let mut out = Vec::new();
        let mut tols = Vec::new();
        for i in 0..n {
            let (x, y, z) = (a[i], b[i], c[i]);
            let (xd, yd, zd) = (f64::from(x), f64::from(y), f64::from(z));
            let mut row: Vec<(f32, Tol)> = Vec::new();
            let exact = |v: f32| (v, Tol::Exact);
            row.push(exact(fp::add_f32(x, y, Rn) + fp::add_f32(x, z, Rz)));
            row.push(exact(fp::add_f32(x, y, Rm) - fp::add_f32(y, z, Rp)));
            row.push(exact(fp::sub_f32(x, y, Rn) * fp::mul_f32(x, y, Rz)));
            row.push(exact(fp::mul_f32(x, z, Rm) + fp::mul_f32(y, z, Rp)));
            row.push(exact(fp::fma_f32(x, y, z, Rn) + fp::fma_f32(x, y, z, Rz)));
            row.push(exact(fp::fma_f32(x, y, z, Rm) - fp::fma_f32(x, y, z, Rp)));
            // x / y: div.rn, or div.approx under -use_fast_math
            row.push(if fast { (x / y, Tol::Ulp(2)) } else { exact(x / y) });
            // __fdividef: div.approx, 2 ulp
            row.push((x / y, Tol::Ulp(2)));
            row.push(exact(fp::div_f32(x, y, Rz) + fp::div_f32(1.0, z, Rn)));
            // sqrtf (sqrt.rn; sqrt.approx with fast math) + __fsqrt_rn + rsqrtf (rsqrt.approx, 2^-22.9)
            let s1 = if fast { Approx::term(xd.sqrt(), p2(-23.0), 0.0) } else { ex(x.sqrt()) };
            row.push(f32_sum(&[s1, ex(y.sqrt()), Approx::term(1.0 / zd.sqrt(), p2(-22.9), 0.0)]));
            row.push(exact(x.min(y) + y.max(z)));
            row.push(exact((x.copysign(y) + z.abs()) + x));
            // div.full (2 ulp) + rcp.approx.ftz (1 ulp) + sqrt.approx + rsqrt.approx.ftz + div.approx.ftz
            let q = xd / yd;
            row.push(f32_sum(&[
                ulps32(q, 2.0),
                ulps32(1.0 / zd, 1.0),
                Approx::term(xd.sqrt(), p2(-23.0), 0.0),
                Approx::term(1.0 / yd.sqrt(), p2(-22.9), 0.0),
                ulps32(q, 2.0),
            ]));
            let addftz = fp::ftz(x + y);
            let mulsat = fp::sat(x * y);
            let fmasat = fp::sat(fp::ftz(x.mul_add(y, z)));
            row.push(exact(addftz + mulsat + fmasat));
            let nan_minmax = if x.is_nan() || y.is_nan() { f32::NAN } else { x.min(y) + x.max(y) };
            row.push(exact(if ctx.arch() >= 80 { nan_minmax } else { 0.0 }));
            row.push(exact((xd % yd) as f32 + remainder(xd, yd) as f32));
            for (v, t) in row {
                out.push(v);
                tols.push(t);
            }
        }
        Expect::Outputs(vec![Check::new(3, "out", Values::F32(out), Rule::Each(tols))])
    });
    check(SRC, case);
}

// ---- f32_special ----------------------------------------------------------------------------------------

/// `sin/cos.approx.f32` absolute error bound.
fn sincos_err(x: f64) -> f64 {
    if x.abs() <= 2.0 * PI {
        p2(-20.5)
    } else if x.abs() <= 100.0 * PI {
        p2(-14.7)
    } else {
        2.0
    }
}

/// `lg2.approx.f32`: absolute 2^-22 on (0.5, 2), else relative 2^-22.
fn lg2_approx(x: f64) -> Approx {
    let v = x.log2();
    if x > 0.5 && x < 2.0 {
        Approx::term(v, 0.0, p2(-22.0))
    } else {
        Approx::term(v, p2(-22.0), 0.0)
    }
}

/// `ex2.approx.f32` of an argument `t` that itself is off by up to `t_err`: 2 ulp plus the argument error.
fn ex2_approx(t: f64, t_err: f64) -> Approx {
    Approx::term(t.exp2(), 2.0 * p2(-23.0) + t_err * std::f64::consts::LN_2 * 1.01, 0.0)
}

/// `__expf(x)` = ex2.approx(x * log2(e)), the product rounded to f32.
fn expf_fast(x: f64) -> Approx {
    let t = x * std::f64::consts::LOG2_E;
    ex2_approx(t, t.abs() * math::U32 * 2.0)
}

fn exp10f_fast(x: f64) -> Approx {
    let t = x * std::f64::consts::LOG2_10;
    ex2_approx(t, t.abs() * math::U32 * 2.0)
}

/// `__logf(x)` = lg2.approx(x) * ln 2.
fn logf_fast(x: f64) -> Approx {
    let l = lg2_approx(x);
    Approx { value: x.ln(), err: l.err * std::f64::consts::LN_2 + x.ln().abs() * math::U32 * 2.0 }
}

/// `__powf(x, y)` = ex2.approx(y * lg2.approx(x)).
fn powf_fast(x: f64, y: f64) -> Approx {
    let l = lg2_approx(x);
    let t = y * l.value;
    ex2_approx(t, y.abs() * l.err + t.abs() * math::U32 * 2.0)
}

/// `__tanf(x)` = __fdividef(__sinf(x), __cosf(x)).
fn tanf_fast(x: f64) -> Approx {
    let (s, c) = (x.sin(), x.cos());
    let e = sincos_err(x);
    let err = e / c.abs() + s.abs() * e / (c * c) + (s / c).abs() * 2.0 * p2(-23.0);
    Approx { value: s / c, err }
}

/// An accurate single-precision libm result (at most 4 ulp).
fn libm32(v: f64) -> Approx {
    ulps32(v, 4.0)
}

fn f32_special_inputs() -> Vec<f32> {
    let mut rng = Rng::new(501);
    let edges = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        3.0,
        10.0,
        -10.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0e-40,
        -1.0e-40,
        f32::MIN_POSITIVE,
        1.0e-30,
        100.0,
        -100.0,
        0.125,
        1.7,
    ];
    rng.fill(96, &edges, |r| loop {
        let x = if r.next_u32() % 3 == 0 { r.f32_in(0.01, 8.0) } else { r.f32_in(-8.0, 8.0) };
        // keep __tanf away from its poles, where any error bound is meaningless
        if f64::from(x).cos().abs() > 0.05 {
            break x;
        }
    })
}

#[test]
fn f32_special() {
    let input = f32_special_inputs();
    let n = input.len();
    let args = vec![Arg::input(&input), Arg::output::<f32>(8 * n), Arg::output::<i32>(2 * n)];
    let case = Case::new("f32_special", Shape::linear(1, n as u32), args, move |ctx| {
        let fast = ctx.variant.fast_math();
        let mut out = Vec::new();
        let mut tols = Vec::new();
        let mut flags = Vec::new();
        for &xf in &input {
            let x = f64::from(xf);
            // Under -use_fast_math every f32 instruction is .ftz and sees a subnormal input as zero; otherwise
            // the intrinsics' lg2/sin/cos/ex2 get the subnormal itself.
            let xzf = if fast { fp::ftz(xf) } else { xf };
            let xz = f64::from(xzf);
            let sin_a = Approx::term(xz.sin(), 0.0, sincos_err(x));
            let cos_a = Approx::term(xz.cos(), 0.0, sincos_err(x));
            let mut rows = vec![
                f32_sum(&[sin_a, cos_a]),
                f32_sum(&[lg2_approx(xz), ex2_approx(xz, 0.0), exp10f_fast(xz)]),
                f32_sum(&[expf_fast(xz), logf_fast(xz), powf_fast(xz, 1.5)]),
                f32_sum(&[tanf_fast(xz), ex(fp::sqrt_f32(xzf, Round::Rm))]),
            ];
            let tanh = if ctx.arch() >= 75 { Approx::term(x.tanh(), p2(-11.0), p2(-30.0)) } else { libm32(x.tanh()) };
            rows.push(f32_sum(&[tanh]));
            if fast {
                let tanh_fast =
                    if ctx.arch() >= 75 { Approx::term(x.tanh(), p2(-11.0), p2(-30.0)) } else { libm32(x.tanh()) };
                rows.push(f32_sum(&[sin_a, cos_a, tanf_fast(xz)]));
                rows.push(f32_sum(&[expf_fast(xz), logf_fast(xz), powf_fast(xz, 2.5), libm32(math::erf(x))]));
                rows.push(f32_sum(&[tanh_fast, libm32(x.atan2(1.0)), exp10f_fast(xz), libm32(x.ln_1p())]));
            } else {
                rows.push(f32_sum(&[libm32(x.sin()), libm32(x.cos()), libm32(x.tan())]));
                rows.push(f32_sum(&[libm32(x.exp()), libm32(x.ln()), libm32(x.powf(2.5)), libm32(math::erf(x))]));
                rows.push(f32_sum(&[libm32(x.tanh()), libm32(x.atan2(1.0)), libm32(10f64.powf(x)), libm32(x.ln_1p())]));
            }
            for (v, t) in rows {
                out.push(v);
                tols.push(t);
            }
            let f = i32::from(xf.is_nan())
                | i32::from(xf.is_infinite()) << 1
                | i32::from(xf.is_finite()) << 2
                | i32::from(xf.is_sign_negative()) << 3;
            // testp: zero counts as normal; subnormal excludes zero
            let normal = xf == 0.0 || xf.is_normal();
            let tp = i32::from(xf.is_finite())
                | i32::from(xf.is_infinite()) << 1
                | i32::from(!xf.is_nan()) << 2
                | i32::from(xf.is_nan()) << 3
                | i32::from(normal) << 4
                | i32::from(xf.is_subnormal()) << 5;
            flags.push(f);
            flags.push(tp);
        }
        Expect::Outputs(vec![
            Check::new(1, "out", Values::F32(out), Rule::Each(tols)),
            Check::exact(2, "flags", Values::I32(flags)),
        ])
    });
    check(SRC, case);
}

// ---- f64_arith ------------------------------------------------------------------------------------------

fn f64_inputs() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let rows: &[(f64, f64, f64)] = &[
        (0.0, 1.0, 1.0),
        (-0.0, 2.0, -0.0),
        (1.0, 0.5, 3.0),
        (f64::INFINITY, 1.0, 2.0),
        (f64::NAN, 1.0, 1.0),
        (1.0, f64::INFINITY, 2.0),
        (2.0, 3.0, f64::NEG_INFINITY),
        (3.0, 3.0, 3.0),
        (5.0, 2.0, 0.5),
        (0.1, 0.2, 0.3),
        (1.0, 1e-17, -1.0),
        (2.5, 0.25, 1e-310),
        (1e-310, 1.5, -2.0),
        (4.0, 7.5, 1e300),
    ];
    let mut rng = Rng::new(502);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &(x, y, z) in rows {
        a.push(x);
        b.push(y);
        c.push(z);
    }
    while a.len() < 96 {
        a.push(rng.f64_in(0.05, 6.0));
        b.push(rng.f64_in(0.1, 6.0));
        c.push(rng.f64_in(-6.0, 6.0));
    }
    (a, b, c)
}

/// The "gross" f64 approximations (`rcp.approx.ftz.f64`, `rsqrt.approx.f64`): 2^-19 relative.
fn gross(v: f64) -> Approx {
    Approx::term(v, p2(-19.0), 0.0)
}

#[test]
fn f64_arith() {
    use Round::*;
    let (a, b, c) = f64_inputs();
    let n = a.len();
    let mut out = Vec::new();
    let mut tols = Vec::new();
    let mut flags = Vec::new();
    for i in 0..n {
        let (x, y, z) = (a[i], b[i], c[i]);
        let exact = |v: f64| (v, Tol::Exact);
        let rows = [
            exact(fp::add_f64(x, y, Rn) + fp::add_f64(x, z, Rz)),
            exact(fp::add_f64(x, y, Rm) - fp::add_f64(y, z, Rp)),
            exact(fp::mul_f64(x, y, Rn) * fp::mul_f64(x, z, Rz)),
            exact(fp::fma_f64(x, y, z, Rn) + fp::fma_f64(x, y, z, Rm) + fp::fma_f64(x, y, z, Rp)),
            exact(x / y + fp::div_f64(x, z, Rz)),
            f64_sum(&[
                Approx::exact(1.0 / z),
                Approx::exact(x.sqrt()),
                Approx::exact(fp::sqrt_f64(y, Rp)),
                ulps64(1.0 / z.sqrt(), 4.0),
            ]),
            exact(x.min(y) + y.max(z) + x.abs().copysign(y) + z.abs()),
            f64_sum(&[
                gross(1.0 / if z.abs() < f64::MIN_POSITIVE { 0.0f64.copysign(z) } else { z }),
                gross(1.0 / x.sqrt()),
            ]),
            f64_sum(&[ulps64(x.sin(), 4.0), ulps64(y.cos(), 4.0), ulps64(z.tan(), 4.0)]),
            f64_sum(&[ulps64(x.exp(), 4.0), ulps64(y.ln(), 4.0), ulps64(x.powf(y), 4.0), ulps64(math::erf(z), 4.0)]),
            f64_sum(&[ulps64(x.atan2(y), 4.0), ulps64(z.cbrt(), 4.0), ulps64(x.ln_1p(), 4.0), ulps64(y.exp_m1(), 4.0)]),
            f64_sum(&[
                Approx::exact(x % y),
                ulps64(x.hypot(z), 4.0),
                Approx::term(math::lgamma(y), 4.0 * p2(-52.0), 1e-13),
            ]),
        ];
        for (v, t) in rows {
            out.push(v);
            tols.push(t);
        }
        let normal = x == 0.0 || x.is_normal();
        flags.push(
            i32::from(x.is_nan())
                | i32::from(y.is_infinite()) << 1
                | i32::from(z.is_finite()) << 2
                | i32::from(normal) << 3,
        );
    }
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::input(&c), Arg::output::<f64>(12 * n), Arg::output::<i32>(n)];
    let checks =
        vec![Check::new(3, "out", Values::F64(out), Rule::Each(tols)), Check::exact(4, "flags", Values::I32(flags))];
    check(SRC, Case::outputs("f64_arith", Shape::linear(1, n as u32), args, checks));
}
