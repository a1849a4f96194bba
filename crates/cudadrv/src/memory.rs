//! Memory: device, pitched, host (page-locked and registered), managed; copies and sets in their
//! synchronous, asynchronous, 2D and 3D forms; address ranges and pointer attributes.

use std::ffi::c_void;

use cuda::{CopyKind, Error, MemoryType};

use crate::abi::{
    CUdeviceptr, CUmemcpyAttributes, CUstream, CUDA_MEMCPY2D, CUDA_MEMCPY3D, CU_MEMCPY_SRC_ACCESS_ORDER_ANY,
    CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST,
    CU_MEMORYTYPE_UNIFIED,
};
use crate::error::CUresult;
use crate::{out, ret, with_context};

/// # Safety
/// `free` and `total` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    let result = with_context().and_then(|c| c.mem_info()).and_then(|(f, t)| {
        // SAFETY: the caller's promise.
        unsafe {
            out(free, f as usize)?;
            out(total, t as usize)
        }
    });
    ret(result)
}

/// Unlike `cudaMalloc`, zero bytes are an invalid value.
///
/// # Safety
/// `ptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemAlloc_v2(ptr: *mut CUdeviceptr, size: usize) -> CUresult {
    let result = with_context().and_then(|c| {
        if size == 0 {
            return Err(Error::INVALID_VALUE);
        }
        c.malloc(size as u64)
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(ptr, p) }))
}

/// # Safety
/// `ptr` and `pitch` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuMemAllocPitch_v2(
    ptr: *mut CUdeviceptr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    element: u32,
) -> CUresult {
    let result = with_context().and_then(|c| {
        if width == 0 || height == 0 || !matches!(element, 4 | 8 | 16) {
            return Err(Error::INVALID_VALUE);
        }
        c.malloc_pitch(width as u64, height as u64)
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|(p, pi)| unsafe {
        out(ptr, p)?;
        out(pitch, pi as usize)
    }))
}

#[cshell::export]
pub extern "C" fn cuMemFree_v2(ptr: CUdeviceptr) -> CUresult {
    ret(with_context().and_then(|c| c.free(ptr)))
}

/// # Safety
/// `base` and `size` are null or valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    base: *mut CUdeviceptr,
    size: *mut usize,
    ptr: CUdeviceptr,
) -> CUresult {
    let result = with_context().and_then(|c| c.address_range(ptr)).map(|(b, s)| {
        // SAFETY: the caller's promise; either output may be null.
        unsafe {
            if !base.is_null() {
                base.write_unaligned(b);
            }
            if !size.is_null() {
                size.write_unaligned(s as usize);
            }
        }
    });
    ret(result)
}

/// # Safety
/// `ptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemAllocHost_v2(ptr: *mut *mut c_void, size: usize) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuMemHostAlloc(ptr, size, 0) }
}

/// # Safety
/// `ptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemHostAlloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> CUresult {
    let result = with_context().and_then(|c| {
        if size == 0 {
            return Err(Error::INVALID_VALUE);
        }
        c.malloc_host(size as u64, flags)
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(ptr, p as *mut c_void) }))
}

#[cshell::export]
pub extern "C" fn cuMemFreeHost(ptr: *mut c_void) -> CUresult {
    ret(with_context().and_then(|c| c.free_host(ptr as u64)))
}

/// # Safety
/// `dptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    dptr: *mut CUdeviceptr,
    ptr: *mut c_void,
    flags: u32,
) -> CUresult {
    let result = with_context().and_then(|c| {
        if flags != 0 {
            return Err(Error::INVALID_VALUE);
        }
        c.host_device_pointer(ptr as u64)
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(dptr, p) }))
}

/// # Safety
/// `flags` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemHostGetFlags(flags: *mut u32, ptr: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|c| c.host_flags(ptr as u64)).and_then(|f| unsafe { out(flags, f) }))
}

/// # Safety
/// `ptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemAllocManaged(ptr: *mut CUdeviceptr, size: usize, flags: u32) -> CUresult {
    let result = with_context().and_then(|c| c.malloc_managed(size as u64, flags));
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(ptr, p) }))
}

