//! The memory spaces of one launch as the emulator resolves them: global (device allocations, borrowed for
//! the launch), shared (one buffer per CTA), local (one growing stack per thread), and the kernel's
//! parameter buffer. Generic addresses of shared, local and parameter memory live in address windows no
//! device pointer uses.

use device::{AccessError, Region};

use program::{Space, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};

/// Global memory: every device allocation, sorted by base address.
pub struct GlobalMem<'a> {
    regions: Vec<Region<'a>>,
    last: usize,
}

impl<'a> GlobalMem<'a> {
    pub fn new(mut regions: Vec<Region<'a>>) -> GlobalMem<'a> {
        regions.sort_by_key(|r| r.base);
        GlobalMem { regions, last: 0 }
    }

    #[inline]
    fn locate(&mut self, address: u64, size: u32) -> Option<(usize, usize)> {
        let fits = |r: &Region<'_>| address >= r.base && address - r.base + u64::from(size) <= r.bytes.len() as u64;
        if let Some(r) = self.regions.get(self.last) {
            if fits(r) {
                return Some((self.last, (address - r.base) as usize));
            }
        }
        let i = self.regions.partition_point(|r| r.base <= address).checked_sub(1)?;
        let r = &self.regions[i];
        if fits(r) {
            self.last = i;
            Some((i, (address - r.base) as usize))
        } else {
            None
        }
    }

    fn out_of_bounds(&self, address: u64, size: u32) -> AccessError {
        let i = self.regions.partition_point(|r| r.base <= address);
        fn describe<'r>(r: &'r Region<'_>) -> (u64, u64, &'r str) {
            (r.base, r.bytes.len() as u64, r.label)
        }
        let below = i.checked_sub(1).map(|k| describe(&self.regions[k]));
        let above = self.regions.get(i).map(describe);
        AccessError::OutOfBounds {
            address,
            size,
            nearest: device::memory::describe_position(address, size, below, above),
        }
    }

    /// Reads `size` (1, 2, 4, 8) bytes little-endian.
    #[inline]
    pub fn read(&mut self, address: u64, size: u32) -> Result<u64, AccessError> {
        match self.locate(address, size) {
            Some((i, off)) => Ok(load_le(&self.regions[i].bytes[off..off + size as usize])),
            None => Err(self.out_of_bounds(address, size)),
        }
    }

    #[inline]
    pub fn write(&mut self, address: u64, size: u32, value: u64) -> Result<(), AccessError> {
        match self.locate(address, size) {
            Some((i, off)) => {
                let r = &mut self.regions[i];
                if r.read_only {
                    return Err(AccessError::ReadOnly { address, label: r.label.to_string() });
                }
                store_le(&mut r.bytes[off..off + size as usize], value);
                Ok(())
            }
            None => Err(self.out_of_bounds(address, size)),
        }
    }

    /// Whether `address` is inside some allocation (for `isspacep.global`).
    pub fn contains(&mut self, address: u64) -> bool {
        self.locate(address, 1).is_some()
    }

    /// Whether `address` is inside a read-only (`.const`) allocation (for `isspacep.const`).
    pub fn is_const(&mut self, address: u64) -> bool {
        self.locate(address, 1).is_some_and(|(i, _)| self.regions[i].read_only)
    }
}

#[inline]
pub fn load_le(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(buf)
}

#[inline]
pub fn store_le(bytes: &mut [u8], value: u64) {
    let n = bytes.len();
    bytes.copy_from_slice(&value.to_le_bytes()[..n]);
}

/// A flat, bounded byte array (shared memory, one thread's local stack, the parameter buffer).
#[inline]
pub fn read_flat(bytes: &[u8], address: u64, size: u32) -> Option<u64> {
    let end = address.checked_add(u64::from(size))?;
    if end > bytes.len() as u64 {
        return None;
    }
    Some(load_le(&bytes[address as usize..end as usize]))
}

#[inline]
pub fn write_flat(bytes: &mut [u8], address: u64, size: u32, value: u64) -> Option<()> {
    let end = address.checked_add(u64::from(size))?;
    if end > bytes.len() as u64 {
        return None;
    }
    store_le(&mut bytes[address as usize..end as usize], value);
    Some(())
}

/// Splits a generic address into its space and the address within that space.
#[inline]
pub fn resolve_generic(address: u64) -> (Space, u64) {
    if address.wrapping_sub(SHARED_WINDOW) < WINDOW_SIZE {
        (Space::Shared, address - SHARED_WINDOW)
    } else if address.wrapping_sub(LOCAL_WINDOW) < WINDOW_SIZE {
        (Space::Local, address - LOCAL_WINDOW)
    } else if address.wrapping_sub(PARAM_WINDOW) < WINDOW_SIZE {
        (Space::Param, address - PARAM_WINDOW)
    } else {
        (Space::Global, address)
    }
}

/// The window a space's addresses take in generic addressing.
pub fn window(space: Space) -> u64 {
    match space {
        Space::Shared => SHARED_WINDOW,
        Space::Local => LOCAL_WINDOW,
        Space::Param => PARAM_WINDOW,
        _ => 0,
    }
}
