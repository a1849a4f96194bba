//! corpus/cuda/atomics.cu: atomic read-modify-write on global and shared memory, reductions, scopes and
//! memory orders.
//!
//! Final memory contents are order-independent and compared exactly (float atomics add values whose sums
//! are exact, so their order cannot matter). The *old* values returned by contended atomics depend on the
//! order in which threads reach the location, which CUDA leaves open; they are checked for what every
//! order guarantees: for add/sub/inc/dec the old values are exactly the partial results of the sequence in
//! some order (compared as a multiset), for exchange the old values plus the final value are the initial
//! value and every written value, for min/max/and/or each old value is one the location can have held.
//! Where a kernel sums several such old values into one output, that output is not compared (the check
//! says so).

use conformance::prelude::*;
use conformance::Output;
use std::collections::HashMap;

const SRC: &str = "atomics";

fn multiset(mut got: Vec<i64>, mut want: Vec<i64>, what: &str) -> Result<(), String> {
    got.sort_unstable();
    want.sort_unstable();
    if got == want {
        return Ok(());
    }
    let mut count: HashMap<i64, i64> = HashMap::new();
    for v in &got {
        *count.entry(*v).or_default() += 1;
    }
    for v in &want {
        *count.entry(*v).or_default() -= 1;
    }
    let mut extra: Vec<_> = count.iter().filter(|(_, c)| **c > 0).map(|(v, _)| *v).collect();
    let mut missing: Vec<_> = count.iter().filter(|(_, c)| **c < 0).map(|(v, _)| *v).collect();
    extra.sort_unstable();
    missing.sort_unstable();
    extra.truncate(8);
    missing.truncate(8);
    Err(format!("{what}: not the expected multiset of old values (unexpected {extra:?}, missing {missing:?})"))
}

fn column(values: &[i32], stride: usize, k: usize) -> Vec<i64> {
    values.chunks_exact(stride).map(|row| i64::from(row[k])).collect()
}

/// The old values (in application order) and the final value of `n` applications of `f` from `init`.
fn sequence(init: u32, n: usize, f: impl Fn(u32) -> u32) -> (Vec<i64>, u32) {
    let mut v = init;
    let mut olds = Vec::new();
    for _ in 0..n {
        olds.push(i64::from(v as i32));
        v = f(v);
    }
    (olds, v)
}

/// `atomicInc`: `old >= limit ? 0 : old + 1`.
fn inc(limit: u32) -> impl Fn(u32) -> u32 {
    move |v| if v >= limit { 0 } else { v + 1 }
}

/// `atomicDec`: `old == 0 || old > limit ? limit : old - 1`.
fn dec(limit: u32) -> impl Fn(u32) -> u32 {
    move |v| if v == 0 || v > limit { limit } else { v - 1 }
}

fn any_of_range(n: usize) -> Tol {
    Tol::AnyOf((0..n as i64).collect())
}

/// Each old value of a min (max) is the initial value or one of the operands, and never below (above) the
/// final value.
fn min_max_olds(olds: &[i64], init: i64, operands: &[i64], fin: i64, is_min: bool, what: &str) -> Result<(), String> {
    for (i, &o) in olds.iter().enumerate() {
        let held = o == init || operands.contains(&o);
        let bounded = if is_min { o >= fin } else { o <= fin };
        if !held || !bounded {
            return Err(format!("{what}: thread {i} got old value {o}, which the location never held"));
        }
    }
    Ok(())
}

