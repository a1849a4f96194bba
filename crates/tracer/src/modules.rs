//! Finding the guest's mapped objects and reading their ELF symbol tables.
//!
//! In QEMU user mode on an x86-64 host the guest's address space is the QEMU process's (guest_base is 0; the
//! tracer checks that the first translated block lies in a mapping of this process), so the guest's program
//! and libraries appear in `/proc/self/maps` next to QEMU's own. The mapping that contains a translated
//! address is the guest's. Symbols come from `.symtab` when present, else `.dynsym`; PLT stubs are named
//! after their relocation (`foo@plt`).

use std::collections::HashMap;
use std::sync::Arc;

use object::elf;
use object::read::elf::{ElfFile64, SectionHeader};
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

/// One line of `/proc/self/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEntry {
    pub start: u64,
    pub end: u64,
    pub exec: bool,
    pub offset: u64,
    pub inode: u64,
    pub path: String,
}

pub fn parse_maps(text: &str) -> Vec<MapEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let (Some(range), Some(perms), Some(off), Some(_dev), Some(inode)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let path = it.collect::<Vec<_>>().join(" ");
        let Some((a, b)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end), Ok(offset), Ok(inode)) =
            (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16), u64::from_str_radix(off, 16), inode.parse())
        else {
            continue;
        };
        out.push(MapEntry { start, end, exec: perms.as_bytes().get(2) == Some(&b'x'), offset, inode, path });
    }
    out
}

/// The file-backed object around `addr`: (lowest start, highest end, start of the offset-0 mapping, path).
pub fn object_at(maps: &[MapEntry], addr: u64) -> Option<(u64, u64, u64, String)> {
    let i = maps.iter().position(|m| m.start <= addr && addr < m.end)?;
    let m = &maps[i];
    if m.inode == 0 || !m.path.starts_with('/') {
        return Some((m.start, m.end, m.start, String::new()));
    }
    let same = |e: &MapEntry| e.inode == m.inode && e.path == m.path;
    let mut lo = i;
    while lo > 0 && same(&maps[lo - 1]) && maps[lo].offset > 0 {
        lo -= 1;
    }
    let mut hi = i;
    while hi + 1 < maps.len() && same(&maps[hi + 1]) {
        hi += 1;
    }
    let base = maps[lo..=hi].iter().find(|e| e.offset == 0).map_or(maps[lo].start, |e| e.start);
    Some((maps[lo].start, maps[hi].end, base, m.path.clone()))
}

/// A function symbol at its runtime address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSymbol {
    pub addr: u64,
    pub size: u64,
    /// Demangled (or PLT) name.
    pub name: String,
    /// The symbol-table name.
    pub mangled: String,
    pub plt: bool,
    /// Every name at this address (aliases), raw.
    pub aliases: Vec<String>,
}

/// An ELF file's functions and code, relocated to where it is mapped.
#[derive(Debug)]
pub struct LoadedElf {
    pub bias: u64,
    pub symbols: Vec<RawSymbol>,
    data: Arc<Vec<u8>>,
    /// Executable sections: (runtime address, size, file offset).
    code: Vec<(u64, u64, u64)>,
}

impl LoadedElf {
    /// Code bytes at runtime address `addr`, at most `len` bytes, from the file.
    pub fn code_at(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let &(start, size, off) = self.code.iter().find(|(s, n, _)| *s <= addr && addr < s + n)?;
        let skip = addr - start;
        let take = len.min(size - skip);
        let from = usize::try_from(off + skip).ok()?;
        self.data.get(from..from + take as usize)
    }
}

/// Demangles a C++ or Rust symbol; returns the input when it is neither.
pub fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            if let Ok(s) = sym.demangle(&cpp_demangle::DemangleOptions::default()) {
                return s;
            }
        }
    }
    name.to_string()
}

/// Strips an ELF symbol version (`memcpy@@GLIBC_2.14` → `memcpy`).
fn unversioned(name: &str) -> &str {
    name.split('@').next().unwrap_or(name)
}

/// Preference among aliases: fewer leading underscores, then global over weak over local, then shorter.
fn rank(name: &str, global: bool, weak: bool) -> (usize, u8, usize) {
    let underscores = name.bytes().take_while(|&b| b == b'_').count();
    let scope = if global && !weak {
        0
    } else if weak {
        1
    } else {
        2
    };
    (underscores, scope, name.len())
}

