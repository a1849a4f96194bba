//! `lockstep transit`: the transit model (crates/transit) on a machine profile and a workload; `transit probe`
//! measures this CPU for a profile; `transit machines` lists and prints the built-in profiles.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use transit::analysis::short;
use transit::probe::{ProbeOptions, ProbeResult};
use transit::{Analysis, Profile, WhatIf, Workload};

use crate::output::write_output;
use crate::UsageError;

pub const ABOUT: &str =
    "Explain and predict throughput with the transit model: machine state, bound, optimization directions, figure";

pub const LONG_ABOUT: &str = "\
Explain and predict throughput with the transit model.

A machine is a computation system (CS) and a memory system (MS) with n
threads moving between them: each thread executes Z instructions, then
waits for one memory request. With k threads in the MS the memory system
supplies f(k) (rising with slope 1/L up to its peak R at the knee delta);
with x = n - k threads in the CS the lanes demand g(x) = min(x, M) / Z
(flat from the knee pi on). Where supply meets demand is the machine state:
its height is the MS throughput, times Z the CS throughput.

Where the curves cross names the bound:
  thread       both on their sloping parts: more threads (n) help, and so
               does higher intensity (Z)
  memory       on the flat part of f: raise Z or the memory peak R; more
               threads do not help
  computation  on the flat part of g: all M lanes busy; only more lanes
               (M) help, higher Z does not
  capacity     both flat (M/Z = R): tune several factors together

The machine comes from a profile: a built-in one (the paper's GPUs:
c2075-sp, c2075-dp, gtx690-sp, gtx690-dp; `lockstep transit machines`
lists them) or a TOML file, e.g. one `lockstep transit probe` measured on
this CPU (format: crates/transit/PROFILES.md). Numbers in a profile are per
unit (per SM for the GPUs).

