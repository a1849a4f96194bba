//! End-to-end tests of `lockstep analyze`: text, JSON, sweeps, HTML, Accel-Sim output and errors, on a small
//! synthetic trace (no QEMU needed) and on a traced program of the project's own
//! (crates/fuser/tests/programs/lanes.c), which needs qemu-x86_64 with plugin support and gcc; without them that
//! test is skipped with a message, unless the environment variable CI is set, in which case it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use trace::{
    Block, EndRecord, Event, Flow, Header, Insn, MemOperand, MetaRecord, Module, ModuleKind, SimtEnd, SimtStart,
    Symbol, SymbolKind, ThreadInfo, TraceWriter,
};

fn insn(addr: u64, bytes: &[u8], flow: Flow, mnemonic: &str, mem: &[MemOperand]) -> Insn {
    Insn { addr, bytes: bytes.to_vec(), flow, atomic: false, mnemonic: mnemonic.into(), mem: mem.to_vec() }
}

/// `n` SIMT threads run `f`: a branch on their parity (odd ones run a longer side), a load from a heap array
/// (`4 × lane` apart), then a return.
fn synthetic(path: &Path, n: u32) {
    let header = Header { tracer: "test".into(), program: "/nonexistent/parity".into(), ..Header::default() };
    let mut w = TraceWriter::new(std::fs::File::create(path).unwrap(), &header).unwrap();
    w.meta(&MetaRecord::Module(Module {
        id: 0,
        path: "/nonexistent/parity".into(),
        start: 0x1000,
        end: 0x2000,
        bias: 0,
        kind: ModuleKind::Main,
    }));
    w.meta(&MetaRecord::Symbol(Symbol {
        id: 0,
        module: 0,
        addr: 0x1000,
        size: 0x100,
        kind: SymbolKind::Function,
        name: "parity_work".into(),
        mangled: String::new(),
    }));
    let load = MemOperand { size: 4, access: trace::Access::Read };
    let blocks = [
        vec![
            insn(0x1000, &[0x39, 0xc8], Flow::Next, "cmp", &[]),
            insn(0x1002, &[0x75, 0x00], Flow::CondBranch, "jne", &[]),
        ],
        vec![
            insn(0x1004, &[0x01, 0xc8], Flow::Next, "add", &[]),
            insn(0x1006, &[0x01, 0xc8], Flow::Next, "add", &[]),
            insn(0x1008, &[0x01, 0xc8], Flow::Next, "add", &[]),
            insn(0x100a, &[0xe9, 0, 0, 0, 0], Flow::Jump, "jmp", &[]),
        ],
        vec![insn(0x100f, &[0x90], Flow::Next, "nop", &[])],
        vec![insn(0x1010, &[0x8b, 0x07], Flow::Next, "mov", &[load]), insn(0x1012, &[0xc3], Flow::Return, "ret", &[])],
    ];
    let mut first = 0;
    for (id, insns) in blocks.iter().enumerate() {
        w.meta(&MetaRecord::Block(Block {
            id: id as u32,
            addr: insns[0].addr,
            first_insn: first,
            insns: insns.clone(),
        }));
        first += insns.len() as u32;
    }
    for k in 0..n {
        w.meta(&MetaRecord::Thread(ThreadInfo { os: k, tid: 100 + k, rank: k }));
        let (chunk_seq, offset) = w.position(k);
        w.meta(&MetaRecord::SimtStart(SimtStart {
            simt: k,
            os: k,
            index_in_os: 0,
            function: 0,
            iteration: u64::MAX,
            chunk_seq,
            offset,
        }));
        let side = if k % 2 == 1 { 1 } else { 2 };
        for e in [
            Event::SegmentStart { simt: k },
            Event::Block { tb: 0 },
            Event::Block { tb: side },
            Event::Block { tb: 3 },
            Event::Mem { insn: 0, store: false, size_log2: 2, addr: 0x5000_0000 + 4 * u64::from(k) },
            Event::SegmentEnd,
        ] {
            w.event(k, &e).unwrap();
        }
        let insns = 2 + if side == 1 { 4 } else { 1 } + 2;
        w.add_insns(insns);
        w.meta(&MetaRecord::SimtEnd(SimtEnd { simt: k, insns }));
    }
    w.finish(EndRecord { reason: "exit".into(), exit_code: Some(0), recovered: false, insns: 0 }).unwrap();
}

fn analyze(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep")).arg("analyze").args(args).output().expect("lockstep runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("parity.trace");
    synthetic(&p, 64);
    (dir, p)
}

