//! `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16` and `movmatrix.sync.aligned.m8n8.trans.b16`
//! on the emulator and the JIT, against a model of the PTX ISA's fragment layout (the one of `ldmatrix`):
//! lane `l` holds, in source register `j`, row `l / 4`, columns `2(l % 4)` (low half) and `2(l % 4) + 1`
//! (high half) of matrix `j`; lanes `8j .. 8j + 7` give the addresses of rows 0-7 of matrix `j`, and
//! `.trans` stores each matrix transposed. `movmatrix` gives each lane that fragment of the transpose.

mod common;

use common::{engines, launch, refusal, words, Arg};
use device::Dim3;

/// The fragments of the test: register `j` of lane `l`.
fn fragment(lane: usize, j: usize) -> u32 {
    let e = |k: usize| (0x1000 * (j + 1) + 16 * lane + k) as u32;
    e(0) | e(1) << 16
}

/// Element (r, c) of matrix `j`, by the ISA's layout.
fn element(j: usize, r: usize, c: usize) -> u16 {
    (fragment(4 * r + c / 2, j) >> (16 * (c % 2))) as u16
}

/// Each lane fills its 16 bytes of a 512-byte shared array with 0xEEEE, then stores `num` matrices with
/// `stmatrix` (lane 8j + r gives row r of matrix j the address 128j + 16(7 - r): rows in reverse order), and
/// the warp copies the array out.
fn stmatrix_kernel(num: usize, trans: bool, generic: bool) -> String {
    let regs: Vec<String> = (0..num).map(|j| format!("%r{}", 20 + j)).collect();
    let loads: String =
        (0..num).map(|j| format!("    ld.global.u32 %r{}, [%rd5+{}];\n", 20 + j, 4 * j)).collect::<String>();
    let (space, addr) = if generic { ("", "%rd7") } else { (".shared", "%r6") };
    format!(
        r#".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .shared .align 16 .b8 sh[512];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %laneid;
    mov.u32 %r2, sh;
    shl.b32 %r3, %r1, 4;
    add.s32 %r4, %r2, %r3;
    mov.u32 %r5, 0xEEEEEEEE;
    st.shared.v4.u32 [%r4], {{%r5, %r5, %r5, %r5}};
    bar.warp.sync -1;
    shr.u32 %r7, %r1, 3;
    and.b32 %r7, %r7, 3;
    shl.b32 %r8, %r7, 7;
    and.b32 %r9, %r1, 7;
    sub.s32 %r9, 7, %r9;
    shl.b32 %r9, %r9, 4;
    add.s32 %r6, %r8, %r9;
    add.s32 %r6, %r6, %r2;
    cvt.u64.u32 %rd6, %r6;
    cvta.shared.u64 %rd7, %rd6;
    mul.wide.u32 %rd4, %r1, 16;
    add.s64 %rd5, %rd1, %rd4;
{loads}    stmatrix.sync.aligned.m8n8.x{num}{trans}{space}.b16 [{addr}], {{{regs}}};
    bar.warp.sync -1;
    ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r4];
    add.s64 %rd8, %rd2, %rd4;
    st.global.v4.u32 [%rd8], {{%r10, %r11, %r12, %r13}};
    ret;
}}
"#,
        trans = if trans { ".trans" } else { "" },
        regs = regs.join(", "),
    )
}

/// The model: the 256 half-words of the array after the stores.
fn stmatrix_model(num: usize, trans: bool) -> Vec<u16> {
    let mut mem = vec![0xEEEEu16; 256];
    for j in 0..num {
        for r in 0..8 {
            for c in 0..8 {
                // Memory row `r` of matrix j holds row r of the matrix, or with `.trans` its column r.
                let v = if trans { element(j, c, r) } else { element(j, r, c) };
                mem[64 * j + 8 * (7 - r) + c] = v;
            }
        }
    }
    mem
}

fn halves(bytes: &[u8]) -> Vec<u16> {
    bytes.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
}

