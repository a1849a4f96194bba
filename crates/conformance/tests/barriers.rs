//! corpus/cuda/barriers.cu: CTA barriers, barrier reductions, warp barriers, named barriers and fences, on
//! every variant (nvcc and clang). Compared exactly; the one cross-warp read without a barrier
//! (`warp_sync_and_fences`) accepts every value a CUDA execution may produce.

use conformance::prelude::*;

const SRC: &str = "barriers";

#[test]
fn sync_variants() {
    let (grid, block) = (2usize, 200usize);
    let mut rng = Rng::new(800);
    let mut input = Vec::new();
    // block 0: zeros and negatives (and = 0, or = 1); block 1: strictly positive (and = 1, or = 0)
    for i in 0..block {
        input.push(if i % 7 == 0 { 0 } else { rng.range_i32(-100, 100) });
    }
    for _ in 0..block {
        input.push(rng.range_i32(1, 100));
    }
    let mut out = Vec::new();
    for b in 0..grid {
        let v = &input[b * block..(b + 1) * block];
        let cnt = v.iter().filter(|&&x| x > 0).count() as i32;
        let all = i32::from(v.iter().all(|&x| x != 0));
        let any = i32::from(v.iter().any(|&x| x < 0));
        for i in 0..block {
            out.push(v[(i + 1) % block] + cnt * 4 + all * 2 + any);
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<i32>(grid * block)];
    check(
        SRC,
        Case::outputs(
            "sync_variants",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::I32(out))],
        ),
    );
}

/// `b = data[(i + 32) % blockDim]` reads another warp's element with no CTA barrier in between: it may see
/// the initial value (-1), the thread's index, or the index plus one (lanes 0..15 add one).
#[test]
fn warp_sync_and_fences() {
    let n = 128usize;
    let after = |j: usize| (j + usize::from(j & 31 < 16)) as i32;
    let mut out = Vec::new();
    let mut tols = Vec::new();
    for i in 0..n {
        let a = after(i ^ 1);
        let j = (i + 32) % n;
        let b = after(j);
        out.push(a + b);
        tols.push(Tol::AnyOf(vec![i64::from(a - 1), i64::from(a) + j as i64]));
    }
    let data: Vec<i32> = (0..n).map(after).collect();
    let args = vec![Arg::input(&vec![-1i32; n]), Arg::output::<i32>(n)];
    let checks =
        vec![Check::exact(0, "data", Values::I32(data)), Check::new(1, "out", Values::I32(out), Rule::Each(tols))];
    check(SRC, Case::outputs("warp_sync_and_fences", Shape::linear(1, n as u32), args, checks));
}

/// Two warps: warp 0 fills `buf` and arrives at barrier 1 (64 threads); warp 1 waits there and copies. The
/// kernel's `bar.sync 2, 64` counts 64 threads, so the block has exactly two warps.
#[test]
fn named_barriers() {
    let n = 64usize;
    let mut rng = Rng::new(801);
    let input: Vec<f32> =
        (0..n).map(|i| if i % 5 == 0 { -rng.f32_in(0.0, 4.0) } else { rng.f32_in(-4.0, 4.0) }).collect();
    let positive = input.iter().filter(|&&x| x > 0.0).count() as f32;
    let mut out = vec![0.0f32; 192];
    for i in 32..64 {
        out[i] = input[i - 32] * 2.0;
    }
    for i in 0..64 {
        out[64 + i] = input[i & 31] * 2.0 + 1.0;
        out[128 + i] = positive;
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(192)];
    check(
        SRC,
        Case::outputs(
            "named_barriers",
            Shape::linear(1, n as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn barrier_in_loop() {
    let (grid, block, iters) = (3usize, 96usize, 5);
    let input = Rng::new(802).vec_f32(grid * block, -4.0, 4.0);
    let mut out = Vec::new();
    for b in 0..grid {
        let mut v: Vec<f32> = input[b * block..(b + 1) * block].to_vec();
        for _ in 0..iters {
            let tile = v.clone();
            for i in 0..block {
                v[i] = 0.5 * (tile[i] + tile[(i + 1) % block]);
            }
        }
        out.extend(v);
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block), Arg::scalar(iters)];
    check(
        SRC,
        Case::outputs(
            "barrier_in_loop",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn barrier_in_uniform_cond() {
    let (grid, block) = (4usize, 100usize);
    let input = Rng::new(803).vec_f32(grid * block, -4.0, 4.0);
    let mut out = Vec::new();
    for b in 0..grid {
        for i in 0..block {
            out.push(if b % 2 == 0 { input[b * block + block - 1 - i] } else { input[b * block + i] });
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block)];
    check(
        SRC,
        Case::outputs(
            "barrier_in_uniform_cond",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}
