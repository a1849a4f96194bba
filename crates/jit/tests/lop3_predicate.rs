//! `lop3.BoolOp.b32 d|p, a, b, c, immLut, q` (PTX ISA 9.7.8.6, PTX 8.2, sm_70): d is `lop3`'s result and
//! `p = (d != 0) BoolOp q` with `.BoolOp` `.and` or `.or`; `_` may stand for d. Run on the emulator and the
//! JIT (with and without its vector path) against a model of the ISA's text: bit i of d is bit
//! `(a_i << 2) | (b_i << 1) | c_i` of immLut (the table built from `ta = 0xF0`, `tb = 0xCC`, `tc = 0xAA`).

mod common;

fn lop3(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    (0..32).fold(0, |d, i| {
        let idx = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1);
        d | u32::from((lut >> idx) & 1) << i
    })
}

const LUTS: [u8; 4] = [0x96, 0x80, 0xFE, 0x00];

#[test]
fn lop3_with_a_predicate_destination() {
    let mut forms = Vec::new();
    for op in ["and", "or"] {
        for lut in LUTS {
            // q = (r4 != 0); the form leaves d, then p (as 0/1), then p of the `_|p` form.
            let head = format!(
                "{{ .reg .pred %q<3>; setp.ne.u32 %q1, %r4, 0; lop3.{op}.b32 %r5|%q2, %r1, %r2, %r3, {lut:#04x}, %q1;"
            );
            forms.push(format!("{head} mov.b32 %r9, %r5; }}"));
            forms.push(format!("{head} selp.u32 %r9, 1, 0, %q2; }}"));
            forms.push(format!(
                "{{ .reg .pred %q<3>; setp.ne.u32 %q1, %r4, 0; lop3.{op}.b32 _|%q2, %r1, %r2, %r3, {lut:#04x}, %q1; \
                 selp.u32 %r9, 1, 0, %q2; }}"
            ));
        }
    }
    let cases: Vec<[u32; 4]> = vec![
        [0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F, 0],
        [0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F, 1],
        [0, 0, 0, 0],
        [0, 0, 0, 7],
        [0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFF, 0],
        [0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFF, 1],
        [0xAAAA_AAAA, 0x5555_5555, 0, 1],
        [0x8000_0000, 0x8000_0000, 0x8000_0000, 0],
    ];
    let r = common::run_forms("sm_90", 4, &forms, cases.as_flattened());
    assert!(r.vectorized, "the kernel should run on the JIT's vector path too");
    for (t, &[a, b, c, q]) in cases.iter().enumerate() {
        let mut k = 0;
        for op in ["and", "or"] {
            for lut in LUTS {
                let d = lop3(a, b, c, lut);
                let p = if op == "and" { d != 0 && q != 0 } else { d != 0 || q != 0 };
                for (what, want) in [("d", d), ("p", u32::from(p)), ("p of _|p", u32::from(p))] {
                    for (engine, got) in &r.engines {
                        let got = got[t * forms.len() + k];
                        assert_eq!(
                            got, want,
                            "{engine}: lop3.{op} {lut:#04x} {what}, a={a:#x} b={b:#x} c={c:#x} q={q}"
                        );
                    }
                    k += 1;
                }
            }
        }
    }
}

/// The model on the ISA's examples: 0x80 is a & b & c, 0xFE a | b | c, 0x96 a ^ b ^ c.
#[test]
fn the_model_matches_the_isa_examples() {
    let (a, b, c) = (0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F);
    assert_eq!(lop3(a, b, c, 0x80), a & b & c);
    assert_eq!(lop3(a, b, c, 0xFE), a | b | c);
    assert_eq!(lop3(a, b, c, 0x96), a ^ b ^ c);
}
