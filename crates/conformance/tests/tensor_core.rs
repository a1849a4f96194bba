//! corpus/cuda/tensor_core.cu: warp matrix instructions — `wmma.load/mma/store` (f16 and bf16 multiplicands,
//! f32 and f16 accumulators, row- and column-major operands), `mma.sync.m16n8k16` and `ldmatrix.x4`.
//!
//! The references are matrix products computed on the CPU with the emulator's documented arithmetic
//! (`crates/emu/src/tensor.rs`): per element, `acc = C`, then `acc = fma(A[m][k], B[k][n], acc)` for
//! `k = 0..K` in `.f32`, rounded to nearest even (`fp::fma_f32`, the suite's own correctly rounded fma); an
//! `.f16` result is that accumulator rounded to nearest `.f16`. With that order fixed the comparison is exact
//! (hardware tensor cores add each step's products in a wider truncating adder and may differ in the last
//! bits; the ISA leaves that unspecified). `mma.sync` operands are placed by the ISA's fragment layout for
//! `m16n8k16`, so that check also pins the layout; `wmma` fragments are opaque, and only what goes through
//! memory is compared.
//!
//! Below the architectures that have them the kernels are empty: the optimised builds are skipped as empty
//! bodies, the `-G` builds keep a shell that runs and must leave memory untouched. The `ldmatrix.x4` of
//! `mma_sync_m16n8k16` reads four 8×8 matrices from a shared tile of which the kernel writes only the first
//! 32 words (matrix 0); matrices 1–3 are shared memory nobody wrote, which the emulator zero-fills (on
//! hardware their contents are undefined), so the expected `r0 ^ r1 ^ r2 ^ r3` is `r0`.

use conformance::prelude::*;

const SRC: &str = "tensor_core";

/// f16 inputs: random values in [-2, 2] plus zeros, subnormals, ±1 and a large finite value.
fn f16_inputs(seed: u64, n: usize) -> Vec<u16> {
    let edges = [0x0000u16, 0x8000, 0x0001, 0x83ff, 0x3c00, 0xbc00, 0x5640];
    let mut rng = Rng::new(seed);
    rng.fill(n, &edges, |r| fp::f16_bits(r.f64_in(-2.0, 2.0), Round::Rn))
}

/// bf16 inputs: random values in [-4, 4] plus zeros, a subnormal and ±1.
fn bf16_inputs(seed: u64, n: usize) -> Vec<u16> {
    let edges = [0x0000u16, 0x8000, 0x0001, 0x3f80, 0xbf80];
    let mut rng = Rng::new(seed);
    rng.fill(n, &edges, |r| fp::bf16_bits(r.f64_in(-4.0, 4.0), Round::Rn))
}

fn h(bits: u16) -> f32 {
    fp::f16_to_f64(bits) as f32
}

fn bf(bits: u16) -> f32 {
    fp::bf16_to_f64(bits) as f32
}

/// `D = A·B + C` (row-major `rows × k`, `k × cols`, `rows × cols`), one f32 fma per step in order of k.
fn mac(rows: usize, cols: usize, k: usize, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = Vec::with_capacity(rows * cols);
    for m in 0..rows {
        for n in 0..cols {
            let mut acc = c[m * cols + n];
            for kk in 0..k {
                acc = fp::fma_f32(a[m * k + kk], b[kk * cols + n], acc, Round::Rn);
            }
            d.push(acc);
        }
    }
    d
}

/// Element (r, c) of a 16×16 matrix stored row- or column-major.
fn at(v: &[f32], col_major: bool, r: usize, c: usize) -> f32 {
    if col_major {
        v[c * 16 + r]
    } else {
        v[r * 16 + c]
    }
}

fn matrix(v: &[f32], col_major: bool) -> Vec<f32> {
    (0..256).map(|i| at(v, col_major, i / 16, i % 16)).collect()
}

/// Where the architecture is below `min_arch`, the `-G` shell must leave every buffer as it was.
fn untouched(args: &[Arg]) -> Vec<Check> {
    args.iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            Arg::Buffer(b) => Some(Check::exact(i, "untouched", Values::U8(b.clone()))),
            Arg::Zeroed(n) => Some(Check::exact(i, "untouched", Values::U8(vec![0; *n]))),
            _ => None,
        })
        .collect()
}

#[test]
fn wmma_16x16x16_f16_f32() {
    // A row-major, B column-major, C = 0, D stored row-major.
    let (a, b) = (f16_inputs(1, 256), f16_inputs(2, 256));
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<f32>(256)];
    let shell = untouched(&args);
    let af: Vec<f32> = a.iter().map(|&x| h(x)).collect();
    let bf: Vec<f32> = b.iter().map(|&x| h(x)).collect();
    let d = mac(16, 16, 16, &matrix(&af, false), &matrix(&bf, true), &[0.0; 256]);
    check(
        SRC,
        Case::new("wmma_16x16x16_f16_f32", Shape::linear(1, 32), args, move |ctx| {
            if ctx.arch() < 70 {
                return Expect::Outputs(shell.clone());
            }
            Expect::Outputs(vec![Check::exact(2, "D = A·B", Values::F32(d.clone()))])
        }),
    );
}

