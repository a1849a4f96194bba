//! Device (global) memory: separate allocations with exact bounds.
//!
//! A device pointer is the host address of the allocation's bytes, so a native backend (the JIT) can
//! dereference it directly, while the emulator looks every access up and reports any byte outside an
//! allocation. Each allocation is 256-byte aligned (like `cudaMalloc`) and is its own mapping between
//! inaccessible guard pages ([`Guarded`]), so that an access past its end by native code faults instead of
//! landing in another allocation or the host's heap (up to the 256-byte rounding of its size).

use std::collections::BTreeMap;
use std::fmt;

use crate::guarded::Guarded;

/// Bytes of inaccessible memory before and after every allocation (address space only: nothing backs it).
pub const GUARD: usize = 1 << 20;
/// Alignment of every allocation, as `cudaMalloc` guarantees.
pub const ALIGN: usize = 256;

/// A device address.
pub type DevicePtr = u64;

/// Where an allocation's bytes live.
#[derive(Debug)]
enum Storage {
    /// Owned, between guard pages.
    Guarded(Guarded),
    /// Host memory the caller owns and registered (`cudaHostRegister`): no guards, never freed here.
    External { ptr: *mut u8, len: usize },
}

// SAFETY: an external region is registered by a caller who promises it stays valid until unregistered; like a
// `Guarded` buffer it is only reached through the `DeviceMemory` that holds it.
unsafe impl Send for Storage {}
// SAFETY: shared references only read.
unsafe impl Sync for Storage {}

impl Storage {
    fn as_ptr(&self) -> *const u8 {
        match self {
            Storage::Guarded(g) => g.as_ptr(),
            Storage::External { ptr, .. } => *ptr,
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Storage::Guarded(g) => g.as_slice(),
            // SAFETY: the registering caller promised `len` readable and writable bytes at `ptr`.
            Storage::External { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            Storage::Guarded(g) => g.as_mut_slice(),
            // SAFETY: as above, borrowed mutably through `self`.
            Storage::External { ptr, len } => unsafe { std::slice::from_raw_parts_mut(*ptr, *len) },
        }
    }
}

/// One allocation.
#[derive(Debug)]
pub struct Allocation {
    /// The bytes, between guard pages (or registered host memory).
    storage: Storage,
    pub size: u64,
    /// What the allocation is for (an argument, a module variable), for error messages.
    pub label: String,
    pub read_only: bool,
    /// Whether kernels may access it at all (host memory of a pool that gave the device no access may not:
    /// `cudaMemPoolSetAccess`). Kernels do not see an allocation without it: the checking engines report an
    /// access as out of bounds.
    pub device_access: bool,
}

impl Allocation {
    pub fn base(&self) -> DevicePtr {
        self.storage.as_ptr() as u64
    }

    pub fn bytes(&self) -> &[u8] {
        &self.storage.as_slice()[..self.size as usize]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let size = self.size as usize;
        &mut self.storage.as_mut_slice()[..size]
    }
}

/// Why a memory access failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessError {
    /// No allocation holds all the accessed bytes.
    OutOfBounds { address: u64, size: u32, nearest: Option<String> },
    /// The address is not a multiple of the access size.
    Misaligned { address: u64, size: u32 },
    /// A store to read-only (`.const`) memory.
    ReadOnly { address: u64, label: String },
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessError::OutOfBounds { address, size, nearest } => {
                write!(f, "{size}-byte access at {address:#x} is outside every allocation")?;
                if let Some(n) = nearest {
                    write!(f, " ({n})")?;
                }
                Ok(())
            }
            AccessError::Misaligned { address, size } => {
                write!(f, "{size}-byte access at {address:#x} is not {size}-byte aligned")
            }
            AccessError::ReadOnly { address, label } => write!(f, "store to read-only {label} at {address:#x}"),
        }
    }
}

/// Describes an out-of-bounds access of `size` bytes at `address` by the allocations just below and above it
/// (each `(base, size, label)`), when one is within 1 MiB: "4 bytes past the end of `x` (...)".
pub fn describe_position(
    address: u64,
    size: u32,
    below: Option<(u64, u64, &str)>,
    above: Option<(u64, u64, &str)>,
) -> Option<String> {
    const NEAR: u64 = 1 << 20;
    match (below, above) {
        (Some((base, len, label)), _) if address - base < len + NEAR => Some(format!(
            "{} bytes past the end of {label} ({len} bytes at {base:#x})",
            (address + u64::from(size)).saturating_sub(base + len)
        )),
        (_, Some((base, len, label))) if base - address < NEAR => {
            Some(format!("{} bytes before {label} ({len} bytes at {base:#x})", base - address))
        }
        _ => None,
    }
}

