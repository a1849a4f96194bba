//! CUDA Graphs through the driver API: stream capture (`cuStreamBeginCapture_v2` … `cuStreamEndCapture`, the
//! capture status and info), and creating, instantiating, launching and destroying graphs. The semantics
//! are `cuda::capture` and `cuda::graph`, shared with the runtime's `cudaStream*Capture` and `cudaGraph*`;
//! the driver's own nodes (`cuGraphAdd*Node`) are not offered yet.

use std::cell::RefCell;
use std::ffi::c_void;

use cuda::{CaptureStatus, Cuda, Error};

use crate::abi::CUstream;
use crate::error::CUresult;
use crate::{cuda, out, ret, with_context};

/// `CUgraph`, `CUgraphExec`, `CUgraphNode`: opaque handles.
pub type CUgraph = *mut c_void;
pub type CUgraphExec = *mut c_void;
pub type CUgraphNode = *mut c_void;

#[cshell::export]
pub extern "C" fn cuStreamBeginCapture_v2(stream: CUstream, mode: i32) -> CUresult {
    ret(with_context().and_then(|c| c.begin_capture(stream as u64, mode)))
}

/// # Safety
/// `graph` is valid for a write; a failed capture writes a null graph.
#[cshell::export]
pub unsafe extern "C" fn cuStreamEndCapture(stream: CUstream, graph: *mut CUgraph) -> CUresult {
    if graph.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let result = with_context().and_then(|c| c.end_capture(stream as u64));
    // SAFETY: the caller's promise.
    unsafe { graph.write_unaligned(result.map_or(std::ptr::null_mut(), |g| g as CUgraph)) };
    ret(result.map(|_| ()))
}

/// # Safety
/// `status` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamIsCapturing(stream: CUstream, status: *mut u32) -> CUresult {
    let result = with_context().and_then(|c| c.capture_info(stream as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|i| unsafe { out(status, i.status as u32) }))
}

/// The calling thread's capture interaction mode (`cuda::exchange_thread_capture_mode`).
///
/// # Safety
/// `mode` is valid for reads and writes of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cuThreadExchangeStreamCaptureMode(mode: *mut i32) -> CUresult {
    if mode.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda::exchange_thread_capture_mode(unsafe { mode.read_unaligned() })
        .map(|old| unsafe { mode.write_unaligned(old) }))
}

thread_local! {
    /// The all-default edge data handed out by the capture-info calls (8 zero bytes per edge; grown, never
    /// shrunk, so an array handed out stays valid until a longer one is asked for on the thread).
    static EDGES: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The capture-info calls of both APIs (`cuStreamGetCaptureInfo*`, `cudaStreamGetCaptureInfo`): the status,
/// and while the stream captures, each output asked for (non-null): the capture's id, its graph, the
/// current dependencies (valid until the next call on the stream), their edge data (all defaults: lockstep
/// takes no other) and their count. Edge data without the dependencies is `cudaErrorInvalidValue`.
///
/// # Safety
/// Each non-null pointer is valid for a write of its type.
#[allow(clippy::too_many_arguments)]
pub unsafe fn capture_info(
    c: &Cuda,
    stream: u64,
    status: *mut u32,
    id: *mut u64,
    graph: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    edges: *mut *const c_void,
    count: *mut usize,
) -> cuda::Result<()> {
    if status.is_null() || (!edges.is_null() && deps.is_null()) {
        return Err(Error::INVALID_VALUE);
    }
    let i = c.capture_info(stream)?;
    // SAFETY: the caller's promise.
    unsafe {
        status.write_unaligned(i.status as u32);
        if i.status == CaptureStatus::None {
            return Ok(());
        }
        if !id.is_null() {
            id.write_unaligned(i.id);
        }
        if !graph.is_null() {
            graph.write_unaligned(i.graph as CUgraph);
        }
        if !deps.is_null() {
            deps.write_unaligned(i.deps as *const CUgraphNode);
        }
        if !edges.is_null() {
            let p = EDGES.with(|e| {
                let mut e = e.borrow_mut();
                if e.len() < i.count {
                    e.resize(i.count, 0);
                }
                if i.count == 0 {
                    std::ptr::null()
                } else {
                    e.as_ptr().cast()
                }
            });
            edges.write_unaligned(p);
        }
        if !count.is_null() {
            count.write_unaligned(i.count);
        }
    }
    Ok(())
}

/// [`capture_info`] for the driver's forms, which need a current context.
///
/// # Safety
/// As [`capture_info`].
#[allow(clippy::too_many_arguments)]
unsafe fn driver_capture_info(
    stream: CUstream,
    status: *mut u32,
    id: *mut u64,
    graph: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    edges: *mut *const c_void,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|c| unsafe { capture_info(c, stream as u64, status, id, graph, deps, edges, count) }))
}

