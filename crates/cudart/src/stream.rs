//! Streams, events and host functions (see the `cuda` crate for the synchronous semantics).

use std::ffi::c_void;

use cuda::{Error, HostFn, StreamCallback};

use crate::abi::{cudaError_t, cudaEvent_t, cudaStream_t};
use crate::{cuda, out, ret};

/// # Safety
/// `stream` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamCreate(stream: *mut cudaStream_t) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaStreamCreateWithPriority(stream, 0, 0) }
}

/// # Safety
/// As [`cudaStreamCreate`].
#[cshell::export]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(stream: *mut cudaStream_t, flags: u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaStreamCreateWithPriority(stream, flags, 0) }
}

/// # Safety
/// As [`cudaStreamCreate`].
#[cshell::export]
pub unsafe extern "C" fn cudaStreamCreateWithPriority(
    stream: *mut cudaStream_t,
    flags: u32,
    priority: i32,
) -> cudaError_t {
    if stream.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().stream_create(flags, priority).and_then(|s| unsafe { out(stream, s as cudaStream_t) }))
}

#[cshell::export]
pub extern "C" fn cudaStreamDestroy(stream: cudaStream_t) -> cudaError_t {
    ret(cuda().stream_destroy(stream as u64))
}

#[cshell::export]
pub extern "C" fn cudaStreamSynchronize(stream: cudaStream_t) -> cudaError_t {
    ret(cuda().stream_synchronize(stream as u64))
}

ptsz!(cudaStreamSynchronize_ptsz => cudaStreamSynchronize(stream: cudaStream_t));

#[cshell::export]
pub extern "C" fn cudaStreamQuery(stream: cudaStream_t) -> cudaError_t {
    // `cudaErrorNotReady` is an answer, not a failure: it does not become the last error.
    match cuda().stream_query(stream as u64) {
        Err(Error::NOT_READY) => Error::NOT_READY.code(),
        other => ret(other),
    }
}

ptsz!(cudaStreamQuery_ptsz => cudaStreamQuery(stream: cudaStream_t));

#[cshell::export]
pub extern "C" fn cudaStreamWaitEvent(stream: cudaStream_t, event: cudaEvent_t, _flags: u32) -> cudaError_t {
    ret(cuda().stream_wait_event(stream as u64, event as u64))
}

ptsz!(cudaStreamWaitEvent_ptsz => cudaStreamWaitEvent(stream: cudaStream_t, event: cudaEvent_t, flags: u32));

/// # Safety
/// `flags` is valid for a write of an `unsigned int`.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamGetFlags(stream: cudaStream_t, flags: *mut u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().stream_flags_priority(stream as u64).and_then(|(f, _)| unsafe { out(flags, f) }))
}

unsafe_ptsz!(cudaStreamGetFlags_ptsz => cudaStreamGetFlags(stream: cudaStream_t, flags: *mut u32));

/// # Safety
/// `priority` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamGetPriority(stream: cudaStream_t, priority: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().stream_flags_priority(stream as u64).and_then(|(_, p)| unsafe { out(priority, p) }))
}

unsafe_ptsz!(cudaStreamGetPriority_ptsz => cudaStreamGetPriority(stream: cudaStream_t, priority: *mut i32));

/// # Safety
/// `device` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamGetDevice(stream: cudaStream_t, device: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().stream_flags_priority(stream as u64).and_then(|_| unsafe { out(device, 0) }))
}

unsafe_ptsz!(cudaStreamGetDevice_ptsz => cudaStreamGetDevice(stream: cudaStream_t, device: *mut i32));

/// # Safety
/// `id` is valid for a write of an `unsigned long long`.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamGetId(stream: cudaStream_t, id: *mut u64) -> cudaError_t {
    let handle = stream as u64;
    // SAFETY: the caller's promise.
    ret(cuda().stream_flags_priority(handle).and_then(|_| unsafe { out(id, handle & 0xFFFF_FFFF_FFFF) }))
}

unsafe_ptsz!(cudaStreamGetId_ptsz => cudaStreamGetId(stream: cudaStream_t, id: *mut u64));

/// Managed memory needs no attaching: host and device share it always.
#[cshell::export]
pub extern "C" fn cudaStreamAttachMemAsync(
    stream: cudaStream_t,
    _ptr: *mut c_void,
    _length: usize,
    _flags: u32,
) -> cudaError_t {
    ret(cuda().enter_stream(stream as u64))
}

ptsz!(
    cudaStreamAttachMemAsync_ptsz => cudaStreamAttachMemAsync(
        stream: cudaStream_t,
        ptr: *mut c_void,
        length: usize,
        flags: u32,
    )
);

/// The calling thread's capture interaction mode (`cuda::exchange_thread_capture_mode`), which decides whether
/// calls that may synchronize are allowed while streams capture.
///
/// # Safety
/// `mode` is valid for reads and writes of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaThreadExchangeStreamCaptureMode(mode: *mut i32) -> cudaError_t {
    if mode.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda::exchange_thread_capture_mode(unsafe { mode.read_unaligned() })
        .map(|old| unsafe { mode.write_unaligned(old) }))
}

/// # Safety
/// `f` is a valid function; `user_data` is passed to it unchanged.
#[cshell::export]
pub unsafe extern "C" fn cudaLaunchHostFunc(
    stream: cudaStream_t,
    f: Option<HostFn>,
    user_data: *mut c_void,
) -> cudaError_t {
    let Some(f) = f else { return ret(Err(Error::INVALID_VALUE)) };
    ret(cuda().launch_host_fn(stream as u64, f, user_data))
}

