//! FP8 `mma.sync.aligned.m16n8k32` and `.m16n8k16` `.row.col.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}`
//! (PTX ISA 9.7.14.5.14, sm_89) on the emulator and the JIT (with and without its vector path), against a
//! model: the fragment layouts of the ISA's 8-bit tables ("Matrix Fragments for mma.m16n8k32" and
//! "…m16n8k16" with `.e4m3`/`.e5m2`), the FP8 encodings decoded from their definition (e4m3: 4 exponent bits
//! biased by 7, 3 fraction bits; e5m2: 5 biased by 15, 2 fraction bits), and D = A·B + C computed exactly
//! (the operands are chosen so every partial sum is exact in the result type).

mod common;

use common::{engines, launch, words, Arg};
use device::Dim3;

/// The value of an FP8 byte (normal numbers and zero: the test uses only those).
fn fp8_value(bits: u8, e5m2: bool) -> f64 {
    let (mbits, bias) = if e5m2 { (2, 15) } else { (3, 7) };
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits & 0x7f) >> mbits);
    let frac = f64::from(bits & ((1 << mbits) - 1)) / f64::from(1u8 << mbits);
    if exp == 0 {
        return sign * frac * 2f64.powi(1 - bias);
    }
    sign * (1.0 + frac) * 2f64.powi(exp - bias)
}

/// A small pseudo-random FP8 byte whose exponent is within `spread` of 1 (unbiased -spread..spread-1).
fn fp8_pick(seed: u32, e5m2: bool, spread: i32, fraction: bool) -> u8 {
    let h = seed.wrapping_mul(0x9E37_79B9).rotate_left(13).wrapping_mul(0x85EB_CA6B);
    let (mbits, bias) = if e5m2 { (2, 15) } else { (3, 7) };
    let exp = (h % (2 * spread as u32)) as i32 - spread + bias;
    let frac = if fraction { (h >> 8) & ((1 << mbits) - 1) } else { 0 };
    let sign = (h >> 16) & 1;
    (sign << 7 | (exp as u32) << mbits | frac) as u8
}

/// The binary16 encoding of a value it holds exactly (normal or zero).
fn f16_bits(x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x == 0.0 {
        return sign;
    }
    let e = x.abs().log2().floor() as i32;
    let mant = (x.abs() / 2f64.powi(e) - 1.0) * 1024.0;
    assert!(mant.fract() == 0.0 && (-14..=15).contains(&e), "{x} is not an exact f16");
    sign | ((e + 15) as u16) << 10 | mant as u16
}

/// (row, column) of element `i` of `lane`'s A, B or C/D fragment, per the ISA's 8-bit `mma` tables.
fn a_pos(lane: u32, i: u32, k: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    let row = if (i < 4) || (k == 32 && (8..12).contains(&i)) { g } else { g + 8 };
    let col = t * 4 + (i & 3) + if k == 32 && i >= 8 { 16 } else { 0 };
    (row, col)
}

fn b_pos(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    (t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 }, g)
}

fn cd_pos(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    (g + if i >= 2 { 8 } else { 0 }, t * 2 + (i & 1))
}

