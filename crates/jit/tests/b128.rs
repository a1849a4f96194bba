//! 128-bit registers and accesses (PTX ISA 9.7.9.4 `mov`, 9.7.9.8 `ld`, 9.7.9.10 `st`, 9.7.13.5 `atom`):
//! `.reg .b128` registers, `mov.b128` copies, packs and unpacks, `ld`/`st` `.b128` in every state space, and
//! `atom.cas.b128` / `atom.exch.b128` (sm_90), on the emulator and on the JIT (scalar, with its vector path
//! enabled, and several workers in checked mode). Expected values are computed here from the ISA's
//! semantics; every kernel assembles with ptxas 13 (`-arch=sm_90`).

mod common;

use common::{launch, Arg};
use device::Dim3;

/// The engines every kernel runs on.
fn engines() -> Vec<(&'static str, Box<dyn device::Backend>)> {
    let jit = |threads, vectorize, check| {
        Box::new(jit::Jit::new(jit::Options { threads, vectorize, check, ..Default::default() }))
    };
    vec![
        ("emulator", Box::new(emu::Emulator::new())),
        ("JIT (vector path on)", jit(1, true, false)),
        ("JIT (scalar)", jit(1, false, false)),
        ("JIT (4 workers, checked)", jit(4, true, true)),
    ]
}

/// Runs entry `k` on every engine; returns each engine's name and final buffers.
fn on_every_engine(kernel: &str, grid: Dim3, block: Dim3, args: &[Arg]) -> Vec<(&'static str, Vec<Vec<u8>>)> {
    entry_on_every_engine(kernel, "k", grid, block, args)
}

fn entry_on_every_engine(
    kernel: &str,
    entry: &str,
    grid: Dim3,
    block: Dim3,
    args: &[Arg],
) -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}\n{kernel}"));
    engines()
        .into_iter()
        .map(|(name, mut e)| {
            let (bufs, _) =
                launch(e.as_mut(), &module, entry, grid, block, 0, args).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, bufs)
        })
        .collect()
}

