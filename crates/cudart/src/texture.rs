//! CUDA arrays, channel formats, texture and surface objects (on the engines' texture units,
//! `device::texture`).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use cuda::{ArrayDesc, CopyKind, Error};
use device::texture::{
    AddressMode, ChannelType, FilterMode, Format, Kind, ReadMode, Resource, Sampler, SurfaceDesc, TextureDesc,
};

use crate::abi::{
    cudaArray_t, cudaChannelFormatDesc, cudaError_t, cudaExtent, cudaResourceDesc, cudaStream_t, cudaSurfaceObject_t,
    cudaTextureDesc, cudaTextureObject_t,
};
use crate::{cuda, out, ret};

/// `cudaChannelFormatKind`.
const SIGNED: i32 = 0;
const UNSIGNED: i32 = 1;
const FLOAT: i32 = 2;

/// The element format a channel descriptor describes: 1, 2 or 4 channels of one 8-, 16- or 32-bit type.
fn format(d: &cudaChannelFormatDesc) -> cuda::Result<Format> {
    let bits = [d.x, d.y, d.z, d.w];
    let channels = bits.iter().take_while(|&&b| b != 0).count();
    if channels == 0 || bits[channels..].iter().any(|&b| b != 0) || bits[..channels].iter().any(|&b| b != d.x) {
        return Err(Error::INVALID_CHANNEL_DESCRIPTOR);
    }
    if !matches!(channels, 1 | 2 | 4) {
        return Err(Error::INVALID_CHANNEL_DESCRIPTOR);
    }
    let ty = match (d.f, d.x) {
        (SIGNED, 8) => ChannelType::S8,
        (SIGNED, 16) => ChannelType::S16,
        (SIGNED, 32) => ChannelType::S32,
        (UNSIGNED, 8) => ChannelType::U8,
        (UNSIGNED, 16) => ChannelType::U16,
        (UNSIGNED, 32) => ChannelType::U32,
        (FLOAT, 16) => ChannelType::F16,
        (FLOAT, 32) => ChannelType::F32,
        _ => return Err(Error::INVALID_CHANNEL_DESCRIPTOR),
    };
    Ok(Format::new(channels as u32, ty))
}

fn channel_desc(f: Format) -> cudaChannelFormatDesc {
    let bits = f.ty.bytes() as i32 * 8;
    let kind = if f.ty.is_float() {
        FLOAT
    } else if f.ty.is_signed() {
        SIGNED
    } else {
        UNSIGNED
    };
    let c = |i: u32| if i < f.channels { bits } else { 0 };
    cudaChannelFormatDesc { x: c(0), y: c(1), z: c(2), w: c(3), f: kind }
}

#[cshell::export]
pub extern "C" fn cudaCreateChannelDesc(x: i32, y: i32, z: i32, w: i32, f: i32) -> cudaChannelFormatDesc {
    cudaChannelFormatDesc { x, y, z, w, f }
}

/// # Safety
/// `desc` is valid for a write of a `cudaChannelFormatDesc`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetChannelDesc(desc: *mut cudaChannelFormatDesc, array: cudaArray_t) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().array(array as u64).and_then(|a| unsafe { out(desc, channel_desc(a.desc.format)) }))
}

/// # Safety
/// `array` is valid for a write of a handle; `desc` points at a channel descriptor.
#[cshell::export]
pub unsafe extern "C" fn cudaMallocArray(
    array: *mut cudaArray_t,
    desc: *const cudaChannelFormatDesc,
    width: usize,
    height: usize,
    flags: u32,
) -> cudaError_t {
    let extent = cudaExtent { width, height, depth: 0 };
    // SAFETY: the caller's promise.
    unsafe { cudaMalloc3DArray(array, desc, extent, flags) }
}

