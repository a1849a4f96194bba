//! Building graphs through the driver API: `cuGraphAdd*Node`, node parameters, dependencies and edges, over
//! `cuda::graph` as the runtime's `cudaGraphAdd*Node` are. The node lists, edge data and dependency edits of
//! CUDA 12's `_v2` forms have the runtime's CUDA 13 signatures, so both shells share them from here.

use std::ffi::c_void;

use cuda::{CallConfig, Error, Kernel, NodeOp, SetNode};

use crate::abi::{CUfunction, CUDA_MEMCPY3D};
use crate::error::CUresult;
use crate::graph::{write_list, CUgraph, CUgraphExec, CUgraphNode};
use crate::{cuda, out, ret};

/// `CUgraphEdgeData` (and `cudaGraphEdgeData`): lockstep's edges are all the default (full completion)
/// kind, all zeros.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUgraphEdgeData {
    pub from_port: u8,
    pub to_port: u8,
    pub type_: u8,
    pub reserved: [u8; 5],
}

/// The `n` node handles at `p` (null with `n == 0` is an empty list).
///
/// # Safety
/// A non-null `p` is valid for reads of `n` handles.
pub unsafe fn handles(p: *const CUgraphNode, n: usize) -> cuda::Result<Vec<u64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&h| h as u64).collect())
}

/// Zeroes `n` edge-data entries at `p` when it is not null (every edge is a default one).
///
/// # Safety
/// A non-null `p` is valid for `n` writes.
unsafe fn zero_edges(p: *mut CUgraphEdgeData, n: usize) {
    if !p.is_null() {
        for i in 0..n {
            // SAFETY: the caller's promise.
            unsafe { p.add(i).write_unaligned(CUgraphEdgeData::default()) };
        }
    }
}

/// [`write_list`], and default edge data for the nodes written (when `nodes` is not null).
///
/// # Safety
/// As [`write_list`]; a non-null `edges` is valid for as many writes as `nodes`.
pub unsafe fn write_nodes_and_edges(
    list: &[u64],
    nodes: *mut CUgraphNode,
    edges: *mut CUgraphEdgeData,
    count: *mut usize,
) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    unsafe {
        write_list(list, nodes, count)?;
        if !nodes.is_null() {
            zero_edges(edges, count.read_unaligned());
        }
    }
    Ok(())
}

/// Edge data given to lockstep must be the default (all zeros); anything else is not supported.
///
/// # Safety
/// A non-null `p` is valid for `n` reads.
pub unsafe fn check_edges(p: *const CUgraphEdgeData, n: usize) -> cuda::Result<()> {
    if p.is_null() {
        return Ok(());
    }
    // SAFETY: the caller's promise.
    let edges = unsafe { std::slice::from_raw_parts(p, n) };
    if edges.iter().any(|e| *e != CUgraphEdgeData::default()) {
        return Err(Error::NOT_SUPPORTED);
    }
    Ok(())
}

/// `n` dependency handles at `deps` with their edge data at `edges` (null, or default edges only).
///
/// # Safety
/// `deps` (and `edges`, if not null) are valid for `n` reads.
pub unsafe fn dependencies(
    deps: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
) -> cuda::Result<Vec<u64>> {
    // SAFETY: the caller's promise.
    unsafe {
        check_edges(edges, n)?;
        handles(deps, n)
    }
}

/// `cuGraphAddDependencies_v2`/`cuGraphRemoveDependencies_v2` and the runtime's: `from[i]` before `to[i]`.
///
/// # Safety
/// `from` and `to` are valid for `n` reads, `edges` (if not null) too.
pub unsafe fn edit_dependencies(
    graph: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
    add: bool,
) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    let (f, t) = unsafe {
        check_edges(edges, n)?;
        (handles(from, n)?, handles(to, n)?)
    };
    if add {
        cuda().graph_add_dependencies(graph as u64, &f, &t)
    } else {
        cuda().graph_remove_dependencies(graph as u64, &f, &t)
    }
}

