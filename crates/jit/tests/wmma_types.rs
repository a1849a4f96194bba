//! `wmma` beyond `.f16`/`.bf16` (issue 21), on the emulator and the JIT with and without its vector path:
//! `.s8`/`.u8` multiplicands with `.s32` accumulators (`m16n16k16`, `m32n8k16`, `m8n32k16`, with and
//! without `.satfinite`), `.tf32` `m16n16k8` with `.f32` accumulators and `.f64` `m8n8k4` with its rounding
//! modifiers, each through `wmma.load.{a,b,c}`, `wmma.mma` and `wmma.store.d` in row- and column-major
//! layouts. `wmma` fragments are opaque in PTX (the ISA leaves their per-lane layout unspecified), so the
//! test checks only what goes through memory: D in memory must be the plain `D = A·B + C` of the matrices in
//! memory, by the ISA's precision rules (integers exact, then wrapped to 32 bits or with `.satfinite`
//! clamped; `.tf32` operands count by their upper 19 bits; `.f64` one fused multiply-add per step).

mod common;

use common::{engines, launch, Arg, Rng};
use device::Dim3;

/// One matrix operand in memory: its PTX type, element bytes, and whether it is stored column-major
/// with a leading dimension `ld` (elements).
#[derive(Clone, Copy)]
struct Operand {
    ty: &'static str,
    bytes: usize,
    col: bool,
    ld: usize,
}

/// The bytes of the `rows × cols` row-major matrix `m` (element bits) as `o` stores it.
fn store(m: &[u64], rows: usize, cols: usize, o: Operand) -> Vec<u8> {
    let major = if o.col { cols } else { rows };
    let mut out = vec![0u8; major * o.ld * o.bytes];
    for r in 0..rows {
        for c in 0..cols {
            let at = if o.col { c * o.ld + r } else { r * o.ld + c } * o.bytes;
            out[at..at + o.bytes].copy_from_slice(&m[r * cols + c].to_le_bytes()[..o.bytes]);
        }
    }
    out
}

/// The row-major matrix (element bits) that `o` stores in `bytes`.
fn load(bytes: &[u8], rows: usize, cols: usize, o: Operand) -> Vec<u64> {
    let mut m = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let at = if o.col { c * o.ld + r } else { r * o.ld + c } * o.bytes;
            m.push(bytes[at..at + o.bytes].iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)));
        }
    }
    m
}

fn layout(col: bool) -> &'static str {
    if col {
        "col"
    } else {
        "row"
    }
}

/// The register declaration type of a fragment element type.
fn reg(ty: &str) -> &'static str {
    match ty {
        "f64" => "f64",
        "f32" => "f32",
        _ => "b32",
    }
}

/// Fragment register counts of the ISA's `wmma` fragments: (A, B, C/D).
fn regs(shape: (usize, usize, usize), ab_bytes: usize, cd_bytes: usize) -> (usize, usize, usize) {
    let (m, n, k) = shape;
    let per = |bytes: usize, elems: usize| elems * bytes / 32 / bytes.max(4);
    (per(ab_bytes, m * k), per(ab_bytes, k * n), per(cd_bytes, m * n))
}

