//! corpus/cuda/simt_stats.cu: the kernels whose SIMT statistics are known by construction, checked here
//! for their results (the statistics themselves are the emulator's own tests) on every variant, nvcc and
//! clang. Compared exactly: `fmaf` is an fma in every build, and the other products are exact.

use conformance::prelude::*;

const SRC: &str = "simt_stats";

#[test]
fn uniform_work() {
    let n = 256usize;
    let input = Rng::new(1100).vec_f32(n, -10.0, 10.0);
    let out: Vec<f32> = input.iter().map(|&x| (0..16).fold(x, |v, _| v.mul_add(1.0001, 0.5))).collect();
    let args = vec![Arg::input(&input), Arg::output::<f32>(n)];
    check(
        SRC,
        Case::outputs("uniform_work", Shape::linear(4, 64), args, vec![Check::exact(1, "out", Values::F32(out))]),
    );
}

#[test]
fn branch_on_lane_parity() {
    let n = 256usize;
    let input = Rng::new(1101).vec_f32(n, -10.0, 10.0);
    let out: Vec<f32> = input
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if i % 64 % 2 == 0 {
                // v * 2 is exact, so fma(v, 2, 1) and v * 2 + 1 agree
                (x * 2.0 + 1.0).abs().sqrt()
            } else {
                let v = x * 0.5 - 1.0;
                v * v
            }
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::output::<f32>(n)];
    check(
        SRC,
        Case::outputs(
            "branch_on_lane_parity",
            Shape::linear(4, 64),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn lane_dependent_trip_count() {
    let (grid, block) = (2usize, 96usize);
    let input = Rng::new(1102).vec_f32(grid * block, -10.0, 10.0);
    let out: Vec<f32> =
        input.iter().enumerate().map(|(i, &x)| (0..=(i % block % 32)).fold(x, |v, _| v + 1.0)).collect();
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block)];
    check(
        SRC,
        Case::outputs(
            "lane_dependent_trip_count",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn load_coalesced() {
    let n = 256usize;
    let a = Rng::new(1103).vec_f32(n, -10.0, 10.0);
    let args = vec![Arg::input(&a), Arg::output::<f32>(n)];
    check(
        SRC,
        Case::outputs(
            "load_coalesced",
            Shape::linear(4, 64),
            args,
            vec![Check::exact(1, "out", Values::F32(a.clone()))],
        ),
    );
}

#[test]
fn load_strided_32b() {
    let n = 256usize;
    let a = Rng::new(1104).vec_f32(8 * n, -10.0, 10.0);
    let out: Vec<f32> = (0..n).map(|i| a[8 * i]).collect();
    let args = vec![Arg::input(&a), Arg::output::<f32>(n)];
    check(
        SRC,
        Case::outputs("load_strided_32B", Shape::linear(4, 64), args, vec![Check::exact(1, "out", Values::F32(out))]),
    );
}

fn hash_u32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

#[test]
fn load_scattered() {
    let n = 256usize;
    let len = 1024usize;
    let a = Rng::new(1105).vec_f32(len, -10.0, 10.0);
    let out: Vec<f32> = (0..n as u32).map(|i| a[(hash_u32(i) & (len as u32 - 1)) as usize]).collect();
    let args = vec![Arg::input(&a), Arg::output::<f32>(n), Arg::scalar(len as u32 - 1)];
    check(
        SRC,
        Case::outputs("load_scattered", Shape::linear(4, 64), args, vec![Check::exact(1, "out", Values::F32(out))]),
    );
}

fn bank_case(k: usize) -> Case {
    let (grid, block) = (2usize, 32usize);
    let input = Rng::new(1106 + k as u64).vec_f32(1024, -10.0, 10.0);
    let out: Vec<f32> = (0..grid * block).map(|i| input[((i % block) * k) & 1023]).collect();
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block)];
    Case::outputs(
        &format!("shared_bank_conflicts_stride{k}"),
        Shape::linear(grid as u32, block as u32),
        args,
        vec![Check::exact(1, "out", Values::F32(out))],
    )
}

#[test]
fn shared_bank_conflicts_stride1() {
    check(SRC, bank_case(1));
}

#[test]
fn shared_bank_conflicts_stride2() {
    check(SRC, bank_case(2));
}

#[test]
fn shared_bank_conflicts_stride4() {
    check(SRC, bank_case(4));
}

#[test]
fn shared_bank_conflicts_stride32() {
    check(SRC, bank_case(32));
}

#[test]
fn barrier_uniform_loop() {
    let (grid, block, iters) = (2usize, 128usize, 4);
    let input = Rng::new(1110).vec_f32(grid * block, -10.0, 10.0);
    let mut out = Vec::new();
    for b in 0..grid {
        let mut v = input[b * block..(b + 1) * block].to_vec();
        for _ in 0..iters {
            let s = v.clone();
            for t in 0..block {
                v[t] += s[(t + 1) % block];
            }
        }
        out.extend(v);
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block), Arg::scalar(iters)];
    check(
        SRC,
        Case::outputs(
            "barrier_uniform_loop",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn barrier_uniform_cond() {
    let (grid, block) = (4usize, 64usize);
    let input = Rng::new(1111).vec_f32(grid * block, -10.0, 10.0);
    let expected = |flag: bool| -> Vec<f32> {
        (0..grid * block)
            .map(|i| {
                let (b, t) = (i / block, i % block);
                if flag && b % 2 == 0 {
                    input[b * block + block - 1 - t]
                } else {
                    input[i]
                }
            })
            .collect()
    };
    let cases = [true, false]
        .into_iter()
        .map(|flag| {
            let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block), Arg::scalar(i32::from(flag))];
            Case::outputs(
                "barrier_uniform_cond",
                Shape::linear(grid as u32, block as u32),
                args,
                vec![Check::exact(1, "out", Values::F32(expected(flag)))],
            )
            .label(if flag { "flag = 1" } else { "flag = 0" })
        })
        .collect();
    check_all(SRC, cases);
}
