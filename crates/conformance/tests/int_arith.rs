//! corpus/cuda/int_arith.cu: integer arithmetic at every width, on every PTX variant (nvcc and clang) and
//! backend. Everything is compared exactly.
//!
//! Inputs start with edge values (0, ±1, MIN, MAX, ...) and continue with seeded random values. The one
//! pairing left out is `MIN / -1` (and `MIN % -1`): it overflows, which C leaves undefined and the PTX ISA
//! does not specify, so there is no reference to compare with.

use conformance::prelude::*;

const SRC: &str = "int_arith";
/// Threads per launch: three full warps and a partial one.
const N: usize = 100;

fn i32_pairs(rng: &mut Rng, n: usize) -> (Vec<i32>, Vec<i32>) {
    let edges = EDGE_I32;
    let mut a = Vec::new();
    let mut b = Vec::new();
    // every edge against a few edges, then random
    for (k, &x) in edges.iter().enumerate() {
        a.push(x);
        b.push(edges[(k * 7 + 3) % edges.len()]);
    }
    for (k, &y) in edges.iter().enumerate() {
        a.push(edges[(k * 5 + 1) % edges.len()]);
        b.push(y);
    }
    while a.len() < n {
        let x = rng.next_u32() as i32;
        let y = match rng.next_u32() % 4 {
            0 => rng.range_i32(-20, 20),
            1 => rng.next_u32() as i32 >> (rng.next_u32() % 31),
            _ => rng.next_u32() as i32,
        };
        a.push(x);
        b.push(y);
    }
    a.truncate(n);
    b.truncate(n);
    for k in 0..n {
        if a[k] == i32::MIN && b[k] == -1 {
            b[k] = 1;
        }
    }
    (a, b)
}

fn i64_pairs(rng: &mut Rng, n: usize) -> (Vec<i64>, Vec<i64>) {
    let edges = EDGE_I64;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (k, &x) in edges.iter().enumerate() {
        a.push(x);
        b.push(edges[(k * 7 + 3) % edges.len()]);
        a.push(edges[(k * 5 + 1) % edges.len()]);
        b.push(x);
    }
    while a.len() < n {
        a.push(rng.next_u64() as i64);
        b.push(match rng.next_u32() % 3 {
            0 => rng.range_i64(-50, 50),
            1 => rng.next_u64() as i64 >> (rng.next_u32() % 63),
            _ => rng.next_u64() as i64,
        });
    }
    a.truncate(n);
    b.truncate(n);
    for k in 0..n {
        if a[k] == i64::MIN && b[k] == -1 {
            b[k] = 1;
        }
    }
    (a, b)
}

#[test]
fn int_wrap_widths() {
    let mut rng = Rng::new(100);
    let a8: Vec<i8> = rng.fill(N, &[0, 1, -1, 127, -128, 42, -43], |r| r.next_u32() as i8);
    let b8: Vec<u8> = rng.fill(N, &[0, 1, 55, 56, 255, 128], |r| r.next_u32() as u8);
    let a16: Vec<i16> = rng.fill(N, &[0, 1, -1, 173, 174, 182, 183, i16::MAX, i16::MIN, -182], |r| r.next_u32() as i16);
    let b16: Vec<u16> = rng.fill(N, &[0, 1, 78, 79, u16::MAX, 0x8000], |r| r.next_u32() as u16);
    let o8: Vec<i8> = a8.iter().map(|&x| (i32::from(x) * 3 + 100) as i8).collect();
    let ou8: Vec<u8> = b8.iter().map(|&x| u32::from(x).wrapping_add(200) as u8).collect();
    let o16: Vec<i16> = a16.iter().map(|&x| (i32::from(x) * i32::from(x) - 30000) as i16).collect();
    let ou16: Vec<u16> = b16.iter().map(|&x| u32::from(x).wrapping_mul(7).wrapping_add(65000) as u16).collect();
    let args = vec![
        Arg::input(&a8),
        Arg::input(&b8),
        Arg::input(&a16),
        Arg::input(&b16),
        Arg::output::<i8>(N),
        Arg::output::<u8>(N),
        Arg::output::<i16>(N),
        Arg::output::<u16>(N),
    ];
    let checks = vec![
        Check::exact(4, "o8", Values::I8(o8)),
        Check::exact(5, "ou8", Values::U8(ou8)),
        Check::exact(6, "o16", Values::I16(o16)),
        Check::exact(7, "ou16", Values::U16(ou16)),
    ];
    check(SRC, Case::outputs("int_wrap_widths", Shape::linear(1, N as u32), args, checks));
}

fn sad_s32(a: i32, b: i32, c: u32) -> u32 {
    let d = if a < b { b.wrapping_sub(a) } else { a.wrapping_sub(b) } as u32;
    d.wrapping_add(c)
}

fn sad_u32(a: u32, b: u32, c: u32) -> u32 {
    let d = b.abs_diff(a);
    d.wrapping_add(c)
}

