//! Event and memory nodes of graphs, node enabling, the graph memory attributes, ids and the Graphviz file
//! (`cuGraphDebugDotPrint`), through the driver
//! API; the runtime's `cudaGraph*` forms take the same structures and call the shared functions here. The
//! semantics are `cuda::graph` (events) and `cuda::graph_memory` (allocations).

use std::ffi::c_void;
use std::os::unix::ffi::OsStrExt;

use cuda::graph_memory::GraphMemAttr;
use cuda::{Error, NodeOp};

use crate::abi::{CUdeviceptr, CUmemAccessDesc, CUmemLocation, CUmemPoolProps};
use crate::error::CUresult;
use crate::graph::{CUgraph, CUgraphExec, CUgraphNode};
use crate::graph_edit::add;
use crate::{cuda, out, ret};

/// `CUevent`: an opaque handle.
pub type CUevent = *mut c_void;

/// `CUDA_MEM_ALLOC_NODE_PARAMS` (and `cudaMemAllocNodeParams`): the pool's properties, peer access, the
/// size, and the address the node gets.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct CUDA_MEM_ALLOC_NODE_PARAMS {
    pub poolProps: CUmemPoolProps,
    pub accessDescs: *const CUmemAccessDesc,
    pub accessDescCount: usize,
    pub bytesize: usize,
    pub dptr: CUdeviceptr,
}

/// Node type `kind`'s event (`cuGraphEventRecordNodeGetEvent`, `cuGraphEventWaitNodeGetEvent`).
///
/// # Safety
/// `event` is valid for a write of a handle.
pub unsafe fn node_event(node: CUgraphNode, record: bool, event: *mut CUevent) -> cuda::Result<()> {
    let e = match (cuda().graph_node_op(node as u64)?, record) {
        (NodeOp::EventRecord(e), true) | (NodeOp::EventWait(e), false) => e,
        _ => return Err(Error::INVALID_VALUE),
    };
    // SAFETY: the caller's promise.
    unsafe { out(event, e as CUevent) }
}

/// An event node's operation (the core checks that the event exists).
fn event_op(event: CUevent, record: bool) -> NodeOp {
    let e = event as u64;
    if record {
        NodeOp::EventRecord(e)
    } else {
        NodeOp::EventWait(e)
    }
}

/// `cuGraphAddEventRecordNode`/`WaitNode` (`record` false) and the runtime's.
///
/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
pub unsafe fn add_event_node(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    event: CUevent,
    record: bool,
) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    unsafe { add(node, deps, n, |d| cuda().graph_add_node(graph as u64, event_op(event, record), d)) }
}

/// Sets an event node's event in the graph (`exec` null) or in an executable graph.
pub fn set_node_event(exec: CUgraphExec, node: CUgraphNode, record: bool, event: CUevent) -> cuda::Result<()> {
    let op = event_op(event, record);
    if exec.is_null() {
        cuda().graph_node_set_op(node as u64, op)
    } else {
        cuda().graph_exec_set_op(exec as u64, node as u64, op)
    }
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddEventRecordNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    event: CUevent,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add_event_node(node, graph, deps, n, event, true) })
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddEventWaitNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    event: CUevent,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add_event_node(node, graph, deps, n, event, false) })
}

/// # Safety
/// `event` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphEventRecordNodeGetEvent(node: CUgraphNode, event: *mut CUevent) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { node_event(node, true, event) })
}

/// # Safety
/// `event` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphEventWaitNodeGetEvent(node: CUgraphNode, event: *mut CUevent) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { node_event(node, false, event) })
}

#[cshell::export]
pub extern "C" fn cuGraphEventRecordNodeSetEvent(node: CUgraphNode, event: CUevent) -> CUresult {
    ret(set_node_event(std::ptr::null_mut(), node, true, event))
}

#[cshell::export]
pub extern "C" fn cuGraphEventWaitNodeSetEvent(node: CUgraphNode, event: CUevent) -> CUresult {
    ret(set_node_event(std::ptr::null_mut(), node, false, event))
}

#[cshell::export]
pub extern "C" fn cuGraphExecEventRecordNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent) -> CUresult {
    ret(set_node_event(exec, node, true, event))
}

#[cshell::export]
pub extern "C" fn cuGraphExecEventWaitNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent) -> CUresult {
    ret(set_node_event(exec, node, false, event))
}

// ---- memory nodes -----------------------------------------------------------------------------------