/// # Safety
/// `status` is valid for a write; `id` is null or valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetCaptureInfo(stream: CUstream, status: *mut u32, id: *mut u64) -> CUresult {
    let n = std::ptr::null_mut();
    // SAFETY: the caller's promise.
    unsafe { driver_capture_info(stream, status, id, n, n.cast(), n.cast(), n.cast()) }
}

/// CUDA 11.3's form: also the graph and the current dependencies.
///
/// # Safety
/// As [`cuStreamGetCaptureInfo`], for each non-null output.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetCaptureInfo_v2(
    stream: CUstream,
    status: *mut u32,
    id: *mut u64,
    graph: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { driver_capture_info(stream, status, id, graph, deps, std::ptr::null_mut(), count) }
}

/// CUDA 12.3's form, with edge data too (cuda-bindings 13 and cuda.core call this one).
///
/// # Safety
/// As [`cuStreamGetCaptureInfo`], for each non-null output.
#[cshell::export]
pub unsafe extern "C" fn cuStreamGetCaptureInfo_v3(
    stream: CUstream,
    status: *mut u32,
    id: *mut u64,
    graph: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    edges: *mut *const c_void,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { driver_capture_info(stream, status, id, graph, deps, edges, count) }
}

/// # Safety
/// `graph` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphCreate(graph: *mut CUgraph, flags: u32) -> CUresult {
    let result = with_context().and_then(|c| c.graph_create(flags));
    // SAFETY: the caller's promise.
    ret(result.and_then(|g| unsafe { out(graph, g as CUgraph) }))
}

#[cshell::export]
pub extern "C" fn cuGraphDestroy(graph: CUgraph) -> CUresult {
    ret(cuda().graph_destroy(graph as u64))
}

/// # Safety
/// `count` is valid for reads and writes, `nodes` (if not null) for `*count` writes.
#[cshell::export]
pub unsafe extern "C" fn cuGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, count: *mut usize) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_nodes(graph as u64).and_then(|l| unsafe { write_list(&l, nodes, count) }))
}

/// # Safety
/// As [`cuGraphGetNodes`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphGetRootNodes(graph: CUgraph, nodes: *mut CUgraphNode, count: *mut usize) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_root_nodes(graph as u64).and_then(|l| unsafe { write_list(&l, nodes, count) }))
}

/// A node list the CUDA way (the runtime's shell uses it too): with `nodes` null, `*count` is set to the list's
/// length; otherwise up to `*count` handles are written (the slots past the list's end nulled) and `*count` is
/// set to the number written.
///
/// # Safety
/// `count` is valid for reads and writes, `nodes` (if not null) for `*count` writes.
pub unsafe fn write_list(list: &[u64], nodes: *mut CUgraphNode, count: *mut usize) -> cuda::Result<()> {
    if count.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    unsafe {
        if nodes.is_null() {
            count.write_unaligned(list.len());
            return Ok(());
        }
        let room = count.read_unaligned();
        for i in 0..room {
            nodes.add(i).write_unaligned(list.get(i).map_or(std::ptr::null_mut(), |&h| h as CUgraphNode));
        }
        count.write_unaligned(list.len().min(room));
    }
    Ok(())
}

/// # Safety
/// `kind` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetType(node: CUgraphNode, kind: *mut i32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_type(node as u64).and_then(|t| unsafe { out(kind, t as i32) }))
}

/// # Safety
/// `exec` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphInstantiateWithFlags(exec: *mut CUgraphExec, graph: CUgraph, flags: u64) -> CUresult {
    let result = with_context().and_then(|c| c.graph_instantiate(graph as u64, flags));
    // SAFETY: the caller's promise.
    ret(result.and_then(|e| unsafe { out(exec, e as CUgraphExec) }))
}

/// The CUDA 11 form, with an error node and a log: lockstep's instantiation errors name no node, so the
/// node is null and the log empty.
///
/// # Safety
/// `exec` is valid for a write; `error_node` is null or valid for a write; `log` for `size` bytes.
#[cshell::export]
pub unsafe extern "C" fn cuGraphInstantiate_v2(
    exec: *mut CUgraphExec,
    graph: CUgraph,
    error_node: *mut CUgraphNode,
    log: *mut u8,
    size: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe {
        if !error_node.is_null() {
            error_node.write_unaligned(std::ptr::null_mut());
        }
        if !log.is_null() && size > 0 {
            log.write(0);
        }
        cuGraphInstantiateWithFlags(exec, graph, 0)
    }
}

