//! corpus/cuda/conversions.cu: `cvt` in every form, f16 / bf16 arithmetic. Compared exactly: the references
//! round with `conformance::fp` (correct rounding in each mode, from exact values), so every result has one
//! right answer. Inputs cover ±0, ±inf, NaN, subnormals, halfway cases and the limits of each integer type.
//!
//! Float-to-integer conversions follow the PTX ISA (9.0, `cvt`): saturate to the destination range; NaN
//! gives 0, except `1 << (bits - 1)` when the source is `.f64` or the destination 64 bits wide. `.sat`
//! float results clamp `-0.0` to `+0.0` (the clamp is `max(x, +0.0)` with `-0.0 < +0.0`).

use conformance::prelude::*;

const SRC: &str = "conversions";
const N: usize = 128;

// `src_f64`: the source is `.f64` (NaN then converts to 1 << (bits - 1), as for 64-bit destinations).
fn i32_range(x: f64, src_f64: bool, mode: Round) -> i32 {
    fp::cvt_to_int(x, src_f64, mode, 32, true) as i32
}

fn u32_range(x: f64, src_f64: bool, mode: Round) -> u32 {
    fp::cvt_to_int(x, src_f64, mode, 32, false) as u32
}

fn i64_range(x: f64, src_f64: bool, mode: Round) -> i64 {
    fp::cvt_to_int(x, src_f64, mode, 64, true) as i64
}

fn u64_range(x: f64, src_f64: bool, mode: Round) -> u64 {
    fp::cvt_to_int(x, src_f64, mode, 64, false) as u64
}

fn float_inputs(rng: &mut Rng) -> (Vec<f32>, Vec<f64>) {
    let f = rng.fill(N, &edge_f32(), |r| match r.next_u32() % 3 {
        0 => r.f32_in(-10.0, 10.0),
        1 => (r.range_i32(-40, 40) as f32) * 0.5,
        _ => r.f32_in(-5e9, 5e9),
    });
    let d = rng.fill(N, &edge_f64(), |r| match r.next_u32() % 3 {
        0 => r.f64_in(-10.0, 10.0),
        1 => f64::from(r.range_i32(-40, 40)) * 0.5,
        _ => r.f64_in(-2e19, 2e19),
    });
    (f, d)
}

#[test]
fn cvt_float_to_int() {
    use Round::*;
    let (f, d) = float_inputs(&mut Rng::new(400));
    let (mut oi, mut ou, mut ol, mut oul) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..N {
        let (x, y) = (f64::from(f[i]), d[i]);
        for m in [Rn, Rz, Rm, Rp] {
            oi.push(i32_range(x, false, m));
        }
        for m in [Rn, Rz, Rm, Rp] {
            oi.push(i32_range(y, true, m));
        }
        ou.extend_from_slice(&[
            u32_range(x, false, Rn),
            u32_range(x, false, Rz),
            u32_range(y, true, Rm),
            u32_range(y, true, Rp),
        ]);
        ol.extend_from_slice(&[
            i64_range(x, false, Rn),
            i64_range(x, false, Rm),
            i64_range(y, true, Rz),
            i64_range(y, true, Rp),
        ]);
        oul.extend_from_slice(&[u64_range(x, false, Rp), u64_range(y, true, Rn)]);
    }
    let args = vec![
        Arg::input(&f),
        Arg::input(&d),
        Arg::output::<i32>(8 * N),
        Arg::output::<u32>(4 * N),
        Arg::output::<i64>(4 * N),
        Arg::output::<u64>(2 * N),
    ];
    let checks = vec![
        Check::exact(2, "oi", Values::I32(oi)),
        Check::exact(3, "ou", Values::U32(ou)),
        Check::exact(4, "ol", Values::I64(ol)),
        Check::exact(5, "oul", Values::U64(oul)),
    ];
    check(SRC, Case::outputs("cvt_float_to_int", Shape::linear(1, N as u32), args, checks));
}

