//! corpus/cuda/warp_ops.cu: shuffles, votes, match, redux, cooperative-groups tiles and the legacy forms.
//! Launches use whole warps (the kernels name all 32 lanes in their masks). Compared exactly: the
//! references replay each shuffle/reduction step in the kernel's order.
//!
//! Two things CUDA leaves open are accepted either way: `__activemask()` (and `coalesced_threads()`, built
//! on it) inside `if (i & 1)` is the odd lanes when the compiler branches, all lanes when it predicates;
//! and `shuffles` calls `__shfl_down_sync(0x0000ffff, ...)` from lanes 16..31 too, which the PTX ISA leaves
//! undefined for lanes outside the mask, so those lanes' `out` elements are not compared.

use conformance::prelude::*;

const SRC: &str = "warp_ops";
const ODD: u32 = 0xAAAA_AAAA;

/// `shfl.sync.idx/up/down/bfly` within segments of `width` lanes, as CUDA's `__shfl*_sync` compute them.
fn shfl<T: Copy>(vals: &[T], lane: usize, mode: &str, arg: i64, width: usize) -> T {
    let base = lane / width * width;
    let r = (lane % width) as i64;
    let src = match mode {
        "idx" => (arg.rem_euclid(width as i64)) as usize + base,
        "up" => {
            if r - arg >= 0 {
                lane - arg as usize
            } else {
                lane
            }
        }
        "down" => {
            if r + arg < width as i64 {
                lane + arg as usize
            } else {
                lane
            }
        }
        _ => {
            let j = (r ^ arg) as usize;
            if j < width {
                base + j
            } else {
                lane
            }
        }
    };
    vals[src]
}

