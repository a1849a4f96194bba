//! corpus/cuda/control_flow.cu: divergence, loops, early exits, switches, direct/indirect/recursive calls,
//! `trap`/`exit`/`brkpt` and `brx.idx`, on every variant (nvcc and clang). Compared exactly; the trap cases
//! check the error kind, the faulting thread and that the error names the PTX line of the `trap`.

use conformance::prelude::*;

const SRC: &str = "control_flow";

#[test]
fn divergent_if_else() {
    let n = 100usize;
    let mut rng = Rng::new(900);
    let input: Vec<i32> = rng.fill(n, &[0, 1, -1, 10, 11, 20, 21, -21, 7, 3], |r| r.range_i32(-1000, 1000));
    let out: Vec<i32> = (0..n)
        .map(|i| {
            let mut v = input[i];
            v = if i & 1 == 1 { v * 3 + 1 } else { v / 2 };
            if i & 3 == 0 {
                v = if v > 10 { v - 10 } else { v + 100 };
            }
            v
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs(
            "divergent_if_else",
            Shape::linear(1, n as u32),
            args,
            vec![Check::exact(1, "out", Values::I32(out))],
        ),
    );
}

#[test]
fn loops() {
    let n = 64usize;
    let mut rng = Rng::new(901);
    let input: Vec<i32> = (0..n).map(|_| rng.range_i32(-50, 50)).collect();
    let out: Vec<i32> = (0..n)
        .map(|i| {
            let trip = (i % 32) as i32 + 1;
            let mut s: i32 = input[..trip as usize].iter().sum();
            let mut j = 0;
            loop {
                j += 3;
                if j % 7 != 0 {
                    s ^= j;
                }
                if j >= trip * 2 {
                    break;
                }
            }
            for a in 0..8i32 {
                for b in 0..8i32 {
                    if a * b > i as i32 {
                        break;
                    }
                    s += a - b;
                }
            }
            let mut m = input[i] & 15;
            while m > 0 {
                s += m;
                m -= 2;
            }
            s
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs("loops", Shape::linear(1, n as u32), args, vec![Check::exact(1, "out", Values::I32(out))]),
    );
}

#[test]
fn early_return() {
    let (grid, block, n) = (3usize, 64usize, 150usize);
    let mut rng = Rng::new(902);
    let input: Vec<i32> = (0..grid * block).map(|_| rng.range_i32(-100, 100)).collect();
    // Threads at or past n leave without writing: their slots keep the sentinel.
    let out: Vec<i32> = (0..grid * block)
        .map(|i| {
            if i >= n {
                -7
            } else if input[i] < 0 {
                0
            } else {
                input[i] * 2
            }
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::input(&vec![-7i32; grid * block]), Arg::scalar(n as i32)];
    check(
        SRC,
        Case::outputs(
            "early_return",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::I32(out))],
        ),
    );
}

#[test]
fn switch_dense() {
    let n = 96usize;
    let mut rng = Rng::new(903);
    let mut input: Vec<i32> = (0..n + 2).map(|_| rng.range_i32(-1000, 1000)).collect();
    // every case value, for positive and negative inputs
    for (k, v) in input.iter_mut().enumerate().take(32) {
        *v = if k < 16 { k as i32 + 16 * 5 } else { -(k as i32) };
    }
    let out: Vec<i32> = (0..n)
        .map(|i| {
            let v = input[i];
            match v & 15 {
                0 => v + 11,
                1 => v * 7,
                2 => v ^ 0x55,
                3 => v - 99,
                4 => v << 3,
                5 => v >> 2,
                6 => !v,
                7 => v.wrapping_mul(v),
                8 => v | 0x100,
                9 => v & 0xF0F,
                10 => v + input[i + 1],
                11 => v - input[i + 2],
                12 => input[(v & 63) as usize],
                13 => 1313,
                14 => -v,
                _ => 0,
            }
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs("switch_dense", Shape::linear(1, n as u32), args, vec![Check::exact(1, "out", Values::I32(out))]),
    );
}

#[test]
fn switch_sparse() {
    let n = 64usize;
    let mut rng = Rng::new(904);
    let input: Vec<i32> =
        rng.fill(n, &[-1000, 7, 4096, 123456, -999, 8, 4095, 123457, 0], |r| r.range_i32(-5000, 5000));
    let out: Vec<i32> = input
        .iter()
        .map(|&v| match v {
            -1000 => 1,
            7 => 2,
            4096 => 3,
            123456 => 4,
            _ => v,
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs(
            "switch_sparse",
            Shape::linear(1, n as u32),
            args,
            vec![Check::exact(1, "out", Values::I32(out))],
        ),
    );
}

fn fib(n: i32) -> i32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn factorial(n: i32) -> i32 {
    (1..=n.max(1)).product()
}

#[test]
fn calls() {
    let n = 64usize;
    let mut rng = Rng::new(905);
    let input: Vec<i32> = rng.fill(n, &[0, -1, i32::MAX, i32::MIN, 4096, -4096], |r| r.next_u32() as i32);
    let mut out = Vec::new();
    let mut fout = Vec::new();
    for (i, &v) in input.iter().enumerate() {
        let i32i = i as i32;
        out.push(v.wrapping_add((i as f32 * 0.5) as i32));
        let b = i64::from(v) << 20;
        out.push(i32i);
        out.push((b >> 32) as i32 ^ b as i32);
        out.push(fib(i32i % 12) + factorial(i32i % 8));
        let a = i as f32;
        fout.push(a + a * 2.0 + a * 3.0);
    }
    let args = vec![Arg::input(&input), Arg::output::<i32>(4 * n), Arg::output::<f32>(n)];
    let checks = vec![Check::exact(1, "out", Values::I32(out)), Check::exact(2, "fout", Values::F32(fout))];
    check(SRC, Case::outputs("calls", Shape::linear(1, n as u32), args, checks));
}

#[test]
fn indirect_calls() {
    let n = 64usize;
    let mut rng = Rng::new(906);
    let input: Vec<i32> = rng.fill(n, &[0, 1, 2, 3, -1, i32::MAX], |r| r.next_u32() as i32);
    let ops: [fn(i32, i32) -> i32; 4] =
        [|a, b| a.wrapping_add(b), |a, b| a.wrapping_sub(b), |a, b| a.wrapping_mul(b), |a, b| a ^ b];
    let out: Vec<i32> = (0..n)
        .map(|i| {
            let v = input[i];
            let i = i as i32;
            let first = ops[(v & 3) as usize](v, i);
            let second = if i & 1 == 0 { i * 3 } else { i + 3 };
            first.wrapping_add(second)
        })
        .collect();
    let args = vec![Arg::input(&input), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs(
            "indirect_calls",
            Shape::linear(1, n as u32),
            args,
            vec![Check::exact(1, "out", Values::I32(out))],
        ),
    );
}

#[test]
fn switch_brx_asm() {
    let n = 64usize;
    let mut rng = Rng::new(907);
    let input: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let out: Vec<i32> = input.iter().map(|&v| 10 + (v as u32 & 3) as i32).collect();
    let args = vec![Arg::input(&input), Arg::output::<i32>(n)];
    check(
        SRC,
        Case::outputs(
            "switch_brx_asm",
            Shape::linear(1, n as u32),
            args,
            vec![Check::exact(1, "out", Values::I32(out))],
        ),
    );
}

/// `trap_and_exit`: without faulting inputs every thread writes `(v & 3) + 1`, except those that `exit`
/// (v == -2), whose slot keeps its sentinel. Then one faulting input at a time: `__trap()` (v == -1), a
/// `[[noreturn]]` helper that prints and traps (v == -3), `trap` in asm (v == -4) and `brkpt` (v == -5, after the
/// store). Each must stop the kernel with `ErrorKind::Trap` in that thread, at a PTX line holding the
/// instruction.
#[test]
fn trap_and_exit() {
    let n = 64usize;
    let mut rng = Rng::new(908);
    let clean: Vec<i32> = (0..n).map(|i| if i == 9 || i == 40 { -2 } else { rng.range_i32(0, 1000) }).collect();
    let out: Vec<i32> = clean.iter().map(|&v| if v == -2 { -9 } else { (v & 3) + 1 }).collect();
    let args = |input: &[i32]| vec![Arg::input(input), Arg::input(&vec![-9i32; n])];
    let mut cases = vec![Case::outputs(
        "trap_and_exit",
        Shape::linear(1, n as u32),
        args(&clean),
        vec![Check::exact(1, "out", Values::I32(out))],
    )
    .label("exit, no trap")];
    for (v, thread, needle, stdout) in [
        (-1, 5u32, "trap", None),
        (-3, 17, "trap", Some("fatal -3\n")),
        (-4, 33, "trap", None),
        (-5, 50, "brkpt", None),
    ] {
        let mut input = clean.clone();
        input[thread as usize] = v;
        let stdout = stdout.map(str::to_string);
        let case = Case::new("trap_and_exit", Shape::linear(1, n as u32), args(&input), move |ctx| {
            Expect::trap_at(ctx.variant, Dim3::new(0, 0, 0), Dim3::new(thread, 0, 0), needle, stdout.clone())
        })
        .label(&format!("v = {v}: {needle}"));
        cases.push(case);
    }
    check_all(SRC, cases);
}
