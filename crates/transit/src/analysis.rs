//! One machine, one workload: the equilibrium in the profile's units, the directions, the what-ifs.

use std::fmt;

use serde::Serialize;

use crate::model::{Bound, Equilibrium, Model, Param};
use crate::profile::{InstructionKind, Profile, Scale};
use crate::workload::Resolved;

/// "Change one parameter": `n=4096`, `z=2x` (twice the present value), `r=x0.5`, `m=64`.
///
/// Values are in the profile's units: n threads per unit, Z instructions per request, M lanes, R GB/s per
/// unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WhatIf {
    pub param: Param,
    pub change: Change,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    To(f64),
    Times(f64),
}

impl WhatIf {
    pub fn parse(text: &str) -> Result<WhatIf, String> {
        let (name, value) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: write PARAM=VALUE or PARAM=FACTORx, e.g. n=2048 or z=2x"))?;
        let param = match name.trim().to_ascii_lowercase().as_str() {
            "n" => Param::N,
            "z" => Param::Z,
            "m" => Param::M,
            "r" => Param::R,
            other => return Err(format!("`{text}`: unknown parameter `{other}`; what-ifs change n, z, m or r")),
        };
        let value = value.trim();
        let (number, times) = if let Some(v) = value.strip_suffix(['x', 'X', '*']) {
            (v, true)
        } else if let Some(v) = value.strip_prefix(['x', 'X', '*']) {
            (v, true)
        } else {
            (value, false)
        };
        let v: f64 = number.trim().parse().map_err(|_| format!("`{text}`: `{value}` is not a number or a factor"))?;
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("`{text}`: the value must be positive"));
        }
        Ok(WhatIf { param, change: if times { Change::Times(v) } else { Change::To(v) } })
    }

    /// The new value of the parameter, in profile units, given its present value.
    pub fn apply(&self, present: f64) -> f64 {
        match self.change {
            Change::To(v) => v,
            Change::Times(f) => present * f,
        }
    }
}

impl fmt::Display for WhatIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.change {
            Change::To(v) => write!(f, "{} = {v}", self.param),
            Change::Times(x) => write!(f, "{} × {x}", self.param),
        }
    }
}

/// The machine as the analysis used it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineSummary {
    pub name: String,
    pub description: String,
    pub units: u32,
    /// Units the workload keeps busy; the whole-machine throughputs count these.
    pub busy_units: u32,
    pub unit_name: String,
    pub max_threads: f64,
    pub lanes: f64,
    pub peak_ginstr_per_s: f64,
    pub instruction: InstructionKind,
    pub peak_gb_per_s: f64,
    pub knee_threads: f64,
    pub request_bytes: f64,
    /// The latency the knee implies (Little's law), ns: the slope of f(k).
    pub effective_latency_ns: f64,
    /// Latency the profile records (a pointer chase for probed CPUs), ns.
    pub latency_ns: Option<f64>,
}

/// A point of the figure in profile units: threads, and MS throughput in GB/s per unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    pub threads: f64,
    pub gb_per_s: f64,
}

/// One optimization direction in profile units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DirectionReport {
    pub param: Param,
    pub helps: bool,
    /// Where the bound changes, in profile units (n: threads per unit, Z: instructions per request, M: lanes,
    /// R: GB/s per unit).
    pub limit: Option<f64>,
    pub next_bound: Option<Bound>,
    /// CS throughput at the limit over CS throughput now (without a limit: what it approaches).
    pub cs_gain: Option<f64>,
    pub why: String,
    /// What the machine allows (n is capped by the resident threads a unit holds).
    pub note: Option<String>,
}

/// The equilibrium of one scenario in profile units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// `base`, or the what-if (`n = 4096`).
    pub label: String,
    pub bound: Bound,
    /// Threads per unit in the memory system.
    pub k: f64,
    /// Threads per unit in the computation system.
    pub x: f64,
    /// MS throughput of the whole machine, bytes per second.
    pub ms_throughput: f64,
    /// CS throughput of the whole machine, instructions (of the profile's kind) per second.
    pub cs_throughput: f64,
    /// The normalized model (cycles of one lane, requests) and its solution.
    pub model: Model,
    pub equilibrium: Equilibrium,
}

/// Everything `lockstep transit` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    pub machine: MachineSummary,
    pub workload_source: String,
    /// Z: instructions (of the machine's kind) per request of `request_bytes`.
    pub z: f64,
    /// n: threads per unit.
    pub n: f64,
    pub notes: Vec<String>,
    pub bound: Bound,
    pub explanation: String,
    /// Threads per unit in the memory system.
    pub k: f64,
    /// Threads per unit in the computation system.
    pub x: f64,
    /// MS throughput of the whole machine, bytes per second.
    pub ms_throughput: f64,
    /// CS throughput of the whole machine, instructions per second.
    pub cs_throughput: f64,
    /// The same per unit, in GB/s and G instructions/s.
    pub ms_gb_per_s_per_unit: f64,
    pub cs_ginstr_per_s_per_unit: f64,
    /// δ, the MS transition point (k, f).
    pub delta: Point,
    /// π, the CS transition point (x, g).
    pub pi: Point,
    pub directions: Vec<DirectionReport>,
    pub what_if: Vec<Scenario>,
    /// The normalized base scenario.
    pub model: Model,
    pub equilibrium: Equilibrium,
    #[serde(skip)]
    pub scale: Scale,
}

