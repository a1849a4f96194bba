//! Memory: allocation of every kind, copies and sets in one, two and three dimensions, symbols, pointer
//! attributes. The `_ptds`/`_ptsz` forms (per-thread default stream builds) are the same calls.

use std::ffi::c_void;

use cuda::{CopyKind, Error, MemoryType};

use crate::abi::{cudaError_t, cudaExtent, cudaMemcpy3DParms, cudaPitchedPtr, cudaPointerAttributes, cudaStream_t};
use crate::{check_device, cuda, out, ret};

fn kind(k: i32) -> cuda::Result<CopyKind> {
    CopyKind::from_raw(k)
}

/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> cudaError_t {
    if ptr.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().malloc(size as u64).and_then(|p| unsafe { out(ptr, p as *mut c_void) }))
}

#[cshell::export]
pub extern "C" fn cudaFree(ptr: *mut c_void) -> cudaError_t {
    ret(cuda().free(ptr as u64))
}

/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaHostAlloc(ptr, size, 0) }
}

/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaHostAlloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> cudaError_t {
    if ptr.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().malloc_host(size as u64, flags).and_then(|p| unsafe { out(ptr, p as *mut c_void) }))
}

#[cshell::export]
pub extern "C" fn cudaFreeHost(ptr: *mut c_void) -> cudaError_t {
    ret(cuda().free_host(ptr as u64))
}

/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaMallocManaged(ptr: *mut *mut c_void, size: usize, flags: u32) -> cudaError_t {
    if ptr.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().malloc_managed(size as u64, flags).and_then(|p| unsafe { out(ptr, p as *mut c_void) }))
}

/// # Safety
/// `ptr` and `pitch` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cudaMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> cudaError_t {
    if ptr.is_null() || pitch.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let result = cuda().malloc_pitch(width as u64, height as u64).and_then(|(p, pitch_bytes)| {
        // SAFETY: the caller's promise.
        unsafe { out(ptr, p as *mut c_void).and(out(pitch, pitch_bytes as usize)) }
    });
    ret(result)
}

/// # Safety
/// `pitched` is valid for a write of a `cudaPitchedPtr`.
#[cshell::export]
pub unsafe extern "C" fn cudaMalloc3D(pitched: *mut cudaPitchedPtr, extent: cudaExtent) -> cudaError_t {
    if pitched.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let rows = (extent.height.max(1) as u64).saturating_mul(extent.depth.max(1) as u64);
    let result = cuda().malloc_pitch(extent.width as u64, rows).and_then(|(p, pitch)| {
        let v =
            cudaPitchedPtr { ptr: p as *mut c_void, pitch: pitch as usize, xsize: extent.width, ysize: extent.height };
        // SAFETY: the caller's promise.
        unsafe { out(pitched, v) }
    });
    ret(result)
}

/// Stream-ordered allocation: allocated when the call returns (streams are synchronous).
///
/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaMallocAsync(ptr: *mut *mut c_void, size: usize, stream: cudaStream_t) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { malloc_async(ptr, size, None, stream) }
}

/// `cudaMallocAsync` from `pool` (`None`: the device's current pool).
///
/// # Safety
/// `ptr` is valid for a write of a pointer.
unsafe fn malloc_async(ptr: *mut *mut c_void, size: usize, pool: Option<u64>, stream: cudaStream_t) -> cudaError_t {
    if ptr.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let c = cuda();
    let result = c.malloc_async(size as u64, pool, stream as u64);
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(ptr, p as *mut c_void) }))
}

unsafe_ptsz!(cudaMallocAsync_ptsz => cudaMallocAsync(ptr: *mut *mut c_void, size: usize, stream: cudaStream_t));

/// An allocation counted in `pool`'s usage (`cuda::pool`).
///
/// # Safety
/// As [`cudaMallocAsync`].
#[cshell::export]
pub unsafe extern "C" fn cudaMallocFromPoolAsync(
    ptr: *mut *mut c_void,
    size: usize,
    pool: *mut c_void,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { malloc_async(ptr, size, Some(pool as u64), stream) }
}

