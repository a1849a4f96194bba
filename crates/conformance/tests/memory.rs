//! corpus/cuda/memory.cu: state spaces, access widths, vectors, cache operators, local/shared/const memory,
//! module variables with initializers and generic addressing. Everything is compared exactly; the two
//! places where the CUDA source itself races (see `const_and_globals`) accept each allowed value.

use conformance::prelude::*;

const SRC: &str = "memory";

#[test]
fn global_widths() {
    let n = 256usize;
    let mut rng = Rng::new(600);
    let c8: Vec<i8> = rng.fill(n, &[127, -128, -1, 0], |r| r.next_u32() as i8);
    let s16: Vec<i16> = rng.fill(n, &[i16::MAX, i16::MIN, -1, 0x4000], |r| r.next_u32() as i16);
    let i32s: Vec<i32> = rng.fill(n, &[i32::MIN, i32::MIN + 2, 0, 3], |r| r.next_u32() as i32);
    let i64s: Vec<i64> = rng.fill(n, EDGE_I64, |r| r.next_u64() as i64);
    let o8: Vec<i8> = c8.iter().map(|&x| x.wrapping_add(1)).collect();
    let o16: Vec<i16> = s16.iter().map(|&x| x.wrapping_mul(2)).collect();
    let o32: Vec<i32> = i32s.iter().map(|&x| x.wrapping_sub(3)).collect();
    let o64: Vec<i64> = i64s.iter().map(|&x| x.wrapping_shl(1)).collect();
    let args = vec![
        Arg::input(&c8),
        Arg::input(&s16),
        Arg::input(&i32s),
        Arg::input(&i64s),
        Arg::output::<i8>(n),
        Arg::output::<i16>(n),
        Arg::output::<i32>(n),
        Arg::output::<i64>(n),
    ];
    let checks = vec![
        Check::exact(4, "o8", Values::I8(o8)),
        Check::exact(5, "o16", Values::I16(o16)),
        Check::exact(6, "o32", Values::I32(o32)),
        Check::exact(7, "o64", Values::I64(o64)),
    ];
    check(SRC, Case::outputs("global_widths", Shape::linear(4, 64), args, checks));
}

#[test]
fn global_vectors() {
    let n = 70usize;
    let mut rng = Rng::new(601);
    let f2 = rng.vec_f32(2 * n, -10.0, 10.0);
    let f4 = rng.vec_f32(4 * n, -10.0, 10.0);
    let i4: Vec<i32> = (0..4 * n).map(|_| rng.next_u32() as i32).collect();
    let d2: Vec<f64> = (0..2 * n).map(|_| rng.f64_in(-1e6, 1e6)).collect();
    let c4: Vec<i8> = (0..4 * n).map(|_| rng.next_u32() as i8).collect();
    let s2: Vec<i16> = (0..2 * n).map(|_| rng.next_u32() as i16).collect();
    let l2: Vec<i64> = (0..2 * n).map(|_| rng.next_u64() as i64).collect();
    let (mut of4, mut oi4, mut od2, mut oc4, mut os2, mut ol2) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    for i in 0..n {
        of4.extend_from_slice(&[f2[2 * i] + f4[4 * i], f2[2 * i + 1] + f4[4 * i + 1], f4[4 * i + 2], f4[4 * i + 3]]);
        oi4.extend_from_slice(&[i4[4 * i + 3], i4[4 * i + 2], i4[4 * i + 1], i4[4 * i]]);
        od2.extend_from_slice(&[d2[2 * i + 1], d2[2 * i]]);
        oc4.extend_from_slice(&[c4[4 * i + 3], c4[4 * i + 2], c4[4 * i + 1], c4[4 * i]]);
        os2.extend_from_slice(&[s2[2 * i + 1], s2[2 * i]]);
        ol2.extend_from_slice(&[l2[2 * i + 1], l2[2 * i]]);
    }
    let args = vec![
        Arg::input(&f2),
        Arg::input(&f4),
        Arg::input(&i4),
        Arg::input(&d2),
        Arg::input(&c4),
        Arg::input(&s2),
        Arg::input(&l2),
        Arg::output::<f32>(4 * n),
        Arg::output::<i32>(4 * n),
        Arg::output::<f64>(2 * n),
        Arg::output::<i8>(4 * n),
        Arg::output::<i16>(2 * n),
        Arg::output::<i64>(2 * n),
    ];
    let checks = vec![
        Check::exact(7, "of4", Values::F32(of4)),
        Check::exact(8, "oi4", Values::I32(oi4)),
        Check::exact(9, "od2", Values::F64(od2)),
        Check::exact(10, "oc4", Values::I8(oc4)),
        Check::exact(11, "os2", Values::I16(os2)),
        Check::exact(12, "ol2", Values::I64(ol2)),
    ];
    check(SRC, Case::outputs("global_vectors", Shape::linear(1, n as u32), args, checks));
}

