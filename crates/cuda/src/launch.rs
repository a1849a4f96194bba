//! Kernel launches: the `<<<...>>>` configuration stack, parameters copied from the program's argument
//! pointers into a buffer laid out by the kernel's `.param` list, the run on the configured engine, its
//! faults turned into CUDA errors, and function attributes and occupancy for the programs (CUB) that size
//! their launches from them.

use std::cell::RefCell;

use device::{Dim3, ErrorKind, LaunchConfig, ParamBuffer, SharedLayout};
use ir::StateSpace;
use runtime::{LaunchOptions, RunError};

use crate::config::Backend;
use crate::properties::{MAX_BLOCKS_PER_MULTIPROCESSOR, MAX_THREADS_PER_MULTIPROCESSOR, SHARED_PER_BLOCK};
use ir::FuncId;
use runtime::ModuleId;

use crate::{Cuda, Error, Inner, Result};

/// A launch's shape, shared memory and stream (`__cudaPushCallConfiguration`'s arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: u64,
    pub stream: u64,
    /// A cooperative launch (`cudaLaunchCooperativeKernel`): every CTA resident at once.
    pub cooperative: bool,
}

thread_local! {
    /// `<<<...>>>` pushes, the launch stub pops (a stack: a launch expression's arguments may launch).
    static CONFIGS: RefCell<Vec<CallConfig>> = const { RefCell::new(Vec::new()) };
}

/// `__cudaPushCallConfiguration`.
pub fn push_call_configuration(config: CallConfig) {
    CONFIGS.with(|c| c.borrow_mut().push(config));
}

/// `__cudaPopCallConfiguration`: `None` when nothing was pushed.
pub fn pop_call_configuration() -> Option<CallConfig> {
    CONFIGS.with(|c| c.borrow_mut().pop())
}

/// `cudaFuncGetAttributes`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuncAttributes {
    pub shared_size_bytes: u64,
    pub const_size_bytes: u64,
    pub local_size_bytes: u64,
    pub max_threads_per_block: i32,
    pub num_regs: i32,
    /// The PTX target the kernel was compiled for, as `major * 10 + minor` (CUB picks its tuning by it).
    pub ptx_version: i32,
    pub binary_version: i32,
    pub max_dynamic_shared_size_bytes: i32,
    pub preferred_shmem_carveout: i32,
}

/// What to launch: a kernel registered by its host stub (runtime API) or a function the program got from a
/// module it loaded (driver API).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    HostStub(u64),
    Function(u64),
}

/// A launch's arguments.
#[derive(Clone, Copy, Debug)]
pub enum Params<'a> {
    /// One pointer per kernel parameter, each at that parameter's bytes (nvcc's stubs, `kernelParams`).
    Pointers(*const *const libc::c_void),
    /// The parameters already laid out at their offsets (`CU_LAUNCH_PARAM_BUFFER_POINTER`).
    Buffer(&'a [u8]),
}

/// The most threads a block of the kernel may have: the product of its `.maxntid` or `.reqntid`
/// extents, or the device's limit.
fn max_threads_per_block(directives: &[ir::Directive]) -> i32 {
    directives
        .iter()
        .find_map(|d| match d {
            ir::Directive::MaxNtid(dims) | ir::Directive::ReqNtid(dims) => {
                Some(dims.iter().map(|&x| u64::from(x.max(1))).product::<u64>().min(1024) as i32)
            }
            _ => None,
        })
        .unwrap_or(1024)
}

/// The most dynamic shared memory a launch of a kernel may ask for: what the program set
/// (`cudaFuncAttributeMaxDynamicSharedMemorySize`), else what is left of 48 KiB after its static shared
/// memory.
fn dynamic_shared_limit(max_dynamic: Option<i32>, static_shared: impl FnOnce() -> u64) -> u64 {
    max_dynamic.map_or_else(|| SHARED_PER_BLOCK.saturating_sub(static_shared()), |v| v as u64)
}

