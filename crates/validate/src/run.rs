//! Running one pair: the CUDA side on the emulator for the ground truth, the CPU side compiled at each
//! optimization level, traced and analyzed for the prediction.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use crate::manifest::{Manifest, Pair};

/// What the emulator measured on the CUDA side, over every launch of the kernels that count.
#[derive(Debug, Clone, Serialize)]
pub struct GroundTruth {
    /// Σ thread instructions / (warp size × Σ warp instructions).
    pub simt_efficiency: f64,
    /// Global-memory transactions per warp access (loads, stores and atomics).
    pub transactions_per_access: f64,
    pub kernels: Vec<String>,
    pub launches: u64,
    pub thread_instructions: u64,
    pub warp_accesses: u64,
    pub seconds: f64,
}

/// What the analyzer predicts from the CPU side at one optimization level.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub simt_efficiency: f64,
    /// Heap transactions per warp access (the CPU's counterpart of global memory).
    pub transactions_per_access: f64,
    pub simt_threads: usize,
    pub thread_instructions: u64,
    pub warp_accesses: u64,
    pub trace_seconds: f64,
    pub analyze_seconds: f64,
}

/// The tools a run needs.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The `lockstep` binary (its `exec` and `trace` subcommands).
    pub lockstep: PathBuf,
    pub warp_size: u32,
    /// Where compiled programs and traces go.
    pub work: PathBuf,
}

/// Runs the CUDA side under `lockstep exec --backend emu`; returns the ground truth and its standard output.
pub fn ground_truth(tools: &Tools, m: &Manifest, p: &Pair) -> Result<(GroundTruth, Vec<u8>), String> {
    let bin = m.cuda_binary(p);
    if !bin.is_file() {
        return Err(format!("no CUDA binary {} (build it with {}/build.sh)", bin.display(), m.dir.display()));
    }
    let report = tools.work.join(format!("{}.gpu.json", p.name));
    let t0 = Instant::now();
    let out = Command::new(&tools.lockstep)
        .args(["exec", "--backend", "emu", "-q", "--report"])
        .arg(&report)
        .arg("--")
        .arg(&bin)
        .args(&p.args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", tools.lockstep.display()))?;
    let seconds = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "the CUDA side failed on the emulator ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = std::fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
    let kernels = v["kernels"].as_array().ok_or("the exec report has no kernels")?;
    let counts = |k: &serde_json::Value| {
        p.kernels.is_empty()
            || p.kernels.iter().any(|want| {
                let name = k["name"].as_str().unwrap_or("");
                let demangled = k["demangled"].as_str().unwrap_or("");
                name == want || name.contains(want.as_str()) || demangled.contains(want.as_str())
            })
    };
    let (mut thread, mut warp, mut tx, mut acc, mut launches) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut names = Vec::new();
    let mut warp_size = tools.warp_size;
    for k in kernels.iter().filter(|k| counts(k)) {
        let s = &k["stats"];
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        thread += n(&s["thread_instructions"]);
        warp += n(&s["warp_instructions"]);
        warp_size = s["warp_size"].as_u64().map_or(warp_size, |w| w as u32);
        for kind in ["global_loads", "global_stores", "global_atomics"] {
            tx += n(&s["memory"][kind]["transactions"]);
            acc += n(&s["memory"][kind]["warp_accesses"]);
        }
        launches += n(&k["launches"]);
        names.push(k["demangled"].as_str().or(k["name"].as_str()).unwrap_or("?").to_string());
    }
    if warp == 0 {
        return Err(format!("no kernel of the CUDA side counts (kernels = {:?})", p.kernels));
    }
    let truth = GroundTruth {
        simt_efficiency: thread as f64 / (f64::from(warp_size) * warp as f64),
        transactions_per_access: if acc == 0 { 0.0 } else { tx as f64 / acc as f64 },
        kernels: names,
        launches,
        thread_instructions: thread,
        warp_accesses: acc,
        seconds,
    };
    Ok((truth, out.stdout))
}

/// Compiles the CPU side at `-O{level}`, traces it and analyzes the trace; returns the prediction and the
/// program's standard output.
pub fn predict(tools: &Tools, m: &Manifest, p: &Pair, level: u8) -> Result<(Prediction, Vec<u8>), String> {
    let src = m.cpu_source(p);
    let exe = tools.work.join(format!("{}.O{level}", p.name));
    compile(&src, &exe, level, &p.cflags)?;
    let file = tools.work.join(format!("{}.O{level}.trace", p.name));
    let t0 = Instant::now();
    let mut cmd = Command::new(&tools.lockstep);
    cmd.args(["trace", "-q", "-o"]).arg(&file).args(["--function", &p.function]);
    if p.per_iteration {
        cmd.arg("--per-iteration");
    }
    cmd.arg("--").arg(&exe).args(&p.args).stdin(Stdio::null()).env("OMP_NUM_THREADS", "1").envs(&p.env);
    let out = cmd.output().map_err(|e| format!("{}: {e}", tools.lockstep.display()))?;
    let trace_seconds = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "-O{level}: tracing failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let t1 = Instant::now();
    let trace = trace::Trace::open(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    if trace.simt.is_empty() {
        return Err(format!("-O{level}: `{}` never ran: the trace has no SIMT threads", p.function));
    }
    let config = fuser::Config { warp_size: tools.warp_size, ..fuser::Config::default() };
    let report = fuser::Analysis::new(&trace).run(&config, &|_| {}).map_err(|e| format!("-O{level}: {e}"))?;
    let analyze_seconds = t1.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&file);
    let mem = &report.memory;
    // The heap, as the paper counts: static data is mostly constants and the GOT, which a GPU has as
    // immediates or in constant memory.
    let (tx, acc) = (mem.heap.transactions, mem.heap.warp_accesses);
    let prediction = Prediction {
        simt_efficiency: report.simt_efficiency.unwrap_or(0.0),
        transactions_per_access: if acc == 0 { 0.0 } else { tx as f64 / acc as f64 },
        simt_threads: report.simt_threads,
        thread_instructions: report.thread_instructions,
        warp_accesses: acc,
        trace_seconds,
        analyze_seconds,
    };
    Ok((prediction, out.stdout))
}

fn compile(src: &Path, exe: &Path, level: u8, flags: &[String]) -> Result<(), String> {
    let cc = if src.extension().is_some_and(|e| e == "c") { "gcc" } else { "g++" };
    let mut cmd = Command::new(cc);
    cmd.arg(format!("-O{level}")).arg("-g0");
    if let Some(dir) = src.parent() {
        cmd.arg("-I").arg(dir);
    }
    let out = cmd
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(src)
        .args(["-lm", "-pthread"])
        .output()
        .map_err(|e| format!("{cc}: {e} (install gcc and g++)"))?;
    if !out.status.success() {
        return Err(format!("{cc} -O{level} {}: {}", src.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}
