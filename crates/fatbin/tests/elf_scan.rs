//! `elf::scan` on executables and objects nvcc 13.5 built from `tests/data/`.

mod common;

use common::data;
use fatbin::elf::{scan, Section};
use fatbin::ErrorKind;

fn registered(scan: &fatbin::elf::Scan<'_>) -> Vec<Option<usize>> {
    scan.fatbins.iter().map(|f| f.wrapper).collect()
}

#[test]
fn two_units_without_rdc_have_one_wrapper_and_container_each() {
    let file = data("two_units");
    let found = scan(&file).expect("scans");
    assert!(found.has_wrapper_section);
    assert_eq!(found.fatbins.len(), 3);
    assert!(found.fatbins.iter().all(|f| f.section == Section::NvFatbin));
    // The first container is nvcc's device-link container, which no wrapper registers.
    assert_eq!(registered(&found), [None, Some(0), Some(1)]);
    assert_eq!(found.fatbins[0].fatbin.sass_archs(), [80]);
    assert!(!found.fatbins[0].fatbin.has_ptx());
    assert_eq!(found.wrappers.len(), 2);
    let mut kernels = Vec::new();
    for (i, w) in found.wrappers.iter().enumerate() {
        assert_eq!(w.wrapper.version, 1);
        assert_eq!(w.wrapper.prelinked, 0);
        let f = &found.fatbins[w.fatbin.expect("points at a container")];
        assert_eq!(f.wrapper, Some(i));
        assert_eq!(w.wrapper.data, f.address);
        let text = f.fatbin.best_ptx(80).expect("PTX").ptx_text().expect("text");
        kernels.extend(text.lines().filter(|l| l.starts_with(".visible .entry")).map(str::to_string));
        // File offsets: the container parses there again.
        let again = fatbin::parse(&file[f.file_offset as usize..]).expect("parses");
        assert_eq!(again, f.fatbin);
    }
    assert_eq!(kernels, [".visible .entry _Z4axpyifPKfPf(", ".visible .entry _Z5scaleifPf("]);
}

#[test]
fn rdc_program_links_units_through_a_version_2_wrapper() {
    let file = data("rdc");
    let found = scan(&file).expect("scans");
    let sections: Vec<Section> = found.fatbins.iter().map(|f| f.section).collect();
    assert_eq!(sections, [Section::NvFatbin, Section::NvRelfatbin, Section::NvRelfatbin]);
    assert_eq!(registered(&found), [Some(0), Some(1), Some(2)]);
    let versions: Vec<u32> = found.wrappers.iter().map(|w| w.wrapper.version).collect();
    assert_eq!(versions, [2, 1, 1]);
    // The version 2 wrapper's list of units is filled at run time (it is in .bss, not in the file).
    assert_ne!(found.wrappers[0].wrapper.prelinked, 0);
    assert!(!found.fatbins[0].fatbin.has_ptx());
    assert!(found.fatbins[1..].iter().all(|f| f.fatbin.has_ptx() && f.fatbin.has_sass()));
}

#[test]
fn relocatable_object_wrappers_resolve_through_section_relocations() {
    let file = data("lto.o");
    let found = scan(&file).expect("scans");
    assert_eq!(found.fatbins.len(), 1);
    assert_eq!(found.fatbins[0].section, Section::NvRelfatbin);
    assert_eq!(found.wrappers.len(), 1);
    assert_eq!(found.wrappers[0].fatbin, Some(0));
    assert_eq!(found.fatbins[0].wrapper, Some(0));
}

#[test]
fn pointers_come_from_dynamic_relocations_when_the_file_holds_zeros() {
    // lld, unlike GNU ld, need not write a RELATIVE relocation's addend into the section: clear the data
    // pointers and expect the same matches.
    let mut file = data("two_units");
    let found = scan(&file).expect("scans");
    let offsets: Vec<usize> = found.wrappers.iter().map(|w| w.file_offset as usize).collect();
    let before = registered(&found);
    for at in offsets {
        file[at + 8..at + 16].fill(0);
    }
    let after = scan(&file).expect("scans");
    assert_eq!(registered(&after), before);
}

#[test]
fn an_elf_file_without_cuda_sections_gives_an_empty_scan() {
    let me = std::fs::read(std::env::current_exe().expect("the test binary")).expect("readable");
    let found = scan(&me).expect("scans");
    assert!(found.fatbins.is_empty());
    assert!(found.wrappers.is_empty());
    assert!(!found.has_wrapper_section);
}

#[test]
fn a_file_that_is_not_elf_is_an_error() {
    for bytes in [&b""[..], b"hello, world", &data("zstd.fatbin")] {
        let err = scan(bytes).expect_err("not ELF");
        assert!(matches!(err.kind, ErrorKind::NotElf { .. }), "{err}");
        assert!(err.to_string().starts_with("not an ELF file"), "{err}");
    }
}

#[test]
fn a_corrupt_container_is_reported_at_its_file_offset() {
    let mut file = data("two_units");
    let found = scan(&file).expect("scans");
    let at = found.fatbins[1].file_offset as usize;
    file[at] ^= 0xff;
    let err = scan(&file).expect_err("bad magic");
    assert_eq!(err.offset, at as u64);
    assert!(matches!(err.kind, ErrorKind::BadMagic { .. }), "{err}");
}
