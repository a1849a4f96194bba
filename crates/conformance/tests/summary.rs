//! The conformance matrix and the coverage guard.
//!
//! For every CUDA source of the corpus and every PTX file made from it, each kernel is classified without
//! running it: `run` (its test runs it and compares with the reference), `skip: not in file`, `skip: empty
//! body` (arch-guarded kernels on old targets), or `unsupported: <families>` (refused by the emulator up
//! front; its test asserts exactly that). The matrix is compared with `tests/expected/matrix.txt`
//! (`BLESS=1` rewrites it), so a change in what runs, is skipped or is unsupported shows up in review.
//!
//! The coverage guard: every kernel of every source must be named in that source's test file
//! (`tests/<source>.rs`), so no kernel can go untested silently.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use conformance::corpus::{self, corpus_dir};
use device::{Backend, DeviceMemory, ErrorKind, LoadedModule};

fn sources() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(corpus_dir().join("cuda"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    name.strip_suffix(".cu").map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The families named in unsupported items: "(`tex` is not implemented" -> tex; undefined functions.
fn families(items: &[String]) -> String {
    let mut fams: Vec<String> = items
        .iter()
        .map(|i| {
            if let Some(p) = i.find("(`") {
                let rest = &i[p + 2..];
                let name = &rest[..rest.find('`').unwrap_or(rest.len())];
                if i.contains("declared but not defined") {
                    format!("extern {name}")
                } else {
                    name.to_string()
                }
            } else {
                "?".to_string()
            }
        })
        .collect();
    fams.sort();
    fams.dedup();
    fams.join(" ")
}

fn classify(module: &ir::Module, kernel: &str) -> String {
    let Some(f) = module.kernels().find(|(_, f)| f.name == kernel).map(|(id, _)| id) else {
        return "skip: not in file".to_string();
    };
    let body = module.functions[f].body.as_ref();
    if body.is_some_and(|b| b.insts.values().all(|i| matches!(i.opcode, ir::Opcode::Ret | ir::Opcode::Exit))) {
        return "skip: empty body".to_string();
    }
    let mut mem = DeviceMemory::new();
    let loaded = match LoadedModule::load(module.clone(), &mut mem) {
        Ok(l) => l,
        Err(e) => return format!("error: {e}"),
    };
    match emu::Emulator::new().check_supported(&loaded, f) {
        Ok(()) => "run".to_string(),
        Err(e) => match &e.kind {
            ErrorKind::Unsupported(items) => format!("unsupported: {}", families(items)),
            other => format!("error: {other:?}"),
        },
    }
}

#[test]
fn matrix_and_coverage() {
    let mut report = String::new();
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    let mut uncovered = Vec::new();
    for source in sources() {
        let variants = corpus::variants(&source);
        let mut modules = Vec::new();
        let mut kernels: Vec<String> = Vec::new();
        for v in &variants {
            match corpus::compile(&v.path) {
                Ok(m) => {
                    for (_, f) in m.kernels() {
                        if !kernels.contains(&f.name) {
                            kernels.push(f.name.clone());
                        }
                    }
                    modules.push((v.clone(), Some(m)));
                }
                Err(e) => {
                    let _ = writeln!(report, "{v}: does not compile: {e}");
                    modules.push((v.clone(), None));
                }
            }
        }
        let test_file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(format!("{source}.rs"));
        let test_text = std::fs::read_to_string(&test_file).unwrap_or_default();
        let _ = writeln!(report, "== {source} ({} files, {} kernels)", variants.len(), kernels.len());
        for kernel in &kernels {
            if !test_text.contains(kernel.as_str()) {
                uncovered.push(format!("{source}: {kernel} (not named in tests/{source}.rs)"));
            }
            // Group the variants by classification so the matrix stays readable.
            let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (v, m) in &modules {
                let class = match m {
                    Some(m) => classify(m, kernel),
                    None => "error: does not compile".to_string(),
                };
                let key = class.split(':').next().unwrap_or("").to_string();
                *totals.entry(key).or_default() += 1;
                groups.entry(class).or_default().push(format!("sm_{}.{}", v.arch, v.flavor.name()));
            }
            let _ = writeln!(report, "{kernel}");
            for (class, vs) in groups {
                if vs.len() == modules.len() {
                    let _ = writeln!(report, "    {class}: all {}", vs.len());
                } else {
                    let _ = writeln!(report, "    {class} ({}): {}", vs.len(), vs.join(" "));
                }
            }
        }
    }
    let _ = writeln!(report, "== totals (kernel x file)");
    for (k, n) in &totals {
        let _ = writeln!(report, "{k}: {n}");
    }
    println!("{report}");
    let expected_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/matrix.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(expected_path.parent().unwrap_or(std::path::Path::new("."))).unwrap_or(());
        std::fs::write(&expected_path, &report).unwrap_or(());
    }
    assert!(uncovered.is_empty(), "kernels without a conformance case:\n{}", uncovered.join("\n"));
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    assert!(report == expected, "the conformance matrix changed (BLESS=1 to accept):\n{report}");
}
