//! The scalar video instructions (PTX ISA 9.7.18.1: `vadd`, `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`,
//! `vshr`, `vmad`, `vset`) on both engines, against a model written here from the ISA's pseudocode:
//! `partSelectSignExtend` of each source by its own type and selector, the primary operation on the exact
//! values, `optSaturate` to the destination type's range (narrowed to the merged part with a destination
//! selector), then `optSecOp` with c (signed as the destination type) or `optMerge` of the low byte or
//! half-word into c, the low 32 bits written; `vmad` per its own pseudocode (`signedFinal`, `.po`,
//! `.shr7`/`.shr15`, `.sat` to the final result's range, operand negation of the product or of c).

mod common;

use common::launch;
use device::Dim3;

/// Part `sel` of x ("" for the word), sign-extended if `signed`.
fn part(x: u32, sel: &str, signed: bool) -> i64 {
    let (v, bits) = match sel {
        "b0" | "b1" | "b2" | "b3" => ((x >> (8 * (sel.as_bytes()[1] - b'0'))) & 0xff, 8),
        "h0" | "h1" => ((x >> (16 * (sel.as_bytes()[1] - b'0'))) & 0xffff, 16),
        _ => (x, 32),
    };
    let v = i64::from(v);
    if signed && v >= 1 << (bits - 1) {
        v - (1 << bits)
    } else {
        v
    }
}

/// One instruction form: its PTX (with `a`, `b`, `c` selectors as written) and the model.
struct Form {
    ptx: &'static str,
    model: fn(u32, u32, u32) -> u32,
}

fn signed_of(t: &str) -> bool {
    t == "s32"
}

