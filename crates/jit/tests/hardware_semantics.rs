//! Instructions whose hardware result the PTX ISA's prose leaves easy to get wrong, checked on both engines
//! against values computed here from the hardware's definition (issue 21's silent wrong results).

mod common;

use common::{launch, Arg};
use device::Dim3;

/// Runs entry `k` of `kernel` in one block of `threads` threads on the emulator and on the JIT; returns the
/// words of buffer argument `out` from each.
fn words_on_both(kernel: &str, threads: u32, args: &dyn Fn() -> Vec<Arg>, out: usize) -> (Vec<u32>, Vec<u32>) {
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}"));
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(threads, 1, 1));
    let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args()).unwrap();
    let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
    let (native, _) = launch(&mut jit, &module, "k", grid, block, 0, &args()).unwrap();
    let words = |b: &[u8]| b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<u32>>();
    (words(&emu[out]), words(&native[out]))
}

/// The little-endian bytes of 32-bit words (a kernel's input buffer).
fn le_bytes(words: impl IntoIterator<Item = u32>) -> Vec<u8> {
    words.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// The carry flag as NVIDIA GPUs compute it: after `sub.cc` it is the adder's carry out of `a + !b + 1`, NOT
/// borrow, and `subc` subtracts `!CF` (a multiword subtraction, nvcc's `__int128` code, comes out right either
/// way; mixed chains do not). Per thread, from inputs a, b: [sub.cc then addc 0 + 0, add.cc then subc 0 - 0,
/// the low and high words of the 64-bit a:b - b:a by sub.cc/subc], on both engines.
#[test]
fn carry_after_subtraction_is_not_borrow() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v2.u32 {%r2, %r3}, [%rd4];
    sub.cc.u32 %r4, %r2, %r3;
    addc.u32 %r5, 0, 0;
    add.cc.u32 %r6, %r2, %r3;
    subc.u32 %r7, 0, 0;
    sub.cc.u32 %r8, %r2, %r3;
    subc.u32 %r9, %r3, %r2;
    mul.wide.u32 %rd5, %r1, 16;
    add.s64 %rd6, %rd2, %rd5;
    st.global.v4.u32 [%rd6], {%r5, %r7, %r8, %r9};
    ret;
}
"#;
    let pairs: Vec<(u32, u32)> =
        vec![(5, 3), (3, 5), (7, 7), (0, 1), (u32::MAX, 1), (1, u32::MAX), (0x8000_0000, 0x7fff_ffff), (0, 0)];
    let mut input = Vec::new();
    for &(a, b) in &pairs {
        input.extend(a.to_le_bytes());
        input.extend(b.to_le_bytes());
    }
    let n = pairs.len() as u32;
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 16 * pairs.len()])];
    let want: Vec<u32> = pairs
        .iter()
        .flat_map(|&(a, b)| {
            let no_borrow = a >= b;
            let carry = a.checked_add(b).is_none();
            // (b:a as a 64-bit word) subtracted from (a:b): high word b - a - borrow, low word a - b.
            let whole = ((u64::from(b) << 32) | u64::from(a)).wrapping_sub((u64::from(a) << 32) | u64::from(b));
            [u32::from(no_borrow), if carry { 0 } else { u32::MAX }, whole as u32, (whole >> 32) as u32]
        })
        .collect();
    let (emu, native) = words_on_both(kernel, n, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// Packed half comparisons compare each half on its own (PTX ISA, `set` and `setp` with `.f16x2`): `set` writes
/// 0xffff or 0 per half for a `.u32` destination and 1.0 or 0.0 as f16 per half for an `.f16x2` one; `setp`
/// sets p from the low halves and q from the high ones. Output per thread: [set.gtu.u32.f16x2,
/// set.gt.f16x2.f16x2, setp.lt.f16x2 as (p, q) in bits 0 and 1].
#[test]
fn packed_half_comparisons_are_per_half() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v2.u32 {%r2, %r3}, [%rd4];
    set.gtu.u32.f16x2 %r4, %r2, %r3;
    set.gt.f16x2.f16x2 %r5, %r2, %r3;
    setp.lt.f16x2 %p1|%p2, %r2, %r3;
    selp.u32 %r6, 1, 0, %p1;
    selp.u32 %r7, 2, 0, %p2;
    or.b32 %r8, %r6, %r7;
    mul.wide.u32 %rd5, %r1, 12;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u32 [%rd6], %r4;
    st.global.u32 [%rd6+4], %r5;
    st.global.u32 [%rd6+8], %r8;
    ret;
}
"#;
    // f16 bit patterns: 1.0, 2.0, -1.0, 0.5, NaN.
    let (one, two, m1, half, nan) = (0x3c00u32, 0x4000u32, 0xbc00u32, 0x3800u32, 0x7e00u32);
    let value = |h: u32| match h {
        0x3c00 => 1.0f32,
        0x4000 => 2.0,
        0xbc00 => -1.0,
        0x3800 => 0.5,
        _ => f32::NAN,
    };
    let pack = |lo: u32, hi: u32| lo | hi << 16;
    let pairs = [
        (pack(two, one), pack(one, two)),
        (pack(one, two), pack(two, one)),
        (pack(m1, half), pack(half, m1)),
        (pack(nan, one), pack(one, nan)),
        (pack(one, one), pack(one, one)),
    ];
    let mut input = Vec::new();
    for &(a, b) in &pairs {
        input.extend(a.to_le_bytes());
        input.extend(b.to_le_bytes());
    }
    let want: Vec<u32> = pairs
        .iter()
        .flat_map(|&(a, b)| {
            let halves = |x: u32| [x & 0xffff, x >> 16].map(value);
            let (ha, hb) = (halves(a), halves(b));
            let per = |f: &dyn Fn(f32, f32) -> bool, yes: u32| -> u32 {
                (0..2).map(|k| if f(ha[k], hb[k]) { yes << (16 * k) } else { 0 }).sum()
            };
            let gtu = per(&|x, y| x > y || x.is_nan() || y.is_nan(), 0xffff);
            let gt = per(&|x, y| x > y, 0x3c00);
            let lt = per(&|x, y| x < y, 1);
            [gtu, gt, (lt & 1) | ((lt >> 16) & 1) << 1]
        })
        .collect();
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 12 * pairs.len()])];
    let (emu, native) = words_on_both(kernel, pairs.len() as u32, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// A whole vector register as an operand stands for all its elements: `ld.global.v4.u32 t, [a]` into
/// `.reg .v4 .u32 t` writes t.x..t.w (only t.x was written; the others read 0), and `mov.b32 h, x` into
/// `.reg .v2 .b16 h` splits x into h.x (low) and h.y (high). Output: t.w, t.z, t.y, t.x, then h.y, h.x.
#[test]
fn vector_register_operands_write_every_element() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b64 %rd<4>;
    .reg .v4 .u32 t;
    .reg .v2 .b16 h;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.v4.u32 t, [%rd1];
    mov.b32 h, t.y;
    st.global.v4.u32 [%rd2], {t.w, t.z, t.y, t.x};
    cvt.u32.u16 %r1, h.y;
    cvt.u32.u16 %r2, h.x;
    st.global.v2.u32 [%rd2+16], {%r1, %r2};
    ret;
}
"#;
    let input: Vec<u8> = [11u32, 0xabcd_1234, 33, 44].iter().flat_map(|v| v.to_le_bytes()).collect();
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 24])];
    let want = vec![44, 33, 0xabcd_1234, 11, 0xabcd, 0x1234];
    let (emu, native) = words_on_both(kernel, 1, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// `dp4a`/`dp2a` (integer dot products, PTX ISA 9.x): `dp4a.atype.btype d, a, b, c` is c + Σ a.byte[i] ×
/// b.byte[i], each byte signed or not by its operand's type; `dp2a.{lo,hi}` is c + Σ a.half[i] ×
/// b.byte[sel + i], sel 0 or 2. The model below is written from that text, per operand, not from the engines'
/// code. Output per thread: [dp4a.u32.u32, dp4a.s32.u32, dp4a.u32.s32, dp4a.s32.s32, dp2a.lo.u32.s32,
/// dp2a.hi.s32.u32].
#[test]
fn integer_dot_products_follow_the_isa() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    ld.global.u32 %r3, [%rd4+4];
    ld.global.u32 %r4, [%rd4+8];
    dp4a.u32.u32 %r5, %r2, %r3, %r4;
    dp4a.s32.u32 %r6, %r2, %r3, %r4;
    dp4a.u32.s32 %r7, %r2, %r3, %r4;
    dp4a.s32.s32 %r8, %r2, %r3, %r4;
    dp2a.lo.u32.s32 %r9, %r2, %r3, %r4;
    dp2a.hi.s32.u32 %r10, %r2, %r3, %r4;
    mul.wide.u32 %rd5, %r1, 24;
    add.s64 %rd6, %rd2, %rd5;
    st.global.v2.u32 [%rd6], {%r5, %r6};
    st.global.v2.u32 [%rd6+8], {%r7, %r8};
    st.global.v2.u32 [%rd6+16], {%r9, %r10};
    ret;
}
"#;
    let cases: Vec<[u32; 3]> = vec![
        [0x0102_0304, 0x0506_0708, 10],
        [0xff80_7f01, 0x80ff_0102, 0],
        [0xffff_ffff, 0xffff_ffff, 0xffff_ffff],
        [0x8000_7fff, 0x7f80_ff01, 0x1234_5678],
        [0, 0xdead_beef, 42],
    ];
    let input = le_bytes(cases.iter().flatten().copied());
    let byte = |x: u32, i: u32, signed: bool| -> i64 {
        let v = (x >> (8 * i)) & 0xff;
        if signed {
            v as u8 as i8 as i64
        } else {
            v as i64
        }
    };
    let half = |x: u32, i: u32, signed: bool| -> i64 {
        let v = (x >> (16 * i)) & 0xffff;
        if signed {
            v as u16 as i16 as i64
        } else {
            v as i64
        }
    };
    let dp4 = |a: u32, b: u32, c: u32, sa: bool, sb: bool| {
        (c as i64 + (0..4).map(|i| byte(a, i, sa) * byte(b, i, sb)).sum::<i64>()) as u32
    };
    let dp2 = |a: u32, b: u32, c: u32, hi: bool, sa: bool, sb: bool| {
        let sel = if hi { 2 } else { 0 };
        (c as i64 + (0..2).map(|i| half(a, i, sa) * byte(b, sel + i, sb)).sum::<i64>()) as u32
    };
    let want: Vec<u32> = cases
        .iter()
        .flat_map(|&[a, b, c]| {
            [
                dp4(a, b, c, false, false),
                dp4(a, b, c, true, false),
                dp4(a, b, c, false, true),
                dp4(a, b, c, true, true),
                dp2(a, b, c, false, false, true),
                dp2(a, b, c, true, true, false),
            ]
        })
        .collect();
    let n = cases.len() as u32;
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 24 * cases.len()])];
    let (emu, native) = words_on_both(kernel, n, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// `cvt.pack.sat` (PTX ISA 9.x): a and b (s32) are each saturated to the conversion type's range and
/// packed with b in the low bits and a above it; below 16 bits, the rest of the destination is c's low
/// bits. The model is written from that text. Output per thread: [u16, s16, u8 with c, s8 with c, u4 with c,
/// s4 with c, u2 with c, s2 with c].
#[test]
fn cvt_pack_saturates_and_packs() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    ld.global.u32 %r3, [%rd4+4];
    ld.global.u32 %r4, [%rd4+8];
    cvt.pack.sat.u16.s32 %r5, %r2, %r3;
    cvt.pack.sat.s16.s32 %r6, %r2, %r3;
    cvt.pack.sat.u8.s32.b32 %r7, %r2, %r3, %r4;
    cvt.pack.sat.s8.s32.b32 %r8, %r2, %r3, %r4;
    cvt.pack.sat.u4.s32.b32 %r9, %r2, %r3, %r4;
    cvt.pack.sat.s4.s32.b32 %r10, %r2, %r3, %r4;
    cvt.pack.sat.u2.s32.b32 %r11, %r2, %r3, %r4;
    cvt.pack.sat.s2.s32.b32 %r12, %r2, %r3, %r4;
    mul.wide.u32 %rd5, %r1, 32;
    add.s64 %rd6, %rd2, %rd5;
    st.global.v4.u32 [%rd6], {%r5, %r6, %r7, %r8};
    st.global.v4.u32 [%rd6+16], {%r9, %r10, %r11, %r12};
    ret;
}
"#;
    let cases: Vec<[i32; 3]> = vec![
        [70000, -5, 0xabcd],
        [-70000, 300, -1],
        [1, 2, 0x1234_5678],
        [127, -128, 0],
        [-1, 0, 0x7fff_ffff],
        [i32::MAX, i32::MIN, 5],
    ];
    let input = le_bytes(cases.iter().flatten().map(|&w| w as u32));
    let pack = |a: i32, b: i32, c: i32, bits: u32, signed: bool| -> u32 {
        let (lo, hi) = if signed { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
        let field = |v: i32| (i64::from(v).clamp(lo, hi) as u64 & ((1 << bits) - 1)) as u32;
        let low = field(b) | field(a) << bits;
        if bits == 16 {
            low
        } else {
            low | ((c as u32) << (2 * bits))
        }
    };
    let want: Vec<u32> = cases
        .iter()
        .flat_map(|&[a, b, c]| {
            [16, 8, 4, 2].iter().flat_map(move |&bits| [pack(a, b, c, bits, false), pack(a, b, c, bits, true)])
        })
        .collect();
    let n = cases.len() as u32;
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 32 * cases.len()])];
    let (emu, native) = words_on_both(kernel, n, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// `cp.async` (PTX ISA 9.x, Ampere's asynchronous copies): `cp-size` bytes land in shared memory, the first
/// `src-size` of them from global memory and the rest zeros; with `ignore-src` true nothing is read. The
/// groups' commit and wait order nothing here (copies finish when issued); after the wait and a barrier each
/// thread stores another thread's 16 bytes (so the copy went through shared memory, not a register).
#[test]
fn cp_async_copies_global_to_shared_with_zero_fill() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    .shared .align 16 .b8 buf[1024];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 5;
    add.u32 %r4, %r2, %r3;
    // 16 bytes whole; then 16 bytes of which the first (tid % 4) * 4 + 1 come from the source.
    cp.async.cg.shared.global [%r4], [%rd4], 16;
    and.b32 %r5, %r1, 3;
    shl.b32 %r6, %r5, 2;
    add.u32 %r6, %r6, 1;
    setp.eq.u32 %p1, %r5, 3;
    @%p1 mov.u32 %r6, 16;
    cp.async.ca.shared.global [%r4+16], [%rd4], 16, %r6;
    // Every thread also overwrites its first 4 bytes with ignore-src: zeros when tid is odd.
    and.b32 %r7, %r1, 1;
    setp.ne.u32 %p0, %r7, 0;
    cp.async.ca.shared.global [%r4], [%rd4], 4, %p0;
    cp.async.commit_group;
    cp.async.wait_group 0;
    cp.async.wait_all;
    bar.sync 0;
    // Read the next thread's 32 bytes (wrapping around the block).
    add.u32 %r8, %r1, 1;
    and.b32 %r8, %r8, 7;
    shl.b32 %r9, %r8, 5;
    add.u32 %r10, %r2, %r9;
    ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r10];
    mul.wide.u32 %rd5, %r1, 32;
    add.s64 %rd6, %rd2, %rd5;
    st.global.v4.u32 [%rd6], {%r11, %r12, %r13, %r14};
    ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r10+16];
    st.global.v4.u32 [%rd6+16], {%r11, %r12, %r13, %r14};
    ret;
}
"#;
    let threads = 8usize;
    let input: Vec<u8> = (0..16 * threads).map(|i| (i * 7 + 3) as u8).collect();
    // Each thread's 32 bytes of shared memory, from the definition.
    let slot = |t: usize| -> Vec<u8> {
        let src = &input[16 * t..16 * t + 16];
        let mut s = src.to_vec();
        if t % 2 == 1 {
            s[..4].fill(0);
        }
        let n = if t % 4 == 3 { 16 } else { (t % 4) * 4 + 1 };
        let mut second = vec![0u8; 16];
        second[..n].copy_from_slice(&src[..n]);
        s.extend(second);
        s
    };
    let want_bytes: Vec<u8> = (0..threads).flat_map(|t| slot((t + 1) % threads)).collect();
    let want: Vec<u32> = want_bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 32 * threads])];
    let (emu, native) = words_on_both(kernel, threads as u32, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// A whole vector register as both operands of `mov.v4.u16` (valid PTX, once refused at load) copies every
/// element; checked through a 64-bit view of the two vector registers.
#[test]
fn mov_between_whole_vector_registers_copies_every_element() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b64 %rd<8>;
    .reg .v4 .u16 %h;
    .reg .v4 .u16 %g;
    .reg .v2 .u32 %w;
    .reg .v2 .u32 %x;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.u64 %rd3, [%rd1];
    mov.b64 %h, %rd3;
    mov.v4.u16 %g, %h;
    mov.b64 %rd4, %g;
    st.global.u64 [%rd2], %rd4;
    mov.b64 %w, %rd3;
    mov.v2.u32 %x, %w;
    mov.b64 %rd5, {%x.y, %x.x};
    st.global.u64 [%rd2+8], %rd5;
    ret;
}
"#;
    let v: u64 = 0x0004_0003_0002_0001;
    let args = || vec![Arg::Buf(v.to_le_bytes().to_vec()), Arg::Buf(vec![0; 16])];
    let want = vec![0x0002_0001, 0x0004_0003, 0x0004_0003, 0x0002_0001];
    let (emu, native) = words_on_both(kernel, 1, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// Device functions whose parameters and return value are in the `.reg` state space (old-style PTX, valid
/// and once refused at load): the body writes a parameter and reads a vector one's element; the caller
/// passes registers.
#[test]
fn reg_space_function_parameters_work() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.func (.reg .b32 r) twice_sum(.reg .b32 x, .reg .b32 y)
{
    add.u32 x, x, y;
    shl.b32 r, x, 1;
    ret;
}
.func (.reg .u64 r) pick(.reg .v2 .b32 v)
{
    .reg .b32 %t;
    mov.b32 %t, v.y;
    cvt.u64.u32 r, %t;
    ret;
}
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.v2.u32 {%r1, %r2}, [%rd1];
    call.uni (%r3), twice_sum, (%r1, %r2);
    st.global.u32 [%rd2], %r3;
    st.global.u32 [%rd2+4], %r1;
    ret;
}
"#;
    let args = || vec![Arg::Buf([5u32, 7].iter().flat_map(|v| v.to_le_bytes()).collect()), Arg::Buf(vec![0; 8])];
    let want = vec![24, 5];
    let (emu, native) = words_on_both(kernel, 1, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// SIMD video instructions (PTX ISA 9.x, `vop2`/`vop4` with the default lane selectors): on half-word or
/// byte lanes of a and b (each signed or not by its own type), the operation, `.sat` clamping to the
/// destination's lane range, then the lanes packed (low bits) or, with `.add`, summed into c. The model is
/// written from that text. Output per thread: the ten forms below (after the second, two words of padding).
#[test]
fn simd_video_instructions_follow_the_isa() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<24>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    ld.global.u32 %r3, [%rd4+4];
    ld.global.u32 %r4, [%rd4+8];
    vabsdiff4.u32.u32.u32 %r5, %r2, %r3, %r4;
    vabsdiff4.u32.u32.u32.add %r6, %r2, %r3, %r4;
    vadd4.s32.s32.s32.sat %r7, %r2, %r3, %r4;
    vsub4.u32.u32.u32.sat %r8, %r2, %r3, %r4;
    vavrg4.u32.u32.u32 %r9, %r2, %r3, %r4;
    vmin4.s32.s32.u32 %r10, %r2, %r3, %r4;
    vmax2.u32.s32.s32 %r11, %r2, %r3, %r4;
    vadd2.s32.s32.s32.add %r12, %r2, %r3, %r4;
    vabsdiff2.s32.s32.s32.sat %r13, %r2, %r3, %r4;
    vavrg2.s32.s32.s32 %r14, %r2, %r3, %r4;
    mul.wide.u32 %rd5, %r1, 48;
    add.s64 %rd6, %rd2, %rd5;
    st.global.v2.u32 [%rd6], {%r5, %r6};
    st.global.v4.u32 [%rd6+16], {%r7, %r8, %r9, %r10};
    st.global.v4.u32 [%rd6+32], {%r11, %r12, %r13, %r14};
    ret;
}
"#;
    let cases: Vec<[u32; 3]> = vec![
        [0x0102_0304, 0x0403_0201, 100],
        [0xff80_7f00, 0x0180_8001, 0xffff_fff0],
        [0x7fff_8000, 0x8001_7fff, 7],
        [0x1234_5678, 0x8765_4321, 0],
        [0xffff_ffff, 0, 0x8000_0000],
    ];
    let input = le_bytes(cases.iter().flatten().copied());
    // vavrg rounds half away from zero (the ISA: `(x + y + 1) >> 1` where `x + y >= 0`, else `(x + y) >> 1`).
    fn avrg(x: i64, y: i64) -> i64 {
        if x + y >= 0 {
            (x + y + 1) >> 1
        } else {
            (x + y) >> 1
        }
    }
    // (lanes, op, d signed, a signed, b signed, sat, add)
    type Form = (u32, fn(i64, i64) -> i64, bool, bool, bool, bool, bool);
    let forms: [Form; 10] = [
        (4, |x, y| (x - y).abs(), false, false, false, false, false),
        (4, |x, y| (x - y).abs(), false, false, false, false, true),
        (4, |x, y| x + y, true, true, true, true, false),
        (4, |x, y| x - y, false, false, false, true, false),
        (4, avrg, false, false, false, false, false),
        (4, |x, y| x.min(y), true, true, false, false, false),
        (2, |x, y| x.max(y), false, true, true, false, false),
        (2, |x, y| x + y, true, true, true, false, true),
        (2, |x, y| (x - y).abs(), true, true, true, true, false),
        (2, avrg, true, true, true, false, false),
    ];
    let model = |(lanes, f, ds, sa, sb, sat, add): Form, a: u32, b: u32, c: u32| -> u32 {
        let bits = 32 / lanes;
        let field = |x: u32, i: u32, s: bool| -> i64 {
            let v = i64::from((x >> (i * bits)) & ((1u32 << bits) - 1));
            if s && v >= 1 << (bits - 1) {
                v - (1 << bits)
            } else {
                v
            }
        };
        let (lo, hi) = if ds { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
        let rs: Vec<i64> = (0..lanes)
            .map(|i| {
                let r = f(field(a, i, sa), field(b, i, sb));
                if sat {
                    r.clamp(lo, hi)
                } else {
                    r
                }
            })
            .collect();
        if add {
            (i64::from(c) + rs.iter().sum::<i64>()) as u32
        } else {
            rs.iter()
                .enumerate()
                .fold(0u32, |acc, (i, &r)| acc | ((r as u32) & ((1u32 << bits) - 1)) << (i as u32 * bits))
        }
    };
    // Per thread: the first two forms, two words of padding (16-byte alignment), the other eight.
    let want: Vec<u32> = cases
        .iter()
        .flat_map(|&[a, b, c]| {
            let r = forms.map(|f| model(f, a, b, c));
            [&r[..2], &[0, 0], &r[2..]].concat()
        })
        .collect();
    let n = cases.len() as u32;
    let args = || vec![Arg::Buf(input.clone()), Arg::Buf(vec![0; 48 * cases.len()])];
    let (emu, native) = words_on_both(kernel, n, &args, 1);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// A `.shared` variable's generic address is a multiple of its `.align` (Numba's `cuda.shared.array(...,
/// alignment=256)`): the CTA's shared memory starts at a multiple of the largest alignment asked for. Output:
/// the address modulo 256 and modulo 64 of a 256-aligned variable declared after a 4-byte one.
#[test]
fn shared_variables_are_aligned_as_declared() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .shared .align 16 .b8 pad[4];
    .shared .align 256 .b8 s[16];
    .reg .b64 %rd<8>;
    mov.u64 %rd1, s;
    cvta.shared.u64 %rd1, %rd1;
    rem.u64 %rd3, %rd1, 256;
    rem.u64 %rd4, %rd1, 64;
    ld.param.u64 %rd2, [out];
    st.global.u64 [%rd2], %rd3;
    st.global.u64 [%rd2+8], %rd4;
    mov.u64 %rd5, pad;
    st.shared.u32 [%rd5], 1;
    ret;
}
"#;
    let args = || vec![Arg::Buf(vec![0; 4]), Arg::Buf(vec![0; 16])];
    let (emu, native) = words_on_both(kernel, 1, &args, 1);
    assert_eq!(emu, vec![0; 4], "emulator");
    assert_eq!(native, vec![0; 4], "JIT");
}

/// A call that passes a return value the callee does not have (Numba declares C-ABI `void` functions with one;
/// NVIDIA's linker accepts it) verifies and runs on both engines; the extra return value gets nothing.
#[test]
fn a_call_with_an_extra_return_value_runs() {
    let kernel = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .func consume(.param .b64 p)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    st.u32 [%rd1], 42;
    ret;
}
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    {
    .param .b64 param0;
    st.param.b64 [param0], %rd1;
    .param .b64 retval0;
    call.uni (retval0), consume, (param0);
    ld.param.b64 %rd2, [retval0];
    }
    ret;
}
"#;
    let args = || vec![Arg::Buf(vec![0; 4]), Arg::Buf(vec![0; 4])];
    let (emu, native) = words_on_both(kernel, 1, &args, 1);
    assert_eq!(emu, vec![42], "emulator");
    assert_eq!(native, vec![42], "JIT");
}
