//! The fatbinaries nvcc 13.5 made from the sources of `tests/data/` (see `regen.sh`).

mod common;

use common::{containers, data, unit};
use fatbin::{flags, Compression, Entry, Kind};

fn ptx<'a>(fatbin: &'a fatbin::Fatbin<'a>) -> &'a Entry<'a> {
    fatbin.best_ptx(80).expect("a PTX entry")
}

/// The PTX of axpy.cu as nvcc 13.5 writes it for sm_80.
fn check_axpy_ptx(text: &str, target: &str) {
    let head = format!(".version 9.5\n.target {target}\n.address_size 64\n");
    assert!(text.trim_start_matches('\n').starts_with(&head), "PTX starts with {head:?}: {:?}", &text[..40]);
    assert!(text.contains(".visible .entry _Z4axpyifPKfPf("), "the kernel is there");
    assert!(!text.contains('\0'));
}

#[test]
fn three_compression_modes_give_the_same_ptx() {
    let mut texts = Vec::new();
    for (name, compression, flag) in [
        ("zstd.fatbin", Compression::Zstd, flags::ZSTD),
        ("lz4.fatbin", Compression::Lz4, flags::LZ4),
        ("none.fatbin", Compression::None, 0),
    ] {
        let bytes = data(name);
        let unit = unit(&bytes);
        let kinds: Vec<(Kind, u32)> = unit.entries.iter().map(|e| (e.kind, e.arch)).collect();
        assert_eq!(kinds, [(Kind::Elf, 80), (Kind::Ptx, 80)], "{name}");
        let sass = &unit.entries[0];
        assert_eq!(sass.compression, Compression::None, "{name}: SASS is not compressed");
        assert_eq!(sass.flags, flags::ADDRESS_64 | flags::HOST_LINUX);
        assert!(sass.payload.starts_with(b"\x7fELF"));
        let entry = ptx(&unit);
        assert_eq!(entry.compression, compression, "{name}");
        assert_eq!(entry.flags, flags::ADDRESS_64 | flags::HOST_LINUX | flag, "{name}");
        assert_eq!((entry.major, entry.minor), (9, 5), "{name}: the PTX ISA version");
        assert!(!entry.is_debug());
        assert_eq!((entry.obj_name, entry.ptxas_options), (None, None));
        let raw = entry.decompress().expect("decompresses");
        assert_eq!(raw.len() as u64, entry.uncompressed_size, "{name}");
        if compression != Compression::None {
            assert!(matches!(raw, std::borrow::Cow::Owned(_)));
            assert!(entry.payload.len() < raw.len(), "{name}: compression shrank the PTX");
        }
        let text = entry.ptx_text().expect("PTX text");
        check_axpy_ptx(&text, "sm_80");
        texts.push(text);
    }
    assert_eq!(texts[0], texts[1], "ZSTD and LZ4");
    assert_eq!(texts[0], texts[2], "ZSTD and uncompressed");
}

#[test]
fn zstd_payload_is_a_zstd_frame_and_lz4_a_raw_block() {
    let zstd = data("zstd.fatbin");
    let unit_z = unit(&zstd);
    assert!(ptx(&unit_z).payload.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]));
    let lz4 = data("lz4.fatbin");
    let unit_l = unit(&lz4);
    let entry = ptx(&unit_l);
    // A raw block: the first token (no frame magic 04 22 4d 18) has a literal run of one '\n'.
    assert_eq!(&entry.payload[..2], &[0x13, b'\n']);
}

#[test]
fn size_mode_compresses_sass_too() {
    let bytes = data("size.fatbin");
    let all = containers(&bytes);
    for (_, fatbin) in &all {
        for entry in &fatbin.entries {
            assert_eq!(entry.compression, Compression::Zstd);
            let raw = entry.decompress().expect("decompresses");
            assert_eq!(raw.len() as u64, entry.uncompressed_size);
            if entry.kind == Kind::Elf {
                assert!(raw.starts_with(b"\x7fELF"));
            }
        }
    }
    let unit = unit(&bytes);
    let sass = unit.entries.iter().find(|e| e.kind == Kind::Elf).expect("SASS");
    // The same cubin as the default build stores uncompressed (padded to 8 bytes there).
    let plain = data("zstd.fatbin");
    let plain_unit = common::unit(&plain);
    let plain_sass = &plain_unit.entries[0];
    let raw = sass.decompress().expect("decompresses");
    assert_eq!(&plain_sass.payload[..raw.len()], &raw[..]);
    check_axpy_ptx(&ptx(&unit).ptx_text().expect("PTX"), "sm_80");
}

#[test]
fn sass_only_build_has_no_ptx() {
    let bytes = data("sass.fatbin");
    let unit = unit(&bytes);
    assert!(unit.best_ptx(80).is_none());
    assert!(!unit.has_ptx());
    assert!(unit.has_sass());
    assert_eq!(unit.sass_archs(), [80]);
    assert!(unit.ptx_archs().is_empty());
}

#[test]
fn several_gencode_targets_share_one_container() {
    let bytes = data("multi.fatbin");
    let all = containers(&bytes);
    assert_eq!(all.len(), 2, "device link container + one unit container holding every target");
    let (_, dlink) = &all[0];
    assert_eq!(dlink.sass_archs(), [75, 80]);
    assert!(!dlink.has_ptx());
    let unit = unit(&bytes);
    assert_eq!(unit.ptx_archs(), [75, 80]);
    assert_eq!(unit.sass_archs(), [75, 80]);
    for (device, chosen) in [(80, 80), (86, 80), (120, 80), (75, 75), (79, 75), (70, 75), (0, 75)] {
        assert_eq!(unit.best_ptx(device).map(|e| e.arch), Some(chosen), "device sm_{device}");
    }
    check_axpy_ptx(&unit.best_ptx(75).expect("75").ptx_text().expect("PTX"), "sm_75");
    check_axpy_ptx(&unit.best_ptx(80).expect("80").ptx_text().expect("PTX"), "sm_80");
}

