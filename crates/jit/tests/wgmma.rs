//! `wgmma.mma_async.sync.aligned.m64nNkK` (issue 21) on the emulator and the JIT (with and without its
//! vector path), against a model written here from the PTX ISA's "Asynchronous Warpgroup Level Matrix
//! Multiply-Accumulate" section alone:
//!
//! - the operands are placed in shared memory by the ISA's canonical layouts, restated in [`Smem::offset`]:
//!   K-major core matrices of 8 rows × 16 bytes (no swizzle; LBO between the two core matrices along K, SBO
//!   between groups of 8 rows), K-major swizzled rows of W = 32/64/128 bytes eight to an atom (SBO between
//!   atoms), MN-major 16-byte columns of 8 k-rows (no swizzle: SBO along MN, LBO between groups of 8 k) and
//!   MN-major swizzled atoms W bytes wide (LBO along MN, SBO between groups of 8 k); a swizzled address has
//!   its 16-byte chunk index (bits 4..) exclusive-ored with its bits 7.. (three, two or one bits);
//! - the descriptor packs start, LBO and SBO in 16-byte units at bits 0, 16 and 32 and the mode at bit 62;
//! - the D fragment of warp `w`, lane `4g + t`, element `i`: row `16w + g + 8·((i >> 1) & 1)`, column
//!   `8·(i >> 2) + 2t + (i & 1)`; A in registers: the `mma` A layouts of the type for rows `16w ..`;
//! - the result is a plain `D = (scale-d ? D : 0) + (±A)·(±B)` on small integers, so that every sum is exact
//!   whatever the order (the engines' order, k by k in fused multiply-adds as `mma`, is not what is tested).

mod common;

use common::{engines, launch, refusal, words, Arg, Rng};
use device::Dim3;

/// Element types by their PTX names.
fn size_of(ty: &str) -> usize {
    match ty {
        "f16" | "bf16" => 2,
        "tf32" | "f32" | "s32" => 4,
        _ => 1,
    }
}

/// The bits of the small integer `v` (exact in every type used) as a `ty` element; `.tf32` elements get
/// `noise` in the 13 fraction bits a tensor core ignores.
fn encode(ty: &str, v: i64, noise: u64) -> u64 {
    let f = v as f32;
    let bits = f.to_bits();
    // A normal f32 re-biased to a format with `e` exponent and `m` fraction bits (exact for these values).
    let narrow = |e: u32, m: u32| -> u64 {
        if v == 0 {
            return 0;
        }
        let sign = u64::from(bits >> 31);
        let exp = ((bits >> 23) & 0xFF) as i64 - 127 + ((1 << (e - 1)) - 1);
        let frac = u64::from((bits & 0x7F_FFFF) >> (23 - m));
        sign << (e + m) | (exp as u64) << m | frac
    };
    match ty {
        "f16" => narrow(5, 10),
        "bf16" => u64::from(bits >> 16),
        "tf32" => u64::from(bits) | (noise & 0x1FFF),
        "f32" => u64::from(bits),
        "e4m3" => narrow(4, 3),
        "e5m2" => narrow(5, 2),
        "s8" | "u8" => v as u64 & 0xFF,
        _ => v as u64 & 0xFFFF_FFFF,
    }
}

/// An operand's place in shared memory: byte offsets in the image and the swizzle width (0: none).
#[derive(Clone, Copy)]
struct Smem {
    start: u64,
    lbo: u64,
    sbo: u64,
    width: u64,
    mn_major: bool,
}

impl Smem {
    /// A packed layout of an operand `mn` rows (of A, columns of B) by 32 bytes of K, at `start`; returns it
    /// and its size. `k_outer` puts the no-swizzle K-major core matrices of one K half after all of the
    /// other half's (LBO large, SBO small) instead of side by side.
    fn canonical(start: u64, mn: u64, esz: u64, width: u64, mn_major: bool, k_outer: bool) -> (Smem, u64) {
        let k = 32 / esz;
        let (lbo, sbo, bytes) = match (mn_major, width) {
            (false, 0) if k_outer => (mn / 8 * 128, 128, mn * 32),
            (false, 0) => (128, 256, mn * 32),
            // LBO is not used: give it a value that would show if it were.
            (false, w) => (16 * 5, 8 * w, mn * w),
            (true, 0) => (mn * esz / 16 * 128, 128, mn * esz * k),
            (true, w) => {
                let blocks = (mn * esz).div_ceil(w);
                (8 * w, blocks * 8 * w, blocks * 8 * w * k.div_ceil(8))
            }
        };
        (Smem { start, lbo, sbo, width, mn_major }, bytes.next_multiple_of(1024))
    }

