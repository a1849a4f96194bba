//! Modules, libraries, functions, kernels, module variables and the linker. Images are PTX text,
//! fatbinaries with PTX, or what `cuLinkComplete` returned; see `cuda::module`.

use std::ffi::{c_char, c_void};

use cuda::module::InputType;
use cuda::{Error, Kernel};

use crate::abi::{CUdevice, CUdeviceptr, CUfunction, CUjit_option, CUkernel, CUlibrary, CUlinkState, CUmodule};
use crate::device::static_c_string;
use crate::error::CUresult;
use crate::{check_device, cuda, out, ret, text, with_context};

/// The JIT options of a load or link that lockstep answers: the info and error log buffers (filled, with
/// the sizes written back) and the wall time. Optimization levels, targets, register limits and debug
/// settings are accepted and have no effect (the engines compile every kernel the same way).
#[derive(Clone, Copy, Debug)]
struct JitLogs {
    info: Option<(*mut c_char, *mut *mut c_void)>,
    error: Option<(*mut c_char, *mut *mut c_void)>,
    wall_time: Option<*mut *mut c_void>,
}

impl JitLogs {
    /// # Safety
    /// `options` holds `n` options and `values` `n` value slots (either may be null when `n` is 0).
    unsafe fn read(n: u32, options: *const CUjit_option, values: *mut *mut c_void) -> JitLogs {
        let mut logs = JitLogs { info: None, error: None, wall_time: None };
        if options.is_null() || values.is_null() {
            return logs;
        }
        let (mut info_buf, mut info_size, mut err_buf, mut err_size) = (None, None, None, None);
        for i in 0..n as usize {
            // SAFETY: the caller's promise.
            let (option, slot) = unsafe { (*options.add(i), values.add(i)) };
            // SAFETY: as above.
            let value = unsafe { *slot };
            match option {
                2 => logs.wall_time = Some(slot),
                3 => info_buf = Some(value as *mut c_char),
                4 => info_size = Some(slot),
                5 => err_buf = Some(value as *mut c_char),
                6 => err_size = Some(slot),
                _ => {}
            }
        }
        logs.info = info_buf.zip(info_size);
        logs.error = err_buf.zip(err_size);
        logs
    }

    /// Writes the outcome: `error` into the error log, nothing into the info log, the time taken.
    fn write(&self, error: &str, seconds: f32) {
        let fill = |(buf, size_slot): (*mut c_char, *mut *mut c_void), text: &str| {
            // SAFETY: the program gave the buffer and its size in the slot; the size written back is what
            // the buffer holds, as CUDA reports it.
            unsafe {
                let capacity = *size_slot as usize;
                if buf.is_null() || capacity == 0 {
                    return;
                }
                let n = text.len().min(capacity - 1);
                std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, buf, n);
                *buf.add(n) = 0;
                *size_slot = n as *mut c_void;
            }
        };
        if let Some(info) = self.info {
            fill(info, "");
        }
        if let Some(err) = self.error {
            fill(err, error);
        }
        if let Some(slot) = self.wall_time {
            // SAFETY: the program's slot; CUDA stores the float's bits in it.
            unsafe { *slot = (seconds * 1000.0).to_bits() as usize as *mut c_void };
        }
    }
}

/// Loads an image, filling the option logs.
///
/// # Safety
/// `image` is a valid image (see `cuda::module::image_ptx`); the options as for [`JitLogs::read`].
unsafe fn load(
    image: *const c_void,
    what: &str,
    n: u32,
    options: *const CUjit_option,
    values: *mut *mut c_void,
) -> cuda::Result<u64> {
    let c = with_context()?;
    // SAFETY: the caller's promise.
    let logs = unsafe { JitLogs::read(n, options, values) };
    let start = std::time::Instant::now();
    // SAFETY: the caller's promise.
    let result = unsafe { c.module_load_image(image as *const u8, what) };
    let message = if result.is_err() { cuda::module::take_last_message() } else { String::new() };
    logs.write(&message, start.elapsed().as_secs_f32());
    result
}

/// Reads a module file (PTX, fatbinary or cubin) into a NUL-terminated buffer.
fn read_file(path: &str) -> cuda::Result<Vec<u8>> {
    let mut bytes = std::fs::read(path).map_err(|e| {
        cuda().warn(&format!("read {path}"), &format!("error: cannot read module file {path}: {e}"));
        Error::FILE_NOT_FOUND
    })?;
    bytes.push(0);
    Ok(bytes)
}

