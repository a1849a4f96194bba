//! How much of the corpus the JIT's SIMD vector path takes: every kernel (entry function) of every `.ptx`
//! file under `corpus/` (recursively; files that do not load are counted and skipped), compiled by the JIT,
//! counted as vectorized (by path: groups, bundles, whole CTAs) or refused, with a count per reason of
//! refusal (numbers in a reason, such as op indices, are shown as `N` so that equal reasons group).
//!
//! ```text
//! cargo run --release -p bench --example vector_coverage -- [--corpus DIR] [--list]
//! ```
//!
//! `--list` also prints each refused kernel with its file and reason.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use device::{DeviceMemory, LoadedModule};

fn main() {
    let mut corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let mut list = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpus" => corpus = PathBuf::from(args.next().expect("--corpus DIR")),
            "--list" => list = true,
            _ => {
                eprintln!("usage: vector_coverage [--corpus DIR] [--list]");
                std::process::exit(2);
            }
        }
    }
    let corpus = corpus.canonicalize().unwrap_or(corpus);
    let files = bench::ptx_files(&corpus).unwrap_or_else(|e| panic!("{}: {e}", corpus.display()));
    let (mut unloadable, mut kernels, mut compile_errors) = (0usize, 0usize, 0usize);
    let mut paths: BTreeMap<String, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut refused = Vec::new();
    for path in &files {
        let shown = path.strip_prefix(&corpus).unwrap_or(path).display().to_string();
        let loaded = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| ir::compile(&text).map_err(|d| format!("{} diagnostics", d.len())))
            .and_then(|module| {
                let mut memory = DeviceMemory::new();
                LoadedModule::load(module, &mut memory).map(|m| (m, memory)).map_err(|e| e.to_string())
            });
        let Ok((module, _memory)) = loaded else {
            unloadable += 1;
            continue;
        };
        let jit = bench::jit(1);
        let ids: Vec<_> = module.module.kernels().map(|(id, f)| (id, f.name.clone())).collect();
        for (id, name) in ids {
            kernels += 1;
            let reason = match jit.vectorized(&module, id) {
                Ok(Ok(path)) => {
                    *paths.entry(format!("{path:?}")).or_default() += 1;
                    continue;
                }
                Ok(Err(why)) => why,
                Err(e) => {
                    compile_errors += 1;
                    format!("the JIT does not compile it: {}", first_line(&e.to_string()))
                }
            };
            let key = numbers_as_n(&reason);
            *reasons.entry(key).or_default() += 1;
            refused.push(format!("  {shown}: {name}: {reason}"));
        }
    }
    let vectorized: usize = paths.values().sum();
    // One write at the end, whose failure (a closed pipe) is not an error.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} PTX files under {} ({unloadable} not loaded), {kernels} kernels: {vectorized} on the vector path ({}), \
         {} not ({compile_errors} not compiled by the JIT)",
        files.len(),
        corpus.display(),
        paths.iter().map(|(p, n)| format!("{p} {n}")).collect::<Vec<_>>().join(", "),
        kernels - vectorized
    );
    let mut by_count: Vec<_> = reasons.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out += "why the others are refused:\n";
    for (reason, n) in by_count {
        let _ = writeln!(out, "{n:6}  {reason}");
    }
    if list {
        out += "refused kernels:\n";
        for line in refused {
            out += &line;
            out.push('\n');
        }
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The reason with every run of digits replaced by `N`.
fn numbers_as_n(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len());
    let mut in_number = false;
    for ch in reason.chars() {
        if ch.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(ch);
        }
    }
    out
}
