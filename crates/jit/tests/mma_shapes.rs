//! `mma.sync` shapes and types beyond `.f16`/`.bf16` (issue 21), on both engines: integer `m16n8k32` and
//! `m16n8k16` (`.s8`/`.u8` inputs, `.s32` accumulators, with and without `.satfinite`), `.tf32` `m16n8k8` and
//! `.f64` `m8n8k4` (with its rounding modifiers). The reference is written here from the PTX ISA alone: a
//! plain row-major `D = A·B + C`, the ISA's precision rules (integer: exact, then wrapped or with
//! `.satfinite` clamped to the `.s32` range; `.f64`: a fused multiply-add; `.tf32`: the value of the upper
//! 19 bits), and the per-lane fragment layouts of "Matrix Fragments for mma.m16n8k32 / m16n8k16 / m16n8k8 /
//! m8n8k4" (`g = %laneid >> 2`, `t = %laneid % 4`), restated below. Each lane loads its A, B and C registers
//! from the input (distributed by those layouts) and stores its D registers; the test compares every lane's
//! D registers with the reference distributed the same way (on the emulator and on the JIT with and without
//! its vector path). Also `.f16` `m8n8k4`, Volta's shape: four independent 8×8×4 products, one per quad pair,
//! in every `.alayout.blayout` and accumulator type; and the single-bit `.b1` shapes (`m8n8k128`,
//! `m16n8k128`, `m16n8k256`) with `.xor.popc` and `.and.popc`.

mod common;

use common::{launch, Arg, Rng};
use device::Dim3;

/// The ISA's fragment layouts: (row, column) of element `i` held by `lane`.
#[derive(Clone, Copy)]
enum Layout {
    /// 8-bit A of `m16n8k16` / `m16n8k32`: row `g` for i in 0..4 and 8..12, else `g + 8`; column `4t + (i & 3)`
    /// for i < 8, `4t + (i & 3) + 16` for i ≥ 8.
    AInt8,
    /// 8-bit B: row `4t + (i & 3)` for i < 4, `4t + (i & 3) + 16` for i ≥ 4; column `g`.
    BInt8,
    /// `.tf32` A of `m16n8k8`: row `g` for a0 and a2, `g + 8` for a1 and a3; column `t` for a0 and a1, `t + 4`
    /// for a2 and a3.
    ATf32,
    /// `.tf32` B of `m16n8k8`: row `t` for b0, `t + 4` for b1; column `g`.
    BTf32,
    /// C and D of the `m16n8` shapes: row `g` for c0 and c1, `g + 8` for c2 and c3; column `2t + (i & 1)`.
    C16x8,
    /// `.f64` `m8n8k4`: A (row `g`, column `t`), B (row `t`, column `g`), C/D (row `g`, column `2t + i`).
    AF64,
    BF64,
    CF64,
}

fn position(layout: Layout, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match layout {
        Layout::AInt8 => {
            let row = if i < 4 || (8..12).contains(&i) { g } else { g + 8 };
            let col = if i < 8 { 4 * t + (i & 3) } else { 4 * t + (i & 3) + 16 };
            (row, col)
        }
        Layout::BInt8 => (if i < 4 { 4 * t + (i & 3) } else { 4 * t + (i & 3) + 16 }, g),
        Layout::ATf32 => (if i == 0 || i == 2 { g } else { g + 8 }, if i < 2 { t } else { t + 4 }),
        Layout::BTf32 => (if i == 0 { t } else { t + 4 }, g),
        Layout::C16x8 => (if i < 2 { g } else { g + 8 }, 2 * t + (i & 1)),
        Layout::AF64 => (g, t),
        Layout::BF64 => (t, g),
        Layout::CF64 => (g, 2 * t + i),
    }
}

/// The registers of every lane holding the row-major matrix `m` (`cols` wide), `per_reg` elements of
/// `bits` bits per register (low element first, as the ISA's "Elements (low to high)").
fn distribute(m: &[u64], cols: usize, layout: Layout, elems: usize, bits: u32) -> Vec<Vec<u64>> {
    let per_reg = (32 / bits).max(1) as usize;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (0..32)
        .map(|lane| {
            let mut regs = vec![0u64; elems / per_reg];
            for i in 0..elems {
                let (r, c) = position(layout, lane, i);
                regs[i / per_reg] |= (m[r * cols + c] & mask) << (bits as usize * (i % per_reg));
            }
            regs
        })
        .collect()
}