#[test]
fn text_report() {
    let (_d, p) = fixture();
    let o = analyze(&[p.to_str().unwrap(), "--warp", "32", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // Per warp: cmp+jne (2) and ret block (2) with 32 lanes, 4 odd-side with 16, 1 even-side with 16.
    let (thread, warp) = (64 * 4 + 32 * 4 + 32, 2 * (2 + 4 + 1 + 2));
    assert!(text.contains(&format!("thread insns     {thread}")), "{text}");
    assert!(text.contains(&format!("warp insns       {warp}")), "{text}");
    let eff = 100.0 * thread as f64 / (warp as f64 * 32.0);
    assert!(text.contains(&format!("SIMT efficiency  {eff:.1}%")), "{text}");
    assert!(text.contains("parity_work"), "{text}");
    assert!(text.contains("heap"), "{text}");
}

#[test]
fn json_report_and_sweep() {
    let (_d, p) = fixture();
    let o = analyze(&[p.to_str().unwrap(), "--json", "--warp", "16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["warp_size"], 16);
    assert_eq!(v["simt_threads"], 64);
    assert_eq!(v["warps"], 4);
    assert_eq!(v["thread_instructions"], 64 * 4 + 32 * 4 + 32);
    assert_eq!(v["functions"][0]["name"], "parity_work");
    for k in ["thread_instructions", "warp_instructions", "simt_efficiency"] {
        assert!(v["functions"][0][k].is_number(), "{k}");
    }
    // 16 lanes reading consecutive ints: 64 bytes, 2 sectors per warp access.
    assert_eq!(v["memory"]["heap"]["warp_accesses"], 4);
    assert_eq!(v["memory"]["heap"]["transactions"], 8);
    assert!(v["memory"]["stack"]["warp_accesses"].is_u64());
    assert!(v["memory"]["static"]["transactions"].is_u64());
    assert!(v["locks"].is_array());

    let o = analyze(&[p.to_str().unwrap(), "--json", "--sweep", "4,8,16,32", "-q", "--batch", "round-robin"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 4);
    let sizes: Vec<u64> = a.iter().map(|r| r["warp_size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, vec![4, 8, 16, 32]);
    assert!(a.iter().all(|r| r["batch"] == "round-robin"));
    // Every warp of at least 2 lanes has odd and even lanes: the same efficiency at every size.
    let e: Vec<f64> = a.iter().map(|r| r["simt_efficiency"].as_f64().unwrap()).collect();
    assert!(e.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-12), "{e:?}");
}

#[test]
fn html_and_accelsim_files() {
    let (d, p) = fixture();
    let html = d.path().join("report.html");
    let sim = d.path().join("sim");
    let o = analyze(&[p.to_str().unwrap(), "--html", html.to_str().unwrap(), "--accelsim", sim.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert_eq!(page.matches("<svg").count(), 3, "efficiency, sweep and memory charts");
    assert!(page.contains("parity_work"));
    assert!(!page.contains("<script") && !page.contains("src=") && !page.contains("href="), "self-contained");
    assert!(stderr(&o).contains("wrote"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(sim.join("kernelslist.g")).unwrap(), "kernel-1.traceg\n");
    let k = std::fs::read_to_string(sim.join("kernel-1.traceg")).unwrap();
    assert!(k.starts_with("-kernel name = lockstep_parity\n"), "{}", &k[..200]);
    assert!(k.contains("\n-grid dim = (1,1,1)\n-block dim = (128,1,1)\n"));
    assert_eq!(k.matches("#BEGIN_TB").count(), 1);
    assert!(k.contains(" LDG.E "));
}

#[test]
fn usage_errors() {
    let (_d, p) = fixture();
    let o = analyze(&[p.to_str().unwrap(), "--warp", "12"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a power of two from 4 to 64"), "{}", stderr(&o));
    let o = analyze(&[p.to_str().unwrap(), "--sweep", "8,128"]);
    assert_eq!(o.status.code(), Some(2));
    let o = analyze(&[p.to_str().unwrap(), "--batch", "random"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("round-robin"), "{}", stderr(&o));
    let o = analyze(&[p.to_str().unwrap(), "--transaction", "24"]);
    assert_eq!(o.status.code(), Some(2));
    let o = analyze(&["/nonexistent/x.trace"]);
    assert_eq!(o.status.code(), Some(1));
    let o = analyze(&[p.to_str().unwrap(), "--warp", "8", "--sweep", "8,16"]);
    assert_eq!(o.status.code(), Some(2), "--warp and --sweep conflict");
}

/// Whether qemu-x86_64 (with plugins) and gcc are here; panics under CI when they are not. Builds the tracer
/// plugin next to the binary under test.
fn ready() -> bool {
    let check = || -> Result<(), String> {
        let qemu = Command::new("qemu-x86_64").arg("-h").output().map_err(|e| format!("qemu-x86_64: {e}"))?;
        if !String::from_utf8_lossy(&qemu.stdout).contains("-plugin") {
            return Err("qemu-x86_64 has no plugin support".into());
        }
        Command::new("gcc").arg("--version").output().map_err(|e| format!("gcc: {e}"))?;
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
        Ok(())
    };
    match check() {
        Ok(()) => true,
        Err(e) if std::env::var_os("CI").is_some() => panic!("analyze tests cannot run under CI: {e}"),
        Err(e) => {
            eprintln!(
                "\n*** SKIPPING lockstep analyze test: {e} (install with: apt-get install -y qemu-user gcc) ***\n"
            );
            false
        }
    }
}

#[test]
fn traced_program_sweep_falls_with_warp_size() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuser/tests/programs/lanes.c");
    let exe = dir.path().join("lanes");
    let cc = Command::new("gcc").args(["-O2", "-pthread", "-Wl,-z,now", "-o"]).arg(&exe).arg(&src).output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let t = dir.path().join("trips.trace");
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["trace", "-q", "-o"])
        .arg(&t)
        .args(["--function", "worker_trips", "--"])
        .arg(&exe)
        .args(["trips", "64"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = analyze(&[t.to_str().unwrap(), "--sweep", "8,16,32", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("warp-size sweep:"), "{text}");
    let o = analyze(&[t.to_str().unwrap(), "--sweep", "8,16,32", "--json", "-q"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e: Vec<f64> = v.as_array().unwrap().iter().map(|r| r["simt_efficiency"].as_f64().unwrap()).collect();
    assert!(e[0] > e[1] && e[1] > e[2], "{e:?}");
}
