//! CUDA Graphs: graphs of nodes (kernels, copies, sets, host functions, child graphs, empty nodes) built
//! explicitly or by stream capture (`capture.rs`), instantiated into executable graphs and launched.
//!
//! Streams are synchronous, so launching an executable graph runs its nodes one after another on the
//! stream, in a topological order of the dependency edges (Kahn's, ties broken by creation order): every
//! order the edges allow is a valid schedule. A node is the same operation the stream API would run, so a
//! kernel fault becomes the usual sticky error. Instantiation flattens child graphs into the order and
//! copies every node's parameters: later changes to the graph do not reach the executable graph, as in
//! CUDA; `cudaGraphExec*SetParams` and `cudaGraphExecUpdate` change the executable graph's copies.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use device::Dim3;

use crate::capture::Captures;
use crate::graph_memory::{is_memory_op, GraphAlloc, AUTO_FREE_ON_LAUNCH};
use crate::launch::{CallConfig, Kernel, Params};
use crate::memory::CopyKind;
use crate::stream::HostFn;
use crate::user_object::{Doomed, Owned, UserObject};
use crate::{Cuda, Error, Result};

/// Graph, node and executable-graph handles live in their own windows, like streams and events.
const GRAPH_WINDOW: u64 = 0x7700_0000_0000_0000;
const NODE_WINDOW: u64 = 0x7600_0000_0000_0000;
const EXEC_WINDOW: u64 = 0x7500_0000_0000_0000;

/// `cudaGraphNodeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeType {
    Kernel = 0,
    Memcpy = 1,
    Memset = 2,
    Host = 3,
    Graph = 4,
    Empty = 5,
    WaitEvent = 6,
    EventRecord = 7,
    MemAlloc = 10,
    MemFree = 11,
}

/// A kernel node: what to launch, its shape, and its parameters laid out as the kernel's `.param` list
/// (copied when the node was made, as CUDA copies them).
#[derive(Debug)]
pub struct KernelNode {
    pub kernel: Kernel,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: u64,
    pub cooperative: bool,
    params: Vec<u8>,
    /// Each parameter's offset and size in `params`.
    slots: Vec<(u64, u64)>,
    /// One pointer per parameter into `params` (`cudaGraphKernelNodeGetParams`' `kernelParams`).
    pointers: Box<[u64]>,
}

impl KernelNode {
    /// The `kernelParams` array: one pointer per parameter, valid while the node is unchanged.
    pub fn param_pointers(&self) -> u64 {
        if self.pointers.is_empty() {
            0
        } else {
            self.pointers.as_ptr() as u64
        }
    }

    fn point(&mut self) {
        let base = self.params.as_ptr() as u64;
        self.pointers = self.slots.iter().map(|&(offset, _)| base + offset).collect();
    }
}

/// A copy points its `kernelParams` array at its own parameter bytes.
impl Clone for KernelNode {
    fn clone(&self) -> Self {
        let mut k = KernelNode {
            kernel: self.kernel,
            grid: self.grid,
            block: self.block,
            shared: self.shared,
            cooperative: self.cooperative,
            params: self.params.clone(),
            slots: self.slots.clone(),
            pointers: Box::new([]),
        };
        k.point();
        k
    }
}

/// A copy node: `depth` slices of `height` rows of `width` bytes (a 1-D copy has one row of one slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyNode {
    pub dst: u64,
    pub dpitch: u64,
    pub dslice: u64,
    pub src: u64,
    pub spitch: u64,
    pub sslice: u64,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub kind: CopyKind,
}

impl CopyNode {
    /// A 1-D copy of `n` bytes.
    pub fn linear(dst: u64, src: u64, n: u64, kind: CopyKind) -> CopyNode {
        CopyNode { dst, dpitch: n, dslice: n, src, spitch: n, sslice: n, width: n, height: 1, depth: 1, kind }
    }
}

/// A set node (`cudaMemsetParams`): `height` rows of `width` elements of `element` bytes, `pitch` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetNode {
    pub ptr: u64,
    pub pitch: u64,
    pub value: u32,
    pub element: u64,
    pub width: u64,
    pub height: u64,
}

/// What a node does.
#[derive(Clone, Debug)]
pub enum NodeOp {
    Kernel(Box<KernelNode>),
    Memcpy(CopyNode),
    Memset(SetNode),
    Host {
        f: HostFn,
        data: u64,
    },
    /// A copy of the child graph, made when the node was added (as CUDA clones it).
    Graph(u64),
    Empty,
    /// `cudaEventRecord` of the event on the launch's stream.
    EventRecord(u64),
    /// `cudaStreamWaitEvent` of the launch's stream for the event.
    EventWait(u64),
    /// A graph allocation (`graph_memory.rs`): `size` bytes at `ptr`, whose address the node was given.
    MemAlloc {
        ptr: u64,
        size: u64,
    },
    /// Frees the graph allocation at the pointer.
    MemFree(u64),
}

