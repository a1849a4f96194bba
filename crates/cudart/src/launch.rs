//! Registration (`__cudaRegister*`, called before `main` by nvcc's generated code), the launch paths of
//! CUDA 10-12 (`cudaLaunchKernel`) and 13 (`__cudaGetKernel` + `__cudaLaunchKernel`), `cudaLaunchKernelExC`
//! (Thrust, CUB), function attributes and occupancy.

use std::ffi::{c_char, c_void, CStr};

use cuda::{CallConfig, Error};

use crate::abi::{cudaError_t, cudaFuncAttributes, cudaLaunchConfig_t, cudaStream_t, dim3};
use crate::{cuda, out, per_thread, ret};

/// A C string from the program, lossily.
///
/// # Safety
/// `s` is null or NUL-terminated.
unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        return String::new();
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

#[cshell::export]
pub extern "C" fn __cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void {
    cuda().register_fatbin(fat_cubin as u64) as *mut *mut c_void
}

#[cshell::export]
pub extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[cshell::export]
pub extern "C" fn __cudaUnregisterFatBinary(handle: *mut *mut c_void) {
    cuda().unregister_fatbin(handle as u64);
}

/// # Safety
/// `device_name` is a NUL-terminated string (nvcc passes the kernel's mangled name).
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: i32,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut c_void,
    _grid_dim: *mut c_void,
    _warp_size: *mut i32,
) {
    // SAFETY: the caller's promise.
    let name = unsafe { text(device_name) };
    cuda().register_function(handle as u64, host_fun as u64, &name);
}

/// # Safety
/// `device_name` is a NUL-terminated string.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: i32,
    _size: usize,
    _constant: i32,
    _global: i32,
) {
    // SAFETY: the caller's promise.
    let name = unsafe { text(device_name) };
    cuda().register_var(handle as u64, host_var as u64, &name);
}

/// # Safety
/// `device_name` is a NUL-terminated string; `host_var_ptr` is the program's pointer variable for the
/// managed variable, which loading the module writes.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterManagedVar(
    handle: *mut *mut c_void,
    host_var_ptr: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: i32,
    _size: usize,
    _constant: i32,
    _global: i32,
) {
    // SAFETY: the caller's promise.
    let name = unsafe { text(device_name) };
    cuda().register_managed_var(handle as u64, host_var_ptr as u64, &name);
}

/// Loads the module so that managed variables have their addresses; returns 1 on success.
#[cshell::export]
pub extern "C" fn __cudaInitModule(handle: *mut *mut c_void) -> c_char {
    c_char::from(cuda().init_module(handle as u64).is_ok())
}

/// Texture and surface references were removed in CUDA 12; registering one is harmless, using one is not
/// possible.
#[cshell::export]
pub extern "C" fn __cudaRegisterTexture() {}

#[cshell::export]
pub extern "C" fn __cudaRegisterSurface() {}

#[cshell::export]
pub extern "C" fn __cudaRegisterHostVar() {}

#[cshell::export]
pub extern "C" fn __cudaRegisterUnifiedTable() {}

#[cshell::export]
pub extern "C" fn __cudaPushCallConfiguration(grid: dim3, block: dim3, shared: usize, stream: cudaStream_t) -> u32 {
    cuda::push_call_configuration(CallConfig {
        grid: grid.into(),
        block: block.into(),
        shared: shared as u64,
        stream: stream as u64,
        cooperative: false,
    });
    0
}

/// # Safety
/// The pointers are valid for writes of their types (nvcc's launch stub passes locals).
#[cshell::export]
pub unsafe extern "C" fn __cudaPopCallConfiguration(
    grid: *mut dim3,
    block: *mut dim3,
    shared: *mut usize,
    stream: *mut cudaStream_t,
) -> cudaError_t {
    let Some(c) = cuda::pop_call_configuration() else { return ret(Err(Error::MISSING_CONFIGURATION)) };
    let d = |v: device::Dim3| dim3 { x: v.x, y: v.y, z: v.z };
    // SAFETY: the caller's promise.
    ret(unsafe {
        out(grid, d(c.grid))
            .and(out(block, d(c.block)))
            .and(out(shared, c.shared as usize))
            .and(out(stream, c.stream as cudaStream_t))
    })
}

/// The CUDA 13 launch stubs' handle for a kernel is its host stub.
///
/// # Safety
/// `kernel` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn __cudaGetKernel(kernel: *mut *const c_void, host_fun: *const c_void) -> cudaError_t {
    if !cuda().is_kernel(host_fun as u64) {
        return ret(Err(Error::INVALID_DEVICE_FUNCTION));
    }
    // SAFETY: the caller's promise.
    ret(unsafe { out(kernel, host_fun) })
}

/// # Safety
/// As [`cudaGetKernel`].
#[cshell::export]
pub unsafe extern "C" fn cudaGetKernel(kernel: *mut *const c_void, host_fun: *const c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { __cudaGetKernel(kernel, host_fun) }
}

