//! End-to-end tests of `lockstep exec`: every CUDA program of `corpus/apps` (built by nvcc 13 with `-cudart
//! shared`, committed as binaries) runs on lockstep's `libcudart.so.13` on both engines and on the checked
//! JIT; its standard output must equal the committed expected output byte for byte, and its exit status the
//! manifest's (`corpus/apps/tests.tsv`). Each program checks its own results against a CPU computation.
//! Also: the report, `--list-unsupported`, a SASS-only program and a corrupted fatbinary.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn apps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/apps")
}

/// The CUDA libraries, built for the binary under test.
fn runtime_built() {
    common::cuda_libraries_built();
}

fn exec(options: &[&str], program: &Path, args: &[&str]) -> Output {
    runtime_built();
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("exec")
        .args(options)
        .arg("--")
        .arg(program)
        .args(args)
        .env("LOCKSTEP_JIT_CACHE", "off")
        .stdin(Stdio::null())
        .output()
        .expect("lockstep runs")
}

/// One line of the manifest.
struct Case {
    program: String,
    args: Vec<String>,
    expected: Option<String>,
    /// `None`: any non-zero status (a refused program).
    status: Option<i32>,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(apps().join("tests.tsv")).expect("the manifest");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "manifest line `{l}`");
            Case {
                program: f[0].to_string(),
                args: if f[1] == "-" { Vec::new() } else { f[1].split(' ').map(str::to_string).collect() },
                expected: (f[2] != "-").then(|| f[2].to_string()),
                status: if f[3] == "refused" { None } else { Some(f[3].parse().expect("a status")) },
            }
        })
        .collect()
}