/// # Safety
/// As [`cudaMallocArray`].
#[cshell::export]
pub unsafe extern "C" fn cudaMalloc3DArray(
    array: *mut cudaArray_t,
    desc: *const cudaChannelFormatDesc,
    extent: cudaExtent,
    flags: u32,
) -> cudaError_t {
    if array.is_null() || desc.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let result = (|| {
        // SAFETY: the caller's promise.
        let format = format(unsafe { &desc.read_unaligned() })?;
        let dim = |v: usize| u32::try_from(v).map_err(|_| Error::INVALID_VALUE);
        let d = ArrayDesc {
            format,
            width: dim(extent.width)?,
            height: dim(extent.height)?,
            depth: dim(extent.depth)?,
            flags,
        };
        let handle = cuda().malloc_array(d)?;
        // SAFETY: the caller's promise.
        unsafe { out(array, handle as cudaArray_t) }
    })();
    ret(result)
}

#[cshell::export]
pub extern "C" fn cudaFreeArray(array: cudaArray_t) -> cudaError_t {
    ret(cuda().free_array(array as u64))
}

/// # Safety
/// Each pointer is null or valid for a write of its type.
#[cshell::export]
pub unsafe extern "C" fn cudaArrayGetInfo(
    desc: *mut cudaChannelFormatDesc,
    extent: *mut cudaExtent,
    flags: *mut u32,
    array: cudaArray_t,
) -> cudaError_t {
    let result = cuda().array(array as u64).map(|a| {
        let d = a.desc;
        // SAFETY: the caller's promise; null outputs are skipped.
        unsafe {
            if !desc.is_null() {
                desc.write_unaligned(channel_desc(d.format));
            }
            if !extent.is_null() {
                extent.write_unaligned(cudaExtent {
                    width: d.width as usize,
                    height: d.height as usize,
                    depth: d.depth as usize,
                });
            }
            if !flags.is_null() {
                flags.write_unaligned(d.flags);
            }
        }
    });
    ret(result)
}

fn kind(k: i32) -> cuda::Result<CopyKind> {
    CopyKind::from_raw(k)
}

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DToArray(
    dst: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    k: i32,
) -> cudaError_t {
    let result = kind(k).and_then(|k| {
        cuda().memcpy_2d_to_array(
            dst as u64,
            w_offset as u64,
            h_offset as u64,
            src as u64,
            spitch as u64,
            width as u64,
            height as u64,
            k,
        )
    });
    ret(result)
}

ptds!(
    cudaMemcpy2DToArray_ptds => cudaMemcpy2DToArray(
        dst: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        k: i32,
    )
);

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DToArrayAsync(
    dst: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    if let Err(e) = cuda().enter_stream(stream as u64) {
        return ret(Err(e));
    }
    cudaMemcpy2DToArray(dst, w_offset, h_offset, src, spitch, width, height, k)
}