    fn descriptor(&self) -> u64 {
        let mode = match self.width {
            0 => 0,
            128 => 1,
            64 => 2,
            _ => 3,
        };
        self.start >> 4 | (self.lbo >> 4) << 16 | (self.sbo >> 4) << 32 | mode << 62
    }

    /// The byte offset of element (`mn`, `k`).
    fn offset(&self, esz: u64, mn: u64, k: u64) -> u64 {
        let w = self.width;
        let plain = if !self.mn_major {
            let byte = k * esz;
            if w == 0 {
                // Core matrix (mn / 8, byte / 16), row mn % 8 of it.
                (mn / 8) * self.sbo + (byte / 16) * self.lbo + (mn % 8) * 16 + byte % 16
            } else {
                (mn / 8) * self.sbo + (mn % 8) * w + byte
            }
        } else {
            let byte = mn * esz;
            match byte.checked_div(w) {
                None => (byte / 16) * self.sbo + (k / 8) * self.lbo + (k % 8) * 16 + byte % 16,
                Some(block) => block * self.lbo + (k / 8) * self.sbo + (k % 8) * w + byte % w,
            }
        };
        let addr = self.start + plain;
        if w == 0 {
            return addr;
        }
        let chunks = w / 16;
        let chunk = (addr / 16) % chunks;
        let row = (addr / 128) % chunks;
        addr - chunk * 16 + (chunk ^ row) * 16
    }
}

#[derive(Clone)]
struct Case {
    d: &'static str,
    a: &'static str,
    b: &'static str,
    n: usize,
    /// Swizzle widths (0: none) of A (`None`: A in registers) and B.
    swz_a: Option<u64>,
    swz_b: u64,
    trans_a: bool,
    trans_b: bool,
    neg_a: bool,
    neg_b: bool,
    scale_d: bool,
    satfinite: bool,
    k_outer: bool,
    /// The CTA's shape (x, y): warpgroups of 128 consecutive threads in x-major order.
    block: (u32, u32),
}

fn case(d: &'static str, ab: &'static str, n: usize) -> Case {
    Case {
        d,
        a: ab,
        b: ab,
        n,
        swz_a: Some(0),
        swz_b: 0,
        trans_a: false,
        trans_b: false,
        neg_a: false,
        neg_b: false,
        scale_d: true,
        satfinite: false,
        k_outer: false,
        block: (128, 1),
    }
}

impl Case {
    fn k(&self) -> usize {
        32 / size_of(self.a)
    }

    fn int(&self) -> bool {
        self.d == "s32"
    }

    fn instruction(&self) -> String {
        let (n, k) = (self.n, self.k());
        let dregs = self.d_regs();
        let d: Vec<String> = (0..dregs).map(|i| format!("%d{i}")).collect();
        let a = if self.swz_a.is_some() { "%rd20".to_string() } else { "{%a0, %a1, %a2, %a3}".to_string() };
        let mut ops = vec![format!("{{{}}}", d.join(", ")), a, "%rd21".into(), "%p2".into()];
        if !self.int() {
            ops.push(if self.neg_a { "-1" } else { "1" }.into());
            ops.push(if self.neg_b { "-1" } else { "1" }.into());
        }
        if matches!(self.a, "f16" | "bf16") {
            if self.swz_a.is_some() {
                ops.push(u8::from(self.trans_a).to_string());
            }
            ops.push(u8::from(self.trans_b).to_string());
        }
        let sat = if self.satfinite { ".satfinite" } else { "" };
        format!("wgmma.mma_async.sync.aligned.m64n{n}k{k}{sat}.{}.{}.{} {};", self.d, self.a, self.b, ops.join(", "))
    }