/// # Safety
/// `[ptr, ptr + size)` is memory the program owns and keeps until it unregisters it.
#[cshell::export]
pub unsafe extern "C" fn cuMemHostRegister_v2(ptr: *mut c_void, size: usize, flags: u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|c| unsafe { c.host_register(ptr as u64, size as u64, flags) }))
}

alias! {
    cuMemHostRegister => cuMemHostRegister_v2(ptr: *mut c_void, size: usize, flags: u32);
}

#[cshell::export]
pub extern "C" fn cuMemHostUnregister(ptr: *mut c_void) -> CUresult {
    ret(with_context().and_then(|c| c.host_unregister(ptr as u64)))
}

// ---- copies ---------------------------------------------------------------------------------------------

fn copy(dst: u64, src: u64, n: usize, kind: CopyKind, stream: Option<CUstream>) -> CUresult {
    let result = with_context().and_then(|c| match stream {
        None => c.memcpy(dst, src, n as u64, kind),
        Some(s) => c.memcpy_async(dst, src, n as u64, kind, s as u64),
    });
    ret(result)
}

/// Unified addressing: either side may be host or device memory.
#[cshell::export]
pub extern "C" fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    copy(dst, src, n, CopyKind::Default, None)
}

#[cshell::export]
pub extern "C" fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult {
    copy(dst, src, n, CopyKind::Default, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    copy(dst, src as u64, n, CopyKind::HostToDevice, None)
}

#[cshell::export]
pub extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    copy(dst as u64, src, n, CopyKind::DeviceToHost, None)
}

#[cshell::export]
pub extern "C" fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    copy(dst, src, n, CopyKind::DeviceToDevice, None)
}

#[cshell::export]
pub extern "C" fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, stream: CUstream) -> CUresult {
    copy(dst, src as u64, n, CopyKind::HostToDevice, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult {
    copy(dst as u64, src, n, CopyKind::DeviceToHost, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult {
    copy(dst, src, n, CopyKind::DeviceToDevice, Some(stream))
}

/// One device: a copy between contexts is a copy.
#[cshell::export]
pub extern "C" fn cuMemcpyPeer(
    dst: CUdeviceptr,
    _dst_ctx: *mut c_void,
    src: CUdeviceptr,
    _src_ctx: *mut c_void,
    n: usize,
) -> CUresult {
    copy(dst, src, n, CopyKind::DeviceToDevice, None)
}

#[cshell::export]
pub extern "C" fn cuMemcpyPeerAsync(
    dst: CUdeviceptr,
    _dst_ctx: *mut c_void,
    src: CUdeviceptr,
    _src_ctx: *mut c_void,
    n: usize,
    stream: CUstream,
) -> CUresult {
    copy(dst, src, n, CopyKind::DeviceToDevice, Some(stream))
}

alias! {
    cuMemcpyHtoD_v2_ptds => cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize);
    cuMemcpyDtoH_v2_ptds => cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize);
    cuMemcpyDtoD_v2_ptds => cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize);
    cuMemcpy_ptds => cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize);
}

per_thread! {
    cuMemcpyAsync_ptsz => cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream);
    cuMemcpyHtoDAsync_v2_ptsz => cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, stream: CUstream);
    cuMemcpyDtoHAsync_v2_ptsz => cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, stream: CUstream);
    cuMemcpyDtoDAsync_v2_ptsz => cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream);
}

