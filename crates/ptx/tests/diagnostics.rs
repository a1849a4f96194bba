//! Golden tests for diagnostics: every `tests/bad/NAME.ptx` must fail to parse, and its rendered diagnostics
//! must equal `tests/bad/NAME.expected`. Run with `BLESS=1` to rewrite the expected files.

use std::path::{Path, PathBuf};

fn bad_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    files
}

#[test]
fn bad_inputs_render_expected_diagnostics() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut mismatches = Vec::new();
    let files = bad_files();
    assert!(files.len() >= 15, "expected the bad-input fixtures, found {}", files.len());
    for path in &files {
        let bytes = std::fs::read(path).expect("readable fixture");
        let name = format!("bad/{}", path.file_name().and_then(|n| n.to_str()).unwrap_or("?"));
        let diags = match ptx::parse_bytes(&bytes) {
            Ok(_) => {
                mismatches.push(format!("{name}: parsed without diagnostics"));
                continue;
            }
            Err(d) => d,
        };
        assert!(!diags.is_empty(), "{name}: Err without diagnostics");
        let index = ptx::LineIndex::new(&bytes);
        let lines = index.lines();
        for d in &diags {
            assert!(
                d.span.start <= d.span.end && d.span.end as usize <= bytes.len(),
                "{name}: span {:?} out of the file",
                d.span
            );
            let (line, _) = index.line_col(&bytes, d.span.start);
            assert!(line >= 1 && line <= lines, "{name}: line {line} outside 1..={lines}");
        }
        let rendered = ptx::diagnostic::render_all(&diags, &name, &bytes);
        let expected_path = path.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &rendered).expect("writable expected file");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != rendered {
            mismatches.push(format!(
                "{name}: diagnostics differ (BLESS=1 to update)\n--- expected\n{expected}--- actual\n{rendered}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
