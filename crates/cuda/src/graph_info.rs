//! What programs and tools ask of graphs besides running them: ids (`cudaGraphGetId`,
//! `cudaGraphNodeGetLocalId`, ...), the copy of a node in a clone, an executable graph's flags, and
//! `cudaGraphDebugDotPrint`'s Graphviz file.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::graph::{NodeOp, State};
use crate::{Cuda, Error, Kernel, Result};

/// The id of a graph or executable graph: the sequence number in its handle.
fn id_of(handle: u64) -> u32 {
    ((handle & 0x00ff_ffff_ffff_ffff) / 16) as u32
}

impl Cuda {
    /// `cudaGraphGetId`.
    pub fn graph_id(&self, graph: u64) -> Result<u32> {
        let s = self.graphs.lock();
        s.graphs.get(&graph).map(|_| id_of(graph)).ok_or(Error::INVALID_VALUE)
    }

    /// `cudaGraphExecGetId`.
    pub fn graph_exec_id(&self, exec: u64) -> Result<u32> {
        let s = self.graphs.lock();
        s.execs.get(&exec).map(|_| id_of(exec)).ok_or(Error::INVALID_VALUE)
    }

    /// `cudaGraphExecGetFlags`: the flags it was instantiated with.
    pub fn graph_exec_flags(&self, exec: u64) -> Result<u64> {
        self.graphs.lock().execs.get(&exec).map(|e| e.flags).ok_or(Error::INVALID_VALUE)
    }

    /// `cudaGraphNodeGetLocalId`: the node's number in its graph, as `cudaGraphDebugDotPrint` names it.
    pub fn graph_node_local_id(&self, node: u64) -> Result<u32> {
        self.graphs.lock().nodes.get(&node).map(|n| n.local_id).ok_or(Error::INVALID_VALUE)
    }

    /// `cudaGraphNodeGetToolsId`: the graph's id and the node's local id together.
    pub fn graph_node_tools_id(&self, node: u64) -> Result<u64> {
        let s = self.graphs.lock();
        let n = s.nodes.get(&node).ok_or(Error::INVALID_VALUE)?;
        Ok((u64::from(id_of(n.graph)) << 32) | u64::from(n.local_id))
    }

    /// `cudaGraphNodeFindInClone`: the copy of `original` in `clone` (made by `cudaGraphClone` from its graph).
    pub fn graph_node_find_in_clone(&self, original: u64, clone: u64) -> Result<u64> {
        let s = self.graphs.lock();
        let g = s.graphs.get(&clone).ok_or(Error::INVALID_VALUE)?;
        g.clone_of.get(&original).copied().filter(|n| s.nodes.contains_key(n)).ok_or(Error::INVALID_VALUE)
    }

    /// `cudaGraphDebugDotPrint`: the graph (child graphs as clusters) in Graphviz's language, written to
    /// `path` whole (through a temporary file renamed into place). `flags` choose details in CUDA; lockstep
    /// always writes each node's kind and parameters.
    pub fn graph_debug_dot_print(&self, graph: u64, path: &Path) -> Result<()> {
        // The kernels' names first: they are looked up under the device lock, not under the graphs'.
        let kernels: Vec<Kernel> = {
            let s = self.graphs.lock();
            if !s.graphs.contains_key(&graph) {
                return Err(Error::INVALID_VALUE);
            }
            let mut kernels = Vec::new();
            graph_kernels(&s, graph, &mut kernels);
            kernels
        };
        let names: HashMap<(bool, u64), String> = kernels
            .into_iter()
            .map(|k| match k {
                Kernel::HostStub(f) => ((true, f), self.kernel_name(f).unwrap_or_else(|_| format!("{f:#x}"))),
                Kernel::Function(f) => ((false, f), self.function_module(f).map_or(format!("{f:#x}"), |(_, n)| n)),
            })
            .collect();
        let text = {
            let s = self.graphs.lock();
            let mut out = format!("digraph \"graph_{}\" {{\n  compound=true;\n", id_of(graph));
            dot_graph(&s, &names, graph, &mut out, 1);
            out.push_str("}\n");
            out
        };
        let tmp = path.with_extension("lockstep-tmp");
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            self.warn("graph dot print", &format!("warning: cudaGraphDebugDotPrint: {}: {e}", path.display()));
            Error::OPERATING_SYSTEM
        })
    }
}

