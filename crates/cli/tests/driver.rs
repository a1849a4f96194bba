//! End-to-end tests of the driver API (`libcuda.so.1`, crate `cudadrv`) under `lockstep exec`: a C program
//! (`corpus/driver/src/driver_test.c`, built here with gcc against lockstep's library) loads PTX from a
//! file, a fatbinary, a cubin (refused), linked PTX units and broken PTX, launches with both parameter
//! forms, resolves functions with `cuGetProcAddress`, refuses launches beyond a kernel's launch bounds,
//! fails every call in a child forked after `cuInit` (as NVIDIA's driver does), copies in batches, and
//! compiles CUDA C++ with NVRTC at run time. Each mode checks its own results; every mode runs on both
//! engines.
//!
//! The NVRTC mode uses the `nvidia-cuda-nvrtc` wheel of the Python environment `scripts/python-cuda-env`
//! makes (`scripts/test` makes it first); where PyPI was unreachable, `LOCKSTEP_PYENV_SKIP` says why and
//! the test says it skips. The Python scripts of `corpus/python` (Numba kernels, a cuda.core program) run
//! the same way, each checking its results against NumPy.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn driver_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/driver")
}

/// The folder of links to lockstep's CUDA libraries (built for the binary under test).
fn library_dir() -> PathBuf {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = DIR.get_or_init(|| {
        common::cuda_libraries_built();
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_lockstep"));
        let out = Command::new(exe).args(["exec", "--library-path"]).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("lockstep exec --library-path: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    });
    r.clone().unwrap_or_else(|e| panic!("{e}"))
}

/// `driver_test`, compiled once against lockstep's `libcuda.so`.
fn driver_test() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let lib = library_dir();
        let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("driver");
        std::fs::create_dir_all(&out_dir).expect("a folder for the test program");
        let bin = out_dir.join("driver_test");
        let out = Command::new("gcc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&bin)
            .arg(driver_dir().join("src/driver_test.c"))
            .arg(format!("-L{}", lib.display()))
            .args(["-lcuda", "-ldl", "-lm"])
            .output()
            .expect("gcc runs");
        assert!(out.status.success(), "gcc failed:\n{}", String::from_utf8_lossy(&out.stderr));
        bin
    })
    .clone()
}

fn run(options: &[&str], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("exec")
        .args(options)
        .arg("--")
        .arg(driver_test())
        .args(args)
        .env("LOCKSTEP_JIT_CACHE", "off")
        .stdin(Stdio::null())
        .output()
        .expect("lockstep runs")
}

/// Runs a mode on both engines; it must print `MODE: ok` and exit with 0.
fn mode_passes(args: &[&str]) {
    for backend in ["jit", "emu"] {
        let out = run(&["-q", "--backend", backend], args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("{}: ok", args[0])),
            "driver_test {} on the {backend}: status {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn fixture(name: &str) -> String {
    driver_dir().join(name).display().to_string()
}

#[test]
fn a_ptx_file_loads_and_both_parameter_forms_launch() {
    mode_passes(&["ptx", &fixture("kernels.ptx")]);
}

#[test]
fn a_fatbinary_with_ptx_loads_both_ways() {
    mode_passes(&["fatbin", &fixture("kernels.fatbin")]);
}

#[test]
fn a_cubin_is_refused_with_an_error_that_asks_for_ptx() {
    let out = run(&[], &["cubin", &fixture("kernels.cubin")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cubin") && stderr.contains("PTX"), "{stderr}");
}

#[test]
fn the_linker_links_ptx_units_from_memory_and_files() {
    mode_passes(&["link", &fixture("link_main.ptx"), &fixture("link_helper.ptx")]);
}

#[test]
fn broken_ptx_is_invalid_ptx_with_the_message_in_the_error_log() {
    mode_passes(&["badptx"]);
}

#[test]
fn get_proc_address_resolves_names_by_version() {
    mode_passes(&["proc"]);
}

#[test]
fn launches_beyond_a_kernels_launch_bounds_are_invalid_values() {
    mode_passes(&["bounds"]);
}

#[test]
fn a_child_forked_after_cu_init_cannot_use_the_driver() {
    mode_passes(&["fork"]);
}

#[test]
fn batched_copies_follow_the_rules_and_no_stream_is_capturing() {
    mode_passes(&["batch"]);
    mode_passes(&["stream_attrs"]);
}

#[test]
fn launches_captured_from_a_stream_run_as_a_graph() {
    mode_passes(&["graphs", &fixture("kernels.ptx")]);
    mode_passes(&["graph_nodes", &fixture("kernels.ptx")]);
}

#[test]
fn memory_pools_count_their_allocations() {
    mode_passes(&["pools"]);
}

#[test]
fn the_emulator_reports_statistics_of_driver_api_kernels() {
    let report = Path::new(env!("CARGO_TARGET_TMPDIR")).join("driver-report.json");
    let out = run(&["-q", "--backend", "emu", "--report", report.to_str().unwrap()], &["ptx", &fixture("kernels.ptx")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let kernels = json["kernels"].as_array().expect("kernels");
    let saxpy = kernels.iter().find(|k| k["name"] == "saxpy").expect("saxpy in the report");
    assert_eq!(saxpy["launches"], 2);
    let efficiency = saxpy["stats"]["simt_efficiency"].as_f64().expect("SIMT efficiency");
    // 10000 threads in blocks of 256: the last block's 240 idle lanes are the only divergence.
    assert!(efficiency > 0.95 && efficiency < 1.0, "{efficiency}");
    assert!(kernels.iter().any(|k| k["name"] == "block_sum"));
}

/// The Python environment's `site-packages`, or `None` (with the reason printed) where it could not be
/// made for want of PyPI.
pub fn python_env() -> Option<PathBuf> {
    if let Ok(why) = std::env::var("LOCKSTEP_PYENV_SKIP") {
        eprintln!("skipped: the Python environment could not be made: {why}");
        return None;
    }
    let root = std::env::var_os("LOCKSTEP_PYENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv"));
    assert!(
        root.join("bin/python").exists(),
        "no Python environment at {}: run scripts/python-cuda-env (scripts/test does)",
        root.display()
    );
    Some(root)
}

#[test]
fn cuda_cpp_compiled_by_nvrtc_runs() {
    let Some(env) = python_env() else { return };
    let lib = std::fs::read_dir(env.join("lib"))
        .expect("lib/")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages/nvidia/cu13/lib/libnvrtc.so.13"))
        .find(|p| p.exists())
        .expect("libnvrtc.so.13 in the Python environment (nvidia-cuda-nvrtc)");
    mode_passes(&["nvrtc", lib.to_str().unwrap()]);
}

fn python_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/python").join(name)
}

/// Runs a Python script of `corpus/python` under `lockstep exec` on both engines; it must print
/// `LAST: ok` and exit with 0.
fn script_passes(script: &str, last: &str) {
    let Some(env) = python_env() else { return };
    library_dir();
    for backend in ["jit", "emu"] {
        let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(["exec", "-q", "--backend", backend, "--"])
            .arg(env.join("bin/python"))
            .arg(python_script(script))
            .env("LOCKSTEP_JIT_CACHE", "off")
            .env("PYTHONWARNINGS", "ignore")
            .stdin(Stdio::null())
            .output()
            .expect("lockstep runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("{last}: ok")),
            "{script} on the {backend}: status {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn numba_kernels_match_numpy() {
    script_passes("numba_kernels.py", "numba");
}

#[test]
fn cuda_core_programs_compiled_by_nvrtc_match_numpy() {
    script_passes("cuda_core_nvrtc.py", "cuda.core");
}

#[test]
fn cuda_core_graphs_captured_and_built_node_by_node_run() {
    script_passes("cuda_core_graphs.py", "cuda.core graphs");
}
