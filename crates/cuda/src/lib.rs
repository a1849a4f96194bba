//! The CUDA host API on lockstep's engines: what `libcudart.so.13` and `libcuda.so.1` do, as Rust
//! that knows nothing of C calling conventions. The C shells (`crates/cudart`) convert arguments and
//! structures and call into one process-wide [`Cuda`].
//!
//! ```text
//! program ──__cudaRegisterFatBinary/Function/Var──▶ Registry (wrapper pointers, host stubs, host variables)
//!         ──first launch of a kernel──▶ fatbin::parse ─▶ best PTX (or the -rdc pieces, link.rs) ─▶
//!                                       runtime::Runtime::load_ptx ─▶ JIT (disk cache) or emulator
//!         ──cudaMalloc/Memcpy/...──▶ memory.rs (device pointer = host address; kinds in a side table);
//!                                    cudaMallocAsync and memory pools: pool.rs
//!         ──streams, events, host functions──▶ stream.rs
//!         ──stream capture, graphs──▶ capture.rs, graph.rs (nodes run as the stream API's calls)
//!         ──exit──▶ report.rs (JSON for `lockstep exec --report`)
//! driver API (libcuda.so.1): cuInit, contexts (context.rs) ─▶ cuModuleLoadData/cuLink* (module.rs:
//!         PTX, fatbinaries, linked PTX) ─▶ cuLaunchKernel ─▶ the same launch path
//! ```
//!
//! Semantics chosen:
//! - **Streams are synchronous.** Every copy, set and kernel completes before its call returns, in the
//!   calling thread, so every stream order and every event order holds trivially and results are those of
//!   any valid schedule. Host functions (`cudaLaunchHostFunc`, stream callbacks) run on a runtime thread, as
//!   on CUDA; later work on their stream waits for them. Events record the time of their `cudaEventRecord`.
//! - **Graphs run as their streams would.** Stream capture records the work issued to capturing streams
//!   as graph nodes; launching an executable graph runs its nodes one by one, in a topological order, through
//!   the same paths as the stream calls they stand for (`capture.rs`, `graph.rs`).
//! - **Kernel faults are sticky.** A kernel that fails (out of bounds under `--check` or on the emulator,
//!   `trap`, `assert`, barrier divergence) prints lockstep's located message on stderr; its launch returns
//!   success, as on a GPU, and the error (`cudaErrorIllegalAddress`, `cudaErrorAssert`, ...) comes out of
//!   the next synchronizing call and every call after it, until `cudaDeviceReset`.
//! - **One device.** Several host threads may call at once: calls are serialized on one lock (a kernel
//!   holds it while it runs on all cores).
//! - **Missing functions** return `cudaErrorNotSupported` and warn once, naming the function.

mod capture;
pub mod config;
mod context;
mod devrt;
pub mod error;
pub mod graph;
pub mod graph_attributes;
pub mod graph_info;
pub mod graph_memory;
pub mod image;
mod launch;
pub use ptxlink as link;
mod memory;
pub mod module;
pub mod pool;
pub mod properties;
mod registry;
mod report;
pub(crate) mod stream;
pub mod unsupported;
pub mod user_object;

use std::cell::Cell;
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

pub use capture::{exchange_thread_capture_mode, CaptureInfo, CaptureStatus};
pub use config::{Backend, Config};
pub use device::Dim3;
pub use error::Error;
pub use graph::{CopyNode, NodeOp, NodeType, SetNode, UpdateFailure};
pub use launch::{pop_call_configuration, push_call_configuration, CallConfig, FuncAttributes, Kernel, Params};
pub use memory::{Array, ArrayDesc, CopyKind, MemoryType, PointerAttributes};
pub use properties::Properties;
pub use report::{KernelReport, Report};
pub use stream::{EventFlags, HostFn, StreamAttrValue, StreamCallback, LEGACY_STREAM, PER_THREAD_STREAM};

