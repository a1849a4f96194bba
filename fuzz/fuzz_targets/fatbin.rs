//! The fatbinary reader on arbitrary bytes: the container(s), every entry decompressed and read as PTX,
//! the choice of PTX, the wrapper, and the ELF scan never panic, hang or allocate without bound; what
//! parses is consistent (lengths within the input, decompressed sizes as promised).
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Decompression limit: a header may claim up to 1 GiB, which would make the fuzzer slow, not find bugs.
const LIMIT: u64 = 1 << 24;

fn exercise(fatbin: &fatbin::Fatbin<'_>, input_len: usize) {
    assert!(fatbin.len <= input_len);
    for entry in &fatbin.entries {
        assert!(entry.offset < fatbin.len);
        if let Ok(raw) = entry.decompress_limited(LIMIT) {
            assert_eq!(raw.len() as u64, entry.uncompressed_size);
        }
        if let Ok(text) = entry.ptx_text_limited(LIMIT) {
            assert!(!text.contains('\0'));
        }
        let _ = entry.obj_name_lossy();
    }
    for arch in [0, 80, u32::MAX] {
        if let Some(entry) = fatbin.best_ptx(arch) {
            assert_eq!(entry.kind, fatbin::Kind::Ptx);
        }
    }
    let _ = (fatbin.sass_archs(), fatbin.ptx_archs(), fatbin.has_sass());
}

fuzz_target!(|data: &[u8]| {
    if let Ok(fatbin) = fatbin::parse(data) {
        exercise(&fatbin, data.len());
    }
    for (at, fatbin) in fatbin::containers(data).flatten() {
        exercise(&fatbin, data.len() - at);
    }
    let _ = fatbin::Wrapper::from_bytes(data);
    if let Ok(scan) = fatbin::elf::scan(data) {
        for found in &scan.fatbins {
            exercise(&found.fatbin, data.len());
        }
        for wrapper in &scan.wrappers {
            assert!(wrapper.fatbin.is_none_or(|i| i < scan.fatbins.len()));
        }
    }
});