/// One `mma` case: the instruction, its fragments' register counts and width, and the per-lane input
/// registers (A, B, C in order); returns each engine's D registers per lane.
fn run(mma: &str, (na, nb, nc, nd): (usize, usize, usize, usize), wide: bool, input: &[Vec<u64>]) -> [Vec<u64>; 2] {
    let (ty, bytes) = if wide { ("b64", 8) } else { ("b32", 4) };
    let n_in = na + nb + nc;
    let names = |p: &str, n: usize, from: usize| (from..from + n).map(|i| format!("%{p}{i}")).collect::<Vec<_>>();
    let (a, b, c, d) = (names("x", na, 0), names("x", nb, na), names("x", nc, na + nb), names("y", nd, 0));
    let mut body = String::new();
    for i in 0..n_in {
        body += &format!("    ld.global.{ty} %x{i}, [%rd4+{}];\n", i * bytes);
    }
    body +=
        &format!("    {mma} {{{}}}, {{{}}}, {{{}}}, {{{}}};\n", d.join(", "), a.join(", "), b.join(", "), c.join(", "));
    for i in 0..nd {
        body += &format!("    st.global.{ty} [%rd6+{}], %y{i};\n", i * bytes);
    }
    let kernel = format!(
        r#".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .b32 %r<2>;
    .reg .b64 %rd<8>;
    .reg .{ty} %x<{n_in}>;
    .reg .{ty} %y<{nd}>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %laneid;
    mul.wide.u32 %rd3, %r1, {};
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd5, %r1, {};
    add.s64 %rd6, %rd2, %rd5;
{body}    ret;
}}
"#,
        n_in * bytes,
        nd * bytes
    );
    let module = ir::compile(&kernel).unwrap_or_else(|e| panic!("{e:?}\n{kernel}"));
    let bytes_in: Vec<u8> = input
        .iter()
        .flat_map(|regs| regs.iter().flat_map(|r| r.to_le_bytes()[..bytes].to_vec()).collect::<Vec<u8>>())
        .collect();
    let args = [Arg::Buf(bytes_in), Arg::Buf(vec![0; 32 * nd * bytes])];
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(32, 1, 1));
    let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args).unwrap();
    let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
    let (native, _) = launch(&mut jit, &module, "k", grid, block, 0, &args).unwrap();
    let mut scalar = jit::Jit::new(jit::Options { threads: 1, vectorize: false, ..jit::Options::default() });
    let (unvectorized, _) = launch(&mut scalar, &module, "k", grid, block, 0, &args).unwrap();
    assert_eq!(unvectorized[1], native[1], "the JIT with and without its vector path: {mma}");
    let regs = |buf: &[u8]| {
        buf.chunks(bytes).map(|c| c.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b))).collect::<Vec<u64>>()
    };
    [regs(&emu[1]), regs(&native[1])]
}

/// The per-lane input registers: lane l's A registers, then B, then C.
fn lanes_input(a: Vec<Vec<u64>>, b: Vec<Vec<u64>>, c: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
    (0..32).map(|l| [a[l].clone(), b[l].clone(), c[l].clone()].concat()).collect()
}