#[test]
fn cache_ops() {
    let n = 64usize;
    let mut rng = Rng::new(602);
    // a covers the prefetched addresses a + i + 512 as well.
    let a = rng.vec_f32(n + 512, -10.0, 10.0);
    let b = rng.vec_f32(4 * n, -10.0, 10.0);
    let c: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let mut out = vec![0f32; 256];
    for i in 0..n {
        out[i] = a[i] + a[i + 1];
        out[i + 64] = a[i + 2] + a[i + 3];
        out[i + 128] = a[i + 4] + a[i + 5];
        out[i + 192] = a[i];
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&c),
        Arg::output::<f32>(256),
        Arg::output::<f32>(4 * n),
        Arg::output::<i32>(n),
    ];
    let checks = vec![
        Check::exact(3, "out", Values::F32(out)),
        Check::exact(4, "out4", Values::F32(b.clone())),
        Check::exact(5, "outi", Values::I32(c.clone())),
    ];
    check(SRC, Case::outputs("cache_ops", Shape::linear(1, n as u32), args, checks));
}

#[test]
fn volatile_ops() {
    let n = 96usize;
    let flag = [3i32, -5, 7, 11];
    let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let out: Vec<i32> = (0..n as i32).map(|i| 3 + 16 + i).collect();
    let args = vec![Arg::input(&flag), Arg::input(&vec![-1.0f32; n]), Arg::output::<i32>(n)];
    let checks = vec![
        Check::exact(1, "v", Values::F32(v)),
        Check::exact(2, "out", Values::I32(out)),
        Check::exact(0, "flag", Values::I32(flag.to_vec())),
    ];
    check(SRC, Case::outputs("volatile_ops", Shape::linear(1, n as u32), args, checks));
}

#[test]
fn local_array() {
    let n = 128usize;
    let mut rng = Rng::new(603);
    let idx: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let input = rng.vec_f32(256, -4.0, 4.0);
    let mut out = Vec::new();
    for i in 0..n {
        let mut buf: Vec<f32> = (0..32).map(|k| input[(i + k) & 255] * k as f32).collect();
        let j = (idx[i] & 31) as usize;
        buf[j] += 1.0;
        out.push(buf[(j * 7) & 31] + buf[j]);
    }
    let args = vec![Arg::input(&idx), Arg::input(&input), Arg::output::<f32>(n)];
    check(
        SRC,
        Case::outputs("local_array", Shape::linear(1, n as u32), args, vec![Check::exact(2, "out", Values::F32(out))]),
    );
}

