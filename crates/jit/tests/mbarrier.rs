//! mbarrier objects on both engines: phases with alternating parity between producer and consumer warps,
//! arrive counts other than the block size, `arrive_drop`, `expect_tx`/`complete_tx`, state tokens and
//! `pending_count`, `cp.async.mbarrier.arrive{.noinc}`, producers and consumers among the lanes of one warp,
//! errors for undefined uses, and deadlocks that fail the launch instead of hanging. Expected values come from
//! models of the PTX ISA's description (9.7.13.15), written here.

mod common;

use common::{launch, Arg};
use device::Dim3;

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Each engine's name and buffers (or error text).
type Results = Vec<(&'static str, Result<Vec<Vec<u8>>, String>)>;

fn bytes(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs `kernel` of `ptx` on the emulator and on the JIT (scalar and with its vector path, one worker and
/// four), returning each engine's name and buffers (or error text).
fn run_all(ptx: &str, kernel: &str, grid: u32, block: u32, args: &[Arg]) -> Results {
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
fn expect_words(results: &Results, index: usize, expected: &[u32]) {
    for (engine, r) in results {
        let bufs = r.as_ref().unwrap_or_else(|e| panic!("{engine}: {e}"));
        assert_eq!(words(&bufs[index]), expected, "{engine}");
    }
}

/// Every engine fails with an error containing each of `parts`.
fn expect_error(results: &Results, parts: &[&str]) {
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

/// 64 threads, one object initialized for 64 arrivals. Thread 0 arrives with `.expect_tx` of 256 bytes; the
/// odd threads drop out (`arrive_drop`, so later phases expect 32) and exit; threads 2, 4, .., 32 each fill
/// 16 bytes of a buffer and signal them with `complete_tx` of 16 before arriving; every even thread then
/// waits on its token with `try_wait` (with a suspend-time hint) and reads the word after its own. A
/// second phase of the 32 even threads, each arriving with count 1, uses `test_wait` on its token.
const TX_AND_DROP: &str = r#"
.visible .entry tx(.param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .pred %p<6>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b32 buf[64];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    mbarrier.init.shared.b64 [bar], 64;
INITED:
    bar.sync 0;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p2, %r2, 1;
    @%p2 bra DROP;
    setp.eq.u32 %p3, %r1, 0;
    @%p3 bra EXPECT;
    setp.gt.u32 %p4, %r1, 32;
    @%p4 bra ARRIVE;
    // Threads 2, 4, .., 32 fill words 2(t-2) .. 2(t-2)+3 (bytes 8(t-2) on) and complete 16 bytes.
    sub.u32 %r3, %r1, 2;
    shl.b32 %r3, %r3, 3;
    mov.u32 %r4, buf;
    add.u32 %r4, %r4, %r3;
    mul.lo.u32 %r5, %r1, 100;
    st.shared.v4.u32 [%r4], {%r5, %r5, %r5, %r5};
    mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 16;
ARRIVE:
    mbarrier.arrive.shared.b64 %rd2, [bar];
    bra WAIT;
EXPECT:
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd2, [bar], 256;
WAIT:
    mbarrier.try_wait.shared::cta.b64 %p5, [bar], %rd2, 1000;
    @!%p5 bra WAIT;
    // Word (t + 1) % 64 of the buffer.
    add.u32 %r6, %r1, 1;
    and.b32 %r6, %r6, 63;
    shl.b32 %r6, %r6, 2;
    mov.u32 %r7, buf;
    add.u32 %r7, %r7, %r6;
    ld.shared.u32 %r8, [%r7];
    // Phase 1: only the 32 even threads are expected now.
    mbarrier.arrive.shared::cta.b64 %rd3, [bar], 1;
WAIT2:
    mbarrier.test_wait.shared.b64 %p5, [bar], %rd3;
    @!%p5 bra WAIT2;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r8;
    ret;
DROP:
    mbarrier.arrive_drop.shared.b64 _, [bar];
    mov.u32 %r9, 7;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r9;
    exit;
}
"#;

#[test]
fn expect_tx_complete_tx_and_arrive_drop() {
    let ptx = format!("{HEADER}{TX_AND_DROP}");
    let results = run_all(&ptx, "tx", 2, 64, &[Arg::Buf(vec![0; 4 * 64])]);
    // Word w of the buffer was written by thread 2 + 2 (w / 4) with 100 times its index.
    let word = |w: u32| (2 + 2 * (w / 4)) * 100;
    let expected: Vec<u32> = (0..64u32).map(|t| if t % 2 == 1 { 7 } else { word((t + 1) % 64) }).collect();
    expect_words(&results, 0, &expected);
}

/// One thread: state tokens carry the pending count before their arrive (`pending_count`, from
/// `.noComplete` arrives with a count), and a token from the current phase tests incomplete until the
/// phase completes.
const TOKENS: &str = r#"
.visible .entry tokens(.param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .reg .pred %p<4>;
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [out];
    mbarrier.init.shared::cta.b64 [bar], 5;
    mbarrier.arrive.noComplete.shared.b64 %rd2, [bar], 2;
    mbarrier.pending_count.b64 %r1, %rd2;
    mbarrier.arrive.noComplete.shared::cta.b64 %rd3, [bar], 2;
    mbarrier.pending_count.b64 %r2, %rd3;
    mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd3;
    selp.u32 %r3, 1, 0, %p1;
    mbarrier.arrive.shared::cta.b64 %rd4, [bar];
    mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd3;
    selp.u32 %r4, 1, 0, %p2;
    mbarrier.pending_count.b64 %r5, %rd4;
    // After the phase: parity 1 is current, parity 0 complete.
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 1;
    selp.u32 %r6, 1, 0, %p3;
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 0;
    selp.u32 %r7, 1, 0, %p3;
    mbarrier.inval.shared::cta.b64 [bar];
    ld.shared.u32 %r8, [bar];
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
    st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
    ret;
}
"#;

#[test]
fn tokens_and_pending_counts() {
    let ptx = format!("{HEADER}{TOKENS}");
    let results = run_all(&ptx, "tokens", 1, 1, &[Arg::Buf(vec![0; 32])]);
    // Pending 5 before the first arrive, 3 before the second; the second's token is incomplete until the
    // last arrival (pending 1 before it) completes phase 0; then parity 1 is current and `inval` leaves
    // nothing behind.
    expect_words(&results, 0, &[5, 3, 0, 1, 1, 0, 1, 0]);
}

/// `cp.async` copies tracked by the barrier: with `.noinc` each thread's asynchronous arrive is one of the
/// init count (twice the threads); without it (a second object, initialized for the threads alone) the
/// arrive nets to nothing.
const CP_ASYNC: &str = r#"
.visible .entry copies(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .reg .pred %p<4>;
    .shared .align 8 .b64 bars[2];
    .shared .align 16 .b32 buf[128];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    shl.b32 %r3, %r2, 1;
    mbarrier.init.shared.b64 [bars], %r3;
    mbarrier.init.shared.b64 [bars+8], %r2;
INITED:
    bar.sync 0;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r5, buf;
    add.u32 %r5, %r5, %r4;
    cp.async.ca.shared.global [%r5], [%rd4], 4;
    cp.async.mbarrier.arrive.noinc.shared.b64 [bars];
    mbarrier.arrive.shared.b64 %rd5, [bars];
W1:
    mbarrier.test_wait.shared.b64 %p2, [bars], %rd5;
    @!%p2 bra W1;
    // Word (t + 5) % n, then a second copy into the other half, tracked by the second object.
    add.u32 %r6, %r1, 5;
    rem.u32 %r6, %r6, %r2;
    shl.b32 %r6, %r6, 2;
    mov.u32 %r7, buf;
    add.u32 %r7, %r7, %r6;
    ld.shared.u32 %r8, [%r7];
    add.u32 %r9, %r5, 256;
    cp.async.ca.shared.global [%r9], [%rd4], 4;
    cp.async.mbarrier.arrive.shared::cta.b64 [bars+8];
    mbarrier.arrive.shared.b64 %rd5, [bars+8];
W2:
    mbarrier.try_wait.shared::cta.b64 %p2, [bars+8], %rd5;
    @!%p2 bra W2;
    ld.shared.u32 %r10, [%r7+256];
    add.u32 %r8, %r8, %r10;
    add.s64 %rd6, %rd2, %rd3;
    st.global.u32 [%rd6], %r8;
    ret;
}
"#;

#[test]
fn cp_async_arrivals() {
    let ptx = format!("{HEADER}{CP_ASYNC}");
    let n = 64u32;
    let input: Vec<u32> = (0..n).map(|i| i * 3 + 1).collect();
    let results = run_all(&ptx, "copies", 2, n, &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 4 * n as usize])]);
    let expected: Vec<u32> = (0..n).map(|t| 2 * input[((t + 5) % n) as usize]).collect();
    expect_words(&results, 1, &expected);
}

/// Every thread arrives and waits, but the object expects one arrival more than the block has: no thread
/// can complete the phase. Both engines fail the launch at the wait, naming the object's state.
#[test]
fn a_phase_nobody_can_complete_is_a_located_deadlock() {
    let ptx = format!(
        "{HEADER}.visible .entry stuck()\n{{\n    .reg .b64 %rd<2>;\n    .reg .pred %p<2>;\n    \
         .shared .align 8 .b64 bar;\n    cvt.u64.u32 %rd1, %tid.x;\n    setp.ne.u64 %p1, %rd1, 0;\n    \
         @%p1 bra READY;\n    mbarrier.init.shared.b64 [bar], 65;\nREADY:\n    bar.sync 0;\n    \
         mbarrier.arrive.shared.b64 %rd1, [bar];\nSPIN:\n    mbarrier.try_wait.shared.b64 %p1, [bar], %rd1;\n    \
         @!%p1 bra SPIN;\n    ret;\n}}\n"
    );
    let results = run_all(&ptx, "stuck", 2, 64, &[]);
    expect_error(
        &results,
        &[
            "every live thread waits and none can arrive: 64 threads spin on the mbarrier at shared offset 0x0 (phase \
             parity 0, 1 of 65 arrivals pending, tx-count 0); 0 threads wait at a barrier; 0 of the CTA's 64 threads \
             exited",
            "PTX line 17 (`mbarrier.try_wait.shared.b64 %p1, [bar], %rd1;`)",
            "kernel `stuck`, block (0,0,0), thread (0,0,0)",
        ],
    );
}

/// Lane 0 of each warp produces and lanes 1..31 of the same warp consume, through a `full` (1 arrival) and
/// an `empty` (31) object per warp, the consumers' path taken first at the branch. Under independent thread
/// scheduling the spinning consumers do not keep lane 0 from running; the emulator, which runs a warp's paths
/// one at a time, must let the other path run when the active one spins on a failed wait (it reported a
/// deadlock before).
const LANE_PRODUCER: &str = r#"
.visible .entry lanes(.param .u64 out, .param .u32 iters)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<6>;
    .reg .pred %p<6>;
    .shared .align 8 .b64 full[2];
    .shared .align 8 .b64 empty[2];
    .shared .align 4 .b32 tile[64];
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [iters];
    mov.u32 %r2, %tid.x;
    shr.u32 %r3, %r2, 5;
    and.b32 %r4, %r2, 31;
    shl.b32 %r5, %r3, 3;
    mov.u32 %r6, full;
    add.u32 %r6, %r6, %r5;
    mov.u32 %r7, empty;
    add.u32 %r7, %r7, %r5;
    setp.ne.u32 %p1, %r4, 0;
    @%p1 bra INITED;
    mbarrier.init.shared.b64 [%r6], 1;
    mbarrier.init.shared.b64 [%r7], 31;
INITED:
    bar.sync 0;
    mov.u32 %r8, 0;
    mov.u32 %r9, 0;
    shl.b32 %r10, %r2, 2;
    mov.u32 %r11, tile;
    add.u32 %r11, %r11, %r10;
    @%p1 bra CONSUMER;
PRODUCER:
    setp.ge.u32 %p2, %r8, %r1;
    @%p2 bra DONE;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra FILL;
    sub.u32 %r12, %r8, 1;
    and.b32 %r12, %r12, 1;
WAIT_EMPTY:
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r7], %r12;
    @!%p4 bra WAIT_EMPTY;
FILL:
    mov.u32 %r13, 1;
FILL_WORD:
    mad.lo.u32 %r14, %r8, 100, %r13;
    mad.lo.u32 %r14, %r3, 7, %r14;
    shl.b32 %r15, %r13, 2;
    add.u32 %r15, %r11, %r15;
    st.shared.u32 [%r15], %r14;
    add.u32 %r13, %r13, 1;
    setp.lt.u32 %p5, %r13, 32;
    @%p5 bra FILL_WORD;
    add.u32 %r9, %r9, %r8;
    mbarrier.arrive.release.cta.shared::cta.b64 _, [%r6];
    add.u32 %r8, %r8, 1;
    bra PRODUCER;
CONSUMER:
    setp.ge.u32 %p2, %r8, %r1;
    @%p2 bra DONE;
    and.b32 %r12, %r8, 1;
WAIT_FULL:
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r6], %r12;
    @!%p4 bra WAIT_FULL;
    ld.shared.u32 %r14, [%r11];
    add.u32 %r9, %r9, %r14;
    mbarrier.arrive.shared::cta.b64 %rd2, [%r7];
    add.u32 %r8, %r8, 1;
    bra CONSUMER;
