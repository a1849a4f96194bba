//! The host-side wrapper nvcc places in `.nvFatBinSegment` and passes to `__cudaRegisterFatBinary`.

use crate::error::{Error, ErrorKind, Structure};
use crate::read::{u32_at, u64_at};

/// The magic number of a wrapper (`FATBINC_MAGIC`).
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;

/// `__fatBinC_Wrapper_t` of a 64-bit host: `{u32 magic, u32 version, u64 data, u64 filename_or_fatbins}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrapper {
    /// 1: `data` is the translation unit's container. 2 (`-rdc=true`, the device-link unit): `data` is the
    /// device-linked container (SASS only in practice) and `prelinked` lists the units' containers.
    pub version: u32,
    /// Address of the container (one container: parse it with [`crate::parse`]).
    pub data: u64,
    /// Version 2: address of a NULL-terminated array of container addresses (in `.bss`, filled at run time
    /// by each unit's `__cudaRegisterLinkedBinary` before the registration). Version 1: an offline file
    /// name, 0 in practice.
    pub prelinked: u64,
}

impl Wrapper {
    /// Bytes a wrapper occupies.
    pub const SIZE: usize = 24;

    /// Reads the wrapper at the start of `bytes` (which may extend past it), checking magic and version.
    pub fn from_bytes(bytes: &[u8]) -> Result<Wrapper, Error> {
        let err = |kind| Error::new(0, kind);
        if bytes.len() < Self::SIZE {
            return Err(err(ErrorKind::Truncated {
                what: Structure::Wrapper,
                needed: Self::SIZE as u64,
                available: bytes.len() as u64,
            }));
        }
        let magic = u32_at(bytes, 0);
        if magic != WRAPPER_MAGIC {
            return Err(err(ErrorKind::BadMagic { what: Structure::Wrapper, found: magic, expected: WRAPPER_MAGIC }));
        }
        let version = u32_at(bytes, 4);
        if version != 1 && version != 2 {
            return Err(err(ErrorKind::UnsupportedVersion { what: Structure::Wrapper, version }));
        }
        Ok(Wrapper { version, data: u64_at(bytes, 8), prelinked: u64_at(bytes, 16) })
    }
}
