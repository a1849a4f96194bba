//! `lockstep trace`: run a program under `qemu-x86_64` with the tracer plugin; `lockstep trace info`: summarise
//! a trace.
//!
//! The command writes the trace header itself, runs QEMU with the plugin (which appends chunks), shows
//! progress on a terminal, and when the program dies by a signal completes the trace from the plugin's spill
//! buffers (`trace::spill::recover`) before renaming it into place.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use trace::{EndRecord, Header, Trace};

use crate::UsageError;

pub const ABOUT: &str = "Trace a multithreaded x86-64 program under QEMU for SIMT analysis, or summarise a trace";

pub const LONG_ABOUT: &str = "\
Trace an unmodified multithreaded x86-64 Linux program: run it under
qemu-x86_64 with lockstep's tracer plugin and record, for every SIMT thread,
the basic blocks it executed, its memory accesses, calls and returns, lock
acquires and releases (pthread mutexes, spin locks, rwlocks, OpenMP critical
sections and locks) and the regions it skipped (system calls, --exclude'd
functions, lock spinning). The program's standard input, output and error
pass through, and lockstep exits with its exit status (128 + N when signal N
killed it; the trace then holds everything up to that point).

SIMT threads: without --function every OS thread is one SIMT thread. With
--function NAME every invocation of NAME, on any OS thread, is one; with
--per-iteration as well, every iteration of NAME's outermost loop is one
(e.g. --function main._omp_fn.0 --per-iteration for an OpenMP parallel for).
SIMT threads are numbered by OS-thread creation order, then by start order
within their OS thread; the trace records both.

NAME is a function's demangled name (`ns::f(int)`), that name without its
parameters (`ns::f`), or its raw symbol name.

Needs qemu-x86_64 with TCG plugin support (Debian bookworm: apt-get install
qemu-user) and the tracer plugin libtracer.so, looked up next to the lockstep
binary (cargo build --release -p tracer -p lockstep puts them together) or
named by LOCKSTEP_TRACER. LOCKSTEP_QEMU overrides the qemu-x86_64 found on
PATH.

`lockstep trace info FILE` summarises a trace: program, threads,
instructions, functions, locks, skipped regions, bytes per instruction, and
whether the trace is complete or a prefix (a killed tracer, a cut file).";

pub const EXAMPLES: &str = "\
Examples:
  lockstep trace -o pool.trace -- ./pool 8
  lockstep trace --function 'main._omp_fn.0' --per-iteration -- ./omp_for
  lockstep trace --function worker --exclude printf -- ./server --threads 16
  lockstep trace info pool.trace
  lockstep trace info pool.trace --json --top 50";

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: Option<TraceCommand>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Summarise a trace: program, threads, instructions, functions, locks, skipped regions, size.
    ///
    /// Reads the whole trace once. A trace cut short (the tracer was killed, the file was truncated or
    /// damaged) is summarised up to its last valid chunk and reported as a prefix.
    Info {
        file: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// How many functions to list (by instructions executed).
        #[arg(long, default_value_t = 15)]
        top: usize,
    },
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Write the trace here (atomically: FILE.partial is renamed when the program ends).
    #[arg(short, long, default_value = "lockstep.trace")]
    pub output: PathBuf,
    /// Make every invocation of this function one SIMT thread.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// With --function: one SIMT thread per iteration of the function's outermost loop.
    #[arg(long, requires = "function")]
    pub per_iteration: bool,
    /// Skip this function and its callees (their instructions are counted as skipped); repeatable.
    #[arg(long, value_name = "NAME")]
    pub exclude: Vec<String>,
    /// zstd level of the trace: 1 (the default) is fastest, 19 smallest, 0 stores events uncompressed (less
    /// CPU, about 20 times the bytes).
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(i32).range(0..=19))]
    pub compress: Option<i32>,
    /// Do not show progress on the terminal.
    #[arg(short, long)]
    pub quiet: bool,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

pub fn run(args: &TraceArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        Some(TraceCommand::Info { file, json, top }) => info(file, *json, *top),
        None => trace(&args.run),
    }
}

