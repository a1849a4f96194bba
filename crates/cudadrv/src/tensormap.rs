//! Tensor maps for bulk tensor copies (TMA): `cuTensorMapEncodeTiled` validates its arguments as the driver
//! documents them and writes lockstep's layout (`program::tensormap`), which `cp.async.bulk.tensor` reads;
//! `cuTensorMapReplaceAddress` rewrites a map's global address. A valid map lockstep cannot honour
//! (interleaved layouts, packed sub-byte types, the 128-byte swizzles with 32- or 64-byte atoms) is
//! `CUDA_ERROR_NOT_SUPPORTED` with a warning. im2col maps stay unimplemented (`unsupported.rs`).

use std::ffi::c_void;

use program::tensormap::{self, EncodeError, Tiled};

use crate::error::CUresult;
use crate::{cuda, ret};

/// A driver array of `n` values; null with `n > 0` is an invalid value.
///
/// # Safety
/// A non-null `p` is valid for `n` reads.
unsafe fn array<'a, T>(p: *const T, n: usize) -> cuda::Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(cuda::Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

fn encoded(function: &str, r: Result<[u8; tensormap::SIZE], EncodeError>, map: *mut c_void) -> cuda::Result<()> {
    match r {
        Ok(bytes) => {
            // SAFETY: the caller's promise (a CUtensorMap is 128 bytes); checked non-null and aligned before.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.cast::<u8>(), tensormap::SIZE) };
            Ok(())
        }
        Err(EncodeError::Invalid(_)) => Err(cuda::Error::INVALID_VALUE),
        Err(EncodeError::NotSupported(why)) => {
            cuda().warn(
                &format!("{function}: {why}"),
                &format!("warning: {function}: {why}; it returns CUDA_ERROR_NOT_SUPPORTED"),
            );
            Err(cuda::Error::NOT_SUPPORTED)
        }
    }
}

/// # Safety
/// `map` is valid for a write of 128 bytes; the arrays hold `rank` values (`rank - 1` strides).
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuTensorMapEncodeTiled(
    map: *mut c_void,
    dtype: u32,
    rank: u32,
    address: *mut c_void,
    dims: *const u64,
    strides: *const u64,
    boxes: *const u32,
    element_strides: *const u32,
    interleave: u32,
    swizzle: u32,
    l2_promotion: u32,
    oob_fill: u32,
) -> CUresult {
    let result = (|| {
        if map.is_null() || !(map as usize).is_multiple_of(64) || rank == 0 || rank as usize > tensormap::MAX_RANK {
            return Err(cuda::Error::INVALID_VALUE);
        }
        let n = rank as usize;
        // SAFETY: the caller's promise.
        let t = unsafe {
            Tiled {
                dtype,
                address: address as u64,
                dims: array(dims, n)?,
                strides: array(strides, n - 1)?,
                boxes: array(boxes, n)?,
                element_strides: array(element_strides, n)?,
                interleave,
                swizzle,
                l2_promotion,
                oob_fill,
            }
        };
        encoded("cuTensorMapEncodeTiled", tensormap::encode_tiled(&t), map)
    })();
    ret(result)
}

/// # Safety
/// `map` is valid for reads and writes of 128 bytes.
#[cshell::export]
pub unsafe extern "C" fn cuTensorMapReplaceAddress(map: *mut c_void, address: *mut c_void) -> CUresult {
    let result = (|| {
        if map.is_null() || !(map as usize).is_multiple_of(64) {
            return Err(cuda::Error::INVALID_VALUE);
        }
        let mut bytes = [0u8; tensormap::SIZE];
        // SAFETY: the caller's promise.
        unsafe { std::ptr::copy_nonoverlapping(map.cast::<u8>(), bytes.as_mut_ptr(), tensormap::SIZE) };
        let r = tensormap::replace_address(&mut bytes, address as u64).map(|()| bytes);
        encoded("cuTensorMapReplaceAddress", r, map)
    })();
    ret(result)
}
