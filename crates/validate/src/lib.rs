//! How accurate is the analyzer? ThreadFuser's validation (Section IV, Fig. 5), on lockstep's own ground truth.
//!
//! Every pair of the corpus (`corpus/pairs/`, [`manifest`]) is one algorithm written twice: a CUDA program,
//! run on lockstep's SIMT emulator for the exact SIMT efficiency and global-memory transactions per warp
//! access, and a CPU program in which one loop iteration or one worker call does the work of one CUDA thread,
//! compiled by gcc at each optimization level, traced and fused into warps by the analyzer ([`run`]). Per level,
//! the predictions are compared with the ground truth by mean absolute error and Pearson's correlation
//! ([`metrics`]), printed as text or JSON, tabulated as Markdown and drawn as scatter plots ([`svg`]).

pub mod manifest;
pub mod metrics;
pub mod run;
pub mod svg;

use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;

pub use manifest::{Manifest, Pair};
pub use run::{GroundTruth, Prediction, Tools};

/// One pair's results.
#[derive(Debug, Clone, Serialize)]
pub struct PairResult {
    pub name: String,
    pub category: String,
    pub what: String,
    /// Why the pair is not in the statistics, if it is not.
    pub excluded: Option<String>,
    pub gpu: Option<GroundTruth>,
    /// One per level, in the order of [`Validation::levels`].
    pub cpu: Vec<Option<Prediction>>,
    /// What went wrong (a failed run, outputs of the two sides that differ).
    pub errors: Vec<String>,
}

/// Accuracy at one optimization level, over the pairs with both sides measured and not excluded.
#[derive(Debug, Clone, Serialize)]
pub struct LevelSummary {
    pub level: String,
    pub pairs: usize,
    /// In efficiency units (0.03 = 3 percentage points).
    pub efficiency_mae: Option<f64>,
    pub efficiency_correlation: Option<f64>,
    /// Relative to the ground truth (0.17 = 17%).
    pub transactions_mae: Option<f64>,
    pub transactions_correlation: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// `gcc --version`'s first line: the CPU sides' numbers depend on the compiler.
    pub compiler: String,
    pub warp_size: u32,
    pub levels: Vec<String>,
    pub pairs: Vec<PairResult>,
    pub summary: Vec<LevelSummary>,
    pub seconds: f64,
}

/// What a run does.
#[derive(Debug, Clone)]
pub struct Options {
    /// gcc optimization levels, e.g. `[0, 1, 2, 3]`.
    pub levels: Vec<u8>,
    /// Pairs run at once.
    pub jobs: usize,
    /// Only these pairs (all when empty).
    pub only: Vec<String>,
}

/// A finished step, for progress display.
#[derive(Debug, Clone)]
pub struct Step {
    pub done: usize,
    pub total: usize,
    pub what: String,
}