/// `CUDA_GRAPH_INSTANTIATE_PARAMS` (the runtime's `cudaGraphInstantiateParams` has the same layout).
#[repr(C)]
#[derive(Debug)]
pub struct GraphInstantiateParams {
    pub flags: u64,
    pub upload_stream: CUstream,
    pub error_node: CUgraphNode,
    /// `CUgraphInstantiateResult`.
    pub result: i32,
}

/// `CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD`: upload on `upload_stream` as well.
const INSTANTIATE_FLAG_UPLOAD: u64 = 0x2;

/// `cuGraphInstantiateWithParams` and `cudaGraphInstantiateWithParams`: the flags of
/// `cuGraphInstantiateWithFlags` plus the upload flag; the result is `CUDA_GRAPH_INSTANTIATE_SUCCESS` (0) or
/// `CUDA_GRAPH_INSTANTIATE_ERROR` (1), with no error node (lockstep's instantiation errors name none).
///
/// # Safety
/// `exec` is valid for a write of a handle, `params` for reads and writes of the structure.
pub unsafe fn instantiate_with_params(
    c: &Cuda,
    exec: *mut CUgraphExec,
    graph: CUgraph,
    params: *mut GraphInstantiateParams,
) -> cuda::Result<()> {
    if exec.is_null() || params.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let p = unsafe { &mut *params };
    let result = c.graph_instantiate(graph as u64, p.flags & !INSTANTIATE_FLAG_UPLOAD).and_then(|e| {
        if p.flags & INSTANTIATE_FLAG_UPLOAD != 0 {
            if let Err(err) = c.graph_upload(e, p.upload_stream as u64) {
                let _ = c.graph_exec_destroy(e);
                return Err(err);
            }
        }
        Ok(e)
    });
    p.error_node = std::ptr::null_mut();
    p.result = i32::from(result.is_err());
    // SAFETY: the caller's promise.
    result.and_then(|e| unsafe { out(exec, e as CUgraphExec) })
}

/// # Safety
/// As [`instantiate_with_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphInstantiateWithParams(
    exec: *mut CUgraphExec,
    graph: CUgraph,
    params: *mut GraphInstantiateParams,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|c| unsafe { instantiate_with_params(c, exec, graph, params) }))
}

#[cshell::export]
pub extern "C" fn cuGraphLaunch(exec: CUgraphExec, stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.graph_launch(exec as u64, stream as u64)))
}

#[cshell::export]
pub extern "C" fn cuGraphUpload(exec: CUgraphExec, stream: CUstream) -> CUresult {
    ret(with_context().and_then(|c| c.graph_upload(exec as u64, stream as u64)))
}

#[cshell::export]
pub extern "C" fn cuGraphExecDestroy(exec: CUgraphExec) -> CUresult {
    ret(cuda().graph_exec_destroy(exec as u64))
}

per_thread! {
    cuStreamBeginCapture_v2_ptsz => cuStreamBeginCapture_v2(stream: CUstream, mode: i32);
    cuStreamEndCapture_ptsz => cuStreamEndCapture(stream: CUstream, graph: *mut CUgraph);
    cuStreamIsCapturing_ptsz => cuStreamIsCapturing(stream: CUstream, status: *mut u32);
    cuStreamGetCaptureInfo_ptsz => cuStreamGetCaptureInfo(stream: CUstream, status: *mut u32, id: *mut u64);
    cuStreamGetCaptureInfo_v2_ptsz => cuStreamGetCaptureInfo_v2(stream: CUstream, status: *mut u32, id: *mut u64, graph: *mut CUgraph, deps: *mut *const CUgraphNode, count: *mut usize);
    cuStreamGetCaptureInfo_v3_ptsz => cuStreamGetCaptureInfo_v3(stream: CUstream, status: *mut u32, id: *mut u64, graph: *mut CUgraph, deps: *mut *const CUgraphNode, edges: *mut *const c_void, count: *mut usize);
    cuGraphLaunch_ptsz => cuGraphLaunch(exec: CUgraphExec, stream: CUstream);
    cuGraphUpload_ptsz => cuGraphUpload(exec: CUgraphExec, stream: CUstream);
}

/// `CUuserObject`: an opaque handle.
pub type CUuserObject = *mut c_void;
/// `CUhostFn`: `void (*)(void *userData)`.
type CUhostFn = Option<unsafe extern "C" fn(*mut c_void)>;

/// `cuUserObjectCreate` and `cudaUserObjectCreate` (see `cuda::user_object`).
///
/// # Safety
/// `object` is valid for a write of a handle; `destroy` may be called with `data` once, from any thread.
pub unsafe fn user_object_create(
    object: *mut CUuserObject,
    data: *mut c_void,
    destroy: CUhostFn,
    initial: u32,
    flags: u32,
) -> cuda::Result<()> {
    if object.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let h = cuda().user_object_create(data.cast(), destroy, initial, flags)?;
    // SAFETY: the caller's promise.
    unsafe { out(object, h as CUuserObject) }
}