#[test]
fn debug_build_sets_the_debug_flag_and_names_the_source() {
    let bytes = data("debug.fatbin");
    let all = containers(&bytes);
    for (_, fatbin) in &all {
        for entry in &fatbin.entries {
            assert!(entry.is_debug(), "{entry:?}");
            assert_eq!(entry.flags & flags::DEBUG, flags::DEBUG);
        }
    }
    // The device-link container's name has a trailing space; the unit's has not.
    assert_eq!(all[0].1.entries[0].obj_name, Some(&b"axpy.cu "[..]));
    let unit = unit(&bytes);
    let entry = ptx(&unit);
    assert_eq!(entry.obj_name, Some(&b"axpy.cu"[..]));
    assert_eq!(entry.obj_name_lossy().as_deref(), Some("axpy.cu"));
    let options = String::from_utf8_lossy(entry.ptxas_options.expect("ptxas options"));
    assert!(options.split_whitespace().any(|o| o == "-g"), "{options:?}");
    let text = entry.ptx_text().expect("PTX");
    check_axpy_ptx(&text.replace(".target sm_80, debug", ".target sm_80"), "sm_80");
}

#[test]
fn rdc_pieces() {
    // The wrapper of version 2 points at the device-linked container: SASS only.
    let linked = data("rdc.fatbin");
    let all = containers(&linked);
    assert_eq!(all.len(), 1);
    let linked = &all[0].1;
    assert_eq!(linked.sass_archs(), [80]);
    assert!(!linked.has_ptx());
    // Each unit's own container: SASS and PTX, compiled with --compile-only.
    let pieces = data("rdc.relfatbin");
    let units = containers(&pieces);
    assert_eq!(units.len(), 2);
    let mut texts = Vec::new();
    for (_, unit) in &units {
        assert_eq!(unit.sass_archs(), [80]);
        let entry = ptx(unit);
        // Padded with spaces to a multiple of 8 bytes.
        assert_eq!(entry.ptxas_options, Some(&b"--compile-only  "[..]));
        texts.push(entry.ptx_text().expect("PTX"));
    }
    assert!(texts[0].contains(".extern .func (.param .b32 func_retval0) _Z5twicef"), "{}", texts[0]);
    assert!(texts[0].contains(".visible .entry _Z5applyiPf("));
    assert!(texts[1].contains(".visible .func (.param .b32 func_retval0) _Z5twicef"), "{}", texts[1]);
}

#[test]
fn lto_ir_entries_are_not_ptx() {
    let bytes = data("lto.relfatbin");
    let all = containers(&bytes);
    assert_eq!(all.len(), 1);
    let entries = &all[0].1.entries;
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry.kind, Kind::LtoIr);
    assert_eq!(entry.compression, Compression::Zstd);
    assert_eq!(entry.flags & flags::LTO_UNKNOWN, flags::LTO_UNKNOWN);
    // nvcc writes options after the descriptor, and payload bytes that are no ZSTD frame.
    assert_eq!(entry.ptxas_options, Some(&b"-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 "[..]));
    assert!(!entry.payload.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]));
    let err = entry.decompress().expect_err("obscured");
    assert!(matches!(err.kind, fatbin::ErrorKind::Obscured { kind: Kind::LtoIr, .. }), "{err}");
    let err = entry.ptx_text().expect_err("not PTX");
    assert_eq!(err.to_string(), "fatbinary entry at offset 0x10: holds LTO IR, not PTX");
    assert!(all[0].1.best_ptx(80).is_none());
}

#[test]
fn parse_reads_one_container_only() {
    let bytes = data("zstd.fatbin");
    let first = fatbin::parse(&bytes).expect("parses");
    assert_eq!(first.len, 0x5e8, "the device-link container, not the unit after it");
    assert_eq!(first.entries.len(), 1);
    assert_eq!(first.entries[0].offset, 0x10);
    let unit = fatbin::parse(&bytes[0x5e8..]).expect("parses");
    assert_eq!(unit.len, bytes.len() - 0x5e8);
    let offsets: Vec<usize> = unit.entries.iter().map(|e| e.offset).collect();
    assert_eq!(offsets, [0x10, 0x10 + 64 + 0xd28]);
}

#[test]
fn every_section_parses_and_every_entry_decompresses() {
    for name in common::SECTIONS {
        let bytes = data(name);
        let all = containers(&bytes);
        assert!(!all.is_empty(), "{name}");
        let end = all.last().map(|(at, f)| at + f.len);
        assert_eq!(end, Some(bytes.len()), "{name}: the containers fill the section");
        for (_, fatbin) in &all {
            for entry in fatbin.entries.iter().filter(|e| e.kind != Kind::LtoIr) {
                let raw = entry.decompress().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(raw.len() as u64, entry.uncompressed_size, "{name}");
                if entry.kind == Kind::Ptx {
                    let text = entry.ptx_text().unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert!(text.contains(".version 9.5\n"), "{name}");
                }
            }
        }
    }
}
