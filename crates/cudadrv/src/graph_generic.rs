//! The generic node functions of CUDA 12.2+ (`cuGraphAddNode`, `cuGraphNodeSetParams`,
//! `cuGraphNodeGetParams`, `cuGraphExecNodeSetParams`, and the runtime's `cudaGraph*` forms): a node type and
//! a 232-byte union of per-type parameters. The runtime's union has the driver's layout except for the
//! kernel and copy members, which each shell reads and writes through a [`Flavor`].

use std::ffi::c_void;

use cuda::{CallConfig, CopyNode, Dim3, Error, Kernel, NodeOp, NodeType};

use crate::abi::CUDA_MEMCPY3D;
use crate::error::CUresult;
use crate::graph::{CUgraph, CUgraphExec, CUgraphNode};
use crate::graph_edit::{
    add, host_op, host_params, memset_op, memset_params, CUgraphEdgeData, CUDA_KERNEL_NODE_PARAMS,
};
use crate::graph_nodes::{mem_alloc_node_params, mem_free_node_ptr, CUDA_MEM_ALLOC_NODE_PARAMS};
use crate::{cuda, ret};

/// `CUgraphNodeParams` (and `cudaGraphNodeParams`): the node type, and the union of parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphNodeParams {
    /// `CUgraphNodeType`.
    pub type_: i32,
    pub reserved0: [i32; 3],
    pub union: [u64; 29],
    pub reserved2: i64,
}

/// How one API's kernel and copy members are read and written.
#[derive(Debug)]
pub struct Flavor {
    /// The kernel, its launch shape and its `kernelParams` from the kernel member.
    pub kernel: unsafe fn(*const u8) -> cuda::Result<(Kernel, CallConfig, *const *const c_void)>,
    /// Writes the kernel member: kernel, grid, block, shared bytes, `kernelParams`.
    pub kernel_out: unsafe fn(*mut u8, Kernel, Dim3, Dim3, u64, u64),
    /// The copy of the copy member's parameters (after its flags, reserved word and context: offset 16).
    pub memcpy: unsafe fn(*const u8) -> cuda::Result<CopyNode>,
    /// Writes the copy member's parameters.
    pub memcpy_out: unsafe fn(*mut u8, &CopyNode),
}

/// Offset of the copy parameters in the copy member.
const COPY_PARAMS: usize = 16;
/// `CUgraphChildGraphNodeOwnership`: the node gets a clone, or the graph itself.
const OWNERSHIP_MOVE: i32 = 1;

fn warn_unsupported(kind: i32) {
    let name = match kind {
        8 => "external semaphore signal",
        9 => "external semaphore wait",
        12 => "batch memory operation",
        13 => "conditional",
        14 => "batch memcpy",
        _ => "unknown",
    };
    cuda().warn(
        &format!("graph node type {kind}"),
        &format!(
            "warning: graph nodes of type {kind} ({name}) are not supported by lockstep; adding or changing one \
             fails with the not-supported error"
        ),
    );
}

/// The operation of a node of any kind but kernels (a kernel node's arguments are copied by the core).
///
/// # Safety
/// `u` points at the union, valid for the member of `kind`.
unsafe fn op_of(f: &Flavor, kind: i32, u: *const u8) -> cuda::Result<NodeOp> {
    // SAFETY: the caller's promise.
    unsafe {
        let word = |i: usize| u.cast::<u64>().add(i).read_unaligned();
        Ok(match kind {
            1 => NodeOp::Memcpy((f.memcpy)(u.add(COPY_PARAMS))?),
            2 => memset_op(u.cast())?,
            3 => host_op(u.cast())?,
            5 => NodeOp::Empty,
            6 => NodeOp::EventWait(word(0)),
            7 => NodeOp::EventRecord(word(0)),
            0 | 4 | 10 | 11 => return Err(Error::INVALID_VALUE), // handled by the callers
            _ => {
                warn_unsupported(kind);
                return Err(Error::NOT_SUPPORTED);
            }
        })
    }
}

