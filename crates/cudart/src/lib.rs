//! `libcudart.so.13`: the CUDA runtime API for programs built with `nvcc -cudart shared`, running their
//! kernels on lockstep's JIT or emulator.
//!
//! This crate is the C shell: it converts C arguments and structures (`abi.rs`) and calls the `cuda`
//! crate, which owns the semantics. Every function returns a `cudaError_t` and records it as the calling
//! thread's last error, as CUDA does. Every function NVIDIA's `libcudart.so.13` exports is exported here;
//! those lockstep does not implement (`cuda::unsupported`) return `cudaErrorNotSupported` and warn once,
//! naming themselves, so a program never dies of a missing symbol.
//!
//! The library's soname is `libcudart.so.13` and it defines the version nodes `libcudart.so.13` and
//! `libcudart.so.12` (`build.rs`, `exports.map`), which the imports of nvcc 13 and 12 binaries name.

/// `$name`, a `_ptds` form (programs built with `--default-stream per-thread`): the same call as `$base`.
/// `unsafe_ptds!` for an `unsafe` base.
macro_rules! ptds {
    ($name:ident => $base:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        #[cshell::export]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $name($($arg: $ty),*) -> $crate::abi::cudaError_t {
            $base($($arg),*)
        }
    };
}

macro_rules! unsafe_ptds {
    ($name:ident => $base:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        /// # Safety
        #[doc = concat!("As [`", stringify!($base), "`].")]
        #[cshell::export]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::abi::cudaError_t {
            // SAFETY: the caller's promise.
            unsafe { $base($($arg),*) }
        }
    };
}

/// `$name`, a `_ptsz` form: `$base` with the null stream meaning the calling thread's default stream (the
/// parameter named `stream`). `unsafe_ptsz!` for an `unsafe` base.
macro_rules! ptsz {
    ($name:ident => $base:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        #[cshell::export]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $name($($arg: $ty),*) -> $crate::abi::cudaError_t {
            $base($(ptsz_arg!($arg, $arg)),*)
        }
    };
}

macro_rules! unsafe_ptsz {
    ($name:ident => $base:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        /// # Safety
        #[doc = concat!("As [`", stringify!($base), "`].")]
        #[cshell::export]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::abi::cudaError_t {
            // SAFETY: the caller's promise.
            unsafe { $base($(ptsz_arg!($arg, $arg)),*) }
        }
    };
}

/// The argument `$arg` as the base function takes it (the first token matches the parameter's name).
macro_rules! ptsz_arg {
    (stream, $arg:ident) => {
        $crate::per_thread($arg) as $crate::abi::cudaStream_t
    };
    ($name:ident, $arg:ident) => {
        $arg
    };
}

mod abi;
mod capture;
mod device;
mod graph;
mod launch;
mod library;
mod memory;
mod pool;
mod stream;
mod texture;
mod unsupported;

use cuda::{Cuda, Error};

pub use abi::cudaError_t;
/// The driver API's functions (`libcuda.so.1`) are exported from this library too: lockstep installs it
/// under both names, so that a program using both APIs has one device.
pub use cudadrv;

/// The process's CUDA state. The runtime's first call on a thread makes the primary context current
/// there, as NVIDIA's runtime does, for the driver API calls the program may mix in.
fn cuda() -> &'static Cuda {
    let c = Cuda::get();
    c.runtime_enter();
    c
}

/// A call's result as `cudaError_t`, recorded as the thread's last error when it is one.
fn ret(result: cuda::Result<()>) -> cudaError_t {
    match cuda().record(result) {
        Ok(()) => 0,
        Err(e) => e.code(),
    }
}

/// Stores `value` through an output pointer; a null pointer is `cudaErrorInvalidValue`.
///
/// # Safety
/// A non-null `ptr` must be valid for a write of `T`.
unsafe fn out<T>(ptr: *mut T, value: T) -> cuda::Result<()> {
    if ptr.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: non-null, and the caller's promise; unaligned writes are allowed for C structs given by
    // the program.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Only device 0 exists.
fn check_device(device: i32) -> cuda::Result<()> {
    if device == 0 {
        Ok(())
    } else {
        Err(Error::INVALID_DEVICE)
    }
}

/// The stream a `_ptsz` function means by the null stream.
fn per_thread(stream: abi::cudaStream_t) -> u64 {
    if stream.is_null() {
        cuda::PER_THREAD_STREAM
    } else {
        stream as u64
    }
}
