//! The CUDA driver API (`libcuda.so.1`): programs that load PTX themselves — NVRTC programs, Numba,
//! `cuda.core`/`cuda-bindings`, pycuda — run their kernels on lockstep's engines.
//!
//! Like `crates/cudart`, this crate is a C shell: it converts arguments and structures (`abi.rs`) and calls
//! the `cuda` crate, which owns the semantics. It is linked into the same shared library as the runtime
//! API, which lockstep installs under both names (`libcudart.so.13` and `libcuda.so.1`), so a process that
//! uses both APIs has one device: memory from `cudaMalloc` works with `cuLaunchKernel` and the reverse.
//!
//! Every function returns a `CUresult` (`error.rs`). Functions lockstep does not implement are generated
//! by `build.rs` from the export list (`symbols.rs`, from CUDA 13.5's `cuda.h`): each returns
//! `CUDA_ERROR_NOT_SUPPORTED` and warns once, naming itself. `cuGetProcAddress` (`proc.rs`) resolves a name
//! and CUDA version to the function NVIDIA's driver would give, among this library's exports.

/// `$name`, a per-thread default stream form (`_ptsz`/`_ptds`) of `$base`: the null stream means the
/// calling thread's default stream (the parameter named `stream`; other parameters pass through).
macro_rules! per_thread {
    ($($name:ident => $base:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        $(
            /// # Safety
            #[doc = concat!("As [`", stringify!($base), "`].")]
            #[cshell::export]
            #[allow(clippy::too_many_arguments, unused_unsafe)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::error::CUresult {
                // SAFETY: the caller's promise.
                unsafe { $base($(per_thread_arg!($arg, $arg)),*) }
            }
        )*
    };
}

/// The argument `$arg` as the base function takes it (the first token matches the parameter's name).
macro_rules! per_thread_arg {
    (stream, $arg:ident) => {
        $crate::per_thread_stream($arg)
    };
    ($name:ident, $arg:ident) => {
        $arg
    };
}

/// `$name`, another ABI name of `$base` with the same parameters (old and new versions that did not
/// change their signature, `_ptds` copies whose stream is implied).
macro_rules! alias {
    ($($name:ident => $base:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        $(
            /// # Safety
            #[doc = concat!("As [`", stringify!($base), "`].")]
            #[cshell::export]
            #[allow(clippy::too_many_arguments, unused_unsafe)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::error::CUresult {
                // SAFETY: the caller's promise.
                unsafe { $base($($arg),*) }
            }
        )*
    };
}

pub mod abi;
mod context;
mod device;
pub mod error;
pub mod graph;
pub mod graph_edit;
pub mod graph_generic;
pub mod graph_nodes;
mod launch;
pub mod memory;
pub mod module;
pub mod pool;
pub mod proc;
pub mod stream;
pub mod symbols;
mod tensormap;
pub mod unsupported;

use cuda::Cuda;

use crate::error::{CUresult, CUDA_SUCCESS};

/// The process's CUDA state.
fn cuda() -> &'static Cuda {
    Cuda::get()
}

/// A call's result as `CUresult`.
fn ret(result: cuda::Result<()>) -> CUresult {
    match result {
        Ok(()) => CUDA_SUCCESS,
        Err(e) => error::from_core(e),
    }
}

/// The driver is initialized and the calling thread has a live current context (what most calls need).
fn with_context() -> cuda::Result<&'static Cuda> {
    let c = cuda();
    c.current_context()?;
    Ok(c)
}

/// Stores `value` through an output pointer; a null pointer is `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
/// A non-null `ptr` must be valid for a write of `T`.
unsafe fn out<T>(ptr: *mut T, value: T) -> cuda::Result<()> {
    if ptr.is_null() {
        return Err(cuda::Error::INVALID_VALUE);
    }
    // SAFETY: non-null, and the caller's promise.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// A C string from the program; null is `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
/// A non-null `s` is NUL-terminated.
unsafe fn text(s: *const std::ffi::c_char) -> cuda::Result<String> {
    if s.is_null() {
        return Err(cuda::Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

/// Only device 0 exists.
fn check_device(device: i32) -> cuda::Result<()> {
    if device == 0 {
        Ok(())
    } else {
        Err(cuda::Error::INVALID_DEVICE)
    }
}

/// The stream a `_ptsz` function means by the null stream.
fn per_thread_stream(stream: abi::CUstream) -> abi::CUstream {
    if stream.is_null() {
        cuda::PER_THREAD_STREAM as abi::CUstream
    } else {
        stream
    }
}
