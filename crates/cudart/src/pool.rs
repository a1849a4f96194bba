//! Memory pools (`cudaMemPool_t`; `cuda::pool` has the semantics): the device's default and current pools,
//! pools the program creates, their attributes and access. `cudaMallocAsync` and `cudaMallocFromPoolAsync`
//! are in `memory.rs`. The C structures are the driver's, so most functions call the driver shell's
//! (`cudadrv::pool`).

use std::ffi::c_void;

use crate::abi::{cudaError_t, cudaMemAccessDesc, cudaMemLocation, cudaMemPoolProps, cudaMemPool_t};
use crate::{cuda, out, ret};

/// # Safety
/// `pool` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetDefaultMemPool(pool: *mut cudaMemPool_t, device: i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().default_mem_pool(device).and_then(|p| unsafe { out(pool, p as cudaMemPool_t) }))
}

/// # Safety
/// `pool` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetMemPool(pool: *mut cudaMemPool_t, device: i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().mem_pool(device).and_then(|p| unsafe { out(pool, p as cudaMemPool_t) }))
}

#[cshell::export]
pub extern "C" fn cudaDeviceSetMemPool(device: i32, pool: cudaMemPool_t) -> cudaError_t {
    ret(cuda().set_mem_pool(device, pool as u64))
}

/// # Safety
/// `pool` is valid for a write of a handle and `props` for a read of `cudaMemPoolProps`.
#[cshell::export]
pub unsafe extern "C" fn cudaMemPoolCreate(pool: *mut cudaMemPool_t, props: *const cudaMemPoolProps) -> cudaError_t {
    // SAFETY: the caller's promise (`cudaMemPoolProps` is `CUmemPoolProps`).
    ret(unsafe { cudadrv::pool::create(pool, props.cast()) })
}

#[cshell::export]
pub extern "C" fn cudaMemPoolDestroy(pool: cudaMemPool_t) -> cudaError_t {
    ret(cuda().mem_pool_destroy(pool as u64))
}

/// # Safety
/// `value` is valid for a write of the attribute's type (`int` for the reuse policies, `cuuint64_t`
/// otherwise).
#[cshell::export]
pub unsafe extern "C" fn cudaMemPoolGetAttribute(pool: cudaMemPool_t, attr: i32, value: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::pool::get_attribute(pool as u64, attr, value) })
}

/// # Safety
/// `value` is valid for a read of the attribute's type (as [`cudaMemPoolGetAttribute`]).
#[cshell::export]
pub unsafe extern "C" fn cudaMemPoolSetAttribute(pool: cudaMemPool_t, attr: i32, value: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::pool::set_attribute(pool as u64, attr, value) })
}

#[cshell::export]
pub extern "C" fn cudaMemPoolTrimTo(pool: cudaMemPool_t, _min_bytes_to_keep: usize) -> cudaError_t {
    ret(cuda().mem_pool_trim_to(pool as u64))
}

/// # Safety
/// `descs` is valid for reads of `count` descriptors.
#[cshell::export]
pub unsafe extern "C" fn cudaMemPoolSetAccess(
    pool: cudaMemPool_t,
    descs: *const cudaMemAccessDesc,
    count: usize,
) -> cudaError_t {
    // SAFETY: the caller's promise (`cudaMemAccessDesc` is `CUmemAccessDesc`).
    ret(unsafe { cudadrv::pool::set_access(pool as u64, descs.cast(), count) })
}

/// # Safety
/// `flags` is valid for a write of an `int` and `location` for a read of a `cudaMemLocation`.
#[cshell::export]
pub unsafe extern "C" fn cudaMemPoolGetAccess(
    flags: *mut i32,
    pool: cudaMemPool_t,
    location: *mut cudaMemLocation,
) -> cudaError_t {
    // SAFETY: the caller's promise (`cudaMemLocation` is `CUmemLocation`).
    ret(unsafe { cudadrv::pool::access(flags, pool as u64, location.cast()) })
}

/// # Safety
/// `pool` is valid for a write of a handle, `location` for a read.
#[cshell::export]
pub unsafe extern "C" fn cudaMemGetDefaultMemPool(
    pool: *mut cudaMemPool_t,
    location: *const cudaMemLocation,
    alloc_type: i32,
) -> cudaError_t {
    // SAFETY: the caller's promise (the location structures have one layout).
    ret(unsafe { cudadrv::pool::pool_of(pool.cast(), location.cast(), alloc_type, false) })
}

/// # Safety
/// `pool` is valid for a write of a handle, `location` for a read.
#[cshell::export]
pub unsafe extern "C" fn cudaMemGetMemPool(
    pool: *mut cudaMemPool_t,
    location: *const cudaMemLocation,
    alloc_type: i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::pool::pool_of(pool.cast(), location.cast(), alloc_type, true) })
}

/// # Safety
/// `location` is valid for a read.
#[cshell::export]
pub unsafe extern "C" fn cudaMemSetMemPool(
    location: *const cudaMemLocation,
    alloc_type: i32,
    pool: cudaMemPool_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::pool::set_pool_of(location.cast(), alloc_type, pool) })
}
