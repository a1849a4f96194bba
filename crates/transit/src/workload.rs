//! The workload's two parameters, Z and n, from the other engines' reports or by hand.
//!
//! - `lockstep run --json` (or `--stats --json`): the kernel's statistics carry thread and warp instructions,
//!   global-memory transactions of `memory.transaction_bytes` bytes and the resident threads (`stats.transit`).
//! - `lockstep analyze --json`: the ThreadFuser report of a traced CPU program carries thread and warp
//!   instructions, `memory.total.transactions` of `transaction_bytes` and `simt_threads`.
//!
//! Both are reduced to instructions per byte of memory traffic, so a profile with a different request size or
//! instruction kind converts them exactly.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::profile::{InstructionKind, Profile};

/// A workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Workload {
    /// Where the numbers came from.
    pub source: String,
    pub intensity: Intensity,
    pub threads: Threads,
}

/// Arithmetic intensity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Intensity {
    /// Instructions per byte of memory traffic, counted per thread and per warp (either may be unknown).
    PerByte { thread: Option<f64>, warp: Option<f64> },
    /// Z itself, in the units of the profile it is used with.
    Z(f64),
}

/// n.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threads {
    /// Threads of the whole launch or program, in groups that stay on one unit (CTAs; the warps of a traced
    /// program): the groups are spread over the profile's units, and the threads of a busy unit are capped
    /// at its capacity.
    Total { threads: f64, group: f64 },
    /// Threads resident in one unit.
    PerUnit(f64),
}

/// Z and n for one profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Resolved {
    /// Instructions (of the profile's kind) per request (of the profile's size).
    pub z: f64,
    /// Threads per busy unit.
    pub n: f64,
    /// Units with threads (fewer than the machine's when the launch has fewer groups than it has units).
    pub units: u32,
    /// What was assumed or capped on the way.
    pub notes: Vec<String>,
}

/// A report that lacks what the model needs; names the file.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadError {
    pub file: String,
    pub message: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

impl std::error::Error for WorkloadError {}

fn field<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, key| v.get(key))
}

fn number(v: &Value, path: &str, file: &str, hint: &str) -> Result<f64, WorkloadError> {
    match field(v, path) {
        Some(x) => x.as_f64().filter(|x| x.is_finite()).ok_or_else(|| WorkloadError {
            file: file.into(),
            message: format!("field `{path}` is not a number (found {x})"),
        }),
        None => Err(WorkloadError { file: file.into(), message: format!("missing field `{path}`{hint}") }),
    }
}

impl Workload {
    /// Z and n given by hand: Z in the profile's units, n per unit.
    pub fn manual(z: f64, n: f64) -> Workload {
        Workload { source: "command line".into(), intensity: Intensity::Z(z), threads: Threads::PerUnit(n) }
    }

    /// From the JSON of `lockstep run --json` (the whole object, or its `stats` object alone), or from the
    /// report of `lockstep exec --report` (one kernel of the program, chosen by `kernel`; without it the
    /// only kernel with statistics, or all of them together).
    pub fn from_kernel_stats(text: &str, file: &str) -> Result<Workload, WorkloadError> {
        Workload::from_kernel_stats_of(text, file, None)
    }