    fn d_regs(&self) -> usize {
        if self.d == "f16" {
            self.n / 4
        } else {
            self.n / 2
        }
    }
}

/// The kernel: 128 threads copy the shared image in, each loads its D (and A) registers, the warpgroup
/// multiplies, each thread stores its D registers.
fn kernel(c: &Case, image_bytes: usize) -> String {
    let dregs = c.d_regs();
    let dty = if c.d == "f32" { "f32" } else { "b32" };
    let loads: String = (0..dregs).map(|i| format!("    ld.global.{dty} %d{i}, [%rd8+{}];\n", 4 * i)).collect();
    let stores: String = (0..dregs).map(|i| format!("    st.global.{dty} [%rd9+{}], %d{i};\n", 4 * i)).collect();
    let aloads: String = if c.swz_a.is_none() {
        (0..4).map(|i| format!("    ld.global.b32 %a{i}, [%rd10+{}];\n", 4 * i)).collect()
    } else {
        String::new()
    };
    format!(
        r#".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 img, .param .u64 dinit, .param .u64 aregs, .param .u64 out, .param .u64 desc_a,
    .param .u64 desc_b, .param .u32 scale_d)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<32>;
    .reg .{dty} %d<{dregs}>;
    .reg .b32 %a<4>;
    .shared .align 1024 .b8 sh[{image_bytes}];
    ld.param.u64 %rd1, [img];
    mov.u32 %r6, %tid.y;
    mov.u32 %r7, %ntid.x;
    mov.u32 %r8, %tid.x;
    mad.lo.u32 %r9, %r6, %r7, %r8;
    mov.u32 %r1, %r9;
    mov.u32 %r10, %ntid.y;
    mul.lo.u32 %r7, %r7, %r10;
    mov.u32 %r2, sh;
LOOP:
    setp.ge.u32 %p1, %r1, {words};
    @%p1 bra DONE;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.u32 %r3, [%rd6];
    shl.b32 %r4, %r1, 2;
    add.s32 %r4, %r4, %r2;
    st.shared.u32 [%r4], %r3;
    add.s32 %r1, %r1, %r7;
    bra LOOP;
DONE:
    bar.sync 0;
    fence.proxy.async.shared::cta;
    mov.u32 %r1, %r9;
    ld.param.u64 %rd2, [dinit];
    mul.wide.u32 %rd7, %r1, {dbytes};
    add.s64 %rd8, %rd2, %rd7;
{loads}    ld.param.u64 %rd3, [aregs];
    mul.wide.u32 %rd11, %r1, 16;
    add.s64 %rd10, %rd3, %rd11;
{aloads}    cvt.u64.u32 %rd12, %r2;
    shr.u64 %rd12, %rd12, 4;
    ld.param.u64 %rd20, [desc_a];
    add.s64 %rd20, %rd20, %rd12;
    ld.param.u64 %rd21, [desc_b];
    add.s64 %rd21, %rd21, %rd12;
    ld.param.u32 %r5, [scale_d];
    setp.ne.u32 %p2, %r5, 0;
    wgmma.fence.sync.aligned;
    {inst}
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
    ld.param.u64 %rd4, [out];
    add.s64 %rd9, %rd4, %rd7;
{stores}    ret;
}}
"#,
        words = image_bytes / 4,
        dbytes = 4 * dregs,
        inst = c.instruction(),
    )
}

/// D's element `i` of `lane` in warp `w`: (row, column).
fn d_position(w: usize, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    (16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1))
}

/// A's element `i` (in registers) of `lane` in warp `w`, by element size.
fn a_position(esz: usize, w: usize, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    let (r, c) = match esz {
        2 => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
        4 => (g + 8 * (i & 1), t + 4 * (i >> 1)),
        _ => (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)),
    };
    (16 * w + r, c)
}

