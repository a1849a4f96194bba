//! Front-end throughput over the whole corpus: parse alone, and parse + lower + verify (`ir::compile`).
//! Reported as bytes per second of PTX text.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn corpus() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("corpus directory").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx"), &mut files);
    files.sort();
    files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

fn bench(c: &mut Criterion) {
    let texts = corpus();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(5));
    group.bench_function("parse", |b| {
        b.iter(|| {
            for t in &texts {
                std::hint::black_box(ptx::parse(t).is_ok());
            }
        })
    });
    group.bench_function("parse+lower+verify", |b| {
        b.iter(|| {
            for t in &texts {
                std::hint::black_box(ir::compile(t).is_ok());
            }
        })
    });
    let asts: Vec<_> =
        texts.iter().map(|t| ptx::parse_with(t, ptx::ParseOptions { section_entries: false }).unwrap()).collect();
    group.bench_function("lower", |b| {
        b.iter(|| {
            for (ast, t) in asts.iter().zip(&texts) {
                std::hint::black_box(ir::lower(ast, t).is_ok());
            }
        })
    });
    let modules: Vec<_> = asts.iter().zip(&texts).map(|(a, t)| ir::lower(a, t).unwrap()).collect();
    group.bench_function("verify", |b| {
        b.iter(|| {
            for m in &modules {
                std::hint::black_box(ir::verify(m).is_ok());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
