//! `lockstep exec`: run an unmodified CUDA program (built with `nvcc -cudart shared`) on lockstep's CUDA
//! runtime, and say afterwards what its kernels did.
//!
//! The runtime is the `libcudart.so` the `cudart` crate builds (with the driver API of `cudadrv` in it),
//! found next to this binary; a folder of links gives it the names programs look for (`libcudart.so.13`,
//! `.12`, plain, and `libcuda.so.1`), and the program runs with that folder first on `LD_LIBRARY_PATH`
//! (and `NUMBA_CUDA_DRIVER` naming it, for Numba). Settings travel in `LOCKSTEP_*` variables (`cuda::config`); each
//! process of the program writes a JSON report at exit, which this command reads, sums up on stderr and
//! keeps with `--report`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use cuda::{KernelReport, Report};
use serde::Serialize;

use crate::UsageError;

pub const ABOUT: &str =
    "Run an unmodified CUDA program on the CPU (lockstep's libcudart.so.13 and libcuda.so.1), then \
                         summarise its kernels";

pub const LONG_ABOUT: &str = "\
Run an unmodified CUDA program on this CPU. The program must load the CUDA
runtime dynamically (built with `nvcc -cudart shared`); lockstep puts its own
libcudart.so.13 in the way, which reads the PTX nvcc embedded in the program
(compressed or not, -rdc pieces linked) and runs every kernel on the JIT
(native code on every core; the default) or on the SIMT emulator
(--backend emu: reference semantics and statistics).

Programs that load device code themselves through the driver API run too:
Numba (`lockstep exec -- python3 app.py`), cuda.core and cuda-bindings, and
programs that compile CUDA C++ with NVRTC. lockstep's libcuda.so.1 loads PTX
(text, fatbinaries, cuLink* output); cubins (GPU machine code) are refused
with CUDA_ERROR_NO_BINARY_FOR_GPU. NUMBA_CUDA_DRIVER is set to lockstep's
driver, and lockstep's libnvJitLink.so.13, which links PTX, takes the place
of NVIDIA's.

The program's standard input, output and error pass through, and lockstep
exits with its exit status (128 + N when signal N killed it).

After the program ends, a summary goes to standard error: each kernel's
launches and time, and with the emulator its SIMT efficiency and global-memory
transactions per warp access. --report FILE keeps it as JSON:
{program, device, backend, check, exit_code, kernels: [{name, demangled,
launches, seconds, stats}], faults, unsupported}, where stats (emulator only)
is the object `lockstep run --json` prints, summed over the kernel's launches;
`lockstep transit --kernel-stats FILE` reads it.

What CUDA programs see: one device named after lockstep, the engine and this
CPU, whose multiprocessors are the worker threads, with warps of 32 and
compute capability 9.0. Streams are synchronous (every call completes before
it returns; host functions run on a runtime thread, in stream order). A kernel
fault (out-of-bounds access, trap, assert, barrier divergence) prints
lockstep's located message and becomes the documented CUDA error at the next
synchronizing call. Functions lockstep does not implement return
cudaErrorNotSupported and warn once; --list-unsupported tells before running.

Without this command: `lockstep exec --library-path` prints the folder to put
first on LD_LIBRARY_PATH; LOCKSTEP_BACKEND=emu, LOCKSTEP_CHECK=1,
LOCKSTEP_THREADS=N and LOCKSTEP_REPORT=FILE set what the options set.";

pub const EXAMPLES: &str = "\
Examples:
  lockstep exec -- ./vector_add 1000000
  lockstep exec --backend emu --report va.json -- ./vector_add
  lockstep exec --check -- ./my_app --input data.bin
  lockstep exec -- python3 my_numba_app.py
  lockstep exec --list-unsupported ./my_app
  export LD_LIBRARY_PATH=$(lockstep exec --library-path):$LD_LIBRARY_PATH";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// The Cranelift JIT: native code on every core.
    Jit,
    /// The SIMT emulator: reference semantics and per-kernel statistics.
    Emu,
}

