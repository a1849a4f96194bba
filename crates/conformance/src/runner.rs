//! The backend-agnostic runner: load a module, allocate and fill buffers, lay out parameters, launch, read
//! everything back.

use std::fmt;

use device::{Backend, DeviceMemory, Dim3, ExecError, Launch, LaunchConfig, LoadedModule, ParamBuffer};

use crate::data::{to_bytes, Elem};

/// Creates a fresh execution engine.
pub type BackendFactory = fn() -> Box<dyn Backend>;

/// Every engine the suite runs each case on. `LOCKSTEP_BACKENDS=emu` (or `jit`) restricts the list.
pub fn backends() -> Vec<(&'static str, BackendFactory)> {
    let all: Vec<(&'static str, BackendFactory)> = vec![
        ("emu", || Box::new(emu::Emulator::new())),
        ("jit", || Box::new(jit::Jit::new(jit::Options { threads: 2, ..jit::Options::default() }))),
    ];
    match std::env::var("LOCKSTEP_BACKENDS") {
        Ok(only) => all.into_iter().filter(|(n, _)| only.split(',').any(|o| o == *n)).collect(),
        Err(_) => all,
    }
}

/// Builds a by-value parameter from the device addresses of the arguments (then of the extra buffers).
pub type Deferred = std::sync::Arc<dyn Fn(&[Option<u64>]) -> Vec<u8> + Send + Sync>;

/// One kernel argument.
#[derive(Clone)]
pub enum Arg {
    /// A by-value parameter: its little-endian bytes (length = the parameter's size).
    Scalar(Vec<u8>),
    /// A device buffer with initial contents; read back after the launch.
    Buffer(Vec<u8>),
    /// A zero-filled device buffer of this many bytes; read back after the launch.
    Zeroed(usize),
    /// A by-value parameter built after the buffers are allocated: the callback gets every argument's device
    /// address (`None` for scalars), followed by those of the request's extra buffers, and returns the bytes
    /// (structs that hold pointers).
    Deferred(Deferred),
    /// A texture object (`cudaTextureObject_t`) over a device buffer holding these texels: the parameter is
    /// its handle, and the buffer is read back after the launch like a [`Arg::Buffer`]. The resource's `ptr`
    /// is set by the runner.
    Texture(Vec<u8>, device::TextureDesc),
    /// A surface object (`cudaSurfaceObject_t`) over a device buffer holding these bytes, read back after the
    /// launch.
    Surface(Vec<u8>, device::SurfaceDesc),
}

impl std::fmt::Debug for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Scalar(b) => f.debug_tuple("Scalar").field(b).finish(),
            Arg::Buffer(b) => write!(f, "Buffer({} bytes)", b.len()),
            Arg::Zeroed(n) => write!(f, "Zeroed({n})"),
            Arg::Deferred(_) => f.write_str("Deferred(..)"),
            Arg::Texture(b, d) => write!(f, "Texture({} bytes, {d:?})", b.len()),
            Arg::Surface(b, d) => write!(f, "Surface({} bytes, {d:?})", b.len()),
        }
    }
}

impl Arg {
    pub fn scalar<T: Elem>(v: T) -> Arg {
        Arg::Scalar(to_bytes(&[v]))
    }

    pub fn input<T: Elem>(values: &[T]) -> Arg {
        Arg::Buffer(to_bytes(values))
    }

    /// A zero-filled buffer of `n` elements of `T`.
    pub fn output<T: Elem>(n: usize) -> Arg {
        Arg::Zeroed(n * T::SIZE)
    }

    pub fn deferred(f: impl Fn(&[Option<u64>]) -> Vec<u8> + Send + Sync + 'static) -> Arg {
        Arg::Deferred(std::sync::Arc::new(f))
    }

    /// A texture object over `texels` (see [`Arg::Texture`]).
    pub fn texture(texels: Vec<u8>, resource: device::texture::Resource, sampler: device::texture::Sampler) -> Arg {
        Arg::Texture(texels, device::TextureDesc { resource, sampler })
    }

    /// A surface object over `bytes` (see [`Arg::Surface`]).
    pub fn surface(bytes: Vec<u8>, resource: device::texture::Resource) -> Arg {
        Arg::Surface(bytes, device::SurfaceDesc { resource })
    }

