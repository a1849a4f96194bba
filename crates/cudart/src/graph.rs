//! CUDA Graphs (see the `cuda` crate's `graph.rs` for the semantics): the C structures of the node
//! parameters converted, node lists written in CUDA's two-call convention. Stream capture is in
//! `capture.rs`.

use std::ffi::c_void;

use cuda::{CallConfig, CopyKind, Error, Kernel, NodeOp};

// Node lists are written as the driver shell writes them (`cudaGraphNode_t` is `CUgraphNode`).
use crate::abi::{
    cudaError_t, cudaGraphEdgeData, cudaGraphExecUpdateResultInfo, cudaGraphExec_t, cudaGraphNode_t, cudaGraph_t,
    cudaHostNodeParams, cudaKernelNodeParams, cudaMemcpy3DParms, cudaMemsetParams, cudaStream_t, cudaUserObject_t,
    dim3,
};
use crate::{cuda, out, ret};
use cudadrv::graph::write_list;
use cudadrv::graph_edit::{host_op, memset_op, write_nodes_and_edges};

// ---- graphs and nodes -----------------------------------------------------------------------------

/// # Safety
/// `graph` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphCreate(graph: *mut cudaGraph_t, flags: u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_create(flags).and_then(|g| unsafe { out(graph, g as cudaGraph_t) }))
}

#[cshell::export]
pub extern "C" fn cudaGraphDestroy(graph: cudaGraph_t) -> cudaError_t {
    ret(cuda().graph_destroy(graph as u64))
}

/// # Safety
/// `clone` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphClone(clone: *mut cudaGraph_t, graph: cudaGraph_t) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_clone(graph as u64).and_then(|g| unsafe { out(clone, g as cudaGraph_t) }))
}

/// Adds `op` after the `n` nodes at `deps` and writes the new node's handle.
///
/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
unsafe fn add(
    node: *mut cudaGraphNode_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    op: impl FnOnce(&[u64]) -> cuda::Result<u64>,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::add(node, deps, n, op) })
}

/// A kernel node's launch from `cudaKernelNodeParams` (the `extra` form is not supported).
fn kernel_launch(p: &cudaKernelNodeParams) -> cuda::Result<(Kernel, CallConfig)> {
    if p.func.is_null() {
        return Err(Error::INVALID_DEVICE_FUNCTION);
    }
    if p.kernelParams.is_null() && !p.extra.is_null() {
        cuda().warn(
            "graph kernel extra",
            "warning: a graph kernel node's parameters given as `extra` are not supported; it fails with \
             cudaErrorNotSupported",
        );
        return Err(Error::NOT_SUPPORTED);
    }
    let config = CallConfig {
        grid: p.gridDim.into(),
        block: p.blockDim.into(),
        shared: u64::from(p.sharedMemBytes),
        stream: 0,
        cooperative: false,
    };
    Ok((Kernel::HostStub(p.func as u64), config))
}

/// The copy a `cudaMemcpy3DParms` describes.
fn copy_node(p: &cudaMemcpy3DParms) -> cuda::Result<cuda::CopyNode> {
    let kind = CopyKind::from_raw(p.kind)?;
    let (src, spitch, sslice, selem) = crate::memory::side_3d(p.srcArray, p.srcPos, p.srcPtr)?;
    let (dst, dpitch, dslice, delem) = crate::memory::side_3d(p.dstArray, p.dstPos, p.dstPtr)?;
    let width = p.extent.width as u64 * selem.max(delem);
    let (height, depth) = (p.extent.height.max(1) as u64, p.extent.depth.max(1) as u64);
    Ok(cuda::CopyNode { dst, dpitch, dslice, src, spitch, sslice, width, height, depth, kind })
}

/// Reads a parameter structure.
///
/// # Safety
/// A non-null `p` points at a valid `T`.
unsafe fn read<T>(p: *const T) -> cuda::Result<T> {
    if p.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { p.read_unaligned() })
}