/// Integer `mma`: A (16×k) and B (k×8) of `.s8`/`.u8`, C and D `.s32`.
fn integer_case(k: usize, a_signed: bool, b_signed: bool, satfinite: bool, c_near_limit: bool, seed: u64) {
    let mut rng = Rng(seed);
    let elem = |rng: &mut Rng, signed: bool| if signed { rng.range(-128, 127) } else { rng.range(0, 255) };
    let a: Vec<i64> = (0..16 * k).map(|_| elem(&mut rng, a_signed)).collect();
    let b: Vec<i64> = (0..k * 8).map(|_| elem(&mut rng, b_signed)).collect();
    let c: Vec<i64> = (0..16 * 8)
        .map(|i| match (c_near_limit, i % 2) {
            (false, _) => rng.range(-100_000, 100_000),
            (true, 0) => i64::from(i32::MAX) - rng.range(0, 1000),
            (true, _) => i64::from(i32::MIN) + rng.range(0, 1000),
        })
        .collect();
    // Near the limits, every product pushes C further out: A non-negative, B non-negative in the even
    // columns (C near MAX_INT32) and, where B is signed, non-positive in the odd ones (C near MIN_INT32).
    let clamp8 = |v: i64, signed: bool| if signed { v.min(127) } else { v };
    let (a, b) = if c_near_limit {
        let a = a.iter().map(|v| clamp8(v.abs(), a_signed)).collect();
        let b = (0..k * 8)
            .map(|i| {
                let v = clamp8(b[i].abs(), b_signed);
                if b_signed && i % 2 == 1 {
                    -v
                } else {
                    v
                }
            })
            .collect();
        (a, b)
    } else {
        (a, b)
    };
    let mut d = Vec::new();
    for m in 0..16 {
        for n in 0..8 {
            let sum = c[m * 8 + n] + (0..k).map(|kk| a[m * k + kk] * b[kk * 8 + n]).sum::<i64>();
            d.push(
                if satfinite { sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) } else { sum } as i32 as u32 as u64
            );
        }
    }
    let u = |v: &[i64]| v.iter().map(|&x| x as u64).collect::<Vec<u64>>();
    let input = lanes_input(
        distribute(&u(&a), k, Layout::AInt8, k / 2, 8),
        distribute(&u(&b), 8, Layout::BInt8, k / 4, 8),
        distribute(&u(&c), 8, Layout::C16x8, 4, 32),
    );
    let want: Vec<u64> = distribute(&d, 8, Layout::C16x8, 4, 32).concat();
    let ty = |s: bool| if s { "s8" } else { "u8" };
    let sat = if satfinite { ".satfinite" } else { "" };
    let mma = format!("mma.sync.aligned.m16n8k{k}.row.col{sat}.s32.{}.{}.s32", ty(a_signed), ty(b_signed));
    let [emu, native] = run(&mma, (k / 8, k / 16, 4, 4), false, &input);
    assert_eq!(emu, want, "emulator: {mma}");
    assert_eq!(native, want, "JIT: {mma}");
}

#[test]
fn integer_m16n8k32_and_m16n8k16_follow_the_isa() {
    for (k, sa, sb, seed) in [(32, true, true, 1), (32, false, true, 2), (32, true, false, 3), (32, false, false, 4)] {
        integer_case(k, sa, sb, false, false, seed);
    }
    integer_case(16, false, false, false, false, 5);
    integer_case(16, true, true, false, false, 6);
}

/// Near `MAX_INT32` (even columns of C) and `MIN_INT32` (odd columns) with non-negative A and B, the sums
/// of the even columns overflow: `.satfinite` clamps them to `MAX_INT32`, without it they wrap (ISA: "If
/// .satfinite is not specified, the accumulated value is wrapped instead").
#[test]
fn integer_mma_satfinite_clamps_and_plain_wraps() {
    for satfinite in [true, false] {
        integer_case(32, false, false, satfinite, true, 7);
        integer_case(16, true, false, satfinite, true, 8);
    }
}

