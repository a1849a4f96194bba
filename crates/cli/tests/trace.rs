//! End-to-end tests of `lockstep trace`: C and C++ programs of the project's own (crates/tracer/tests/programs)
//! are compiled with gcc/g++, traced under qemu-x86_64 with the tracer plugin, and the traces are checked.
//!
//! Independent counts: `work(n)` (programs/work.h) is written in assembly and executes exactly 3n + 2
//! instructions; the programs print the addresses of their locks. The tests need qemu-x86_64 with plugin
//! support (Debian: apt-get install qemu-user) and gcc/g++; without them they are skipped with a message,
//! unless the environment variable CI is set, in which case they fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use trace::{Event, LockKind, SkipKind, Status, Trace};

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tracer/tests/programs")
}

/// Whether the tools are here; panics under CI when they are not.
fn ready() -> bool {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let r = READY.get_or_init(|| {
        let qemu = Command::new("qemu-x86_64").arg("-h").output().map_err(|e| format!("qemu-x86_64: {e}"))?;
        if !String::from_utf8_lossy(&qemu.stdout).contains("-plugin") {
            return Err("qemu-x86_64 has no plugin support".into());
        }
        for cc in ["gcc", "g++"] {
            Command::new(cc).arg("--version").output().map_err(|e| format!("{cc}: {e}"))?;
        }
        build_plugin()
    });
    match r {
        Ok(()) => true,
        Err(e) if std::env::var_os("CI").is_some() => panic!("tracing tests cannot run under CI: {e}"),
        Err(e) => {
            eprintln!(
                "\n*** SKIPPING lockstep trace test: {e} (install with: apt-get install -y qemu-user gcc g++) ***\n"
            );
            false
        }
    }
}

/// Builds the plugin next to the lockstep binary under test (cargo does not build a cdylib for a test of
/// another package).
fn build_plugin() -> Result<(), String> {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_lockstep"));
    let profile_dir = exe.parent().ok_or("no target dir")?;
    let target_dir = profile_dir.parent().ok_or("no target dir")?;
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "-q", "-p", "tracer", "--lib", "--target-dir"]).arg(target_dir);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let out = cmd.current_dir(env!("CARGO_MANIFEST_DIR")).output().map_err(|e| format!("cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building the tracer plugin failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    if !profile_dir.join("libtracer.so").is_file() {
        return Err(format!("no libtracer.so in {}", profile_dir.display()));
    }
    Ok(())
}

/// Compiles a test program into `dir`.
fn compile(dir: &Path, src: &str, extra: &[&str]) -> PathBuf {
    let name = src.split('.').next().unwrap();
    let exe = dir.join(name);
    let cc = if src.ends_with(".cpp") { "g++" } else { "gcc" };
    let out = Command::new(cc)
        .args(["-O2", "-g0", "-o"])
        .arg(&exe)
        .arg(programs().join(src))
        .args(extra)
        .output()
        .expect("compiler runs");
    assert!(out.status.success(), "{cc} {src}: {}", String::from_utf8_lossy(&out.stderr));
    exe
}