#[derive(Args, Debug)]
pub struct ExecArgs {
    /// The engine that runs the kernels.
    #[arg(long, value_enum, default_value = "jit")]
    pub backend: Engine,
    /// Check every memory access of the JIT against the allocations, as the emulator does (slower; finds the
    /// thread and PTX line of an out-of-bounds access).
    #[arg(long)]
    pub check: bool,
    /// Worker threads of the JIT (default: one per core); also the multiprocessor count the program sees.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Write the report of the program's kernels to FILE (JSON, written atomically).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print no summary (warnings and kernel faults still go to standard error).
    #[arg(long, short)]
    pub quiet: bool,
    /// Compile kernels afresh instead of using the JIT's disk cache (~/.cache/lockstep/jit).
    #[arg(long)]
    pub no_cache: bool,
    /// Instead of running PROGRAM: list the CUDA runtime functions it imports that lockstep does not
    /// implement, and whether its device code can run (PTX present).
    #[arg(long, value_name = "PROGRAM", conflicts_with_all = ["library_path"])]
    pub list_unsupported: Option<PathBuf>,
    /// Print the folder to put first on LD_LIBRARY_PATH to run CUDA programs on lockstep without this command.
    #[arg(long)]
    pub library_path: bool,
    /// With --list-unsupported: print one JSON object.
    #[arg(long, requires = "list_unsupported")]
    pub json: bool,
    /// The program and its arguments (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

pub fn run(a: &ExecArgs) -> anyhow::Result<ExitCode> {
    if a.library_path {
        let dir = library_dir()?;
        println!("{}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(program) = &a.list_unsupported {
        return list_unsupported(program, a.json);
    }
    let Some((program, args)) = a.command.split_first() else {
        return Err(UsageError("give the program to run after `--`: lockstep exec -- ./app [ARGS]".into()).into());
    };
    let dir = library_dir()?;
    warn_static_runtime(Path::new(program));
    let reports =
        tempfile::Builder::new().prefix("lockstep-exec-").tempdir().context("cannot make a temporary folder")?;
    let mut library_path = OsString::from(&dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        library_path.push(":");
        library_path.push(old);
    }
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", library_path)
        .env(
            "LOCKSTEP_BACKEND",
            match a.backend {
                Engine::Jit => "jit",
                Engine::Emu => "emu",
            },
        )
        .env("LOCKSTEP_CHECK", if a.check { "1" } else { "0" })
        .env("LOCKSTEP_REPORT", reports.path().join("report-%p.json"));
    // Numba loads the driver from a path it is given, or searches the system's folders (not
    // LD_LIBRARY_PATH's); point it at lockstep's unless the user chose one.
    if std::env::var_os("NUMBA_CUDA_DRIVER").is_none() {
        cmd.env("NUMBA_CUDA_DRIVER", dir.join("libcuda.so.1"));
    }
    if let Some(n) = a.threads {
        if n == 0 {
            return Err(UsageError("--threads must be at least 1".into()).into());
        }
        cmd.env("LOCKSTEP_THREADS", n.to_string());
    }
    if a.no_cache {
        cmd.env("LOCKSTEP_JIT_CACHE", "off");
    }
    let start = std::time::Instant::now();
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UsageError(format!("{}: no such program", Path::new(program).display())).into())
        }
        Err(e) => return Err(e).with_context(|| format!("cannot run {}", Path::new(program).display())),
    };
    let elapsed = start.elapsed();
    let code = exit_code(&status);
    let processes = read_reports(reports.path());
    let summary = Summary::new(&processes, code);
    if !a.quiet {
        eprint!("{}", summary.text(Path::new(program), elapsed.as_secs_f64()));
    }
    if let Some(path) = &a.report {
        let json = serde_json::to_vec_pretty(&summary.report).context("encoding the report")?;
        runtime::write_atomic(path, &json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// The program's exit status as a shell gives it: its code, or 128 + the signal that killed it.
fn exit_code(status: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

fn read_reports(dir: &Path) -> Vec<Report> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            match serde_json::from_str::<Report>(&text) {
                Ok(r) => Some(r),
                Err(e) => {
                    eprintln!(
                        "lockstep: warning: a report of the program is unreadable ({e}); its kernels are left out"
                    );
                    None
                }
            }
        })
        .collect()
}

