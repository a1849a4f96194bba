//! The JIT's vector path (four threads at a time): the benchmark kernels take it, and every output is
//! bit-identical to the emulator's and to the scalar JIT's, with partial groups at the end of the grid,
//! CTA sizes that are not multiples of 4 (scalar CTAs), groups that diverge, gathers and guarded stores.

use std::path::Path;

mod common;

use common::Arg;
use device::{Backend, DeviceMemory, Dim3, LoadedModule};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn workloads() -> String {
    std::fs::read_to_string(root().join("corpus/ptx/workloads/workloads.sm_80.O3.ptx")).unwrap()
}

fn alu_loop() -> String {
    std::fs::read_to_string(root().join("crates/bench/kernels/alu_loop.ptx")).unwrap()
}

fn jit(vectorize: bool) -> jit::Jit {
    jit::Jit::new(jit::Options { threads: 2, vectorize, ..jit::Options::default() })
}

/// Runs `kernel` with `shared` bytes of dynamic shared memory; returns every buffer's final bytes, or the
/// error's text.
fn launch(
    backend: &mut dyn Backend,
    ptx: &str,
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared: u32,
    args: &[Arg],
) -> Result<Vec<Vec<u8>>, String> {
    let module = ir::compile(ptx).unwrap();
    common::launch(backend, &module, kernel, grid, block, shared, args).map(|(buffers, _)| buffers)
}

fn vectorized(ptx: &str, kernel: &str) -> Result<(), String> {
    vector_path(ptx, kernel).map(|_| ())
}

fn vector_path(ptx: &str, kernel: &str) -> Result<jit::VectorPath, String> {
    let mut memory = DeviceMemory::new();
    let loaded = LoadedModule::load(ir::compile(ptx).unwrap(), &mut memory).unwrap();
    let k = loaded.module.function(kernel).unwrap();
    jit(true).vectorized(&loaded, k).unwrap()
}

/// The vector path and the scalar JIT agree bit for bit, and both with the emulator except that any NaN equals
/// any NaN (payloads are unspecified; the emulator returns the canonical NaN, x86 propagates them).
fn agree(ptx: &str, kernel: &str, grid: u32, block: u32, args: impl Fn() -> Vec<Arg>) {
    agree_in(ptx, kernel, Dim3::new(grid, 1, 1), Dim3::new(block, 1, 1), 0, args)
}

/// [`agree`] for any launch shape and dynamic shared memory; an error must read the same on all three.
fn agree_in(ptx: &str, kernel: &str, grid: Dim3, block: Dim3, shared: u32, args: impl Fn() -> Vec<Arg>) {
    let at = format!("{kernel}, grid {grid:?}, block {block:?}");
    let want = launch(&mut emu::Emulator::new(), ptx, kernel, grid, block, shared, &args());
    let vector = launch(&mut jit(true), ptx, kernel, grid, block, shared, &args());
    let scalar = launch(&mut jit(false), ptx, kernel, grid, block, shared, &args());
    let (want, vector, scalar) = match (want, vector, scalar) {
        (Ok(w), Ok(v), Ok(s)) => (w, v, s),
        (w, v, s) => {
            let text = |r: Result<_, String>| r.err().unwrap_or_else(|| "no error".into());
            let (w, v, s) = (text(w), text(v), text(s));
            assert_eq!(v, s, "{at}: vector path and scalar JIT");
            assert_eq!(v, w, "{at}: JIT and emulator");
            return;
        }
    };
    for (b, (v, s)) in vector.iter().zip(&scalar).enumerate() {
        if let Some(i) = (0..v.len()).find(|&i| v[i] != s[i]) {
            panic!("{at}: buffer {b} byte {i}: vector path {:#x}, scalar JIT {:#x}", v[i], s[i]);
        }
    }
    let word = |b: &[u8], i: usize| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
    for (b, (v, e)) in vector.iter().zip(&want).enumerate() {
        for i in 0..v.len() / 4 {
            let (x, y) = (word(v, i), word(e, i));
            let nan = |w: u32| f32::from_bits(w).is_nan();
            assert!(x == y || (nan(x) && nan(y)), "{at}: buffer {b} word {i}: JIT {x:#x}, emulator {y:#x}");
        }
    }
}

fn lcg(seed: u32) -> impl FnMut() -> u32 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        s
    }
}