The workload's Z and n come from
  --kernel-stats FILE  the JSON of `lockstep run --json` (an emulated
                       kernel's statistics) or the report of
                       `lockstep exec --backend emu --report FILE` (a CUDA
                       program's kernels: --kernel NAME picks one, else the
                       only one, else all of them together),
  --trace-report FILE  the JSON of `lockstep analyze --json` (a traced CPU
                       program seen as SIMT threads), or
  --z Z --n N          by hand: Z in the profile's instructions per request
                       of its request size, N threads per unit.
--z and --n also override what a file says. Threads from a file come in
groups that stay on one unit (CTAs; a traced program's warps): the groups
are spread over the profile's units, throughputs count the busy units, and
a unit's threads are capped at the resident threads it holds.

--what-if PARAM=VALUE recomputes with one parameter changed and draws the
new curves: n=4096, z=2x (twice the present value), m=64, r=x1.5 (R in GB/s
per unit).

Output: a text report on standard output (or one JSON object with --json:
bound, k, x, ms_throughput in bytes/s and cs_throughput in instructions/s
for the whole machine, directions, what_if, ...); --svg FILE writes the
transit figure atomically. Exit status 2 for a bad command line, 1 for an
unreadable or invalid profile or report (the message names the file and
the line or field).";

pub const SHORT_EXAMPLE: &str = "\
Example (a kernel's statistics on the paper's Fermi GPU; more with --help):
  lockstep run k.ptx --grid 64 --block 256 --arg ... --json > k.json
  lockstep transit --machine c2075-sp --kernel-stats k.json --svg k.svg";

pub const EXAMPLES: &str = "\
Examples:
  # A kernel's statistics on the paper's Fermi GPU, with the figure:
  lockstep run saxpy.ptx --grid 64 --block 256 --arg s32:16384 --arg f32:2 \\
      --arg 'f32[16384]:iota' --arg 'f32[16384]:1' --json > saxpy.json
  lockstep transit --machine c2075-sp --kernel-stats saxpy.json --svg saxpy.svg

  # By hand, with what-ifs (twice the intensity, 2048 threads per SM):
  lockstep transit --machine gtx690-sp --z 40 --n 1024 --what-if z=2x --what-if n=2048

  # A traced CPU program, as if its threads ran on a GPU; JSON for scripts:
  lockstep analyze pool.trace --json > pool.json
  lockstep transit --machine c2075-sp --trace-report pool.json --json

  # Measure this CPU, then use its profile:
  lockstep transit probe -o cpu.toml
  lockstep transit --machine cpu.toml --z 8 --n 2 --svg cpu.svg

  # The built-in profiles, and one of them as a starting point for a file:
  lockstep transit machines
  lockstep transit machines c2075-sp > my-gpu.toml";

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TransitArgs {
    #[command(subcommand)]
    pub command: Option<TransitCommand>,
    /// The machine: a built-in profile (c2075-sp, c2075-dp, gtx690-sp, gtx690-dp) or a profile TOML file.
    #[arg(long, value_name = "PROFILE", required = true)]
    pub machine: Option<String>,
    /// Z and n from the JSON of `lockstep run --json`, or from a `lockstep exec --report` file.
    #[arg(long, value_name = "FILE", conflicts_with = "trace_report")]
    pub kernel_stats: Option<PathBuf>,
    /// With a `lockstep exec --report` file: the kernel to model (PTX or C++ name; default: all together).
    #[arg(long, value_name = "NAME", requires = "kernel_stats")]
    pub kernel: Option<String>,
    /// Z and n from the JSON of `lockstep analyze --json`.
    #[arg(long, value_name = "FILE")]
    pub trace_report: Option<PathBuf>,
    /// Z: instructions (the profile's kind) per memory request (the profile's size).
    #[arg(long, value_name = "Z")]
    pub z: Option<f64>,
    /// n: resident threads per unit (per SM for the GPU profiles).
    #[arg(long, value_name = "N")]
    pub n: Option<f64>,
    /// Recompute with one parameter changed and draw it: n=4096, z=2x, m=64, r=x1.5 (repeatable).
    #[arg(long = "what-if", value_name = "PARAM=VALUE")]
    pub what_if: Vec<String>,
    /// Write the transit figure (SVG) to FILE, atomically.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum TransitCommand {
    /// Measure this CPU for a machine profile: memory throughput against threads (and its knee), latency by
    /// a pointer chase, compute lanes.
    ///
    /// Takes about ten seconds; numbers are noisy on a busy machine (each point is the best of three runs).
    /// Example: lockstep transit probe -o cpu.toml
    Probe(ProbeArgs),
    /// List the built-in machine profiles, or print one as TOML (a template for your own).
    ///
    /// Example: lockstep transit machines c2075-sp > my-gpu.toml
    Machines {
        /// Print this profile as TOML.
        name: Option<String>,
    },
}

#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// Write the profile (TOML) to this file, atomically; standard output when absent.
    #[arg(short, long, value_name = "PROFILE")]
    pub output: Option<PathBuf>,
    /// The profile's name.
    #[arg(long, default_value = "cpu")]
    pub name: String,
    /// Sweep threads from 1 to this (default: twice the hardware threads, at least 4).
    #[arg(long, value_name = "N")]
    pub max_threads: Option<usize>,
    /// A fraction of a second with small buffers: checks that the probe runs, the numbers mean little.
    #[arg(long)]
    pub quick: bool,
    /// Print the profile as JSON instead of TOML.
    #[arg(long)]
    pub json: bool,
    /// No progress bar or summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

pub fn run(a: &TransitArgs) -> anyhow::Result<ExitCode> {
    match &a.command {
        Some(TransitCommand::Probe(p)) => return probe(p),
        Some(TransitCommand::Machines { name }) => return machines(name.as_deref()),
        None => {}
    }
    let what_if = a
        .what_if
        .iter()
        .map(|w| WhatIf::parse(w).map_err(|e| usage(format!("--what-if {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let workload = match (&a.kernel_stats, &a.trace_report) {
        (Some(path), _) => {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {file}"))?;
            Some(Workload::from_kernel_stats_of(&text, &file, a.kernel.as_deref())?)
        }
        (None, Some(path)) => {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {file}"))?;
            Some(Workload::from_trace_report(&text, &file)?)
        }
        (None, None) => None,
    };
    if workload.is_none() && (a.z.is_none() || a.n.is_none()) {
        return Err(usage(
            "give the workload: --kernel-stats FILE (from `lockstep run --json`), --trace-report FILE (from \
             `lockstep analyze --json`), or --z Z --n N",
        ));
    }
    for (flag, v) in [("--z", a.z), ("--n", a.n)] {
        if let Some(v) = v {
            let ok = v.is_finite() && if flag == "--z" { v > 0.0 } else { v >= 0.0 };
            if !ok {
                return Err(usage(format!(
                    "{flag} {v}: must be a {} number",
                    if flag == "--z" { "positive" } else { "non-negative" }
                )));
            }
        }
    }
    let machine = a.machine.as_deref().unwrap_or_default();
    let profile = Profile::load(machine)?;
    let (mut resolved, source) = match &workload {
        Some(w) => (w.resolve(&profile)?, w.source.clone()),
        None => {
            (Workload::manual(a.z.unwrap_or(1.0), a.n.unwrap_or(0.0)).resolve(&profile)?, "command line".to_string())
        }
    };
    let mut source = source;
    if workload.is_some() {
        if let Some(z) = a.z {
            resolved.z = z;
            source.push_str("; Z from --z");
        }
        if let Some(n) = a.n {
            resolved.n = n;
            resolved.notes.retain(|n| !n.starts_with("n "));
            source.push_str("; n from --n");
        }
    }
    if resolved.n > profile.max_threads {
        resolved.notes.push(format!(
            "n = {} exceeds the {} resident threads one {} of {} holds",
            short(resolved.n),
            short(profile.max_threads),
            profile.unit_name,
            profile.name
        ));
    }
    let analysis = Analysis::new(&profile, &resolved, &source, &what_if).map_err(usage)?;
    if let Some(path) = &a.svg {
        write_output(Some(path), &transit::svg::render(&analysis, &profile))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if a.json {
        write_output(None, &(serde_json::to_string_pretty(&analysis)? + "\n"))?;
    } else {
        write_output(None, &text_report(&analysis))?;
        if let Some(path) = &a.svg {
            eprintln!("wrote the transit figure to {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn text_report(a: &Analysis) -> String {
    let m = &a.machine;
    let per = if m.units > 1 { format!(" per {}", m.unit_name) } else { String::new() };
    let in_all = |v: String| {
        if m.units > 1 {
            format!(" ({v} in all, {} {}s busy)", m.busy_units, m.unit_name)
        } else {
            String::new()
        }
    };
    let mut o = String::new();
    let _ = writeln!(o, "machine    {}: {}", m.name, m.description);
    let _ = writeln!(
        o,
        "           M = {} lanes, CS peak {} Ginstr/s{per}; R = {} GB/s{per}, δ at {} threads (L ≈ {} ns{})",
        short(m.lanes),
        short(m.peak_ginstr_per_s),
        short(m.peak_gb_per_s),
        short(m.knee_threads),
        short(m.effective_latency_ns),
        m.latency_ns.map(|l| format!("; pointer chase {} ns", short(l))).unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "workload   Z = {} {} instructions per {}-byte request, n = {} threads{per}",
        short(a.z),
        m.instruction.name(),
        short(m.request_bytes),
        short(a.n)
    );
    let _ = writeln!(o, "           from {}", a.workload_source);
    for n in &a.notes {
        let _ = writeln!(o, "           note: {n}");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "bound      {} — {}", a.bound, a.explanation);
    let _ = writeln!(
        o,
        "state      k = {} threads in the memory system, x = {} in the computation system{per}",
        short(a.k),
        short(a.x)
    );
    let e = &a.equilibrium;
    if e.k_range.1 > e.k_range.0 {
        let _ = writeln!(o, "           (any k from {} to {} balances)", short(e.k_range.0), short(e.k_range.1));
    }
    let _ = writeln!(
        o,
        "MS         {} GB/s{per}{}",
        short(a.ms_gb_per_s_per_unit),
        in_all(format!("{} GB/s", short(a.ms_throughput / 1e9)))
    );
    let _ = writeln!(
        o,
        "CS         {} G{}-instructions/s{per}{}",
        short(a.cs_ginstr_per_s_per_unit),
        m.instruction.name(),
        in_all(format!("{} G/s", short(a.cs_throughput / 1e9)))
    );
    let c = e.ceilings;
    let gbs = |req: f64| a.scale.bytes_per_s(req) / 1e9;
    let _ = writeln!(
        o,
        "ceilings   threads n/(L+Z): {} GB/s, memory R: {} GB/s, computation M/Z: {} GB/s{per}",
        short(gbs(c.thread)),
        short(gbs(c.memory)),
        short(gbs(c.computation))
    );
    let _ = writeln!(o, "\ndirections (the paper's, for this bound)");
    for d in &a.directions {
        let unit = match d.param {
            transit::Param::N => format!(" threads{per}"),
            transit::Param::R => format!(" GB/s{per}"),
            transit::Param::M => " lanes".into(),
            _ => String::new(),
        };
        if d.helps {
            let gain = d.cs_gain.map(short).unwrap_or_default();
            let limit = match (d.limit, d.next_bound) {
                (Some(l), Some(b)) => format!(" up to {}{unit} (CS throughput ×{gain}), then {b} bound", short(l)),
                _ => format!(" without a change of bound (CS throughput approaches ×{gain})"),
            };
            let note = d.note.as_ref().map(|n| format!(" [{n}]")).unwrap_or_default();
            let _ = writeln!(o, "  + raise {}{limit}{note}: {}", d.param, d.why);
        } else {
            let _ = writeln!(o, "  - raising {} does not help: {}", d.param, d.why);
        }
    }
    if !a.what_if.is_empty() {
        let _ = writeln!(o, "\nwhat if");
        for s in &a.what_if {
            let _ = writeln!(
                o,
                "  {:<14} {} bound, k = {}, MS {} GB/s{per}, CS {} G/s{per} (×{} CS)",
                s.label,
                s.bound,
                short(s.k),
                short(s.ms_throughput / f64::from(m.busy_units) / 1e9),
                short(s.cs_throughput / f64::from(m.busy_units) / 1e9),
                short(if a.cs_throughput > 0.0 { s.cs_throughput / a.cs_throughput } else { 0.0 })
            );
        }
    }
    o
}

fn machines(name: Option<&str>) -> anyhow::Result<ExitCode> {
    match name {
        Some(n) => {
            let text = transit::profile::BUILTIN.iter().find(|(b, _)| *b == n).map(|(_, t)| *t).ok_or_else(|| {
                usage(format!("no built-in profile `{n}`; built in: {}", Profile::builtin_names().join(", ")))
            })?;
            write_output(None, text)?;
        }
        None => {
            let mut o = String::new();
            let _ = writeln!(
                o,
                "{:<10} {:>6} {:>8} {:>10} {:>10} {:>8}  description",
                "name", "lanes", "Ginstr/s", "GB/s", "knee", "units"
            );
            for n in Profile::builtin_names() {
                let p = Profile::builtin(n).expect("listed");
                let _ = writeln!(
                    o,
                    "{:<10} {:>6} {:>8} {:>10} {:>10} {:>8}  {}",
                    p.name,
                    short(p.cs.lanes),
                    short(p.cs.peak_ginstr_per_s),
                    short(p.ms.peak_gb_per_s),
                    short(p.knee_threads()),
                    format!("{} {}", p.units, p.unit_name),
                    p.description
                );
            }
            let _ = writeln!(o, "\nNumbers are per unit. `lockstep transit machines NAME` prints one as TOML.");
            write_output(None, &o)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn probe(a: &ProbeArgs) -> anyhow::Result<ExitCode> {
    let mut opts = if a.quick { ProbeOptions::quick() } else { ProbeOptions::standard() };
    if let Some(t) = a.max_threads {
        if t == 0 || t > 1024 {
            return Err(usage(format!("--max-threads {t}: must be between 1 and 1024")));
        }
        opts.max_threads = t;
    }
    if a.name.trim().is_empty() {
        return Err(usage("--name must not be empty"));
    }
    if cfg!(debug_assertions) && !a.quiet && !a.quick {
        eprintln!("note: this lockstep is a debug build; its compute loops run slowly (use a release build)");
    }
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} probe: {msg} [{bar:30}] {pos}/{len} ({elapsed})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    });
    let quiet = a.quiet;
    let mut on_progress = |p: &transit::probe::Progress| match &bar {
        Some(b) => {
            b.set_length(p.total as u64);
            b.set_position(p.done as u64);
            b.set_message(p.what.clone());
        }
        None if !quiet && p.done < p.total => eprintln!("probe [{}/{}]: {}", p.done + 1, p.total, p.what),
        None => {}
    };
    let result = transit::probe::run(&opts, &mut on_progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let profile = result.to_profile(&a.name);
    profile.check().map_err(|e| anyhow::anyhow!("the probe measured nonsense: {e}"))?;
    if !a.quiet {
        eprint!("{}", probe_summary(&result, &profile));
    }
    let text = if a.json { serde_json::to_string_pretty(&profile)? + "\n" } else { profile.to_toml() };
    write_output(a.output.as_deref(), &text).with_context(|| {
        format!("cannot write {}", a.output.as_ref().map(|p| p.display().to_string()).unwrap_or_default())
    })?;
    if let (Some(path), false) = (&a.output, a.quiet) {
        eprintln!("wrote profile `{}` to {}", profile.name, path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn probe_summary(r: &ProbeResult, p: &Profile) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}: {} hardware threads", r.cpu, r.hardware_threads);
    let _ = writeln!(o, "threads   memory GB/s   compute Gops/s");
    for (m, c) in r.memory.iter().zip(&r.compute) {
        let _ = writeln!(o, "{:>7} {:>13} {:>16}", m.0, short(m.1), short(c.1));
    }
    let _ = writeln!(
        o,
        "memory: peak R = {} GB/s, knee δ at {} threads (f(1) = {} GB/s); pointer-chase latency {} ns",
        short(p.ms.peak_gb_per_s),
        short(p.knee_threads()),
        short(r.memory.first().map(|m| m.1).unwrap_or(0.0)),
        short(r.latency_ns)
    );
    let _ = writeln!(
        o,
        "compute: M = {} lanes, peak {} Gops/s ({} per lane)",
        short(p.cs.lanes),
        short(p.cs.peak_ginstr_per_s),
        short(p.cs.peak_ginstr_per_s / p.cs.lanes)
    );
    if p.cs.lanes < r.hardware_threads as f64 {
        let _ = writeln!(
            o,
            "note: fewer lanes than hardware threads: other programs are using the CPU, or hardware threads share \
             execution units; probe again on a quiet machine, or edit `lanes` in the profile"
        );
    }
    o
}
