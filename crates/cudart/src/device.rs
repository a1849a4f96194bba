//! Device management, errors, versions, the profiler, and the deprecated thread-scoped calls older suites
//! still make.

use std::ffi::{c_char, CStr};

use cuda::Error;

use crate::abi::{cudaDeviceProp, cudaDeviceProp12, cudaError_t};
use crate::{check_device, cuda, out, ret};

/// The CUDA version lockstep's runtime implements (13.5).
const VERSION: i32 = 13050;

/// # Safety
/// `count` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetDeviceCount(count: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(count, 1) })
}

#[cshell::export]
pub extern "C" fn cudaSetDevice(device: i32) -> cudaError_t {
    ret(check_device(device))
}

/// # Safety
/// `device` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetDevice(device: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(device, 0) })
}

#[cshell::export]
pub extern "C" fn cudaInitDevice(device: i32, _device_flags: u32, _flags: u32) -> cudaError_t {
    ret(check_device(device))
}

/// # Safety
/// `devices` points at `len` ints.
#[cshell::export]
pub unsafe extern "C" fn cudaSetValidDevices(devices: *mut i32, len: i32) -> cudaError_t {
    if len <= 0 || devices.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    let list = unsafe { std::slice::from_raw_parts(devices, len as usize) };
    ret(list.iter().try_for_each(|&d| check_device(d)))
}

/// # Safety
/// `device` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaChooseDevice(device: *mut i32, _prop: *const cudaDeviceProp) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(device, 0) })
}

/// The properties of lockstep's device, in CUDA 13's layout.
///
/// # Safety
/// `prop` is valid for a write of `cudaDeviceProp`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetDeviceProperties(prop: *mut cudaDeviceProp, device: i32) -> cudaError_t {
    let c = cuda();
    let result = check_device(device).and_then(|()| {
        // SAFETY: the caller's promise.
        unsafe { out(prop, device_prop(c)) }
    });
    ret(result)
}

/// The same in CUDA 12's layout: programs built with CUDA 12 call this name.
///
/// # Safety
/// `prop` is valid for a write of CUDA 12's `cudaDeviceProp`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetDeviceProperties_v2(prop: *mut cudaDeviceProp12, device: i32) -> cudaError_t {
    let c = cuda();
    let result = check_device(device).and_then(|()| {
        let p = device_prop(c);
        let a = |id: i32| c.properties().attribute(id).unwrap_or(0);
        // SAFETY: plain C data; all-zero is a valid value.
        let mut d: cudaDeviceProp12 = unsafe { std::mem::zeroed() };
        // The fields both layouts have, by name.
        macro_rules! same {
            ($($f:ident),* $(,)?) => { $(d.$f = p.$f;)* };
        }
        same!(
            name,
            uuid,
            luid,
            luidDeviceNodeMask,
            totalGlobalMem,
            sharedMemPerBlock,
            regsPerBlock,
            warpSize,
            memPitch,
            maxThreadsPerBlock,
            maxThreadsDim,
            maxGridSize,
            totalConstMem,
            major,
            minor,
            textureAlignment,
            texturePitchAlignment,
            multiProcessorCount,
            integrated,
            canMapHostMemory,
            maxTexture1D,
            maxTexture1DMipmap,
            maxTexture2D,
            maxTexture2DMipmap,
            maxTexture2DLinear,
            maxTexture2DGather,
            maxTexture3D,
            maxTexture3DAlt,
            maxTextureCubemap,
            maxTexture1DLayered,
            maxTexture2DLayered,
            maxTextureCubemapLayered,
            maxSurface1D,
            maxSurface2D,
            maxSurface3D,
            maxSurface1DLayered,
            maxSurface2DLayered,
            maxSurfaceCubemap,
            maxSurfaceCubemapLayered,
            surfaceAlignment,
            concurrentKernels,
            ECCEnabled,
            pciBusID,
            pciDeviceID,
            pciDomainID,
            tccDriver,
            asyncEngineCount,
            unifiedAddressing,
            memoryBusWidth,
            l2CacheSize,
            persistingL2CacheMaxSize,
            maxThreadsPerMultiProcessor,
            streamPrioritiesSupported,
            globalL1CacheSupported,
            localL1CacheSupported,
            sharedMemPerMultiprocessor,
            regsPerMultiprocessor,
            managedMemory,
            isMultiGpuBoard,
            multiGpuBoardGroupID,
            hostNativeAtomicSupported,
            pageableMemoryAccess,
            concurrentManagedAccess,
            computePreemptionSupported,
            canUseHostPointerForRegisteredMem,
            cooperativeLaunch,
            sharedMemPerBlockOptin,
            pageableMemoryAccessUsesHostPageTables,
            directManagedMemAccessFromHost,
            maxBlocksPerMultiProcessor,
            accessPolicyMaxWindowSize,
            reservedSharedMemPerBlock,
            hostRegisterSupported,
            sparseCudaArraySupported,
            hostRegisterReadOnlySupported,
            timelineSemaphoreInteropSupported,
            memoryPoolsSupported,
            gpuDirectRDMASupported,
            gpuDirectRDMAFlushWritesOptions,
            gpuDirectRDMAWritesOrdering,
            memoryPoolSupportedHandleTypes,
            deferredMappingCudaArraySupported,
            ipcEventSupported,
            clusterLaunch,
            unifiedFunctionPointers,
        );
        d.clockRate = a(13);
        d.deviceOverlap = a(15);
        d.kernelExecTimeoutEnabled = a(17);
        d.computeMode = a(20);
        d.maxTexture1DLinear = a(69);
        d.memoryClockRate = a(36);
        d.singleToDoublePrecisionPerfRatio = a(87);
        // SAFETY: the caller's promise.
        unsafe { out(prop, d) }
    });
    ret(result)
}

