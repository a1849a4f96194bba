//! `cuGetProcAddress`: the driver's own symbol lookup, through which `cuda-bindings`, libcu++ and
//! NVIDIA's runtime find every other function. A name and a CUDA version select the ABI symbol NVIDIA's
//! driver would give (`symbols::resolve`, from CUDA 13.5's `cudaTypedefs.h`), which is then looked up among
//! this library's exports, so the caller gets lockstep's function (or its warning stub) of the right
//! signature.

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use crate::error::{CUresult, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_FOUND, CUDA_SUCCESS};
use crate::symbols;

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
const PER_THREAD_DEFAULT_STREAM: u64 = 1 << 1;

/// `CUdriverProcAddressQueryResult`.
const SYMBOL_SUCCESS: i32 = 0;
const SYMBOL_NOT_FOUND: i32 = 1;
const VERSION_NOT_SUFFICIENT: i32 = 2;

/// The `dlopen` handle of the object holding this code (lockstep's CUDA library), or of the program
/// when it is linked in statically.
fn own_handle() -> usize {
    static HANDLE: OnceLock<usize> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `dladdr` fills `info` for an address of this object's code.
        let found = unsafe { libc::dladdr(own_handle as *const c_void, &mut info) } != 0;
        // SAFETY: the file name the loader gave, NUL-terminated; RTLD_NOLOAD only finds what is loaded.
        let handle = unsafe {
            if found && !info.dli_fname.is_null() {
                libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD)
            } else {
                std::ptr::null_mut()
            }
        };
        if handle.is_null() {
            // SAFETY: a null name is the program itself.
            unsafe { libc::dlopen(std::ptr::null(), libc::RTLD_NOW) as usize }
        } else {
            handle as usize
        }
    })
}

/// The address of exported function `symbol`, if this library has it.
fn address_of(symbol: &str) -> Option<*mut c_void> {
    let name = std::ffi::CString::new(symbol).ok()?;
    // SAFETY: a handle from dlopen and a NUL-terminated name.
    let p = unsafe { libc::dlsym(own_handle() as *mut c_void, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Resolves `name` for `version`: the function, or the query result that says why not (the values of
/// `CUdriverProcAddressQueryResult`, which `cudaDriverEntryPointQueryResult` shares).
pub fn resolve(name: &str, version: i32, flags: u64) -> Result<*mut c_void, i32> {
    let per_thread = flags & PER_THREAD_DEFAULT_STREAM != 0;
    if !symbols::known(name) {
        // Names outside cuda.h that NVIDIA's driver also answers (`cuProfilerStart`, ...) resolve to
        // themselves when this library exports them.
        return address_of(name).ok_or(SYMBOL_NOT_FOUND);
    }
    let version = u32::try_from(version).unwrap_or(0);
    let symbol = symbols::resolve(name, version, per_thread).ok_or(VERSION_NOT_SUFFICIENT)?;
    address_of(symbol).ok_or(SYMBOL_NOT_FOUND)
}

/// # Safety
/// `symbol` is NUL-terminated; `pfn` is valid for a write; `status` is null or valid for a write.
/// `version_2`: CUDA 12's form (`cuGetProcAddress_v2`).
unsafe fn get_proc_address(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: i32,
    flags: u64,
    status: *mut i32,
    version_2: bool,
) -> CUresult {
    if symbol.is_null() || pfn.is_null() || flags > 0b11 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller's promise.
    let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
    let found = resolve(&name, version, flags);
    // SAFETY: the caller's promise.
    unsafe {
        pfn.write_unaligned(*found.as_ref().unwrap_or(&std::ptr::null_mut()));
        if !status.is_null() {
            status.write_unaligned(match found {
                Ok(_) => SYMBOL_SUCCESS,
                Err(s) => s,
            });
        }
    }
    // CUDA 12's form succeeds and puts the reason in `status` (a null `pfn` and CUDA_SUCCESS, also with a
    // null `status`: observed with CUDA 13 on an H100); CUDA 11.3's form, which has no status, fails.
    if found.is_ok() || version_2 {
        CUDA_SUCCESS
    } else {
        CUDA_ERROR_NOT_FOUND
    }
}

/// CUDA 11.3's form.
///
/// # Safety
/// As [`get_proc_address`].
#[cshell::export]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: i32,
    flags: u64,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { get_proc_address(symbol, pfn, version, flags, std::ptr::null_mut(), false) }
}

/// CUDA 12's form, which also says why a symbol was not found.
///
/// # Safety
/// As [`get_proc_address`].
#[cshell::export]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: i32,
    flags: u64,
    status: *mut i32,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { get_proc_address(symbol, pfn, version, flags, status, true) }
}
