//! corpus/cuda/compare_select.cu: comparisons (every integer and float operator, ordered and unordered),
//! selection and predicate logic. Inputs pair every edge value (±0, ±inf, NaN, subnormals, MIN/MAX) with
//! others, including itself. Everything is compared exactly (NaN results: any NaN).

use conformance::prelude::*;

const SRC: &str = "compare_select";

/// Pairs of f32 values covering every combination of the edge values, then random pairs (some equal).
fn f32_pairs(rng: &mut Rng) -> (Vec<f32>, Vec<f32>) {
    let edges = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0e-40,
        -1.0e-40,
        f32::MAX,
        f32::MIN_POSITIVE,
        2.5,
    ];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in &edges {
        for &y in &edges {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..48 {
        let x = rng.f32_in(-4.0, 4.0);
        let y = if rng.next_u32().is_multiple_of(4) { x } else { rng.f32_in(-4.0, 4.0) };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

fn f64_pairs(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let edges = [0.0f64, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-310, f64::MAX, 3.5, -3.5];
    let mut c = Vec::new();
    let mut d = Vec::new();
    let mut k = 0usize;
    while c.len() < n {
        if k < edges.len() * edges.len() {
            c.push(edges[k / edges.len()]);
            d.push(edges[k % edges.len()]);
        } else {
            let x = rng.f64_in(-4.0, 4.0);
            c.push(x);
            d.push(if rng.next_u32().is_multiple_of(4) { x } else { rng.f64_in(-4.0, 4.0) });
        }
        k += 1;
    }
    (c, d)
}

#[test]
fn cmp_int() {
    let mut rng = Rng::new(300);
    let n = 200usize;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in EDGE_I32 {
        for &y in &EDGE_I32[..8] {
            a.push(x);
            b.push(y);
        }
    }
    while a.len() < n {
        let x = rng.range_i32(-10, 10);
        a.push(x);
        b.push(if rng.next_u32().is_multiple_of(3) { x } else { rng.range_i32(-10, 10) });
    }
    a.truncate(n);
    b.truncate(n);
    let ua: Vec<u32> = a.iter().map(|&x| x as u32).collect();
    let ub: Vec<u32> = b.iter().rev().map(|&x| x as u32).collect();
    let c: Vec<i64> = rng.fill(n, EDGE_I64, |r| r.range_i64(-20, 20));
    let mut out = Vec::new();
    for i in 0..n {
        let (x, y, ux, uy, z) = (a[i], b[i], ua[i], ub[i], c[i]);
        let bits = [
            x == y,
            x != y,
            x < y,
            x <= y,
            x > y,
            x >= y,
            ux < uy,
            ux <= uy,
            ux > uy,
            ux >= uy,
            z < 0,
            z >= i64::from(x),
        ];
        let r = bits.iter().enumerate().fold(0i32, |r, (k, &bit)| r | i32::from(bit) << k);
        out.push(r);
        out.push(if x < y { ux } else { uy } as i32);
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&ua),
        Arg::input(&ub),
        Arg::input(&c),
        Arg::output::<i32>(2 * n),
    ];
    check(
        SRC,
        Case::outputs("cmp_int", Shape::linear(1, n as u32), args, vec![Check::exact(5, "out", Values::I32(out))]),
    );
}

#[test]
fn cmp_float() {
    let mut rng = Rng::new(301);
    let (a, b) = f32_pairs(&mut rng);
    let n = a.len();
    let (c, d) = f64_pairs(&mut rng, n);
    let mut out = Vec::new();
    for i in 0..n {
        let (x, y, u, v) = (a[i], b[i], c[i], d[i]);
        #[allow(clippy::nonminimal_bool, clippy::neg_cmp_op_on_partial_ord, clippy::eq_op)]
        let bits = [
            x == y,
            x != y,
            x < y,
            x <= y,
            x > y,
            x >= y,
            !(x < y),
            !(x <= y),
            !(x > y),
            !(x >= y),
            !(x != y),
            x.is_nan(),
            !x.is_nan() && !y.is_nan(),
            u < v,
            !(u >= v),
            u.is_nan(),
        ];
        out.push(bits.iter().enumerate().fold(0i32, |r, (k, &bit)| r | i32::from(bit) << k));
    }
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::input(&c), Arg::input(&d), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs("cmp_float", Shape::linear(1, n as u32), args, vec![Check::exact(4, "out", Values::I32(out))]),
    );
}

/// PTX float comparison operators: the ordered ones are false when either operand is NaN, the `u` forms
/// true; `num` = neither NaN, `nan` = either NaN.
fn setp_bits<T: PartialOrd + Copy>(x: T, y: T, unordered: bool) -> [bool; 14] {
    let o = !unordered;
    let u = unordered;
    [
        o && x == y,
        o && x != y,
        o && x < y,
        o && x <= y,
        o && x > y,
        o && x >= y,
        u || x == y,
        u || x != y,
        u || x < y,
        u || x <= y,
        u || x > y,
        u || x >= y,
        o,
        u,
    ]
}

#[test]
fn setp_all_ops() {
    let mut rng = Rng::new(302);
    let (a, b) = f32_pairs(&mut rng);
    let n = a.len();
    let (c, d) = f64_pairs(&mut rng, n);
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = 0u32;
        for (k, bit) in setp_bits(a[i], b[i], a[i].is_nan() || b[i].is_nan()).iter().enumerate() {
            r |= u32::from(*bit) << k;
        }
        for (k, bit) in setp_bits(c[i], d[i], c[i].is_nan() || d[i].is_nan()).iter().enumerate() {
            r |= u32::from(*bit) << (16 + k);
        }
        out.push(r);
    }
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::input(&c), Arg::input(&d), Arg::output::<u32>(n)];
    check(
        SRC,
        Case::outputs("setp_all_ops", Shape::linear(1, n as u32), args, vec![Check::exact(4, "out", Values::U32(out))]),
    );
}

