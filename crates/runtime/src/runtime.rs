//! [`Runtime`]: device memory, loaded modules and kernel launches on one [`Backend`].

use std::collections::BTreeSet;
use std::fmt;
use std::io::Write;
use std::time::{Duration, Instant};

use device::module::variable_size;
use device::{
    Backend, DeviceMemory, DevicePtr, KernelStats, Launch, LaunchConfig, LoadedModule, ParamBuffer, SharedLayout,
    SurfaceDesc, TextureDesc,
};
use ir::{FuncId, Module, StateSpace};

use crate::arg::{describe, param_label, Arg};
use crate::error::{KernelError, LoadError, MemoryError, RunError, SymbolError};

/// The most shared memory (static + dynamic) one block may use: 227 KiB, the opt-in maximum per block of
/// NVIDIA Hopper and Ada GPUs.
pub const MAX_SHARED_PER_BLOCK: u64 = 227 * 1024;

/// Default limit on the device memory a [`Runtime`] allocates in total: 16 GiB. Change it with
/// [`Runtime::set_memory_limit`].
pub const DEFAULT_MEMORY_LIMIT: u64 = 16 << 30;

/// A loaded module, as returned by [`Runtime::load_ptx`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(u32);

impl ModuleId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ModuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Options of one launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Ask the backend for [`KernelStats`].
    pub stats: bool,
    /// A cooperative launch: every CTA resident at once, with a grid workspace for grid-wide barriers
    /// ([`device::Backend::launch_cooperative`]).
    pub cooperative: bool,
}

/// What a successful launch returns.
#[derive(Clone, Debug, Default)]
pub struct LaunchOutcome {
    /// The backend's statistics, when [`LaunchOptions::stats`] was set (and the backend collects them).
    pub stats: Option<KernelStats>,
    /// Wall-clock time of the backend's `launch` call (not of the checks before it).
    pub elapsed: Duration,
}

struct ModuleEntry {
    file_name: String,
    loaded: LoadedModule,
}

