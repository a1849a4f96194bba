//! `st.async` and `red.async` to `.shared::cluster` completing on an mbarrier (PTX ISA, "st.async",
//! "red.async"), on the emulator and the JIT. A cluster is one CTA in lockstep: the destination is the CTA's
//! shared memory, and each store or reduction completes its bytes on the mbarrier.
//!
//! The model, from the ISA text: every thread stores a `.v2.b32`, a `.b64` and a `.v4.f32` into its own
//! slots and reduces into shared counters (`.add.u32` by residue, `.min.s32`, `.max.u32`, `.inc.u32` with a
//! bound, `.xor.b32`, `.add.u64`); thread 0 arrives on the mbarrier expecting the sum of the bytes (60 per
//! thread), and everyone waits for the phase: the wait can only finish once every store has completed its
//! bytes, after which the stored values and the reductions' results (independent of their order) are read
//! back.

mod common;

use common::{engines, launch, refusal, Arg};
use device::Dim3;

const THREADS: u32 = 64;

const KERNEL: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<40>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
    .shared .align 8 .b64 mb;
    .shared .align 8 .b32 d2[128];
    .shared .align 8 .b64 d64[64];
    .shared .align 16 .b32 d4[256];
    .shared .align 4 .b32 cnt[4];
    .shared .align 4 .b32 mn[4];
    .shared .align 4 .b32 mx[4];
    .shared .align 4 .b32 inc;
    .shared .align 4 .b32 xr;
    .shared .align 8 .b64 a64;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra START;
    mbarrier.init.shared::cta.b64 [mb], 1;
    st.shared.v4.u32 [cnt], {0, 0, 0, 0};
    st.shared.v4.u32 [mn], {2147483647, 2147483647, 2147483647, 2147483647};
    st.shared.v4.u32 [mx], {0, 0, 0, 0};
    st.shared.u32 [inc], 0;
    st.shared.u32 [xr], 0;
    st.shared.u64 [a64], 0;
START:
    bar.sync 0;
    mov.u32 %r2, mb;
    // st.async.v2.b32: {3t + 1, t ^ 0x5a5a}
    mad.lo.u32 %r3, %r1, 3, 1;
    xor.b32 %r4, %r1, 0x5a5a;
    mov.u32 %r5, d2;
    shl.b32 %r6, %r1, 3;
    add.u32 %r7, %r5, %r6;
    st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r7], {%r3, %r4}, [%r2];
    // st.async.b64: t * 1000003 << 20
    mul.wide.u32 %rd2, %r1, 1000003;
    shl.b64 %rd2, %rd2, 20;
    mov.u32 %r8, d64;
    add.u32 %r9, %r8, %r6;
    st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%r9], %rd2, [%r2];
    // st.async.v4.f32: {t, t + 0.5, -t, 2t}
    cvt.rn.f32.u32 %f1, %r1;
    add.f32 %f2, %f1, 0f3F000000;
    neg.f32 %f3, %f1;
    add.f32 %f4, %f1, %f1;
    mov.u32 %r10, d4;
    shl.b32 %r11, %r1, 4;
    add.u32 %r12, %r10, %r11;
    st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%r12], {%f1, %f2, %f3, %f4}, [%r2];
    // reductions into word t % 4
    and.b32 %r13, %r1, 3;
    shl.b32 %r14, %r13, 2;
    add.u32 %r15, %r1, 1;
    mov.u32 %r16, cnt;
    add.u32 %r16, %r16, %r14;
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r16], %r15, [%r2];
    mul.lo.u32 %r17, %r1, 37;
    rem.u32 %r17, %r17, 50;
    sub.s32 %r17, %r17, 25;
    mov.u32 %r18, mn;
    add.u32 %r18, %r18, %r14;
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min.s32 [%r18], %r17, [%r2];
    mul.lo.u32 %r19, %r1, -1640531535;
    mov.u32 %r20, mx;
    add.u32 %r20, %r20, %r14;
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.u32 [%r20], %r19, [%r2];
    mov.u32 %r21, inc;
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.u32 [%r21], 20, [%r2];
    mul.lo.u32 %r22, %r1, 0x01010101;
    mov.u32 %r23, xr;
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.xor.b32 [%r23], %r22, [%r2];
    cvt.u64.u32 %rd3, %r1;
    shl.b64 %rd3, %rd3, 33;
    mov.u32 %r24, a64;
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 [%r24], %rd3, [%r2];
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [mb], 3840;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [mb], 0;
    @!%p2 bra WAIT;
    // Read back: this thread's slots, and thread 0 the counters.
    mul.wide.u32 %rd5, %r1, 8;
    add.s64 %rd6, %rd1, %rd5;
    ld.shared.v2.u32 {%r25, %r26}, [%r7];
    st.global.v2.u32 [%rd6], {%r25, %r26};
    ld.shared.u64 %rd7, [%r9];
    st.global.u64 [%rd6+512], %rd7;
    mul.wide.u32 %rd8, %r1, 16;
    add.s64 %rd9, %rd1, %rd8;
    ld.shared.v4.u32 {%r27, %r28, %r29, %r30}, [%r12];
    st.global.v4.u32 [%rd9+1024], {%r27, %r28, %r29, %r30};
    bar.sync 0;
    @!%p1 bra DONE;
    ld.shared.v4.u32 {%r27, %r28, %r29, %r30}, [cnt];
    st.global.v4.u32 [%rd1+2048], {%r27, %r28, %r29, %r30};
    ld.shared.v4.u32 {%r27, %r28, %r29, %r30}, [mn];
    st.global.v4.u32 [%rd1+2064], {%r27, %r28, %r29, %r30};
    ld.shared.v4.u32 {%r27, %r28, %r29, %r30}, [mx];
    st.global.v4.u32 [%rd1+2080], {%r27, %r28, %r29, %r30};
    ld.shared.u32 %r31, [inc];
    st.global.u32 [%rd1+2096], %r31;
    ld.shared.u32 %r31, [xr];
    st.global.u32 [%rd1+2100], %r31;
    ld.shared.u64 %rd7, [a64];
    st.global.u64 [%rd1+2104], %rd7;