fn check(k: u32, f16: bool, a_e5m2: bool, b_e5m2: bool) {
    let (ty, at, bt) =
        (if f16 { "f16" } else { "f32" }, if a_e5m2 { "e5m2" } else { "e4m3" }, if b_e5m2 { "e5m2" } else { "e4m3" });
    let form = format!("mma.sync.aligned.m16n8k{k}.row.col.{ty}.{at}.{bt}.{ty}");
    // f32 results: exponents within 2^±2 and full fractions keep every sum exact in f32; f16 results use
    // powers of two within 2^±1 (and small integer C).
    let (spread, fraction) = if f16 { (1, false) } else { (2, true) };
    let a: Vec<u8> = (0..16 * k).map(|i| fp8_pick(i, a_e5m2, spread, fraction)).collect();
    let b: Vec<u8> = (0..k * 8).map(|i| fp8_pick(i + 7777, b_e5m2, spread, fraction)).collect();
    let c: Vec<f64> = (0..128).map(|i| f64::from(i % 7) - 3.0).collect();
    let want: Vec<f64> = (0..128)
        .map(|e| {
            let (m, n) = (e / 8, e % 8);
            c[e] + (0..k as usize)
                .map(|kk| fp8_value(a[m * k as usize + kk], a_e5m2) * fp8_value(b[kk * 8 + n], b_e5m2))
                .sum::<f64>()
        })
        .collect();
    // Per lane: A's k/8 registers, B's k/16, C's and D's 4 (f32) or 2 (f16x2) registers, as words.
    let (na, nb, nc) = (k / 8, k / 16, if f16 { 2 } else { 4 });
    let mut a_words = vec![0u32; 32 * na as usize];
    let mut b_words = vec![0u32; 32 * nb as usize];
    let mut c_words = vec![0u32; 32 * nc];
    for lane in 0..32u32 {
        for i in 0..k / 2 {
            let (r, col) = a_pos(lane, i, k);
            a_words[(lane * na + i / 4) as usize] |= u32::from(a[(r * k + col) as usize]) << (8 * (i % 4));
        }
        for i in 0..k / 4 {
            let (r, col) = b_pos(lane, i);
            b_words[(lane * nb + i / 4) as usize] |= u32::from(b[(r * 8 + col) as usize]) << (8 * (i % 4));
        }
        for i in 0..4 {
            let (r, col) = cd_pos(lane, i);
            let v = c[(r * 8 + col) as usize];
            if f16 {
                c_words[lane as usize * 2 + i as usize / 2] |= u32::from(f16_bits(v)) << (16 * (i % 2));
            } else {
                c_words[lane as usize * 4 + i as usize] = (v as f32).to_bits();
            }
        }
    }
    let reg =
        |prefix: &str, n: usize, from: usize| (from..from + n).map(|i| format!("%{prefix}{i}")).collect::<Vec<_>>();
    let (acc, acc_ty) = if f16 { ("r", "b32") } else { ("f", "f32") };
    let (ra, rb, rc, rd) = (reg("r", na as usize, 10), reg("r", nb as usize, 20), reg(acc, nc, 30), reg(acc, nc, 40));
    let mut body = String::new();
    let loads = |regs: &[String], base: &str, ty: &str| -> String {
        regs.iter().enumerate().map(|(j, r)| format!("    ld.global.{ty} {r}, [{base}+{}];\n", 4 * j)).collect()
    };
    body += &loads(&ra, "%rd11", "b32");
    body += &loads(&rb, "%rd12", "b32");
    body += &loads(&rc, "%rd13", acc_ty);
    body += &format!(
        "    {form} {{{}}}, {{{}}}, {{{}}}, {{{}}};\n",
        rd.join(", "),
        ra.join(", "),
        rb.join(", "),
        rc.join(", ")
    );
    body += &rd
        .iter()
        .enumerate()
        .map(|(j, r)| format!("    st.global.{acc_ty} [%rd14+{}], {r};\n", 4 * j))
        .collect::<String>();
    let ptx = format!(
        ".version 8.7\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, \
         .param .u64 pd)\n{{\n    .reg .b32 %r<50>;\n    .reg .f32 %f<50>;\n    .reg .b64 %rd<20>;\n    \
         ld.param.u64 %rd1, [pa];\n    ld.param.u64 %rd2, [pb];\n    ld.param.u64 %rd3, [pc];\n    \
         ld.param.u64 %rd4, [pd];\n    mov.u32 %r1, %tid.x;\n    mul.wide.u32 %rd5, %r1, {};\n    \
         add.s64 %rd11, %rd1, %rd5;\n    mul.wide.u32 %rd6, %r1, {};\n    add.s64 %rd12, %rd2, %rd6;\n    \
         mul.wide.u32 %rd7, %r1, {};\n    add.s64 %rd13, %rd3, %rd7;\n    add.s64 %rd14, %rd4, %rd7;\n{body}    ret;\n}}\n",
        4 * na,
        4 * nb,
        4 * nc
    );
    let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
    let bytes = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let args = [
        Arg::Buf(bytes(&a_words)),
        Arg::Buf(bytes(&b_words)),
        Arg::Buf(bytes(&c_words)),
        Arg::Buf(vec![0; 4 * 32 * nc]),
    ];
    for (name, mut engine) in engines() {
        let (out, _) = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {form}: {e}"));
        let d = words(&out[3]);
        for lane in 0..32u32 {
            for i in 0..4 {
                let (r, col) = cd_pos(lane, i);
                let w = want[(r * 8 + col) as usize];
                let got = if f16 {
                    u32::from(f16_bits(w)) == (d[lane as usize * 2 + i as usize / 2] >> (16 * (i % 2))) & 0xffff
                } else {
                    f32::from_bits(d[lane as usize * 4 + i as usize]) as f64 == w
                };
                assert!(got, "{name}: {form}: lane {lane} d{i} (row {r}, column {col}) should be {w}");
            }
        }
    }
}

#[test]
fn m16n8k32_fp8() {
    check(32, false, false, true);
    check(32, false, true, true);
    check(32, true, true, false);
    check(32, true, false, false);
}

#[test]
fn m16n8k16_fp8() {
    check(16, false, false, false);
    check(16, true, true, true);
    check(16, false, true, false);
}

/// The sm_120 `.kind::f8f6f4` form and mixed accumulators are not the sm_89 FP8 `mma`: refused at load.
#[test]
fn other_fp8_forms_refused() {
    for body in [
        "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, \
         {%r5, %r6}, {%f0, %f1, %f2, %f3};",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f16 {%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, \
         {%r1, %r2};",
    ] {
        let e = common::refusal("sm_90", body);
        assert!(e.contains("mma"), "`{body}`: {e}");
    }
}
