//! corpus/cuda/workloads.cu: the reference kernels, on every PTX variant and backend.
//!
//! Floating-point results are compared exactly: each reference performs the same operations in the same
//! order as the kernel, using `fma` where the compiler contracts `a * b + c` (every build except `-G`, see
//! `Variant::mad`). The one exception is `dot_product`, whose float `atomicAdd`s land in an order that
//! depends on warp scheduling (see there).

use conformance::prelude::*;

const SRC: &str = "workloads";

#[test]
fn vector_add() {
    let n = 1000usize;
    let mut rng = Rng::new(1);
    let a = rng.vec_f32(n, -100.0, 100.0);
    let b = rng.vec_f32(n, -100.0, 100.0);
    let c: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<f32>(n + 24), Arg::scalar(n as i32)];
    // The 24 elements past n stay zero: threads >= n must not store.
    let mut expected = c;
    expected.resize(n + 24, 0.0);
    check(
        SRC,
        Case::outputs("vector_add", Shape::linear(4, 256), args, vec![Check::exact(2, "c", Values::F32(expected))]),
    );
}

#[test]
fn saxpy() {
    let n = 1000usize;
    let mut rng = Rng::new(2);
    let x = rng.vec_f32(n, -10.0, 10.0);
    let y = rng.vec_f32(n + 8, -10.0, 10.0);
    let alpha = 1.7f32;
    let args = vec![Arg::scalar(n as i32), Arg::scalar(alpha), Arg::input(&x), Arg::input(&y)];
    check(
        SRC,
        Case::new("saxpy", Shape::linear(4, 256), args, move |ctx| {
            let mut out = y.clone();
            for i in 0..n {
                out[i] = ctx.variant.mad(alpha, x[i], y[i]);
            }
            Expect::Outputs(vec![Check::exact(3, "y", Values::F32(out))])
        }),
    );
}

/// The shared-memory tree of `reduce_tree`: strides blockDim/2, /4, ..., 1.
fn tree_sum(vals: &mut [f32]) -> f32 {
    let mut s = vals.len() / 2;
    while s > 0 {
        for t in 0..s {
            vals[t] += vals[t + s];
        }
        s /= 2;
    }
    vals[0]
}

#[test]
fn reduce_tree() {
    let n = 1000usize;
    let block = 256usize;
    let grid = n.div_ceil(block);
    let input = Rng::new(3).vec_f32(n, -1.0, 1.0);
    let mut partial = Vec::new();
    for b in 0..grid {
        let mut vals: Vec<f32> = (0..block).map(|t| input.get(b * block + t).copied().unwrap_or(0.0)).collect();
        partial.push(tree_sum(&mut vals));
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid), Arg::scalar(n as i32)];
    let shape = Shape::linear(grid as u32, block as u32).shared(block as u32 * 4);
    check(SRC, Case::outputs("reduce_tree", shape, args, vec![Check::exact(1, "partial", Values::F32(partial))]));
}

#[test]
fn matmul_tiled16() {
    let (m, n, k) = (40usize, 24usize, 20usize);
    let mut rng = Rng::new(4);
    let a = rng.vec_f32(m * k, -1.0, 1.0);
    let b = rng.vec_f32(k * n, -1.0, 1.0);
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::output::<f32>(m * n),
        Arg::scalar(m as i32),
        Arg::scalar(n as i32),
        Arg::scalar(k as i32),
    ];
    let shape = Shape::new((n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1), (16, 16, 1));
    check(
        SRC,
        Case::new("matmul_tiled16", shape, args, move |ctx| {
            let mut c = vec![0.0f32; m * n];
            for row in 0..m {
                for col in 0..n {
                    // Tiles are padded with zeros up to a multiple of 16; 0 * 0 terms leave acc unchanged.
                    let mut acc = 0.0f32;
                    for kk in 0..k.div_ceil(16) * 16 {
                        let (x, y) = if kk < k { (a[row * k + kk], b[kk * n + col]) } else { (0.0, 0.0) };
                        acc = ctx.variant.mad(x, y, acc);
                    }
                    c[row * n + col] = acc;
                }
            }
            Expect::Outputs(vec![Check::exact(2, "C", Values::F32(c))])
        }),
    );
}

#[test]
fn histogram256() {
    let n = 5000usize;
    let mut rng = Rng::new(5);
    // Skewed data: many hits on a few bins (contended shared atomics), every bin value present.
    let data: Vec<u8> =
        (0..n).map(|i| if i % 3 == 0 { (rng.next_u32() % 4) as u8 } else { (rng.next_u32() & 0xff) as u8 }).collect();
    let mut hist = vec![0u32; 256];
    for &d in &data {
        hist[d as usize] += 1;
    }
    let args = vec![Arg::input(&data), Arg::output::<u32>(256), Arg::scalar(n as i32)];
    check(
        SRC,
        Case::outputs("histogram256", Shape::linear(4, 128), args, vec![Check::exact(1, "hist", Values::U32(hist))]),
    );
}

#[test]
fn stencil_1d() {
    let n = 1000usize;
    let input = Rng::new(6).vec_f32(n, -5.0, 5.0);
    let mut out = vec![0.0f32; n];
    for (g, o) in out.iter_mut().enumerate() {
        let mut acc = 0.0f32;
        for off in -3i64..=3 {
            let j = g as i64 + off;
            acc += if j >= 0 && (j as usize) < n { input[j as usize] } else { 0.0 };
        }
        *o = acc / 7.0;
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(n), Arg::scalar(n as i32)];
    check(
        SRC,
        Case::outputs("stencil_1d", Shape::linear(4, 256), args, vec![Check::exact(1, "out", Values::F32(out))]),
    );
}

