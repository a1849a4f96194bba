//! Address widths (PTX ISA, "Addresses as Operands", `cvta`): with `.address_size 64`, shared-space
//! addresses are offsets into the CTA's shared memory and may be held in 32-bit registers (nvcc's
//! `cvta.to.shared` then `cvt.u32.u64` idiom), so they must work on both engines; local and parameter
//! addresses are 64-bit, and the 32-bit forms are refused at load on both engines with the line (the JIT's
//! local addresses are host addresses: a cut one would name other memory).
//!
//! The model: shared word `t` holds `3t + 1` after thread `t` stores it; thread `t` reads word
//! `(t + 1) % 32` back through each 32-bit shared address form, and a local array word through 64-bit local
//! and generic addresses.

mod common;

use common::{engines, launch, words, Arg};
use device::Dim3;

const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<20>;
    .shared .align 4 .b32 sh[32];
    .local .align 8 .b32 loc[4];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r2, %r1, 3;
    add.u32 %r2, %r2, 1;
    // 32-bit shared address from the symbol: mov.u32 then st.shared through %r.
    mov.u32 %r3, sh;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r2;
    bar.sync 0;
    add.u32 %r6, %r1, 1;
    and.b32 %r6, %r6, 31;
    shl.b32 %r7, %r6, 2;
    // nvcc's form: generic address, cvta.to.shared.u64, cut to 32 bits.
    mov.u64 %rd2, sh;
    cvta.shared.u64 %rd3, %rd2;
    cvta.to.shared.u64 %rd4, %rd3;
    cvt.u32.u64 %r8, %rd4;
    add.u32 %r8, %r8, %r7;
    ld.shared.u32 %r9, [%r8];
    // The generic address cut to 32 bits, then cvta.to.shared.u32.
    cvt.u32.u64 %r10, %rd3;
    cvta.to.shared.u32 %r11, %r10;
    add.u32 %r11, %r11, %r7;
    ld.shared.u32 %r12, [%r11+0];
    // cvta.shared.u32 and back.
    cvta.shared.u32 %r13, %r3;
    cvta.to.shared.u32 %r14, %r13;
    add.u32 %r14, %r14, %r7;
    ld.shared.u32 %r15, [%r14];
    // 64-bit local addresses: st.local through %rd, read generically and through cvta.to.local.u64.
    mov.u64 %rd5, loc;
    mul.lo.u32 %r16, %r1, 5;
    st.local.u32 [%rd5+8], %r16;
    cvta.local.u64 %rd6, %rd5;
    ld.u32 %r17, [%rd6+8];
    cvta.to.local.u64 %rd7, %rd6;
    ld.local.u32 %r18, [%rd7+8];
    add.u32 %r17, %r17, %r18;
    mul.wide.u32 %rd8, %r1, 16;
    add.s64 %rd9, %rd1, %rd8;
    st.global.v4.u32 [%rd9], {%r9, %r12, %r15, %r17};
    ret;
}
"#;

#[test]
fn shared_addresses_in_32_bits_and_local_addresses_in_64() {
    let module = ir::compile(KERNEL).unwrap();
    let expected: Vec<u32> = (0..32u32)
        .flat_map(|t| {
            let next = 3 * ((t + 1) % 32) + 1;
            [next, next, next, 10 * t]
        })
        .collect();
    for (name, mut backend) in engines() {
        let args = [Arg::Buf(vec![0; 32 * 16])];
        let (out, _) = launch(backend.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(words(&out[0]), expected, "{name}");
    }
}

/// Runs `body` (in a kernel with a local array `loc`, `%r<8>` and `%rd<8>`) on every engine and returns the
/// errors, which must be the same.
fn refused(body: &str) -> String {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<8>;\n\
         .reg .b64 %rd<8>;\n.local .align 8 .b8 loc[64];\nld.param.u64 %rd1, [p];\n{body}\n\
         st.global.u32 [%rd1], %r5;\nret;\n}}\n"
    );
    let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
    let mut errors = engines().into_iter().map(|(name, mut backend)| {
        let args = [Arg::Buf(vec![0; 64])];
        match launch(backend.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(1, 1, 1), 0, &args) {
            Ok(_) => panic!("{name} accepted `{body}`"),
            Err(e) => e,
        }
    });
    let first = errors.next().unwrap();
    for e in errors {
        assert_eq!(e, first);
    }
    first
}

#[test]
fn local_addresses_in_32_bits_are_refused_with_the_line() {
    let cases = [
        // (body, the refused line's number in the kernel, text of the refusal)
        (
            "mov.u32 %r1, loc;\nmov.u32 %r2, 7;\nst.local.u32 [%r1+4], %r2;\nld.local.u32 %r5, [loc+4];",
            10,
            "address of a local",
        ),
        (
            "mov.u64 %rd2, loc;\ncvt.u32.u64 %r1, %rd2;\nst.local.u32 [%r1+4], %r1;\nld.local.u32 %r5, [loc];",
            12,
            "32-bit register",
        ),
        ("mov.u64 %rd2, loc;\ncvt.u32.u64 %r1, %rd2;\nld.local.u32 %r5, [%r1];", 12, "32-bit register"),
        (
            "mov.u64 %rd2, loc;\ncvt.u32.u64 %r1, %rd2;\ncvta.local.u32 %r3, %r1;\nmov.u32 %r5, %r3;",
            12,
            "`cvta` of `.u32`",
        ),
        ("cvt.u32.u64 %r1, %rd1;\ncvta.to.local.u32 %r3, %r1;\nmov.u32 %r5, %r3;", 11, "`cvta` of `.u32`"),
        ("mov.u32 %r2, 7;\nst.local.u32 [loc+4], %r2;\nld.local.u32 %r5, [4];", 12, "absolute local address"),
        ("mov.u32 %r1, p;\nld.param.u32 %r5, [%r1];", 10, "parameter"),
        ("cvta.param.u32 %r5, p;", 10, "`cvta` of `.u32`"),
    ];
    for (body, line, why) in cases {
        let e = refused(body);
        assert!(e.contains(&format!("PTX line {line} ")) && e.contains(why), "`{body}`: {e}");
    }
}