/// `cuGraphAddMemAllocNode` and `cudaGraphAddMemAllocNode`: pinned memory (on the device or, since lockstep's
/// device memory is the host's, a host or managed location alike) of `bytesize` bytes, whose address is
/// written to `params.dptr`; peer access lists are accepted as they are (one device).
///
/// # Safety
/// `node` is valid for a write, `deps` for `n` reads, `params` for a read and a write.
pub unsafe fn add_mem_alloc_node(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> cuda::Result<()> {
    if params.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let p = unsafe { &mut *params };
    if p.poolProps.allocType != 1 || p.poolProps.location.type_ == 0 || p.poolProps.handleTypes != 0 {
        return Err(Error::INVALID_VALUE);
    }
    let mut ptr = 0;
    // SAFETY: the caller's promise.
    unsafe {
        add(node, deps, n, |d| {
            let (h, addr) = cuda().graph_add_mem_alloc_node(graph as u64, d, p.bytesize as u64)?;
            ptr = addr;
            Ok(h)
        })?;
    }
    p.dptr = ptr;
    Ok(())
}

/// # Safety
/// As [`add_mem_alloc_node`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddMemAllocNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add_mem_alloc_node(node, graph, deps, n, params) })
}

/// # Safety
/// `node` is valid for a write; `deps` for `n` reads.
#[cshell::export]
pub unsafe extern "C" fn cuGraphAddMemFreeNode(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    ptr: CUdeviceptr,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { add(node, deps, n, |d| cuda().graph_add_mem_free_node(graph as u64, d, ptr)) })
}

/// `cuGraphMemAllocNodeGetParams` and the runtime's: device memory, no peer access list.
///
/// # Safety
/// `params` is valid for a write.
pub unsafe fn mem_alloc_node_params(node: CUgraphNode, params: *mut CUDA_MEM_ALLOC_NODE_PARAMS) -> cuda::Result<()> {
    let NodeOp::MemAlloc { ptr, size } = cuda().graph_node_op(node as u64)? else {
        return Err(Error::INVALID_VALUE);
    };
    let p = CUDA_MEM_ALLOC_NODE_PARAMS {
        poolProps: CUmemPoolProps {
            allocType: 1,
            handleTypes: 0,
            location: CUmemLocation { type_: 1, id: 0 },
            win32SecurityAttributes: std::ptr::null_mut(),
            maxSize: 0,
            usage: 0,
            reserved: [0; 54],
        },
        accessDescs: std::ptr::null(),
        accessDescCount: 0,
        bytesize: size as usize,
        dptr: ptr,
    };
    // SAFETY: the caller's promise.
    unsafe { out(params, p) }
}

/// # Safety
/// As [`mem_alloc_node_params`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphMemAllocNodeGetParams(
    node: CUgraphNode,
    params: *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { mem_alloc_node_params(node, params) })
}

/// `cuGraphMemFreeNodeGetParams` and the runtime's: the address freed.
///
/// # Safety
/// `ptr` is valid for a write of an address.
pub unsafe fn mem_free_node_ptr(node: CUgraphNode, ptr: *mut CUdeviceptr) -> cuda::Result<()> {
    let NodeOp::MemFree(p) = cuda().graph_node_op(node as u64)? else {
        return Err(Error::INVALID_VALUE);
    };
    // SAFETY: the caller's promise.
    unsafe { out(ptr, p) }
}

/// # Safety
/// As [`mem_free_node_ptr`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphMemFreeNodeGetParams(node: CUgraphNode, ptr: *mut CUdeviceptr) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { mem_free_node_ptr(node, ptr) })
}

/// `cuDeviceGetGraphMemAttribute` and the runtime's: a `cuuint64_t`.
///
/// # Safety
/// `value` is valid for a write of a `u64`.
pub unsafe fn graph_mem_attribute(device: i32, attr: i32, value: *mut c_void) -> cuda::Result<()> {
    if device != 0 {
        return Err(Error::INVALID_DEVICE);
    }
    let v = cuda().graph_mem_attribute(GraphMemAttr::from_raw(attr)?);
    // SAFETY: the caller's promise.
    unsafe { out(value.cast::<u64>(), v) }
}

/// `cuDeviceSetGraphMemAttribute` and the runtime's: the high watermarks can be reset to 0.
///
/// # Safety
/// `value` is valid for a read of a `u64`.
pub unsafe fn set_graph_mem_attribute(device: i32, attr: i32, value: *mut c_void) -> cuda::Result<()> {
    if device != 0 {
        return Err(Error::INVALID_DEVICE);
    }
    if value.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let v = unsafe { value.cast::<u64>().read_unaligned() };
    cuda().set_graph_mem_attribute(GraphMemAttr::from_raw(attr)?, v)
}

/// # Safety
/// As [`graph_mem_attribute`].
#[cshell::export]
pub unsafe extern "C" fn cuDeviceGetGraphMemAttribute(device: i32, attr: i32, value: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { graph_mem_attribute(device, attr, value) })
}

/// # Safety
/// As [`set_graph_mem_attribute`].
#[cshell::export]
pub unsafe extern "C" fn cuDeviceSetGraphMemAttribute(device: i32, attr: i32, value: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_graph_mem_attribute(device, attr, value) })
}

/// Graph memory goes back as soon as no graph holds it: nothing is kept to trim.
#[cshell::export]
pub extern "C" fn cuDeviceGraphMemTrim(device: i32) -> CUresult {
    ret(if device == 0 { Ok(()) } else { Err(Error::INVALID_DEVICE) })
}