/// Fills `cudaDeviceProp` from the device's attributes (one source for both APIs).
fn device_prop(c: &cuda::Cuda) -> cudaDeviceProp {
    let p = c.properties();
    let a = |id: i32| p.attribute(id).unwrap_or(0);
    // SAFETY: `cudaDeviceProp` is plain C data; all-zero is a valid value.
    let mut d: cudaDeviceProp = unsafe { std::mem::zeroed() };
    let name = p.name.as_bytes();
    let n = name.len().min(d.name.len() - 1);
    d.name[..n].copy_from_slice(&name[..n]);
    d.uuid = *b"lockstep-cpu-dev";
    d.totalGlobalMem = p.total_global_mem as usize;
    d.sharedMemPerBlock = a(8) as usize;
    d.regsPerBlock = a(12);
    d.warpSize = a(10);
    d.memPitch = a(11) as usize;
    d.maxThreadsPerBlock = a(1);
    d.maxThreadsDim = [a(2), a(3), a(4)];
    d.maxGridSize = [a(5), a(6), a(7)];
    d.totalConstMem = a(9) as usize;
    d.major = a(75);
    d.minor = a(76);
    d.textureAlignment = a(14) as usize;
    d.texturePitchAlignment = a(51) as usize;
    d.multiProcessorCount = a(16);
    d.integrated = a(18);
    d.canMapHostMemory = a(19);
    d.maxTexture1D = a(21);
    d.maxTexture1DMipmap = a(77);
    d.maxTexture2D = [a(22), a(23)];
    d.maxTexture2DMipmap = [a(73), a(74)];
    d.maxTexture2DLinear = [a(70), a(71), a(72)];
    d.maxTexture2DGather = [a(45), a(46)];
    d.maxTexture3D = [a(24), a(25), a(26)];
    d.maxTexture3DAlt = [a(47), a(48), a(49)];
    d.maxTextureCubemap = a(52);
    d.maxTexture1DLayered = [a(42), a(43)];
    d.maxTexture2DLayered = [a(27), a(28), a(29)];
    d.maxTextureCubemapLayered = [a(53), a(54)];
    d.maxSurface1D = a(55);
    d.maxSurface2D = [a(56), a(57)];
    d.maxSurface3D = [a(58), a(59), a(60)];
    d.maxSurface1DLayered = [a(61), a(62)];
    d.maxSurface2DLayered = [a(63), a(64), a(65)];
    d.maxSurfaceCubemap = a(66);
    d.maxSurfaceCubemapLayered = [a(67), a(68)];
    d.surfaceAlignment = a(30) as usize;
    d.concurrentKernels = a(31);
    d.ECCEnabled = a(32);
    d.asyncEngineCount = a(40);
    d.unifiedAddressing = a(41);
    d.memoryBusWidth = a(37);
    d.l2CacheSize = a(38);
    d.maxThreadsPerMultiProcessor = a(39);
    d.streamPrioritiesSupported = a(78);
    d.globalL1CacheSupported = a(79);
    d.localL1CacheSupported = a(80);
    d.sharedMemPerMultiprocessor = a(81) as usize;
    d.regsPerMultiprocessor = a(82);
    d.managedMemory = a(83);
    d.hostNativeAtomicSupported = a(86);
    d.pageableMemoryAccess = a(88);
    d.concurrentManagedAccess = a(89);
    d.computePreemptionSupported = a(90);
    d.canUseHostPointerForRegisteredMem = a(91);
    d.cooperativeLaunch = a(95);
    d.sharedMemPerBlockOptin = a(97) as usize;
    d.directManagedMemAccessFromHost = a(101);
    d.maxBlocksPerMultiProcessor = a(106);
    d.hostRegisterSupported = a(99);
    d.hostRegisterReadOnlySupported = a(113);
    d.memoryPoolsSupported = a(115);
    d.deviceNumaId = a(131);
    d.hostNumaId = a(134);
    d
}