/// Runs `c` on every engine and checks every thread's D registers against the model.
fn check(c: &Case, seed: u64) {
    let (m, n, k) = (64usize, c.n, c.k());
    let (ea, eb) = (size_of(c.a), size_of(c.b));
    let mut rng = Rng(seed);
    let (lo, hi) = match c.a {
        "s8" => (-128, 127),
        "u8" => (0, 255),
        _ => (-3, 3),
    };
    let (blo, bhi) = match c.b {
        "s8" => (-128, 127),
        "u8" => (0, 255),
        _ => (-3, 3),
    };
    let a: Vec<i64> = (0..m * k).map(|_| rng.range(lo, hi)).collect();
    let b: Vec<i64> = (0..k * n).map(|_| rng.range(blo, bhi)).collect();
    let cinit: Vec<i64> = (0..m * n)
        .map(|i| if c.satfinite && i % 3 == 0 { i64::from(i32::MAX) - rng.range(0, 1000) } else { rng.range(-50, 50) })
        .collect();
    // Shared image: A then B, each at a 1024-byte boundary.
    let (sa, a_bytes) = Smem::canonical(0, m as u64, ea as u64, c.swz_a.unwrap_or(0), c.trans_a, c.k_outer);
    let a_bytes = if c.swz_a.is_some() { a_bytes } else { 0 };
    let (sb, b_bytes) = Smem::canonical(a_bytes, n as u64, eb as u64, c.swz_b, c.trans_b, c.k_outer);
    let size = (a_bytes + b_bytes) as usize;
    let mut img = vec![0xA5u8; size];
    let mut put = |at: u64, esz: usize, v: u64| {
        img[at as usize..at as usize + esz].copy_from_slice(&v.to_le_bytes()[..esz]);
    };
    if c.swz_a.is_some() {
        for r in 0..m {
            for kk in 0..k {
                put(
                    sa.offset(ea as u64, r as u64, kk as u64),
                    ea,
                    encode(c.a, a[r * k + kk], r as u64 * 31 + kk as u64),
                );
            }
        }
    }
    for kk in 0..k {
        for col in 0..n {
            put(
                sb.offset(eb as u64, col as u64, kk as u64),
                eb,
                encode(c.b, b[kk * n + col], col as u64 * 7 + kk as u64),
            );
        }
    }
    // Registers: D (and A) of every thread.
    let dregs = c.d_regs();
    let per_d = if c.d == "f16" { 2 } else { 1 };
    let threads = (c.block.0 * c.block.1) as usize;
    let mut dinit = vec![0u32; threads * dregs];
    let mut expect = vec![0u32; threads * dregs];
    let sa_sign = if c.neg_a { -1 } else { 1 };
    let sb_sign = if c.neg_b { -1 } else { 1 };
    for tid in 0..threads {
        // Every warpgroup computes the same product.
        let (w, lane) = (tid % 128 / 32, tid % 32);
        for i in 0..n / 2 {
            let (r, col) = d_position(w, lane, i);
            let old = cinit[r * n + col];
            let sum: i64 = (0..k).map(|kk| sa_sign * a[r * k + kk] * sb_sign * b[kk * n + col]).sum();
            let mut v = if c.scale_d { old + sum } else { sum };
            if c.int() {
                v = if c.satfinite { v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) } else { v as i32 as i64 };
            }
            let shift = 16 * (i % per_d);
            let reg = tid * dregs + i / per_d;
            dinit[reg] |= (encode(c.d, old, 0) as u32) << shift;
            expect[reg] |= (encode(c.d, v, 0) as u32) << shift;
        }
    }
    let mut aregs = vec![0u32; threads * 4];
    if c.swz_a.is_none() {
        let per = 4 / ea;
        for tid in 0..threads {
            for i in 0..4 * per {
                let (r, col) = a_position(ea, tid % 128 / 32, tid % 32, i);
                let bits = encode(c.a, a[r * k + col], (r * 3 + col) as u64) as u32;
                aregs[tid * 4 + i / per] |= bits << (8 * ea * (i % per));
            }
        }
    }
    let ptx = kernel(c, size);
    let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
    let bytes = |v: &[u32]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let args = [
        Arg::Buf(img),
        Arg::Buf(bytes(&dinit)),
        Arg::Buf(bytes(&aregs)),
        Arg::Buf(vec![0; 4 * threads * dregs]),
        Arg::Scalar(if c.swz_a.is_some() { sa.descriptor() } else { 0 }.to_le_bytes().to_vec()),
        Arg::Scalar(sb.descriptor().to_le_bytes().to_vec()),
        Arg::Scalar(u32::from(c.scale_d).to_le_bytes().to_vec()),
    ];
    let one = Dim3::new(1, 1, 1);
    for (name, mut engine) in engines() {
        let (out, _) = launch(engine.as_mut(), &module, "k", one, Dim3::new(c.block.0, c.block.1, 1), 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", c.instruction()));
        let got = words(&out[3]);
        for (t, (g, e)) in got.chunks(dregs).zip(expect.chunks(dregs)).enumerate() {
            assert_eq!(g, e, "{name}: thread {t} of `{}`", c.instruction());
        }
    }
}

