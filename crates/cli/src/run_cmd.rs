//! `lockstep run`: load a PTX file, prepare arguments, launch one kernel, write outputs, report.
//!
//! With `--json`, standard output carries exactly one JSON object and device `printf` output goes to standard
//! error instead. Without it, standard output carries the kernel's `printf` output and the `--stats` summary;
//! progress notes (what ran, which files were written) go to standard error.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::ValueEnum;
use device::Backend;
use runtime::{
    write_outputs, ArgList, Dim3, KernelError, LaunchConfig, LaunchOptions, LoadError, OutputSpec, RunError, Runtime,
    SymbolSpec,
};
use serde::Serialize;

use crate::stats_text;
use crate::UsageError;

pub const ABOUT: &str = "Run one kernel of a PTX file on a CPU execution engine and report what its warps did";

pub const LONG_ABOUT: &str = "\
Run one kernel of a PTX file on a CPU execution engine and report what its
warps did.

Arguments are given in order with --arg, one per kernel parameter:
  TYPE:VALUE     a scalar: s32:1024  f32:2.5  u64:0x10  s8:-3  f64:-0.0
                 f32:inf  f32:nan  f32:0f3F800000 (exact bits)
  TYPE[N]:VALUE  a device buffer of N elements, all VALUE: f32[1024]:1
                 (the kernel receives its device address)
  TYPE[N]:iota   a device buffer holding 0, 1, 2, ... in TYPE
  TYPE[N]:@PATH  a device buffer holding the raw little-endian bytes of
                 PATH, which must have exactly N x size bytes
  TYPE[]:@PATH   the same, N taken from the file's length
  bytes:HEX      raw bytes for a by-value (struct) parameter, in memory
                 order: bytes:0100000002000000
  bytes:@PATH    raw bytes from a file
TYPE is u8 u16 u32 u64 s8 s16 s32 s64 f32 or f64; values are range-checked.
A buffer's parameter must be an 8-byte pointer (.u64/.b64). Arguments are
numbered from 0, scalars included: --out 3=y.bin writes the bytes of the
fourth argument (a buffer) to y.bin, atomically, after the kernel ran.

Engines: the JIT (--backend jit, the default) compiles the kernel to native
code with Cranelift and runs CTAs on every core (--threads N, --schedule
static|interleaved|dynamic, default dynamic: runs of neighbouring CTAs from a
shared counter); --check makes it bounds-check every access as the emulator
does. Kernels run four threads at a time in SIMD registers when they can,
barriers included, and small kernels without barriers sixteen at a time
(--no-vectorize: one at a time). The emulator (--backend emu) runs warps of
32 lanes in lock-step and collects the statistics of --stats, so --stats and --json use
it unless --backend says otherwise. Both give the same results; compiled
kernels are cached in ~/.cache/lockstep/jit (--no-cache to skip).

--symbol NAME=@PATH fills a module-scope .global or .const variable (CUDA
__device__ or __constant__ data) from a file before the launch; the file may
be shorter than the variable (it fills a prefix) but not longer.

Output: the kernel's printf output goes to standard output, then the --stats
summary; notes on what ran and which files were written go to standard
error. With --json, standard output carries one JSON object only (kernel,
file, grid, block, dynamic_shared, backend, elapsed_seconds, outputs, stats)
and the kernel's printf output goes to standard error; --json always
collects statistics.

Exit status: 0 on success; 2 for a bad command line (an argument that does
not parse or does not fit its parameter, a missing input file, a wrong
--kernel, an invalid grid or block, an unavailable backend); 1 when the PTX
does not load or the kernel fails (out-of-bounds access, trap, unsupported
instruction, ...), with an error naming kernel, block, thread, PTX line and
address.";

pub const SHORT_EXAMPLE: &str = "\
Example (SAXPY over 1024 elements; more with --help):
  lockstep run saxpy.ptx --grid 4 --block 256 --arg s32:1024 --arg f32:2.0 \\
      --arg 'f32[1024]:iota' --arg 'f32[1024]:1' --out 3=y.bin --stats";

pub const EXAMPLES: &str = "\
Examples:
  # SAXPY over 1024 elements, y = 2x + y, for the kernel
  # saxpy(int n, float a, const float *x, float *y):
  lockstep run saxpy.ptx --grid 4 --block 256 --arg s32:1024 \\
      --arg f32:2.0 --arg 'f32[1024]:iota' --arg 'f32[1024]:1' \\
      --out 3=y.bin --stats

  # One kernel of a multi-kernel module, inputs from files, JSON report:
  lockstep run workloads.ptx --kernel vector_add --grid 8 --block 128 \\
      --arg 'f32[]:@a.bin' --arg 'f32[]:@b.bin' --arg 'f32[1024]:0' \\
      --arg s32:1024 --out 2=c.bin --json

  # The same on the JIT, on 2 worker threads, with checked memory accesses:
  lockstep run workloads.ptx --kernel vector_add --grid 8 --block 128 \\
      --arg 'f32[]:@a.bin' --arg 'f32[]:@b.bin' --arg 'f32[1024]:0' \\
      --arg s32:1024 --out 2=c.bin --backend jit --threads 2 --check

  # 2D launch with dynamic shared memory and __constant__ data:
  lockstep run stencil.ptx --grid 16,16 --block 16,16 --shared 4096 \\
      --symbol coeffs=@coeffs.bin --arg 'f32[65536]:@in.bin' \\
      --arg 'f32[65536]:0' --out 1=out.bin";