/// One allocation, borrowed for a launch.
#[derive(Debug)]
pub struct Region<'a> {
    pub base: DevicePtr,
    pub bytes: &'a mut [u8],
    pub read_only: bool,
    pub label: &'a str,
}

/// All device allocations, by base address.
#[derive(Debug, Default)]
pub struct DeviceMemory {
    allocations: BTreeMap<DevicePtr, Allocation>,
    total: u64,
    /// Texture and surface objects over these allocations (see `texture.rs`).
    pub(crate) textures: crate::texture::Textures,
    /// What kernels' `malloc` allocates from, made on first need ([`DeviceMemory::ensure_heap`]).
    heap: Option<std::sync::Arc<crate::heap::DeviceHeap>>,
}

impl DeviceMemory {
    pub fn new() -> DeviceMemory {
        DeviceMemory::default()
    }

    /// Allocates `size` zeroed bytes (at least one, so every allocation has a distinct address).
    pub fn alloc(&mut self, size: u64, label: impl Into<String>) -> DevicePtr {
        let storage = Storage::Guarded(Guarded::new(size.max(1) as usize, ALIGN, GUARD, GUARD));
        let alloc = Allocation { storage, size, label: label.into(), read_only: false, device_access: true };
        let base = alloc.base();
        self.total += size;
        self.allocations.insert(base, alloc);
        base
    }

    /// Allocates and fills with `data`.
    pub fn alloc_bytes(&mut self, data: &[u8], label: impl Into<String>) -> DevicePtr {
        let ptr = self.alloc(data.len() as u64, label);
        if let Some(a) = self.allocations.get_mut(&ptr) {
            a.bytes_mut().copy_from_slice(data);
        }
        ptr
    }

    /// Makes `len` bytes of host memory at `ptr`, which the caller owns, device memory (`cudaHostRegister`):
    /// kernels may then access them, bounds-checked like any allocation. Fails when the range is empty or
    /// overlaps an allocation.
    ///
    /// # Safety
    /// `[ptr, ptr + len)` must stay readable and writable, and not be freed, until [`DeviceMemory::free`]
    /// removes it.
    pub unsafe fn register_external(&mut self, ptr: u64, len: u64, label: impl Into<String>) -> Result<(), String> {
        if len == 0 || ptr == 0 || ptr.checked_add(len).is_none() {
            return Err(format!("{len} bytes at {ptr:#x} are not a host range"));
        }
        let below = self.allocations.range(..ptr.saturating_add(len)).next_back();
        if let Some((_, a)) = below.filter(|(_, a)| a.base() + a.size.max(1) > ptr) {
            return Err(format!("the range overlaps `{}` ({} bytes at {:#x})", a.label, a.size, a.base()));
        }
        let storage = Storage::External { ptr: ptr as *mut u8, len: len as usize };
        let alloc = Allocation { storage, size: len, label: label.into(), read_only: false, device_access: true };
        self.allocations.insert(ptr, alloc);
        Ok(())
    }

    /// Whether the allocation at `ptr` is registered host memory (see [`DeviceMemory::register_external`]).
    pub fn is_external(&self, ptr: DevicePtr) -> bool {
        self.allocations.get(&ptr).is_some_and(|a| matches!(a.storage, Storage::External { .. }))
    }

    /// Frees an allocation by its base address (or forgets a registered host range); `false` if there is
    /// none.
    pub fn free(&mut self, ptr: DevicePtr) -> bool {
        match self.allocations.remove(&ptr) {
            Some(a) => {
                if !matches!(a.storage, Storage::External { .. }) {
                    self.total -= a.size;
                }
                true
            }
            None => false,
        }
    }

    pub fn set_read_only(&mut self, ptr: DevicePtr, read_only: bool) {
        if let Some(a) = self.allocations.get_mut(&ptr) {
            a.read_only = read_only;
        }
    }

    /// Whether kernels may access the allocation at `ptr` ([`Allocation::device_access`]).
    pub fn set_device_access(&mut self, ptr: DevicePtr, access: bool) {
        if let Some(a) = self.allocations.get_mut(&ptr) {
            a.device_access = access;
        }
    }

    /// The allocation holding `address` when kernels may not access it: its base, size and label.
    pub fn without_device_access(&self, address: u64) -> Option<(DevicePtr, u64, &str)> {
        let (_, a) = self.allocations.range(..=address).next_back()?;
        (!a.device_access && address < a.base() + a.size.max(1)).then(|| (a.base(), a.size, a.label.as_str()))
    }