unsafe_ptsz!(
    cudaLaunchHostFunc_ptsz => cudaLaunchHostFunc(
        stream: cudaStream_t,
        f: Option<HostFn>,
        user_data: *mut c_void,
    )
);

/// # Safety
/// As [`cudaLaunchHostFunc`]; the synchronization mode is moot (the stream waits for the function).
#[cshell::export]
pub unsafe extern "C" fn cudaLaunchHostFunc_v2(
    stream: cudaStream_t,
    f: Option<HostFn>,
    user_data: *mut c_void,
    _sync_mode: u32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaLaunchHostFunc(stream, f, user_data) }
}

unsafe_ptsz!(
    cudaLaunchHostFunc_v2_ptsz => cudaLaunchHostFunc_v2(
        stream: cudaStream_t,
        f: Option<HostFn>,
        user_data: *mut c_void,
        sync_mode: u32,
    )
);

/// # Safety
/// `f` is a valid callback; `user_data` is passed to it unchanged.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamAddCallback(
    stream: cudaStream_t,
    f: Option<StreamCallback>,
    user_data: *mut c_void,
    flags: u32,
) -> cudaError_t {
    let Some(f) = f else { return ret(Err(Error::INVALID_VALUE)) };
    if flags != 0 {
        return ret(Err(Error::INVALID_VALUE));
    }
    ret(cuda().stream_add_callback(stream as u64, f, user_data))
}

unsafe_ptsz!(
    cudaStreamAddCallback_ptsz => cudaStreamAddCallback(
        stream: cudaStream_t,
        f: Option<StreamCallback>,
        user_data: *mut c_void,
        flags: u32,
    )
);

// ---- events ---------------------------------------------------------------------------------------

/// # Safety
/// `event` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaEventCreate(event: *mut cudaEvent_t) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaEventCreateWithFlags(event, 0) }
}

/// # Safety
/// As [`cudaEventCreate`].
#[cshell::export]
pub unsafe extern "C" fn cudaEventCreateWithFlags(event: *mut cudaEvent_t, flags: u32) -> cudaError_t {
    if event.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().event_create(flags).and_then(|e| unsafe { out(event, e as cudaEvent_t) }))
}

#[cshell::export]
pub extern "C" fn cudaEventDestroy(event: cudaEvent_t) -> cudaError_t {
    ret(cuda().event_destroy(event as u64))
}

#[cshell::export]
pub extern "C" fn cudaEventRecord(event: cudaEvent_t, stream: cudaStream_t) -> cudaError_t {
    ret(cuda().event_record(event as u64, stream as u64))
}

ptsz!(cudaEventRecord_ptsz => cudaEventRecord(event: cudaEvent_t, stream: cudaStream_t));

#[cshell::export]
pub extern "C" fn cudaEventRecordWithFlags(event: cudaEvent_t, stream: cudaStream_t, flags: u32) -> cudaError_t {
    if flags & !0x1 != 0 {
        return ret(Err(Error::INVALID_VALUE));
    }
    cudaEventRecord(event, stream)
}

ptsz!(cudaEventRecordWithFlags_ptsz => cudaEventRecordWithFlags(event: cudaEvent_t, stream: cudaStream_t, flags: u32));

#[cshell::export]
pub extern "C" fn cudaEventQuery(event: cudaEvent_t) -> cudaError_t {
    ret(cuda().event_query(event as u64))
}

#[cshell::export]
pub extern "C" fn cudaEventSynchronize(event: cudaEvent_t) -> cudaError_t {
    ret(cuda().event_synchronize(event as u64))
}

/// # Safety
/// `ms` is valid for a write of a `float`.
#[cshell::export]
pub unsafe extern "C" fn cudaEventElapsedTime(ms: *mut f32, start: cudaEvent_t, end: cudaEvent_t) -> cudaError_t {
    if ms.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().event_elapsed(start as u64, end as u64).and_then(|t| unsafe { out(ms, t) }))
}

/// # Safety
/// `value` is valid for a write of a `cudaStreamAttrValue` (64 bytes).
#[cshell::export]
pub unsafe extern "C" fn cudaStreamGetAttribute(stream: cudaStream_t, attr: i32, value: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::stream::get_attribute(stream as u64, attr, value) })
}

unsafe_ptsz!(cudaStreamGetAttribute_ptsz => cudaStreamGetAttribute(stream: cudaStream_t, attr: i32, value: *mut c_void));

/// # Safety
/// `value` is valid for a read of a `cudaStreamAttrValue` (64 bytes).
#[cshell::export]
pub unsafe extern "C" fn cudaStreamSetAttribute(stream: cudaStream_t, attr: i32, value: *const c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::stream::set_attribute(stream as u64, attr, value) })
}

unsafe_ptsz!(cudaStreamSetAttribute_ptsz => cudaStreamSetAttribute(stream: cudaStream_t, attr: i32, value: *const c_void));

#[cshell::export]
pub extern "C" fn cudaStreamCopyAttributes(dst: cudaStream_t, src: cudaStream_t) -> cudaError_t {
    ret(cuda().stream_copy_attributes(dst as u64, src as u64))
}

/// As [`cudaStreamCopyAttributes`], the null streams meaning the calling thread's default stream.
#[cshell::export]
pub extern "C" fn cudaStreamCopyAttributes_ptsz(dst: cudaStream_t, src: cudaStream_t) -> cudaError_t {
    cudaStreamCopyAttributes(crate::per_thread(dst) as cudaStream_t, crate::per_thread(src) as cudaStream_t)
}
