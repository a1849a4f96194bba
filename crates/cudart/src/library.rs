//! The runtime's library management (CUDA 12: `cudaLibraryLoadData`, `cudaLibraryGetKernel`, ...) over the
//! driver's `cuLibrary*` functions, which share lockstep's modules: a `cudaKernel_t` is the driver's function
//! handle, and the runtime's launches take it where they take a kernel's address.

use std::ffi::{c_char, c_void};

use cudadrv::abi::{CUdeviceptr, CUjit_option};
use cudadrv::error::CUresult;
use cudadrv::module as drv;

use crate::abi::cudaError_t;
use crate::{cuda, ret};

/// `cudaLibrary_t`, `cudaKernel_t`: the driver's handles.
type Library = *mut c_void;
type KernelHandle = *mut c_void;

/// A driver call's result as the runtime's: the codes the library functions return mean the same in both.
fn from_driver(r: CUresult) -> cudaError_t {
    // The runtime's thread enters first, so that the driver calls find the primary context current.
    ret(if r == 0 { Ok(()) } else { Err(cuda::Error(r)) })
}

/// # Safety
/// As `cuLibraryLoadData`.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaLibraryLoadData(
    library: *mut Library,
    code: *const c_void,
    jit_options: *const CUjit_option,
    jit_values: *mut *mut c_void,
    n_jit: u32,
    library_options: *const i32,
    library_values: *mut *mut c_void,
    n_library: u32,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    from_driver(unsafe {
        drv::cuLibraryLoadData(
            library,
            code,
            jit_options,
            jit_values,
            n_jit,
            library_options,
            library_values,
            n_library,
        )
    })
}

/// # Safety
/// As `cuLibraryLoadFromFile`.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaLibraryLoadFromFile(
    library: *mut Library,
    path: *const c_char,
    jit_options: *const CUjit_option,
    jit_values: *mut *mut c_void,
    n_jit: u32,
    library_options: *const i32,
    library_values: *mut *mut c_void,
    n_library: u32,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    from_driver(unsafe {
        drv::cuLibraryLoadFromFile(
            library,
            path,
            jit_options,
            jit_values,
            n_jit,
            library_options,
            library_values,
            n_library,
        )
    })
}

#[cshell::export]
pub extern "C" fn cudaLibraryUnload(library: Library) -> cudaError_t {
    cuda();
    from_driver(drv::cuLibraryUnload(library))
}

/// # Safety
/// `kernel` is valid for a write; `name` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cudaLibraryGetKernel(
    kernel: *mut KernelHandle,
    library: Library,
    name: *const c_char,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    let r = unsafe { drv::cuLibraryGetKernel(kernel.cast(), library, name) };
    // The runtime answers a library that is gone (unloaded) as it answers a name it lacks (observed with
    // CUDA 13 on an H100).
    let gone = r == cudadrv::error::CUDA_ERROR_INVALID_HANDLE && !library.is_null();
    from_driver(if gone { cudadrv::error::CUDA_ERROR_NOT_FOUND } else { r })
}

/// # Safety
/// `ptr` and `size` are valid for writes (or null); `name` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cudaLibraryGetGlobal(
    ptr: *mut *mut c_void,
    size: *mut usize,
    library: Library,
    name: *const c_char,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    from_driver(unsafe { drv::cuLibraryGetGlobal(ptr.cast::<CUdeviceptr>(), size, library, name) })
}

/// # Safety
/// As [`cudaLibraryGetGlobal`].
#[cshell::export]
pub unsafe extern "C" fn cudaLibraryGetManaged(
    ptr: *mut *mut c_void,
    size: *mut usize,
    library: Library,
    name: *const c_char,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    from_driver(unsafe { drv::cuLibraryGetManaged(ptr.cast::<CUdeviceptr>(), size, library, name) })
}

/// # Safety
/// `count` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaLibraryGetKernelCount(count: *mut u32, library: Library) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    from_driver(unsafe { drv::cuLibraryGetKernelCount(count, library) })
}

/// # Safety
/// `kernels` has room for `n` handles.
#[cshell::export]
pub unsafe extern "C" fn cudaLibraryEnumerateKernels(
    kernels: *mut KernelHandle,
    n: u32,
    library: Library,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    from_driver(unsafe { drv::cuLibraryEnumerateKernels(kernels.cast(), n, library) })
}

/// The settable attributes (dynamic shared memory, carveout, cluster requirements) have the driver's numbers.
#[cshell::export]
pub extern "C" fn cudaKernelSetAttributeForDevice(
    kernel: KernelHandle,
    attr: i32,
    value: i32,
    device: i32,
) -> cudaError_t {
    cuda();
    from_driver(drv::cuKernelSetAttribute(attr, value, kernel.cast(), device))
}
