//! Untrusted input: truncations, byte flips and absurd sizes never panic, and errors say what and where.

mod common;

use common::{data, exercise, exercise_fatbin, Rng, FILES, LIMIT, SECTIONS};
use fatbin::{Compression, ErrorKind, Kind, Structure};

/// The unit container of zstd.fatbin (the second), as its own bytes.
fn unit_bytes() -> Vec<u8> {
    let bytes = data("zstd.fatbin");
    let (at, unit) = fatbin::containers(&bytes).nth(1).expect("two containers").expect("parses");
    bytes[at..at + unit.len].to_vec()
}

fn patched(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[at..at + value.len()].copy_from_slice(value);
    out
}

fn parse_err(bytes: &[u8]) -> fatbin::Error {
    fatbin::parse(bytes).expect_err("must not parse")
}

#[test]
fn every_truncation_of_every_section() {
    for name in SECTIONS {
        let bytes = data(name);
        let full: Vec<(usize, usize)> = common::containers(&bytes).iter().map(|(at, f)| (*at, f.len)).collect();
        for n in 0..=bytes.len() {
            let cut = &bytes[..n];
            exercise(cut);
            // The containers wholly inside the cut parse as before; a container cut through is an error.
            let found: Vec<_> = fatbin::containers(cut).collect();
            let whole = full.iter().filter(|(at, len)| at + len <= n).count();
            let ok: Vec<(usize, usize)> = found.iter().flatten().map(|(at, f)| (*at, f.len)).collect();
            assert_eq!(ok, full[..whole], "{name} cut at {n}");
            let cut_through = full.iter().any(|(at, len)| *at < n && n < at + len);
            assert_eq!(found.iter().any(Result::is_err), cut_through, "{name} cut at {n}");
        }
        for &(at, len) in &full {
            for n in 0..len {
                assert!(fatbin::parse(&bytes[at..at + n]).is_err(), "{name}: container at {at} cut to {n}");
            }
        }
    }
}

#[test]
fn random_byte_flips() {
    let mut rng = Rng(0x5eed_fa7b_1000_0001);
    for name in SECTIONS {
        let bytes = data(name);
        for _ in 0..1500 {
            let mut mutated = bytes.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(mutated.len());
                mutated[at] ^= 1 << rng.below(8);
            }
            exercise(&mutated);
            for (_, fatbin) in fatbin::containers(&mutated).flatten() {
                exercise_fatbin(&fatbin);
            }
        }
    }
}

#[test]
fn random_bytes_in_headers() {
    // Flips hit payloads mostly: overwrite header bytes of the unit container instead.
    let unit = unit_bytes();
    let parsed = fatbin::parse(&unit).expect("parses");
    let headers: Vec<usize> = std::iter::once(0).chain(parsed.entries.iter().map(|e| e.offset)).collect();
    let mut rng = Rng(7);
    for _ in 0..20_000 {
        let mut mutated = unit.clone();
        let base = headers[rng.below(headers.len())];
        let at = base + rng.below(64);
        mutated[at] = match rng.below(4) {
            0 => 0,
            1 => 0xff,
            _ => rng.next() as u8,
        };
        exercise(&mutated);
    }
}

#[test]
fn elf_files_truncated_and_flipped() {
    let mut rng = Rng(99);
    for name in FILES {
        let file = data(name);
        for n in 0..=file.len() {
            if let Ok(found) = fatbin::elf::scan(&file[..n]) {
                found.fatbins.iter().for_each(|f| exercise_fatbin(&f.fatbin));
            }
        }
        for _ in 0..500 {
            let mut mutated = file.clone();
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(mutated.len());
                mutated[at] = rng.next() as u8;
            }
            if let Ok(found) = fatbin::elf::scan(&mutated) {
                found.fatbins.iter().for_each(|f| exercise_fatbin(&f.fatbin));
            }
        }
    }
}

