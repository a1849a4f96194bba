//! `lockstep run`: argument errors, backend choice, and end-to-end runs on the emulator and the JIT.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn lockstep() -> Command {
    Command::cargo_bin("lockstep").unwrap()
}

fn workloads() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx/workloads/workloads.sm_80.O3.ptx")
}

/// `lockstep run workloads.ptx --kernel vector_add` with a launch shape, run in `dir`.
fn vector_add(dir: &Path) -> Command {
    let mut cmd = lockstep();
    cmd.current_dir(dir).arg("run").arg(workloads()).args(["--kernel", "vector_add", "--grid", "4", "--block", "256"]);
    cmd
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn help_teaches_with_the_saxpy_example() {
    lockstep().args(["run", "--help"]).assert().success().stdout(
        predicate::str::contains("lockstep run saxpy.ptx --grid 4 --block 256 --arg s32:1024")
            .and(predicate::str::contains("TYPE[N]:iota"))
            .and(predicate::str::contains("--out 3=y.bin")),
    );
    lockstep().args(["run", "-h"]).assert().success().stdout(predicate::str::contains("--arg 'f32[1024]:iota'"));
}

#[test]
fn malformed_arguments_exit_2_naming_the_argument() {
    let dir = tempfile::tempdir().unwrap();
    vector_add(dir.path())
        .args(["--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "u8:300"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--arg 2 (`u8:300`): 300 is out of range for u8"));
    vector_add(dir.path())
        .args(["--arg", "i32:5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--arg 0 (`i32:5`): unknown type `i32`"));
    vector_add(dir.path())
        .args(["--arg", "f32:-1e40"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--arg 0 (`f32:-1e40`): -1e40 is out of range for f32"));
}

#[test]
fn a_file_of_the_wrong_length_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.bin"), [0u8; 12]).unwrap();
    vector_add(dir.path())
        .args(["--arg", "f32[10]:0", "--arg", "f32[10]:0", "--arg", "f32[10]:0", "--arg", "f32[10]:@x.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--arg 3 (`f32[10]:@x.bin`): file has 12 bytes, expected 40"));
    vector_add(dir.path())
        .args(["--arg", "f32[]:@missing.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--arg 0 (`f32[]:@missing.bin`): cannot read missing.bin"));
}

#[test]
fn arguments_that_do_not_fit_the_kernel_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    vector_add(dir.path())
        .args(["--arg", "f32:1", "--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "s32:4"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--arg 0 (`f32:1`)")
                .and(predicate::str::contains("parameter 0 `vector_add_param_0`"))
                .and(predicate::str::contains("a f32 value cannot be passed to a .u64 parameter")),
        );
    vector_add(dir.path())
        .args(["--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "s64:4"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--arg 3 (`s64:4`)")
                .and(predicate::str::contains("is 4 bytes, the s64 value has 8")),
        );
    vector_add(dir.path())
        .args(["--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "f32[4]:0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("kernel `vector_add` takes 4 argument(s), 3 given"));
    vector_add(dir.path())
        .args(["--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "s32:4", "--out", "3=n.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--out 3=n.bin: argument 3 (`s32:4`) is not a device buffer"));
    vector_add(dir.path())
        .args(["--out", "y.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--out `y.bin`: expected INDEX=PATH"));
}

#[test]
fn launch_shape_and_kernel_choice_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    lockstep()
        .arg("run")
        .arg(workloads())
        .args(["--kernel", "vector_add", "--grid", "4,0", "--block", "256"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--grid"));
    lockstep()
        .arg("run")
        .arg(workloads())
        .args(["--kernel", "vector_add", "--grid", "4", "--block", "64,32"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("more than 1024 threads"));
    vector_add(dir.path())
        .args(["--shared", "300000", "--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "f32[4]:0", "--arg", "s32:4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("300000 bytes of dynamic shared memory exceed the 232448-byte limit"));
    lockstep()
        .current_dir(dir.path())
        .arg("run")
        .arg(workloads())
        .args(["--grid", "4", "--block", "256"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("choose one with --kernel: vector_add, saxpy"));
    lockstep()
        .arg("run")
        .arg(workloads())
        .args(["--kernel", "nope", "--grid", "4", "--block", "256"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no kernel named `nope`; kernels: vector_add"));
}

#[test]
fn the_jit_runs_vector_add_like_the_emulator() {
    let dir = tempfile::tempdir().unwrap();
    let a: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..1024).map(|i| 1000.0 - i as f32).collect();
    std::fs::write(dir.path().join("a.bin"), f32_bytes(a.iter().copied())).unwrap();
    std::fs::write(dir.path().join("b.bin"), f32_bytes(b.iter().copied())).unwrap();
    // The second plain JIT run loads the kernel from the on-disk cache the first one wrote.
    let runs = [
        ("emu", vec![]),
        ("jit", vec!["--threads", "2", "--no-cache"]),
        ("jit", vec![]),
        ("jit", vec!["--schedule", "dynamic"]),
        ("jit", vec!["--check", "--schedule", "static"]),
    ];
    for (backend, extra) in runs {
        vector_add(dir.path())
            .args(["--arg", "f32[]:@a.bin", "--arg", "f32[]:@b.bin", "--arg", "f32[1024]:0", "--arg", "s32:1024"])
            .args(["--out", "2=c.bin", "--backend", backend])
            .args(extra)
            .env("XDG_CACHE_HOME", dir.path())
            .assert()
            .success();
        let c = f32s(&std::fs::read(dir.path().join("c.bin")).unwrap());
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_eq!(c, want, "{backend}");
    }
    let cached = std::fs::read_dir(dir.path().join("lockstep/jit")).unwrap().count();
    assert_eq!(cached, 2, "one cache entry for the unchecked kernel, one for the checked");
    vector_add(dir.path())
        .args(["--backend", "gpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'gpu'"));
    vector_add(dir.path())
        .args(["--stats", "--threads", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threads, --schedule, --check and --no-vectorize apply to --backend jit"));
}

/// A wild pointer in the JIT's unchecked mode: a clear error and exit status 1, not a segmentation fault;
/// `--check` finds the thread and the PTX line.
#[test]
fn a_wild_pointer_in_the_jit_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = dir.path().join("wild.ptx");
    std::fs::write(
        &ptx,
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry wild(.param .u64 p)\n{\n\
         .reg .b64 %rd<2>;\n.reg .b32 %r<2>;\nld.param.u64 %rd1, [p];\nmov.u32 %r1, 7;\n\
         st.global.u32 [%rd1], %r1;\nret;\n}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut cmd = lockstep();
        cmd.arg("run").arg(&ptx).args(["--grid", "1", "--block", "1", "--arg", "u64:0x10", "--backend", "jit"]);
        cmd.args(extra).args(["--no-cache"]);
        cmd.assert()
    };
    run(&[])
        .code(1)
        .stderr(predicate::str::contains("out-of-bounds global access at 0x10 (unmapped memory"))
        .stderr(predicate::str::contains("at kernel `wild`, block (0,0,0)"))
        .stderr(predicate::str::contains("--check (or the emulator) finds the thread and PTX line"));
    run(&["--check"])
        .code(1)
        .stderr(predicate::str::contains("out-of-bounds global access of 4 bytes at 0x10"))
        .stderr(predicate::str::contains("PTX line 10"));
}

/// Accesses past shared memory and past a buffer's end, by unchecked JIT code: they land in guard pages and
/// are reported (they used to corrupt the host's heap when shared memory was a plain heap buffer).
#[test]
fn overruns_in_the_jit_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    // reduce_tree's `extern __shared__` array without --shared: the CTA has no shared memory.
    let reduce = |extra: &[&str]| {
        let mut cmd = lockstep();
        cmd.current_dir(dir.path()).arg("run").arg(workloads()).args([
            "--kernel",
            "reduce_tree",
            "--grid",
            "4",
            "--block",
            "256",
            "--arg",
            "f32[1024]:iota",
            "--arg",
            "f32[4]:0",
            "--arg",
            "s32:1024",
            "--backend",
            "jit",
            "--no-cache",
        ]);
        cmd.args(extra).assert()
    };
    reduce(&[])
        .code(1)
        .stderr(predicate::str::contains(
            "out-of-bounds shared access at 0x0 (0x0 into the CTA's shared memory of 0 bytes",
        ))
        .stderr(predicate::str::contains("at kernel `reduce_tree`, block"));
    reduce(&["--shared", "1024", "--out", "1=p.bin"]).success();
    assert_eq!(f32s(&std::fs::read(dir.path().join("p.bin")).unwrap()), [32640.0, 98176.0, 163712.0, 229248.0]);
    // vector_add told that its 1024-element buffers hold 512000.
    lockstep()
        .current_dir(dir.path())
        .arg("run")
        .arg(workloads())
        .args(["--kernel", "vector_add", "--grid", "2000", "--block", "256", "--backend", "jit", "--no-cache"])
        .args(["--arg", "f32[1024]:1", "--arg", "f32[1024]:2", "--arg", "f32[1024]:0", "--arg", "s32:512000"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("(unmapped memory, "))
        .stderr(predicate::str::contains("bytes past the end of"))
        .stderr(predicate::str::contains("at kernel `vector_add`"));
}

#[test]
fn load_errors_exit_1_with_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ptx");
    std::fs::write(&path, ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { retx; }\n").unwrap();
    lockstep()
        .arg("run")
        .arg(&path)
        .args(["--grid", "1", "--block", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.ptx:4:").and(predicate::str::contains("retx")));
    lockstep()
        .args(["run", "/nonexistent/k.ptx", "--grid", "1", "--block", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot read /nonexistent/k.ptx"));
}

#[test]
fn vector_add_runs_end_to_end_and_writes_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1000;
    std::fs::write(dir.path().join("b.bin"), f32_bytes((0..n).map(|i| 0.25 * i as f32))).unwrap();
    vector_add(dir.path())
        .args(["--arg", "f32[1000]:iota", "--arg", "f32[]:@b.bin", "--arg", "f32[1000]:-1", "--arg", "s32:1000"])
        .args(["--out", "2=c.bin", "--out", "0=a.bin"])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote c.bin (4000 bytes, argument 2)"));
    let c = f32s(&std::fs::read(dir.path().join("c.bin")).unwrap());
    let expected: Vec<f32> = (0..n).map(|i| i as f32 + 0.25 * i as f32).collect();
    assert_eq!(c, expected);
    let a = f32s(&std::fs::read(dir.path().join("a.bin")).unwrap());
    assert_eq!(a, (0..n).map(|i| i as f32).collect::<Vec<_>>());
}

#[test]
fn kernel_errors_exit_1_naming_kernel_block_thread_line_and_address() {
    let dir = tempfile::tempdir().unwrap();
    // n = 1024 but the buffers hold 1000 elements: thread 232 of block 3 reads past the end. The emulator
    // and the JIT in checked mode report it alike.
    for engine in [["--backend", "emu"], ["--backend", "jit"]] {
        let check: &[&str] = if engine[1] == "jit" { &["--check"] } else { &[] };
        vector_add(dir.path())
            .args(["--arg", "f32[1000]:1", "--arg", "f32[1000]:2", "--arg", "f32[1000]:0", "--arg", "s32:1024"])
            .args(engine)
            .args(check)
            .assert()
            .code(1)
            .stderr(
                predicate::str::contains("out-of-bounds global access of 4 bytes")
                    .and(predicate::str::contains("kernel `vector_add`, block (3,0,0), thread (232,0,0), PTX line 5"))
                    .and(predicate::str::contains("--arg ")),
            );
    }
}

#[test]
fn stats_print_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    vector_add(dir.path())
        .args(["--arg", "f32[1000]:1", "--arg", "f32[1000]:2", "--arg", "f32[1000]:0", "--arg", "s32:1000", "--stats"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("SIMT efficiency")
                .and(predicate::str::contains("Divergent branches (1 of 1"))
                .and(predicate::str::contains("global loads"))
                .and(predicate::str::contains("Instruction mix"))
                .and(predicate::str::contains("Transit-model parameters")),
        );
}

#[test]
fn json_is_one_object_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let out = vector_add(dir.path())
        .args(["--arg", "f32[1024]:1", "--arg", "f32[1024]:2", "--arg", "f32[1024]:0", "--arg", "s32:1024"])
        .args(["--out", "2=c.bin", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["kernel"], "vector_add");
    assert_eq!(json["backend"], "emu");
    assert_eq!(json["grid"]["x"], 4);
    assert_eq!(json["block"]["x"], 256);
    assert!(json["elapsed_seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(json["outputs"][0]["index"], 2);
    assert_eq!(json["outputs"][0]["path"], "c.bin");
    assert_eq!(json["outputs"][0]["bytes"], 4096);
    assert_eq!(json["stats"]["kernel"], "vector_add");
    assert_eq!(json["stats"]["threads"], 1024);
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(f32s(&std::fs::read(dir.path().join("c.bin")).unwrap()), vec![3.0; 1024]);
}

/// A kernel that prints `tid N` from a device function (nvcc's printf lowering: `vprintf` with an argument
/// buffer in local memory).
const HELLO: &str = r#".version 8.0
.target sm_80
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[8] = {116, 105, 100, 32, 37, 100, 10, 0};

.func say()
{
	.local .align 4 .b8 __local_depot0[4];
	.reg .b64 %SP;
	.reg .b64 %SPL;
	.reg .b32 %r<3>;
	.reg .b64 %rd<5>;

	mov.u64 %SPL, __local_depot0;
	cvta.local.u64 %SP, %SPL;
	mov.u32 %r1, %tid.x;
	add.u64 %rd1, %SP, 0;
	add.u64 %rd2, %SPL, 0;
	st.local.u32 [%rd2], %r1;
	mov.u64 %rd3, $str;
	cvta.global.u64 %rd4, %rd3;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd4;
	.param .b64 param1;
	st.param.b64 [param1+0], %rd1;
	.param .b32 retval0;
	call.uni (retval0), vprintf, (param0, param1);
	}
	ret;
}

.visible .entry hello()
{
	call.uni say, ();
	ret;
}
"#;

#[test]
fn printf_goes_to_stdout_or_with_json_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hello.ptx");
    std::fs::write(&path, HELLO).unwrap();
    lockstep().arg("run").arg(&path).args(["--grid", "1", "--block", "2"]).assert().success().stdout("tid 0\ntid 1\n");
    let out = lockstep()
        .arg("run")
        .arg(&path)
        .args(["--grid", "1", "--block", "2", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "tid 0\ntid 1\n");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["kernel"], "hello");
}

/// Copies `coeffs[tid]` (a `__constant__` array) to `out[tid]`.
const CONST_COPY: &str = r#".version 8.0
.target sm_80
.address_size 64

.const .align 4 .u32 coeffs[4] = {1, 2, 3, 4};

.visible .entry copy_const(.param .u64 out)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<7>;

	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	mov.u64 %rd4, coeffs;
	add.s64 %rd5, %rd4, %rd3;
	ld.const.u32 %r2, [%rd5];
	add.s64 %rd6, %rd2, %rd3;
	st.global.u32 [%rd6], %r2;
	ret;
}
"#;

#[test]
fn symbols_fill_constant_memory_before_the_launch() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ptx"), CONST_COPY).unwrap();
    let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write(dir.path().join("two.bin"), words(&[70, 80])).unwrap();
    std::fs::write(dir.path().join("five.bin"), words(&[1, 2, 3, 4, 5])).unwrap();
    let run = || {
        let mut cmd = lockstep();
        cmd.current_dir(dir.path()).args(["run", "k.ptx", "--grid", "1", "--block", "4", "--arg", "u32[4]:0"]);
        cmd
    };
    run().args(["--out", "0=plain.bin"]).assert().success();
    assert_eq!(std::fs::read(dir.path().join("plain.bin")).unwrap(), words(&[1, 2, 3, 4]));
    run().args(["--symbol", "coeffs=@two.bin", "--out", "0=filled.bin"]).assert().success();
    assert_eq!(std::fs::read(dir.path().join("filled.bin")).unwrap(), words(&[70, 80, 3, 4]));
    run()
        .args(["--symbol", "coeffs=@five.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--symbol coeffs=@five.bin: `coeffs` has 16 bytes, 20 bytes given"));
    run()
        .args(["--symbol", "coefs=@two.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no module-scope variable named `coefs`; .global/.const variables: coeffs"));
    run()
        .args(["--symbol", "coeffs=two.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--symbol `coeffs=two.bin`: the value must be a file, written @PATH"));
}
