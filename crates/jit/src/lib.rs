//! The PTX JIT: Ocelot's translator with Cranelift in place of LLVM.
//!
//! A kernel is decoded with the emulator's decoder (`program`), planned for thread fusion (`plan.rs`: yield
//! points at barriers and warp collectives, registers live across them), translated to Cranelift IR
//! (`translate.rs`: one native function per kernel, a loop over the CTA's threads, and one per device
//! function), compiled and mapped executable (`compile.rs`, `code.rs`). Launches spread CTAs over a pool of
//! one worker per core (`pool.rs`) by a [`Schedule`]; each worker runs its CTAs' threads through the compiled
//! loop, meeting them at barriers and warp collectives (`exec.rs`). Rare ops call the emulator's lane
//! arithmetic (`helpers.rs`), so both engines agree bit for bit on them. Kernels without yield points, or whose
//! only yield points are counted barriers, also get a vector path where they can (`vector.rs`,
//! [`Options::vectorize`]): four consecutive threads at a time in SIMD registers, with the scalar loop for the
//! groups it leaves.
//!
//! Addresses: global, local and parameter memory are addressed by host address in every space (a generic
//! address of a local variable is its host address); shared-space addresses are offsets into the CTA's
//! shared memory, whose generic form is the host address. Unlike the emulator's address windows, pointer
//! values into local, parameter and shared memory therefore differ between the engines.

mod abi;
mod cache;
mod code;
mod compile;
mod cooperative;
mod exec;
mod fault;
mod helpers;
pub mod inline;
mod lanes;
mod plan;
mod pool;
#[cfg(test)]
mod testing;
mod translate;
mod uniform;
mod vector;

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use device::{Backend, DeviceMemory, ErrorKind, ExecError, Launch, LaunchReport, LoadedModule, Location};
use ir::FuncId;

use crate::compile::Compiled;
use crate::exec::{LaunchData, Worker};
use crate::pool::Pool;

/// Largest shared memory a CTA may use (227 KiB, as on sm_90, and as the emulator allows).
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;

/// How a kernel's vector path runs (`vector.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorPath {
    /// Groups of four threads, each from its own resume point, with the scalar loop for the groups it leaves.
    Groups,
    /// Whole CTAs, barriers included: the kernel's control flow is the same in every thread of a CTA outside
    /// the branches run as masks.
    WholeCtas,
    /// Groups as in `Groups`, in bundles of several at a time (each op emitted for every group of the
    /// bundle), for kernels without yield points; single groups where no whole bundle remains or a bundle
    /// stops.
    Bundles,
}

/// How the CTAs of a grid are spread over the worker threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Worker `w` of `W` runs the contiguous run of CTAs `[w*N/W, (w+1)*N/W)`.
    Static,
    /// Worker `w` runs CTAs `w, w+W, w+2W, ...` (Ocelot's policy). On CPUs it splits every memory stream
    /// between the workers, which the prefetchers and caches do not reward: vector_add runs about half as
    /// fast as with the other two on two workers.
    Interleaved,
    /// Workers take the next run of consecutive CTAs from a shared atomic counter (about sixteen runs per
    /// worker): the locality of `Static`, and balance when CTAs take uneven time.
    #[default]
    Dynamic,
}

/// JIT settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    pub schedule: Schedule,
    /// Check every memory access against the allocations, as the emulator does (slower).
    pub check: bool,
    /// Run eligible kernels four threads at a time in vector registers (`vector.rs`); on by default.
    pub vectorize: bool,
    /// Where compiled kernels are cached on disk; `None` keeps them in memory only.
    pub cache_dir: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options { threads: 0, schedule: Schedule::default(), check: false, vectorize: true, cache_dir: None }
    }
}

pub use cache::default_dir as default_cache_dir;

/// What one CTA left: its index, its printf output, its error.
type CtaResult = (u64, Vec<u8>, Option<ExecError>);

/// Cache key: the PTX text, the kernel, the options that change the code (checked mode, vectorization).
type Key = (u64, String, bool, bool);

/// The JIT backend.
pub struct Jit {
    options: Options,
    pool: Arc<Pool>,
    /// Each pool worker's buffers (shared and local memory, thread state), kept from launch to launch.
    workers: Vec<Mutex<Worker>>,
    /// Buffers of the CTA threads of cooperative launches (`cooperative.rs`).
    cta_workers: Mutex<Vec<Worker>>,
    isa: Option<cranelift_codegen::isa::OwnedTargetIsa>,
    cache: Mutex<HashMap<Key, Arc<Compiled>>>,
    /// Hashes of recently launched modules' PTX texts, by the text's allocation (held here, so its address
    /// names it): a launch does not hash the whole text again.
    source_hashes: Mutex<Vec<(Arc<str>, u64)>>,
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jit").field("options", &self.options).field("pool", &self.pool).finish()
    }
}