#[test]
fn stmatrix_stores_each_lanes_fragment_where_the_isa_says() {
    let input: Vec<u8> = (0..32).flat_map(|l| (0..4).map(move |j| fragment(l, j))).flat_map(u32::to_le_bytes).collect();
    for num in [1, 2, 4] {
        for trans in [false, true] {
            for generic in [false, true] {
                let kernel = stmatrix_kernel(num, trans, generic);
                let module = ir::compile(&kernel).unwrap_or_else(|d| panic!("{d:?}\n{kernel}"));
                let args = [Arg::Buf(input.clone()), Arg::Buf(vec![0; 512])];
                for (name, mut engine) in engines() {
                    let one = Dim3::new(1, 1, 1);
                    let (out, _) = launch(engine.as_mut(), &module, "k", one, Dim3::new(32, 1, 1), 0, &args).unwrap();
                    assert_eq!(
                        halves(&out[1]),
                        stmatrix_model(num, trans),
                        ".x{num} trans {trans} generic {generic} on the {name}"
                    );
                }
            }
        }
    }
}

#[test]
fn movmatrix_transposes_the_warps_matrix() {
    let kernel = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    movmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r3;
    ret;
}
"#;
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}"));
    // Two warps, matrices 0 and 1 of the fragments.
    let frag = |t: usize| fragment(t % 32, t / 32);
    let input: Vec<u8> = (0..64).map(frag).flat_map(u32::to_le_bytes).collect();
    // Lane l of warp w gets row l / 4 of the transpose, columns c = 2(l % 4) and c + 1: elements (c, l / 4)
    // and (c + 1, l / 4) of the matrix.
    let want: Vec<u32> = (0..64)
        .map(|t| {
            let (w, l) = (t / 32, t % 32);
            let (g, c) = (l / 4, 2 * (l % 4));
            u32::from(element(w, c, g)) | u32::from(element(w, c + 1, g)) << 16
        })
        .collect();
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(input.clone()), Arg::Buf(vec![0; 256])];
        let (out, _) =
            launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(64, 1, 1), 0, &args).unwrap();
        assert_eq!(words(&out[1]), want, "movmatrix on the {name}");
    }
}

/// nvcc's `cuda::ptx::stmatrix_m8n8` and `stmatrix_m8n8_trans` (`.x4`, row addresses `&tile[l / 8][l % 8]`).
#[test]
fn nvcc_stmatrix() {
    let module = ir::compile(include_str!("fixtures/matrix_moves.sm_90.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    let input: Vec<u8> = (0..32).flat_map(|l| (0..4).map(move |j| fragment(l, j))).flat_map(u32::to_le_bytes).collect();
    let mut want = Vec::new();
    for trans in [false, true] {
        for j in 0..4 {
            for r in 0..8 {
                want.extend((0..8).map(|c| if trans { element(j, c, r) } else { element(j, r, c) }));
            }
        }
    }
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(input.clone()), Arg::Buf(vec![0; 1024])];
        let kernel = "_Z14store_matricesPKjPt";
        let (out, _) =
            launch(engine.as_mut(), &module, kernel, Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &args).unwrap();
        assert_eq!(halves(&out[1]), want, "stmatrix on the {name}");
    }
}

#[test]
fn malformed_forms_are_refused() {
    for (body, why) in [
        ("stmatrix.sync.aligned.m8n8.x4.shared.b16 [sh], {%r1, %r2};", "needs 4 source registers"),
        ("stmatrix.sync.aligned.m8n8.x2.global.b16 [%rd1], {%r1, %r2};", "accesses shared memory"),
        ("stmatrix.sync.aligned.m8n8.shared.b16 [sh], {%r1};", "`.x1`, `.x2` or `.x4`"),
        ("movmatrix.sync.aligned.m8n8.b16 %r1, %r2;", "movmatrix.sync.aligned.m8n8.trans.b16"),
    ] {
        let e = refusal("sm_90", body);
        assert!(e.contains("PTX line 11") && e.contains(why), "{body}: {e}");
    }
}

/// `.aligned`: the whole warp must execute it; a partial one is an error naming the instruction.
#[test]
fn a_partial_warp_is_an_error() {
    let kernel = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<4>;\n\
                  .reg .pred %p<2>;\nmov.u32 %r1, %laneid;\nsetp.lt.u32 %p1, %r1, 16;\n\
                  @%p1 movmatrix.sync.aligned.m8n8.trans.b16 %r2, %r1;\nret;\n}\n";
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}"));
    for (name, mut engine) in engines() {
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &[])
            .expect_err("a partial warp");
        assert!(e.contains("16 of the 32 lanes") && e.contains("line 10"), "{name}: {e}");
    }
}