fn lockstep(args: &[&str], program: &Path, prog_args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("trace")
        .args(args)
        .arg("--")
        .arg(program)
        .args(prog_args)
        .stdin(Stdio::null())
        .output()
        .expect("lockstep runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `name ADDR` lines printed by a program.
fn printed_addr(out: &str, name: &str) -> u64 {
    let line =
        out.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no `{name}` in {out}"));
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// Per SIMT thread: instructions executed in blocks of the function named `func` (callees excluded).
fn insns_in(t: &Trace, func: &str) -> Vec<u64> {
    let index = t.symbol_index();
    let in_func: Vec<bool> =
        t.blocks.iter().map(|b| index.lookup(b.addr).is_some_and(|s| t.symbols[s as usize].name == func)).collect();
    (0..t.simt.len() as u32)
        .map(|s| {
            let mut n = 0;
            for e in t.simt_events(s).unwrap() {
                match e.unwrap() {
                    Event::Block { tb } if in_func[tb as usize] => n += t.blocks[tb as usize].insns.len() as u64,
                    Event::PartialBlock { tb, from } if in_func[tb as usize] => {
                        n += (t.blocks[tb as usize].insns.len() - from as usize) as u64
                    }
                    _ => {}
                }
            }
            n
        })
        .collect()
}

/// Lock events: (kind, address) → (acquires, releases).
fn locks(t: &Trace) -> BTreeMap<(LockKind, u64), (u64, u64)> {
    let mut m = BTreeMap::new();
    for os in t.os_streams().collect::<Vec<_>>() {
        for e in t.os_events(os) {
            if let Event::Lock { kind, release, addr } = e.unwrap() {
                let c: &mut (u64, u64) = m.entry((kind, addr)).or_default();
                if release {
                    c.1 += 1
                } else {
                    c.0 += 1
                }
            }
        }
    }
    m
}

/// Symbol ids that were called (or tail-called), with counts.
fn callees(t: &Trace) -> BTreeMap<u32, u64> {
    let mut m = BTreeMap::new();
    for os in t.os_streams().collect::<Vec<_>>() {
        for e in t.os_events(os) {
            if let Event::Call { callee } | Event::TailCall { callee } = e.unwrap() {
                *m.entry(callee).or_default() += 1;
            }
        }
    }
    m
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v
}

#[test]
fn pthreads_pool_threads_work_and_locks() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "pool.c", &["-pthread"]);
    let out_file = dir.path().join("pool.trace");
    let o = lockstep(&["-q", "-o", out_file.to_str().unwrap()], &exe, &["4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = Trace::open(&out_file).unwrap();
    assert_eq!(t.status, Status::Complete);
    assert_eq!(t.end.as_ref().unwrap().exit_code, Some(0));
    assert_eq!(t.threads.len(), 5);
    assert_eq!(t.simt.len(), 5);
    let mut ranks: Vec<u32> = t.threads.iter().map(|th| th.rank).collect();
    ranks.sort_unstable();
    assert_eq!(ranks, vec![0, 1, 2, 3, 4]);
    // The main thread (rank 0) does not run work; worker i runs work(1000 (i + 1)) = 3000 (i + 1) + 2.
    let work = insns_in(&t, "work");
    let order = t.simt_order();
    assert_eq!(work[order[0] as usize], 0);
    assert_eq!(sorted(work), vec![0, 3002, 6002, 9002, 12002]);
    // Locks at the addresses the program printed.
    let out = stdout(&o);
    let (mutex, spin) = (printed_addr(&out, "mutex"), printed_addr(&out, "spin"));
    let l = locks(&t);
    assert_eq!(l.get(&(LockKind::Mutex, mutex)), Some(&(200, 200)), "{l:x?}");
    assert_eq!(l.get(&(LockKind::Spin, spin)), Some(&(4, 4)), "{l:x?}");
    // pthread_create comes from libc, by its dynamic symbol.
    let called = callees(&t);
    let named = |n: &str| t.symbols.iter().filter(|s| s.name == n).any(|s| called.contains_key(&s.id));
    assert!(named("pthread_create"));
    assert!(named("pthread_mutex_lock"));
    let libc = t.symbols.iter().find(|s| s.name == "pthread_create").unwrap().module;
    assert!(t.modules[libc as usize].path.contains("libc.so"));
}

#[test]
fn function_mode_and_exclude() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "pool.c", &["-pthread"]);
    let f = dir.path().join("f.trace");
    let o = lockstep(&["-q", "-o", f.to_str().unwrap(), "--function", "worker"], &exe, &["4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = Trace::open(&f).unwrap();
    assert_eq!(t.threads.len(), 5);
    assert_eq!(t.simt.len(), 4, "one SIMT thread per invocation of worker");
    let worker = t.symbols.iter().find(|s| s.name == "worker").unwrap().id;
    for s in &t.simt {
        assert_eq!(s.start.function, worker);
        assert_eq!(s.start.index_in_os, 0);
        assert!(s.end.is_some());
    }
    let ranks: Vec<u32> = t
        .simt_order()
        .iter()
        .map(|&s| t.threads.iter().find(|th| th.os == t.simt[s as usize].start.os).unwrap().rank)
        .collect();
    assert_eq!(ranks, vec![1, 2, 3, 4], "numbered by OS-thread creation order");
    assert_eq!(sorted(insns_in(&t, "work")), vec![3002, 6002, 9002, 12002]);
    let s = trace::summarize(&t, 5);
    assert!(s.outside_insns > 0, "main's instructions are outside SIMT threads");

    // --exclude work: its instructions become a skipped region of exactly their count.
    let x = dir.path().join("x.trace");
    let o = lockstep(&["-q", "-o", x.to_str().unwrap(), "--function", "worker", "--exclude", "work"], &exe, &["4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = Trace::open(&x).unwrap();
    assert_eq!(insns_in(&t, "work"), vec![0; 4]);
    let mut skipped = Vec::new();
    for s in 0..t.simt.len() as u32 {
        for e in t.simt_events(s).unwrap() {
            if let Event::Skip { kind: SkipKind::Excluded, insns, .. } = e.unwrap() {
                skipped.push(insns);
            }
        }
    }
    assert_eq!(sorted(skipped), vec![3002, 6002, 9002, 12002]);
}

#[test]
fn openmp_per_iteration_and_critical() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "omp_for.c", &["-fopenmp"]);
    let f = dir.path().join("omp.trace");
    let o =
        lockstep(&["-q", "-o", f.to_str().unwrap(), "--function", "main._omp_fn.0", "--per-iteration"], &exe, &["64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("sum 45760"));
    let t = Trace::open(&f).unwrap();
    assert_eq!(t.threads.len(), 4, "omp_set_num_threads(4)");
    assert_eq!(t.simt.len(), 64, "one SIMT thread per iteration");
    assert_eq!(t.loops.len(), 1);
    // Iteration i runs work(i + 1): 3 (i + 1) + 2 instructions.
    let want: Vec<u64> = (0..64).map(|i| 3 * (i + 1) + 2).collect();
    assert_eq!(sorted(insns_in(&t, "work")), want);
    // Within each OS thread, iterations are numbered 0, 1, 2, ... in start order.
    let mut per_os: BTreeMap<u32, Vec<(u32, u64)>> = BTreeMap::new();
    for s in &t.simt {
        per_os.entry(s.start.os).or_default().push((s.start.index_in_os, s.start.iteration));
    }
    for v in per_os.values() {
        for (k, &(idx, it)) in v.iter().enumerate() {
            assert_eq!((idx as usize, it as usize), (k, k));
        }
    }
    // One critical section per iteration, all on the same lock.
    let l = locks(&t);
    assert_eq!(l.len(), 1, "{l:x?}");
    let (&(kind, _), &counts) = l.iter().next().unwrap();
    assert_eq!(kind, LockKind::OmpCritical);
    assert_eq!(counts, (64, 64));

    // Without --per-iteration: one SIMT thread per invocation of the outlined body (one per OpenMP thread).
    let g = dir.path().join("omp2.trace");
    let o = lockstep(&["-q", "-o", g.to_str().unwrap(), "--function", "main._omp_fn.0"], &exe, &["64"]);
    assert_eq!(o.status.code(), Some(0));
    let t = Trace::open(&g).unwrap();
    assert_eq!(t.simt.len(), 4);
    assert_eq!(insns_in(&t, "work").iter().sum::<u64>(), want.iter().sum::<u64>());
}

#[test]
fn cxx_std_thread_and_mutex() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "cxx_mutex.cpp", &["-pthread"]);
    let f = dir.path().join("cxx.trace");
    let o = lockstep(&["-q", "-o", f.to_str().unwrap()], &exe, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = Trace::open(&f).unwrap();
    assert_eq!(t.threads.len(), 5);
    let m = printed_addr(&stdout(&o), "mutex");
    assert_eq!(locks(&t).get(&(LockKind::Mutex, m)), Some(&(400, 400)));
    assert_eq!(sorted(insns_in(&t, "work")), vec![0, 1502, 1502, 1502, 1502]);
    // std::thread's start routine comes from libstdc++, demangled.
    let called = callees(&t);
    let start = t
        .symbols
        .iter()
        .find(|s| s.name.starts_with("std::thread::_M_start_thread(") && called.contains_key(&s.id))
        .expect("std::thread::_M_start_thread called");
    assert!(t.modules[start.module as usize].path.contains("libstdc++"));
    assert!(t.symbols.iter().any(|s| s.name == "body(int)"), "C++ names of the program are demangled");
}

#[test]
fn libc_and_libstdcxx_function_names() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "libheavy.cpp", &[]);
    let f = dir.path().join("lh.trace");
    let o = lockstep(&["-q", "-o", f.to_str().unwrap()], &exe, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("same"));
    let t = Trace::open(&f).unwrap();
    let called = callees(&t);
    let calls_of = |pred: &dyn Fn(&trace::Symbol) -> bool| -> u64 {
        t.symbols.iter().filter(|s| pred(s)).filter_map(|s| called.get(&s.id)).sum()
    };
    let in_module = |s: &trace::Symbol, m: &str| t.modules[s.module as usize].path.contains(m);
    assert!(calls_of(&|s| s.name == "qsort" && in_module(s, "libc.so")) >= 1);
    assert!(calls_of(&|s| s.name == "qsort@plt") >= 1, "PLT stubs are named");
    assert!(calls_of(&|s| s.name.contains("basic_string") && in_module(s, "libstdc++")) >= 100);
    assert!(calls_of(&|s| s.name == "cmp(void const*, void const*)") > 1000, "qsort's comparator calls");
    assert!(calls_of(&|s| s.name == "malloc" && in_module(s, "libc.so")) > 0);
    let s = trace::summarize(&t, 10);
    assert_eq!(s.os_threads, 1);
    assert!(s.bytes_per_insn < 2.0, "{} bytes per instruction", s.bytes_per_insn);
}

#[test]
fn segfault_leaves_the_trace_up_to_the_crash() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "segv.c", &[]);
    let f = dir.path().join("segv.trace");
    let o = lockstep(&["-q", "-o", f.to_str().unwrap()], &exe, &[]);
    assert_eq!(o.status.code(), Some(128 + 11));
    assert!(stderr(&o).contains("killed by SIGSEGV; the trace holds everything up to that point"), "{}", stderr(&o));
    assert!(stdout(&o).contains("before 12502500"));
    let t = Trace::open(&f).unwrap();
    assert_eq!(t.status, Status::Complete);
    let end = t.end.as_ref().unwrap();
    assert_eq!(end.reason, "signal 11");
    assert!(end.recovered);
    // work(5000) ran just before the crash: its events were still buffered and were recovered.
    assert_eq!(insns_in(&t, "work"), vec![15002]);
    assert!(!f.with_extension("trace.partial").exists());
}