/// optSaturate, then optSecOp or optMerge, for the arithmetic forms.
fn finish(tmp: i64, d: &str, sat: bool, dsel: &str, op2: &str, c: u32) -> u32 {
    let ds = signed_of(d);
    let tmp = if sat {
        let bits = match dsel {
            "" => 32,
            s if s.starts_with('b') => 8,
            _ => 16,
        };
        let (lo, hi) = if ds { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
        tmp.clamp(lo, hi)
    } else {
        tmp
    };
    let tc = part(c, "", ds);
    let r = match (op2, dsel) {
        ("add", _) => tmp + tc,
        ("min", _) => tmp.min(tc),
        ("max", _) => tmp.max(tc),
        (_, "") => tmp,
        (_, s) => {
            let (shift, mask) = match s {
                "h0" => (0, 0xffff),
                "h1" => (16, 0xffff),
                "b0" => (0, 0xff),
                "b1" => (8, 0xff),
                "b2" => (16, 0xff),
                _ => (24, 0xff),
            };
            let keep = i64::from(c) & !(mask << shift) & 0xffff_ffff;
            ((tmp & mask) << shift) | keep
        }
    };
    r as u32
}

macro_rules! arith {
    ($ptx:literal, $d:literal, $at:literal, $bt:literal, $sat:literal, $op2:literal, $dsel:literal, $asel:literal, $bsel:literal, |$x:ident, $y:ident| $e:expr) => {
        Form {
            ptx: $ptx,
            model: |a, b, c| {
                let ($x, $y) = (part(a, $asel, signed_of($at)), part(b, $bsel, signed_of($bt)));
                finish($e, $d, $sat, $dsel, $op2, c)
            },
        }
    };
}

fn forms() -> Vec<Form> {
    vec![
        arith!("vadd.s32.u32.s32.sat %r9, %r1.b0, %r2.h0;", "s32", "u32", "s32", true, "", "", "b0", "h0", |x, y| x
            + y),
        arith!("vadd.u32.u32.u32 %r9, %r1, %r2;", "u32", "u32", "u32", false, "", "", "", "", |x, y| x + y),
        arith!("vadd.u32.s32.s32.sat %r9, %r1, %r2;", "u32", "s32", "s32", true, "", "", "", "", |x, y| x + y),
        arith!("vsub.s32.s32.u32.sat %r9, %r1.h1, %r2.h1;", "s32", "s32", "u32", true, "", "", "h1", "h1", |x, y| x
            - y),
        arith!("vsub.s32.s32.s32.sat %r9, %r1, %r2;", "s32", "s32", "s32", true, "", "", "", "", |x, y| x - y),
        arith!(
            "vabsdiff.s32.s32.s32.sat %r9.h0, %r1.b0, %r2.b2, %r3;",
            "s32",
            "s32",
            "s32",
            true,
            "",
            "h0",
            "b0",
            "b2",
            |x, y| (x - y).abs()
        ),
        arith!(
            "vabsdiff.u32.u32.u32 %r9.b3, %r1.b1, %r2.b3, %r3;",
            "u32",
            "u32",
            "u32",
            false,
            "",
            "b3",
            "b1",
            "b3",
            |x, y| (x - y).abs()
        ),
        arith!("vmin.s32.s32.s32.sat.add %r9, %r1, %r2, %r3;", "s32", "s32", "s32", true, "add", "", "", "", |x, y| x
            .min(y)),
        arith!("vmin.u32.s32.u32 %r9, %r1.h0, %r2.b1;", "u32", "s32", "u32", false, "", "", "h0", "b1", |x, y| x
            .min(y)),
        arith!(
            "vmax.s32.u32.s32.max %r9, %r1.b2, %r2, %r3;",
            "s32",
            "u32",
            "s32",
            false,
            "max",
            "",
            "b2",
            "",
            |x, y| x.max(y)
        ),
        arith!(
            "vmax.u32.s32.s32.sat.min %r9, %r1.h1, %r2.h0, %r3;",
            "u32",
            "s32",
            "s32",
            true,
            "min",
            "",
            "h1",
            "h0",
            |x, y| x.max(y)
        ),
        arith!(
            "vadd.u32.u32.u32.sat %r9.b1, %r1.b2, %r2.b3, %r3;",
            "u32",
            "u32",
            "u32",
            true,
            "",
            "b1",
            "b2",
            "b3",
            |x, y| x + y
        ),
        arith!(
            "vsub.s32.s32.s32.sat %r9.h1, %r1.h0, %r2.h1, %r3;",
            "s32",
            "s32",
            "s32",
            true,
            "",
            "h1",
            "h0",
            "h1",
            |x, y| x - y
        ),
        // vshl/vshr: b unsigned whatever its type, `.clamp` caps the amount at 32, `.wrap` takes it mod 32.
        arith!("vshl.s32.u32.u32.clamp %r9, %r1, %r2.b0;", "s32", "u32", "u32", false, "", "", "", "b0", |x, y| x
            << y.min(32)),
        arith!(
            "vshl.u32.u32.u32.wrap.sat %r9, %r1.h0, %r2.b0;",
            "u32",
            "u32",
            "u32",
            true,
            "",
            "",
            "h0",
            "b0",
            |x, y| x << (y & 31)
        ),
        arith!("vshr.s32.s32.u32.clamp %r9, %r1, %r2.b1;", "s32", "s32", "u32", false, "", "", "", "b1", |x, y| x
            >> y.min(32)),
        arith!("vshr.u32.u32.u32.wrap %r9, %r1, %r2.h1;", "u32", "u32", "u32", false, "", "", "", "h1", |x, y| x
            >> (y & 31)),
        arith!(
            "vshr.s32.s32.u32.wrap.add %r9, %r1.b3, %r2.b0, %r3;",
            "s32",
            "s32",
            "u32",
            false,
            "add",
            "",
            "b3",
            "b0",
            |x, y| x >> (y & 31)
        ),
        // vset: the comparison's 0 or 1, d and c unsigned.
        arith!("vset.s32.u32.lt %r9, %r1, %r2;", "u32", "s32", "u32", false, "", "", "", "", |x, y| i64::from(x < y)),
        arith!("vset.u32.u32.ne %r9, %r1, %r2.h1;", "u32", "u32", "u32", false, "", "", "", "h1", |x, y| i64::from(
            x != y
        )),
        arith!(
            "vset.s32.s32.ge.add %r9, %r1.b0, %r2.b1, %r3;",
            "u32",
            "s32",
            "s32",
            false,
            "add",
            "",
            "b0",
            "b1",
            |x, y| i64::from(x >= y)
        ),
        arith!(
            "vset.s32.s32.gt %r9.b2, %r1.h1, %r2.h0, %r3;",
            "u32",
            "s32",
            "s32",
            false,
            "",
            "b2",
            "h1",
            "h0",
            |x, y| i64::from(x > y)
        ),
        Form {
            ptx: "vmad.u32.u32.u32 %r9, %r1, %r2, %r3;",
            model: |a, b, c| vmad(a, b, c, ("", "", false, false), (false, false, 0)),
        },
        Form {
            ptx: "vmad.s32.s32.u32.sat %r9, %r1.h0, %r2.h1, %r3;",
            model: |a, b, c| vmad(a, b, c, ("h0", "h1", true, false), (false, true, 0)),
        },
        Form {
            ptx: "vmad.u32.u32.u32.shr15 %r9, %r1.h0, %r2.h0, %r3;",
            model: |a, b, c| vmad(a, b, c, ("h0", "h0", false, false), (false, false, 15)),
        },
        Form {
            ptx: "vmad.s32.s32.s32.po.shr7 %r9, %r1.b1, %r2.b2, %r3;",
            model: |a, b, c| vmad(a, b, c, ("b1", "b2", true, true), (true, false, 7)),
        },
        Form {
            ptx: "vmad.u32.u32.u32.sat %r9, %r1, %r2, %r3;",
            model: |a, b, c| vmad(a, b, c, ("", "", false, false), (false, true, 0)),
        },
        Form {
            ptx: "vmad.s32.u32.s32.sat.shr7 %r9, %r1, %r2, %r3;",
            model: |a, b, c| vmad(a, b, c, ("", "", false, true), (false, true, 7)),
        },
        // Operand negation: of the product (exactly one of -a, -b) or of c.
        Form {
            ptx: "vmad.s32.s32.s32 %r9, -%r1, %r2, %r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", true, true), (false, false, 0), (true, false, false)),
        },
        Form {
            ptx: "vmad.s32.s32.s32 %r9, %r1, -%r2, %r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", true, true), (false, false, 0), (false, true, false)),
        },
        Form {
            ptx: "vmad.u32.u32.u32 %r9, %r1, %r2, -%r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", false, false), (false, false, 0), (false, false, true)),
        },
        Form {
            ptx: "vmad.s32.s32.s32 %r9, -%r1, -%r2, %r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", true, true), (false, false, 0), (true, true, false)),
        },
        Form {
            ptx: "vmad.u32.u32.u32.sat.shr7 %r9, -%r1.h1, %r2.b2, %r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("h1", "b2", false, false), (false, true, 7), (true, false, false)),
        },
        Form {
            ptx: "vmad.s32.s32.s32 %r9, -%r1, -%r2, -%r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", true, true), (false, false, 0), (true, true, true)),
        },
        Form {
            ptx: "vmad.s32.s32.u32.sat %r9, %r1, %r2, -%r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", true, false), (false, true, 0), (false, false, true)),
        },
        Form {
            ptx: "vmad.u32.u32.u32.sat %r9, %r1.h0, -%r2.h0, %r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("h0", "h0", false, false), (false, true, 0), (false, true, false)),
        },
        Form {
            ptx: "vmad.u32.s32.u32.shr15 %r9, %r1, %r2.b0, -%r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "b0", true, false), (false, false, 15), (false, false, true)),
        },
        Form {
            ptx: "vmad.u32.u32.u32.sat %r9, -%r1, %r2, %r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", false, false), (false, true, 0), (true, false, false)),
        },
        Form {
            ptx: "vmad.u32.u32.u32.sat %r9, %r1, %r2, -%r3;",
            model: |a, b, c| vmad_neg(a, b, c, ("", "", false, false), (false, true, 0), (false, false, true)),
        },
    ]
}