/// # Safety
/// As [`user_object_create`].
#[cshell::export]
pub unsafe extern "C" fn cuUserObjectCreate(
    object: *mut CUuserObject,
    data: *mut c_void,
    destroy: CUhostFn,
    initial: u32,
    flags: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { user_object_create(object, data, destroy, initial, flags) })
}

#[cshell::export]
pub extern "C" fn cuUserObjectRetain(object: CUuserObject, count: u32) -> CUresult {
    ret(cuda().user_object_retain(object as u64, count))
}

#[cshell::export]
pub extern "C" fn cuUserObjectRelease(object: CUuserObject, count: u32) -> CUresult {
    ret(cuda().user_object_release(object as u64, count))
}

#[cshell::export]
pub extern "C" fn cuGraphRetainUserObject(graph: CUgraph, object: CUuserObject, count: u32, flags: u32) -> CUresult {
    ret(cuda().graph_retain_user_object(graph as u64, object as u64, count, flags))
}

#[cshell::export]
pub extern "C" fn cuGraphReleaseUserObject(graph: CUgraph, object: CUuserObject, count: u32) -> CUresult {
    ret(cuda().graph_release_user_object(graph as u64, object as u64, count))
}

/// `cuStreamBeginCaptureToGraph` and `cudaStreamBeginCaptureToGraph`: capture into the program's graph,
/// after `deps`.
///
/// # Safety
/// `deps` (and `edges`, if not null) are valid for `n` reads.
pub unsafe fn begin_capture_to_graph(
    stream: u64,
    graph: CUgraph,
    deps: *const CUgraphNode,
    edges: *const crate::graph_edit::CUgraphEdgeData,
    n: usize,
    mode: i32,
) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    let d = unsafe { crate::graph_edit::dependencies(deps, edges, n)? };
    cuda().begin_capture_to_graph(stream, graph as u64, &d, mode)
}

/// `cuStreamUpdateCaptureDependencies` (all forms) and the runtime's: flags 0 adds `deps` to the stream's
/// current dependencies, 1 replaces them.
///
/// # Safety
/// `deps` (and `edges`, if not null) are valid for `n` reads.
pub unsafe fn update_capture_dependencies(
    stream: u64,
    deps: *const CUgraphNode,
    edges: *const crate::graph_edit::CUgraphEdgeData,
    n: usize,
    flags: u32,
) -> cuda::Result<()> {
    if flags > 1 {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let d = unsafe { crate::graph_edit::dependencies(deps, edges, n)? };
    cuda().update_capture_dependencies(stream, &d, flags == 1)
}

/// # Safety
/// As [`begin_capture_to_graph`].
#[cshell::export]
pub unsafe extern "C" fn cuStreamBeginCaptureToGraph(
    stream: CUstream,
    graph: CUgraph,
    deps: *const CUgraphNode,
    edges: *const crate::graph_edit::CUgraphEdgeData,
    n: usize,
    mode: i32,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|_| unsafe { begin_capture_to_graph(stream as u64, graph, deps, edges, n, mode) }))
}

/// # Safety
/// As [`update_capture_dependencies`].
#[cshell::export]
pub unsafe extern "C" fn cuStreamUpdateCaptureDependencies(
    stream: CUstream,
    deps: *mut CUgraphNode,
    n: usize,
    flags: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context()
        .and_then(|_| unsafe { update_capture_dependencies(stream as u64, deps, std::ptr::null(), n, flags) }))
}

/// # Safety
/// As [`update_capture_dependencies`].
#[cshell::export]
pub unsafe extern "C" fn cuStreamUpdateCaptureDependencies_v2(
    stream: CUstream,
    deps: *mut CUgraphNode,
    edges: *const crate::graph_edit::CUgraphEdgeData,
    n: usize,
    flags: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(with_context().and_then(|_| unsafe { update_capture_dependencies(stream as u64, deps, edges, n, flags) }))
}

per_thread! {
    cuStreamBeginCaptureToGraph_ptsz => cuStreamBeginCaptureToGraph(stream: CUstream, graph: CUgraph, deps: *const CUgraphNode, edges: *const crate::graph_edit::CUgraphEdgeData, n: usize, mode: i32);
    cuStreamUpdateCaptureDependencies_ptsz => cuStreamUpdateCaptureDependencies(stream: CUstream, deps: *mut CUgraphNode, n: usize, flags: u32);
    cuStreamUpdateCaptureDependencies_v2_ptsz => cuStreamUpdateCaptureDependencies_v2(stream: CUstream, deps: *mut CUgraphNode, edges: *const crate::graph_edit::CUgraphEdgeData, n: usize, flags: u32);
}
