//! The PTX ISA coverage table (`lockstep ptx isa`, `docs/ptx-isa.md`) is true: the committed file is what
//! the code says today, and every opcode lockstep's front end knows has a sample.
//!
//! After changing what the engines accept, regenerate it: `lockstep ptx isa --markdown > docs/ptx-isa.md`
//! (or run this test with `LOCKSTEP_UPDATE_ISA=1`).

use std::path::Path;

use conformance::isa;

#[test]
fn the_committed_table_is_what_the_engines_do() {
    let samples = isa::parse_samples(isa::SAMPLES).expect("corpus/isa/samples.tsv parses");
    let table = isa::markdown(&isa::coverage(&samples));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ptx-isa.md");
    if std::env::var_os("LOCKSTEP_UPDATE_ISA").is_some() {
        std::fs::write(&path, &table).expect("writing docs/ptx-isa.md");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != table {
        let diff: Vec<String> = table
            .lines()
            .zip(committed.lines().chain(std::iter::repeat("")))
            .filter(|(new, old)| new != old)
            .take(10)
            .map(|(new, old)| format!("  now:       {new}\n  committed: {old}"))
            .collect();
        panic!(
            "docs/ptx-isa.md differs from what the engines do; regenerate it with `lockstep ptx isa --markdown > \
             docs/ptx-isa.md`. First differences:\n{}",
            diff.join("\n")
        );
    }
}

#[test]
fn every_opcode_has_a_sample() {
    let samples = isa::parse_samples(isa::SAMPLES).expect("corpus/isa/samples.tsv parses");
    let missing: Vec<&str> = ptx::keywords::Opcode::ALL
        .iter()
        .map(|o| o.as_str())
        .filter(|op| {
            !samples.iter().any(|s| {
                s.ptx.split(['{', ';', ' ', '\t']).any(|word| word == *op || word.starts_with(&format!("{op}.")))
            })
        })
        .collect();
    assert!(missing.is_empty(), "opcodes without a sample in corpus/isa/samples.tsv: {missing:?}");
}
