//! The thread's dynamic stack (PTX ISA, "Stack Manipulation Instructions": `stacksave`, `stackrestore`,
//! `alloca`) on both engines. The model, from the ISA text: `alloca` hands out `size` bytes of local memory at
//! the stack pointer rounded up to `max(immAlign, 8)` and moves the pointer past them; `stacksave` reads the
//! pointer, `stackrestore` sets it back, a function's return frees what it allocated; the pointers are local
//! addresses usable by `ld.local`/`st.local` and, after `cvta.local`, by generic accesses. lockstep gives each
//! thread 64 KiB (`program::stack::ALLOCA_BYTES`); an allocation past them is an error naming the line.

mod common;

use common::{engines, launch, refusal, words, Arg};
use device::Dim3;

const AREA: u64 = 64 << 10;

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(8)) * a.max(8)
}

/// Thread t: saves the stack pointer s0, allocates 3 bytes (default alignment), t bytes aligned to 64 and 8
/// bytes aligned to 256; stores through `st.local` and generic pointers and reads back the other way; writes
/// each pointer's offset from s0 and its remainder by its alignment. Then restores s0 and allocates 16
/// bytes again (they must come back at s0), and runs `reps` rounds of a 1 KiB allocation freed by
/// `stackrestore` each round (64 KiB would run out after 64 rounds without the frees). Last, allocates
/// `extra` bytes without freeing them (`extra` past the area is the error case).
const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 reps, .param .u64 extra)
{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<40>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r2, [reps];
    ld.param.u64 %rd30, [extra];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd3, %r1;
    stacksave.u64 %rd4;
    alloca.u64 %rd5, 3;
    alloca.u64 %rd6, %rd3, 64;
    alloca.u64 %rd7, 8, 256;
    mul.lo.u32 %r3, %r1, 7;
    st.local.u8 [%rd5+2], %r3;
    cvta.local.u64 %rd8, %rd6;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 st.u8 [%rd8], %r3;
    cvta.local.u64 %rd9, %rd7;
    mul.wide.u32 %rd10, %r1, 1000003;
    st.u64 [%rd9], %rd10;
    ld.local.u8 %r4, [%rd5+2];
    @!%p1 ld.local.u8 %r5, [%rd6];
    @%p1 mov.u32 %r5, 0;
    ld.local.u64 %rd11, [%rd7];
    cvta.to.local.u64 %rd12, %rd9;
    sub.s64 %rd13, %rd5, %rd4;
    sub.s64 %rd14, %rd6, %rd4;
    sub.s64 %rd15, %rd7, %rd4;
    and.b64 %rd16, %rd6, 63;
    and.b64 %rd17, %rd7, 255;
    sub.s64 %rd18, %rd12, %rd7;
    stackrestore.u64 %rd4;
    alloca.u64 %rd19, 16, 16;
    sub.s64 %rd20, %rd19, %rd4;
    stacksave.u64 %rd21;
    sub.s64 %rd22, %rd21, %rd4;
    mov.u32 %r6, 0;
    mov.u64 %rd23, 0;
LOOP:
    setp.ge.u32 %p2, %r6, %r2;
    @%p2 bra DONE;
    stacksave.u64 %rd24;
    alloca.u64 %rd25, 1024, 32;
    st.local.u32 [%rd25+1020], %r6;
    ld.local.u32 %r7, [%rd25+1020];
    cvt.u64.u32 %rd26, %r7;
    add.s64 %rd23, %rd23, %rd26;
    stackrestore.u64 %rd24;
    add.u32 %r6, %r6, 1;
    bra LOOP;
DONE:
    alloca.u64 %rd31, %rd30;
    mul.wide.u32 %rd2, %r1, 96;
    add.s64 %rd2, %rd1, %rd2;
    st.global.v2.u64 [%rd2], {%rd13, %rd14};
    st.global.v2.u64 [%rd2+16], {%rd15, %rd16};
    st.global.v2.u64 [%rd2+32], {%rd17, %rd18};
    st.global.v2.u64 [%rd2+48], {%rd20, %rd22};
    cvt.u64.u32 %rd27, %r4;
    cvt.u64.u32 %rd28, %r5;
    st.global.v2.u64 [%rd2+64], {%rd27, %rd28};
    st.global.v2.u64 [%rd2+80], {%rd11, %rd23};
    ret;
}
"#;

fn run(engine: &mut dyn device::Backend, threads: u32, reps: u32, extra: u64) -> Result<Vec<u64>, String> {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let args = [
        Arg::Buf(vec![0; 96 * threads as usize]),
        Arg::Scalar(reps.to_le_bytes().to_vec()),
        Arg::Scalar(extra.to_le_bytes().to_vec()),
    ];
    let (out, _) = launch(engine, &module, "k", Dim3::new(2, 1, 1), Dim3::new(threads, 1, 1), 0, &args)?;
    Ok(out[0].chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect())
}