/// # Safety
/// `module` is valid for a write; `image` is NUL-terminated PTX, a fatbinary or a cubin.
#[cshell::export]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> CUresult {
    // SAFETY: the caller's promise.
    let result =
        unsafe { load(image, "the image given to cuModuleLoadData", 0, std::ptr::null(), std::ptr::null_mut()) };
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(module, h as CUmodule) }))
}

/// # Safety
/// As [`cuModuleLoadData`], with `n` options and values.
#[cshell::export]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut CUmodule,
    image: *const c_void,
    n: u32,
    options: *const CUjit_option,
    values: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { load(image, "the image given to cuModuleLoadDataEx", n, options, values) };
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(module, h as CUmodule) }))
}

/// # Safety
/// `module` is valid for a write; `fatbin` is a fatbinary (wrapper or container).
#[cshell::export]
pub unsafe extern "C" fn cuModuleLoadFatBinary(module: *mut CUmodule, fatbin: *const c_void) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe {
        load(fatbin, "the fatbinary given to cuModuleLoadFatBinary", 0, std::ptr::null(), std::ptr::null_mut())
    };
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(module, h as CUmodule) }))
}

/// # Safety
/// `module` is valid for a write; `path` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cuModuleLoad(module: *mut CUmodule, path: *const c_char) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { text(path) }.and_then(|path| {
        with_context()?;
        let bytes = read_file(&path)?;
        // SAFETY: a NUL-terminated buffer holding the file.
        unsafe { load(bytes.as_ptr() as *const c_void, &path, 0, std::ptr::null(), std::ptr::null_mut()) }
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(module, h as CUmodule) }))
}

#[cshell::export]
pub extern "C" fn cuModuleUnload(module: CUmodule) -> CUresult {
    ret(with_context().and_then(|c| c.module_unload(module as u64)))
}

/// Modules load eagerly: each kernel is still compiled at its first launch, through the JIT's cache.
///
/// # Safety
/// `mode` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuModuleGetLoadingMode(mode: *mut i32) -> CUresult {
    // SAFETY: the caller's promise. CU_MODULE_EAGER_LOADING.
    ret(cuda().driver_initialized().and_then(|()| unsafe { out(mode, 1) }))
}

/// # Safety
/// `function` is valid for a write; `name` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cuModuleGetFunction(
    function: *mut CUfunction,
    module: CUmodule,
    name: *const c_char,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { text(name) }.and_then(|name| with_context()?.module_function(module as u64, &name));
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(function, h as CUfunction) }))
}

/// # Safety
/// `count` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuModuleGetFunctionCount(count: *mut u32, module: CUmodule) -> CUresult {
    let result = with_context().and_then(|c| c.module_functions(module as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|f| unsafe { out(count, f.len() as u32) }))
}

/// # Safety
/// `functions` has room for `n` handles.
#[cshell::export]
pub unsafe extern "C" fn cuModuleEnumerateFunctions(functions: *mut CUfunction, n: u32, module: CUmodule) -> CUresult {
    let result = with_context().and_then(|c| c.module_functions(module as u64)).and_then(|f| {
        if functions.is_null() {
            return Err(Error::INVALID_VALUE);
        }
        for (i, h) in f.iter().take(n as usize).enumerate() {
            // SAFETY: the caller's promise: room for `n`.
            unsafe { functions.add(i).write_unaligned(*h as CUfunction) };
        }
        Ok(())
    });
    ret(result)
}

/// # Safety
/// `ptr` and `size` are null or valid for writes; `name` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(
    ptr: *mut CUdeviceptr,
    size: *mut usize,
    module: CUmodule,
    name: *const c_char,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { text(name) }.and_then(|name| with_context()?.module_global(module as u64, &name));
    ret(result.map(|(p, s)| {
        // SAFETY: the caller's promise; either output may be null.
        unsafe {
            if !ptr.is_null() {
                ptr.write_unaligned(p);
            }
            if !size.is_null() {
                size.write_unaligned(s as usize);
            }
        }
    }))
}

// ---- libraries and kernels: a library is its module, a kernel its function ----------------------------

/// # Safety
/// `library` is valid for a write; `code` is an image; the option arrays hold their counts.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLibraryLoadData(
    library: *mut CUlibrary,
    code: *const c_void,
    jit_options: *const CUjit_option,
    jit_values: *mut *mut c_void,
    n_jit: u32,
    _library_options: *const i32,
    _library_values: *mut *mut c_void,
    _n_library: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { load(code, "the image given to cuLibraryLoadData", n_jit, jit_options, jit_values) };
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(library, h as CUlibrary) }))
}