#[test]
fn atomics_global() {
    let t = 128usize;
    let ci0 = [5i32, 1000, 50, -50, 7, 0];
    let cu0 = [3u32, 5, 0xFFFF_FFFF, 0, 0x1234, 1000, 0];
    let cl0 = [10u64, 0, 99, u64::MAX, 0, 0xABCD, 500];
    let cf0 = [1.0f32, 0.0];
    let cd0 = [2.0f64];
    let cs0 = [0i64, 0];
    let args = vec![
        Arg::input(&ci0),
        Arg::input(&cu0),
        Arg::input(&cl0),
        Arg::input(&cf0),
        Arg::input(&cd0),
        Arg::input(&cs0),
        Arg::output::<i32>(16 * t),
    ];
    let case = Case::new("atomics_global", Shape::linear(2, 64), args, move |ctx| {
        let dbl = ctx.arch() >= 60;
        let ids: Vec<i64> = (0..t as i64).collect();
        let xor_all = (0..t as u32).fold(0u32, |x, i| x ^ i);
        let (inc_olds, inc_final) = sequence(3, t, inc(17));
        let (dec_olds, dec_final) = sequence(5, t, dec(17));
        let olds = Check::output("old values", move |out: &Output| {
            let old: Vec<i32> = from_bytes(out.buffer(6));
            let ci: Vec<i32> = from_bytes(out.buffer(0));
            multiset(column(&old, 16, 0), ids.iter().map(|j| 5 + j).collect(), "atomicAdd(int)")?;
            multiset(column(&old, 16, 1), ids.iter().map(|j| 1000 - 2 * j).collect(), "atomicSub")?;
            let min_ops: Vec<i64> = ids.iter().map(|i| i - 100).collect();
            min_max_olds(&column(&old, 16, 2), 50, &min_ops, -100, true, "atomicMin(int)")?;
            min_max_olds(&column(&old, 16, 3), -50, &ids, t as i64 - 1, false, "atomicMax(int)")?;
            let mut exch = column(&old, 16, 4);
            exch.push(i64::from(ci[4]));
            multiset(exch, ids.iter().copied().chain([7]).collect(), "atomicExch(int) olds + final")?;
            // CAS(i - 1 -> i) from 0: the final value F was written by thread F, which saw F - 1; every thread
            // saw a value between 0 and F.
            let fin = i64::from(ci[5]);
            let cas = column(&old, 16, 5);
            if cas.iter().any(|&o| o < 0 || o > fin) || (fin > 0 && cas[fin as usize] != fin - 1) {
                return Err(format!("atomicCAS chain: final {fin}, olds {:?}", &cas[..8.min(cas.len())]));
            }
            multiset(column(&old, 16, 6), inc_olds.clone(), "atomicInc")?;
            multiset(column(&old, 16, 7), dec_olds.clone(), "atomicDec")?;
            multiset(column(&old, 16, 12), ids.iter().map(|j| 10 + j).collect(), "atomicAdd(u64)")?;
            if dbl {
                multiset(
                    column(&old, 16, 15),
                    ids.iter().map(|&j| (2.0 + 0.25 * j as f64) as i64).collect(),
                    "atomicAdd(double)",
                )?;
            } else if column(&old, 16, 15).iter().any(|&v| v != 0) {
                return Err("old[16i + 15] is written only on sm_60+".into());
            }
            Ok(())
        });
        // ci[4]: the last exchanger's index; ci[5]: the end of the CAS chain (checked with the olds).
        let ci_tols = vec![Tol::Exact, Tol::Exact, Tol::Exact, Tol::Exact, any_of_range(t), any_of_range(t)];
        // cl[1]: the first CAS(0 -> i) winner; cl[2]: the last exchanger.
        let cl_tols =
            vec![Tol::Exact, any_of_range(t), any_of_range(t), Tol::Exact, Tol::Exact, Tol::Exact, Tol::Exact];
        let cf_tols = vec![Tol::Exact, any_of_range(t)];
        Expect::Outputs(vec![
            olds,
            Check::new(
                0,
                "ci",
                Values::I32(vec![5 + t as i32, 1000 - 2 * t as i32, -100, t as i32 - 1, 0, 0]),
                Rule::Each(ci_tols),
            ),
            Check::exact(
                1,
                "cu",
                Values::U32(vec![inc_final, dec_final, 0, 0xFFFF_FFFF, 0x1234 ^ xor_all, 0, t as u32 - 1]),
            ),
            Check::new(
                2,
                "cl",
                Values::U64(vec![10 + t as u64, 0, 0, 0, u64::MAX, 0xABCD ^ u64::from(xor_all), 0]),
                Rule::Each(cl_tols),
            ),
            Check::new(3, "cf", Values::F32(vec![1.0 + 0.5 * t as f32, 0.0]), Rule::Each(cf_tols)),
            Check::exact(4, "cd", Values::F64(vec![if dbl { 2.0 + 0.25 * t as f64 } else { 2.0 }])),
            Check::exact(5, "cs", Values::I64(vec![-5, t as i64 - 1])),
        ])
    });
    check(SRC, case);
}