/// # Safety
/// `params` points at valid parameters whose `kernelParams` hold one pointer per kernel parameter.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddKernelNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    params: *const cudaKernelNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe {
        add(node, deps, n, |d| {
            let p = read(params)?;
            let (kernel, config) = kernel_launch(&p)?;
            cuda().graph_add_kernel_node(graph as u64, d, kernel, config, p.kernelParams as *const *const c_void)
        })
    }
}

/// # Safety
/// `params` points at a valid `cudaMemcpy3DParms`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    params: *const cudaMemcpy3DParms,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe {
        add(node, deps, n, |d| cuda().graph_add_node(graph as u64, NodeOp::Memcpy(copy_node(&read(params)?)?), d))
    }
}

/// # Safety
/// `deps` is valid for `n` reads.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode1D(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, copy_1d_op(dst, src, count, kind)?, d)) }
}

/// # Safety
/// `params` points at a valid `cudaMemsetParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddMemsetNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    params: *const cudaMemsetParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, memset_op(params)?, d)) }
}

/// # Safety
/// `params` points at a valid `cudaHostNodeParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddHostNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    params: *const cudaHostNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, host_op(params)?, d)) }
}

/// # Safety
/// `deps` is valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddChildGraphNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    child: cudaGraph_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, NodeOp::Graph(child as u64), d)) }
}

/// # Safety
/// `deps` is valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddEmptyNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, NodeOp::Empty, d)) }
}

/// # Safety
/// `from` and `to` are valid for `n` reads, `edges` (if not null) too.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddDependencies(
    graph: cudaGraph_t,
    from: *const cudaGraphNode_t,
    to: *const cudaGraphNode_t,
    edges: *const cudaGraphEdgeData,
    n: usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::edit_dependencies(graph, from, to, edges, n, true) })
}

/// # Safety
/// As [`cudaGraphAddDependencies`].
#[cshell::export]
pub unsafe extern "C" fn cudaGraphRemoveDependencies(
    graph: cudaGraph_t,
    from: *const cudaGraphNode_t,
    to: *const cudaGraphNode_t,
    edges: *const cudaGraphEdgeData,
    n: usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::edit_dependencies(graph, from, to, edges, n, false) })
}

/// # Safety
/// `graph` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetContainingGraph(
    node: cudaGraphNode_t,
    graph: *mut cudaGraph_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_graph(node as u64).and_then(|g| unsafe { out(graph, g as cudaGraph_t) }))
}

/// # Safety
/// `count` is valid for reads and writes, `nodes` (if not null) for `*count` writes.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphGetNodes(
    graph: cudaGraph_t,
    nodes: *mut cudaGraphNode_t,
    count: *mut usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_nodes(graph as u64).and_then(|l| unsafe { write_list(&l, nodes, count) }))
}

/// # Safety
/// As [`cudaGraphGetNodes`].
#[cshell::export]
pub unsafe extern "C" fn cudaGraphGetRootNodes(
    graph: cudaGraph_t,
    nodes: *mut cudaGraphNode_t,
    count: *mut usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_root_nodes(graph as u64).and_then(|l| unsafe { write_list(&l, nodes, count) }))
}

/// # Safety
/// `count` is valid for reads and writes; `from`, `to` and `edges` (if not null) for `*count` writes.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphGetEdges(
    graph: cudaGraph_t,
    from: *mut cudaGraphNode_t,
    to: *mut cudaGraphNode_t,
    edges: *mut cudaGraphEdgeData,
    count: *mut usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::get_edges(graph, from, to, edges, count) })
}

/// # Safety
/// `count` is valid for reads and writes; `deps` and `edges` (if not null) for `*count` writes.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetDependencies(
    node: cudaGraphNode_t,
    deps: *mut cudaGraphNode_t,
    edges: *mut cudaGraphEdgeData,
    count: *mut usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda()
        .graph_node_dependencies(node as u64)
        .and_then(|l| unsafe { write_nodes_and_edges(&l, deps, edges, count) }))
}