#[test]
fn sigkill_leaves_a_readable_prefix() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "spin.c", &[]);
    let f = dir.path().join("spin.trace");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["trace", "-q", "-o", f.to_str().unwrap(), "--"])
        .arg(&exe)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The program prints its pid (QEMU's: the guest runs in QEMU's process).
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let pid: i32 = line.trim().parse().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let status = Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(128 + 9));
    assert!(stderr(&o).contains("killed by SIGKILL"), "{}", stderr(&o));
    let t = Trace::open(&f).unwrap();
    assert_eq!(t.end.as_ref().unwrap().reason, "signal 9");
    let work = insns_in(&t, "work");
    assert!(work[0] > 3002, "the loop ran and is in the trace: {work:?}");
    let s = trace::summarize(&t, 3);
    assert!(s.stream_errors.is_empty(), "{:?}", s.stream_errors);
}

#[test]
fn stdio_and_exit_code_pass_through() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("echo.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <ctype.h>\nint main(void){int c; while((c=getchar())!=EOF) putchar(toupper(c)); \
         fputs(\"to stderr\\n\", stderr); return 7;}\n",
    )
    .unwrap();
    let exe = dir.path().join("echo");
    assert!(Command::new("gcc").arg("-o").arg(&exe).arg(&src).status().unwrap().success());
    let f = dir.path().join("echo.trace");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["trace", "-q", "-o", f.to_str().unwrap(), "--"])
        .arg(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"hello, world\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(7));
    assert_eq!(stdout(&o), "HELLO, WORLD\n");
    assert!(stderr(&o).contains("to stderr"));
    // `trace info` summarises it, as text and as JSON.
    let info = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(["trace", "info"]).arg(&f).output().unwrap();
    assert!(info.status.success());
    let text = stdout(&info);
    assert!(text.contains("complete") && text.contains("exited with status 7"), "{text}");
    let json = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(["trace", "info", "--json"]).arg(&f).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["os_threads"], 1);
    assert_eq!(v["exit_code"], 7);
    assert_eq!(v["status"]["status"], "complete");
    assert!(v["insns"].as_u64().unwrap() > 1000);
}

