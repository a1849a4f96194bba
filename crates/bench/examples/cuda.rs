//! The figures of issue 19 (running unmodified CUDA programs), measured side by side in one run, through
//! `lockstep exec` and the release `libcudart.so` exactly as a user runs them:
//!
//! - the launch overhead of an empty kernel through the runtime (`corpus/apps/bin/launch_overhead`: each
//!   launch-and-synchronize timed on the host; target: median <= 10 us on the JIT; Ocelot's Table II
//!   measured 35-90 us), on the JIT and the emulator;
//! - the time to the first launch of a Thrust program (`corpus/apps/bin/thrust`): from its first CUDA call
//!   to the end of its first kernel, cold (an empty JIT disk cache) and warm (the cache filled by the cold
//!   run), with the PTX loading and kernel preparation it includes;
//! - every corpus program's whole run (wall clock, process start to exit) on the JIT and on the emulator.
//!
//! ```text
//! cargo run --release -p bench --example cuda -- [--quick] [--json] [--runs N]
//! ```
//!
//! It builds `lockstep` and `libcudart.so` in release mode first (`cargo build --release -p lockstep -p
//! cudart`). Times are the best of `--runs` runs (default 3; 1 with `--quick`), the launch overhead's the
//! median of each run's median.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Args {
    quick: bool,
    json: bool,
    runs: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { quick: false, json: false, runs: 3 };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => {
                a.quick = true;
                a.runs = 1;
            }
            "--json" => a.json = true,
            "--runs" => a.runs = it.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0).ok_or("--runs N")?,
            "-h" | "--help" => return Err("usage: cuda [--quick] [--json] [--runs N]".into()),
            other => return Err(format!("unknown argument `{other}`; usage: cuda [--quick] [--json] [--runs N]")),
        }
    }
    Ok(a)
}

/// `target/release/lockstep`, built with the runtime beside it.
fn lockstep() -> Result<PathBuf, String> {
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "-q", "-p", "lockstep", "-p", "cudart"])
        .current_dir(root())
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build --release -p lockstep -p cudart failed".into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/release/examples/cuda -> target/release/lockstep
    let bin = exe.parent().and_then(Path::parent).map(|d| d.join("lockstep")).ok_or("no target dir")?;
    if !bin.is_file() {
        return Err(format!("{} is missing", bin.display()));
    }
    Ok(bin)
}

/// One run of a corpus program under `lockstep exec`: wall seconds, stderr, and the report.
struct Run {
    seconds: f64,
    stderr: String,
    report: serde_json::Value,
}

fn exec(lockstep: &Path, backend: &str, program: &str, args: &[&str], env: &[(&str, &Path)]) -> Result<Run, String> {
    let dir = tempfile_dir()?;
    let report = dir.join("report.json");
    let mut cmd = Command::new(lockstep);
    cmd.args(["exec", "-q", "--backend", backend, "--report"])
        .arg(&report)
        .arg("--")
        .arg(root().join("corpus/apps/bin").join(program))
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd.output().map_err(|e| format!("lockstep exec: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() && !program.starts_with("fault") {
        return Err(format!("{program} on {backend} failed:\n{stderr}"));
    }
    let report =
        std::fs::read(&report).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Run { seconds, stderr, report })
}

fn tempfile_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    for i in 0..1000u32 {
        let d = base.join(format!("lockstep-bench-{}-{i}", std::process::id()));
        if std::fs::create_dir(&d).is_ok() {
            return Ok(d);
        }
    }
    Err("cannot make a temporary folder".into())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[derive(Serialize)]
struct Overhead {
    backend: String,
    median_us: f64,
    p10_us: f64,
    p90_us: f64,
    launches: u32,
}

/// `launch_overhead_us median=M p10=A p90=B mean=C n=N` from the program's stderr.
fn parse_overhead(stderr: &str) -> Option<(f64, f64, f64)> {
    let line = stderr.lines().find(|l| l.starts_with("launch_overhead_us"))?;
    let field = |k: &str| -> Option<f64> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k).and_then(|v| v.strip_prefix('=')).and_then(|v| v.parse().ok()))
    };
    Some((field("median")?, field("p10")?, field("p90")?))
}

#[derive(Serialize)]
struct FirstLaunch {
    /// `cold` (empty JIT disk cache) or `warm` (the cache the cold run filled).
    cache: String,
    first_launch_seconds: f64,
    load_seconds: f64,
    compile_seconds: f64,
    whole_run_seconds: f64,
}

#[derive(Serialize)]
struct ProgramTime {
    program: String,
    jit_seconds: f64,
    emu_seconds: f64,
    emu_over_jit: f64,
}