/// # Safety
/// `kind` is valid for a write of an `int`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetType(node: cudaGraphNode_t, kind: *mut i32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_type(node as u64).and_then(|t| unsafe { out(kind, t as i32) }))
}

/// The `kernelParams` written point into the node's own copy of the arguments, valid until its
/// parameters change.
///
/// # Safety
/// `params` is valid for a write of `cudaKernelNodeParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphKernelNodeGetParams(
    node: cudaGraphNode_t,
    params: *mut cudaKernelNodeParams,
) -> cudaError_t {
    let result = cuda().graph_kernel_node_params(node as u64).and_then(|(kernel, grid, block, shared, pointers)| {
        let func = match kernel {
            Kernel::HostStub(f) | Kernel::Function(f) => f as *mut c_void,
        };
        let p = cudaKernelNodeParams {
            func,
            gridDim: dim3 { x: grid.x, y: grid.y, z: grid.z },
            blockDim: dim3 { x: block.x, y: block.y, z: block.z },
            sharedMemBytes: shared as u32,
            kernelParams: pointers as *mut *mut c_void,
            extra: std::ptr::null_mut(),
        };
        // SAFETY: the caller's promise.
        unsafe { out(params, p) }
    });
    ret(result)
}

/// # Safety
/// As [`cudaGraphAddKernelNode`].
#[cshell::export]
pub unsafe extern "C" fn cudaGraphKernelNodeSetParams(
    node: cudaGraphNode_t,
    params: *const cudaKernelNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    let result = unsafe { read(params) }.and_then(|p| {
        let (kernel, config) = kernel_launch(&p)?;
        // SAFETY: the caller's promise.
        unsafe {
            cuda().graph_kernel_node_set_params(node as u64, kernel, config, p.kernelParams as *const *const c_void)
        }
    });
    ret(result)
}

// ---- executable graphs ----------------------------------------------------------------------------

/// # Safety
/// `exec` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphInstantiate(
    exec: *mut cudaGraphExec_t,
    graph: cudaGraph_t,
    flags: u64,
) -> cudaError_t {
    if exec.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(cuda().graph_instantiate(graph as u64, flags).and_then(|e| unsafe { out(exec, e as cudaGraphExec_t) }))
}

/// # Safety
/// As [`cudaGraphInstantiate`].
#[cshell::export]
pub unsafe extern "C" fn cudaGraphInstantiateWithFlags(
    exec: *mut cudaGraphExec_t,
    graph: cudaGraph_t,
    flags: u64,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { cudaGraphInstantiate(exec, graph, flags) }
}

/// # Safety
/// `exec` is valid for a write of a handle, `params` for reads and writes of a `cudaGraphInstantiateParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphInstantiateWithParams(
    exec: *mut cudaGraphExec_t,
    graph: cudaGraph_t,
    params: *mut cudadrv::graph::GraphInstantiateParams,
) -> cudaError_t {
    // SAFETY: the caller's promise (the structures have the same layout).
    ret(unsafe { cudadrv::graph::instantiate_with_params(cuda(), exec.cast(), graph, params) })
}

#[cshell::export]
pub extern "C" fn cudaGraphExecDestroy(exec: cudaGraphExec_t) -> cudaError_t {
    ret(cuda().graph_exec_destroy(exec as u64))
}

#[cshell::export]
pub extern "C" fn cudaGraphLaunch(exec: cudaGraphExec_t, stream: cudaStream_t) -> cudaError_t {
    ret(cuda().graph_launch(exec as u64, stream as u64))
}

ptsz!(cudaGraphLaunch_ptsz => cudaGraphLaunch(exec: cudaGraphExec_t, stream: cudaStream_t));

#[cshell::export]
pub extern "C" fn cudaGraphUpload(exec: cudaGraphExec_t, stream: cudaStream_t) -> cudaError_t {
    ret(cuda().graph_upload(exec as u64, stream as u64))
}

ptsz!(cudaGraphUpload_ptsz => cudaGraphUpload(exec: cudaGraphExec_t, stream: cudaStream_t));