impl Default for Jit {
    fn default() -> Jit {
        Jit::new(Options::default())
    }
}

fn kernel_location(module: &LoadedModule, kernel: FuncId) -> Location {
    Location { kernel: module.module.functions[kernel].name.clone(), ..Location::default() }
}

impl Jit {
    pub fn new(options: Options) -> Jit {
        let threads = match options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Jit {
            options,
            pool: Arc::new(Pool::new(threads)),
            workers: (0..threads.max(1)).map(|_| Mutex::new(Worker::default())).collect(),
            cta_workers: Mutex::default(),
            isa: compile::isa().ok(),
            cache: Mutex::default(),
            source_hashes: Mutex::default(),
        }
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Worker threads of the pool.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    fn key(&self, module: &LoadedModule, kernel: FuncId) -> Key {
        use std::hash::{Hash, Hasher};
        let source = &module.module.source;
        let source_hash = {
            let mut known = self.source_hashes.lock().unwrap_or_else(|e| e.into_inner());
            match known.iter().find(|(s, _)| Arc::ptr_eq(s, source)) {
                Some(&(_, h)) => h,
                None => {
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    source.hash(&mut h);
                    let h = h.finish();
                    if known.len() >= 16 {
                        known.remove(0);
                    }
                    known.push((source.clone(), h));
                    h
                }
            }
        };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        source_hash.hash(&mut h);
        // Variables' addresses are part of the decoded ops the code was built from.
        module.global_addresses.hash(&mut h);
        (h.finish(), module.module.functions[kernel].name.clone(), self.options.check, self.options.vectorize)
    }

    fn compiled(&self, module: &LoadedModule, kernel: FuncId) -> Result<Arc<Compiled>, ExecError> {
        let key = self.key(module, kernel);
        if let Some(c) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(c.clone());
        }
        let c = Arc::new(self.build(module, kernel, self.options.cache_dir.as_deref())?);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        // A bound on the memory kept by long-running users (fuzzers, servers): start over when full.
        if cache.len() >= 256 {
            cache.clear();
        }
        cache.insert(key, c.clone());
        Ok(c)
    }

    /// How the kernel runs on the vector path (four threads at a time), or why it does not.
    pub fn vectorized(&self, module: &LoadedModule, kernel: FuncId) -> Result<Result<VectorPath, String>, ExecError> {
        let c = self.compiled(module, kernel)?;
        Ok(c.vector
            .as_ref()
            .map(|_| match (c.vector_whole_ctas, c.vector_bundles) {
                (true, _) => VectorPath::WholeCtas,
                (false, Some(_)) => VectorPath::Bundles,
                (false, None) => VectorPath::Groups,
            })
            .map_err(String::clone))
    }

    /// Compiles a kernel (bypassing the caches) and returns how long translation and code generation took.
    pub fn compile_kernel(&self, module: &LoadedModule, kernel: FuncId) -> Result<Duration, ExecError> {
        Ok(self.build(module, kernel, None)?.compile_time)
    }

    /// Runs the compile pipeline; what cannot be compiled is an `Unsupported` error listing why.
    fn build(
        &self,
        module: &LoadedModule,
        kernel: FuncId,
        cache_dir: Option<&std::path::Path>,
    ) -> Result<Compiled, ExecError> {
        let unsupported = |list| ExecError::new(ErrorKind::Unsupported(list), kernel_location(module, kernel));
        let isa = self
            .isa
            .as_ref()
            .ok_or_else(|| unsupported(vec!["Cranelift has no code generator for this CPU".into()]))?;
        let o = &self.options;
        compile::compile(isa, module, kernel, o.check, o.vectorize, cache_dir).map_err(unsupported)
    }
}

impl Backend for Jit {
    fn name(&self) -> &'static str {
        "jit"
    }

    fn check_supported(&self, module: &LoadedModule, kernel: FuncId) -> Result<(), ExecError> {
        self.compiled(module, kernel).map(|_| ())
    }

    fn launch(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
    ) -> Result<LaunchReport, ExecError> {
        self.run(launch, memory, stdout, None)
    }

    /// Every CTA on a thread of its own (`cooperative.rs`).
    fn launch_cooperative(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
        workspace: u64,
    ) -> Result<LaunchReport, ExecError> {
        let name = &launch.module.module.functions[launch.kernel].name;
        if launch.config.blocks() > device::MAX_COOPERATIVE_CTAS {
            return Err(ExecError::launch(
                name,
                format!(
                    "a cooperative launch of {} CTAs; at most {} can be resident at once",
                    launch.config.blocks(),
                    device::MAX_COOPERATIVE_CTAS
                ),
            ));
        }
        let grid = cooperative::GridState::new(workspace, launch.config.blocks());
        self.run(launch, memory, stdout, Some(Arc::new(grid)))
    }
}