DONE:
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r9;
    ret;
}
"#;

#[test]
fn lanes_of_one_warp_produce_and_consume() {
    let iters = 5u32;
    let ptx = format!("{HEADER}{LANE_PRODUCER}");
    let results =
        run_all(&ptx, "lanes", 2, 64, &[Arg::Buf(vec![0; 4 * 64]), Arg::Scalar(iters.to_le_bytes().to_vec())]);
    // Tile k holds k * 100 + lane + 7 * warp in lane `lane` of warp `warp`; lane 0 sums the tile numbers.
    let expected: Vec<u32> = (0..64u32)
        .map(|t| {
            let (warp, lane) = (t / 32, t % 32);
            (0..iters).map(|k| if lane == 0 { k } else { k * 100 + lane + 7 * warp }).sum()
        })
        .collect();
    expect_words(&results, 0, &expected);
}

/// Lane 0 waits for the other lanes of its warp, which wait for lane 0 first: no path can go on, however
/// the warp's paths are scheduled. Both engines fail the launch with the two objects' states, located at
/// thread 0's wait.
#[test]
fn lanes_waiting_on_each_other_are_a_located_deadlock() {
    let ptx = format!(
        "{HEADER}.visible .entry mutual()\n{{\n    .reg .b32 %r<2>;\n    .reg .pred %p<3>;\n    \
         .shared .align 8 .b64 a;\n    .shared .align 8 .b64 b;\n    mov.u32 %r1, %tid.x;\n    \
         setp.ne.u32 %p1, %r1, 0;\n    @%p1 bra INITED;\n    mbarrier.init.shared.b64 [a], 1;\n    \
         mbarrier.init.shared.b64 [b], 31;\nINITED:\n    bar.sync 0;\n    @%p1 bra OTHERS;\nLANE0:\n    \
         mbarrier.try_wait.parity.shared::cta.b64 %p2, [b], 0;\n    @!%p2 bra LANE0;\n    \
         mbarrier.arrive.release.cta.shared::cta.b64 _, [a];\n    ret;\nOTHERS:\n    \
         mbarrier.try_wait.parity.shared::cta.b64 %p2, [a], 0;\n    @!%p2 bra OTHERS;\n    \
         mbarrier.arrive.release.cta.shared::cta.b64 _, [b];\n    ret;\n}}\n"
    );
    let results = run_all(&ptx, "mutual", 1, 32, &[]);
    expect_error(
        &results,
        &[
            "every live thread waits and none can arrive: 32 threads spin on the mbarrier at shared offset 0x0 \
             (phase parity 0, 1 of 1 arrivals pending, tx-count 0), the mbarrier at shared offset 0x8 (phase parity \
             0, 31 of 31 arrivals pending, tx-count 0); 0 threads wait at a barrier; 0 of the CTA's 32 threads exited",
            "PTX line 19 (`mbarrier.try_wait.parity.shared::cta.b64 %p2, [b], 0;`)",
            "kernel `mutual`, block (0,0,0), thread (0,0,0)",
        ],
    );
}

