//! Inputs that parse but must be rejected by lowering or the verifier: each `tests/bad/NAME.ptx` has its
//! rendered diagnostics committed in `NAME.expected` (`BLESS=1` rewrites them).

use std::path::Path;

#[test]
fn rejected_inputs_match_expected_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let bless = std::env::var_os("BLESS").is_some();
    let mut inputs: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    inputs.retain(|p| p.extension().is_some_and(|e| e == "ptx"));
    inputs.sort();
    assert!(!inputs.is_empty());
    let mut failures = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let actual = match ir::compile(&text) {
            Ok(_) => format!("{name}: accepted\n"),
            Err(diags) => diags.iter().map(|d| d.render(&name, &text)).collect(),
        };
        let expected_path = path.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual.contains(": accepted") {
            failures.push(format!("{name} was accepted"));
        } else if expected != actual {
            failures.push(format!("{name}:\n--- expected\n{expected}--- actual\n{actual}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