impl Jit {
    /// A launch on the worker pool, or a cooperative one (`grid`) on a thread per CTA.
    fn run(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
        grid: Option<Arc<cooperative::GridState>>,
    ) -> Result<LaunchReport, ExecError> {
        let module = launch.module;
        let kernel = launch.kernel;
        let name = module.module.functions[kernel].name.clone();
        launch.config.validate().map_err(|m| ExecError::launch(&name, m))?;
        let compiled = self.compiled(module, kernel)?;
        let layout = &compiled.shared;
        let shared = layout.dynamic_offset.max(layout.static_size) + u64::from(launch.config.dynamic_shared);
        if shared > MAX_SHARED_BYTES {
            return Err(ExecError::launch(
                &name,
                format!("the CTA needs {shared} bytes of shared memory; the limit is {MAX_SHARED_BYTES}"),
            ));
        }
        // Borrow every allocation mutably for the launch: the kernel writes them through raw pointers.
        let regions: Vec<(u64, u64, bool, String)> = memory
            .regions_mut()
            .into_iter()
            .map(|r| (r.bytes.as_mut_ptr() as u64, r.bytes.len() as u64, r.read_only, r.label.to_string()))
            .collect();
        let globals: Vec<u64> = module.module.globals.keys().map(|g| module.global_address(g).unwrap_or(0)).collect();
        let helpers = helpers::table();
        let textures = memory.textures().clone();
        let heap = memory.heap();
        let data = LaunchData {
            compiled: &compiled,
            module: compiled.inlined.as_ref().unwrap_or(&module.module),
            grid: launch.config.grid,
            block: launch.config.block,
            dynamic_shared: launch.config.dynamic_shared,
            shared_size: shared,
            params: &launch.params.bytes,
            globals: &globals,
            helpers: &helpers,
            regions: &regions,
            textures: &textures,
            heap,
            launch: {
                static LAUNCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                LAUNCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
            cooperative: grid.clone(),
        };
        if let Some(grid) = &grid {
            let results = cooperative::run(&data, &name, grid, &self.cta_workers);
            drop(regions);
            return finish(results, &name, stdout);
        }
        let ctas = launch.config.blocks();
        let workers = self.pool.threads() as u64;
        let schedule = self.options.schedule;
        let next = std::sync::atomic::AtomicU64::new(0);
        // CTAs above the lowest failing one are skipped, so the error reported is the first in CTA order,
        // whatever the schedule.
        let first_error = std::sync::atomic::AtomicU64::new(u64::MAX);
        let results: Mutex<Vec<CtaResult>> = Mutex::new(Vec::new());
        let job = |w: usize| {
            let w = w as u64;
            let mut worker = self.workers[w as usize].lock().unwrap_or_else(|e| e.into_inner());
            let mut local = Vec::new();
            let stop = |cta: u64| cta > first_error.load(std::sync::atomic::Ordering::Relaxed);
            let mut run = |ctas: std::ops::Range<u64>, local: &mut Vec<CtaResult>| {
                worker.run_ctas(&data, ctas, &stop, &mut |cta, out, err| {
                    if err.is_some() {
                        first_error.fetch_min(cta, std::sync::atomic::Ordering::Relaxed);
                    }
                    local.push((cta, out, err));
                });
            };
            match schedule {
                Schedule::Static => run(w * ctas / workers..(w + 1) * ctas / workers, &mut local),
                Schedule::Interleaved => {
                    let mut cta = w;
                    while cta < ctas {
                        run(cta..cta + 1, &mut local);
                        cta += workers;
                    }
                }
                Schedule::Dynamic => loop {
                    // Runs of consecutive CTAs (about sixteen per worker in all): neighbours touch neighbouring
                    // memory, which the caches and prefetchers reward, and the tail still balances.
                    let chunk = (ctas / (workers * 16)).clamp(1, 64);
                    let first = next.fetch_add(chunk, std::sync::atomic::Ordering::Relaxed);
                    if first >= ctas {
                        break;
                    }
                    run(first..(first + chunk).min(ctas), &mut local);
                },
            }
            results.lock().unwrap_or_else(|e| e.into_inner()).extend(local);
        };
        if !self.pool.run(&job) {
            return Err(ExecError::new(
                ErrorKind::Invalid("a JIT worker thread panicked".into()),
                kernel_location(module, kernel),
            ));
        }
        drop(regions);
        finish(results.into_inner().unwrap_or_else(|e| e.into_inner()), &name, stdout)
    }
}

/// The CTAs' output in CTA order, and the first error.
fn finish(mut results: Vec<CtaResult>, name: &str, stdout: &mut dyn Write) -> Result<LaunchReport, ExecError> {
    results.sort_by_key(|(cta, ..)| *cta);
    for (_, out, err) in results {
        stdout.write_all(&out).map_err(|e| ExecError::launch(name, format!("printf: {e}")))?;
        if let Some(e) = err {
            return Err(e);
        }
    }
    Ok(LaunchReport { stats: None })
}