ptsz!(
    cudaMemcpy2DToArrayAsync_ptsz => cudaMemcpy2DToArrayAsync(
        dst: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DFromArray(
    dst: *mut c_void,
    dpitch: usize,
    src: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    k: i32,
) -> cudaError_t {
    let result = kind(k).and_then(|k| {
        cuda().memcpy_2d_from_array(
            dst as u64,
            dpitch as u64,
            src as u64,
            w_offset as u64,
            h_offset as u64,
            width as u64,
            height as u64,
            k,
        )
    });
    ret(result)
}

ptds!(
    cudaMemcpy2DFromArray_ptds => cudaMemcpy2DFromArray(
        dst: *mut c_void,
        dpitch: usize,
        src: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        width: usize,
        height: usize,
        k: i32,
    )
);

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    if let Err(e) = cuda().enter_stream(stream as u64) {
        return ret(Err(e));
    }
    cudaMemcpy2DFromArray(dst, dpitch, src, w_offset, h_offset, width, height, k)
}

ptsz!(
    cudaMemcpy2DFromArrayAsync_ptsz => cudaMemcpy2DFromArrayAsync(
        dst: *mut c_void,
        dpitch: usize,
        src: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        width: usize,
        height: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

/// The deprecated one-dimensional form: `count` bytes from byte `w_offset` of row `h_offset`, wrapping
/// into the following rows; on `stream` for the `Async` form (a copy node while it captures).
fn to_array_1d(
    dst: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    k: i32,
    stream: Option<cudaStream_t>,
) -> cuda::Result<()> {
    let k = kind(k)?;
    let to = cuda().array(dst as u64)?.linear_region(w_offset as u64, h_offset as u64, count as u64)?;
    let k = if k == CopyKind::HostToHost { CopyKind::HostToDevice } else { k };
    match stream {
        None => cuda().memcpy(to, src as u64, count as u64, k),
        Some(s) => cuda().memcpy_async(to, src as u64, count as u64, k, s as u64),
    }
}

fn from_array_1d(
    dst: *mut c_void,
    src: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    k: i32,
    stream: Option<cudaStream_t>,
) -> cuda::Result<()> {
    let k = kind(k)?;
    let from = cuda().array(src as u64)?.linear_region(w_offset as u64, h_offset as u64, count as u64)?;
    let k = if k == CopyKind::HostToHost { CopyKind::DeviceToHost } else { k };
    match stream {
        None => cuda().memcpy(dst as u64, from, count as u64, k),
        Some(s) => cuda().memcpy_async(dst as u64, from, count as u64, k, s as u64),
    }
}

#[cshell::export]
pub extern "C" fn cudaMemcpyToArray(
    dst: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    k: i32,
) -> cudaError_t {
    ret(to_array_1d(dst, w_offset, h_offset, src, count, k, None))
}

ptds!(
    cudaMemcpyToArray_ptds => cudaMemcpyToArray(
        dst: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        count: usize,
        k: i32,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyToArrayAsync(
    dst: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    ret(to_array_1d(dst, w_offset, h_offset, src, count, k, Some(stream)))
}

ptsz!(
    cudaMemcpyToArrayAsync_ptsz => cudaMemcpyToArrayAsync(
        dst: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        count: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyFromArray(
    dst: *mut c_void,
    src: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    k: i32,
) -> cudaError_t {
    ret(from_array_1d(dst, src, w_offset, h_offset, count, k, None))
}

ptds!(
    cudaMemcpyFromArray_ptds => cudaMemcpyFromArray(
        dst: *mut c_void,
        src: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        count: usize,
        k: i32,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyFromArrayAsync(
    dst: *mut c_void,
    src: cudaArray_t,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    k: i32,
    stream: cudaStream_t,
) -> cudaError_t {
    ret(from_array_1d(dst, src, w_offset, h_offset, count, k, Some(stream)))
}

ptsz!(
    cudaMemcpyFromArrayAsync_ptsz => cudaMemcpyFromArrayAsync(
        dst: *mut c_void,
        src: cudaArray_t,
        w_offset: usize,
        h_offset: usize,
        count: usize,
        k: i32,
        stream: cudaStream_t,
    )
);

// ---- texture and surface objects ----------------------------------------------------------------

/// The descriptors an object was created from, for the getters.
#[derive(Clone, Copy)]
struct Saved(cudaResourceDesc, Option<cudaTextureDesc>);

// SAFETY: plain data; its pointers are device addresses and array handles, never dereferenced from here.
unsafe impl Send for Saved {}

fn descriptors() -> &'static Mutex<HashMap<u64, Saved>> {
    static MAP: OnceLock<Mutex<HashMap<u64, Saved>>> = OnceLock::new();
    MAP.get_or_init(Mutex::default)
}

/// The texels a resource descriptor names.
fn resource(r: &cudaResourceDesc) -> cuda::Result<Resource> {
    match r.resType {
        0 => {
            // SAFETY: `resType` 0 means the `array` member is the one written.
            let handle = unsafe { r.res.array.array };
            let a = cuda().array(handle as u64)?;
            Ok(a.desc.resource(a.ptr))
        }
        2 => {
            // SAFETY: `resType` 2: `linear`.
            let l = unsafe { r.res.linear };
            let f = format(&l.desc)?;
            let width = u32::try_from(l.sizeInBytes as u64 / u64::from(f.bytes())).map_err(|_| Error::INVALID_VALUE)?;
            let mut res = Resource::new(Kind::D1, f, width, 0, 0, 0);
            res.ptr = l.devPtr as u64;
            Ok(res)
        }
        3 => {
            // SAFETY: `resType` 3: `pitch2D`.
            let p = unsafe { r.res.pitch2D };
            let f = format(&p.desc)?;
            let dim = |v: usize| u32::try_from(v).map_err(|_| Error::INVALID_VALUE);
            let mut res = Resource::new(Kind::D2, f, dim(p.width)?, dim(p.height)?, 0, 0);
            res.ptr = p.devPtr as u64;
            res.pitch = p.pitchInBytes as u64;
            Ok(res)
        }
        // Mipmapped arrays are not supported.
        _ => Err(Error::INVALID_VALUE),
    }
}

/// The sampler a texture descriptor asks for. Wrap and mirror addressing apply to normalized coordinates
/// only; with unnormalized ones CUDA clamps (a zeroed descriptor asks for wrap), and so does this.
fn sampler(t: &cudaTextureDesc) -> cuda::Result<Sampler> {
    let normalized = t.normalizedCoords != 0;
    let mode = |m: i32| {
        Ok(match m {
            0 if normalized => AddressMode::Wrap,
            0 | 2 if !normalized => AddressMode::Clamp,
            1 => AddressMode::Clamp,
            2 => AddressMode::Mirror,
            3 => AddressMode::Border,
            _ => return Err(Error::INVALID_VALUE),
        })
    };
    Ok(Sampler {
        address: [mode(t.addressMode[0])?, mode(t.addressMode[1])?, mode(t.addressMode[2])?],
        filter: match t.filterMode {
            0 => FilterMode::Point,
            1 => FilterMode::Linear,
            _ => return Err(Error::INVALID_FILTER_SETTING),
        },
        normalized,
        read_mode: match t.readMode {
            0 => ReadMode::ElementType,
            1 => ReadMode::NormalizedFloat,
            _ => return Err(Error::INVALID_VALUE),
        },
    })
}

/// # Safety
/// `object` is valid for a write; the descriptors are valid (the view descriptor is ignored and must be
/// null).
#[cshell::export]
pub unsafe extern "C" fn cudaCreateTextureObject(
    object: *mut cudaTextureObject_t,
    res: *const cudaResourceDesc,
    tex: *const cudaTextureDesc,
    view: *const c_void,
) -> cudaError_t {
    if object.is_null() || res.is_null() || tex.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    if !view.is_null() {
        return ret(Err(cuda().unsupported("cudaCreateTextureObject with a resource view")));
    }
    // SAFETY: the caller's promise.
    let (r, t) = unsafe { (res.read_unaligned(), tex.read_unaligned()) };
    let result = (|| {
        let desc = TextureDesc { resource: resource(&r)?, sampler: sampler(&t)? };
        let handle = cuda().create_texture(desc)?;
        descriptors().lock().unwrap_or_else(|e| e.into_inner()).insert(handle, Saved(r, Some(t)));
        // SAFETY: the caller's promise.
        unsafe { out(object, handle) }
    })();
    ret(result)
}

#[cshell::export]
pub extern "C" fn cudaDestroyTextureObject(object: cudaTextureObject_t) -> cudaError_t {
    descriptors().lock().unwrap_or_else(|e| e.into_inner()).remove(&object);
    ret(cuda().destroy_object(object))
}

/// # Safety
/// `object` is valid for a write; `res` is a valid descriptor.
#[cshell::export]
pub unsafe extern "C" fn cudaCreateSurfaceObject(
    object: *mut cudaSurfaceObject_t,
    res: *const cudaResourceDesc,
) -> cudaError_t {
    if object.is_null() || res.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    let r = unsafe { res.read_unaligned() };
    let result = (|| {
        if r.resType != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let handle = cuda().create_surface(SurfaceDesc { resource: resource(&r)? })?;
        descriptors().lock().unwrap_or_else(|e| e.into_inner()).insert(handle, Saved(r, None));
        // SAFETY: the caller's promise.
        unsafe { out(object, handle) }
    })();
    ret(result)
}

#[cshell::export]
pub extern "C" fn cudaDestroySurfaceObject(object: cudaSurfaceObject_t) -> cudaError_t {
    descriptors().lock().unwrap_or_else(|e| e.into_inner()).remove(&object);
    ret(cuda().destroy_object(object))
}

/// # Safety
/// `res` is valid for a write of a `cudaResourceDesc`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetTextureObjectResourceDesc(
    res: *mut cudaResourceDesc,
    object: cudaTextureObject_t,
) -> cudaError_t {
    let found = descriptors().lock().unwrap_or_else(|e| e.into_inner()).get(&object).map(|d| d.0);
    // SAFETY: the caller's promise.
    ret(found.ok_or(Error::INVALID_VALUE).and_then(|r| unsafe { out(res, r) }))
}

/// # Safety
/// As [`cudaGetTextureObjectResourceDesc`].
#[cshell::export]
pub unsafe extern "C" fn cudaGetSurfaceObjectResourceDesc(
    res: *mut cudaResourceDesc,
    object: cudaSurfaceObject_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaGetTextureObjectResourceDesc(res, object) }
}

/// # Safety
/// `tex` is valid for a write of a `cudaTextureDesc`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetTextureObjectTextureDesc(
    tex: *mut cudaTextureDesc,
    object: cudaTextureObject_t,
) -> cudaError_t {
    let found = descriptors().lock().unwrap_or_else(|e| e.into_inner()).get(&object).and_then(|d| d.1);
    // SAFETY: the caller's promise.
    ret(found.ok_or(Error::INVALID_VALUE).and_then(|t| unsafe { out(tex, t) }))
}

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DArrayToArray(
    dst: cudaArray_t,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: cudaArray_t,
    w_offset_src: usize,
    h_offset_src: usize,
    width: usize,
    height: usize,
    k: i32,
) -> cudaError_t {
    let result = kind(k).and_then(|k| {
        cuda().memcpy_2d_array_to_array(
            dst as u64,
            w_offset_dst as u64,
            h_offset_dst as u64,
            src as u64,
            w_offset_src as u64,
            h_offset_src as u64,
            width as u64,
            height as u64,
            k,
        )
    });
    ret(result)
}

ptds!(
    cudaMemcpy2DArrayToArray_ptds => cudaMemcpy2DArrayToArray(
        dst: cudaArray_t,
        w_offset_dst: usize,
        h_offset_dst: usize,
        src: cudaArray_t,
        w_offset_src: usize,
        h_offset_src: usize,
        width: usize,
        height: usize,
        k: i32,
    )
);

#[cshell::export]
pub extern "C" fn cudaMemcpyArrayToArray(
    dst: cudaArray_t,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: cudaArray_t,
    w_offset_src: usize,
    h_offset_src: usize,
    count: usize,
    k: i32,
) -> cudaError_t {
    let result = kind(k).and_then(|k| {
        cuda().memcpy_array_to_array(
            dst as u64,
            w_offset_dst as u64,
            h_offset_dst as u64,
            src as u64,
            w_offset_src as u64,
            h_offset_src as u64,
            count as u64,
            k,
        )
    });
    ret(result)
}

ptds!(
    cudaMemcpyArrayToArray_ptds => cudaMemcpyArrayToArray(
        dst: cudaArray_t,
        w_offset_dst: usize,
        h_offset_dst: usize,
        src: cudaArray_t,
        w_offset_src: usize,
        h_offset_src: usize,
        count: usize,
        k: i32,
    )
);