/// # Safety
/// `value` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetAttribute(value: *mut i32, attr: i32, device: i32) -> cudaError_t {
    let c = cuda();
    let result = check_device(device).and_then(|()| {
        let v = c.properties().attribute(attr).ok_or(Error::INVALID_VALUE)?;
        // SAFETY: the caller's promise.
        unsafe { out(value, v) }
    });
    ret(result)
}

#[cshell::export]
pub extern "C" fn cudaDeviceSynchronize() -> cudaError_t {
    ret(cuda().synchronize())
}

#[cshell::export]
pub extern "C" fn cudaDeviceReset() -> cudaError_t {
    ret(cuda().reset())
}

/// Deprecated since CUDA 4 (removed from CUDA 13's headers); older suites still call it.
#[cshell::export]
pub extern "C" fn cudaThreadSynchronize() -> cudaError_t {
    cudaDeviceSynchronize()
}

#[cshell::export]
pub extern "C" fn cudaThreadExit() -> cudaError_t {
    cudaDeviceReset()
}

#[cshell::export]
pub extern "C" fn cudaSetDeviceFlags(flags: u32) -> cudaError_t {
    ret(cuda().set_device_flags(flags))
}

/// # Safety
/// `flags` is valid for a write of an `unsigned int`.
#[cshell::export]
pub unsafe extern "C" fn cudaGetDeviceFlags(flags: *mut u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(flags, cuda().device_flags()) })
}

#[cshell::export]
pub extern "C" fn cudaDeviceSetLimit(limit: u32, value: usize) -> cudaError_t {
    ret(cuda().set_limit(limit, value as u64))
}

/// # Safety
/// `value` is valid for a write of a `size_t`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetLimit(value: *mut usize, limit: u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().limit(limit).and_then(|v| unsafe { out(value, v as usize) }))
}

#[cshell::export]
pub extern "C" fn cudaThreadSetLimit(limit: u32, value: usize) -> cudaError_t {
    cudaDeviceSetLimit(limit, value)
}

/// # Safety
/// As [`cudaDeviceGetLimit`].
#[cshell::export]
pub unsafe extern "C" fn cudaThreadGetLimit(value: *mut usize, limit: u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaDeviceGetLimit(value, limit) }
}

#[cshell::export]
pub extern "C" fn cudaDeviceSetCacheConfig(config: i32) -> cudaError_t {
    ret(cuda().set_cache_config(config))
}

/// # Safety
/// `config` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetCacheConfig(config: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(config, cuda().cache_config()) })
}

