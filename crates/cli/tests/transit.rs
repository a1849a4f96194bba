//! `lockstep transit`: the model from the command line, workloads from `lockstep run --json`, the figure,
//! the probe, and errors that name the file.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn lockstep() -> Command {
    Command::cargo_bin("lockstep").unwrap()
}

fn workloads() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx/workloads/workloads.sm_80.O3.ptx")
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("one JSON object")
}

#[test]
fn help_teaches_with_examples() {
    lockstep()
        .args(["transit", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("lockstep transit --machine c2075-sp --kernel-stats saxpy.json"))
        .stdout(predicate::str::contains("capacity"))
        .stdout(predicate::str::contains("lockstep transit probe -o cpu.toml"));
    lockstep().args(["transit", "probe", "--help"]).assert().success().stdout(predicate::str::contains("--quick"));
}

#[test]
fn by_hand_json_has_the_bound_and_the_throughputs() {
    let out = lockstep()
        .args(["transit", "--machine", "c2075-sp", "--z", "10", "--n", "1536", "--json", "--what-if", "z=4x"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json(&out);
    assert_eq!(v["bound"], "thread");
    for key in ["k", "x", "ms_throughput", "cs_throughput"] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {}", v[key]);
    }
    let (k, x) = (v["k"].as_f64().unwrap(), v["x"].as_f64().unwrap());
    assert!((k + x - 1536.0).abs() < 1e-6);
    assert_eq!(v["what_if"][0]["bound"], "computation");
    // The four bounds are reachable from the command line.
    for (machine, z, n, bound) in [
        ("c2075-sp", "10", "1536", "thread"),
        ("c2075-sp", "0.5", "4000", "memory"),
        ("c2075-dp", "200", "1536", "computation"),
        ("c2075-sp", "11.108622620380739", "3000", "capacity"),
    ] {
        let out = lockstep()
            .args(["transit", "--machine", machine, "--z", z, "--n", n, "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        assert_eq!(json(&out)["bound"], bound, "{machine} Z={z} n={n}");
    }
}

#[test]
fn text_report_names_bound_and_directions() {
    lockstep()
        .args(["transit", "--machine", "c2075-dp", "--z", "200", "--n", "1536"])
        .assert()
        .success()
        .stdout(predicate::str::contains("bound      computation"))
        .stdout(predicate::str::contains("+ raise M up to"))
        .stdout(predicate::str::contains("- raising Z does not help"));
}

#[test]
fn kernel_stats_from_lockstep_run_and_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let run = lockstep()
        .current_dir(dir.path())
        .arg("run")
        .arg(workloads())
        .args(["--kernel", "vector_add", "--grid", "4", "--block", "256"])
        .args([
            "--arg",
            "f32[1024]:iota",
            "--arg",
            "f32[1024]:1",
            "--arg",
            "f32[1024]:0",
            "--arg",
            "s32:1024",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    std::fs::write(dir.path().join("va.json"), &run).unwrap();
    let out = lockstep()
        .current_dir(dir.path())
        .args(["transit", "--machine", "c2075-sp", "--kernel-stats", "va.json", "--svg", "va.svg", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json(&out);
    assert!(v["workload_source"].as_str().unwrap().contains("vector_add"));
    // 4 CTAs of 256 threads: 4 SMs busy with 256 threads each.
    assert_eq!(v["n"].as_f64(), Some(256.0));
    assert_eq!(v["machine"]["busy_units"].as_u64(), Some(4));
    let svg = std::fs::read_to_string(dir.path().join("va.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains(r#"id="equilibrium""#));
    // --n overrides the file; the output file is replaced atomically (no temporary left behind).
    lockstep()
        .current_dir(dir.path())
        .args(["transit", "--machine", "c2075-sp", "--kernel-stats", "va.json", "--n", "1536", "--svg", "va.svg"])
        .assert()
        .success()
        .stdout(predicate::str::contains("n = 1536 threads per SM"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn errors_name_the_file_and_exit_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "format = 1\nname = \"x\"\nmax_threads = 2\n[cs]\nlane = 1\npeak_ginstr_per_s = 1\n").unwrap();
    lockstep()
        .args(["transit", "--machine"])
        .arg(&bad)
        .args(["--z", "1", "--n", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.toml").and(predicate::str::contains("line 5")))
        .stderr(predicate::str::contains("lane"));
    let stats = dir.path().join("k.json");
    std::fs::write(&stats, r#"{"kernel": "k", "stats": {"thread_instructions": 5}}"#).unwrap();
    lockstep()
        .args(["transit", "--machine", "c2075-sp", "--kernel-stats"])
        .arg(&stats)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("k.json").and(predicate::str::contains("missing field `warp_instructions`")));
    lockstep()
        .args(["transit", "--machine", "no-such", "--z", "1", "--n", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("c2075-sp"));
    // Command-line mistakes: status 2.
    lockstep().args(["transit", "--machine", "c2075-sp", "--z", "1"]).assert().code(2);
    lockstep().args(["transit", "--machine", "c2075-sp", "--z", "-1", "--n", "4"]).assert().code(2);
    lockstep().args(["transit", "--machine", "c2075-sp", "--z", "1", "--n", "4", "--what-if", "q=2"]).assert().code(2);
    lockstep().args(["transit", "--z", "1", "--n", "4"]).assert().code(2);
}

#[test]
fn machines_lists_and_prints_profiles() {
    lockstep()
        .args(["transit", "machines"])
        .assert()
        .success()
        .stdout(predicate::str::contains("c2075-sp").and(predicate::str::contains("gtx690-dp")));
    let out = lockstep().args(["transit", "machines", "gtx690-sp"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("peak_gb_per_s = 16.25"));
    lockstep().args(["transit", "machines", "nope"]).assert().code(2);
}

#[test]
fn quick_probe_writes_a_profile_that_loads() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("cpu.toml");
    lockstep()
        .args(["transit", "probe", "--quick", "-o"])
        .arg(&profile)
        .assert()
        .success()
        .stderr(predicate::str::contains("probe [1/").and(predicate::str::contains("wrote profile")));
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains("[[ms.curve]]") && text.contains("latency_ns"));
    lockstep()
        .args(["transit", "--machine"])
        .arg(&profile)
        .args(["--z", "8", "--n", "2", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"bound\""));
}