/// # Safety
/// `args` holds one pointer per kernel parameter, each to the parameter's bytes.
unsafe fn launch(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch_with(func, grid, block, args, shared, stream, false) }
}

/// # Safety
/// As [`launch`].
unsafe fn launch_with(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: cudaStream_t,
    cooperative: bool,
) -> cudaError_t {
    let config = CallConfig {
        grid: grid.into(),
        block: block.into(),
        shared: shared as u64,
        stream: stream as u64,
        cooperative,
    };
    // SAFETY: the caller's promise.
    ret(unsafe { cuda().launch(func as u64, config, args as *const *const c_void) })
}

/// # Safety
/// As [`launch`].
unsafe fn launch_cooperative(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch_with(func, grid, block, args, shared, stream, true) }
}

/// # Safety
/// As [`launch`].
#[cshell::export]
pub unsafe extern "C" fn __cudaLaunchKernel(
    kernel: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch(kernel, grid, block, args, shared, stream) }
}

unsafe_ptsz!(
    __cudaLaunchKernel_ptsz => launch(
        kernel: *const c_void,
        grid: dim3,
        block: dim3,
        args: *mut *mut c_void,
        shared: usize,
        stream: cudaStream_t,
    )
);

/// # Safety
/// As [`launch`].
#[cshell::export]
pub unsafe extern "C" fn cudaLaunchKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch(func, grid, block, args, shared, stream) }
}

unsafe_ptsz!(
    cudaLaunchKernel_ptsz => launch(
        func: *const c_void,
        grid: dim3,
        block: dim3,
        args: *mut *mut c_void,
        shared: usize,
        stream: cudaStream_t,
    )
);

/// Every CTA of the grid is resident at once, so that `this_grid().sync()` works; a grid larger than
/// occupancy times multiprocessors fails with `cudaErrorCooperativeLaunchTooLarge` (`Cuda::launch_kernel`).
///
/// # Safety
/// As [`launch`].
#[cshell::export]
pub unsafe extern "C" fn cudaLaunchCooperativeKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch_cooperative(func, grid, block, args, shared, stream) }
}

unsafe_ptsz!(
    cudaLaunchCooperativeKernel_ptsz => launch_cooperative(
        func: *const c_void,
        grid: dim3,
        block: dim3,
        args: *mut *mut c_void,
        shared: usize,
        stream: cudaStream_t,
    )
);

/// Launch attributes (programmatic dependent launch, priorities) are accepted and have no effect: kernels
/// run one after another, whole. A cluster of more than one CTA is refused (`Cuda::check_cluster`);
/// `cudaLaunchAttributeCooperative` makes a cooperative launch.
///
/// # Safety
/// `config` points at a valid configuration; `args` as for [`launch`].
unsafe fn launch_ex(
    config: *const cudaLaunchConfig_t,
    func: *const c_void,
    args: *mut *mut c_void,
    ptsz: bool,
) -> cudaError_t {
    if config.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: non-null, and the caller's promise.
    let c = unsafe { config.read_unaligned() };
    let mut cooperative = false;
    if !c.attrs.is_null() {
        for i in 0..c.numAttrs as usize {
            // SAFETY: the caller's promise: `numAttrs` attributes.
            let a = unsafe { c.attrs.add(i).read_unaligned() };
            // cudaLaunchAttributeClusterDimension: three unsigned ints.
            if a.id == 4 {
                let dims = [a.val[0] as u32, (a.val[0] >> 32) as u32, a.val[1] as u32];
                if let Err(e) = cuda().check_cluster(dims) {
                    return ret(Err(e));
                }
            }
            // cudaLaunchAttributeCooperative: an int.
            if a.id == 2 {
                cooperative = a.val[0] as u32 != 0;
            }
        }
    }
    let stream = if ptsz { per_thread(c.stream) as cudaStream_t } else { c.stream };
    // SAFETY: the caller's promise.
    unsafe { launch_with(func, c.gridDim, c.blockDim, args, c.dynamicSmemBytes, stream, cooperative) }
}

/// # Safety
/// As [`launch_ex`].
#[cshell::export]
pub unsafe extern "C" fn cudaLaunchKernelExC(
    config: *const cudaLaunchConfig_t,
    func: *const c_void,
    args: *mut *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch_ex(config, func, args, false) }
}

/// # Safety
/// As [`launch_ex`].
#[cshell::export]
pub unsafe extern "C" fn cudaLaunchKernelExC_ptsz(
    config: *const cudaLaunchConfig_t,
    func: *const c_void,
    args: *mut *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { launch_ex(config, func, args, true) }
}

