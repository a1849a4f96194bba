//! mbarrier objects on both engines: phases with alternating parity between producer and consumer warps,
//! arrive counts other than the block size, `arrive_drop`, `expect_tx`/`complete_tx`, state tokens and
//! `pending_count`, `cp.async.mbarrier.arrive{.noinc}`, errors for undefined uses, and a deadlock that fails
//! the launch instead of hanging. Expected values come from models of the PTX ISA's description
//! (9.7.13.15), written here.

mod common;

use common::{launch, Arg};
use device::Dim3;

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs `kernel` of `ptx` on the emulator and on the JIT (scalar and with its vector path, one worker and
/// four), returning each engine's name and buffers (or error text).
fn run_all(
    ptx: &str,
    kernel: &str,
    grid: u32,
    block: u32,
    args: &[Arg],
) -> Vec<(&'static str, Result<Vec<Vec<u8>>, String>)> {
    let module = ir::compile(ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
    let (g, b) = (Dim3::new(grid, 1, 1), Dim3::new(block, 1, 1));
    let mut out = vec![("emulator", launch(&mut emu::Emulator::new(), &module, kernel, g, b, 0, args).map(|r| r.0))];
    for (name, vectorize, threads) in [("JIT (scalar)", false, 1), ("JIT", true, 1), ("JIT (4 workers)", true, 4)] {
        let mut jit = jit::Jit::new(jit::Options { threads, vectorize, ..jit::Options::default() });
        out.push((name, launch(&mut jit, &module, kernel, g, b, 0, args).map(|r| r.0)));
    }
    out
}

/// Every engine's buffer `index` equals `expected`.
fn expect_words(results: &[(&str, Result<Vec<Vec<u8>>, String>)], index: usize, expected: &[u32]) {
    for (engine, r) in results {
        let bufs = r.as_ref().unwrap_or_else(|e| panic!("{engine}: {e}"));
        assert_eq!(words(&bufs[index]), expected, "{engine}");
    }
}

/// Every engine fails with an error containing each of `parts`.
fn expect_error(results: &[(&str, Result<Vec<Vec<u8>>, String>)], parts: &[&str]) {
    for (engine, r) in results {
        let e = r.as_ref().err().unwrap_or_else(|| panic!("{engine}: the launch succeeded"));
        for p in parts {
            assert!(e.contains(p), "{engine}: `{p}` not in: {e}");
        }
    }
}

/// One producer warp and three consumer warps pass `iters` tiles through a one-tile buffer: `full` (32
/// arrivals, the producers) and `empty` (96, the consumers) alternate their phases' parity. The producers
/// wait with `try_wait.parity` (the first wait, for parity 1 of a fresh object, is of the phase before phase
/// 0: complete), the consumers with `test_wait.parity`.
const PRODUCER_CONSUMER: &str = r#"
.visible .entry pc(.param .u64 out, .param .u32 iters)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    .reg .pred %p<6>;
    .shared .align 8 .b64 full;
    .shared .align 8 .b64 empty;
    .shared .align 4 .b32 buf[32];
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [iters];
    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra INITED;
    mbarrier.init.shared.b64 [full], 32;
    mbarrier.init.shared::cta.b64 [empty], 96;
INITED:
    bar.sync 0;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
    and.b32 %r7, %r2, 31;
    shl.b32 %r7, %r7, 2;
    mov.u32 %r8, buf;
    add.u32 %r8, %r8, %r7;
    setp.ge.u32 %p2, %r2, 32;
    @%p2 bra CONSUMER;
PRODUCER:
    setp.ge.u32 %p3, %r3, %r1;
    @%p3 bra DONE;
    and.b32 %r5, %r3, 1;
    xor.b32 %r5, %r5, 1;
WAIT_EMPTY:
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [empty], %r5;
    @!%p4 bra WAIT_EMPTY;
    mad.lo.u32 %r6, %r3, 1000, %r2;
    st.shared.u32 [%r8], %r6;
    mbarrier.arrive.release.cta.shared::cta.b64 _, [full];
    add.u32 %r4, %r4, %r6;
    add.u32 %r3, %r3, 1;
    bra PRODUCER;
CONSUMER:
    setp.ge.u32 %p3, %r3, %r1;
    @%p3 bra DONE;
    and.b32 %r5, %r3, 1;
WAIT_FULL:
    mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 %p4, [full], %r5;
    @!%p4 bra WAIT_FULL;
    ld.shared.u32 %r6, [%r8];
    add.u32 %r4, %r4, %r6;
    mbarrier.arrive.shared.b64 %rd2, [empty];
    add.u32 %r3, %r3, 1;
    bra CONSUMER;
DONE:
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r4;
    ret;
}
"#;

#[test]
fn producer_and_consumers_alternate_phases() {
    let iters = 7u32;
    let ptx = format!("{HEADER}{PRODUCER_CONSUMER}");
    let results = run_all(&ptx, "pc", 3, 128, &[Arg::Buf(vec![0; 4 * 128]), Arg::Scalar(iters.to_le_bytes().to_vec())]);
    // Thread t sees tile i's word t % 32, i * 1000 + t % 32, in every phase.
    let expected: Vec<u32> = (0..128u32).map(|t| (0..iters).map(|i| i * 1000 + t % 32).sum()).collect();
    expect_words(&results, 0, &expected);
}
