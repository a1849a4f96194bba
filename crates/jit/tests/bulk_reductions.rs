//! Bulk reductions many CTAs run into the same global words, and shared-memory operands of the non-tensor
//! bulk copies, `st.async`/`red.async` and `cp.async.mbarrier.arrive` outside the CTA's shared window.
//!
//! The model, from the ISA text: `cp.reduce.async.bulk` combines each source element into the destination
//! element atomically with respect to the other threads' accesses (a reduction, not a load and a store), so
//! 256 CTAs each adding their shared buffer 8 times into the same global buffer leave the exact sum in every
//! element, in any order (the f32 values are small integers: every partial sum is exact). A shared-memory
//! address outside the CTA's shared memory is an out-of-bounds shared access of the thread, never an access
//! to other memory.

mod common;

use common::{launch, Arg};
use device::Dim3;

const CTAS: u32 = 256;
const REPS: u64 = 8;

/// Every CTA fills `su` (u32: c * 1000 + i), `sf` (f32: c % 4 + 1) and `sd` (u64: c << 33 | i), then thread
/// 0 reduces each into the global buffers `REPS` times.
const REDUCE: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry red(.param .u64 pu, .param .u64 pf, .param .u64 pd)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<12>;
    .shared .align 16 .b32 su[1024];
    .shared .align 16 .f32 sf[1024];
    .shared .align 16 .b64 sd[512];
    ld.param.u64 %rd1, [pu];
    ld.param.u64 %rd2, [pf];
    ld.param.u64 %rd3, [pd];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.lo.u32 %r3, %r2, 1000;
    and.b32 %r4, %r2, 3;
    add.u32 %r4, %r4, 1;
    cvt.rn.f32.u32 %f1, %r4;
    cvt.u64.u32 %rd4, %r2;
    shl.b64 %rd4, %rd4, 33;
    mov.u32 %r5, %r1;
FILL:
    add.u32 %r6, %r3, %r5;
    mul.wide.u32 %rd5, %r5, 4;
    mov.u64 %rd6, su;
    add.u64 %rd6, %rd6, %rd5;
    st.shared.u32 [%rd6], %r6;
    mov.u64 %rd6, sf;
    add.u64 %rd6, %rd6, %rd5;
    st.shared.f32 [%rd6], %f1;
    setp.ge.u32 %p1, %r5, 512;
    @%p1 bra NEXT;
    cvt.u64.u32 %rd7, %r5;
    or.b64 %rd7, %rd4, %rd7;
    mul.wide.u32 %rd5, %r5, 8;
    mov.u64 %rd6, sd;
    add.u64 %rd6, %rd6, %rd5;
    st.shared.u64 [%rd6], %rd7;
NEXT:
    add.u32 %r5, %r5, 32;
    setp.lt.u32 %p1, %r5, 1024;
    @%p1 bra FILL;
    bar.sync 0;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra DONE;
    fence.proxy.async.shared::cta;
    mov.u32 %r9, 0;
REP:
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [su], 4096;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd2], [sf], 4096;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u64 [%rd3], [sd], 4096;
    cp.async.bulk.commit_group;
    add.u32 %r9, %r9, 1;
    setp.lt.u32 %p3, %r9, 8;
    @%p3 bra REP;
    cp.async.bulk.wait_group 0;
DONE:
    ret;
}
"#;

/// The exact sums of the three buffers.
fn model() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (mut u, mut f, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..1024u64 {
        let s: u64 = (0..u64::from(CTAS)).map(|c| REPS * (c * 1000 + i)).sum();
        u.extend_from_slice(&(s as u32).to_le_bytes());
        let s: u64 = (0..u64::from(CTAS)).map(|c| REPS * (c % 4 + 1)).sum();
        f.extend_from_slice(&(s as f32).to_le_bytes());
    }
    for i in 0..512u64 {
        let s = (0..u64::from(CTAS)).fold(0u64, |s, c| s.wrapping_add((c << 33 | i).wrapping_mul(REPS)));
        d.extend_from_slice(&s.to_le_bytes());
    }
    (u, f, d)
}

#[test]
fn bulk_reductions_of_many_ctas_into_the_same_words_lose_no_update() {
    let module = ir::compile(REDUCE).unwrap_or_else(|d| panic!("{d:?}"));
    let (u, f, d) = model();
    let args = [Arg::Buf(vec![0; 4096]), Arg::Buf(vec![0; 4096]), Arg::Buf(vec![0; 4096])];
    let (g, b) = (Dim3::new(CTAS, 1, 1), Dim3::new(32, 1, 1));
    let mut engines: Vec<(&str, Box<dyn device::Backend>)> = vec![("emulator", Box::new(emu::Emulator::new()))];
    for (name, vectorize) in [("JIT (4 workers)", true), ("JIT (4 workers, scalar)", false)] {
        engines
            .push((name, Box::new(jit::Jit::new(jit::Options { threads: 4, vectorize, ..jit::Options::default() }))));
    }
    let mut lost = Vec::new();
    for (name, mut engine) in engines {
        let (out, _) =
            launch(engine.as_mut(), &module, "red", g, b, 0, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (k, (ty, want)) in [(".add.u32", &u), (".add.f32", &f), (".add.u64", &d)].into_iter().enumerate() {
            if &out[k] != want {
                lost.push(format!("{name}: {ty}"));
            }
        }
    }
    assert!(lost.is_empty(), "lost updates: {lost:?}");
}

/// Every CTA fills a 64-element `.f16` box with ones and reduces it 8 times into a tensor of 63 elements
/// (`cp.reduce.async.bulk.tensor`, `.add`): the box's last element lies outside the tensor and is skipped.
const TENSOR_REDUCE: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry tred(.param .u64 tensor, .param .align 64 .b8 map[128])
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 box[128];
    mov.b64 %rd1, map;
    cvta.param.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    mov.u64 %rd4, box;
    add.u64 %rd4, %rd4, %rd3;
    st.shared.u32 [%rd4], 1006648320;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
REP:
    cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd2, {%r2}], [box];
    cp.async.bulk.commit_group;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 8;
    @%p2 bra REP;
    cp.async.bulk.wait_group 0;