fn mul24_s(a: i32, b: i32) -> i32 {
    let x = i64::from((a << 8) >> 8);
    let y = i64::from((b << 8) >> 8);
    (x * y) as i32
}

fn mul24_u(a: u32, b: u32) -> u32 {
    (u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)) as u32
}

#[test]
fn int_arith32() {
    let mut rng = Rng::new(101);
    let (a, b) = i32_pairs(&mut rng, N);
    let ua: Vec<u32> = rng.fill(N, EDGE_U32, |r| r.next_u32());
    let mut ub: Vec<u32> = EDGE_U32.iter().rev().copied().collect();
    while ub.len() < N {
        ub.push(if rng.next_u32().is_multiple_of(3) { rng.next_u32() % 100 } else { rng.next_u32() });
    }
    let mut out = Vec::new();
    let mut uout = Vec::new();
    for i in 0..N {
        let (x, y, ux, uy) = (a[i], b[i], ua[i], ub[i]);
        out.extend_from_slice(&[
            x.wrapping_add(y),
            x.wrapping_sub(y),
            x.wrapping_mul(y),
            ((i64::from(x) * i64::from(y)) >> 32) as i32,
            if y != 0 { x.wrapping_div(y) } else { 0 },
            if y != 0 { x.wrapping_rem(y) } else { 0 },
            x.min(y).wrapping_add(x.max(y)),
            x.wrapping_abs().wrapping_sub(y.wrapping_neg()),
        ]);
        uout.extend_from_slice(&[
            ux.wrapping_add(uy),
            ux.wrapping_mul(uy).wrapping_add(0x9E37_79B9),
            ((u64::from(ux) * u64::from(uy)) >> 32) as u32,
            ux.checked_div(uy).unwrap_or(0),
            if uy != 0 { ux % uy } else { 0 },
            ux.min(uy) ^ ux.max(uy),
            sad_u32(ux, uy, 5).wrapping_add(sad_s32(x, y, 1)),
            (mul24_s(x, y) as u32).wrapping_add(mul24_u(ux, uy)),
        ]);
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&ua),
        Arg::input(&ub),
        Arg::output::<i32>(8 * N),
        Arg::output::<u32>(8 * N),
    ];
    let checks = vec![Check::exact(4, "out", Values::I32(out)), Check::exact(5, "uout", Values::U32(uout))];
    check(SRC, Case::outputs("int_arith32", Shape::linear(1, N as u32), args, checks));
}

#[test]
fn int_arith64() {
    let mut rng = Rng::new(102);
    let (a, b) = i64_pairs(&mut rng, N);
    let ua: Vec<u64> = rng.fill(N, EDGE_U64, |r| r.next_u64());
    let mut ub: Vec<u64> = EDGE_U64.iter().rev().copied().collect();
    while ub.len() < N {
        ub.push(if rng.next_u32().is_multiple_of(3) {
            rng.next_u64() % 1000
        } else {
            rng.next_u64() >> (rng.next_u32() % 64)
        });
    }
    let mut out = Vec::new();
    let mut uout = Vec::new();
    for i in 0..N {
        let (x, y, ux, uy) = (a[i], b[i], ua[i], ub[i]);
        out.extend_from_slice(&[
            x.wrapping_mul(y).wrapping_add(x),
            ((i128::from(x) * i128::from(y)) >> 64) as i64,
            if y != 0 { x.wrapping_div(y) } else { 0 },
            if y != 0 { x.wrapping_rem(y) } else { 0 },
            x.min(y).wrapping_sub(x.max(y)),
            x.wrapping_abs().wrapping_add(y.wrapping_neg()),
        ]);
        uout.extend_from_slice(&[
            ((u128::from(ux) * u128::from(uy)) >> 64) as u64,
            ux.checked_div(uy).unwrap_or(0),
            if uy != 0 { ux % uy } else { 0 },
            ux.wrapping_sub(uy.wrapping_mul(3)),
        ]);
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&ua),
        Arg::input(&ub),
        Arg::output::<i64>(6 * N),
        Arg::output::<u64>(4 * N),
    ];
    let checks = vec![Check::exact(4, "out", Values::I64(out)), Check::exact(5, "uout", Values::U64(uout))];
    check(SRC, Case::outputs("int_arith64", Shape::linear(1, N as u32), args, checks));
}