#[test]
fn missing_qemu_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["trace", "-o"])
        .arg(dir.path().join("t.trace"))
        .args(["--", "/bin/true"])
        .env("LOCKSTEP_QEMU", dir.path().join("no-such-qemu"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("apt-get install qemu-user"), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["trace", "--", "/bin/true"])
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert!(stderr(&o).contains("qemu-x86_64 was not found on PATH"), "{}", stderr(&o));
}

#[test]
fn info_rejects_non_traces_and_reports_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.trace");
    std::fs::write(&bad, b"definitely not a trace").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(["trace", "info"]).arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a lockstep trace"), "{}", stderr(&o));
    if !ready() {
        return;
    }
    let exe = compile(dir.path(), "pool.c", &["-pthread"]);
    let f = dir.path().join("p.trace");
    assert_eq!(lockstep(&["-q", "-o", f.to_str().unwrap()], &exe, &["2"]).status.code(), Some(0));
    let bytes = std::fs::read(&f).unwrap();
    let cut = dir.path().join("cut.trace");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(["trace", "info"]).arg(&cut).output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("PREFIX ONLY"), "{}", stdout(&o));
}

/// Every lock kind, one lock per worker call and one shared: the recorded address is the program's own
/// `&lock` (never a stack slot or a field inside the lock), with glibc on its single-threaded paths (plain
/// stores) and its multi-threaded ones (atomics), lazily bound and `-z now`, at -O0 and -O2.
#[test]
fn lock_addresses_are_the_programs_own() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let n = 64u64;
    for (k, (opt, threads, link)) in
        [("-O2", "0", ""), ("-O0", "0", ""), ("-O2", "4", ""), ("-O1", "3", "-Wl,-z,now")].into_iter().enumerate()
    {
        let sub = dir.path().join(k.to_string());
        std::fs::create_dir(&sub).unwrap();
        let mut flags = vec!["-fopenmp", "-pthread", opt];
        if !link.is_empty() {
            flags.push(link);
        }
        let exe = compile(&sub, "locks.c", &flags);
        let f = sub.join("locks.trace");
        let o = lockstep(&["-q", "-o", f.to_str().unwrap(), "--function", "worker"], &exe, &["64", threads]);
        let what = format!("{opt} {link}, {threads} threads");
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        let out = stdout(&o);
        let array = |name: &str| {
            let line = out.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap();
            let stride: u64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
            (printed_addr(&out, name), stride)
        };
        let mut want = BTreeMap::new();
        for (kind, name) in [
            (LockKind::Mutex, "mutex"),
            (LockKind::Spin, "spin"),
            (LockKind::RwLock, "rwlock"),
            (LockKind::OmpLock, "omplock"),
            (LockKind::OmpLock, "nestlock"),
        ] {
            let (base, stride) = array(name);
            for i in 0..n {
                want.insert((kind, base + i * stride), (1, 1));
            }
            if name != "nestlock" {
                want.insert((kind, printed_addr(&out, &format!("{name}_shared"))), (n, n));
            }
        }
        let mut got = locks(&Trace::open(&f).unwrap());
        // The named critical section's lock is libgomp's variable `.gomp_critical_user_named`.
        let critical: Vec<_> = got.keys().filter(|(kind, _)| *kind == LockKind::OmpCritical).copied().collect();
        assert_eq!(critical.len(), 1, "{what}: one critical section lock: {got:x?}");
        assert_eq!(got.remove(&critical[0]), Some((n, n)), "{what}");
        assert_eq!(got, want, "{what}");
    }
}