/// `cuGraphGetEdges_v2` and the runtime's: the edges' ends (and default edge data) in CUDA's two-call
/// convention.
///
/// # Safety
/// `count` is valid for reads and writes; `from`, `to` and `edges` (if not null) for `*count` writes.
pub unsafe fn get_edges(
    graph: CUgraph,
    from: *mut CUgraphNode,
    to: *mut CUgraphNode,
    edges: *mut CUgraphEdgeData,
    count: *mut usize,
) -> cuda::Result<()> {
    if from.is_null() != to.is_null() || (!edges.is_null() && from.is_null()) || count.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let (f, t): (Vec<u64>, Vec<u64>) = cuda().graph_edges(graph as u64)?.into_iter().unzip();
    // SAFETY: the caller's promise.
    unsafe {
        let room = count.read_unaligned();
        write_list(&f, from, count)?;
        if !to.is_null() {
            count.write_unaligned(room);
            write_list(&t, to, count)?;
            zero_edges(edges, count.read_unaligned());
        }
    }
    Ok(())
}

/// Adds the node `op` makes after the `n` nodes at `deps` and writes its handle.
///
/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
pub unsafe fn add(
    node: *mut CUgraphNode,
    deps: *const CUgraphNode,
    n: usize,
    op: impl FnOnce(&[u64]) -> cuda::Result<u64>,
) -> cuda::Result<()> {
    if node.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let h = unsafe { handles(deps, n) }.and_then(|d| op(&d))?;
    // SAFETY: the caller's promise.
    unsafe { out(node, h as CUgraphNode) }
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

// ---- the driver's node parameters ------------------------------------------------------------------

/// `CUDA_KERNEL_NODE_PARAMS_v2` (CUDA 12): the function, or a library kernel (`kern`) when it is null.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct CUDA_KERNEL_NODE_PARAMS {
    pub func: CUfunction,
    pub gridDimX: u32,
    pub gridDimY: u32,
    pub gridDimZ: u32,
    pub blockDimX: u32,
    pub blockDimY: u32,
    pub blockDimZ: u32,
    pub sharedMemBytes: u32,
    pub kernelParams: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: *mut c_void,
    pub ctx: *mut c_void,
}

/// `CUDA_MEMSET_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct CUDA_MEMSET_NODE_PARAMS {
    pub dst: u64,
    pub pitch: usize,
    pub value: u32,
    pub elementSize: u32,
    pub width: usize,
    pub height: usize,
}

/// `CUDA_HOST_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct CUDA_HOST_NODE_PARAMS {
    pub fn_: Option<unsafe extern "C" fn(*mut c_void)>,
    pub userData: *mut c_void,
}

/// A kernel node's function and shape (the `extra` form of the arguments is not supported).
pub fn kernel_launch(p: &CUDA_KERNEL_NODE_PARAMS) -> cuda::Result<(Kernel, CallConfig)> {
    let function = if p.func.is_null() { p.kern } else { p.func };
    if function.is_null() {
        return Err(Error::INVALID_DEVICE_FUNCTION);
    }
    if p.kernelParams.is_null() && !p.extra.is_null() {
        cuda().warn(
            "graph kernel extra",
            "warning: a graph kernel node's parameters given as `extra` are not supported; it fails with \
             CUDA_ERROR_NOT_SUPPORTED",
        );
        return Err(Error::NOT_SUPPORTED);
    }
    let config = CallConfig {
        grid: cuda::Dim3 { x: p.gridDimX, y: p.gridDimY, z: p.gridDimZ },
        block: cuda::Dim3 { x: p.blockDimX, y: p.blockDimY, z: p.blockDimZ },
        shared: u64::from(p.sharedMemBytes),
        stream: 0,
        cooperative: false,
    };
    Ok((Kernel::Function(function as u64), config))
}

/// # Safety
/// `params` points at valid parameters whose `kernelParams` hold one pointer per kernel parameter.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddKernelNode_v2(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_KERNEL_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe {
        add(node, deps, n, |d| {
            let p = read(params)?;
            let (kernel, config) = kernel_launch(&p)?;
            cuda().graph_add_kernel_node(graph as u64, d, kernel, config, p.kernelParams as *const *const c_void)
        })
    })
}

