//! Acceptance tests on programs of the project's own whose SIMT behaviour is known by construction
//! (tests/programs): compiled with gcc, traced with `lockstep trace` under qemu-x86_64, analyzed with the
//! library.
//!
//! `work(n)` and its copies (tests/programs/fuse.h) are written in assembly: 3n + 2 instructions, the loop one
//! basic block of 3 instructions run n times. The programs are linked with `-z now` so that no lane resolves
//! a PLT entry lazily (which would make one lane run the dynamic linker alone).
//!
//! The tests need qemu-x86_64 with plugin support and gcc (Debian: apt-get install qemu-user gcc); they build
//! the `lockstep` binary and the tracer plugin with cargo. Without the tools they are skipped with a message,
//! unless the environment variable CI is set, in which case they fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use fuser::{Analysis, Batch, Config, Report};

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// The `lockstep` binary (built with the tracer plugin next to it), or why it cannot be had.
fn lockstep() -> Option<&'static Path> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = BIN.get_or_init(|| {
        let qemu = Command::new("qemu-x86_64").arg("-h").output().map_err(|e| format!("qemu-x86_64: {e}"))?;
        if !String::from_utf8_lossy(&qemu.stdout).contains("-plugin") {
            return Err("qemu-x86_64 has no plugin support".into());
        }
        Command::new("gcc").arg("--version").output().map_err(|e| format!("gcc: {e}"))?;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let profile_dir = exe.parent().and_then(Path::parent).ok_or("no target dir")?;
        let target_dir = profile_dir.parent().ok_or("no target dir")?;
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.args(["build", "-q", "-p", "lockstep", "-p", "tracer", "--target-dir"]).arg(target_dir);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let out = cmd.current_dir(env!("CARGO_MANIFEST_DIR")).output().map_err(|e| format!("cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!("building lockstep failed:\n{}", String::from_utf8_lossy(&out.stderr)));
        }
        let bin = profile_dir.join("lockstep");
        if !bin.is_file() || !profile_dir.join("libtracer.so").is_file() {
            return Err(format!("no lockstep or libtracer.so in {}", profile_dir.display()));
        }
        Ok(bin)
    });
    match r {
        Ok(p) => Some(p.as_path()),
        Err(e) if std::env::var_os("CI").is_some() => panic!("the analyzer's program tests cannot run under CI: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPING fuser program test: {e} (install with: apt-get install -y qemu-user gcc) ***\n");
            None
        }
    }
}

fn compile(dir: &Path, src: &str, extra: &[&str]) -> PathBuf {
    let exe = dir.join(src.split('.').next().unwrap());
    let out = Command::new("gcc")
        .args(["-O2", "-g0", "-Wl,-z,now", "-o"])
        .arg(&exe)
        .arg(programs().join(src))
        .args(extra)
        .output()
        .expect("gcc runs");
    assert!(out.status.success(), "gcc {src}: {}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Traces `program args` with `lockstep trace OPTIONS` into `dir/name.trace`.
fn trace(bin: &Path, dir: &Path, name: &str, options: &[&str], program: &Path, args: &[&str]) -> trace::Trace {
    let f = dir.join(format!("{name}.trace"));
    let o = Command::new(bin)
        .args(["trace", "-q", "-o"])
        .arg(&f)
        .args(options)
        .arg("--")
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("lockstep runs");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let t = trace::Trace::open(&f).unwrap();
    assert!(t.status.is_complete());
    t
}

fn analyze(t: &trace::Trace, warp: u32, batch: Batch) -> Report {
    let a = Analysis::new(t);
    let r = a.run(&Config { warp_size: warp, batch, ..Config::default() }, &|_| {}).unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.resyncs, 0);
    r
}

fn function<'r>(r: &'r Report, name: &str) -> &'r fuser::report::FunctionReport {
    r.functions.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no function {name}"))
}

/// The block of function `name` with the most thread instructions.
fn hottest_block<'r>(r: &'r Report, name: &str) -> &'r fuser::report::BlockReport {
    r.blocks.iter().find(|b| b.function == name).unwrap_or_else(|| panic!("no block of {name}"))
}

/// `lanes MODE 32` traced with `--function worker_MODE`.
fn lanes_trace(mode: &str) -> Option<(tempfile::TempDir, trace::Trace)> {
    lanes_trace_with(mode, &[])
}