#[test]
fn f16_and_bf16_from_descriptors_every_swizzle() {
    for (d, ab) in [("f32", "f16"), ("f16", "f16"), ("f32", "bf16")] {
        for swz in [0, 32, 64, 128] {
            let mut c = case(d, ab, 64);
            (c.swz_a, c.swz_b) = (Some(swz), swz);
            check(&c, 1 + swz);
        }
    }
}

#[test]
fn n_values_and_core_matrix_orders() {
    for n in [8, 64, 256] {
        for (swz_a, swz_b, k_outer) in [(0, 0, true), (128, 64, false), (32, 128, false)] {
            let mut c = case("f32", "f16", n);
            (c.swz_a, c.swz_b, c.k_outer) = (Some(swz_a), swz_b, k_outer);
            check(&c, n as u64 + swz_a);
        }
    }
}

#[test]
fn transposed_operands() {
    for swz in [0, 32, 64, 128] {
        for (ta, tb) in [(true, false), (false, true), (true, true)] {
            let mut c = case("f32", if swz == 64 { "bf16" } else { "f16" }, if swz == 32 { 8 } else { 64 });
            (c.swz_a, c.swz_b, c.trans_a, c.trans_b) = (Some(swz), swz, ta, tb);
            check(&c, 7 + swz);
        }
    }
    let mut c = case("f16", "f16", 256);
    (c.swz_a, c.swz_b, c.trans_a, c.trans_b) = (Some(128), 128, true, true);
    check(&c, 3);
}

#[test]
fn a_from_registers_scales_and_scale_d() {
    for (d, ab, n) in [("f32", "f16", 8), ("f16", "f16", 64), ("f32", "bf16", 256)] {
        let mut c = case(d, ab, n);
        (c.swz_a, c.swz_b, c.trans_b) = (None, 128, n == 64);
        check(&c, 11);
        (c.neg_a, c.scale_d) = (true, false);
        check(&c, 12);
        (c.neg_a, c.neg_b, c.scale_d) = (false, true, true);
        check(&c, 13);
    }
    let mut c = case("f32", "f16", 64);
    (c.neg_a, c.neg_b, c.scale_d, c.swz_b) = (true, true, false, 32);
    check(&c, 14);
}

#[test]
fn tf32_reads_the_upper_19_bits() {
    for (swz, n, regs) in [(0, 8, false), (128, 64, false), (64, 256, true), (32, 24, true)] {
        let mut c = case("f32", "tf32", n);
        (c.swz_a, c.swz_b) = (if regs { None } else { Some(swz) }, swz);
        check(&c, 21 + swz);
    }
}

#[test]
fn integer_forms_wrap_or_saturate() {
    for (a, b, n, swz, regs) in [
        ("s8", "s8", 8, 0, false),
        ("u8", "s8", 64, 128, false),
        ("s8", "u8", 256, 64, true),
        ("u8", "u8", 24, 32, true),
    ] {
        let mut c = case("s32", a, n);
        c.b = b;
        (c.swz_a, c.swz_b) = (if regs { None } else { Some(swz) }, swz);
        check(&c, 31 + n as u64);
        c.satfinite = true;
        check(&c, 32 + n as u64);
        c.satfinite = false;
        c.scale_d = false;
        check(&c, 33 + n as u64);
    }
}