/// The `kernelParams` written point into the node's own copy of the arguments, valid until its
/// parameters change.
///
/// # Safety
/// `params` is valid for a write of the structure.
#[cshell::export]
pub unsafe extern "C" fn cuGraphKernelNodeGetParams_v2(
    node: CUgraphNode,
    params: *mut CUDA_KERNEL_NODE_PARAMS,
) -> CUresult {
    let result = cuda().graph_kernel_node_params(node as u64).and_then(|(kernel, grid, block, shared, pointers)| {
        // SAFETY: the caller's promise.
        unsafe { out(params, kernel_params_of(kernel, grid, block, shared, pointers)) }
    });
    ret(result)
}

/// A kernel node's parameters as the driver writes them (`kernelParams` into the node's own copy).
pub fn kernel_params_of(
    kernel: Kernel,
    grid: cuda::Dim3,
    block: cuda::Dim3,
    shared: u64,
    pointers: u64,
) -> CUDA_KERNEL_NODE_PARAMS {
    let (Kernel::HostStub(f) | Kernel::Function(f)) = kernel;
    CUDA_KERNEL_NODE_PARAMS {
        func: f as CUfunction,
        gridDimX: grid.x,
        gridDimY: grid.y,
        gridDimZ: grid.z,
        blockDimX: block.x,
        blockDimY: block.y,
        blockDimZ: block.z,
        sharedMemBytes: shared as u32,
        kernelParams: pointers as *mut *mut c_void,
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    }
}

/// # Safety
/// As [`cuGraphAddKernelNode_v2`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphKernelNodeSetParams_v2(
    node: CUgraphNode,
    params: *const CUDA_KERNEL_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { read(params) }.and_then(|p| {
        let (kernel, config) = kernel_launch(&p)?;
        // SAFETY: the caller's promise.
        unsafe {
            cuda().graph_kernel_node_set_params(node as u64, kernel, config, p.kernelParams as *const *const c_void)
        }
    }))
}

/// # Safety
/// As [`cuGraphAddKernelNode_v2`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecKernelNodeSetParams_v2(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const CUDA_KERNEL_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { read(params) }.and_then(|p| {
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
    }))
}

/// # Safety
/// `params` points at a valid `CUDA_MEMCPY3D`.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddMemcpyNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_MEMCPY3D,
    _ctx: *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe {
        add(node, deps, n, |d| {
            let copy = crate::memory::copy_3d_node(&read(params)?)?;
            cuda().graph_add_node(graph as u64, NodeOp::Memcpy(copy), d)
        })
    })
}

/// A set node's operation from its parameters (the runtime's `cudaMemsetParams` too).
///
/// # Safety
/// A non-null `p` points at valid parameters.
pub unsafe fn memset_op(p: *const CUDA_MEMSET_NODE_PARAMS) -> cuda::Result<NodeOp> {
    // SAFETY: the caller's promise.
    let p = unsafe { read(p) }?;
    let element = u64::from(p.elementSize);
    if ![1, 2, 4].contains(&element) || p.dst == 0 {
        return Err(Error::INVALID_VALUE);
    }
    let (width, height) = (p.width as u64, p.height as u64);
    let pitch = if height > 1 { p.pitch as u64 } else { width * element };
    Ok(NodeOp::Memset(SetNode { ptr: p.dst, pitch, value: p.value, element, width, height }))
}

/// A host node's operation from its parameters (the runtime's `cudaHostNodeParams` too).
///
/// # Safety
/// A non-null `p` points at valid parameters.
pub unsafe fn host_op(p: *const CUDA_HOST_NODE_PARAMS) -> cuda::Result<NodeOp> {
    // SAFETY: the caller's promise.
    let p = unsafe { read(p) }?;
    Ok(NodeOp::Host { f: p.fn_.ok_or(Error::INVALID_VALUE)?, data: p.userData as u64 })
}

