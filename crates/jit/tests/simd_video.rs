//! The SIMD video instructions (PTX ISA 9.7.18.2: `vadd2`, `vsub2`, `vavrg2`, `vabsdiff2`, `vmin2`, `vmax2`,
//! `vset2` and their four-way versions) with destination masks, source lane selectors, `.sat` and the
//! `.add` accumulate form, on both engines, against a model written here from the ISA's pseudocode:
//!
//! - `extractAndSignExt_2/4(a, b, .sel, .type)`: the selector's digits (the highest lane's first) name, per
//!   lane, a half-word (0-3) or byte (0-7) of {b, a} (a's are the low ones), sign- or zero-extended by the
//!   operand's type; `.asel` defaults to `.h10`/`.b3210`, `.bsel` to `.h32`/`.b7654`;
//! - the operation per lane: `vavrg` is `(x + y + 1) >> 1` where `x + y >= 0`, else `(x + y) >> 1`; `vset`
//!   gives 1 where the comparison holds, else 0 (and has no destination type: unsigned);
//! - `.sat`: clamped to the destination type's lane range (S16/U16, S8/U8);
//! - `extractMaskBits(.mask)` (default all lanes): with `.add`, `d = c + Σ mask[i] ? t[i] : 0`; else lane i
//!   of d is t[i] (its low bits) where the mask has it and c's lane i elsewhere.
//!
//! Every form was checked with ptxas 13 (`ptxas -arch=sm_80`): those accepted run here, the ones it refuses
//! are refused by lockstep before the kernel runs, naming their line.

mod common;

use common::launch;
use device::Dim3;

/// A parsed form: what the model needs, read from the PTX text itself.
struct Form {
    op: String,
    lanes: u32,
    d_signed: bool,
    a_signed: bool,
    b_signed: bool,
    sat: bool,
    add: bool,
    cmp: Option<String>,
    mask: Option<String>,
    asel: Option<String>,
    bsel: Option<String>,
}

fn parse(ptx: &str) -> Form {
    let (head, operands) = ptx.split_once(' ').unwrap();
    let mut words = head.split('.');
    let opcode = words.next().unwrap();
    let lanes = u32::from(opcode.as_bytes()[opcode.len() - 1] - b'0');
    let op = opcode[..opcode.len() - 1].to_string();
    let words: Vec<&str> = words.collect();
    let types: Vec<bool> = words.iter().filter(|w| w.ends_with("32")).map(|w| *w == "s32").collect();
    let (d_signed, a_signed, b_signed) =
        if op == "vset" { (false, types[0], types[1]) } else { (types[0], types[1], types[2]) };
    let cmp = words.iter().find(|w| ["eq", "ne", "lt", "le", "gt", "ge"].contains(w)).map(|w| w.to_string());
    let sel = |o: &str| o.trim().trim_end_matches(';').split_once('.').map(|(_, s)| s.to_string());
    let ops: Vec<&str> = operands.split(',').collect();
    Form {
        op,
        lanes,
        d_signed,
        a_signed,
        b_signed,
        sat: words.contains(&"sat"),
        add: words.contains(&"add"),
        cmp,
        mask: sel(ops[0]),
        asel: sel(ops[1]),
        bsel: sel(ops[2]),
    }
}