// ---- enabling nodes ---------------------------------------------------------------------------------

#[cshell::export]
pub extern "C" fn cuGraphNodeSetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: u32) -> CUresult {
    ret(cuda().graph_node_set_enabled(exec as u64, node as u64, enabled != 0))
}

/// `cuGraphNodeGetEnabled` and the runtime's.
///
/// # Safety
/// `enabled` is valid for a write.
pub unsafe fn node_enabled(exec: CUgraphExec, node: CUgraphNode, enabled: *mut u32) -> cuda::Result<()> {
    let on = cuda().graph_node_enabled(exec as u64, node as u64)?;
    // SAFETY: the caller's promise.
    unsafe { out(enabled, u32::from(on)) }
}

/// # Safety
/// As [`node_enabled`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: *mut u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { node_enabled(exec, node, enabled) })
}

// ---- ids, clones, flags, the Graphviz file ------------------------------------------------------------

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphGetId(graph: CUgraph, id: *mut u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_id(graph as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecGetId(exec: CUgraphExec, id: *mut u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_exec_id(exec as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `flags` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphExecGetFlags(exec: CUgraphExec, flags: *mut u64) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_exec_flags(exec as u64).and_then(|v| unsafe { out(flags, v) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetLocalId(node: CUgraphNode, id: *mut u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_local_id(node as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `id` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeGetToolsId(node: CUgraphNode, id: *mut u64) -> CUresult {
    // SAFETY: the caller's promise.
    ret(cuda().graph_node_tools_id(node as u64).and_then(|v| unsafe { out(id, v) }))
}

/// # Safety
/// `node` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuGraphNodeFindInClone(
    node: *mut CUgraphNode,
    original: CUgraphNode,
    clone: CUgraph,
) -> CUresult {
    let found = cuda().graph_node_find_in_clone(original as u64, clone as u64);
    // SAFETY: the caller's promise.
    ret(found.and_then(|n| unsafe { out(node, n as CUgraphNode) }))
}

/// `cuGraphDebugDotPrint` and `cudaGraphDebugDotPrint`.
///
/// # Safety
/// `path` is a NUL-terminated string.
pub unsafe fn debug_dot_print(graph: CUgraph, path: *const std::ffi::c_char) -> cuda::Result<()> {
    if path.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes();
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(bytes));
    cuda().graph_debug_dot_print(graph as u64, path)
}

/// # Safety
/// As [`debug_dot_print`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphDebugDotPrint(graph: CUgraph, path: *const std::ffi::c_char, _flags: u32) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { debug_dot_print(graph, path) })
}

// ---- kernel node attributes ---------------------------------------------------------------------------

/// `cuGraphKernelNodeGetAttribute` and the runtime's: the 64-byte value union.
///
/// # Safety
/// `value` is valid for a write of 64 bytes.
pub unsafe fn kernel_node_attribute(node: CUgraphNode, attr: i32, value: *mut c_void) -> cuda::Result<()> {
    if value.is_null() {
        return Err(Error::INVALID_VALUE);
    }
    let v = cuda().graph_kernel_node_attribute(node as u64, attr)?;
    // SAFETY: the caller's promise.
    unsafe { crate::stream::attr_value_out(value, v) }
}

/// `cuGraphKernelNodeSetAttribute` and the runtime's (see `cuda::graph_attributes`).
///
/// # Safety
/// `value` is valid for a read of 64 bytes.
pub unsafe fn set_kernel_node_attribute(node: CUgraphNode, attr: i32, value: *const c_void) -> cuda::Result<()> {
    // SAFETY: the caller's promise.
    let v = unsafe { crate::stream::attr_value_in(value) }?;
    cuda().graph_kernel_node_set_attribute(node as u64, attr, v)
}

/// # Safety
/// As [`kernel_node_attribute`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphKernelNodeGetAttribute(node: CUgraphNode, attr: i32, value: *mut c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { kernel_node_attribute(node, attr, value) })
}

/// # Safety
/// As [`set_kernel_node_attribute`].
#[cshell::export]
pub unsafe extern "C" fn cuGraphKernelNodeSetAttribute(node: CUgraphNode, attr: i32, value: *const c_void) -> CUresult {
    // SAFETY: the caller's promise.
    ret(unsafe { set_kernel_node_attribute(node, attr, value) })
}

#[cshell::export]
pub extern "C" fn cuGraphKernelNodeCopyAttributes(dst: CUgraphNode, src: CUgraphNode) -> CUresult {
    ret(cuda().graph_kernel_node_copy_attributes(dst as u64, src as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structures_have_cuda_layouts() {
        assert_eq!(std::mem::size_of::<CUmemPoolProps>(), 88);
        assert_eq!(std::mem::size_of::<CUDA_MEM_ALLOC_NODE_PARAMS>(), 120);
        assert_eq!(std::mem::offset_of!(CUDA_MEM_ALLOC_NODE_PARAMS, dptr), 112);
    }
}
