//! Instructions that only steer the hardware (PTX ISA: "createpolicy", the `.L2::cache_hint` forms of
//! `ld`, `st`, `atom`, `red` and `cp.async`, "griddepcontrol", "setmaxnreg"): the ISA defines no effect of
//! theirs on results, so a kernel computes what it computes without them. Each test runs a kernel on every
//! engine against that model; malformed forms (what `ptxas` refuses) are refused, naming their line.

mod common;

use common::{engines, launch, refusal, words, Arg};
use device::Dim3;

/// Every access form with a cache policy, from every `createpolicy` form. Thread t: `a = in[t]`;
/// `out[t] = 3a + 1` (`st`); `counter += 1` returning the old value to `old[t]` (`atom`); `sum += a` (`red`);
/// `in[t]` copied to shared memory by `cp.async` and read back to `copy[t]`; `policies[8t + k]` the k-th
/// policy value (opaque: only compared between the engines).
const KERNEL: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out, .param .u64 old, .param .u64 counter, .param .u64 sum,
                  .param .u64 copy, .param .u64 policies)
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<32>;
    .shared .align 16 .b8 sh[1024];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd3, [old];
    ld.param.u64 %rd4, [counter];
    ld.param.u64 %rd5, [sum];
    ld.param.u64 %rd6, [copy];
    ld.param.u64 %rd7, [policies];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd8, %r1, 4;
    mov.f32 %f1, 0f3F000000;
    createpolicy.fractional.L2::evict_last.b64 %rd20, 1.0;
    createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %rd21, %f1;
    createpolicy.fractional.L2::evict_unchanged.b64 %rd22;
    createpolicy.range.global.L2::evict_normal.L2::evict_first.b64 %rd23, [%rd1], 128, 4096;
    mov.u32 %r2, 256;
    createpolicy.range.L2::evict_last.b64 %rd24, [%rd2], %r2, %r2;
    createpolicy.cvt.L2.b64 %rd25, %rd20;
    add.s64 %rd9, %rd1, %rd8;
    ld.global.L2::cache_hint.u32 %r3, [%rd9], %rd20;
    ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.u32 %r4, [%rd9], %rd25;
    ld.L2::cache_hint.u32 %r5, [%rd9], 7;
    add.s32 %r6, %r3, %r4;
    add.s32 %r6, %r6, %r5;
    add.s32 %r7, %r6, 1;
    add.s64 %rd10, %rd2, %rd8;
    st.global.L2::cache_hint.u32 [%rd10], %r7, %rd21;
    atom.global.add.L2::cache_hint.u32 %r8, [%rd4], 1, %rd22;
    add.s64 %rd11, %rd3, %rd8;
    st.global.u32 [%rd11], %r8;
    red.global.add.L2::cache_hint.u32 [%rd5], %r3, %rd23;
    mov.u32 %r9, sh;
    shl.b32 %r10, %r1, 2;
    add.s32 %r11, %r9, %r10;
    cp.async.ca.shared.global.L2::cache_hint [%r11], [%rd9], 4, %rd24;
    cp.async.wait_all;
    ld.shared.u32 %r12, [%r11];
    add.s64 %rd12, %rd6, %rd8;
    st.global.u32 [%rd12], %r12;
    mul.wide.u32 %rd13, %r1, 48;
    add.s64 %rd14, %rd7, %rd13;
    st.global.v2.u64 [%rd14], {%rd20, %rd21};
    st.global.v2.u64 [%rd14+16], {%rd22, %rd23};
    st.global.v2.u64 [%rd14+32], {%rd24, %rd25};
    ret;
}
"#;

#[test]
fn cache_policies_change_no_result() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let threads = 64usize;
    let input: Vec<u32> = (0..threads as u32).map(|t| t * 7919 % 1000 + 1).collect();
    let bytes = |n: usize| Arg::Buf(vec![0; n]);
    let args = [
        Arg::Buf(input.iter().flat_map(|v| v.to_le_bytes()).collect()),
        bytes(4 * threads),
        bytes(4 * threads),
        bytes(4),
        bytes(4),
        bytes(4 * threads),
        bytes(48 * threads),
    ];
    let mut policies = Vec::new();
    for (name, mut engine) in engines() {
        let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(threads as u32, 1, 1));
        let (out, _) = launch(engine.as_mut(), &module, "k", grid, block, 0, &args).unwrap();
        let want: Vec<u32> = input.iter().map(|a| 3 * a + 1).collect();
        assert_eq!(words(&out[1]), want, "st of 3a + 1 on the {name}");
        let mut old = words(&out[2]);
        old.sort_unstable();
        assert_eq!(old, (0..threads as u32).collect::<Vec<_>>(), "atom.add's old values on the {name}");
        assert_eq!(words(&out[3]), [threads as u32], "the counter on the {name}");
        assert_eq!(words(&out[4]), [input.iter().sum::<u32>()], "red.add's sum on the {name}");
        assert_eq!(words(&out[5]), input, "cp.async's copy on the {name}");
        policies.push((name, out[6].clone()));
    }
    for (name, p) in &policies[1..] {
        assert_eq!(p, &policies[0].1, "policy values on the {name} and the emulator");
    }
    // `createpolicy.cvt` of a policy's access property is a policy; the ISA leaves both opaque, but one
    // thread's values are the same in every thread.
    let first = &policies[0].1[..48];
    assert!(policies[0].1.chunks(48).all(|c| c == first));
}