#[test]
fn int_div16_wide() {
    let mut rng = Rng::new(103);
    let edges16: &[i16] = &[0, 1, -1, i16::MAX, i16::MIN, 7, -7, 300, -300, 2, -2];
    let a: Vec<i16> = rng.fill(N, edges16, |r| r.next_u32() as i16);
    let b: Vec<i16> = rng.fill(N, &[1, 0, 3, -1, 2, i16::MIN, i16::MAX, -7, 0, 5, i16::MIN], |r| {
        if r.next_u32() % 2 == 0 {
            r.range_i32(-40, 40) as i16
        } else {
            r.next_u32() as i16
        }
    });
    let ua: Vec<u16> = rng.fill(N, &[0, 1, u16::MAX, 0x8000, 1000], |r| r.next_u32() as u16);
    let ub: Vec<u16> = rng.fill(N, &[0, 7, 1, u16::MAX, 0], |r| {
        if r.next_u32() % 2 == 0 {
            (r.next_u32() % 50) as u16
        } else {
            r.next_u32() as u16
        }
    });
    let c: Vec<i32> = rng.fill(N + 2, EDGE_I32, |r| r.next_u32() as i32);
    let uc: Vec<u32> = rng.fill(N + 2, EDGE_U32, |r| r.next_u32());
    // uo64[3i + 2] is read by the kernel (the addend of mad.wide.u32) and never written.
    let uo64_init: Vec<u64> = rng.vec_u64(3 * N);
    let mut o32 = vec![0i32; 2 * N];
    let mut o64 = vec![0i64; 2 * N];
    let mut uo64 = uo64_init.clone();
    for i in 0..N {
        let y = if b[i] == 0 { 1 } else { b[i] };
        let uy = if ub[i] == 0 { 1 } else { ub[i] };
        let (x, ux) = (i32::from(a[i]), i32::from(ua[i]));
        o32[2 * i] = i32::from((x / i32::from(y)) as i16) + i32::from((x % i32::from(y)) as i16);
        o32[2 * i + 1] = i32::from((ux / i32::from(uy)) as u16) + i32::from((ux % i32::from(uy)) as u16);
        let prod = i64::from(c[i]) * i64::from(c[i + 1]);
        o64[2 * i] = prod;
        uo64[3 * i] = u64::from(uc[i]) * u64::from(uc[i + 1]);
        uo64[3 * i + 1] = (u64::from(uc[i]) * u64::from(uc[i + 2])).wrapping_add(uo64_init[3 * i + 2]);
        let w16 = i32::from(a[i]) * i32::from(b[i]);
        let mhi = (((i64::from(c[i]) * i64::from(c[i + 1])) >> 32) as i32).wrapping_add(c[i + 2]);
        let mw = prod.wrapping_add(prod);
        let s = sad_u32(uc[i], uc[i + 1], 7);
        let n16 = a[i].wrapping_neg();
        let ab16 = b[i].wrapping_abs();
        o32[2 * i + 1] = o32[2 * i + 1]
            .wrapping_add(w16)
            .wrapping_add(mhi)
            .wrapping_add(s as i32)
            .wrapping_add(i32::from(n16))
            .wrapping_add(i32::from(ab16));
        o64[2 * i + 1] = mw;
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&ua),
        Arg::input(&ub),
        Arg::input(&c),
        Arg::input(&uc),
        Arg::output::<i32>(2 * N),
        Arg::output::<i64>(2 * N),
        Arg::input(&uo64_init),
    ];
    let checks = vec![
        Check::exact(6, "o32", Values::I32(o32)),
        Check::exact(7, "o64", Values::I64(o64)),
        Check::exact(8, "uo64", Values::U64(uo64)),
    ];
    check(SRC, Case::outputs("int_div16_wide", Shape::linear(1, N as u32), args, checks));
}

#[test]
fn carry_chain_u128() {
    let mut rng = Rng::new(104);
    let mut a = Vec::new();
    let mut b = Vec::new();
    let edges: &[u128] = &[
        0,
        1,
        u128::MAX,
        u128::from(u64::MAX),
        1 << 64,
        (1 << 127) - 1,
        1 << 127,
        0xFFFF_FFFF,
        0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF,
    ];
    for i in 0..N {
        let x = if i < edges.len() { edges[i] } else { u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()) };
        let y = if i < edges.len() {
            edges[(i * 4 + 2) % edges.len()]
        } else {
            u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
        };
        a.extend_from_slice(&[x as u64, (x >> 64) as u64]);
        b.extend_from_slice(&[y as u64, (y >> 64) as u64]);
    }
    let mut out = Vec::new();
    for i in 0..N {
        let x = u128::from(a[2 * i]) | u128::from(a[2 * i + 1]) << 64;
        let y = u128::from(b[2 * i]) | u128::from(b[2 * i + 1]) << 64;
        let s = x.wrapping_add(y);
        let d = x.wrapping_sub(y);
        let p = u128::from(a[2 * i]) * u128::from(b[2 * i]);
        for v in [s, d, p] {
            out.push(v as u64);
            out.push((v >> 64) as u64);
        }
    }
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<u64>(6 * N)];
    check(
        SRC,
        Case::outputs(
            "carry_chain_u128",
            Shape::linear(1, N as u32),
            args,
            vec![Check::exact(2, "out", Values::U64(out))],
        ),
    );
}