/// `cuGraphAddNode` (all versions) and `cudaGraphAddNode`. An allocation node's address is written back
/// into the parameters.
///
/// # Safety
/// `node` is valid for a write, `deps` (and `edges`, if not null) for `n` reads, `params` for a read and a
/// write of the structure; a kernel member's `kernelParams` as for a launch.
pub unsafe fn add_node(
    f: &Flavor,
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
    params: *mut GraphNodeParams,
) -> cuda::Result<()> {
    if params.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    unsafe {
        crate::graph_edit::check_edges(edges, n)?;
        let kind = (*params).type_;
        let u = std::ptr::addr_of_mut!((*params).union).cast::<u8>();
        let c = cuda();
        let g = graph as u64;
        add(node, deps, n, |d| match kind {
            0 => {
                let (kernel, config, args) = (f.kernel)(u)?;
                c.graph_add_kernel_node(g, d, kernel, config, args)
            }
            4 => {
                let child = u.cast::<u64>().read_unaligned();
                let ownership = u.add(8).cast::<i32>().read_unaligned();
                if ownership == OWNERSHIP_MOVE {
                    c.graph_add_child_graph_moved(g, d, child)
                } else {
                    c.graph_add_node(g, NodeOp::Graph(child), d)
                }
            }
            10 => {
                let p = u.cast::<CUDA_MEM_ALLOC_NODE_PARAMS>();
                let mut alloc = p.read_unaligned();
                let mut out = std::ptr::null_mut();
                crate::graph_nodes::add_mem_alloc_node(&mut out, graph, d.as_ptr().cast(), d.len(), &mut alloc)?;
                p.write_unaligned(alloc);
                Ok(out as u64)
            }
            11 => c.graph_add_mem_free_node(g, d, u.cast::<u64>().read_unaligned()),
            _ => c.graph_add_node(g, op_of(f, kind, u)?, d),
        })
    }
}

/// `cuGraphNodeSetParams` and `cudaGraphNodeSetParams` (`exec` null), `cuGraphExecNodeSetParams` and
/// `cudaGraphExecNodeSetParams`: the type must be the node's; the parameters of child-graph, allocation and
/// free nodes cannot change.
///
/// # Safety
/// `params` is valid for a read of the structure; a kernel member's `kernelParams` as for a launch.
pub unsafe fn set_params(
    f: &Flavor,
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const GraphNodeParams,
) -> cuda::Result<()> {
    if params.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let c = cuda();
    // SAFETY: the caller's promise.
    unsafe {
        let kind = (*params).type_;
        let u = std::ptr::addr_of!((*params).union).cast::<u8>();
        if kind != c.graph_node_type(node as u64)? as i32 {
            return Err(Error::INVALID_VALUE);
        }
        match kind {
            0 => {
                let (kernel, config, args) = (f.kernel)(u)?;
                if exec.is_null() {
                    c.graph_kernel_node_set_params(node as u64, kernel, config, args)
                } else {
                    c.graph_exec_kernel_node_set_params(exec as u64, node as u64, kernel, config, args)
                }
            }
            4 | 10 | 11 => Err(Error::NOT_SUPPORTED),
            5 => Ok(()),
            _ => {
                let op = op_of(f, kind, u)?;
                if exec.is_null() {
                    c.graph_node_set_op(node as u64, op)
                } else {
                    c.graph_exec_set_op(exec as u64, node as u64, op)
                }
            }
        }
    }
}

/// `cuGraphNodeGetParams` and `cudaGraphNodeGetParams`: the node's type and parameters (a copy as unified
/// addresses with pitches, a child-graph node's own graph with clone ownership).
///
/// # Safety
/// `params` is valid for a write of the structure.
pub unsafe fn get_params(f: &Flavor, node: CUgraphNode, params: *mut GraphNodeParams) -> cuda::Result<()> {
    if params.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let c = cuda();
    let kind = c.graph_node_type(node as u64)?;
    let mut p = GraphNodeParams { type_: kind as i32, reserved0: [0; 3], union: [0; 29], reserved2: 0 };
    let u = p.union.as_mut_ptr().cast::<u8>();
    // SAFETY: a local union, large enough for every member written.
    unsafe {
        match (kind, c.graph_node_op(node as u64)?) {
            (NodeType::Kernel, _) => {
                let (kernel, grid, block, shared, pointers) = c.graph_kernel_node_params(node as u64)?;
                (f.kernel_out)(u, kernel, grid, block, shared, pointers);
            }
            (_, NodeOp::Memcpy(copy)) => (f.memcpy_out)(u.add(COPY_PARAMS), &copy),
            (_, NodeOp::Memset(_)) => memset_params(node, u.cast())?,
            (_, NodeOp::Host { .. }) => host_params(node, u.cast())?,
            (_, NodeOp::Graph(child)) => u.cast::<u64>().write_unaligned(child),
            (_, NodeOp::EventRecord(e) | NodeOp::EventWait(e)) => u.cast::<u64>().write_unaligned(e),
            (_, NodeOp::MemAlloc { .. }) => mem_alloc_node_params(node, u.cast())?,
            (_, NodeOp::MemFree(_)) => mem_free_node_ptr(node, u.cast())?,
            _ => {}
        }
        params.write_unaligned(p);
    }
    Ok(())
}

// ---- the driver's flavor and functions ---------------------------------------------------------------