/// Undefined uses are errors: an arrive on an object never initialized, and a `.noComplete` arrive that
/// completes the phase.
#[test]
fn undefined_uses_are_errors() {
    let kernel = |body: &str| {
        format!(
            "{HEADER}.visible .entry k()\n{{\n    .reg .b64 %rd<2>;\n    .shared .align 8 .b64 bar;\n    {body}\n    \
             ret;\n}}\n"
        )
    };
    let uninit = run_all(&kernel("mbarrier.arrive.shared.b64 %rd1, [bar];"), "k", 1, 32, &[]);
    expect_error(&uninit, &["uninitialized or invalidated", "mbarrier.arrive.shared.b64 %rd1, [bar]"]);
    let completes = run_all(
        &kernel("mbarrier.init.shared.b64 [bar], 2;\n    mbarrier.arrive.noComplete.shared.b64 %rd1, [bar], 2;"),
        "k",
        1,
        1,
        &[],
    );
    expect_error(&completes, &["`.noComplete` arrive-on completes the current phase"]);
    let misaligned = run_all(&kernel("mbarrier.init.shared.b64 [bar+4], 2;"), "k", 1, 1, &[]);
    expect_error(&misaligned, &["misaligned"]);
}

/// A `cp.async` source address computed before a barrier is live across it (the JIT's plan once missed the
/// registers of a copy's source, `src-size` and `ignore-src`, and resumed the thread without them).
#[test]
fn cp_async_sources_live_across_a_barrier() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 in, .param .u64 out)\n{{\n    .reg .b32 %r<8>;\n    .reg .b64 %rd<8>;\n    \
         .shared .align 16 .b32 buf[64];\n    ld.param.u64 %rd1, [in];\n    ld.param.u64 %rd2, [out];\n    \
         mov.u32 %r1, %tid.x;\n    mul.wide.u32 %rd3, %r1, 4;\n    add.s64 %rd4, %rd1, %rd3;\n    \
         mov.u32 %r2, 4;\n    bar.sync 0;\n    shl.b32 %r3, %r1, 2;\n    mov.u32 %r4, buf;\n    add.u32 %r4, %r4, %r3;\n    \
         cp.async.ca.shared.global [%r4], [%rd4], 4, %r2;\n    cp.async.wait_all;\n    bar.sync 0;\n    \
         xor.b32 %r5, %r3, 4;\n    mov.u32 %r6, buf;\n    add.u32 %r6, %r6, %r5;\n    ld.shared.u32 %r7, [%r6];\n    \
         add.s64 %rd5, %rd2, %rd3;\n    st.global.u32 [%rd5], %r7;\n    ret;\n}}\n"
    );
    let input: Vec<u32> = (0..64).map(|i| 1000 + i).collect();
    let results = run_all(&ptx, "k", 1, 64, &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 256])]);
    let expected: Vec<u32> = (0..64).map(|t| input[t ^ 1]).collect();
    expect_words(&results, 1, &expected);
}

