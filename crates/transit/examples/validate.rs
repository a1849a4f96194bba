//! Validates the transit model on this machine: runs a family of kernels of increasing arithmetic intensity
//! (`kernels/intensity.ptx`) through the runtime on a backend named on the command line, with 1 and 2 worker
//! threads, measures their throughput, predicts it from a machine profile (`lockstep transit probe`), and
//! prints the prediction accuracy beside the paper's (90.4% on a Tesla C2075, 82.6% on a GTX 690).
//!
//! ```text
//! cargo run --release -p transit --example validate -- --backend emu --profile cpu.toml
//! cargo run --release -p transit --example validate -- --backend emu --workers 1,2 --iters 0,4,16,64 --json
//! ```
//!
//! Method.
//! - Z: the emulator (the reference backend, whatever `--backend` is) runs each kernel once with statistics:
//!   thread instructions per byte of global-memory traffic, and instructions per element.
//! - Measured: each configuration runs for at least `--seconds`, `--repeats` times, and the fastest run
//!   counts (the machine may be shared); CS throughput is thread instructions per second (instructions per
//!   element × elements / wall time), MS throughput bytes per second.
//! - Workers: a backend with its own worker threads (the JIT) gets `--workers W` as its thread count and runs
//!   one launch over all the data; a single-threaded backend (the emulator) is run on W host threads, each
//!   with its own runtime and 1/W of the data. Either way n = W threads circulate in the model.
//! - Predicted: the profile's memory curve (R, δ) and lanes M, with the CS rate of one lane calibrated for
//!   the backend on the most intense kernel with one worker (`--calibrate`), because a backend retires PTX
//!   instructions at its own rate, not at the probe's native one. The calibration kernel is left out of the
//!   accuracy. `--calibrate none` keeps the profile's rate.
//! - Accuracy of one prediction: 1 − |predicted − measured| / measured (at least 0), averaged like the
//!   paper's over the kernels.
//!
//! Backends: `emu` (run on W host threads) and `jit` (its own W worker threads); add others in
//! `make_backend`.

use std::sync::Barrier;
use std::time::Instant;

use device::Backend;
use runtime::{Arg, Dim3, LaunchConfig, LaunchOptions, Runtime};
use transit::probe::ProbeOptions;
use transit::profile::Profile;

const PTX: &str = include_str!("../kernels/intensity.ptx");
const BLOCK: u32 = 128;
const BLOCKS: u32 = 64;
const SCALE: f32 = f32::from_bits(0x3F7F_BE77);
const OFFSET: f32 = f32::from_bits(0x3C23_D70A);

/// Who runs the workers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Workers {
    /// The backend runs one launch on its own worker threads (the JIT).
    Internal,
    /// The backend is single-threaded: the harness runs one runtime per worker.
    Harness,
}

fn make_backend(name: &str, workers: usize) -> Result<(Box<dyn Backend>, Workers), String> {
    match name {
        "emu" => Ok((Box::new(emu::Emulator::new()), Workers::Harness)),
        "jit" => {
            Ok((Box::new(jit::Jit::new(jit::Options { threads: workers, ..Default::default() })), Workers::Internal))
        }
        other => Err(format!("unknown backend `{other}`; this example knows emu and jit (add others in make_backend)")),
    }
}

struct Opts {
    backend: String,
    profile: Option<String>,
    workers: Vec<usize>,
    iters: Vec<u32>,
    elements: Option<u32>,
    seconds: f64,
    repeats: usize,
    calibrate: Option<Option<u32>>,
    calibrate_ms: Option<u32>,
    json: bool,
}