/// nvcc's `cuda::annotated_ptr` (`createpolicy.fractional` with the fraction in an `.f32` register, then
/// `.L2::cache_hint` load and store), `cudaGridDependencySynchronize`/`cudaTriggerProgrammaticLaunchCompletion`
/// (`griddepcontrol`) and `cuda::ptx::setmaxnreg_{dec,inc}`.
#[test]
fn nvcc_kernels() {
    let module = ir::compile(include_str!("fixtures/hints.sm_90a.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    let n = 300usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 40.0).collect();
    let floats = |b: &[u8]| words(b).into_iter().map(f32::from_bits).collect::<Vec<_>>();
    let args = || {
        [
            Arg::Buf(input.iter().flat_map(|v| v.to_le_bytes()).collect()),
            Arg::Buf(vec![0; 4 * n]),
            Arg::Scalar((n as i32).to_le_bytes().to_vec()),
        ]
    };
    let (grid, block) = (Dim3::new(3, 1, 1), Dim3::new(128, 1, 1));
    for (name, mut engine) in engines() {
        let (out, _) = launch(engine.as_mut(), &module, "_Z6policyPKfPfi", grid, block, 0, &args()).unwrap();
        assert_eq!(floats(&out[1]), input.iter().map(|x| 2.0 * x + 1.0).collect::<Vec<_>>(), "policy on the {name}");
        let (out, _) = launch(engine.as_mut(), &module, "_Z3pdlPKfPfi", grid, block, 0, &args()).unwrap();
        assert_eq!(floats(&out[1]), input.iter().map(|x| x + 1.0).collect::<Vec<_>>(), "pdl on the {name}");
        let (grid, block) = (Dim3::new(2, 1, 1), Dim3::new(384, 1, 1));
        let (out, _) =
            launch(engine.as_mut(), &module, "_Z4regsPi", grid, block, 0, &[Arg::Buf(vec![0; 4 * 768])]).unwrap();
        assert_eq!(words(&out[0]), (0..768u32).map(|i| i * i).collect::<Vec<_>>(), "regs on the {name}");
    }
}

/// What `ptxas` refuses is refused, with the line (the body's first line is PTX line 11).
#[test]
fn malformed_forms_are_refused() {
    let cases = [
        ("ld.global.L2::cache_hint.u32 %r1, [%rd1], %r2;", "cache policy, a 64-bit register"),
        ("ld.global.u32 %r1, [%rd1], %rd2;", "needs the `.L2::cache_hint` qualifier"),
        ("ld.global.L2::cache_hint.u32 %r1, [%rd1];", "cache policy, a 64-bit register"),
        ("ld.shared.L2::cache_hint.u32 %r1, [sh], %rd2;", "applies to global"),
        ("atom.global.cas.L2::cache_hint.b32 %r1, [%rd1], %r2, %r3, %rd2;", "not `atom.cas`"),
        ("st.global.L2::cache_hint.u32 [%rd1], %r1, %f1;", "cache policy, a 64-bit register"),
        ("cp.async.ca.shared.global.L2::cache_hint [sh], [%rd1], 16, %r1;", "cache policy, a 64-bit register"),
        ("createpolicy.fractional.L2::evict_last.b64 %rd1, 1.5;", "immediate in (0, 1]"),
        ("createpolicy.fractional.L2::evict_last.b64 %rd1, 0.0;", "immediate in (0, 1]"),
        ("createpolicy.fractional.L2::evict_last.b64 %r1, 0.5;", "64-bit register"),
        ("createpolicy.fractional.L2::evict_last.L2::evict_last.b64 %rd1;", "secondary one"),
        ("createpolicy.range.L2::evict_last.b64 %rd1, [%rd2], 128, 64;", "primary ≤ total"),
        ("createpolicy.range.L2::evict_last.b64 %rd1, [%rd2], %rd3, 64;", "primary ≤ total"),
        ("createpolicy.cvt.L2.b64 %rd1, %r2;", "64-bit access property"),
        ("griddepcontrol.wait.launch_dependents;", "`.launch_dependents` or `.wait`"),
        ("setmaxnreg.dec.sync.aligned.u32 44;", "a multiple of 8"),
        ("setmaxnreg.inc.sync.aligned.u32 264;", "from 24 to 256"),
        ("setmaxnreg.inc.sync.aligned.u32 %r1;", "immediate register count"),
    ];
    for (body, why) in cases {
        let e = refusal("sm_90a", body);
        assert!(e.contains("PTX line 11") && e.contains(why), "{body}: {e}");
    }
}