/// The error of launching entry `k` on every engine.
fn errors(kernel: &str, grid: Dim3, block: Dim3, args: &[Arg]) -> Vec<(&'static str, String)> {
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}\n{kernel}"));
    engines()
        .into_iter()
        .map(|(name, mut e)| {
            let err = launch(e.as_mut(), &module, "k", grid, block, 0, args).err();
            (name, err.unwrap_or_else(|| panic!("{name}: the launch succeeded")))
        })
        .collect()
}

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A fixed pseudo-random sequence (splitmix64).
fn values(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

const HEADER: &str = ".version 8.3\n.target sm_90\n.address_size 64\n";

/// `mov.b128` in each operand form of the ISA's table: a pack of two `.b64` or four `.b32` parts (registers,
/// immediates, a `.v2 .b64` vector register), a copy, an unpack into two or four parts (with a sink, into a
/// vector register, into the registers the value was packed from), and a guarded copy. Each thread reads
/// four 64-bit words x0..x3 and writes 16.
#[test]
fn moves_pack_copy_and_unpack() {
    let kernel = format!(
        "{HEADER}.visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<24>;
    .reg .b128 %q<6>;
    .reg .v2 .b64 %v;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd3, %r0, 32;
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd5, %r0, 128;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd4];
    ld.global.v2.u64 {{%rd7, %rd8}}, [%rd4+16];
    mov.b128 %q1, {{%rd7, %rd8}};
    mov.b128 %q2, %q1;
    mov.b128 {{%r5, %r6, %r7, %r8}}, %q2;
    st.global.v4.u32 [%rd6], {{%r5, %r6, %r7, %r8}};
    mov.b128 %q3, {{%r1, %r2, %r3, %r4}};
    mov.b128 {{%rd9, %rd10}}, %q3;
    st.global.v2.u64 [%rd6+16], {{%rd9, %rd10}};
    mov.b128 %q4, {{%r4, %r3, %r2, %r1}};
    mov.b128 {{_, %rd11}}, %q4;
    st.global.u64 [%rd6+32], %rd11;
    mov.b128 %q5, {{0x0123456789abcdef, -2}};
    mov.b128 {{%r9, %r10, %r11, %r12}}, %q5;
    st.global.v4.u32 [%rd6+48], {{%r9, %r10, %r11, %r12}};
    mov.v2.b64 %v, {{%rd8, %rd7}};
    mov.b128 %q0, %v;
    mov.b128 %v, %q3;
    st.global.v2.u64 [%rd6+64], %v;
    mov.b128 {{%rd12, %rd13}}, %q0;
    st.global.v2.u64 [%rd6+80], {{%rd12, %rd13}};
    and.b32 %r13, %r0, 1;
    setp.eq.u32 %p1, %r13, 1;
    @%p1 mov.b128 %q1, %q3;
    mov.b128 {{%rd14, %rd15}}, %q1;
    st.global.v2.u64 [%rd6+96], {{%rd14, %rd15}};
    mov.b128 %q2, {{%rd7, %rd8}};
    mov.b128 {{%rd8, %rd7}}, %q2;
    st.global.v2.u64 [%rd6+112], {{%rd7, %rd8}};
    ret;
}}
"
    );
    let threads = 37;
    let input = values(1, 4 * threads);
    let mut want = Vec::new();
    for t in 0..threads {
        let x = &input[4 * t..4 * t + 4];
        // The ISA's pack: d = a | b << n | ...; unpack: the parts of d from the lowest. Words of 32 bits are
        // w0..w7 (x0's low word first).
        let w: Vec<u64> = x.iter().flat_map(|v| [v & 0xffff_ffff, v >> 32]).collect();
        let pack32 = |a: u64, b: u64| a | b << 32;
        let q3 = [x[0], x[1]];
        // 1: {x2, x3} unpacked into four words, stored as they are (the same bytes).
        want.extend([x[2], x[3]]);
        // 2: q3 = {w0, w1, w2, w3}: halves x0, x1.
        want.extend(q3);
        // 3: {w3, w2, w1, w0}: the high half is w1 | w0 << 32 (only it is stored).
        want.extend([pack32(w[1], w[0]), 0]);
        // 4: immediates.
        want.extend([0x0123_4567_89ab_cdef, u64::MAX - 1]);
        // 5: q3 unpacked into the vector register; q0 from it was {x3, x2}.
        want.extend(q3);
        want.extend([x[3], x[2]]);
        // 6: odd threads copied q3 over q1 = {x2, x3}.
        want.extend(if t % 2 == 1 { q3 } else { [x[2], x[3]] });
        // 7: {rd8, rd7} = {x2, x3}: swapped.
        want.extend([x[3], x[2]]);
    }
    let args = [Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 128 * threads])];
    for (name, bufs) in on_every_engine(&kernel, Dim3::new(1, 1, 1), Dim3::new(threads as u32, 1, 1), &args) {
        assert_eq!(u64s(&bufs[1]), want, "{name}");
    }
}