/// Runs `load a, b, c; mma; store d` on every engine; returns each engine's D (row-major element bits).
#[allow(clippy::too_many_arguments)]
fn run(
    shape: (usize, usize, usize),
    mma_suffix: &str,
    [oa, ob, oc, od]: [Operand; 4],
    a: &[u64],
    b: &[u64],
    c: &[u64],
) -> Vec<(&'static str, Vec<u64>)> {
    let (m, n, k) = shape;
    let (na, nb, nc) = regs(shape, oa.bytes, oc.bytes);
    let list = |p: &str, n: usize| (0..n).map(|i| format!("%{p}{i}")).collect::<Vec<_>>().join(", ");
    let sh = format!("m{m}n{n}k{k}");
    let kernel = format!(
        r#".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b64 %rd<5>;
    .reg .{ra} %a<{na}>;
    .reg .{ra} %b<{nb}>;
    .reg .{rc} %c<{nc}>;
    .reg .{rc} %d<{nc}>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    wmma.load.a.sync.aligned.{la}.{sh}.global.{ta} {{{aa}}}, [%rd1], {lda};
    wmma.load.b.sync.aligned.{lb}.{sh}.global.{tb} {{{bb}}}, [%rd2], {ldb};
    wmma.load.c.sync.aligned.{lc}.{sh}.global.{tc} {{{cc}}}, [%rd3], {ldc};
    wmma.mma.sync.aligned.{la}.{lb}.{sh}{mma_suffix} {{{dd}}}, {{{aa}}}, {{{bb}}}, {{{cc}}};
    wmma.store.d.sync.aligned.{ld}.{sh}.global.{td} [%rd4], {{{dd}}}, {ldd};
    ret;
}}
"#,
        ra = reg(oa.ty),
        rc = reg(oc.ty),
        aa = list("a", na),
        bb = list("b", nb),
        cc = list("c", nc),
        dd = list("d", nc),
        la = layout(oa.col),
        lb = layout(ob.col),
        lc = layout(oc.col),
        ld = layout(od.col),
        ta = oa.ty,
        tb = ob.ty,
        tc = oc.ty,
        td = od.ty,
        lda = oa.ld,
        ldb = ob.ld,
        ldc = oc.ld,
        ldd = od.ld,
    );
    let module = ir::compile(&kernel).unwrap_or_else(|e| panic!("{e:?}\n{kernel}"));
    let args = [
        Arg::Buf(store(a, m, k, oa)),
        Arg::Buf(store(b, k, n, ob)),
        Arg::Buf(store(c, m, n, oc)),
        Arg::Buf(vec![0; store(c, m, n, od).len()]),
    ];
    engines()
        .into_iter()
        .map(|(name, mut engine)| {
            let (out, _) = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &args)
                .unwrap_or_else(|e| panic!("{name}: {e}\n{kernel}"));
            (name, load(&out[3], m, n, od))
        })
        .collect()
}

fn check(what: &str, got: Vec<(&'static str, Vec<u64>)>, want: &[u64]) {
    for (engine, d) in got {
        assert_eq!(d, want, "{engine}: {what}");
    }
}

fn op(ty: &'static str, bytes: usize, col: bool, ld: usize) -> Operand {
    Operand { ty, bytes, col, ld }
}

/// Integer `wmma`: `.s8` or `.u8` A and B (the same type for both: `wmma` has no mixed forms), `.s32` C
/// and D.
fn integer_case(shape: (usize, usize, usize), signed: (bool, bool), cols: [bool; 4], sat: bool, seed: u64) {
    let (m, n, k) = shape;
    let mut rng = Rng(seed);
    let elem = |rng: &mut Rng, s: bool| if s { rng.range(-128, 127) } else { rng.range(0, 255) };
    let a: Vec<i64> = (0..m * k).map(|_| elem(&mut rng, signed.0)).collect();
    let b: Vec<i64> = (0..k * n).map(|_| elem(&mut rng, signed.1)).collect();
    // Every fourth C is near a limit, so that some sums leave the `.s32` range.
    let c: Vec<i64> = (0..m * n)
        .map(|i| match i % 4 {
            0 => i64::from(i32::MAX) - rng.range(0, 3000),
            2 => i64::from(i32::MIN) + rng.range(0, 3000),
            _ => rng.range(-100_000, 100_000),
        })
        .collect();
    let mut want = Vec::new();
    for r in 0..m {
        for col in 0..n {
            let sum = c[r * n + col] + (0..k).map(|kk| a[r * k + kk] * b[kk * n + col]).sum::<i64>();
            let v = if sat { sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) } else { sum };
            want.push(u64::from(v as i32 as u32));
        }
    }
    let t = |s: bool| if s { "s8" } else { "u8" };
    let (ta, tb) = (t(signed.0), t(signed.1));
    let ld = |col: bool, rows: usize, cols: usize| if col { rows } else { cols } + 16;
    let ops = [
        op(ta, 1, cols[0], ld(cols[0], m, k)),
        op(tb, 1, cols[1], ld(cols[1], k, n)),
        op("s32", 4, cols[2], ld(cols[2], m, n)),
        op("s32", 4, cols[3], ld(cols[3], m, n)),
    ];
    let suffix = format!(".s32.{ta}.{tb}.s32{}", if sat { ".satfinite" } else { "" });
    let u = |v: &[i64]| v.iter().map(|&x| x as u64).collect::<Vec<u64>>();
    let got = run(shape, &suffix, ops, &u(&a), &u(&b), &u(&c));
    check(&format!("wmma {shape:?}{suffix} layouts {cols:?}"), got, &want);
}

