//! Benchmarks of lockstep's execution engines (issue 6): the JIT against the emulator, against hand-written
//! Rust versions of the same kernels ([`native`]), its compile time over the corpus, and its scaling with
//! worker threads.
//!
//! A [`Workload`] is one kernel at one problem size: deterministic inputs, a launch shape, and the expected
//! output, computed by the [`native`] version. [`Workload::run_backend`] loads the kernel on any
//! [`device::Backend`], launches it once to warm up (the JIT compiles then), then times launches only (module
//! loading and the resetting of buffers between launches are outside the clock) and checks the output of the
//! last one. [`Workload::run_native`] times the native version the same way. [`compile_times`] compiles every
//! kernel of every PTX file under a directory with the JIT.
//!
//! The driver is `examples/engines.rs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use device::{Backend, DeviceMemory, DevicePtr, Dim3, ExecError, Launch, LaunchConfig, LoadedModule, ParamBuffer};
use serde::Serialize;

pub mod native;

use native::Pool;

/// The PTX of `corpus/cuda/workloads.cu` the benchmarks run (nvcc -O3, sm_80).
pub const WORKLOADS_PTX: &str = include_str!("../../../corpus/ptx/workloads/workloads.sm_80.O3.ptx");
/// The hand-written ALU-heavy kernel (its CUDA equivalent is in the file's header comment).
pub const ALU_PTX: &str = include_str!("../kernels/alu_loop.ptx");
/// Loop iterations per thread of `alu_loop`.
pub const ALU_ITERS: u32 = 256;
/// Threads per block of the 1-D kernels.
pub const BLOCK: u32 = 256;
/// Input bytes per thread of `histogram256` (its grid-stride loop runs this many times).
pub const HISTOGRAM_PER_THREAD: usize = 16;

/// A benchmark kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum Kernel {
    VectorAdd,
    Saxpy,
    ReduceTree,
    MatmulTiled16,
    Histogram256,
    Stencil1d,
    /// The ALU-heavy kernel of `kernels/alu_loop.ptx`, for the JIT-vs-emulator figure.
    AluLoop,
}

impl From<Kernel> for &'static str {
    fn from(k: Kernel) -> &'static str {
        k.name()
    }
}

impl Kernel {
    /// The six workloads of issue 6 (the geometric mean of JIT/native is over these).
    pub const WORKLOADS: [Kernel; 6] = [
        Kernel::VectorAdd,
        Kernel::Saxpy,
        Kernel::ReduceTree,
        Kernel::MatmulTiled16,
        Kernel::Histogram256,
        Kernel::Stencil1d,
    ];
    pub const ALL: [Kernel; 7] = [
        Kernel::VectorAdd,
        Kernel::Saxpy,
        Kernel::ReduceTree,
        Kernel::MatmulTiled16,
        Kernel::Histogram256,
        Kernel::Stencil1d,
        Kernel::AluLoop,
    ];

    /// The kernel's name in its PTX.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::VectorAdd => "vector_add",
            Kernel::Saxpy => "saxpy",
            Kernel::ReduceTree => "reduce_tree",
            Kernel::MatmulTiled16 => "matmul_tiled16",
            Kernel::Histogram256 => "histogram256",
            Kernel::Stencil1d => "stencil_1d",
            Kernel::AluLoop => "alu_loop",
        }
    }

    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The PTX text that defines the kernel.
    pub fn ptx(self) -> &'static str {
        match self {
            Kernel::AluLoop => ALU_PTX,
            _ => WORKLOADS_PTX,
        }
    }

    /// Parses, lowers and verifies [`Kernel::ptx`].
    pub fn module(self) -> Result<ir::Module, String> {
        ir::compile(self.ptx()).map_err(|d| format!("{} diagnostics, first: {:?}", d.len(), d.first()))
    }

    /// Units of work of a problem of `size` (elements; multiply-adds for the matrix product; loop iterations
    /// for `alu_loop`): times are compared across sizes per unit of work.
    pub fn work(self, size: usize) -> f64 {
        match self {
            Kernel::MatmulTiled16 => (size as f64).powi(3),
            Kernel::AluLoop => size as f64 * f64::from(ALU_ITERS),
            _ => size as f64,
        }
    }

    /// The problem of `size`, in words.
    pub fn describe_size(self, size: usize) -> String {
        match self {
            Kernel::MatmulTiled16 => format!("{size}x{size}x{size}"),
            Kernel::AluLoop => format!("{} thr x {ALU_ITERS}", human(size)),
            Kernel::Histogram256 => format!("{} B", human(size)),
            _ => human(size),
        }
    }
}

