//! Memory pools through the driver API (`CUmemoryPool`; `cuda::pool` has the semantics, shared with the
//! runtime's `cudaMemPool*`): the device's default and current pools, created pools, their attributes and
//! access, and `cuMemAllocFromPoolAsync`.

use std::ffi::c_void;

use cuda::pool::PoolAttr;
use cuda::Error;

use crate::abi::{CUdevice, CUdeviceptr, CUmemAccessDesc, CUmemLocation, CUmemPoolProps, CUmemoryPool, CUstream};
use crate::error::CUresult;
use crate::{cuda, out, ret, with_context};

/// # Safety
/// `pool` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetDefaultMemPool(pool: *mut CUmemoryPool, device: CUdevice) -> CUresult {
    let c = cuda();
    let result = c.driver_initialized().and_then(|()| c.default_mem_pool(device));
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(pool, p as CUmemoryPool) }))
}

/// # Safety
/// `pool` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetMemPool(pool: *mut CUmemoryPool, device: CUdevice) -> CUresult {
    let c = cuda();
    let result = c.driver_initialized().and_then(|()| c.mem_pool(device));
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(pool, p as CUmemoryPool) }))
}

#[cshell::export]
pub extern "C" fn cuDeviceSetMemPool(device: CUdevice, pool: CUmemoryPool) -> CUresult {
    let c = cuda();
    ret(c.driver_initialized().and_then(|()| c.set_mem_pool(device, pool as u64)))
}

/// # Safety
/// `pool` is valid for a write of a handle and `props` for a read of `CUmemPoolProps`.
#[cshell::export]
pub unsafe extern "C" fn cuMemPoolCreate(pool: *mut CUmemoryPool, props: *const CUmemPoolProps) -> CUresult {
    let c = cuda();
    // SAFETY: the caller's promise.
    ret(c.driver_initialized().and_then(|()| unsafe { create(pool, props) }))
}

/// `cuMemPoolCreate` / `cudaMemPoolCreate` (the runtime's shell calls it too; the structures are the same).
///
/// # Safety
/// `pool` is valid for a write of a handle and `props` for a read of `CUmemPoolProps`.
pub unsafe fn create(pool: *mut CUmemoryPool, props: *const CUmemPoolProps) -> cuda::Result<()> {
    if props.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: non-null, and the caller's promise.
    let p = unsafe { props.read_unaligned() };
    let h = cuda().mem_pool_create(p.allocType, p.handleTypes, p.location.type_ as i32, p.location.id)?;
    // SAFETY: the caller's promise.
    unsafe { out(pool, h as CUmemoryPool) }
}

#[cshell::export]
pub extern "C" fn cuMemPoolDestroy(pool: CUmemoryPool) -> CUresult {
    ret(cuda().mem_pool_destroy(pool as u64))
}

/// # Safety
/// `value` is valid for a write of the attribute's type (`int` for the reuse policies, `cuuint64_t`
/// otherwise).
#[cshell::export]
pub unsafe extern "C" fn cuMemPoolGetAttribute(pool: CUmemoryPool, attr: i32, value: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { get_attribute(pool as u64, attr, value) })
}

/// `cuMemPoolGetAttribute` / `cudaMemPoolGetAttribute` (the runtime's shell calls it too): the value is an
/// `int` for the reuse policies, a `cuuint64_t` otherwise.
///
/// # Safety
/// `value` is valid for a write of the attribute's type.
pub unsafe fn get_attribute(pool: u64, attr: i32, value: *mut c_void) -> cuda::Result<()> {
    let a = PoolAttr::from_raw(attr)?;
    let v = cuda().mem_pool_attribute(pool, a)?;
    // SAFETY: the caller's promise.
    unsafe {
        if a.is_int() {
            out(value as *mut i32, v as i32)
        } else {
            out(value as *mut u64, v)
        }
    }
}

/// # Safety
/// `value` is valid for a read of the attribute's type (as [`cuMemPoolGetAttribute`]).
#[cshell::export]
pub unsafe extern "C" fn cuMemPoolSetAttribute(pool: CUmemoryPool, attr: i32, value: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_attribute(pool as u64, attr, value) })
}

/// `cuMemPoolSetAttribute` / `cudaMemPoolSetAttribute`, reading the value as [`get_attribute`] writes it.
///
/// # Safety
/// `value` is valid for a read of the attribute's type.
pub unsafe fn set_attribute(pool: u64, attr: i32, value: *const c_void) -> cuda::Result<()> {
    let a = PoolAttr::from_raw(attr)?;
    if value.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: non-null, and the caller's promise.
    let v = unsafe {
        if a.is_int() {
            (value as *const i32).read_unaligned() as u64
        } else {
            (value as *const u64).read_unaligned()
        }
    };
    cuda().set_mem_pool_attribute(pool, a, v)
}

#[cshell::export]
pub extern "C" fn cuMemPoolTrimTo(pool: CUmemoryPool, _min_bytes_to_keep: usize) -> CUresult {
    ret(cuda().mem_pool_trim_to(pool as u64))
}

/// # Safety
/// `descs` is valid for reads of `count` descriptors.
#[cshell::export]
pub unsafe extern "C" fn cuMemPoolSetAccess(
    pool: CUmemoryPool,
    descs: *const CUmemAccessDesc,
    count: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_access(pool as u64, descs, count) })
}