/// # Safety
/// As [`cudaGraphAddKernelNode`].
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecKernelNodeSetParams(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    params: *const cudaKernelNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    let result = unsafe { read(params) }.and_then(|p| {
        let (kernel, config) = kernel_launch(&p)?;
        // SAFETY: the caller's promise.
        unsafe {
            cuda().graph_exec_kernel_node_set_params(
                exec as u64,
                node as u64,
                kernel,
                config,
                p.kernelParams as *const *const c_void,
            )
        }
    });
    ret(result)
}

/// # Safety
/// `info` is valid for a write of `cudaGraphExecUpdateResultInfo`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecUpdate(
    exec: cudaGraphExec_t,
    graph: cudaGraph_t,
    info: *mut cudaGraphExecUpdateResultInfo,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::exec_update(exec, graph, info) })
}

// ---- other node kinds' parameters, and node removal -----------------------------------------------

/// # Safety
/// `count` is valid for reads and writes; `nodes` and `edges` (if not null) for `*count` writes.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetDependentNodes(
    node: cudaGraphNode_t,
    nodes: *mut cudaGraphNode_t,
    edges: *mut cudaGraphEdgeData,
    count: *mut usize,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda()
        .graph_node_dependents(node as u64)
        .and_then(|l| unsafe { write_nodes_and_edges(&l, nodes, edges, count) }))
}

#[cshell::export]
pub extern "C" fn cudaGraphDestroyNode(node: cudaGraphNode_t) -> cudaError_t {
    ret(cuda().graph_destroy_node(node as u64))
}

/// # Safety
/// `graph` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphChildGraphNodeGetGraph(
    node: cudaGraphNode_t,
    graph: *mut cudaGraph_t,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_child_graph(node as u64).and_then(|g| unsafe { out(graph, g as cudaGraph_t) }))
}

/// A 1-D copy node's operation.
fn copy_1d_op(dst: *mut c_void, src: *const c_void, count: usize, kind: i32) -> cuda::Result<NodeOp> {
    let kind = CopyKind::from_raw(kind)?;
    if dst.is_null() || src.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    Ok(NodeOp::Memcpy(cuda::CopyNode::linear(dst as u64, src as u64, count as u64, kind)))
}

/// # Safety
/// `params` is valid for a write of `cudaHostNodeParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphHostNodeGetParams(
    node: cudaGraphNode_t,
    params: *mut cudaHostNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::host_params(node, params) })
}

/// # Safety
/// `params` points at valid `cudaHostNodeParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphHostNodeSetParams(
    node: cudaGraphNode_t,
    params: *const cudaHostNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { host_op(params) }.and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

/// # Safety
/// `params` is valid for a write of `cudaMemsetParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphMemsetNodeGetParams(
    node: cudaGraphNode_t,
    params: *mut cudaMemsetParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph_edit::memset_params(node, params) })
}

/// # Safety
/// `params` points at valid `cudaMemsetParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphMemsetNodeSetParams(
    node: cudaGraphNode_t,
    params: *const cudaMemsetParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { memset_op(params) }.and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

