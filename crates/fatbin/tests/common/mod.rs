//! Test data: the fatbinaries of `tests/data/`, made by `tests/data/regen.sh`.

#![allow(dead_code)]

use std::path::PathBuf;

pub fn data(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every committed fatbinary section (not the ELF files).
pub const SECTIONS: &[&str] = &[
    "zstd.fatbin",
    "lz4.fatbin",
    "none.fatbin",
    "size.fatbin",
    "sass.fatbin",
    "multi.fatbin",
    "debug.fatbin",
    "rdc.fatbin",
    "rdc.relfatbin",
    "lto.relfatbin",
];

/// The ELF files.
pub const FILES: &[&str] = &["two_units", "rdc", "lto.o"];

/// The containers of a section, in order.
pub fn containers(bytes: &[u8]) -> Vec<(usize, fatbin::Fatbin<'_>)> {
    fatbin::containers(bytes).collect::<Result<_, _>>().expect("the section parses")
}

/// The container of the translation unit in a `.nv_fatbin` section of `axpy.cu` built without `-rdc`: the
/// second; the first is nvcc's unregistered device-link container.
pub fn unit(bytes: &[u8]) -> fatbin::Fatbin<'_> {
    let mut all = containers(bytes);
    assert_eq!(all.len(), 2, "a device-link container, then the unit's");
    let (at, _) = all[1];
    let unit = fatbin::parse(&bytes[at..]).expect("the unit's container parses");
    all.clear();
    unit
}