/// `.tf32` `m16n8k8`: values whose low 13 fraction bits carry noise; the products use the upper 19 bits
/// (sign, exponent, 10 fraction bits). The ISA leaves tf32's layout to the implementation and makes
/// operands with `cvt.rna.tf32.f32`, which clears those bits; the tensor cores of sm_80 and later ignore
/// them. Values are small multiples of 1/4, so every sum is exact in `.f32` in any order.
#[test]
fn tf32_m16n8k8_uses_the_upper_19_bits() {
    let mut rng = Rng(11);
    let noisy = |rng: &mut Rng| {
        let v = rng.range(-40, 40) as f32 / 4.0;
        u64::from(v.to_bits() | (rng.next() as u32 & 0x1fff))
    };
    let a: Vec<u64> = (0..16 * 8).map(|_| noisy(&mut rng)).collect();
    let b: Vec<u64> = (0..8 * 8).map(|_| noisy(&mut rng)).collect();
    let c: Vec<u64> = (0..16 * 8).map(|_| u64::from((rng.range(-1000, 1000) as f32 / 8.0).to_bits())).collect();
    let tf32 = |bits: u64| f32::from_bits(bits as u32 & 0xffff_e000);
    let mut d = Vec::new();
    for m in 0..16 {
        for n in 0..8 {
            let sum: f32 = f32::from_bits(c[m * 8 + n] as u32)
                + (0..8).map(|kk| tf32(a[m * 8 + kk]) * tf32(b[kk * 8 + n])).sum::<f32>();
            d.push(u64::from(sum.to_bits()));
        }
    }
    let input = lanes_input(
        distribute(&a, 8, Layout::ATf32, 4, 32),
        distribute(&b, 8, Layout::BTf32, 2, 32),
        distribute(&c, 8, Layout::C16x8, 4, 32),
    );
    let want: Vec<u64> = distribute(&d, 8, Layout::C16x8, 4, 32).concat();
    let [emu, native] = run("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", (4, 2, 4, 4), false, &input);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// `.f64` `m8n8k4`, as a `.f64` fused multiply-add (ISA: "identical to that of .f64 precision fused
/// multiply-add", `.rn` by default, `.rz`, `.rm`, `.rp`). First exact values (any order gives the same sum);
/// then one non-zero product per row, `(1 + 2^-30)² = 1 + 2^-29 + 2^-60`, plus C = 0 or -2: the 2^-60 is below
/// the last place, so the rounding modifier decides the result (k's other products are zero and add
/// exactly).
#[test]
fn f64_m8n8k4_is_a_fused_multiply_add_with_its_rounding() {
    let mut rng = Rng(13);
    let a: Vec<f64> = (0..8 * 4).map(|_| rng.range(-64, 64) as f64 / 8.0).collect();
    let b: Vec<f64> = (0..4 * 8).map(|_| rng.range(-64, 64) as f64 / 8.0).collect();
    let c: Vec<f64> = (0..8 * 8).map(|_| rng.range(-1000, 1000) as f64 / 16.0).collect();
    let exact: Vec<f64> = (0..64)
        .map(|i| {
            let (m, n) = (i / 8, i % 8);
            c[i] + (0..4).map(|kk| a[m * 4 + kk] * b[kk * 8 + n]).sum::<f64>()
        })
        .collect();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let case = |rnd: &str, a: &[f64], b: &[f64], c: &[f64], d: &[f64]| {
        let input = lanes_input(
            distribute(&bits(a), 4, Layout::AF64, 1, 64),
            distribute(&bits(b), 8, Layout::BF64, 1, 64),
            distribute(&bits(c), 8, Layout::CF64, 2, 64),
        );
        let want: Vec<u64> = distribute(&bits(d), 8, Layout::CF64, 2, 64).concat();
        let mma = format!("mma.sync.aligned.m8n8k4.row.col{rnd}.f64.f64.f64.f64");
        let [emu, native] = run(&mma, (1, 1, 2, 2), true, &input);
        assert_eq!(emu, want, "emulator: {mma}");
        assert_eq!(native, want, "JIT: {mma}");
    };
    case("", &a, &b, &c, &exact);
    // Rows alternate the product's sign; C is 0 in even columns and -2 in odd ones (for a negative
    // product: 2 and the sum's magnitude 1 - 2^-29 - 2^-60).
    let x = 1.0 + 2f64.powi(-30);
    let a: Vec<f64> = (0..32)
        .map(|i| {
            if i % 4 == 0 {
                if (i / 4) % 2 == 0 {
                    x
                } else {
                    -x
                }
            } else {
                0.0
            }
        })
        .collect();
    let b: Vec<f64> = (0..32).map(|i| if i < 8 { x } else { 0.0 }).collect();
    let c: Vec<f64> = (0..64)
        .map(|i| {
            if i % 2 == 0 {
                0.0
            } else if (i / 8) % 2 == 0 {
                -2.0
            } else {
                2.0
            }
        })
        .collect();
    // x² = 1 + 2^-29 + 2^-60 lies 2^-60 above hi = 1 + 2^-29 (ulp 2^-52); 2 - x² = 1 - 2^-29 - 2^-60 lies 2^-60
    // below lo = 1 - 2^-29 (ulp 2^-53 there). Per rounding: [x², x² - 2, -x², 2 - x²] (even rows give the
    // first two in even and odd columns, odd rows the last two).
    let (hi, lo, big, small) = (1.0 + 2f64.powi(-29), 1.0 - 2f64.powi(-29), 2f64.powi(-52), 2f64.powi(-53));
    for (rnd, r) in [
        ("", [hi, -lo, -hi, lo]),
        (".rn", [hi, -lo, -hi, lo]),
        (".rz", [hi, -(lo - small), -hi, lo - small]),
        (".rm", [hi, -lo, -(hi + big), lo - small]),
        (".rp", [hi + big, -(lo - small), -hi, lo]),
    ] {
        let d: Vec<f64> = (0..64).map(|i| r[2 * ((i / 8) % 2) + i % 2]).collect();
        case(rnd, &a, &b, &c, &d);
    }
}

/// `.f16` `mma.m8n8k4` ("Matrix Fragments for mma.m8n8k4 with .f16 floating point type"): computation `q` is
/// held by lanes `4q..4q+3` (low group) and `16+4q..16+4q+3` (high group). With `r = %laneid % 4` and
/// `h = 4` in the high group, 0 in the low one, element `i` of a lane is at (row, column) of its computation's
/// matrices: A row-major (r + h, i), column-major (i + h, r); B row-major (r, i + h), column-major (i, r + h);
/// C/D `.f16` (r + h, i); C/D `.f32` ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)).
fn quad_position(what: &str, lane: usize, i: usize) -> (usize, usize) {
    let (r, h) = (lane % 4, if lane >= 16 { 4 } else { 0 });
    match what {
        "a.row" => (r + h, i),
        "a.col" => (i + h, r),
        "b.row" => (r, i + h),
        "b.col" => (i, r + h),
        "c.f16" => (r + h, i),
        _ => ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)),
    }
}