/// What `--report` writes: the program's processes' reports in one.
#[derive(Debug, Serialize)]
struct ExecReport {
    program: String,
    device: String,
    backend: String,
    check: bool,
    exit_code: i32,
    /// Every process that used the CUDA runtime (usually one).
    processes: usize,
    /// From the first process: seconds from its first CUDA call to the end of its first kernel launch.
    first_launch_seconds: Option<f64>,
    /// Reading, parsing and loading device code, all processes.
    load_seconds: f64,
    kernels: Vec<KernelReport>,
    faults: Vec<String>,
    unsupported: Vec<String>,
}

struct Summary {
    report: ExecReport,
}

impl Summary {
    fn new(processes: &[Report], exit_code: i32) -> Summary {
        let first = processes.first();
        let mut kernels: Vec<KernelReport> = Vec::new();
        let (mut faults, mut unsupported) = (Vec::new(), Vec::new());
        for p in processes {
            for k in &p.kernels {
                match kernels.iter_mut().find(|m| m.name == k.name) {
                    Some(m) => {
                        m.launches += k.launches;
                        m.seconds += k.seconds;
                        m.compile_seconds = m.compile_seconds.max(k.compile_seconds);
                        match (&mut m.stats, &k.stats) {
                            (Some(a), Some(b)) => a.add(b),
                            (None, Some(b)) => m.stats = Some(b.clone()),
                            _ => {}
                        }
                    }
                    None => kernels.push(k.clone()),
                }
            }
            faults.extend(p.faults.iter().cloned());
            for u in &p.unsupported {
                if !unsupported.contains(u) {
                    unsupported.push(u.clone());
                }
            }
        }
        Summary {
            report: ExecReport {
                program: first.map(|p| p.program.clone()).unwrap_or_default(),
                device: first.map(|p| p.device.clone()).unwrap_or_default(),
                backend: first.map(|p| p.backend.clone()).unwrap_or_default(),
                check: first.is_some_and(|p| p.check),
                exit_code,
                processes: processes.len(),
                first_launch_seconds: first.and_then(|p| p.first_launch_seconds),
                load_seconds: processes.iter().map(|p| p.load_seconds).fold(0.0, |a, b| a + b),
                kernels,
                faults,
                unsupported,
            },
        }
    }

