//! Inputs (many found by the `compile` fuzz target) that once broke the print → parse round trip: each
//! `tests/roundtrip/*.ptx` must compile, print, and compile again to the same IR.

#[test]
fn round_trip_regressions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/roundtrip");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let module = ir::compile(&text).unwrap_or_else(|d| panic!("{}: {}", path.display(), d[0].message));
        let printed = ir::print(&module);
        let again =
            ir::compile(&printed).unwrap_or_else(|d| panic!("{}: printed text: {}", path.display(), d[0].message));
        assert!(
            again.without_source_positions() == module.without_source_positions(),
            "{}: the round trip changed the IR:\n{printed}",
            path.display()
        );
    }
}
