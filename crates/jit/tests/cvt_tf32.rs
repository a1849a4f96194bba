//! `cvt` to tf32 (PTX ISA, data movement and conversion: `cvt`): `cvt.rna{.satfinite}.tf32.f32` (sm_80,
//! what nvcc emits for `wmma::__float_to_tf32`) and `cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32` (sm_90;
//! `.satfinite` with them sm_100), on the emulator and on the JIT (scalar and vector paths), against a model
//! written here from the ISA's text:
//!
//! - the destination is a `.b32` holding the value in f32 layout rounded to tf32's precision: 10 explicit
//!   fraction bits, so the low 13 bits are zero; tf32 has f32's exponent range, so subnormals are rounded at
//!   the same bit;
//! - `.rna` rounds to nearest with ties away from zero, `.rn` ties to even, `.rz` towards zero; a value that
//!   rounds past the largest finite tf32 (`0x7F7FE000`) becomes infinity (never under `.rz`);
//! - `.satfinite`: "if the input value is NaN, then the result is NaN in the specified destination format. If
//!   the absolute value of input (ignoring sign) is greater than MAX_NORM of the specified destination
//!   format, then the result is sign-preserved MAX_NORM";
//! - `.relu`: "clamps the result to 0 if negative. NaN results are converted to canonical NaN"; a negative
//!   zero gives +0 as well (relu is max(x, +0), and NVIDIA's max orders -0 below +0);
//! - NaN: the canonical NaN, `0x7FFFFFFF` (lockstep's choice where the ISA says only "NaN"; a NaN in f32
//!   layout, and in tf32 when the low 13 bits are ignored, as `mma` does); infinities stay infinities.
//!
//! The forms ptxas 13 refuses (`.relu` with `.rna`, `.rm`/`.rp`, no rounding, `.ftz`) are refused by lockstep
//! before the kernel runs.

mod common;

use common::{launch, Arg};
use device::Dim3;

/// The largest finite tf32, in f32 layout.
const MAX_NORM: u32 = 0x7F7F_E000;
const INF: u32 = 0x7F80_0000;
const CANONICAL_NAN: u32 = 0x7FFF_FFFF;

/// The ISA's `cvt.{rnd}{.satfinite}{.relu}.tf32.f32` of the f32 bits `x`.
fn model(x: u32, rnd: &str, satfinite: bool, relu: bool) -> u32 {
    let negative = x >> 31 != 0;
    let mag = x & 0x7FFF_FFFF;
    if mag > INF {
        return CANONICAL_NAN;
    }
    let mut m = if mag == INF {
        INF
    } else {
        // Drop the 13 low fraction bits; rounding up adds one unit of the last kept bit, and a carry out of
        // the fraction steps into the next binade (or to infinity from the largest one), as for any
        // sign-magnitude float.
        let (kept, rest) = (mag & !0x1FFF, mag & 0x1FFF);
        let up = match rnd {
            "rna" => rest >= 0x1000,
            "rn" => rest > 0x1000 || (rest == 0x1000 && kept & 0x2000 != 0),
            "rz" => false,
            r => panic!("{r}"),
        };
        if up {
            kept + 0x2000
        } else {
            kept
        }
    };
    if satfinite && mag > MAX_NORM {
        m = MAX_NORM;
    }
    if relu && negative {
        return 0;
    }
    if negative {
        m | 0x8000_0000
    } else {
        m
    }
}

const FORMS: &[&str] = &[
    "cvt.rna.tf32.f32",
    "cvt.rna.satfinite.tf32.f32",
    "cvt.rn.tf32.f32",
    "cvt.rz.tf32.f32",
    "cvt.rn.relu.tf32.f32",
    "cvt.rz.relu.tf32.f32",
    "cvt.rn.satfinite.tf32.f32",
    "cvt.rz.satfinite.tf32.f32",
    "cvt.rn.satfinite.relu.tf32.f32",
    "cvt.rz.relu.satfinite.tf32.f32",
];

fn form(ptx: &str) -> (&str, bool, bool) {
    let words: Vec<&str> = ptx.split('.').collect();
    let rnd = words.iter().copied().find(|w| ["rna", "rn", "rz"].contains(w)).unwrap();
    (rnd, words.contains(&"satfinite"), words.contains(&"relu"))
}