const USAGE: &str = "\
usage: validate --backend NAME [--profile PROFILE] [--workers 1,2] [--iters 0,1,2,4,8,16,32,64]
                [--elements N] [--seconds S] [--repeats R] [--calibrate ITERS|none] [--calibrate-ms ITERS]
                [--json]
  --backend    emu or jit (others: add them in make_backend)
  --profile    a profile TOML from `lockstep transit probe`, or a built-in name; probed now when absent
  --workers    worker-thread counts to run (default 1,2)
  --iters      the kernels: FMA rounds per element (default 0,1,2,4,8,16,32,64)
  --elements   float4 elements per launch (default 65536 on emu, 4194304 otherwise)
  --seconds    least time per measurement (default 0.3)
  --repeats    measurements per configuration; the fastest counts (default 3)
  --calibrate  the kernel whose 1-worker run calibrates the lane rate (default: the most intense), or none
  --calibrate-ms  also fit the memory curve's slope (the latency a request costs on this backend) on this
               kernel's 1-worker run, keeping the probed peak R: for backends whose memory accesses are
               themselves work, like the emulator's; the kernel is left out of the accuracy too
  --json       one JSON object instead of the table";

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        backend: String::new(),
        profile: None,
        workers: vec![1, 2],
        iters: vec![0, 1, 2, 4, 8, 16, 32, 64],
        elements: None,
        seconds: 0.3,
        repeats: 3,
        calibrate: None,
        calibrate_ms: None,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    let list = |v: String| -> Result<Vec<u64>, String> {
        v.split(',').map(|x| x.trim().parse::<u64>().map_err(|_| format!("`{x}` is not a count"))).collect()
    };
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--backend" => o.backend = value()?,
            "--profile" => o.profile = Some(value()?),
            "--workers" => o.workers = list(value()?)?.into_iter().map(|w| w as usize).collect(),
            "--iters" => o.iters = list(value()?)?.into_iter().map(|w| w as u32).collect(),
            "--elements" => o.elements = Some(value()?.parse().map_err(|_| "--elements: not a count".to_string())?),
            "--seconds" => o.seconds = value()?.parse().map_err(|_| "--seconds: not a number".to_string())?,
            "--repeats" => o.repeats = value()?.parse().map_err(|_| "--repeats: not a count".to_string())?,
            "--calibrate" => {
                let v = value()?;
                o.calibrate = Some(if v == "none" {
                    None
                } else {
                    Some(v.parse().map_err(|_| "--calibrate: ITERS or none".to_string())?)
                })
            }
            "--calibrate-ms" => {
                o.calibrate_ms = Some(value()?.parse().map_err(|_| "--calibrate-ms: ITERS".to_string())?)
            }
            "--json" => o.json = true,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if o.backend.is_empty() {
        return Err(format!("--backend is required\n{USAGE}"));
    }
    if o.workers.is_empty() || o.workers.contains(&0) || o.iters.is_empty() {
        return Err("--workers and --iters need non-empty lists of positive counts".into());
    }
    if o.seconds.is_nan() || o.seconds <= 0.0 {
        return Err("--seconds must be positive".into());
    }
    Ok(o)
}

/// One kernel of the family, characterized on the emulator.
#[derive(Clone, Debug, serde::Serialize)]
struct Kernel {
    iters: u32,
    /// Thread instructions per float4 element.
    instr_per_element: f64,
    /// Bytes of global-memory traffic per element (32-byte transactions).
    bytes_per_element: f64,
}

fn input(elements: u32) -> Vec<u8> {
    (0..elements * 4).flat_map(|i| ((i % 1000) as f32 * 0.001).to_le_bytes()).collect()
}

fn reference(x: f32, iters: u32) -> f32 {
    (0..iters).fold(x, |x, _| x.mul_add(SCALE, OFFSET))
}

/// Loads the family into a runtime and allocates input and output; returns what a launch needs.
fn prepare(rt: &mut Runtime, elements: u32) -> Result<(runtime::ModuleId, ir::FuncId, Arg, Arg), String> {
    let module = rt.load_ptx(PTX, "intensity.ptx").map_err(|e| e.to_string())?;
    let kernel = rt.kernel(module, Some("intensity")).map_err(|e| e.to_string())?;
    let src = rt.alloc_from(&input(elements)).map_err(|e| e.to_string())?;
    let dst = rt.alloc(u64::from(elements) * 16).map_err(|e| e.to_string())?;
    Ok((module, kernel, Arg::Ptr(src), Arg::Ptr(dst)))
}

fn config() -> LaunchConfig {
    LaunchConfig { grid: Dim3::new(BLOCKS, 1, 1), block: Dim3::new(BLOCK, 1, 1), dynamic_shared: 0 }
}

