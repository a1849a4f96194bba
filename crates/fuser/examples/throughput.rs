//! Replay throughput and peak memory of the analyzer on a trace:
//!
//! ```text
//! cargo run --release -p fuser --example throughput -- [--stages] TRACE [WARP...]
//! ```
//!
//! Prints, for the dynamic-CFG pass and for the replay at each warp size (default 32), the seconds taken and
//! the thread instructions per second, then the peak resident memory of the process (`VmHWM`). `--stages`
//! also times, on the calling thread, decoding every SIMT thread into the items the replay consumes (basic
//! blocks with their nodes and classified accesses): less `trace`'s `decode_speed` example (decoding alone),
//! what making the items costs; less this from the replay on one thread, what the replay itself costs.

use std::time::Instant;

/// Times decoding every SIMT thread into the replay's items, one after the other on this thread.
fn stages(t: &trace::Trace, a: &fuser::Analysis<'_>) {
    let start = Instant::now();
    let mut items = 0u64;
    for s in 0..t.simt.len() as u32 {
        let lookups = fuser::lane::Lookups { cfg: &a.dcfg, classifier: &a.classifier };
        let mut lane = fuser::lane::Lane::new(&a.prog, lookups, s);
        loop {
            lane.peek();
            items += 1;
            if lane.pop() == fuser::lane::Item::End {
                break;
            }
        }
    }
    let made = start.elapsed().as_secs_f64();
    println!(
        "decoding into replay items (one thread): {made:.2} s, {items} items ({:.1} ns each)",
        made * 1e9 / items.max(1) as f64
    );
}

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds this process has used (user + system, all threads): on a shared machine a steadier measure of
/// the work than the wall clock.
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
    let rest = s.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<u64> = rest.split_whitespace().skip(11).take(2).filter_map(|x| x.parse().ok()).collect();
    f.iter().sum::<u64>() as f64 / 100.0
}

/// CPU seconds of each live thread of this process, by thread id.
fn thread_cpu_seconds() -> Vec<(u32, f64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let tid: u32 = e.file_name().to_str()?.parse().ok()?;
        let s = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let rest = s.rsplit_once(')')?.1;
        let f: Vec<u64> = rest.split_whitespace().skip(11).take(2).filter_map(|x| x.parse().ok()).collect();
        Some((tid, f.iter().sum::<u64>() as f64 / 100.0))
    })
    .collect()
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let with_stages = args.next_if_eq("--stages").is_some();
    let Some(path) = args.next() else {
        eprintln!("usage: throughput [--stages] TRACE [WARP...]");
        std::process::exit(2);
    };
    let warps: Vec<u32> = {
        let v: Vec<u32> = args.filter_map(|a| a.parse().ok()).collect();
        if v.is_empty() {
            vec![32]
        } else {
            v
        }
    };
    let t = trace::Trace::open(&path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let threads = rayon::current_num_threads();
    let file_mib = t.file_len as f64 / (1u64 << 20) as f64;
    println!("trace {path}: {file_mib:.1} MiB, {} SIMT threads, {threads} worker threads", t.simt.len());
    let start = Instant::now();
    let cpu = cpu_seconds();
    let a = fuser::Analysis::new(&t);
    let cfg_s = start.elapsed().as_secs_f64();
    let cfg_cpu = cpu_seconds() - cpu;
    let insns = a.dcfg.thread_insns;
    println!(
        "dynamic CFGs: {cfg_s:.2} s ({cfg_cpu:.2} s CPU), {insns} thread instructions read ({:.1} M/s), {} functions, \
         {} blocks",
        insns as f64 / cfg_s / 1e6,
        a.dcfg.funcs.len(),
        a.dcfg.blocks()
    );
    if with_stages {
        stages(&t, &a);
    }
    for w in warps {
        let start = Instant::now();
        let cpu = cpu_seconds();
        let before = thread_cpu_seconds();
        let r = a.run(&fuser::Config { warp_size: w, ..fuser::Config::default() }, &|_| {}).unwrap();
        let s = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu;
        // The threads that outlive the replay are the pool's: the busiest one replayed the (one) warp; the rest
        // of the process's CPU time went to threads that ended, the piped lanes' decoders.
        let pool: Vec<f64> = thread_cpu_seconds()
            .iter()
            .map(|&(tid, t)| t - before.iter().find(|b| b.0 == tid).map_or(0.0, |b| b.1))
            .collect();
        let busiest = pool.iter().copied().fold(0.0, f64::max);
        let others = cpu - pool.iter().sum::<f64>();
        println!("  CPU: busiest pool thread {busiest:.2} s, threads that ended (piped decoders) {others:.2} s");
        println!(
            "replay at warp {w}: {s:.2} s ({cpu:.2} s CPU), {} thread instructions ({:.1} M/s), {} warp instructions ({:.1} M/s), \
             efficiency {:.2}%",
            r.thread_instructions,
            r.thread_instructions as f64 / s / 1e6,
            r.warp_instructions,
            r.warp_instructions as f64 / s / 1e6,
            r.simt_efficiency.unwrap_or(0.0) * 100.0
        );
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak resident memory: {:.1} MiB", kib as f64 / 1024.0);
    }
}