#[test]
fn cvt_int_to_float() {
    use Round::*;
    let mut rng = Rng::new(401);
    // 2^24 + 1 and friends are not representable in f32: every rounding mode differs there.
    let a: Vec<i32> = rng.fill(
        N,
        &[16_777_217, -16_777_217, 16_777_219, i32::MAX, i32::MIN, 0, 1, -1, 0x7fff_ffc0, 33_554_435, -33_554_435],
        |r| r.next_u32() as i32,
    );
    let b: Vec<u32> =
        rng.fill(N, &[16_777_217, u32::MAX, 0, 1, 0x8000_0001, 0xFFFF_FF7F, 0xFFFF_FF80, 0xFFFF_FF81, 255, 256], |r| {
            r.next_u32()
        });
    let c: Vec<i64> = rng.fill(
        N,
        &[
            i64::MAX,
            i64::MIN,
            0,
            -1,
            (1 << 53) + 1,
            -(1 << 53) - 1,
            (1 << 24) + 1,
            -(1 << 40) - 3,
            9_007_199_254_740_993,
        ],
        |r| r.next_u64() as i64 >> (r.next_u32() % 60),
    );
    let e: Vec<u64> =
        rng.fill(N, &[u64::MAX, 0, 1, (1 << 53) + 1, (1 << 63) + 1, (1 << 24) + 1, u64::MAX - 1024], |r| {
            r.next_u64() >> (r.next_u32() % 60)
        });
    let (mut of, mut od) = (Vec::new(), Vec::new());
    for i in 0..N {
        of.extend_from_slice(&[
            fp::int_to_f32(a[i].into(), Rn),
            fp::int_to_f32(a[i].into(), Rz),
            fp::int_to_f32(b[i].into(), Rm),
            fp::int_to_f32(b[i].into(), Rp),
            fp::int_to_f32(c[i].into(), Rn),
            fp::int_to_f32(e[i].into(), Rz),
            f32::from(a[i] as i16),
            f32::from(b[i] as u8),
        ]);
        od.extend_from_slice(&[
            fp::int_to_f64(c[i].into(), Rm),
            fp::int_to_f64(e[i].into(), Rp),
            f64::from(a[i]),
            f64::from(b[i]),
        ]);
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&c),
        Arg::input(&e),
        Arg::output::<f32>(8 * N),
        Arg::output::<f64>(4 * N),
    ];
    let checks = vec![Check::exact(4, "of", Values::F32(of)), Check::exact(5, "od", Values::F64(od))];
    check(SRC, Case::outputs("cvt_int_to_float", Shape::linear(1, N as u32), args, checks));
}

#[test]
fn cvt_float_float() {
    use Round::*;
    let (f, d) = float_inputs(&mut Rng::new(402));
    let (mut of, mut od) = (Vec::new(), Vec::new());
    for i in 0..N {
        let (x, y) = (f[i], d[i]);
        let sat_ftz = fp::sat(fp::ftz(x));
        let rni_ftz = fp::ftz(x).round_ties_even();
        let h = x.trunc();
        of.extend_from_slice(&[
            fp::f64_to_f32(y, Rn),
            fp::f64_to_f32(y, Rz),
            fp::f64_to_f32(y, Rm),
            fp::f64_to_f32(y, Rp),
            x.round_ties_even() + x.trunc(),
            x.floor() - x.ceil(),
            fp::sat(x),
            sat_ftz + rni_ftz + h,
        ]);
        od.extend_from_slice(&[
            f64::from(x),
            y.round_ties_even() + y.trunc(),
            y.floor() * y.ceil(),
            f64::from(fp::ftz(x)),
        ]);
    }
    let args = vec![Arg::input(&f), Arg::input(&d), Arg::output::<f32>(8 * N), Arg::output::<f64>(4 * N)];
    let checks = vec![Check::exact(2, "of", Values::F32(of)), Check::exact(3, "od", Values::F64(od))];
    check(SRC, Case::outputs("cvt_float_float", Shape::linear(1, N as u32), args, checks));
}

