//! Initialization, versions, the device and its attributes, error names and strings.

use std::ffi::c_char;

use cuda::Error;

use crate::abi::{CUdevice, CUdevprop};
use crate::error::{self, CUresult, CUDA_ERROR_INVALID_VALUE, CUDA_SUCCESS};
use crate::{check_device, cuda, out, ret, text};

/// The CUDA version the driver reports (`cuDriverGetVersion`): 13.5, the headers it follows.
pub const DRIVER_VERSION: i32 = 13050;

/// The device's UUID (the same as the runtime reports).
const UUID: [u8; 16] = *b"lockstep-cpu-dev";

#[cshell::export]
pub extern "C" fn cuInit(flags: u32) -> CUresult {
    ret(cuda().driver_init(flags))
}

/// Runs when the library is loaded: see [`preload_nvjitlink`].
#[used]
#[link_section = ".init_array"]
static PRELOAD_NVJITLINK: extern "C" fn() = {
    extern "C" fn preload() {
        preload_nvjitlink();
    }
    preload
};

/// Loads lockstep's `libnvJitLink.so.13` from this library's folder, if it is there and no nvJitLink is
/// loaded yet. Numba and `cuda.core` look for nvJitLink after loading the driver, and use one that is
/// already loaded before searching their own wheels: so they find lockstep's, whose output (linked PTX)
/// this driver loads, instead of NVIDIA's, whose output (GPU machine code) no CPU runs.
fn preload_nvjitlink() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        // SAFETY: dlopen with RTLD_NOLOAD only queries; the name is NUL-terminated.
        let loaded = unsafe { libc::dlopen(c"libnvJitLink.so.13".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if !loaded.is_null() {
            return;
        }
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `dladdr` fills `info` for an address of this library's code.
        if unsafe { libc::dladdr(preload_nvjitlink as *const std::ffi::c_void, &mut info) } == 0
            || info.dli_fname.is_null()
        {
            return;
        }
        // SAFETY: the loader's NUL-terminated file name.
        let ours =
            std::path::PathBuf::from(unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy().as_ref());
        let Some(path) = ours.parent().map(|d| d.join("libnvJitLink.so.13")).filter(|p| p.exists()) else { return };
        let Ok(path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return };
        // SAFETY: a NUL-terminated path; the library stays loaded for the life of the process.
        unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    });
}

/// # Safety
/// `version` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut i32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { out(version, DRIVER_VERSION) })
}

/// # Safety
/// `device` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: i32) -> CUresult {
    let c = cuda();
    // SAFETY: the caller's promise.
    ret(c.driver_initialized().and_then(|()| check_device(ordinal)).and_then(|()| unsafe { out(device, 0) }))
}

/// # Safety
/// `count` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut i32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().driver_initialized().and_then(|()| unsafe { out(count, 1) }))
}

/// # Safety
/// `name` has room for `len` bytes.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: i32, device: CUdevice) -> CUresult {
    let c = cuda();
    let result = c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| {
        if name.is_null() || len <= 0 {
            return Err(Error::INVALID_VALUE);
        }
        let bytes = c.properties().name.as_bytes();
        let n = bytes.len().min(len as usize - 1);
        // SAFETY: the caller's promise: `len` bytes of room; n + 1 <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, name, n);
            *name.add(n) = 0;
        }
        Ok(())
    });
    ret(result)
}

/// # Safety
/// `uuid` is valid for a write of 16 bytes.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], device: CUdevice) -> CUresult {
    let c = cuda();
    // SAFETY: the caller's promise.
    ret(c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| unsafe { out(uuid, UUID) }))
}

alias! {
    cuDeviceGetUuid_v2 => cuDeviceGetUuid(uuid: *mut [u8; 16], device: CUdevice);
}

/// # Safety
/// `bytes` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CUdevice) -> CUresult {
    let c = cuda();
    let total = c.properties().total_global_mem as usize;
    // SAFETY: the caller's promise.
    ret(c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| unsafe { out(bytes, total) }))
}

/// The 32-bit form of CUDA 2.0.
///
/// # Safety
/// `bytes` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceTotalMem(bytes: *mut u32, device: CUdevice) -> CUresult {
    let c = cuda();
    let total = c.properties().total_global_mem.min(u64::from(u32::MAX)) as u32;
    // SAFETY: the caller's promise.
    ret(c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| unsafe { out(bytes, total) }))
}

/// The device attributes share the runtime's numbering (`cudaDeviceGetAttribute`).
///
/// # Safety
/// `value` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetAttribute(value: *mut i32, attribute: i32, device: CUdevice) -> CUresult {
    let c = cuda();
    let result = c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| {
        let v = c.properties().attribute(attribute).ok_or(Error::INVALID_VALUE)?;
        // SAFETY: the caller's promise.
        unsafe { out(value, v) }
    });
    ret(result)
}