/// Runs each kernel once on the emulator with statistics, and checks its output.
fn characterize(iters: &[u32]) -> Result<Vec<Kernel>, String> {
    let elements = BLOCKS * BLOCK * 16;
    let mut out = Vec::new();
    for &it in iters {
        let mut rt = Runtime::new(Box::new(emu::Emulator::new()));
        let (module, kernel, src, dst) = prepare(&mut rt, elements)?;
        let outcome = rt
            .launch(
                module,
                kernel,
                config(),
                &[src, dst.clone(), Arg::U32(elements), Arg::U32(it)],
                LaunchOptions { stats: true, cooperative: false },
            )
            .map_err(|e| e.to_string())?;
        let stats = outcome.stats.ok_or("the emulator returned no statistics")?;
        check_output(&rt, &dst, elements, it)?;
        let m = &stats.memory;
        let tx = m.global_loads.transactions + m.global_stores.transactions + m.global_atomics.transactions;
        out.push(Kernel {
            iters: it,
            instr_per_element: stats.thread_instructions as f64 / f64::from(elements),
            bytes_per_element: (tx * u64::from(m.transaction_bytes)) as f64 / f64::from(elements),
        });
    }
    Ok(out)
}

fn check_output(rt: &Runtime, dst: &Arg, elements: u32, iters: u32) -> Result<(), String> {
    let Arg::Ptr(p) = dst else { return Ok(()) };
    let n = elements.min(1024);
    let bytes = rt.read(*p, u64::from(n) * 16).map_err(|e| e.to_string())?;
    for i in 0..n * 4 {
        let got = f32::from_le_bytes(bytes[i as usize * 4..i as usize * 4 + 4].try_into().unwrap_or_default());
        let want = reference((i % 1000) as f32 * 0.001, iters);
        if got.to_bits() != want.to_bits() {
            return Err(format!("wrong result: element {} component {} is {got}, expected {want}", i / 4, i % 4));
        }
    }
    Ok(())
}

/// Thread-instruction and byte throughput of one kernel with `workers` workers.
fn measure(backend: &str, k: &Kernel, workers: usize, elements: u32, seconds: f64) -> Result<(f64, f64), String> {
    let (_, mode) = make_backend(backend, workers)?;
    let (hosts, per_host) = match mode {
        Workers::Internal => (1, elements),
        Workers::Harness => (workers, elements / workers as u32),
    };
    // A first pass (also the warm-up: compilation, page faults) tells how many launches make `seconds`.
    let run = |reps: u32| -> Result<f64, String> {
        let barrier = Barrier::new(hosts + 1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..hosts)
                .map(|_| {
                    let barrier = &barrier;
                    scope.spawn(move || -> Result<(), String> {
                        let (b, _) = make_backend(backend, workers)?;
                        let mut rt = Runtime::new(b);
                        let prepared = prepare(&mut rt, per_host);
                        barrier.wait();
                        let (module, kernel, src, dst) = prepared?;
                        let args = [src, dst.clone(), Arg::U32(per_host), Arg::U32(k.iters)];
                        // Not timed: the first launch compiles (JIT) and faults the pages in.
                        rt.launch(module, kernel, config(), &args, LaunchOptions::default())
                            .map_err(|e| e.to_string())?;
                        barrier.wait();
                        for _ in 0..reps {
                            rt.launch(module, kernel, config(), &args, LaunchOptions::default())
                                .map_err(|e| e.to_string())?;
                        }
                        barrier.wait();
                        check_output(&rt, &dst, per_host, k.iters)
                    })
                })
                .collect();
            barrier.wait();
            barrier.wait();
            let start = Instant::now();
            barrier.wait();
            let elapsed = start.elapsed().as_secs_f64();
            for h in handles {
                h.join().map_err(|_| "a worker panicked".to_string())??;
            }
            Ok(elapsed)
        })
    };
    let once = run(1)?;
    let reps = ((seconds / once.max(1e-6)).ceil() as u32).clamp(1, 10_000);
    let elapsed = if reps == 1 { once } else { run(reps)? };
    let total = f64::from(per_host) * hosts as f64 * f64::from(reps);
    Ok((total * k.instr_per_element / elapsed, total * k.bytes_per_element / elapsed))
}

/// CS throughput (instructions/s) the profile predicts for `k` with `n` threads.
fn predict(p: &Profile, k: &Kernel, n: f64) -> (f64, transit::Bound) {
    let z = k.instr_per_element / k.bytes_per_element * p.ms.request_bytes;
    let m = p.model(z, n);
    let e = m.solve();
    (p.scale().instr_per_s(e.cs) * f64::from(p.units), e.bound)
}