#[cshell::export]
pub extern "C" fn cudaGraphMemcpyNodeSetParams1D(
    node: cudaGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: i32,
) -> cudaError_t {
    ret(copy_1d_op(dst, src, count, kind).and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

/// # Safety
/// `params` points at valid `cudaHostNodeParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecHostNodeSetParams(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    params: *const cudaHostNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { host_op(params) }.and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

/// # Safety
/// `params` points at valid `cudaMemsetParams`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecMemsetNodeSetParams(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    params: *const cudaMemsetParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { memset_op(params) }.and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

#[cshell::export]
pub extern "C" fn cudaGraphExecMemcpyNodeSetParams1D(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: i32,
) -> cudaError_t {
    ret(copy_1d_op(dst, src, count, kind).and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

/// # Safety
/// `object` is valid for a write of a handle; `destroy` may be called with `data` once, from any thread.
#[cshell::export]
pub unsafe extern "C" fn cudaUserObjectCreate(
    object: *mut cudaUserObject_t,
    data: *mut c_void,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
    initial: u32,
    flags: u32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { cudadrv::graph::user_object_create(object, data, destroy, initial, flags) })
}

#[cshell::export]
pub extern "C" fn cudaUserObjectRetain(object: cudaUserObject_t, count: u32) -> cudaError_t {
    ret(cuda().user_object_retain(object as u64, count))
}

#[cshell::export]
pub extern "C" fn cudaUserObjectRelease(object: cudaUserObject_t, count: u32) -> cudaError_t {
    ret(cuda().user_object_release(object as u64, count))
}

#[cshell::export]
pub extern "C" fn cudaGraphRetainUserObject(
    graph: cudaGraph_t,
    object: cudaUserObject_t,
    count: u32,
    flags: u32,
) -> cudaError_t {
    ret(cuda().graph_retain_user_object(graph as u64, object as u64, count, flags))
}

#[cshell::export]
pub extern "C" fn cudaGraphReleaseUserObject(graph: cudaGraph_t, object: cudaUserObject_t, count: u32) -> cudaError_t {
    ret(cuda().graph_release_user_object(graph as u64, object as u64, count))
}

// ---- event and memory nodes, enabling nodes, graph memory (shared with the driver shell) -------------

use crate::abi::cudaMemAllocNodeParams;
use cudadrv::graph_nodes as nodes;

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddEventRecordNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    event: *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::add_event_node(node, graph, deps, n, event, true) })
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddEventWaitNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    event: *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::add_event_node(node, graph, deps, n, event, false) })
}

/// # Safety
/// `event` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphEventRecordNodeGetEvent(
    node: cudaGraphNode_t,
    event: *mut *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::node_event(node, true, event) })
}

/// # Safety
/// `event` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphEventWaitNodeGetEvent(node: cudaGraphNode_t, event: *mut *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::node_event(node, false, event) })
}

#[cshell::export]
pub extern "C" fn cudaGraphEventRecordNodeSetEvent(node: cudaGraphNode_t, event: *mut c_void) -> cudaError_t {
    ret(nodes::set_node_event(std::ptr::null_mut(), node, true, event))
}

#[cshell::export]
pub extern "C" fn cudaGraphEventWaitNodeSetEvent(node: cudaGraphNode_t, event: *mut c_void) -> cudaError_t {
    ret(nodes::set_node_event(std::ptr::null_mut(), node, false, event))
}

#[cshell::export]
pub extern "C" fn cudaGraphExecEventRecordNodeSetEvent(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    event: *mut c_void,
) -> cudaError_t {
    ret(nodes::set_node_event(exec, node, true, event))
}

#[cshell::export]
pub extern "C" fn cudaGraphExecEventWaitNodeSetEvent(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    event: *mut c_void,
) -> cudaError_t {
    ret(nodes::set_node_event(exec, node, false, event))
}

/// # Safety
/// `node` is valid for a write, `deps` for `n` reads, `params` for a read and a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddMemAllocNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    params: *mut cudaMemAllocNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::add_mem_alloc_node(node, graph, deps, n, params) })
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddMemFreeNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    ptr: *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_mem_free_node(graph as u64, d, ptr as u64)) }
}

/// # Safety
/// `params` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphMemAllocNodeGetParams(
    node: cudaGraphNode_t,
    params: *mut cudaMemAllocNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::mem_alloc_node_params(node, params) })
}

/// # Safety
/// `ptr` is valid for a write of a pointer.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphMemFreeNodeGetParams(node: cudaGraphNode_t, ptr: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::mem_free_node_ptr(node, ptr.cast()) })
}

/// # Safety
/// `value` is valid for a write of a `u64`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceGetGraphMemAttribute(device: i32, attr: i32, value: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::graph_mem_attribute(device, attr, value) })
}

/// # Safety
/// `value` is valid for a read of a `u64`.
#[cshell::export]
pub unsafe extern "C" fn cudaDeviceSetGraphMemAttribute(device: i32, attr: i32, value: *mut c_void) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::set_graph_mem_attribute(device, attr, value) })
}

