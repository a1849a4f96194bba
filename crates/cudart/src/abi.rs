//! The C structures of the CUDA 13 runtime API, laid out as `driver_types.h` and `texture_types.h` lay
//! them out (sizes and offsets checked in the tests against values read from CUDA 13.5's headers).

#![allow(non_snake_case, non_camel_case_types)]

use std::ffi::c_void;

/// `cudaError_t`.
pub type cudaError_t = i32;
pub type cudaStream_t = *mut c_void;
/// `cudaMemPool_t`: an opaque handle.
pub type cudaMemPool_t = *mut c_void;
pub type cudaEvent_t = *mut c_void;
pub type cudaArray_t = *mut c_void;
pub type cudaTextureObject_t = u64;
pub type cudaSurfaceObject_t = u64;
pub type cudaGraph_t = *mut c_void;
/// `cudaUserObject_t`: the driver's `CUuserObject`.
pub type cudaUserObject_t = *mut c_void;
pub type cudaGraphNode_t = *mut c_void;
pub type cudaGraphExec_t = *mut c_void;

/// `dim3` / `uint3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl From<dim3> for device::Dim3 {
    fn from(d: dim3) -> device::Dim3 {
        device::Dim3::new(d.x, d.y, d.z)
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cudaDeviceProp {
    pub name: [u8; 256],
    pub uuid: [u8; 16],
    pub luid: [u8; 8],
    pub luidDeviceNodeMask: u32,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: i32,
    pub warpSize: i32,
    pub memPitch: usize,
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    pub totalConstMem: usize,
    pub major: i32,
    pub minor: i32,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub multiProcessorCount: i32,
    pub integrated: i32,
    pub canMapHostMemory: i32,
    pub maxTexture1D: i32,
    pub maxTexture1DMipmap: i32,
    pub maxTexture2D: [i32; 2],
    pub maxTexture2DMipmap: [i32; 2],
    pub maxTexture2DLinear: [i32; 3],
    pub maxTexture2DGather: [i32; 2],
    pub maxTexture3D: [i32; 3],
    pub maxTexture3DAlt: [i32; 3],
    pub maxTextureCubemap: i32,
    pub maxTexture1DLayered: [i32; 2],
    pub maxTexture2DLayered: [i32; 3],
    pub maxTextureCubemapLayered: [i32; 2],
    pub maxSurface1D: i32,
    pub maxSurface2D: [i32; 2],
    pub maxSurface3D: [i32; 3],
    pub maxSurface1DLayered: [i32; 2],
    pub maxSurface2DLayered: [i32; 3],
    pub maxSurfaceCubemap: i32,
    pub maxSurfaceCubemapLayered: [i32; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: i32,
    pub ECCEnabled: i32,
    pub pciBusID: i32,
    pub pciDeviceID: i32,
    pub pciDomainID: i32,
    pub tccDriver: i32,
    pub asyncEngineCount: i32,
    pub unifiedAddressing: i32,
    pub memoryBusWidth: i32,
    pub l2CacheSize: i32,
    pub persistingL2CacheMaxSize: i32,
    pub maxThreadsPerMultiProcessor: i32,
    pub streamPrioritiesSupported: i32,
    pub globalL1CacheSupported: i32,
    pub localL1CacheSupported: i32,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: i32,
    pub managedMemory: i32,
    pub isMultiGpuBoard: i32,
    pub multiGpuBoardGroupID: i32,
    pub hostNativeAtomicSupported: i32,
    pub pageableMemoryAccess: i32,
    pub concurrentManagedAccess: i32,
    pub computePreemptionSupported: i32,
    pub canUseHostPointerForRegisteredMem: i32,
    pub cooperativeLaunch: i32,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: i32,
    pub directManagedMemAccessFromHost: i32,
    pub maxBlocksPerMultiProcessor: i32,
    pub accessPolicyMaxWindowSize: i32,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: i32,
    pub sparseCudaArraySupported: i32,
    pub hostRegisterReadOnlySupported: i32,
    pub timelineSemaphoreInteropSupported: i32,
    pub memoryPoolsSupported: i32,
    pub gpuDirectRDMASupported: i32,
    pub gpuDirectRDMAFlushWritesOptions: u32,
    pub gpuDirectRDMAWritesOrdering: i32,
    pub memoryPoolSupportedHandleTypes: u32,
    pub deferredMappingCudaArraySupported: i32,
    pub ipcEventSupported: i32,
    pub clusterLaunch: i32,
    pub unifiedFunctionPointers: i32,
    pub deviceNumaConfig: i32,
    pub deviceNumaId: i32,
    pub mpsEnabled: i32,
    pub hostNumaId: i32,
    pub gpuPciDeviceID: u32,
    pub gpuPciSubsystemID: u32,
    pub hostNumaMultinodeIpcSupported: i32,
    pub reserved: [i32; 56],
}

/// CUDA 12's `cudaDeviceProp` (what `cudaGetDeviceProperties_v2` fills for programs built with CUDA 12):
/// CUDA 13's fields plus the ones 13 removed (clock rates, overlap, compute mode, ...), fewer reserved words.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cudaDeviceProp12 {
    pub name: [u8; 256],
    pub uuid: [u8; 16],
    pub luid: [u8; 8],
    pub luidDeviceNodeMask: u32,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: i32,
    pub warpSize: i32,
    pub memPitch: usize,
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    pub clockRate: i32,
    pub totalConstMem: usize,
    pub major: i32,
    pub minor: i32,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub deviceOverlap: i32,
    pub multiProcessorCount: i32,
    pub kernelExecTimeoutEnabled: i32,
    pub integrated: i32,
    pub canMapHostMemory: i32,
    pub computeMode: i32,
    pub maxTexture1D: i32,
    pub maxTexture1DMipmap: i32,
    pub maxTexture1DLinear: i32,
    pub maxTexture2D: [i32; 2],
    pub maxTexture2DMipmap: [i32; 2],
    pub maxTexture2DLinear: [i32; 3],
    pub maxTexture2DGather: [i32; 2],
    pub maxTexture3D: [i32; 3],
    pub maxTexture3DAlt: [i32; 3],
    pub maxTextureCubemap: i32,
    pub maxTexture1DLayered: [i32; 2],
    pub maxTexture2DLayered: [i32; 3],
    pub maxTextureCubemapLayered: [i32; 2],
    pub maxSurface1D: i32,
    pub maxSurface2D: [i32; 2],
    pub maxSurface3D: [i32; 3],
    pub maxSurface1DLayered: [i32; 2],
    pub maxSurface2DLayered: [i32; 3],
    pub maxSurfaceCubemap: i32,
    pub maxSurfaceCubemapLayered: [i32; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: i32,
    pub ECCEnabled: i32,
    pub pciBusID: i32,
    pub pciDeviceID: i32,
    pub pciDomainID: i32,
    pub tccDriver: i32,
    pub asyncEngineCount: i32,
    pub unifiedAddressing: i32,
    pub memoryClockRate: i32,
    pub memoryBusWidth: i32,
    pub l2CacheSize: i32,
    pub persistingL2CacheMaxSize: i32,
    pub maxThreadsPerMultiProcessor: i32,
    pub streamPrioritiesSupported: i32,
    pub globalL1CacheSupported: i32,
    pub localL1CacheSupported: i32,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: i32,
    pub managedMemory: i32,
    pub isMultiGpuBoard: i32,
    pub multiGpuBoardGroupID: i32,
    pub hostNativeAtomicSupported: i32,
    pub singleToDoublePrecisionPerfRatio: i32,
    pub pageableMemoryAccess: i32,
    pub concurrentManagedAccess: i32,
    pub computePreemptionSupported: i32,
    pub canUseHostPointerForRegisteredMem: i32,
    pub cooperativeLaunch: i32,
    pub cooperativeMultiDeviceLaunch: i32,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: i32,
    pub directManagedMemAccessFromHost: i32,
    pub maxBlocksPerMultiProcessor: i32,
    pub accessPolicyMaxWindowSize: i32,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: i32,
    pub sparseCudaArraySupported: i32,
    pub hostRegisterReadOnlySupported: i32,
    pub timelineSemaphoreInteropSupported: i32,
    pub memoryPoolsSupported: i32,
    pub gpuDirectRDMASupported: i32,
    pub gpuDirectRDMAFlushWritesOptions: u32,
    pub gpuDirectRDMAWritesOrdering: i32,
    pub memoryPoolSupportedHandleTypes: u32,
    pub deferredMappingCudaArraySupported: i32,
    pub ipcEventSupported: i32,
    pub clusterLaunch: i32,
    pub unifiedFunctionPointers: i32,
    pub reserved: [i32; 63],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cudaFuncAttributes {
    pub sharedSizeBytes: usize,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxThreadsPerBlock: i32,
    pub numRegs: i32,
    pub ptxVersion: i32,
    pub binaryVersion: i32,
    pub cacheModeCA: i32,
    pub maxDynamicSharedSizeBytes: i32,
    pub preferredShmemCarveout: i32,
    pub clusterDimMustBeSet: i32,
    pub requiredClusterWidth: i32,
    pub requiredClusterHeight: i32,
    pub requiredClusterDepth: i32,
    pub clusterSchedulingPolicyPreference: i32,
    pub nonPortableClusterSizeAllowed: i32,
    pub deviceNodeUpdateStatus: i32,
    pub sharedMemoryMode: i32,
    pub reserved: [i32; 14],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cudaPointerAttributes {
    pub type_: i32,
    pub device: i32,
    pub devicePointer: u64,
    pub hostPointer: u64,
    pub localityDomainOrdinal: i64,
    pub reserved: [i64; 7],
}

/// `cudaChannelFormatDesc`: bits per channel and the channel kind.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cudaChannelFormatDesc {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub w: i32,
    /// `cudaChannelFormatKind`: 0 signed, 1 unsigned, 2 float, 3 none, ...
    pub f: i32,
}

/// `cudaResourceDesc`; the union is read according to `resType`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cudaResourceDesc {
    /// 0 array, 1 mipmapped array, 2 linear, 3 pitch 2D.
    pub resType: i32,
    pub res: ResourceUnion,
    pub flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union ResourceUnion {
    pub array: ResArray,
    pub linear: ResLinear,
    pub pitch2D: ResPitch2D,
    pub reserved: [i32; 32],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResArray {
    pub array: cudaArray_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResLinear {
    pub devPtr: *mut c_void,
    pub desc: cudaChannelFormatDesc,
    pub sizeInBytes: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResPitch2D {
    pub devPtr: *mut c_void,
    pub desc: cudaChannelFormatDesc,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cudaTextureDesc {
    pub addressMode: [i32; 3],
    pub filterMode: i32,
    pub readMode: i32,
    pub sRGB: i32,
    pub borderColor: [f32; 4],
    pub normalizedCoords: i32,
    pub maxAnisotropy: u32,
    pub mipmapFilterMode: i32,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub disableTrilinearOptimization: i32,
    pub seamlessCubemap: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cudaExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cudaPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaPitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaMemcpy3DParms {
    pub srcArray: cudaArray_t,
    pub srcPos: cudaPos,
    pub srcPtr: cudaPitchedPtr,
    pub dstArray: cudaArray_t,
    pub dstPos: cudaPos,
    pub dstPtr: cudaPitchedPtr,
    pub extent: cudaExtent,
    pub kind: i32,
}

/// `cudaLaunchAttribute`: an id, padding, and a 64-byte value union.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cudaLaunchAttribute {
    pub id: i32,
    pub pad: [u8; 4],
    pub val: [u64; 8],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaLaunchConfig_t {
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub dynamicSmemBytes: usize,
    pub stream: cudaStream_t,
    pub attrs: *const cudaLaunchAttribute,
    pub numAttrs: u32,
}

/// `cudaMemLocation`: a location type (`cudaMemLocationTypeDevice` = 1) and its id (the device).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaMemLocation {
    pub type_: i32,
    pub id: i32,
}

/// `cudaMemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaMemAccessDesc {
    pub location: cudaMemLocation,
    /// `cudaMemAccessFlags`.
    pub flags: i32,
}

/// `cudaMemPoolProps` (CUDA 12.2 and later; the fields lockstep does not read are kept for the size).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaMemPoolProps {
    /// `cudaMemAllocationType` (`cudaMemAllocationTypePinned` = 1).
    pub allocType: i32,
    /// `cudaMemAllocationHandleType` flags.
    pub handleTypes: i32,
    pub location: cudaMemLocation,
    pub win32SecurityAttributes: *mut c_void,
    pub maxSize: usize,
    pub usage: u16,
    pub reserved: [u8; 54],
}

/// `cudaKernelNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaKernelNodeParams {
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub sharedMemBytes: u32,
    pub kernelParams: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// `cudaMemsetParams`: the driver's `CUDA_MEMSET_NODE_PARAMS` (`dst` a pointer as an integer).
pub type cudaMemsetParams = cudadrv::graph_edit::CUDA_MEMSET_NODE_PARAMS;

/// `cudaHostNodeParams`: the driver's `CUDA_HOST_NODE_PARAMS`.
pub type cudaHostNodeParams = cudadrv::graph_edit::CUDA_HOST_NODE_PARAMS;

/// `cudaGraphExecUpdateResultInfo`: the driver's `CUgraphExecUpdateResultInfo`.
pub type cudaGraphExecUpdateResultInfo = cudadrv::graph_edit::CUgraphExecUpdateResultInfo;

/// `cudaMemAllocNodeParams`: the driver's `CUDA_MEM_ALLOC_NODE_PARAMS`.
pub type cudaMemAllocNodeParams = cudadrv::graph_nodes::CUDA_MEM_ALLOC_NODE_PARAMS;

/// `cudaGraphEdgeData`: the driver's `CUgraphEdgeData` (lockstep's edges are all the default kind).
pub type cudaGraphEdgeData = cudadrv::graph_edit::CUgraphEdgeData;

/// What an exported function returns when lockstep panics inside it (`#[cshell::export]`).
pub trait Fallback {
    /// How the value is named in the message.
    const NAME: &'static str;
    fn fallback() -> Self;
}

/// `cudaErrorUnknown`, recorded as the thread's last error as every error is.
impl Fallback for cudaError_t {
    const NAME: &'static str = "cudaErrorUnknown";
    fn fallback() -> cudaError_t {
        const UNKNOWN: cudaError_t = 999;
        cuda::set_last_error(UNKNOWN);
        UNKNOWN
    }
}

/// `__cudaPushCallConfiguration`'s status.
impl Fallback for u32 {
    const NAME: &'static str = "cudaErrorUnknown";
    fn fallback() -> u32 {
        <cudaError_t as Fallback>::fallback() as u32
    }
}

/// `__cudaInitModule`'s flag.
impl Fallback for std::ffi::c_char {
    const NAME: &'static str = "0";
    fn fallback() -> std::ffi::c_char {
        0
    }
}

impl<T> Fallback for *const T {
    const NAME: &'static str = "a null pointer";
    fn fallback() -> *const T {
        std::ptr::null()
    }
}

impl<T> Fallback for *mut T {
    const NAME: &'static str = "a null pointer";
    fn fallback() -> *mut T {
        std::ptr::null_mut()
    }
}

impl Fallback for () {
    const NAME: &'static str = "nothing";
    fn fallback() {}
}

impl Fallback for cudaChannelFormatDesc {
    const NAME: &'static str = "an empty channel description";
    fn fallback() -> cudaChannelFormatDesc {
        cudaChannelFormatDesc { x: 0, y: 0, z: 0, w: 0, f: 3 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Sizes and offsets printed by a C program compiled against CUDA 13.5's `cuda_runtime_api.h` (and CUDA
    /// 12.9's `driver_types.h` for the CUDA 12 properties).
    #[test]
    fn layouts_match_the_cuda_13_headers() {
        assert_eq!(size_of::<cudaDeviceProp>(), 1008);
        assert_eq!(offset_of!(cudaDeviceProp, totalGlobalMem), 288);
        assert_eq!(offset_of!(cudaDeviceProp, warpSize), 308);
        assert_eq!(offset_of!(cudaDeviceProp, maxThreadsDim), 324);
        assert_eq!(offset_of!(cudaDeviceProp, major), 360);
        assert_eq!(offset_of!(cudaDeviceProp, multiProcessorCount), 384);
        assert_eq!(offset_of!(cudaDeviceProp, surfaceAlignment), 552);
        assert_eq!(offset_of!(cudaDeviceProp, l2CacheSize), 596);
        assert_eq!(offset_of!(cudaDeviceProp, sharedMemPerMultiprocessor), 624);
        assert_eq!(offset_of!(cudaDeviceProp, sharedMemPerBlockOptin), 672);
        assert_eq!(offset_of!(cudaDeviceProp, reservedSharedMemPerBlock), 696);
        assert_eq!(offset_of!(cudaDeviceProp, hostNumaMultinodeIpcSupported), 780);
        assert_eq!(offset_of!(cudaDeviceProp, reserved), 784);
        // CUDA 12.9's header.
        assert_eq!(size_of::<cudaDeviceProp12>(), 1032);
        assert_eq!(offset_of!(cudaDeviceProp12, totalGlobalMem), 288);
        assert_eq!(offset_of!(cudaDeviceProp12, clockRate), 348);
        assert_eq!(offset_of!(cudaDeviceProp12, totalConstMem), 352);
        assert_eq!(offset_of!(cudaDeviceProp12, major), 360);
        assert_eq!(offset_of!(cudaDeviceProp12, deviceOverlap), 384);
        assert_eq!(offset_of!(cudaDeviceProp12, multiProcessorCount), 388);
        assert_eq!(offset_of!(cudaDeviceProp12, kernelExecTimeoutEnabled), 392);
        assert_eq!(offset_of!(cudaDeviceProp12, computeMode), 404);
        assert_eq!(offset_of!(cudaDeviceProp12, maxTexture1DLinear), 416);
        assert_eq!(offset_of!(cudaDeviceProp12, surfaceAlignment), 568);
        assert_eq!(offset_of!(cudaDeviceProp12, memoryClockRate), 608);
        assert_eq!(offset_of!(cudaDeviceProp12, sharedMemPerMultiprocessor), 640);
        assert_eq!(offset_of!(cudaDeviceProp12, singleToDoublePrecisionPerfRatio), 668);
        assert_eq!(offset_of!(cudaDeviceProp12, cooperativeMultiDeviceLaunch), 692);
        assert_eq!(offset_of!(cudaDeviceProp12, sharedMemPerBlockOptin), 696);
        assert_eq!(offset_of!(cudaDeviceProp12, reservedSharedMemPerBlock), 720);
        assert_eq!(offset_of!(cudaDeviceProp12, unifiedFunctionPointers), 776);
        assert_eq!(offset_of!(cudaDeviceProp12, reserved), 780);
        assert_eq!(size_of::<cudaFuncAttributes>(), 144);
        assert_eq!(offset_of!(cudaFuncAttributes, maxThreadsPerBlock), 24);
        assert_eq!(offset_of!(cudaFuncAttributes, sharedMemoryMode), 80);
        assert_eq!(offset_of!(cudaFuncAttributes, reserved), 84);
        assert_eq!(size_of::<cudaPointerAttributes>(), 88);
        assert_eq!(offset_of!(cudaPointerAttributes, devicePointer), 8);
        assert_eq!(offset_of!(cudaPointerAttributes, hostPointer), 16);
        assert_eq!(size_of::<cudaChannelFormatDesc>(), 20);
        assert_eq!(size_of::<cudaResourceDesc>(), 144);
        assert_eq!(offset_of!(cudaResourceDesc, res), 8);
        assert_eq!(offset_of!(cudaResourceDesc, res) + offset_of!(ResLinear, desc), 16);
        assert_eq!(offset_of!(cudaResourceDesc, res) + offset_of!(ResLinear, sizeInBytes), 40);
        assert_eq!(offset_of!(cudaResourceDesc, res) + offset_of!(ResPitch2D, width), 40);
        assert_eq!(offset_of!(cudaResourceDesc, res) + offset_of!(ResPitch2D, pitchInBytes), 56);
        assert_eq!(offset_of!(cudaResourceDesc, flags), 136);
        assert_eq!(size_of::<cudaTextureDesc>(), 72);
        assert_eq!(offset_of!(cudaTextureDesc, filterMode), 12);
        assert_eq!(offset_of!(cudaTextureDesc, normalizedCoords), 40);
        assert_eq!(offset_of!(cudaTextureDesc, seamlessCubemap), 68);
        assert_eq!(size_of::<cudaMemcpy3DParms>(), 160);
        assert_eq!(offset_of!(cudaMemcpy3DParms, srcPos), 8);
        assert_eq!(offset_of!(cudaMemcpy3DParms, srcPtr), 32);
        assert_eq!(offset_of!(cudaMemcpy3DParms, dstArray), 64);
        assert_eq!(offset_of!(cudaMemcpy3DParms, dstPtr), 96);
        assert_eq!(offset_of!(cudaMemcpy3DParms, extent), 128);
        assert_eq!(offset_of!(cudaMemcpy3DParms, kind), 152);
        assert_eq!(size_of::<cudaLaunchConfig_t>(), 56);
        assert_eq!(offset_of!(cudaLaunchConfig_t, dynamicSmemBytes), 24);
        assert_eq!(offset_of!(cudaLaunchConfig_t, stream), 32);
        assert_eq!(offset_of!(cudaLaunchConfig_t, attrs), 40);
        assert_eq!(offset_of!(cudaLaunchConfig_t, numAttrs), 48);
        assert_eq!(size_of::<cudaLaunchAttribute>(), 72);
        assert_eq!(offset_of!(cudaLaunchAttribute, val), 8);
        assert_eq!(size_of::<cudaExtent>(), 24);
        assert_eq!(size_of::<cudaPitchedPtr>(), 32);
        assert_eq!(size_of::<dim3>(), 12);
        assert_eq!(size_of::<cudaMemAccessDesc>(), 12);
        assert_eq!(size_of::<cudaMemPoolProps>(), 88);
        assert_eq!(offset_of!(cudaMemPoolProps, maxSize), 24);
        assert_eq!(offset_of!(cudaMemPoolProps, usage), 32);
        assert_eq!(size_of::<cudaKernelNodeParams>(), 56);
        assert_eq!(offset_of!(cudaKernelNodeParams, sharedMemBytes), 32);
        assert_eq!(offset_of!(cudaKernelNodeParams, kernelParams), 40);
        assert_eq!(size_of::<cudaMemsetParams>(), 40);
        assert_eq!(offset_of!(cudaMemsetParams, value), 16);
        assert_eq!(offset_of!(cudaMemsetParams, width), 24);
        assert_eq!(size_of::<cudaHostNodeParams>(), 16);
        assert_eq!(size_of::<cudaGraphExecUpdateResultInfo>(), 24);
        assert_eq!(offset_of!(cudaGraphExecUpdateResultInfo, errorNode), 8);
        assert_eq!(size_of::<cudaGraphEdgeData>(), 8);
    }
}
