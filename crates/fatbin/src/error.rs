//! What went wrong, and at which byte offset.

use std::fmt;

use crate::entry::{Compression, Kind};

/// A structure of the format, named in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    /// The 24-byte `__fatBinC_Wrapper_t` of `.nvFatBinSegment`.
    Wrapper,
    /// The 16-byte header of a container (`0xBA55ED50`).
    Container,
    /// The header of an entry inside a container.
    Entry,
}

impl fmt::Display for Structure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Structure::Wrapper => "fatbinary wrapper",
            Structure::Container => "fatbinary container",
            Structure::Entry => "fatbinary entry",
        })
    }
}

/// An error reading a fatbinary: [`Error::offset`] says where, [`Error::kind`] what.
///
/// Offsets count bytes from the start of the slice given to the function that failed ([`crate::parse`],
/// [`crate::containers`], [`crate::Wrapper::from_bytes`]); [`crate::elf::scan`] reports file offsets. Errors
/// of [`crate::Entry::decompress`] and [`crate::Entry::ptx_text`] are at the entry's [`crate::Entry::offset`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Byte offset of the structure at fault (a header, or the entry whose payload is bad).
    pub offset: u64,
    /// What is wrong.
    pub kind: ErrorKind,
}

/// What is wrong; see [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Fewer bytes remain than the header needs.
    Truncated { what: Structure, needed: u64, available: u64 },
    /// The magic number is not the structure's.
    BadMagic { what: Structure, found: u32, expected: u32 },
    /// A version this crate does not know.
    UnsupportedVersion { what: Structure, version: u32 },
    /// A header size smaller than the fields this crate reads.
    BadHeaderSize { what: Structure, size: u64, min: u64 },
    /// The container claims more entry bytes than the input holds.
    ContainerOverrun { claimed: u64, available: u64 },
    /// An entry's header runs past the end of its container (at offset `container`).
    EntryHeaderOverrun { container: u64, header_size: u64, remaining: u64 },
    /// An entry's payload runs past the end of its container (at offset `container`).
    EntryOverrun { container: u64, claimed: u64, remaining: u64 },
    /// Both compression flags are set.
    ConflictingCompression { flags: u64 },
    /// A compressed entry whose compressed size is 0 or larger than the payload stored.
    BadCompressedSize { compression: Compression, compressed: u64, stored: u64 },
    /// The object name or ptxas options named by the header lie outside it.
    FieldOutsideHeader { field: &'static str, start: u64, len: u64, header_size: u64 },
    /// The uncompressed size is above the caller's limit.
    TooLarge { size: u64, limit: u64 },
    /// The compressed payload does not decompress.
    Corrupt { compression: Compression, message: String },
    /// The payload of an entry of `kind` does not decompress, as expected: nvcc obscures it (LTO IR).
    Obscured { kind: Kind, compression: Compression },
    /// The payload decompressed to a length other than the header's uncompressed size.
    WrongLength { compression: Compression, expected: u64, actual: u64 },
    /// [`crate::Entry::ptx_text`] on an entry that is not PTX.
    NotPtx { kind: Kind },
    /// The PTX is not UTF-8; `at` is the offset of the first bad byte in the uncompressed text.
    NotText { at: u64 },
    /// [`crate::elf::scan`]: the file is not an ELF object this crate reads.
    NotElf { message: String },
    /// [`crate::elf::scan`]: a section's contents cannot be read.
    BadSection { name: &'static str, message: String },
}

impl Error {
    pub(crate) fn new(offset: u64, kind: ErrorKind) -> Error {
        Error { offset, kind }
    }

    /// The same error with its offsets (its own and a container's) moved on by `base`.
    pub(crate) fn shifted(mut self, base: u64) -> Error {
        self.offset = self.offset.saturating_add(base);
        match &mut self.kind {
            ErrorKind::EntryHeaderOverrun { container, .. } | ErrorKind::EntryOverrun { container, .. } => {
                *container = container.saturating_add(base)
            }
            _ => {}
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            ErrorKind::Truncated { what, needed, available } => {
                write!(f, "{what} at offset {at:#x}: needs {needed} bytes but only {available} remain")
            }
            ErrorKind::BadMagic { what, found, expected } => {
                write!(f, "{what} at offset {at:#x}: magic number is {found:#010x}, not {expected:#010x}")
            }
            ErrorKind::UnsupportedVersion { what, version } => {
                write!(f, "{what} at offset {at:#x}: unsupported version {version}")
            }
            ErrorKind::BadHeaderSize { what, size, min } => {
                write!(f, "{what} at offset {at:#x}: header size {size} is below the minimum of {min}")
            }
            ErrorKind::ContainerOverrun { claimed, available } => write!(
                f,
                "fatbinary container at offset {at:#x}: claims {claimed} bytes of entries but only {available} remain"
            ),
            ErrorKind::EntryHeaderOverrun { container, header_size, remaining } => write!(
                f,
                "container at offset {container:#x}: entry at {at:#x} has a {header_size}-byte header but only \
                 {remaining} bytes of the container remain"
            ),
            ErrorKind::EntryOverrun { container, claimed, remaining } => write!(
                f,
                "container at offset {container:#x}: entry at {at:#x} claims {claimed} payload bytes but only \
                 {remaining} remain"
            ),
            ErrorKind::ConflictingCompression { flags } => write!(
                f,
                "fatbinary entry at offset {at:#x}: flags {flags:#x} mark the payload both LZ4- and ZSTD-compressed"
            ),
            ErrorKind::BadCompressedSize { compression, compressed, stored } => write!(
                f,
                "fatbinary entry at offset {at:#x}: {compression} compressed size {compressed} does not fit its \
                 {stored} stored payload bytes"
            ),
            ErrorKind::FieldOutsideHeader { field, start, len, header_size } => write!(
                f,
                "fatbinary entry at offset {at:#x}: its {field} ({len} bytes at +{start}) lies outside its \
                 {header_size}-byte header"
            ),
            ErrorKind::TooLarge { size, limit } => write!(
                f,
                "fatbinary entry at offset {at:#x}: uncompressed size {size} exceeds the limit of {limit} bytes"
            ),
            ErrorKind::Corrupt { compression, message } => {
                write!(f, "fatbinary entry at offset {at:#x}: {compression} payload does not decompress: {message}")
            }
            ErrorKind::Obscured { kind, compression } => write!(
                f,
                "fatbinary entry at offset {at:#x}: holds {kind} marked {compression}-compressed, but nvcc \
                 obscures such payloads: they cannot be read"
            ),
            ErrorKind::WrongLength { compression, expected, actual } => write!(
                f,
                "fatbinary entry at offset {at:#x}: {compression} payload decompressed to {actual} bytes, \
                 the header says {expected}"
            ),
            ErrorKind::NotPtx { kind } => write!(f, "fatbinary entry at offset {at:#x}: holds {kind}, not PTX"),
            ErrorKind::NotText { at: byte } => {
                write!(f, "fatbinary entry at offset {at:#x}: its PTX is not UTF-8 text (byte {byte} of the text)")
            }
            ErrorKind::NotElf { message } => write!(f, "not an ELF file this reader supports: {message}"),
            ErrorKind::BadSection { name, message } => {
                write!(f, "section {name} at offset {at:#x} cannot be read: {message}")
            }
        }
    }
}

impl std::error::Error for Error {}