#[test]
fn shuffles() {
    let n = 64usize;
    let input = Rng::new(1000).vec_f32(n, -8.0, 8.0);
    let mut out = Vec::new();
    let mut tols = Vec::new();
    let mut dout = Vec::new();
    for w in 0..n / 32 {
        let v = &input[32 * w..32 * w + 32];
        let ids: Vec<i32> = (0..32).map(|l| (32 * w + l) as i32).collect();
        for l in 0..32 {
            let i = 32 * w + l;
            let a = shfl(v, l, "idx", 0, 32);
            let b = shfl(v, l, "up", 1, 32);
            let c = shfl(v, l, "down", 2, 32);
            let d = shfl(v, l, "bfly", 5, 32);
            let e = shfl(v, l, "idx", ((i + 3) & 31) as i64, 8);
            let f = shfl(&ids, l, "down", 1, 16);
            out.push(a + b + c + d + e + f as f32);
            tols.push(if l < 16 {
                Tol::Exact
            } else {
                Tol::Ignore("shfl.sync from a lane outside its membermask: undefined")
            });
            dout.push(f64::from(shfl(v, l, "bfly", 1, 32)));
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(n), Arg::output::<f64>(n)];
    let checks =
        vec![Check::new(1, "out", Values::F32(out), Rule::Each(tols)), Check::exact(2, "dout", Values::F64(dout))];
    check(SRC, Case::outputs("shuffles", Shape::linear(1, n as u32), args, checks));
}

#[test]
fn warp_reduce_sum() {
    let (grid, block) = (2usize, 128usize);
    let input = Rng::new(1001).vec_f32(grid * block, -8.0, 8.0);
    let mut out = Vec::new();
    for w in 0..grid * block / 32 {
        let mut v = input[32 * w..32 * w + 32].to_vec();
        for off in [16, 8, 4, 2, 1] {
            v = (0..32).map(|l| v[l] + v[l ^ off]).collect();
        }
        out.push(v[0]);
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block / 32)];
    check(
        SRC,
        Case::outputs(
            "warp_reduce_sum",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

fn ballot(pred: impl Fn(usize) -> bool) -> u32 {
    (0..32).filter(|&l| pred(l)).fold(0, |m, l| m | 1 << l)
}

#[test]
fn votes() {
    let n = 96usize;
    let mut input = vec![0i32; n];
    let mut rng = Rng::new(1002);
    for (i, v) in input.iter_mut().enumerate() {
        *v = match i / 32 {
            0 => rng.range_i32(-5, 5),      // mixed: zeros, negatives, positives
            1 => rng.range_i32(1, 9) * 2,   // all positive and even: all = 1, any = 0, uni = 1
            _ => rng.range_i32(-9, -1) | 1, // all negative and odd
        };
    }
    let mut out = Vec::new();
    let mut tols = Vec::new();
    for w in 0..n / 32 {
        let v = &input[32 * w..32 * w + 32];
        let bal = ballot(|l| v[l] > 0);
        let all = u32::from(v.iter().all(|&x| x != 0));
        let any = u32::from(v.iter().any(|&x| x < 0));
        let uni = u32::from(v.iter().all(|&x| x & 1 == v[0] & 1));
        for l in 0..32 {
            out.extend_from_slice(&[
                bal,
                bal.count_ones(),
                all | any << 1 | uni << 2,
                if l & 1 == 1 { ODD } else { 0 },
            ]);
            tols.extend_from_slice(&[
                Tol::Exact,
                Tol::Exact,
                Tol::Exact,
                if l & 1 == 1 { Tol::AnyOf(vec![0xFFFF_FFFF]) } else { Tol::Exact },
            ]);
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<u32>(4 * n)];
    check(
        SRC,
        Case::outputs(
            "votes",
            Shape::linear(1, n as u32),
            args,
            vec![Check::new(1, "out", Values::U32(out), Rule::Each(tols))],
        ),
    );
}

#[test]
fn match_and_redux() {
    let n = 96usize;
    let mut rng = Rng::new(1003);
    let mut input = vec![0i32; n];
    for (i, v) in input.iter_mut().enumerate() {
        *v = match i / 32 {
            // few distinct values; some differ only in bits 30..31, which the 64-bit match shifts out
            0 => [3, 7, 3 | 1 << 30, 7 | i32::MIN, -1, 0x70][rng.next_u32() as usize % 6],
            1 => 0x50 | rng.range_i32(0, 15) << 8, // v & 0xF0 equal across the warp: match.all succeeds
            _ => rng.next_u32() as i32,
        };
    }
    let case = Case::new(
        "match_and_redux",
        Shape::linear(1, n as u32),
        vec![Arg::input(&input), Arg::output::<u32>(8 * n)],
        move |ctx| {
            let mut out = vec![0u32; 8 * n];
            for w in 0..n / 32 {
                let v = &input[32 * w..32 * w + 32];
                let all_eq = v.iter().all(|&x| x & 0xF0 == v[0] & 0xF0);
                let sum = v.iter().fold(0u32, |s, &x| s.wrapping_add(x as u32));
                let min = *v.iter().min().unwrap_or(&0);
                let max = *v.iter().max().unwrap_or(&0);
                let and = v.iter().fold(u32::MAX, |s, &x| s & x as u32);
                let or = v.iter().fold(0u32, |s, &x| s | x as u32);
                let xor = v.iter().fold(0u32, |s, &x| s ^ x as u32);
                for l in 0..32 {
                    let row = &mut out[8 * (32 * w + l)..8 * (32 * w + l) + 8];
                    if ctx.arch() >= 70 {
                        row[0] = ballot(|k| v[k] == v[l]);
                        let mask = if all_eq { u32::MAX } else { 0 };
                        row[1] = mask ^ u32::from(all_eq);
                        row[2] = ballot(|k| (i64::from(v[k]) << 33) == (i64::from(v[l]) << 33));
                    }
                    if ctx.arch() >= 80 {
                        row[3] = sum;
                        row[4] = (min as u32).wrapping_add(max as u32);
                        row[5] = and;
                        row[6] = or;
                        row[7] = xor;
                    } else {
                        row[3] = v[l] as u32;
                    }
                }
            }
            Expect::Outputs(vec![Check::exact(1, "out", Values::U32(out))])
        },
    );
    check(SRC, case);
}

#[test]
fn coop_groups_tiles() {
    let n = 64usize;
    let input = Rng::new(1004).vec_f32(n, -2.0, 2.0);
    let mut out = Vec::new();
    let mut tols = Vec::new();
    for w in 0..n / 32 {
        let mut v = input[32 * w..32 * w + 32].to_vec();
        for off in [8, 4, 2, 1] {
            v = (0..32).map(|l| v[l] + shfl(&v, l, "down", off, 16)).collect();
        }
        let wv: Vec<f32> =
            (0..32).map(|l| shfl(&v, l, "idx", 0, 4) + shfl(&v, l, "bfly", 1, 4) + shfl(&v, l, "up", 1, 4)).collect();
        for l in 0..32 {
            let i = 32 * w + l;
            let tile16 = l / 16 * 16;
            let b = (0..16).filter(|&r| v[tile16 + r] > 0.0).count();
            let tile4 = l / 4 * 4;
            let anyp = (0..4).any(|r| wv[tile4 + r] > 1.0);
            let base = wv[l] + b as f32 + if anyp { 1.0 } else { 0.0 } + (i / 16) as f32;
            if l & 1 == 1 {
                // coalesced_threads() among the odd lanes (branch), or all lanes (predicated)
                let odd = base + ((l / 2) as f32 + 16.0);
                let all = base + (l as f32 + 32.0);
                out.push(odd);
                tols.push(Tol::AnyOfFloat(vec![f64::from(all)]));
            } else {
                out.push(base);
                tols.push(Tol::Exact);
            }
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(n)];
    check(
        SRC,
        Case::outputs(
            "coop_groups_tiles",
            Shape::linear(1, n as u32),
            args,
            vec![Check::new(1, "out", Values::F32(out), Rule::Each(tols))],
        ),
    );
}

#[test]
fn warp_asm_forms() {
    let n = 64usize;
    let mut rng = Rng::new(1005);
    let input: Vec<i32> = (0..n).map(|i| if i % 5 == 0 { 0 } else { rng.range_i32(-1000, 1000) }).collect();
    let case = Case::new(
        "warp_asm_forms",
        Shape::linear(1, n as u32),
        vec![Arg::input(&input), Arg::output::<i32>(n)],
        move |ctx| {
            let mut out = Vec::new();
            for w in 0..n / 32 {
                let v = &input[32 * w..32 * w + 32];
                let m = ballot(|l| v[l] != 0);
                for l in 0..32 {
                    let mut r0 = v[3];
                    if ctx.arch() < 70 {
                        r0 += v[0];
                    }
                    let r1 = if l >= 1 { v[l - 1] } else { v[l] };
                    out.push(r0.wrapping_add(r1).wrapping_add(m as i32));
                }
            }
            Expect::Outputs(vec![Check::exact(1, "out", Values::I32(out))])
        },
    );
    check(SRC, case);
}
