//! Measures this CPU for a machine profile: the memory-throughput curve against threads (and its knee δ), the
//! latency of dependent loads (a pointer chase), and the compute lanes (the knee π of a compute-only sweep).
//!
//! - Memory: t threads each stream over their share of two large buffers (read one word, write one word, as a
//!   kernel that loads, computes and stores does); throughput counts the bytes the program reads and writes.
//!   The roofline through the points has slope f(1) per thread and ceiling max f(t); its knee is δ.
//! - Latency: one thread follows a random cyclic permutation of 64-byte nodes, so every load depends on the
//!   one before and misses the caches.
//! - Compute: t threads run independent multiply-add chains on registers only. CS throughput grows with t
//!   until the lanes are full; M = peak / (throughput of one thread), rounded.
//!
//! The numbers are noisy on a shared machine: each point is the best of a few runs.

use std::sync::Barrier;
use std::time::Instant;

use crate::profile::{ComputePoint, ComputeSystem, InstructionKind, MemoryPoint, MemorySystem, Profile, FORMAT};

/// What to measure and for how long.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOptions {
    /// Threads of the sweeps go from 1 to this.
    pub max_threads: usize,
    /// Bytes of the two streaming buffers together (should dwarf the last-level cache).
    pub stream_bytes: usize,
    /// Bytes of the pointer-chase buffer.
    pub chase_bytes: usize,
    /// Seconds each measured run lasts at least.
    pub min_seconds: f64,
    /// Runs per point (the best counts).
    pub repeats: usize,
}

impl ProbeOptions {
    /// A few seconds per sweep; sweeps up to twice the hardware threads (at least 4).
    pub fn standard() -> ProbeOptions {
        let hw = hardware_threads();
        ProbeOptions {
            max_threads: (2 * hw).clamp(4, 64),
            stream_bytes: 256 << 20,
            chase_bytes: 128 << 20,
            min_seconds: 0.2,
            repeats: 3,
        }
    }

    /// Fractions of a second in all; for tests and smoke runs (the numbers mean little).
    pub fn quick() -> ProbeOptions {
        ProbeOptions { max_threads: 2, stream_bytes: 4 << 20, chase_bytes: 1 << 20, min_seconds: 0.01, repeats: 1 }
    }
}

/// Progress of a probe: `done` of `total` steps finished, `what` is the step running now.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub what: String,
}

/// Everything measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeResult {
    /// (threads, GB/s) of the memory sweep.
    pub memory: Vec<(usize, f64)>,
    /// (threads, G operations/s) of the compute sweep.
    pub compute: Vec<(usize, f64)>,
    /// Nanoseconds per dependent load.
    pub latency_ns: f64,
    pub hardware_threads: usize,
    pub cpu: String,
}