/// A batch of copies (`cuMemcpyBatchAsync`, CUDA 12.8), each with unified addressing, after the stream's
/// earlier work. CUDA's rules for the arguments hold: `count` copies; `num_attrs` attributes (at least one, at
/// most `count`) whose first indices start at 0 and increase, each with a valid source access order; not
/// the legacy default stream. Location hints and flags are hints, with one memory and copies that complete
/// in the call. The error comes with the index of the copy it concerns, if one.
///
/// # Safety
/// `dsts`, `srcs` and `sizes` hold `count` elements, `attrs` and `idxs` `num_attrs`; the copies are of
/// memory the program owns.
#[allow(clippy::too_many_arguments)]
pub unsafe fn copy_batch(
    c: &cuda::Cuda,
    dsts: *const CUdeviceptr,
    srcs: *const CUdeviceptr,
    sizes: *const usize,
    count: usize,
    attrs: *const CUmemcpyAttributes,
    idxs: *const usize,
    num_attrs: usize,
    stream: CUstream,
) -> Result<(), (Error, Option<usize>)> {
    let whole = |e: Error| (e, None);
    let pointers_null = [dsts.is_null(), srcs.is_null(), sizes.is_null(), attrs.is_null(), idxs.is_null()];
    if count == 0 || num_attrs == 0 || num_attrs > count || pointers_null.contains(&true) {
        return Err(whole(Error::INVALID_VALUE));
    }
    if matches!(stream as u64, 0 | cuda::LEGACY_STREAM) {
        return Err(whole(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise: `num_attrs` of each.
    let (attrs, idxs) =
        unsafe { (std::slice::from_raw_parts(attrs, num_attrs), std::slice::from_raw_parts(idxs, num_attrs)) };
    let starts_in_order = idxs[0] == 0 && idxs.windows(2).all(|w| w[0] < w[1]) && idxs[num_attrs - 1] < count;
    let orders_valid = attrs
        .iter()
        .all(|a| (CU_MEMCPY_SRC_ACCESS_ORDER_STREAM..=CU_MEMCPY_SRC_ACCESS_ORDER_ANY).contains(&a.srcAccessOrder));
    if !starts_in_order || !orders_valid {
        return Err(whole(Error::INVALID_VALUE));
    }
    c.enter_stream(stream as u64).map_err(whole)?;
    for i in 0..count {
        // SAFETY: the caller's promise: `count` of each.
        let (dst, src, n) = unsafe { (*dsts.add(i), *srcs.add(i), *sizes.add(i)) };
        c.memcpy_async(dst, src, n as u64, CopyKind::Default, stream as u64).map_err(|e| (e, Some(i)))?;
    }
    Ok(())
}

/// CUDA 13's form.
///
/// # Safety
/// As [`copy_batch`].
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuMemcpyBatchAsync_v2(
    dsts: *const CUdeviceptr,
    srcs: *const CUdeviceptr,
    sizes: *const usize,
    count: usize,
    attrs: *const CUmemcpyAttributes,
    idxs: *const usize,
    num_attrs: usize,
    stream: CUstream,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context()
        .map_err(|e| (e, None))
        .and_then(|c| unsafe { copy_batch(c, dsts, srcs, sizes, count, attrs, idxs, num_attrs, stream) })
        .map_err(|(e, _)| e))
}

/// CUDA 12.8's form, which also names the copy that failed (`SIZE_MAX` for an error of the whole batch; not
/// written for the legacy stream).
///
/// # Safety
/// As [`copy_batch`]; `fail` is null or valid for a write.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuMemcpyBatchAsync(
    dsts: *const CUdeviceptr,
    srcs: *const CUdeviceptr,
    sizes: *const usize,
    count: usize,
    attrs: *const CUmemcpyAttributes,
    idxs: *const usize,
    num_attrs: usize,
    fail: *mut usize,
    stream: CUstream,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = with_context()
        .map_err(|e| (e, None))
        .and_then(|c| unsafe { copy_batch(c, dsts, srcs, sizes, count, attrs, idxs, num_attrs, stream) });
    if let Err((_, index)) = result {
        // A batch on the legacy stream is refused with `fail` left alone (observed with CUDA 13 on an H100).
        let legacy = matches!(stream as u64, 0 | cuda::LEGACY_STREAM);
        if !fail.is_null() && !legacy {
            // SAFETY: the caller's promise.
            unsafe { fail.write_unaligned(index.unwrap_or(usize::MAX)) };
        }
    }
    ret(result.map_err(|(e, _)| e))
}

per_thread! {
    cuMemcpyBatchAsync_v2_ptsz => cuMemcpyBatchAsync_v2(dsts: *const CUdeviceptr, srcs: *const CUdeviceptr, sizes: *const usize, count: usize, attrs: *const CUmemcpyAttributes, idxs: *const usize, num_attrs: usize, stream: CUstream);
    cuMemcpyBatchAsync_ptsz => cuMemcpyBatchAsync(dsts: *const CUdeviceptr, srcs: *const CUdeviceptr, sizes: *const usize, count: usize, attrs: *const CUmemcpyAttributes, idxs: *const usize, num_attrs: usize, fail: *mut usize, stream: CUstream);
}

/// One side of a 2D or 3D copy: its base address and pitch, and whether it is device memory.
fn side(memory_type: u32, host: u64, device: u64, array: *mut c_void) -> cuda::Result<(u64, bool)> {
    match memory_type {
        CU_MEMORYTYPE_HOST => Ok((host, false)),
        CU_MEMORYTYPE_DEVICE => Ok((device, true)),
        // Unified addressing: the device pointer field holds either kind.
        CU_MEMORYTYPE_UNIFIED => Ok((device, false)),
        CU_MEMORYTYPE_ARRAY if !array.is_null() => {
            Err(cuda::Cuda::get().unsupported("cuMemcpy2D/3D with a CUDA array"))
        }
        _ => Err(Error::INVALID_VALUE),
    }
}

fn kind_of(dst_device: bool, src_device: bool) -> CopyKind {
    match (dst_device, src_device) {
        (true, true) => CopyKind::DeviceToDevice,
        (true, false) => CopyKind::HostToDevice,
        (false, true) => CopyKind::DeviceToHost,
        (false, false) => CopyKind::Default,
    }
}

/// # Safety
/// `p` points at a `CUDA_MEMCPY2D` describing memory the program owns.
unsafe fn copy_2d(p: *const CUDA_MEMCPY2D, stream: Option<CUstream>) -> CUresult {
    if p.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    let p = unsafe { p.read_unaligned() };
    let result = with_context().and_then(|c| {
        if let Some(s) = stream {
            c.enter_stream(s as u64)?;
        }
        let (src, src_dev) = side(p.srcMemoryType, p.srcHost as u64, p.srcDevice, p.srcArray)?;
        let (dst, dst_dev) = side(p.dstMemoryType, p.dstHost as u64, p.dstDevice, p.dstArray)?;
        let (spitch, dpitch) = (p.srcPitch.max(p.WidthInBytes) as u64, p.dstPitch.max(p.WidthInBytes) as u64);
        if (p.Height > 1 && (p.srcPitch < p.WidthInBytes || p.dstPitch < p.WidthInBytes)) || src == 0 || dst == 0 {
            return Err(Error::INVALID_VALUE);
        }
        let src = src + p.srcY as u64 * spitch + p.srcXInBytes as u64;
        let dst = dst + p.dstY as u64 * dpitch + p.dstXInBytes as u64;
        let kind = kind_of(dst_dev, src_dev);
        c.memcpy_2d(dst, dpitch, src, spitch, p.WidthInBytes as u64, p.Height as u64, kind)
    });
    ret(result)
}

/// # Safety
/// As [`copy_2d`].
#[cshell::export]
pub unsafe extern "C" fn cuMemcpy2D_v2(p: *const CUDA_MEMCPY2D) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { copy_2d(p, None) }
}