#[test]
fn integer_wmma_shapes_layouts_and_satfinite() {
    let shapes = [(16, 16, 16), (32, 8, 16), (8, 32, 16)];
    for (i, shape) in shapes.into_iter().enumerate() {
        let seed = 10 * i as u64 + 1;
        integer_case(shape, (true, true), [false, true, false, false], false, seed);
        integer_case(shape, (false, false), [true, false, true, true], true, seed + 1);
        integer_case(shape, (true, true), [false, false, false, true], true, seed + 2);
        integer_case(shape, (false, false), [true, true, true, false], false, seed + 3);
    }
}

#[test]
fn tf32_wmma_m16n16k8_reads_the_upper_19_bits() {
    let mut rng = Rng(77);
    // Values with at most 10 fraction bits, so every product and sum below is exact in `.f32`; the low 13
    // bits of every A and B are set at random and must not count.
    let value = |rng: &mut Rng, scale: f32| {
        let v = rng.range(-512, 512) as f32 / scale;
        u64::from(v.to_bits() | (rng.next() as u32 & 0x1FFF))
    };
    let a: Vec<u64> = (0..16 * 8).map(|_| value(&mut rng, 64.0)).collect();
    let b: Vec<u64> = (0..8 * 16).map(|_| value(&mut rng, 32.0)).collect();
    let c: Vec<u64> = (0..16 * 16).map(|_| u64::from((rng.range(-1000, 1000) as f32 / 4.0).to_bits())).collect();
    let f = |bits: u64| f32::from_bits(bits as u32 & 0xFFFF_E000);
    let want: Vec<u64> = (0..256)
        .map(|i| {
            let (r, col) = (i / 16, i % 16);
            let sum =
                f32::from_bits(c[i] as u32) + (0..8).map(|kk| f(a[r * 8 + kk]) * f(b[kk * 16 + col])).sum::<f32>();
            u64::from(sum.to_bits())
        })
        .collect();
    for (cols, ld) in [([false, true, false, false], 0), ([true, false, true, true], 8)] {
        let ops = [
            op("tf32", 4, cols[0], if cols[0] { 16 } else { 8 } + ld),
            op("tf32", 4, cols[1], if cols[1] { 8 } else { 16 } + ld),
            op("f32", 4, cols[2], 16 + ld),
            op("f32", 4, cols[3], 16 + ld),
        ];
        let got = run((16, 16, 8), ".f32.tf32.tf32.f32", ops, &a, &b, &c);
        check(&format!("tf32 layouts {cols:?}"), got, &want);
    }
}

#[test]
fn f64_wmma_m8n8k4_is_a_fused_multiply_add_with_its_rounding() {
    let mut rng = Rng(5);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let ops = |cols: [bool; 4]| {
        let ld = |col: bool, rows: usize, cols: usize| if col { rows } else { cols };
        [
            op("f64", 8, cols[0], ld(cols[0], 8, 4)),
            op("f64", 8, cols[1], ld(cols[1], 4, 8)),
            op("f64", 8, cols[2], 8),
            op("f64", 8, cols[3], 8),
        ]
    };
    // Exact sums first: every rounding gives the same result.
    let a: Vec<f64> = (0..32).map(|_| rng.range(-64, 64) as f64 / 8.0).collect();
    let b: Vec<f64> = (0..32).map(|_| rng.range(-64, 64) as f64 / 8.0).collect();
    let c: Vec<f64> = (0..64).map(|_| rng.range(-1000, 1000) as f64 / 16.0).collect();
    let exact: Vec<f64> =
        (0..64).map(|i| c[i] + (0..4).map(|kk| a[(i / 8) * 4 + kk] * b[kk * 8 + i % 8]).sum::<f64>()).collect();
    for (rnd, cols) in [("", [false, true, false, false]), (".rz", [true, false, true, true])] {
        let got = run((8, 8, 4), &format!("{rnd}.f64.f64.f64.f64"), ops(cols), &bits(&a), &bits(&b), &bits(&c));
        check(&format!("f64{rnd} exact"), got, &bits(&exact));
    }
    // A product that needs rounding: (1 + 2^-30)² = 1 + 2^-29 + 2^-60, positive in even rows and negative in
    // odd ones (A's column 0, B's row 0; everything else zero, C zero).
    let x = 1.0 + 2f64.powi(-30);
    let a: Vec<f64> = (0..32)
        .map(|i| {
            if i % 4 != 0 {
                0.0
            } else if (i / 4) % 2 == 0 {
                x
            } else {
                -x
            }
        })
        .collect();
    let b: Vec<f64> = (0..32).map(|i| if i < 8 { x } else { 0.0 }).collect();
    let c = vec![0.0; 64];
    let (near, far) = (1.0 + 2f64.powi(-29), 1.0 + 2f64.powi(-29) + 2f64.powi(-52));
    for (rnd, pos, neg) in [(".rn", near, -near), (".rz", near, -near), (".rm", near, -far), (".rp", far, -near)] {
        let want: Vec<f64> = (0..64).map(|i| if (i / 8) % 2 == 0 { pos } else { neg }).collect();
        let got = run((8, 8, 4), &format!("{rnd}.f64.f64.f64.f64"), ops([false; 4]), &bits(&a), &bits(&b), &bits(&c));
        check(&format!("f64{rnd}"), got, &bits(&want));
    }
}