/// Reads the function symbols of the ELF file at `path` mapped with its offset-0 page at `base`.
pub fn load_elf(path: &str, base: u64) -> Result<LoadedElf, String> {
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let data = Arc::new(data);
    let file = object::File::parse(&data[..]).map_err(|e| format!("{path}: {e}"))?;
    let first_load = file.segments().map(|s| s.address()).min().unwrap_or(0);
    let bias = base.wrapping_sub(first_load & !0xfff);
    // address → (size, [(name, preference rank)])
    type Names = Vec<(String, (usize, u8, usize))>;
    let mut by_addr: HashMap<u64, (u64, Names)> = HashMap::new();
    let mut add_table = |syms: &mut dyn Iterator<Item = object::Symbol<'_, '_>>| {
        for s in syms {
            if !matches!(s.kind(), SymbolKind::Text) || s.is_undefined() || s.address() == 0 {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let name = unversioned(name).to_string();
            let r = rank(&name, s.is_global(), s.is_weak());
            let e = by_addr.entry(s.address()).or_insert((s.size(), Vec::new()));
            e.0 = e.0.max(s.size());
            if !e.1.iter().any(|(n, _)| *n == name) {
                e.1.push((name, r));
            }
        }
    };
    let has_symtab = file.symbols().next().is_some();
    if has_symtab {
        add_table(&mut file.symbols());
    }
    add_table(&mut file.dynamic_symbols());
    let mut symbols: Vec<RawSymbol> = by_addr
        .into_iter()
        .map(|(addr, (size, mut names))| {
            names.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
            let mangled = names[0].0.clone();
            RawSymbol {
                addr: addr.wrapping_add(bias),
                size,
                name: demangle(&mangled),
                mangled,
                plt: false,
                aliases: names.into_iter().map(|n| n.0).collect(),
            }
        })
        .collect();
    symbols.extend(plt_symbols(&data, bias));
    symbols.sort_by_key(|s| s.addr);
    let code = file
        .sections()
        .filter(|s| matches!(s.kind(), object::SectionKind::Text) && s.size() > 0)
        .filter_map(|s| s.file_range().map(|(off, size)| (s.address().wrapping_add(bias), size, off)))
        .collect();
    Ok(LoadedElf { bias, symbols, data, code })
}

/// Names the stubs of `.plt` / `.plt.sec` after the `R_X86_64_JUMP_SLOT` relocations of `.rela.plt`.
fn plt_symbols(data: &[u8], bias: u64) -> Vec<RawSymbol> {
    let Ok(f) = ElfFile64::<object::Endianness>::parse(data) else { return Vec::new() };
    let endian = f.endian();
    let sections = f.elf_section_table();
    let Ok(names) = (|| -> Result<Vec<(String, &elf::SectionHeader64<object::Endianness>)>, object::Error> {
        let mut v = Vec::new();
        for s in sections.iter() {
            let n = sections.section_name(endian, s)?;
            v.push((String::from_utf8_lossy(n).into_owned(), s));
        }
        Ok(v)
    })() else {
        return Vec::new();
    };
    let find = |n: &str| names.iter().find(|(name, _)| name == n).map(|(_, s)| *s);
    let (Some(rela), Some(plt)) = (find(".rela.plt"), find(".plt")) else { return Vec::new() };
    let (stub0, stride) = match find(".plt.sec") {
        Some(sec) => (sec.sh_addr(endian), 16),
        None => (plt.sh_addr(endian) + 16, 16),
    };
    let Ok(Some((relas, link))) = rela.rela(endian, data) else { return Vec::new() };
    let Ok(symtab) = sections.symbol_table_by_index(endian, data, link) else { return Vec::new() };
    let mut out = Vec::new();
    for (i, r) in relas.iter().enumerate() {
        if r.r_type(endian, false) != elf::R_X86_64_JUMP_SLOT {
            continue;
        }
        let idx = r.r_sym(endian, false);
        let Ok(sym) = symtab.symbol(object::SymbolIndex(idx as usize)) else { continue };
        let Ok(name) = symtab.symbol_name(endian, sym) else { continue };
        let name = unversioned(&String::from_utf8_lossy(name)).to_string();
        if name.is_empty() {
            continue;
        }
        let addr = stub0.wrapping_add(stride * i as u64).wrapping_add(bias);
        out.push(RawSymbol {
            addr,
            size: stride,
            name: format!("{}@plt", demangle(&name)),
            mangled: format!("{name}@plt"),
            plt: true,
            aliases: vec![format!("{name}@plt")],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_and_objects() {
        let text = "\
555555554000-555555556000 r--p 00000000 fe:00 42   /usr/bin/prog
555555556000-55555555a000 r-xp 00002000 fe:00 42   /usr/bin/prog
55555555a000-55555555c000 rw-p 00006000 fe:00 42   /usr/bin/prog
7ffff7fc0000-7ffff7fc2000 r-xp 00000000 00:00 0 
";
        let maps = parse_maps(text);
        assert_eq!(maps.len(), 4);
        assert!(maps[1].exec && !maps[0].exec);
        let (lo, hi, base, path) = object_at(&maps, 0x555555557000).unwrap();
        assert_eq!((lo, hi, base, path.as_str()), (0x555555554000, 0x55555555c000, 0x555555554000, "/usr/bin/prog"));
        assert_eq!(object_at(&maps, 0x7ffff7fc1000).unwrap().3, "");
        assert!(object_at(&maps, 0x1000).is_none());
    }

    #[test]
    fn demangles() {
        assert_eq!(
            demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)"
        );
        assert_eq!(demangle("main"), "main");
        assert_eq!(unversioned("memcpy@@GLIBC_2.14"), "memcpy");
    }

    #[test]
    fn reads_own_libc() {
        // The test binary is linked against libc; find it in our own maps and read its symbols.
        let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let libc = maps.iter().find(|m| m.path.contains("libc.so")).expect("libc mapped");
        let (_, _, base, path) = object_at(&maps, libc.start).unwrap();
        let elf = load_elf(&path, base).unwrap();
        assert!(elf.symbols.iter().any(|s| s.name == "pthread_mutex_lock"));
        assert!(elf.symbols.iter().any(|s| s.name == "qsort"));
    }
}