/// # Safety
/// As [`copy_2d`].
#[cshell::export]
pub unsafe extern "C" fn cuMemcpy2DUnaligned_v2(p: *const CUDA_MEMCPY2D) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { copy_2d(p, None) }
}

/// # Safety
/// As [`copy_2d`].
#[cshell::export]
pub unsafe extern "C" fn cuMemcpy2DAsync_v2(p: *const CUDA_MEMCPY2D, stream: CUstream) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { copy_2d(p, Some(stream)) }
}

/// The copy a `CUDA_MEMCPY3D` describes, as a graph copy node: the first row of each side, its pitch and
/// the distance between slices (mipmap levels are not supported).
pub(crate) fn copy_3d_node(p: &CUDA_MEMCPY3D) -> cuda::Result<cuda::CopyNode> {
    if p.srcLOD != 0 || p.dstLOD != 0 {
        return Err(Error::INVALID_VALUE);
    }
    let (src, src_dev) = side(p.srcMemoryType, p.srcHost as u64, p.srcDevice, p.srcArray)?;
    let (dst, dst_dev) = side(p.dstMemoryType, p.dstHost as u64, p.dstDevice, p.dstArray)?;
    if src == 0 || dst == 0 {
        return Err(Error::INVALID_VALUE);
    }
    let (spitch, dpitch) = (p.srcPitch.max(p.WidthInBytes) as u64, p.dstPitch.max(p.WidthInBytes) as u64);
    let (sheight, dheight) = (p.srcHeight.max(p.Height) as u64, p.dstHeight.max(p.Height) as u64);
    Ok(cuda::CopyNode {
        src: src + (p.srcZ as u64 * sheight + p.srcY as u64) * spitch + p.srcXInBytes as u64,
        spitch,
        sslice: sheight * spitch,
        dst: dst + (p.dstZ as u64 * dheight + p.dstY as u64) * dpitch + p.dstXInBytes as u64,
        dpitch,
        dslice: dheight * dpitch,
        width: p.WidthInBytes as u64,
        height: p.Height as u64,
        depth: p.Depth as u64,
        kind: kind_of(dst_dev, src_dev),
    })
}

