//! ThreadFuser-style analysis of traced multithreaded x86-64 programs: what would their SIMT efficiency, memory
//! divergence and lock serialization be if their threads ran in lock-step warps? (Alawneh et al., "ThreadFuser:
//! A SIMT Analysis Framework for MIMD Programs", Sections II-V.)
//!
//! Pipeline, on a trace written by `lockstep trace` (`crates/trace`):
//!
//! ```text
//! Trace ──Program::new──▶ basic blocks, names, memory hints (iced-x86), static ranges
//!         ──Dcfgs::build──▶ per-function dynamic CFGs + immediate post-dominators (graph crate),
//!                           lock release sites, thread stack ranges            (one parallel pass)
//!         ──form_warps──▶ warps of SIMT threads (batch policy, warp size)
//!         ──Warp::run (rayon, one warp per task)──▶ Stats ──Report::new──▶ Report (serde)
//! ```
//!
//! | module | what |
//! |---|---|
//! | [`program`] | static side: basic blocks, function names, memory-operand hints, static-data ranges |
//! | [`lane`] | one SIMT thread's events as replay items (blocks with accesses, calls, returns, locks, skips) |
//! | [`dcfg`] | per-function dynamic CFGs with a virtual exit; reconvergence points |
//! | [`batch`] | warp formation policies |
//! | [`replay`] | lock-step replay of a warp on a [`simt::CallStack`] |
//! | [`memory`] | segments, coalescing, the GPU-local-memory model of the stack |
//! | [`stats`], [`report`] | counters and the report |
//! | [`html`] | a self-contained HTML page with SVG charts |
//! | [`lower`], [`accelsim`] | x86 → RISC-like operations, Accel-Sim `.traceg` writer |
//!
//! Memory stays bounded by the warps in flight: every lane reads its SIMT thread's events with one decompressed
//! chunk in memory, and the counters are per function and per block, not per instruction executed.

#![forbid(unsafe_code)]

pub mod accelsim;
pub mod batch;
pub mod dcfg;
pub mod html;
pub mod lane;
pub mod lower;
pub mod memory;
pub mod program;
pub mod replay;
pub mod report;
pub mod stats;
mod tally;

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

pub use batch::{form_warps, Batch};
pub use dcfg::Dcfgs;
pub use memory::{Classifier, Segment};
pub use program::Program;
pub use replay::{ReplayConfig, Warp};
pub use report::Report;
pub use stats::Stats;

/// Smallest and largest warp sizes.
pub const MIN_WARP: u32 = 4;
pub const MAX_WARP: u32 = 64;

/// What to analyze.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// A power of two from [`MIN_WARP`] to [`MAX_WARP`].
    pub warp_size: u32,
    pub batch: Batch,
    /// Bytes per memory transaction (a power of two, 32 by default).
    pub transaction_bytes: u32,
    /// How many basic blocks the report lists.
    pub top_blocks: usize,
    /// Replay a lone active lane without the general step's gathering of what each lane does (same results,
    /// faster; off only to test that).
    pub fast_paths: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config { warp_size: 32, batch: Batch::Consecutive, transaction_bytes: 32, top_blocks: 20, fast_paths: true }
    }
}

impl Config {
    /// Checks the warp size and transaction size.
    pub fn validate(&self) -> Result<(), String> {
        check_warp_size(self.warp_size)?;
        if !self.transaction_bytes.is_power_of_two() || self.transaction_bytes > 4096 {
            return Err(format!(
                "transaction size {} is not a power of two between 1 and 4096",
                self.transaction_bytes
            ));
        }
        Ok(())
    }
}

/// Whether `w` is a supported warp size.
pub fn check_warp_size(w: u32) -> Result<(), String> {
    if w.is_power_of_two() && (MIN_WARP..=MAX_WARP).contains(&w) {
        Ok(())
    } else {
        Err(format!("warp size {w} is not a power of two from {MIN_WARP} to {MAX_WARP}"))
    }
}

