//! `lockstep ptx check | print | cfg | isa`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use graph::{DominatorTree, LoopForest, PostDom, PostDominatorTree};
use ir::{Cfg, Diagnostic, FuncId, Module};
use serde::Serialize;

use crate::output::write_output;

/// A PTX file read from disk and run through the front end.
pub struct Loaded {
    /// The text, with any invalid UTF-8 byte replaced by `?` so byte offsets stay true.
    pub text: String,
    pub result: Result<Module, Vec<Diagnostic>>,
}

pub fn load(path: &Path) -> anyhow::Result<Loaded> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => {
            let result = ir::compile(&text);
            Loaded { text, result }
        }
        Err(e) => {
            let bytes = e.into_bytes();
            let result = match ptx::parse_bytes(&bytes) {
                Err(diags) => Err(diags),
                Ok(_) => Err(vec![]),
            };
            Loaded { text: same_length_lossy(&bytes), result }
        }
    })
}

fn same_length_lossy(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| if b.is_ascii() { b as char } else { '?' }).collect()
}

pub fn render(path: &Path, text: &str, diags: &[Diagnostic]) -> String {
    let name = path.display().to_string();
    diags.iter().map(|d| d.render(&name, text)).collect()
}

#[derive(Serialize)]
struct CheckReport {
    file: String,
    ok: bool,
    kernels: usize,
    functions: usize,
    instructions: usize,
    diagnostics: Vec<DiagnosticJson>,
}

#[derive(Serialize)]
struct DiagnosticJson {
    line: u32,
    column: u32,
    message: String,
}