/// The kernels of `corpus/async/mbarrier.cu` as nvcc 13.5 compiles them (`corpus/async/build.sh`): libcu++'s
/// `cuda::barrier<thread_scope_block>`, `cuda::memcpy_async` with a barrier and a two-stage block-scope
/// `cuda::pipeline`; the sm_80 PTX spins on `test_wait` with a backoff, the sm_90 PTX on `try_wait`.
mod nvcc {
    use super::*;

    const SM80: &str = include_str!("../../../corpus/async/mbarrier.sm_80.ptx");
    const SM90: &str = include_str!("../../../corpus/async/mbarrier.sm_90.ptx");
    const N: u32 = 96;
    const GRID: u32 = 3;

    fn scalar(v: u32) -> Arg {
        Arg::Scalar(v.to_le_bytes().to_vec())
    }

    /// Two rounds of neighbour exchange through `arrive_and_wait`.
    fn arrive_and_wait(ptx: &str) {
        let input: Vec<u32> = (0..N * GRID).map(|i| i * 7 + 3).collect();
        let results = run_all(
            ptx,
            "barrier_arrive_and_wait",
            GRID,
            N,
            &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 4 * (N * GRID) as usize])],
        );
        let expected: Vec<u32> = (0..N * GRID)
            .map(|g| {
                let (b, t) = (g / N, g % N);
                // buf = in * 2; v = buf[t + 1]; buf = v + 1; out = buf[t + 3], all modulo the block.
                input[(b * N + (t + 4) % N) as usize] * 2 + 1
            })
            .collect();
        expect_words(&results, 1, &expected);
    }

    /// `arrive` and `wait(token)` with work between, over several rounds (the parity alternates).
    fn tokens(ptx: &str) {
        let rounds = 5;
        let input: Vec<u32> = (0..N * GRID).map(|i| i % 13 + 1).collect();
        let results = run_all(
            ptx,
            "barrier_tokens",
            GRID,
            N,
            &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 4 * (N * GRID) as usize]), scalar(rounds)],
        );
        let mut expected = Vec::new();
        for b in 0..GRID {
            let mut acc: Vec<u32> = (0..N).map(|t| input[(b * N + t) as usize]).collect();
            for r in 0..rounds {
                let shared = acc.clone();
                acc = (0..N)
                    .map(|t| {
                        acc[t as usize].wrapping_mul(3).wrapping_add(r).wrapping_add(shared[((t + r + 1) % N) as usize])
                    })
                    .collect();
            }
            expected.extend(acc);
        }
        expect_words(&results, 1, &expected);
    }

    /// Tiles copied into shared memory by `cuda::memcpy_async` and consumed after `arrive_and_wait`.
    fn memcpy_async(ptx: &str) {
        let tiles = 4;
        let input: Vec<f32> = (0..N * GRID * tiles).map(|i| (i % 101) as f32).collect();
        let bits: Vec<u32> = input.iter().map(|f| f.to_bits()).collect();
        let results = run_all(
            ptx,
            "memcpy_async_barrier",
            GRID,
            N,
            &[Arg::Buf(bytes(&bits)), Arg::Buf(vec![0; 4 * (N * GRID) as usize]), scalar(tiles)],
        );
        let expected: Vec<u32> = (0..N * GRID)
            .map(|g| {
                let (b, t) = (g / N, g % N);
                let sum: f32 = (0..tiles).map(|k| input[((b * tiles + k) * N + (t * 7) % N) as usize]).sum();
                sum.to_bits()
            })
            .collect();
        expect_words(&results, 1, &expected);
    }

    /// A two-stage pipeline: every thread copies part of each tile, then consumes one word of it.
    fn pipeline(ptx: &str) {
        let tiles = 6;
        let input: Vec<u32> = (0..N * GRID * tiles).map(|i| i * 5 + 1).collect();
        let results = run_all(
            ptx,
            "pipeline_block",
            GRID,
            N,
            &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 4 * (N * GRID) as usize]), scalar(tiles)],
        );
        let expected: Vec<u32> = (0..N * GRID)
            .map(|g| {
                let (b, t) = (g / N, g % N);
                (0..tiles).map(|k| input[((b * tiles + k) * N + (t + k) % N) as usize]).sum()
            })
            .collect();
        expect_words(&results, 1, &expected);
    }

    /// `corpus/async/intra_warp.cu`: lane 0 of each warp produces tiles for lanes 1..31 of its warp
    /// (`cuda::ptx` mbarriers), and odd threads wait at a `cuda::barrier` for the even threads of their warp,
    /// which arrive on another path.
    mod intra_warp {
        use super::*;

        const SM80: &str = include_str!("../../../corpus/async/intra_warp.sm_80.ptx");
        const SM90: &str = include_str!("../../../corpus/async/intra_warp.sm_90.ptx");

        fn lane_producer(ptx: &str) {
            let tiles = 4;
            let input: Vec<u32> = (0..N * GRID * tiles).map(|i| i * 3 + 1).collect();
            let results = run_all(
                ptx,
                "lane_producer",
                GRID,
                N,
                &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 4 * (N * GRID) as usize]), scalar(tiles)],
            );
            let expected: Vec<u32> = (0..N * GRID)
                .map(|g| {
                    let (b, t) = (g / N, g % N);
                    // Lane 0 sums the tile numbers; the others their word of each tile, scaled by k + 1.
                    (0..tiles)
                        .map(|k| if t % 32 == 0 { k } else { input[((b * tiles + k) * N + t) as usize] * (k + 1) })
                        .sum()
                })
                .collect();
            expect_words(&results, 1, &expected);
        }

        fn odd_even(ptx: &str) {
            let input: Vec<u32> = (0..N * GRID).map(|i| i * 5 + 2).collect();
            let results = run_all(
                ptx,
                "odd_even_barrier",
                GRID,
                N,
                &[Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 4 * (N * GRID) as usize])],
            );
            // Even thread e stores x * 3 + i for i in 0..e % 7, from x = its input.
            let stored =
                |b: u32, e: u32| (0..e % 7).fold(input[(b * N + e) as usize], |x, i| x.wrapping_mul(3).wrapping_add(i));
            let expected: Vec<u32> = (0..N * GRID)
                .map(|g| {
                    let (b, t) = (g / N, g % N);
                    if t % 2 == 1 {
                        stored(b, t - 1).wrapping_add(1)
                    } else {
                        stored(b, (t + 2) % N).wrapping_mul(2)
                    }
                })
                .collect();
            expect_words(&results, 1, &expected);
        }

        #[test]
        fn lane_zero_produces_for_its_warp() {
            lane_producer(SM80);
            lane_producer(SM90);
        }

        #[test]
        fn odd_threads_wait_for_even_ones() {
            odd_even(SM80);
            odd_even(SM90);
        }
    }

    #[test]
    fn barrier_arrive_and_wait() {
        arrive_and_wait(SM80);
        arrive_and_wait(SM90);
    }

    #[test]
    fn barrier_tokens() {
        tokens(SM80);
        tokens(SM90);
    }

    /// On sm_90 the copy is one `cp.async.bulk` completing its bytes on the barrier, issued before the
    /// `expect_tx` of the same bytes (the tx-count goes below zero for a moment).
    #[test]
    fn memcpy_async_with_a_barrier() {
        memcpy_async(SM80);
        memcpy_async(SM90);
    }

    #[test]
    fn block_scope_pipeline() {
        pipeline(SM80);
        pipeline(SM90);
    }
}

