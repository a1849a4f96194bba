//! `lockstep validate`: the analyzer's accuracy on the paired corpus (ThreadFuser, Section IV).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::output::write_output;
use crate::UsageError;

pub const ABOUT: &str = "Measure the analyzer's accuracy on pairs of CPU and CUDA programs (ThreadFuser's Fig. 5)";

pub const LONG_ABOUT: &str = "\
Measure how well `lockstep trace` + `lockstep analyze` predict a GPU's SIMT
efficiency and memory coalescing from a CPU program, as the ThreadFuser paper
did (Section IV, Fig. 5), with lockstep's own ground truth.

Each pair in the manifest (default corpus/pairs/pairs.toml) is one algorithm
written twice: a CUDA program (bin/NAME, built by the corpus's build.sh) and a
C or C++ program (src/...) in which one loop iteration or one worker call does
the work of one CUDA thread. The CUDA side runs on lockstep's SIMT emulator
(`lockstep exec --backend emu`) for the exact SIMT efficiency over all its
launches and 32-byte global-memory transactions per warp access. The CPU side
is compiled with gcc at each -O level, traced with the pair's --function (and
--per-iteration for OpenMP loops; OMP_NUM_THREADS=1 unless the pair sets it)
and analyzed at the same warp size; its heap stands for global memory (as in
the paper: static data is mostly constants and the GOT, which a GPU has as
immediates or constant memory). Both sides must print the same.

Printed per pair and level: both values; then per level the mean absolute
error (efficiency in percentage points, transactions relative to the ground
truth) and Pearson's correlation, as the paper reports them. Pairs with
`exclude = \"reason\"` are run and shown but left out of the statistics.

Needs gcc, g++ and qemu-x86_64 with plugin support (see `lockstep trace
--help`). Exits with status 1 when a pair failed to run or its two sides
printed different output.";

pub const EXAMPLES: &str = "\
Examples:
  lockstep validate                                  # every pair, -O0 to -O3
  lockstep validate --only vecadd,bfs --levels 1
  lockstep validate --out validation/                # validation.json, validation.md, efficiency.svg, transactions.svg
  lockstep validate --json > validation.json";

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The pairs' manifest.
    #[arg(default_value = "corpus/pairs/pairs.toml")]
    pub manifest: PathBuf,
    /// gcc optimization levels (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,3", value_name = "LEVELS")]
    pub levels: Vec<u8>,
    /// Warp size: a power of two from 4 to 64 (the CUDA side's is 32).
    #[arg(long, default_value_t = 32)]
    pub warp: u32,
    /// Only these pairs (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Steps run at once (default: the number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write validation.json, validation.md (the tables), efficiency.svg and transactions.svg to DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not show progress on the terminal.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &ValidateArgs) -> anyhow::Result<ExitCode> {
    fuser::check_warp_size(a.warp).map_err(UsageError)?;
    if let Some(l) = a.levels.iter().find(|&&l| l > 3) {
        return Err(UsageError(format!("--levels: -O{l} is not a level gcc has (0 to 3)")).into());
    }
    let manifest = validate::Manifest::load(&a.manifest).map_err(|e| anyhow::anyhow!("{e}"))?;
    for name in &a.only {
        if !manifest.pairs.iter().any(|p| p.name == *name) {
            return Err(UsageError(format!("--only: no pair named `{name}` in {}", a.manifest.display())).into());
        }
    }
    let work = tempfile::Builder::new().prefix("lockstep-validate").tempdir()?;
    let tools = validate::Tools { lockstep: std::env::current_exe()?, warp_size: a.warp, work: work.path().into() };
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = validate::Options { levels: a.levels.clone(), jobs, only: a.only.clone() };
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} ({elapsed}) {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    });
    let v = validate::validate(&manifest, &tools, &opts, &|step| {
        if let Some(b) = &bar {
            b.set_length(step.total as u64);
            b.set_position(step.done as u64);
            b.set_message(step.what);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let json = serde_json::to_string_pretty(&v)? + "\n";
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)?;
        write_output(Some(&dir.join("validation.json")), &json)?;
        write_output(Some(&dir.join("validation.md")), &v.markdown())?;
        write_output(Some(&dir.join("efficiency.svg")), &v.efficiency_svg())?;
        write_output(Some(&dir.join("transactions.svg")), &v.transactions_svg())?;
    }
    write_output(None, &if a.json { json } else { v.text() })?;
    let failed = v.pairs.iter().any(|p| !p.errors.is_empty());
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
