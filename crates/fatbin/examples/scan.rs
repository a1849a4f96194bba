//! Lists the fatbinaries of ELF files: `cargo run -p fatbin --example scan -- FILE...`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("{path}: {e}");
                status = ExitCode::FAILURE;
                continue;
            }
        };
        let found = match fatbin::elf::scan(&bytes) {
            Ok(found) => found,
            Err(e) => {
                eprintln!("{path}: {e}");
                status = ExitCode::FAILURE;
                continue;
            }
        };
        println!("{path}: {} containers, {} wrappers", found.fatbins.len(), found.wrappers.len());
        for w in &found.wrappers {
            println!(
                "  wrapper at {:#x}: version {}, data {:#x}, prelinked {:#x}",
                w.file_offset, w.wrapper.version, w.wrapper.data, w.wrapper.prelinked
            );
        }
        for f in &found.fatbins {
            let registered = f.wrapper.map_or("no wrapper".to_string(), |w| format!("wrapper {w}"));
            println!("  {} container at {:#x} ({} bytes, {registered})", f.section.name(), f.file_offset, f.fatbin.len);
            for e in &f.fatbin.entries {
                let name = e.obj_name_lossy().map(|n| format!(" name {n:?}")).unwrap_or_default();
                let text = match e.kind {
                    fatbin::Kind::Ptx => match e.ptx_text() {
                        Ok(text) => format!(" {} lines", text.lines().count()),
                        Err(err) => format!(" {err}"),
                    },
                    _ => String::new(),
                };
                println!(
                    "    +{:#x} {} arch {} v{}.{} flags {:#x} {} {} -> {} bytes{name}{text}",
                    e.offset,
                    e.kind,
                    e.arch,
                    e.major,
                    e.minor,
                    e.flags,
                    e.compression,
                    e.payload.len(),
                    e.uncompressed_size
                );
            }
        }
    }
    status
}