impl NodeOp {
    pub fn kind(&self) -> NodeType {
        match self {
            NodeOp::Kernel(_) => NodeType::Kernel,
            NodeOp::Memcpy(_) => NodeType::Memcpy,
            NodeOp::Memset(_) => NodeType::Memset,
            NodeOp::Host { .. } => NodeType::Host,
            NodeOp::Graph(_) => NodeType::Graph,
            NodeOp::Empty => NodeType::Empty,
            NodeOp::EventRecord(_) => NodeType::EventRecord,
            NodeOp::EventWait(_) => NodeType::WaitEvent,
            NodeOp::MemAlloc { .. } => NodeType::MemAlloc,
            NodeOp::MemFree(_) => NodeType::MemFree,
        }
    }
}

/// `cudaGraphExecUpdateResult` and the node it names when an update fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpdateFailure {
    pub result: i32,
    pub node: u64,
}

pub(crate) struct Node {
    pub(crate) graph: u64,
    pub(crate) op: NodeOp,
    pub(crate) deps: Vec<u64>,
    /// The node's number in its graph (`cudaGraphNodeGetLocalId`): its creation order, never reused.
    pub(crate) local_id: u32,
    /// A kernel node's launch attributes set (`cudaGraphKernelNodeSetAttribute`), as their value unions.
    pub(crate) attributes: HashMap<i32, crate::StreamAttrValue>,
}

#[derive(Default)]
pub(crate) struct Graph {
    /// Nodes in creation order.
    pub(crate) nodes: Vec<u64>,
    /// The local id of the next node made.
    next_local: u32,
    /// For a clone (`cudaGraphClone`, a child-graph node's copy): original node → its copy here
    /// (`cudaGraphNodeFindInClone`).
    pub(crate) clone_of: HashMap<u64, u64>,
    /// Child graphs owned by this graph's child-graph nodes (destroyed with it).
    pub(crate) children: Vec<u64>,
    /// References to user objects the graph holds.
    owned: Owned,
}

/// An executable graph: the operations in the order they run, each with the node it came from.
pub(crate) struct Exec {
    pub(crate) steps: Vec<(u64, NodeOp)>,
    /// For `cudaGraphExecUpdate`: each step's kind and its dependencies as step indices.
    pub(crate) shape: Vec<(NodeType, Vec<usize>)>,
    /// References to user objects: the graph's and its child graphs', taken at instantiation.
    owned: Owned,
    /// The instantiation flags (`cudaGraphInstantiateFlagAutoFreeOnLaunch` matters at launch).
    pub(crate) flags: u64,
    /// Nodes switched off (`cudaGraphNodeSetEnabled`): their steps do nothing.
    disabled: HashSet<u64>,
    /// Each child-graph node's steps: (first, count), after its own empty step.
    pub(crate) children: HashMap<u64, (usize, usize)>,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) graphs: HashMap<u64, Graph>,
    pub(crate) nodes: HashMap<u64, Node>,
    pub(crate) execs: HashMap<u64, Exec>,
    next: u64,
    pub(crate) captures: Captures,
    pub(crate) user_objects: HashMap<u64, UserObject>,
    /// Graph allocations by address (`graph_memory.rs`), and the high watermarks of their used and
    /// reserved bytes.
    pub(crate) allocs: HashMap<u64, GraphAlloc>,
    pub(crate) mem_high: (u64, u64),
    /// Destructors of user objects released under the lock, run when it is let go ([`Cuda::with_graphs`]).
    pub(crate) doomed: Vec<Doomed>,
}

#[derive(Default)]
pub(crate) struct Graphs {
    state: Mutex<State>,
}

impl Graphs {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    pub(crate) fn handle(&mut self, window: u64) -> u64 {
        self.next += 1;
        window + self.next * 16
    }

    pub(crate) fn new_graph(&mut self) -> u64 {
        let h = self.handle(GRAPH_WINDOW);
        self.graphs.insert(h, Graph::default());
        h
    }

    /// Adds a node after `deps` (nodes of the same graph, no repeats).
    pub(crate) fn add_node(&mut self, graph: u64, op: NodeOp, deps: &[u64]) -> Result<u64> {
        if !self.graphs.contains_key(&graph) {
            return Err(Error::INVALID_VALUE);
        }
        for (i, d) in deps.iter().enumerate() {
            if self.nodes.get(d).is_none_or(|n| n.graph != graph) || deps[..i].contains(d) {
                return Err(Error::INVALID_VALUE);
            }
        }
        let h = self.handle(NODE_WINDOW);
        if let NodeOp::MemAlloc { ptr, size } = op {
            // A new allocation (its node's): the graph's from now on.
            self.allocs.entry(ptr).or_insert(GraphAlloc::new(size));
        }
        if let NodeOp::Graph(child) = op {
            if let Some(g) = self.graphs.get_mut(&graph) {
                g.children.push(child);
            }
        }
        let g = self.graphs.get_mut(&graph).ok_or(Error::INVALID_VALUE)?;
        g.nodes.push(h);
        let local_id = g.next_local;
        g.next_local += 1;
        self.nodes.insert(h, Node { graph, op, deps: deps.to_vec(), local_id, attributes: HashMap::new() });
        Ok(h)
    }