/// The block shape against the kernel's launch bounds, as the driver checks them before a launch: with
/// `.maxntid` the block may have any shape up to the product of its extents (`__launch_bounds__`,
/// Numba's `launch_bounds=`); with `.reqntid` it must have exactly that shape. A launch that breaks them
/// fails with `CUDA_ERROR_INVALID_VALUE` and runs nothing (the compiled code may rely on the bound).
fn check_launch_bounds(directives: &[ir::Directive], block: Dim3) -> std::result::Result<(), String> {
    let threads = u64::from(block.x) * u64::from(block.y) * u64::from(block.z);
    for d in directives {
        match d {
            ir::Directive::MaxNtid(dims) => {
                let max = dims.iter().map(|&x| u64::from(x.max(1))).product::<u64>();
                if threads > max {
                    return Err(format!(
                        "a block of {threads} threads ({}, {}, {}) exceeds the kernel's .maxntid {} ({max} threads)",
                        block.x,
                        block.y,
                        block.z,
                        join(dims)
                    ));
                }
            }
            ir::Directive::ReqNtid(dims) => {
                let want = |i: usize| dims.get(i).copied().unwrap_or(1);
                if (block.x, block.y, block.z) != (want(0), want(1), want(2)) {
                    return Err(format!(
                        "the block ({}, {}, {}) is not the kernel's .reqntid {}",
                        block.x,
                        block.y,
                        block.z,
                        join(dims)
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn join(dims: &[u32]) -> String {
    dims.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

impl Cuda {
    /// Launches the kernel registered for host stub `host_fn` (`cudaLaunchKernel`, `__cudaLaunchKernel`).
    /// Errors in the launch itself come back now; a kernel fault comes back from the next synchronizing
    /// call, as on a GPU.
    ///
    /// # Safety
    /// `args` must point at one pointer per kernel parameter, each pointing at that parameter's bytes (what
    /// nvcc's launch stubs pass); it may be null for a kernel without parameters.
    pub unsafe fn launch(&self, host_fn: u64, config: CallConfig, args: *const *const libc::c_void) -> Result<()> {
        // SAFETY: the caller's promise.
        unsafe { self.launch_kernel(Kernel::HostStub(host_fn), config, Params::Pointers(args)) }
    }

    /// The loaded module and function of a kernel, and the dynamic shared memory limit the program set. A
    /// "kernel address" the program registered no kernel at but that is a loaded module's function handle is
    /// that function: the runtime takes a `cudaKernel_t` (`cudaLibraryGetKernel`) where it takes a kernel.
    fn resolve(&self, inner: &mut Inner, kernel: Kernel) -> Result<(ModuleId, FuncId, Option<i32>)> {
        let kernel = match kernel {
            Kernel::HostStub(f) if !inner.registry.has_kernel(f) && inner.modules.function(f).is_some() => {
                Kernel::Function(f)
            }
            k => k,
        };
        match kernel {
            Kernel::HostStub(host_fn) => {
                let (module, func) = inner.kernel(host_fn, self)?;
                Ok((module, func, inner.registry.max_dynamic_shared(host_fn)))
            }
            Kernel::Function(f) => {
                let info = inner.modules.function(f).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
                Ok((info.id, info.func, info.max_dynamic_shared))
            }
        }
    }

    /// Launches a kernel of either kind with either parameter form (`cuLaunchKernel` and the runtime's
    /// launches).
    ///
    /// # Safety
    /// [`Params::Pointers`] as for [`Cuda::launch`].
    pub unsafe fn launch_kernel(&self, kernel: Kernel, config: CallConfig, args: Params<'_>) -> Result<()> {
        // On a capturing stream the launch becomes a kernel node, its arguments copied now.
        // SAFETY: the caller's promise.
        let node =
            || unsafe { self.kernel_node(kernel, config, args) }.map(|k| crate::graph::NodeOp::Kernel(Box::new(k)));
        if self.capture(config.stream, node)? {
            return Ok(());
        }
        self.enter_stream(config.stream)?;
        self.synchronize_faults()?;
        if config.cooperative {
            self.check_cooperative(kernel, config)?;
        }
        let mut inner = self.lock();
        // What the previous kernels printed comes out at the start of this launch, as on a GPU.
        inner.flush_printf();
        let (module, kernel, max_dynamic) = self.resolve(&mut inner, kernel)?;
        let launch_config = LaunchConfig {
            grid: config.grid,
            block: config.block,
            dynamic_shared: u32::try_from(config.shared).map_err(|_| Error::INVALID_VALUE)?,
        };
        let rt = inner.runtime(&self.config);
        let m = rt.module(module).map(|m| &m.module).ok_or(Error::INVALID_DEVICE_FUNCTION)?;
        let func = &m.functions[kernel];
        let name = func.name.clone();
        // More than 48 KiB of shared memory needs the kernel's opt-in, as on a GPU: a program that forgot it
        // fails there, so it fails here, with the reason. (The static size is laid out only for launches that
        // ask for dynamic shared memory: most do not, and the launch path is hot.)
        let limit = match config.shared {
            0 => 0,
            _ => dynamic_shared_limit(max_dynamic, || SharedLayout::for_kernel(m, kernel).static_size),
        };
        if config.shared > limit {
            drop(inner);
            self.warn(
                &format!("dynamic shared {name}"),
                &format!(
                    "error: launch of `{name}`: {} bytes of dynamic shared memory exceed the kernel's limit of \
                     {limit} (more than {SHARED_PER_BLOCK} bytes of shared memory per block need \
                     cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) first)",
                    config.shared
                ),
            );
            return Err(Error::INVALID_VALUE);
        }
        if let Err(message) = check_launch_bounds(&func.directives, config.block) {
            drop(inner);
            self.warn(&format!("launch bounds {name}"), &format!("error: launch of `{name}`: {message}"));
            return Err(Error::INVALID_VALUE);
        }
        let cluster = func.directives.iter().find_map(|d| match d {
            ir::Directive::ReqNctaPerCluster(dims) => Some([0, 1, 2].map(|i| dims.get(i).copied().unwrap_or(1))),
            _ => None,
        });
        if let Some(dims) = cluster {
            self.check_cluster(dims)?;
        }
        let mut params = ParamBuffer::for_kernel(func);
        match args {
            Params::Pointers(_) if params.slots.is_empty() => {}
            Params::Pointers(args) => {
                if args.is_null() {
                    return Err(Error::INVALID_VALUE);
                }
                for (i, slot) in params.slots.iter().enumerate() {
                    // SAFETY: the caller's promise: `args[i]` points at the parameter's bytes.
                    unsafe {
                        let src = *args.add(i) as *const u8;
                        if src.is_null() {
                            return Err(Error::INVALID_VALUE);
                        }
                        let dst = params.bytes.as_mut_ptr().add(slot.offset as usize);
                        std::ptr::copy_nonoverlapping(src, dst, slot.size as usize);
                    }
                }
            }
            Params::Buffer(buffer) => {
                let needed = params.slots.iter().map(|s| (s.offset + s.size) as usize).max().unwrap_or(0);
                if buffer.len() < needed {
                    drop(inner);
                    self.warn(
                        &format!("param buffer {name}"),
                        &format!(
                            "error: launch of `{name}`: the parameter buffer holds {} bytes, the kernel's parameters \
                             take {needed}",
                            buffer.len()
                        ),
                    );
                    return Err(Error::INVALID_VALUE);
                }
                for slot in &params.slots {
                    let range = slot.offset as usize..(slot.offset + slot.size) as usize;
                    params.bytes[range.clone()].copy_from_slice(&buffer[range]);
                }
            }
        }
        let stats = self.config.backend == Backend::Emu;
        let mut output = Vec::new();
        let start = std::time::Instant::now();
        let options = LaunchOptions { stats, cooperative: config.cooperative };
        let result = rt.launch_with_params(module, kernel, launch_config, &params, options, &mut output);
        let took = start.elapsed();
        inner.printf_pending.extend_from_slice(&output);
        match result {
            Ok(outcome) => {
                inner.report.launched(&name, outcome.elapsed, outcome.stats.as_ref());
                inner.report.timed(&name, self.started.elapsed(), took.saturating_sub(outcome.elapsed));
                Ok(())
            }
            Err(RunError::Exec(e)) => {
                let error = match &e.kind {
                    ErrorKind::InvalidLaunch(_) => {
                        drop(inner);
                        self.warn(&format!("launch {name}"), &format!("error: {e}"));
                        // CUDA 13's runtime launches through the driver, whose answer to a shape no device
                        // runs is cudaErrorInvalidValue (CUDA 12's runtime said cudaErrorInvalidConfiguration;
                        // checked on an H100 with CUDA 13).
                        return Err(Error::INVALID_VALUE);
                    }
                    ErrorKind::Unsupported(_) => {
                        drop(inner);
                        self.warn(&format!("unsupported {name}"), &format!("error: kernel `{name}` cannot run: {e}"));
                        return Err(Error::INVALID_PTX);
                    }
                    ErrorKind::OutOfBounds { .. } | ErrorKind::ReadOnly { .. } => Error::ILLEGAL_ADDRESS,
                    ErrorKind::Misaligned { .. } => Error::MISALIGNED_ADDRESS,
                    ErrorKind::Assert(_) => Error::ASSERT,
                    ErrorKind::StackOverflow(_) => Error::HARDWARE_STACK_ERROR,
                    ErrorKind::IllegalInstruction(_) => Error::ILLEGAL_INSTRUCTION,
                    ErrorKind::Trap | ErrorKind::BarrierDivergence(_) | ErrorKind::Invalid(_) => Error::LAUNCH_FAILURE,
                };
                // An address in host memory whose pool gave the device no access: say so.
                let no_access = match &e.kind {
                    ErrorKind::OutOfBounds { address, .. } => {
                        inner.runtime(&self.config).memory().without_device_access(*address).map(|(base, _, label)| {
                            format!(
                                "\nlockstep: {address:#x} is in {label} at {base:#x}, host memory whose pool gives the \
                                 device no access: grant it with cudaMemPoolSetAccess"
                            )
                        })
                    }
                    _ => None,
                };
                inner.report.faulted(&name, &e.to_string());
                // The message is printed now, where it happened; the error waits for a synchronizing call.
                inner.flush_printf();
                drop(inner);
                if !self.config.quiet {
                    eprintln!(
                        "lockstep: error: {e}{}\nlockstep: the program sees {}",
                        no_access.unwrap_or_default(),
                        crate::error::name_of(error.code())
                    );
                }
                self.fault(error);
                Ok(())
            }
            Err(RunError::InvalidLaunch { kernel, message }) => {
                drop(inner);
                self.warn(&format!("launch {kernel}"), &format!("error: launch of `{kernel}`: {message}"));
                Err(Error::INVALID_VALUE)
            }
            Err(other) => {
                drop(inner);
                self.warn(&format!("launch {name}"), &format!("error: launch of `{name}`: {other}"));
                Err(Error::INVALID_VALUE)
            }
        }
    }

    /// A cooperative launch's grid against what the engines co-schedule: at most as many CTAs as
    /// `cudaOccupancyMaxActiveBlocksPerMultiprocessor` times the multiprocessors (the worker threads)
    /// report, else `cudaErrorCooperativeLaunchTooLarge` before anything runs (CTAs that cannot all be
    /// resident would wait for each other forever at a grid barrier).
    fn check_cooperative(&self, kernel: Kernel, config: CallConfig) -> Result<()> {
        let threads = u64::from(config.block.x) * u64::from(config.block.y) * u64::from(config.block.z);
        let per_sm = self.kernel_occupancy(kernel, threads.min(i32::MAX as u64) as i32, config.shared)?;
        let sms = crate::properties::Properties::for_config(&self.config).multiprocessors;
        let resident = (i64::from(per_sm) * i64::from(sms)).min(device::MAX_COOPERATIVE_CTAS as i64) as u64;
        let blocks = config.grid.count().unwrap_or(u64::MAX);
        if blocks <= resident {
            return Ok(());
        }
        self.warn(
            "cooperative launch too large",
            &format!(
                "error: a cooperative launch of {blocks} blocks; at most {resident} can be resident at once ({per_sm} \
                 per multiprocessor for blocks of {threads} threads with {} bytes of dynamic shared memory, {sms} \
                 multiprocessors)",
                config.shared
            ),
        );
        Err(Error::COOPERATIVE_LAUNCH_TOO_LARGE)
    }

    /// A launch's cluster shape (`cudaLaunchAttributeClusterDimension`): lockstep runs every CTA as its own
    /// cluster, so a larger cluster is refused (`cudaErrorInvalidClusterSize`, with a message) rather than run
    /// with kernels seeing one-CTA clusters.
    pub fn check_cluster(&self, dims: [u32; 3]) -> Result<()> {
        if dims.iter().map(|&d| u64::from(d.max(1))).product::<u64>() <= 1 {
            return Ok(());
        }
        self.warn(
            "cluster launch",
            &format!(
                "error: a launch asks for thread block clusters of {}x{}x{} CTAs; lockstep runs every CTA as its own \
                 cluster (the device reports no cluster launch), so the launch fails",
                dims[0], dims[1], dims[2]
            ),
        );
        Err(Error::INVALID_CLUSTER_SIZE)
    }

    /// The kernel's parameters as (offset, size) in bytes (`cuFuncGetParamInfo`).
    pub fn kernel_params(&self, kernel: Kernel) -> Result<Vec<(u64, u64)>> {
        let mut inner = self.lock();
        let (module, func, _) = self.resolve(&mut inner, kernel)?;
        let rt = inner.runtime(&self.config);
        let f = rt.module(module).map(|m| &m.module.functions[func]).ok_or(Error::INVALID_DEVICE_FUNCTION)?;
        Ok(ParamBuffer::for_kernel(f).slots.iter().map(|s| (s.offset, s.size)).collect())
    }

    /// The kernel's device name (`cudaFuncGetName`), loading nothing.
    pub fn kernel_name(&self, host_fn: u64) -> Result<String> {
        self.lock().registry.kernel_name(host_fn).map(str::to_string).ok_or(Error::INVALID_DEVICE_FUNCTION)
    }

    /// `cudaFuncGetAttributes`.
    pub fn func_attributes(&self, host_fn: u64) -> Result<FuncAttributes> {
        self.kernel_attributes(Kernel::HostStub(host_fn))
    }

    /// `cudaFuncGetAttributes`, `cuFuncGetAttribute`.
    pub fn kernel_attributes(&self, kernel: Kernel) -> Result<FuncAttributes> {
        self.check_sticky()?;
        let mut inner = self.lock();
        // An address that is no kernel is an invalid handle to CUDA 13 (checked on an H100).
        let (module, kernel, max_dynamic) = self.resolve(&mut inner, kernel).map_err(|e| {
            if e == Error::INVALID_DEVICE_FUNCTION {
                Error::INVALID_RESOURCE_HANDLE
            } else {
                e
            }
        })?;
        let rt = inner.runtime(&self.config);
        let m = &rt.module(module).ok_or(Error::INVALID_DEVICE_FUNCTION)?.module;
        let func = &m.functions[kernel];
        let layout = SharedLayout::for_kernel(m, kernel);
        let const_size = m
            .globals
            .values()
            .filter(|v| v.space == StateSpace::Const)
            .map(device::module::variable_size)
            .fold(0u64, u64::saturating_add);
        let local_size = func.body.as_ref().map_or(0, |b| {
            b.vars.values().filter(|v| v.space == StateSpace::Local).map(|v| v.size()).fold(0u64, u64::saturating_add)
        });
        let max_threads = max_threads_per_block(&func.directives);
        let ptx_version = m
            .target
            .iter()
            .find_map(|t| t.strip_prefix("sm_").map(|v| v.trim_end_matches(|c: char| c.is_ascii_alphabetic())))
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(crate::registry::DEVICE_ARCH as i32);
        let static_shared = layout.static_size;
        Ok(FuncAttributes {
            shared_size_bytes: static_shared,
            const_size_bytes: const_size,
            local_size_bytes: local_size,
            max_threads_per_block: max_threads,
            num_regs: 32,
            ptx_version,
            binary_version: crate::registry::DEVICE_ARCH as i32,
            max_dynamic_shared_size_bytes: dynamic_shared_limit(max_dynamic, || static_shared) as i32,
            preferred_shmem_carveout: -1,
        })
    }

    /// `cudaFuncSetAttribute`: the dynamic shared memory limit (up to the opt-in maximum) and the carveout
    /// (a hint, accepted).
    pub fn func_set_attribute(&self, host_fn: u64, attribute: i32, value: i32) -> Result<()> {
        self.kernel_set_attribute(Kernel::HostStub(host_fn), attribute, value)
    }

    /// `cudaFuncSetAttribute`, `cuFuncSetAttribute` (the runtime's attribute numbers; the driver shell
    /// converts its own).
    pub fn kernel_set_attribute(&self, kernel: Kernel, attribute: i32, value: i32) -> Result<()> {
        let known = match kernel {
            Kernel::HostStub(h) => self.lock().registry.has_kernel(h),
            Kernel::Function(f) => self.is_function(f),
        };
        if !known {
            return Err(Error::INVALID_DEVICE_FUNCTION);
        }
        match attribute {
            // cudaFuncAttributeMaxDynamicSharedMemorySize
            8 => {
                if value < 0 || value as u64 > crate::properties::SHARED_PER_BLOCK_OPTIN {
                    return Err(Error::INVALID_VALUE);
                }
                match kernel {
                    Kernel::HostStub(h) => self.lock().registry.set_max_dynamic_shared(h, value),
                    Kernel::Function(f) => self.set_function_max_dynamic_shared(f, value)?,
                }
                Ok(())
            }
            // cudaFuncAttributePreferredSharedMemoryCarveout, cluster attributes, ...: hints.
            9..=13 => Ok(()),
            _ => Err(Error::INVALID_VALUE),
        }
    }

    /// `cudaOccupancyMaxActiveBlocksPerMultiprocessor`: how many blocks of `block_size` threads (with
    /// `dynamic_shared` bytes) fit one multiprocessor under the limits the device reports.
    pub fn occupancy(&self, host_fn: u64, block_size: i32, dynamic_shared: u64) -> Result<i32> {
        self.kernel_occupancy(Kernel::HostStub(host_fn), block_size, dynamic_shared)
    }

    /// `cudaOccupancyMaxActiveBlocksPerMultiprocessor`, `cuOccupancyMaxActiveBlocksPerMultiprocessor`.
    pub fn kernel_occupancy(&self, kernel: Kernel, block_size: i32, dynamic_shared: u64) -> Result<i32> {
        if block_size <= 0 {
            return Err(Error::INVALID_VALUE);
        }
        let attrs = self.kernel_attributes(kernel)?;
        if block_size > attrs.max_threads_per_block {
            return Ok(0);
        }
        let by_threads = MAX_THREADS_PER_MULTIPROCESSOR / block_size;
        let shared = attrs.shared_size_bytes + dynamic_shared;
        let by_shared = crate::properties::SHARED_PER_MULTIPROCESSOR
            .checked_div(shared)
            .map_or(MAX_BLOCKS_PER_MULTIPROCESSOR, |n| n.min(i32::MAX as u64) as i32);
        Ok(by_threads.min(by_shared).min(MAX_BLOCKS_PER_MULTIPROCESSOR))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    /// Two kernels that write 1 through their pointer: one with `.maxntid 64, 2`, one with `.reqntid 32`.
    const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry bounded(.param .u64 p) .maxntid 64, 2 {\n .reg .b64 %rd<1>;\n\
        ld.param.u64 %rd0, [p];\n st.global.u32 [%rd0], 1;\n ret;\n}\n\
        .visible .entry exact(.param .u64 p) .reqntid 32 {\n .reg .b64 %rd<1>;\n\
        ld.param.u64 %rd0, [p];\n st.global.u32 [%rd0], 1;\n ret;\n}\n\0";

    fn cuda() -> Cuda {
        let (mut config, _) = Config::from_vars(|_| None);
        config.jit_cache = None;
        config.quiet = true;
        Cuda::new(config, Box::new(std::io::sink()))
    }

    fn launch(c: &Cuda, f: u64, out: u64, block: (u32, u32, u32)) -> Result<()> {
        let config = CallConfig {
            grid: Dim3 { x: 1, y: 1, z: 1 },
            block: Dim3 { x: block.0, y: block.1, z: block.2 },
            shared: 0,
            stream: 0,
            cooperative: false,
        };
        let arg = &out as *const u64 as *const libc::c_void;
        // SAFETY: one pointer, at the kernel's one parameter.
        unsafe { c.launch_kernel(Kernel::Function(f), config, Params::Pointers(&arg)) }
    }

    #[test]
    fn launches_beyond_the_kernels_launch_bounds_are_invalid_values_and_run_nothing() {
        let c = cuda();
        // SAFETY: a NUL-terminated PTX text.
        let m = unsafe { c.module_load_image(PTX.as_ptr(), "launch bounds") }.unwrap();
        let (bounded, exact) = (c.module_function(m, "bounded").unwrap(), c.module_function(m, "exact").unwrap());
        let out = c.malloc(4).unwrap();
        let written = |c: &Cuda| {
            let mut v = 0u32;
            c.memcpy(&mut v as *mut u32 as u64, out, 4, crate::CopyKind::DeviceToHost).unwrap();
            c.memset_elements(out, 4, 0, 4, 1, 1).unwrap();
            v
        };
        assert_eq!(c.kernel_attributes(Kernel::Function(bounded)).unwrap().max_threads_per_block, 128);
        launch(&c, bounded, out, (128, 1, 1)).unwrap();
        assert_eq!(written(&c), 1, "any shape up to the product of the extents");
        launch(&c, bounded, out, (8, 8, 2)).unwrap();
        assert_eq!(written(&c), 1);
        assert_eq!(launch(&c, bounded, out, (256, 1, 1)), Err(Error::INVALID_VALUE));
        assert_eq!(launch(&c, bounded, out, (65, 2, 1)), Err(Error::INVALID_VALUE));
        assert_eq!(written(&c), 0, "a refused launch runs nothing");
        launch(&c, exact, out, (32, 1, 1)).unwrap();
        assert_eq!(written(&c), 1);
        assert_eq!(launch(&c, exact, out, (16, 1, 1)), Err(Error::INVALID_VALUE), "fewer than required");
        assert_eq!(launch(&c, exact, out, (16, 2, 1)), Err(Error::INVALID_VALUE), "same count, other shape");
        assert_eq!(written(&c), 0);
    }
}
