//! End-to-end tests of the `lockstep` binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn lockstep() -> Command {
    Command::cargo_bin("lockstep").unwrap()
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx").join(rel)
}

const DIVERGENT: &str = r#".version 8.0
.target sm_80
.address_size 64

.visible .entry parity(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	and.b32 %r2, %r1, 1;
	setp.eq.s32 %p1, %r2, 0;
	@%p1 bra $L_even;
	mov.u32 %r3, 7;
	bra.uni $L_join;
$L_even:
	mov.u32 %r3, 9;
$L_join:
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r3;
	ret;
}
"#;

fn write_temp(name: &str, contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

#[test]
fn check_counts_kernels_and_instructions() {
    let (_d, path) = write_temp("parity.ptx", DIVERGENT.as_bytes());
    lockstep()
        .args(["ptx", "check"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("1 kernels, 0 functions, 12 instructions"));
}

#[test]
fn check_reports_diagnostics_with_location_and_exits_1() {
    let bad = DIVERGENT.replace("and.b32", "andx.b32");
    let (_d, path) = write_temp("bad.ptx", bad.as_bytes());
    lockstep()
        .args(["ptx", "check"])
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.ptx:12:").and(predicate::str::contains("andx")));
}

#[test]
fn check_json_lists_every_file() {
    let (_d, good) = write_temp("good.ptx", DIVERGENT.as_bytes());
    let (_d2, bad) = write_temp("bad.ptx", b"\xff\xfe garbage");
    let out =
        lockstep().args(["ptx", "check", "--json"]).arg(&good).arg(&bad).assert().code(1).get_output().stdout.clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json[0]["ok"], true);
    assert_eq!(json[0]["instructions"], 12);
    assert_eq!(json[1]["ok"], false);
    assert_eq!(json[1]["diagnostics"][0]["line"], 1);
}

#[test]
fn missing_file_is_a_clear_error() {
    lockstep()
        .args(["ptx", "check", "/nonexistent/k.ptx"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot read /nonexistent/k.ptx"));
}

#[test]
fn cfg_marks_the_reconvergence_point() {
    let (_d, path) = write_temp("parity.ptx", DIVERGENT.as_bytes());
    lockstep()
        .args(["ptx", "cfg"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("digraph").and(predicate::str::contains("reconverges at $L_join")));
    let out = lockstep()
        .args(["ptx", "cfg", "--json", "--kernel", "parity"])
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    // Block 0 ends in the divergent branch; block 3 ($L_join) is its immediate post-dominator.
    assert_eq!(json["blocks"][0]["ipdom"], 3);
    assert_eq!(json["blocks"][3]["label"], "$L_join");
}

#[test]
fn cfg_names_unknown_kernels() {
    let (_d, path) = write_temp("parity.ptx", DIVERGENT.as_bytes());
    lockstep()
        .args(["ptx", "cfg", "--kernel", "nope"])
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no kernel or function named `nope`; defined: parity"));
}

#[test]
fn print_writes_canonical_ptx_atomically_that_checks_again() {
    let (dir, path) = write_temp("parity.ptx", DIVERGENT.as_bytes());
    let out = dir.path().join("canonical.ptx");
    lockstep().args(["ptx", "print"]).arg(&path).arg("-o").arg(&out).assert().success();
    lockstep().args(["ptx", "check"]).arg(&out).assert().success().stdout(predicate::str::contains("12 instructions"));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(leftovers.len(), 2, "no temporary files are left behind");
}

#[test]
fn check_accepts_a_real_nvcc_file() {
    let file = corpus("simt_stats/simt_stats.sm_80.O3.ptx");
    lockstep().args(["ptx", "check"]).arg(file).assert().success().stdout(predicate::str::contains("kernels"));
}

#[test]
fn demo_runs() {
    lockstep().arg("demo").assert().success().stdout(
        predicate::str::contains("reconverge")
            .and(predicate::str::contains("round-trips: true"))
            .and(predicate::str::contains("lane_dependent_trip_count"))
            .and(predicate::str::contains("9 of 9 outputs are identical to the emulator's")),
    );
}

#[test]
fn ptx_isa_reports_what_the_engines_run() {
    let out = lockstep().args(["ptx", "isa", "dp4a", "--json"]).assert().success().get_output().stdout.clone();
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["instruction"].as_str().unwrap().contains("dp4a")));
    assert!(rows.iter().any(|r| r["status"] == "both engines"));
    let text = lockstep().args(["ptx", "isa", "wgmma"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("refused") && text.contains("wgmma"), "{text}");
}