/// vmad from the ISA: tmp = ta·tb (128 bits) + c (sign-extended where the final result is signed) + po;
/// scaled (sign-extended where signed); clamped to the final result's 32-bit range with `.sat`.
fn vmad(a: u32, b: u32, c: u32, sels: (&str, &str, bool, bool), flags: (bool, bool, u32)) -> u32 {
    vmad_neg(a, b, c, sels, flags, (false, false, false))
}

/// vmad with operand negation, from the ISA's pseudocode: `signedFinal` also where the product (`a.negate ^
/// b.negate`) or c is negated; `lsb = 1` and `tmp = ~tmp` for a negated product, else `c = ~c` (32 bits,
/// before its extension) for a negated c; `tmp + c128 + lsb`.
fn vmad_neg(
    a: u32,
    b: u32,
    c: u32,
    (asel, bsel, a_s, b_s): (&str, &str, bool, bool),
    (po, sat, shr): (bool, bool, u32),
    (neg_a, neg_b, neg_c): (bool, bool, bool),
) -> u32 {
    let signed_final = a_s || b_s || (neg_a ^ neg_b) || neg_c;
    let (ta, tb) = (i128::from(part(a, asel, a_s)), i128::from(part(b, bsel, b_s)));
    let (mut tmp, mut c, mut lsb) = (ta * tb, c, 0);
    if po {
        lsb = 1;
    } else if neg_a ^ neg_b {
        tmp = !tmp;
        lsb = 1;
    } else if neg_c {
        c = !c;
        lsb = 1;
    }
    let c128 = if signed_final { i128::from(c as i32) } else { i128::from(c) };
    let tmp = tmp + c128 + lsb;
    let r = tmp >> shr;
    let r = match (sat, signed_final) {
        (false, _) => r,
        (true, true) => r.clamp(i128::from(i32::MIN), i128::from(i32::MAX)),
        (true, false) => r.clamp(0, i128::from(u32::MAX)),
    };
    r as u32
}