#[test]
fn cvt_int_int() {
    let mut rng = Rng::new(403);
    let a: Vec<i32> = rng.fill(
        N,
        &[
            0,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            255,
            256,
            65535,
            65536,
            -32768,
            -32769,
            i32::MAX,
            i32::MIN,
            3,
            -3,
            2,
            2147,
            -2148,
        ],
        |r| r.next_u32() as i32 >> (r.next_u32() % 32),
    );
    let c: Vec<i64> = rng.fill(N, EDGE_I64, |r| r.next_u64() as i64 >> (r.next_u32() % 64));
    let mut o8 = Vec::new();
    let mut o16 = Vec::new();
    let mut o64 = Vec::new();
    let mut o32 = Vec::new();
    for i in 0..N {
        let (x, z) = (a[i], c[i]);
        o8.push(x as i8);
        o16.push(z as u16);
        o64.push(i64::from(x as i16));
        o64.push(i64::from(x as u8));
        let s8 = x.clamp(-128, 127);
        let u16s = x.clamp(0, 65535);
        let s32 = z.clamp(i32::MIN.into(), i32::MAX.into()) as i32;
        let fi = i32_range(f64::from(x as f32 * 1.0e9f32), false, Round::Rz);
        o32.push(s8.wrapping_add(u16s).wrapping_add(s32).wrapping_add(fi));
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&c),
        Arg::output::<i8>(N),
        Arg::output::<u16>(N),
        Arg::output::<i64>(2 * N),
        Arg::output::<i32>(N),
    ];
    let checks = vec![
        Check::exact(2, "o8", Values::I8(o8)),
        Check::exact(3, "o16", Values::U16(o16)),
        Check::exact(4, "o64", Values::I64(o64)),
        Check::exact(5, "o32", Values::I32(o32)),
    ];
    check(SRC, Case::outputs("cvt_int_int", Shape::linear(1, N as u32), args, checks));
}

// ---- f16 and bf16 -------------------------------------------------------------------------------------

fn h(bits: u16) -> f64 {
    fp::f16_to_f64(bits)
}

fn f16(x: f64) -> u16 {
    fp::f16_bits(x, Round::Rn)
}

fn is_nan16(b: u16) -> bool {
    fp::f16_is_nan(b)
}

/// f16 `a op b` with one rounding (add/sub/mul of f16 values are exact in f64).
fn hadd(a: u16, b: u16) -> u16 {
    f16(h(a) + h(b))
}

fn hsub(a: u16, b: u16) -> u16 {
    f16(h(a) - h(b))
}

fn hmul(a: u16, b: u16) -> u16 {
    f16(h(a) * h(b))
}

/// `fma.rn.f16`: a*b + c rounded once (the product is exact in f64, the sum is kept exact).
fn hfma(a: u16, b: u16, c: u16) -> u16 {
    let (x, y, z) = (h(a), h(b), h(c));
    if !(x * y + z).is_finite() || is_nan16(a) || is_nan16(b) || is_nan16(c) {
        return f16(x * y + z);
    }
    let s = fp::Sum::of(&[x * y, z]);
    if s.sign() == std::cmp::Ordering::Equal {
        return f16(x * y + z);
    }
    fp::f16_bits(fp::round(&s, fp::F16, Round::Rn), Round::Rn)
}

/// `__hdiv`: the compiler divides in f32 (approximate reciprocal plus a correction) and rounds to f16; for a
/// divisor of 3 that always equals the correctly rounded quotient (s/3 is never within 2^-23 of an f16
/// rounding boundary).
fn hdiv3(s: u16) -> u16 {
    let x = h(s);
    if !x.is_finite() || x == 0.0 {
        return f16(x / 3.0);
    }
    fp::f16_bits(fp::round(&fp::Quotient { num: x, den: 3.0 }, fp::F16, Round::Rn), Round::Rn)
}

fn hneg(a: u16) -> u16 {
    a ^ 0x8000
}