/// # Safety
/// `u` points at a `CUDA_KERNEL_NODE_PARAMS`.
unsafe fn driver_kernel(u: *const u8) -> cuda::Result<(Kernel, CallConfig, *const *const c_void)> {
    // SAFETY: the caller's promise.
    let p = unsafe { u.cast::<CUDA_KERNEL_NODE_PARAMS>().read_unaligned() };
    let (kernel, config) = crate::graph_edit::kernel_launch(&p)?;
    Ok((kernel, config, p.kernelParams as *const *const c_void))
}

/// # Safety
/// `u` is valid for a write of a `CUDA_KERNEL_NODE_PARAMS`.
unsafe fn driver_kernel_out(u: *mut u8, kernel: Kernel, grid: Dim3, block: Dim3, shared: u64, pointers: u64) {
    // SAFETY: the caller's promise.
    unsafe {
        u.cast::<CUDA_KERNEL_NODE_PARAMS>()
            .write_unaligned(crate::graph_edit::kernel_params_of(kernel, grid, block, shared, pointers))
    }
}

/// # Safety
/// `u` points at a `CUDA_MEMCPY3D`.
unsafe fn driver_memcpy(u: *const u8) -> cuda::Result<CopyNode> {
    if u.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    crate::memory::copy_3d_node(&unsafe { u.cast::<CUDA_MEMCPY3D>().read_unaligned() })
}

/// # Safety
/// `u` is valid for a write of a `CUDA_MEMCPY3D`.
unsafe fn driver_memcpy_out(u: *mut u8, c: &CopyNode) {
    // SAFETY: the caller's promise.
    unsafe { u.cast::<CUDA_MEMCPY3D>().write_unaligned(crate::memory::copy_3d_params(c)) }
}

/// The driver API's kernel and copy members.
pub static DRIVER: Flavor = Flavor {
    kernel: driver_kernel,
    kernel_out: driver_kernel_out,
    memcpy: driver_memcpy,
    memcpy_out: driver_memcpy_out,
};

/// The CUDA 12.2 form, without edge data.
///
/// # Safety
/// As [`add_node`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *mut GraphNodeParams,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add_node(&DRIVER, node, graph, deps, std::ptr::null(), n, params) })
}

/// # Safety
/// As [`add_node`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddNode_v2(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
    params: *mut GraphNodeParams,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add_node(&DRIVER, node, graph, deps, edges, n, params) })
}

/// # Safety
/// As [`set_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeSetParams(node: CUgraphNode, params: *mut GraphNodeParams) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_params(&DRIVER, std::ptr::null_mut(), node, params) })
}

/// # Safety
/// As [`set_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *mut GraphNodeParams,
) -> CUresult {
    if exec.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: the caller's promise.
    ret(unsafe { set_params(&DRIVER, exec, node, params) })
}

/// # Safety
/// As [`get_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetParams(node: CUgraphNode, params: *mut GraphNodeParams) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { get_params(&DRIVER, node, params) })
}

/// # Safety
/// `params` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphMemcpyNodeGetParams(node: CUgraphNode, params: *mut CUDA_MEMCPY3D) -> CUresult {
    if params.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    match cuda().graph_node_op(node as u64) {
        Ok(NodeOp::Memcpy(c)) => {
            // SAFETY: the caller's promise.
            unsafe { params.write_unaligned(crate::memory::copy_3d_params(&c)) };
            ret(Ok(()))
        }
        Ok(_) => ret(Err(Error::INVALID_VALUE)),
        Err(e) => ret(Err(e)),
    }
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphMemcpyNodeSetParams(node: CUgraphNode, params: *const CUDA_MEMCPY3D) -> CUresult {
    // SAFETY: the caller's promise.
    let copy = unsafe { driver_memcpy(params.cast()) };
    ret(copy.and_then(|c| cuda().graph_node_set_op(node as u64, NodeOp::Memcpy(c))))
}

/// # Safety
/// `params` points at valid parameters.
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecMemcpyNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const CUDA_MEMCPY3D,
    _ctx: *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    let copy = unsafe { driver_memcpy(params.cast()) };
    ret(copy.and_then(|c| cuda().graph_exec_set_op(exec as u64, node as u64, NodeOp::Memcpy(c))))
}

alias! {
    cuGraphAddNode_v3 => cuGraphAddNode_v2(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, edges: *const CUgraphEdgeData, n: usize, params: *mut GraphNodeParams);
    cuGraphNodeSetParams_v2 => cuGraphNodeSetParams(node: CUgraphNode, params: *mut GraphNodeParams);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_has_cuda_layout() {
        assert_eq!(std::mem::size_of::<GraphNodeParams>(), 256);
        assert_eq!(std::mem::offset_of!(GraphNodeParams, union), 16);
        assert!(COPY_PARAMS + std::mem::size_of::<CUDA_MEMCPY3D>() <= 232);
    }
}