/// # Safety
/// `library` is valid for a write; `path` is NUL-terminated; the option arrays hold their counts.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLibraryLoadFromFile(
    library: *mut CUlibrary,
    path: *const c_char,
    jit_options: *const CUjit_option,
    jit_values: *mut *mut c_void,
    n_jit: u32,
    _library_options: *const i32,
    _library_values: *mut *mut c_void,
    _n_library: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { text(path) }.and_then(|path| {
        with_context()?;
        let bytes = read_file(&path)?;
        // SAFETY: a NUL-terminated buffer holding the file; the options are the caller's.
        unsafe { load(bytes.as_ptr() as *const c_void, &path, n_jit, jit_options, jit_values) }
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(library, h as CUlibrary) }))
}

#[cshell::export]
pub extern "C" fn cuLibraryUnload(library: CUlibrary) -> CUresult {
    cuModuleUnload(library)
}

/// # Safety
/// `kernel` is valid for a write; `name` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cuLibraryGetKernel(
    kernel: *mut CUkernel,
    library: CUlibrary,
    name: *const c_char,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuModuleGetFunction(kernel, library, name) }
}

/// # Safety
/// `module` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuLibraryGetModule(module: *mut CUmodule, library: CUlibrary) -> CUresult {
    let result = with_context().and_then(|c| c.module_name(library as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|_| unsafe { out(module, library) }))
}

/// # Safety
/// `count` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuLibraryGetKernelCount(count: *mut u32, library: CUlibrary) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuModuleGetFunctionCount(count, library) }
}

/// # Safety
/// `kernels` has room for `n` handles.
#[cshell::export]
pub unsafe extern "C" fn cuLibraryEnumerateKernels(kernels: *mut CUkernel, n: u32, library: CUlibrary) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuModuleEnumerateFunctions(kernels, n, library) }
}

/// # Safety
/// As [`cuModuleGetGlobal_v2`].
#[cshell::export]
pub unsafe extern "C" fn cuLibraryGetGlobal(
    ptr: *mut CUdeviceptr,
    size: *mut usize,
    library: CUlibrary,
    name: *const c_char,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuModuleGetGlobal_v2(ptr, size, library, name) }
}

/// Module variables live in memory the host shares: a `__managed__` variable is one.
///
/// # Safety
/// As [`cuModuleGetGlobal_v2`].
#[cshell::export]
pub unsafe extern "C" fn cuLibraryGetManaged(
    ptr: *mut CUdeviceptr,
    size: *mut usize,
    library: CUlibrary,
    name: *const c_char,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuModuleGetGlobal_v2(ptr, size, library, name) }
}

/// # Safety
/// `function` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuKernelGetFunction(function: *mut CUfunction, kernel: CUkernel) -> CUresult {
    let result = with_context().and_then(|c| c.function_module(kernel as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|_| unsafe { out(function, kernel) }))
}

/// # Safety
/// `library` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuKernelGetLibrary(library: *mut CUlibrary, kernel: CUkernel) -> CUresult {
    let result = with_context().and_then(|c| c.function_module(kernel as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|(m, _)| unsafe { out(library, m as CUlibrary) }))
}

/// # Safety
/// `module` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuFuncGetModule(module: *mut CUmodule, function: CUfunction) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuKernelGetLibrary(module, function) }
}

/// # Safety
/// `name` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cuFuncGetName(name: *mut *const c_char, function: CUfunction) -> CUresult {
    let result = with_context().and_then(|c| c.function_module(function as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|(_, n)| unsafe { out(name, static_c_string(&n)) }))
}

/// # Safety
/// As [`cuFuncGetName`].
#[cshell::export]
pub unsafe extern "C" fn cuKernelGetName(name: *mut *const c_char, kernel: CUkernel) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuFuncGetName(name, kernel) }
}

/// # Safety
/// `offset` and `size` are null or valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuFuncGetParamInfo(
    function: CUfunction,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> CUresult {
    let result = with_context().and_then(|c| c.kernel_params(Kernel::Function(function as u64))).and_then(|params| {
        let &(o, s) = params.get(index).ok_or(Error::INVALID_VALUE)?;
        // SAFETY: the caller's promise; either output may be null.
        unsafe {
            if !offset.is_null() {
                offset.write_unaligned(o as usize);
            }
            if !size.is_null() {
                size.write_unaligned(s as usize);
            }
        }
        Ok(())
    });
    ret(result)
}