/// `min/max.f16` (and bf16): NaN operands are ignored (the other operand is the result).
fn hmax(a: u16, b: u16, value: fn(u16) -> f64, nan: fn(u16) -> bool) -> u16 {
    if nan(a) {
        return b;
    }
    if nan(b) {
        return a;
    }
    if value(a) >= value(b) {
        a
    } else {
        b
    }
}

fn hmin(a: u16, b: u16) -> u16 {
    if is_nan16(a) {
        return b;
    }
    if is_nan16(b) {
        return a;
    }
    if h(a) <= h(b) {
        a
    } else {
        b
    }
}

fn half_inputs(rng: &mut Rng, n: usize) -> Vec<f32> {
    rng.fill(
        n,
        &[
            1.0,
            2.0,
            -3.0,
            65504.0,
            65520.0,
            0.5,
            1.0e-6,
            -2.0e-7,
            7.0,
            100.25,
            -0.1,
            1.0009765,
            1.0 + 1.0 / 2048.0,
            3.0,
            300.0,
            0.33333334,
            -65536.0,
            9.0e-5,
            1.5,
        ],
        |r| if r.next_u32() % 4 == 0 { r.f32_in(-300.0, 300.0) } else { r.f32_in(-8.0, 8.0) },
    )
}

#[test]
fn half_ops() {
    let f = half_inputs(&mut Rng::new(404), 65);
    let case = Case::new(
        "half_ops",
        Shape::linear(1, 64),
        vec![Arg::input(&f), Arg::output::<u16>(128), Arg::output::<f32>(128)],
        move |ctx| {
            let mut oh = vec![0u16; 128];
            let mut of = vec![0f32; 128];
            for i in 0..64 {
                let (x, y) = (f[i], f[i + 1]);
                let a = fp::f16_bits(f64::from(x), Round::Rn);
                let b = fp::f16_bits(f64::from(y), Round::Rz);
                let c = fp::f16_bits(f64::from(x - y), Round::Rm);
                let d = fp::f16_bits(f64::from(x * y), Round::Rp);
                if ctx.arch() >= 53 {
                    let mut s = hfma(a, b, hadd(c, d));
                    s = hmul(s, hsub(a, c));
                    s = hdiv3(s);
                    let lt = h(a) < h(b);
                    oh[i] = if lt { s } else { hneg(s) };
                    let nan = if is_nan16(c) { 1.0f32 } else { 0.0 };
                    of[i] = h(s) as f32 + nan + h(d & 0x7fff) as f32;
                } else {
                    let s = ctx.variant.mad(h(a) as f32, h(b) as f32, h(c) as f32) + h(d) as f32;
                    oh[i] = f16(f64::from(s));
                    of[i] = s;
                }
                oh[i + 64] = f16(f64::from(i as i32 - 32));
                let ai = fp::cvt_to_int(h(a), false, Round::Rz, 32, true) as i32;
                let bs = fp::cvt_to_int(h(b), false, Round::Rn, 16, true) as i16;
                of[i + 64] = ai as f32 + f32::from(bs);
            }
            Expect::Outputs(vec![Check::exact(1, "oh", Values::F16(oh)), Check::exact(2, "of", Values::F32(of))])
        },
    );
    check(SRC, case);
}

