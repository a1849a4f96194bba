//! `lockstep analyze`: the ThreadFuser analysis of a trace (crates/fuser): SIMT efficiency, memory divergence,
//! lock serialization; text, JSON, HTML and Accel-Sim traces.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use fuser::{Analysis, Batch, Config, Report};

use crate::output::write_output;
use crate::UsageError;

pub const ABOUT: &str =
    "Estimate how a traced multithreaded program would run on SIMT hardware: efficiency, memory, locks";

pub const LONG_ABOUT: &str = "\
Fuse the SIMT threads of a trace (written by `lockstep trace`) into warps and
replay them in lock-step, as ThreadFuser does: per-function dynamic
control-flow graphs give the reconvergence points (immediate post-dominators,
at the latest the end of the function); a SIMT stack with call frames runs
the warp; lanes on the same lock are serialized up to the release.

The report gives the program's SIMT efficiency (thread instructions /
(warp instructions x warp size), over all warps), every function's own
efficiency (callees excluded), the hottest basic blocks, memory divergence
(32-byte transactions per warp memory instruction) for the stack, heap,
static data and other memory, with the stack also laid out as GPU local
memory, lock sites with the instructions their serialization costs, and the
instructions that were skipped (system calls, excluded functions, lock
spinning).

Warps are formed from SIMT threads in the trace's order (OS-thread creation
order, then start order) by --batch: consecutive (default), round-robin
(one SIMT thread of each OS thread in turn) or function (grouped by the
function they start in). A warp never mixes launches, as on a GPU: with
--per-iteration each run of the loop is a launch (an OpenMP parallel loop
in a host loop), and each run of an OpenMP parallel region traced with
--function f._omp_fn.N is one, its lanes in OpenMP thread-number order
(SPMD-style ports, one OpenMP thread per CUDA thread).

--accelsim DIR writes an Accel-Sim trace (kernelslist.g, kernel-1.traceg) of
the replay at warp size 32: x86 instructions lowered to RISC-like
operations, stack accesses as local memory, the rest as global memory.";