/// `lanes MODE 32 EXTRA...` traced with `--function worker_MODE`.
fn lanes_trace_with(mode: &str, extra: &[&str]) -> Option<(tempfile::TempDir, trace::Trace)> {
    let bin = lockstep()?;
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "lanes.c", &["-pthread"]);
    let args: Vec<&str> = [mode, "32"].into_iter().chain(extra.iter().copied()).collect();
    let t = trace(bin, dir.path(), mode, &["--function", &format!("worker_{mode}")], &exe, &args);
    assert_eq!(t.simt.len(), 32);
    Some((dir, t))
}

#[test]
fn uniform_work_is_fully_efficient() {
    let Some((_d, t)) = lanes_trace("uniform") else { return };
    let r = analyze(&t, 32, Batch::Consecutive);
    assert_eq!(r.warps, 1);
    assert_eq!(r.simt_efficiency, Some(1.0));
    assert_eq!(r.thread_instructions, 32 * r.warp_instructions);
    let w = function(&r, "work");
    assert_eq!((w.thread_instructions, w.warp_instructions), (32 * 3002, 3002));
    assert_eq!(w.simt_efficiency, Some(1.0));
    // The same at every warp size that the 32 threads fill; a warp of 64 has 32 lanes idle.
    for ws in [4, 8, 16] {
        assert_eq!(analyze(&t, ws, Batch::Consecutive).simt_efficiency, Some(1.0), "warp {ws}");
    }
    assert_eq!(analyze(&t, 64, Batch::Consecutive).simt_efficiency, Some(0.5));
}

#[test]
fn odd_and_even_paths_are_half_efficient() {
    let Some((_d, t)) = lanes_trace("oddeven") else { return };
    let r = analyze(&t, 32, Batch::Consecutive);
    for path in ["work_a", "work_b"] {
        let f = function(&r, path);
        assert_eq!((f.thread_instructions, f.warp_instructions), (16 * 3002, 3002), "{path}");
        assert_eq!(f.simt_efficiency, Some(0.5), "{path}");
    }
    // The paths are almost everything; the few convergent instructions around them lift it just above 50%.
    let e = r.simt_efficiency.unwrap();
    assert!((0.5..0.505).contains(&e), "{e}");
}

#[test]
fn lane_dependent_trip_counts() {
    let Some((_d, t)) = lanes_trace("trips") else { return };
    let r = analyze(&t, 32, Batch::Consecutive);
    // Lane i runs the loop i % 32 + 1 times: 528 lane iterations in 32 warp iterations of 32 lanes.
    let b = hottest_block(&r, "work");
    assert_eq!((b.thread_instructions, b.warp_instructions), (3 * 528, 3 * 32));
    assert_eq!(b.simt_efficiency, Some(528.0 / 1024.0));
    let w = function(&r, "work");
    assert_eq!((w.thread_instructions, w.warp_instructions), (3 * 528 + 2 * 32, 3 * 32 + 2));
    // The warp-size sweep: efficiency falls with the warp size (the paper's Fig. 1).
    let effs: Vec<f64> =
        [4, 8, 16, 32].iter().map(|&w| analyze(&t, w, Batch::Consecutive).simt_efficiency.unwrap()).collect();
    assert!(effs.windows(2).all(|p| p[0] > p[1]), "{effs:?}");
    // At warp 4 the loop block runs max(trips) = 4k + 4 iterations for lanes with 4k + 1 .. 4k + 4 trips.
    let r4 = analyze(&t, 4, Batch::Consecutive);
    let b4 = hottest_block(&r4, "work");
    let warp_iters: u64 = (0..8).map(|k| 4 * k + 4).sum();
    assert_eq!((b4.thread_instructions, b4.warp_instructions), (3 * 528, 3 * warp_iters));
}