#[test]
fn half2_ops() {
    let f = half_inputs(&mut Rng::new(405), 128);
    let case = Case::new(
        "half2_ops",
        Shape::linear(1, 64),
        vec![Arg::input(&f), Arg::output::<u16>(256), Arg::output::<f32>(128)],
        move |ctx| {
            let mut oh = vec![0u16; 256];
            let mut of = vec![0f32; 128];
            for i in 0..64 {
                let (fx, fy) = (f[2 * i], f[2 * i + 1]);
                let a = [f16(fx.into()), f16(fy.into())];
                let b = [f16(fy.into()), f16(fx.into())];
                let c: [u16; 2] = if ctx.arch() >= 53 {
                    std::array::from_fn(|l| {
                        let mut c = hadd(a[l], b[l]);
                        c = hfma(a[l], b[l], c);
                        c = hmul(c, hsub(a[l], b[l]));
                        if ctx.arch() >= 80 {
                            c = hmax(c, hmin(a[l], b[l]), h, is_nan16);
                        }
                        c
                    })
                } else {
                    [f16(f64::from(fx + fy)), f16(f64::from(fx * fy))]
                };
                oh[2 * i] = c[0];
                oh[2 * i + 1] = c[1];
                of[2 * i] = h(c[0]) as f32;
                of[2 * i + 1] = h(c[1]) as f32;
                if ctx.arch() >= 80 {
                    // cvt.rn.f16x2.f32 d, a, b puts a in the upper half: {x: f16(f.y), y: f16(f.x)}.
                    oh[128 + 2 * i] = f16(fy.into());
                    oh[128 + 2 * i + 1] = f16(fx.into());
                }
            }
            Expect::Outputs(vec![Check::exact(1, "oh", Values::F16(oh)), Check::exact(2, "of", Values::F32(of))])
        },
    );
    check(SRC, case);
}

fn bf(bits: u16) -> f64 {
    fp::bf16_to_f64(bits)
}

fn bf16(x: f64) -> u16 {
    fp::bf16_bits(x, Round::Rn)
}

/// `fma.rn.bf16`: one rounding of the exact a*b + c.
fn bfma(a: u16, b: u16, c: u16) -> u16 {
    let (x, y, z) = (bf(a), bf(b), bf(c));
    let approx = x * y + z;
    if !approx.is_finite() {
        return bf16(approx);
    }
    let s = fp::Sum::of(&[x * y, z]);
    if s.sign() == std::cmp::Ordering::Equal {
        return bf16(approx);
    }
    bf16(fp::round(&s, fp::BF16, Round::Rn))
}

#[test]
fn bf16_ops() {
    let mut f = half_inputs(&mut Rng::new(406), 65);
    f[20] = 3.0e38;
    f[30] = 1.0e-39;
    f[40] = f32::NAN;
    let args = vec![Arg::input(&f), Arg::output::<u16>(64), Arg::output::<u16>(128), Arg::output::<f32>(192)];
    let case = Case::new("bf16_ops", Shape::linear(1, 64), args, move |ctx| {
        let mut ob = vec![0u16; 64];
        let mut ob2 = vec![0u16; 128];
        let mut of = vec![0f32; 192];
        for i in 0..64 {
            let a = bf16(f[i].into());
            let b = fp::bf16_bits(f[i + 1].into(), Round::Rz);
            let p = [bf16(f[i].into()), bf16(f[i + 1].into())];
            let (c, q, r) = if ctx.arch() >= 80 {
                let mut c = bf16(bf(a) + bf(b));
                c = bf16(bf(c) * bf(a));
                c = bfma(a, b, c);
                of[i] = bf(c) as f32 + bf(hmax(a, b, bf, fp::bf16_is_nan)) as f32;
                let q = [bfma(p[0], p[0], p[0]), bfma(p[1], p[1], p[1])];
                let r = [bf16(bf(q[0]) + bf(p[0])), bf16(bf(q[1]) + bf(p[1]))];
                (c, q, r)
            } else {
                let c = bf16(f64::from(ctx.variant.mad(bf(a) as f32, bf(b) as f32, bf(a) as f32)));
                of[i] = bf(c) as f32;
                let q = [bf16(bf(p[0]) * 2.0), bf16(bf(p[1]) * 2.0)];
                (c, q, q)
            };
            ob[i] = c;
            ob2[2 * i] = r[0];
            ob2[2 * i + 1] = r[1];
            of[i + 64] = bf(q[0]) as f32 + bf(q[1]) as f32;
            of[i + 128] = h(f16(bf(a))) as f32;
        }
        Expect::Outputs(vec![
            Check::exact(1, "ob", Values::BF16(ob)),
            Check::exact(2, "ob2", Values::BF16(ob2)),
            Check::exact(3, "of", Values::F32(of)),
        ])
    });
    check(SRC, case);
}
