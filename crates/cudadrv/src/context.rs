//! Primary and created contexts, the per-thread context stack, context-wide settings.

use cuda::Error;

use crate::abi::{CUcontext, CUdevice};
use crate::error::CUresult;
use crate::{check_device, cuda, out, ret, with_context};

/// # Safety
/// `ctx` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, device: CUdevice) -> CUresult {
    let c = cuda();
    let result = check_device(device).and_then(|()| c.primary_context_retain());
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(ctx, h as CUcontext) }))
}

#[cshell::export]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(device: CUdevice) -> CUresult {
    ret(check_device(device).and_then(|()| cuda().primary_context_release()))
}

#[cshell::export]
pub extern "C" fn cuDevicePrimaryCtxSetFlags_v2(device: CUdevice, flags: u32) -> CUresult {
    ret(check_device(device).and_then(|()| cuda().primary_context_set_flags(flags)))
}

#[cshell::export]
pub extern "C" fn cuDevicePrimaryCtxReset_v2(device: CUdevice) -> CUresult {
    ret(check_device(device).and_then(|()| cuda().primary_context_reset()))
}

alias! {
    cuDevicePrimaryCtxRelease => cuDevicePrimaryCtxRelease_v2(device: CUdevice);
    cuDevicePrimaryCtxSetFlags => cuDevicePrimaryCtxSetFlags_v2(device: CUdevice, flags: u32);
    cuDevicePrimaryCtxReset => cuDevicePrimaryCtxReset_v2(device: CUdevice);
}

/// # Safety
/// `flags` and `active` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(device: CUdevice, flags: *mut u32, active: *mut i32) -> CUresult {
    let result = check_device(device).and_then(|()| cuda().primary_context_state()).and_then(|(f, a)| {
        // SAFETY: the caller's promise.
        unsafe {
            out(flags, f)?;
            out(active, i32::from(a))
        }
    });
    ret(result)
}

/// # Safety
/// `ctx` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxCreate_v2(ctx: *mut CUcontext, flags: u32, device: CUdevice) -> CUresult {
    let result = check_device(device).and_then(|()| cuda().context_create(flags));
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(ctx, h as CUcontext) }))
}

/// CUDA 11.4's form, with execution affinity parameters (accepted, and without effect: every context has
/// every worker thread).
///
/// # Safety
/// `ctx` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxCreate_v3(
    ctx: *mut CUcontext,
    _params: *mut std::ffi::c_void,
    _num_params: i32,
    flags: u32,
    device: CUdevice,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuCtxCreate_v2(ctx, flags, device) }
}

/// CUDA 12.5's form, with creation parameters (execution affinity, CIG: accepted without effect).
///
/// # Safety
/// `ctx` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxCreate_v4(
    ctx: *mut CUcontext,
    _params: *mut std::ffi::c_void,
    flags: u32,
    device: CUdevice,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuCtxCreate_v2(ctx, flags, device) }
}

alias! {
    cuCtxCreate => cuCtxCreate_v2(ctx: *mut CUcontext, flags: u32, device: CUdevice);
}

#[cshell::export]
pub extern "C" fn cuCtxDestroy_v2(ctx: CUcontext) -> CUresult {
    ret(cuda().context_destroy(ctx as u64))
}

#[cshell::export]
pub extern "C" fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CUresult {
    ret(cuda().context_push(ctx as u64))
}

/// # Safety
/// `ctx` is null or valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(ctx: *mut CUcontext) -> CUresult {
    let result = cuda().context_pop().map(|h| {
        if !ctx.is_null() {
            // SAFETY: the caller's promise.
            unsafe { ctx.write_unaligned(h as CUcontext) };
        }
    });
    ret(result)
}

alias! {
    cuCtxDestroy => cuCtxDestroy_v2(ctx: CUcontext);
    cuCtxPushCurrent => cuCtxPushCurrent_v2(ctx: CUcontext);
    cuCtxPopCurrent => cuCtxPopCurrent_v2(ctx: *mut CUcontext);
}

#[cshell::export]
pub extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> CUresult {
    ret(cuda().context_set_current(ctx as u64))
}

/// # Safety
/// `ctx` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut CUcontext) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().context_get_current().and_then(|h| unsafe { out(ctx, h as CUcontext) }))
}

/// # Safety
/// `device` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|_| unsafe { out(device, 0) }))
}

/// CUDA 13's form, naming the context (null: the current one).
///
/// # Safety
/// `device` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetDevice_v2(device: *mut CUdevice, ctx: CUcontext) -> CUresult {
    let c = cuda();
    let result = if ctx.is_null() {
        with_context().map(|_| ())
    } else if c.is_context(ctx as u64) {
        Ok(())
    } else {
        Err(Error::DEVICE_UNINITIALIZED)
    };
    // SAFETY: the caller's promise.
    ret(result.and_then(|()| unsafe { out(device, 0) }))
}

/// # Safety
/// `flags` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().context_flags().and_then(|f| unsafe { out(flags, f) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetId(ctx: CUcontext, id: *mut u64) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().context_id(ctx as u64).and_then(|i| unsafe { out(id, i) }))
}

/// # Safety
/// `version` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut u32) -> CUresult {
    let c = cuda();
    let result = if ctx.is_null() { c.current_context().map(|_| ()) } else { c.context_id(ctx as u64).map(|_| ()) };
    // Contexts are of the `_v2` API generation (CUDA 3.2 onwards), as NVIDIA's driver reports them.
    // SAFETY: the caller's promise.
    ret(result.and_then(|()| unsafe { out(version, 3020) }))
}

#[cshell::export]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    ret(with_context().and_then(|c| c.synchronize()))
}

/// CUDA 13's form, naming the context (null: the current one).
#[cshell::export]
pub extern "C" fn cuCtxSynchronize_v2(ctx: CUcontext) -> CUresult {
    let c = cuda();
    if !ctx.is_null() && !c.is_context(ctx as u64) {
        return ret(Err(Error::DEVICE_UNINITIALIZED));
    }
    cuCtxSynchronize()
}

#[cshell::export]
pub extern "C" fn cuCtxSetLimit(limit: u32, value: usize) -> CUresult {
    ret(with_context().and_then(|c| c.set_limit(limit, value as u64)))
}

/// # Safety
/// `value` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetLimit(value: *mut usize, limit: u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|c| c.limit(limit)).and_then(|v| unsafe { out(value, v as usize) }))
}

#[cshell::export]
pub extern "C" fn cuCtxSetCacheConfig(config: i32) -> CUresult {
    ret(with_context().and_then(|c| c.set_cache_config(config)))
}

/// # Safety
/// `config` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetCacheConfig(config: *mut i32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|c| unsafe { out(config, c.cache_config()) }))
}

/// # Safety
/// `least` and `greatest` are null or valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(least: *mut i32, greatest: *mut i32) -> CUresult {
    let result = with_context().map(|_| {
        let (l, g) = cuda::Cuda::stream_priority_range();
        // SAFETY: the caller's promise; null outputs are skipped, as CUDA allows.
        unsafe {
            if !least.is_null() {
                least.write_unaligned(l);
            }
            if !greatest.is_null() {
                greatest.write_unaligned(g);
            }
        }
    });
    ret(result)
}

#[cshell::export]
pub extern "C" fn cuCtxResetPersistingL2Cache() -> CUresult {
    ret(with_context().map(|_| ()))
}