/// `cuGraphMemsetNodeGetParams` and the runtime's.
///
/// # Safety
/// `params` is valid for a write.
pub unsafe fn memset_params(node: CUgraphNode, params: *mut CUDA_MEMSET_NODE_PARAMS) -> cuda::Result<()> {
    let NodeOp::Memset(m) = cuda().graph_node_op(node as u64)? else { return Err(Error::INVALID_VALUE) };
    let p = CUDA_MEMSET_NODE_PARAMS {
        dst: m.ptr,
        pitch: m.pitch as usize,
        value: m.value,
        elementSize: m.element as u32,
        width: m.width as usize,
        height: m.height as usize,
    };
    // SAFETY: the caller's promise.
    unsafe { out(params, p) }
}

/// `cuGraphHostNodeGetParams` and the runtime's.
///
/// # Safety
/// `params` is valid for a write.
pub unsafe fn host_params(node: CUgraphNode, params: *mut CUDA_HOST_NODE_PARAMS) -> cuda::Result<()> {
    let NodeOp::Host { f, data } = cuda().graph_node_op(node as u64)? else { return Err(Error::INVALID_VALUE) };
    // SAFETY: the caller's promise.
    unsafe { out(params, CUDA_HOST_NODE_PARAMS { fn_: Some(f), userData: data as *mut c_void }) }
}

/// # Safety
/// As [`memset_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphMemsetNodeGetParams(
    node: CUgraphNode,
    params: *mut CUDA_MEMSET_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { memset_params(node, params) })
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphMemsetNodeSetParams(
    node: CUgraphNode,
    params: *const CUDA_MEMSET_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { memset_op(params) }.and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecMemsetNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const CUDA_MEMSET_NODE_PARAMS,
    _ctx: *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { memset_op(params) }.and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

/// # Safety
/// As [`host_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphHostNodeGetParams(node: CUgraphNode, params: *mut CUDA_HOST_NODE_PARAMS) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { host_params(node, params) })
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphHostNodeSetParams(node: CUgraphNode, params: *const CUDA_HOST_NODE_PARAMS) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { host_op(params) }.and_then(|op| cuda().graph_node_set_op(node as u64, op)))
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecHostNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const CUDA_HOST_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { host_op(params) }.and_then(|op| cuda().graph_exec_set_op(exec as u64, node as u64, op)))
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddMemsetNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_MEMSET_NODE_PARAMS,
    _ctx: *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, memset_op(params)?, d)) })
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddHostNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_HOST_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, host_op(params)?, d)) })
}

/// # Safety
/// `deps` is valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddChildGraphNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    child: CUgraph,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, NodeOp::Graph(child as u64), d)) })
}

/// # Safety
/// `deps` is valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddEmptyNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, NodeOp::Empty, d)) })
}

// ---- dependencies, edges, node lists -----------------------------------------------------------------

/// # Safety
/// As [`edit_dependencies`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddDependencies_v2(
    graph: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { edit_dependencies(graph, from, to, edges, n, true) })
}

/// # Safety
/// As [`edit_dependencies`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphRemoveDependencies_v2(
    graph: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { edit_dependencies(graph, from, to, edges, n, false) })
}

/// # Safety
/// As [`get_edges`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphGetEdges_v2(
    graph: CUgraph,
    from: *mut CUgraphNode,
    to: *mut CUgraphNode,
    edges: *mut CUgraphEdgeData,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { get_edges(graph, from, to, edges, count) })
}

/// # Safety
/// As [`write_nodes_and_edges`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetDependencies_v2(
    node: CUgraphNode,
    deps: *mut CUgraphNode,
    edges: *mut CUgraphEdgeData,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda()
        .graph_node_dependencies(node as u64)
        .and_then(|l| unsafe { write_nodes_and_edges(&l, deps, edges, count) }))
}

/// # Safety
/// As [`write_nodes_and_edges`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetDependentNodes_v2(
    node: CUgraphNode,
    nodes: *mut CUgraphNode,
    edges: *mut CUgraphEdgeData,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda()
        .graph_node_dependents(node as u64)
        .and_then(|l| unsafe { write_nodes_and_edges(&l, nodes, edges, count) }))
}

/// # Safety
/// `clone` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cuGraphClone(clone: *mut CUgraph, graph: CUgraph) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_clone(graph as u64).and_then(|g| unsafe { out(clone, g as CUgraph) }))
}