/// The execution engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// The SIMT emulator: warps of 32 lanes in lock-step, with statistics.
    Emu,
    /// The Cranelift JIT: native code, all cores, no statistics.
    Jit,
}

/// How the JIT spreads CTAs over its worker threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScheduleChoice {
    /// Each worker runs one contiguous run of CTAs.
    Static,
    /// Worker w runs CTAs w, w+W, w+2W, ... (Ocelot's policy).
    Interleaved,
    /// Workers take the next run of consecutive CTAs from a shared counter (the default: locality, and
    /// balance for uneven CTAs).
    Dynamic,
}

impl BackendChoice {
    fn name(self) -> &'static str {
        match self {
            BackendChoice::Emu => "emu",
            BackendChoice::Jit => "jit",
        }
    }

    /// The engine a command line asks for: the explicit `--backend`, else the emulator when statistics are
    /// wanted, else the JIT.
    fn of(a: &RunArgs) -> BackendChoice {
        match a.backend {
            Some(b) => b,
            None if a.stats || a.json => BackendChoice::Emu,
            None => BackendChoice::Jit,
        }
    }

    /// Constructs the engine.
    fn create(self, a: &RunArgs) -> Result<Box<dyn Backend>, UsageError> {
        if self == BackendChoice::Emu && (a.threads.is_some() || a.schedule.is_some() || a.check || a.no_vectorize) {
            return Err(UsageError("--threads, --schedule, --check and --no-vectorize apply to --backend jit".into()));
        }
        match self {
            BackendChoice::Emu => Ok(Box::new(emu::Emulator::new())),
            BackendChoice::Jit => Ok(Box::new(jit::Jit::new(jit::Options {
                threads: a.threads.map_or(0, usize::from),
                schedule: match a.schedule.unwrap_or(ScheduleChoice::Dynamic) {
                    ScheduleChoice::Static => jit::Schedule::Static,
                    ScheduleChoice::Interleaved => jit::Schedule::Interleaved,
                    ScheduleChoice::Dynamic => jit::Schedule::Dynamic,
                },
                check: a.check,
                vectorize: !a.no_vectorize,
                cache_dir: if a.no_cache { None } else { jit::default_cache_dir() },
            }))),
        }
    }
}

/// `X[,Y[,Z]]`, each at least 1.
pub fn parse_dim3(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("`{text}` has more than three dimensions; write X[,Y[,Z]]"));
    }
    let mut dims = [1u32; 3];
    for (d, part) in dims.iter_mut().zip(&parts) {
        *d = part.parse().map_err(|_| format!("`{part}` is not a size; write X[,Y[,Z]], e.g. 256 or 16,16"))?;
        if *d == 0 {
            return Err(format!("`{text}` has a zero dimension"));
        }
    }
    Ok(Dim3::new(dims[0], dims[1], dims[2]))
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The PTX file.
    pub file: PathBuf,
    /// The kernel to run; may be omitted when the module has one kernel.
    #[arg(short, long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Blocks in the grid: X[,Y[,Z]].
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dim3)]
    pub grid: Dim3,
    /// Threads per block: X[,Y[,Z]] (at most 1024 in all).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dim3)]
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block (`extern __shared__`).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub shared: u32,
    /// A kernel argument, in parameter order (forms: see --help): s32:1024, f32[1024]:iota, u8[]:@in.bin, ...
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Fill a module-scope .global/.const variable from a file before the launch.
    #[arg(long = "symbol", value_name = "NAME=@PATH")]
    pub symbols: Vec<String>,
    /// After the launch, write buffer argument INDEX (counting all arguments from 0) to PATH.
    #[arg(long = "out", value_name = "INDEX=PATH")]
    pub outs: Vec<String>,
    /// The execution engine: `jit` (native code on every core) by default; `emu` when --stats or --json ask
    /// for statistics, which only the emulator collects.
    #[arg(long, value_enum)]
    pub backend: Option<BackendChoice>,
    /// JIT worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// How the JIT spreads CTAs over its workers (default: dynamic).
    #[arg(long, value_enum)]
    pub schedule: Option<ScheduleChoice>,
    /// JIT: check every global, generic and shared access against the memory it may touch, and report
    /// out-of-bounds and misaligned accesses as the emulator does (slower). Without it, an access to
    /// unmapped memory stops the program with an error naming the kernel and the address.
    #[arg(long)]
    pub check: bool,
    /// JIT: do not read or write the on-disk cache of compiled kernels (~/.cache/lockstep/jit).
    #[arg(long)]
    pub no_cache: bool,
    /// JIT: run every thread on the scalar thread loop (by default, eligible kernels run four consecutive
    /// threads at a time in SIMD registers; the results are the same).
    #[arg(long)]
    pub no_vectorize: bool,
    /// Print a summary of the execution statistics: SIMT efficiency, divergent branches, memory
    /// coalescing, bank conflicts, instruction mix, transit-model parameters.
    #[arg(long)]
    pub stats: bool,
    /// Print one JSON object on standard output (the kernel's printf output then goes to standard error).
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct RunJson<'a> {
    kernel: &'a str,
    file: String,
    grid: Dim3,
    block: Dim3,
    dynamic_shared: u32,
    backend: &'a str,
    elapsed_seconds: f64,
    outputs: Vec<OutputJson>,
    stats: Option<&'a runtime::KernelStats>,
}