    pub(crate) fn destroy_graph(&mut self, graph: u64) -> Result<()> {
        let g = self.graphs.remove(&graph).ok_or(Error::INVALID_VALUE)?;
        for n in g.nodes {
            if let Some(node) = self.nodes.remove(&n) {
                self.release_alloc(&node.op);
            }
        }
        for c in g.children {
            let _ = self.destroy_graph(c);
        }
        self.release_all(g.owned);
        Ok(())
    }

    /// The nodes of `graph`, if it exists.
    pub(crate) fn graph_nodes_of(&self, graph: u64) -> Option<Vec<u64>> {
        self.graphs.get(&graph).map(|g| g.nodes.clone())
    }

    pub(crate) fn graph_exists(&self, graph: u64) -> bool {
        self.graphs.contains_key(&graph)
    }

    /// The user-object references `graph` holds.
    pub(crate) fn graph_owned(&mut self, graph: u64) -> Result<&mut Owned> {
        self.graphs.get_mut(&graph).map(|g| &mut g.owned).ok_or(Error::INVALID_VALUE)
    }

    /// The references of `graph` and of its child graphs, merged.
    fn owned_deep(&self, graph: u64, into: &mut Owned) {
        if let Some(g) = self.graphs.get(&graph) {
            for (&obj, &n) in &g.owned {
                *into.entry(obj).or_default() += n;
            }
            for &c in &g.children {
                self.owned_deep(c, into);
            }
        }
    }

    /// A copy of `graph` with new node handles, and the map from old handles to new.
    fn clone_graph(&mut self, graph: u64) -> Result<(u64, HashMap<u64, u64>)> {
        let order = self.graphs.get(&graph).ok_or(Error::INVALID_VALUE)?.nodes.clone();
        if order.iter().any(|n| is_memory_op(&self.nodes[n].op)) {
            return Err(Error::NOT_SUPPORTED); // CUDA's rule for graphs with memory nodes
        }
        let copy = self.new_graph();
        let mut map = HashMap::new();
        // The nodes first, then their edges: an edge added later may come from a node made later.
        for &n in &order {
            let mut op = self.nodes[&n].op.clone();
            if let NodeOp::Graph(child) = op {
                op = NodeOp::Graph(self.clone_graph(child)?.0);
            }
            map.insert(n, self.add_node(copy, op, &[])?);
        }
        for n in order {
            let deps: Vec<u64> = self.nodes[&n].deps.iter().map(|d| map[d]).collect();
            let attributes = self.nodes[&n].attributes.clone();
            let copy = self.node_mut(map[&n])?;
            copy.deps = deps;
            copy.attributes = attributes;
        }
        if let Some(g) = self.graphs.get_mut(&copy) {
            g.clone_of = map.clone();
        }
        let owned = self.graphs.get(&graph).map(|g| g.owned.clone()).unwrap_or_default();
        let owned = self.retain_all(&owned);
        if let Some(g) = self.graphs.get_mut(&copy) {
            g.owned = owned;
        }
        Ok((copy, map))
    }

    /// The graph's nodes in a topological order (ties by creation order); a cycle is an error.
    fn topological(&self, graph: u64) -> Result<Vec<u64>> {
        let g = self.graphs.get(&graph).ok_or(Error::INVALID_VALUE)?;
        let position: HashMap<u64, usize> = g.nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut waiting: Vec<usize> = g.nodes.iter().map(|n| self.nodes[n].deps.len()).collect();
        let mut dependents = vec![Vec::new(); g.nodes.len()];
        for (i, n) in g.nodes.iter().enumerate() {
            for d in &self.nodes[n].deps {
                dependents[position[d]].push(i);
            }
        }
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..g.nodes.len()).filter(|&i| waiting[i] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(g.nodes.len());
        while let Some(Reverse(i)) = ready.pop() {
            order.push(g.nodes[i]);
            for &j in &dependents[i] {
                waiting[j] -= 1;
                if waiting[j] == 0 {
                    ready.push(Reverse(j));
                }
            }
        }
        if order.len() < g.nodes.len() {
            return Err(Error::INVALID_VALUE); // a cycle (cudaGraphAddDependencies does not look for one)
        }
        Ok(order)
    }

    /// The graph flattened into steps (child graphs expanded in place) and their shape.
    pub(crate) fn flatten(
        &self,
        graph: u64,
        steps: &mut Vec<(u64, NodeOp)>,
        shape: &mut Vec<(NodeType, Vec<usize>)>,
        children: &mut HashMap<u64, (usize, usize)>,
    ) -> Result<()> {
        let order = self.topological(graph)?;
        let mut index = HashMap::new();
        for n in order {
            let node = &self.nodes[&n];
            let deps = node.deps.iter().map(|d| index[d]).collect();
            index.insert(n, steps.len());
            shape.push((node.op.kind(), deps));
            match &node.op {
                NodeOp::Kernel(k) => steps.push((n, NodeOp::Kernel(k.clone()))),
                NodeOp::Graph(child) => {
                    steps.push((n, NodeOp::Empty));
                    let start = steps.len();
                    self.flatten(*child, steps, shape, children)?;
                    children.insert(n, (start, steps.len() - start));
                }
                op => steps.push((n, op.clone())),
            }
        }
        Ok(())
    }

    pub(crate) fn node_deps(&self, node: u64) -> Vec<u64> {
        self.nodes.get(&node).map(|n| n.deps.clone()).unwrap_or_default()
    }