#[test]
fn reductions_unused() {
    let t = 96usize;
    let ci0 = [100i32, 50, 3, -7, 0];
    let cu0 = [0xFFFF_FFFFu32, 0, 0x5555, 7, 3, 1, 2, 0xDEAD];
    let cf0 = [0.5f32, 1.0];
    let cl0 = [1u64, 0xFFFF_0000_FFFF_0000, 9];
    let cd0 = [0.25f64, 2.0];
    let args = vec![Arg::input(&ci0), Arg::input(&cu0), Arg::input(&cf0), Arg::input(&cl0), Arg::input(&cd0)];
    let case = Case::new("reductions_unused", Shape::linear(1, t as u32), args, move |ctx| {
        let n = t as i32;
        let sum: i32 = (0..n).sum();
        let and_all = (0..t as u32).fold(0xFFFF_FFFFu32, |a, i| a & (0xFF << (i & 7)));
        let or_all = (0..t as u32).fold(0u32, |a, i| a | 1 << (i & 31));
        let xor_all = (0..t as u32).fold(0x5555u32, |a, i| a ^ i);
        let inc100 = sequence(7, t, inc(100)).1;
        let dec100 = sequence(3, t, dec(100)).1;
        let inc15 = sequence(2, t, inc(15)).1;
        let ci = vec![100 + sum, 50 - n, 3.min(-(n - 1)), n - 1, -(n - 1)];
        let cu = vec![and_all, or_all, xor_all, inc100, dec100, 1 + sum as u32, inc15, t as u32];
        let cf = vec![0.5 + t as f32, 1.0 + 0.5 * t as f32];
        let cl = vec![1 + 3 * t as u64, 0xFFFF_0000_FFFF_0000, if ctx.arch() >= 70 { 9 + t as u64 } else { 9 }];
        let cd = if ctx.arch() >= 60 { vec![0.25 + t as f64, 2.0 + 0.5 * t as f64] } else { vec![0.25, 2.0] };
        Expect::Outputs(vec![
            Check::exact(0, "ci", Values::I32(ci)),
            Check::exact(1, "cu", Values::U32(cu)),
            Check::exact(2, "cf", Values::F32(cf)),
            Check::exact(3, "cl", Values::U64(cl)),
            Check::exact(4, "cd", Values::F64(cd)),
        ])
    });
    check(SRC, case);
}