#[test]
fn scalar_video_instructions_follow_the_isa() {
    let cases: Vec<[u32; 3]> = vec![
        [0x0102_0304, 0x0403_0201, 100],
        [0xff80_7f00, 0x0180_8001, 0xffff_fff0],
        [0x7fff_8000, 0x8001_7fff, 7],
        [0x1234_5678, 0x8765_4321, 0],
        [0xffff_ffff, 0, 0x8000_0000],
        [0x8000_0000, 0xffff_ffff, 0x7fff_ffff],
        [0x7fff_ffff, 0x7fff_ffff, 0xdead_beef],
        [5, 40, 0x1234_5678],
        [0x0000_8001, 0x0023_0021, 3],
        [0xfedc_ba98, 0x0000_001f, 0x0f0f_0f0f],
    ];
    let forms = forms();
    let lines: Vec<String> = forms.iter().map(|f| f.ptx.to_string()).collect();
    let r = common::run_forms("sm_80", 3, &lines, cases.as_flattened());
    for (t, &[a, b, c]) in cases.iter().enumerate() {
        for (k, f) in forms.iter().enumerate() {
            let want = (f.model)(a, b, c);
            for (engine, got) in &r.engines {
                let got = got[t * forms.len() + k];
                assert_eq!(got, want, "{engine}: `{}` with a={a:#x} b={b:#x} c={c:#x}: got {got:#x}", f.ptx);
            }
        }
    }
}

/// Forms outside the ISA's syntax are refused before the kernel runs, naming their line: a secondary
/// operation together with a destination selector, `vshl` without `.clamp`/`.wrap`, `vset.sat`, `vmad` with
/// a destination selector.
#[test]
fn invalid_scalar_video_forms_are_refused() {
    for line in [
        "vadd.u32.u32.u32.add %r9.h0, %r1, %r2, %r3;",
        "vshl.u32.u32.u32 %r9, %r1, %r2;",
        "vset.u32.u32.lt.sat %r9, %r1, %r2;",
        "vmad.u32.u32.u32 %r9.h0, %r1, %r2, %r3;",
        "vmin.u32.u32.u32 %r9, %r1, %r2, %r3;",
        // Negation: of both the product and c, with `.po`, outside vmad, of c's selected part.
        "vmad.s32.s32.s32 %r9, -%r1, %r2, -%r3;",
        "vmad.s32.s32.s32.po %r9, -%r1, %r2, %r3;",
        "vadd.u32.u32.u32 %r9, -%r1, %r2;",
        "vmad.u32.u32.u32 %r9, %r1, %r2, -%r3.h0;",
        // SIMD lane lists are not scalar selectors.
        "vadd.u32.u32.u32 %r9, %r1.h10, %r2;",
    ] {
        let kernel = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<10>;\n{line}\nret;\n}}\n"
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