    pub(crate) fn node_mut(&mut self, node: u64) -> Result<&mut Node> {
        self.nodes.get_mut(&node).ok_or(Error::INVALID_VALUE)
    }
}

impl Cuda {
    /// Lays out a kernel's arguments as its parameter buffer (the bytes copied now), after checking the
    /// launch's shape.
    ///
    /// # Safety
    /// [`Params::Pointers`] as for [`Cuda::launch`].
    pub(crate) unsafe fn kernel_node(
        &self,
        kernel: Kernel,
        config: CallConfig,
        args: Params<'_>,
    ) -> Result<KernelNode> {
        // A shape no launch accepts is refused now, as the launch it stands for would be.
        let shape = device::LaunchConfig { grid: config.grid, block: config.block, dynamic_shared: 0 };
        if let Err(message) = shape.validate() {
            self.warn(&format!("graph kernel node {message}"), &format!("error: a graph kernel node: {message}"));
            return Err(Error::INVALID_VALUE);
        }
        let slots = self.kernel_params(kernel)?;
        let size = slots.iter().map(|&(o, s)| o + s).max().unwrap_or(0) as usize;
        let mut params = vec![0u8; size];
        match args {
            Params::Pointers(_) if slots.is_empty() => {}
            Params::Pointers(args) => {
                if args.is_null() {
                    return Err(Error::INVALID_VALUE);
                }
                for (i, &(offset, len)) in slots.iter().enumerate() {
                    // SAFETY: the caller's promise: `args[i]` points at the parameter's bytes.
                    unsafe {
                        let src = *args.add(i) as *const u8;
                        if src.is_null() {
                            return Err(Error::INVALID_VALUE);
                        }
                        std::ptr::copy_nonoverlapping(src, params.as_mut_ptr().add(offset as usize), len as usize);
                    }
                }
            }
            Params::Buffer(buffer) => {
                if buffer.len() < size {
                    return Err(Error::INVALID_VALUE);
                }
                params.copy_from_slice(&buffer[..size]);
            }
        }
        let mut node = KernelNode {
            kernel,
            grid: config.grid,
            block: config.block,
            shared: config.shared,
            cooperative: config.cooperative,
            params,
            slots,
            pointers: Box::new([]),
        };
        node.point();
        Ok(node)
    }

    /// An event node's event must exist (`cudaErrorInvalidResourceHandle`).
    fn check_event_op(&self, op: &NodeOp) -> Result<()> {
        match op {
            NodeOp::EventRecord(e) | NodeOp::EventWait(e) => self.event_exists(*e),
            _ => Ok(()),
        }
    }

    /// `cudaGraphCreate` (flags must be 0).
    pub fn graph_create(&self, flags: u32) -> Result<u64> {
        if flags != 0 {
            return Err(Error::INVALID_VALUE);
        }
        Ok(self.graphs.lock().new_graph())
    }

    /// `cudaGraphDestroy`.
    pub fn graph_destroy(&self, graph: u64) -> Result<()> {
        self.with_graphs(|s| s.destroy_graph(graph))
    }

    /// `cudaGraphClone`.
    pub fn graph_clone(&self, graph: u64) -> Result<u64> {
        self.graphs.lock().clone_graph(graph).map(|(g, _)| g)
    }

    /// Adds a node of any kind after `deps` (`cudaGraphAdd*Node`); a child graph is copied now.
    pub fn graph_add_node(&self, graph: u64, op: NodeOp, deps: &[u64]) -> Result<u64> {
        self.check_event_op(&op)?;
        let mut s = self.graphs.lock();
        match op {
            // Made by `graph_add_mem_alloc_node`, which allocates.
            NodeOp::MemAlloc { .. } => return Err(Error::INVALID_VALUE),
            NodeOp::MemFree(ptr) if !s.is_graph_alloc(ptr) => return Err(Error::INVALID_VALUE),
            _ => {}
        }
        let op = match op {
            NodeOp::Graph(child) => NodeOp::Graph(s.clone_graph(child)?.0),
            op => op,
        };
        s.add_node(graph, op, deps)
    }

    /// A child-graph node that takes `child` itself instead of a copy (`cudaGraphChildGraphOwnershipMove`):
    /// the parent owns it from now on and destroys it with itself; it may hold memory nodes.
    pub fn graph_add_child_graph_moved(&self, graph: u64, deps: &[u64], child: u64) -> Result<u64> {
        let mut s = self.graphs.lock();
        let owned = s.graphs.values().any(|g| g.children.contains(&child));
        if child == graph || !s.graphs.contains_key(&child) || owned {
            return Err(Error::INVALID_VALUE);
        }
        s.add_node(graph, NodeOp::Graph(child), deps)
    }

    /// `cudaGraphAddKernelNode`: the arguments are copied now.
    ///
    /// # Safety
    /// As [`Cuda::launch`] for `args`.
    pub unsafe fn graph_add_kernel_node(
        &self,
        graph: u64,
        deps: &[u64],
        kernel: Kernel,
        config: CallConfig,
        args: *const *const libc::c_void,
    ) -> Result<u64> {
        // SAFETY: the caller's promise.
        let node = unsafe { self.kernel_node(kernel, config, Params::Pointers(args))? };
        self.graph_add_node(graph, NodeOp::Kernel(Box::new(node)), deps)
    }