    /// [`Workload::from_kernel_stats`], choosing a kernel of an exec report by its PTX or C++ name.
    pub fn from_kernel_stats_of(text: &str, file: &str, kernel: Option<&str>) -> Result<Workload, WorkloadError> {
        let err = |message: String| WorkloadError { file: file.into(), message };
        let v: Value = serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
        if v.is_array() {
            return Err(err("holds an array; expected the one object `lockstep run --json` prints".into()));
        }
        if let Some(Value::Array(kernels)) = v.get("kernels") {
            return Workload::from_exec_report(kernels, file, kernel);
        }
        let stats = match v.get("stats") {
            Some(Value::Null) => {
                return Err(err("`stats` is null: the run collected no statistics (the backend may not collect \
                                them); run it with `lockstep run --backend emu --json`"
                    .into()))
            }
            Some(s) => s,
            None if v.get("transit").is_some() => &v,
            None => {
                return Err(err("missing field `stats`; expected the output of `lockstep run --json` (or its \
                                `stats` object)"
                    .into()))
            }
        };
        let hint = " (is this the output of `lockstep run --json`?)";
        let thread_instr = number(stats, "thread_instructions", file, hint)?;
        let warp_instr = number(stats, "warp_instructions", file, hint)?;
        let tx_bytes = number(stats, "memory.transaction_bytes", file, hint)?;
        let mut transactions = 0.0;
        for kind in ["global_loads", "global_stores", "global_atomics"] {
            transactions += number(stats, &format!("memory.{kind}.transactions"), file, hint)?;
        }
        let threads = number(stats, "transit.resident_threads", file, hint)?;
        let group = number(stats, "transit.threads_per_cta", file, hint)?;
        let kernel = field(stats, "kernel").and_then(Value::as_str).unwrap_or("?");
        let bytes = transactions * tx_bytes;
        if bytes <= 0.0 {
            return Err(err(format!(
                "kernel `{kernel}` made no global-memory transactions, so Z is unbounded and the memory system idle; \
                 the transit model needs a kernel that touches global memory (or give --z by hand)"
            )));
        }
        Ok(Workload {
            source: format!("kernel statistics {file} (kernel {kernel})"),
            intensity: Intensity::PerByte { thread: Some(thread_instr / bytes), warp: Some(warp_instr / bytes) },
            threads: Threads::Total { threads, group },
        })
    }

    /// From the kernels of a `lockstep exec --report` file: one kernel's summed statistics, or every
    /// kernel's added together (the program as one workload).
    fn from_exec_report(kernels: &[Value], file: &str, kernel: Option<&str>) -> Result<Workload, WorkloadError> {
        let err = |message: String| WorkloadError { file: file.into(), message };
        let name = |k: &Value| field(k, "name").and_then(Value::as_str).unwrap_or("?").to_string();
        let with_stats: Vec<&Value> = kernels.iter().filter(|k| k.get("stats").is_some_and(|s| !s.is_null())).collect();
        if with_stats.is_empty() {
            return Err(err(
                "the report has no kernel statistics: run the program with `lockstep exec --backend emu` \
                            (the emulator collects them)"
                    .into(),
            ));
        }
        let chosen: Vec<&Value> = match kernel {
            Some(want) => {
                let hit: Vec<&Value> = with_stats
                    .iter()
                    .copied()
                    .filter(|k| {
                        name(k) == want
                            || field(k, "demangled")
                                .and_then(Value::as_str)
                                .is_some_and(|d| d == want || d.split('(').next() == Some(want))
                    })
                    .collect();
                if hit.is_empty() {
                    let names: Vec<String> = with_stats.iter().map(|k| name(k)).collect();
                    return Err(err(format!(
                        "no kernel `{want}` with statistics; the report has: {}",
                        names.join(", ")
                    )));
                }
                hit
            }
            None => with_stats,
        };
        let hint = " (is this a `lockstep exec --report` file?)";
        let (mut thread_instr, mut warp_instr, mut transactions, mut threads, mut group, mut tx_bytes) =
            (0.0, 0.0, 0.0, 0.0f64, 0.0f64, 0.0f64);
        for k in &chosen {
            let stats = &k["stats"];
            thread_instr += number(stats, "thread_instructions", file, hint)?;
            warp_instr += number(stats, "warp_instructions", file, hint)?;
            tx_bytes = tx_bytes.max(number(stats, "memory.transaction_bytes", file, hint)?);
            for kind in ["global_loads", "global_stores", "global_atomics"] {
                transactions += number(stats, &format!("memory.{kind}.transactions"), file, hint)?;
            }
            threads = threads.max(number(stats, "transit.resident_threads", file, hint)?);
            group = group.max(number(stats, "transit.threads_per_cta", file, hint)?);
        }
        let what = match chosen.as_slice() {
            [one] => format!("kernel {}", name(one)),
            many => format!("{} kernels together", many.len()),
        };
        let bytes = transactions * tx_bytes;
        if bytes <= 0.0 {
            return Err(err(format!(
                "{what}: no global-memory transactions, so Z is unbounded and the memory system idle; the transit \
                 model needs kernels that touch global memory (or give --z by hand)"
            )));
        }
        Ok(Workload {
            source: format!("program report {file} ({what})"),
            intensity: Intensity::PerByte { thread: Some(thread_instr / bytes), warp: Some(warp_instr / bytes) },
            threads: Threads::Total { threads, group },
        })
    }

