//! Containers: the 16-byte header, the entries behind it, and the choice of PTX.

use crate::entry::{Entry, Kind};
use crate::error::{Error, ErrorKind, Structure};
use crate::read::{u16_at, u32_at, u64_at};

/// The magic number of a container header.
pub const CONTAINER_MAGIC: u32 = 0xBA55_ED50;
/// The container version this crate reads.
pub const CONTAINER_VERSION: u16 = 1;
const MIN_HEADER: u64 = 16;

/// One container and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fatbin<'a> {
    /// The entries, in file order.
    pub entries: Vec<Entry<'a>>,
    /// Bytes the container occupies: its header and its entries.
    pub len: usize,
}

/// Parses the one container at the start of `bytes`. `bytes` may extend past it (to the end of a loaded
/// segment, say); [`Fatbin::len`] says where it ends. What follows is not read: a wrapper's data pointer
/// addresses exactly one container, and the bytes after it belong to other translation units.
pub fn parse(bytes: &[u8]) -> Result<Fatbin<'_>, Error> {
    let err = |kind| Error::new(0, kind);
    let available = bytes.len() as u64;
    if available < MIN_HEADER {
        return Err(err(ErrorKind::Truncated { what: Structure::Container, needed: MIN_HEADER, available }));
    }
    let magic = u32_at(bytes, 0);
    if magic != CONTAINER_MAGIC {
        return Err(err(ErrorKind::BadMagic { what: Structure::Container, found: magic, expected: CONTAINER_MAGIC }));
    }
    let version = u16_at(bytes, 4);
    if version != CONTAINER_VERSION {
        return Err(err(ErrorKind::UnsupportedVersion { what: Structure::Container, version: version.into() }));
    }
    let header_size = u64::from(u16_at(bytes, 6));
    if header_size < MIN_HEADER {
        return Err(err(ErrorKind::BadHeaderSize { what: Structure::Container, size: header_size, min: MIN_HEADER }));
    }
    if header_size > available {
        return Err(err(ErrorKind::Truncated { what: Structure::Container, needed: header_size, available }));
    }
    let size = u64_at(bytes, 8);
    if size > available - header_size {
        return Err(err(ErrorKind::ContainerOverrun { claimed: size, available: available - header_size }));
    }
    // Both fit in `bytes`.
    let end = (header_size + size) as usize;
    let mut entries = Vec::new();
    let mut at = header_size as usize;
    while at < end {
        let (entry, next) = Entry::parse(bytes, at, 0, end)?;
        entries.push(entry);
        at = next;
    }
    Ok(Fatbin { entries, len: end })
}

/// The containers laid back to back in `bytes` (the contents of a `.nv_fatbin` or `__nv_relfatbin`
/// section), each with its offset. NUL bytes between containers (alignment) are skipped; anything else
/// that is not a container is an error, after which the iterator ends. Entry offsets of each
/// [`Fatbin`] count from its container's start.
pub fn containers(bytes: &[u8]) -> Containers<'_> {
    Containers { bytes, at: 0 }
}

/// The iterator of [`containers`].
#[derive(Debug, Clone)]
pub struct Containers<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Containers<'a> {
    type Item = Result<(usize, Fatbin<'a>), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.bytes.get(self.at..)?;
        let skip = rest.iter().position(|&b| b != 0)?;
        let at = self.at + skip;
        match parse(&self.bytes[at..]) {
            Ok(fatbin) => {
                // A container is at least its 16-byte header long, so this moves on.
                self.at = at + fatbin.len;
                Some(Ok((at, fatbin)))
            }
            Err(e) => {
                self.at = self.bytes.len();
                Some(Err(e.shifted(at as u64)))
            }
        }
    }
}

impl std::iter::FusedIterator for Containers<'_> {}

impl<'a> Fatbin<'a> {
    /// The PTX entry to run on a device of architecture `max_arch` (80 for sm_80): the PTX entry with the
    /// highest architecture not above it; if every PTX entry is for a newer architecture, the lowest (the
    /// caller may still try it); `None` when there is no PTX. Of entries with equal architectures, the first.
    pub fn best_ptx(&self, max_arch: u32) -> Option<&Entry<'a>> {
        let ptx = || self.entries.iter().filter(|e| e.kind == Kind::Ptx);
        let mut best: Option<&Entry<'a>> = None;
        for entry in ptx().filter(|e| e.arch <= max_arch) {
            if best.is_none_or(|b| entry.arch > b.arch) {
                best = Some(entry);
            }
        }
        best.or_else(|| {
            let mut lowest: Option<&Entry<'a>> = None;
            for entry in ptx() {
                if lowest.is_none_or(|l| entry.arch < l.arch) {
                    lowest = Some(entry);
                }
            }
            lowest
        })
    }

    /// The architectures of the entries of `kind`, ascending, each once.
    pub fn archs(&self, kind: Kind) -> Vec<u32> {
        let mut archs: Vec<u32> = self.entries.iter().filter(|e| e.kind == kind).map(|e| e.arch).collect();
        archs.sort_unstable();
        archs.dedup();
        archs
    }

    /// The `sm_` architectures with SASS, ascending.
    pub fn sass_archs(&self) -> Vec<u32> {
        self.archs(Kind::Elf)
    }

    /// The `compute_` architectures with PTX, ascending.
    pub fn ptx_archs(&self) -> Vec<u32> {
        self.archs(Kind::Ptx)
    }

    /// Whether any entry is PTX.
    pub fn has_ptx(&self) -> bool {
        self.entries.iter().any(|e| e.kind == Kind::Ptx)
    }

    /// Whether any entry is SASS.
    pub fn has_sass(&self) -> bool {
        self.entries.iter().any(|e| e.kind == Kind::Elf)
    }
}