    /// `cudaGraphAddDependencies`: `from[i]` before `to[i]`.
    pub fn graph_add_dependencies(&self, graph: u64, from: &[u64], to: &[u64]) -> Result<()> {
        let mut s = self.graphs.lock();
        for (&f, &t) in from.iter().zip(to) {
            let ok = |n: u64| s.nodes.get(&n).is_some_and(|n| n.graph == graph);
            if !s.graphs.contains_key(&graph) || !ok(f) || !ok(t) || f == t || s.nodes[&t].deps.contains(&f) {
                return Err(Error::INVALID_VALUE);
            }
        }
        for (&f, &t) in from.iter().zip(to) {
            let deps = &mut s.node_mut(t)?.deps;
            if !deps.contains(&f) {
                deps.push(f);
            }
        }
        Ok(())
    }

    /// `cudaGraphRemoveDependencies`: every edge must exist; none is removed otherwise.
    pub fn graph_remove_dependencies(&self, graph: u64, from: &[u64], to: &[u64]) -> Result<()> {
        let mut s = self.graphs.lock();
        for (&f, &t) in from.iter().zip(to) {
            if s.nodes.get(&t).is_none_or(|n| n.graph != graph || !n.deps.contains(&f)) {
                return Err(Error::INVALID_VALUE);
            }
        }
        for (&f, &t) in from.iter().zip(to) {
            s.node_mut(t)?.deps.retain(|&d| d != f);
        }
        Ok(())
    }

    /// `cudaGraphNodeGetContainingGraph`.
    pub fn graph_node_graph(&self, node: u64) -> Result<u64> {
        Ok(self.graphs.lock().nodes.get(&node).ok_or(Error::INVALID_VALUE)?.graph)
    }

    /// `cudaGraphGetNodes`: the graph's nodes in creation order.
    pub fn graph_nodes(&self, graph: u64) -> Result<Vec<u64>> {
        let s = self.graphs.lock();
        Ok(s.graphs.get(&graph).ok_or(Error::INVALID_VALUE)?.nodes.clone())
    }

    /// `cudaGraphGetRootNodes`: the nodes without dependencies.
    pub fn graph_root_nodes(&self, graph: u64) -> Result<Vec<u64>> {
        let s = self.graphs.lock();
        let g = s.graphs.get(&graph).ok_or(Error::INVALID_VALUE)?;
        Ok(g.nodes.iter().filter(|n| s.nodes[n].deps.is_empty()).copied().collect())
    }

    /// `cudaGraphGetEdges`: (from, to) pairs, by destination node in creation order.
    pub fn graph_edges(&self, graph: u64) -> Result<Vec<(u64, u64)>> {
        let s = self.graphs.lock();
        let g = s.graphs.get(&graph).ok_or(Error::INVALID_VALUE)?;
        Ok(g.nodes.iter().flat_map(|t| s.nodes[t].deps.iter().map(move |f| (*f, *t))).collect())
    }

    /// `cudaGraphNodeGetDependencies`.
    pub fn graph_node_dependencies(&self, node: u64) -> Result<Vec<u64>> {
        Ok(self.graphs.lock().nodes.get(&node).ok_or(Error::INVALID_VALUE)?.deps.clone())
    }

    /// `cudaGraphNodeGetType`.
    pub fn graph_node_type(&self, node: u64) -> Result<NodeType> {
        Ok(self.graphs.lock().nodes.get(&node).ok_or(Error::INVALID_VALUE)?.op.kind())
    }

    /// `cudaGraphNodeGetDependentNodes`: the nodes that depend on `node`, in creation order.
    pub fn graph_node_dependents(&self, node: u64) -> Result<Vec<u64>> {
        let s = self.graphs.lock();
        let graph = s.nodes.get(&node).ok_or(Error::INVALID_VALUE)?.graph;
        let g = s.graphs.get(&graph).ok_or(Error::INVALID_VALUE)?;
        Ok(g.nodes.iter().filter(|n| s.nodes[n].deps.contains(&node)).copied().collect())
    }

    /// `cudaGraphDestroyNode`: the node and its edges (a child graph node's copy of its graph too).
    pub fn graph_destroy_node(&self, node: u64) -> Result<()> {
        self.with_graphs(|s| s.destroy_node(node))
    }
}

impl State {
    fn destroy_node(&mut self, node: u64) -> Result<()> {
        let s = self;
        let n = s.nodes.remove(&node).ok_or(Error::INVALID_VALUE)?;
        if let Some(g) = s.graphs.get_mut(&n.graph) {
            g.nodes.retain(|&m| m != node);
            if let NodeOp::Graph(child) = n.op {
                g.children.retain(|&c| c != child);
            }
        }
        for other in s.nodes.values_mut().filter(|m| m.graph == n.graph) {
            other.deps.retain(|&d| d != node);
        }
        if let NodeOp::Graph(child) = n.op {
            let _ = s.destroy_graph(child);
        }
        s.release_alloc(&n.op);
        Ok(())
    }
}