#[cshell::export]
pub extern "C" fn cudaThreadSetCacheConfig(config: i32) -> cudaError_t {
    cudaDeviceSetCacheConfig(config)
}

/// # Safety
/// As [`cudaDeviceGetCacheConfig`].
#[cshell::export]
pub unsafe extern "C" fn cudaThreadGetCacheConfig(config: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaDeviceGetCacheConfig(config) }
}

/// Shared-memory bank size: a hint with no meaning here (4-byte banks are what the statistics model).
#[cshell::export]
pub extern "C" fn cudaDeviceSetSharedMemConfig(config: i32) -> cudaError_t {
    ret(if (0..=2).contains(&config) { Ok(()) } else { Err(Error::INVALID_VALUE) })
}

/// # Safety
/// `config` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetSharedMemConfig(config: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise (1: cudaSharedMemBankSizeFourByte).
    ret(unsafe { out(config, 1) })
}

/// # Safety
/// Both pointers are null or valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetStreamPriorityRange(least: *mut i32, greatest: *mut i32) -> cudaError_t {
    let (l, g) = cuda::Cuda::stream_priority_range();
    // SAFETY: the caller's promise; either pointer may be null.
    unsafe {
        if !least.is_null() {
            least.write_unaligned(l);
        }
        if !greatest.is_null() {
            greatest.write_unaligned(g);
        }
    }
    0
}

/// # Safety
/// `pci_bus_id` has room for `len` bytes.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetPCIBusId(pci_bus_id: *mut c_char, len: i32, device: i32) -> cudaError_t {
    let result = check_device(device).and_then(|()| {
        let id = format!("{}\0", cuda::properties::PCI_BUS_ID).into_bytes();
        if pci_bus_id.is_null() || len < id.len() as i32 {
            return Err(Error::INVALID_VALUE);
        }
        // SAFETY: the caller's promise, with room checked.
        unsafe { std::ptr::copy_nonoverlapping(id.as_ptr() as *const c_char, pci_bus_id, id.len()) };
        Ok(())
    });
    ret(result)
}

/// # Safety
/// `device` is valid for a write of an `int`; `pci_bus_id` is a NUL-terminated string.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetByPCIBusId(device: *mut i32, pci_bus_id: *const c_char) -> cudaError_t {
    if pci_bus_id.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    let id = unsafe { CStr::from_ptr(pci_bus_id) }.to_string_lossy();
    if !cuda::properties::is_pci_bus_id(&id) {
        return ret(Err(Error::INVALID_DEVICE));
    }
    // SAFETY: the caller's promise.
    ret(unsafe { out(device, 0) })
}

/// There is one device, so no peer.
///
/// # Safety
/// `can` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceCanAccessPeer(can: *mut i32, device: i32, peer: i32) -> cudaError_t {
    let result = check_device(device).and(check_device(peer)).and_then(|()| {
        // SAFETY: the caller's promise.
        unsafe { out(can, 0) }
    });
    ret(result)
}

#[cshell::export]
pub extern "C" fn cudaDeviceEnablePeerAccess(peer: i32, _flags: u32) -> cudaError_t {
    ret(check_device(peer).and(Err(Error::INVALID_DEVICE)))
}

#[cshell::export]
pub extern "C" fn cudaDeviceDisablePeerAccess(peer: i32) -> cudaError_t {
    ret(check_device(peer).and(Err(Error::PEER_ACCESS_NOT_ENABLED)))
}

/// # Safety
/// `version` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaDriverGetVersion(version: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(version, VERSION) })
}

/// # Safety
/// `version` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaRuntimeGetVersion(version: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { out(version, VERSION) })
}

#[cshell::export]
pub extern "C" fn cudaGetLastError() -> cudaError_t {
    cuda().take_last_error()
}

#[cshell::export]
pub extern "C" fn cudaPeekAtLastError() -> cudaError_t {
    cuda().peek_last_error()
}

/// The enumerator's name, as a static C string ("unrecognized error code" for an unknown value).
#[cshell::export]
pub extern "C" fn cudaGetErrorName(error: cudaError_t) -> *const c_char {
    static_c_str(cuda::error::name_of(error))
}