const QEMU_INSTALL: &str = "qemu-x86_64 with TCG plugin support is needed to trace programs. On Debian or \
    Ubuntu: `sudo apt-get install qemu-user` (Debian bookworm's QEMU 7.2 has plugin support; the QEMU 10 of \
    bookworm-backports does not). Or point LOCKSTEP_QEMU at a qemu-x86_64 built with --enable-plugins.";

/// Finds `name` on PATH.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

fn find_qemu() -> anyhow::Result<PathBuf> {
    let qemu = match std::env::var_os("LOCKSTEP_QEMU") {
        Some(p) => PathBuf::from(p),
        None => {
            which("qemu-x86_64").ok_or_else(|| anyhow::anyhow!("qemu-x86_64 was not found on PATH. {QEMU_INSTALL}"))?
        }
    };
    let help = Command::new(&qemu)
        .arg("-h")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}. {QEMU_INSTALL}", qemu.display()))?;
    if !String::from_utf8_lossy(&help.stdout).contains("-plugin") {
        bail!("{} has no TCG plugin support (no -plugin option). {QEMU_INSTALL}", qemu.display());
    }
    Ok(qemu)
}

fn find_plugin() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("LOCKSTEP_TRACER") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("LOCKSTEP_TRACER={} is not a file", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot locate the lockstep binary")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [dir.join("libtracer.so"), dir.join("../libtracer.so"), dir.join("../lib/lockstep/libtracer.so")];
    for c in &candidates {
        if c.is_file() {
            return Ok(c.clone());
        }
    }
    bail!(
        "the tracer plugin libtracer.so was not found next to {} (build it with `cargo build --release -p tracer`, \
         which puts it beside target/release/lockstep, or set LOCKSTEP_TRACER=/path/to/libtracer.so)",
        exe.display()
    )
}

/// Resolves the program like a shell: a name without `/` is searched on PATH.
fn resolve_program(p: &OsString) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(p);
    if p.to_string_lossy().contains('/') {
        if !path.is_file() {
            return Err(UsageError(format!("{}: no such program", path.display())).into());
        }
        return Ok(path);
    }
    which(&p.to_string_lossy()).ok_or_else(|| UsageError(format!("{}: not found on PATH", path.display())).into())
}