pub const EXAMPLES: &str = "\
Examples:
  lockstep analyze pool.trace
  lockstep analyze pool.trace --warp 16 --batch round-robin
  lockstep analyze pool.trace --sweep 8,16,32 --json
  lockstep analyze pool.trace --html report.html
  lockstep analyze pool.trace --accelsim traces/";

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The trace to analyze.
    pub trace: PathBuf,
    /// Warp size: a power of two from 4 to 64.
    #[arg(long, default_value_t = 32, conflicts_with = "sweep")]
    pub warp: u32,
    /// Analyze several warp sizes (comma-separated), e.g. 8,16,32.
    #[arg(long, value_delimiter = ',', value_name = "SIZES")]
    pub sweep: Vec<u32>,
    /// How SIMT threads are batched into warps: consecutive, round-robin or function.
    #[arg(long, default_value = "consecutive", value_name = "POLICY")]
    pub batch: String,
    /// Bytes per memory transaction.
    #[arg(long, default_value_t = 32, value_name = "BYTES")]
    pub transaction: u32,
    /// How many functions (text) and basic blocks (all formats) to list.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Print one JSON object (an array of them with --sweep) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report with SVG charts to FILE (without --sweep, warps of 8, 16 and 32 are
    /// replayed too, for its sweep chart).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write an Accel-Sim trace (kernelslist.g, kernel-1.traceg) to DIR (warp size 32).
    #[arg(long, value_name = "DIR")]
    pub accelsim: Option<PathBuf>,
    /// Do not show progress on the terminal.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let batch: Batch = a.batch.parse().map_err(UsageError)?;
    let sizes: Vec<u32> = if a.sweep.is_empty() { vec![a.warp] } else { a.sweep.clone() };
    for &w in &sizes {
        fuser::check_warp_size(w).map_err(UsageError)?;
    }
    let config =
        |w: u32| Config { warp_size: w, batch, transaction_bytes: a.transaction, top_blocks: a.top, fast_paths: true };
    config(sizes[0]).validate().map_err(UsageError)?;
    let t = trace::Trace::open(&a.trace).map_err(|e| anyhow::anyhow!("{e}"))?;
    let started = Instant::now();
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(t.simt.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} ({elapsed})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.set_message("building dynamic CFGs");
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    });
    let analysis = Analysis::with_progress(&t, &|done, all| {
        if let Some(b) = &bar {
            b.set_length(all);
            b.set_position(done);
        }
    });
    let prepared = started.elapsed().as_secs_f64();
    let mut reports = Vec::new();
    for &w in &sizes {
        if let Some(b) = &bar {
            // By thread instructions, which warps report as they run: a trace of one long warp moves too.
            b.set_position(0);
            b.set_length(analysis.dcfg.thread_insns.max(1));
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {msg} [{bar:30}] {percent}% ({elapsed}, about {eta} left)",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.set_message(format!("replaying warps of {w}"));
        }
        let progress = |p: fuser::Progress| {
            if let Some(b) = &bar {
                b.set_message(format!("replaying warps of {w}: {}/{} done", p.warps_done, p.warps));
                b.set_position(p.thread_instructions);
            }
        };
        reports.push(analysis.run(&config(w), &progress).map_err(UsageError)?);
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let elapsed = started.elapsed().as_secs_f64();
    if a.json {
        let text = if reports.len() == 1 && a.sweep.is_empty() {
            serde_json::to_string_pretty(&reports[0])?
        } else {
            serde_json::to_string_pretty(&reports)?
        };
        write_output(None, &(text + "\n"))?;
    } else {
        let mut o = String::new();
        for r in &reports {
            text_report(&mut o, r, a.top);
        }
        if reports.len() > 1 {
            sweep_table(&mut o, &reports);
        }
        write_output(None, &o)?;
    }
    if !a.quiet {
        let insns: u64 = reports.iter().map(|r| r.thread_instructions).sum();
        let replay = (elapsed - prepared).max(1e-9);
        eprintln!(
            "lockstep: analyzed {} thread instructions in {:.2} s: dynamic CFGs {:.2} s, replay {:.2} s ({:.1} M thread \
             instructions/s)",
            group(insns),
            elapsed,
            prepared,
            replay,
            insns as f64 / replay / 1e6
        );
    }
    if let Some(path) = &a.html {
        // The page always has a sweep: without --sweep, warps of 8, 16 and 32 join the chosen size.
        let mut all = reports.clone();
        if a.sweep.is_empty() {
            for w in [8, 16, 32] {
                if w != a.warp {
                    all.push(analysis.run(&config(w), &|_| {}).map_err(UsageError)?);
                }
            }
        }
        all.sort_by_key(|r| r.warp_size);
        let main = all.iter().position(|r| r.warp_size == sizes[0]).unwrap_or(0);
        write_output(Some(path), &fuser::html::render(&all, main))?;
        if !a.quiet {
            eprintln!("lockstep: wrote {}", path.display());
        }
    }
    if let Some(dir) = &a.accelsim {
        if sizes.iter().any(|&w| w != fuser::accelsim::WARP) && !a.quiet {
            eprintln!("lockstep: note: the Accel-Sim trace replays warps of 32 (the simulator's warp size)");
        }
        let out = fuser::accelsim::write(&analysis, dir, batch).map_err(|e| anyhow::anyhow!(e))?;
        if !a.quiet {
            eprintln!(
                "lockstep: wrote {} and {} ({} warps in {} thread blocks, {} lines for {} warp x86 instructions)",
                out.kernel_list.display(),
                out.kernel.display(),
                group(out.warps as u64),
                group(out.thread_blocks as u64),
                group(out.lines),
                group(out.x86_instructions)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn per(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// `1234567` → `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    let mut until_comma = s.len() % 3;
    for c in s.chars() {
        if until_comma == 0 && !out.is_empty() {
            out.push(',');
        }
        until_comma = if until_comma == 0 { 2 } else { until_comma - 1 };
        out.push(c);
    }
    out
}

fn text_report(o: &mut String, r: &Report, top: usize) {
    let prog = std::iter::once(r.program.as_str()).chain(r.args.iter().map(String::as_str)).collect::<Vec<_>>();
    let _ = writeln!(o, "program          {}", prog.join(" "));
    if r.trace_status != "complete" {
        let _ = writeln!(o, "trace            {}", r.trace_status);
    }
    let _ = writeln!(
        o,
        "warps            {} of {} lanes ({} batching) from {} SIMT threads",
        group(r.warps as u64),
        r.warp_size,
        r.batch,
        group(r.simt_threads as u64)
    );
    let _ = writeln!(o, "thread insns     {}", group(r.thread_instructions));
    let _ = writeln!(o, "warp insns       {}", group(r.warp_instructions));
    let _ = writeln!(
        o,
        "SIMT efficiency  {}  ({} active lanes per warp instruction)",
        pct(r.simt_efficiency),
        per(r.active_lanes)
    );
    let m = &r.memory;
    let _ = writeln!(
        o,
        "memory           {} transactions of {} bytes per warp access ({} warp accesses)",
        per(m.total.transactions_per_access),
        r.transaction_bytes,
        group(m.total.warp_accesses)
    );
    let sk = &r.skipped;
    if sk.total > 0 || sk.syscall_regions + sk.excluded_regions + sk.lock_spin_regions > 0 {
        let _ = writeln!(
            o,
            "skipped          {} thread insns ({:.2}%): {} in {} system calls, {} in {} excluded calls, {} in {} \
             spinning lock calls",
            group(sk.total),
            sk.fraction * 100.0,
            group(sk.syscall),
            group(sk.syscall_regions),
            group(sk.excluded),
            group(sk.excluded_regions),
            group(sk.lock_spin),
            group(sk.lock_spin_regions)
        );
    }
    if r.outside_simt_instructions > 0 {
        let _ = writeln!(
            o,
            "outside          {} instructions ran outside SIMT threads (not replayed)",
            group(r.outside_simt_instructions)
        );
    }
    let _ = writeln!(o, "\nmemory by segment (transactions per warp access):");
    let _ = writeln!(o, "  {:<12} {:>14} {:>16} {:>10}", "segment", "warp accesses", "transactions", "per access");
    for s in fuser::Segment::ALL {
        let x = m.get(s);
        let _ = writeln!(
            o,
            "  {:<12} {:>14} {:>16} {:>10}",
            s.name(),
            group(x.warp_accesses),
            group(x.transactions),
            per(x.transactions_per_access)
        );
    }
    let _ =
        writeln!(o, "  (stack_local: the stack accesses with every SIMT thread's stack laid out as GPU local memory)");
    let _ = writeln!(o, "\nfunctions (own instructions, callees excluded; top {} by thread instructions):", top);
    let _ = writeln!(
        o,
        "  {:>14} {:>12} {:>8} {:>6} {:>6} {:>6}  function",
        "thread insns", "warp insns", "eff", "heap", "stack", "local"
    );
    for f in r.functions.iter().take(top) {
        let module = if f.module.is_empty() { String::new() } else { format!("  [{}]", f.module) };
        let _ = writeln!(
            o,
            "  {:>14} {:>12} {:>8} {:>6} {:>6} {:>6}  {}{}",
            group(f.thread_instructions),
            group(f.warp_instructions),
            pct(f.simt_efficiency),
            per(f.memory.heap.transactions_per_access),
            per(f.memory.stack.transactions_per_access),
            per(f.memory.stack_local.transactions_per_access),
            f.name,
            module
        );
    }
    if r.functions.len() > top {
        let _ = writeln!(o, "  ... {} more", r.functions.len() - top);
    }
    if !r.locks.is_empty() {
        let _ = writeln!(o, "\nlock sites (block after the acquisition):");
        let _ = writeln!(
            o,
            "  {:<13} {:>6} {:>10} {:>10} {:>8} {:>14}  site",
            "kind", "locks", "acquires", "contended", "lanes", "serialized"
        );
        for l in &r.locks {
            let _ = writeln!(
                o,
                "  {:<13} {:>6} {:>10} {:>10} {:>8} {:>14}  {} {}",
                l.kind.name(),
                l.locks,
                group(l.acquisitions),
                group(l.contended),
                l.max_serialized_lanes,
                group(l.serialized_warp_instructions),
                l.function,
                l.site
            );
        }
        let _ = writeln!(
            o,
            "  (lanes: most lanes of a warp serialized on one lock; serialized: warp instructions the 2nd, 3rd, ... \
             group ran)"
        );
    }
    if r.resyncs > 0 {
        let _ = writeln!(o, "\nnote: {} times lanes were not where the SIMT stack expected them (longjmp, unusual returns) and were moved where their traces went", group(r.resyncs));
    }
    for e in &r.errors {
        let _ = writeln!(o, "error: {e}");
    }
    o.push('\n');
}

fn sweep_table(o: &mut String, reports: &[Report]) {
    let _ = writeln!(o, "warp-size sweep:");
    let _ = writeln!(o, "  {:>5} {:>8} {:>16} {:>12} {:>10}", "warp", "warps", "warp insns", "efficiency", "mem/acc");
    for r in reports {
        let _ = writeln!(
            o,
            "  {:>5} {:>8} {:>16} {:>12} {:>10}",
            r.warp_size,
            group(r.warps as u64),
            group(r.warp_instructions),
            pct(r.simt_efficiency),
            per(r.memory.total.transactions_per_access)
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn digit_groups() {
        assert_eq!(super::group(0), "0");
        assert_eq!(super::group(999), "999");
        assert_eq!(super::group(1000), "1,000");
        assert_eq!(super::group(1234567), "1,234,567");
        assert_eq!(super::group(123456), "123,456");
    }
}