/// What most calls return.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The process-wide CUDA state: one device.
pub struct Cuda {
    config: Config,
    properties: Properties,
    inner: Mutex<Inner>,
    streams: stream::Streams,
    contexts: context::Contexts,
    graphs: graph::Graphs,
    /// A kernel fault not yet reported by a synchronizing call (a `cudaError_t` code; 0: none).
    pending_fault: AtomicI32,
    /// The sticky error every call returns after a reported fault (0: none).
    sticky: AtomicI32,
    warned: Mutex<HashSet<String>>,
    /// When the runtime started (the program's first CUDA call).
    started: std::time::Instant,
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cuda").field("config", &self.config).finish_non_exhaustive()
    }
}

/// State behind the device lock.
struct Inner {
    /// Created on first use: a JIT starts its worker threads.
    runtime: Option<runtime::Runtime>,
    registry: registry::Registry,
    /// Modules the program loaded through the driver API.
    modules: module::Modules,
    memory: memory::Allocations,
    pools: pool::Pools,
    report: report::Recorder,
    /// Where device `printf` output goes, and what the last kernels printed and no synchronization has
    /// flushed yet (CUDA prints a kernel's output at the next launch or synchronizing call).
    printf: Box<dyn Write + Send>,
    printf_pending: Vec<u8>,
    /// `cudaSetDeviceFlags` / `cudaDeviceSetLimit` values, kept so that the getters return them.
    device_flags: u32,
    limits: [u64; 8],
    cache_config: i32,
}

thread_local! {
    /// `cudaGetLastError`'s per-thread value.
    static LAST_ERROR: Cell<i32> = const { Cell::new(0) };
}

/// Records `code` as the calling thread's last error without the device (the C shells' panic fallback,
/// which must not take a lock a panicking call may have held).
pub fn set_last_error(code: i32) {
    LAST_ERROR.with(|l| l.set(code));
}