    /// From the JSON of `lockstep analyze --json`. With `--sweep` the file holds one report per warp size:
    /// the one for warps of 32 is used (or the first).
    pub fn from_trace_report(text: &str, file: &str) -> Result<Workload, WorkloadError> {
        let err = |message: String| WorkloadError { file: file.into(), message };
        let v: Value = serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
        let report = match &v {
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(err("holds an empty array of reports".into()));
                }
                items.iter().find(|r| r.get("warp_size").and_then(Value::as_u64) == Some(32)).unwrap_or(&items[0])
            }
            v => v,
        };
        let hint = " (is this the output of `lockstep analyze --json`?)";
        let thread_instr = number(report, "thread_instructions", file, hint)?;
        let warp_instr = number(report, "warp_instructions", file, hint)?;
        let tx_bytes = number(report, "transaction_bytes", file, hint)?;
        let transactions = number(report, "memory.total.transactions", file, hint)?;
        let threads = number(report, "simt_threads", file, hint)?;
        let warp = number(report, "warp_size", file, hint)?;
        let program = field(report, "program").and_then(Value::as_str).unwrap_or("?");
        let bytes = transactions * tx_bytes;
        if bytes <= 0.0 {
            return Err(err(format!(
                "the trace of `{program}` shows no memory transactions, so Z is unbounded; give --z by hand"
            )));
        }
        Ok(Workload {
            source: format!("trace report {file} (program {program}, warps of {warp})"),
            intensity: Intensity::PerByte { thread: Some(thread_instr / bytes), warp: Some(warp_instr / bytes) },
            threads: Threads::Total { threads, group: warp },
        })
    }

    /// Z and n in the units of `profile`.
    pub fn resolve(&self, profile: &Profile) -> Result<Resolved, WorkloadError> {
        let mut notes = Vec::new();
        let z = match self.intensity {
            Intensity::Z(z) => z,
            Intensity::PerByte { thread, warp } => {
                let kind = profile.cs.instruction;
                let per_byte = match kind {
                    InstructionKind::Thread => thread,
                    InstructionKind::Warp => warp,
                };
                let per_byte = per_byte.ok_or_else(|| WorkloadError {
                    file: String::new(),
                    message: format!(
                        "{}: no count of {} instructions, which profile {} measures",
                        self.source,
                        kind.name(),
                        profile.name
                    ),
                })?;
                per_byte * profile.ms.request_bytes
            }
        };
        if !(z.is_finite() && z > 0.0) {
            return Err(WorkloadError {
                file: String::new(),
                message: format!("{}: Z must be a positive number (got {z})", self.source),
            });
        }
        let (n, units) = match self.threads {
            Threads::PerUnit(n) => (n, profile.units),
            Threads::Total { threads: total, group } => {
                let name = &profile.unit_name;
                let groups = if group > 0.0 { (total / group).ceil() } else { total };
                let busy = groups.clamp(1.0, f64::from(profile.units));
                let per_unit = total / busy;
                if busy < f64::from(profile.units) {
                    notes.push(format!(
                        "{groups} group(s) of {group} threads keep {busy} of the {} {name}s busy; throughputs are \
                         for those",
                        profile.units
                    ));
                }
                if per_unit > profile.max_threads {
                    notes.push(format!(
                        "n capped at the {} resident threads one {name} holds (the workload has {total} threads{})",
                        profile.max_threads,
                        if busy > 1.0 { format!(", {per_unit:.0} per {name}") } else { String::new() }
                    ));
                    (profile.max_threads, busy as u32)
                } else {
                    if busy > 1.0 {
                        notes.push(format!("n = {total} threads spread over {busy} {name}s"));
                    }
                    (per_unit, busy as u32)
                }
            }
        };
        if !(n.is_finite() && n >= 0.0) {
            return Err(WorkloadError {
                file: String::new(),
                message: format!("{}: n must be a non-negative number (got {n})", self.source),
            });
        }
        Ok(Resolved { z, n, units: units.max(1), notes })
    }
}