#[test]
fn set_slct_pred() {
    let mut rng = Rng::new(303);
    let (f, g) = f32_pairs(&mut rng);
    let n = f.len();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..n {
        let e = EDGE_I32;
        if i < e.len() * 4 {
            a.push(e[i % e.len()]);
            b.push(e[(i / e.len() * 5 + i) % e.len()]);
        } else {
            let x = rng.range_i32(-5, 5);
            a.push(x);
            b.push(if rng.next_u32().is_multiple_of(3) { x } else { rng.range_i32(-5, 5) });
        }
    }
    let mut out = Vec::new();
    let mut fout = Vec::new();
    for i in 0..n {
        let (x, y, p, q) = (a[i], b[i], f[i], g[i]);
        let mask = |c: bool| if c { u32::MAX } else { 0 };
        let s1 = mask(x < y);
        let s2 = mask(p > q || p.is_nan() || q.is_nan());
        let s3 = if x >= y { 1.0f32 } else { 0.0 };
        let pp = i & 1 != 0;
        let s4 = mask(x == y && !pp);
        let sl1 = if x.wrapping_sub(y) >= 0 { x } else { y };
        let sl2 = if p - q >= 0.0 { p } else { q };
        // the asm predicate network
        let mut pr = x < y;
        let mut qr = x > 0 && pr;
        let mut rr = y == 0 || qr;
        let mut sr = (x != y) ^ rr;
        pr = pr && sr;
        qr = qr || !sr;
        rr ^= pr;
        sr = !sr;
        let comb = u32::from(pr) + 2 * u32::from(!qr) + 4 * u32::from(rr) + 8 * u32::from(sr);
        let c1 = x < y && p > q;
        let c2 = x == 0 || q.is_nan();
        let c3 = c1 != c2;
        out.extend_from_slice(&[
            s1 ^ s2,
            s4.wrapping_add(comb),
            sl1 as u32,
            u32::from(c1) | u32::from(c2) << 1 | u32::from(!c3) << 2,
        ]);
        fout.extend_from_slice(&[s3, if c3 { sl2 } else { p }]);
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&f),
        Arg::input(&g),
        Arg::output::<u32>(4 * n),
        Arg::output::<f32>(2 * n),
    ];
    let checks = vec![Check::exact(4, "out", Values::U32(out)), Check::exact(5, "fout", Values::F32(fout))];
    check(SRC, Case::outputs("set_slct_pred", Shape::linear(1, n as u32), args, checks));
}