/// `ld`/`st` `.b128` in every space the engines have: global (also `ldu`, `.nc`, `.relaxed`, `.acquire`,
/// `.release`, `.volatile`, and through a variable's name), shared (a neighbour's value after a barrier),
/// local, kernel parameters, constant memory, generic addresses of global, shared and local memory, and a
/// device function's `.param` arguments and return value (`ld.param.b128` / `st.param.b128` on both sides
/// of the call).
#[test]
fn loads_and_stores_in_every_space() {
    let kernel = format!(
        "{HEADER}.const .align 16 .b8 ctab[32] = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}};
.global .align 16 .b8 gtab[16];
.func (.param .align 16 .b8 r[16]) swap(.param .align 16 .b8 a[16])
{{
    .reg .b64 %x<3>;
    .reg .b128 %t;
    ld.param.b128 %t, [a];
    mov.b128 {{%x1, %x2}}, %t;
    mov.b128 %t, {{%x2, %x1}};
    st.param.b128 [r], %t;
    ret;
}}
.visible .entry k(.param .u64 in, .param .u64 out, .param .align 16 .b8 pb[16])
{{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<24>;
    .reg .b128 %q<16>;
    .shared .align 16 .b8 sh[768];
    .local .align 16 .b8 loc[32];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, %ntid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, %r1, %r0;
    mul.wide.u32 %rd3, %r3, 16;
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd5, %r3, 256;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.b128 %q1, [%rd4];
    st.global.b128 [%rd6], %q1;
    mov.u32 %r4, sh;
    mad.lo.u32 %r5, %r0, 16, %r4;
    st.shared.b128 [%r5], %q1;
    bar.sync 0;
    add.u32 %r6, %r0, 1;
    rem.u32 %r6, %r6, %r1;
    mad.lo.u32 %r7, %r6, 16, %r4;
    ld.shared.b128 %q2, [%r7];
    st.global.b128 [%rd6+16], %q2;
    st.local.b128 [loc+16], %q1;
    ld.local.b128 %q3, [loc+16];
    st.global.b128 [%rd6+32], %q3;
    ld.param.b128 %q4, [pb];
    st.global.b128 [%rd6+48], %q4;
    ld.const.b128 %q5, [ctab+16];
    st.global.b128 [%rd6+64], %q5;
    cvta.shared.u64 %rd7, sh;
    cvt.u64.u32 %rd8, %r0;
    mad.lo.u64 %rd9, %rd8, 16, %rd7;
    ld.b128 %q6, [%rd9];
    st.b128 [%rd6+80], %q6;
    mov.u64 %rd10, loc;
    cvta.local.u64 %rd11, %rd10;
    ld.b128 %q7, [%rd11+16];
    st.global.b128 [%rd6+96], %q7;
    ldu.global.b128 %q8, [%rd4];
    ld.global.nc.b128 %q9, [%rd4];
    ld.relaxed.gpu.global.b128 %q10, [%rd4];
    ld.acquire.gpu.b128 %q11, [%rd4];
    ld.volatile.global.b128 %q12, [%rd4];
    st.global.b128 [%rd6+112], %q8;
    st.relaxed.gpu.global.b128 [%rd6+128], %q9;
    st.release.gpu.b128 [%rd6+144], %q10;
    st.volatile.global.b128 [%rd6+160], %q11;
    st.global.b128 [%rd6+176], %q12;
    {{
        .param .align 16 .b8 pa[16];
        .param .align 16 .b8 pr[16];
        st.param.b128 [pa], %q1;
        call (pr), swap, (pa);
        ld.param.b128 %q13, [pr];
    }}
    st.global.b128 [%rd6+192], %q13;
    setp.eq.u32 %p1, %r3, 0;
    @%p1 st.global.b128 [gtab], %q4;
    @%p1 ld.global.b128 %q14, [gtab];
    @!%p1 mov.b128 %q14, %q1;
    st.global.b128 [%rd6+208], %q14;
    ret;
}}
"
    );
    let (ctas, per_cta) = (3usize, 48usize);
    let n = ctas * per_cta;
    let input = values(2, 2 * n);
    let pb = [values(3, 2)[0], values(3, 2)[1]];
    let ctab: Vec<u8> = (1..=32).collect();
    let c_hi =
        [u64::from_le_bytes(ctab[16..24].try_into().unwrap()), u64::from_le_bytes(ctab[24..32].try_into().unwrap())];
    let mut want = Vec::new();
    for t in 0..n {
        let x = |k: usize| [input[2 * k], input[2 * k + 1]];
        let cta = t / per_cta;
        let next = cta * per_cta + (t % per_cta + 1) % per_cta;
        want.extend(x(t));
        want.extend(x(next));
        want.extend(x(t));
        want.extend(pb);
        want.extend(c_hi);
        want.extend(x(t));
        want.extend(x(t));
        for _ in 0..5 {
            want.extend(x(t));
        }
        want.extend([x(t)[1], x(t)[0]]);
        want.extend(if t == 0 { pb } else { x(t) });
        want.extend([0, 0, 0, 0]);
    }
    let args = [Arg::Buf(bytes(&input)), Arg::Buf(vec![0; 256 * n]), Arg::Scalar(bytes(&pb))];
    for (name, bufs) in on_every_engine(&kernel, Dim3::new(ctas as u32, 1, 1), Dim3::new(per_cta as u32, 1, 1), &args) {
        assert_eq!(u64s(&bufs[1]), want, "{name}");
    }
}