/// Every lane's registers for the four computations' matrices `m[q]` (`cols` wide), `elems` elements of
/// `bits` bits per lane.
fn quad_distribute(m: &[Vec<u64>; 4], cols: usize, what: &str, elems: usize, bits: u32) -> Vec<Vec<u64>> {
    let per_reg = (32 / bits) as usize;
    (0..32)
        .map(|lane| {
            let q = (lane >> 2) & 3;
            let mut regs = vec![0u64; elems / per_reg];
            for i in 0..elems {
                let (r, c) = quad_position(what, lane, i);
                regs[i / per_reg] |= m[q][r * cols + c] << (bits as usize * (i % per_reg));
            }
            regs
        })
        .collect()
}

#[test]
fn f16_m8n8k4_computes_one_product_per_quad_pair() {
    let f16 = |v: f32| {
        // Exact small values only: sign, then the f16 of |v| = n / 16 with n < 2048.
        let (sign, mut x) = (if v < 0.0 { 0x8000u64 } else { 0 }, v.abs());
        if x == 0.0 {
            return sign;
        }
        let mut e = 15i32;
        while x >= 2.0 {
            x /= 2.0;
            e += 1;
        }
        while x < 1.0 {
            x *= 2.0;
            e -= 1;
        }
        sign | (e as u64) << 10 | ((x - 1.0) * 1024.0) as u64
    };
    let mut rng = Rng(99);
    for (seed, al, bl, ct, dt) in [
        (1, "row", "col", "f32", "f32"),
        (2, "col", "row", "f16", "f16"),
        (3, "row", "row", "f16", "f32"),
        (4, "col", "col", "f32", "f16"),
    ] {
        rng.0 ^= seed;
        // Values i/4 with |i| ≤ 16: every product, sum and result is exact in .f16 and .f32.
        let mut val = |_| rng.range(-16, 16) as f32 / 4.0;
        let a: [Vec<f32>; 4] = std::array::from_fn(|_| (0..32).map(&mut val).collect());
        let b: [Vec<f32>; 4] = std::array::from_fn(|_| (0..32).map(&mut val).collect());
        let c: [Vec<f32>; 4] = std::array::from_fn(|_| (0..64).map(&mut val).collect());
        let d: [Vec<f32>; 4] = std::array::from_fn(|q| {
            (0..64)
                .map(|i| c[q][i] + (0..4).map(|kk| a[q][(i / 8) * 4 + kk] * b[q][kk * 8 + i % 8]).sum::<f32>())
                .collect()
        });
        let enc = |m: &[Vec<f32>; 4], ty: &str| -> [Vec<u64>; 4] {
            std::array::from_fn(|q| {
                m[q].iter().map(|&v| if ty == "f16" { f16(v) } else { u64::from(v.to_bits()) }).collect()
            })
        };
        let bits = |ty: &str| if ty == "f16" { 16 } else { 32 };
        let input = lanes_input(
            quad_distribute(&enc(&a, "f16"), 4, &format!("a.{al}"), 4, 16),
            quad_distribute(&enc(&b, "f16"), 8, &format!("b.{bl}"), 4, 16),
            quad_distribute(&enc(&c, ct), 8, &format!("c.{ct}"), 8, bits(ct)),
        );
        let want: Vec<u64> = quad_distribute(&enc(&d, dt), 8, &format!("c.{dt}"), 8, bits(dt)).concat();
        let mma = format!("mma.sync.aligned.m8n8k4.{al}.{bl}.{dt}.f16.f16.{ct}");
        let regs = |ty: &str| if ty == "f16" { 4 } else { 8 };
        let [emu, native] = run(&mma, (2, 2, regs(ct), regs(dt)), false, &input);
        assert_eq!(emu, want, "emulator: {mma}");
        assert_eq!(native, want, "JIT: {mma}");
    }
}