/// `cuMemPoolSetAccess` / `cudaMemPoolSetAccess`.
///
/// # Safety
/// `descs` is valid for reads of `count` descriptors.
pub unsafe fn set_access(pool: u64, descs: *const CUmemAccessDesc, count: usize) -> cuda::Result<()> {
    if descs.is_null() && count > 0 {
        return Err(Error::INVALID_VALUE);
    }
    let c = cuda();
    for i in 0..count {
        // SAFETY: the caller's promise.
        let d = unsafe { descs.add(i).read_unaligned() };
        c.set_mem_pool_access(pool, d.location.type_ as i32, d.location.id, d.flags)?;
    }
    // With no descriptor, the pool must still exist.
    c.mem_pool_trim_to(pool)
}

/// # Safety
/// `flags` is valid for a write of an `int` and `location` for a read of a `CUmemLocation`.
#[cshell::export]
pub unsafe extern "C" fn cuMemPoolGetAccess(
    flags: *mut i32,
    pool: CUmemoryPool,
    location: *mut CUmemLocation,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { access(flags, pool as u64, location) })
}

/// `cuMemPoolGetAccess` / `cudaMemPoolGetAccess`.
///
/// # Safety
/// `flags` is valid for a write of an `int` and `location` for a read of a `CUmemLocation`.
pub unsafe fn access(flags: *mut i32, pool: u64, location: *const CUmemLocation) -> cuda::Result<()> {
    if location.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: non-null, and the caller's promise.
    let l = unsafe { location.read_unaligned() };
    let f = cuda().mem_pool_access(pool, l.type_ as i32, l.id)?;
    // SAFETY: the caller's promise.
    unsafe { out(flags, f) }
}

/// # Safety
/// `ptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(
    ptr: *mut CUdeviceptr,
    size: usize,
    pool: CUmemoryPool,
    stream: CUstream,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { alloc_async(ptr, size, Some(pool as u64), stream) }
}

/// `cuMemAllocAsync` (`pool` `None`: the device's current pool) and [`cuMemAllocFromPoolAsync`].
///
/// # Safety
/// `ptr` is valid for a write.
pub(crate) unsafe fn alloc_async(ptr: *mut CUdeviceptr, size: usize, pool: Option<u64>, stream: CUstream) -> CUresult {
    if ptr.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let result = with_context().and_then(|c| {
        if size == 0 {
            c.enter_stream(stream as u64)?;
            return Err(Error::INVALID_VALUE);
        }
        c.malloc_async(size as u64, pool, stream as u64)
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(ptr, p) }))
}

per_thread! {
    cuMemAllocFromPoolAsync_ptsz => cuMemAllocFromPoolAsync(ptr: *mut CUdeviceptr, size: usize, pool: CUmemoryPool, stream: CUstream);
}

// ---- pools by location (CUDA 13) ----------------------------------------------------------------------

/// The place a `CUmemLocation` and `CUmemAllocationType` name.
///
/// # Safety
/// A non-null `location` is valid for a read.
unsafe fn place(location: *const CUmemLocation, alloc_type: i32) -> cuda::Result<cuda::pool::Place> {
    if location.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let l = unsafe { location.read_unaligned() };
    cuda::pool::Place::new(alloc_type, l.type_ as i32, l.id)
}

/// `cuMemGetDefaultMemPool` and `cudaMemGetDefaultMemPool`, or with `current` `cuMemGetMemPool` and
/// `cudaMemGetMemPool`.
///
/// # Safety
/// `pool` is valid for a write of a handle, `location` for a read.
pub unsafe fn pool_of(
    pool: *mut CUmemoryPool,
    location: *const CUmemLocation,
    alloc_type: i32,
    current: bool,
) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    let place = unsafe { place(location, alloc_type) }?;
    let h = if current { cuda().mem_pool_of(place)? } else { cuda().default_mem_pool_of(place)? };
    // SAFETY: the caller's promise.
    unsafe { out(pool, h as CUmemoryPool) }
}

/// `cuMemSetMemPool` and `cudaMemSetMemPool`.
///
/// # Safety
/// `location` is valid for a read.
pub unsafe fn set_pool_of(location: *const CUmemLocation, alloc_type: i32, pool: CUmemoryPool) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    let place = unsafe { place(location, alloc_type) }?;
    cuda().set_mem_pool_of(place, pool as u64)
}

/// # Safety
/// As [`pool_of`].
#[cshell::export]
pub unsafe extern "C" fn cuMemGetDefaultMemPool(
    pool: *mut CUmemoryPool,
    location: *const CUmemLocation,
    alloc_type: i32,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { pool_of(pool, location, alloc_type, false) })
}

/// # Safety
/// As [`pool_of`].
#[cshell::export]
pub unsafe extern "C" fn cuMemGetMemPool(
    pool: *mut CUmemoryPool,
    location: *const CUmemLocation,
    alloc_type: i32,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { pool_of(pool, location, alloc_type, true) })
}

/// # Safety
/// As [`set_pool_of`].
#[cshell::export]
pub unsafe extern "C" fn cuMemSetMemPool(
    location: *const CUmemLocation,
    alloc_type: i32,
    pool: CUmemoryPool,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_pool_of(location, alloc_type, pool) })
}
