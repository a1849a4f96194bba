//! `lockstep demo`: a tour of what exists so far, on a kernel compiled into the binary.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use graph::{DominatorTree, LoopForest, PostDom, PostDominatorTree};
use ir::Cfg;

/// `corpus/cuda/simt_stats.cu`, compiled by nvcc for sm_80 at -O3 (see corpus/README.md).
const DEMO_PTX: &str = include_str!("../../../corpus/ptx/simt_stats/simt_stats.sm_80.O3.ptx");
const DEMO_NAME: &str = "simt_stats.sm_80.O3.ptx";

pub fn run() -> anyhow::Result<ExitCode> {
    println!("lockstep demo: the PTX front end and the SIMT reconvergence analysis");
    println!("input: {DEMO_NAME} ({} bytes, built into this binary; source corpus/cuda/simt_stats.cu)\n", DEMO_PTX.len());

    let start = Instant::now();
    let module = match ir::compile(DEMO_PTX) {
        Ok(m) => m,
        Err(diags) => {
            for d in &diags {
                eprint!("{}", d.render(DEMO_NAME, DEMO_PTX));
            }
            bail!("the built-in demo kernel failed to compile");
        }
    };
    let elapsed = start.elapsed();
    println!(
        "parsed, lowered and verified in {:.2} ms: {} kernels, {} device functions, {} instructions\n",
        elapsed.as_secs_f64() * 1e3,
        module.kernels().count(),
        module.functions.values().filter(|f| !f.is_kernel()).count(),
        module.instruction_count()
    );

    for (_, func) in module.functions.iter() {
        let Some(body) = &func.body else { continue };
        let cfg = Cfg::compute(body);
        let dom = DominatorTree::compute(&cfg);
        let pdom = PostDominatorTree::compute(&cfg);
        let loops = LoopForest::compute(&cfg, &dom);
        let name = |b: ir::BlockId| body.blocks[b].label.clone().unwrap_or_else(|| format!("{b}"));
        println!(
            "{} `{}`: {} instructions in {} basic blocks, {} loops",
            if func.is_kernel() { "kernel" } else { "function" },
            func.name,
            body.insts.len(),
            body.blocks.len(),
            loops.len()
        );
        for (b, data) in body.blocks.iter() {
            if cfg.succs(b).len() < 2 {
                continue;
            }
            let Some(&last) = data.insts.last() else { continue };
            let line = module.line_of(body.insts[last].span);
            let mut text = String::new();
            let _ = ir::print::write_inst(&mut text, &module, func, body, &body.insts[last]);
            let join = match pdom.ipdom(b) {
                PostDom::Node(n) => format!("reconverge at {}", name(n)),
                PostDom::VirtualExit => "reconverge only at the function's exit".to_string(),
                PostDom::Unreachable => "(unreachable code)".to_string(),
            };
            println!("  line {line:>4}: `{text}` may diverge; threads {join}");
        }
        for l in loops.loops() {
            println!(
                "  loop at {} ({} blocks, depth {})",
                name(loops.header(l)),
                loops.body(l).len(),
                loops.depth(l)
            );
        }
        println!();
    }

    let printed = ir::print(&module);
    let again = ir::compile(&printed).map_err(|d| anyhow::anyhow!("{} diagnostics", d.len())).context("re-parsing the printed PTX")?;
    println!(
        "round trip: printed canonical PTX ({} bytes) parses back to {} IR",
        printed.len(),
        if again.without_source_positions() == module.without_source_positions() { "the same" } else { "a DIFFERENT" }
    );
    println!("\nnext: `lockstep ptx check FILE.ptx`, `lockstep ptx cfg FILE.ptx --kernel NAME | dot -Tsvg > cfg.svg`");
    Ok(ExitCode::SUCCESS)
}