/// The kernels of `fixtures/wmma_types.cu` (nvcc 13, `-arch=sm_80`) on every engine: each returns the bytes
/// of its last argument, D.
fn fixture(kernel: &str, args: &[Arg]) -> Vec<(&'static str, Vec<u8>)> {
    let module = ir::compile(include_str!("fixtures/wmma_types.sm_80.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    engines()
        .into_iter()
        .map(|(name, mut engine)| {
            let (out, _) = launch(engine.as_mut(), &module, kernel, Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, args)
                .unwrap_or_else(|e| panic!("{name}: {kernel}: {e}"));
            (name, out.last().cloned().unwrap_or_default())
        })
        .collect()
}

fn le_bytes<const N: usize>(v: impl IntoIterator<Item = [u8; N]>) -> Vec<u8> {
    v.into_iter().flatten().collect()
}

/// The integer kernels: `wmma_s8` (m16n16k16, A row-major, B column-major, C row-major, D column-major,
/// `.satfinite`) and `wmma_u8` (m32n8k16, A column-major, B and C and D row-major, wrapping).
#[test]
fn nvcc_wmma_integer_kernels() {
    let mut rng = Rng(9);
    for (kernel, (m, n, k), signed, [ca, cb, cc, cd]) in [
        ("_Z7wmma_s8PKaS0_PKiPi", (16, 16, 16), true, [false, true, false, true]),
        ("_Z7wmma_u8PKhS0_PKiPi", (32, 8, 16), false, [true, false, false, false]),
    ] {
        let elem = |rng: &mut Rng| if signed { rng.range(-128, 127) } else { rng.range(0, 255) };
        let a: Vec<i64> = (0..m * k).map(|_| elem(&mut rng)).collect();
        let b: Vec<i64> = (0..k * n).map(|_| elem(&mut rng)).collect();
        let c: Vec<i64> = (0..m * n)
            .map(|i| match i % 3 {
                0 => i64::from(i32::MAX) - rng.range(0, 5000),
                1 => i64::from(i32::MIN) + rng.range(0, 5000),
                _ => rng.range(-1000, 1000),
            })
            .collect();
        let want: Vec<u64> = (0..m * n)
            .map(|i| {
                let (r, col) = (i / n, i % n);
                let sum = c[i] + (0..k).map(|kk| a[r * k + kk] * b[kk * n + col]).sum::<i64>();
                let v = if signed { sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) } else { sum };
                u64::from(v as i32 as u32)
            })
            .collect();
        let u = |v: &[i64]| v.iter().map(|&x| x as u64).collect::<Vec<u64>>();
        let dense =
            |col: bool, rows: usize, cols: usize, bytes: usize| op("", bytes, col, if col { rows } else { cols });
        let od = dense(cd, m, n, 4);
        let args = [
            Arg::Buf(store(&u(&a), m, k, dense(ca, m, k, 1))),
            Arg::Buf(store(&u(&b), k, n, dense(cb, k, n, 1))),
            Arg::Buf(store(&u(&c), m, n, dense(cc, m, n, 4))),
            Arg::Buf(vec![0; m * n * 4]),
        ];
        for (engine, d) in fixture(kernel, &args) {
            assert_eq!(load(&d, m, n, od), want, "{engine}: {kernel}");
        }
    }
}

/// `wmma_tf32`: A (16×8, row-major) and B (8×16, column-major) rounded with `cvt.rna.tf32.f32` (to 10
/// fraction bits, ties away from zero), C and D row-major; one `.f32` fma per step in order of k.
#[test]
fn nvcc_wmma_tf32_kernel() {
    let mut rng = Rng(21);
    let val = |rng: &mut Rng| (rng.range(-1 << 20, 1 << 20) as f32) / 65536.0;
    let a: Vec<f32> = (0..128).map(|_| val(&mut rng)).collect();
    let b: Vec<f32> = (0..128).map(|_| val(&mut rng)).collect();
    let c: Vec<f32> = (0..256).map(|_| val(&mut rng)).collect();
    let rna = |x: f32| f32::from_bits((x.to_bits() + 0x1000) & 0xFFFF_E000);
    let want: Vec<u64> = (0..256)
        .map(|i| {
            let (r, col) = (i / 16, i % 16);
            let acc = (0..8).fold(c[i], |acc, kk| rna(a[r * 8 + kk]).mul_add(rna(b[col * 8 + kk]), acc));
            u64::from(acc.to_bits())
        })
        .collect();
    let f = |v: &[f32]| le_bytes(v.iter().map(|x| x.to_le_bytes()));
    let args = [Arg::Buf(f(&a)), Arg::Buf(f(&b)), Arg::Buf(f(&c)), Arg::Buf(vec![0; 1024])];
    for (engine, d) in fixture("_Z9wmma_tf32PKfS0_S0_Pf", &args) {
        assert_eq!(load(&d, 16, 16, op("", 4, false, 16)), want, "{engine}");
    }
}

/// `wmma_f64`: A (8×4) and B (4×8) row-major, C and D column-major; one `.f64` fma per step, `.rn`.
#[test]
fn nvcc_wmma_f64_kernel() {
    let mut rng = Rng(33);
    let val = |rng: &mut Rng| (rng.next() >> 11) as f64 / (1u64 << 40) as f64 - 4096.0;
    let a: Vec<f64> = (0..32).map(|_| val(&mut rng)).collect();
    let b: Vec<f64> = (0..32).map(|_| val(&mut rng)).collect();
    let c: Vec<f64> = (0..64).map(|_| val(&mut rng)).collect();
    // c and d are column-major: c[8·col + r].
    let want: Vec<u64> = (0..64)
        .map(|i| {
            let (r, col) = (i / 8, i % 8);
            (0..4).fold(c[col * 8 + r], |acc, kk| a[r * 4 + kk].mul_add(b[kk * 8 + col], acc)).to_bits()
        })
        .collect();
    let f = |v: &[f64]| le_bytes(v.iter().map(|x| x.to_le_bytes()));
    let args = [Arg::Buf(f(&a)), Arg::Buf(f(&b)), Arg::Buf(f(&c)), Arg::Buf(vec![0; 512])];
    for (engine, d) in fixture("_Z8wmma_f64PKdS0_S0_Pd", &args) {
        assert_eq!(load(&d, 8, 8, op("", 8, true, 8)), want, "{engine}");
    }
}

/// Single-bit `wmma` (`m8n8k128`): the bits of A's row `r` (row-major, `ld` bits apart) and of B's column
/// `n` (column-major, `ld` bits apart) as 32-bit words, element `j` at bit `j % 32` of word `j / 32`; the
/// reference counts, per element of D, the k where `A[r][k] op B[k][n]` is 1, added to C with wrapping.
fn b1_reference(a: &[u32], b: &[u32], c: &[i32], ld_words: usize, and: bool) -> Vec<u64> {
    let bit = |m: &[u32], major: usize, kk: usize| (m[major * ld_words + kk / 32] >> (kk % 32)) & 1;
    (0..64)
        .map(|i| {
            let (r, n) = (i / 8, i % 8);
            let ones = (0..128)
                .filter(|&kk| {
                    let (x, y) = (bit(a, r, kk), bit(b, n, kk));
                    (if and { x & y } else { x ^ y }) == 1
                })
                .count();
            u64::from(c[i].wrapping_add(ones as i32) as u32)
        })
        .collect()
}

fn b1_inputs(seed: u64, ld_words: usize) -> (Vec<u32>, Vec<u32>, Vec<i32>) {
    let mut rng = Rng(seed);
    let a: Vec<u32> = (0..8 * ld_words).map(|_| rng.next() as u32).collect();
    let b: Vec<u32> = (0..8 * ld_words).map(|_| rng.next() as u32).collect();
    let c: Vec<i32> = (0..64).map(|i| if i % 7 == 0 { i32::MAX - 20 } else { rng.range(-3000, 3000) as i32 }).collect();
    (a, b, c)
}

fn words_le(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    le_bytes(v.into_iter().map(u32::to_le_bytes))
}

/// `wmma_b1` of the fixture: `.xor.popc` into D, `.and.popc` into the 64 words after it.
#[test]
fn nvcc_wmma_b1_kernel() {
    let (a, b, c) = b1_inputs(55, 4);
    let mut want = b1_reference(&a, &b, &c, 4, false);
    want.extend(b1_reference(&a, &b, &c, 4, true));
    let args = [
        Arg::Buf(words_le(a)),
        Arg::Buf(words_le(b)),
        Arg::Buf(words_le(c.iter().map(|&v| v as u32))),
        Arg::Buf(vec![0; 512]),
    ];
    for (engine, d) in fixture("_Z7wmma_b1PKjS0_PKiPi", &args) {
        let got: Vec<u64> = d.chunks(4).map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap()))).collect();
        assert_eq!(got, want, "{engine}");
    }
}