impl Cuda {
    /// The process's instance, created from the environment on first use.
    pub fn get() -> &'static Cuda {
        static CUDA: OnceLock<Cuda> = OnceLock::new();
        CUDA.get_or_init(|| {
            let (config, warnings) = Config::from_env();
            let cuda = Cuda::new(config, Box::new(CStdout));
            for w in warnings {
                cuda.warn(&w.0, &w.0);
            }
            report::at_exit();
            cuda
        })
    }

    /// An instance with its own device (tests use several; the C shells use [`Cuda::get`]). Device
    /// `printf` output goes to `printf`.
    pub fn new(config: Config, printf: Box<dyn Write + Send>) -> Cuda {
        let properties = Properties::for_config(&config);
        let mut limits = [0u64; 8];
        limits[0] = 1024; // cudaLimitStackSize
        limits[1] = 1 << 20; // cudaLimitPrintfFifoSize
        limits[2] = 8 << 20; // cudaLimitMallocHeapSize
        limits[3] = 2; // cudaLimitDevRuntimeSyncDepth
        limits[4] = 2048; // cudaLimitDevRuntimePendingLaunchCount
        limits[5] = 32; // cudaLimitMaxL2FetchGranularity
        Cuda {
            properties,
            inner: Mutex::new(Inner {
                runtime: None,
                registry: registry::Registry::default(),
                modules: module::Modules::default(),
                memory: memory::Allocations::default(),
                pools: pool::Pools::default(),
                report: report::Recorder::default(),
                printf,
                printf_pending: Vec::new(),
                device_flags: 0,
                limits,
                cache_config: 0,
            }),
            streams: stream::Streams::default(),
            contexts: context::Contexts::default(),
            graphs: graph::Graphs::default(),
            pending_fault: AtomicI32::new(0),
            sticky: AtomicI32::new(0),
            warned: Mutex::default(),
            started: std::time::Instant::now(),
            config,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn properties(&self) -> &Properties {
        &self.properties
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Prints `message` on stderr the first time `key` is seen (unless quiet).
    pub fn warn(&self, key: &str, message: &str) {
        let first = self.warned.lock().unwrap_or_else(|e| e.into_inner()).insert(key.to_string());
        if first && !self.config.quiet {
            eprintln!("lockstep: {message}");
        }
    }

    /// A function lockstep does not implement was called: warns once, naming it, and returns
    /// `cudaErrorNotSupported`.
    pub fn unsupported(&self, function: &str) -> Error {
        self.warn(
            function,
            &format!(
                "warning: {function} is not supported by lockstep's CUDA runtime; it returns cudaErrorNotSupported"
            ),
        );
        self.lock().report.unsupported(function);
        Error::NOT_SUPPORTED
    }

    /// A driver API function lockstep does not implement was called: warns once, naming it (the caller
    /// returns `CUDA_ERROR_NOT_SUPPORTED`).
    pub fn unsupported_driver(&self, function: &str) {
        self.warn(
            function,
            &format!(
                "warning: {function} is not supported by lockstep's CUDA driver; it returns CUDA_ERROR_NOT_SUPPORTED"
            ),
        );
        self.lock().report.unsupported(function);
    }

    // ---- errors -------------------------------------------------------------------------------------

    /// Records a call's result as the thread's last error (`cudaGetLastError` reads it); success leaves it.
    pub fn record<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            LAST_ERROR.with(|l| l.set(e.code()));
        }
        result
    }

    /// `cudaGetLastError`: the thread's last error, reset to success (a sticky error stays).
    pub fn take_last_error(&self) -> i32 {
        let sticky = self.sticky.load(Ordering::Acquire);
        let last = LAST_ERROR.with(|l| l.replace(0));
        if sticky != 0 {
            sticky
        } else {
            last
        }
    }

    /// `cudaPeekAtLastError`: the same, without resetting it.
    pub fn peek_last_error(&self) -> i32 {
        let sticky = self.sticky.load(Ordering::Acquire);
        if sticky != 0 {
            sticky
        } else {
            LAST_ERROR.with(|l| l.get())
        }
    }

    /// The sticky error, if a fault was reported.
    fn check_sticky(&self) -> Result<()> {
        match self.sticky.load(Ordering::Acquire) {
            0 => Ok(()),
            code => Err(Error(code)),
        }
    }

    /// A synchronizing call: a pending kernel fault becomes the sticky error now.
    fn synchronize_faults(&self) -> Result<()> {
        let pending = self.pending_fault.swap(0, Ordering::AcqRel);
        if pending != 0 {
            let _ = self.sticky.compare_exchange(0, pending, Ordering::AcqRel, Ordering::Acquire);
        }
        self.check_sticky()
    }

    /// A kernel failed with `error`: reported by the next synchronizing call.
    fn fault(&self, error: Error) {
        let _ = self.pending_fault.compare_exchange(0, error.code(), Ordering::AcqRel, Ordering::Acquire);
    }

    // ---- device ---------------------------------------------------------------------------------------

    /// `cudaDeviceSynchronize`: waits for every stream's host functions, prints what kernels printed,
    /// reports a kernel fault.
    pub fn synchronize(&self) -> Result<()> {
        self.check_device_sync_capture()?;
        self.streams.wait_all();
        self.lock().flush_printf();
        self.synchronize_faults()
    }

    /// Prints what kernels printed and no synchronization has printed yet (at exit).
    pub fn flush_printf(&self) {
        self.lock().flush_printf();
    }

    /// `cudaDeviceReset`: frees every allocation and forgets loaded modules (registered kernels and
    /// variables stay registered and load again on next use), destroys graphs and ends captures, clears a sticky
    /// error.
    pub fn reset(&self) -> Result<()> {
        self.streams.wait_all();
        let mut inner = self.lock();
        inner.flush_printf();
        inner.runtime = None;
        inner.memory = memory::Allocations::default();
        inner.pools = pool::Pools::default();
        inner.registry.forget_modules();
        inner.forget_driver_modules();
        inner.device_flags = 0;
        drop(inner);
        // Graphs, executable graphs and captures are device resources too.
        *self.graphs.lock() = graph::State::default();
        self.pending_fault.store(0, Ordering::Release);
        self.sticky.store(0, Ordering::Release);
        Ok(())
    }

    pub fn set_device_flags(&self, flags: u32) -> Result<()> {
        // cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax | cudaDeviceSyncMemops
        if flags & !0x1f != 0 && flags & !0x9f != 0 {
            return Err(Error::INVALID_VALUE);
        }
        self.lock().device_flags = flags;
        Ok(())
    }

    pub fn device_flags(&self) -> u32 {
        // cudaDeviceMapHost is always on.
        self.lock().device_flags | 0x08
    }

    /// `cudaDeviceSetLimit`: values are kept (and returned by the getter); stack size and heap have no
    /// effect on the engines.
    pub fn set_limit(&self, limit: u32, value: u64) -> Result<()> {
        let mut inner = self.lock();
        let slot = inner.limits.get_mut(limit as usize).filter(|_| limit <= 5).ok_or(Error::UNSUPPORTED_LIMIT)?;
        *slot = value;
        if limit == 2 {
            // cudaLimitMallocHeapSize: the heap is made at the first launch that needs it.
            if let Some(rt) = inner.runtime.as_mut() {
                rt.set_heap_size(value);
            }
        }
        Ok(())
    }

    pub fn limit(&self, limit: u32) -> Result<u64> {
        let inner = self.lock();
        inner.limits.get(limit as usize).filter(|_| limit <= 5).copied().ok_or(Error::UNSUPPORTED_LIMIT)
    }

    pub fn set_cache_config(&self, config: i32) -> Result<()> {
        if !(0..=3).contains(&config) {
            return Err(Error::INVALID_VALUE);
        }
        self.lock().cache_config = config;
        Ok(())
    }

    pub fn cache_config(&self) -> i32 {
        self.lock().cache_config
    }

    /// The report of kernels and launches so far.
    pub fn report(&self) -> Report {
        self.lock().report.report(&self.config, &self.properties.name)
    }
}