/// QEMU splits plugin options at commas; a literal comma is written twice.
fn escape(v: &str) -> String {
    v.replace(',', ",,")
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

fn trace(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let program = resolve_program(&a.command[0])?;
    let qemu = find_qemu()?;
    let plugin = find_plugin()?;
    let out = a.output.clone();
    let partial = with_suffix(&out, ".partial");
    let spill = with_suffix(&out, ".spill");
    let _ = std::fs::remove_dir_all(&spill);
    std::fs::create_dir_all(&spill).with_context(|| format!("cannot create {}", spill.display()))?;
    let abs_program = std::fs::canonicalize(&program).unwrap_or(program.clone());
    let version = Command::new(&qemu)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or_default().to_string());
    let header = Header {
        tracer: format!("lockstep {} / tracer plugin", env!("CARGO_PKG_VERSION")),
        program: abs_program.display().to_string(),
        args: a.command[1..].iter().map(|s| s.to_string_lossy().into_owned()).collect(),
        function: a.function.clone(),
        per_iteration: a.per_iteration,
        exclude: a.exclude.clone(),
        created_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        extra: version.into_iter().map(|v| ("qemu".to_string(), v)).collect(),
    };
    std::fs::write(&partial, header.encode()).with_context(|| format!("cannot write {}", partial.display()))?;
    let mut opt = format!(
        "{},out={},header=keep,spill={},program={}",
        escape(&plugin.display().to_string()),
        escape(&partial.display().to_string()),
        escape(&spill.display().to_string()),
        escape(&abs_program.display().to_string())
    );
    if let Some(f) = &a.function {
        opt.push_str(&format!(",function={}", escape(f)));
    }
    if a.per_iteration {
        opt.push_str(",per_iteration=on");
    }
    if let Some(level) = a.compress {
        opt.push_str(&format!(",level={level}"));
    }
    for x in &a.exclude {
        opt.push_str(&format!(",exclude={}", escape(x)));
    }
    // Ctrl-C reaches the traced program (same process group); lockstep stays to finish the trace.
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGQUIT] {
        let _ = signal_hook::flag::register(sig, interrupted.clone());
    }
    let started = Instant::now();
    let mut child = Command::new(&qemu)
        .arg("-plugin")
        .arg(&opt)
        .arg("--")
        .arg(&program)
        .args(&a.command[1..])
        .spawn()
        .with_context(|| format!("cannot start {}", qemu.display()))?;
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} tracing {msg} ({elapsed})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b
    });
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting for qemu-x86_64")? {
            break s;
        }
        if let Some(b) = &bar {
            let n = trace::spill::progress(&spill);
            b.set_message(format!("{} instructions", group(n)));
            b.tick();
        }
        std::thread::sleep(Duration::from_millis(if bar.is_some() { 100 } else { 20 }));
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let elapsed = started.elapsed();
    use std::os::unix::process::ExitStatusExt;
    let (code, killed) = match (status.code(), status.signal()) {
        (Some(c), _) => (c, None),
        (None, Some(s)) => (128 + s, Some(s)),
        _ => (1, None),
    };
    let end = EndRecord {
        reason: match killed {
            Some(s) => format!("signal {s}"),
            None => "exit".into(),
        },
        exit_code: killed.is_none().then_some(i64::from(code)),
        recovered: true,
        insns: 0,
    };
    let rec = trace::spill::recover(&partial, &spill, end);
    let _ = std::fs::remove_dir_all(&spill);
    let rec = rec.with_context(|| format!("cannot complete the trace {}", partial.display()))?;
    std::fs::rename(&partial, &out)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), out.display()))?;
    if let Some(s) = killed {
        eprintln!(
            "lockstep: the program was killed by {}; the trace holds everything up to that point{}",
            signal_name(s),
            if rec.chunks > 0 { format!(" ({} buffered chunk(s) recovered)", rec.chunks) } else { String::new() }
        );
    } else if !rec.already_complete {
        eprintln!("lockstep: the tracer did not finish the trace; it was completed from its buffers");
    }
    match Trace::open(&out) {
        Ok(t) => {
            let insns = t.end.as_ref().map_or(0, |e| e.insns);
            let bytes = t.file_len;
            eprintln!(
                "lockstep: traced {} instructions in {} OS thread(s), {} SIMT thread(s), {:.1} s -> {} ({}, {:.2} bytes/instruction)",
                group(insns),
                t.threads.len(),
                t.simt.len(),
                elapsed.as_secs_f64(),
                out.display(),
                human_bytes(bytes),
                if insns > 0 { bytes as f64 / insns as f64 } else { 0.0 }
            );
            if let Some(f) = &a.function {
                if t.simt.is_empty() {
                    eprintln!("lockstep: warning: `{f}` never ran (or was not found): the trace has no SIMT threads");
                }
            }
        }
        Err(e) => eprintln!("lockstep: warning: the trace cannot be read back: {e}"),
    }
    if interrupted.load(Ordering::Relaxed) && killed.is_none() {
        eprintln!("lockstep: interrupted");
    }
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// `1234567` → `1,234,567`.
fn group(n: u64) -> String {
    let digits: Vec<char> = n.to_string().chars().rev().collect();
    let mut out: Vec<char> = Vec::new();
    for (i, c) in digits.iter().enumerate() {
        if i > 0 && i % 3 == 0 {
            out.push(',');
        }
        out.push(*c);
    }
    out.iter().rev().collect()
}

fn human_bytes(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64)
    } else if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

