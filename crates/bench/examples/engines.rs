//! The figures of issue 6, measured side by side in one run:
//!
//! - JIT vs hand-written Rust (`bench::native`) on the same cores, per kernel and as a geometric mean over
//!   the six workloads (target: within 2x), and the same with both on one thread (the steadier figure on a
//!   shared machine, where the second core's load moves the two-thread times);
//! - JIT vs emulator (target: >= 100x on the ALU-heavy kernel): both on one thread; the emulator runs a
//!   smaller problem and its time is scaled per unit of work;
//! - JIT scaling from 1 to 2 worker threads;
//! - JIT compile time per kernel over every PTX file under `corpus/ptx` (target: median <= 5 ms).
//!
//! ```text
//! cargo run --release -p bench --example engines -- [--threads N] [--quick] [--json]
//!     [--kernels a,b,...] [--no-compile] [--no-emu] [--no-vectorize] [--corpus DIR]
//! ```
//!
//! `--no-vectorize` measures the JIT without its vector path (every thread on the scalar thread loop).
//!
//! `--corpus` is where the PTX files for the compile-time figure are (default: this checkout's `corpus/ptx`).
//!
//! Times are the best of several launches after one warm-up launch (the JIT compiles during the warm-up);
//! module loading and resetting the output buffers are not timed. Every output is checked against the native
//! result. Engines that refuse a kernel (`check_supported`) are reported as skipped.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench::native::Pool;
use bench::{BenchError, CompileFailure, Kernel, Measurement, TimingOptions, Workload};
use serde::Serialize;

struct Args {
    threads: usize,
    quick: bool,
    json: bool,
    kernels: Vec<Kernel>,
    compile: bool,
    emu: bool,
    vectorize: bool,
    corpus: PathBuf,
}

const USAGE: &str = "usage: engines [--threads N] [--quick] [--json] [--kernels a,b,...] [--no-compile] [--no-emu] \
                     [--no-vectorize] [--corpus DIR]";

fn parse_args() -> Result<Args, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut args = Args {
        threads: cores,
        quick: false,
        json: false,
        kernels: Kernel::ALL.to_vec(),
        compile: true,
        emu: true,
        vectorize: true,
        corpus: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--threads" => {
                let v = it.next().ok_or("--threads needs a value")?;
                args.threads = v.parse().map_err(|_| format!("--threads: `{v}` is not a number"))?;
                if args.threads == 0 {
                    args.threads = cores;
                }
            }
            "--quick" => args.quick = true,
            "--json" => args.json = true,
            "--no-compile" => args.compile = false,
            "--no-emu" => args.emu = false,
            "--no-vectorize" => args.vectorize = false,
            "--corpus" => args.corpus = it.next().ok_or("--corpus needs a value")?.into(),
            "--kernels" => {
                let v = it.next().ok_or("--kernels needs a value")?;
                args.kernels = v
                    .split(',')
                    .map(|k| Kernel::from_name(k).ok_or(format!("no kernel `{k}`")))
                    .collect::<Result<_, _>>()?;
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            _ => return Err(format!("unknown argument `{a}`\n{USAGE}")),
        }
    }
    Ok(args)
}

/// Problem sizes: (JIT and native, emulator).
fn sizes(kernel: Kernel, quick: bool) -> (usize, usize) {
    match (kernel, quick) {
        (Kernel::MatmulTiled16, false) => (512, 64),
        (Kernel::MatmulTiled16, true) => (256, 32),
        (Kernel::Histogram256, false) => (1 << 24, 1 << 18),
        (Kernel::Histogram256, true) => (1 << 22, 1 << 16),
        (Kernel::AluLoop, false) => (1 << 16, 1 << 12),
        (Kernel::AluLoop, true) => (1 << 14, 1 << 10),
        (_, false) => (1 << 22, 1 << 16),
        (_, true) => (1 << 20, 1 << 14),
    }
}

/// A measurement, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
enum Outcome {
    Ok(Measurement),
    Skipped { skipped: String },
    Failed { failed: String },
}

impl Outcome {
    fn from(r: Result<Measurement, BenchError>) -> Outcome {
        match r {
            Ok(m) => Outcome::Ok(m),
            Err(BenchError::Unsupported(e)) => Outcome::Skipped { skipped: first_line(&e.to_string()) },
            Err(e) => Outcome::Failed { failed: e.to_string() },
        }
    }

