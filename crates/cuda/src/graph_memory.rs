//! Graph allocations: memory allocation and free nodes (`cudaGraphAddMemAllocNode`,
//! `cudaGraphAddMemFreeNode`, and `cudaMallocAsync`/`cudaFreeAsync` on a capturing stream).
//!
//! As in CUDA, an allocation's address is fixed when its node is made, and the memory is the graph's from
//! then on: running the allocation node makes it *live* (the program may use it), a free node, `cudaFree` or
//! `cudaFreeAsync` ends that, and the graph may then run it again; launching a graph whose allocation is still
//! live fails with `cudaErrorInvalidValue`, unless it was instantiated with
//! `cudaGraphInstantiateFlagAutoFreeOnLaunch`. lockstep allocates the memory when the node is made and gives
//! it back once neither a graph nor an executable graph holds the node and it is not live. Graphs with
//! memory nodes cannot be cloned or become child graphs (CUDA's rule).

use crate::graph::{NodeOp, State};
use crate::user_object::Doomed;
use crate::{Cuda, Error, Result};

/// `cudaGraphInstantiateFlagAutoFreeOnLaunch`.
pub const AUTO_FREE_ON_LAUNCH: u64 = 0x1;

#[derive(Debug)]
pub(crate) struct GraphAlloc {
    size: u64,
    /// Allocation nodes (in graphs) and executable graphs that hold it.
    refs: u32,
    live: bool,
}

impl GraphAlloc {
    /// A new allocation, held by the node made for it.
    pub(crate) fn new(size: u64) -> GraphAlloc {
        GraphAlloc { size, refs: 1, live: false }
    }
}

/// `cudaGraphMemAttributeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphMemAttr {
    UsedMemCurrent = 0,
    UsedMemHigh = 1,
    ReservedMemCurrent = 2,
    ReservedMemHigh = 3,
}

impl GraphMemAttr {
    pub fn from_raw(v: i32) -> Result<GraphMemAttr> {
        Ok(match v {
            0 => GraphMemAttr::UsedMemCurrent,
            1 => GraphMemAttr::UsedMemHigh,
            2 => GraphMemAttr::ReservedMemCurrent,
            3 => GraphMemAttr::ReservedMemHigh,
            _ => return Err(Error::INVALID_VALUE),
        })
    }
}

/// Whether an operation is a memory node's.
pub(crate) fn is_memory_op(op: &NodeOp) -> bool {
    matches!(op, NodeOp::MemAlloc { .. } | NodeOp::MemFree(_))
}

impl State {
    fn used_and_reserved(&self) -> (u64, u64) {
        let used = self.allocs.values().filter(|a| a.live).map(|a| a.size).sum();
        (used, self.allocs.values().map(|a| a.size).sum())
    }

    fn note_watermarks(&mut self) {
        let (used, reserved) = self.used_and_reserved();
        self.mem_high.0 = self.mem_high.0.max(used);
        self.mem_high.1 = self.mem_high.1.max(reserved);
    }

    /// Another holder of the allocation at `ptr` (a copy of its node in an executable graph).
    pub(crate) fn retain_alloc(&mut self, op: &NodeOp) {
        if let NodeOp::MemAlloc { ptr, .. } = op {
            if let Some(a) = self.allocs.get_mut(ptr) {
                a.refs += 1;
            }
        }
    }

    /// A holder of the allocation is gone; the memory goes back once no one holds it and it is not live.
    pub(crate) fn release_alloc(&mut self, op: &NodeOp) {
        if let NodeOp::MemAlloc { ptr, .. } = op {
            if let Some(a) = self.allocs.get_mut(ptr) {
                a.refs = a.refs.saturating_sub(1);
                self.maybe_release(*ptr);
            }
        }
    }

    fn maybe_release(&mut self, ptr: u64) {
        if self.allocs.get(&ptr).is_some_and(|a| a.refs == 0 && !a.live) {
            self.allocs.remove(&ptr);
            self.doomed.push(Doomed::Memory(ptr));
        }
    }

    /// A launch is about to run these steps: their allocations must not be live (or are freed first, with
    /// [`AUTO_FREE_ON_LAUNCH`]).
    pub(crate) fn check_allocs_before_launch(&mut self, steps: &[NodeOp], flags: u64) -> Result<()> {
        for op in steps {
            if let NodeOp::MemAlloc { ptr, .. } = op {
                let a = self.allocs.get_mut(ptr).ok_or(Error::INVALID_VALUE)?;
                if a.live {
                    if flags & AUTO_FREE_ON_LAUNCH == 0 {
                        return Err(Error::INVALID_VALUE);
                    }
                    a.live = false;
                }
            }
        }
        Ok(())
    }

    /// An allocation node ran.
    pub(crate) fn graph_alloc_runs(&mut self, ptr: u64) -> Result<()> {
        self.allocs.get_mut(&ptr).ok_or(Error::INVALID_VALUE)?.live = true;
        self.note_watermarks();
        Ok(())
    }