impl Cuda {
    /// `cudaGraphChildGraphNodeGetGraph`: the node's own copy of its graph (changing it changes the node).
    pub fn graph_child_graph(&self, node: u64) -> Result<u64> {
        match self.graphs.lock().nodes.get(&node).map(|n| &n.op) {
            Some(NodeOp::Graph(child)) => Ok(*child),
            _ => Err(Error::INVALID_VALUE),
        }
    }

    /// A node's operation (`cudaGraphHostNodeGetParams`, `cudaGraphMemsetNodeGetParams`).
    pub fn graph_node_op(&self, node: u64) -> Result<NodeOp> {
        Ok(self.graphs.lock().nodes.get(&node).ok_or(Error::INVALID_VALUE)?.op.clone())
    }

    /// Replaces a node's operation by one of the same kind (`cudaGraphHostNodeSetParams`,
    /// `cudaGraphMemsetNodeSetParams`, `cudaGraphMemcpyNodeSetParams1D`).
    pub fn graph_node_set_op(&self, node: u64, op: NodeOp) -> Result<()> {
        self.check_event_op(&op)?;
        let mut s = self.graphs.lock();
        let n = s.node_mut(node)?;
        if n.op.kind() != op.kind() || matches!(op, NodeOp::Graph(_)) || is_memory_op(&op) {
            return Err(Error::INVALID_VALUE);
        }
        n.op = op;
        Ok(())
    }

    /// Replaces the executable graph's copy of a node's operation by one of the same kind
    /// (`cudaGraphExecHostNodeSetParams`, `cudaGraphExecMemsetNodeSetParams`,
    /// `cudaGraphExecMemcpyNodeSetParams1D`); the graph itself is unchanged.
    pub fn graph_exec_set_op(&self, exec: u64, node: u64, op: NodeOp) -> Result<()> {
        self.check_event_op(&op)?;
        if matches!(op, NodeOp::Graph(_) | NodeOp::Kernel(_)) || is_memory_op(&op) {
            return Err(Error::INVALID_VALUE);
        }
        let mut s = self.graphs.lock();
        let e = s.execs.get_mut(&exec).ok_or(Error::INVALID_VALUE)?;
        let step = e.steps.iter_mut().find(|(n, _)| *n == node).ok_or(Error::INVALID_VALUE)?;
        if step.1.kind() != op.kind() {
            return Err(Error::INVALID_VALUE);
        }
        step.1 = op;
        Ok(())
    }

    /// `cudaGraphKernelNodeGetParams`: the kernel, shape, and the address of the node's `kernelParams`
    /// array (valid until the node's parameters change or it is destroyed).
    pub fn graph_kernel_node_params(&self, node: u64) -> Result<(Kernel, Dim3, Dim3, u64, u64)> {
        let s = self.graphs.lock();
        match &s.nodes.get(&node).ok_or(Error::INVALID_VALUE)?.op {
            NodeOp::Kernel(k) => Ok((k.kernel, k.grid, k.block, k.shared, k.param_pointers())),
            _ => Err(Error::INVALID_VALUE),
        }
    }

    /// `cudaGraphKernelNodeSetParams`.
    ///
    /// # Safety
    /// As [`Cuda::launch`] for `args`.
    pub unsafe fn graph_kernel_node_set_params(
        &self,
        node: u64,
        kernel: Kernel,
        config: CallConfig,
        args: *const *const libc::c_void,
    ) -> Result<()> {
        if self.graph_node_type(node)? != NodeType::Kernel {
            return Err(Error::INVALID_VALUE);
        }
        // SAFETY: the caller's promise.
        let k = unsafe { self.kernel_node(kernel, config, Params::Pointers(args))? };
        let mut s = self.graphs.lock();
        let n = s.node_mut(node)?;
        n.op = NodeOp::Kernel(Box::new(k));
        crate::graph_attributes::apply_attributes(n);
        Ok(())
    }

    /// `cudaGraphInstantiate`: flags 0, `cudaGraphInstantiateFlagAutoFreeOnLaunch` (a launch frees the
    /// graph's allocations still live) or `UseNodePriority` (moot: nodes run one at a time). Graphs launched from the device
    /// (`cudaGraphInstantiateFlagDeviceLaunch`) are not supported; the upload flag belongs to
    /// `cudaGraphInstantiateWithParams`.
    pub fn graph_instantiate(&self, graph: u64, flags: u64) -> Result<u64> {
        if flags & 0x4 != 0 {
            self.warn(
                "graph device launch",
                "warning: cudaGraphInstantiateFlagDeviceLaunch is not supported by lockstep (graphs are launched \
                 from the host only); the instantiation fails with cudaErrorNotSupported",
            );
            return Err(Error::NOT_SUPPORTED);
        }
        if flags & !(AUTO_FREE_ON_LAUNCH | 0x8) != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let mut s = self.graphs.lock();
        let (mut steps, mut shape) = (Vec::new(), Vec::new());
        let mut children = HashMap::new();
        s.flatten(graph, &mut steps, &mut shape, &mut children)?;
        let mut owned = Owned::new();
        s.owned_deep(graph, &mut owned);
        let owned = s.retain_all(&owned);
        for (_, op) in &steps {
            s.retain_alloc(op);
        }
        let h = s.handle(EXEC_WINDOW);
        s.execs.insert(h, Exec { steps, shape, owned, flags, disabled: HashSet::new(), children });
        Ok(h)
    }