#[test]
fn fp8_forms() {
    for (d, a, b, n, swz, regs) in [
        ("f32", "e4m3", "e4m3", 8, 0, false),
        ("f16", "e5m2", "e4m3", 64, 128, false),
        ("f32", "e4m3", "e5m2", 256, 64, true),
        ("f16", "e5m2", "e5m2", 32, 32, true),
    ] {
        let mut c = case(d, a, n);
        c.b = b;
        (c.swz_a, c.swz_b, c.neg_b) = (if regs { None } else { Some(swz) }, swz, n == 64);
        check(&c, 41 + n as u64);
    }
}

#[test]
fn refused_forms_say_why() {
    let sparse = "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %r1, 0, \
                  %p1, 1, 1, 0, 0;";
    assert!(refusal("sm_90a", sparse).contains("sparse"));
    let bad_n = "wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r0, %r1, \
                 %r2, %r3, %r4, %r5, %r6, %r7, %r0, %r1, %r2, %r3}, %rd1, %rd2, %p1;";
    assert!(refusal("sm_90a", bad_n).contains("no N of 40"));
}

/// A warpgroup of a CTA with fewer than 128 threads is an error naming the instruction.
#[test]
fn partial_warpgroup_is_an_error() {
    let c = Case { swz_b: 0, ..case("f32", "f16", 8) };
    let ptx = kernel(&c, 2048);
    let module = ir::compile(&ptx).unwrap();
    let args = [
        Arg::Buf(vec![0; 2048]),
        Arg::Buf(vec![0; 4 * 128 * 4]),
        Arg::Buf(vec![0; 4 * 128 * 4]),
        Arg::Buf(vec![0; 4 * 128 * 4]),
        Arg::Scalar(0u64.to_le_bytes().to_vec()),
        Arg::Scalar(0u64.to_le_bytes().to_vec()),
        Arg::Scalar(1u32.to_le_bytes().to_vec()),
    ];
    for (name, mut engine) in engines() {
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(64, 1, 1), 0, &args).unwrap_err();
        assert!(e.contains("warpgroup is 128 threads"), "{name}: {e}");
    }
}

