//! Streams and events. Work completes when its call returns (see `cuda`'s semantics); host functions and
//! callbacks run in stream order on the runtime's thread.

use std::ffi::c_void;

use cuda::Error;

use crate::abi::{CUcontext, CUdevice, CUevent, CUstream};
use crate::error::CUresult;
use crate::{out, ret, with_context};

/// # Safety
/// `stream` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut CUstream, flags: u32) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuStreamCreateWithPriority(stream, flags, 0) }
}

/// # Safety
/// `stream` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamCreateWithPriority(stream: *mut CUstream, flags: u32, priority: i32) -> CUresult {
    let result = with_context().and_then(|c| c.stream_create(flags, priority));
    // SAFETY: the caller's promise.
    ret(result.and_then(|s| unsafe { out(stream, s as CUstream) }))
}

#[cshell::export]
pub extern "C" fn cuStreamDestroy_v2(stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.stream_destroy(stream as u64)))
}

#[cshell::export]
pub extern "C" fn cuStreamSynchronize(stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.stream_synchronize(stream as u64)))
}

#[cshell::export]
pub extern "C" fn cuStreamQuery(stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.stream_query(stream as u64)))
}

#[cshell::export]
pub extern "C" fn cuStreamWaitEvent(stream: CUstream, event: CUevent, _flags: u32) -> CUresult {
    ret(with_context().and_then(|c| c.stream_wait_event(stream as u64, event as u64)))
}

/// # Safety
/// `callback` is a function of the program; `data` is what it expects.
#[cshell::export]
pub unsafe extern "C" fn cuStreamAddCallback(
    stream: CUstream,
    callback: Option<cuda::StreamCallback>,
    data: *mut c_void,
    flags: u32,
) -> CUresult {
    let result = with_context().and_then(|c| {
        let f = callback.filter(|_| flags == 0).ok_or(Error::INVALID_VALUE)?;
        c.stream_add_callback(stream as u64, f, data)
    });
    ret(result)
}

/// # Safety
/// `flags` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetFlags(stream: CUstream, flags: *mut u32) -> CUresult {
    let result = with_context().and_then(|c| c.stream_flags_priority(stream as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|(f, _)| unsafe { out(flags, f) }))
}

/// # Safety
/// `priority` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetPriority(stream: CUstream, priority: *mut i32) -> CUresult {
    let result = with_context().and_then(|c| c.stream_flags_priority(stream as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|(_, p)| unsafe { out(priority, p) }))
}

/// Every stream belongs to the current context (they share one device).
///
/// # Safety
/// `ctx` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetCtx(stream: CUstream, ctx: *mut CUcontext) -> CUresult {
    let result = with_context().and_then(|c| {
        c.stream_flags_priority(stream as u64)?;
        c.current_context()
    });
    // SAFETY: the caller's promise.
    ret(result.and_then(|h| unsafe { out(ctx, h as CUcontext) }))
}

/// CUDA 12.5's form, which also returns a green context (there are none).
///
/// # Safety
/// `ctx` and `green` are null or valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetCtx_v2(stream: CUstream, ctx: *mut CUcontext, green: *mut *mut c_void) -> CUresult {
    if !green.is_null() {
        // SAFETY: the caller's promise.
        unsafe { green.write_unaligned(std::ptr::null_mut()) };
    }
    // SAFETY: the caller's promise.
    unsafe { cuStreamGetCtx(stream, ctx) }
}

/// # Safety
/// `device` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetDevice(stream: CUstream, device: *mut CUdevice) -> CUresult {
    let result = with_context().and_then(|c| c.stream_flags_priority(stream as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|_| unsafe { out(device, 0) }))
}

/// The handle identifies the stream for the life of the process.
///
/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetId(stream: CUstream, id: *mut u64) -> CUresult {
    let result = with_context().and_then(|c| c.stream_flags_priority(stream as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|_| unsafe { out(id, stream as u64) }))
}

alias! {
    cuStreamDestroy => cuStreamDestroy_v2(stream: CUstream);
}

per_thread! {
    cuStreamSynchronize_ptsz => cuStreamSynchronize(stream: CUstream);
    cuStreamQuery_ptsz => cuStreamQuery(stream: CUstream);
    cuStreamWaitEvent_ptsz => cuStreamWaitEvent(stream: CUstream, event: CUevent, _flags: u32);
    cuStreamAddCallback_ptsz => cuStreamAddCallback(stream: CUstream, callback: Option<cuda::StreamCallback>, data: *mut c_void, flags: u32);
    cuStreamGetFlags_ptsz => cuStreamGetFlags(stream: CUstream, flags: *mut u32);
    cuStreamGetPriority_ptsz => cuStreamGetPriority(stream: CUstream, priority: *mut i32);
    cuStreamGetCtx_ptsz => cuStreamGetCtx(stream: CUstream, ctx: *mut CUcontext);
    cuStreamGetCtx_v2_ptsz => cuStreamGetCtx_v2(stream: CUstream, ctx: *mut CUcontext, green: *mut *mut c_void);
    cuStreamGetDevice_ptsz => cuStreamGetDevice(stream: CUstream, device: *mut CUdevice);
    cuStreamGetId_ptsz => cuStreamGetId(stream: CUstream, id: *mut u64);
}

