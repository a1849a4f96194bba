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

/// Limit of decompression in robustness tests, so that a lying header cannot make them slow.
pub const LIMIT: u64 = 1 << 24;

/// Everything a caller may do with a container's bytes; errors are fine, panics are not.
pub fn exercise(bytes: &[u8]) {
    if let Ok(fatbin) = fatbin::parse(bytes) {
        assert!(fatbin.len <= bytes.len());
        exercise_fatbin(&fatbin);
    }
    for (at, fatbin) in fatbin::containers(bytes).flatten() {
        assert!(at + fatbin.len <= bytes.len());
    }
    let _ = fatbin::Wrapper::from_bytes(bytes);
}

pub fn exercise_fatbin(fatbin: &fatbin::Fatbin<'_>) {
    for entry in &fatbin.entries {
        if let Ok(raw) = entry.decompress_limited(LIMIT) {
            assert_eq!(raw.len() as u64, entry.uncompressed_size);
        }
        let _ = entry.ptx_text_limited(LIMIT);
        let _ = entry.is_debug();
        let _ = entry.obj_name_lossy();
    }
    for arch in [0, 75, 80, u32::MAX] {
        if let Some(entry) = fatbin.best_ptx(arch) {
            assert_eq!(entry.kind, fatbin::Kind::Ptx);
        }
    }
    let _ = (fatbin.sass_archs(), fatbin.ptx_archs(), fatbin.has_ptx(), fatbin.has_sass());
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