impl Analysis {
    /// Solves the model of `profile` for the workload; `what_if` adds scenarios.
    pub fn new(profile: &Profile, workload: &Resolved, source: &str, what_if: &[WhatIf]) -> Result<Analysis, String> {
        // Totals count the busy units only.
        let scale = Scale { units: workload.units.clamp(1, profile.units), ..profile.scale() };
        let model = profile.model(workload.z, workload.n);
        model.validate().map_err(|e| e.to_string())?;
        let base = scenario("base", &model, scale);
        let gbs = |req_per_cycle: f64| scale.bytes_per_s(req_per_cycle) / 1e9;
        let to_profile_units = |p: Param, v: f64| if p == Param::R { gbs(v) } else { v };
        let cap = profile.max_threads;
        let directions = model
            .directions()
            .into_iter()
            .map(|d| {
                let note = match (d.param, d.helps, d.limit) {
                    (Param::N, true, _) if workload.n >= cap => Some(format!(
                        "n is already at the {} resident threads one {} holds",
                        short(cap),
                        profile.unit_name
                    )),
                    (Param::N, true, Some(limit)) if limit > cap => {
                        let now = base.equilibrium.cs;
                        let at_cap = model.with(Param::N, cap).solve().cs;
                        Some(format!(
                            "one {} holds {} threads: CS ×{} at most",
                            profile.unit_name,
                            short(cap),
                            short(if now > 0.0 { at_cap / now } else { 0.0 })
                        ))
                    }
                    _ => None,
                };
                DirectionReport {
                    param: d.param,
                    helps: d.helps,
                    limit: d.limit.map(|v| to_profile_units(d.param, v)),
                    next_bound: d.next_bound,
                    cs_gain: d.cs_gain,
                    why: d.why,
                    note,
                }
            })
            .collect();
        let mut scenarios = Vec::new();
        for w in what_if {
            let present = to_profile_units(w.param, model.get(w.param));
            let value = w.apply(present);
            let normalized = if w.param == Param::R { scale.requests_per_cycle(value * 1e9) } else { value };
            let m = model.with(w.param, normalized);
            m.validate().map_err(|e| format!("what-if {w}: {e}"))?;
            let label = format!("{} = {}", w.param, short(value));
            scenarios.push(scenario(&label, &m, scale));
        }
        let (dk, dy) = model.delta();
        let (px, py) = model.pi();
        Ok(Analysis {
            machine: MachineSummary {
                name: profile.name.clone(),
                description: profile.description.clone(),
                units: profile.units,
                busy_units: scale.units,
                unit_name: profile.unit_name.clone(),
                max_threads: profile.max_threads,
                lanes: profile.cs.lanes,
                peak_ginstr_per_s: profile.cs.peak_ginstr_per_s,
                instruction: profile.cs.instruction,
                peak_gb_per_s: profile.ms.peak_gb_per_s,
                knee_threads: profile.knee_threads(),
                request_bytes: profile.ms.request_bytes,
                effective_latency_ns: profile.effective_latency_ns(),
                latency_ns: profile.ms.latency_ns,
            },
            workload_source: source.to_string(),
            z: workload.z,
            n: workload.n,
            notes: workload.notes.clone(),
            bound: base.bound,
            explanation: base.bound.explain().to_string(),
            k: base.k,
            x: base.x,
            ms_throughput: base.ms_throughput,
            cs_throughput: base.cs_throughput,
            ms_gb_per_s_per_unit: base.ms_throughput / f64::from(scale.units) / 1e9,
            cs_ginstr_per_s_per_unit: base.cs_throughput / f64::from(scale.units) / 1e9,
            delta: Point { threads: dk, gb_per_s: gbs(dy) },
            pi: Point { threads: px, gb_per_s: gbs(py) },
            directions,
            what_if: scenarios,
            model,
            equilibrium: base.equilibrium,
            scale,
        })
    }
}

fn scenario(label: &str, model: &Model, scale: Scale) -> Scenario {
    let e = model.solve();
    let units = f64::from(scale.units);
    Scenario {
        label: label.into(),
        bound: e.bound,
        k: e.k,
        x: e.x,
        ms_throughput: scale.bytes_per_s(e.ms) * units,
        cs_throughput: scale.instr_per_s(e.cs) * units,
        model: *model,
        equilibrium: e,
    }
}

/// A number in few characters: 4096, 2.5, 0.125, 1.2e-5.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if !(1e-3..1e7).contains(&a) {
        format!("{v:.3e}")
    } else if (v - v.round()).abs() < 1e-9 * a.max(1.0) {
        format!("{}", v.round() as i64)
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{}", (v * 1e4).round() / 1e4)
    }
}