#[derive(Serialize)]
struct OutputJson {
    index: usize,
    path: String,
    bytes: u64,
}

fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    // Everything that can be checked without the file first, so command-line mistakes are reported early.
    let arg_list = ArgList::parse(&a.args).map_err(|e| usage(e.to_string()))?;
    let symbols = a
        .symbols
        .iter()
        .map(|s| SymbolSpec::parse(s).map_err(|m| usage(format!("--symbol {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let outs = a
        .outs
        .iter()
        .map(|s| OutputSpec::parse(s).map_err(|m| usage(format!("--out {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let config = LaunchConfig { grid: a.grid, block: a.block, dynamic_shared: a.shared };
    config.validate().map_err(|m| usage(format!("--grid/--block: {m}")))?;
    let choice = BackendChoice::of(a);
    let mut rt = Runtime::new(choice.create(a)?);
    if a.json {
        rt.set_printf_output(Box::new(std::io::stderr()));
    }

    let file_name = a.file.display().to_string();
    let bytes = std::fs::read(&a.file).with_context(|| format!("cannot read {file_name}"))?;
    let module = match rt.load_ptx_bytes(&bytes, &file_name) {
        Ok(m) => m,
        Err(LoadError::Compile { diagnostics, rendered, .. }) => {
            eprint!("{rendered}");
            bail!("{file_name} has {} error(s)", diagnostics.len().max(1))
        }
        Err(e) => return Err(e.into()),
    };
    let kernel = rt.kernel(module, a.kernel.as_deref()).map_err(|e| match e {
        KernelError::Ambiguous { kernels } if !kernels.is_empty() => usage(format!(
            "{file_name} defines {} kernels; choose one with --kernel: {}",
            kernels.len(),
            kernels.join(", ")
        )),
        KernelError::Ambiguous { .. } => usage(format!("{file_name} defines no kernel")),
        e => usage(format!("--kernel: {e}")),
    })?;
    let kernel_name = rt.module(module).map(|m| m.module.functions[kernel].name.clone()).unwrap_or_default();

    for s in &symbols {
        let bytes = s.apply(&mut rt, module).map_err(usage)?;
        if !a.json {
            eprintln!("filled `{}` with {bytes} bytes from {}", s.name, s.path.display());
        }
    }
    let prepared = arg_list.materialize(&mut rt).map_err(|e| usage(e.to_string()))?;
    for o in &outs {
        o.check(&prepared).map_err(usage)?;
    }

    let options = LaunchOptions { stats: a.stats || a.json, cooperative: false };
    let outcome = rt.launch(module, kernel, config, &prepared.args, options).map_err(|e| match &e {
        RunError::Argument { index, .. } => {
            let spec = prepared.specs.get(*index).map(String::as_str).unwrap_or("");
            usage(format!("--arg {index} (`{spec}`): {e}"))
        }
        e if e.is_usage_error() => usage(e.to_string()),
        _ => anyhow::Error::new(e),
    })?;
    let written = write_outputs(&rt, &prepared, &outs)?;

    let backend = choice.name();
    if a.json {
        let report = RunJson {
            kernel: &kernel_name,
            file: file_name,
            grid: config.grid,
            block: config.block,
            dynamic_shared: config.dynamic_shared,
            backend,
            elapsed_seconds: outcome.elapsed.as_secs_f64(),
            outputs: written
                .iter()
                .map(|w| OutputJson { index: w.index, path: w.path.display().to_string(), bytes: w.bytes })
                .collect(),
            stats: outcome.stats.as_ref(),
        };
        crate::output::write_output(None, &(serde_json::to_string_pretty(&report)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "ran `{kernel_name}` on {backend}: grid {} x block {} in {:.3} s",
        config.grid,
        config.block,
        outcome.elapsed.as_secs_f64()
    );
    for w in &written {
        eprintln!("wrote {} ({} bytes, argument {})", w.path.display(), w.bytes, w.index);
    }
    if a.stats {
        let text = match &outcome.stats {
            Some(stats) => stats_text::summary(&kernel_name, backend, &config, stats),
            None => format!("the {backend} backend collected no statistics\n"),
        };
        crate::output::write_output(None, &text)?;
    }
    Ok(ExitCode::SUCCESS)
}