/// # Safety
/// `major` and `minor` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceComputeCapability(major: *mut i32, minor: *mut i32, device: CUdevice) -> CUresult {
    let c = cuda();
    let (ma, mi) = cuda::properties::COMPUTE_CAPABILITY;
    // SAFETY: the caller's promise.
    ret(c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| unsafe {
        out(major, ma)?;
        out(minor, mi)
    }))
}

/// # Safety
/// `prop` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetProperties(prop: *mut CUdevprop, device: CUdevice) -> CUresult {
    let c = cuda();
    let result = c.driver_initialized().and_then(|()| check_device(device)).and_then(|()| {
        let a = |id| c.properties().attribute(id).unwrap_or(0);
        let p = CUdevprop {
            maxThreadsPerBlock: a(1),
            maxThreadsDim: [a(2), a(3), a(4)],
            maxGridSize: [a(5), a(6), a(7)],
            sharedMemPerBlock: a(8),
            totalConstantMemory: a(9),
            SIMDWidth: a(10),
            memPitch: a(11),
            regsPerBlock: a(12),
            clockRate: a(13),
            textureAlign: a(14),
        };
        // SAFETY: the caller's promise.
        unsafe { out(prop, p) }
    });
    ret(result)
}

/// # Safety
/// `bus_id` has room for `len` bytes.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(bus_id: *mut c_char, len: i32, device: CUdevice) -> CUresult {
    let result = check_device(device).and_then(|()| {
        let id = format!("{}\0", cuda::properties::PCI_BUS_ID).into_bytes();
        if bus_id.is_null() || len < id.len() as i32 {
            return Err(Error::INVALID_VALUE);
        }
        // SAFETY: the caller's promise, with room checked.
        unsafe { std::ptr::copy_nonoverlapping(id.as_ptr() as *const c_char, bus_id, id.len()) };
        Ok(())
    });
    ret(result)
}

/// # Safety
/// `device` is valid for a write; `bus_id` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetByPCIBusId(device: *mut CUdevice, bus_id: *const c_char) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { text(bus_id) }.and_then(|id| {
        if !cuda::properties::is_pci_bus_id(&id) {
            return Err(Error::INVALID_DEVICE);
        }
        // SAFETY: the caller's promise.
        unsafe { out(device, 0) }
    });
    ret(result)
}

/// There is one device, so no peer.
///
/// # Safety
/// `can` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(can: *mut i32, device: CUdevice, peer: CUdevice) -> CUresult {
    // SAFETY: the caller's promise.
    ret(check_device(device).and(check_device(peer)).and_then(|()| unsafe { out(can, 0) }))
}

/// # Safety
/// `name` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cuGetErrorName(code: CUresult, name: *mut *const c_char) -> CUresult {
    string_of(code, name, |c| error::name(c).map(static_c_string))
}

/// # Safety
/// `string` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cuGetErrorString(code: CUresult, string: *mut *const c_char) -> CUresult {
    string_of(code, string, |c| error::description(c).map(static_c_string))
}

fn string_of(code: CUresult, dst: *mut *const c_char, f: impl Fn(CUresult) -> Option<*const c_char>) -> CUresult {
    if dst.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let found = f(code);
    // SAFETY: non-null; the caller's promise.
    unsafe { dst.write_unaligned(found.unwrap_or(std::ptr::null())) };
    if found.is_some() {
        CUDA_SUCCESS
    } else {
        CUDA_ERROR_INVALID_VALUE
    }
}

/// A NUL-terminated copy of a static string, made once and kept for the life of the process.
pub(crate) fn static_c_string(s: &str) -> *const c_char {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static STRINGS: Mutex<Option<HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);
    let mut table = STRINGS.lock().unwrap_or_else(|e| e.into_inner());
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(c) = table.get(s) {
        return c.as_ptr();
    }
    let owned = std::ffi::CString::new(s.replace('\0', " ")).unwrap_or_default();
    let leaked: &'static std::ffi::CStr = Box::leak(owned.into_boxed_c_str());
    table.insert(s.to_string(), leaked);
    leaked.as_ptr()
}

#[cshell::export]
pub extern "C" fn cuProfilerStart() -> CUresult {
    CUDA_SUCCESS
}

#[cshell::export]
pub extern "C" fn cuProfilerStop() -> CUresult {
    CUDA_SUCCESS
}

/// # Safety
/// `table` and `id` are readable/writable pointers (unused: lockstep has no private export tables).
#[cshell::export]
pub unsafe extern "C" fn cuGetExportTable(_table: *mut *const std::ffi::c_void, _id: *const [u8; 16]) -> CUresult {
    // NVIDIA's runtime reads private tables through this; lockstep's runtime does not, and nothing else may.
    crate::error::CUDA_ERROR_NOT_SUPPORTED
}