    /// One screen: what ran where, then a row per kernel (the 20 that took longest).
    fn text(&self, program: &Path, wall: f64) -> String {
        let r = &self.report;
        let mut out = String::new();
        if r.processes == 0 {
            out.push_str(&format!(
                "lockstep: {} made no CUDA calls through lockstep's runtime (exit status {}). Programs must load the \
                 CUDA runtime dynamically: build with `nvcc -cudart shared`.\n",
                program.display(),
                r.exit_code
            ));
            return out;
        }
        let launches: u64 = r.kernels.iter().map(|k| k.launches).sum();
        let kernel_time = r.kernels.iter().map(|k| k.seconds).fold(0.0, |a, b| a + b);
        out.push_str(&format!(
            "lockstep: {} exited with status {} after {:.3} s: {} kernel{}, {} launch{}, {:.3} s in kernels\n",
            program.display(),
            r.exit_code,
            wall,
            r.kernels.len(),
            if r.kernels.len() == 1 { "" } else { "s" },
            launches,
            if launches == 1 { "" } else { "es" },
            kernel_time
        ));
        out.push_str(&format!("  device: {}\n", r.device));
        if let Some(first) = r.first_launch_seconds {
            let compile = r.kernels.iter().map(|k| k.compile_seconds).fold(0.0, |a, b| a + b);
            out.push_str(&format!(
                "  first kernel done {first:.3} s after the program's first CUDA call (device code loaded in {:.3} s, \
                 kernels prepared in {compile:.3} s)\n",
                r.load_seconds
            ));
        }
        if r.kernels.is_empty() {
            return out;
        }
        let stats = r.kernels.iter().any(|k| k.stats.is_some());
        let mut rows: Vec<&KernelReport> = r.kernels.iter().collect();
        rows.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        let name_of = |k: &KernelReport| short_name(k.demangled.as_deref().unwrap_or(&k.name), 56);
        let width = rows.iter().take(20).map(|k| name_of(k).chars().count()).max().unwrap_or(6).max(6);
        out.push_str(&format!("  {:<width$}  {:>8}  {:>10}", "kernel", "launches", "seconds"));
        if stats {
            out.push_str(&format!("  {:>9}  {:>12}  {:>12}", "SIMT eff.", "ld tx/access", "st tx/access"));
        }
        out.push('\n');
        for k in rows.iter().take(20) {
            out.push_str(&format!("  {:<width$}  {:>8}  {:>10.4}", name_of(k), k.launches, k.seconds));
            if let Some(s) = &k.stats {
                out.push_str(&format!(
                    "  {:>8.1}%  {:>12.2}  {:>12.2}",
                    100.0 * s.simt_efficiency,
                    s.memory.global_loads.transactions_per_access,
                    s.memory.global_stores.transactions_per_access
                ));
            }
            out.push('\n');
        }
        if rows.len() > 20 {
            out.push_str(&format!("  ... and {} more kernels (--report FILE has them all)\n", rows.len() - 20));
        }
        if !r.faults.is_empty() {
            out.push_str(&format!(
                "  {} kernel fault(s); the first:\n    {}\n",
                r.faults.len(),
                r.faults[0].replace('\n', "\n    ")
            ));
        }
        if !r.unsupported.is_empty() {
            out.push_str(&format!("  unsupported CUDA functions called: {}\n", r.unsupported.join(", ")));
        }
        out
    }
}

/// A kernel's C++ name shortened for a table row of `width` characters: template arguments, then the
/// parameter list, then outer namespaces give way (`radix_sort::DeviceRadixSortOnesweepKernel<…>(…)`).
fn short_name(name: &str, width: usize) -> String {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let fits = |s: &str| s.chars().count() <= width;
    if fits(name) {
        return name.to_string();
    }
    // Template arguments (outermost brackets only).
    let mut out = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…>");
                }
                depth += 1;
            }
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    if !fits(&out) {
        if let Some(i) = out.find('(') {
            out.truncate(i);
            out.push_str("(…)");
        }
    }
    if !fits(&out) {
        let head = out.find('(').map_or(out.as_str(), |i| &out[..i]).to_string();
        let tail = out[head.len()..].to_string();
        let parts: Vec<&str> = head.split("::").collect();
        let keep = parts.len().min(2);
        out = parts[parts.len() - keep..].join("::") + &tail;
    }
    if !fits(&out) {
        out = format!("{}…", out.chars().take(width - 1).collect::<String>());
    }
    out
}

// ---- the library ----------------------------------------------------------------------------------------

/// The `libcudart.so` lockstep built: `LOCKSTEP_CUDART`, or next to this binary.
fn library_file() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("LOCKSTEP_CUDART") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("LOCKSTEP_CUDART={} is not a file", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the lockstep binary")?;
    let dir = exe.parent().context("the lockstep binary has no folder")?;
    let candidates = [dir.join("libcudart.so"), dir.join("../lib/lockstep/libcudart.so")];
    candidates.iter().find(|c| c.is_file()).cloned().with_context(|| {
        format!(
            "lockstep's CUDA runtime libcudart.so was not found next to {} (build it with `cargo build --release -p \
             cudart`, which puts it beside target/release/lockstep, or set LOCKSTEP_CUDART=/path/to/libcudart.so)",
            exe.display()
        )
    })
}