/// # Safety
/// `count` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuFuncGetParamCount(function: CUfunction, count: *mut usize) -> CUresult {
    let result = with_context().and_then(|c| c.kernel_params(Kernel::Function(function as u64)));
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(count, p.len()) }))
}

/// # Safety
/// As [`cuFuncGetParamCount`].
#[cshell::export]
pub unsafe extern "C" fn cuKernelGetParamCount(kernel: CUkernel, count: *mut usize) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuFuncGetParamCount(kernel, count) }
}

/// # Safety
/// As [`cuFuncGetParamInfo`].
#[cshell::export]
pub unsafe extern "C" fn cuKernelGetParamInfo(
    kernel: CUkernel,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuFuncGetParamInfo(kernel, index, offset, size) }
}

/// # Safety
/// `value` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuFuncGetAttribute(value: *mut i32, attribute: i32, function: CUfunction) -> CUresult {
    let result = with_context().and_then(|c| c.kernel_attributes(Kernel::Function(function as u64))).and_then(|a| {
        let clamp = |v: u64| v.min(i32::MAX as u64) as i32;
        let v = match attribute {
            0 => a.max_threads_per_block,
            1 => clamp(a.shared_size_bytes),
            2 => clamp(a.const_size_bytes),
            3 => clamp(a.local_size_bytes),
            4 => a.num_regs,
            5 => a.ptx_version,
            6 => a.binary_version,
            7 => 0,
            8 => a.max_dynamic_shared_size_bytes,
            9 => a.preferred_shmem_carveout,
            // Clusters: none required, portable sizes only.
            10..=14 => 0,
            15 => 0,
            _ => return Err(Error::INVALID_VALUE),
        };
        // SAFETY: the caller's promise.
        unsafe { out(value, v) }
    });
    ret(result)
}

/// # Safety
/// As [`cuFuncGetAttribute`].
#[cshell::export]
pub unsafe extern "C" fn cuKernelGetAttribute(
    value: *mut i32,
    attribute: i32,
    kernel: CUkernel,
    device: CUdevice,
) -> CUresult {
    if let Err(e) = check_device(device) {
        return ret(Err(e));
    }
    // SAFETY: the caller's promise.
    unsafe { cuFuncGetAttribute(value, attribute, kernel) }
}

/// The attributes share the runtime's numbering (`cudaFuncSetAttribute`).
#[cshell::export]
pub extern "C" fn cuFuncSetAttribute(function: CUfunction, attribute: i32, value: i32) -> CUresult {
    ret(with_context().and_then(|c| c.kernel_set_attribute(Kernel::Function(function as u64), attribute, value)))
}

#[cshell::export]
pub extern "C" fn cuKernelSetAttribute(attribute: i32, value: i32, kernel: CUkernel, device: CUdevice) -> CUresult {
    if let Err(e) = check_device(device) {
        return ret(Err(e));
    }
    cuFuncSetAttribute(kernel, attribute, value)
}

/// A cache preference is a hint.
#[cshell::export]
pub extern "C" fn cuFuncSetCacheConfig(function: CUfunction, _config: i32) -> CUresult {
    ret(with_context().and_then(|c| c.function_module(function as u64)).map(|_| ()))
}

#[cshell::export]
pub extern "C" fn cuKernelSetCacheConfig(kernel: CUkernel, config: i32, device: CUdevice) -> CUresult {
    if let Err(e) = check_device(device) {
        return ret(Err(e));
    }
    cuFuncSetCacheConfig(kernel, config)
}

/// Every function is loaded with its module.
///
/// # Safety
/// `state` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuFuncIsLoaded(state: *mut i32, function: CUfunction) -> CUresult {
    let result = with_context().and_then(|c| c.function_module(function as u64));
    // SAFETY: the caller's promise. CU_FUNCTION_LOADING_STATE_LOADED.
    ret(result.and_then(|_| unsafe { out(state, 1) }))
}

#[cshell::export]
pub extern "C" fn cuFuncLoad(function: CUfunction) -> CUresult {
    ret(with_context().and_then(|c| c.function_module(function as u64)).map(|_| ()))
}

// ---- the linker ----------------------------------------------------------------------------------------