/// A `.b128` access is a 16-byte access: an address that is only 8-byte aligned faults on the emulator and
/// on the JIT in checked mode, as a misaligned `ld.v2.b64` does (unchecked JIT code checks no alignment of
/// loads and stores, at any width). `atom.b128` faults on every engine: the JIT's 16-byte compare-and-swap
/// needs the alignment.
#[test]
fn misaligned_accesses_fault() {
    let kernel = |line: &str| {
        format!(
            "{HEADER}.visible .entry k(.param .u64 p)
{{
    .reg .b64 %rd<4>;
    .reg .b128 %q<3>;
    ld.param.u64 %rd1, [p];
    mov.b128 %q1, {{%rd1, %rd1}};
    {line}
    ret;
}}
"
        )
    };
    let one = Dim3::new(1, 1, 1);
    for line in ["ld.global.b128 %q0, [%rd1+8];", "st.global.b128 [%rd1+24], %q1;"] {
        let module = ir::compile(&kernel(line)).unwrap();
        let args = [Arg::Buf(vec![0; 64])];
        for (name, mut e) in engines().into_iter().filter(|(n, _)| !n.ends_with("path on)") && !n.ends_with("(scalar)"))
        {
            let err = launch(e.as_mut(), &module, "k", one, one, 0, &args).unwrap_err();
            assert!(err.contains("misaligned global access of 16 bytes"), "{name}, `{line}`: {err}");
        }
    }
    let line = "atom.global.cas.b128 %q0, [%rd1+8], %q1, %q1;";
    for (name, err) in errors(&kernel(line), one, one, &[Arg::Buf(vec![0; 64])]) {
        assert!(err.contains("misaligned global access of 16 bytes"), "{name}: {err}");
    }
}