/// The error's description, as NVIDIA's runtime words it.
#[cshell::export]
pub extern "C" fn cudaGetErrorString(error: cudaError_t) -> *const c_char {
    static_c_str(cuda::error::description_of(error))
}

/// A `&'static str` from the error table as a NUL-terminated C string, made once per string.
fn static_c_str(s: &'static str) -> *const c_char {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static STRINGS: OnceLock<Mutex<HashMap<&'static str, &'static CStr>>> = OnceLock::new();
    let mut map = STRINGS.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    map.entry(s)
        .or_insert_with(|| {
            let owned = std::ffi::CString::new(s).unwrap_or_default();
            Box::leak(owned.into_boxed_c_str())
        })
        .as_ptr()
}

/// Profiling brackets: nothing to start or stop.
#[cshell::export]
pub extern "C" fn cudaProfilerStart() -> cudaError_t {
    0
}

#[cshell::export]
pub extern "C" fn cudaProfilerStop() -> cudaError_t {
    0
}

/// `cudaGetDriverEntryPoint{ByVersion}{_ptsz}`: the driver function `symbol` names for `version`, as
/// `cuGetProcAddress` finds it in this library (which is also `libcuda.so.1`). A symbol not found is
/// success with a null pointer and the reason in `status`; the default flag means the per-thread
/// default stream in the `_ptsz` forms.
///
/// # Safety
/// `symbol` is null or NUL-terminated; `pfn` and a non-null `status` are valid for writes.
unsafe fn driver_entry_point(
    symbol: *const std::ffi::c_char,
    pfn: *mut *mut std::ffi::c_void,
    version: u32,
    flags: u64,
    status: *mut i32,
    ptsz: bool,
) -> cudaError_t {
    cuda();
    if symbol.is_null() || pfn.is_null() || flags > 0b11 || version > VERSION as u32 {
        return ret(Err(Error::INVALID_VALUE));
    }
    let flags = match flags {
        0 if ptsz => 2,
        0 => 1,
        f => f,
    };
    // SAFETY: the caller's promise.
    let name = unsafe { std::ffi::CStr::from_ptr(symbol) }.to_string_lossy();
    let found = cudadrv::proc::resolve(&name, version as i32, flags);
    // SAFETY: the caller's promise.
    unsafe {
        pfn.write_unaligned(*found.as_ref().unwrap_or(&std::ptr::null_mut()));
        if !status.is_null() {
            status.write_unaligned(found.err().unwrap_or(0));
        }
    }
    ret(Ok(()))
}

/// # Safety
/// As [`driver_entry_point`].
#[cshell::export]
pub unsafe extern "C" fn cudaGetDriverEntryPointByVersion(
    symbol: *const std::ffi::c_char,
    pfn: *mut *mut std::ffi::c_void,
    version: u32,
    flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { driver_entry_point(symbol, pfn, version, flags, status, false) }
}

/// # Safety
/// As [`driver_entry_point`].
#[cshell::export]
pub unsafe extern "C" fn cudaGetDriverEntryPointByVersion_ptsz(
    symbol: *const std::ffi::c_char,
    pfn: *mut *mut std::ffi::c_void,
    version: u32,
    flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { driver_entry_point(symbol, pfn, version, flags, status, true) }
}

/// The runtime's own version is the one looked for.
///
/// # Safety
/// As [`driver_entry_point`].
#[cshell::export]
pub unsafe extern "C" fn cudaGetDriverEntryPoint(
    symbol: *const std::ffi::c_char,
    pfn: *mut *mut std::ffi::c_void,
    flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { driver_entry_point(symbol, pfn, VERSION as u32, flags, status, false) }
}

/// # Safety
/// As [`driver_entry_point`].
#[cshell::export]
pub unsafe extern "C" fn cudaGetDriverEntryPoint_ptsz(
    symbol: *const std::ffi::c_char,
    pfn: *mut *mut std::ffi::c_void,
    flags: u64,
    status: *mut i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { driver_entry_point(symbol, pfn, VERSION as u32, flags, status, true) }
}