/// Bulk copies: thread 0 of each CTA copies 256 bytes of global memory into shared memory with
/// `cp.async.bulk ... mbarrier::complete_tx::bytes` and arrives with `.expect_tx` of them; after the wait,
/// every thread doubles its word in shared memory, the first warp moves the first half to the second with
/// `cp.async.bulk.shared::cluster.shared::cta` (a second object), then thread 0 adds the buffer into global
/// memory with `cp.reduce.async.bulk .add.u32`, takes the minimum with another buffer (`.min.s32`) and copies
/// it out with `cp.async.bulk.global.shared::cta.bulk_group` (committed and waited on).
const BULK: &str = r#"
.visible .entry bulk(.param .u64 in, .param .u64 acc, .param .u64 mins, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .pred %p<4>;
    .shared .align 8 .b64 bars[2];
    .shared .align 16 .b32 buf[64];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [acc];
    ld.param.u64 %rd3, [mins];
    ld.param.u64 %rd4, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd5, %r2, 256;
    add.s64 %rd6, %rd1, %rd5;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    mbarrier.init.shared.b64 [bars], 64;
    mbarrier.init.shared.b64 [bars+8], 1;
INITED:
    bar.sync 0;
    @%p1 bra ARRIVE;
    cp.async.bulk.prefetch.L2.global [%rd6], 256;
    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [buf], [%rd6], 256, [bars];
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [bars], 256;
    bra WAIT;
ARRIVE:
    mbarrier.arrive.shared::cta.b64 %rd7, [bars];
WAIT:
    mbarrier.try_wait.shared::cta.b64 %p2, [bars], %rd7;
    @!%p2 bra WAIT;
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, buf;
    add.u32 %r4, %r4, %r3;
    ld.shared.u32 %r5, [%r4];
    shl.b32 %r5, %r5, 1;
    st.shared.u32 [%r4], %r5;
    bar.sync 0;
    @%p1 bra DONE;
    mov.u32 %r6, buf;
    add.u32 %r7, %r6, 128;
    mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bars+8], 128;
    cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r7], [%r6], 128, [bars+8];
    mbarrier.arrive.shared::cta.b64 %rd8, [bars+8];