/// Runs kernels on one backend: owns the device memory, the loaded modules and where device `printf`
/// output goes (standard output unless [`Runtime::set_printf_output`] says otherwise).
pub struct Runtime {
    backend: Box<dyn Backend>,
    memory: DeviceMemory,
    modules: Vec<ModuleEntry>,
    /// Allocations made through [`Runtime::alloc`] (the ones [`Runtime::free`] accepts).
    user_allocations: BTreeSet<DevicePtr>,
    memory_limit: u64,
    /// Size of the device heap kernels' `malloc` allocates from (made at the first such launch).
    heap_size: u64,
    printf: Box<dyn Write + Send>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("backend", &self.backend.name())
            .field("allocated", &self.memory.allocated())
            .field("modules", &self.modules.iter().map(|m| m.file_name.as_str()).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    pub fn new(backend: Box<dyn Backend>) -> Runtime {
        Runtime {
            backend,
            memory: DeviceMemory::new(),
            modules: Vec::new(),
            user_allocations: BTreeSet::new(),
            memory_limit: DEFAULT_MEMORY_LIMIT,
            heap_size: device::DEFAULT_HEAP_SIZE,
            printf: Box::new(std::io::stdout()),
        }
    }

    /// The backend's name (`emu`, `jit`, ...).
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// Where device `printf` output of later launches goes.
    pub fn set_printf_output(&mut self, writer: Box<dyn Write + Send>) {
        self.printf = writer;
    }

    /// Caps the total bytes of device memory (module variables included); allocations past it fail with
    /// [`MemoryError::OutOfMemory`].
    pub fn set_memory_limit(&mut self, bytes: u64) {
        self.memory_limit = bytes;
    }

    /// The size of the device heap that kernels' `malloc` and `free` use (`cudaLimitMallocHeapSize`, 8 MiB by
    /// default). It is allocated at the first launch of a kernel whose module calls them; later changes
    /// have no effect, as in CUDA.
    pub fn set_heap_size(&mut self, bytes: u64) {
        self.heap_size = bytes;
    }

    /// Makes the device heap if the module's kernels may call `malloc` or `free`.
    fn heap_for(&mut self, module: ModuleId) {
        let uses = self.modules[module.index()]
            .loaded
            .module
            .functions
            .values()
            .any(|f| f.body.is_none() && matches!(f.name.as_str(), "malloc" | "free"));
        if uses {
            self.memory.ensure_heap(self.heap_size);
        }
    }

    /// The device memory, for inspection.
    pub fn memory(&self) -> &DeviceMemory {
        &self.memory
    }

    /// Whether kernels may access the allocation at `ptr`, and whether only to read it (a memory pool's
    /// access for the device, `cudaMemPoolSetAccess`).
    pub fn set_device_access(&mut self, ptr: DevicePtr, access: bool, read_only: bool) {
        self.memory.set_device_access(ptr, access);
        self.memory.set_read_only(ptr, read_only);
    }

    // ---- device memory ---------------------------------------------------------------------------------

    /// Allocates `bytes` zeroed bytes, 256-byte aligned. The label names the allocation in error messages
    /// (an out-of-bounds access by a kernel says how far past which allocation it went).
    pub fn alloc_labeled(&mut self, bytes: u64, label: impl Into<String>) -> Result<DevicePtr, MemoryError> {
        self.check_allocation(bytes)?;
        let ptr = self.memory.alloc(bytes, label);
        self.user_allocations.insert(ptr);
        Ok(ptr)
    }

    /// Allocates `bytes` zeroed bytes, 256-byte aligned.
    pub fn alloc(&mut self, bytes: u64) -> Result<DevicePtr, MemoryError> {
        let label = format!("allocation {}", self.user_allocations.len());
        self.alloc_labeled(bytes, label)
    }

    /// Allocates and fills with `data`.
    pub fn alloc_from(&mut self, data: &[u8]) -> Result<DevicePtr, MemoryError> {
        let label = format!("allocation {}", self.user_allocations.len());
        self.alloc_from_labeled(data, label)
    }

    /// Allocates, labels and fills with `data`.
    pub fn alloc_from_labeled(&mut self, data: &[u8], label: impl Into<String>) -> Result<DevicePtr, MemoryError> {
        self.check_allocation(data.len() as u64)?;
        let ptr = self.memory.alloc_bytes(data, label);
        self.user_allocations.insert(ptr);
        Ok(ptr)
    }

    /// Whether `bytes` more bytes fit under the memory limit (callers that build large data first ask this).
    pub fn check_allocation(&self, bytes: u64) -> Result<(), MemoryError> {
        let allocated = self.memory.allocated();
        if bytes > self.memory_limit.saturating_sub(allocated) {
            return Err(MemoryError::OutOfMemory { requested: bytes, allocated, limit: self.memory_limit });
        }
        Ok(())
    }

    /// Frees an allocation made by [`Runtime::alloc`] (or its variants), by its base address.
    pub fn free(&mut self, ptr: DevicePtr) -> Result<(), MemoryError> {
        if self.user_allocations.remove(&ptr) {
            self.memory.free(ptr);
            return Ok(());
        }
        if let Some(a) = self.memory.allocation(ptr) {
            return Err(MemoryError::ModuleVariable { ptr, label: a.label.clone() });
        }
        Err(MemoryError::NotAnAllocation { ptr, detail: self.locate(ptr) })
    }

    /// Where `ptr` is, for messages: inside an allocation (and where), or near one.
    fn locate(&self, ptr: DevicePtr) -> Option<String> {
        match self.memory.find(ptr, 1) {
            Ok((a, off)) => Some(format!("{off} bytes into `{}` ({} bytes at {:#x})", a.label, a.size, a.base())),
            Err(_) => self.memory.describe_near(ptr, 1),
        }
    }

    /// The base address of the allocation holding `[ptr, ptr + len)` and the offset of `ptr` in it.
    fn span(&self, ptr: DevicePtr, len: u64) -> Result<(DevicePtr, usize), MemoryError> {
        let out_of_bounds = || MemoryError::OutOfBounds { ptr, len, detail: self.locate(ptr) };
        let (a, off) = self.memory.find(ptr, 1).map_err(|_| out_of_bounds())?;
        if (off as u64).checked_add(len).is_none_or(|end| end > a.size) {
            let detail = format!(
                "`{}` has {} bytes at {:#x}; the range starts {off} bytes into it and ends {} bytes past its end",
                a.label,
                a.size,
                a.base(),
                (off as u64).saturating_add(len) - a.size
            );
            return Err(MemoryError::OutOfBounds { ptr, len, detail: Some(detail) });
        }
        Ok((a.base(), off))
    }

    /// The base address of the allocation holding all of `[ptr, ptr + len)` and the offset of `ptr` in it;
    /// an error that says where `ptr` lies otherwise.
    pub fn locate_range(&self, ptr: DevicePtr, len: u64) -> Result<(DevicePtr, u64), MemoryError> {
        self.span(ptr, len.max(1)).map(|(base, off)| (base, off as u64))
    }

    /// Makes `len` bytes of host memory at `ptr` device memory (`cudaHostRegister`): kernels may access them,
    /// and [`Runtime::locate_range`] finds them. Undo with [`Runtime::unregister_host`].
    ///
    /// # Safety
    /// The bytes must stay valid (readable, writable, not freed) until they are unregistered.
    pub unsafe fn register_host(&mut self, ptr: u64, len: u64, label: impl Into<String>) -> Result<(), MemoryError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.memory.register_external(ptr, len, label) }.map_err(|detail| MemoryError::OutOfBounds {
            ptr,
            len,
            detail: Some(detail),
        })
    }

    /// Forgets host memory registered by [`Runtime::register_host`].
    pub fn unregister_host(&mut self, ptr: u64) -> Result<(), MemoryError> {
        if self.memory.is_external(ptr) && self.memory.free(ptr) {
            Ok(())
        } else {
            Err(MemoryError::NotAnAllocation { ptr, detail: self.locate(ptr) })
        }
    }

    /// Copies `data` to device memory at `ptr` (anywhere inside an allocation; the bytes must not run past
    /// its end). Module `.const` variables may be written this way too, as with `cudaMemcpyToSymbol`.
    pub fn copy_to_device(&mut self, ptr: DevicePtr, data: &[u8]) -> Result<(), MemoryError> {
        if data.is_empty() {
            return Ok(());
        }
        let (base, off) = self.span(ptr, data.len() as u64)?;
        let bytes = self.memory.bytes_mut(base).ok_or(MemoryError::OutOfBounds {
            ptr,
            len: data.len() as u64,
            detail: None,
        })?;
        bytes[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// Copies `out.len()` bytes at `ptr` from device memory.
    pub fn copy_from_device(&self, ptr: DevicePtr, out: &mut [u8]) -> Result<(), MemoryError> {
        if out.is_empty() {
            return Ok(());
        }
        let (base, off) = self.span(ptr, out.len() as u64)?;
        let len = out.len() as u64;
        let bytes = self.memory.bytes(base).ok_or(MemoryError::OutOfBounds { ptr, len, detail: None })?;
        out.copy_from_slice(&bytes[off..off + out.len()]);
        Ok(())
    }

    /// Reads `len` bytes at `ptr`.
    pub fn read(&self, ptr: DevicePtr, len: u64) -> Result<Vec<u8>, MemoryError> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let (base, off) = self.span(ptr, len)?;
        let bytes = self.memory.bytes(base).ok_or(MemoryError::OutOfBounds { ptr, len, detail: None })?;
        Ok(bytes[off..off + len as usize].to_vec())
    }

    // ---- texture and surface objects ------------------------------------------------------------------

    /// Creates a texture object over device memory (`cudaCreateTextureObject`): `desc.resource.ptr` points at
    /// the texels, laid out as `device::texture` describes, inside one allocation. Returns the 64-bit handle a
    /// kernel takes as its `cudaTextureObject_t` parameter (pass it as `Arg::U64(handle)`).
    pub fn create_texture(&mut self, desc: TextureDesc) -> Result<u64, MemoryError> {
        self.memory.create_texture(desc).map_err(|detail| MemoryError::Object { detail })
    }

    /// Creates a surface object over device memory (`cudaCreateSurfaceObject`); returns its handle.
    pub fn create_surface(&mut self, desc: SurfaceDesc) -> Result<u64, MemoryError> {
        self.memory.create_surface(desc).map_err(|detail| MemoryError::Object { detail })
    }

    /// Destroys a texture or surface object (`cudaDestroyTextureObject` / `cudaDestroySurfaceObject`). Its
    /// buffer stays allocated; kernels that still use the handle fail with an error naming it.
    pub fn destroy_object(&mut self, handle: u64) -> Result<(), MemoryError> {
        if self.memory.destroy_object(handle) {
            Ok(())
        } else {
            Err(MemoryError::Object { detail: self.memory.textures().describe(handle) })
        }
    }

    // ---- modules -----------------------------------------------------------------------------------------

    /// Compiles PTX text (parse, lower, verify) and places its `.global`/`.const` variables in device memory.
    /// `file_name` is used in the rendered diagnostics of a [`LoadError`].
    pub fn load_ptx(&mut self, text: &str, file_name: &str) -> Result<ModuleId, LoadError> {
        match ir::compile(text) {
            Ok(module) => self.load_module(module, file_name),
            Err(diagnostics) => {
                let rendered = ptx::diagnostic::render_all(&diagnostics, file_name, text.as_bytes());
                Err(LoadError::Compile { file_name: file_name.to_string(), diagnostics, rendered })
            }
        }
    }

    /// Like [`Runtime::load_ptx`], for bytes read from a file: text that is not UTF-8 is reported with the
    /// parser's diagnostics (PTX is ASCII).
    pub fn load_ptx_bytes(&mut self, bytes: &[u8], file_name: &str) -> Result<ModuleId, LoadError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.load_ptx(text, file_name),
            Err(e) => {
                let diagnostics = match ptx::parse_bytes(bytes) {
                    Err(diags) => diags,
                    Ok(_) => {
                        let at = e.valid_up_to() as u32;
                        vec![ir::Diagnostic::new(ptx::ast::Span { start: at, end: at + 1 }, "the text is not UTF-8")]
                    }
                };
                let rendered = ptx::diagnostic::render_all(&diagnostics, file_name, bytes);
                Err(LoadError::Compile { file_name: file_name.to_string(), diagnostics, rendered })
            }
        }
    }

    /// Loads an already compiled (verified) module.
    pub fn load_module(&mut self, module: Module, file_name: &str) -> Result<ModuleId, LoadError> {
        let needed: u64 = module
            .globals
            .values()
            .filter(|v| matches!(v.space, StateSpace::Global | StateSpace::Const))
            .map(variable_size)
            .fold(0u64, u64::saturating_add);
        self.check_allocation(needed)
            .map_err(|e| LoadError::Place { file_name: file_name.to_string(), message: e.to_string() })?;
        let loaded = LoadedModule::load(module, &mut self.memory)
            .map_err(|message| LoadError::Place { file_name: file_name.to_string(), message })?;
        let id = ModuleId(self.modules.len() as u32);
        self.modules.push(ModuleEntry { file_name: file_name.to_string(), loaded });
        Ok(id)
    }

    /// A loaded module.
    pub fn module(&self, id: ModuleId) -> Option<&LoadedModule> {
        self.modules.get(id.index()).map(|m| &m.loaded)
    }

    /// The file name a module was loaded under.
    pub fn module_file_name(&self, id: ModuleId) -> Option<&str> {
        self.modules.get(id.index()).map(|m| m.file_name.as_str())
    }

    /// Finds a kernel (`.entry` with a body) by name; `None` chooses the module's only kernel.
    pub fn kernel(&self, module: ModuleId, name: Option<&str>) -> Result<FuncId, KernelError> {
        let m = &self.module(module).ok_or(KernelError::UnknownModule(module))?.module;
        let kernels: Vec<String> = m.kernels().filter(|(_, f)| f.body.is_some()).map(|(_, f)| f.name.clone()).collect();
        match name {
            Some(name) => match m.function(name) {
                None => Err(KernelError::NotFound { name: name.to_string(), kernels }),
                Some(id) if !m.functions[id].is_kernel() => {
                    Err(KernelError::NotAKernel { name: name.to_string(), kernels })
                }
                Some(id) if m.functions[id].body.is_none() => {
                    Err(KernelError::NotDefined { name: name.to_string(), kernels })
                }
                Some(id) => Ok(id),
            },
            None => {
                let mut defined = m.kernels().filter(|(_, f)| f.body.is_some());
                match (defined.next(), defined.next()) {
                    (Some((id, _)), None) => Ok(id),
                    _ => Err(KernelError::Ambiguous { kernels }),
                }
            }
        }
    }

    /// The device address and size in bytes of a module-scope `.global` or `.const` variable.
    pub fn symbol(&self, module: ModuleId, name: &str) -> Result<(DevicePtr, u64), SymbolError> {
        let loaded = self.module(module).ok_or(SymbolError::UnknownModule(module))?;
        if let Some((_, ptr, size)) = loaded.symbol(name) {
            return Ok((ptr, size));
        }
        match loaded.module.globals.values().find(|v| v.name == name) {
            Some(v) => Err(SymbolError::NotInDeviceMemory { name: name.to_string(), space: format!(".{}", v.space) }),
            None => Err(SymbolError::NotFound {
                name: name.to_string(),
                available: loaded
                    .module
                    .globals
                    .values()
                    .filter(|v| matches!(v.space, StateSpace::Global | StateSpace::Const))
                    .map(|v| v.name.clone())
                    .collect(),
            }),
        }
    }

    /// Writes `data` to the start of a module-scope `.global` or `.const` variable (`.const` included: this
    /// is the host's `cudaMemcpyToSymbol`).
    ///
    /// `data` may be shorter than the variable: it fills a prefix, and the bytes after it keep their current
    /// value (the initializer's, or zero). Longer data is an error ([`SymbolError::TooLarge`]).
    pub fn write_symbol(&mut self, module: ModuleId, name: &str, data: &[u8]) -> Result<(), SymbolError> {
        let (ptr, size) = self.symbol(module, name)?;
        if data.len() as u64 > size {
            return Err(SymbolError::TooLarge { name: name.to_string(), size, given: data.len() as u64 });
        }
        if let Some(bytes) = self.memory.bytes_mut(ptr) {
            bytes[..data.len()].copy_from_slice(data);
        }
        Ok(())
    }

    // ---- launches ----------------------------------------------------------------------------------------

    /// Checks and runs one launch; device `printf` output goes to the runtime's printf writer.
    ///
    /// Checks, in order: the shape (`LaunchConfig::validate`), shared memory (static + dynamic ≤
    /// [`MAX_SHARED_PER_BLOCK`]), the number of arguments, each argument against its `.param`
    /// ([`Arg::encode_for`]), then the backend's [`Backend::check_supported`]. Only then does it run.
    pub fn launch(
        &mut self,
        module: ModuleId,
        kernel: FuncId,
        config: LaunchConfig,
        args: &[Arg],
        options: LaunchOptions,
    ) -> Result<LaunchOutcome, RunError> {
        let mut printf = std::mem::replace(&mut self.printf, Box::new(std::io::sink()));
        let result = self.launch_with_output(module, kernel, config, args, options, &mut *printf);
        self.printf = printf;
        result
    }

    /// Like [`Runtime::launch`], with device `printf` output going to `printf`.
    pub fn launch_with_output(
        &mut self,
        module: ModuleId,
        kernel: FuncId,
        config: LaunchConfig,
        args: &[Arg],
        options: LaunchOptions,
        printf: &mut dyn Write,
    ) -> Result<LaunchOutcome, RunError> {
        let params = self.prepare(module, kernel, config, args)?;
        self.launch_with_params(module, kernel, config, &params, options, printf)
    }

    /// Checks a launch's shape and shared memory against the limits (the checks [`Runtime::prepare`] starts
    /// with); returns the kernel.
    pub fn check_launch(
        &self,
        module: ModuleId,
        kernel: FuncId,
        config: LaunchConfig,
    ) -> Result<&ir::Function, RunError> {
        let m = &self.module(module).ok_or(RunError::UnknownModule(module))?.module;
        let func = m
            .functions
            .get(kernel)
            .filter(|f| f.is_kernel() && f.body.is_some())
            .ok_or_else(|| RunError::NotAKernel(format!("{kernel} is not a defined kernel of module {module}")))?;
        let name = func.name.clone();
        config.validate().map_err(|message| RunError::InvalidLaunch { kernel: name.clone(), message })?;
        let layout = SharedLayout::for_kernel(m, kernel);
        let total = layout.dynamic_offset.saturating_add(u64::from(config.dynamic_shared));
        if total > MAX_SHARED_PER_BLOCK {
            return Err(RunError::InvalidLaunch {
                kernel: name,
                message: format!(
                    "{} bytes of static and {} bytes of dynamic shared memory exceed the {MAX_SHARED_PER_BLOCK}-byte \
                     limit per block",
                    layout.static_size, config.dynamic_shared
                ),
            });
        }
        Ok(func)
    }

    /// Runs a launch whose parameter buffer the caller built (a CUDA runtime copies each argument's bytes
    /// from the pointers the program passes): [`Runtime::check_launch`], the backend's
    /// [`Backend::check_supported`], then the kernel. `params` must be laid out for the kernel
    /// ([`ParamBuffer::for_kernel`]).
    pub fn launch_with_params(
        &mut self,
        module: ModuleId,
        kernel: FuncId,
        config: LaunchConfig,
        params: &ParamBuffer,
        options: LaunchOptions,
        printf: &mut dyn Write,
    ) -> Result<LaunchOutcome, RunError> {
        self.check_launch(module, kernel, config)?;
        self.heap_for(module);
        let entry = &self.modules[module.index()];
        self.backend.check_supported(&entry.loaded, kernel)?;
        let launch = Launch { module: &entry.loaded, kernel, config, params, collect_stats: options.stats };
        let start = Instant::now();
        let report = if options.cooperative {
            // The grid's workspace lives as long as the launch (a GPU driver keeps one per context).
            let workspace = self.memory.alloc(device::GRID_WORKSPACE_BYTES, "cooperative grid workspace");
            let report = self.backend.launch_cooperative(&launch, &mut self.memory, printf, workspace);
            self.memory.free(workspace);
            report?
        } else {
            self.backend.launch(&launch, &mut self.memory, printf)?
        };
        let elapsed = start.elapsed();
        // A closed pipe is not the kernel's failure.
        let _ = printf.flush();
        Ok(LaunchOutcome { stats: report.stats, elapsed })
    }

    /// Validates a launch and builds its parameter buffer, without running anything.
    pub fn prepare(
        &self,
        module: ModuleId,
        kernel: FuncId,
        config: LaunchConfig,
        args: &[Arg],
    ) -> Result<ParamBuffer, RunError> {
        let func = self.check_launch(module, kernel, config)?;
        let name = func.name.clone();
        if args.len() != func.params.len() {
            return Err(RunError::ArgumentCount {
                kernel: name,
                expected: func.params.len(),
                given: args.len(),
                params: func
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| format!("{} ({})", param_label(i, p), describe(p).trim_start_matches("a ")))
                    .collect(),
            });
        }
        let mut buffer = ParamBuffer::for_kernel(func);
        for (index, (arg, param)) in args.iter().zip(&func.params).enumerate() {
            let fail = |message: String| RunError::Argument {
                kernel: name.clone(),
                index,
                param: param_label(index, param),
                message,
            };
            let bytes = arg.encode_for(param).map_err(fail)?;
            buffer.set(index, &bytes).map_err(fail)?;
        }
        Ok(buffer)
    }
}