#[test]
fn coalesced_and_strided_heap_loads() {
    let Some((_d, t)) = lanes_trace("mem") else { return };
    let r = analyze(&t, 32, Batch::Consecutive);
    assert_eq!(r.simt_efficiency, Some(1.0));
    let c = &function(&r, "load_c").memory;
    let s = &function(&r, "load_s").memory;
    // One warp load each: consecutive ints are 128 bytes = 4 sectors; a 32-byte stride touches 32 sectors.
    assert_eq!((c.heap.warp_accesses, c.heap.transactions), (1, 4));
    assert_eq!((s.heap.warp_accesses, s.heap.transactions), (1, 32));
    assert_eq!(c.heap.loads.warp_accesses, 1);
    assert_eq!(c.heap.stores.warp_accesses, 0);
    // Their `ret`s read the return addresses from 32 separate stacks: 32 sectors with CPU addresses, 8 (two
    // 128-byte rows of 8-byte words) as GPU local memory.
    assert_eq!((c.stack.warp_accesses, c.stack.transactions), (1, 32));
    assert_eq!((c.stack_local.warp_accesses, c.stack_local.transactions), (1, 8));
    assert_eq!(c.static_data.warp_accesses, 0);
    // At warp 8: 1 and 8 sectors.
    let r8 = analyze(&t, 8, Batch::Consecutive);
    assert_eq!(function(&r8, "load_c").memory.heap.transactions_per_access, Some(1.0));
    assert_eq!(function(&r8, "load_s").memory.heap.transactions_per_access, Some(8.0));
}

#[test]
fn one_mutex_serializes_and_one_mutex_per_lane_does_not() {
    let Some((_d, one)) = lanes_trace("lock1") else { return };
    let Some((_e, many)) = lanes_trace("lockn") else { return };
    let r1 = analyze(&one, 32, Batch::Consecutive);
    let rn = analyze(&many, 32, Batch::Consecutive);
    let l1 = r1.locks.iter().find(|l| l.function == "worker_lock1").expect("lock site");
    assert_eq!((l1.locks, l1.acquisitions, l1.contended, l1.max_serialized_lanes), (1, 32, 1, 32));
    // 31 groups after the first each run the critical section (its length depends on whether the real run
    // found the mutex contended: an unlock with waiters wakes them with a system call).
    assert!(l1.serialized_warp_instructions >= 31 * 3, "{l1:?}");
    assert!(l1.serialized_warp_instructions < l1.critical_warp_instructions, "{l1:?}");
    let ln = rn.locks.iter().find(|l| l.function == "worker_lockn").expect("lock site");
    assert_eq!((ln.locks, ln.acquisitions, ln.contended, ln.max_serialized_lanes), (32, 32, 0, 0));
    assert_eq!(ln.serialized_warp_instructions, 0);
    assert!(r1.simt_efficiency.unwrap() < rn.simt_efficiency.unwrap());
    // With one lock per lane the critical section runs in lock-step.
    assert_eq!(function(&rn, "worker_lockn").simt_efficiency, Some(1.0));
    assert_eq!(function(&r1, "pthread_mutex_unlock").simt_efficiency, Some(1.0 / 32.0));
}

/// The reported bug: in a one-thread process glibc takes and releases a mutex with plain stores, and the
/// first store of `pthread_mutex_lock` is a push, so every acquire was recorded under one stack address and
/// 32 lanes on 32 different mutexes ran one at a time (3% SIMT efficiency).
#[test]
fn one_thread_process_locks_by_their_own_address() {
    let Some((_d, one)) = lanes_trace_with("lock1", &["seq"]) else { return };
    let Some((_e, many)) = lanes_trace_with("lockn", &["seq"]) else { return };
    let Some((_f, lockloop)) = lanes_trace_with("lockloop", &["seq"]) else { return };
    let r1 = analyze(&one, 32, Batch::Consecutive);
    let rn = analyze(&many, 32, Batch::Consecutive);
    let l1 = r1.locks.iter().find(|l| l.function == "worker_lock1").expect("lock site");
    assert_eq!((l1.locks, l1.acquisitions, l1.max_serialized_lanes), (1, 32, 32), "{l1:?}");
    let ln = rn.locks.iter().find(|l| l.function == "worker_lockn").expect("lock site");
    assert_eq!((ln.locks, ln.acquisitions, ln.contended, ln.max_serialized_lanes), (32, 32, 0, 0), "{ln:?}");
    assert_eq!(function(&rn, "worker_lockn").simt_efficiency, Some(1.0));
    // The loop under each lane's own mutex runs in lock-step: work(1000) is 3002 of each lane's instructions.
    let rl = analyze(&lockloop, 32, Batch::Consecutive);
    assert_eq!(function(&rl, "work").simt_efficiency, Some(1.0));
    assert!(rl.simt_efficiency.unwrap() > 0.95, "{:?}", rl.simt_efficiency);
}