DONE:
    ret;
}
"#;

fn model() -> Vec<u8> {
    let mut out = vec![0u8; 2112];
    let mut put = |at: usize, bytes: &[u8]| out[at..at + bytes.len()].copy_from_slice(bytes);
    let (mut cnt, mut mn, mut mx) = ([0u32; 4], [i32::MAX; 4], [0u32; 4]);
    let (mut inc, mut xr, mut a64) = (0u32, 0u32, 0u64);
    for t in 0..THREADS {
        let i = t as usize;
        put(8 * i, &(3 * t + 1).to_le_bytes());
        put(8 * i + 4, &(t ^ 0x5a5a).to_le_bytes());
        put(512 + 8 * i, &((u64::from(t) * 1_000_003) << 20).to_le_bytes());
        let f = t as f32;
        for (k, v) in [f, f + 0.5, -f, 2.0 * f].into_iter().enumerate() {
            put(1024 + 16 * i + 4 * k, &v.to_bits().to_le_bytes());
        }
        let r = i % 4;
        cnt[r] = cnt[r].wrapping_add(t + 1);
        mn[r] = mn[r].min((t * 37 % 50) as i32 - 25);
        mx[r] = mx[r].max(t.wrapping_mul(2_654_435_761));
        inc = if inc >= 20 { 0 } else { inc + 1 };
        xr ^= t.wrapping_mul(0x0101_0101);
        a64 = a64.wrapping_add(u64::from(t) << 33);
    }
    for r in 0..4 {
        put(2048 + 4 * r, &cnt[r].to_le_bytes());
        put(2064 + 4 * r, &mn[r].to_le_bytes());
        put(2080 + 4 * r, &mx[r].to_le_bytes());
    }
    put(2096, &inc.to_le_bytes());
    put(2100, &xr.to_le_bytes());
    put(2104, &a64.to_le_bytes());
    out
}

#[test]
fn async_stores_and_reductions_complete_their_bytes_on_the_mbarrier() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let expected = model();
    for (name, mut backend) in engines() {
        let args = [Arg::Buf(vec![0; 2112])];
        let (out, _) = launch(backend.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(THREADS, 1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(common::words(&out[0]), common::words(&expected), "{name}");
    }
}

/// Without the expected bytes all arriving, the phase never completes: one missing thread's stores are a
/// located deadlock, not a wait that returns early.
#[test]
fn a_short_transaction_count_deadlocks() {
    let ptx = KERNEL.replace("[mb], 3840;", "[mb], 3900;");
    let module = ir::compile(&ptx).unwrap();
    for (name, mut backend) in engines() {
        let args = [Arg::Buf(vec![0; 2112])];
        let e = launch(backend.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(THREADS, 1, 1), 0, &args)
            .expect_err(name);
        assert!(e.contains("spin on the mbarrier") && e.contains("tx-count 60"), "{name}: {e}");
    }
}

#[test]
fn global_forms_and_st_bulk_stay_refused() {
    let e = refusal("sm_90", "st.async.release.gpu.global.u32 [%rd1], %r1;");
    assert!(e.contains("PTX line 11") && e.contains("sm_100"), "{e}");
    let e = refusal("sm_90", "st.bulk.weak.shared::cta [sh], 256, 0;");
    assert!(e.contains("PTX line 11") && e.contains("st.bulk"), "{e}");
    let e = refusal(
        "sm_90",
        "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min.u64 [%r1], %rd2, [%r3];",
    );
    assert!(e.contains("PTX line 11") && e.contains("red.async"), "{e}");
}
