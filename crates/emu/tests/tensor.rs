//! Warp matrix instructions on hand-written PTX, beyond what the corpus kernels use: every `ldmatrix` count
//! with and without `.trans` and per-lane row addresses, `mma.sync` `m16n8k8`/`m16n8k16` with `.f16` and
//! `.bf16` multiplicands and `.f16`/`.f32` accumulators, the other `wmma` shapes with explicit strides, and
//! the errors (partial warp, misaligned or non-uniform `wmma` addresses). References are written here from the
//! PTX ISA's layouts, with `f32::mul_add` per accumulate step (the emulator's documented rounding).

use device::{Backend, DeviceMemory, Dim3, ErrorKind, ExecError, Launch, LaunchConfig, LoadedModule, ParamBuffer};
use scalar::half::{self, Bf16, F16};
use scalar::round::Rounding;

/// Runs `kernel` of `ptx` with one block of `threads` threads; every parameter is a buffer with the given
/// initial bytes. Returns the final bytes of each buffer.
fn run(ptx: &str, kernel: &str, threads: u32, buffers: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, ExecError> {
    let mut mem = DeviceMemory::new();
    let module = ir::compile(ptx).unwrap_or_else(|d| panic!("{}", d[0].render("test.ptx", ptx)));
    let module = LoadedModule::load(module, &mut mem).unwrap();
    let k = module.module.function(kernel).unwrap();
    let mut params = ParamBuffer::for_kernel(&module.module.functions[k]);
    let ptrs: Vec<u64> = buffers.iter().enumerate().map(|(i, b)| mem.alloc_bytes(b, format!("buffer {i}"))).collect();
    for (i, p) in ptrs.iter().enumerate() {
        params.set(i, &p.to_le_bytes()).unwrap();
    }
    let config = LaunchConfig { grid: Dim3::new(1, 1, 1), block: Dim3::new(threads, 1, 1), dynamic_shared: 0 };
    let launch = Launch { module: &module, kernel: k, config, params: &params, collect_stats: true };
    emu::Emulator::new().launch(&launch, &mut mem, &mut std::io::sink())?;
    Ok(ptrs.iter().map(|p| mem.bytes(*p).unwrap().to_vec()).collect())
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Small exactly representable values k/8 in [-2, 2], as f16 or bf16 bits.
fn values(seed: u32, n: usize, bf16: bool) -> Vec<u16> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let x = ((s >> 16) % 33) as f32 / 8.0 - 2.0;
            if bf16 {
                half::from_f32::<Bf16>(x, Rounding::Rn)
            } else {
                half::from_f32::<F16>(x, Rounding::Rn)
            }
        })
        .collect()
}

fn to_f32(bits: u16, bf16: bool) -> f32 {
    if bf16 {
        half::to_f32::<Bf16>(bits)
    } else {
        half::to_f32::<F16>(bits)
    }
}

fn mac(rows: usize, cols: usize, k: usize, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = vec![0f32; rows * cols];
    for m in 0..rows {
        for n in 0..cols {
            let mut acc = c[m * cols + n];
            for kk in 0..k {
                acc = a[m * k + kk].mul_add(b[kk * cols + n], acc);
            }
            d[m * cols + n] = acc;
        }
    }
    d
}

const HEADER: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