#[test]
fn shared_static() {
    // tile[256] is indexed modulo 256, so the block must have exactly 256 threads.
    let (grid, block) = (2usize, 256usize);
    let input = Rng::new(604).vec_f32(grid * block, -4.0, 4.0);
    let mut out = Vec::new();
    for b in 0..grid {
        let tile = &input[b * block..(b + 1) * block];
        for i in 0..block {
            let s = tile[(i + 1) & 255] + tile[(i + 255) & 255];
            out.push(s + (block / 8) as f32);
        }
    }
    let args = vec![Arg::input(&input), Arg::output::<f32>(grid * block)];
    check(
        SRC,
        Case::outputs(
            "shared_static",
            Shape::linear(grid as u32, block as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn shared_dynamic() {
    // n floats, then blockDim doubles right after them (n even keeps the doubles 8-byte aligned).
    let bd = 100usize;
    let n = 100usize;
    let input = Rng::new(605).vec_f32(bd, -4.0, 4.0);
    let out: Vec<f32> = (0..bd).map(|i| input[(i + 1) % bd] + (f64::from(input[(i + 3) % bd]) * 2.0) as f32).collect();
    let args = vec![Arg::input(&input), Arg::output::<f32>(bd), Arg::scalar(n as i32)];
    let shape = Shape::linear(1, bd as u32).shared((4 * n + 8 * bd) as u32);
    check(SRC, Case::outputs("shared_dynamic", shape, args, vec![Check::exact(1, "out", Values::F32(out))]));
}

/// `const_and_globals` with 64 threads (two warps). The source races twice, so those elements accept every
/// value a CUDA execution may produce:
/// - thread 0 increments `g_counter` while threads with `i % 3 == 2` read it through `g_ptrs[2]`: 42 or 43;
/// - every thread writes `g_uninit[i & 7] = i` and then reads `g_uninit[(i + 1) & 7]`, which holds the value of
///   one of the threads `j` with `j & 7 == (i + 1) & 7`, or its initial 0 if no such write happened yet.
#[test]
fn const_and_globals() {
    let n = 64usize;
    let mut rng = Rng::new(606);
    // Small integers keep every float product and sum exact, whether or not the compiler fuses them.
    let input: Vec<i32> = (0..64).map(|_| rng.range_i32(-50, 50)).collect();
    let c_table = [1000i32, -2000, 3000, -4000];
    let coeffs: Vec<f32> = (1..=16).map(|k| k as f32).collect();
    let g_scale = [0.5f32, 1.5, 2.5, 3.5];
    let g_bytes = [1i32, 2, 3, 0xfe, 0xff];
    let mut out = Vec::new();
    let mut iout = Vec::new();
    let mut itols = Vec::new();
    for i in 0..n {
        let mut acc = 0.0f32;
        for (k, c) in coeffs.iter().enumerate() {
            acc += c * input[(i + k) & 63] as f32;
        }
        out.push(acc + coeffs[(input[i] & 15) as usize] * g_scale[i & 3]);
        let p0 = [1, 10, 42][i % 3];
        let first = p0 + 3 + c_table[i & 3];
        iout.push(first);
        itols.push(if i % 3 == 2 { Tol::AnyOf(vec![i64::from(first + 1)]) } else { Tol::Exact });
        iout.push((-1_234_567_890_123i64 as i32).wrapping_add(g_bytes[i % 5]).wrapping_add([1, 2][i & 1]));
        itols.push(Tol::Exact);
        iout.push(2718 + 2);
        itols.push(Tol::Exact);
        let slot = (i + 1) & 7;
        let writers: Vec<i64> = (0..n).filter(|j| j & 7 == slot).map(|j| j as i64).chain([0]).collect();
        iout.push(slot as i32);
        itols.push(Tol::AnyOf(writers));
    }
    let uninit_tols: Vec<Tol> = (0..8).map(|s| Tol::AnyOf((0..n as i64).filter(|j| j & 7 == s).collect())).collect();
    let args = vec![Arg::input(&input), Arg::output::<f32>(n), Arg::output::<i32>(4 * n)];
    let checks = vec![
        Check::exact(1, "out", Values::F32(out)),
        Check::new(2, "iout", Values::I32(iout), Rule::Each(itols)),
        Check::symbol("g_counter", Values::I32(vec![43]), Rule::All(Tol::Exact)),
        Check::symbol("g_uninit", Values::I32((0..8).collect()), Rule::Each(uninit_tols)),
        Check::symbol("g_a", Values::I32(vec![1, 2, 3]), Rule::All(Tol::Exact)),
    ];
    let case = Case::outputs("const_and_globals", Shape::linear(1, n as u32), args, checks)
        .write_symbol("c_table", to_bytes(&c_table))
        .read_symbol("g_counter")
        .read_symbol("g_uninit")
        .read_symbol("g_a");
    check(SRC, case);
}

#[test]
fn generic_addressing() {
    let n = 64usize;
    let g = Rng::new(607).vec_f32(n, -4.0, 4.0);
    let s1 = g.iter().fold(1.0f32, |s, &v| s + v);
    let s2 = g.iter().fold(2.0f32, |s, &v| s + v);
    let mut out = Vec::new();
    let mut space = Vec::new();
    let mut stols = Vec::new();
    for i in 0..n {
        let local = 1.0f32 + 2.0 + 3.0 + i as f32;
        out.push(if i == 0 { ((0.0 + s1) + s2) + local } else { 0.0 + local });
        space.extend_from_slice(&[1, 2, 8]);
        // A generic address of `.const` memory: isspacep.const is true; whether the constant window also
        // counts as global is not specified, so 8 | 2 is accepted as well.
        stols.extend_from_slice(&[Tol::Exact, Tol::Exact, Tol::AnyOf(vec![10])]);
    }
    let mut g_after = g.clone();
    g_after[0] = s2;
    let args = vec![Arg::input(&g), Arg::output::<f32>(n), Arg::output::<i32>(3 * n)];
    let checks = vec![
        Check::exact(1, "out", Values::F32(out)),
        Check::new(2, "space", Values::I32(space), Rule::Each(stols)),
        Check::exact(0, "g", Values::F32(g_after)),
    ];
    check(SRC, Case::outputs("generic_addressing", Shape::linear(1, n as u32), args, checks));
}