/// `1048576` → `1Mi`, `65536` → `64Ki`, `1000` → `1000`.
fn human(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}Mi", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{}Ki", n >> 10)
    } else {
        n.to_string()
    }
}

/// A small deterministic generator (SplitMix64) for the inputs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[lo, hi)`.
    pub fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u32() >> 8) as f32 / 16_777_216.0;
        lo + (hi - lo) * unit
    }

    pub fn vec_f32(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32(lo, hi)).collect()
    }
}

/// A kernel argument as the device sees it.
#[derive(Clone, Debug)]
enum DeviceArg {
    Scalar(Vec<u8>),
    Buffer(Vec<u8>),
}

/// The inputs of one problem.
#[derive(Clone, Debug)]
enum Data {
    VectorAdd { a: Vec<f32>, b: Vec<f32> },
    Saxpy { alpha: f32, x: Vec<f32>, y: Vec<f32> },
    ReduceTree { input: Vec<f32> },
    Matmul { a: Vec<f32>, b: Vec<f32>, m: usize, n: usize, k: usize },
    Histogram { data: Vec<u8> },
    Stencil { input: Vec<f32> },
    Alu { n: usize },
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// How many times to launch, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct TimingOptions {
    /// Keep launching until the timed launches add up to this much (and [`TimingOptions::min_reps`] ran).
    pub min_time: Duration,
    pub min_reps: usize,
    pub max_reps: usize,
}

impl Default for TimingOptions {
    fn default() -> TimingOptions {
        TimingOptions { min_time: Duration::from_millis(300), min_reps: 3, max_reps: 50 }
    }
}

/// The timed launches of one engine on one workload.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// `native`, `emu`, `jit`.
    pub engine: String,
    /// Worker threads (the emulator uses one).
    pub threads: usize,
    /// Timed launches (after one untimed warm-up launch).
    pub reps: usize,
    /// The fastest launch, in seconds.
    pub best_s: f64,
    /// The median launch, in seconds.
    pub median_s: f64,
    /// Units of work of the problem ([`Kernel::work`]).
    pub work: f64,
}

impl Measurement {
    fn new(engine: &str, threads: usize, mut times: Vec<Duration>, work: f64) -> Measurement {
        times.sort();
        let best = times.first().copied().unwrap_or_default();
        let median = times.get(times.len() / 2).copied().unwrap_or_default();
        Measurement {
            engine: engine.to_string(),
            threads,
            reps: times.len(),
            best_s: best.as_secs_f64(),
            median_s: median.as_secs_f64(),
            work,
        }
    }

    /// Seconds per unit of work of the fastest launch.
    pub fn best_per_work(&self) -> f64 {
        self.best_s / self.work.max(1.0)
    }
}

/// Why a workload produced no [`Measurement`].
#[derive(Clone, Debug)]
pub enum BenchError {
    /// The PTX did not compile, or its variables could not be placed.
    Load(String),
    /// The module has no kernel of that name.
    NoKernel(String),
    /// The backend refused the kernel (`check_supported`).
    Unsupported(ExecError),
    /// The launch failed.
    Exec(ExecError),
    /// The output differs from the native result.
    Mismatch(String),
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchError::Load(m) => write!(f, "loading the module: {m}"),
            BenchError::NoKernel(k) => write!(f, "the module has no kernel `{k}`"),
            BenchError::Unsupported(e) => write!(f, "unsupported: {e}"),
            BenchError::Exec(e) => write!(f, "launch failed: {e}"),
            BenchError::Mismatch(m) => write!(f, "wrong output: {m}"),
        }
    }
}

impl std::error::Error for BenchError {}

