//! Cluster addressing for the clusters lockstep launches, one CTA each (PTX ISA: "mapa", "getctarank", the
//! `%cluster_*` special registers): the model is a cluster of 1×1×1 whose only CTA has rank 0, so `mapa` to
//! rank 0 gives back its address, `getctarank` of a shared address is 0, and `mapa` to another rank has no
//! CTA to map to: an error at run time naming the instruction's line and the rank. `%is_explicit_cluster` is
//! true where the kernel declares its cluster.

mod common;

use common::{engines, launch, refusal, words, Arg};
use device::Dim3;

/// Thread t of CTA c: `s[t] = 5t + c`; then reads `s[63 - t]` through each form of `mapa` (shared::cluster
/// address in a register, a shared variable plus an offset, a generic address; `.u32` and `.u64`) and
/// stores their sum, `getctarank` of its own element in both forms, and the cluster registers.
const KERNEL: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 rank)
{
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    .shared .align 4 .b8 s[256];
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [rank];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, s;
    shl.b32 %r5, %r2, 2;
    add.s32 %r6, %r4, %r5;
    mad.lo.u32 %r7, %r2, 5, %r3;
    st.shared.u32 [%r6], %r7;
    bar.sync 0;
    sub.u32 %r8, 63, %r2;
    shl.b32 %r9, %r8, 2;
    add.s32 %r10, %r4, %r9;
    mapa.shared::cluster.u32 %r11, %r10, %r1;
    ld.shared::cluster.u32 %r12, [%r11];
    mapa.shared::cluster.u32 %r13, s+4, 0;
    ld.shared::cluster.u32 %r14, [%r13];
    cvt.u64.u32 %rd2, %r10;
    cvta.shared.u64 %rd3, %rd2;
    mapa.u64 %rd4, %rd3, %r1;
    ld.u32 %r15, [%rd4];
    mapa.shared::cluster.u64 %rd5, %rd2, 0;
    cvt.u32.u64 %r16, %rd5;
    ld.shared::cluster.u32 %r17, [%r16];
    getctarank.shared::cluster.u32 %r18, %r6;
    cvt.u64.u32 %rd6, %r6;
    cvta.shared.u64 %rd7, %rd6;
    getctarank.u64 %r19, %rd7;
    getctarank.shared::cluster.u32 %r20, s+8;
    mov.u32 %r21, %cluster_ctarank;
    mov.u32 %r22, %cluster_nctarank;
    mov.u32 %r23, %cluster_nctaid.x;
    mov.u32 %r24, %cluster_ctaid.x;
    mov.u32 %r25, %clusterid.x;
    mov.u32 %r26, %nclusterid.x;
    mad.lo.u32 %r27, %r3, 64, %r2;
    mul.wide.u32 %rd8, %r27, 64;
    add.s64 %rd9, %rd1, %rd8;
    st.global.v4.u32 [%rd9], {%r12, %r14, %r15, %r17};
    st.global.v4.u32 [%rd9+16], {%r18, %r19, %r20, %r21};
    st.global.v4.u32 [%rd9+32], {%r22, %r23, %r24, %r25};
    st.global.v4.u32 [%rd9+48], {%r26, %r26, %r26, %r26};
    ret;
}
"#;

#[test]
fn a_cluster_of_one_cta_maps_to_itself() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let ctas = 3u32;
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(vec![0; 64 * 64 * ctas as usize]), Arg::Scalar(0u32.to_le_bytes().to_vec())];
        let (out, _) =
            launch(engine.as_mut(), &module, "k", Dim3::new(ctas, 1, 1), Dim3::new(64, 1, 1), 0, &args).unwrap();
        let got = words(&out[0]);
        for c in 0..ctas {
            for t in 0..64 {
                let s = |i: u32| 5 * i + c;
                let want = [s(63 - t), s(1), s(63 - t), s(63 - t), 0, 0, 0, 0, 1, 1, 0, c, ctas, ctas, ctas, ctas];
                let at = (16 * (64 * c + t)) as usize;
                assert_eq!(got[at..at + 16], want, "CTA {c} thread {t} on the {name}");
            }
        }
    }
}

#[test]
fn mapa_to_another_rank_is_an_error() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(vec![0; 64 * 64]), Arg::Scalar(2u32.to_le_bytes().to_vec())];
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(64, 1, 1), 0, &args)
            .expect_err("rank 2");
        assert!(e.contains("`mapa` to CTA rank 2 of a cluster of one CTA") && e.contains("line 23"), "{name}: {e}");
    }
}