#[test]
fn stencil_2d() {
    let (w, h) = (50usize, 37usize);
    let input = Rng::new(7).vec_f32(w * h, -5.0, 5.0);
    let mut out = vec![0.0f32; w * h];
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            out[i] = 0.2f32 * (input[i] + input[i - 1] + input[i + 1] + input[i - w] + input[i + w]);
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(w * h), Arg::scalar(w as i32), Arg::scalar(h as i32)];
    let shape = Shape::new((w.div_ceil(16) as u32, h.div_ceil(8) as u32, 1), (16, 8, 1));
    check(SRC, Case::outputs("stencil_2d", shape, args, vec![Check::exact(1, "out", Values::F32(out))]));
}

#[test]
fn stencil_3d() {
    let (nx, ny, nz) = (12usize, 10usize, 9usize);
    let input = Rng::new(8).vec_f32(nx * ny * nz, -5.0, 5.0);
    let args = vec![
        Arg::input(&input),
        Arg::output::<f32>(nx * ny * nz),
        Arg::scalar(nx as i32),
        Arg::scalar(ny as i32),
        Arg::scalar(nz as i32),
    ];
    let shape = Shape::new((nx.div_ceil(8) as u32, ny.div_ceil(4) as u32, nz.div_ceil(2) as u32), (8, 4, 2));
    check(
        SRC,
        Case::new("stencil_3d", shape, args, move |ctx| {
            let mut out = vec![0.0f32; nx * ny * nz];
            let (sy, sz) = (nx, nx * ny);
            for z in 1..nz - 1 {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        let i = (z * ny + y) * nx + x;
                        let s =
                            input[i - 1] + input[i + 1] + input[i - sy] + input[i + sy] + input[i - sz] + input[i + sz];
                        // `s - 6 * in[i]` is one fma(in[i], -6, s) when contracted.
                        out[i] = ctx.variant.mad(input[i], -6.0, s);
                    }
                }
            }
            Expect::Outputs(vec![Check::exact(1, "out", Values::F32(out))])
        }),
    );
}

fn transposed(input: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            out[x * h + y] = input[y * w + x];
        }
    }
    out
}

#[test]
fn transpose_tiled() {
    let (w, h) = (70usize, 45usize);
    let input = Rng::new(9).vec_f32(w * h, -5.0, 5.0);
    let out = transposed(&input, w, h);
    let args = vec![Arg::input(&input), Arg::output::<f32>(w * h), Arg::scalar(w as i32), Arg::scalar(h as i32)];
    let shape = Shape::new((w.div_ceil(32) as u32, h.div_ceil(32) as u32, 1), (32, 8, 1));
    check(SRC, Case::outputs("transpose_tiled", shape, args, vec![Check::exact(1, "out", Values::F32(out))]));
}

#[test]
fn transpose_naive() {
    let (w, h) = (70usize, 45usize);
    let input = Rng::new(10).vec_f32(w * h, -5.0, 5.0);
    let out = transposed(&input, w, h);
    let args = vec![Arg::input(&input), Arg::output::<f32>(w * h), Arg::scalar(w as i32), Arg::scalar(h as i32)];
    let shape = Shape::new((w.div_ceil(16) as u32, h.div_ceil(16) as u32, 1), (16, 16, 1));
    check(SRC, Case::outputs("transpose_naive", shape, args, vec![Check::exact(1, "out", Values::F32(out))]));
}

/// `dot_product`: per-thread grid-stride partial sums, a warp shuffle tree, then one float `atomicAdd` per warp.
/// The order of those atomics follows warp scheduling, so with arbitrary floats the result is only known to
/// within rounding: `|error| <= (additions) * u * sum |a_i b_i|`. With small integers every partial sum is
/// exact in f32 and the order cannot matter, so that case is compared exactly.
#[test]
fn dot_product() {
    let n = 3000usize;
    let (grid, block) = (3u32, 128u32);
    let mut rng = Rng::new(11);
    let ai: Vec<f32> = (0..n).map(|_| rng.range_i32(-8, 8) as f32).collect();
    let bi: Vec<f32> = (0..n).map(|_| rng.range_i32(-8, 8) as f32).collect();
    let exact: f32 = ai.iter().zip(&bi).map(|(x, y)| x * y).sum();
    let args = vec![Arg::input(&ai), Arg::input(&bi), Arg::output::<f32>(1), Arg::scalar(n as i32)];
    let integers = Case::outputs(
        "dot_product",
        Shape::linear(grid, block),
        args,
        vec![Check::exact(2, "result", Values::F32(vec![exact]))],
    )
    .label("small integers, exact");

    let a = rng.vec_f32(n, -1.0, 1.0);
    let b = rng.vec_f32(n, -1.0, 1.0);
    let sum: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let mag: f64 = a.iter().zip(&b).map(|(x, y)| (f64::from(*x) * f64::from(*y)).abs()).sum();
    // Each product is accumulated through at most n/threads + 5 shuffle steps + warps atomic adds.
    let additions = (n as f64 / f64::from(grid * block)).ceil() + 5.0 + f64::from(grid * block / 32);
    let tol = Tol::Abs(additions * math::U32 * mag * 1.01);
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<f32>(1), Arg::scalar(n as i32)];
    let random = Case::outputs(
        "dot_product",
        Shape::linear(grid, block),
        args,
        vec![Check::new(2, "result", Values::F32(vec![sum as f32]), Rule::All(tol))],
    )
    .label("random floats, order-independent bound");
    check_all(SRC, vec![integers, random]);
}