/// nvcc's output for `wgmma` through inline PTX (`fixtures/wgmma.cu`): descriptors built by the compiled
/// code, K-major operands without swizzle (`wg_desc`), and A in registers with a 64-byte-swizzled N-major B,
/// imm-scale-a -1 and an accumulator (`wg_regs`). The reference is the plain product.
#[test]
fn nvcc_kernels() {
    let module = ir::compile(include_str!("fixtures/wgmma.sm_90a.ptx")).unwrap_or_else(|d| panic!("{d:?}"));
    let mut rng = Rng(99);
    let halves = |v: &[i64]| v.iter().flat_map(|&x| (encode("f16", x, 0) as u16).to_le_bytes()).collect::<Vec<u8>>();
    let floats = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let a: Vec<i64> = (0..64 * 16).map(|_| rng.range(-4, 4)).collect();
    let bt: Vec<i64> = (0..32 * 16).map(|_| rng.range(-4, 4)).collect();
    let b: Vec<i64> = (0..16 * 16).map(|_| rng.range(-4, 4)).collect();
    let c: Vec<f32> = (0..64 * 16).map(|_| rng.range(-100, 100) as f32).collect();
    let want_desc: Vec<f32> =
        (0..64 * 32).map(|i| (0..16).map(|k| a[i / 32 * 16 + k] * bt[i % 32 * 16 + k]).sum::<i64>() as f32).collect();
    let want_regs: Vec<f32> = (0..64 * 16)
        .map(|i| c[i] - (0..16).map(|k| a[i / 16 * 16 + k] * b[k * 16 + i % 16]).sum::<i64>() as f32)
        .collect();
    let as_floats = |b: &[u8]| words(b).into_iter().map(f32::from_bits).collect::<Vec<f32>>();
    let (one, block) = (Dim3::new(1, 1, 1), Dim3::new(128, 1, 1));
    for (name, mut engine) in engines() {
        let args = [Arg::Buf(halves(&a)), Arg::Buf(halves(&bt)), Arg::Buf(vec![0; 4 * 64 * 32])];
        let (out, _) = launch(engine.as_mut(), &module, "_Z7wg_descPK6__halfS1_Pf", one, block, 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(as_floats(&out[2]), want_desc, "wg_desc on the {name}");
        let args = [Arg::Buf(halves(&a)), Arg::Buf(halves(&b)), Arg::Buf(floats(&c)), Arg::Buf(vec![0; 4 * 64 * 16])];
        let (out, _) = launch(engine.as_mut(), &module, "_Z7wg_regsPK6__halfS1_PKfPf", one, block, 0, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(as_floats(&out[3]), want_regs, "wg_regs on the {name}");
    }
}

/// Two and three warpgroups in two-dimensional CTAs: a warp's rank in its warpgroup comes from its
/// x-major thread index.
#[test]
fn several_warpgroups() {
    for block in [(32, 8), (64, 6)] {
        let mut c = case("f32", "f16", 16);
        (c.block, c.swz_a, c.swz_b) = (block, Some(64), 128);
        check(&c, 51);
        c.swz_a = None;
        check(&c, 52);
    }
}

/// A descriptor pointing past the CTA's shared memory is an out-of-bounds access on both engines.
#[test]
fn descriptor_out_of_bounds_is_an_error() {
    let c = case("f32", "f16", 8);
    let ptx = kernel(&c, 2048);
    let module = ir::compile(&ptx).unwrap();
    let args = [
        Arg::Buf(vec![0; 2048]),
        Arg::Buf(vec![0; 4 * 128 * 4]),
        Arg::Buf(vec![0; 4 * 128 * 4]),
        Arg::Buf(vec![0; 4 * 128 * 4]),
        Arg::Scalar(((48 * 1024u64) >> 4).to_le_bytes().to_vec()),
        Arg::Scalar(0u64.to_le_bytes().to_vec()),
        Arg::Scalar(1u32.to_le_bytes().to_vec()),
    ];
    for (name, mut engine) in engines() {
        let e = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(128, 1, 1), 0, &args).unwrap_err();
        assert!(e.contains("out-of-bounds shared access") && e.contains("wgmma"), "{name}: {e}");
    }
}

/// The warps of a warpgroup meet at the instruction: one that passes another B descriptor, or one that
/// exits instead, is an error at the instruction on every engine.
#[test]
fn warpgroups_meet() {
    let c = case("f32", "f16", 8);
    let ptx = kernel(&c, 2048);
    let run = |before: &str| -> Vec<(&'static str, String)> {
        let ptx = ptx.replace(
            "    wgmma.fence.sync.aligned;",
            &format!(
                "    mov.u32 %r11, %tid.x;\n    setp.ge.u32 %p3, %r11, 96;\n{before}\n    wgmma.fence.sync.aligned;"
            ),
        );
        let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
        let args = [
            Arg::Buf(vec![0; 2048]),
            Arg::Buf(vec![0; 4 * 128 * 4]),
            Arg::Buf(vec![0; 4 * 128 * 4]),
            Arg::Buf(vec![0; 4 * 128 * 4]),
            Arg::Scalar(0u64.to_le_bytes().to_vec()),
            Arg::Scalar(((1024u64 >> 4) | (128 >> 4) << 16 | (256 >> 4) << 32).to_le_bytes().to_vec()),
            Arg::Scalar(1u32.to_le_bytes().to_vec()),
        ];
        engines()
            .into_iter()
            .map(|(name, mut engine)| {
                let r = launch(engine.as_mut(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(128, 1, 1), 0, &args);
                (name, r.map(|_| String::new()).unwrap_or_else(|e| e))
            })
            .collect()
    };
    for (name, e) in run("    @%p3 add.s64 %rd21, %rd21, 16;") {
        assert!(e.contains("different descriptors") && e.contains("warp 3") && e.contains("wgmma"), "{name}: {e}");
    }
    for (name, e) in run("    @%p3 exit;") {
        assert!(e.contains("only warps [0, 1, 2]") && e.contains("wgmma"), "{name}: {e}");
    }
    for (name, e) in run("") {
        assert_eq!(e, "", "{name}");
    }
}
