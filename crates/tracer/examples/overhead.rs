//! Tracing overhead: runs an integer-heavy and a floating-point-heavy C program (crates/tracer/benches/*.c)
//! natively, under plain qemu-x86_64, and under qemu-x86_64 with the tracer plugin (also with empty callbacks,
//! QEMU's own cost of instrumentation), and prints median wall times, ratios and trace bytes per instruction.
//!
//! Run: cargo run --release -p tracer --example overhead [-- RUNS]
//! Needs gcc and qemu-x86_64; uses the plugin next to this example's target dir (or LOCKSTEP_TRACER).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

fn time(runs: usize, mut cmd: impl FnMut() -> Command) -> f64 {
    let mut t = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let status = cmd().stdout(Stdio::null()).status().expect("runs");
        assert!(status.success(), "benchmark failed");
        t.push(start.elapsed().as_secs_f64());
    }
    median(t)
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let plugin = std::env::var_os("LOCKSTEP_TRACER").map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("exe");
        exe.parent().and_then(Path::parent).expect("target dir").join("libtracer.so")
    });
    assert!(plugin.is_file(), "no plugin at {} (cargo build --release -p tracer)", plugin.display());
    let dir = tempfile_dir();
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    println!("runs per configuration: {runs} (median wall time)");
    println!(
        "{:<10} {:>8} {:>8} {:>8} {:>8} {:>11} {:>11} {:>13} {:>9}",
        "program", "native", "qemu", "null-cb", "traced", "traced/qemu", "traced/nat", "instructions", "bytes/ins"
    );
    for name in ["int_heavy", "fp_heavy"] {
        let exe = dir.join(name);
        let ok = Command::new("gcc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&exe)
            .arg(benches.join(format!("{name}.c")))
            .status()
            .expect("gcc");
        assert!(ok.success());
        let out = dir.join(format!("{name}.trace"));
        let native = time(runs, || Command::new(&exe));
        let qemu = time(runs, || {
            let mut c = Command::new("qemu-x86_64");
            c.arg(&exe);
            c
        });
        let plugin_arg = |mode: &str| format!("{},out={},mode={mode}", plugin.display(), out.display());
        let null = time(runs, || {
            let mut c = Command::new("qemu-x86_64");
            c.arg("-plugin").arg(plugin_arg("null")).arg(&exe);
            c
        });
        let traced = time(runs, || {
            let mut c = Command::new("qemu-x86_64");
            c.arg("-plugin").arg(plugin_arg("full")).arg(&exe);
            c
        });
        let t = trace::Trace::open(&out).expect("trace");
        let insns = t.end.as_ref().map_or(0, |e| e.insns);
        println!(
            "{:<10} {:>7.3}s {:>7.3}s {:>7.3}s {:>7.3}s {:>10.2}x {:>10.1}x {:>13} {:>9.3}",
            name,
            native,
            qemu,
            null,
            traced,
            traced / qemu,
            traced / native,
            insns,
            t.file_len as f64 / insns.max(1) as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("lockstep-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}