// ---- events ----------------------------------------------------------------------------------------------

/// # Safety
/// `event` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuEventCreate(event: *mut CUevent, flags: u32) -> CUresult {
    let result = with_context().and_then(|c| c.event_create(flags));
    // SAFETY: the caller's promise.
    ret(result.and_then(|e| unsafe { out(event, e as CUevent) }))
}

#[cshell::export]
pub extern "C" fn cuEventDestroy_v2(event: CUevent) -> CUresult {
    ret(with_context().and_then(|c| c.event_destroy(event as u64)))
}

#[cshell::export]
pub extern "C" fn cuEventRecord(event: CUevent, stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.event_record(event as u64, stream as u64)))
}

#[cshell::export]
pub extern "C" fn cuEventRecordWithFlags(event: CUevent, stream: CUstream, _flags: u32) -> CUresult {
    cuEventRecord(event, stream)
}

#[cshell::export]
pub extern "C" fn cuEventQuery(event: CUevent) -> CUresult {
    ret(with_context().and_then(|c| c.event_query(event as u64)))
}

#[cshell::export]
pub extern "C" fn cuEventSynchronize(event: CUevent) -> CUresult {
    ret(with_context().and_then(|c| c.event_synchronize(event as u64)))
}

/// # Safety
/// `ms` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    let result = with_context().and_then(|c| c.event_elapsed(start as u64, end as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|t| unsafe { out(ms, t) }))
}

alias! {
    cuEventDestroy => cuEventDestroy_v2(event: CUevent);
    cuEventElapsedTime => cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent);
}

per_thread! {
    cuEventRecord_ptsz => cuEventRecord(event: CUevent, stream: CUstream);
    cuEventRecordWithFlags_ptsz => cuEventRecordWithFlags(event: CUevent, stream: CUstream, _flags: u32);
}

// ---- stream attributes --------------------------------------------------------------------------------

/// Reads a launch attribute's 64-byte value union (`CUstreamAttrValue`, `CUlaunchAttributeValue`).
///
/// # Safety
/// A non-null `value` is valid for a read of 64 bytes.
pub(crate) unsafe fn attr_value_in(value: *const c_void) -> cuda::Result<cuda::StreamAttrValue> {
    if value.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { value.cast::<cuda::StreamAttrValue>().read_unaligned() })
}

/// Writes a launch attribute's value union.
///
/// # Safety
/// A non-null `value` is valid for a write of 64 bytes.
pub(crate) unsafe fn attr_value_out(value: *mut c_void, v: cuda::StreamAttrValue) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    unsafe { out(value.cast::<cuda::StreamAttrValue>(), v) }
}

/// `cuStreamGetAttribute` and `cudaStreamGetAttribute`: the 64-byte value union (`CUstreamAttrValue`).
///
/// # Safety
/// `value` is valid for a write of 64 bytes.
pub unsafe fn get_attribute(stream: u64, attr: i32, value: *mut c_void) -> cuda::Result<()> {
    if value.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let v = with_context()?.stream_attribute(stream, attr)?;
    // SAFETY: the caller's promise.
    unsafe { attr_value_out(value, v) }
}

/// `cuStreamSetAttribute` and `cudaStreamSetAttribute` (see `cuda::Cuda::set_stream_attribute`).
///
/// # Safety
/// `value` is valid for a read of 64 bytes.
pub unsafe fn set_attribute(stream: u64, attr: i32, value: *const c_void) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    let v = unsafe { attr_value_in(value) }?;
    with_context()?.set_stream_attribute(stream, attr, v)
}

/// # Safety
/// As [`get_attribute`].
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetAttribute(stream: CUstream, attr: i32, value: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { get_attribute(stream as u64, attr, value) })
}

/// # Safety
/// As [`set_attribute`].
#[cshell::export]
pub unsafe extern "C" fn cuStreamSetAttribute(stream: CUstream, attr: i32, value: *const c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_attribute(stream as u64, attr, value) })
}

#[cshell::export]
pub extern "C" fn cuStreamCopyAttributes(dst: CUstream, src: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.stream_copy_attributes(dst as u64, src as u64)))
}

/// As [`cuStreamCopyAttributes`], the null streams meaning the calling thread's default stream.
#[cshell::export]
pub extern "C" fn cuStreamCopyAttributes_ptsz(dst: CUstream, src: CUstream) -> CUresult {
    cuStreamCopyAttributes(crate::per_thread_stream(dst), crate::per_thread_stream(src))
}

per_thread! {
    cuStreamGetAttribute_ptsz => cuStreamGetAttribute(stream: CUstream, attr: i32, value: *mut c_void);
    cuStreamSetAttribute_ptsz => cuStreamSetAttribute(stream: CUstream, attr: i32, value: *const c_void);
}
