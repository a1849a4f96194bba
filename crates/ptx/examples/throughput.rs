//! Parser throughput over the corpus measured in CPU time of this process (robust on a busy machine, unlike
//! wall-clock benchmarks), best of 5 rounds: `cargo run --release -p ptx --example throughput [ITERATIONS [PATH-FILTER]]`.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

/// User plus system CPU time of this process, in seconds (from /proc; 0 where unavailable).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let iterations: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    // Optional substring filter on the file path (e.g. `.G.` for the -G files).
    let filter = std::env::args().nth(2).unwrap_or_default();
    let mut files = Vec::new();
    ptx_files(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/ptx")), &mut files);
    files.retain(|p| p.to_string_lossy().contains(&filter));
    let texts: Vec<String> = files.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    // `NO_SECTION_ENTRIES=1` measures `ParseOptions { section_entries: false }`.
    let options = ptx::ParseOptions { section_entries: std::env::var_os("NO_SECTION_ENTRIES").is_none() };
    // The best of several rounds: other processes on a shared machine only ever make a round slower.
    let mut best = (f64::MAX, f64::MAX);
    let mut ok = 0;
    for _ in 0..5 {
        let (cpu0, wall0) = (cpu_seconds(), Instant::now());
        ok = 0;
        for _ in 0..iterations {
            for t in &texts {
                ok += usize::from(ptx::parse_with(t, options).is_ok());
            }
        }
        let (cpu, wall) = (cpu_seconds() - cpu0, wall0.elapsed().as_secs_f64());
        best = (best.0.min(cpu), best.1.min(wall));
    }
    let (cpu, wall) = best;
    let mb = (bytes * iterations) as f64 / 1e6;
    println!(
        "{} files, {:.1} MB x {iterations}: {:.0} MB/s of CPU time ({cpu:.2} s), {:.0} MB/s wall; {} parsed",
        texts.len(),
        bytes as f64 / 1e6,
        mb / cpu.max(1e-9),
        mb / wall,
        ok / iterations.max(1)
    );
}
