//! Fatbinaries in an ELF file on disk: an executable, a shared object or a relocatable object.
//!
//! Every container of the `.nv_fatbin` and `__nv_relfatbin` sections is read, whether or not a wrapper
//! points at it: nvcc 13 also leaves an unregistered device-link container (SASS only, no kernels) in
//! `.nv_fatbin` of every program built without `-rdc`. The wrappers of `.nvFatBinSegment` are read too, their
//! pointers resolved through the file's relocations (a PIE's pointers are `R_*_RELATIVE` dynamic
//! relocations, which a linker need not also write into the section), and matched with the containers, so a
//! caller can tell which containers a program registers.

use std::collections::HashMap;

use object::{Architecture, Object, ObjectKind, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget};

use crate::container::{containers, Fatbin};
use crate::error::{Error, ErrorKind};
use crate::wrapper::Wrapper;

/// The section a container was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// `.nv_fatbin`: the containers of translation units built without `-rdc`, and device-link containers.
    NvFatbin,
    /// `__nv_relfatbin`: the containers of translation units built with `-rdc=true`, to be linked.
    NvRelfatbin,
}

impl Section {
    /// The section's name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Section::NvFatbin => ".nv_fatbin",
            Section::NvRelfatbin => "__nv_relfatbin",
        }
    }
}

/// A container found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFatbin<'a> {
    /// The section it lies in.
    pub section: Section,
    /// Its file offset (entry offsets in [`FileFatbin::fatbin`] count from here).
    pub file_offset: u64,
    /// Its virtual address (in a relocatable object: its offset in its section).
    pub address: u64,
    /// The container.
    pub fatbin: Fatbin<'a>,
    /// The index in [`Scan::wrappers`] of the first wrapper whose data points here.
    pub wrapper: Option<usize>,
}

/// A wrapper found in `.nvFatBinSegment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileWrapper {
    /// Its file offset.
    pub file_offset: u64,
    /// Its virtual address.
    pub address: u64,
    /// The wrapper, its pointers as relocated (in a relocatable object: offsets in their target sections).
    pub wrapper: Wrapper,
    /// The index in [`Scan::fatbins`] of the container its data points at.
    pub fatbin: Option<usize>,
}

/// What [`scan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    /// Every container, in section then file order.
    pub fatbins: Vec<FileFatbin<'a>>,
    /// Every wrapper of `.nvFatBinSegment` (read in 64-bit files only).
    pub wrappers: Vec<FileWrapper>,
    /// Whether the file has a `.nvFatBinSegment` section at all.
    pub has_wrapper_section: bool,
}

/// Where a pointer points: a section (in a relocatable object, where every section starts at address 0)
/// and an address.
type Target = (Option<object::SectionIndex>, u64);

/// Reads the fatbinaries of an ELF file. A file that is not ELF is an error; one without CUDA sections gives
/// an empty [`Scan`]. Error offsets are file offsets.
pub fn scan(file: &[u8]) -> Result<Scan<'_>, Error> {
    let obj = object::File::parse(file).map_err(|e| Error::new(0, ErrorKind::NotElf { message: e.to_string() }))?;
    let relocatable = obj.kind() == ObjectKind::Relocatable;
    let mut fatbins = Vec::new();
    let mut keys: Vec<Target> = Vec::new();
    let mut wrappers = Vec::new();
    let mut has_wrapper_section = false;
    for section in obj.sections() {
        let which = match section.name() {
            Ok(".nv_fatbin") => Section::NvFatbin,
            Ok("__nv_relfatbin") => Section::NvRelfatbin,
            Ok(".nvFatBinSegment") => {
                has_wrapper_section = true;
                wrappers.extend(read_wrappers(&obj, &section, relocatable)?);
                continue;
            }
            _ => continue,
        };
        let (file_offset, data) = contents(&section, which.name())?;
        let in_section = relocatable.then(|| section.index());
        for found in containers(data) {
            let (at, fatbin) = found.map_err(|e| e.shifted(file_offset))?;
            let address = section.address().wrapping_add(at as u64);
            keys.push((in_section, address));
            fatbins.push(FileFatbin {
                section: which,
                file_offset: file_offset.saturating_add(at as u64),
                address,
                fatbin,
                wrapper: None,
            });
        }
    }
    let by_target: HashMap<Target, usize> = keys.iter().enumerate().rev().map(|(i, &key)| (key, i)).collect();
    let wrappers: Vec<FileWrapper> =
        wrappers.into_iter().map(|(target, w)| FileWrapper { fatbin: by_target.get(&target).copied(), ..w }).collect();
    for (i, w) in wrappers.iter().enumerate() {
        if let Some(f) = w.fatbin {
            fatbins[f].wrapper.get_or_insert(i);
        }
    }
    Ok(Scan { fatbins, wrappers, has_wrapper_section })
}