/// Floats with specials (NaN, infinities, zeros, subnormals) among ordinary values.
fn floats(n: usize, seed: u32) -> Vec<u8> {
    let mut r = lcg(seed);
    (0..n)
        .map(|i| match i % 7 {
            0 => f32::from_bits(r()),
            1 => [f32::NAN, f32::INFINITY, -0.0, 1e-40, -1e-39, f32::MAX][(r() % 6) as usize],
            _ => (r() % 2001) as f32 / 7.0 - 140.0,
        })
        .flat_map(f32::to_le_bytes)
        .collect()
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Launch shapes: (threads n, block): tails inside a group and inside a CTA, blocks that are not multiples of
/// 4 (scalar CTAs), a single partial group.
const SHAPES: [(u32, u32); 6] = [(1000, 128), (1001, 128), (1022, 64), (999, 100), (3, 32), (517, 36)];

#[test]
fn the_benchmark_kernels_are_vectorized() {
    let w = workloads();
    // No yield points: bundles of groups.
    for k in ["vector_add", "saxpy"] {
        assert_eq!(vector_path(&w, k), Ok(jit::VectorPath::Bundles), "{k}");
    }
    assert_eq!(vector_path(&alu_loop(), "alu_loop"), Ok(jit::VectorPath::Bundles));
    // Uniform control around their barriers: whole CTAs at a time.
    for k in ["reduce_tree", "matmul_tiled16", "stencil_1d"] {
        assert_eq!(vector_path(&w, k), Ok(jit::VectorPath::WholeCtas), "{k}");
    }
}

#[test]
fn vector_add_and_saxpy_agree_with_the_emulator() {
    let w = workloads();
    for (n, block) in SHAPES {
        let grid = n.div_ceil(block) + 1;
        let len = (grid * block) as usize;
        agree(&w, "vector_add", grid, block, || {
            vec![
                Arg::Buf(floats(len, 1)),
                Arg::Buf(floats(len, 2)),
                Arg::Buf(vec![0xAB; len * 4]),
                Arg::Scalar(n.to_le_bytes().to_vec()),
            ]
        });
        agree(&w, "saxpy", grid, block, || {
            vec![
                Arg::Scalar(n.to_le_bytes().to_vec()),
                Arg::Scalar(2.5f32.to_le_bytes().to_vec()),
                Arg::Buf(floats(len, 3)),
                Arg::Buf(floats(len, 4)),
            ]
        });
    }
}

#[test]
fn alu_loop_agrees_with_the_emulator() {
    let a = alu_loop();
    for (n, block) in SHAPES {
        for iters in [0u32, 1, 37] {
            let grid = n.div_ceil(block);
            agree(&a, "alu_loop", grid, block, || {
                vec![
                    Arg::Buf(vec![0xCD; (grid * block) as usize * 4]),
                    Arg::Scalar(n.to_le_bytes().to_vec()),
                    Arg::Scalar(iters.to_le_bytes().to_vec()),
                ]
            });
        }
    }
}

/// Gathers through an index (per-lane loads), a loop count that differs in one group (it diverges at the
/// loop's end), guarded arithmetic and stores (under a mask), 64-bit and narrow arithmetic.
const MIXED: &str = r#"
.version 7.8
.target sm_80
.address_size 64

.visible .entry mixed(.param .u64 p_idx, .param .u64 p_val, .param .u64 p_out, .param .u64 p_wide, .param .u32 p_n)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .f32 %f<6>;
	.reg .b64 %rd<16>;
	.reg .b16 %h<3>;

	ld.param.u64 %rd1, [p_idx];
	ld.param.u64 %rd2, [p_val];
	ld.param.u64 %rd3, [p_out];
	ld.param.u64 %rd12, [p_wide];
	ld.param.u32 %r1, [p_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 exit;
	mul.wide.u32 %rd4, %r5, 4;
	add.s64 %rd5, %rd1, %rd4;
	ld.global.u32 %r6, [%rd5];
	mul.wide.u32 %rd6, %r6, 4;
	add.s64 %rd7, %rd2, %rd6;
	ld.global.f32 %f1, [%rd7];
	shr.u32 %r7, %r5, 2;
	and.b32 %r7, %r7, 3;
	setp.eq.u32 %p3, %r4, 10;
	@%p3 add.u32 %r7, %r7, 1;
	mov.u32 %r8, 0;
	mov.f32 %f2, 0f00000000;
$loop:
	add.f32 %f2, %f2, %f1;
	add.u32 %r8, %r8, 1;
	setp.le.u32 %p2, %r8, %r7;
	@%p2 bra $loop;
	cvt.rni.s32.f32 %r9, %f2;
	cvt.u16.u32 %h1, %r9;
	mul.wide.u16 %r10, %h1, 3;
	cvt.s64.s32 %rd8, %r9;
	mul.lo.s64 %rd9, %rd8, -7;
	shr.s64 %rd9, %rd9, 3;
	xor.b64 %rd9, %rd9, %rd4;
	max.s64 %rd9, %rd9, -100;
	mul.hi.s32 %r11, %r9, -1640531535;
	selp.b32 %r12, %r10, %r11, %p2;
	add.s64 %rd10, %rd3, %rd4;
	st.global.f32 [%rd10], %f2;
	setp.lt.s32 %p3, %r9, 0;
	@%p3 st.global.u32 [%rd10], %r12;
	mul.wide.u32 %rd13, %r5, 8;
	add.s64 %rd14, %rd12, %rd13;
	st.global.u64 [%rd14], %rd9;
	ret;
}
"#;

#[test]
fn gathers_divergence_and_guarded_stores_agree_with_the_emulator() {
    assert_eq!(vectorized(MIXED, "mixed"), Ok(()));
    for (n, block) in SHAPES {
        let grid = n.div_ceil(block);
        let len = (grid * block) as usize;
        let mut r = lcg(n);
        // Mostly the identity (vector loads), sometimes elsewhere (per-lane loads).
        let idx: Vec<u32> = (0..len).map(|i| if i % 5 == 3 { r() % len as u32 } else { i as u32 }).collect();
        agree(MIXED, "mixed", grid, block, || {
            vec![
                Arg::Buf(u32s(&idx)),
                Arg::Buf(floats(len, 5)),
                Arg::Buf(vec![0; len * 4]),
                Arg::Buf(vec![0; len * 8]),
                Arg::Scalar(n.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// A branch that may follow a store keeps the kernel on the scalar path.
#[test]
fn a_branch_after_a_store_is_refused() {
    let ptx =
        MIXED.replace("\tsetp.ge.u32 %p1, %r5, %r1;", "\tst.global.u32 [%rd3], %r5;\n\tsetp.ge.u32 %p1, %r5, %r1;");
    let why = vectorized(&ptx, "mixed").unwrap_err();
    assert!(why.contains("after a store"), "{why}");
}

/// Kernels with one plain `bar.sync` take the vector path too.
#[test]
fn barrier_kernels_are_vectorized() {
    let w = workloads();
    assert_eq!(vectorized(&w, "reduce_tree"), Ok(()));
    let bad = std::fs::read_to_string(root().join("corpus/ptx/handwritten/bad_barrier_divergence.ptx")).unwrap();
    for k in ["bad_barrier_divergence", "bad_barrier_partial_warps"] {
        // Barriers behind branches that vary between threads: never whole CTAs at a time.
        assert_eq!(vector_path(&bad, k), Ok(jit::VectorPath::Groups), "{k}");
    }
}

/// `reduce_tree` (whole CTAs on the vector path): every barrier, the strides 2 and 1 and the final `tid == 0`
/// store under masks, tails of the input, blocks of one group, blocks not multiple of 4 (scalar CTAs).
#[test]
fn reduce_tree_agrees_with_the_emulator() {
    let w = workloads();
    for (n, block) in [(1000u32, 256u32), (1001, 128), (37, 4), (100, 8), (517, 64), (5, 2), (70, 32), (3, 16)] {
        let grid = n.div_ceil(block) + 1;
        let len = (grid * block) as usize;
        agree_in(&w, "reduce_tree", Dim3::new(grid, 1, 1), Dim3::new(block, 1, 1), block * 4, || {
            vec![
                Arg::Buf(floats(len, 6)),
                Arg::Buf(vec![0xAB; grid as usize * 4]),
                Arg::Scalar(n.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// A barrier only part of the CTA reaches: the same error on the vector path as in the emulator.
#[test]
fn barrier_deadlocks_read_as_in_the_emulator() {
    let bad = std::fs::read_to_string(root().join("corpus/ptx/handwritten/bad_barrier_divergence.ptx")).unwrap();
    for (k, block) in
        [("bad_barrier_divergence", 64), ("bad_barrier_divergence", 8), ("bad_barrier_partial_warps", 128)]
    {
        agree_in(&bad, k, Dim3::new(2, 1, 1), Dim3::new(block, 1, 1), 0, || {
            vec![Arg::Buf(vec![0; 2 * block as usize * 4])]
        });
    }
}

/// Branches around a load after a store run under a mask (if-conversion): `matmul_tiled16` and `stencil_1d`
/// take the vector path.
#[test]
fn guarded_loads_after_stores_are_vectorized() {
    let w = workloads();
    for k in ["matmul_tiled16", "stencil_1d"] {
        assert_eq!(vectorized(&w, k), Ok(()), "{k}");
    }
}

/// `matmul_tiled16` (16x16 blocks): tiles past the matrix edges (masked loads), sizes that are not multiples
/// of the tile, an empty inner dimension.
#[test]
fn matmul_tiled16_agrees_with_the_emulator() {
    let w = workloads();
    for (m, n, k) in [(40u32, 24u32, 20u32), (16, 16, 16), (5, 33, 7), (17, 3, 0), (1, 1, 31)] {
        let grid = Dim3::new(n.div_ceil(16), m.div_ceil(16), 1);
        agree_in(&w, "matmul_tiled16", grid, Dim3::new(16, 16, 1), 0, || {
            vec![
                Arg::Buf(floats((m * k) as usize, 7)),
                Arg::Buf(floats((k * n) as usize, 8)),
                Arg::Buf(vec![0xAB; (m * n) as usize * 4]),
                Arg::Scalar(m.to_le_bytes().to_vec()),
                Arg::Scalar(n.to_le_bytes().to_vec()),
                Arg::Scalar(k.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// `stencil_1d`: the halo threads (tid < 3: group 0 disagrees after its first shared store, nested guarded
/// loads), the ends of the input, blocks not multiple of 4.
#[test]
fn stencil_1d_agrees_with_the_emulator() {
    let w = workloads();
    for (n, block) in [(1000u32, 256u32), (1001, 128), (37, 4), (100, 8), (517, 64), (5, 6), (3, 16)] {
        let grid = n.div_ceil(block);
        let len = (grid * block) as usize;
        agree_in(&w, "stencil_1d", Dim3::new(grid, 1, 1), Dim3::new(block, 1, 1), 0, || {
            vec![Arg::Buf(floats(len, 9)), Arg::Buf(vec![0xAB; len * 4]), Arg::Scalar(n.to_le_bytes().to_vec())]
        });
    }
}

/// Addresses whose lane strides the vector path knows at compile time: a mirrored index (stride -1, per-lane
/// loads), a doubled one widened by `cvt` (stride 2), consecutive stores through `mul.wide`, a uniform
/// address; each as the emulator computes it.
const STRIDES: &str = r#"
.version 7.8
.target sm_80
.address_size 64

.visible .entry strides(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<10>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<12>;

	ld.param.u64 %rd1, [p_in];
	ld.param.u64 %rd2, [p_out];
	ld.param.u32 %r1, [p_n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %ctaid.x;
	mad.lo.s32 %r5, %r4, %r3, %r2;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra $done;
	sub.s32 %r6, %r1, %r5;
	sub.s32 %r6, %r6, 1;
	mul.wide.s32 %rd3, %r6, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.f32 %f1, [%rd4];
	shl.b32 %r7, %r5, 1;
	cvt.u64.u32 %rd5, %r7;
	shl.b64 %rd5, %rd5, 2;
	add.s64 %rd6, %rd1, %rd5;
	ld.global.f32 %f2, [%rd6+4];
	ld.global.f32 %f3, [%rd1+8];
	add.f32 %f4, %f1, %f2;
	sub.f32 %f4, %f4, %f3;
	mul.wide.u32 %rd7, %r5, 4;
	add.s64 %rd8, %rd2, %rd7;
	st.global.f32 [%rd8], %f4;
$done:
	ret;
}
"#;

#[test]
fn known_strides_agree_with_the_emulator() {
    assert_eq!(vectorized(STRIDES, "strides"), Ok(()));
    for (n, block) in SHAPES {
        let grid = n.div_ceil(block);
        let len = (grid * block) as usize;
        agree(STRIDES, "strides", grid, block, || {
            vec![
                Arg::Buf(floats(2 * len + 2, 10)),
                Arg::Buf(vec![0xAB; len * 4]),
                Arg::Scalar(n.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// A grid-stride loop: lanes leave the loop after different trip counts, with a store in every trip.
const GRID_STRIDE: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry twice(.param .u64 out, .param .u64 in, .param .u32 n)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.reg .pred %p<3>;
	.reg .f32 %f<3>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	mov.u32 %r6, %nctaid.x;
	mul.lo.s32 %r6, %r6, %r3;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra DONE;
LOOP:
	mul.wide.s32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	add.f32 %f2, %f1, %f1;
	add.s64 %rd5, %rd1, %rd3;
	st.global.f32 [%rd5], %f2;
	add.s32 %r5, %r5, %r6;
	setp.lt.s32 %p2, %r5, %r1;
	@%p2 bra LOOP;
DONE:
	ret;
}
"#;

/// The loop runs under the mask of the lanes still looping (no group leaves the vector path after a store).
#[test]
fn a_grid_stride_loop_runs_masked_and_agrees_with_the_emulator() {
    assert_eq!(vectorized(GRID_STRIDE, "twice"), Ok(()));
    for (n, block) in SHAPES {
        // Fewer threads than elements: every thread loops, some once more than others.
        let grid = n.div_ceil(block * 3).max(1);
        agree(GRID_STRIDE, "twice", grid, block, || {
            vec![
                Arg::Buf(vec![0; n as usize * 4]),
                Arg::Buf(floats(n as usize, 9)),
                Arg::Scalar(n.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// Stores, then threads at or past `k` leave, then the others store again.
const EARLY_EXIT: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry leave(.param .u64 out, .param .u32 k)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<5>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	mul.wide.u32 %rd2, %r5, 8;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r5;
	setp.ge.u32 %p1, %r4, %r1;
	@%p1 ret;
	st.global.u32 [%rd3+4], %r4;
	ret;
}
"#;

/// A guarded `ret` after a store: the lanes that stay run the rest under a mask.
#[test]
fn an_early_exit_after_a_store_runs_masked_and_agrees_with_the_emulator() {
    assert_eq!(vectorized(EARLY_EXIT, "leave"), Ok(()));
    for (k, block) in [(0u32, 32u32), (5, 32), (6, 64), (64, 64), (3, 4)] {
        agree(EARLY_EXIT, "leave", 3, block, || {
            vec![Arg::Buf(vec![0xEE; 3 * block as usize * 8]), Arg::Scalar(k.to_le_bytes().to_vec())]
        });
    }
}

/// Threads with tid.x < k add one to their shared word between two barriers; all write theirs out. In a
/// one-dimensional CTA the groups past k end the pass early; in two dimensions tid.x starts again on every
/// row, so they must not.
const TID_BELOW: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry below(.param .u64 out, .param .u32 k)
{
	.reg .b32 %r<12>;
	.reg .b64 %rd<5>;
	.reg .pred %p<2>;
	.shared .align 4 .b8 words[4096];
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %tid.y;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r5, %r3, %r4, %r2;
	shl.b32 %r6, %r5, 2;
	mov.u32 %r7, words;
	add.s32 %r8, %r7, %r6;
	st.shared.u32 [%r8], %r5;
	bar.sync 0;
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	ld.shared.u32 %r9, [%r8];
	add.s32 %r9, %r9, 1000;
	st.shared.u32 [%r8], %r9;
DONE:
	bar.sync 0;
	ld.shared.u32 %r10, [%r8];
	mov.u32 %r11, %ntid.y;
	mul.lo.s32 %r11, %r11, %r4;
	mov.u32 %r3, %ctaid.x;
	mad.lo.s32 %r11, %r3, %r11, %r5;
	mul.wide.u32 %rd2, %r11, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r10;
	ret;
}
"#;

/// CTA shapes and bounds `k` for the tid-bound kernels: one dimension with the bound inside, at 0 and past the
/// end, two and three dimensions (where tid.x starts again on every row), and a single group.
fn tid_bound_launches() -> [(Dim3, u32); 6] {
    [
        (Dim3::new(64, 1, 1), 10),
        (Dim3::new(64, 1, 1), 0),
        (Dim3::new(64, 1, 1), 64),
        (Dim3::new(8, 4, 1), 3),
        (Dim3::new(16, 2, 2), 5),
        (Dim3::new(4, 1, 1), 2),
    ]
}

#[test]
fn groups_past_a_tid_bound_end_the_pass_only_in_one_dimension() {
    assert_eq!(vector_path(TID_BELOW, "below"), Ok(jit::VectorPath::WholeCtas));
    for (block, k) in tid_bound_launches() {
        let threads = (block.x * block.y * block.z) as usize;
        agree_in(TID_BELOW, "below", Dim3::new(3, 1, 1), block, 0, || {
            vec![Arg::Buf(vec![0; 3 * threads * 4]), Arg::Scalar(k.to_le_bytes().to_vec())]
        });
    }
}

/// The other forms of an idle group's end: `@!p` of `tid.x < k` before a barrier, and `tid.x != 0` before the
/// kernel's `ret` (one thread per row writes a row's result, as a reduction's last step does). Both end the
/// pass in a one-dimensional CTA, neither in two dimensions.
const TID_FIRST: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry first(.param .u64 out, .param .u32 k)
{
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	.reg .pred %p<3>;
	.shared .align 4 .b8 words[4096];
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %tid.y;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r5, %r3, %r4, %r2;
	shl.b32 %r6, %r5, 2;
	mov.u32 %r7, words;
	add.s32 %r8, %r7, %r6;
	st.shared.u32 [%r8], %r5;
	bar.sync 0;
	setp.lt.u32 %p1, %r2, %r1;
	@!%p1 bra MID;
	ld.shared.u32 %r9, [%r8];
	add.s32 %r9, %r9, 1000;
	st.shared.u32 [%r8], %r9;
MID:
	bar.sync 0;
	mov.u32 %r11, %ntid.y;
	mul.lo.s32 %r12, %r11, %r4;
	mov.u32 %r13, %ctaid.x;
	mad.lo.s32 %r14, %r13, %r12, %r5;
	mul.wide.u32 %rd2, %r14, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.shared.u32 %r10, [%r8];
	st.global.u32 [%rd3], %r10;
	bar.sync 0;
	setp.ne.s32 %p2, %r2, 0;
	@%p2 bra END;
	ld.shared.u32 %r15, [%r8+4];
	add.s32 %r15, %r15, 7;
	mov.u32 %r9, %nctaid.x;
	mul.lo.s32 %r9, %r9, %r12;
	mad.lo.s32 %r9, %r13, %r11, %r9;
	add.s32 %r9, %r9, %r3;
	mul.wide.u32 %rd4, %r9, 4;
	add.s64 %rd5, %rd1, %rd4;
	st.global.u32 [%rd5], %r15;
END:
	ret;
}
"#;

#[test]
fn negated_and_final_tid_bounds_end_the_pass_only_in_one_dimension() {
    assert_eq!(vector_path(TID_FIRST, "first"), Ok(jit::VectorPath::WholeCtas));
    for (block, k) in tid_bound_launches() {
        let threads = (block.x * block.y * block.z) as usize;
        let rows = (block.y * block.z) as usize;
        agree_in(TID_FIRST, "first", Dim3::new(3, 1, 1), block, 0, || {
            vec![Arg::Buf(vec![0xEE; 3 * (threads + rows) * 4]), Arg::Scalar(k.to_le_bytes().to_vec())]
        });
    }
}

/// Bytes and half words, signed and unsigned, loaded into 32-bit registers: one narrow load for a whole
/// group where the lanes are consecutive and active, lane by lane where a tail group is partial or an index is
/// scattered.
const NARROW: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry narrow(.param .u64 in, .param .u64 out, .param .u32 n, .param .u32 scatter)
{
	.reg .b16 %rs<5>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<12>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	ld.param.u32 %r1, [n];
	ld.param.u32 %r2, [scatter];
	mov.u32 %r3, %tid.x;
	mov.u32 %r4, %ctaid.x;
	mov.u32 %r5, %ntid.x;
	mad.lo.s32 %r6, %r4, %r5, %r3;
	setp.ge.u32 %p1, %r6, %r1;
	@%p1 bra END;
	mul.lo.s32 %r7, %r6, %r2;
	rem.u32 %r7, %r7, %r1;
	cvt.u64.u32 %rd3, %r7;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.u8 %rs1, [%rd4];
	ld.global.s8 %rs2, [%rd4];
	mul.wide.u32 %rd5, %r7, 2;
	add.s64 %rd6, %rd1, %rd5;
	ld.global.u16 %r8, [%rd6];
	ld.global.s16 %r9, [%rd6];
	ld.global.s8 %r10, [%rd4+1];
	cvt.u32.u16 %r11, %rs1;
	cvt.s32.s16 %r12, %rs2;
	shl.b32 %r12, %r12, 8;
	add.s32 %r11, %r11, %r12;
	shl.b32 %r13, %r9, 4;
	xor.b32 %r11, %r11, %r13;
	add.s32 %r11, %r11, %r8;
	mul.lo.s32 %r10, %r10, 977;
	add.s32 %r11, %r11, %r10;
	mul.wide.u32 %rd7, %r6, 4;
	add.s64 %rd8, %rd2, %rd7;
	st.global.u32 [%rd8], %r11;
END:
	ret;
}
"#;

#[test]
fn narrow_loads_agree_with_the_emulator() {
    assert_eq!(vectorized(NARROW, "narrow"), Ok(()));
    for (n, block) in [(1000u32, 128u32), (1001, 128), (999, 100), (3, 32)] {
        for scatter in [1u32, 7] {
            let mut r = lcg(n + scatter);
            let bytes: Vec<u8> = (0..2 * n as usize + 2).map(|_| r() as u8).collect();
            agree(NARROW, "narrow", n.div_ceil(block), block, || {
                vec![
                    Arg::Buf(bytes.clone()),
                    Arg::Buf(vec![0xEE; n as usize * 4]),
                    Arg::Scalar(n.to_le_bytes().to_vec()),
                    Arg::Scalar(scatter.to_le_bytes().to_vec()),
                ]
            });
        }
    }
}

/// A range a converted branch skips, run by every lane of some groups, by some lanes of others and by none
/// of the rest: the all-lanes version of the range (no masks) and the masked one must both leave `%r5` as
/// the emulator does, the lanes that skipped the range keeping 7 (it is live after the range, so the masked
/// version blends it).
const RANGE: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry range(.param .u64 out, .param .u64 in, .param .u32 k)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<8>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	ld.param.u32 %r1, [k];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r8, %r3, %r4, %r2;
	mul.wide.u32 %rd3, %r8, 8;
	add.s64 %rd4, %rd1, %rd3;
	mul.wide.u32 %rd5, %r8, 4;
	add.s64 %rd6, %rd2, %rd5;
	mov.u32 %r5, 7;
	st.global.u32 [%rd4+4], %r5;
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra SKIP;
	ld.global.u32 %r6, [%rd6];
	add.s32 %r5, %r6, %r2;
	ld.global.u32 %r7, [%rd6+4];
	mul.lo.s32 %r5, %r5, %r7;
	st.global.u32 [%rd4+4], %r5;
SKIP:
	st.global.u32 [%rd4], %r5;
	ret;
}
"#;

#[test]
fn ranges_all_lanes_run_agree_with_the_emulator() {
    assert_eq!(vectorized(RANGE, "range"), Ok(()));
    for k in [0u32, 2, 4, 5, 8, 30, 64] {
        agree(RANGE, "range", 3, 64, || {
            vec![
                Arg::Buf(vec![0xEE; 3 * 64 * 8]),
                Arg::Buf(floats(3 * 64 + 1, k + 1)),
                Arg::Scalar(k.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// Three regions of a whole-CTA kernel: the first and last read `%tid`, the middle one does not (its groups
/// skip updating it). The last must still see every group's own thread index, in one, two and three
/// dimensions.
const TID_AGAIN: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry again(.param .u64 out)
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<5>;
	.shared .align 4 .b8 words[4096];
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %tid.z;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %ntid.y;
	mad.lo.s32 %r6, %r3, %r5, %r2;
	mad.lo.s32 %r6, %r6, %r4, %r1;
	shl.b32 %r7, %r6, 2;
	mov.u32 %r8, words;
	add.s32 %r8, %r8, %r7;
	st.shared.u32 [%r8], %r6;
	bar.sync 0;
	ld.shared.u32 %r9, [%r8];
	mul.lo.s32 %r9, %r9, 3;
	st.shared.u32 [%r8], %r9;
	bar.sync 0;
	mov.u32 %r10, %tid.x;
	mov.u32 %r11, %tid.y;
	mov.u32 %r12, %tid.z;
	mad.lo.s32 %r13, %r11, 1000, %r10;
	mad.lo.s32 %r13, %r12, 1000000, %r13;
	ld.shared.u32 %r14, [%r8];
	add.s32 %r13, %r13, %r14;
	mov.u32 %r15, %ctaid.x;
	mul.lo.s32 %r16, %r4, %r5;
	mov.u32 %r17, %ntid.z;
	mul.lo.s32 %r16, %r16, %r17;
	mad.lo.s32 %r16, %r15, %r16, %r6;
	mul.wide.u32 %rd2, %r16, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r13;
	ret;
}
"#;

#[test]
fn regions_that_skip_tid_leave_it_right_for_the_next() {
    assert_eq!(vector_path(TID_AGAIN, "again"), Ok(jit::VectorPath::WholeCtas));
    for block in [Dim3::new(64, 1, 1), Dim3::new(8, 4, 1), Dim3::new(16, 2, 2), Dim3::new(4, 1, 1)] {
        let n = 2 * block.x * block.y * block.z;
        agree_in(TID_AGAIN, "again", Dim3::new(2, 1, 1), block, 0, || vec![Arg::Buf(vec![0xEE; n as usize * 4])]);
    }
}

/// Bundles of groups (`GROUPS_AT_ONCE` groups of four): lanes that disagree at a branch in the first group of
/// a bundle, in a later one, in several and in none (the bundle stops, its groups run on alone or on the
/// scalar loop, and bundles start again after them), CTAs whose last threads make no whole bundle, and
/// partial groups.
const PAIRS: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry pairs(.param .u64 out, .param .u64 in, .param .u32 n)
{
	.reg .b32 %r<12>;
	.reg .b64 %rd<6>;
	.reg .pred %p<3>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r5, %r3, %r4, %r2;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r6, [%rd4];
	and.b32 %r7, %r6, 1;
	setp.eq.u32 %p2, %r7, 1;
	@%p2 bra ODD;
	add.s32 %r8, %r6, 7;
	bra.uni JOIN;
ODD:
	mul.lo.s32 %r8, %r6, 3;
JOIN:
	add.s32 %r9, %r8, %r2;
	add.s64 %rd5, %rd1, %rd3;
	st.global.u32 [%rd5], %r9;
DONE:
	ret;
}
"#;

#[test]
fn bundles_of_groups_agree_with_the_emulator_where_any_group_diverges() {
    assert_eq!(vector_path(PAIRS, "pairs"), Ok(jit::VectorPath::Bundles));
    for (n, block) in [(192u32, 192u32), (190, 96), (384, 128), (37, 12), (100, 20), (48, 8), (200, 36), (10, 4)] {
        let grid = n.div_ceil(block);
        let len = (grid * block) as usize;
        // Even inputs mostly, odd ones (the other way at the branch) spaced so that bundles run again between
        // them (after a bundle stops, single groups run the next 32 threads): an odd lane in the first group
        // (1), in a later one (45), groups all odd (72..80), a group mixed next to one all odd (80, 81,
        // 84..88).
        let input: Vec<u32> = (0..len as u32)
            .map(|i| match i % 96 {
                1 | 45 | 72..=81 | 84..=87 => 2 * i + 1,
                _ => 2 * i,
            })
            .collect();
        agree(PAIRS, "pairs", grid, block, || {
            vec![Arg::Buf(vec![0xEE; len * 4]), Arg::Buf(u32s(&input)), Arg::Scalar(n.to_le_bytes().to_vec())]
        });
    }
}

/// Uniform loads of a CTA's row of a table: four at consecutive offsets (served by one 16-byte load), four
/// with a store into the row between them (the loads after it must see it), four whose base register moves
/// after the first.
const UNIFORM_RUNS: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry runs(.param .u64 out, .param .u64 table, .param .u32 n)
{
	.reg .b32 %r<24>;
	.reg .b64 %rd<8>;
	.reg .pred %p<2>;
	.reg .f32 %f<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [table];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r2, 64;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	ld.global.f32 %f2, [%rd4+4];
	ld.global.f32 %f3, [%rd4+8];
	ld.global.f32 %f4, [%rd4+12];
	ld.global.u32 %r6, [%rd4+16];
	ld.global.u32 %r7, [%rd4+20];
	st.global.u32 [%rd4+24], %r6;
	ld.global.u32 %r8, [%rd4+24];
	ld.global.u32 %r9, [%rd4+28];
	ld.global.u32 %r10, [%rd4+32];
	add.s64 %rd4, %rd4, 8;
	ld.global.u32 %r11, [%rd4+36];
	ld.global.u32 %r12, [%rd4+40];
	ld.global.u32 %r13, [%rd4+44];
	add.f32 %f5, %f1, %f2;
	add.f32 %f6, %f5, %f3;
	add.f32 %f7, %f6, %f4;
	mov.b32 %r14, %f7;
	mad.lo.s32 %r15, %r14, 31, %r6;
	mad.lo.s32 %r15, %r15, 31, %r7;
	mad.lo.s32 %r15, %r15, 31, %r8;
	mad.lo.s32 %r15, %r15, 31, %r9;
	mad.lo.s32 %r15, %r15, 31, %r10;
	mad.lo.s32 %r15, %r15, 31, %r11;
	mad.lo.s32 %r15, %r15, 31, %r12;
	mad.lo.s32 %r15, %r15, 31, %r13;
	mul.wide.s32 %rd5, %r5, 4;
	add.s64 %rd6, %rd1, %rd5;
	st.global.u32 [%rd6], %r15;
DONE:
	ret;
}
"#;

#[test]
fn runs_of_uniform_loads_agree_with_the_emulator() {
    assert_eq!(vectorized(UNIFORM_RUNS, "runs"), Ok(()));
    for (n, block) in SHAPES {
        let grid = n.div_ceil(block);
        agree(UNIFORM_RUNS, "runs", grid, block, || {
            vec![
                Arg::Buf(vec![0xAB; n as usize * 4]),
                // Finite floats (a NaN's payload would differ from the emulator's in the integer mix).
                Arg::Buf((0..grid * 16 + 12).flat_map(|i| (i as f32 * 0.37 - 100.0).to_le_bytes()).collect()),
                Arg::Scalar(n.to_le_bytes().to_vec()),
            ]
        });
    }
}

/// The comparisons of a value whose lanes step by one (`tid.x + k`) with a uniform bound `u`, which the vector
/// path decides from lanes 0 and 3 as scalars where it can: every integer condition, signed and unsigned, with
/// the bound on either side, where a group's lanes wrap around past the type's maximum (`k` near 2^32 and
/// 2^31) and bounds at the extremes. `form` 0: each branch's range after a store, run as masks (any and all
/// lanes), with a guarded store (a vector store where every lane is on); 1: one branch with no store before
/// it (a plain branch that a group takes, falls through, or leaves for the scalar loop); 2: as 0 before a
/// barrier (whole-CTA mode).
fn stepping_compares(form: u8, only: Option<usize>) -> String {
    let conds: Vec<(&str, &str, bool)> = ["eq", "ne", "lt", "le", "gt", "ge"]
        .iter()
        .flat_map(|c| ["u32", "s32"].map(|t| (*c, t)))
        .flat_map(|(c, t)| [(c, t, false), (c, t, true)])
        .collect();
    let mut body = String::new();
    for (slot, (j, (c, t, swapped))) in
        conds.iter().enumerate().filter(|(j, _)| only.is_none_or(|o| o == *j)).enumerate()
    {
        let (a, b) = if *swapped { ("%r2", "%r7") } else { ("%r7", "%r2") };
        body += &format!(
            "\tadd.s64 %rd4, %rd3, {off};\n\tsetp.{c}.{t} %p1, {a}, {b};\n\t@%p1 bra L{j};\n\
             \tst.global.u32 [%rd4], {v};\nL{j}:\n",
            off = 8 * slot,
            v = j + 1
        );
        if form != 1 {
            body += &format!("\t@%p1 st.global.u32 [%rd4+4], {};\n", 100 + j);
        }
    }
    let slots = if only.is_some() { 1 } else { conds.len() };
    let first = if form == 1 { "" } else { "\tst.global.u32 [%rd3], 0;\n" };
    let end = if form == 2 { "\tbar.sync 0;\n" } else { "" };
    format!(
        r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry step(.param .u64 out, .param .u32 k, .param .u32 u)
{{
	.reg .b32 %r<10>;
	.reg .b64 %rd<6>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	ld.param.u32 %r2, [u];
	mov.u32 %r3, %tid.x;
	mov.u32 %r4, %ctaid.x;
	mov.u32 %r5, %ntid.x;
	mad.lo.s32 %r6, %r4, %r5, %r3;
	add.s32 %r7, %r3, %r1;
	mul.wide.u32 %rd2, %r6, {stride};
	add.s64 %rd3, %rd1, %rd2;
{first}{body}{end}	ret;
}}
"#,
        stride = 8 * slots
    )
}

#[test]
fn comparisons_of_stepping_values_agree_with_the_emulator() {
    let ks = [0u32, 3, u32::MAX - 3, u32::MAX - 1, i32::MAX as u32 - 3, i32::MAX as u32 - 1, i32::MAX as u32 - 5];
    let us = |k: u32| {
        [0u32, 1, 2, 5, 9, u32::MAX, u32::MAX - 1, i32::MAX as u32, 1 << 31, k.wrapping_add(2), k.wrapping_add(6)]
    };
    let run = |ptx: &str, slots: usize| {
        for k in ks {
            for u in us(k) {
                agree(ptx, "step", 2, 12, || {
                    vec![
                        Arg::Buf(vec![0xEE; 2 * 12 * 8 * slots]),
                        Arg::Scalar(k.to_le_bytes().to_vec()),
                        Arg::Scalar(u.to_le_bytes().to_vec()),
                    ]
                });
            }
        }
    };
    let masked = stepping_compares(0, None);
    assert_eq!(vector_path(&masked, "step"), Ok(jit::VectorPath::Groups));
    run(&masked, 24);
    let whole = stepping_compares(2, None);
    assert_eq!(vector_path(&whole, "step"), Ok(jit::VectorPath::WholeCtas));
    run(&whole, 24);
    for j in 0..24 {
        let plain = stepping_compares(1, Some(j));
        assert!(vector_path(&plain, "step").is_ok(), "{plain}");
        run(&plain, 1);
    }
}

/// Whole-CTA mode: a uniform register written in a loop before a branch whose idle groups end the pass (its
/// home is stored at the barrier, not after the write), across the passes of an outer loop around the
/// barrier, and read after it.
const UNIFORM_IN_LOOP: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry acc(.param .u64 out, .param .u32 k)
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<5>;
	.reg .pred %p<4>;
	.shared .align 4 .b8 words[4096];
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r2, [k];
	mov.u32 %r1, %tid.x;
	shl.b32 %r3, %r1, 2;
	mov.u32 %r4, words;
	add.s32 %r4, %r4, %r3;
	mov.u32 %r10, 5;
	mov.u32 %r12, 0;
	st.shared.u32 [%r4], %r1;
	bar.sync 0;
OUTER:
	mov.u32 %r11, 0;
INNER:
	add.s32 %r10, %r10, 3;
	add.s32 %r11, %r11, 1;
	setp.lt.u32 %p2, %r11, 4;
	@%p2 bra INNER;
	setp.ge.u32 %p1, %r1, %r2;
	@%p1 bra BAR;
	ld.shared.u32 %r5, [%r4];
	add.s32 %r5, %r5, %r10;
	st.shared.u32 [%r4], %r5;
BAR:
	bar.sync 0;
	add.s32 %r12, %r12, 1;
	setp.lt.u32 %p3, %r12, 3;
	@%p3 bra OUTER;
	ld.shared.u32 %r6, [%r4];
	mul.lo.s32 %r7, %r10, 1000;
	add.s32 %r6, %r6, %r7;
	mov.u32 %r8, %ctaid.x;
	mov.u32 %r9, %ntid.x;
	mad.lo.s32 %r8, %r8, %r9, %r1;
	mul.wide.u32 %rd2, %r8, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r6;
	ret;
}
"#;

#[test]
fn uniform_registers_written_in_loops_before_idle_ends_agree_with_the_emulator() {
    assert_eq!(vector_path(UNIFORM_IN_LOOP, "acc"), Ok(jit::VectorPath::WholeCtas));
    for (block, k) in [(64u32, 10u32), (64, 0), (64, 64), (32, 3), (8, 5), (4, 2)] {
        agree(UNIFORM_IN_LOOP, "acc", 3, block, || {
            vec![Arg::Buf(vec![0xEE; 3 * block as usize * 4]), Arg::Scalar(k.to_le_bytes().to_vec())]
        });
    }
}

/// Masks combined from comparisons of a stepping value (`tid.x + k`), of values alike in a group (`tid.y`,
/// `%ctaid.x`: groups lie within a row) and their negations, which the vector path also decides from
/// scalars: `or`, `and`, a negated guard, a uniform-only `and`, nested. `barrier`: whole-CTA mode.
fn combined_predicates(barrier: bool) -> String {
    let combos = [
        "or.pred %p3, %p1, %p2;",
        "and.pred %p3, %p1, %p2;",
        "or.pred %p3, %p2, %p1;\n\tnot.pred %p3, %p3;",
        "and.pred %p3, %p2, %p4;",
        "or.pred %p3, %p1, %p2;\n\tand.pred %p3, %p3, %p4;",
        "and.pred %p3, %p1, %p4;\n\tor.pred %p3, %p2, %p3;",
    ];
    let mut body = String::new();
    for (j, combo) in combos.iter().enumerate() {
        for neg in ["", "!"] {
            let slot = 2 * j + usize::from(!neg.is_empty());
            body += &format!(
                "\tadd.s64 %rd4, %rd3, {off};\n\t{combo}\n\t@{neg}%p3 bra L{slot};\n\
                 \tst.global.u32 [%rd4], {v};\nL{slot}:\n\t@{neg}%p3 st.global.u32 [%rd4+4], {w};\n",
                off = 8 * slot,
                v = slot + 1,
                w = slot + 100
            );
        }
    }
    let end = if barrier { "\tbar.sync 0;\n" } else { "" };
    format!(
        r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry combined(.param .u64 out, .param .u32 k, .param .u32 u, .param .u32 w)
{{
	.reg .b32 %r<16>;
	.reg .b64 %rd<6>;
	.reg .pred %p<6>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	ld.param.u32 %r2, [u];
	ld.param.u32 %r10, [w];
	mov.u32 %r3, %tid.x;
	mov.u32 %r11, %tid.y;
	mov.u32 %r12, %ntid.x;
	mov.u32 %r13, %ntid.y;
	mov.u32 %r4, %ctaid.x;
	mul.lo.s32 %r5, %r12, %r13;
	mad.lo.s32 %r6, %r11, %r12, %r3;
	mad.lo.s32 %r6, %r4, %r5, %r6;
	add.s32 %r7, %r3, %r1;
	mad.lo.s32 %r9, %r11, 3, %r4;
	setp.lt.u32 %p1, %r7, %r2;
	setp.ge.s32 %p2, %r9, %r10;
	setp.ne.s32 %p4, %r11, 1;
	mul.wide.u32 %rd2, %r6, 96;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], 0;
{body}{end}	ret;
}}
"#
    )
}

#[test]
fn combined_masks_of_stepping_and_uniform_comparisons_agree_with_the_emulator() {
    for (barrier, path) in [(false, jit::VectorPath::Groups), (true, jit::VectorPath::WholeCtas)] {
        let ptx = combined_predicates(barrier);
        assert_eq!(vector_path(&ptx, "combined"), Ok(path));
        for block in [Dim3::new(8, 3, 1), Dim3::new(12, 2, 1), Dim3::new(4, 4, 1)] {
            let threads = (2 * block.x * block.y) as usize;
            for (k, u, w) in [(0u32, 5u32, 2u32), (0, 100, 0), (u32::MAX - 5, u32::MAX, 3), (7, 3, 100), (1, 9, 1)] {
                agree_in(&ptx, "combined", Dim3::new(2, 1, 1), block, 0, || {
                    vec![
                        Arg::Buf(vec![0xEE; threads * 96]),
                        Arg::Scalar(k.to_le_bytes().to_vec()),
                        Arg::Scalar(u.to_le_bytes().to_vec()),
                        Arg::Scalar(w.to_le_bytes().to_vec()),
                    ]
                });
            }
        }
    }
}

/// Bundles of groups deciding a branch alike in each group's lanes but not across the bundle's groups (each
/// group a row of a 4-wide CTA): the groups' scalar tests combine (every group takes it, none does, or the
/// bundle stops).
const ROWS: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry rows(.param .u64 out, .param .u32 k)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<4>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %tid.y;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %ntid.y;
	mov.u32 %r6, %ctaid.x;
	mad.lo.s32 %r7, %r3, %r4, %r2;
	mul.lo.s32 %r8, %r4, %r5;
	mad.lo.s32 %r7, %r6, %r8, %r7;
	mul.wide.u32 %rd2, %r7, 4;
	add.s64 %rd3, %rd1, %rd2;
	setp.lt.u32 %p1, %r3, %r1;
	@%p1 bra SKIP;
	add.s32 %r9, %r3, 100;
	st.global.u32 [%rd3], %r9;
SKIP:
	ret;
}
"#;

#[test]
fn bundles_decide_branches_alike_in_each_group_but_not_across_groups() {
    assert_eq!(vector_path(ROWS, "rows"), Ok(jit::VectorPath::Bundles));
    for k in [0u32, 1, 3, 4, 5, 8, 40] {
        let block = Dim3::new(4, 16, 1);
        agree_in(ROWS, "rows", Dim3::new(3, 1, 1), block, 0, || {
            vec![Arg::Buf(vec![0xEE; 3 * 64 * 4]), Arg::Scalar(k.to_le_bytes().to_vec())]
        });
    }
}