/// A graph copy node as a `CUDA_MEMCPY3D` of unified addresses (`cuGraphNodeGetParams`).
pub(crate) fn copy_3d_params(c: &cuda::CopyNode) -> CUDA_MEMCPY3D {
    let rows = |slice: u64, pitch: u64| slice.checked_div(pitch).unwrap_or(c.height);
    CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: CU_MEMORYTYPE_UNIFIED,
        srcHost: std::ptr::null(),
        srcDevice: c.src,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: c.spitch as usize,
        srcHeight: rows(c.sslice, c.spitch) as usize,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: CU_MEMORYTYPE_UNIFIED,
        dstHost: std::ptr::null_mut(),
        dstDevice: c.dst,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: c.dpitch as usize,
        dstHeight: rows(c.dslice, c.dpitch) as usize,
        WidthInBytes: c.width as usize,
        Height: c.height as usize,
        Depth: c.depth as usize,
    }
}

/// # Safety
/// `p` points at a `CUDA_MEMCPY3D` describing memory the program owns.
unsafe fn copy_3d(p: *const CUDA_MEMCPY3D, stream: Option<CUstream>) -> CUresult {
    if p.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    let p = unsafe { p.read_unaligned() };
    let result = with_context().and_then(|c| {
        if let Some(s) = stream {
            c.enter_stream(s as u64)?;
        }
        let n = copy_3d_node(&p)?;
        for z in 0..n.depth {
            c.memcpy_2d(n.dst + z * n.dslice, n.dpitch, n.src + z * n.sslice, n.spitch, n.width, n.height, n.kind)?;
        }
        Ok(())
    });
    ret(result)
}

/// # Safety
/// As [`copy_3d`].
#[cshell::export]
pub unsafe extern "C" fn cuMemcpy3D_v2(p: *const CUDA_MEMCPY3D) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { copy_3d(p, None) }
}

/// # Safety
/// As [`copy_3d`].
#[cshell::export]
pub unsafe extern "C" fn cuMemcpy3DAsync_v2(p: *const CUDA_MEMCPY3D, stream: CUstream) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { copy_3d(p, Some(stream)) }
}

alias! {
    cuMemcpy2D_v2_ptds => cuMemcpy2D_v2(p: *const CUDA_MEMCPY2D);
    cuMemcpy2DUnaligned_v2_ptds => cuMemcpy2DUnaligned_v2(p: *const CUDA_MEMCPY2D);
    cuMemcpy3D_v2_ptds => cuMemcpy3D_v2(p: *const CUDA_MEMCPY3D);
}

per_thread! {
    cuMemcpy2DAsync_v2_ptsz => cuMemcpy2DAsync_v2(p: *const CUDA_MEMCPY2D, stream: CUstream);
    cuMemcpy3DAsync_v2_ptsz => cuMemcpy3DAsync_v2(p: *const CUDA_MEMCPY3D, stream: CUstream);
}