/// `--per-iteration` counts every iteration of an OpenMP collapse(2) loop: gcc peels the first one off the
/// loop at -O1 and above, and at -O0 the header block runs the body before its exit test (both once lost one
/// iteration per OS thread: 15,875 of 126 x 126).
#[test]
fn per_iteration_counts_peeled_and_bottom_tested_iterations() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for opt in ["-O0", "-O1", "-O2", "-O3"] {
        let sub = dir.path().join(opt);
        std::fs::create_dir(&sub).unwrap();
        let exe = compile(&sub, "collapse.c", &["-fopenmp", opt]);
        for threads in ["1", "3"] {
            let f = sub.join(format!("c{threads}.trace"));
            let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
                .args(["trace", "-q", "-o", f.to_str().unwrap(), "--function", "main._omp_fn.0", "--per-iteration"])
                .arg("--")
                .arg(&exe)
                .env("OMP_NUM_THREADS", threads)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let t = Trace::open(&f).unwrap();
            assert_eq!(t.simt.len(), 126 * 126, "{opt}, {threads} threads");
        }
    }
}

/// `--per-iteration` follows every top-level loop of the function: gcc -O3 versions a loop whose stride is
/// known only at run time (the vectorized unit-stride copy, the scalar copy that runs here) and adds
/// remainder loops; with only the largest loop followed, a stride of 4 gave no SIMT thread at all.
#[test]
fn per_iteration_follows_loop_versions() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "strided.c", &["-fopenmp", "-O3"]);
    for (stride, want) in [("4", 1000), ("1", 1000)] {
        let f = dir.path().join(format!("s{stride}.trace"));
        let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(["trace", "-q", "-o", f.to_str().unwrap(), "--function", "step._omp_fn.0", "--per-iteration"])
            .arg("--")
            .arg(&exe)
            .args(["1000", stride])
            .env("OMP_NUM_THREADS", "1")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let t = Trace::open(&f).unwrap();
        if stride == "1" {
            // The vectorized loop's iterations do four (or eight) of the source's: fewer SIMT threads, but some.
            assert!(!t.simt.is_empty() && t.simt.len() < want, "stride 1: {}", t.simt.len());
        } else {
            assert_eq!(t.simt.len(), want, "stride {stride}");
        }
    }
}