/// The ISA's semantics of a form, for sources a, b, c.
fn model(f: &Form, a: u32, b: u32, c: u32) -> u32 {
    let bits = 32 / f.lanes;
    let lane_mask = (1u64 << bits) - 1;
    let both = u64::from(b) << 32 | u64::from(a);
    let (default_a, default_b) = if f.lanes == 2 { ("h10", "h32") } else { ("b3210", "b7654") };
    // Lane i's part, from the digits (highest lane first).
    let extract = |sel: &str, signed: bool, i: u32| -> i64 {
        let digits = &sel.as_bytes()[1..];
        let part = u32::from(digits[digits.len() - 1 - i as usize] - b'0');
        let v = ((both >> (part * bits)) & lane_mask) as i64;
        if signed && v >= 1 << (bits - 1) {
            v - (1 << bits)
        } else {
            v
        }
    };
    let asel = f.asel.clone().unwrap_or(default_a.into());
    let bsel = f.bsel.clone().unwrap_or(default_b.into());
    let mask: Vec<bool> = (0..f.lanes)
        .map(|i| match &f.mask {
            None => true,
            Some(m) => m[1..].bytes().any(|d| u32::from(d - b'0') == i),
        })
        .collect();
    let t: Vec<i64> = (0..f.lanes)
        .map(|i| {
            let (x, y) = (extract(&asel, f.a_signed, i), extract(&bsel, f.b_signed, i));
            let r = match f.op.as_str() {
                "vadd" => x + y,
                "vsub" => x - y,
                "vavrg" if x + y >= 0 => (x + y + 1) >> 1,
                "vavrg" => (x + y) >> 1,
                "vabsdiff" => (x - y).abs(),
                "vmin" => x.min(y),
                "vmax" => x.max(y),
                "vset" => i64::from(match f.cmp.as_deref().unwrap() {
                    "eq" => x == y,
                    "ne" => x != y,
                    "lt" => x < y,
                    "le" => x <= y,
                    "gt" => x > y,
                    _ => x >= y,
                }),
                o => panic!("{o}"),
            };
            if f.sat {
                let (lo, hi) = if f.d_signed {
                    (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
                } else {
                    (0, (1i64 << bits) - 1)
                };
                r.clamp(lo, hi)
            } else {
                r
            }
        })
        .collect();
    if f.add {
        let sum: i64 = (0..f.lanes as usize).filter(|&i| mask[i]).map(|i| t[i]).sum();
        (i64::from(c) + sum) as u32
    } else {
        (0..f.lanes).fold(0u32, |d, i| {
            let lane = if mask[i as usize] {
                t[i as usize] as u64 & lane_mask
            } else {
                (u64::from(c) >> (i * bits)) & lane_mask
            };
            d | (lane << (i * bits)) as u32
        })
    }
}

const FORMS: &[&str] = &[
    // The ISA's examples.
    "vadd2.s32.s32.u32.sat %r9, %r1, %r2, %r3;",
    "vsub2.s32.s32.s32.sat %r9.h0, %r1.h10, %r2.h32, %r3;",
    "vmin2.s32.u32.u32.add %r9.h10, %r1.h00, %r2.h22, %r3;",
    // Two-way: masks, selectors from both sources, .sat, .add.
    "vadd2.u32.u32.u32 %r9.h1, %r1.h31, %r2.h02, %r3;",
    "vadd2.s32.s32.s32.sat %r9, %r1.h23, %r2.h10, %r3;",
    "vsub2.u32.s32.u32.sat %r9.h1, %r1, %r2.h11, %r3;",
    "vavrg2.s32.s32.s32 %r9, %r1, %r2, %r3;",
    "vavrg2.u32.s32.u32 %r9.h0, %r1.h12, %r2.h30, %r3;",
    "vabsdiff2.s32.s32.s32.add %r9.h1, %r1, %r2, %r3;",
    "vabsdiff2.u32.u32.s32.sat %r9, %r1.h03, %r2, %r3;",
    "vmin2.u32.s32.s32 %r9.h10, %r1.h33, %r2.h01, %r3;",
    "vmax2.s32.u32.s32.add %r9.h0, %r1.h21, %r2, %r3;",
    "vmax2.u32.s32.s32.sat %r9.h1, %r1, %r2.h20, %r3;",
    // Four-way.
    "vadd4.u32.u32.u32 %r9.b320, %r1.b7654, %r2.b0123, %r3;",
    "vadd4.u32.u32.u32.add %r9.b31, %r1.b7654, %r2.b0123, %r3;",
    "vadd4.s32.s32.s32.sat %r9.b21, %r1.b1302, %r2.b5746, %r3;",
    "vsub4.s32.u32.s32.sat %r9.b3210, %r1.b0000, %r2, %r3;",
    "vsub4.u32.s32.s32.add %r9.b2, %r1, %r2.b3456, %r3;",
    "vavrg4.s32.s32.s32 %r9, %r1, %r2, %r3;",
    "vavrg4.s32.s32.u32.sat %r9.b10, %r1.b7531, %r2.b6420, %r3;",
    "vabsdiff4.u32.s32.s32 %r9.b30, %r1, %r2.b1111, %r3;",
    "vabsdiff4.s32.s32.u32.add %r9.b321, %r1.b4567, %r2.b0123, %r3;",
    "vmin4.s32.s32.s32.sat %r9.b0, %r1.b2301, %r2, %r3;",
    "vmax4.u32.u32.s32 %r9.b3, %r1, %r2.b7777, %r3;",
    "vmax4.s32.s32.s32.add %r9, %r1.b3210, %r2.b7654, %r3;",
    // vset2 / vset4: every comparison, masks, selectors, .add.
    "vset2.s32.u32.lt %r9, %r1, %r2, %r3;",
    "vset2.u32.u32.ne.add %r9, %r1, %r2, %r3;",
    "vset2.s32.s32.le %r9.h1, %r1.h21, %r2.h03, %r3;",
    "vset2.s32.u32.ge.add %r9.h0, %r1.h10, %r2.h23, %r3;",
    "vset2.u32.s32.eq %r9.h0, %r1.h11, %r2, %r3;",
    "vset2.s32.s32.gt %r9, %r1, %r2.h10, %r3;",
    "vset4.s32.u32.lt %r9.b20, %r1.b4567, %r2, %r3;",
    "vset4.u32.u32.ne.add %r9, %r1, %r2, %r3;",
    "vset4.s32.s32.gt.add %r9.b310, %r1.b1032, %r2.b7654, %r3;",
    "vset4.u32.s32.eq %r9, %r1.b2222, %r2.b6666, %r3;",
    "vset4.s32.s32.le %r9.b3210, %r1, %r2.b3210, %r3;",
    "vset4.u32.u32.ge %r9.b1, %r1.b7654, %r2.b3210, %r3;",
];

fn cases() -> Vec<[u32; 3]> {
    vec![
        [0x0102_0304, 0x0403_0201, 100],
        [0xff80_7f00, 0x0180_8001, 0xffff_fff0],
        [0x7fff_8000, 0x8001_7fff, 7],
        [0x1234_5678, 0x8765_4321, 0],
        [0xffff_ffff, 0, 0x8000_0000],
        [0x8000_0000, 0xffff_ffff, 0x7fff_ffff],
        [0x7fff_ffff, 0x7fff_ffff, 0xdead_beef],
        [0xfffd_fffe, 0x0000_ffff, 0x1234_5678],
        [0x80ff_01fe, 0x7f01_ff02, 0xa5a5_a5a5],
        [0xfedc_ba98, 0xfedc_ba98, 0x0f0f_0f0f],
        [0x0000_0001, 0xffff_fffc, 0xffff_ffff],
        [0xc000_4000, 0xc000_c000, 0x0102_0304],
    ]
}

#[test]
fn simd_video_masks_selectors_and_vset_follow_the_isa() {
    let cases = cases();
    // %r9 is set first: a mask keeps c's lanes, never what the register held.
    let forms: Vec<String> = FORMS.iter().map(|f| format!("mov.u32 %r9, 0x5a5a5a5a;\n    {f}")).collect();
    let r = common::run_forms("sm_80", 3, &forms, cases.as_flattened());
    for (t, &[a, b, c]) in cases.iter().enumerate() {
        for (k, ptx) in FORMS.iter().enumerate() {
            let want = model(&parse(ptx), a, b, c);
            for (engine, got) in &r.engines {
                let got = got[t * FORMS.len() + k];
                assert_eq!(got, want, "{engine}: `{ptx}` with a={a:#x} b={b:#x} c={c:#x}: got {got:#x}");
            }
        }
    }
}

/// The model itself on values worked out by hand from the ISA text.
#[test]
fn the_model_matches_hand_computed_values() {
    // vavrg2.s32: lanes (-1 + -2) = -3 → -3 >> 1 = -2; (1 + 2) = 3 → 2.
    assert_eq!(model(&parse("vavrg2.s32.s32.s32 %r9, %r1, %r2, %r3;"), 0x0001_ffff, 0x0002_fffe, 0), 0x0002_fffe);
    // The mask keeps c's other half-word; .h32 of a takes b's half-words.
    assert_eq!(
        model(&parse("vadd2.u32.u32.u32 %r9.h1, %r1.h32, %r2.h10, %r3;"), 0x1111_2222, 0x0003_0004, 0xaaaa_bbbb),
        0x1114_bbbb
    );
    // vset4 with .add counts the masked lanes that compare true.
    assert_eq!(model(&parse("vset4.u32.u32.eq.add %r9.b30, %r1, %r2, %r3;"), 0x0102_0304, 0x0102_0305, 10), 11);
}

/// Forms ptxas refuses (each checked with ptxas 13) are refused before the kernel runs, naming their line.
#[test]
fn invalid_simd_video_forms_are_refused() {
    for line in [
        "vadd4.u32.u32.u32 %r9.b01, %r1, %r2, %r3;",
        "vadd4.u32.u32.u32 %r9.b33, %r1, %r2, %r3;",
        "vadd4.u32.u32.u32 %r9, %r1.h10, %r2, %r3;",
        "vadd2.u32.u32.u32 %r9, %r1.b3210, %r2, %r3;",
        "vadd2.u32.u32.u32 %r9, %r1.h0, %r2, %r3;",
        "vadd4.u32.u32.u32 %r9, %r1.b32, %r2, %r3;",
        "vadd2.u32.u32.u32 %r9.b10, %r1, %r2, %r3;",
        "vadd2.u32.u32.u32.sat.add %r9, %r1, %r2, %r3;",
        "vadd2.u32.u32.u32 %r9, %r1, %r2;",
        "vset4.u32.u32.ne.max %r9, %r1, %r2, %r3;",
        "vset4.u32.u32.ne.sat %r9, %r1, %r2, %r3;",
        "vset2.u32.u32.u32.eq %r9, %r1, %r2, %r3;",
        "vset2.u32.u32 %r9, %r1, %r2, %r3;",
        "vadd2.u32.u32.u32 %r9, -%r1, %r2, %r3;",
        "vadd4.u32.u32.u32 %r9, %r1, %r2, %r3.b3210;",
    ] {
        let kernel = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n    .reg .b32 %r<10>;\n    {line}\n    \
             ret;\n}}\n"
        );
        let module = ir::compile(&kernel).unwrap_or_else(|d| panic!("{line}: {d:?}"));
        let one = Dim3::new(1, 1, 1);
        let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
        for backend in [&mut emu::Emulator::new() as &mut dyn device::Backend, &mut jit] {
            let err = launch(backend, &module, "k", one, one, 0, &[]).unwrap_err();
            assert!(err.contains("PTX line 7"), "`{line}`: {err}");
        }
    }
}