/// f32 inputs: exact values, ties (even and odd below), just under and over half, carries into the exponent,
/// subnormals (ties, the carry into the smallest normal), the largest finite f32 and tf32 values and the tie
/// between them, infinities, NaNs (quiet, signalling, one whose payload lies in the dropped bits), zeros.
fn inputs() -> Vec<u32> {
    vec![
        0x3F80_0000, // 1.0
        0x3F80_1000, // 1.0 + half a tf32 unit: tie, even below
        0x3F80_3000, // tie, odd below
        0x3F80_0FFF, // just under half
        0x3F80_1001, // just over half
        0xBF80_1000, // negative tie
        0xBF80_3000,
        0x3FFF_FFFF, // rounds up into the next binade (2.0)
        0xC049_0FDB, // -pi
        0x3EAA_AAAB, // 1/3
        0x0000_1000, // subnormal tie at the smallest tf32 subnormal
        0x0000_3000, // subnormal tie, odd below
        0x0000_0FFF,
        0x0000_0001, // the smallest f32 subnormal
        0x007F_F000, // the largest subnormals round up to the smallest normal
        0x8000_1001,
        0x807F_FFFF,
        0x7F7F_FFFF, // the largest finite f32: above MAX_NORM
        0x7F7F_E000, // MAX_NORM
        0x7F7F_F000, // the tie between MAX_NORM and infinity
        0x7F7F_EFFF,
        0xFF7F_F001,
        0x7F80_0000, // +inf
        0xFF80_0000, // -inf
        0x7FC0_0000, // quiet NaN
        0xFFC0_0001, // negative NaN
        0x7F80_0001, // signalling NaN whose payload lies in the dropped bits
        0x7FFF_FFFF,
        0x0000_0000,
        0x8000_0000, // -0
        0x4B80_0001, // 2^24 + 2: far below a tf32 unit of its binade
        0xC77F_F000, // a negative value that rounds to the next binade
    ]
}

#[test]
fn cvt_to_tf32_follows_the_isa_on_both_engines() {
    let xs = inputs();
    let forms: Vec<String> = FORMS.iter().map(|f| format!("{f} %r9, %f1;")).collect();
    let r = common::run_forms("sm_100", 1, &forms, &xs);
    assert!(r.vectorized, "the kernel should run on the JIT's vector path too");
    for (t, &x) in xs.iter().enumerate() {
        for (k, ptx) in FORMS.iter().enumerate() {
            let (rnd, satfinite, relu) = form(ptx);
            let want = model(x, rnd, satfinite, relu);
            for (engine, got) in &r.engines {
                let got = got[t * FORMS.len() + k];
                assert_eq!(got, want, "{engine}: `{ptx}` of {x:#010x}: got {got:#010x}, want {want:#010x}");
            }
        }
    }
}

/// The model on values worked out by hand from the ISA text.
#[test]
fn the_model_matches_hand_computed_values() {
    // A tie: .rna goes away from zero, .rn to the even neighbour (1.0), .rz down.
    assert_eq!(model(0x3F80_1000, "rna", false, false), 0x3F80_2000);
    assert_eq!(model(0x3F80_1000, "rn", false, false), 0x3F80_0000);
    assert_eq!(model(0x3F80_3000, "rn", false, false), 0x3F80_4000);
    assert_eq!(model(0xBF80_1000, "rna", false, false), 0xBF80_2000);
    // Past the largest finite tf32: infinity, except under .rz and .satfinite.
    assert_eq!(model(0x7F7F_FFFF, "rna", false, false), INF);
    assert_eq!(model(0x7F7F_FFFF, "rz", false, false), MAX_NORM);
    assert_eq!(model(0xFF7F_FFFF, "rn", true, false), 0x8000_0000 | MAX_NORM);
    assert_eq!(model(0xFF80_0000, "rna", true, false), 0x8000_0000 | MAX_NORM);
    assert_eq!(model(0xFF80_0000, "rna", false, false), 0xFF80_0000);
    // NaN stays NaN, canonical; .relu zeroes negatives.
    assert_eq!(model(0x7F80_0001, "rna", false, false), CANONICAL_NAN);
    assert_eq!(model(0xFFC0_0000, "rn", true, true), CANONICAL_NAN);
    assert_eq!(model(0xC049_0FDB, "rn", false, true), 0);
    assert_eq!(model(0xC049_0FDB, "rn", false, false), 0xC049_0000);
    // The smallest subnormal tie rounds to zero (even) or to the smallest tf32 subnormal (away).
    assert_eq!(model(0x0000_1000, "rn", false, false), 0);
    assert_eq!(model(0x0000_1000, "rna", false, false), 0x0000_2000);
}

/// The forms outside the ISA's syntax (and refused by ptxas 13) are refused before the kernel runs.
#[test]
fn forms_outside_the_isa_are_refused() {
    for bad in ["cvt.rna.relu.tf32.f32", "cvt.rm.tf32.f32", "cvt.rp.satfinite.tf32.f32", "cvt.rna.ftz.tf32.f32"] {
        let kernel = common::forms_kernel("sm_100", 1, &[format!("{bad} %r9, %f1;")]);
        let module = ir::compile(&kernel).unwrap_or_else(|d| panic!("{bad}: {d:?}"));
        let args = [Arg::Buf(vec![0; 4]), Arg::Buf(vec![0; 4])];
        let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(1, 1, 1));
        let err = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args).unwrap_err();
        assert!(err.contains("conversions to tf32 are"), "{bad}: {err}");
        let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
        let err = launch(&mut jit, &module, "k", grid, block, 0, &args).unwrap_err();
        assert!(err.contains("conversions to tf32 are"), "{bad}: {err}");
    }
}