#[test]
fn atomics_shared() {
    let t = 100usize;
    let mut rng = Rng::new(700);
    let input: Vec<i32> = (0..t).map(|_| rng.range_i32(-500, 500)).collect();
    let sum: i32 = input.iter().sum();
    let min = input.iter().copied().min().unwrap_or(0).min(0);
    let max = input.iter().copied().max().unwrap_or(0).max(0);
    let sl0 = i64::from(sum) as u64;
    let fout = (t as f32 + sl0 as f32) + 0xFFFF_FFFFu32 as f32;
    let mut out = vec![0i32; t + 8];
    let mut tols = vec![Tol::Ignore("old values of contended atomicAdd/Exch/CAS summed: order-dependent"); t];
    out[t..].copy_from_slice(&[sum, -sum, min, max, 0, 0, 0, 0]);
    // s[4]: the last exchanger; s[5]: the first CAS(0 -> i) winner (0 keeps it open for the next thread)
    tols.extend([
        Tol::Exact,
        Tol::Exact,
        Tol::Exact,
        Tol::Exact,
        any_of_range(t),
        any_of_range(t),
        Tol::Exact,
        Tol::Exact,
    ]);
    let args = vec![Arg::input(&input), Arg::output::<i32>(t + 8), Arg::output::<f32>(1)];
    let checks = vec![
        Check::new(1, "out", Values::I32(out), Rule::Each(tols)),
        Check::exact(2, "fout", Values::F32(vec![fout])),
    ];
    check(SRC, Case::outputs("atomics_shared", Shape::linear(1, t as u32), args, checks));
}

#[test]
fn atomic_cas_loop() {
    let (grid, block) = (3usize, 64usize);
    let mut rng = Rng::new(701);
    let input = rng.vec_f32(grid * block, -1000.0, 1000.0);
    let max = input.iter().copied().fold(-5000.0f32, f32::max);
    let args = vec![Arg::input(&input), Arg::input(&[-5000.0f32])];
    check(
        SRC,
        Case::outputs(
            "atomic_cas_loop",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "maxv", Values::F32(vec![max]))],
        ),
    );
}

#[test]
fn atomics_scoped() {
    let t = 64usize;
    let ci0 = [0i32, 10, 0, -1, -3, 0];
    let args = vec![
        Arg::input(&ci0),
        Arg::input(&[0.5f32]),
        Arg::input(&[1.0f64]),
        Arg::input(&[100u64]),
        Arg::output::<i32>(4 * t),
    ];
    let case = Case::new("atomics_scoped", Shape::linear(1, t as u32), args, move |ctx| {
        let ids: Vec<i64> = (0..t as i64).collect();
        if ctx.arch() < 60 {
            let ids2 = ids.clone();
            return Expect::Outputs(vec![
                Check::output("old", move |out: &Output| {
                    let old: Vec<i32> = from_bytes(out.buffer(4));
                    multiset(column(&old, 4, 0), ids2.clone(), "atomicAdd")?;
                    if (0..t).any(|i| old[4 * i + 1] != 0 || old[4 * i + 2] != 0 || old[4 * i + 3] != 0) {
                        return Err("only old[4i] is written below sm_60".into());
                    }
                    Ok(())
                }),
                Check::exact(0, "ci", Values::I32(vec![t as i32, 10, 0, -1, -3, 0])),
            ]);
        }
        let or_all = (0..t as u32).fold(0u32, |a, i| a | 1 << (i & 31));
        Expect::Outputs(vec![
            Check::output("old", move |out: &Output| {
                let old: Vec<i32> = from_bytes(out.buffer(4));
                multiset(column(&old, 4, 0), ids.clone(), "atomicAdd_block")?;
                multiset(column(&old, 4, 1), ids.iter().map(|j| 10 + j).collect(), "atomicAdd_system")?;
                multiset(column(&old, 4, 3), ids.iter().map(|j| 100 + j).collect(), "atomicAdd_system(u64)")?;
                Ok(())
            }),
            Check::new(
                0,
                "ci",
                Values::I32(vec![t as i32, 10 + t as i32, 0, 0, t as i32 - 1, or_all as i32]),
                Rule::Each(vec![Tol::Exact, Tol::Exact, any_of_range(t), any_of_range(t), Tol::Exact, Tol::Exact]),
            ),
            Check::exact(1, "cf", Values::F32(vec![0.5 + t as f32])),
            Check::exact(2, "cd", Values::F64(vec![1.0 + 2.0 * t as f64])),
            Check::exact(3, "cl", Values::U64(vec![100 + t as u64])),
        ])
    });
    check(SRC, case);
}