    fn is_buffer(&self) -> bool {
        matches!(self, Arg::Buffer(_) | Arg::Zeroed(_) | Arg::Texture(..) | Arg::Surface(..))
    }
}

/// Grid, block and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: u32,
}

impl Shape {
    /// A 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Shape {
        Shape { grid: Dim3::new(grid, 1, 1), block: Dim3::new(block, 1, 1), dynamic_shared: 0 }
    }

    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Shape {
        Shape {
            grid: Dim3::new(grid.0, grid.1, grid.2),
            block: Dim3::new(block.0, block.1, block.2),
            dynamic_shared: 0,
        }
    }

    pub fn shared(mut self, bytes: u32) -> Shape {
        self.dynamic_shared = bytes;
        self
    }

    pub fn config(&self) -> LaunchConfig {
        LaunchConfig { grid: self.grid, block: self.block, dynamic_shared: self.dynamic_shared }
    }

    pub fn threads(&self) -> u64 {
        self.grid.count().unwrap_or(0) * self.block.count().unwrap_or(0)
    }
}

/// Everything a launch produced.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// The final bytes of each buffer argument (`None` for scalars), by parameter index.
    pub buffers: Vec<Option<Vec<u8>>>,
    /// The device address each buffer argument had (`None` for scalars).
    pub addresses: Vec<Option<u64>>,
    /// Module variables read back after the launch, in the order requested.
    pub symbols: Vec<(String, Vec<u8>)>,
    /// The final bytes of the extra buffers (memory reached only through pointers inside by-value
    /// parameters).
    pub extra: Vec<Vec<u8>>,
    /// Device `printf` output.
    pub stdout: Vec<u8>,
}

impl Output {
    pub fn buffer(&self, arg: usize) -> &[u8] {
        self.buffers.get(arg).and_then(|b| b.as_deref()).unwrap_or(&[])
    }

    pub fn symbol(&self, name: &str) -> Option<&[u8]> {
        self.symbols.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice())
    }
}

/// Why a run produced no [`Output`].
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The PTX did not parse, lower or verify, or its variables could not be placed.
    Load(String),
    /// The module has no kernel of that name.
    NoKernel(String),
    /// The arguments do not fit the kernel's parameters.
    Args(String),
    /// The backend refused the kernel or the kernel failed; `stdout` is the printf output produced before.
    Exec(ExecError, Vec<u8>),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Load(m) => write!(f, "loading the module: {m}"),
            RunError::NoKernel(k) => write!(f, "the module has no kernel `{k}`"),
            RunError::Args(m) => write!(f, "arguments: {m}"),
            RunError::Exec(e, _) => write!(f, "{e}"),
        }
    }
}

/// One launch request.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub kernel: &'a str,
    pub shape: Shape,
    pub args: &'a [Arg],
    /// Module variables to initialise before the launch (`__constant__` data set by the host).
    pub symbol_writes: &'a [(String, Vec<u8>)],
    /// Module variables to read back afterwards.
    pub symbol_reads: &'a [String],
    /// Buffers that are not parameters themselves (a struct parameter points at them; see [`Arg::Deferred`]).
    pub extra: &'a [Vec<u8>],
}

/// [`run`] on a PTX file: compiles it (`ir::compile`, cached per process) first.
pub fn run_file(backend: &mut dyn Backend, ptx: &std::path::Path, req: &Request<'_>) -> Result<Output, RunError> {
    let module = crate::corpus::compile(ptx).map_err(RunError::Load)?;
    run(backend, &module, req)
}

