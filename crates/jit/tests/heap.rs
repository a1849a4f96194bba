//! `malloc` and `free` in kernels (the device heap), on the JIT against the emulator: every thread gets
//! its own block, writes and reads it back, blocks freed are reused, and a full heap returns NULL.

mod common;

use common::{launch, Arg};
use device::Dim3;

/// Each thread mallocs `n` ints (`n` from its index), fills them with `tid * 1000 + k`, sums them into
/// `out[tid]`, records whether it got NULL in `nulls[tid]`, and frees the block.
const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);
.extern .func free(.param .b64 free_param_0);
.visible .entry k(.param .u64 out, .param .u64 nulls, .param .u32 big)
{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [nulls];
    ld.param.u32 %r9, [big];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 7;
    add.s32 %r3, %r2, 1;
    mul.lo.s32 %r3, %r3, %r9;
    mul.wide.u32 %rd3, %r3, 4;
    {
        .param .b64 p0;
        st.param.b64 [p0], %rd3;
        .param .b64 r0;
        call.uni (r0), malloc, (p0);
        ld.param.b64 %rd4, [r0];
    }
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd2, %rd5;
    setp.eq.s64 %p1, %rd4, 0;
    selp.u32 %r4, 1, 0, %p1;
    st.global.u32 [%rd6], %r4;
    @%p1 bra DONE;
    mov.u32 %r5, 0;
    mov.u32 %r6, 0;
FILL:
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    mad.lo.s32 %r7, %r1, 1000, %r5;
    st.u32 [%rd8], %r7;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r3;
    @%p2 bra FILL;
    mov.u32 %r5, 0;
SUM:
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.u32 %r8, [%rd8];
    add.s32 %r6, %r6, %r8;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r3;
    @%p2 bra SUM;
    add.s64 %rd9, %rd1, %rd5;
    st.global.u32 [%rd9], %r6;
    {
        .param .b64 q0;
        st.param.b64 [q0], %rd4;
        call.uni free, (q0);
    }
DONE:
    ret;
}
"#;

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn threads_malloc_use_and_free_blocks() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let threads = 64u32;
    for (big, expect_nulls) in [(1u32, false), (4096, true)] {
        let args = || {
            vec![
                Arg::Buf(vec![0; 4 * threads as usize]),
                Arg::Buf(vec![0; 4 * threads as usize]),
                Arg::Scalar(big.to_le_bytes().to_vec()),
            ]
        };
        let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(threads, 1, 1));
        let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args()).unwrap();
        let mut jit = jit::Jit::new(jit::Options { threads: 2, ..jit::Options::default() });
        let (native, _) = launch(&mut jit, &module, "k", grid, block, 0, &args()).unwrap();
        let (sums, nulls) = (words(&emu[0]), words(&emu[1]));
        for t in 0..threads {
            let n = (t % 8 + 1) * big;
            if nulls[t as usize] == 0 {
                let want: u32 = (0..n).map(|k| t * 1000 + k).fold(0u32, u32::wrapping_add);
                assert_eq!(sums[t as usize], want, "thread {t}, {n} ints");
            }
        }
        // 64 KiB of heap: 64 threads of at most 8 ints always fit; 4096-int blocks (16 KiB and up) do not.
        assert_eq!(nulls.contains(&1), expect_nulls, "NULL from a full heap: {nulls:?}");
        if !expect_nulls {
            assert_eq!(words(&native[0]), sums, "sums: JIT against the emulator");
            assert_eq!(words(&native[1]), nulls);
        }
    }
}
