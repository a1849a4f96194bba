//! Vector atomics (PTX ISA 9.7.13.5, PTX 8.1, sm_90): `atom`/`red` `.add.v2/.v4.f32`, and `.add/.min/.max.noftz`
//! on `.v2/.v4/.v8` `.f16`/`.bf16` and `.v2/.v4` `.f16x2`/`.bf16x2`, on the emulator and the JIT (four worker
//! threads, with and without its vector path), many CTAs racing on the same elements. The ISA makes each
//! element its own atomic operation; the models here check each element's final value (sums chosen to be
//! exact in every order) and that the old values one element returned are the partial sums of one order of
//! the additions (what atomic read-modify-writes give, and lost updates would not).

mod common;

use common::{launch, Arg};
use device::{Backend, Dim3};

fn engines() -> Vec<(&'static str, Box<dyn Backend>)> {
    let jit = |vectorize| Box::new(jit::Jit::new(jit::Options { threads: 4, vectorize, ..jit::Options::default() }));
    vec![("emulator", Box::new(emu::Emulator::new())), ("JIT", jit(true)), ("JIT without vector path", jit(false))]
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn halves(b: &[u8]) -> Vec<u16> {
    b.chunks(2).map(|c| u16::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Checks one element's atomic history: `seen` holds each thread's (old value, addend), `init` the initial
/// value and `last` the final one. Atomic additions of positive addends give old values that, sorted, start
/// at `init` and each add the addend of the thread that saw the one before, ending at `last`.
fn check_partial_sums(what: &str, init: f64, last: f64, mut seen: Vec<(f64, f64)>) {
    seen.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let mut at = init;
    for (old, add) in seen {
        assert_eq!(old, at, "{what}: an old value is not the sum of the additions before it");
        at += add;
    }
    assert_eq!(last, at, "{what}: the final value is not the sum of every addition");
}

/// nvcc 13's `atomicAdd(float2*, float2)` and `atomicAdd(float4*, float4)` (`fixtures/vector_atomics.cu`).
#[test]
fn nvcc_float2_float4_atomic_add() {
    let module = ir::compile(include_str!("fixtures/vector_atomics.sm_90.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    let (ctas, per) = (16usize, 96usize);
    let n = ctas * per;
    let vals: Vec<f32> = (0..n).map(|t| (t % 13 + 1) as f32).collect();
    let init2 = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let init4: Vec<f32> = (0..20).map(|i| i as f32 * 0.5).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let args = [
        Arg::Buf(bytes(&init2)),
        Arg::Buf(bytes(&init4)),
        Arg::Buf(bytes(&vals)),
        Arg::Buf(vec![0; 8 * n]),
        Arg::Buf(vec![0; 16 * n]),
    ];
    let mult2 = [1.0f32, 2.0];
    let mult4 = [1.0f32, 0.5, 4.0, 0.25];
    for (name, mut engine) in engines() {
        let grid = (Dim3::new(ctas as u32, 1, 1), Dim3::new(per as u32, 1, 1));
        let (out, _) = launch(engine.as_mut(), &module, "vector_atomics", grid.0, grid.1, 0, &args).unwrap();
        let (sums2, sums4, old2, old4) = (f32s(&out[0]), f32s(&out[1]), f32s(&out[3]), f32s(&out[4]));
        for (slots, width, mult, init, sums, old) in
            [(3, 2, &mult2[..], &init2[..], &sums2, &old2), (5, 4, &mult4[..], &init4[..], &sums4, &old4)]
        {
            for slot in 0..slots {
                for e in 0..width {
                    let seen = (0..n)
                        .filter(|t| t % slots == slot)
                        .map(|t| (f64::from(old[t * width + e]), f64::from(vals[t] * mult[e])))
                        .collect();
                    let i = slot * width + e;
                    let what = format!("{name}: v{width} slot {slot} element {e}");
                    check_partial_sums(&what, f64::from(init[i]), f64::from(sums[i]), seen);
                }
            }
        }
    }
}

/// The half-precision forms, hand-written (nvcc has no vector half atomics in CUDA C++). Each thread `t`
/// reads 8 `.f16` values h and 8 `.bf16` values g (32 bytes), then:
/// A `atom.global.add.noftz.v8.f16` of h into slot t % 2 of 16 bytes at 0;
/// B `atom.global.add.noftz.v4.bf16x2` of g into slot t % 8 of 16 bytes at 32;
/// C `red.global.add.noftz.v2.f16x2` of h0..h3 at 160;
/// D `atom.global.min.noftz.v4.f16` of h0..h3 at 168;
/// E `atom.global.max.noftz.v2.bf16x2` of g0..g3 at 176;
/// F `atom.max.noftz.v2.bf16` (a generic address) of g0, g1 at 184;
/// G `red.global.min.noftz.v8.bf16` of g at 192;
/// and writes the old values of A (at 0), B (16), D (32), E (40), F (48) to its 64 bytes of `olds`.
const HALVES: &str = r#"
.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 sums, .param .u64 vals, .param .u64 olds)
{
    .reg .b16 %h<40>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [sums];
    ld.param.u64 %rd2, [vals];
    ld.param.u64 %rd3, [olds];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r1, %r2, %r3;
    mul.wide.u32 %rd4, %r4, 32;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5];
    ld.global.v4.b32 {%r14, %r15, %r16, %r17}, [%rd5+16];
    mov.b32 {%h1, %h2}, %r10;
    mov.b32 {%h3, %h4}, %r11;
    mov.b32 {%h5, %h6}, %r12;
    mov.b32 {%h7, %h8}, %r13;
    mov.b32 {%h11, %h12}, %r14;
    mov.b32 {%h13, %h14}, %r15;
    mov.b32 {%h15, %h16}, %r16;
    mov.b32 {%h17, %h18}, %r17;
    and.b32 %r5, %r4, 1;
    mul.wide.u32 %rd7, %r5, 16;
    add.s64 %rd8, %rd1, %rd7;
    atom.global.add.noftz.v8.f16 {%h21, %h22, %h23, %h24, %h25, %h26, %h27, %h28}, [%rd8], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};
    and.b32 %r6, %r4, 7;
    mul.wide.u32 %rd9, %r6, 16;
    add.s64 %rd10, %rd1, %rd9;
    atom.global.add.noftz.v4.bf16x2 {%r20, %r21, %r22, %r23}, [%rd10+32], {%r14, %r15, %r16, %r17};
    red.global.add.noftz.v2.f16x2 [%rd1+160], {%r10, %r11};
    atom.global.min.noftz.v4.f16 {%h31, %h32, %h33, %h34}, [%rd1+168], {%h1, %h2, %h3, %h4};
    atom.global.max.noftz.v2.bf16x2 {%r24, %r25}, [%rd1+176], {%r14, %r15};
    add.s64 %rd11, %rd1, 184;
    atom.max.noftz.v2.bf16 {%h35, %h36}, [%rd11], {%h11, %h12};
    red.global.min.noftz.v8.bf16 [%rd1+192], {%h11, %h12, %h13, %h14, %h15, %h16, %h17, %h18};
    mul.wide.u32 %rd12, %r4, 64;
    add.s64 %rd13, %rd3, %rd12;
    mov.b32 %r30, {%h21, %h22};
    mov.b32 %r31, {%h23, %h24};
    mov.b32 %r32, {%h25, %h26};
    mov.b32 %r33, {%h27, %h28};
    st.global.v4.b32 [%rd13], {%r30, %r31, %r32, %r33};
    st.global.v4.b32 [%rd13+16], {%r20, %r21, %r22, %r23};
    mov.b32 %r34, {%h31, %h32};
    mov.b32 %r35, {%h33, %h34};
    st.global.v4.b32 [%rd13+32], {%r34, %r35, %r24, %r25};
    mov.b32 %r36, {%h35, %h36};
    st.global.b32 [%rd13+48], %r36;
    ret;
}
"#;

/// IEEE binary16 value of `bits` (the ISA's `.f16`).
fn f16_value(bits: u16) -> f64 {
    let (sign, exp, mant) = (bits >> 15, (bits >> 10) & 0x1f, bits & 0x3ff);
    let mag = match exp {
        0 => f64::from(mant) * 2f64.powi(-24),
        31 if mant != 0 => f64::NAN,
        31 => f64::INFINITY,
        e => (1.0 + f64::from(mant) / 1024.0) * 2f64.powi(i32::from(e) - 15),
    };
    if sign == 1 {
        -mag
    } else {
        mag
    }
}

/// The binary16 encoding of a value it holds exactly (normal or zero), or the canonical NaN.
fn f16_bits(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x == 0.0 {
        return sign;
    }
    let e = x.abs().log2().floor() as i32;
    let mant = (x.abs() / 2f64.powi(e) - 1.0) * 1024.0;
    assert!(mant.fract() == 0.0 && (-14..=15).contains(&e), "{x} is not an exact f16");
    sign | ((e + 15) as u16) << 10 | mant as u16
}

/// bfloat16: the high half of an IEEE binary32.
fn bf16_value(bits: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(bits) << 16))
}