#[test]
fn wmma_16x16x16_f16_f16() {
    // A column-major, B row-major, C loaded column-major from `c`, D (f16) stored column-major over it.
    let (a, b, c) = (f16_inputs(3, 256), f16_inputs(4, 256), f16_inputs(5, 256));
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::input(&c)];
    let shell = untouched(&args);
    let af: Vec<f32> = a.iter().map(|&x| h(x)).collect();
    let bf: Vec<f32> = b.iter().map(|&x| h(x)).collect();
    let cf: Vec<f32> = c.iter().map(|&x| h(x)).collect();
    let d = mac(16, 16, 16, &matrix(&af, true), &matrix(&bf, false), &matrix(&cf, true));
    // back to column-major f16
    let out: Vec<u16> = (0..256).map(|i| fp::f16_bits(f64::from(d[(i % 16) * 16 + i / 16]), Round::Rn)).collect();
    check(
        SRC,
        Case::new("wmma_16x16x16_f16_f16", Shape::linear(1, 32), args, move |ctx| {
            if ctx.arch() < 70 {
                return Expect::Outputs(shell.clone());
            }
            Expect::Outputs(vec![Check::exact(2, "D = A·B + C (f16, column-major)", Values::F16(out.clone()))])
        }),
    );
}

#[test]
fn wmma_bf16() {
    // A and B row-major bf16, C = 1.0, D stored row-major.
    let (a, b) = (bf16_inputs(6, 256), bf16_inputs(7, 256));
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<f32>(256)];
    let shell = untouched(&args);
    let af: Vec<f32> = a.iter().map(|&x| bf(x)).collect();
    let bff: Vec<f32> = b.iter().map(|&x| bf(x)).collect();
    let d = mac(16, 16, 16, &matrix(&af, false), &matrix(&bff, false), &[1.0; 256]);
    check(
        SRC,
        Case::new("wmma_bf16", Shape::linear(1, 32), args, move |ctx| {
            if ctx.arch() < 80 {
                return Expect::Outputs(shell.clone());
            }
            Expect::Outputs(vec![Check::exact(2, "D = A·B + 1", Values::F32(d.clone()))])
        }),
    );
}

/// The ISA's `m16n8k16` fragment layouts (`g = lane >> 2`, `t = lane % 4`): (row, column) of element `i`.
fn frag_a(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2))
}

fn frag_b(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    (2 * t + (i & 1) + 8 * (i >> 1), g)
}

fn frag_c(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    (g + 8 * (i >> 1), 2 * t + (i & 1))
}

#[test]
fn mma_sync_m16n8k16() {
    // Lane l passes a[4l..4l+4] as its A fragment (eight f16), b[2l..2l+2] as its B fragment, C = 0, and
    // stores D's four f32 at c[4l..4l+4]; then (sm_75+) ldmatrix.x4 over a shared tile holding a[0..32], and
    // c[128 + l] = (float)(r0 ^ r1 ^ r2 ^ r3).
    let a16 = f16_inputs(8, 256);
    let b16 = f16_inputs(9, 128);
    let pack = |v: &[u16]| -> Vec<u32> { v.chunks(2).map(|p| u32::from(p[0]) | (u32::from(p[1]) << 16)).collect() };
    let (a, b) = (pack(&a16), pack(&b16));
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<f32>(160)];
    let shell = untouched(&args);
    let mut am = vec![0f32; 16 * 16];
    let mut bm = vec![0f32; 16 * 8];
    for lane in 0..32 {
        for i in 0..8 {
            let (r, c) = frag_a(lane, i);
            am[r * 16 + c] = h(a16[8 * lane + i]);
        }
        for i in 0..4 {
            let (r, c) = frag_b(lane, i);
            bm[r * 8 + c] = h(b16[4 * lane + i]);
        }
    }
    let d = mac(16, 8, 16, &am, &bm, &[0.0; 128]);
    let mut mma_out = vec![0f32; 128];
    for lane in 0..32 {
        for i in 0..4 {
            let (r, c) = frag_c(lane, i);
            mma_out[4 * lane + i] = d[r * 8 + c];
        }
    }
    // ldmatrix.x4: lane l's r0 is row l/4, columns 2(l%4), 2(l%4)+1 of matrix 0, i.e. tile word l = a[l];
    // r1..r3 come from the zero-filled, never written rest of the tile.
    let ld_out: Vec<f32> = a[..32].iter().map(|&w| w as f32).collect();
    check(
        SRC,
        Case::new("mma_sync_m16n8k16", Shape::linear(1, 32), args, move |ctx| {
            if ctx.arch() < 75 {
                return Expect::Outputs(shell.clone());
            }
            let mut expected = if ctx.arch() >= 80 { mma_out.clone() } else { vec![0.0; 128] };
            expected.extend_from_slice(&ld_out);
            Expect::Outputs(vec![Check::exact(2, "mma D fragments, then ldmatrix xor", Values::F32(expected))])
        }),
    );
}
