//! Integer arithmetic on packed half-words (PTX ISA 8.0, sm_90): `add.{u16x2,s16x2}`, `min.u16x2`,
//! `min{.relu}.s16x2`, `max.u16x2`, `max{.relu}.s16x2`, on the emulator and on the JIT (scalar and vector
//! paths), against a model written here from the ISA's text (9.7.1.1 `add`, 9.7.1.12 `min`, 9.7.1.13 `max`):
//!
//! - "forms input vectors by half word values from source operands": `iA[0] = a[0:15]`, `iA[1] = a[16:31]`,
//!   the same for b, and `d[i] = iA[i] op iB[i]` for each half on its own (d, a and b are `.b32`);
//! - `add` has no `.sat` on these types (that is PTX 9.2, sm_120f): each half wraps around within 16 bits,
//!   with no carry into the other half;
//! - `min`/`max`: "signed and unsigned differ": `.s16x2` compares the halves as s16, `.u16x2` as u16;
//! - `.relu` (only with `.s16x2`) "clamps the result to 0 if negative".
//!
//! The forms ptxas 13 refuses (`sub` on these types, `.relu` with `.u16x2` or on `add`, `add.sat`) are
//! refused by lockstep before the kernel runs.

mod common;

use common::{launch, Arg};
use device::Dim3;

/// The ISA's semantics of `ptx` (`op{.relu}.type`) on sources a and b.
fn model(ptx: &str, a: u32, b: u32) -> u32 {
    let words: Vec<&str> = ptx.split('.').collect();
    let signed = words.contains(&"s16x2");
    let relu = words.contains(&"relu");
    let half = |x: u32, i: u32| -> i32 {
        let h = (x >> (16 * i)) & 0xFFFF;
        if signed && h >= 0x8000 {
            h as i32 - 0x1_0000
        } else {
            h as i32
        }
    };
    let mut d = 0u32;
    for i in 0..2 {
        let (x, y) = (half(a, i), half(b, i));
        let mut r = match words[0] {
            "add" => x + y,
            "min" => x.min(y),
            "max" => x.max(y),
            o => panic!("{o}"),
        };
        if relu && r < 0 {
            r = 0;
        }
        d |= (r as u32 & 0xFFFF) << (16 * i);
    }
    d
}

const FORMS: &[&str] =
    &["add.u16x2", "add.s16x2", "min.u16x2", "min.s16x2", "min.relu.s16x2", "max.u16x2", "max.s16x2", "max.relu.s16x2"];

fn cases() -> Vec<[u32; 2]> {
    vec![
        [0x0001_0002, 0x0003_0004],
        [0xFFFF_FFFF, 0x0001_0001], // both halves wrap; no carry crosses
        [0x0000_FFFF, 0x0000_0001], // the low half wraps, the high one stays 0
        [0x7FFF_8000, 0x0001_FFFF], // signed overflow in the high half, signed wrap in the low
        [0x8000_7FFF, 0x8000_8000],
        [0x1234_5678, 0x8765_4321],
        [0xFFFE_0002, 0x0002_FFFE], // -2 and 2 against 2 and -2
        [0x8000_0000, 0x7FFF_FFFF],
        [0x0000_0000, 0x0000_0000],
        [0xFF00_00FF, 0x00FF_FF00],
        [0xC000_4000, 0xC000_C000],
        [0xDEAD_BEEF, 0xBEEF_DEAD],
    ]
}

#[test]
fn packed_half_word_arithmetic_follows_the_isa_on_both_engines() {
    let cases = cases();
    let forms: Vec<String> = FORMS.iter().map(|f| format!("{f} %r9, %r1, %r2;")).collect();
    let r = common::run_forms("sm_90", 2, &forms, cases.as_flattened());
    assert!(r.vectorized, "the kernel should run on the JIT's vector path too");
    for (t, &[a, b]) in cases.iter().enumerate() {
        for (k, ptx) in FORMS.iter().enumerate() {
            let want = model(ptx, a, b);
            for (engine, got) in &r.engines {
                let got = got[t * FORMS.len() + k];
                assert_eq!(got, want, "{engine}: `{ptx}` with a={a:#010x} b={b:#010x}: got {got:#010x}");
            }
        }
    }
}

/// The model on values worked out by hand from the ISA text.
#[test]
fn the_model_matches_hand_computed_values() {
    // 0xffff + 1 wraps to 0 in each half, with no carry into the high half.
    assert_eq!(model("add.u16x2", 0xFFFF_FFFF, 0x0001_0001), 0);
    assert_eq!(model("add.s16x2", 0x7FFF_0000, 0x0001_0000), 0x8000_0000);
    // Signed and unsigned differ: 0x8000 is -32768 as s16, 32768 as u16.
    assert_eq!(model("min.s16x2", 0x8000_0001, 0x0001_0002), 0x8000_0001);
    assert_eq!(model("min.u16x2", 0x8000_0001, 0x0001_0002), 0x0001_0001);
    assert_eq!(model("max.relu.s16x2", 0xFFFE_0005, 0xFFFF_0003), 0x0000_0005);
    assert_eq!(model("min.relu.s16x2", 0xFFFE_0005, 0x0001_8000), 0);
}

/// The forms outside the ISA (and refused by ptxas 13) are refused before the kernel runs.
#[test]
fn forms_outside_the_isa_are_refused() {
    for bad in ["sub.u16x2", "sub.s16x2", "max.relu.u16x2", "min.relu.u16x2", "add.sat.s16x2", "add.relu.s16x2"] {
        let kernel = common::forms_kernel("sm_90", 2, &[format!("{bad} %r9, %r1, %r2;")]);
        let module = ir::compile(&kernel).unwrap_or_else(|d| panic!("{bad}: {d:?}"));
        let args = [Arg::Buf(vec![0; 8]), Arg::Buf(vec![0; 4])];
        let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(1, 1, 1));
        let err = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args).unwrap_err();
        assert!(err.contains(bad.split('.').next().unwrap()) && err.contains("16x2"), "{bad}: {err}");
        let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
        assert!(launch(&mut jit, &module, "k", grid, block, 0, &args).is_err(), "{bad}");
    }
}