/// Launches `run` once untimed, then `reset` + timed `run` until `opts` is satisfied.
fn time_reps<S, E>(
    opts: &TimingOptions,
    state: &mut S,
    mut reset: impl FnMut(&mut S),
    mut run: impl FnMut(&mut S) -> Result<(), E>,
) -> Result<Vec<Duration>, E> {
    reset(state);
    run(state)?;
    let mut times = Vec::new();
    let mut total = Duration::ZERO;
    while times.len() < opts.max_reps.max(1) && (times.len() < opts.min_reps.max(1) || total < opts.min_time) {
        reset(state);
        let start = Instant::now();
        run(state)?;
        let t = start.elapsed();
        total += t;
        times.push(t);
    }
    Ok(times)
}

/// [`time_reps`] for code that cannot fail.
fn time_plain<S>(
    opts: &TimingOptions,
    state: &mut S,
    reset: impl FnMut(&mut S),
    mut run: impl FnMut(&mut S),
) -> Vec<Duration> {
    match time_reps::<S, std::convert::Infallible>(opts, state, reset, |s| {
        run(s);
        Ok(())
    }) {
        Ok(times) => times,
        Err(never) => match never {},
    }
}

/// One kernel at one problem size, with its expected output.
#[derive(Clone, Debug)]
pub struct Workload {
    pub kernel: Kernel,
    pub size: usize,
    pub config: LaunchConfig,
    data: Data,
    args: Vec<DeviceArg>,
    /// The argument holding the result.
    output: usize,
    /// The native result (bytes of the output buffer).
    expected: Vec<u8>,
    /// Per-element absolute tolerance of an `f32` result (`None`: bit-exact).
    tolerance: Option<Vec<f32>>,
}

impl Workload {
    /// Builds the inputs of `kernel` at `size` ([`Kernel::work`] says what the size counts) and computes the
    /// expected result with the native version on `pool`.
    pub fn new(kernel: Kernel, size: usize, pool: &Pool) -> Workload {
        let mut rng = Rng::new(0x6c6f_636b ^ kernel as u64);
        let linear = |n: usize| LaunchConfig {
            grid: Dim3::new(n.div_ceil(BLOCK as usize).max(1) as u32, 1, 1),
            block: Dim3::new(BLOCK, 1, 1),
            dynamic_shared: 0,
        };
        let n = size;
        let (data, config, args, output) = match kernel {
            Kernel::VectorAdd => {
                let (a, b) = (rng.vec_f32(n, -100.0, 100.0), rng.vec_f32(n, -100.0, 100.0));
                let args = vec![
                    DeviceArg::Buffer(f32_bytes(&a)),
                    DeviceArg::Buffer(f32_bytes(&b)),
                    DeviceArg::Buffer(vec![0; n * 4]),
                    DeviceArg::Scalar((n as i32).to_le_bytes().to_vec()),
                ];
                (Data::VectorAdd { a, b }, linear(n), args, 2)
            }
            Kernel::Saxpy => {
                let alpha = 1.7f32;
                let (x, y) = (rng.vec_f32(n, -10.0, 10.0), rng.vec_f32(n, -10.0, 10.0));
                let args = vec![
                    DeviceArg::Scalar((n as i32).to_le_bytes().to_vec()),
                    DeviceArg::Scalar(alpha.to_le_bytes().to_vec()),
                    DeviceArg::Buffer(f32_bytes(&x)),
                    DeviceArg::Buffer(f32_bytes(&y)),
                ];
                (Data::Saxpy { alpha, x, y }, linear(n), args, 3)
            }
            Kernel::ReduceTree => {
                let input = rng.vec_f32(n, -1.0, 1.0);
                let blocks = n.div_ceil(BLOCK as usize);
                let args = vec![
                    DeviceArg::Buffer(f32_bytes(&input)),
                    DeviceArg::Buffer(vec![0; blocks * 4]),
                    DeviceArg::Scalar((n as i32).to_le_bytes().to_vec()),
                ];
                let config = LaunchConfig { dynamic_shared: BLOCK * 4, ..linear(n) };
                (Data::ReduceTree { input }, config, args, 1)
            }
            Kernel::MatmulTiled16 => {
                let (m, n, k) = (size, size, size);
                let (a, b) = (rng.vec_f32(m * k, -1.0, 1.0), rng.vec_f32(k * n, -1.0, 1.0));
                let args = vec![
                    DeviceArg::Buffer(f32_bytes(&a)),
                    DeviceArg::Buffer(f32_bytes(&b)),
                    DeviceArg::Buffer(vec![0; m * n * 4]),
                    DeviceArg::Scalar((m as i32).to_le_bytes().to_vec()),
                    DeviceArg::Scalar((n as i32).to_le_bytes().to_vec()),
                    DeviceArg::Scalar((k as i32).to_le_bytes().to_vec()),
                ];
                let t = native::TILE;
                let config = LaunchConfig {
                    grid: Dim3::new(n.div_ceil(t).max(1) as u32, m.div_ceil(t).max(1) as u32, 1),
                    block: Dim3::new(t as u32, t as u32, 1),
                    dynamic_shared: 0,
                };
                (Data::Matmul { a, b, m, n, k }, config, args, 2)
            }
            Kernel::Histogram256 => {
                // Skewed: a third of the bytes hit four bins (contended atomics), the rest are uniform.
                let data: Vec<u8> = (0..n)
                    .map(|i| if i % 3 == 0 { (rng.next_u32() % 4) as u8 } else { rng.next_u32() as u8 })
                    .collect();
                let args = vec![
                    DeviceArg::Buffer(data.clone()),
                    DeviceArg::Buffer(vec![0; 256 * 4]),
                    DeviceArg::Scalar((n as i32).to_le_bytes().to_vec()),
                ];
                let blocks = n.div_ceil(BLOCK as usize * HISTOGRAM_PER_THREAD).max(1);
                let config = LaunchConfig { grid: Dim3::new(blocks as u32, 1, 1), ..linear(n) };
                (Data::Histogram { data }, config, args, 1)
            }
            Kernel::Stencil1d => {
                let input = rng.vec_f32(n, -5.0, 5.0);
                let args = vec![
                    DeviceArg::Buffer(f32_bytes(&input)),
                    DeviceArg::Buffer(vec![0; n * 4]),
                    DeviceArg::Scalar((n as i32).to_le_bytes().to_vec()),
                ];
                (Data::Stencil { input }, linear(n), args, 1)
            }
            Kernel::AluLoop => {
                let args = vec![
                    DeviceArg::Buffer(vec![0; n * 4]),
                    DeviceArg::Scalar((n as u32).to_le_bytes().to_vec()),
                    DeviceArg::Scalar(ALU_ITERS.to_le_bytes().to_vec()),
                ];
                (Data::Alu { n }, linear(n), args, 0)
            }
        };
        let mut w = Workload { kernel, size, config, data, args, output, expected: Vec::new(), tolerance: None };
        w.expected = w.native_output(pool);
        w.tolerance = w.tolerances(pool);
        w
    }