#[test]
fn alloca_aligns_restore_frees_and_pointers_work_in_every_space() {
    let (threads, reps) = (40u32, 100u32);
    for (name, mut engine) in engines() {
        // What is left after the loop: the area minus 16 bytes (the allocation after the restore).
        let got = run(engine.as_mut(), threads, reps, AREA - 16).unwrap_or_else(|e| panic!("{name}: {e}"));
        for t in 0..threads as u64 {
            let a1 = align_up(0, 8);
            let a2 = align_up(a1 + 3, 64);
            let a3 = align_up(a2 + t, 256);
            let b = (t * 7) & 0xff;
            let want =
                [a1, a2, a3, 0, 0, 0, 0, 16, b, if t == 0 { 0 } else { b }, t * 1_000_003, (0..reps as u64).sum()];
            let at = (12 * t) as usize;
            assert_eq!(got[at..at + 12], want, "thread {t} on the {name}");
        }
    }
}

#[test]
fn an_allocation_past_the_area_is_a_located_error() {
    for (name, mut engine) in engines() {
        let e = run(engine.as_mut(), 8, 3, AREA - 15).expect_err("one byte too many");
        assert!(
            e.contains("`alloca` of 65521 bytes (aligned to 8) does not fit in the thread's dynamic stack: 16 of its 65536 bytes are in use")
                && e.contains("line 58"),
            "{name}: {e}"
        );
        let e = run(engine.as_mut(), 8, 3, u64::MAX - 4).expect_err("a size that wraps around");
        assert!(e.contains("does not fit in the thread's dynamic stack") && e.contains("line 58"), "{name}: {e}");
    }
}

/// `stackrestore` to something `stacksave` did not give, here the pointer plus the area's size plus one.
#[test]
fn restoring_a_foreign_pointer_is_an_error() {
    let ptx = KERNEL.replace("stackrestore.u64 %rd4;", "add.s64 %rd4, %rd4, 65537;\n    stackrestore.u64 %rd4;");
    let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}"));
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(vec![0; 96 * 4]), Arg::Scalar(vec![0; 4]), Arg::Scalar(vec![0; 8])];
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(4, 1, 1), 0, &args)
            .expect_err("foreign pointer");
        assert!(e.contains("`stackrestore` to") && e.contains("outside the thread's dynamic stack"), "{name}: {e}");
    }
}

fn fill_sum(n: i32, seed: i32) -> i32 {
    (0..n).fold(0i32, |s, i| s.wrapping_add(seed.wrapping_mul(3).wrapping_add(i).wrapping_mul(i + 1)))
}

fn rounds(rounds: i32, m: i32) -> i32 {
    let mut total = 0i32;
    for r in 0..rounds.min(8) {
        for j in 0..m + r {
            let v = r + j;
            total = total.wrapping_add(if j & 1 == 1 { -v } else { v });
        }
    }
    total
}