/// Hardware threads the OS offers this process.
pub fn hardware_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Runs the probe, calling `progress` before each step and once at the end.
pub fn run(opts: &ProbeOptions, progress: &mut dyn FnMut(&Progress)) -> ProbeResult {
    let max_t = opts.max_threads.max(1);
    let total = 2 * max_t + 2;
    let mut done = 0;
    let mut step = |what: String, done: &mut usize| {
        progress(&Progress { done: *done, total, what });
        *done += 1;
    };

    step(format!("preparing {} MiB of streaming buffers", opts.stream_bytes >> 20), &mut done);
    let words = (opts.stream_bytes / 16).max(1024);
    let src: Vec<u64> = (0..words as u64).collect();
    let mut dst: Vec<u64> = vec![0; words];

    let mut memory = Vec::new();
    for t in 1..=max_t {
        step(format!("memory throughput with {t} thread{}", plural(t)), &mut done);
        let best = (0..opts.repeats.max(1)).map(|_| stream(&src, &mut dst, t, opts.min_seconds)).fold(0.0f64, f64::max);
        memory.push((t, best / 1e9));
    }
    drop(src);
    drop(dst);

    step(format!("latency: pointer chase over {} MiB", opts.chase_bytes >> 20), &mut done);
    let latency_ns = chase(opts.chase_bytes, opts.min_seconds);

    let mut compute = Vec::new();
    for t in 1..=max_t {
        step(format!("compute lanes with {t} thread{}", plural(t)), &mut done);
        let best = (0..opts.repeats.max(1)).map(|_| spin_rate(t, opts.min_seconds)).fold(0.0f64, f64::max);
        compute.push((t, best / 1e9));
    }
    progress(&Progress { done: total, total, what: "done".into() });
    ProbeResult { memory, compute, latency_ns, hardware_threads: hardware_threads(), cpu: cpu_name() }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl ProbeResult {
    /// δ's abscissa: where the roofline through the memory points (slope f(1), ceiling max f) bends.
    pub fn memory_knee(&self) -> (f64, f64) {
        let one = self.memory.first().map(|p| p.1).unwrap_or(0.0);
        let peak = self.memory.iter().map(|p| p.1).fold(0.0, f64::max);
        let knee = if one > 0.0 { (peak / one).max(1.0) } else { 1.0 };
        (knee, peak)
    }

    /// M and the CS peak: threads at which the compute sweep stops growing, and its maximum.
    pub fn compute_lanes(&self) -> (f64, f64) {
        let one = self.compute.first().map(|p| p.1).unwrap_or(0.0);
        let peak = self.compute.iter().map(|p| p.1).fold(0.0, f64::max);
        let lanes = if one > 0.0 { (peak / one).round().max(1.0) } else { 1.0 };
        (lanes, peak)
    }

    /// The measured machine as a profile.
    pub fn to_profile(&self, name: &str) -> Profile {
        let (knee, peak_gbs) = self.memory_knee();
        let (lanes, peak_gops) = self.compute_lanes();
        Profile {
            format: FORMAT,
            name: name.into(),
            description: format!(
                "{} ({} hardware threads), measured by lockstep transit probe",
                self.cpu, self.hardware_threads
            ),
            source: "lockstep transit probe".into(),
            units: 1,
            unit_name: "CPU".into(),
            max_threads: self.hardware_threads as f64,
            cs: ComputeSystem {
                lanes,
                peak_ginstr_per_s: round4(peak_gops.max(1e-6)),
                instruction: InstructionKind::Thread,
                curve: self
                    .compute
                    .iter()
                    .map(|&(t, g)| ComputePoint { threads: t as f64, ginstr_per_s: round4(g) })
                    .collect(),
            },
            ms: MemorySystem {
                peak_gb_per_s: round4(peak_gbs.max(1e-6)),
                knee_threads: Some(round4(knee)),
                latency_ns: Some(round4(self.latency_ns.max(1e-3))),
                request_bytes: 64.0,
                curve: self
                    .memory
                    .iter()
                    .map(|&(t, g)| MemoryPoint { threads: t as f64, gb_per_s: round4(g) })
                    .collect(),
            },
            notes: vec![
                "ms: t threads each copy their share of a large buffer (8-byte read + 8-byte write per word); \
                 GB/s counts the bytes read and written; knee = peak / f(1 thread)"
                    .into(),
                "ms.latency_ns: dependent loads over a random cyclic permutation of 64-byte nodes".into(),
                "cs: independent 64-bit multiply-add chains, 1 instruction = one multiply or add; lanes = peak / \
                 rate of one thread (rounded). A backend's instructions (PTX) run at its own rate: the validation \
                 example calibrates it"
                    .into(),
            ],
        }
    }
}

fn round4(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 4 - v.abs().log10().ceil() as i32;
    let f = 10f64.powi(digits.clamp(-10, 12));
    (v * f).round() / f
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Bytes per second of `threads` threads copying their shares of `src` into `dst` (with a +1 so it is not a
/// library memcpy, whose non-temporal stores would skip the read-for-ownership a kernel's stores pay).
fn stream(src: &[u64], dst: &mut [u64], threads: usize, min_seconds: f64) -> f64 {
    let chunk = src.len().div_ceil(threads);
    // One pass to learn how many make min_seconds.
    let start = Instant::now();
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.wrapping_add(1);
    }
    std::hint::black_box(&mut *dst);
    let pass = start.elapsed().as_secs_f64().max(1e-6);
    let passes = ((min_seconds / pass).ceil() as usize).clamp(1, 10_000);
    let barrier = Barrier::new(threads + 1);
    let elapsed = std::thread::scope(|scope| {
        for (s, d) in src.chunks(chunk).zip(dst.chunks_mut(chunk)) {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                for p in 0..passes as u64 {
                    for (d, s) in d.iter_mut().zip(s) {
                        *d = s.wrapping_add(p);
                    }
                    std::hint::black_box(&mut *d);
                }
            });
        }
        barrier.wait();
        Instant::now()
    })
    .elapsed()
    .as_secs_f64();
    (src.len() * 16 * passes) as f64 / elapsed.max(1e-9)
}