#[test]
fn openmp_loop_traced_per_iteration() {
    let Some(bin) = lockstep() else { return };
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "omp.c", &["-fopenmp"]);
    let t = trace(bin, dir.path(), "omp", &["--function", "main._omp_fn.0", "--per-iteration"], &exe, &["64"]);
    assert_eq!(t.simt.len(), 64);
    let r = analyze(&t, 32, Batch::Consecutive);
    assert_eq!(r.warps, 2);
    // Iteration i runs work(i + 1): the loop block runs sum(1..=64) lane iterations whatever the warps.
    let b = hottest_block(&r, "work");
    assert_eq!(b.thread_instructions, 3 * (64 * 65 / 2));
    // Iterations 0..31 (OpenMP threads 0 and 1) form warp 0, 32..63 warp 1: 32 + 64 warp iterations.
    assert_eq!(b.warp_instructions, 3 * (32 + 64));
    let w = function(&r, "work");
    assert_eq!(w.thread_instructions, 3 * 2080 + 2 * 64);
    // The critical section: all 32 lanes of a warp on one lock.
    let l = r.locks.iter().find(|l| l.kind == trace::LockKind::OmpCritical).expect("critical section");
    assert_eq!((l.locks, l.acquisitions, l.contended, l.max_serialized_lanes), (1, 64, 2, 32));
    // Round-robin over the 4 OpenMP threads puts iterations 0, 16, 32, 48, 1, 17, ... together: every warp has
    // trips up to 64 or close, so the loop costs more warp iterations than with consecutive batching.
    let rr = analyze(&t, 32, Batch::RoundRobin);
    let brr = hottest_block(&rr, "work");
    assert_eq!(brr.thread_instructions, b.thread_instructions);
    assert_eq!(brr.warp_instructions, 3 * (56 + 64));
    // Every iteration starts in the same function: the function policy is consecutive batching here.
    let rf = analyze(&t, 32, Batch::Function);
    assert_eq!(rf.warp_instructions, r.warp_instructions);
}

#[test]
fn accelsim_traces_of_real_programs_pass_the_checker() {
    let Some(bin) = lockstep() else { return };
    let dir = tempfile::tempdir().unwrap();
    let omp = compile(dir.path(), "omp.c", &["-fopenmp"]);
    let lanes = compile(dir.path(), "lanes.c", &["-pthread"]);
    let traces = [
        trace(bin, dir.path(), "omp", &["--function", "main._omp_fn.0", "--per-iteration"], &omp, &["64"]),
        trace(bin, dir.path(), "lock1", &["--function", "worker_lock1"], &lanes, &["lock1", "40"]),
        // Whole threads (no --function): thread start-up and exit in libc, futex system calls.
        trace(bin, dir.path(), "mem", &[], &lanes, &["mem", "8"]),
    ];
    for (k, t) in traces.iter().enumerate() {
        let a = Analysis::new(t);
        let out_dir = dir.path().join(format!("accelsim-{k}"));
        let out = fuser::accelsim::write(&a, &out_dir, Batch::Consecutive).unwrap();
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        let s = common::accelsim_check::check_dir(&out_dir).unwrap_or_else(|e| panic!("trace {k}: {e}"));
        assert_eq!(s[0].warps, out.thread_blocks * 4);
        // Every lane-instruction of the replay is at least one lane-operation of the lowering.
        let r = a.run(&Config::default(), &|_| {}).unwrap();
        assert!(
            s[0].lane_instructions >= r.thread_instructions,
            "{} < {}",
            s[0].lane_instructions,
            r.thread_instructions
        );
        assert!(s[0].opcodes.contains("LDL") && s[0].opcodes.contains("STL"), "{:?}", s[0].opcodes);
    }
}