/// nvcc's `alloca()` in device functions (`fixtures/alloca.cu`): 3000 ints (12 KB) per call, called 8 times
/// by every thread, fits only because each return frees its call's allocation; four allocations live at
/// once in `rounds`. 20000 ints (80 KB) in one thread is an error at the `alloca` line.
#[test]
fn nvcc_alloca() {
    let module = ir::compile(include_str!("fixtures/alloca.sm_80.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    let threads = 64u32;
    let ns: Vec<i32> = (0..2 * threads as i32).map(|t| [0, 1, 5, 17, 3000][t as usize % 5] + t % 3).collect();
    let reps = 8i32;
    for (name, mut engine) in engines() {
        let input: Vec<u8> = ns.iter().flat_map(|n| n.to_le_bytes()).collect();
        let args =
            [Arg::Buf(input), Arg::Buf(vec![0; 8 * 2 * threads as usize]), Arg::Scalar(reps.to_le_bytes().to_vec())];
        let (out, _) = launch(engine.as_mut(), &module, "k", Dim3::new(2, 1, 1), Dim3::new(threads, 1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = words(&out[1]);
        for (t, &n) in ns.iter().enumerate() {
            let s = (0..reps).fold(0i32, |s, r| s.wrapping_add(fill_sum(n, t as i32 + r)));
            assert_eq!([got[2 * t] as i32, got[2 * t + 1] as i32], [s, rounds(4, n + 1)], "thread {t} on the {name}");
        }
        let mut big = ns.clone();
        big[70] = 20000;
        let input: Vec<u8> = big.iter().flat_map(|n| n.to_le_bytes()).collect();
        let args =
            [Arg::Buf(input), Arg::Buf(vec![0; 8 * 2 * threads as usize]), Arg::Scalar(reps.to_le_bytes().to_vec())];
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(2, 1, 1), Dim3::new(threads, 1, 1), 0, &args)
            .expect_err("80 KB");
        assert!(e.contains("`alloca` of 80000 bytes (aligned to 16)") && e.contains("line 27"), "{name}: {e}");
    }
}

#[test]
fn malformed_and_32_bit_forms_are_refused() {
    for (body, why) in [
        ("alloca.u32 %r1, %r2;", "`alloca.u32` (a 32-bit local address) is not supported"),
        ("stacksave.u32 %r1;", "`stacksave.u32` (a 32-bit local address) is not supported"),
        ("stackrestore.u32 %r1;", "`stackrestore.u32` (a 32-bit local address) is not supported"),
        ("alloca.u64 %rd1, %rd2, 24;", "immAlign an immediate power of 2"),
        ("alloca.u64 %rd1, %rd2, 16777216;", "immAlign an immediate power of 2"),
        ("alloca.u64 %rd1, %r2, 16;", "takes 64-bit registers"),
        ("alloca.u64 %rd1, %rd2, %rd3;", "takes 64-bit registers"),
        ("stackrestore.u64 16;", "takes 64-bit registers"),
    ] {
        let e = refusal("sm_80", body);
        assert!(e.contains("PTX line 11") && e.contains(why), "{body}: {e}");
    }
}

/// A device function with a barrier (which the JIT inlines into the kernel) allocating 16000 bytes, called
/// 40 times (every other call skipped by a guard): it fits only because each return frees the allocation.
/// Each thread stores the sum of what its calls read back and how far the stack pointer moved over the loop
/// (0).
const INLINED: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 ret) f(.param .b32 n)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u32 %r1, [n];
    mul.wide.u32 %rd1, %r1, 4;
    alloca.u64 %rd2, %rd1, 16;
    mov.u32 %r2, %tid.x;
    st.local.u32 [%rd2+15996], %r2;
    bar.sync 0;
    ld.local.u32 %r4, [%rd2+15996];
    add.u32 %r5, %r4, %r1;
    st.param.b32 [ret], %r5;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 0;
    mov.u32 %r2, 0;
    stacksave.u64 %rd2;
LOOP:
    and.b32 %r3, %r1, 1;
    setp.eq.u32 %p1, %r3, 0;
    mov.u32 %r4, 0;
    {
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], 4000;
    @%p1 call.uni (r), f, (a);
    @%p1 ld.param.b32 %r4, [r];
    }
    add.u32 %r2, %r2, %r4;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p2, %r1, 40;
    @%p2 bra LOOP;
    stacksave.u64 %rd3;
    sub.s64 %rd4, %rd3, %rd2;
    mov.u32 %r5, %tid.x;
    mul.wide.u32 %rd5, %r5, 16;
    add.s64 %rd6, %rd1, %rd5;
    cvt.u64.u32 %rd7, %r2;
    st.global.v2.u64 [%rd6], {%rd7, %rd4};
    ret;
}
"#;

#[test]
fn an_inlined_function_frees_its_allocations() {
    let module = ir::compile(INLINED).unwrap_or_else(|d| panic!("{d:?}"));
    let threads = 48u32;
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(vec![0; 16 * threads as usize])];
        let (out, _) = launch(engine.as_mut(), &module, "k", Dim3::new(2, 1, 1), Dim3::new(threads, 1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<u64> = out[0].chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        for t in 0..threads as u64 {
            assert_eq!(got[2 * t as usize..2 * t as usize + 2], [20 * (t + 4000), 0], "thread {t} on the {name}");
        }
    }
}

/// The emulator checks every access, the JIT in checked mode: what is allocated can be read, the word after it
/// (past the stack pointer) cannot.
#[test]
fn accesses_past_the_allocation_are_caught_where_accesses_are_checked() {
    let checked: Vec<(&str, Box<dyn device::Backend>)> = vec![
        ("emulator", Box::new(emu::Emulator::new())),
        ("checked JIT", Box::new(jit::Jit::new(jit::Options { threads: 1, check: true, ..jit::Options::default() }))),
    ];
    let past = KERNEL.replace("ld.local.u64 %rd11, [%rd7];", "ld.local.u64 %rd11, [%rd7+8];");
    for (name, mut engine) in checked {
        let got = run(engine.as_mut(), 8, 3, 16).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got[12 + 10], 1_000_003, "{name}");
        let module = ir::compile(&past).unwrap_or_else(|d| panic!("{d:?}"));
        let args = [Arg::Buf(vec![0; 96 * 8]), Arg::Scalar(vec![0; 4]), Arg::Scalar(vec![0; 8])];
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(8, 1, 1), 0, &args)
            .expect_err("a byte past");
        assert!(e.contains("out-of-bounds local access of 8 bytes") && e.contains("line 30"), "{name}: {e}");
    }
}
