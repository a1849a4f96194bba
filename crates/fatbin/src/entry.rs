//! One entry of a container: its header fields, its payload, decompression and the PTX text.

use std::borrow::Cow;
use std::fmt;

use crate::compress;
use crate::error::{Error, ErrorKind, Structure};
use crate::read::{u16_at, u32_at, u64_at};

/// The entry flag bits (the header's `u64` at +40). Bits this crate does not name are kept in
/// [`Entry::flags`].
pub mod flags {
    /// Compiled for a 64-bit host (set on every entry seen).
    pub const ADDRESS_64: u64 = 0x1;
    /// Built with device debug information (`nvcc -G`).
    pub const DEBUG: u64 = 0x2;
    /// Produced by CUDA (named by public readers; not seen from nvcc 13.5).
    pub const PRODUCER_CUDA: u64 = 0x4;
    /// Produced by OpenCL (named by public readers; not seen).
    pub const PRODUCER_OPENCL: u64 = 0x8;
    /// Linux host (set on every entry seen on Linux).
    pub const HOST_LINUX: u64 = 0x10;
    /// macOS host (named by public readers; not seen).
    pub const HOST_MAC: u64 = 0x20;
    /// Windows host (named by public readers; not seen).
    pub const HOST_WINDOWS: u64 = 0x40;
    /// The payload is one raw LZ4 block (`-Xfatbin -compress-mode=speed`).
    pub const LZ4: u64 = 0x2000;
    /// The payload is a ZSTD frame (nvcc 13's default for PTX; every payload with `-compress-mode=size`).
    pub const ZSTD: u64 = 0x8000;
    /// Set on LTO IR entries (`code=lto_80`); meaning unknown.
    pub const LTO_UNKNOWN: u64 = 0x10000;
}

/// What an entry holds (the header's `u16` at +0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// PTX text (1).
    Ptx,
    /// A CUDA ELF object with SASS machine code for one `sm_` architecture (2).
    Elf,
    /// NVVM IR for link-time optimization, from `-rdc=true -gencode arch=compute_80,code=lto_80` (8).
    LtoIr,
    /// Any other kind.
    Other(u16),
}

impl Kind {
    pub(crate) fn from_raw(raw: u16) -> Kind {
        match raw {
            1 => Kind::Ptx,
            2 => Kind::Elf,
            8 => Kind::LtoIr,
            other => Kind::Other(other),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Ptx => f.write_str("PTX"),
            Kind::Elf => f.write_str("SASS (a CUDA ELF object)"),
            Kind::LtoIr => f.write_str("LTO IR"),
            Kind::Other(raw) => write!(f, "an entry of unknown kind {raw}"),
        }
    }
}

/// How an entry's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// As is (padded with NULs to a multiple of 8 bytes).
    None,
    /// One raw LZ4 block, no frame ([`flags::LZ4`]).
    Lz4,
    /// ZSTD frames ([`flags::ZSTD`]).
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "uncompressed",
            Compression::Lz4 => "LZ4",
            Compression::Zstd => "ZSTD",
        })
    }
}

/// The largest uncompressed size [`Entry::decompress`] accepts: 1 GiB.
pub const MAX_UNCOMPRESSED: u64 = 1 << 30;

/// The fixed part of an entry header: every field this crate reads lies in its first 64 bytes.
pub(crate) const MIN_HEADER: u64 = 64;