    /// Units of work ([`Kernel::work`]).
    pub fn work(&self) -> f64 {
        self.kernel.work(self.size)
    }

    /// The native result, computed once.
    fn native_output(&self, pool: &Pool) -> Vec<u8> {
        let block = BLOCK as usize;
        match &self.data {
            Data::VectorAdd { a, b } => {
                let mut c = vec![0.0; a.len()];
                native::vector_add(pool, a, b, &mut c, block);
                f32_bytes(&c)
            }
            Data::Saxpy { alpha, x, y } => {
                let mut y = y.clone();
                native::saxpy(pool, *alpha, x, &mut y, block);
                f32_bytes(&y)
            }
            Data::ReduceTree { input } => {
                let mut partial = vec![0.0; input.len().div_ceil(block)];
                native::reduce_tree(pool, input, &mut partial, block);
                f32_bytes(&partial)
            }
            Data::Matmul { a, b, m, n, k } => {
                let mut c = vec![0.0; m * n];
                native::matmul_tiled16(pool, a, b, &mut c, *m, *n, *k);
                f32_bytes(&c)
            }
            Data::Histogram { data } => {
                let hist: [AtomicU32; 256] = std::array::from_fn(|_| AtomicU32::new(0));
                native::histogram256(pool, data, &hist, self.config.grid.x as usize);
                u32_bytes(&hist.map(AtomicU32::into_inner))
            }
            Data::Stencil { input } => {
                let mut out = vec![0.0; input.len()];
                native::stencil_1d(pool, input, &mut out, block);
                f32_bytes(&out)
            }
            Data::Alu { n } => {
                let mut out = vec![0; *n];
                native::alu_loop(pool, &mut out, ALU_ITERS, block);
                u32_bytes(&out)
            }
        }
    }