/// `memory_order` with two warps: thread 0 publishes data[0] with a release store of the flag, thread 32 spins
/// on an acquire load and copies data[0] (so a backend must let warp 0 progress while warp 1 spins). The
/// kernel reads shared address 0 without declaring shared memory, so the launch provides 16 bytes of
/// dynamic shared memory (its contents are not compared: hardware leaves them undefined).
#[test]
fn memory_order() {
    let t = 64usize;
    let data0 = [0i32, 5, -1, 77, 0, 20, 30, 0x7FFF_0000];
    let args = vec![Arg::input(&data0), Arg::output::<i32>(1), Arg::output::<i32>(65 + t)];
    let case = Case::new("memory_order", Shape::linear(1, t as u32).shared(16), args, move |ctx| {
        let ids: Vec<i64> = (0..t as i64).collect();
        let mut out = vec![0i32; 65 + t];
        let mut tols = vec![Tol::Ignore("sums of order-dependent old values (fetch_add, exchange, CAS)"); 65 + t];
        if ctx.arch() >= 70 {
            out[0] = 123;
            tols[0] = Tol::Exact;
            let low_any: Vec<i64> = (0..t as i64).map(|i| 0x7FFF_0000 | i).collect();
            return Expect::Outputs(vec![
                Check::exact(1, "flag", Values::I32(vec![1])),
                Check::new(2, "out", Values::I32(out), Rule::Each(tols)),
                Check::new(
                    0,
                    "data",
                    Values::I32(vec![123, 5 + t as i32, 0, 77, 77, 20 + t as i32, 30 + t as i32, 0x7FFF_0000]),
                    Rule::Each(vec![
                        Tol::Exact,
                        Tol::Exact,
                        any_of_range(t),
                        Tol::Exact,
                        Tol::Exact,
                        Tol::Exact,
                        Tol::Exact,
                        // atom.cas.b16 on the low half: the first thread to find 0 stores its index
                        Tol::AnyOf(low_any),
                    ]),
                ),
            ]);
        }
        Expect::Outputs(vec![
            Check::exact(1, "flag", Values::I32(vec![1])),
            Check::output("out", move |o: &Output| {
                let out: Vec<i32> = from_bytes(o.buffer(2));
                multiset(
                    out[1..=t].iter().map(|&v| i64::from(v)).collect(),
                    ids.iter().map(|j| 5 + j).collect(),
                    "atomicAdd",
                )?;
                if out[0] != 0 || out[t + 1..].iter().any(|&v| v != 0) {
                    return Err("unexpected writes outside out[1..=64]".into());
                }
                Ok(())
            }),
            Check::exact(0, "data", Values::I32(vec![123, 5 + t as i32, -1, 77, 0, 20, 30, 0x7FFF_0000])),
        ])
    });
    check(SRC, case);
}

#[test]
fn atomics_half() {
    let t = 64usize;
    // f16 bits: h = 0.5, h2 = (1.0, -2.0); the sums stay exact in f16.
    let args = vec![Arg::input(&[0x3800u16]), Arg::input(&[0x3c00u16, 0xc000])];
    let case = Case::new("atomics_half", Shape::linear(1, t as u32), args, move |ctx| {
        // The body is compiled only for sm_70+ (the -G builds of older targets keep an empty shell).
        let (h, h2) = if ctx.arch() >= 70 {
            (
                fp::f16_bits(0.5 + t as f64, Round::Rn),
                [fp::f16_bits(1.0 + t as f64, Round::Rn), fp::f16_bits(-2.0 + 2.0 * t as f64, Round::Rn)],
            )
        } else {
            (0x3800, [0x3c00, 0xc000])
        };
        Expect::Outputs(vec![
            Check::exact(0, "h", Values::F16(vec![h])),
            Check::exact(1, "h2", Values::F16(h2.to_vec())),
        ])
    });
    check(SRC, case);
}
