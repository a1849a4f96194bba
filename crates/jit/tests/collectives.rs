//! Warp collectives after divergence: a `.sync` collective waits for every lane its member mask names,
//! even when some of them are still finishing a branch (cooperative groups' tiles after a
//! `coalesced_threads()` branch, as nvcc compiles them).

mod common;

use common::{launch, Arg};
use device::Dim3;

/// Lanes whose value is a multiple of 3 take a branch with an `activemask` (a collective only they
/// reach); then every lane sums its 8-lane tile with `shfl.sync.down` under the tile's member mask, and
/// votes under it. Each output word: the tile sum, the vote's ballot, and the branch's active count.
const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 sums, .param .u64 votes, .param .u64 active)
{
    .reg .pred %p<8>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [sums];
    ld.param.u64 %rd3, [votes];
    ld.param.u64 %rd4, [active];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.s32 %r2, [%rd6];
    mov.u32 %r3, -1;
    rem.s32 %r4, %r2, 3;
    setp.ne.s32 %p1, %r4, 0;
    @%p1 bra JOIN;
    activemask.b32 %r5;
    popc.b32 %r3, %r5;
JOIN:
    add.s64 %rd7, %rd4, %rd5;
    st.global.u32 [%rd7], %r3;
    mov.u32 %r6, %laneid;
    and.b32 %r7, %r6, -8;
    mov.u32 %r8, 255;
    shl.b32 %r9, %r8, %r7;
    shfl.sync.down.b32 %r10|%p2, %r2, 4, 6175, %r9;
    add.s32 %r11, %r10, %r2;
    shfl.sync.down.b32 %r12|%p3, %r11, 2, 6175, %r9;
    add.s32 %r13, %r12, %r11;
    shfl.sync.down.b32 %r14|%p4, %r13, 1, 6175, %r9;
    add.s32 %r15, %r14, %r13;
    add.s64 %rd8, %rd2, %rd5;
    st.global.u32 [%rd8], %r15;
    setp.gt.s32 %p5, %r2, 0;
    vote.sync.ballot.b32 %r16, %p5, %r9;
    add.s64 %rd9, %rd3, %rd5;
    st.global.u32 [%rd9], %r16;
    ret;
}
"#;

#[test]
fn sync_collectives_wait_for_lanes_still_in_a_branch() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let values: Vec<i32> = (0..128).map(|i: i32| (i * 37 + 11) % 101 - 50).collect();
    let args = || {
        vec![
            Arg::Buf(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
            Arg::Buf(vec![0; 512]),
            Arg::Buf(vec![0; 512]),
            Arg::Buf(vec![0; 512]),
        ]
    };
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(128, 1, 1));
    let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args()).unwrap();
    let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
    let (native, _) = launch(&mut jit, &module, "k", grid, block, 0, &args()).unwrap();
    let words = |b: &[u8]| b.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
    // The tile sums by construction: lane 8k of each tile holds the sum of its tile.
    let sums = words(&emu[1]);
    for (t, tile) in values.chunks(8).enumerate() {
        assert_eq!(sums[8 * t], tile.iter().sum::<i32>(), "tile {t} on the emulator");
    }
    assert_eq!(words(&native[1]), sums, "tile sums: JIT against the emulator");
    assert_eq!(words(&native[2]), words(&emu[2]), "tile ballots");
    assert_eq!(words(&native[3]), words(&emu[3]), "active counts in the branch");
}

/// `shfl.sync` takes its lane or offset from b[4:0] (PTX ISA, shfl.sync: `bval[4:0] = b[4:0]`): an offset of
/// 1000 + k in a register behaves as k, in every mode, on both engines. Output word 4 * lane + m holds mode
/// m's result (up, down, bfly, idx) for a value of 100 + lane; 1000 = 0b1111101000, so b[4:0] = 8 + k.
#[test]
fn shfl_uses_the_low_five_bits_of_its_lane_operand() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 k)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [k];
    mov.u32 %r2, %laneid;
    add.s32 %r3, %r2, 100;
    add.s32 %r4, %r1, 1000;
    shfl.sync.up.b32 %r5, %r3, %r4, 0, -1;
    shfl.sync.down.b32 %r6, %r3, %r4, 31, -1;
    shfl.sync.bfly.b32 %r7, %r3, %r4, 31, -1;
    shfl.sync.idx.b32 %r8, %r3, %r4, 31, -1;
    mul.wide.u32 %rd2, %r2, 16;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r8};
    ret;
}
"#;
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}"));
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(32, 1, 1));
    for k in [0u32, 3] {
        let args = || vec![Arg::Buf(vec![0; 512]), Arg::Scalar(k.to_le_bytes().to_vec())];
        let off = (1000 + k) & 31;
        let want: Vec<u32> = (0..32u32)
            .flat_map(|l| {
                let up = if l >= off { l - off } else { l };
                let down = if l + off <= 31 { l + off } else { l };
                [up, down, l ^ off, off].map(|j| 100 + j)
            })
            .collect();
        let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args()).unwrap();
        let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
        let (native, _) = launch(&mut jit, &module, "k", grid, block, 0, &args()).unwrap();
        let words = |b: &[u8]| b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
        assert_eq!(words(&emu[0]), want, "emulator, k = {k}");
        assert_eq!(words(&native[0]), want, "JIT, k = {k}");
    }
}