WAIT2:
    mbarrier.test_wait.shared::cta.b64 %p2, [bars+8], %rd8;
    @!%p2 bra WAIT2;
    add.s64 %rd9, %rd2, %rd5;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd9], [buf], 256;
    add.s64 %rd10, %rd3, %rd5;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%rd10], [buf], 256;
    add.s64 %rd11, %rd4, %rd5;
    cp.async.bulk.global.shared::cta.bulk_group [%rd11], [buf], 256;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
DONE:
    ret;
}
"#;

#[test]
fn bulk_copies_and_reductions() {
    let ptx = format!("{HEADER}{BULK}");
    let ctas = 2u32;
    let input: Vec<u32> = (0..64 * ctas).map(|i| i * 3 + 1).collect();
    let acc: Vec<u32> = (0..64 * ctas).map(|i| 1000 + i).collect();
    let mins: Vec<u32> = (0..64 * ctas).map(|i| if i % 2 == 0 { 5 } else { (-7i32) as u32 }).collect();
    let results = run_all(
        &ptx,
        "bulk",
        ctas,
        64,
        &[
            Arg::Buf(bytes(&input)),
            Arg::Buf(bytes(&acc)),
            Arg::Buf(bytes(&mins)),
            Arg::Buf(vec![0; 256 * ctas as usize]),
        ],
    );
    // Word w of a CTA's buffer: twice the input, the second half a copy of the first half.
    let buf = |c: u32, w: u32| 2 * input[(c * 64 + w % 32) as usize];
    let all = |f: &dyn Fn(u32, u32) -> u32| -> Vec<u32> { (0..64 * ctas).map(|i| f(i / 64, i % 64)).collect() };
    expect_words(&results, 1, &all(&|c, w| acc[(c * 64 + w) as usize] + buf(c, w)));
    expect_words(&results, 2, &all(&|c, w| (mins[(c * 64 + w) as usize] as i32).min(buf(c, w) as i32) as u32));
    expect_words(&results, 3, &all(&buf));
}