/// The names programs load the runtime and the driver by: one library serves both APIs, so that a program
/// using both has one device.
const NAMES: [&str; 5] = ["libcudart.so.13", "libcudart.so.12", "libcudart.so", "libcuda.so.1", "libcuda.so"];

/// lockstep's nvJitLink (crate `nvjitlink`), beside the CUDA library; the driver loads it from the folder.
const NVJITLINK: &str = "libnvJitLink.so.13";

/// A folder holding links with the runtime's names to the library: `lockstep-cuda/` beside the library,
/// or under the user's cache folder where that is not writable.
pub fn library_dir() -> anyhow::Result<PathBuf> {
    let lib = library_file()?.canonicalize().context("cannot resolve the runtime's path")?;
    let beside = lib.parent().map(|d| d.join("lockstep-cuda"));
    let mut tried = Vec::new();
    for dir in beside.into_iter().chain(cache_dir(&lib)) {
        match links(&dir, &lib) {
            Ok(()) => return Ok(dir),
            Err(e) => tried.push(format!("{}: {e}", dir.display())),
        }
    }
    bail!("cannot make the folder of links to {}: {}", lib.display(), tried.join("; "))
}

fn cache_dir(lib: &Path) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in lib.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Some(base.join("lockstep").join("lib").join(format!("{h:016x}")))
}