impl Inner {
    fn flush_printf(&mut self) {
        if !self.printf_pending.is_empty() {
            let _ = self.printf.write_all(&self.printf_pending);
            let _ = self.printf.flush();
            self.printf_pending.clear();
        }
    }

    /// The runtime, created on first use with the configured engine.
    fn runtime(&mut self, config: &Config) -> &mut runtime::Runtime {
        let limits = self.limits;
        self.runtime.get_or_insert_with(|| {
            let backend: Box<dyn ::device::Backend> = match config.backend {
                Backend::Emu => Box::new(emu::Emulator::new()),
                Backend::Jit => Box::new(jit::Jit::new(jit::Options {
                    threads: config.threads,
                    check: config.check,
                    cache_dir: config.jit_cache.clone(),
                    ..jit::Options::default()
                })),
            };
            let mut rt = runtime::Runtime::new(backend);
            rt.set_memory_limit(properties::physical_memory());
            rt.set_heap_size(limits[2]);
            rt
        })
    }
}

/// Device `printf` output goes through the C library's `stdout`, so that it interleaves with the host
/// program's own `printf` in program order (both are buffered by the same `FILE`).
struct CStdout;

extern "C" {
    static mut stdout: *mut libc::FILE;
}

impl Write for CStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // SAFETY: `stdout` is the C library's stream, valid for the life of the process; fwrite locks it.
        let n = unsafe { libc::fwrite(buf.as_ptr() as *const libc::c_void, 1, buf.len(), stdout) };
        if n == 0 {
            return Err(std::io::Error::other("fwrite to stdout failed"));
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // The program flushes its own stdout (or exit does); flushing here would change how its output
        // is buffered.
        Ok(())
    }
}