unsafe_ptsz!(
    cudaMallocFromPoolAsync_ptsz => cudaMallocFromPoolAsync(
        ptr: *mut *mut c_void,
        size: usize,
        pool: *mut c_void,
        stream: cudaStream_t,
    )
);

#[cshell::export]
pub extern "C" fn cudaFreeAsync(ptr: *mut c_void, stream: cudaStream_t) -> cudaError_t {
    ret(cuda().free_async(ptr as u64, stream as u64))
}

ptsz!(cudaFreeAsync_ptsz => cudaFreeAsync(ptr: *mut c_void, stream: cudaStream_t));

/// # Safety
/// `[ptr, ptr + size)` stays valid until `cudaHostUnregister`.
#[cshell::export]
pub unsafe extern "C" fn cudaHostRegister(ptr: *mut c_void, size: usize, flags: u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cuda().host_register(ptr as u64, size as u64, flags) })
}

#[cshell::export]
pub extern "C" fn cudaHostUnregister(ptr: *mut c_void) -> cudaError_t {
    ret(cuda().host_unregister(ptr as u64))
}

/// # Safety
/// `device_ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaHostGetDevicePointer(
    device_ptr: *mut *mut c_void,
    host: *mut c_void,
    flags: u32,
) -> cudaError_t {
    if flags != 0 {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().host_device_pointer(host as u64).and_then(|p| unsafe { out(device_ptr, p as *mut c_void) }))
}

/// # Safety
/// `flags` is valid for a write of an `unsigned int`.
#[cshell::export]
pub unsafe extern "C" fn cudaHostGetFlags(flags: *mut u32, host: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().host_flags(host as u64).and_then(|f| unsafe { out(flags, f) }))
}

/// # Safety
/// `attributes` is valid for a write of `cudaPointerAttributes`.
#[cshell::export]
pub unsafe extern "C" fn cudaPointerGetAttributes(
    attributes: *mut cudaPointerAttributes,
    ptr: *const c_void,
) -> cudaError_t {
    let result = cuda().pointer_attributes(ptr as u64).and_then(|a| {
        let c = cudaPointerAttributes {
            type_: a.kind as i32,
            device: if a.kind == MemoryType::Unregistered { -2 } else { a.device },
            devicePointer: a.device_pointer,
            hostPointer: a.host_pointer,
            ..Default::default()
        };
        // SAFETY: the caller's promise.
        unsafe { out(attributes, c) }
    });
    ret(result)
}

/// # Safety
/// Both pointers are valid for writes of `size_t`.
#[cshell::export]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> cudaError_t {
    let result = cuda().mem_info().and_then(|(f, t)| {
        // SAFETY: the caller's promise.
        unsafe { out(free, f as usize).and(out(total, t as usize)) }
    });
    ret(result)
}

// ---- copies and sets ------------------------------------------------------------------------------

#[cshell::export]
pub extern "C" fn cudaMemcpy(dst: *mut c_void, src: *const c_void, n: usize, k: i32) -> cudaError_t {
    ret(kind(k).and_then(|k| cuda().memcpy(dst as u64, src as u64, n as u64, k)))
}

ptds!(cudaMemcpy_ptds => cudaMemcpy(dst: *mut c_void, src: *const c_void, n: usize, k: i32));

#[cshell::export]
pub extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    ret(kind(k).and_then(|k| cuda().memcpy_async(dst as u64, src as u64, n as u64, k, stream as u64)))
}