    /// Where the kernel's `fma` and the native multiply-add may round differently: per element, twice the
    /// standard bound `k u sum |a_i b_i|` on each one's error.
    fn tolerances(&self, pool: &Pool) -> Option<Vec<f32>> {
        const U: f32 = f32::EPSILON / 2.0;
        match &self.data {
            Data::Saxpy { alpha, x, y } => {
                Some(x.iter().zip(y).map(|(x, y)| 4.0 * U * ((alpha * x).abs() + y.abs())).collect())
            }
            Data::Matmul { a, b, m, n, k } => {
                let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<_>>();
                let mut bound = vec![0.0; m * n];
                native::matmul_tiled16(pool, &abs(a), &abs(b), &mut bound, *m, *n, *k);
                let terms = (k.div_ceil(native::TILE) * native::TILE + 1) as f32;
                Some(bound.into_iter().map(|s| 2.02 * terms * U * s).collect())
            }
            _ => None,
        }
    }

    /// Checks an output buffer against the native result.
    pub fn verify(&self, got: &[u8]) -> Result<(), BenchError> {
        if got.len() != self.expected.len() {
            return Err(BenchError::Mismatch(format!("{} bytes, expected {}", got.len(), self.expected.len())));
        }
        let mut bad = Vec::new();
        match &self.tolerance {
            None => {
                for (i, (g, e)) in got.chunks_exact(4).zip(self.expected.chunks_exact(4)).enumerate() {
                    if g != e {
                        bad.push((i, format!("{:02x?} (expected {:02x?})", g, e)));
                    }
                }
            }
            Some(tol) => {
                for (i, ((g, e), t)) in f32s(got).zip(f32s(&self.expected)).zip(tol).enumerate() {
                    if !((g - e).abs() <= *t || g.to_bits() == e.to_bits()) {
                        bad.push((i, format!("{g} (expected {e} +- {t})")));
                    }
                }
            }
        }
        match bad.first() {
            None => Ok(()),
            Some((i, what)) => Err(BenchError::Mismatch(format!(
                "{} of {} elements differ; element {i} is {what}",
                bad.len(),
                self.expected.len() / 4
            ))),
        }
    }

    /// Loads the kernel on `backend`, launches it once untimed, then times launches (resetting the buffers
    /// the kernel writes before each one, outside the clock) and checks the last output.
    pub fn run_backend(
        &self,
        backend: &mut dyn Backend,
        threads: usize,
        opts: &TimingOptions,
    ) -> Result<Measurement, BenchError> {
        let module = self.kernel.module().map_err(BenchError::Load)?;
        self.run_backend_on(backend, &module, threads, opts)
    }

    /// [`Workload::run_backend`] with the module already compiled (from [`Kernel::module`]).
    pub fn run_backend_on(
        &self,
        backend: &mut dyn Backend,
        module: &ir::Module,
        threads: usize,
        opts: &TimingOptions,
    ) -> Result<Measurement, BenchError> {
        let mut memory = DeviceMemory::new();
        let loaded = LoadedModule::load(module.clone(), &mut memory).map_err(BenchError::Load)?;
        let name = self.kernel.name();
        let kernel = loaded.module.function(name).ok_or_else(|| BenchError::NoKernel(name.to_string()))?;
        backend.check_supported(&loaded, kernel).map_err(BenchError::Unsupported)?;
        let mut params = ParamBuffer::for_kernel(&loaded.module.functions[kernel]);
        let mut buffers: Vec<(DevicePtr, &[u8])> = Vec::new();
        let mut output = 0;
        for (i, arg) in self.args.iter().enumerate() {
            let bytes = match arg {
                DeviceArg::Scalar(b) => b.clone(),
                DeviceArg::Buffer(b) => {
                    let ptr = memory.alloc_bytes(b, format!("argument {i}"));
                    if i == self.output {
                        output = ptr;
                    }
                    buffers.push((ptr, b));
                    ptr.to_le_bytes().to_vec()
                }
            };
            params.set(i, &bytes).map_err(|m| BenchError::Load(format!("parameter {i}: {m}")))?;
        }
        let launch = Launch { module: &loaded, kernel, config: self.config, params: &params, collect_stats: false };
        // Only the result buffer is written by these kernels (saxpy's y is both input and result).
        let initial = buffers.iter().find(|(p, _)| *p == output).map(|(_, b)| *b).unwrap_or(&[]);
        let times = time_reps(
            opts,
            &mut memory,
            |memory| {
                if let Some(bytes) = memory.bytes_mut(output) {
                    bytes.copy_from_slice(initial);
                }
            },
            |memory| backend.launch(&launch, memory, &mut std::io::sink()).map(|_| ()).map_err(BenchError::Exec),
        )?;
        self.verify(memory.bytes(output).unwrap_or(&[]))?;
        Ok(Measurement::new(backend.name(), threads, times, self.work()))
    }

