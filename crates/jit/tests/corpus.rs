//! Every kernel of every corpus PTX file compiles with the JIT, or is refused with a reason: never a panic;
//! and how many take the vector path. (Running them is the conformance suite's job, `crates/conformance`.)

use std::path::{Path, PathBuf};

use device::{DeviceMemory, ErrorKind, LoadedModule};

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            ptx_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
}

#[test]
fn every_corpus_kernel_compiles_or_is_refused_with_a_reason() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx");
    let mut files = Vec::new();
    ptx_files(&root, &mut files);
    files.sort();
    assert!(files.len() > 300, "the corpus is missing: {} files", files.len());
    let jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
    let (mut compiled, mut vectorized, mut whole_ctas, mut refused) = (0, 0, 0, Vec::new());
    let mut why_not: std::collections::BTreeMap<String, usize> = Default::default();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        // Files that do not verify (the seeded bad ones do; none is expected) are the front end's business.
        let Ok(module) = ir::compile(&text) else { continue };
        let mut memory = DeviceMemory::new();
        let Ok(module) = LoadedModule::load(module, &mut memory) else { continue };
        let kernels: Vec<_> = module.module.kernels().map(|(id, _)| id).collect();
        for k in kernels {
            match jit.vectorized(&module, k) {
                Ok(v) => {
                    compiled += 1;
                    match v {
                        Ok(path) => {
                            vectorized += 1;
                            whole_ctas += usize::from(path == jit::VectorPath::WholeCtas);
                        }
                        // The reason without the op's position.
                        Err(why) => *why_not.entry(why.split(": ").last().unwrap_or("").to_string()).or_default() += 1,
                    }
                }
                Err(e) => match &e.kind {
                    ErrorKind::Unsupported(list) if list.iter().all(|r| r.contains("declared but not defined")) => {
                        refused.push(format!("{}: {e}", path.display()))
                    }
                    _ => panic!("{}: kernel `{}`: {e}", path.display(), module.module.functions[k].name),
                },
            }
        }
    }
    // Only kernels calling functions another module defines (rdc and hand-written linkage tests) are refused.
    assert!(compiled > 2000, "only {compiled} kernels compiled");
    let mut reasons: Vec<_> = why_not.into_iter().collect();
    reasons.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    eprintln!(
        "{vectorized} of {compiled} kernels take the vector path ({whole_ctas} of them whole CTAs at a time); the \
         most common reasons the others do not:"
    );
    for (why, n) in reasons.iter().take(15) {
        eprintln!("  {n:5}  {why}");
    }
    assert!(vectorized > 300, "only {vectorized} kernels are vectorized");
    assert!(whole_ctas > 20, "only {whole_ctas} kernels run whole CTAs on the vector path");
    assert!(refused.len() < 20, "{} refused:\n{}", refused.len(), refused.join("\n"));
}