/// One entry of a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// What the payload holds.
    pub kind: Kind,
    /// The architecture: `sm_XX` for SASS, `compute_XX` for PTX (80 for both `sm_80` and `compute_80`).
    pub arch: u32,
    /// The header's version pair (+26 major, +24 minor): the PTX ISA version for PTX (9.5 from nvcc 13.5),
    /// 1.8 for SASS.
    pub major: u16,
    /// See [`Entry::major`].
    pub minor: u16,
    /// All flag bits ([`flags`]).
    pub flags: u64,
    /// How [`Entry::payload`] is stored.
    pub compression: Compression,
    /// The payload as stored: the compressed bytes of a compressed entry (its padding cut off), the whole
    /// stored payload otherwise (PTX text keeps its NUL padding).
    pub payload: &'a [u8],
    /// The size of the payload once decompressed (the payload's length for an uncompressed entry).
    pub uncompressed_size: u64,
    /// Offset of the entry header within the bytes given to [`crate::parse`].
    pub offset: usize,
    /// The object name (nvcc writes the source file name with `-G`), NULs at its end cut off.
    pub obj_name: Option<&'a [u8]>,
    /// The ptxas options recorded for a PTX entry (e.g. `--compile-only` in `-rdc` builds), NULs at its end
    /// cut off.
    pub ptxas_options: Option<&'a [u8]>,
}

impl<'a> Entry<'a> {
    /// Reads the entry whose header starts at `at` in `bytes`, inside the container that starts at
    /// `container` and ends (exclusive) at `end`. Returns the entry and the offset of the next one.
    pub(crate) fn parse(bytes: &'a [u8], at: usize, container: usize, end: usize) -> Result<(Entry<'a>, usize), Error> {
        let err = |kind| Error::new(at as u64, kind);
        let remaining = end.saturating_sub(at) as u64;
        let overrun =
            |header_size| err(ErrorKind::EntryHeaderOverrun { container: container as u64, header_size, remaining });
        if remaining < MIN_HEADER {
            return Err(overrun(MIN_HEADER));
        }
        let rest = bytes.get(at..end).unwrap_or_default();
        let header_size = u64::from(u32_at(rest, 4));
        if header_size < MIN_HEADER {
            return Err(err(ErrorKind::BadHeaderSize { what: Structure::Entry, size: header_size, min: MIN_HEADER }));
        }
        if header_size > remaining {
            return Err(overrun(header_size));
        }
        let stored = u64_at(rest, 8);
        let after_header = remaining - header_size;
        if stored > after_header {
            return Err(err(ErrorKind::EntryOverrun {
                container: container as u64,
                claimed: stored,
                remaining: after_header,
            }));
        }
        // Both fit in `remaining`, itself at most `bytes.len()`.
        let (header_size, stored) = (header_size as usize, stored as usize);
        let header = &rest[..header_size];
        let flags = u64_at(header, 40);
        let compression = match (flags & flags::LZ4 != 0, flags & flags::ZSTD != 0) {
            (false, false) => Compression::None,
            (true, false) => Compression::Lz4,
            (false, true) => Compression::Zstd,
            (true, true) => return Err(err(ErrorKind::ConflictingCompression { flags })),
        };
        let stored_payload = &rest[header_size..header_size + stored];
        let (payload, uncompressed_size) = match compression {
            Compression::None => (stored_payload, stored as u64),
            Compression::Lz4 | Compression::Zstd => {
                let compressed = u64::from(u32_at(header, 16));
                if compressed == 0 || compressed > stored as u64 {
                    return Err(err(ErrorKind::BadCompressedSize { compression, compressed, stored: stored as u64 }));
                }
                (&stored_payload[..compressed as usize], u64_at(header, 56))
            }
        };
        let name_start = u32_at(header, 32);
        let name_len = u32_at(header, 36);
        let obj_name = field(header, "object name", name_start, name_len).map_err(err)?;
        let options_at = u32_at(header, 20);
        let ptxas_options = if options_at == 0 {
            None
        } else {
            // A pair {u32 offset, u32 length} at `options_at`, both within the header.
            let pair = span(header, "ptxas options descriptor", options_at, 8).map_err(err)?;
            field(header, "ptxas options", u32_at(pair, 0), u32_at(pair, 4)).map_err(err)?
        };
        let entry = Entry {
            kind: Kind::from_raw(u16_at(header, 0)),
            arch: u32_at(header, 28),
            major: u16_at(header, 26),
            minor: u16_at(header, 24),
            flags,
            compression,
            payload,
            uncompressed_size,
            offset: at,
            obj_name,
            ptxas_options,
        };
        Ok((entry, at + header_size + stored))
    }