// ---- sets -------------------------------------------------------------------------------------------

fn set(
    ptr: u64,
    pitch: usize,
    value: u32,
    element: u64,
    width: usize,
    height: usize,
    stream: Option<CUstream>,
) -> CUresult {
    let result = with_context().and_then(|c| {
        if let Some(s) = stream {
            c.enter_stream(s as u64)?;
        }
        let pitch = if height <= 1 { width as u64 * element } else { pitch as u64 };
        c.memset_elements(ptr, pitch, value, element, width as u64, height as u64)
    });
    ret(result)
}

#[cshell::export]
pub extern "C" fn cuMemsetD8_v2(ptr: CUdeviceptr, value: u8, n: usize) -> CUresult {
    set(ptr, 0, value.into(), 1, n, 1, None)
}

#[cshell::export]
pub extern "C" fn cuMemsetD16_v2(ptr: CUdeviceptr, value: u16, n: usize) -> CUresult {
    set(ptr, 0, value.into(), 2, n, 1, None)
}

#[cshell::export]
pub extern "C" fn cuMemsetD32_v2(ptr: CUdeviceptr, value: u32, n: usize) -> CUresult {
    set(ptr, 0, value, 4, n, 1, None)
}

#[cshell::export]
pub extern "C" fn cuMemsetD2D8_v2(ptr: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize) -> CUresult {
    set(ptr, pitch, value.into(), 1, width, height, None)
}

#[cshell::export]
pub extern "C" fn cuMemsetD2D16_v2(
    ptr: CUdeviceptr,
    pitch: usize,
    value: u16,
    width: usize,
    height: usize,
) -> CUresult {
    set(ptr, pitch, value.into(), 2, width, height, None)
}

#[cshell::export]
pub extern "C" fn cuMemsetD2D32_v2(
    ptr: CUdeviceptr,
    pitch: usize,
    value: u32,
    width: usize,
    height: usize,
) -> CUresult {
    set(ptr, pitch, value, 4, width, height, None)
}