/// Progress of a replay: warps finished out of all, thread instructions replayed so far (also within warps
/// still running) out of all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub warps_done: u64,
    pub warps: u64,
    pub thread_instructions: u64,
    /// The thread instructions of all SIMT threads (what the dynamic-CFG pass read).
    pub total_thread_instructions: u64,
}

/// A trace prepared for analysis: the static side and the dynamic CFGs (built once, shared by every warp size
/// of a sweep).
#[derive(Debug)]
pub struct Analysis<'t> {
    pub prog: Program<'t>,
    pub dcfg: Dcfgs,
    pub classifier: Classifier,
}

impl<'t> Analysis<'t> {
    /// Reads the static section and builds the dynamic CFGs (one parallel pass over the trace).
    pub fn new(trace: &'t trace::Trace) -> Analysis<'t> {
        Analysis::with_progress(trace, &|_, _| {})
    }

    /// [`Analysis::new`], calling `progress(SIMT threads read, all)` during the pass.
    pub fn with_progress(trace: &'t trace::Trace, progress: &(dyn Fn(u64, u64) + Sync)) -> Analysis<'t> {
        let prog = Program::new(trace);
        let dcfg = Dcfgs::build_with_progress(&prog, progress);
        let classifier = Classifier::new(&prog, dcfg.stacks.clone());
        Analysis { prog, dcfg, classifier }
    }

    /// Replays every warp (in parallel) and reports. `progress` is called after each warp, and as warps run
    /// about every [`replay::PROGRESS_STEP`] thread instructions.
    pub fn run(&self, config: &Config, progress: &(dyn Fn(Progress) + Sync)) -> Result<Report, String> {
        config.validate()?;
        let warps = form_warps(&self.prog, config.batch, config.warp_size);
        let conf = ReplayConfig {
            warp_size: config.warp_size,
            transaction_bytes: config.transaction_bytes,
            fast_paths: config.fast_paths,
        };
        let done = AtomicU64::new(0);
        let insns = AtomicU64::new(0);
        let n = warps.len() as u64;
        // With fewer warps than cores, each lane's events are decoded by a thread of its own, ahead of the
        // replay (decoding is about half of the work).
        let piped = warps.len() < rayon::current_num_threads();
        let batch = lane::batch_items(warps.iter().map(Vec::len).sum());
        let total = self.dcfg.thread_insns;
        let report = |added: u64| {
            let t = insns.fetch_add(added, Ordering::Relaxed) + added;
            let d = done.load(Ordering::Relaxed);
            progress(Progress { warps_done: d, warps: n, thread_instructions: t, total_thread_instructions: total });
        };
        let stats = warps
            .par_iter()
            .enumerate()
            .map(|(i, simts)| {
                let s = if piped {
                    std::thread::scope(|scope| {
                        let lookups = lane::Lookups { cfg: &self.dcfg, classifier: &self.classifier };
                        let lanes =
                            simts.iter().map(|&s| lane::Lane::piped(scope, &self.prog, lookups, s, batch)).collect();
                        Warp::with_lanes(&self.dcfg, conf, lanes, None)
                            .with_progress(&report, replay::PROGRESS_STEP)
                            .run(i as u32)
                    })
                } else {
                    Warp::new(&self.prog, &self.dcfg, &self.classifier, conf, simts, None)
                        .with_progress(&report, replay::PROGRESS_STEP)
                        .run(i as u32)
                };
                // The warp reported all its thread instructions as it ran.
                done.fetch_add(1, Ordering::Relaxed);
                report(0);
                s
            })
            .reduce(Stats::default, Stats::merge);
        let shape = report::ReportShape {
            warp_size: config.warp_size,
            batch: config.batch,
            transaction_bytes: config.transaction_bytes,
            top_blocks: config.top_blocks,
        };
        Ok(Report::new(&self.prog, &self.dcfg, stats, shape))
    }
}