/// Single-bit `mma` ("Matrix Fragments for mma.m8n8k128 / m16n8k128 / m16n8k256"): `.b1` element `i` of a
/// lane (bit `i % 32` of register `i / 32`) is, in A, at row `g + 8·((i >> 5) & 1)`, column
/// `32t + (i & 31) + 128·(i >> 6)`; in B at row `32t + (i & 31) + 128·(i >> 5)`, column `g`. C and D are the
/// `.s32` `m8n8` / `m16n8` accumulators. D = C + the number of k where `A[m][k] op B[k][n]` is 1 (`op` XOR or
/// AND), wrapped to 32 bits.
fn b1_position(b: bool, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    if b {
        (32 * t + (i & 31) + 128 * (i >> 5), g)
    } else {
        (g + 8 * ((i >> 5) & 1), 32 * t + (i & 31) + 128 * (i >> 6))
    }
}

#[test]
fn single_bit_mma_counts_xor_and_and() {
    let mut rng = Rng(4242);
    for (m, k, and) in
        [(8, 128, false), (8, 128, true), (16, 128, false), (16, 128, true), (16, 256, false), (16, 256, true)]
    {
        let a: Vec<u64> = (0..m * k).map(|_| rng.next() >> 63).collect();
        let b: Vec<u64> = (0..k * 8).map(|_| rng.next() >> 63).collect();
        // Some C near the top of the range, so that the count wraps.
        let c: Vec<u64> = (0..m * 8)
            .map(|i| if i % 5 == 0 { u64::from(i32::MAX as u32 - 3) } else { rng.range(-5000, 5000) as u32 as u64 })
            .collect();
        let d: Vec<u64> = (0..m * 8)
            .map(|i| {
                let (r, n) = (i / 8, i % 8);
                let ones = (0..k)
                    .filter(|&kk| if and { a[r * k + kk] & b[kk * 8 + n] } else { a[r * k + kk] ^ b[kk * 8 + n] } == 1)
                    .count();
                u64::from((c[i] as u32).wrapping_add(ones as u32))
            })
            .collect();
        let bits = |m: &[u64], cols: usize, is_b: bool, elems: usize| -> Vec<Vec<u64>> {
            (0..32)
                .map(|lane| {
                    let mut regs = vec![0u64; elems / 32];
                    for i in 0..elems {
                        let (r, col) = b1_position(is_b, lane, i);
                        regs[i / 32] |= m[r * cols + col] << (i % 32);
                    }
                    regs
                })
                .collect()
        };
        let (na, nb, nc) = (m * k / 1024, k / 128, m / 4);
        let c_layout = if m == 8 { Layout::CF64 } else { Layout::C16x8 };
        let input =
            lanes_input(bits(&a, k, false, 32 * na), bits(&b, 8, true, 32 * nb), distribute(&c, 8, c_layout, nc, 32));
        let want: Vec<u64> = distribute(&d, 8, c_layout, nc, 32).concat();
        let op = if and { "and" } else { "xor" };
        let mma = format!("mma.sync.aligned.m{m}n8k{k}.row.col.s32.b1.b1.s32.{op}.popc");
        let [emu, native] = run(&mma, (na, nb, nc, nc), false, &input);
        assert_eq!(emu, want, "emulator: {mma}");
        assert_eq!(native, want, "JIT: {mma}");
    }
}