/// # Safety
/// `attr` is valid for a write of `cudaFuncAttributes`.
#[cshell::export]
pub unsafe extern "C" fn cudaFuncGetAttributes(attr: *mut cudaFuncAttributes, func: *const c_void) -> cudaError_t {
    let result = cuda().func_attributes(func as u64).and_then(|a| {
        let c = cudaFuncAttributes {
            sharedSizeBytes: a.shared_size_bytes as usize,
            constSizeBytes: a.const_size_bytes as usize,
            localSizeBytes: a.local_size_bytes as usize,
            maxThreadsPerBlock: a.max_threads_per_block,
            numRegs: a.num_regs,
            ptxVersion: a.ptx_version,
            binaryVersion: a.binary_version,
            maxDynamicSharedSizeBytes: a.max_dynamic_shared_size_bytes,
            preferredShmemCarveout: a.preferred_shmem_carveout,
            ..cudaFuncAttributes::default()
        };
        // SAFETY: the caller's promise.
        unsafe { out(attr, c) }
    });
    ret(result)
}

#[cshell::export]
pub extern "C" fn cudaFuncSetAttribute(func: *const c_void, attr: i32, value: i32) -> cudaError_t {
    ret(cuda().func_set_attribute(func as u64, attr, value))
}

/// Cache and shared-memory bank configuration are hints with no meaning on a CPU.
#[cshell::export]
pub extern "C" fn cudaFuncSetCacheConfig(func: *const c_void, config: i32) -> cudaError_t {
    let c = cuda();
    ret(if !c.is_kernel(func as u64) {
        Err(Error::INVALID_DEVICE_FUNCTION)
    } else if !(0..=3).contains(&config) {
        Err(Error::INVALID_VALUE)
    } else {
        Ok(())
    })
}

#[cshell::export]
pub extern "C" fn cudaFuncSetSharedMemConfig(func: *const c_void, config: i32) -> cudaError_t {
    let c = cuda();
    ret(if !c.is_kernel(func as u64) {
        Err(Error::INVALID_DEVICE_FUNCTION)
    } else if !(0..=2).contains(&config) {
        Err(Error::INVALID_VALUE)
    } else {
        Ok(())
    })
}

/// # Safety
/// `name` is valid for a write of a pointer; the string returned lives as long as the process.
#[cshell::export]
pub unsafe extern "C" fn cudaFuncGetName(name: *mut *const c_char, func: *const c_void) -> cudaError_t {
    let result = cuda().kernel_name(func as u64).and_then(|n| {
        let leaked = std::ffi::CString::new(n).map_err(|_| Error::INVALID_VALUE)?.into_raw();
        // SAFETY: the caller's promise.
        unsafe { out(name, leaked as *const c_char) }
    });
    ret(result)
}

/// # Safety
/// `count` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaFuncGetParamCount(func: *const c_void, count: *mut usize) -> cudaError_t {
    let result = cuda().kernel_params(cuda::Kernel::HostStub(func as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|p| unsafe { out(count, p.len()) }))
}

/// The parameter's offset and size in the kernel's parameter buffer; `size` may be null.
///
/// # Safety
/// `offset` is valid for a write, and `size` when it is not null.
#[cshell::export]
pub unsafe extern "C" fn cudaFuncGetParamInfo(
    func: *const c_void,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> cudaError_t {
    let result = cuda().kernel_params(cuda::Kernel::HostStub(func as u64)).and_then(|params| {
        let &(o, s) = params.get(index).ok_or(Error::INVALID_VALUE)?;
        // SAFETY: the caller's promise.
        unsafe {
            out(offset, o as usize)?;
            if !size.is_null() {
                size.write_unaligned(s as usize);
            }
        }
        Ok(())
    });
    ret(result)
}

/// # Safety
/// `function` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaGetFuncBySymbol(function: *mut *const c_void, symbol: *const c_void) -> cudaError_t {
    if !cuda().is_kernel(symbol as u64) {
        return ret(Err(Error::INVALID_DEVICE_FUNCTION));
    }
    // SAFETY: the caller's promise.
    ret(unsafe { out(function, symbol) })
}

/// # Safety
/// `blocks` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut i32,
    func: *const c_void,
    block_size: i32,
    dynamic_shared: usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().occupancy(func as u64, block_size, dynamic_shared as u64).and_then(|n| unsafe { out(blocks, n) }))
}

/// # Safety
/// As [`cudaOccupancyMaxActiveBlocksPerMultiprocessor`].
#[cshell::export]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut i32,
    func: *const c_void,
    block_size: i32,
    dynamic_shared: usize,
    _flags: u32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, func, block_size, dynamic_shared) }
}

/// # Safety
/// `size` is valid for a write of a `size_t`.
#[cshell::export]
pub unsafe extern "C" fn cudaOccupancyAvailableDynamicSMemPerBlock(
    size: *mut usize,
    func: *const c_void,
    blocks: i32,
    block_size: i32,
) -> cudaError_t {
    let result = cuda().func_attributes(func as u64).and_then(|a| {
        if blocks <= 0 || block_size <= 0 || block_size > a.max_threads_per_block {
            return Err(Error::INVALID_VALUE);
        }
        let per_block = cuda::properties::SHARED_PER_MULTIPROCESSOR / blocks as u64;
        let available = per_block.min(cuda::properties::SHARED_PER_BLOCK_OPTIN).saturating_sub(a.shared_size_bytes);
        // SAFETY: the caller's promise.
        unsafe { out(size, available as usize) }
    });
    ret(result)
}