    /// Times the native version on `pool` the same way (one untimed run, outputs reset outside the clock)
    /// and checks its output.
    pub fn run_native(&self, pool: &Pool, opts: &TimingOptions) -> Result<Measurement, BenchError> {
        let block = BLOCK as usize;
        let (times, out) = match &self.data {
            Data::VectorAdd { a, b } => {
                let mut c = vec![0.0; a.len()];
                let t = time_plain(opts, &mut c, |_| {}, |c| native::vector_add(pool, a, b, c, block));
                (t, f32_bytes(&c))
            }
            Data::Saxpy { alpha, x, y } => {
                let mut out = y.clone();
                let t = time_plain(
                    opts,
                    &mut out,
                    |out| out.copy_from_slice(y),
                    |out| native::saxpy(pool, *alpha, x, out, block),
                );
                (t, f32_bytes(&out))
            }
            Data::ReduceTree { input } => {
                let mut partial = vec![0.0; input.len().div_ceil(block)];
                let t = time_plain(opts, &mut partial, |_| {}, |p| native::reduce_tree(pool, input, p, block));
                (t, f32_bytes(&partial))
            }
            Data::Matmul { a, b, m, n, k } => {
                let mut c = vec![0.0; m * n];
                let t = time_plain(opts, &mut c, |_| {}, |c| native::matmul_tiled16(pool, a, b, c, *m, *n, *k));
                (t, f32_bytes(&c))
            }
            Data::Histogram { data } => {
                let mut hist: [AtomicU32; 256] = std::array::from_fn(|_| AtomicU32::new(0));
                let blocks = self.config.grid.x as usize;
                let t = time_plain(
                    opts,
                    &mut hist,
                    |h| h.iter().for_each(|b| b.store(0, Ordering::Relaxed)),
                    |h| native::histogram256(pool, data, h, blocks),
                );
                (t, u32_bytes(&hist.map(AtomicU32::into_inner)))
            }
            Data::Stencil { input } => {
                let mut out = vec![0.0; input.len()];
                let t = time_plain(opts, &mut out, |_| {}, |o| native::stencil_1d(pool, input, o, block));
                (t, f32_bytes(&out))
            }
            Data::Alu { n } => {
                let mut out = vec![0; *n];
                let t = time_plain(opts, &mut out, |_| {}, |o| native::alu_loop(pool, o, ALU_ITERS, block));
                (t, u32_bytes(&out))
            }
        };
        self.verify(&out)?;
        Ok(Measurement::new("native", pool.threads(), times, self.work()))
    }
}

/// A fresh emulator.
pub fn emulator() -> Box<dyn Backend> {
    Box::new(emu::Emulator::new())
}

/// A fresh JIT with `threads` workers, the default schedule, no checks and no disk cache.
pub fn jit(threads: usize) -> jit::Jit {
    jit::Jit::new(jit::Options { threads, ..jit::Options::default() })
}

/// Every `.ptx` file under `root`, sorted.
pub fn ptx_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "ptx") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// One kernel the JIT could not compile.
#[derive(Clone, Debug, Serialize)]
pub struct CompileFailure {
    pub file: String,
    pub kernel: String,
    pub error: String,
}

/// JIT compile times over a corpus.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CompileTimes {
    /// PTX files found.
    pub files: usize,
    /// Files that did not parse, lower, verify or load (the corpus's deliberately bad examples).
    pub unloadable: Vec<String>,
    /// Kernels attempted.
    pub kernels: usize,
    /// Compile time of each kernel compiled, in seconds, sorted.
    pub times_s: Vec<f64>,
    /// Kernels the JIT refused or failed on.
    pub failures: Vec<CompileFailure>,
}

