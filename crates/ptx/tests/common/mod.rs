//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every `.ptx` file under `dir`, recursively, sorted (empty if `dir` does not exist).
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
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

/// The generated corpus (`corpus/ptx/**`) plus the hand-written `tests/good/*.ptx`.
pub fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = ptx_files(&root.join("../../corpus/ptx"));
    files.extend(ptx_files(&root.join("tests/good")));
    files
}

/// Parses, prints, re-parses and re-prints `source`; returns an error message if the round trip fails.
pub fn check_round_trip(name: &str, source: &[u8]) -> Result<(), String> {
    let module = match ptx::parse_bytes(source) {
        Ok(m) => m,
        Err(d) => return Err(ptx::diagnostic::render_all(&d, name, source)),
    };
    let printed = module.to_string();
    let reparsed = match ptx::parse(&printed) {
        Ok(m) => m,
        Err(d) => {
            return Err(format!(
                "{name}: the printed module does not parse:\n{}",
                ptx::diagnostic::render_all(&d, "<printed>", printed.as_bytes())
            ))
        }
    };
    if !ptx::normalize::equivalent(&module, &reparsed) {
        return Err(format!("{name}: the printed module parses to a different AST"));
    }
    let reprinted = reparsed.to_string();
    if reprinted != printed {
        let line = printed.lines().zip(reprinted.lines()).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!("{name}: printing is not a fixed point (first difference at printed line {})", line + 1));
    }
    Ok(())
}

/// A small deterministic PRNG (xorshift64*), so the generated tests need no dependency and are reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}