/// `atom.cas.b128` and `atom.exch.b128` are atomic over their 16 bytes, in global, shared and generic memory,
/// with several JIT workers racing: every thread of 8 CTAs adds its own 128-bit amount to one global counter
/// with a compare-and-swap loop (the counter starts just below 2^64, so the sums carry into the high half),
/// and to a shared counter of its CTA through a generic address; every thread exchanges its own value into
/// one global slot and keeps the value it took out, so the values taken out and the one left are the values
/// put in and the slot's first value, each once. A compare-and-swap that fails writes nothing and returns
/// what is there (a sink destination included).
#[test]
fn atomics_are_atomic_over_16_bytes() {
    let kernel = format!(
        "{HEADER}.visible .entry k(.param .u64 counter, .param .u64 slot, .param .u64 out)
{{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<32>;
    .reg .b128 %q<12>;
    .shared .align 16 .b8 sc[16];
    ld.param.u64 %rd1, [counter];
    ld.param.u64 %rd2, [slot];
    ld.param.u64 %rd3, [out];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, %ntid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, %r1, %r0;
    cvt.u64.u32 %rd4, %r3;
    add.s64 %rd5, %rd4, 1;
    mul.lo.u64 %rd6, %rd5, 0x9E3779B97F4A7C15;
    mov.b128 %q1, {{%rd6, %rd5}};
    setp.ne.u32 %p2, %r0, 0;
    @%p2 bra INIT_DONE;
    mov.b128 %q9, {{0, 0}};
    st.shared.b128 [sc], %q9;
INIT_DONE:
    bar.sync 0;
    ld.global.b128 %q2, [%rd1];
ADD:
    mov.b128 {{%rd8, %rd9}}, %q2;
    add.cc.u64 %rd10, %rd8, %rd6;
    addc.u64 %rd11, %rd9, %rd5;
    mov.b128 %q3, {{%rd10, %rd11}};
    atom.global.cas.b128 %q4, [%rd1], %q2, %q3;
    mov.b128 {{%rd12, %rd13}}, %q4;
    setp.ne.u64 %p1, %rd12, %rd8;
    setp.ne.or.u64 %p1, %rd13, %rd9, %p1;
    mov.b128 %q2, %q4;
    @%p1 bra ADD;
    cvta.shared.u64 %rd14, sc;
    ld.shared.b128 %q5, [sc];
SHARED_ADD:
    mov.b128 {{%rd8, %rd9}}, %q5;
    add.cc.u64 %rd10, %rd8, %rd6;
    addc.u64 %rd11, %rd9, %rd5;
    mov.b128 %q3, {{%rd10, %rd11}};
    atom.cas.b128 %q6, [%rd14], %q5, %q3;
    mov.b128 {{%rd12, %rd13}}, %q6;
    setp.ne.u64 %p1, %rd12, %rd8;
    setp.ne.or.u64 %p1, %rd13, %rd9, %p1;
    mov.b128 %q5, %q6;
    @%p1 bra SHARED_ADD;
    mov.b128 %q10, {{%rd5, %rd6}};
    atom.relaxed.gpu.global.exch.b128 %q7, [%rd2], %q10;
    mul.lo.u64 %rd15, %rd4, 64;
    add.s64 %rd16, %rd3, %rd15;
    st.global.b128 [%rd16], %q7;
    mov.b128 %q11, {{7, 7}};
    atom.global.cas.b128 %q8, [%rd2+16], %q11, %q1;
    atom.acq_rel.gpu.global.cas.b128 _, [%rd2+16], %q11, %q1;
    st.global.b128 [%rd16+16], %q8;
    bar.sync 0;
    @%p2 bra DONE;
    ld.shared.b128 %q9, [sc];
    cvt.u64.u32 %rd17, %r2;
    mul.lo.u64 %rd18, %rd17, 16;
    add.s64 %rd19, %rd3, %rd18;
    st.global.b128 [%rd19+{shared_sums}], %q9;
DONE:
    ret;
}}
",
        shared_sums = 64 * 8 * 64
    );
    let (ctas, per_cta) = (8u64, 64u64);
    let n = ctas * per_cta;
    let start: u128 = (1u128 << 64) - 1000;
    let amount = |t: u64| {
        let k = t + 1;
        u128::from(k.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | u128::from(k) << 64
    };
    let exch_value = |t: u64| {
        let k = t + 1;
        u128::from(k) | u128::from(k.wrapping_mul(0x9E37_79B9_7F4A_7C15)) << 64
    };
    let total = (0..n).fold(start, |s, t| s.wrapping_add(amount(t)));
    let halves = |v: u128| [v as u64, (v >> 64) as u64];
    let slot_first: u128 = 0xDEAD_BEEF << 64 | 0x1234;
    let cas_there: u128 = 5 << 64 | 6;
    let counter = bytes(&halves(start));
    let slot = bytes(&[halves(slot_first), halves(cas_there)].concat());
    let args = [Arg::Buf(counter), Arg::Buf(slot), Arg::Buf(vec![0; (64 * n + 16 * ctas) as usize])];
    for (name, bufs) in on_every_engine(&kernel, Dim3::new(ctas as u32, 1, 1), Dim3::new(per_cta as u32, 1, 1), &args) {
        let c = u64s(&bufs[0]);
        assert_eq!(c, halves(total), "{name}: the global counter");
        let s = u64s(&bufs[1]);
        assert_eq!(s[2..4], halves(cas_there), "{name}: failed compare-and-swaps wrote");
        let out = u64s(&bufs[2]);
        let mut taken: Vec<u128> =
            (0..n as usize).map(|t| u128::from(out[8 * t]) | u128::from(out[8 * t + 1]) << 64).collect();
        taken.push(u128::from(s[0]) | u128::from(s[1]) << 64);
        taken.sort_unstable();
        let mut given: Vec<u128> = (0..n).map(exch_value).collect();
        given.push(slot_first);
        given.sort_unstable();
        assert_eq!(taken, given, "{name}: exchanged values");
        for t in 0..n as usize {
            assert_eq!(out[8 * t + 2..8 * t + 4], halves(cas_there), "{name}: thread {t}'s failed compare-and-swap");
        }
        for cta in 0..ctas {
            let sum = (cta * per_cta..(cta + 1) * per_cta).fold(0u128, |s, t| s.wrapping_add(amount(t)));
            let at = (8 * n + 2 * cta) as usize;
            assert_eq!(out[at..at + 2], halves(sum), "{name}: CTA {cta}'s shared counter");
        }
    }
}

/// What the ISA (and ptxas 13) does not have is refused at load with its line, and so are the valid forms
/// that are not implemented (128-bit immediates, `.b128` register arguments of calls).
#[test]
fn forms_outside_the_isa_are_refused_with_their_line() {
    let cases = [
        // ptxas: "Vector type too large, exceeds 128 bit limit".
        ("ld.global.v2.b128 {%q0, %q1}, [%rd1];", "vector"),
        // ptxas: "Argument vector size mismatch".
        ("ld.global.b128 {%rd2, %rd3}, [%rd1];", "one `.b128` register"),
        ("st.global.b128 [%rd1], {%rd2, %rd3};", "one `.b128` register"),
        // ptxas: "Operation .add requires .u32 or ...", "Unexpected instruction types", "State space incorrect".
        ("atom.global.add.b128 %q0, [%rd1], %q1;", "`atom.cas` and `atom.exch` only"),
        ("red.global.exch.b128 [%rd1], %q1;", "`atom.cas` and `atom.exch` only"),
        ("atom.local.cas.b128 %q0, [%rd1], %q1, %q2;", "global, shared or generic"),
        // ptxas: "Vector operand is not allowed for instruction 'atom'".
        ("atom.global.cas.b128 %q0, [%rd1], {%rd2, %rd3}, %q2;", "`.b128` registers"),
        // ptxas: "Arguments mismatch for instruction 'mov'", "Unexpected instruction types".
        ("mov.b64 %rd1, %q0;", "instructions of type `.b128`"),
        ("ld.global.b128 %q0, [%q1];", "not an address"),
        ("ld.global.u32 %r1, [%q1+8];", "instructions of type `.b128`"),
        ("shfl.sync.idx.b32 %r1, %q1, 0, 31, -1;", "operands of `mov`, `ld`, `st` and `atom` only"),
        // Valid, not implemented: how a literal widens to 128 bits is not in the ISA.
        ("mov.b128 %q0, 5;", "128-bit immediates"),
        ("st.global.b128 [%rd1], 5;", "128-bit immediates"),
        ("atom.global.exch.b128 %q0, [%rd1], 7;", "128-bit immediates"),
    ];
    for (line, why) in cases {
        let kernel = format!(
            "{HEADER}.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .b128 %q<3>;
    ld.param.u64 %rd1, [p];
    {line}
    ret;
}}
"
        );
        match ir::compile(&kernel) {
            // The front end refuses it itself, at its line.
            Err(diags) => {
                let lines: Vec<_> = diags.iter().map(|d| d.line_col(kernel.as_bytes()).0).collect();
                assert!(lines.contains(&10), "`{line}`: {diags:?}");
            }
            Ok(_) => {
                for (name, err) in errors(&kernel, Dim3::new(1, 1, 1), Dim3::new(1, 1, 1), &[Arg::Buf(vec![0; 64])]) {
                    assert!(err.contains("PTX line 10") && err.contains(why), "{name}, `{line}`: {err}");
                }
            }
        }
    }
}