fn bf16_bits(x: f64) -> u16 {
    let b = (x as f32).to_bits();
    assert_eq!(b & 0xffff, 0, "{x} is not an exact bf16");
    (b >> 16) as u16
}

/// `min`/`max` as the ISA defines them for `.f16`/`.bf16` without `.NaN`: a NaN operand gives the other one
/// (two NaNs the canonical NaN); -0.0 is less than +0.0.
fn min_max(x: f64, y: f64, max: bool) -> f64 {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => y,
        (false, true) => x,
        _ => {
            let less = x < y || (x == y && x.is_sign_negative() && !y.is_sign_negative());
            if less != max {
                x
            } else {
                y
            }
        }
    }
}

#[test]
#[allow(clippy::needless_range_loop)] // Elements index several parallel arrays.
fn half_precision_vector_atomics() {
    let module = ir::compile(HALVES).unwrap_or_else(|d| panic!("{d:?}\n{HALVES}"));
    let (ctas, per) = (8usize, 64usize);
    let n = ctas * per;
    let h = |t: usize, k: usize| ((t + k) % 4 + 1) as f64;
    let g = |t: usize, k: usize| ((3 * t + k) % 4 + 1) as f64;
    let mut vals = Vec::new();
    for t in 0..n {
        vals.extend((0..8).flat_map(|k| f16_bits(h(t, k)).to_le_bytes()));
        vals.extend((0..8).flat_map(|k| bf16_bits(g(t, k)).to_le_bytes()));
    }
    // Initial values, as f64 with each region's format.
    let init_a: Vec<f64> = (0..16).map(|i| (i % 8) as f64).collect();
    let init_c = [1.0, 2.0, 3.0, 0.0];
    let init_d = [f64::NAN, 3.0, -0.0, 0.5];
    let init_e = [f64::NAN, 0.0, -5.0, 1000.0];
    let init_f = [2.5, f64::NAN];
    let init_g = [5.0, 0.5, f64::NAN, -1.0, 1.0, 2.0, 3.0, 4.0];
    let mut sums = vec![0u16; 104];
    for (i, &x) in init_a.iter().enumerate() {
        sums[i] = f16_bits(x);
    }
    // B (bf16, halves 16..80) starts at zero.
    for (i, &x) in init_c.iter().enumerate() {
        sums[80 + i] = f16_bits(x);
    }
    for (i, &x) in init_d.iter().enumerate() {
        sums[84 + i] = f16_bits(x);
    }
    for (i, &x) in init_e.iter().enumerate() {
        sums[88 + i] = if x.is_nan() { 0x7fc0 } else { bf16_bits(x) };
    }
    for (i, &x) in init_f.iter().enumerate() {
        sums[92 + i] = if x.is_nan() { 0x7fc0 } else { bf16_bits(x) };
    }
    for (i, &x) in init_g.iter().enumerate() {
        sums[96 + i] = if x.is_nan() { 0x7fc0 } else { bf16_bits(x) };
    }
    let sums_bytes: Vec<u8> = sums.iter().flat_map(|x| x.to_le_bytes()).collect();
    let args = [Arg::Buf(sums_bytes), Arg::Buf(vals), Arg::Buf(vec![0; 64 * n])];
    let fold = |init: f64, max: bool, v: &dyn Fn(usize) -> f64| (0..n).fold(init, |m, t| min_max(m, v(t), max));
    for (name, mut engine) in engines() {
        let (out, _) =
            launch(engine.as_mut(), &module, "k", Dim3::new(ctas as u32, 1, 1), Dim3::new(per as u32, 1, 1), 0, &args)
                .unwrap();
        let s = halves(&out[0]);
        let olds: Vec<Vec<u16>> = out[2].chunks(64).map(halves).collect();
        // A: f16 sums per slot, with each thread's old values.
        for slot in 0..2 {
            for k in 0..8 {
                let seen = (0..n).filter(|t| t % 2 == slot).map(|t| (f16_value(olds[t][k]), h(t, k))).collect();
                let i = slot * 8 + k;
                check_partial_sums(&format!("{name}: A slot {slot} [{k}]"), init_a[i], f16_value(s[i]), seen);
            }
        }
        // B: bf16 sums per slot.
        for slot in 0..8 {
            for k in 0..8 {
                let seen = (0..n).filter(|t| t % 8 == slot).map(|t| (bf16_value(olds[t][8 + k]), g(t, k))).collect();
                let last = bf16_value(s[16 + slot * 8 + k]);
                check_partial_sums(&format!("{name}: B slot {slot} [{k}]"), 0.0, last, seen);
            }
        }
        // C: f16x2 sums of h0..h3 over every thread.
        for k in 0..4 {
            let want = init_c[k] + (0..n).map(|t| h(t, k)).sum::<f64>();
            assert_eq!(f16_value(s[80 + k]), want, "{name}: C [{k}]");
        }
        // D to G: min and max over every thread; each old value D returned is the initial value or a value some
        // thread brought.
        for k in 0..4 {
            let want = fold(init_d[k], false, &|t| h(t, k));
            assert_eq!(s[84 + k], f16_bits(want), "{name}: D [{k}]");
            let want = fold(init_e[k], true, &|t| g(t, k));
            assert_eq!(s[88 + k], bf16_bits(want), "{name}: E [{k}]");
            for (t, o) in olds.iter().enumerate() {
                let old = f16_value(o[16 + k]);
                let known = (1..=4).any(|v| old == f64::from(v)) || o[16 + k] == sums[84 + k];
                assert!(known, "{name}: D [{k}] thread {t} saw {old}");
            }
        }
        for k in 0..2 {
            let want = fold(init_f[k], true, &|t| g(t, k));
            assert_eq!(s[92 + k], bf16_bits(want), "{name}: F [{k}]");
        }
        for k in 0..8 {
            let want = fold(init_g[k], false, &|t| g(t, k));
            assert_eq!(s[96 + k], bf16_bits(want), "{name}: G [{k}]");
        }
    }
}

/// Forms the ISA does not have stay refused at load, naming the line.
#[test]
fn refused_forms() {
    for (body, why) in [
        ("atom.shared.add.v2.f32 {%f1, %f2}, [sh], {%f1, %f2};", "global (or generic) addresses only"),
        ("ld.param.u64 %rd1, [p];\natom.global.min.v2.f32 {%f1, %f2}, [%rd1], {%f1, %f2};", "vector atomics are"),
        (
            "ld.param.u64 %rd1, [p];\natom.global.add.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1], {%r1, %r2, %r3, %r4};",
            "vector atomics are",
        ),
    ] {
        let e = common::refusal("sm_90", body);
        assert!(e.contains(why), "`{body}`: {e}");
    }
}
