//! Stream capture (see the `cuda` crate's `capture.rs` for the semantics): begin, end, and what a
//! capturing stream reports.

use cuda::Error;

use crate::abi::{cudaError_t, cudaGraphEdgeData, cudaGraphNode_t, cudaGraph_t, cudaStream_t};
use crate::{cuda, out, ret};

#[cshell::export]
pub extern "C" fn cudaStreamBeginCapture(stream: cudaStream_t, mode: i32) -> cudaError_t {
    ret(cuda().begin_capture(stream as u64, mode))
}

ptsz!(cudaStreamBeginCapture_ptsz => cudaStreamBeginCapture(stream: cudaStream_t, mode: i32));

/// # Safety
/// `graph` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamEndCapture(stream: cudaStream_t, graph: *mut cudaGraph_t) -> cudaError_t {
    if graph.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let result = cuda().end_capture(stream as u64);
    // SAFETY: the caller's promise; a failed capture gives a null graph.
    unsafe { graph.write_unaligned(result.map_or(std::ptr::null_mut(), |g| g as cudaGraph_t)) };
    ret(result.map(|_| ()))
}

unsafe_ptsz!(cudaStreamEndCapture_ptsz => cudaStreamEndCapture(stream: cudaStream_t, graph: *mut cudaGraph_t));

/// # Safety
/// `status` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamIsCapturing(stream: cudaStream_t, status: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().capture_info(stream as u64).and_then(|i| unsafe { out(status, i.status as i32) }))
}

unsafe_ptsz!(cudaStreamIsCapturing_ptsz => cudaStreamIsCapturing(stream: cudaStream_t, status: *mut i32));

/// CUDA 13's form: every output but the status is optional. The dependency array (and the edge data,
/// all defaults) stay valid until the next call on the stream.
///
/// # Safety
/// Each non-null pointer is valid for a write of its type.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo(
    stream: cudaStream_t,
    status: *mut i32,
    id: *mut u64,
    graph: *mut cudaGraph_t,
    deps: *mut *const cudaGraphNode_t,
    edges: *mut *const cudaGraphEdgeData,
    count: *mut usize,
) -> cudaError_t {
    // SAFETY: the caller's promise; the runtime's and the driver's handles and edge data are the same.
    ret(unsafe {
        cudadrv::graph::capture_info(cuda(), stream as u64, status.cast(), id, graph, deps, edges.cast(), count)
    })
}

unsafe_ptsz!(
    cudaStreamGetCaptureInfo_ptsz => cudaStreamGetCaptureInfo(
        stream: cudaStream_t,
        status: *mut i32,
        id: *mut u64,
        graph: *mut cudaGraph_t,
        deps: *mut *const cudaGraphNode_t,
        edges: *mut *const cudaGraphEdgeData,
        count: *mut usize,
    )
);

/// # Safety
/// `deps` (and `edges`, if not null) are valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamBeginCaptureToGraph(
    stream: cudaStream_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    edges: *const cudaGraphEdgeData,
    n: usize,
    mode: i32,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph::begin_capture_to_graph(stream as u64, graph, deps, edges, n, mode) })
}

unsafe_ptsz!(cudaStreamBeginCaptureToGraph_ptsz => cudaStreamBeginCaptureToGraph(stream: cudaStream_t, graph: cudaGraph_t, deps: *const cudaGraphNode_t, edges: *const cudaGraphEdgeData, n: usize, mode: i32));

/// # Safety
/// `deps` (and `edges`, if not null) are valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaStreamUpdateCaptureDependencies(
    stream: cudaStream_t,
    deps: *mut cudaGraphNode_t,
    edges: *const cudaGraphEdgeData,
    n: usize,
    flags: u32,
) -> cudaError_t {
    cuda();
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph::update_capture_dependencies(stream as u64, deps, edges, n, flags) })
}

unsafe_ptsz!(cudaStreamUpdateCaptureDependencies_ptsz => cudaStreamUpdateCaptureDependencies(stream: cudaStream_t, deps: *mut cudaGraphNode_t, edges: *const cudaGraphEdgeData, n: usize, flags: u32));