/// SPMD-style OpenMP (one OpenMP thread per CUDA thread, one parallel region per launch): warps are a launch's
/// team in thread-number order, never two launches of one OS thread.
#[test]
fn spmd_openmp_warps_are_teams_of_one_launch() {
    let Some(bin) = lockstep() else { return };
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "spmd.c", &["-fopenmp"]);
    let t = trace(bin, dir.path(), "spmd", &["--function", "step._omp_fn.0"], &exe, &["8"]);
    assert_eq!(t.simt.len(), 16);
    let r = analyze(&t, 8, Batch::Consecutive);
    // Launch 0: lane t runs work_a's loop t + 1 times (36 of 64 lane slots); launch 1 is uniform.
    let a = hottest_block(&r, "work_a");
    assert_eq!((a.thread_instructions, a.warp_instructions), (3 * 36, 3 * 8), "{a:?}");
    assert_eq!(function(&r, "work_b").simt_efficiency, Some(1.0));
    // Each warp's lanes are threads 0..7 of one launch: thread numbers follow OS-thread creation order.
    let launches = t.simt_launches();
    let order = t.simt_order();
    let ranks: std::collections::HashMap<u32, u32> = t.threads.iter().map(|th| (th.os, th.rank)).collect();
    for (w, warp) in order.chunks(8).enumerate() {
        assert!(warp.iter().all(|&s| launches[s as usize] == w as u32), "{launches:?}");
        let r: Vec<u32> = warp.iter().map(|&s| ranks[&t.simt[s as usize].start.os]).collect();
        assert_eq!(r, (0..8).collect::<Vec<u32>>());
    }
}

/// Lanes decoded by threads of their own (fewer warps than cores) replay exactly like lanes decoded in line.
#[test]
fn piped_lanes_replay_like_inline_ones() {
    let Some((_d, t)) = lanes_trace("trips") else { return };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let inline = one.install(|| analyze(&t, 32, Batch::Consecutive));
    let piped = two.install(|| analyze(&t, 32, Batch::Consecutive));
    assert_eq!(inline.warps, 1);
    let json = |r: &Report| serde_json::to_value(r).unwrap();
    assert_eq!(json(&inline), json(&piped));
}

/// A warp reports its thread instructions as it runs, and they add up to what it counted; the analysis's last
/// progress report has them all.
#[test]
fn progress_within_a_warp_adds_up() {
    let Some((_d, t)) = lanes_trace("trips") else { return };
    let a = Analysis::new(&t);
    let simts: Vec<u32> = (0..32).collect();
    let reports = std::sync::Mutex::new(Vec::new());
    let record = |n: u64| reports.lock().unwrap().push(n);
    let conf = fuser::ReplayConfig { warp_size: 32, transaction_bytes: 32, fast_paths: true };
    let stats =
        fuser::Warp::new(&a.prog, &a.dcfg, &a.classifier, conf, &simts, None).with_progress(&record, 100).run(0);
    let reports = reports.into_inner().unwrap();
    assert!(reports.len() > 3, "{reports:?}");
    assert_eq!(reports.iter().sum::<u64>(), stats.eff.thread_instructions);
    let last = std::sync::Mutex::new(None);
    let r = a.run(&Config::default(), &|p| *last.lock().unwrap() = Some(p)).unwrap();
    let last = last.into_inner().unwrap().expect("a progress report");
    assert_eq!((last.warps_done, last.warps), (1, 1));
    assert_eq!(last.thread_instructions, r.thread_instructions);
    assert_eq!(last.total_thread_instructions, r.thread_instructions);
}

/// The replay's fast path for a lone active lane counts exactly what the general step counts, whether its lanes
/// are decoded in line (one thread: a lone lane's blocks are counted as they are decoded) or piped.
#[test]
fn lone_lane_fast_path_replays_like_the_general_step() {
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let many = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    // Lanes running on alone after the others' loops ended (one of them with an instruction that loads twice,
    // one for long), and alone in critical sections.
    for mode in ["trips", "cmps", "lockloop", "mem", "straggler"] {
        let Some((_d, t)) = lanes_trace(mode) else { return };
        let a = Analysis::new(&t);
        let json = |r: &Report| serde_json::to_value(r).unwrap();
        for warp in [4, 32] {
            let general = a.run(&Config { warp_size: warp, fast_paths: false, ..Config::default() }, &|_| {}).unwrap();
            // One thread decodes every lane in line; four pipe the lanes of a warp of 32 (one warp).
            for (pool, threads) in [(&one, 1), (&many, 4)] {
                let fast = pool.install(|| a.run(&Config { warp_size: warp, ..Config::default() }, &|_| {}).unwrap());
                if mode == "trips" {
                    assert!(fast.simt_efficiency.unwrap() < 0.99, "{mode}: the program diverges");
                }
                assert_eq!(json(&fast), json(&general), "{mode}, warp {warp}, {threads} thread(s)");
            }
        }
    }
}