#[test]
fn ldmatrix_every_count_and_transpose() {
    // Each lane stores 16 bytes of the input into a 512-byte shared tile (32 rows of 8 halves), then gives
    // the address of row (5 * lane) % 32 to three ldmatrix forms.
    let ptx = format!(
        "{HEADER}
.visible .entry ldm(.param .u64 p_in, .param .u64 p_out)
{{
    .reg .b32 %r<24>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 tile[512];
    ld.param.u64 %rd1, [p_in];
    ld.param.u64 %rd2, [p_out];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 4;
    cvt.u64.u32 %rd3, %r2;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v4.u32 {{%r3, %r4, %r5, %r6}}, [%rd4];
    mov.u32 %r7, tile;
    add.s32 %r8, %r7, %r2;
    st.shared.v4.u32 [%r8], {{%r3, %r4, %r5, %r6}};
    bar.warp.sync -1;
    mul.lo.u32 %r9, %r1, 5;
    and.b32 %r9, %r9, 31;
    shl.b32 %r9, %r9, 4;
    add.s32 %r10, %r7, %r9;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r11, %r12, %r13, %r14}}, [%r10];
    ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%r15, %r16}}, [%r10];
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {{%r17}}, [%r10];
    ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{%r18, %r19, %r20, %r21}}, [%r10];
    shl.b32 %r22, %r1, 6;
    cvt.u64.u32 %rd5, %r22;
    add.s64 %rd6, %rd2, %rd5;
    st.global.v4.u32 [%rd6], {{%r11, %r12, %r13, %r14}};
    st.global.v2.u32 [%rd6+16], {{%r15, %r16}};
    st.global.u32 [%rd6+24], %r17;
    st.global.v4.u32 [%rd6+32], {{%r18, %r19, %r20, %r21}};
    ret;
}}
"
    );
    let halves: Vec<u16> = (0..256u16).map(|i| i.wrapping_mul(40503) ^ 0x1234).collect();
    let out = run(&ptx, "ldm", 32, &[bytes16(&halves), vec![0; 32 * 64]]).unwrap();
    let out = words(&out[1]);
    // element (r, c) of matrix j: row r's address came from lane 8j + r
    let elem = |j: usize, r: usize, c: usize| -> u32 { u32::from(halves[((5 * (8 * j + r)) % 32) * 8 + c]) };
    for lane in 0..32 {
        let (g, c) = (lane / 4, 2 * (lane % 4));
        let plain = |j: usize| elem(j, g, c) | (elem(j, g, c + 1) << 16);
        let trans = |j: usize| elem(j, c, g) | (elem(j, c + 1, g) << 16);
        let got = &out[lane * 16..lane * 16 + 16];
        let want = [
            plain(0),
            plain(1),
            plain(2),
            plain(3),
            trans(0),
            trans(1),
            plain(0),
            0,
            trans(0),
            trans(1),
            trans(2),
            trans(3),
        ];
        assert_eq!(&got[..12], &want, "lane {lane}");
    }
}

/// An `mma.sync.aligned.m16n8k{k}.row.col.{d}.{ab}.{ab}.{c}` kernel: lane l loads its A, B and C registers
/// from consecutive words of a, b, c and stores its D registers to d.
fn mma_kernel(k: u32, d: &str, ab: &str, c: &str) -> String {
    let regs = |t: &str| if t == "f32" { 4 } else { 2 };
    let (na, nb, nc, nd) = (k / 4, k / 8, regs(c), regs(d));
    let reg_ty = |t: &str| if t == "f32" { "f32" } else { "b32" };
    let (creg, dreg) = (reg_ty(c), reg_ty(d));
    let mut s = format!(
        "{HEADER}
.visible .entry mma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %a<4>;
    .reg .b32 %b<2>;
    .reg .{creg} %c<4>;
    .reg .{dreg} %d<4>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<16>;
    mov.u32 %r1, %tid.x;
"
    );
    for (p, n, reg, ty) in [("pa", na, "a", "b32"), ("pb", nb, "b", "b32"), ("pc", nc, "c", c)] {
        s += &format!(
            "    ld.param.u64 %rd1, [{p}];\n    mul.wide.u32 %rd2, %r1, {};\n    add.s64 %rd3, %rd1, %rd2;\n",
            4 * n
        );
        let ty = if ty == "f16" { "b32" } else { ty };
        for i in 0..n {
            s += &format!("    ld.global.{ty} %{reg}{i}, [%rd3+{}];\n", 4 * i);
        }
    }
    let list = |reg: &str, n: u32| (0..n).map(|i| format!("%{reg}{i}")).collect::<Vec<_>>().join(", ");
    s += &format!(
        "    mma.sync.aligned.m16n8k{k}.row.col.{d}.{ab}.{ab}.{c} {{{}}}, {{{}}}, {{{}}}, {{{}}};\n",
        list("d", nd),
        list("a", na),
        list("b", nb),
        list("c", nc)
    );
    s += &format!(
        "    ld.param.u64 %rd1, [pd];\n    mul.wide.u32 %rd2, %r1, {};\n    add.s64 %rd3, %rd1, %rd2;\n",
        4 * nd
    );
    let dty = if d == "f16" { "b32" } else { d };
    for i in 0..nd {
        s += &format!("    st.global.{dty} [%rd3+{}], %d{i};\n", 4 * i);
    }
    s + "    ret;\n}\n"
}

