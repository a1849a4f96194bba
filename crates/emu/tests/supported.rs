//! Every kernel of the corpus decodes for the emulator, except those it cannot run (calls to functions a
//! module only declares); those are named precisely up front, each with its PTX line.

use device::{Backend, DeviceMemory, ErrorKind, LoadedModule};

#[test]
fn corpus_kernels_decode_or_name_what_is_unsupported() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut report = String::new();
    let emu = emu::Emulator::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut mem = DeviceMemory::new();
        let module = LoadedModule::load(ir::compile(&text).unwrap(), &mut mem).unwrap();
        for (k, f) in module.module.kernels() {
            if let Err(e) = emu.check_supported(&module, k) {
                let ErrorKind::Unsupported(list) = &e.kind else { panic!("{e}") };
                let rel = path.strip_prefix(&root).unwrap().display().to_string();
                for item in list {
                    report.push_str(&format!("{rel}: {}: {item}\n", f.name));
                }
            }
        }
    }
    let expected_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/unsupported.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&expected_path, &report).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    assert_eq!(report, expected, "the set of unsupported instructions changed (BLESS=1 to accept)");
}