/// Bisection (on a log scale) for the value of a monotone parameter at which `predicted(value)` equals
/// `target`; `rising` says whether the prediction grows with the value.
fn solve(target: f64, rising: bool, predicted: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (1e-9f64, 1e9f64);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if (predicted(mid) < target) == rising {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// Sets the lane rate (and, with `ms`, the memory knee) so that the model reproduces the one-thread runs of
/// the calibration kernels. The compute kernel barely depends on the knee and the memory kernel barely on
/// the rate, so alternating converges in a few rounds.
fn calibrate(p: &mut Profile, cs: (&Kernel, f64), ms: Option<(&Kernel, f64)>) {
    for _ in 0..50 {
        let q = p.clone();
        p.cs.peak_ginstr_per_s = solve(cs.1, true, |v| {
            let mut q = q.clone();
            q.cs.peak_ginstr_per_s = v;
            predict(&q, cs.0, 1.0).0
        });
        let Some((k, measured)) = ms else { return };
        let q = p.clone();
        p.ms.knee_threads = Some(solve(measured, false, |v| {
            let mut q = q.clone();
            q.ms.knee_threads = Some(v);
            predict(&q, k, 1.0).0
        }));
    }
}

#[derive(serde::Serialize)]
struct Row {
    iters: u32,
    z: f64,
    workers: usize,
    measured_ginstr_per_s: f64,
    measured_gb_per_s: f64,
    predicted_ginstr_per_s: f64,
    bound: transit::Bound,
    accuracy: Option<f64>,
    calibration: bool,
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let o = parse_args()?;
    make_backend(&o.backend, 1)?;
    let mut profile = match &o.profile {
        Some(p) => Profile::load(p).map_err(|e| e.to_string())?,
        None => {
            eprintln!("no --profile: probing this CPU (lockstep transit probe -o cpu.toml saves one)");
            let r = transit::probe::run(&ProbeOptions::standard(), &mut |p| {
                if p.done < p.total {
                    eprintln!("probe [{}/{}]: {}", p.done + 1, p.total, p.what)
                }
            });
            r.to_profile("cpu")
        }
    };
    let elements = o.elements.unwrap_or(if o.backend == "emu" { 1 << 16 } else { 1 << 22 });
    let elements = elements.max(BLOCKS * BLOCK);
    eprintln!("characterizing {} kernels on the emulator", o.iters.len());
    let kernels = characterize(&o.iters)?;

    let mut measured = Vec::new();
    for &w in &o.workers {
        for k in &kernels {
            eprintln!("measuring iters={} with {w} worker(s) on {}", k.iters, o.backend);
            let mut best = (0.0f64, 0.0f64);
            for _ in 0..o.repeats.max(1) {
                let (cs, ms) = measure(&o.backend, k, w, elements, o.seconds)?;
                if cs > best.0 {
                    best = (cs, ms);
                }
            }
            measured.push((k.clone(), w, best.0, best.1));
        }
    }

    let native_rate = profile.cs.peak_ginstr_per_s / profile.cs.lanes;
    let calibration_iters = match o.calibrate {
        Some(None) => None,
        Some(Some(i)) => Some(i),
        None => kernels.iter().map(|k| k.iters).max(),
    };
    let w1 = o.workers.iter().copied().min().unwrap_or(1);
    let one_worker = |iters: u32, flag: &str| {
        measured
            .iter()
            .find(|(k, w, _, _)| k.iters == iters && *w == w1)
            .map(|(k, _, cs, _)| (k, *cs))
            .ok_or(format!("{flag} {iters}: that kernel was not run"))
    };
    let probed_knee = profile.knee_threads();
    if let Some(ci) = calibration_iters {
        let cs = one_worker(ci, "--calibrate")?;
        let ms = o.calibrate_ms.map(|i| one_worker(i, "--calibrate-ms")).transpose()?;
        calibrate(&mut profile, cs, ms);
    }
    let calibration_kernels: Vec<u32> = calibration_iters.into_iter().chain(o.calibrate_ms).collect();

    let mut rows = Vec::new();
    for (k, w, cs, ms) in &measured {
        let (pred, bound) = predict(&profile, k, *w as f64);
        let calibration = calibration_kernels.contains(&k.iters) && *w == w1;
        let accuracy = (!calibration).then(|| (1.0 - (pred - cs).abs() / cs).max(0.0));
        rows.push(Row {
            iters: k.iters,
            z: k.instr_per_element / k.bytes_per_element * profile.ms.request_bytes,
            workers: *w,
            measured_ginstr_per_s: cs / 1e9,
            measured_gb_per_s: ms / 1e9,
            predicted_ginstr_per_s: pred / 1e9,
            bound,
            accuracy,
            calibration,
        });
    }
    let mean = |f: &dyn Fn(&Row) -> bool| {
        let v: Vec<f64> = rows.iter().filter(|r| f(r)).filter_map(|r| r.accuracy).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let per_workers: Vec<(usize, Option<f64>)> =
        o.workers.iter().map(|&w| (w, mean(&|r: &Row| r.workers == w))).collect();
    let overall = mean(&|_| true);

    if o.json {
        let v = serde_json::json!({
            "backend": o.backend,
            "profile": profile.name,
            "elements": elements,
            "lanes": profile.cs.lanes,
            "peak_gb_per_s": profile.ms.peak_gb_per_s,
            "knee_threads": profile.knee_threads(),
            "lane_rate_ginstr_per_s": profile.cs.peak_ginstr_per_s / profile.cs.lanes,
            "native_lane_rate_gops_per_s": native_rate,
            "calibration_iters": calibration_iters,
            "calibration_ms_iters": o.calibrate_ms,
            "probed_knee_threads": probed_knee,
            "kernels": kernels,
            "rows": rows,
            "accuracy_by_workers": per_workers.iter().map(|(w, a)| serde_json::json!({"workers": w, "accuracy": a})).collect::<Vec<_>>(),
            "accuracy": overall,
            "paper_accuracy": {"c2075": 0.904, "gtx690": 0.826},
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!(
        "backend {}, profile {} (M = {} lanes, R = {} GB/s, δ at {:.3} threads), {} elements per launch",
        o.backend,
        profile.name,
        profile.cs.lanes,
        profile.ms.peak_gb_per_s,
        profile.knee_threads(),
        elements
    );
    match calibration_iters {
        Some(ci) => println!(
            "lane rate {:.4} Ginstr/s, calibrated on iters={ci} with one worker (the probe's native rate: {:.4} Gops/s)",
            profile.cs.peak_ginstr_per_s / profile.cs.lanes,
            native_rate
        ),
        None => println!("lane rate {:.4} Ginstr/s, the profile's own", native_rate),
    }
    if let Some(mi) = o.calibrate_ms {
        println!(
            "memory knee {:.4} threads (effective latency {:.1} ns per {}-byte request), calibrated on iters={mi}; probed: {:.4}",
            profile.knee_threads(),
            profile.effective_latency_ns(),
            profile.ms.request_bytes,
            probed_knee
        );
    }
    println!(
        "{:>6} {:>9} {:>7} {:>12} {:>10} {:>12} {:>12} {:>9}",
        "iters", "Z", "workers", "meas Gi/s", "meas GB/s", "pred Gi/s", "bound", "accuracy"
    );
    for r in &rows {
        println!(
            "{:>6} {:>9.2} {:>7} {:>12.4} {:>10.3} {:>12.4} {:>12} {:>9}",
            r.iters,
            r.z,
            r.workers,
            r.measured_ginstr_per_s,
            r.measured_gb_per_s,
            r.predicted_ginstr_per_s,
            r.bound.name(),
            r.accuracy.map(|a| format!("{:.1}%", a * 100.0)).unwrap_or_else(|| "(calib.)".into())
        );
    }
    for (w, a) in &per_workers {
        println!("mean accuracy, {w} worker(s): {}", a.map(|a| format!("{:.1}%", a * 100.0)).unwrap_or("-".into()));
    }
    println!(
        "mean accuracy, all: {}   (the paper: 90.4% on Tesla C2075, 82.6% on GTX 690, CS throughput of Rodinia)",
        overall.map(|a| format!("{:.1}%", a * 100.0)).unwrap_or("-".into())
    );
    Ok(())
}