#[cshell::export]
pub extern "C" fn cudaDeviceGraphMemTrim(device: i32) -> cudaError_t {
    ret(if device == 0 { Ok(()) } else { Err(Error::INVALID_DEVICE) })
}

#[cshell::export]
pub extern "C" fn cudaGraphNodeSetEnabled(exec: cudaGraphExec_t, node: cudaGraphNode_t, enabled: u32) -> cudaError_t {
    ret(cuda().graph_node_set_enabled(exec as u64, node as u64, enabled != 0))
}

/// # Safety
/// `enabled` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetEnabled(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    enabled: *mut u32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::node_enabled(exec, node, enabled) })
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphGetId(graph: cudaGraph_t, id: *mut u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_id(graph as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecGetId(exec: cudaGraphExec_t, id: *mut u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_exec_id(exec as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `flags` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecGetFlags(exec: cudaGraphExec_t, flags: *mut u64) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_exec_flags(exec as u64).and_then(|v| unsafe { out(flags, v) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetLocalId(node: cudaGraphNode_t, id: *mut u32) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_local_id(node as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetToolsId(node: cudaGraphNode_t, id: *mut u64) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_tools_id(node as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `node` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeFindInClone(
    node: *mut cudaGraphNode_t,
    original: cudaGraphNode_t,
    clone: cudaGraph_t,
) -> cudaError_t {
    let found = cuda().graph_node_find_in_clone(original as u64, clone as u64);
    // SAFETY: the caller's promise.
    ret(found.and_then(|n| unsafe { out(node, n as cudaGraphNode_t) }))
}

/// # Safety
/// `path` is a NUL-terminated string.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphDebugDotPrint(
    graph: cudaGraph_t,
    path: *const std::ffi::c_char,
    _flags: u32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::debug_dot_print(graph, path) })
}

// ---- the generic node functions (`cudadrv::graph_generic`, with the runtime's kernel and copy members) --

use cudadrv::graph_generic::{self as generic, Flavor, GraphNodeParams};

/// `cudaKernelNodeParamsV2`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
struct KernelNodeParamsV2 {
    func: *mut c_void,
    gridDim: dim3,
    blockDim: dim3,
    sharedMemBytes: u32,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    ctx: *mut c_void,
    /// `cudaKernelFunctionType`: unspecified (deduced), a `__global__` function's address, a
    /// `cudaKernel_t`, a `cudaFunction_t`.
    functionType: i32,
}

/// # Safety
/// `u` points at a `cudaKernelNodeParamsV2`.
unsafe fn runtime_kernel(u: *const u8) -> cuda::Result<(Kernel, CallConfig, *const *const c_void)> {
    // SAFETY: the caller's promise.
    let p = unsafe { u.cast::<KernelNodeParamsV2>().read_unaligned() };
    let v1 = cudaKernelNodeParams {
        func: p.func,
        gridDim: p.gridDim,
        blockDim: p.blockDim,
        sharedMemBytes: p.sharedMemBytes,
        kernelParams: p.kernelParams,
        extra: p.extra,
    };
    let (mut kernel, config) = kernel_launch(&v1)?;
    // A handle from the driver or the library API, said so or not a registered kernel's address.
    let f = p.func as u64;
    if matches!(p.functionType, 2 | 3) || (p.functionType == 0 && cuda().kernel_name(f).is_err()) {
        kernel = Kernel::Function(f);
    }
    Ok((kernel, config, p.kernelParams as *const *const c_void))
}

/// # Safety
/// `u` is valid for a write of a `cudaKernelNodeParamsV2`.
unsafe fn runtime_kernel_out(
    u: *mut u8,
    kernel: Kernel,
    grid: cuda::Dim3,
    block: cuda::Dim3,
    shared: u64,
    pointers: u64,
) {
    let (f, kind) = match kernel {
        Kernel::HostStub(f) => (f, 1),
        Kernel::Function(f) => (f, 3),
    };
    let p = KernelNodeParamsV2 {
        func: f as *mut c_void,
        gridDim: dim3 { x: grid.x, y: grid.y, z: grid.z },
        blockDim: dim3 { x: block.x, y: block.y, z: block.z },
        sharedMemBytes: shared as u32,
        kernelParams: pointers as *mut *mut c_void,
        extra: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
        functionType: kind,
    };
    // SAFETY: the caller's promise.
    unsafe { u.cast::<KernelNodeParamsV2>().write_unaligned(p) }
}

/// # Safety
/// `u` points at a `cudaMemcpy3DParms`.
unsafe fn runtime_memcpy(u: *const u8) -> cuda::Result<cuda::CopyNode> {
    // SAFETY: the caller's promise.
    copy_node(&unsafe { u.cast::<cudaMemcpy3DParms>().read_unaligned() })
}

/// # Safety
/// `u` is valid for a write of a `cudaMemcpy3DParms`.
unsafe fn runtime_memcpy_out(u: *mut u8, c: &cuda::CopyNode) {
    let rows = |slice: u64, pitch: u64| slice.checked_div(pitch).unwrap_or(c.height) as usize;
    let side = |ptr: u64, pitch: u64, slice: u64| crate::abi::cudaPitchedPtr {
        ptr: ptr as *mut c_void,
        pitch: pitch as usize,
        xsize: c.width as usize,
        ysize: rows(slice, pitch),
    };
    let kind = match c.kind {
        CopyKind::HostToHost => 0,
        CopyKind::HostToDevice => 1,
        CopyKind::DeviceToHost => 2,
        CopyKind::DeviceToDevice => 3,
        CopyKind::Default => 4,
    };
    let origin = crate::abi::cudaPos { x: 0, y: 0, z: 0 };
    let p = cudaMemcpy3DParms {
        srcArray: std::ptr::null_mut(),
        srcPos: origin,
        srcPtr: side(c.src, c.spitch, c.sslice),
        dstArray: std::ptr::null_mut(),
        dstPos: origin,
        dstPtr: side(c.dst, c.dpitch, c.dslice),
        extent: crate::abi::cudaExtent { width: c.width as usize, height: c.height as usize, depth: c.depth as usize },
        kind,
    };
    // SAFETY: the caller's promise.
    unsafe { u.cast::<cudaMemcpy3DParms>().write_unaligned(p) }
}

/// The runtime API's kernel and copy members.
static RUNTIME: Flavor = Flavor {
    kernel: runtime_kernel,
    kernel_out: runtime_kernel_out,
    memcpy: runtime_memcpy,
    memcpy_out: runtime_memcpy_out,
};

/// # Safety
/// As `cudadrv::graph_generic::add_node`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphAddNode(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    edges: *const cudaGraphEdgeData,
    n: usize,
    params: *mut GraphNodeParams,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { generic::add_node(&RUNTIME, node, graph, deps, edges, n, params) })
}

/// # Safety
/// As `cudadrv::graph_generic::set_params`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeSetParams(node: cudaGraphNode_t, params: *mut GraphNodeParams) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { generic::set_params(&RUNTIME, std::ptr::null_mut(), node, params) })
}

/// # Safety
/// As `cudadrv::graph_generic::set_params`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecNodeSetParams(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    params: *mut GraphNodeParams,
) -> cudaError_t {
    if exec.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(unsafe { generic::set_params(&RUNTIME, exec, node, params) })
}

/// # Safety
/// As `cudadrv::graph_generic::get_params`.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphNodeGetParams(node: cudaGraphNode_t, params: *mut GraphNodeParams) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { generic::get_params(&RUNTIME, node, params) })
}