    /// A free node ran (or the program freed a graph allocation): freeing one that is not live is an error.
    pub(crate) fn graph_free_runs(&mut self, ptr: u64) -> Result<()> {
        let a = self.allocs.get_mut(&ptr).filter(|a| a.live).ok_or(Error::INVALID_VALUE)?;
        a.live = false;
        self.maybe_release(ptr);
        Ok(())
    }

    pub(crate) fn is_graph_alloc(&self, ptr: u64) -> bool {
        self.allocs.contains_key(&ptr)
    }
}

impl Cuda {
    /// `cudaGraphAddMemAllocNode`: `size` bytes of device memory at an address fixed now.
    pub fn graph_add_mem_alloc_node(&self, graph: u64, deps: &[u64], size: u64) -> Result<(u64, u64)> {
        if size == 0 {
            return Err(Error::INVALID_VALUE);
        }
        if !self.graphs.lock().graph_exists(graph) {
            return Err(Error::INVALID_VALUE);
        }
        let ptr = self.device_malloc(size)?;
        let node = {
            let mut s = self.graphs.lock();
            let node = s.add_node(graph, NodeOp::MemAlloc { ptr, size }, deps);
            s.note_watermarks();
            node
        };
        match node {
            Ok(n) => Ok((n, ptr)),
            Err(e) => {
                let _ = self.free_now(ptr);
                Err(e)
            }
        }
    }

    /// `cudaGraphAddMemFreeNode`: `ptr` must be a graph allocation.
    pub fn graph_add_mem_free_node(&self, graph: u64, deps: &[u64], ptr: u64) -> Result<u64> {
        let mut s = self.graphs.lock();
        if !s.is_graph_alloc(ptr) {
            return Err(Error::INVALID_VALUE);
        }
        s.add_node(graph, NodeOp::MemFree(ptr), deps)
    }

    /// `cudaFree` and `cudaFreeAsync` of a graph allocation end its liveness (the graph keeps the memory);
    /// `None` for other pointers.
    pub(crate) fn free_graph_alloc(&self, ptr: u64) -> Option<Result<()>> {
        self.with_graphs(|s| s.is_graph_alloc(ptr).then(|| s.graph_free_runs(ptr)))
    }

    /// `cudaDeviceGetGraphMemAttribute`: the graph allocations' bytes that are live (used) and that exist
    /// (reserved), and their high watermarks.
    pub fn graph_mem_attribute(&self, attr: GraphMemAttr) -> u64 {
        let s = self.graphs.lock();
        let (used, reserved) = s.used_and_reserved();
        match attr {
            GraphMemAttr::UsedMemCurrent => used,
            GraphMemAttr::ReservedMemCurrent => reserved,
            GraphMemAttr::UsedMemHigh => s.mem_high.0.max(used),
            GraphMemAttr::ReservedMemHigh => s.mem_high.1.max(reserved),
        }
    }

    /// `cudaDeviceSetGraphMemAttribute`: only the high watermarks can be set, and only to 0 (a reset).
    pub fn set_graph_mem_attribute(&self, attr: GraphMemAttr, value: u64) -> Result<()> {
        let mut s = self.graphs.lock();
        match (attr, value) {
            (GraphMemAttr::UsedMemHigh, 0) => s.mem_high.0 = 0,
            (GraphMemAttr::ReservedMemHigh, 0) => s.mem_high.1 = 0,
            _ => return Err(Error::INVALID_VALUE),
        }
        Ok(())
    }
}

impl Cuda {
    /// `cudaMallocAsync` and `cudaMallocFromPoolAsync` (`pool` `None`: the device's current pool). On a
    /// capturing stream the allocation becomes an allocation node of the capture's graph (its address fixed
    /// now, as CUDA does).
    pub fn malloc_async(&self, size: u64, pool: Option<u64>, stream: u64) -> Result<u64> {
        let key = self.stream_key(stream)?;
        if size > 0 && self.stream_is_capturing(key)? {
            let ptr = self.device_malloc(size)?;
            return match self.capture(key, || Ok(NodeOp::MemAlloc { ptr, size })) {
                Ok(true) => {
                    self.graphs.lock().note_watermarks();
                    Ok(ptr)
                }
                Ok(false) => Ok(ptr), // the capture ended meanwhile: an ordinary allocation
                Err(e) => {
                    let _ = self.free_now(ptr);
                    Err(e)
                }
            };
        }
        self.enter_stream(stream)?;
        self.malloc_from_pool(size, pool)
    }

    /// `cudaFreeAsync`. On a capturing stream, freeing a graph allocation becomes a free node; freeing other
    /// memory while capturing is `cudaErrorStreamCaptureUnsupported` (and invalidates the capture).
    pub fn free_async(&self, ptr: u64, stream: u64) -> Result<()> {
        let key = self.stream_key(stream)?;
        if self.graphs.lock().is_graph_alloc(ptr) && self.capture(key, || Ok(NodeOp::MemFree(ptr)))? {
            return Ok(());
        }
        self.enter_stream(stream)?;
        self.free(ptr)
    }
}
