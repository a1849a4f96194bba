//! Running PTX kernels from Rust.
//!
//! A [`Runtime`] owns device memory and loaded modules and launches kernels on a [`device::Backend`] (the
//! emulator, later the JIT; the runtime does not depend on either — the caller constructs the backend):
//!
//! ```text
//! let mut rt = Runtime::new(Box::new(emu::Emulator::new()));
//! let module = rt.load_ptx(&text, "saxpy.ptx")?;
//! let kernel = rt.kernel(module, Some("saxpy"))?;
//! let x = rt.alloc_from(&bytes_of_x)?;
//! let y = rt.alloc_from(&bytes_of_y)?;
//! let config = LaunchConfig { grid: Dim3::new(4, 1, 1), block: Dim3::new(256, 1, 1), dynamic_shared: 0 };
//! let args = [Arg::S32(1024), Arg::F32(2.0), Arg::Ptr(x), Arg::Ptr(y)];
//! let outcome = rt.launch(module, kernel, config, &args, LaunchOptions { stats: true, cooperative: false })?;
//! let result = rt.read(y, 4096)?;
//! ```
//!
//! [`args`] parses the text form of arguments (`s32:1024`, `f32[1024]:iota`, `u8[]:@data.bin`), [`outputs`]
//! writes buffers back to files, [`symbols`] fills module variables from files: the `lockstep run` command
//! is these pieces in sequence.

pub mod arg;
pub mod args;
pub mod atomic;
pub mod error;
pub mod outputs;
pub mod runtime;
pub mod symbols;

pub use arg::Arg;
pub use args::{ArgError, ArgList, ArgSpec, Buffer, ElemType, PreparedArgs};
pub use atomic::write_atomic;
pub use device::{DevicePtr, Dim3, KernelStats, LaunchConfig};
pub use error::{KernelError, LoadError, MemoryError, RunError, SymbolError};
pub use outputs::{write_outputs, OutputError, OutputSpec, WrittenOutput};
pub use runtime::{LaunchOptions, LaunchOutcome, ModuleId, Runtime, DEFAULT_MEMORY_LIMIT, MAX_SHARED_PER_BLOCK};
pub use symbols::SymbolSpec;
