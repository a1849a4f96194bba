//! corpus/ptx/clang: the clang 14 builds of `workloads`, `simt_stats`, `int_arith`, `control_flow` and
//! `barriers` (sm_70, sm_80, sm_86).
//!
//! Their kernels are run and compared by the test file of their source: `corpus::variants` includes the
//! clang files (flavor `clang`), so every case of `tests/workloads.rs` etc. also runs on them with the same
//! reference. This file checks that wiring: every clang file is picked up as a variant of its source, and
//! every kernel it defines is one the nvcc builds define too (so the source's cases, which are checked for
//! coverage against all variants by `tests/summary.rs`, reach it). It also runs one kernel of each clang
//! file end to end as a smoke test of clang-specific output (demoted shared variables, LLVM block layout).

use conformance::corpus::{self, corpus_dir, Flavor};
use conformance::prelude::*;

const CLANG_SOURCES: [&str; 5] = ["workloads", "simt_stats", "int_arith", "control_flow", "barriers"];

#[test]
fn every_clang_file_is_a_variant_of_its_source() {
    let mut files: Vec<String> = std::fs::read_dir(corpus_dir().join("ptx/clang"))
        .map(|d| {
            d.flatten().map(|e| e.file_name().to_string_lossy().to_string()).filter(|n| n.ends_with(".ptx")).collect()
        })
        .unwrap_or_default();
    files.sort();
    assert_eq!(files.len(), 15, "{files:?}");
    for file in &files {
        let source = file.split('.').next().unwrap_or("");
        assert!(CLANG_SOURCES.contains(&source), "{file}: unexpected source");
        let v = corpus::variants(source);
        assert!(
            v.iter()
                .any(|v| v.flavor == Flavor::Clang && v.path.file_name().is_some_and(|n| n.to_string_lossy() == *file)),
            "{file} is not enumerated as a variant of {source}"
        );
    }
}

#[test]
fn clang_kernels_are_nvcc_kernels() {
    for source in CLANG_SOURCES {
        let variants = corpus::variants(source);
        let nvcc = variants.iter().find(|v| v.flavor == Flavor::O3 && v.arch == 80).expect("an sm_80 O3 build");
        let nvcc = corpus::compile(&nvcc.path).expect("nvcc PTX compiles");
        let names: Vec<&str> = nvcc.kernels().map(|(_, f)| f.name.as_str()).collect();
        let mut clang_files = 0;
        for v in variants.iter().filter(|v| v.flavor == Flavor::Clang) {
            clang_files += 1;
            let m = corpus::compile(&v.path).unwrap_or_else(|e| panic!("{v}: {e}"));
            let kernels: Vec<&str> = m.kernels().map(|(_, f)| f.name.as_str()).collect();
            assert!(!kernels.is_empty(), "{v}: no kernels");
            for k in kernels {
                assert!(names.contains(&k), "{v}: kernel {k} is not in the nvcc build, so no case covers it");
            }
        }
        assert_eq!(clang_files, 3, "{source}: clang builds");
    }
}

/// A second input set for three kernels, on the clang files only: `matmul_tiled16` (demoted `__shared__`
/// tiles, 2-D grid, exact small-integer data), `lane_dependent_trip_count` (a loop on `%laneid`) and
/// `sync_variants` (`bar.red` through clang's NVVM builtins).
#[test]
fn clang_smoke() {
    let only_clang = |v: &Variant| (v.flavor != Flavor::Clang).then(|| "covered by the source's own test".to_string());
    // matmul_tiled16: 20 x 20 times 20 x 20 of small integers (exact however the products are summed)
    let n = 20usize;
    let mut rng = Rng::new(1400);
    let a: Vec<f32> = (0..n * n).map(|_| rng.range_i32(-4, 4) as f32).collect();
    let b: Vec<f32> = (0..n * n).map(|_| rng.range_i32(-4, 4) as f32).collect();
    let mut c = vec![0.0f32; n * n];
    for r in 0..n {
        for col in 0..n {
            c[r * n + col] = (0..n).map(|k| a[r * n + k] * b[k * n + col]).sum();
        }
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::output::<f32>(n * n),
        Arg::scalar(n as i32),
        Arg::scalar(n as i32),
        Arg::scalar(n as i32),
    ];
    let matmul = Case::outputs(
        "matmul_tiled16",
        Shape::new((2, 2, 1), (16, 16, 1)),
        args,
        vec![Check::exact(2, "C", Values::F32(c))],
    )
    .skip_if(only_clang);
    check_all("workloads", vec![matmul]);

    let input = Rng::new(1401).vec_f32(64, -4.0, 4.0);
    let out: Vec<f32> = input.iter().enumerate().map(|(i, &x)| (0..=(i % 32)).fold(x, |v, _| v + 1.0)).collect();
    let trip = Case::outputs(
        "lane_dependent_trip_count",
        Shape::linear(1, 64),
        vec![Arg::input(&input), Arg::output::<f32>(64)],
        vec![Check::exact(1, "out", Values::F32(out))],
    )
    .skip_if(only_clang);
    check_all("simt_stats", vec![trip]);

    let v: Vec<i32> = (0..64).map(|i| (i % 5) - 2).collect();
    let cnt = v.iter().filter(|&&x| x > 0).count() as i32;
    let out: Vec<i32> = (0..64).map(|i| v[(i + 1) % 64] + cnt * 4 + 1).collect();
    let sync = Case::outputs(
        "sync_variants",
        Shape::linear(1, 64),
        vec![Arg::input(&v), Arg::output::<i32>(64)],
        vec![Check::exact(1, "out", Values::I32(out))],
    )
    .skip_if(only_clang);
    check_all("barriers", vec![sync]);
}
