//! Graphviz DOT rendering of a function's CFG, annotated with immediate post-dominators (the SIMT
//! reconvergence points) and natural loops.

use std::fmt::Write as _;

use graph::{DominatorTree, LoopForest, PostDom, PostDominatorTree};

use crate::cfg::Cfg;
use crate::module::{BlockId, Function, Module};
use crate::print::write_inst;

/// Renders `func`'s CFG as DOT. Each node lists its instructions; dashed edges are the fall-through or
/// not-taken side of a conditional branch; a branching block names its reconvergence point (its immediate
/// post-dominator), also drawn as a dotted blue edge.
pub fn cfg_to_dot(module: &Module, func: &Function) -> String {
    let mut out = String::new();
    let Some(body) = &func.body else {
        let _ = writeln!(out, "digraph \"{}\" {{ label=\"declaration only\" }}", escape(&func.name));
        return out;
    };
    let cfg = Cfg::compute(body);
    let dom = DominatorTree::compute(&cfg);
    let pdom = PostDominatorTree::compute(&cfg);
    let loops = LoopForest::compute(&cfg, &dom);
    let name = |b: BlockId| body.blocks[b].label.clone().unwrap_or_else(|| b.to_string());
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&func.name));
    let _ = writeln!(out, "  node [shape=box fontname=\"monospace\" fontsize=10];");
    let _ = writeln!(out, "  \"exit\" [shape=doublecircle label=\"exit\"];");
    for b in body.blocks.keys() {
        let mut label = format!("{}\\l", escape(&name(b)));
        if loops.is_header(b) {
            let _ = write!(label, "(loop header, depth {})\\l", loops.loop_depth(b));
        }
        for (_, inst) in body.block_insts(b) {
            let mut text = String::new();
            let _ = write_inst(&mut text, module, func, body, inst);
            let _ = write!(label, "  {}\\l", escape(&text));
        }
        if cfg.succs(b).len() > 1 {
            let r = match pdom.ipdom(b) {
                PostDom::Node(n) => name(n),
                PostDom::VirtualExit => "exit".to_string(),
                PostDom::Unreachable => "unreachable".to_string(),
            };
            let _ = write!(label, "reconverges at {}\\l", escape(&r));
        }
        let _ = writeln!(out, "  \"b{}\" [label=\"{label}\"];", b.as_u32());
    }
    for b in body.blocks.keys() {
        let succs = cfg.succs(b);
        for (i, s) in succs.iter().enumerate() {
            let style = if succs.len() > 1 && i + 1 == succs.len() { " [style=dashed]" } else { "" };
            let _ = writeln!(out, "  \"b{}\" -> \"b{}\"{style};", b.as_u32(), s.as_u32());
        }
        if succs.is_empty() {
            let _ = writeln!(out, "  \"b{}\" -> \"exit\";", b.as_u32());
        }
        if succs.len() > 1 {
            let target = match pdom.ipdom(b) {
                PostDom::Node(n) => format!("b{}", n.as_u32()),
                _ => "exit".to_string(),
            };
            let _ = writeln!(
                out,
                "  \"b{}\" -> \"{target}\" [style=dotted color=blue constraint=false label=\"ipdom\"];",
                b.as_u32()
            );
        }
    }
    out.push_str("}\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