/// A section's file offset and contents (empty for a section without file contents).
fn contents<'a>(section: &object::Section<'a, '_>, name: &'static str) -> Result<(u64, &'a [u8]), Error> {
    let file_offset = section.file_range().map_or(0, |(offset, _)| offset);
    let data =
        section.data().map_err(|e| Error::new(file_offset, ErrorKind::BadSection { name, message: e.to_string() }))?;
    Ok((file_offset, data))
}

/// The wrappers of `.nvFatBinSegment`, each with the target of its data pointer.
fn read_wrappers(
    obj: &object::File<'_>,
    section: &object::Section<'_, '_>,
    relocatable: bool,
) -> Result<Vec<(Target, FileWrapper)>, Error> {
    let (file_offset, data) = contents(section, ".nvFatBinSegment")?;
    if !obj.is_64() || !obj.is_little_endian() {
        return Ok(Vec::new());
    }
    let pointers = relocated_pointers(obj, section, relocatable);
    let mut wrappers = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let rest = &data[at..];
        if rest.iter().all(|&b| b == 0) {
            break;
        }
        let mut wrapper = Wrapper::from_bytes(rest).map_err(|e| e.shifted(file_offset + at as u64))?;
        let address = section.address().wrapping_add(at as u64);
        let relocated = |field: u64, raw: u64| -> Target {
            pointers.get(&address.wrapping_add(field)).copied().unwrap_or((None, raw))
        };
        let target = relocated(8, wrapper.data);
        wrapper.data = target.1;
        wrapper.prelinked = relocated(16, wrapper.prelinked).1;
        wrappers.push((target, FileWrapper { file_offset: file_offset + at as u64, address, wrapper, fatbin: None }));
        at += Wrapper::SIZE;
    }
    Ok(wrappers)
}

/// The values relocations give to pointers, by the pointer's address: `R_*_RELATIVE` dynamic relocations
/// (executables and shared objects), or the section's own relocations (relocatable objects, where the value
/// is a symbol's offset in its section plus the addend).
fn relocated_pointers(
    obj: &object::File<'_>,
    section: &object::Section<'_, '_>,
    relocatable: bool,
) -> HashMap<u64, Target> {
    let mut pointers = HashMap::new();
    if relocatable {
        for (offset, reloc) in section.relocations() {
            let RelocationTarget::Symbol(index) = reloc.target() else { continue };
            let Ok(symbol) = obj.symbol_by_index(index) else { continue };
            let Some(target_section) = symbol.section_index() else { continue };
            let value = symbol.address().wrapping_add(reloc.addend() as u64);
            pointers.insert(section.address().wrapping_add(offset), (Some(target_section), value));
        }
        return pointers;
    }
    let relative = match obj.architecture() {
        Architecture::X86_64 => object::elf::R_X86_64_RELATIVE,
        Architecture::Aarch64 => object::elf::R_AARCH64_RELATIVE,
        Architecture::PowerPc64 => object::elf::R_PPC64_RELATIVE,
        _ => return pointers,
    };
    let range = section.address()..section.address().saturating_add(section.size());
    for (offset, reloc) in obj.dynamic_relocations().into_iter().flatten() {
        if range.contains(&offset)
            && reloc.flags() == (RelocationFlags::Elf { r_type: relative })
            && !reloc.has_implicit_addend()
        {
            pointers.insert(offset, (None, reloc.addend() as u64));
        }
    }
    pointers
}