#[cshell::export]
pub extern "C" fn cuMemsetD8Async(ptr: CUdeviceptr, value: u8, n: usize, stream: CUstream) -> CUresult {
    set(ptr, 0, value.into(), 1, n, 1, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemsetD16Async(ptr: CUdeviceptr, value: u16, n: usize, stream: CUstream) -> CUresult {
    set(ptr, 0, value.into(), 2, n, 1, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemsetD32Async(ptr: CUdeviceptr, value: u32, n: usize, stream: CUstream) -> CUresult {
    set(ptr, 0, value, 4, n, 1, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemsetD2D8Async(
    ptr: CUdeviceptr,
    pitch: usize,
    value: u8,
    width: usize,
    height: usize,
    stream: CUstream,
) -> CUresult {
    set(ptr, pitch, value.into(), 1, width, height, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemsetD2D16Async(
    ptr: CUdeviceptr,
    pitch: usize,
    value: u16,
    width: usize,
    height: usize,
    stream: CUstream,
) -> CUresult {
    set(ptr, pitch, value.into(), 2, width, height, Some(stream))
}

#[cshell::export]
pub extern "C" fn cuMemsetD2D32Async(
    ptr: CUdeviceptr,
    pitch: usize,
    value: u32,
    width: usize,
    height: usize,
    stream: CUstream,
) -> CUresult {
    set(ptr, pitch, value, 4, width, height, Some(stream))
}

alias! {
    cuMemsetD8_v2_ptds => cuMemsetD8_v2(ptr: CUdeviceptr, value: u8, n: usize);
    cuMemsetD16_v2_ptds => cuMemsetD16_v2(ptr: CUdeviceptr, value: u16, n: usize);
    cuMemsetD32_v2_ptds => cuMemsetD32_v2(ptr: CUdeviceptr, value: u32, n: usize);
    cuMemsetD2D8_v2_ptds => cuMemsetD2D8_v2(ptr: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize);
    cuMemsetD2D16_v2_ptds => cuMemsetD2D16_v2(ptr: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize);
    cuMemsetD2D32_v2_ptds => cuMemsetD2D32_v2(ptr: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize);
}

per_thread! {
    cuMemsetD8Async_ptsz => cuMemsetD8Async(ptr: CUdeviceptr, value: u8, n: usize, stream: CUstream);
    cuMemsetD16Async_ptsz => cuMemsetD16Async(ptr: CUdeviceptr, value: u16, n: usize, stream: CUstream);
    cuMemsetD32Async_ptsz => cuMemsetD32Async(ptr: CUdeviceptr, value: u32, n: usize, stream: CUstream);
    cuMemsetD2D8Async_ptsz => cuMemsetD2D8Async(ptr: CUdeviceptr, pitch: usize, value: u8, width: usize, height: usize, stream: CUstream);
    cuMemsetD2D16Async_ptsz => cuMemsetD2D16Async(ptr: CUdeviceptr, pitch: usize, value: u16, width: usize, height: usize, stream: CUstream);
    cuMemsetD2D32Async_ptsz => cuMemsetD2D32Async(ptr: CUdeviceptr, pitch: usize, value: u32, width: usize, height: usize, stream: CUstream);
}

// ---- stream-ordered allocation, hints ---------------------------------------------------------------

/// # Safety
/// `ptr` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuMemAllocAsync(ptr: *mut CUdeviceptr, size: usize, stream: CUstream) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { crate::pool::alloc_async(ptr, size, None, stream) }
}

#[cshell::export]
pub extern "C" fn cuMemFreeAsync(ptr: CUdeviceptr, stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.free_async(ptr, stream as u64)))
}

per_thread! {
    cuMemAllocAsync_ptsz => cuMemAllocAsync(ptr: *mut CUdeviceptr, size: usize, stream: CUstream);
    cuMemFreeAsync_ptsz => cuMemFreeAsync(ptr: CUdeviceptr, stream: CUstream);
}

/// Host and device share memory: prefetching has nothing to move.
#[cshell::export]
pub extern "C" fn cuMemPrefetchAsync_v2(
    _ptr: CUdeviceptr,
    _n: usize,
    _location: u64,
    _flags: u32,
    stream: CUstream,
) -> CUresult {
    ret(with_context().and_then(|c| c.enter_stream(stream as u64)))
}

/// Advice about managed memory is a hint; there is one memory.
#[cshell::export]
pub extern "C" fn cuMemAdvise_v2(_ptr: CUdeviceptr, _n: usize, _advice: i32, _location: u64) -> CUresult {
    ret(with_context().map(|_| ()))
}

// ---- pointer attributes ------------------------------------------------------------------------------

/// Writes attribute `attribute` of `ptr` to `data`. An unknown pointer gives `CUDA_ERROR_INVALID_VALUE`
/// for the attributes that need an allocation, unless `lenient` (`cuPointerGetAttributes` writes
/// defaults instead).
///
/// # Safety
/// `data` is valid for a write of the attribute's type.
unsafe fn pointer_attribute(data: *mut c_void, attribute: i32, ptr: CUdeviceptr, lenient: bool) -> cuda::Result<()> {
    let c = with_context()?;
    let a = c.pointer_attributes(ptr)?;
    let known = a.kind != MemoryType::Unregistered;
    let range = if known { c.address_range(ptr).ok() } else { None };
    let need = |ok: bool| if ok || lenient { Ok(()) } else { Err(Error::INVALID_VALUE) };
    // SAFETY (every write below): the caller's promise, for the attribute's documented type.
    unsafe {
        match attribute {
            // CONTEXT
            1 => {
                need(known)?;
                out(data as *mut u64, if known { c.current_context()? } else { 0 })
            }
            // MEMORY_TYPE
            2 => {
                need(known)?;
                let t = match a.kind {
                    MemoryType::Host => CU_MEMORYTYPE_HOST,
                    MemoryType::Device | MemoryType::Managed => CU_MEMORYTYPE_DEVICE,
                    MemoryType::Unregistered => 0,
                };
                out(data as *mut u32, t)
            }
            // DEVICE_POINTER
            3 => {
                need(known)?;
                out(data as *mut u64, a.device_pointer)
            }
            // HOST_POINTER
            4 => {
                need(known && a.host_pointer != 0)?;
                out(data as *mut u64, if known { a.host_pointer } else { 0 })
            }
            // P2P_TOKENS
            5 => Err(Error::NOT_SUPPORTED),
            // SYNC_MEMOPS, MAPPED
            6 | 13 => out(data as *mut u32, u32::from(known)),
            // BUFFER_ID, MEMORY_BLOCK_ID: the allocation's base address identifies it.
            7 | 20 => {
                need(known)?;
                out(data as *mut u64, range.map_or(0, |r| r.0))
            }
            // IS_MANAGED
            8 => out(data as *mut u32, u32::from(a.kind == MemoryType::Managed)),
            // DEVICE_ORDINAL
            9 => {
                need(known)?;
                out(data as *mut i32, if known { 0 } else { -2 })
            }
            // IS_LEGACY_CUDA_IPC_CAPABLE, IS_GPU_DIRECT_RDMA_CAPABLE
            10 | 15 => out(data as *mut u32, 0),
            // RANGE_START_ADDR, MAPPING_BASE_ADDR
            11 | 19 => {
                need(range.is_some())?;
                out(data as *mut u64, range.map_or(0, |r| r.0))
            }
            // RANGE_SIZE, MAPPING_SIZE
            12 | 18 => {
                need(range.is_some())?;
                out(data as *mut u64, range.map_or(0, |r| r.1))
            }
            // ALLOWED_HANDLE_TYPES
            14 => out(data as *mut u64, 0),
            // ACCESS_FLAGS: read and write
            16 => out(data as *mut u32, if known { 3 } else { 0 }),
            // MEMPOOL_HANDLE
            17 => out(data as *mut u64, 0),
            _ => Err(Error::INVALID_VALUE),
        }
    }
}

/// # Safety
/// `data` is valid for a write of the attribute's type.
#[cshell::export]
pub unsafe extern "C" fn cuPointerGetAttribute(data: *mut c_void, attribute: i32, ptr: CUdeviceptr) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { pointer_attribute(data, attribute, ptr, false) })
}

/// # Safety
/// `attributes` holds `n` ids and `data` `n` pointers, each valid for a write of its attribute's type.
#[cshell::export]
pub unsafe extern "C" fn cuPointerGetAttributes(
    n: u32,
    attributes: *const i32,
    data: *const *mut c_void,
    ptr: CUdeviceptr,
) -> CUresult {
    if attributes.is_null() || data.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    for i in 0..n as usize {
        // SAFETY: the caller's promise.
        let result = unsafe { pointer_attribute(*data.add(i), *attributes.add(i), ptr, true) };
        if result.is_err() {
            return ret(result);
        }
    }
    ret(Ok(()))
}

/// Only `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` may be set, and every copy here is synchronous already.
#[cshell::export]
pub extern "C" fn cuPointerSetAttribute(_value: *const c_void, attribute: i32, ptr: CUdeviceptr) -> CUresult {
    let result = with_context().and_then(|c| {
        if attribute != 6 || c.pointer_attributes(ptr)?.kind == MemoryType::Unregistered {
            return Err(Error::INVALID_VALUE);
        }
        Ok(())
    });
    ret(result)
}

/// One copy with attributes: a batch of one (`cuMemcpyWithAttributesAsync`, CUDA 13).
///
/// # Safety
/// As [`copy_batch`], for one copy.
#[cshell::export]
pub unsafe extern "C" fn cuMemcpyWithAttributesAsync(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    size: usize,
    attr: *mut CUmemcpyAttributes,
    stream: CUstream,
) -> CUresult {
    // SAFETY: the caller's promise: one copy and one attribute.
    ret(with_context()
        .and_then(|c| unsafe { copy_batch(c, &dst, &src, &size, 1, attr, &0, 1, stream) }.map_err(|(e, _)| e)))
}

per_thread! {
    cuMemcpyWithAttributesAsync_ptsz => cuMemcpyWithAttributesAsync(dst: CUdeviceptr, src: CUdeviceptr, size: usize, attr: *mut CUmemcpyAttributes, stream: CUstream);
}