/// `.b1` loads with a stride of 256 bits (the fragment's 128 bits of each row or column, then 128 more that
/// must not count).
#[test]
fn b1_wmma_stride_counts_bits() {
    let (a, b, c) = b1_inputs(66, 8);
    let kernel = r#".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    wmma.load.a.sync.aligned.row.m8n8k128.global.b1 {%r0}, [%rd1], 256;
    wmma.load.b.sync.aligned.col.m8n8k128.global.b1 {%r1}, [%rd2], 256;
    wmma.load.c.sync.aligned.row.m8n8k128.global.s32 {%r2, %r3}, [%rd3];
    wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r4, %r5}, {%r0}, {%r1}, {%r2, %r3};
    wmma.store.d.sync.aligned.row.m8n8k128.global.s32 [%rd4], {%r4, %r5};
    ret;
}
"#;
    let module = ir::compile(kernel).unwrap_or_else(|e| panic!("{e:?}"));
    let want = b1_reference(&a, &b, &c, 8, false);
    let args = [
        Arg::Buf(words_le(a)),
        Arg::Buf(words_le(b)),
        Arg::Buf(words_le(c.iter().map(|&v| v as u32))),
        Arg::Buf(vec![0; 256]),
    ];
    for (engine, mut backend) in engines() {
        let (out, _) = launch(backend.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{engine}: {e}"));
        let got: Vec<u64> = out[3].chunks(4).map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap()))).collect();
        assert_eq!(got, want, "{engine}");
    }
}