    fn ok(&self) -> Option<&Measurement> {
        match self {
            Outcome::Ok(m) => Some(m),
            _ => None,
        }
    }

    fn note(&self) -> Option<&str> {
        match self {
            Outcome::Ok(_) => None,
            Outcome::Skipped { skipped } => Some(skipped),
            Outcome::Failed { failed } => Some(failed),
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

#[derive(Serialize)]
struct Row {
    kernel: Kernel,
    problem: String,
    size: usize,
    emu_problem: String,
    emu_size: usize,
    native: Outcome,
    native_1t: Outcome,
    jit: Outcome,
    jit_1t: Outcome,
    jit_2t: Outcome,
    emu: Option<Outcome>,
    /// jit / native, both on `threads` workers (best times).
    jit_over_native: Option<f64>,
    /// jit / native, both on one thread (steadier than the multi-threaded ratio where other work shares the
    /// cores).
    jit_over_native_1t: Option<f64>,
    /// The emulator's time per unit of work over the 1-thread JIT's.
    jit_1t_speedup_over_emu: Option<f64>,
    /// jit (1 thread) / jit (2 threads).
    jit_scaling_1_to_2: Option<f64>,
    /// native (1 thread) / native (`threads` threads).
    native_scaling: Option<f64>,
}

#[derive(Serialize)]
struct CompileSummary {
    files: usize,
    unloadable: usize,
    kernels: usize,
    compiled: usize,
    refused: usize,
    median_ms: Option<f64>,
    p90_ms: Option<f64>,
    max_ms: Option<f64>,
    wall_s: f64,
    first_failures: Vec<CompileFailure>,
}

#[derive(Serialize)]
struct Report {
    threads: usize,
    quick: bool,
    /// Whether the JIT's vector path was on.
    vectorize: bool,
    rows: Vec<Row>,
    /// Geometric mean of jit/native over the six workloads, when the JIT ran all of them.
    geomean_jit_over_native: Option<f64>,
    /// Over the workloads the JIT ran, when it did not run all six.
    geomean_jit_over_native_partial: Option<(usize, f64)>,
    /// The same on one thread each, when the JIT and native code ran all six on one thread.
    geomean_jit_over_native_1t: Option<f64>,
    compile: Option<CompileSummary>,
    wall_s: f64,
}

fn ratio(a: Option<&Measurement>, b: Option<&Measurement>) -> Option<f64> {
    Some(a?.best_per_work() / b?.best_per_work())
}

fn run_jit(w: &Workload, module: &ir::Module, threads: usize, vectorize: bool, opts: &TimingOptions) -> Outcome {
    let mut jit = jit::Jit::new(jit::Options { threads, vectorize, ..jit::Options::default() });
    Outcome::from(w.run_backend_on(&mut jit, module, threads, opts))
}

fn measure(kernel: Kernel, args: &Args, pools: &Pools, opts: &TimingOptions) -> Result<Row, String> {
    let (size, emu_size) = sizes(kernel, args.quick);
    let module = kernel.module()?;
    let w = Workload::new(kernel, size, &pools.n);
    let native = Outcome::from(w.run_native(&pools.n, opts));
    let native_1t = if args.threads == 1 { None } else { Some(Outcome::from(w.run_native(&pools.one, opts))) };
    let jit = run_jit(&w, &module, args.threads, args.vectorize, opts);
    let jit_skipped = matches!(jit, Outcome::Skipped { .. });
    let again = |threads: usize| {
        if threads == args.threads {
            None
        } else if jit_skipped {
            Some(Outcome::Skipped { skipped: jit.note().unwrap_or_default().to_string() })
        } else {
            Some(run_jit(&w, &module, threads, args.vectorize, opts))
        }
    };
    let jit_1t = again(1);
    let jit_2t = again(2);
    drop(w);
    let emu = args.emu.then(|| {
        let w = Workload::new(kernel, emu_size, &pools.n);
        let emu_opts = TimingOptions { min_time: Duration::from_millis(200), min_reps: 1, max_reps: 5 };
        Outcome::from(w.run_backend_on(&mut *bench::emulator(), &module, 1, &emu_opts))
    });
    // Reuse the main measurement where the thread count is the same.
    let pick = |o: &Option<Outcome>, threads: usize| -> Option<Measurement> {
        match o {
            Some(o) => o.ok().cloned(),
            None if threads == args.threads => jit.ok().cloned(),
            None => None,
        }
    };
    let (j1, j2) = (pick(&jit_1t, 1), pick(&jit_2t, 2));
    let n1 = match &native_1t {
        Some(o) => o.ok().cloned(),
        None => native.ok().cloned(),
    };
    let same = |o: Option<Outcome>, m: Option<&Measurement>| {
        o.unwrap_or_else(|| m.cloned().map_or(Outcome::Failed { failed: "not run".into() }, Outcome::Ok))
    };
    Ok(Row {
        kernel,
        problem: kernel.describe_size(size),
        size,
        emu_problem: kernel.describe_size(emu_size),
        emu_size,
        jit_over_native: ratio(jit.ok(), native.ok()),
        jit_over_native_1t: ratio(j1.as_ref(), n1.as_ref()),
        jit_1t_speedup_over_emu: ratio(emu.as_ref().and_then(Outcome::ok), j1.as_ref()),
        jit_scaling_1_to_2: ratio(j1.as_ref(), j2.as_ref()),
        native_scaling: ratio(n1.as_ref(), native.ok()),
        native_1t: same(native_1t, native.ok()),
        jit_1t: same(jit_1t, jit.ok()),
        jit_2t: same(jit_2t, jit.ok()),
        native,
        jit,
        emu,
    })
}

struct Pools {
    n: Pool,
    one: Pool,
}

fn compile_summary(root: &Path, quick: bool) -> Result<CompileSummary, String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut files: Vec<PathBuf> = bench::ptx_files(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    if quick {
        // One target per source: the sm_80 builds, and files with no target in their name.
        files.retain(|f| {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.contains(".sm_80.") || !name.contains(".sm_")
        });
    }
    let start = Instant::now();
    let t = bench::compile_times(&files, &root);
    let ms = |p: f64| t.percentile_s(p).map(|s| s * 1e3);
    Ok(CompileSummary {
        files: t.files,
        unloadable: t.unloadable.len(),
        kernels: t.kernels,
        compiled: t.times_s.len(),
        refused: t.failures.len(),
        median_ms: ms(50.0),
        p90_ms: ms(90.0),
        max_ms: ms(100.0),
        wall_s: start.elapsed().as_secs_f64(),
        first_failures: t.failures.iter().take(5).cloned().collect(),
    })
}

fn geomean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// `0.00123` s → `1.23 ms`.
fn time(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

fn cell(o: Option<&Measurement>) -> String {
    o.map_or_else(|| "-".to_string(), |m| time(m.best_s))
}

fn factor(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| if r >= 100.0 { format!("{r:.0}x") } else { format!("{r:.2}x") })
}

fn print_table(report: &Report) {
    let t = report.threads;
    if !report.vectorize {
        println!("(JIT without its vector path: --no-vectorize)");
    }
    println!(
        "{:<15} {:>15} {:>10} {:>10} {:>8} {:>11} {:>9} {:>10} {:>10} {:>6} {:>7}",
        "kernel",
        "problem",
        format!("native {t}t"),
        format!("jit {t}t"),
        "jit/nat",
        "emu 1t*",
        "emu/jit1",
        "jit 1t",
        "jit 2t",
        "1->2",
        format!("nat 1->{t}"),
    );
    for r in &report.rows {
        let emu = r.emu.as_ref().and_then(Outcome::ok);
        // The emulator's time scaled to the JIT's problem size.
        let emu_scaled = emu.map(|m| m.best_per_work() * r.kernel.work(r.size));
        println!(
            "{:<15} {:>15} {:>10} {:>10} {:>8} {:>11} {:>9} {:>10} {:>10} {:>6} {:>7}",
            r.kernel.name(),
            r.problem,
            cell(r.native.ok()),
            cell(r.jit.ok()),
            factor(r.jit_over_native),
            emu_scaled.map_or_else(|| "-".to_string(), time),
            factor(r.jit_1t_speedup_over_emu),
            cell(r.jit_1t.ok()),
            cell(r.jit_2t.ok()),
            factor(r.jit_scaling_1_to_2),
            factor(r.native_scaling),
        );
    }
    println!(
        "(best of several launches after a warm-up; * emulator run on a smaller problem ({}), time scaled per unit \
         of work)",
        report.rows.iter().map(|r| format!("{} {}", r.kernel.name(), r.emu_problem)).collect::<Vec<_>>().join(", ")
    );
    let mut notes = Vec::new();
    for r in &report.rows {
        for (engine, o) in [("native", Some(&r.native)), ("jit", Some(&r.jit)), ("emu", r.emu.as_ref())] {
            if let Some(note) = o.and_then(Outcome::note) {
                notes.push(format!("  {} on {engine}: {note}", r.kernel.name()));
            }
        }
    }
    if !notes.is_empty() {
        println!("not measured:");
        for n in notes {
            println!("{n}");
        }
    }
    match (report.geomean_jit_over_native, report.geomean_jit_over_native_partial) {
        (Some(g), _) => println!("geometric mean jit/native over the six workloads: {g:.2}x (target <= 2x)"),
        (None, Some((n, g))) => println!("geometric mean jit/native over {n} of the six workloads: {g:.2}x"),
        (None, None) => println!("geometric mean jit/native: - (the JIT ran none of the six workloads)"),
    }
    if let (Some(g), true) = (report.geomean_jit_over_native_1t, report.threads > 1) {
        println!("geometric mean jit/native on one thread each: {g:.2}x");
    }
    if let Some(c) = &report.compile {
        let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2} ms"));
        println!(
            "JIT compile time: {} of {} kernels in {} PTX files compiled ({} refused, {} files unloadable): \
             median {}, p90 {}, max {} (target median <= 5 ms; {:.1} s in all)",
            c.compiled,
            c.kernels,
            c.files,
            c.refused,
            c.unloadable,
            ms(c.median_ms),
            ms(c.p90_ms),
            ms(c.max_ms),
            c.wall_s,
        );
        if let Some(f) = c.first_failures.first() {
            println!("  first refused: {} `{}`: {}", f.file, f.kernel, first_line(&f.error));
        }
    }
    println!("total {:.1} s", report.wall_s);
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(m) => {
            eprintln!("{m}");
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    let opts = if args.quick {
        TimingOptions { min_time: Duration::from_millis(40), min_reps: 2, max_reps: 10 }
    } else {
        TimingOptions { min_time: Duration::from_millis(300), min_reps: 3, max_reps: 30 }
    };
    let pools = Pools { n: Pool::new(args.threads), one: Pool::new(1) };
    let mut rows = Vec::new();
    for &kernel in &args.kernels {
        if !args.json {
            eprintln!("measuring {} ...", kernel.name());
        }
        match measure(kernel, &args, &pools, &opts) {
            Ok(row) => rows.push(row),
            Err(m) => {
                eprintln!("{}: {m}", kernel.name());
                std::process::exit(1);
            }
        }
    }
    let ratios: Vec<f64> =
        rows.iter().filter(|r| Kernel::WORKLOADS.contains(&r.kernel)).filter_map(|r| r.jit_over_native).collect();
    let all_six = Kernel::WORKLOADS.iter().all(|k| rows.iter().any(|r| r.kernel == *k && r.jit_over_native.is_some()));
    let ratios_1t: Vec<f64> =
        rows.iter().filter(|r| Kernel::WORKLOADS.contains(&r.kernel)).filter_map(|r| r.jit_over_native_1t).collect();
    let compile = if args.compile {
        if !args.json {
            eprintln!("compiling the corpus ...");
        }
        match compile_summary(&args.corpus, args.quick) {
            Ok(c) => Some(c),
            Err(m) => {
                eprintln!("compile times: {m}");
                None
            }
        }
    } else {
        None
    };
    let report = Report {
        threads: args.threads,
        quick: args.quick,
        vectorize: args.vectorize,
        geomean_jit_over_native: if all_six { geomean(&ratios) } else { None },
        geomean_jit_over_native_partial: if all_six { None } else { geomean(&ratios).map(|g| (ratios.len(), g)) },
        geomean_jit_over_native_1t: if ratios_1t.len() == Kernel::WORKLOADS.len() { geomean(&ratios_1t) } else { None },
        rows,
        compile,
        wall_s: start.elapsed().as_secs_f64(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serializes"));
    } else {
        print_table(&report);
    }
}