fn info(file: &Path, json: bool, top: usize) -> anyhow::Result<ExitCode> {
    let t = Trace::open(file).map_err(|e| anyhow::anyhow!("{e}"))?;
    let s = trace::summarize(&t, top);
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(ExitCode::SUCCESS);
    }
    use std::fmt::Write as _;
    let mut o = String::new();
    let status = match &s.status {
        trace::Status::Complete => "complete".to_string(),
        trace::Status::Truncated { reason, .. } => format!("PREFIX ONLY: {reason}"),
    };
    let _ = writeln!(o, "trace         {} ({}, {})", file.display(), human_bytes(s.file_bytes), status);
    let _ = writeln!(
        o,
        "program       {}",
        std::iter::once(s.program.as_str()).chain(s.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
    );
    let _ = writeln!(o, "tracer        {}", s.tracer);
    let mode = match (&s.function, s.per_iteration) {
        (None, _) => "one SIMT thread per OS thread".to_string(),
        (Some(f), false) => format!("one SIMT thread per invocation of {f}"),
        (Some(f), true) => format!("one SIMT thread per iteration of the outermost loop of {f}"),
    };
    let _ = writeln!(o, "simt threads  {mode}");
    if !s.exclude.is_empty() {
        let _ = writeln!(o, "excluded      {}", s.exclude.join(", "));
    }
    if let Some(e) = &s.end {
        let how = match (e.as_str(), s.exit_code) {
            ("exit", Some(c)) => format!("exited with status {c}"),
            (r, _) if r.starts_with("signal ") => {
                let n: i32 = r[7..].parse().unwrap_or(0);
                format!("killed by {}", signal_name(n))
            }
            (r, _) => r.to_string(),
        };
        let _ = writeln!(
            o,
            "program end   {how}{}",
            if s.recovered { " (tail recovered from the tracer's buffers)" } else { "" }
        );
    }
    let _ = writeln!(o, "threads       {} OS, {} SIMT", s.os_threads, s.simt_threads);
    let _ = writeln!(o, "instructions  {} recorded", group(s.insns));
    for k in &s.skipped {
        let _ = writeln!(o, "  skipped     {} in {} {} region(s)", group(k.insns), group(k.regions), k.kind.name());
    }
    if s.function.is_some() {
        let _ = writeln!(o, "  outside     {} outside SIMT threads", group(s.outside_insns));
    }
    let _ = writeln!(
        o,
        "blocks        {} translated, {} basic blocks",
        group(s.translated_blocks as u64),
        group(s.basic_blocks as u64)
    );
    let _ = writeln!(o, "memory        {} loads, {} stores", group(s.loads), group(s.stores));
    let _ = writeln!(
        o,
        "calls         {} calls, {} returns, {} tail calls",
        group(s.calls),
        group(s.returns),
        group(s.tail_calls)
    );
    let _ = writeln!(o, "size          {:.3} bytes per recorded instruction", s.bytes_per_insn);
    let _ = writeln!(o, "modules       {} ({} symbols)", s.modules.len(), group(s.symbols as u64));
    let _ = writeln!(o, "\nfunctions ({} executed, top {} by instructions):", s.functions_executed, s.functions.len());
    let _ = writeln!(o, "  {:>14} {:>10}  function", "instructions", "calls");
    for f in &s.functions {
        let module = if f.module.is_empty() { String::new() } else { format!("  [{}]", f.module) };
        let _ = writeln!(o, "  {:>14} {:>10}  {}{}", group(f.insns), group(f.calls), f.name, module);
    }
    if !s.locks.is_empty() {
        let _ = writeln!(o, "\nlocks:");
        let _ =
            writeln!(o, "  {:<13} {:>18} {:>10} {:>10} {:>8}", "kind", "address", "acquires", "releases", "threads");
        for l in &s.locks {
            let _ = writeln!(
                o,
                "  {:<13} {:>18} {:>10} {:>10} {:>8}",
                l.kind.name(),
                format!("{:#x}", l.addr),
                group(l.acquires),
                group(l.releases),
                l.threads
            );
        }
    }
    let _ = writeln!(o, "\nOS threads (creation order):");
    let _ = writeln!(o, "  {:>4} {:>8} {:>6} {:>8} {:>14}", "rank", "tid", "stream", "simt", "instructions");
    for th in &s.threads {
        let _ = writeln!(
            o,
            "  {:>4} {:>8} {:>6} {:>8} {:>14}",
            th.rank,
            th.tid,
            th.os,
            group(th.simt_threads),
            group(th.insns)
        );
    }
    for e in &s.stream_errors {
        let _ = writeln!(o, "\nerror: {e}");
    }
    for n in &s.notes {
        let _ = writeln!(o, "note: {n}");
    }
    print!("{o}");
    Ok(ExitCode::SUCCESS)
}