#[test]
fn mma_sync_shapes_and_types() {
    for (k, d, ab, c) in [
        (16, "f32", "f16", "f32"),
        (16, "f16", "f16", "f16"),
        (16, "f32", "f16", "f16"),
        (16, "f16", "f16", "f32"),
        (16, "f32", "bf16", "f32"),
        (8, "f32", "f16", "f32"),
        (8, "f16", "f16", "f16"),
        (8, "f32", "bf16", "f32"),
    ] {
        let label = format!("m16n8k{k}.{d}.{ab}.{c}");
        let bf = ab == "bf16";
        let k = k as usize;
        let a = values(1, 32 * k / 2, bf);
        let b = values(2, 32 * k / 4, bf);
        // C: f32 values, or f16 bits
        let c_f32: Vec<f32> = values(3, 128, false).iter().map(|&x| to_f32(x, false)).collect();
        let c16: Vec<u16> = values(3, 128, false);
        let c_bytes =
            if c == "f32" { bytes32(&c_f32.iter().map(|x| x.to_bits()).collect::<Vec<_>>()) } else { bytes16(&c16) };
        let dn = if d == "f32" { 128 * 4 } else { 128 * 2 };
        let out = run(&mma_kernel(k as u32, d, ab, c), "mma", 32, &[bytes16(&a), bytes16(&b), c_bytes, vec![0; dn]])
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        // the ISA's layouts
        let (mut am, mut bm, mut cm) = (vec![0f32; 16 * k], vec![0f32; k * 8], vec![0f32; 128]);
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for i in 0..k / 2 {
                let (r, col) = (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2));
                am[r * k + col] = to_f32(a[lane * k / 2 + i], bf);
            }
            for i in 0..k / 4 {
                let (r, col) = (2 * t + (i & 1) + 8 * (i >> 1), g);
                bm[r * 8 + col] = to_f32(b[lane * k / 4 + i], bf);
            }
            for i in 0..4 {
                let (r, col) = (g + 8 * (i >> 1), 2 * t + (i & 1));
                cm[r * 8 + col] = if c == "f32" { c_f32[lane * 4 + i] } else { to_f32(c16[lane * 4 + i], false) };
            }
        }
        let dm = mac(16, 8, k, &am, &bm, &cm);
        let got_f32 = words(&out[3]);
        let got16: Vec<u16> = out[3].chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for i in 0..4 {
                let want = dm[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
                if d == "f32" {
                    assert_eq!(got_f32[lane * 4 + i], want.to_bits(), "{label} lane {lane} d{i}");
                } else {
                    assert_eq!(
                        got16[lane * 4 + i],
                        half::from_f32::<F16>(want, Rounding::Rn),
                        "{label} lane {lane} d{i}"
                    );
                }
            }
        }
    }
}

/// `wmma` on `m32n8k16` and `m8n32k16` with padded strides: A row-major (stride `sa`), B column-major
/// (stride `sb`), C f32 row-major (stride `sc`), D f32 column-major (stride `sd`), all generic addresses.
fn wmma_kernel(shape: &str, ty: &str, sa: u32, sb: u32, sc: u32, sd: u32, regs_ab: (u32, u32)) -> String {
    let list = |reg: &str, n: u32| (0..n).map(|i| format!("%{reg}{i}")).collect::<Vec<_>>().join(", ");
    let (na, nb) = regs_ab;
    format!(
        "{HEADER}
.visible .entry wm(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %a<8>;
    .reg .b32 %b<8>;
    .reg .f32 %c<8>;
    .reg .f32 %d<8>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    wmma.load.a.sync.aligned.row.{shape}.{ty} {{{}}}, [%rd1], {sa};
    wmma.load.b.sync.aligned.col.{shape}.{ty} {{{}}}, [%rd2], {sb};
    wmma.load.c.sync.aligned.row.{shape}.f32 {{{}}}, [%rd3], {sc};
    wmma.mma.sync.aligned.row.col.{shape}.f32.{ty}.{ty}.f32 {{{}}}, {{{}}}, {{{}}}, {{{}}};
    wmma.store.d.sync.aligned.col.{shape}.f32 [%rd4], {{{}}}, {sd};
    ret;
}}
",
        list("a", na),
        list("b", nb),
        list("c", 8),
        list("d", 8),
        list("a", na),
        list("b", nb),
        list("c", 8),
        list("d", 8),
    )
}

