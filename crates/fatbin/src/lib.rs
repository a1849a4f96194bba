//! CUDA fatbinaries: the device code nvcc embeds in a host program, read from untrusted bytes.
//!
//! [`Wrapper::from_bytes`] reads the wrapper a program passes to `__cudaRegisterFatBinary`, [`parse`] the
//! container its data pointer addresses, [`Fatbin::best_ptx`] picks the PTX to run and
//! [`Entry::ptx_text`] decompresses it. [`elf::scan`] finds every container of a file on disk. Nothing
//! panics, loops without progress or allocates beyond what the input holds (decompression: beyond the
//! header's uncompressed size, capped at [`MAX_UNCOMPRESSED`]); every [`Error`] names the structure and
//! its byte offset.
//!
//! ```
//! // The .nv_fatbin section of a program built with -gencode for sm_75 and sm_80 (PTX and SASS each).
//! let section = include_bytes!("../tests/data/multi.fatbin");
//! // nvcc's device-link container comes first, then the unit's, the one its wrapper points at.
//! let (at, _) = fatbin::containers(section).nth(1).expect("two containers")?;
//! let unit = fatbin::parse(&section[at..])?;
//! assert_eq!(unit.ptx_archs(), [75, 80]);
//! let ptx = unit.best_ptx(86).expect("PTX");
//! assert_eq!(ptx.arch, 80);
//! assert!(ptx.ptx_text()?.contains(".target sm_80"));
//! # Ok::<(), fatbin::Error>(())
//! ```
//!
//! # The format (as nvcc 13.5 writes it on x86-64 Linux; all fields little-endian)
//!
//! **Wrapper** (`__fatBinC_Wrapper_t`, 24 bytes, one per translation unit in section `.nvFatBinSegment`):
//! `u32 magic 0x466243B1, u32 version, u64 data, u64 filename_or_fatbins`. Version 1: `data` points at the
//! unit's container; the last field (an offline file name) is 0. Version 2 (the device-link unit of an
//! `-rdc=true` program, registered once for the whole program): `data` points at the device-linked
//! container (SASS only, made by nvlink) and the last field at a NULL-terminated array in `.bss`, which
//! each unit's `__cudaRegisterLinkedBinary` fills with its own wrapper's `data` (a container address) before
//! the registration; the units' containers live in section `__nv_relfatbin`, their PTX compiled with
//! `--compile-only` and meant to be linked. In a PIE the pointers are `R_X86_64_RELATIVE` relocations.
//!
//! **Container** (8-byte aligned, in `.nv_fatbin` or `__nv_relfatbin`): `u32 magic 0xBA55ED50, u16 version
//! 1, u16 header size 16, u64 size of the entries that follow`; the entries fill exactly that size.
//!
//! **One wrapper, one container.** A wrapper's `data` addresses exactly one container, which holds every
//! target of its unit: `-gencode` for sm_75 and sm_80 gives one container of four entries (PTX and SASS for
//! each), a Thrust program one container of one SASS and one PTX entry (18 kernels). Several `.cu` files
//! give one wrapper and one container each; `-rdc=true` gives the version 2 wrapper above. Containers of
//! other units follow each other back to back in the section, so a reader must stop at the container's
//! size ([`parse`] does; [`containers`] walks a whole section). nvcc 13 also emits a device-link container
//! (SASS only, no kernels) into `.nv_fatbin` of every program built without `-rdc`, which no wrapper
//! registers: it comes first in the section, before the units' containers.
//!
//! **Entry** (header of 64 bytes or more, payload right after it):
//!
//! | offset | field |
//! | --- | --- |
//! | +0 `u16` | kind: 1 PTX, 2 ELF (SASS), 8 LTO IR ([`Kind`]) |
//! | +2 `u16` | 0x0101 |
//! | +4 `u32` | header size: 64 (SASS), 72 (SASS with `-G`), 80 (PTX), 96 (PTX with options), 120, 128 |
//! | +8 `u64` | payload size as stored, padded to 8 bytes; the next entry follows the payload |
//! | +16 `u32` | compressed size (0 when uncompressed; may be below the stored size) |
//! | +20 `u32` | offset of the ptxas options descriptor in the header (PTX and LTO IR; 0 for SASS): `{u32 offset, u32 length}` of the options text, relative to the entry |
//! | +24 `u16`, +26 `u16` | minor, major: the PTX ISA version for PTX (9.5), 1.8 for SASS, 1.67 for LTO IR |
//! | +28 `u32` | architecture (80 for `sm_80` / `compute_80`) |
//! | +32 `u32`, +36 `u32` | offset in the header and length of the object name (the source file, with `-G`), else 0 |
//! | +40 `u64` | flags ([`flags`]): 0x1 64-bit host, 0x2 debug (`-G`), 0x10 Linux host, 0x2000 LZ4, 0x8000 ZSTD, 0x10000 on LTO IR |
//! | +48 `u64` | 0, except for LTO IR |
//! | +56 `u64` | uncompressed size (0 when uncompressed) |
//!
//! **Compression.** 0x2000 (`-Xfatbin -compress-mode=speed`): one raw LZ4 block (no frame) of exactly the
//! uncompressed size. 0x8000 (the default for PTX; for SASS too with `-compress-mode=size`, in `-rdc`
//! units and with `-G`): a ZSTD frame. `-compress-mode=none` or `-no-compress`: none. PTX is ASCII padded
//! with NULs, which [`Entry::ptx_text`] cuts at the first NUL as the driver does. LTO IR entries are flagged
//! ZSTD but their payload is no ZSTD frame (it looks random: obscured), so they do not decompress.

mod compress;
mod container;
pub mod elf;
mod entry;
mod error;
mod read;
mod wrapper;

pub use container::{containers, parse, Containers, Fatbin, CONTAINER_MAGIC, CONTAINER_VERSION};
pub use entry::{flags, Compression, Entry, Kind, MAX_UNCOMPRESSED};
pub use error::{Error, ErrorKind, Structure};
pub use wrapper::{Wrapper, WRAPPER_MAGIC};