/// # Safety
/// `params` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphMemcpyNodeGetParams(
    node: cudaGraphNode_t,
    params: *mut cudaMemcpy3DParms,
) -> cudaError_t {
    if params.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    match cuda().graph_node_op(node as u64) {
        Ok(NodeOp::Memcpy(c)) => {
            // SAFETY: the caller's promise.
            unsafe { runtime_memcpy_out(params.cast(), &c) };
            ret(Ok(()))
        }
        Ok(_) => ret(Err(Error::INVALID_VALUE)),
        Err(e) => ret(Err(e)),
    }
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphMemcpyNodeSetParams(
    node: cudaGraphNode_t,
    params: *const cudaMemcpy3DParms,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    let op = unsafe { read(params) }.and_then(|p| copy_node(&p));
    ret(op.and_then(|c| cuda().graph_node_set_op(node as u64, NodeOp::Memcpy(c))))
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cudaGraphExecMemcpyNodeSetParams(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    params: *const cudaMemcpy3DParms,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    let op = unsafe { read(params) }.and_then(|p| copy_node(&p));
    ret(op.and_then(|c| cuda().graph_exec_set_op(exec as u64, node as u64, NodeOp::Memcpy(c))))
}

/// # Safety
/// `value` is valid for a write of a `cudaLaunchAttributeValue` (64 bytes).
#[cshell::export]
pub unsafe extern "C" fn cudaGraphKernelNodeGetAttribute(
    node: cudaGraphNode_t,
    attr: i32,
    value: *mut c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::kernel_node_attribute(node, attr, value) })
}