    /// `cudaGraphNodeSetEnabled`: a kernel, copy or set node of the executable graph does nothing while
    /// disabled.
    pub fn graph_node_set_enabled(&self, exec: u64, node: u64, enabled: bool) -> Result<()> {
        let mut s = self.graphs.lock();
        let e = s.execs.get_mut(&exec).ok_or(Error::INVALID_VALUE)?;
        let (_, op) = e.steps.iter().find(|(n, _)| *n == node).ok_or(Error::INVALID_VALUE)?;
        if !matches!(op.kind(), NodeType::Kernel | NodeType::Memcpy | NodeType::Memset) {
            return Err(Error::INVALID_VALUE);
        }
        if enabled {
            e.disabled.remove(&node);
        } else {
            e.disabled.insert(node);
        }
        Ok(())
    }

    /// `cudaGraphNodeGetEnabled`.
    pub fn graph_node_enabled(&self, exec: u64, node: u64) -> Result<bool> {
        let s = self.graphs.lock();
        let e = s.execs.get(&exec).ok_or(Error::INVALID_VALUE)?;
        if !e.steps.iter().any(|(n, _)| *n == node) {
            return Err(Error::INVALID_VALUE);
        }
        Ok(!e.disabled.contains(&node))
    }

    /// `cudaGraphExecDestroy`.
    pub fn graph_exec_destroy(&self, exec: u64) -> Result<()> {
        self.with_graphs(|s| {
            let e = s.execs.remove(&exec).ok_or(Error::INVALID_VALUE)?;
            s.release_all(e.owned);
            for (_, op) in &e.steps {
                s.release_alloc(op);
            }
            Ok(())
        })
    }

    /// `cudaGraphExecKernelNodeSetParams`: `node` is a kernel node of the graph the executable graph was
    /// made from; the function may not change.
    ///
    /// # Safety
    /// As [`Cuda::launch`] for `args`.
    pub unsafe fn graph_exec_kernel_node_set_params(
        &self,
        exec: u64,
        node: u64,
        kernel: Kernel,
        config: CallConfig,
        args: *const *const libc::c_void,
    ) -> Result<()> {
        // SAFETY: the caller's promise.
        let mut k = unsafe { self.kernel_node(kernel, config, Params::Pointers(args))? };
        let mut s = self.graphs.lock();
        let e = s.execs.get_mut(&exec).ok_or(Error::INVALID_VALUE)?;
        let step = e.steps.iter_mut().find(|(n, _)| *n == node).ok_or(Error::INVALID_VALUE)?;
        match &step.1 {
            NodeOp::Kernel(old) if old.kernel == kernel => {
                // The node's launch attributes (cooperative) stay with it.
                k.cooperative = old.cooperative;
                step.1 = NodeOp::Kernel(Box::new(k));
                Ok(())
            }
            _ => Err(Error::INVALID_VALUE),
        }
    }

    /// `cudaGraphExecUpdate`: `graph` must have the executable graph's topology (the same nodes, of the
    /// same kinds, with the same edges, in the same creation order); then every node's parameters are
    /// taken from it. Otherwise nothing changes and the failure names the first differing node.
    pub fn graph_exec_update(&self, exec: u64, graph: u64) -> Result<(), (Error, Option<UpdateFailure>)> {
        let mut s = self.graphs.lock();
        if !s.execs.contains_key(&exec) || !s.graphs.contains_key(&graph) {
            return Err((Error::INVALID_VALUE, None));
        }
        let (mut steps, mut shape) = (Vec::new(), Vec::new());
        s.flatten(graph, &mut steps, &mut shape, &mut HashMap::new()).map_err(|e| (e, None))?;
        let e = s.execs.get_mut(&exec).ok_or((Error::INVALID_VALUE, None))?;
        let failure = |result: i32, node: u64| (Error::GRAPH_EXEC_UPDATE_FAILURE, Some(UpdateFailure { result, node }));
        if shape.len() != e.shape.len() {
            return Err(failure(2, 0)); // cudaGraphExecUpdateErrorTopologyChanged
        }
        for (i, ((kind, deps), (old_kind, old_deps))) in shape.iter().zip(&e.shape).enumerate() {
            if deps != old_deps {
                return Err(failure(2, steps[i].0));
            }
            if kind != old_kind {
                return Err(failure(3, steps[i].0)); // cudaGraphExecUpdateErrorNodeTypeChanged
            }
            let (new, old) = (&steps[i].1, &e.steps[i].1);
            if is_memory_op(new) && !same_memory_op(new, old) {
                return Err(failure(5, steps[i].0)); // cudaGraphExecUpdateErrorParametersChanged
            }
        }
        // The executable graph keeps answering to its original nodes' handles.
        for (new, old) in steps.into_iter().zip(e.steps.iter_mut()) {
            old.1 = match new.1 {
                NodeOp::Kernel(k) => NodeOp::Kernel(k.clone()),
                op => op,
            };
        }
        Ok(())
    }