#[test]
fn container_header_errors() {
    let unit = unit_bytes();
    let err = parse_err(&unit[..10]);
    assert_eq!(err.kind, ErrorKind::Truncated { what: Structure::Container, needed: 16, available: 10 });
    assert_eq!(err.to_string(), "fatbinary container at offset 0x0: needs 16 bytes but only 10 remain");
    let err = parse_err(&patched(&unit, 0, &[0; 4]));
    assert_eq!(err.to_string(), "fatbinary container at offset 0x0: magic number is 0x00000000, not 0xba55ed50");
    let err = parse_err(&patched(&unit, 4, &2u16.to_le_bytes()));
    assert_eq!(err.kind, ErrorKind::UnsupportedVersion { what: Structure::Container, version: 2 });
    let err = parse_err(&patched(&unit, 6, &8u16.to_le_bytes()));
    assert_eq!(err.kind, ErrorKind::BadHeaderSize { what: Structure::Container, size: 8, min: 16 });
    let err = parse_err(&patched(&unit, 8, &u64::MAX.to_le_bytes()));
    assert_eq!(err.kind, ErrorKind::ContainerOverrun { claimed: u64::MAX, available: unit.len() as u64 - 16 });
    // A larger header is stepped over (its entries then misalign, here into an error).
    assert!(fatbin::parse(&patched(&unit, 6, &24u16.to_le_bytes())).is_err());
    // An empty container is valid.
    let empty = patched(&unit[..16], 8, &0u64.to_le_bytes());
    let parsed = fatbin::parse(&empty).expect("empty container");
    assert_eq!((parsed.entries.len(), parsed.len), (0, 16));
}