/// Link states and the logs their options named.
fn link_logs() -> std::sync::MutexGuard<'static, std::collections::HashMap<u64, JitLogsCell>> {
    static LOGS: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<u64, JitLogsCell>>> =
        std::sync::OnceLock::new();
    LOGS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// [`JitLogs`] kept between calls (the program's buffers stay valid until `cuLinkDestroy`).
#[derive(Clone, Copy, Debug)]
struct JitLogsCell(JitLogs);

// SAFETY: the pointers are the program's buffers, written only by the thread that calls the linker with
// the state, as CUDA requires of a link state's user.
unsafe impl Send for JitLogsCell {}

/// # Safety
/// `state` is valid for a write; the option arrays hold `n` entries.
#[cshell::export]
pub unsafe extern "C" fn cuLinkCreate_v2(
    n: u32,
    options: *const CUjit_option,
    values: *mut *mut c_void,
    state: *mut CUlinkState,
) -> CUresult {
    let result = with_context().map(|c| c.link_create());
    if let Ok(h) = result {
        // SAFETY: the caller's promise.
        let logs = unsafe { JitLogs::read(n, options, values) };
        link_logs().insert(h, JitLogsCell(logs));
    }
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(state, h as CUlinkState) }))
}

/// # Safety
/// `data` holds `size` bytes (PTX may be NUL-terminated); `name` is null or NUL-terminated.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLinkAddData_v2(
    state: CUlinkState,
    kind: i32,
    data: *mut c_void,
    size: usize,
    name: *const c_char,
    _n: u32,
    _options: *const CUjit_option,
    _values: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    let name = if name.is_null() { String::new() } else { unsafe { text(name) }.unwrap_or_default() };
    let result = with_context().and_then(|c| {
        let kind = InputType::from_raw(kind).ok_or(Error::INVALID_VALUE)?;
        // SAFETY: the caller's promise.
        unsafe { c.link_add(state as u64, kind, data as *const u8, size, &name) }
    });
    link_failed(state, &result);
    ret(result)
}

/// # Safety
/// `path` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn cuLinkAddFile_v2(
    state: CUlinkState,
    kind: i32,
    path: *const c_char,
    _n: u32,
    _options: *const CUjit_option,
    _values: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    let result = unsafe { text(path) }.and_then(|path| {
        let c = with_context()?;
        let kind = InputType::from_raw(kind).ok_or(Error::INVALID_VALUE)?;
        let bytes = read_file(&path)?;
        let size = if kind == InputType::Ptx { bytes.len() - 1 } else { bytes.len() };
        // SAFETY: `bytes` holds the file and a NUL.
        unsafe { c.link_add(state as u64, kind, bytes.as_ptr(), size, &path) }
    });
    link_failed(state, &result);
    ret(result)
}

/// Fills the link state's error log after a failed step.
fn link_failed<T>(state: CUlinkState, result: &cuda::Result<T>) {
    if result.is_err() {
        let message = cuda::module::take_last_message();
        if let Some(logs) = link_logs().get(&(state as u64)) {
            logs.0.write(&message, 0.0);
        }
    }
}

/// # Safety
/// `image` and `size` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuLinkComplete(state: CUlinkState, image: *mut *mut c_void, size: *mut usize) -> CUresult {
    let start = std::time::Instant::now();
    let result = with_context().and_then(|c| c.link_complete(state as u64));
    link_failed(state, &result);
    if result.is_ok() {
        if let Some(logs) = link_logs().get(&(state as u64)) {
            logs.0.write("", start.elapsed().as_secs_f32());
        }
    }
    // SAFETY: the caller's promise.
    ret(result.and_then(|(p, s)| unsafe {
        out(image, p as *mut c_void)?;
        out(size, s as usize)
    }))
}

#[cshell::export]
pub extern "C" fn cuLinkDestroy(state: CUlinkState) -> CUresult {
    link_logs().remove(&(state as u64));
    ret(cuda().link_destroy(state as u64))
}

alias! {
    cuLinkCreate => cuLinkCreate_v2(n: u32, options: *const CUjit_option, values: *mut *mut c_void, state: *mut CUlinkState);
    cuLinkAddData => cuLinkAddData_v2(state: CUlinkState, kind: i32, data: *mut c_void, size: usize, name: *const c_char, _n: u32, _options: *const CUjit_option, _values: *mut *mut c_void);
    cuLinkAddFile => cuLinkAddFile_v2(state: CUlinkState, kind: i32, path: *const c_char, _n: u32, _options: *const CUjit_option, _values: *mut *mut c_void);
}