/// Runs every program of the corpus with `options`; every mismatch is reported at once.
fn corpus_runs_with(options: &[&str]) {
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 25, "the manifest lists the corpus");
    for c in &all {
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let out = exec(&[options, &["--quiet"]].concat(), &apps().join("bin").join(&c.program), &args);
        let status = out.status.code();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let what = format!("{} {} ({})", c.program, c.args.join(" "), options.join(" "));
        match c.status {
            Some(want) if status != Some(want) => {
                failures.push(format!("{what}: exit status {status:?}, expected {want}\n{stdout}\n{stderr}"))
            }
            None if status == Some(0) => failures.push(format!("{what}: ran, but should be refused\n{stderr}")),
            _ => {}
        }
        if let Some(exp) = &c.expected {
            let want = std::fs::read_to_string(apps().join("expected").join(exp)).expect("expected output");
            if stdout != want {
                failures
                    .push(format!("{what}: stdout differs\n--- got ---\n{stdout}--- expected ---\n{want}\n{stderr}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} runs failed:\n\n{}", failures.len(), all.len(), failures.join("\n\n"));
}

#[test]
fn corpus_programs_run_on_the_jit() {
    corpus_runs_with(&["--backend", "jit"]);
}

#[test]
fn corpus_programs_run_on_the_emulator() {
    corpus_runs_with(&["--backend", "emu"]);
}

#[test]
fn corpus_programs_run_on_the_checked_jit() {
    corpus_runs_with(&["--backend", "jit", "--check"]);
}

#[test]
fn the_report_has_each_kernel_with_statistics_on_the_emulator() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("bfs.json");
    let out = exec(&["--backend", "emu", "--report", report.to_str().unwrap()], &apps().join("bin/bfs"), &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(summary.contains("SIMT eff."), "the summary shows the emulator's statistics:\n{summary}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["backend"], "emu");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["processes"], 1);
    let kernels = v["kernels"].as_array().unwrap();
    assert!(kernels.len() >= 2, "bfs has several kernels: {kernels:?}");
    for k in kernels {
        let launches = k["launches"].as_u64().unwrap();
        assert!(launches >= 1);
        let stats = &k["stats"];
        assert!(stats["thread_instructions"].as_u64().unwrap() > 0, "{k}");
        let eff = stats["simt_efficiency"].as_f64().unwrap();
        assert!(eff > 0.0 && eff <= 1.0, "{k}");
    }
    // The frontier kernel runs once per BFS level: the host loop's launches are all counted.
    assert!(kernels.iter().any(|k| k["launches"].as_u64().unwrap() > 3), "{kernels:?}");
    // The transit model reads the report.
    let t = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["transit", "--machine", "c2075-sp", "--json", "--kernel-stats"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
}

#[test]
fn the_jit_reports_times_but_no_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("va.json");
    let out = exec(&["--report", report.to_str().unwrap()], &apps().join("bin/vector_add"), &[]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["backend"], "jit");
    let k = &v["kernels"][0];
    assert_eq!(k["launches"], 1);
    assert!(k["stats"].is_null());
    assert_eq!(k["demangled"], "vadd(float const*, float const*, float*, int)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("vadd(float const*, float const*, float*, int)"), "{stderr}");
    assert!(stderr.contains("lockstep JIT on"), "the device is named: {stderr}");
}

#[test]
fn a_sass_only_program_is_refused_with_the_flag_that_adds_ptx() {
    let out = exec(&[], &apps().join("bin/vector_add_sass_only"), &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("vector_add_sass_only carries no PTX"), "{stderr}");
    assert!(stderr.contains("-gencode arch=compute_80,code=[sm_80,compute_80]"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cudaErrorNoKernelImageForDevice"), "the program sees the CUDA error: {stdout}");
}

#[test]
fn a_corrupted_fatbinary_is_an_error_naming_the_program() {
    let bytes = std::fs::read(apps().join("bin/vector_add")).unwrap();
    // The registered container: the last `.nv_fatbin` container magic in the file (an unregistered,
    // device-link one comes first). Its entries' payload sizes start 16 + 8 bytes in.
    let magic = 0xBA55_ED50u32.to_le_bytes();
    let at = bytes.windows(4).rposition(|w| w == magic).expect("a fatbinary container");
    let dir = tempfile::tempdir().unwrap();
    for (name, offset, value) in [("size", at + 24, 0xFFFF_FFF0u32), ("header", at + 20, 0xFFFF_FFFFu32)] {
        let mut broken = bytes.clone();
        broken[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        let path = dir.path().join(format!("vector_add_{name}"));
        std::fs::write(&path, &broken).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let out = exec(&[], &path, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: the program cannot run its kernel");
        assert!(out.status.code().is_some(), "{name}: no crash, an exit status: {stderr}");
        assert!(stderr.contains(&format!("vector_add_{name}")) && stderr.contains("corrupted"), "{name}: {stderr}");
    }
}

#[test]
fn list_unsupported_inspects_without_running() {
    runtime_built();
    let run = |p: &str, json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstep"));
        cmd.args(["exec", "--list-unsupported"]).arg(apps().join("bin").join(p));
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = run("thrust", false);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("lockstep implements every one of them"), "{text}");
    let out = run("vector_add_sass_only", true);
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runtime"], "shared");
    assert_eq!(v["runs"], false);
    let out = run("multi_arch", true);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ptx: Vec<&str> = v["fatbinaries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["ptx"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()))
        .collect();
    assert!(ptx.contains(&"compute_80") && ptx.contains(&"compute_90"), "{v}");
}

/// Every function NVIDIA's `libcudart.so.13` exports is exported (implemented, or a stub that says it is
/// not supported): a program never dies of a missing symbol.
#[test]
fn the_runtime_exports_every_cuda_13_function() {
    use object::{Object, ObjectSymbol};
    runtime_built();
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_lockstep")).parent().unwrap().join("libcudart.so");
    let bytes = std::fs::read(&lib).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let exported: std::collections::HashSet<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    let list =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cudart/cuda13-exports.txt")).unwrap();
    let names: Vec<&str> = list.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert!(names.len() > 400);
    let missing: Vec<&&str> = names.iter().filter(|n| !exported.contains(**n)).collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    // The driver API (`libcuda.so.1`, linked into the same library): every function of CUDA 13.5's cuda.h.
    let driver: std::collections::HashSet<&str> = cudadrv::symbols::EXPORTS.iter().copied().collect();
    let missing: Vec<&&str> = driver.iter().filter(|n| !exported.contains(**n)).collect();
    assert!(missing.is_empty(), "driver functions not exported: {missing:?}");
    // Nothing else leaks: every export is a CUDA name (the profiler's cuProfilerStart/Stop are the driver's
    // too, from cudaProfiler.h).
    let foreign: Vec<&String> = exported
        .iter()
        .filter(|n| !n.starts_with("cuda") && !n.starts_with("__cuda") && !driver.contains(n.as_str()))
        .filter(|n| !matches!(n.as_str(), "cuProfilerStart" | "cuProfilerStop"))
        .collect();
    assert!(foreign.is_empty(), "exports beyond CUDA's names: {foreign:?}");
    let readelf = Command::new("readelf").arg("-d").arg(&lib).output();
    if let Ok(out) = readelf {
        assert!(String::from_utf8_lossy(&out.stdout).contains("Library soname: [libcudart.so.13]"));
    }
}

#[test]
fn library_path_holds_the_runtime_under_its_names() {
    runtime_built();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(["exec", "--library-path"]).output().unwrap();
    assert!(out.status.success());
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    for name in ["libcudart.so.13", "libcudart.so.12", "libcudart.so"] {
        assert!(dir.join(name).is_file(), "{name} in {}", dir.display());
    }
}

#[test]
fn exit_statuses_and_missing_programs() {
    runtime_built();
    let out = exec(&[], Path::new("/nonexistent/program"), &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = exec(&[], Path::new("/bin/sh"), &["-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(String::from_utf8_lossy(&out.stderr).contains("made no CUDA calls"));
}