    /// The device heap of `size` bytes (`cudaLimitMallocHeapSize`), allocated the first time a kernel that
    /// calls `malloc` or `free` runs. Its size is fixed from then on, as CUDA's.
    pub fn ensure_heap(&mut self, size: u64) -> std::sync::Arc<crate::heap::DeviceHeap> {
        if let Some(h) = &self.heap {
            return h.clone();
        }
        let base = self.alloc(size.max(crate::heap::HEAP_ALIGN), "the device heap (malloc in kernels)");
        let heap = std::sync::Arc::new(crate::heap::DeviceHeap::new(base, size));
        self.heap = Some(heap.clone());
        heap
    }

    /// The device heap, if a kernel has needed it.
    pub fn heap(&self) -> Option<std::sync::Arc<crate::heap::DeviceHeap>> {
        self.heap.clone()
    }

    /// Total bytes allocated.
    pub fn allocated(&self) -> u64 {
        self.total
    }

    pub fn allocation(&self, ptr: DevicePtr) -> Option<&Allocation> {
        self.allocations.get(&ptr)
    }

    pub fn allocations(&self) -> impl Iterator<Item = &Allocation> {
        self.allocations.values()
    }

    /// The allocation holding `[address, address + size)`, and the offset of `address` in it.
    pub fn find(&self, address: u64, size: u32) -> Result<(&Allocation, usize), AccessError> {
        if let Some((_, a)) = self.allocations.range(..=address).next_back() {
            let offset = address - a.base();
            if offset.checked_add(u64::from(size)).is_some_and(|end| end <= a.size) {
                return Ok((a, offset as usize));
            }
        }
        Err(AccessError::OutOfBounds { address, size, nearest: self.describe_near(address, size) })
    }

    fn find_mut(&mut self, address: u64, size: u32) -> Result<(&mut Allocation, usize), AccessError> {
        let nearest = self.describe_near(address, size);
        if let Some((_, a)) = self.allocations.range_mut(..=address).next_back() {
            let offset = address - a.base();
            if offset.checked_add(u64::from(size)).is_some_and(|end| end <= a.size) {
                return Ok((a, offset as usize));
            }
        }
        Err(AccessError::OutOfBounds { address, size, nearest })
    }

    /// Where an access lies relative to the nearest allocations, for error messages.
    pub fn describe_near(&self, address: u64, size: u32) -> Option<String> {
        let below = self.allocations.range(..=address).next_back().map(|(_, a)| (a.base(), a.size, a.label.as_str()));
        let above = self
            .allocations
            .range(address.saturating_add(1)..)
            .next()
            .map(|(_, a)| (a.base(), a.size, a.label.as_str()));
        describe_position(address, size, below, above)
    }

    /// Reads `out.len()` bytes at `address`.
    pub fn read(&self, address: u64, out: &mut [u8]) -> Result<(), AccessError> {
        let (a, off) = self.find(address, out.len() as u32)?;
        out.copy_from_slice(&a.bytes()[off..off + out.len()]);
        Ok(())
    }

    /// Writes `data` at `address`.
    pub fn write(&mut self, address: u64, data: &[u8]) -> Result<(), AccessError> {
        let (a, off) = self.find_mut(address, data.len() as u32)?;
        if a.read_only {
            return Err(AccessError::ReadOnly { address, label: a.label.clone() });
        }
        a.bytes_mut()[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// Writes without the read-only check (for loading module constants).
    pub fn write_initial(&mut self, address: u64, data: &[u8]) -> Result<(), AccessError> {
        let (a, off) = self.find_mut(address, data.len() as u32)?;
        a.bytes_mut()[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// The bytes of a whole allocation.
    pub fn bytes(&self, ptr: DevicePtr) -> Option<&[u8]> {
        self.allocations.get(&ptr).map(Allocation::bytes)
    }

    pub fn bytes_mut(&mut self, ptr: DevicePtr) -> Option<&mut [u8]> {
        self.allocations.get_mut(&ptr).map(Allocation::bytes_mut)
    }

    /// Every allocation as a mutable region, sorted by base address: an engine borrows them all for the
    /// length of a launch and indexes them without going through the map on every access.
    pub fn regions_mut(&mut self) -> Vec<Region<'_>> {
        self.allocations
            .values_mut()
            .filter(|a| a.device_access)
            .map(|a| {
                let base = a.base();
                let size = a.size as usize;
                Region { base, bytes: &mut a.storage.as_mut_slice()[..size], read_only: a.read_only, label: &a.label }
            })
            .collect()
    }

    /// A mutable view of `[address, address + len)` inside one allocation (the emulator's fast path).
    pub fn slice_mut(&mut self, address: u64, len: u32) -> Result<&mut [u8], AccessError> {
        let (a, off) = self.find_mut(address, len)?;
        if a.read_only {
            return Err(AccessError::ReadOnly { address, label: a.label.clone() });
        }
        Ok(&mut a.bytes_mut()[off..off + len as usize])
    }
}
