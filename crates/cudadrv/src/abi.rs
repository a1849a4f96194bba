//! The driver API's C types and structures, as CUDA 13.5's `cuda.h` lays them out (sizes checked in the
//! tests below).

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::c_void;

pub type CUdevice = i32;
pub type CUdeviceptr = u64;
pub type CUcontext = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUkernel = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUlinkState = *mut c_void;
pub type CUjit_option = i32;

/// `CUmemorytype`.
pub const CU_MEMORYTYPE_HOST: u32 = 1;
pub const CU_MEMORYTYPE_DEVICE: u32 = 2;
pub const CU_MEMORYTYPE_ARRAY: u32 = 3;
pub const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// `CUDA_MEMCPY2D`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY2D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcMemoryType: u32,
    pub srcHost: *const c_void,
    pub srcDevice: CUdeviceptr,
    pub srcArray: *mut c_void,
    pub srcPitch: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstMemoryType: u32,
    pub dstHost: *mut c_void,
    pub dstDevice: CUdeviceptr,
    pub dstArray: *mut c_void,
    pub dstPitch: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
}

/// `CUDA_MEMCPY3D`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY3D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcZ: usize,
    pub srcLOD: usize,
    pub srcMemoryType: u32,
    pub srcHost: *const c_void,
    pub srcDevice: CUdeviceptr,
    pub srcArray: *mut c_void,
    pub reserved0: *mut c_void,
    pub srcPitch: usize,
    pub srcHeight: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstZ: usize,
    pub dstLOD: usize,
    pub dstMemoryType: u32,
    pub dstHost: *mut c_void,
    pub dstDevice: CUdeviceptr,
    pub dstArray: *mut c_void,
    pub reserved1: *mut c_void,
    pub dstPitch: usize,
    pub dstHeight: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
    pub Depth: usize,
}

/// `CUlaunchAttribute`: an id, padding, and a 64-byte value union.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchAttribute {
    pub id: u32,
    pub pad: [u8; 4],
    pub value: [u8; 64],
}

/// `CUlaunchConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchConfig {
    pub gridDimX: u32,
    pub gridDimY: u32,
    pub gridDimZ: u32,
    pub blockDimX: u32,
    pub blockDimY: u32,
    pub blockDimZ: u32,
    pub sharedMemBytes: u32,
    pub hStream: CUstream,
    pub attrs: *mut CUlaunchAttribute,
    pub numAttrs: u32,
}

/// `CUmemLocation`: a location type and an id (or a device and locality domain, in the same union).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemLocation {
    pub type_: u32,
    pub id: i32,
}

/// `CUmemcpyAttributes` (`cuMemcpyBatchAsync`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemcpyAttributes {
    pub srcAccessOrder: u32,
    pub srcLocHint: CUmemLocation,
    pub dstLocHint: CUmemLocation,
    pub flags: u32,
}

/// `CUmemcpySrcAccessOrder`: stream order, during the call, any time.
pub const CU_MEMCPY_SRC_ACCESS_ORDER_STREAM: u32 = 1;
pub const CU_MEMCPY_SRC_ACCESS_ORDER_ANY: u32 = 3;

/// `CUdevprop` (`cuDeviceGetProperties`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUdevprop {
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    pub sharedMemPerBlock: i32,
    pub totalConstantMemory: i32,
    pub SIMDWidth: i32,
    pub memPitch: i32,
    pub regsPerBlock: i32,
    pub clockRate: i32,
    pub textureAlign: i32,
}

/// `CUmemoryPool`: an opaque handle.
pub type CUmemoryPool = *mut c_void;

/// `CUmemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAccessDesc {
    pub location: CUmemLocation,
    /// `CUmemAccess_flags`.
    pub flags: i32,
}

/// `CUmemPoolProps` (the fields lockstep does not read are kept for the size).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemPoolProps {
    /// `CUmemAllocationType` (`CU_MEM_ALLOCATION_TYPE_PINNED` = 1).
    pub allocType: i32,
    /// `CUmemAllocationHandleType` flags.
    pub handleTypes: i32,
    pub location: CUmemLocation,
    pub win32SecurityAttributes: *mut c_void,
    pub maxSize: usize,
    pub usage: u16,
    pub reserved: [u8; 54],
}

/// What an exported function returns when lockstep panics inside it (`#[cshell::export]`).
pub trait Fallback {
    /// How the value is named in the message.
    const NAME: &'static str;
    fn fallback() -> Self;
}

/// `CUDA_ERROR_UNKNOWN`.
impl Fallback for crate::error::CUresult {
    const NAME: &'static str = "CUDA_ERROR_UNKNOWN";
    fn fallback() -> crate::error::CUresult {
        999
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_cuda_h() {
        assert_eq!(std::mem::size_of::<CUDA_MEMCPY2D>(), 128);
        assert_eq!(std::mem::size_of::<CUDA_MEMCPY3D>(), 200);
        assert_eq!(std::mem::size_of::<CUlaunchAttribute>(), 72);
        assert_eq!(std::mem::size_of::<CUlaunchConfig>(), 56);
        assert_eq!(std::mem::size_of::<CUdevprop>(), 56);
        assert_eq!(std::mem::size_of::<CUmemcpyAttributes>(), 24);
        assert_eq!(std::mem::offset_of!(CUmemcpyAttributes, dstLocHint), 12);
        assert_eq!(std::mem::offset_of!(CUmemcpyAttributes, flags), 20);
    }
}