/// Makes (or checks) `dir` with every name linking to `lib`; built aside and renamed into place, so that
/// concurrent runs never see a half-made folder.
fn links(dir: &Path, lib: &Path) -> std::io::Result<()> {
    // lockstep's nvJitLink, where it was built beside the CUDA library.
    let jitlink = lib.parent().map(|d| d.join("libnvjitlink.so")).filter(|p| p.is_file());
    let good = |d: &Path| {
        NAMES.iter().all(|n| std::fs::read_link(d.join(n)).is_ok_and(|t| t == lib))
            && jitlink.as_ref().is_none_or(|j| std::fs::read_link(d.join(NVJITLINK)).is_ok_and(|t| t == *j))
    };
    if good(dir) {
        return Ok(());
    }
    let parent = dir.parent().ok_or_else(|| std::io::Error::other("no parent folder"))?;
    std::fs::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new().prefix(".lockstep-cuda-").tempdir_in(parent)?;
    for n in NAMES {
        std::os::unix::fs::symlink(lib, tmp.path().join(n))?;
    }
    if let Some(j) = &jitlink {
        std::os::unix::fs::symlink(j, tmp.path().join(NVJITLINK))?;
    }
    let tmp = tmp.keep();
    if dir.exists() {
        // Stale links (the library moved): replace them.
        let _ = std::fs::remove_dir_all(dir);
    }
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another run made it meanwhile.
        Err(_) if good(dir) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

// ---- what a program needs ----------------------------------------------------------------------------

/// What lockstep can tell about a program without running it.
#[derive(Debug, Serialize)]
struct Inspection {
    program: String,
    /// How the program gets the CUDA runtime: `shared` (libcudart.so.N, which lockstep replaces), `static`
    /// (linked in: lockstep cannot take its place) or `none`.
    runtime: &'static str,
    imported: usize,
    unsupported: Vec<String>,
    /// Functions lockstep's runtime does not export at all (from a newer or older CUDA).
    unknown: Vec<String>,
    fatbinaries: Vec<FatbinInfo>,
    /// Whether the device code can run: every registered fatbinary has PTX.
    runs: bool,
}

#[derive(Debug, Serialize)]
struct FatbinInfo {
    section: String,
    ptx: Vec<String>,
    sass: Vec<String>,
    compression: Vec<String>,
    registered: bool,
}

fn list_unsupported(program: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(program).with_context(|| format!("cannot read {}", program.display()))?;
    let file =
        object::File::parse(&*bytes).map_err(|e| UsageError(format!("{}: not an ELF file: {e}", program.display())))?;
    use object::{Object, ObjectSymbol};
    let needed_shared = needed(&bytes).iter().any(|n| n.starts_with("libcudart.so"));
    let imports: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_undefined())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| n.starts_with("cuda") || n.starts_with("__cuda"))
        .collect();
    let defines_static = file
        .symbols()
        .any(|s| s.is_definition() && s.name().is_ok_and(|n| n == "cudaMalloc" || n == "cudaLaunchKernel"));
    let runtime = if needed_shared {
        "shared"
    } else if defines_static {
        "static"
    } else {
        "none"
    };
    let exported = exported_functions()?;
    let unsupported_list = cuda::unsupported::UNSUPPORTED_RUNTIME_FUNCTIONS;
    let mut unsupported: Vec<String> =
        imports.iter().filter(|n| unsupported_list.contains(&n.as_str())).cloned().collect();
    let mut unknown: Vec<String> = imports.iter().filter(|n| !exported.contains(*n)).cloned().collect();
    unsupported.sort();
    unsupported.dedup();
    unknown.sort();
    unknown.dedup();
    let mut fatbinaries = Vec::new();
    let mut runs = true;
    match fatbin::elf::scan(&bytes) {
        Ok(scan) => {
            for f in &scan.fatbins {
                let registered = f.wrapper.is_some() || f.section == fatbin::elf::Section::NvRelfatbin;
                let ptx: Vec<String> = f.fatbin.ptx_archs().iter().map(|a| format!("compute_{a}")).collect();
                let sass: Vec<String> = f.fatbin.sass_archs().iter().map(|a| format!("sm_{a}")).collect();
                let mut compression: Vec<String> =
                    f.fatbin.entries.iter().map(|e| format!("{:?}", e.compression).to_lowercase()).collect();
                compression.sort();
                compression.dedup();
                if registered && ptx.is_empty() && f.section == fatbin::elf::Section::NvFatbin {
                    // An -rdc program's device-linked fatbinary holds SASS only; its units' PTX is elsewhere.
                    let rdc = scan.fatbins.iter().any(|g| g.section == fatbin::elf::Section::NvRelfatbin);
                    if !rdc {
                        runs = false;
                    }
                }
                fatbinaries.push(FatbinInfo {
                    section: f.section.name().to_string(),
                    ptx,
                    sass,
                    compression,
                    registered,
                });
            }
        }
        Err(e) => {
            runs = false;
            eprintln!("lockstep: warning: {}: the device code cannot be read: {e}", program.display());
        }
    }
    let inspection = Inspection {
        program: program.display().to_string(),
        runtime,
        imported: imports.len(),
        unsupported,
        unknown,
        fatbinaries,
        runs,
    };
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &inspection)?;
        writeln!(out)?;
    } else {
        write_inspection(&mut out, &inspection)?;
    }
    let ok = inspection.runtime == "shared"
        && inspection.unsupported.is_empty()
        && inspection.unknown.is_empty()
        && inspection.runs;
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn write_inspection(out: &mut dyn Write, i: &Inspection) -> std::io::Result<()> {
    match i.runtime {
        "shared" => writeln!(out, "{}: loads the CUDA runtime dynamically (lockstep can replace it)", i.program)?,
        "static" => writeln!(
            out,
            "{}: links the CUDA runtime statically (nvcc's default); lockstep cannot replace it: rebuild with `nvcc \
             -cudart shared`",
            i.program
        )?,
        _ => writeln!(out, "{}: does not use the CUDA runtime", i.program)?,
    }
    writeln!(out, "  imports {} CUDA runtime functions", i.imported)?;
    if i.unsupported.is_empty() && i.unknown.is_empty() {
        writeln!(out, "  lockstep implements every one of them")?;
    }
    if !i.unsupported.is_empty() {
        writeln!(out, "  not supported (return cudaErrorNotSupported): {}", i.unsupported.join(", "))?;
    }
    if !i.unknown.is_empty() {
        writeln!(out, "  not exported by lockstep's runtime (the program would not start): {}", i.unknown.join(", "))?;
    }
    for f in &i.fatbinaries {
        let what = if f.registered { "" } else { " (not registered by the program)" };
        writeln!(
            out,
            "  device code in {}{what}: PTX {}; SASS {}; compression {}",
            f.section,
            if f.ptx.is_empty() { "none".to_string() } else { f.ptx.join(", ") },
            if f.sass.is_empty() { "none".to_string() } else { f.sass.join(", ") },
            f.compression.join(", ")
        )?;
    }
    if !i.runs {
        writeln!(
            out,
            "  its device code holds no PTX, which lockstep needs: rebuild with PTX included (e.g. `-arch=sm_80`, or \
             `-gencode arch=compute_80,code=[sm_80,compute_80]`)"
        )?;
    }
    Ok(())
}