/// # Safety
/// `value` is valid for a read of a `cudaLaunchAttributeValue` (64 bytes).
#[cshell::export]
pub unsafe extern "C" fn cudaGraphKernelNodeSetAttribute(
    node: cudaGraphNode_t,
    attr: i32,
    value: *const c_void,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    ret(unsafe { nodes::set_kernel_node_attribute(node, attr, value) })
}

#[cshell::export]
pub extern "C" fn cudaGraphKernelNodeCopyAttributes(dst: cudaGraphNode_t, src: cudaGraphNode_t) -> cudaError_t {
    ret(cuda().graph_kernel_node_copy_attributes(dst as u64, src as u64))
}

// ---- copy nodes to and from symbols ----------------------------------------------------------------------

/// A symbol copy node's operation.
fn symbol_op(
    symbol: *const c_void,
    other: *const c_void,
    n: usize,
    offset: usize,
    k: i32,
    to: bool,
) -> cuda::Result<NodeOp> {
    let kind = CopyKind::from_raw(k)?;
    cuda().symbol_copy_node(symbol as u64, other as u64, n as u64, offset as u64, kind, to).map(NodeOp::Memcpy)
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNodeToSymbol(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe {
        add(node, deps, n, |d| {
            cuda().graph_add_node(graph as u64, symbol_op(symbol, src, count, offset, kind, true)?, d)
        })
    }
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNodeFromSymbol(
    node: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    deps: *const cudaGraphNode_t,
    n: usize,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    // SAFETY: the caller's promise.
    unsafe {
        add(node, deps, n, |d| {
            cuda().graph_add_node(graph as u64, symbol_op(symbol, dst, count, offset, kind, false)?, d)
        })
    }
}

#[cshell::export]
pub extern "C" fn cudaGraphMemcpyNodeSetParamsToSymbol(
    node: cudaGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    ret(symbol_op(symbol, src, count, offset, kind, true).and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

#[cshell::export]
pub extern "C" fn cudaGraphMemcpyNodeSetParamsFromSymbol(
    node: cudaGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    ret(symbol_op(symbol, dst, count, offset, kind, false).and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaGraphExecMemcpyNodeSetParamsToSymbol(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    let op = symbol_op(symbol, src, count, offset, kind, true);
    ret(op.and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaGraphExecMemcpyNodeSetParamsFromSymbol(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> cudaError_t {
    let op = symbol_op(symbol, dst, count, offset, kind, false);
    ret(op.and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

#[cshell::export]
pub extern "C" fn cudaGraphExecChildGraphNodeSetParams(
    exec: cudaGraphExec_t,
    node: cudaGraphNode_t,
    child: cudaGraph_t,
) -> cudaError_t {
    ret(cuda().graph_exec_child_graph_set_params(exec as u64, node as u64, child as u64))
}