/// The kernels of `graph`'s nodes and of its child graphs'.
fn graph_kernels(s: &State, graph: u64, out: &mut Vec<Kernel>) {
    for n in s.graphs.get(&graph).map_or(&[][..], |g| &g.nodes[..]) {
        match &s.nodes[n].op {
            NodeOp::Kernel(k) => out.push(k.kernel),
            NodeOp::Graph(child) => graph_kernels(s, *child, out),
            _ => {}
        }
    }
}

/// Kernel names by (host stub?, handle).
type Names = HashMap<(bool, u64), String>;

fn dot_graph(s: &State, names: &Names, graph: u64, out: &mut String, depth: usize) {
    let gid = id_of(graph);
    let pad = "  ".repeat(depth);
    let Some(g) = s.graphs.get(&graph) else { return };
    let name = |n: &u64| format!("graph_{gid}_node_{}", s.nodes[n].local_id);
    for n in &g.nodes {
        let node = &s.nodes[n];
        if let NodeOp::Graph(child) = node.op {
            let _ = writeln!(out, "{pad}subgraph \"cluster_graph_{}\" {{", id_of(child));
            let _ = writeln!(out, "{pad}  label=\"graph_{} (child graph node {})\";", id_of(child), node.local_id);
            dot_graph(s, names, child, out, depth + 1);
            let _ = writeln!(out, "{pad}}}");
        }
        let label = dot_label(names, &node.op);
        let _ = writeln!(out, "{pad}\"{}\" [shape=record, label=\"{{{} | {label}}}\"];", name(n), node.local_id);
    }
    for n in &g.nodes {
        for d in &s.nodes[n].deps {
            let _ = writeln!(out, "{pad}\"{}\" -> \"{}\";", name(d), name(n));
        }
    }
}

fn dot_label(names: &Names, op: &NodeOp) -> String {
    match op {
        NodeOp::Kernel(k) => {
            let key = match k.kernel {
                Kernel::HostStub(f) => (true, f),
                Kernel::Function(f) => (false, f),
            };
            let name = names.get(&key).map_or("?", String::as_str);
            let (g, b) = (k.grid, k.block);
            format!(
                "KERNEL | {} | grid ({}, {}, {}) block ({}, {}, {}) shared {}",
                escape(name),
                g.x,
                g.y,
                g.z,
                b.x,
                b.y,
                b.z,
                k.shared
            )
        }
        NodeOp::Memcpy(c) => format!(
            "MEMCPY | {:?} | {:#x} \\<- {:#x} | {} x {} x {} bytes",
            c.kind, c.dst, c.src, c.width, c.height, c.depth
        ),
        NodeOp::Memset(m) => format!(
            "MEMSET | {:#x} | value {:#x} ({}-byte elements) | {} x {}",
            m.ptr, m.value, m.element, m.width, m.height
        ),
        NodeOp::Host { f, data } => format!("HOST | function {:#x} | data {data:#x}", *f as usize),
        NodeOp::Graph(child) => format!("CHILD GRAPH | graph_{}", id_of(*child)),
        NodeOp::Empty => "EMPTY".to_string(),
        NodeOp::EventRecord(e) => format!("EVENT RECORD | event {e:#x}"),
        NodeOp::EventWait(e) => format!("EVENT WAIT | event {e:#x}"),
        NodeOp::MemAlloc { ptr, size } => format!("MEM ALLOC | {ptr:#x} | {size} bytes"),
        NodeOp::MemFree(ptr) => format!("MEM FREE | {ptr:#x}"),
    }
}

/// `text` inside a Graphviz record label.
fn escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '"' | '<' | '>' | '{' | '}' | '|' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}
