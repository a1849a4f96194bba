//! Parser throughput over the whole corpus (`corpus/ptx/**/*.ptx`), in bytes per second.
//!
//! `cargo bench -p ptx --bench parse`

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn corpus() -> Vec<String> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/ptx"));
    let mut texts: Vec<String> = ptx_files(dir).iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    if texts.is_empty() {
        // No corpus yet: measure the hand-written fixture instead of nothing.
        let good = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/good"));
        texts = ptx_files(good).iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    }
    texts
}

fn bench(c: &mut Criterion) {
    let texts = corpus();
    let bytes: usize = texts.iter().map(String::len).sum();
    let failures = texts.iter().filter(|t| ptx::parse(t).is_err()).count();
    eprintln!("parse bench: {} files, {} bytes, {} with diagnostics", texts.len(), bytes, failures);

    let mut group = c.benchmark_group("ptx");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("parse_corpus", |b| {
        b.iter(|| {
            for t in &texts {
                let _ = std::hint::black_box(ptx::parse(std::hint::black_box(t)));
            }
        })
    });
    let no_entries = ptx::ParseOptions { section_entries: false };
    group.bench_function("parse_corpus_without_section_entries", |b| {
        b.iter(|| {
            for t in &texts {
                let _ = std::hint::black_box(ptx::parse_with(std::hint::black_box(t), no_entries));
            }
        })
    });
    group.bench_function("lex_corpus", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for t in &texts {
                let mut diags = ptx::diagnostic::Diagnostics::default();
                let mut lexer = ptx::lexer::Lexer::new(t);
                while lexer.next(&mut diags).kind != ptx::lexer::TokenKind::Eof {
                    n += 1;
                }
            }
            std::hint::black_box(n)
        })
    });
    let modules: Vec<_> = texts.iter().filter_map(|t| ptx::parse(t).ok()).collect();
    group.bench_function("print_corpus", |b| {
        b.iter(|| {
            let mut n = 0;
            for m in &modules {
                n += m.to_string().len();
            }
            std::hint::black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