ptsz!(
    cudaMemcpyAsync_ptsz => cudaMemcpyAsync(
        dst: *mut c_void,
        src: *const c_void,
        n: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

/// One device: peer copies are plain copies when both devices are 0.
#[cshell::export]
pub extern "C" fn cudaMemcpyPeer(
    dst: *mut c_void,
    dst_device: i32,
    src: *const c_void,
    src_device: i32,
    n: usize,
) -> cudaError_t {
    if let Err(e) = check_device(dst_device).and(check_device(src_device)) {
        return ret(Err(e));
    }
    cudaMemcpy(dst, src, n, 3)
}

#[cshell::export]
pub extern "C" fn cudaMemcpyPeerAsync(
    dst: *mut c_void,
    dst_device: i32,
    src: *const c_void,
    src_device: i32,
    n: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    if let Err(e) = check_device(dst_device).and(check_device(src_device)) {
        return ret(Err(e));
    }
    cudaMemcpyAsync(dst, src, n, 3, stream)
}

#[cshell::export]
pub extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    k: i32,
) -> cudaError_t {
    let result = kind(k).and_then(|k| {
        cuda().memcpy_2d(dst as u64, dpitch as u64, src as u64, spitch as u64, width as u64, height as u64, k)
    });
    ret(result)
}

ptds!(
    cudaMemcpy2D_ptds => cudaMemcpy2D(
        dst: *mut c_void,
        dpitch: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        k: i32,
    )
);

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    let result = kind(k).and_then(|k| {
        let (dst, src) = (dst as u64, src as u64);
        let (dpitch, spitch, width, height) = (dpitch as u64, spitch as u64, width as u64, height as u64);
        cuda().memcpy_2d_async(dst, dpitch, src, spitch, width, height, k, stream as u64)
    });
    ret(result)
}