#[derive(Serialize)]
struct Results {
    launch_overhead: Vec<Overhead>,
    thrust_first_launch: Vec<FirstLaunch>,
    programs: Vec<ProgramTime>,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(a: &Args) -> Result<(), String> {
    let bin = lockstep()?;
    let launches = if a.quick { "1000" } else { "5000" };
    let mut overhead = Vec::new();
    for backend in ["jit", "emu"] {
        let mut medians = Vec::new();
        let mut last = (0.0, 0.0, 0.0);
        for _ in 0..a.runs {
            let r = exec(&bin, backend, "launch_overhead", &[launches], &[])?;
            last = parse_overhead(&r.stderr).ok_or_else(|| format!("no timing line in:\n{}", r.stderr))?;
            medians.push(last.0);
        }
        overhead.push(Overhead {
            backend: backend.into(),
            median_us: median(medians),
            p10_us: last.1,
            p90_us: last.2,
            launches: launches.parse().unwrap_or(0),
        });
    }

    let mut first = Vec::new();
    for _ in 0..a.runs {
        let cache = tempfile_dir()?;
        for kind in ["cold", "warm"] {
            let r = exec(&bin, "jit", "thrust", &[], &[("LOCKSTEP_JIT_CACHE", &cache)])?;
            let f = |k: &str| r.report[k].as_f64().unwrap_or(f64::NAN);
            let compile = r.report["kernels"]
                .as_array()
                .map_or(0.0, |ks| ks.iter().filter_map(|k| k["compile_seconds"].as_f64()).sum());
            first.push(FirstLaunch {
                cache: kind.into(),
                first_launch_seconds: f("first_launch_seconds"),
                load_seconds: f("load_seconds"),
                compile_seconds: compile,
                whole_run_seconds: r.seconds,
            });
        }
        let _ = std::fs::remove_dir_all(&cache);
    }
    // Best of the runs, per cache state.
    let mut best: Vec<FirstLaunch> = Vec::new();
    for f in first {
        match best.iter_mut().find(|b| b.cache == f.cache) {
            Some(b) if f.first_launch_seconds < b.first_launch_seconds => *b = f,
            Some(_) => {}
            None => best.push(f),
        }
    }

    let manifest = std::fs::read_to_string(root().join("corpus/apps/tests.tsv")).map_err(|e| e.to_string())?;
    let mut programs = Vec::new();
    for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 4 || f[3] == "refused" {
            continue;
        }
        let pargs: Vec<&str> = if f[1] == "-" { Vec::new() } else { f[1].split(' ').collect() };
        let name = if pargs.is_empty() { f[0].to_string() } else { format!("{} {}", f[0], f[1]) };
        let mut times = [f64::INFINITY; 2];
        for (i, backend) in ["jit", "emu"].iter().enumerate() {
            for _ in 0..a.runs {
                times[i] = times[i].min(exec(&bin, backend, f[0], &pargs, &[])?.seconds);
            }
        }
        programs.push(ProgramTime {
            program: name,
            jit_seconds: times[0],
            emu_seconds: times[1],
            emu_over_jit: times[1] / times[0],
        });
    }

    let results = Results { launch_overhead: overhead, thrust_first_launch: best, programs };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!(
        "Empty-kernel launch overhead (launch + cudaDeviceSynchronize, timed by the program; median of run medians):"
    );
    for o in &results.launch_overhead {
        println!(
            "  {:<4} median {:8.2} us   p10 {:8.2} us   p90 {:8.2} us   ({} launches a run)",
            o.backend, o.median_us, o.p10_us, o.p90_us, o.launches
        );
    }
    println!("\nThrust program, first kernel launch on the JIT (best of {}):", a.runs);
    for f in &results.thrust_first_launch {
        println!(
            "  {:<4} cache: first kernel done {:.3} s after the first CUDA call (PTX loaded in {:.3} s, kernels prepared in {:.3} s); whole run {:.3} s",
            f.cache, f.first_launch_seconds, f.load_seconds, f.compile_seconds, f.whole_run_seconds
        );
    }
    println!("\nCorpus programs, whole run under `lockstep exec` (wall clock, best of {}):", a.runs);
    println!("  {:<24} {:>10} {:>10} {:>9}", "program", "jit (s)", "emu (s)", "emu/jit");
    for p in &results.programs {
        println!("  {:<24} {:>10.3} {:>10.3} {:>8.1}x", p.program, p.jit_seconds, p.emu_seconds, p.emu_over_jit);
    }
    let geo = (results.programs.iter().map(|p| p.emu_over_jit.ln()).sum::<f64>() / results.programs.len() as f64).exp();
    println!("  geometric mean emu/jit: {geo:.2}x");
    Ok(())
}