    /// Whether the entry carries device debug information (`nvcc -G`, [`flags::DEBUG`]).
    pub fn is_debug(&self) -> bool {
        self.flags & flags::DEBUG != 0
    }

    /// The object name as text (invalid UTF-8 replaced).
    pub fn obj_name_lossy(&self) -> Option<Cow<'a, str>> {
        self.obj_name.map(String::from_utf8_lossy)
    }

    /// The payload, decompressed, at most [`MAX_UNCOMPRESSED`] bytes.
    pub fn decompress(&self) -> Result<Cow<'a, [u8]>, Error> {
        self.decompress_limited(MAX_UNCOMPRESSED)
    }

    /// The payload, decompressed, refusing an uncompressed size above `limit` bytes before decompressing
    /// anything. The output must be exactly [`Entry::uncompressed_size`] bytes long.
    pub fn decompress_limited(&self, limit: u64) -> Result<Cow<'a, [u8]>, Error> {
        let at = self.offset as u64;
        if self.uncompressed_size > limit {
            return Err(Error::new(at, ErrorKind::TooLarge { size: self.uncompressed_size, limit }));
        }
        match self.compression {
            Compression::None => Ok(Cow::Borrowed(self.payload)),
            Compression::Lz4 => compress::lz4(self.payload, self.uncompressed_size).map(Cow::Owned),
            Compression::Zstd => compress::zstd(self.payload, self.uncompressed_size).map(Cow::Owned),
        }
        .map_err(|kind| match kind {
            // nvcc 13.5 flags LTO IR as ZSTD-compressed but stores bytes without the ZSTD magic that look
            // random: obscured.
            ErrorKind::Corrupt { compression, .. } if self.kind == Kind::LtoIr => {
                Error::new(at, ErrorKind::Obscured { kind: self.kind, compression })
            }
            other => Error::new(at, other),
        })
    }

    /// The PTX text: decompressed, cut at its first NUL (the driver reads PTX as a C string, and nvcc pads
    /// it with NULs), and UTF-8.
    pub fn ptx_text(&self) -> Result<String, Error> {
        self.ptx_text_limited(MAX_UNCOMPRESSED)
    }

    /// [`Entry::ptx_text`] with the limit of [`Entry::decompress_limited`].
    pub fn ptx_text_limited(&self, limit: u64) -> Result<String, Error> {
        let at = self.offset as u64;
        if self.kind != Kind::Ptx {
            return Err(Error::new(at, ErrorKind::NotPtx { kind: self.kind }));
        }
        let bytes = self.decompress_limited(limit)?;
        let text = match bytes.iter().position(|&b| b == 0) {
            Some(nul) => &bytes[..nul],
            None => &bytes[..],
        };
        match std::str::from_utf8(text) {
            Ok(text) => Ok(text.to_string()),
            Err(e) => Err(Error::new(at, ErrorKind::NotText { at: e.valid_up_to() as u64 })),
        }
    }
}

/// The `len` bytes at `start` within `header`, NULs at their end cut off; `None` for an empty field.
fn field<'a>(header: &'a [u8], name: &'static str, start: u32, len: u32) -> Result<Option<&'a [u8]>, ErrorKind> {
    if len == 0 {
        return Ok(None);
    }
    let bytes = span(header, name, start, len)?;
    let trimmed = bytes.iter().rposition(|&b| b != 0).map_or(&bytes[..0], |last| &bytes[..=last]);
    Ok(Some(trimmed))
}

/// The `len` bytes at `start` within `header`.
fn span<'a>(header: &'a [u8], name: &'static str, start: u32, len: u32) -> Result<&'a [u8], ErrorKind> {
    let (start_u, len_u) = (start as usize, len as usize);
    start_u.checked_add(len_u).and_then(|end| header.get(start_u..end)).ok_or(ErrorKind::FieldOutsideHeader {
        field: name,
        start: u64::from(start),
        len: u64::from(len),
        header_size: header.len() as u64,
    })
}