impl CompileTimes {
    /// The `p`-th percentile (0 to 100, nearest rank) of the compile times, in seconds.
    pub fn percentile_s(&self, p: f64) -> Option<f64> {
        percentile(&self.times_s, p)
    }
}

/// The nearest-rank `p`-th percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Compiles every kernel of every PTX file in `files` with a fresh JIT per file (so nothing is cached
/// across files) and collects the compile times the JIT reports.
pub fn compile_times(files: &[PathBuf], root: &Path) -> CompileTimes {
    let mut out = CompileTimes { files: files.len(), ..CompileTimes::default() };
    for path in files {
        let shown = path.strip_prefix(root).unwrap_or(path).display().to_string();
        let module = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| ir::compile(&text).map_err(|d| format!("{} diagnostics", d.len())))
            .and_then(|module| {
                let mut memory = DeviceMemory::new();
                LoadedModule::load(module, &mut memory).map(|m| (m, memory))
            });
        let (loaded, _memory) = match module {
            Ok(m) => m,
            Err(_) => {
                out.unloadable.push(shown);
                continue;
            }
        };
        let jit = jit(1);
        let kernels: Vec<_> = loaded.module.kernels().map(|(id, f)| (id, f.name.clone())).collect();
        for (id, name) in kernels {
            out.kernels += 1;
            match jit.compile_kernel(&loaded, id) {
                Ok(t) => out.times_s.push(t.as_secs_f64()),
                Err(e) => out.failures.push(CompileFailure { file: shown.clone(), kernel: name, error: e.to_string() }),
            }
        }
    }
    out.times_s.sort_by(f64::total_cmp);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> TimingOptions {
        TimingOptions { min_time: Duration::ZERO, min_reps: 1, max_reps: 1 }
    }

    /// Every kernel on the emulator at a small size agrees with the native version.
    #[test]
    fn emulator_matches_native() {
        let pool = Pool::new(2);
        for kernel in Kernel::ALL {
            let size = match kernel {
                Kernel::MatmulTiled16 => 24,
                Kernel::AluLoop => 100,
                _ => 1000,
            };
            let w = Workload::new(kernel, size, &pool);
            let m = w.run_backend(&mut *emulator(), 1, &quick()).unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
            assert_eq!(m.reps, 1);
            w.run_native(&pool, &quick()).unwrap();
        }
    }

    /// Every kernel the JIT accepts agrees with the native version, on 1 and 2 workers.
    #[test]
    fn jit_matches_native_where_supported() {
        let pool = Pool::new(2);
        for kernel in Kernel::ALL {
            let w = Workload::new(kernel, if kernel == Kernel::MatmulTiled16 { 40 } else { 1500 }, &pool);
            for threads in [1, 2] {
                match w.run_backend(&mut jit(threads), threads, &quick()) {
                    Ok(_) | Err(BenchError::Unsupported(_)) => {}
                    Err(e) => panic!("{} on the JIT with {threads} threads: {e}", kernel.name()),
                }
            }
        }
    }

    #[test]
    fn verify_catches_wrong_output() {
        let pool = Pool::new(1);
        for kernel in [Kernel::VectorAdd, Kernel::MatmulTiled16, Kernel::Histogram256] {
            let w = Workload::new(kernel, 48, &pool);
            let mut bytes = w.expected.clone();
            assert!(w.verify(&bytes).is_ok());
            bytes[4 * 7 + 2] ^= 0x40;
            assert!(matches!(w.verify(&bytes), Err(BenchError::Mismatch(_))), "{}", kernel.name());
        }
    }

    #[test]
    fn percentiles() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(5.0));
        assert_eq!(percentile(&v, 90.0), Some(9.0));
        assert_eq!(percentile(&v, 100.0), Some(10.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn every_corpus_file_is_found() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx");
        let files = ptx_files(&root).unwrap();
        assert!(files.len() >= 300, "{} files", files.len());
        assert!(files.iter().any(|f| f.ends_with("workloads/workloads.sm_80.O3.ptx")));
    }
}