#[cshell::export]
pub extern "C" fn cuGraphDestroyNode(node: CUgraphNode) -> CUresult {
    ret(cuda().graph_destroy_node(node as u64))
}

/// # Safety
/// `graph` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cuGraphChildGraphNodeGetGraph(node: CUgraphNode, graph: *mut CUgraph) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_child_graph(node as u64).and_then(|g| unsafe { out(graph, g as CUgraph) }))
}

#[cshell::export]
pub extern "C" fn cuGraphExecChildGraphNodeSetParams(exec: CUgraphExec, node: CUgraphNode, child: CUgraph) -> CUresult {
    ret(cuda().graph_exec_child_graph_set_params(exec as u64, node as u64, child as u64))
}

/// # Safety
/// `graph` is valid for a write of a handle.
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetContainingGraph(node: CUgraphNode, graph: *mut CUgraph) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_graph(node as u64).and_then(|g| unsafe { out(graph, g as CUgraph) }))
}

/// `CUgraphExecUpdateResultInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct CUgraphExecUpdateResultInfo {
    pub result: i32,
    pub errorNode: CUgraphNode,
    pub errorFromNode: CUgraphNode,
}

/// `cuGraphExecUpdate_v2` and `cudaGraphExecUpdate`: on failure `info` names the result and the node.
///
/// # Safety
/// `info` is valid for a write.
pub unsafe fn exec_update(
    exec: CUgraphExec,
    graph: CUgraph,
    info: *mut CUgraphExecUpdateResultInfo,
) -> cuda::Result<()> {
    if info.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let (result, code, node) = match cuda().graph_exec_update(exec as u64, graph as u64) {
        Ok(()) => (Ok(()), 0, 0),
        Err((e, failure)) => (Err(e), failure.map_or(1, |f| f.result), failure.map_or(0, |f| f.node)),
    };
    let c = CUgraphExecUpdateResultInfo {
        result: code,
        errorNode: node as CUgraphNode,
        errorFromNode: std::ptr::null_mut(),
    };
    // SAFETY: the caller's promise.
    unsafe { info.write_unaligned(c) };
    result
}

/// # Safety
/// As [`exec_update`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecUpdate_v2(
    exec: CUgraphExec,
    graph: CUgraph,
    info: *mut CUgraphExecUpdateResultInfo,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { exec_update(exec, graph, info) })
}

// ---- the CUDA 10/11 forms (before edge data and library kernels) -------------------------------------

/// `CUDA_KERNEL_NODE_PARAMS_v1`: the CUDA 12 structure without `kern` and `ctx`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct CUDA_KERNEL_NODE_PARAMS_v1 {
    pub func: CUfunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub sharedMemBytes: u32,
    pub kernelParams: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// The CUDA 12 form of old parameters (read as the old, shorter structure).
///
/// # Safety
/// A non-null `p` points at a valid `CUDA_KERNEL_NODE_PARAMS_v1`.
unsafe fn kernel_params_v1(p: *const CUDA_KERNEL_NODE_PARAMS_v1) -> cuda::Result<CUDA_KERNEL_NODE_PARAMS> {
    // SAFETY: the caller's promise.
    let p = unsafe { read(p) }?;
    Ok(CUDA_KERNEL_NODE_PARAMS {
        func: p.func,
        gridDimX: p.grid[0],
        gridDimY: p.grid[1],
        gridDimZ: p.grid[2],
        blockDimX: p.block[0],
        blockDimY: p.block[1],
        blockDimZ: p.block[2],
        sharedMemBytes: p.sharedMemBytes,
        kernelParams: p.kernelParams,
        extra: p.extra,
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    })
}

/// # Safety
/// As [`cuGraphAddKernelNode_v2`], with the old structure.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddKernelNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: the caller's promise.
    match unsafe { kernel_params_v1(params) } {
        Ok(p) => unsafe { cuGraphAddKernelNode_v2(node, graph, deps, n, &p) },
        Err(e) => ret(Err(e)),
    }
}