DONE:
    ret;
}
"#;

/// Half-precision tensor reductions share 32-bit words between neighbours: each element is combined on its
/// own, atomically, and its neighbour is left alone (the 63rd element ends the allocation mid-word).
#[test]
fn half_precision_tensor_reductions_of_many_ctas_lose_no_update() {
    use program::tensormap::{encode_tiled, Tiled};
    let module = ir::compile(TENSOR_REDUCE).unwrap_or_else(|d| panic!("{d:?}"));
    let t = Tiled {
        dtype: 6, // FLOAT16
        dims: &[63],
        boxes: &[64],
        element_strides: &[1],
        ..Tiled::default()
    };
    let map = encode_tiled(&t).expect("a valid map");
    let args = [Arg::Buf(vec![0; 126]), Arg::TensorMap(0, map)];
    // 256 CTAs * 8 reductions of 1.0: 2048.0, exact in f16 (0x6800), as every partial sum is.
    let expected: Vec<u8> = (0..63).flat_map(|_| 0x6800u16.to_le_bytes()).collect();
    let (g, b) = (Dim3::new(CTAS, 1, 1), Dim3::new(32, 1, 1));
    let mut engines: Vec<(&str, Box<dyn device::Backend>)> = vec![("emulator", Box::new(emu::Emulator::new()))];
    engines.push(("JIT (4 workers)", Box::new(jit::Jit::new(jit::Options { threads: 4, ..jit::Options::default() }))));
    for (name, mut engine) in engines {
        let (out, _) =
            launch(engine.as_mut(), &module, "tred", g, b, 0, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out[0] == expected, "{name}: lost updates: {:x?}", out[0]);
    }
}

/// A one-thread kernel running `line` with `%rd5` a shared-memory offset outside the CTA's shared memory:
/// where the JIT would put it, the host address of the `victim` buffer (its generic address minus that of
/// the shared window's start). `%rd3` is a good 16-byte shared buffer, `%rd6` an initialised mbarrier, `%rd2`
/// a global buffer.
fn window_kernel(line: &str) -> String {
    format!(
        r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry bad(.param .u64 victim, .param .u64 src)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 sh[64];
    .shared .align 8 .b64 mb;
    ld.param.u64 %rd1, [victim];
    ld.param.u64 %rd2, [src];
    mov.u64 %rd3, sh;
    cvta.shared.u64 %rd4, %rd3;
    sub.u64 %rd5, %rd1, %rd4;
    add.u64 %rd5, %rd5, %rd3;
    mov.u64 %rd6, mb;
    mbarrier.init.shared.b64 [%rd6], 1;
    mov.u32 %r1, 7;
    {line}
    ret;
}}
"#
    )
}

#[test]
fn shared_operands_outside_the_window_are_errors_not_writes_elsewhere() {
    let lines = [
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd5], [%rd2], 16, [%rd6];",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd3], [%rd2], 16, [%rd5];",
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%rd5], [%rd3], 16, [%rd6];",
        "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%rd5], [%rd3], 16, \
         [%rd6];",
        "cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%rd5], 16;",
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd2], [%rd5], 16;",
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%rd5], %r1, [%rd6];",
        "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%rd5], %r1, [%rd6];",
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%rd3], %r1, [%rd5];",
        "cp.async.mbarrier.arrive.shared.b64 [%rd5];",
    ];
    let mut wrong = Vec::new();
    for line in lines {
        let module = ir::compile(&window_kernel(line)).unwrap_or_else(|d| panic!("{d:?}\n{line}"));
        let args = [Arg::Buf(vec![0; 256]), Arg::Buf(vec![0; 256])];
        let (g, b) = (Dim3::new(1, 1, 1), Dim3::new(1, 1, 1));
        let mut engines: Vec<(&str, Box<dyn device::Backend>)> = vec![("emulator", Box::new(emu::Emulator::new()))];
        for (name, vectorize) in [("JIT", true), ("JIT (scalar)", false)] {
            engines.push((name, Box::new(jit::Jit::new(jit::Options { vectorize, ..jit::Options::default() }))));
        }
        for (name, mut engine) in engines {
            match launch(engine.as_mut(), &module, "bad", g, b, 0, &args) {
                Ok(_) => wrong.push(format!("{name}: `{line}` succeeded")),
                Err(e) if !(e.contains("out-of-bounds shared access") && e.contains("PTX line 20")) => {
                    wrong.push(format!("{name}: `{line}`: {e}"))
                }
                Err(_) => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