#[test]
fn wmma_other_shapes_with_strides() {
    for (m, n, ty, regs) in
        [(32usize, 8usize, "bf16", (8, 2)), (8, 32, "bf16", (2, 8)), (32, 8, "f16", (8, 8)), (8, 32, "f16", (8, 8))]
    {
        let k = 16usize;
        let bf = ty == "bf16";
        let shape = format!("m{m}n{n}k{k}");
        // f16/bf16 A rows of k elements, padded to 32 (row starts must be multiples of the fragment size)
        let (sa, sb, sc, sd) = (32usize, 32usize, n + 16, m + 8);
        let a = values(4, m * sa, bf);
        let b = values(5, n * sb, bf);
        let c: Vec<f32> = values(6, m * sc, false).iter().map(|&x| to_f32(x, false)).collect();
        let ptx = if ty == "f16" {
            // f16 multiplicands take `.f16` in wmma.mma only through `.dtype.ctype`
            wmma_kernel(&shape, ty, sa as u32, sb as u32, sc as u32, sd as u32, regs)
                .replace(&format!(".f32.{ty}.{ty}.f32"), ".f32.f32")
        } else {
            wmma_kernel(&shape, ty, sa as u32, sb as u32, sc as u32, sd as u32, regs)
        };
        let out = run(
            &ptx,
            "wm",
            32,
            &[
                bytes16(&a),
                bytes16(&b),
                bytes32(&c.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
                vec![0xEE; n * sd * 4],
            ],
        )
        .unwrap_or_else(|e| panic!("{shape}.{ty}: {e}"));
        let am: Vec<f32> = (0..m * k).map(|i| to_f32(a[(i / k) * sa + i % k], bf)).collect();
        let bm: Vec<f32> = (0..k * n).map(|i| to_f32(b[(i % n) * sb + i / n], bf)).collect();
        let cm: Vec<f32> = (0..m * n).map(|i| c[(i / n) * sc + i % n]).collect();
        let dm = mac(m, n, k, &am, &bm, &cm);
        let got = words(&out[3]);
        for col in 0..n {
            for row in 0..sd {
                let v = got[col * sd + row];
                if row < m {
                    assert_eq!(v, dm[row * n + col].to_bits(), "{shape}.{ty}: D[{row}][{col}]");
                } else {
                    assert_eq!(v, 0xEEEE_EEEE, "{shape}.{ty}: padding at column {col}, row {row} written");
                }
            }
        }
    }
}

fn wmma_f32_kernel(setup: &str) -> String {
    format!(
        "{HEADER}
.visible .entry wm(.param .u64 pa, .param .u64 pb)
{{
    .reg .f32 %c<8>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    mov.u32 %r1, %tid.x;
{setup}
    wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}}, [%rd1], 16;
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd2], {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}}, 16;
    ret;
}}
"
    )
}

#[test]
fn wmma_accumulator_round_trip_and_errors() {
    let c: Vec<u32> = (0..256u32).map(|i| (i as f32 * 0.25 - 7.0).to_bits()).collect();
    let buffers = [bytes32(&c), vec![0; 1024 + 64]];
    // a plain load/store round trip
    let out = run(&wmma_f32_kernel(""), "wm", 32, &buffers).unwrap();
    assert_eq!(words(&out[1])[..256], c[..]);
    // a partial warp
    let e = run(&wmma_f32_kernel(""), "wm", 16, &buffers).unwrap_err();
    assert!(matches!(&e.kind, ErrorKind::Invalid(m) if m.contains("16 of the 32 lanes")), "partial warp: {e}");
    assert!(e.location.line.is_some() && e.location.instruction.as_deref().unwrap_or("").contains("wmma.load.c"));
    // a misaligned base (the fragment is 32 bytes)
    let e = run(&wmma_f32_kernel("    add.s64 %rd2, %rd2, 16;"), "wm", 32, &buffers).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Misaligned { size: 32, .. }), "misaligned: {e}");
    // a different address in each lane
    let setup = "    mul.wide.u32 %rd3, %r1, 32;\n    add.s64 %rd1, %rd1, %rd3;";
    let e = run(&wmma_f32_kernel(setup), "wm", 32, &buffers).unwrap_err();
    assert!(matches!(&e.kind, ErrorKind::Invalid(m) if m.contains("same in every lane")), "non-uniform: {e}");
    // out of bounds: the source has 256 floats, a stride of 32 reads past it
    let e = run(&wmma_f32_kernel("").replace("[%rd1], 16;", "[%rd1], 32;"), "wm", 32, &buffers).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::OutOfBounds { .. }), "out of bounds: {e}");
}