#[test]
fn entry_header_errors() {
    let unit = unit_bytes();
    let parsed = fatbin::parse(&unit).expect("parses");
    let ptx = parsed.entries[1].offset;
    // Payload size past the container: the message the runtime shows.
    let err = parse_err(&patched(&unit, ptx + 8, &4096u64.to_le_bytes()));
    let remaining = unit.len() - ptx - 80;
    assert_eq!(
        err.to_string(),
        format!("container at offset 0x0: entry at {ptx:#x} claims 4096 payload bytes but only {remaining} remain")
    );
    assert_eq!(err.offset, ptx as u64);
    let err = parse_err(&patched(&unit, ptx + 8, &u64::MAX.to_le_bytes()));
    assert!(matches!(err.kind, ErrorKind::EntryOverrun { claimed: u64::MAX, .. }));
    // Header size: below 64, or past the container.
    let err = parse_err(&patched(&unit, ptx + 4, &16u32.to_le_bytes()));
    assert_eq!(err.kind, ErrorKind::BadHeaderSize { what: Structure::Entry, size: 16, min: 64 });
    let err = parse_err(&patched(&unit, ptx + 4, &u32::MAX.to_le_bytes()));
    assert!(matches!(err.kind, ErrorKind::EntryHeaderOverrun { header_size: 0xffff_ffff, .. }), "{err}");
    // Container size leaves less than an entry header.
    let err = parse_err(&patched(&unit, 8, &((ptx - 16 + 10) as u64).to_le_bytes()));
    assert_eq!(err.kind, ErrorKind::EntryHeaderOverrun { container: 0, header_size: 64, remaining: 10 });
    assert_eq!(
        err.to_string(),
        format!(
            "container at offset 0x0: entry at {ptx:#x} has a 64-byte header but only 10 bytes of the container remain"
        )
    );
    // Both compressions at once.
    let flags = parsed.entries[1].flags | fatbin::flags::LZ4;
    let err = parse_err(&patched(&unit, ptx + 40, &flags.to_le_bytes()));
    assert_eq!(err.kind, ErrorKind::ConflictingCompression { flags });
    // Compressed size: 0, or above the stored size.
    let err = parse_err(&patched(&unit, ptx + 16, &0u32.to_le_bytes()));
    assert!(matches!(err.kind, ErrorKind::BadCompressedSize { compression: Compression::Zstd, compressed: 0, .. }));
    let err = parse_err(&patched(&unit, ptx + 16, &u32::MAX.to_le_bytes()));
    assert!(matches!(err.kind, ErrorKind::BadCompressedSize { compressed: 0xffff_ffff, .. }), "{err}");
    // Object name and options outside the header.
    let err = parse_err(&patched(&unit, ptx + 32, &[60, 0, 0, 0, 40, 0, 0, 0]));
    assert_eq!(
        err.to_string(),
        format!(
            "fatbinary entry at offset {ptx:#x}: its object name (40 bytes at +60) lies outside its 80-byte header"
        )
    );
    let err = parse_err(&patched(&unit, ptx + 32, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    assert!(matches!(err.kind, ErrorKind::FieldOutsideHeader { field: "object name", .. }));
    let err = parse_err(&patched(&unit, ptx + 20, &78u32.to_le_bytes()));
    assert!(matches!(err.kind, ErrorKind::FieldOutsideHeader { field: "ptxas options descriptor", .. }));
    let err = parse_err(&patched(&unit, ptx + 68, &9u32.to_le_bytes()));
    assert!(matches!(err.kind, ErrorKind::FieldOutsideHeader { field: "ptxas options", len: 9, .. }), "{err}");
    // An unknown kind parses.
    let bytes = patched(&unit, ptx, &7u16.to_le_bytes());
    let other = fatbin::parse(&bytes).expect("parses");
    assert_eq!(other.entries[1].kind, Kind::Other(7));
    assert!(other.best_ptx(80).is_none());
}

#[test]
fn absurd_uncompressed_sizes() {
    let unit = unit_bytes();
    let parsed = fatbin::parse(&unit).expect("parses");
    let ptx = parsed.entries[1].offset;
    let size = parsed.entries[1].uncompressed_size;
    for (claimed, check) in [
        (u64::MAX, "TooLarge"),
        (fatbin::MAX_UNCOMPRESSED + 1, "TooLarge"),
        (size + 1, "WrongLength"),
        (size - 1, "Corrupt"),
        (0, "Corrupt"),
    ] {
        let bytes = patched(&unit, ptx + 56, &claimed.to_le_bytes());
        let parsed = fatbin::parse(&bytes).expect("parses: sizes are checked when decompressing");
        let entry = &parsed.entries[1];
        let err = entry.decompress().expect_err("wrong size");
        assert_eq!(err.offset, ptx as u64);
        match check {
            "TooLarge" => {
                assert_eq!(err.kind, ErrorKind::TooLarge { size: claimed, limit: fatbin::MAX_UNCOMPRESSED });
                assert_eq!(
                    err.to_string(),
                    format!(
                        "fatbinary entry at offset {ptx:#x}: uncompressed size {claimed} exceeds the limit of \
                         1073741824 bytes"
                    )
                );
            }
            "Corrupt" => assert_eq!(
                err.to_string(),
                format!(
                    "fatbinary entry at offset {ptx:#x}: ZSTD payload does not decompress: it holds more than the \
                     {claimed} bytes the header says"
                )
            ),
            _ => assert!(
                matches!(err.kind, ErrorKind::WrongLength { compression: Compression::Zstd, expected, actual: a } if expected == claimed && a == size),
                "{err}"
            ),
        }
        assert_eq!(entry.ptx_text().expect_err("wrong size"), err);
    }
    let bytes = patched(&unit, ptx + 56, &(LIMIT + 1).to_le_bytes());
    let parsed = fatbin::parse(&bytes).expect("parses");
    let err = parsed.entries[1].decompress_limited(LIMIT).expect_err("over the limit");
    assert_eq!(err.kind, ErrorKind::TooLarge { size: LIMIT + 1, limit: LIMIT });
}

#[test]
fn lz4_sizes_beyond_what_the_block_can_hold_are_refused_before_allocating() {
    let bytes = data("lz4.fatbin");
    let unit = common::unit(&bytes);
    let entry = unit.best_ptx(80).expect("PTX").clone();
    assert_eq!(entry.compression, Compression::Lz4);
    let mut lying = entry.clone();
    lying.uncompressed_size = fatbin::MAX_UNCOMPRESSED;
    let err = lying.decompress().expect_err("too large for the block");
    assert!(matches!(err.kind, ErrorKind::Corrupt { compression: Compression::Lz4, .. }), "{err}");
    assert!(err.to_string().contains("cannot hold 1073741824 uncompressed bytes"), "{err}");
    for size in [0, entry.uncompressed_size - 1, entry.uncompressed_size + 1] {
        let mut lying = entry.clone();
        lying.uncompressed_size = size;
        assert!(lying.decompress().is_err(), "size {size}");
    }
    let mut cut = entry.clone();
    cut.payload = &entry.payload[..entry.payload.len() / 2];
    assert!(cut.decompress().is_err());
}

#[test]
fn ptx_text_stops_at_the_first_nul_and_requires_utf8() {
    let bytes = data("none.fatbin");
    let unit = common::unit(&bytes);
    let entry = unit.best_ptx(80).expect("PTX");
    assert_eq!(entry.compression, Compression::None);
    let text = entry.ptx_text().expect("text");
    let mut payload = entry.payload.to_vec();
    payload[10] = 0;
    let mut cut = entry.clone();
    cut.payload = &payload;
    assert_eq!(cut.ptx_text().expect("text"), text[..10]);
    let mut payload = entry.payload.to_vec();
    payload[20] = 0xff;
    let mut bad = entry.clone();
    bad.payload = &payload;
    let err = bad.ptx_text().expect_err("not UTF-8");
    assert_eq!(err.kind, ErrorKind::NotText { at: 20 });
    assert!(err.to_string().ends_with("its PTX is not UTF-8 text (byte 20 of the text)"), "{err}");
    let sass = &unit.entries[0];
    let err = sass.ptx_text().expect_err("SASS");
    assert_eq!(err.kind, ErrorKind::NotPtx { kind: Kind::Elf });
}

#[test]
fn wrapper_from_bytes() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&fatbin::WRAPPER_MAGIC.to_le_bytes());
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend_from_slice(&0x1234u64.to_le_bytes());
    bytes.extend_from_slice(&0x5678u64.to_le_bytes());
    bytes.extend_from_slice(b"more bytes after it");
    let w = fatbin::Wrapper::from_bytes(&bytes).expect("valid");
    assert_eq!(w, fatbin::Wrapper { version: 2, data: 0x1234, prelinked: 0x5678 });
    for n in 0..fatbin::Wrapper::SIZE {
        let err = fatbin::Wrapper::from_bytes(&bytes[..n]).expect_err("short");
        assert_eq!(err.to_string(), format!("fatbinary wrapper at offset 0x0: needs 24 bytes but only {n} remain"));
    }
    for version in [0u32, 3, u32::MAX] {
        let err = fatbin::Wrapper::from_bytes(&patched(&bytes, 4, &version.to_le_bytes())).expect_err("version");
        assert_eq!(err.kind, ErrorKind::UnsupportedVersion { what: Structure::Wrapper, version });
    }
    let err = fatbin::Wrapper::from_bytes(&patched(&bytes, 0, &fatbin::CONTAINER_MAGIC.to_le_bytes()))
        .expect_err("a container is not a wrapper");
    assert_eq!(err.to_string(), "fatbinary wrapper at offset 0x0: magic number is 0xba55ed50, not 0x466243b1");
}

#[test]
fn garbage_between_containers_is_an_error_at_its_offset() {
    let bytes = data("zstd.fatbin");
    let mut mutated = bytes.clone();
    // The device-link container ends at 0x5e8; insert 8 NULs (skipped) then garbage.
    let mut padded = mutated[..0x5e8].to_vec();
    padded.extend_from_slice(&[0; 8]);
    padded.extend_from_slice(&mutated[0x5e8..]);
    let all: Vec<_> = fatbin::containers(&padded).collect::<Result<_, _>>().expect("NULs are skipped");
    assert_eq!(all[1].0, 0x5f0);
    mutated[0x5e8] = 1;
    let found: Vec<_> = fatbin::containers(&mutated).collect();
    assert_eq!(found.len(), 2);
    let err = found[1].as_ref().expect_err("garbage");
    assert_eq!(err.offset, 0x5e8);
    assert!(matches!(err.kind, ErrorKind::BadMagic { what: Structure::Container, .. }));
}