/// Nanoseconds per dependent load over a random cycle of 64-byte nodes.
fn chase(bytes: usize, min_seconds: f64) -> f64 {
    const NODE: usize = 16; // u32 words per 64-byte node
    let nodes = (bytes / 64).max(16);
    let mut next = vec![0u32; nodes * NODE];
    // Sattolo's algorithm: a random permutation with one cycle through every node.
    let mut order: Vec<u32> = (0..nodes as u32).collect();
    let mut rng = fastrand::Rng::with_seed(0x7a5e);
    for i in (1..nodes).rev() {
        let j = rng.usize(0..i);
        order.swap(i, j);
    }
    for i in 0..nodes {
        next[order[i] as usize * NODE] = order[(i + 1) % nodes];
    }
    let walk = |hops: usize, mut p: u32| {
        for _ in 0..hops {
            p = next[p as usize * NODE];
        }
        std::hint::black_box(p)
    };
    let warm = walk(nodes, 0);
    let start = Instant::now();
    let p = walk(nodes, warm);
    let t = start.elapsed().as_secs_f64().max(1e-9);
    let hops = ((min_seconds / t).ceil() as usize).clamp(1, 64) * nodes;
    let start = Instant::now();
    walk(hops, p);
    start.elapsed().as_secs_f64() * 1e9 / hops as f64
}

/// Operations per second of `threads` threads running register-only multiply-add chains.
fn spin_rate(threads: usize, min_seconds: f64) -> f64 {
    const OPS_PER_ITER: u64 = 16; // 8 chains × (multiply + add)
    fn spin(iters: u64, seed: u64) -> u64 {
        let mut c = [seed | 1, seed ^ 3, seed + 5, seed + 7, seed ^ 11, seed + 13, seed ^ 17, seed + 19];
        for i in 0..iters {
            for x in c.iter_mut() {
                *x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i);
            }
        }
        c.iter().fold(0, |a, b| a ^ b)
    }
    // Calibrate iterations to min_seconds on one thread.
    let mut iters = 1u64 << 16;
    loop {
        let start = Instant::now();
        std::hint::black_box(spin(std::hint::black_box(iters), 1));
        let t = start.elapsed().as_secs_f64();
        if t >= min_seconds / 4.0 || iters >= 1 << 34 {
            iters = ((iters as f64) * (min_seconds / t.max(1e-9))).ceil() as u64;
            break;
        }
        iters *= 4;
    }
    let barrier = Barrier::new(threads + 1);
    let elapsed = std::thread::scope(|scope| {
        for i in 0..threads {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                std::hint::black_box(spin(std::hint::black_box(iters), i as u64));
            });
        }
        barrier.wait();
        Instant::now()
    })
    .elapsed()
    .as_secs_f64();
    (threads as u64 * iters * OPS_PER_ITER) as f64 / elapsed.max(1e-9)
}