/// nvcc 13's output for `tests/nvcc/int128.cu` (sm_90, -O3; the command is the file's first comment line).
fn int128_ptx() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvcc/int128.sm_90.ptx");
    std::fs::read_to_string(path).unwrap()
}

fn u128s(b: &[u8]) -> Vec<u128> {
    b.chunks(16).map(|c| u128::from_le_bytes(c.try_into().unwrap())).collect()
}

fn u128_bytes(v: &[u128]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `__int128` arithmetic as nvcc compiles it (`.v2.u64` loads and stores, carry chains, 128-bit shifts and
/// compares), against Rust's `i128`.
#[test]
fn nvcc_int128_arithmetic() {
    let n = 200usize;
    let edges = [0i128, 1, -1, i128::MAX, i128::MIN, 1 << 64, (1 << 64) - 1, -(1 << 64), i128::from(i64::MIN)];
    let r = values(5, 4 * n);
    let random = |k: usize| (u128::from(r[2 * k]) | u128::from(r[2 * k + 1]) << 64) as i128;
    let a: Vec<i128> = (0..n).map(|i| if i < edges.len() { edges[i] } else { random(i) }).collect();
    let b: Vec<i128> = (0..n).map(|i| edges.get(i / edges.len()).copied().unwrap_or_else(|| random(n + i))).collect();
    let mut want = Vec::new();
    for i in 0..n {
        let (x, y, s) = (a[i], b[i], (i % 128) as u32);
        // C's semantics: wrapping arithmetic, `>>` of a signed value arithmetic.
        want.extend([
            x.wrapping_add(y),
            x.wrapping_sub(y),
            (x as u128).wrapping_mul(y as u128) as i128,
            x >> s,
            ((y as u128) << s) as i128,
            x.min(y),
            x ^ !y,
        ]);
    }
    let as_bytes = |v: &[i128]| u128_bytes(&v.iter().map(|&x| x as u128).collect::<Vec<_>>());
    let args = [
        Arg::Buf(as_bytes(&a)),
        Arg::Buf(as_bytes(&b)),
        Arg::Buf(vec![0; 16 * 7 * n]),
        Arg::Scalar((n as u32).to_le_bytes().to_vec()),
    ];
    let ptx = int128_ptx();
    for (name, bufs) in entry_on_every_engine(&ptx, "int128_arith", Dim3::new(4, 1, 1), Dim3::new(64, 1, 1), &args) {
        let got: Vec<i128> = u128s(&bufs[2]).into_iter().map(|x| x as i128).collect();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{name}: thread {}, result {}", k / 7, k % 7);
        }
    }
}

/// 128-bit `atomicCAS` / `atomicExch` and `cuda::atomic_ref<unsigned __int128>` as nvcc 13 compiles them for
/// sm_90 (`atom.global.cas.b128`, `atom.global.exch.b128`, `atom.cas.relaxed.cta.b128` on a generic address
/// of shared memory, `ld.acquire.gpu.b128`, `st.release.gpu.b128`, `atom.exch.relaxed.gpu.b128`), with
/// several JIT workers racing. Reference: the sums of the threads' amounts (modulo 2^128), the exchanged
/// values as a multiset, and a value that every operation keeps.
#[test]
fn nvcc_int128_atomics() {
    let (blocks, per_block) = (8u32, 64u32);
    let n = (blocks * per_block) as usize;
    const K: u128 = 0x0123_4567_89ab_cdef << 64 | 0xfedc_ba98_7654_3210;
    let amount = |i: usize| (i as u128 + 1).wrapping_mul(K);
    let mine = |i: usize| (i as u128) << 64 | u128::from(0x5555u32.wrapping_mul(i as u32 + 7));
    let counter0 = [u128::MAX - 12345, 1u128 << 127 | 99];
    let slot0 = [0xABCD_u128 << 100 | 0x42, 0x1111_2222_3333_4444_5555_6666_7777_8888];
    let args = [
        Arg::Buf(u128_bytes(&counter0)),
        Arg::Buf(u128_bytes(&slot0)),
        Arg::Buf(vec![0; 16 * n]),
        Arg::Buf(vec![0; 32 * n]),
    ];
    let sum = (0..n).fold(0u128, |s, i| s.wrapping_add(amount(i)));
    let ptx = int128_ptx();
    let grid = (Dim3::new(blocks, 1, 1), Dim3::new(per_block, 1, 1));
    for (name, bufs) in entry_on_every_engine(&ptx, "int128_atomics", grid.0, grid.1, &args) {
        let counter = u128s(&bufs[0]);
        assert_eq!(counter[0], counter0[0].wrapping_add(sum), "{name}: atomicCAS loop");
        assert_eq!(counter[1], counter0[1].wrapping_add(sum), "{name}: block totals through atomic_ref");
        let slot = u128s(&bufs[1]);
        let mut taken = u128s(&bufs[2]);
        taken.push(slot[0]);
        taken.sort_unstable();
        let mut given: Vec<u128> = (0..n).map(mine).collect();
        given.push(slot0[0]);
        given.sort_unstable();
        assert_eq!(taken, given, "{name}: atomicExch");
        assert_eq!(slot[1], slot0[1], "{name}: slot 1 keeps its value");
        assert!(
            u128s(&bufs[3]).iter().all(|&v| v == slot0[1]),
            "{name}: loads, exchanges and the failed CAS of slot 1"
        );
    }
}

/// `.reg .b128` parameters of a device function (old-style register arguments, valid PTX that nvcc does not
/// emit) are refused at the call with its line; `.param` arguments of 16 bytes are the supported form.
#[test]
fn register_arguments_of_128_bits_are_refused() {
    let kernel = format!(
        "{HEADER}.func (.reg .b128 r) f(.reg .b128 a)
{{
    mov.b128 r, a;
    ret;
}}
.visible .entry k(.param .u64 p)
{{
    .reg .b128 %q<2>;
    mov.b128 %q0, {{1, 2}};
    call (%q1), f, (%q0);
    ret;
}}
"
    );
    for (name, err) in errors(&kernel, Dim3::new(1, 1, 1), Dim3::new(1, 1, 1), &[Arg::Scalar(vec![0; 8])]) {
        assert!(err.contains("PTX line 13") && err.contains("`.b128` registers are operands of"), "{name}: {err}");
    }
}

/// A kernel with `.b128` registers runs on the JIT's scalar path: its vector path refuses the registers
/// (their two slots are typed `.b128`).
#[test]
fn kernels_with_b128_registers_stay_on_the_scalar_path() {
    let mut memory = device::DeviceMemory::new();
    let loaded = device::LoadedModule::load(ir::compile(&int128_ptx()).unwrap(), &mut memory).unwrap();
    let jit = jit::Jit::new(jit::Options { threads: 1, ..Default::default() });
    let atomics = loaded.module.function("int128_atomics").unwrap();
    let why = jit.vectorized(&loaded, atomics).unwrap().unwrap_err();
    assert!(why.contains("wider than 64 bits"), "{why}");
    // The arithmetic kernel has no `.b128` register (nvcc loads `__int128` as `.v2.u64`).
    let arith = loaded.module.function("int128_arith").unwrap();
    assert!(!jit.vectorized(&loaded, arith).unwrap().is_err_and(|w| w.contains("wider than 64 bits")));
}