/// Forms the ISA does not have, or that are not implemented, are refused at load naming the reason.
#[test]
fn other_matrix_forms_stay_refused() {
    for (body, why) in [
        (
            "wmma.mma.sync.aligned.row.col.m16n16k16.s32.u8.s8.s32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, \
             {%r0, %r1}, {%r2, %r3}, {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7};",
            "unsupported `wmma.mma` type combination",
        ),
        ("wmma.load.a.sync.aligned.col.m8n8k128.global.b1 {%r0}, [%rd1], 128;", "A fragment is `.row`"),
        (
            "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32.satfinite {%f0, %f1, %f2, %f3, %f0, %f1, %f2, \
             %f3}, {%r0, %r1, %r2, %r3}, {%r0, %r1, %r2, %r3}, {%f0, %f1, %f2, %f3, %f0, %f1, %f2, %f3};",
            "`.satfinite` on a floating-point",
        ),
        (
            "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%r6}, \
             {%r0, %r1, %r2, %r3};",
            "`.b1` `mma` is",
        ),
        (
            "mma.sync.aligned.m8n8k4.row.col.rz.f32.f16.f16.f32 {%f0, %f1, %f2, %f3, %f0, %f1, %f2, %f3}, \
             {%r0, %r1}, {%r2, %r3}, {%f0, %f1, %f2, %f3, %f0, %f1, %f2, %f3};",
            "takes no `.satfinite` or rounding modifier",
        ),
        (
            "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, \
             {%r0, %r1}, {%r2, %r3}, {%f0, %f1, %f2, %f3}, %r4, 0;",
            "sparse `mma.sp` is not implemented",
        ),
    ] {
        let err = common::refusal("sm_80", body);
        assert!(err.contains(why), "`{body}`: {err}");
    }
}