/// nvcc's `cg::this_cluster()` (`.explicitcluster`, `.reqnctapercluster 1, 1, 1`, `barrier.cluster`,
/// `map_shared_rank` as `mapa` with the rank in a register, the cluster registers) and
/// `cuda::ptx::getctarank`.
#[test]
fn nvcc_cluster_kernel() {
    let module = ir::compile(include_str!("fixtures/cluster.sm_90.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    let kernel = "_Z14cluster_kernelPij";
    for (name, mut engine) in engines() {
        let args = |rank: u32| [Arg::Buf(vec![0; 4 * 128]), Arg::Scalar(rank.to_le_bytes().to_vec())];
        let (grid, block) = (Dim3::new(2, 1, 1), Dim3::new(64, 1, 1));
        let (out, _) = launch(engine.as_mut(), &module, kernel, grid, block, 0, &args(0)).unwrap();
        let want: Vec<u32> = (0..128).map(|i| 3 * (63 - i % 64) + 1000).collect();
        assert_eq!(words(&out[0]), want, "on the {name}");
        let e = launch(engine.as_mut(), &module, kernel, grid, block, 0, &args(1)).expect_err("rank 1");
        assert!(e.contains("`mapa` to CTA rank 1"), "{name}: {e}");
    }
}

#[test]
fn malformed_forms_are_refused() {
    for (body, why) in [
        ("mapa.shared::cta.u32 %r1, %r2, 0;", "takes a shared memory address"),
        ("mapa.u64 %rd1, %rd2, %rd3;", "takes a shared memory address"),
        ("mapa.u64 %rd1, sh, 0;", "takes a shared memory address"),
        ("getctarank.u32 %r1, %rd2;", "takes a shared memory address"),
        ("getctarank.shared::cluster.u64 %rd1, %rd2;", "takes a shared memory address"),
    ] {
        let e = refusal("sm_90", body);
        assert!(e.contains("PTX line 11") && e.contains(why), "{body}: {e}");
    }
}

/// `f` and three kernels that read `%is_explicit_cluster` (a predicate) directly and through `f`: one with no
/// cluster directive, one declared `.explicitcluster`, one `.reqnctapercluster 1, 1, 1`.
fn explicit_cluster_module() -> String {
    let kernel = |name: &str, directive: &str| {
        format!(
            ".visible .entry {name}(.param .u64 out){directive}\n{{\n    .reg .pred %p<2>;\n    .reg .b32 %r<4>;\n    \
             .reg .b64 %rd<4>;\n    ld.param.u64 %rd1, [out];\n    mov.pred %p1, %is_explicit_cluster;\n    \
             selp.u32 %r1, 1, 0, %p1;\n    {{\n    .param .b32 rv;\n    call (rv), f;\n    \
             ld.param.b32 %r2, [rv];\n    }}\n    mov.u32 %r3, %tid.x;\n    mul.wide.u32 %rd2, %r3, 8;\n    \
             add.s64 %rd3, %rd1, %rd2;\n    st.global.v2.u32 [%rd3], {{%r1, %r2}};\n    ret;\n}}\n"
        )
    };
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.func (.param .b32 ret) f()\n{{\n    .reg .pred %q;\n    \
         .reg .b32 %s;\n    mov.pred %q, %is_explicit_cluster;\n    selp.u32 %s, 1, 0, %q;\n    \
         st.param.b32 [ret], %s;\n    ret;\n}}\n{}{}{}",
        kernel("plain", ""),
        kernel("declared", "\n.explicitcluster"),
        kernel("required", "\n.reqnctapercluster 1, 1, 1")
    )
}

/// PTX ISA, "%is_explicit_cluster": whether the cluster launch was specified by the user. A kernel declared
/// `.explicitcluster` must be launched with cluster dimensions and one with `.reqnctapercluster` is launched
/// with its own (nvcc writes both for `__cluster_dims__`): true, in the kernel and in the functions it calls;
/// a kernel without either runs in implicit 1×1×1 clusters: false.
#[test]
fn is_explicit_cluster_follows_the_kernel_declaration() {
    let module = ir::compile(&explicit_cluster_module()).unwrap_or_else(|d| panic!("{d:?}"));
    for (name, mut engine) in engines() {
        for (kernel, explicit) in [("plain", 0), ("declared", 1), ("required", 1)] {
            let args = [Arg::Buf(vec![0; 8 * 40])];
            let (out, _) =
                launch(engine.as_mut(), &module, kernel, Dim3::new(2, 1, 1), Dim3::new(40, 1, 1), 0, &args).unwrap();
            assert_eq!(words(&out[0]), vec![explicit; 80], "`{kernel}` on the {name}");
        }
    }
}