    /// `cudaGraphExecChildGraphNodeSetParams`: the executable graph's copy of child-graph node `node` takes
    /// the parameters of `child`, which must have the copy's topology (as `cudaGraphExecUpdate` requires);
    /// graphs with memory nodes cannot be changed this way.
    pub fn graph_exec_child_graph_set_params(&self, exec: u64, node: u64, child: u64) -> Result<()> {
        let mut s = self.graphs.lock();
        let (mut steps, mut shape) = (Vec::new(), Vec::new());
        s.flatten(child, &mut steps, &mut shape, &mut HashMap::new())?;
        let e = s.execs.get_mut(&exec).ok_or(Error::INVALID_VALUE)?;
        let &(start, len) = e.children.get(&node).ok_or(Error::INVALID_VALUE)?;
        let old = &e.steps[start..start + len];
        if steps.iter().chain(old).any(|(_, op)| is_memory_op(op)) {
            return Err(Error::NOT_SUPPORTED);
        }
        let same_shape = shape.len() == len
            && shape.iter().zip(&e.shape[start..start + len]).all(|((kind, deps), (old_kind, old_deps))| {
                kind == old_kind && deps.iter().map(|d| d + start).eq(old_deps.iter().copied())
            });
        if !same_shape {
            return Err(Error::INVALID_VALUE);
        }
        for ((_, new), (_, op)) in steps.into_iter().zip(&mut e.steps[start..start + len]) {
            *op = new;
        }
        Ok(())
    }

    /// `cudaGraphLaunch`: runs the executable graph's steps on `stream`, in order. On a capturing stream
    /// the graph is recorded as a child-graph node instead.
    pub fn graph_launch(&self, exec: u64, stream: u64) -> Result<()> {
        let (steps, flags): (Vec<NodeOp>, u64) = {
            let s = self.graphs.lock();
            let e = s.execs.get(&exec).ok_or(Error::INVALID_VALUE)?;
            let on = e.steps.iter().filter(|(n, _)| !e.disabled.contains(n));
            (on.map(|(_, op)| op.clone()).collect(), e.flags)
        };
        if self.stream_is_capturing(stream)? {
            if steps.iter().any(is_memory_op) {
                return Err(Error::NOT_SUPPORTED);
            }
            return self.capture_steps(stream, steps);
        }
        self.enter_stream(stream)?;
        self.check_sticky()?;
        self.with_graphs(|s| s.check_allocs_before_launch(&steps, flags))?;
        for op in steps {
            self.run_step(&op, stream)?;
        }
        Ok(())
    }

    /// One node's operation on `stream`, as the stream API runs it.
    fn run_step(&self, op: &NodeOp, stream: u64) -> Result<()> {
        match op {
            NodeOp::Kernel(k) => {
                let config =
                    CallConfig { grid: k.grid, block: k.block, shared: k.shared, stream, cooperative: k.cooperative };
                // SAFETY: a laid-out buffer; no program pointers are read.
                unsafe { self.launch_kernel(k.kernel, config, Params::Buffer(&k.params)) }
            }
            NodeOp::Memcpy(c) if c.height == 1 && c.depth == 1 => {
                self.memcpy_async(c.dst, c.src, c.width, c.kind, stream)
            }
            NodeOp::Memcpy(c) => {
                self.enter_stream(stream)?;
                for z in 0..c.depth {
                    let (dst, src) = (c.dst + z * c.dslice, c.src + z * c.sslice);
                    self.memcpy_2d(dst, c.dpitch, src, c.spitch, c.width, c.height, c.kind)?;
                }
                Ok(())
            }
            NodeOp::Memset(m) => {
                self.enter_stream(stream)?;
                self.memset_elements(m.ptr, m.pitch, m.value, m.element, m.width, m.height)
            }
            NodeOp::Host { f, data } => self.launch_host_fn(stream, *f, *data as *mut libc::c_void),
            NodeOp::EventRecord(e) => self.event_record(*e, stream),
            NodeOp::EventWait(e) => self.stream_wait_event(stream, *e),
            NodeOp::MemAlloc { ptr, .. } => self.with_graphs(|s| s.graph_alloc_runs(*ptr)),
            NodeOp::MemFree(ptr) => self.with_graphs(|s| s.graph_free_runs(*ptr)),
            NodeOp::Graph(_) | NodeOp::Empty => Ok(()),
        }
    }

    /// `cudaGraphUpload`: nothing to upload; checks the handles.
    pub fn graph_upload(&self, exec: u64, stream: u64) -> Result<()> {
        if !self.graphs.lock().execs.contains_key(&exec) {
            return Err(Error::INVALID_VALUE);
        }
        self.stream_flags_priority(stream).map(|_| ())
    }
}

/// Whether two memory nodes' operations are the same (an executable graph's cannot change).
fn same_memory_op(a: &NodeOp, b: &NodeOp) -> bool {
    match (a, b) {
        (NodeOp::MemAlloc { ptr: p, size: n }, NodeOp::MemAlloc { ptr: q, size: m }) => p == q && n == m,
        (NodeOp::MemFree(p), NodeOp::MemFree(q)) => p == q,
        _ => false,
    }
}