/// The libraries an ELF file needs (`DT_NEEDED`).
fn needed(bytes: &[u8]) -> Vec<String> {
    use object::elf::FileHeader64;
    use object::read::elf::{Dyn, FileHeader};
    use object::Endianness;
    let Ok(header) = FileHeader64::<Endianness>::parse(bytes) else { return Vec::new() };
    let Ok(endian) = header.endian() else { return Vec::new() };
    let Ok(sections) = header.sections(endian, bytes) else { return Vec::new() };
    let Ok(Some((dynamic, index))) = sections.dynamic(endian, bytes) else { return Vec::new() };
    let Ok(strings) = sections.strings(endian, bytes, index) else { return Vec::new() };
    dynamic
        .iter()
        .filter(|d| d.tag32(endian) == Some(object::elf::DT_NEEDED))
        .filter_map(|d| d.string(endian, strings).ok())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// The functions lockstep's runtime library exports.
fn exported_functions() -> anyhow::Result<Vec<String>> {
    use object::{Object, ObjectSymbol};
    let lib = library_file()?;
    let bytes = std::fs::read(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
    let file = object::File::parse(&*bytes).with_context(|| format!("{} is not an ELF file", lib.display()))?;
    Ok(file.dynamic_symbols().filter(|s| s.is_definition()).filter_map(|s| s.name().ok().map(str::to_string)).collect())
}

/// Says before running when the program cannot use lockstep's runtime.
fn warn_static_runtime(program: &Path) {
    let Ok(bytes) = std::fs::read(program) else { return };
    if object::File::parse(&*bytes).is_err() {
        return;
    }
    if needed(&bytes).iter().any(|n| n.starts_with("libcudart.so")) {
        return;
    }
    if bytes.windows(b".nv_fatbin".len()).any(|w| w == b".nv_fatbin") {
        eprintln!(
            "lockstep: warning: {} links the CUDA runtime statically (nvcc's default), so lockstep's runtime cannot \
             take its place; rebuild it with `nvcc -cudart shared`",
            program.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn long_kernel_names_keep_what_tells_them_apart() {
        assert_eq!(short_name("vadd(float const*, float*, int)", 56), "vadd(float const*, float*, int)");
        let cub = "void cub::_V_300500_SM_800::detail::radix_sort::DeviceRadixSortOnesweepKernel<cub::policy<int>, \
                   false, int>(int*, int const*, unsigned long)";
        assert_eq!(short_name(cub, 56), "radix_sort::DeviceRadixSortOnesweepKernel<…>(…)");
        assert_eq!(short_name("ns::k<int>(int)", 56), "ns::k<int>(int)");
        assert!(short_name(&"x".repeat(200), 56).chars().count() <= 56);
    }
}