ptsz!(
    cudaMemcpy2DAsync_ptsz => cudaMemcpy2DAsync(
        dst: *mut c_void,
        dpitch: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

/// One side of a 3-D copy: its first byte, row pitch, slice pitch, and bytes per element (1 for pitched
/// memory, whose extent and x position are in bytes).
pub(crate) fn side_3d(
    array: *mut c_void,
    pos: crate::abi::cudaPos,
    ptr: cudaPitchedPtr,
) -> cuda::Result<(u64, u64, u64, u64)> {
    if !array.is_null() {
        let a = cuda().array(array as u64)?;
        let elem = u64::from(a.desc.format.bytes());
        let row = a.desc.row_bytes();
        let slice = row * u64::from(a.desc.height.max(1));
        let base = a.ptr + pos.z as u64 * slice + pos.y as u64 * row + pos.x as u64 * elem;
        return Ok((base, row, slice, elem));
    }
    if ptr.ptr.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let pitch = ptr.pitch as u64;
    let slice = pitch * ptr.ysize.max(1) as u64;
    Ok((ptr.ptr as u64 + pos.z as u64 * slice + pos.y as u64 * pitch + pos.x as u64, pitch, slice, 1))
}

/// # Safety
/// `p` points at a valid `cudaMemcpy3DParms`.
#[cshell::export]
pub unsafe extern "C" fn cudaMemcpy3D(p: *const cudaMemcpy3DParms) -> cudaError_t {
    if p.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    let p = unsafe { p.read_unaligned() };
    let result = (|| {
        let k = kind(p.kind)?;
        let (src, spitch, sslice, selem) = side_3d(p.srcArray, p.srcPos, p.srcPtr)?;
        let (dst, dpitch, dslice, delem) = side_3d(p.dstArray, p.dstPos, p.dstPtr)?;
        let width = p.extent.width as u64 * selem.max(delem);
        let (height, depth) = (p.extent.height.max(1) as u64, p.extent.depth.max(1) as u64);
        for z in 0..depth {
            cuda().memcpy_2d(dst + z * dslice, dpitch, src + z * sslice, spitch, width, height, k)?;
        }
        Ok(())
    })();
    ret(result)
}

unsafe_ptds!(cudaMemcpy3D_ptds => cudaMemcpy3D(p: *const cudaMemcpy3DParms));

/// # Safety
/// As [`cudaMemcpy3D`].
#[cshell::export]
pub unsafe extern "C" fn cudaMemcpy3DAsync(p: *const cudaMemcpy3DParms, stream: cudaStream_t) -> cudaError_t {
    if let Err(e) = cuda().enter_stream(stream as u64) {
        return ret(Err(e));
    }
    // SAFETY: the caller's promise.
    unsafe { cudaMemcpy3D(p) }
}

unsafe_ptsz!(cudaMemcpy3DAsync_ptsz => cudaMemcpy3DAsync(p: *const cudaMemcpy3DParms, stream: cudaStream_t));

#[cshell::export]
pub extern "C" fn cudaMemset(ptr: *mut c_void, value: i32, n: usize) -> cudaError_t {
    ret(cuda().memset(ptr as u64, value, n as u64))
}

ptds!(cudaMemset_ptds => cudaMemset(ptr: *mut c_void, value: i32, n: usize));

#[cshell::export]
pub extern "C" fn cudaMemsetAsync(ptr: *mut c_void, value: i32, n: usize, stream: cudaStream_t) -> cudaError_t {
    ret(cuda().memset_async(ptr as u64, n as u64, value, n as u64, 1, stream as u64))
}

ptsz!(cudaMemsetAsync_ptsz => cudaMemsetAsync(ptr: *mut c_void, value: i32, n: usize, stream: cudaStream_t));

#[cshell::export]
pub extern "C" fn cudaMemset2D(ptr: *mut c_void, pitch: usize, value: i32, width: usize, height: usize) -> cudaError_t {
    ret(cuda().memset_2d(ptr as u64, pitch as u64, value, width as u64, height as u64))
}

ptds!(cudaMemset2D_ptds => cudaMemset2D(ptr: *mut c_void, pitch: usize, value: i32, width: usize, height: usize));

#[cshell::export]
pub extern "C" fn cudaMemset2DAsync(
    ptr: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    ret(cuda().memset_async(ptr as u64, pitch as u64, value, width as u64, height as u64, stream as u64))
}

ptsz!(
    cudaMemset2DAsync_ptsz => cudaMemset2DAsync(
        ptr: *mut c_void,
        pitch: usize,
        value: i32,
        width: usize,
        height: usize,
        stream: cudaStream_t,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemset3D(p: cudaPitchedPtr, value: i32, extent: cudaExtent) -> cudaError_t {
    let slice = p.pitch as u64 * p.ysize.max(1) as u64;
    let result = (0..extent.depth.max(1) as u64).try_for_each(|z| {
        cuda().memset_2d(
            p.ptr as u64 + z * slice,
            p.pitch as u64,
            value,
            extent.width as u64,
            extent.height.max(1) as u64,
        )
    });
    ret(result)
}

ptds!(cudaMemset3D_ptds => cudaMemset3D(p: cudaPitchedPtr, value: i32, extent: cudaExtent));

#[cshell::export]
pub extern "C" fn cudaMemset3DAsync(
    p: cudaPitchedPtr,
    value: i32,
    extent: cudaExtent,
    stream: cudaStream_t,
) -> cudaError_t {
    if let Err(e) = cuda().enter_stream(stream as u64) {
        return ret(Err(e));
    }
    cudaMemset3D(p, value, extent)
}

ptsz!(
    cudaMemset3DAsync_ptsz => cudaMemset3DAsync(
        p: cudaPitchedPtr,
        value: i32,
        extent: cudaExtent,
        stream: cudaStream_t,
    )
);

// ---- symbols --------------------------------------------------------------------------------------

#[cshell::export]
pub extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    k: i32,
) -> cudaError_t {
    ret(kind(k).and_then(|k| cuda().memcpy_to_symbol(symbol as u64, src as u64, n as u64, offset as u64, k, None)))
}

ptds!(
    cudaMemcpyToSymbol_ptds => cudaMemcpyToSymbol(
        symbol: *const c_void,
        src: *const c_void,
        n: usize,
        offset: usize,
        k: i32,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    let (symbol, src, n, offset) = (symbol as u64, src as u64, n as u64, offset as u64);
    ret(kind(k).and_then(|k| cuda().memcpy_to_symbol(symbol, src, n, offset, k, Some(stream as u64))))
}

ptsz!(
    cudaMemcpyToSymbolAsync_ptsz => cudaMemcpyToSymbolAsync(
        symbol: *const c_void,
        src: *const c_void,
        n: usize,
        offset: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    k: i32,
) -> cudaError_t {
    ret(kind(k).and_then(|k| cuda().memcpy_from_symbol(dst as u64, symbol as u64, n as u64, offset as u64, k, None)))
}

ptds!(
    cudaMemcpyFromSymbol_ptds => cudaMemcpyFromSymbol(
        dst: *mut c_void,
        symbol: *const c_void,
        n: usize,
        offset: usize,
        k: i32,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    let (dst, symbol, n, offset) = (dst as u64, symbol as u64, n as u64, offset as u64);
    ret(kind(k).and_then(|k| cuda().memcpy_from_symbol(dst, symbol, n, offset, k, Some(stream as u64))))
}

ptsz!(
    cudaMemcpyFromSymbolAsync_ptsz => cudaMemcpyFromSymbolAsync(
        dst: *mut c_void,
        symbol: *const c_void,
        n: usize,
        offset: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaGetSymbolAddress(ptr: *mut *mut c_void, symbol: *const c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().symbol(symbol as u64).and_then(|(p, _)| unsafe { out(ptr, p as *mut c_void) }))
}

/// # Safety
/// `size` is valid for a write of a `size_t`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().symbol(symbol as u64).and_then(|(_, s)| unsafe { out(size, s as usize) }))
}

// ---- managed-memory hints -------------------------------------------------------------------------

/// Host and device share every byte already: prefetching has nothing to move.
#[cshell::export]
pub extern "C" fn cudaMemPrefetchAsync(
    _ptr: *const c_void,
    _n: usize,
    _location: u64,
    _flags: u32,
    stream: cudaStream_t,
) -> cudaError_t {
    ret(cuda().enter_stream(stream as u64))
}

ptsz!(
    cudaMemPrefetchAsync_ptsz => cudaMemPrefetchAsync(
        ptr: *const c_void,
        n: usize,
        location: u64,
        flags: u32,
        stream: cudaStream_t,
    )
);

/// Advice about where managed memory should live: accepted, with nothing to act on.
#[cshell::export]
pub extern "C" fn cudaMemAdvise(ptr: *const c_void, _n: usize, advice: i32, _location: u64) -> cudaError_t {
    ret(if ptr.is_null() || !(1..=6).contains(&advice) { Err(Error::INVALID_VALUE) } else { Ok(()) })
}

/// `cudaMemcpyBatchAsync` (CUDA 13's form): the driver's `cuMemcpyBatchAsync_v2`, whose rules it shares.
///
/// # Safety
/// `dsts`, `srcs` and `sizes` hold `count` elements, `attrs` and `idxs` `num_attrs`; the copies are of
/// memory the program owns.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaMemcpyBatchAsync(
    dsts: *const *mut c_void,
    srcs: *const *const c_void,
    sizes: *const usize,
    count: usize,
    attrs: *mut cudadrv::abi::CUmemcpyAttributes,
    idxs: *mut usize,
    num_attrs: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise; pointers and `CUdeviceptr`s have one size.
    let r = unsafe {
        cudadrv::memory::copy_batch(cuda(), dsts.cast(), srcs.cast(), sizes, count, attrs, idxs, num_attrs, stream)
    };
    ret(r.map_err(|(e, _)| e))
}

unsafe_ptsz!(cudaMemcpyBatchAsync_ptsz => cudaMemcpyBatchAsync(dsts: *const *mut c_void, srcs: *const *const c_void, sizes: *const usize, count: usize, attrs: *mut cudadrv::abi::CUmemcpyAttributes, idxs: *mut usize, num_attrs: usize, stream: cudaStream_t));

/// `cudaMemcpyWithAttributesAsync`: a batch of one copy.
///
/// # Safety
/// As [`cudaMemcpyBatchAsync`], for one copy.
#[cshell::export]
pub unsafe extern "C" fn cudaMemcpyWithAttributesAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    attr: *mut cudadrv::abi::CUmemcpyAttributes,
    stream: cudaStream_t,
) -> cudaError_t {
    let (dst, src) = (dst as u64, src as u64);
    // SAFETY: the caller's promise: one copy and one attribute.
    let r = unsafe { cudadrv::memory::copy_batch(cuda(), &dst, &src, &size, 1, attr, &0, 1, stream) };
    ret(r.map_err(|(e, _)| e))
}

unsafe_ptsz!(cudaMemcpyWithAttributesAsync_ptsz => cudaMemcpyWithAttributesAsync(dst: *mut c_void, src: *const c_void, size: usize, attr: *mut cudadrv::abi::CUmemcpyAttributes, stream: cudaStream_t));