/// Runs every pair (GPU side once, CPU side at every level), `jobs` steps at a time.
pub fn validate(m: &Manifest, tools: &Tools, opts: &Options, progress: &(dyn Fn(Step) + Sync)) -> Validation {
    let t0 = std::time::Instant::now();
    let pairs: Vec<&Pair> = m.pairs.iter().filter(|p| opts.only.is_empty() || opts.only.contains(&p.name)).collect();
    let nl = opts.levels.len();
    // Steps: per pair, the GPU side (level None) and each level.
    let steps: Vec<(usize, Option<usize>)> =
        (0..pairs.len()).flat_map(|i| std::iter::once((i, None)).chain((0..nl).map(move |l| (i, Some(l))))).collect();
    type Output = Result<(Option<GroundTruth>, Option<Prediction>, Vec<u8>), String>;
    let results: Mutex<Vec<Option<Output>>> = Mutex::new(vec![None; steps.len()]);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(i, level)) = steps.get(k) else { break };
                let p = pairs[i];
                let out: Output = match level {
                    None => run::ground_truth(tools, m, p).map(|(g, o)| (Some(g), None, o)),
                    Some(l) => run::predict(tools, m, p, opts.levels[l]).map(|(c, o)| (None, Some(c), o)),
                };
                results.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(out);
                let what = match level {
                    None => format!("{} (CUDA on the emulator)", p.name),
                    Some(l) => format!("{} (CPU at -O{})", p.name, opts.levels[l]),
                };
                progress(Step { done: done.fetch_add(1, Ordering::Relaxed) + 1, total: steps.len(), what });
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter();
    let mut out = Vec::new();
    for p in &pairs {
        let mut r = PairResult {
            name: p.name.clone(),
            category: p.category.clone(),
            what: p.what.clone(),
            excluded: p.exclude.clone(),
            gpu: None,
            cpu: vec![None; nl],
            errors: Vec::new(),
        };
        let mut gpu_stdout = None;
        for l in std::iter::once(None).chain((0..nl).map(Some)) {
            match results.next().flatten().expect("every step ran") {
                Ok((g, c, stdout)) => match l {
                    None => {
                        r.gpu = g;
                        gpu_stdout = Some(stdout);
                    }
                    Some(l) => {
                        if gpu_stdout.as_ref().is_some_and(|g| *g != stdout) {
                            r.errors.push(format!(
                                "-O{}: the CPU side printed something else than the CUDA side",
                                opts.levels[l]
                            ));
                        }
                        r.cpu[l] = c;
                    }
                },
                Err(e) => r.errors.push(e),
            }
        }
        out.push(r);
    }
    let levels: Vec<String> = opts.levels.iter().map(|l| format!("-O{l}")).collect();
    let summary = summarize(&out, &levels);
    let compiler = std::process::Command::new("gcc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .unwrap_or_default();
    Validation {
        compiler,
        warp_size: tools.warp_size,
        levels,
        pairs: out,
        summary,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

fn summarize(pairs: &[PairResult], levels: &[String]) -> Vec<LevelSummary> {
    levels
        .iter()
        .enumerate()
        .map(|(l, name)| {
            let both: Vec<(&GroundTruth, &Prediction)> = pairs
                .iter()
                .filter(|p| p.excluded.is_none())
                .filter_map(|p| Some((p.gpu.as_ref()?, p.cpu[l].as_ref()?)))
                .collect();
            let eff: Vec<(f64, f64)> = both.iter().map(|(g, c)| (c.simt_efficiency, g.simt_efficiency)).collect();
            let tx: Vec<(f64, f64)> = both
                .iter()
                .filter(|(g, c)| g.warp_accesses > 0 && c.warp_accesses > 0)
                .map(|(g, c)| (c.transactions_per_access, g.transactions_per_access))
                .collect();
            LevelSummary {
                level: name.clone(),
                pairs: both.len(),
                efficiency_mae: metrics::mae(&eff),
                efficiency_correlation: metrics::pearson(&eff),
                transactions_mae: metrics::relative_mae(&tx),
                transactions_correlation: metrics::pearson(&tx),
            }
        })
        .collect()
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

impl Validation {
    fn eff(&self, p: &PairResult, l: usize) -> Option<f64> {
        p.cpu[l].as_ref().map(|c| c.simt_efficiency)
    }

    fn tx(&self, p: &PairResult, l: usize) -> Option<f64> {
        p.cpu[l].as_ref().filter(|c| c.warp_accesses > 0).map(|c| c.transactions_per_access)
    }

    /// A Markdown table per metric, then the summary per level.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let head = |s: &mut String, first: &str| {
            let _ = write!(s, "| pair | {first} |");
            for l in &self.levels {
                let _ = write!(s, " {l} |");
            }
            let _ = write!(s, "\n|---|---|");
            for _ in &self.levels {
                s.push_str("---|");
            }
            s.push('\n');
        };
        let _ = writeln!(s, "CPU sides compiled with {}.\n", self.compiler);
        let _ = writeln!(
            s,
            "SIMT efficiency at warp {} (CUDA on the emulator; CPU predicted at each level):\n",
            self.warp_size
        );
        head(&mut s, "CUDA");
        for p in &self.pairs {
            let _ = write!(s, "| {}{} | {} |", p.name, mark(p), pct(p.gpu.as_ref().map(|g| g.simt_efficiency)));
            for l in 0..self.levels.len() {
                let _ = write!(s, " {} |", pct(self.eff(p, l)));
            }
            s.push('\n');
        }
        let _ = writeln!(s, "\nGlobal-memory transactions (32 bytes) per warp access (CPU: heap):\n");
        head(&mut s, "CUDA");
        for p in &self.pairs {
            let g = p.gpu.as_ref().filter(|g| g.warp_accesses > 0).map(|g| g.transactions_per_access);
            let _ = write!(s, "| {}{} | {} |", p.name, mark(p), num(g, 2));
            for l in 0..self.levels.len() {
                let _ = write!(s, " {} |", num(self.tx(p, l), 2));
            }
            s.push('\n');
        }
        let _ = writeln!(s, "\nAccuracy per level (pairs marked * are excluded):\n");
        let _ = writeln!(s, "| level | pairs | efficiency MAE | efficiency correlation | transactions MAE (relative) | transactions correlation |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for l in &self.summary {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                l.level,
                l.pairs,
                pct(l.efficiency_mae),
                num(l.efficiency_correlation, 3),
                pct(l.transactions_mae),
                num(l.transactions_correlation, 3)
            );
        }
        s
    }

    /// The text report: the tables and any errors.
    pub fn text(&self) -> String {
        let mut s: String = self
            .markdown()
            .lines()
            .filter(|l| !l.starts_with("|---"))
            .map(|l| l.trim_matches('|').replace(" | ", "  ") + "\n")
            .collect();
        let errors: Vec<String> =
            self.pairs.iter().flat_map(|p| p.errors.iter().map(move |e| format!("{}: {e}", p.name))).collect();
        if !errors.is_empty() {
            let _ = writeln!(s, "\nerrors:");
            for e in errors {
                let _ = writeln!(s, "  {e}");
            }
        }
        let slowest = self
            .pairs
            .iter()
            .flat_map(|p| {
                p.cpu.iter().zip(&self.levels).filter_map(move |(c, l)| {
                    c.as_ref().map(|c| (c.trace_seconds + c.analyze_seconds, p.name.as_str(), l.as_str()))
                })
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((t, name, level)) = slowest {
            let _ = writeln!(s, "\nSlowest CPU side (trace + analysis): {t:.1} s ({name} at {level}).");
        }
        let _ = writeln!(s, "\n{} pairs, {} levels, {:.0} s", self.pairs.len(), self.levels.len(), self.seconds);
        s
    }

    fn series(
        &self,
        value: impl Fn(&Self, &PairResult, usize) -> Option<f64>,
        truth: impl Fn(&GroundTruth) -> Option<f64>,
    ) -> Vec<svg::Series> {
        (0..self.levels.len())
            .map(|l| svg::Series {
                label: self.levels[l].clone(),
                points: self
                    .pairs
                    .iter()
                    .filter(|p| p.excluded.is_none())
                    .filter_map(|p| Some((truth(p.gpu.as_ref()?)?, value(self, p, l)?)))
                    .collect(),
            })
            .collect()
    }

    /// Fig. 5a: SIMT efficiency, prediction against ground truth.
    pub fn efficiency_svg(&self) -> String {
        let series = self.series(Self::eff, |g| Some(g.simt_efficiency));
        let scale = svg::Scale::Linear { lo: 0.0, hi: 1.0, step: 0.2, percent: true };
        svg::scatter(
            &format!("SIMT efficiency, warp {}", self.warp_size),
            "CUDA on lockstep's emulator (ground truth)",
            "predicted from the CPU program",
            scale,
            &series,
        )
    }

    /// Fig. 5b: transactions per warp access, logarithmic.
    pub fn transactions_svg(&self) -> String {
        let series = self.series(Self::tx, |g| (g.warp_accesses > 0).then_some(g.transactions_per_access));
        let scale = svg::Scale::log_for(series.iter().flat_map(|s| s.points.iter().flat_map(|&(a, b)| [a, b])));
        svg::scatter(
            "Memory transactions per warp access",
            "CUDA global memory on lockstep's emulator",
            "predicted: CPU heap accesses",
            scale,
            &series,
        )
    }
}

fn mark(p: &PairResult) -> &'static str {
    if p.excluded.is_some() {
        "*"
    } else if p.errors.is_empty() {
        ""
    } else {
        " (!)"
    }
}