pub fn check(files: &[std::path::PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    let mut reports = Vec::new();
    let mut failed = false;
    for path in files {
        let loaded = load(path)?;
        let mut report = CheckReport {
            file: path.display().to_string(),
            ok: loaded.result.is_ok(),
            kernels: 0,
            functions: 0,
            instructions: 0,
            diagnostics: vec![],
        };
        match &loaded.result {
            Ok(module) => {
                report.kernels = module.kernels().count();
                report.functions = module.functions.values().filter(|f| !f.is_kernel()).count();
                report.instructions = module.instruction_count();
                if !json {
                    println!(
                        "{}: {} kernels, {} functions, {} instructions",
                        report.file, report.kernels, report.functions, report.instructions
                    );
                }
            }
            Err(diags) => {
                failed = true;
                let index = ptx::LineIndex::new(loaded.text.as_bytes());
                report.diagnostics = diags
                    .iter()
                    .map(|d| {
                        let (line, column) = index.line_col(loaded.text.as_bytes(), d.span.start);
                        DiagnosticJson { line, column, message: d.message.clone() }
                    })
                    .collect();
                if !json {
                    eprint!("{}", render(path, &loaded.text, diags));
                    eprintln!("{}: {} error(s)", report.file, diags.len().max(1));
                }
            }
        }
        reports.push(report);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Loads a file and fails with rendered diagnostics if it does not compile.
pub fn compile(path: &Path) -> anyhow::Result<Module> {
    let loaded = load(path)?;
    match loaded.result {
        Ok(m) => Ok(m),
        Err(diags) => {
            eprint!("{}", render(path, &loaded.text, &diags));
            bail!("{} has {} error(s)", path.display(), diags.len().max(1))
        }
    }
}

pub fn print(path: &Path, output: Option<&Path>) -> anyhow::Result<ExitCode> {
    let module = compile(path)?;
    write_output(output, &ir::print(&module))?;
    Ok(ExitCode::SUCCESS)
}

/// Finds the function to work on: by name, or the only defined one.
pub fn select_function(module: &Module, name: Option<&str>) -> anyhow::Result<FuncId> {
    let defined: Vec<(FuncId, &str)> =
        module.functions.iter().filter(|(_, f)| f.body.is_some()).map(|(id, f)| (id, f.name.as_str())).collect();
    let list = || defined.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", ");
    match name {
        Some(name) => match module.function(name) {
            Some(id) if module.functions[id].body.is_some() => Ok(id),
            Some(_) => bail!("`{name}` is only declared in this module, not defined; defined: {}", list()),
            None => bail!("no kernel or function named `{name}`; defined: {}", list()),
        },
        None => match defined.as_slice() {
            [(id, _)] => Ok(*id),
            [] => bail!("the module defines no kernel or function"),
            _ => bail!("the module defines several functions; choose one with --kernel: {}", list()),
        },
    }
}

#[derive(Serialize)]
struct CfgJson {
    function: String,
    blocks: Vec<BlockJson>,
    loops: Vec<LoopJson>,
}

#[derive(Serialize)]
struct BlockJson {
    id: u32,
    label: Option<String>,
    instructions: usize,
    successors: Vec<u32>,
    /// Immediate dominator.
    idom: Option<u32>,
    /// Immediate post-dominator: a block id, "exit" (the virtual exit) or null when unreachable.
    ipdom: serde_json::Value,
    loop_depth: u32,
}

#[derive(Serialize)]
struct LoopJson {
    header: u32,
    depth: u32,
    blocks: Vec<u32>,
}

pub fn cfg(path: &Path, kernel: Option<&str>, output: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let module = compile(path)?;
    let func = &module.functions[select_function(&module, kernel)?];
    if !json {
        write_output(output, &ir::dot::cfg_to_dot(&module, func))?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(body) = &func.body else { bail!("`{}` has no body", func.name) };
    let cfg = Cfg::compute(body);
    let dom = DominatorTree::compute(&cfg);
    let pdom = PostDominatorTree::compute(&cfg);
    let loops = LoopForest::compute(&cfg, &dom);
    let report = CfgJson {
        function: func.name.clone(),
        blocks: body
            .blocks
            .iter()
            .map(|(b, data)| BlockJson {
                id: b.as_u32(),
                label: data.label.clone(),
                instructions: data.insts.len(),
                successors: cfg.succs(b).iter().map(|s| s.as_u32()).collect(),
                idom: dom.idom(b).map(|d| d.as_u32()),
                ipdom: match pdom.ipdom(b) {
                    PostDom::Node(n) => n.as_u32().into(),
                    PostDom::VirtualExit => "exit".into(),
                    PostDom::Unreachable => serde_json::Value::Null,
                },
                loop_depth: loops.loop_depth(b),
            })
            .collect(),
        loops: loops
            .loops()
            .map(|l| LoopJson {
                header: loops.header(l).as_u32(),
                depth: loops.depth(l),
                blocks: loops.body(l).iter().map(|b| b.as_u32()).collect(),
            })
            .collect(),
    };
    write_output(output, &(serde_json::to_string_pretty(&report)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct IsaRow<'a> {
    section: &'a str,
    instruction: &'a str,
    ptx: &'a str,
    status: &'a str,
    reason: &'a str,
}

/// `lockstep ptx isa`: the coverage table of `conformance::isa`.
pub fn isa(filter: Option<&str>, json: bool, markdown: bool) -> anyhow::Result<ExitCode> {
    use conformance::isa;
    let samples = isa::parse_samples(isa::SAMPLES).map_err(anyhow::Error::msg)?;
    let samples: Vec<isa::Sample> = samples
        .into_iter()
        .filter(|s| filter.is_none_or(|f| s.section.contains(f) || s.instruction.contains(f)))
        .collect();
    let rows = isa::coverage(&samples);
    if markdown {
        print!("{}", isa::markdown(&rows));
    } else if json {
        let out: Vec<IsaRow> = rows
            .iter()
            .map(|(s, st)| IsaRow {
                section: &s.section,
                instruction: &s.instruction,
                ptx: &s.ptx,
                status: st.label(),
                reason: st.reason(),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let width = rows.iter().map(|(s, _)| s.instruction.len()).max().unwrap_or(0).min(60);
        let mut section = "";
        for (s, st) in &rows {
            if s.section != section {
                section = &s.section;
                println!("{section}");
            }
            let reason = if st.reason().is_empty() { String::new() } else { format!("  ({})", st.reason()) };
            println!("  {:<width$}  {}{}", s.instruction, st.label(), reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}
