//! Front-end throughput over the corpus, best of N rounds (robust on a shared machine):
//! `cargo run --release -p ir --example throughput [ROUNDS]`.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
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
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx"), &mut files);
    let texts: Vec<String> = files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let best = |f: &dyn Fn()| {
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    let parse = best(&|| {
        for t in &texts {
            std::hint::black_box(ptx::parse_with(t, ptx::ParseOptions { section_entries: false }).is_ok());
        }
    });
    let compile = best(&|| {
        for t in &texts {
            std::hint::black_box(ir::compile(t).is_ok());
        }
    });
    let mb = bytes as f64 / 1e6;
    println!("corpus: {} files, {:.1} MB; best of {rounds} rounds", texts.len(), mb);
    println!("parse:                {:>7.1} MB/s", mb / parse);
    println!("parse+lower+verify:   {:>7.1} MB/s", mb / compile);
}