/// Loads `module` into fresh device memory, runs `req.kernel` on `backend` and reads every buffer back.
/// `check_supported` runs first, so a kernel the backend cannot execute fails with `ErrorKind::Unsupported`
/// before anything is allocated for it.
pub fn run(backend: &mut dyn Backend, module: &ir::Module, req: &Request<'_>) -> Result<Output, RunError> {
    let mut memory = DeviceMemory::new();
    let loaded = LoadedModule::load(module.clone(), &mut memory).map_err(RunError::Load)?;
    let kernel = loaded
        .module
        .kernels()
        .find(|(_, f)| f.name == req.kernel)
        .map(|(id, _)| id)
        .ok_or_else(|| RunError::NoKernel(req.kernel.to_string()))?;
    backend.check_supported(&loaded, kernel).map_err(|e| RunError::Exec(e, Vec::new()))?;
    let function = &loaded.module.functions[kernel];
    if function.params.len() != req.args.len() {
        return Err(RunError::Args(format!(
            "`{}` has {} parameters, the case passes {}",
            req.kernel,
            function.params.len(),
            req.args.len()
        )));
    }
    let mut params = ParamBuffer::for_kernel(function);
    let mut addresses = Vec::with_capacity(req.args.len());
    for (i, arg) in req.args.iter().enumerate() {
        let address = match arg {
            Arg::Buffer(bytes) => Some(memory.alloc_bytes(bytes, format!("argument {i}"))),
            Arg::Zeroed(n) => Some(memory.alloc(*n as u64, format!("argument {i}"))),
            Arg::Texture(bytes, _) => Some(memory.alloc_bytes(bytes, format!("texels of argument {i}"))),
            Arg::Surface(bytes, _) => Some(memory.alloc_bytes(bytes, format!("surface of argument {i}"))),
            Arg::Scalar(_) | Arg::Deferred(_) => None,
        };
        addresses.push(address);
    }
    let extra_addresses: Vec<u64> =
        req.extra.iter().enumerate().map(|(k, b)| memory.alloc_bytes(b, format!("extra buffer {k}"))).collect();
    let mut all_addresses = addresses.clone();
    all_addresses.extend(extra_addresses.iter().map(|&a| Some(a)));
    for (i, arg) in req.args.iter().enumerate() {
        let bytes = match arg {
            Arg::Scalar(b) => b.clone(),
            Arg::Deferred(build) => build(&all_addresses),
            Arg::Buffer(_) | Arg::Zeroed(_) => addresses[i].unwrap_or(0).to_le_bytes().to_vec(),
            Arg::Texture(_, desc) => {
                let resource = device::texture::Resource { ptr: addresses[i].unwrap_or(0), ..desc.resource };
                let handle = memory
                    .create_texture(device::TextureDesc { resource, ..*desc })
                    .map_err(|m| RunError::Args(format!("parameter {i}: texture object: {m}")))?;
                handle.to_le_bytes().to_vec()
            }
            Arg::Surface(_, desc) => {
                let resource = device::texture::Resource { ptr: addresses[i].unwrap_or(0), ..desc.resource };
                let handle = memory
                    .create_surface(device::SurfaceDesc { resource })
                    .map_err(|m| RunError::Args(format!("parameter {i}: surface object: {m}")))?;
                handle.to_le_bytes().to_vec()
            }
        };
        params.set(i, &bytes).map_err(|m| RunError::Args(format!("parameter {i}: {m}")))?;
    }
    for (name, bytes) in req.symbol_writes {
        let (_, address, size) =
            loaded.symbol(name).ok_or_else(|| RunError::Args(format!("no module variable `{name}`")))?;
        if bytes.len() as u64 > size {
            return Err(RunError::Args(format!("`{name}` has {size} bytes, the case writes {}", bytes.len())));
        }
        memory.write_initial(address, bytes).map_err(|e| RunError::Args(format!("writing `{name}`: {e}")))?;
    }
    let launch = Launch { module: &loaded, kernel, config: req.shape.config(), params: &params, collect_stats: false };
    let mut stdout = Vec::new();
    if let Err(e) = backend.launch(&launch, &mut memory, &mut stdout) {
        return Err(RunError::Exec(e, stdout));
    }
    let buffers = req
        .args
        .iter()
        .zip(&addresses)
        .map(|(arg, address)| match (arg.is_buffer(), address) {
            (true, Some(a)) => memory.bytes(*a).map(<[u8]>::to_vec),
            _ => None,
        })
        .collect();
    let mut symbols = Vec::new();
    for name in req.symbol_reads {
        let (_, address, size) =
            loaded.symbol(name).ok_or_else(|| RunError::Args(format!("no module variable `{name}`")))?;
        let mut bytes = vec![0u8; size as usize];
        memory.read(address, &mut bytes).map_err(|e| RunError::Args(format!("reading `{name}`: {e}")))?;
        symbols.push((name.clone(), bytes));
    }
    let extra = extra_addresses.iter().map(|&a| memory.bytes(a).map(<[u8]>::to_vec).unwrap_or_default()).collect();
    Ok(Output { buffers, addresses, symbols, stdout, extra })
}