/// # Safety
/// `params` is valid for a write of the old structure.
#[cshell::export]
pub unsafe extern "C" fn cuGraphKernelNodeGetParams(
    node: CUgraphNode,
    params: *mut CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    if params.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let mut p = std::mem::MaybeUninit::<CUDA_KERNEL_NODE_PARAMS>::uninit();
    // SAFETY: a local structure; then the caller's promise.
    unsafe {
        let r = cuGraphKernelNodeGetParams_v2(node, p.as_mut_ptr());
        if r == 0 {
            let p = p.assume_init();
            let old = CUDA_KERNEL_NODE_PARAMS_v1 {
                func: p.func,
                grid: [p.gridDimX, p.gridDimY, p.gridDimZ],
                block: [p.blockDimX, p.blockDimY, p.blockDimZ],
                sharedMemBytes: p.sharedMemBytes,
                kernelParams: p.kernelParams,
                extra: p.extra,
            };
            params.write_unaligned(old);
        }
        r
    }
}

/// # Safety
/// As [`cuGraphAddKernelNode`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphKernelNodeSetParams(
    node: CUgraphNode,
    params: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: the caller's promise.
    match unsafe { kernel_params_v1(params) } {
        Ok(p) => unsafe { cuGraphKernelNodeSetParams_v2(node, &p) },
        Err(e) => ret(Err(e)),
    }
}

/// # Safety
/// As [`cuGraphAddKernelNode`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecKernelNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: the caller's promise.
    match unsafe { kernel_params_v1(params) } {
        Ok(p) => unsafe { cuGraphExecKernelNodeSetParams_v2(exec, node, &p) },
        Err(e) => ret(Err(e)),
    }
}

/// # Safety
/// `from` and `to` are valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddDependencies(
    graph: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    n: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { edit_dependencies(graph, from, to, std::ptr::null(), n, true) })
}

/// # Safety
/// `from` and `to` are valid for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphRemoveDependencies(
    graph: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    n: usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { edit_dependencies(graph, from, to, std::ptr::null(), n, false) })
}

/// # Safety
/// As [`get_edges`] without edge data.
#[cshell::export]
pub unsafe extern "C" fn cuGraphGetEdges(
    graph: CUgraph,
    from: *mut CUgraphNode,
    to: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { get_edges(graph, from, to, std::ptr::null_mut(), count) })
}

/// # Safety
/// As [`write_list`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetDependencies(
    node: CUgraphNode,
    deps: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuGraphNodeGetDependencies_v2(node, deps, std::ptr::null_mut(), count) }
}

/// # Safety
/// As [`write_list`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetDependentNodes(
    node: CUgraphNode,
    nodes: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuGraphNodeGetDependentNodes_v2(node, nodes, std::ptr::null_mut(), count) }
}

/// The CUDA 10.2 form: the failing node and the result written separately.
///
/// # Safety
/// `error_node` and `result` are valid for writes.
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecUpdate(
    exec: CUgraphExec,
    graph: CUgraph,
    error_node: *mut CUgraphNode,
    result: *mut i32,
) -> CUresult {
    if error_node.is_null() || result.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    let mut info =
        CUgraphExecUpdateResultInfo { result: 0, errorNode: std::ptr::null_mut(), errorFromNode: std::ptr::null_mut() };
    // SAFETY: a local structure; then the caller's promise.
    unsafe {
        let r = exec_update(exec, graph, &mut info);
        error_node.write_unaligned(info.errorNode);
        result.write_unaligned(info.result);
        ret(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structures_have_cuda_layouts() {
        assert_eq!(std::mem::size_of::<CUDA_KERNEL_NODE_PARAMS>(), 72);
        assert_eq!(std::mem::size_of::<CUDA_KERNEL_NODE_PARAMS_v1>(), 56);
        assert_eq!(std::mem::offset_of!(CUDA_KERNEL_NODE_PARAMS, kernelParams), 40);
        assert_eq!(std::mem::size_of::<CUDA_MEMSET_NODE_PARAMS>(), 40);
        assert_eq!(std::mem::size_of::<CUDA_HOST_NODE_PARAMS>(), 16);
        assert_eq!(std::mem::size_of::<CUgraphEdgeData>(), 8);
        assert_eq!(std::mem::size_of::<CUgraphExecUpdateResultInfo>(), 24);
    }
}
