//! Every `.ptx` file of the corpus (`corpus/ptx/**`) and of `tests/good/` parses without diagnostics and
//! round-trips through the printer: parse → print → parse gives an equivalent module, and printing it again
//! gives identical text.

mod common;

#[test]
fn corpus_parses_and_round_trips() {
    let files = common::corpus_files();
    assert!(!files.is_empty(), "no .ptx files found");
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).expect("readable corpus file");
        let name = path.display().to_string();
        if let Err(e) = common::check_round_trip(&name, &bytes) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} files failed:\n{}", failures.len(), files.len(), failures.join("\n"));
    println!("{} files parsed and round-tripped", files.len());
}
