//! The device heap: what `malloc` and `free` in kernels allocate from (CUDA's `cudaLimitMallocHeapSize`,
//! 8 MiB by default). It is one device allocation, so both engines reach and bounds-check it as any other;
//! inside it, blocks are handed out first fit, 16-byte aligned, under a lock (the JIT's workers call in
//! concurrently).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::memory::DevicePtr;

/// Alignment of every block (CUDA guarantees 16 bytes).
pub const HEAP_ALIGN: u64 = 16;

/// The default heap size, as CUDA's.
pub const DEFAULT_HEAP_SIZE: u64 = 8 << 20;

#[derive(Debug)]
pub struct DeviceHeap {
    base: DevicePtr,
    size: u64,
    blocks: Mutex<Blocks>,
}

#[derive(Debug, Default)]
struct Blocks {
    /// Free ranges by offset, coalesced.
    free: BTreeMap<u64, u64>,
    /// Live blocks by offset.
    used: HashMap<u64, u64>,
}

impl DeviceHeap {
    /// A heap over the `size` bytes at `base` (an allocation of the caller's).
    pub fn new(base: DevicePtr, size: u64) -> DeviceHeap {
        let size = size / HEAP_ALIGN * HEAP_ALIGN;
        let mut blocks = Blocks::default();
        if size > 0 {
            blocks.free.insert(0, size);
        }
        DeviceHeap { base, size, blocks: Mutex::new(blocks) }
    }

    pub fn base(&self) -> DevicePtr {
        self.base
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// `malloc(size)`: a block's device address, or 0 (NULL) when none is free, as CUDA returns.
    pub fn malloc(&self, size: u64) -> DevicePtr {
        if size == 0 || size > self.size {
            return 0;
        }
        let need = size.div_ceil(HEAP_ALIGN) * HEAP_ALIGN;
        let mut b = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        let Some((&off, &len)) = b.free.iter().find(|(_, &len)| len >= need) else { return 0 };
        b.free.remove(&off);
        if len > need {
            b.free.insert(off + need, len - need);
        }
        b.used.insert(off, need);
        self.base + off
    }

    /// `free(ptr)`: returns the block; the null pointer is fine. A pointer `malloc` did not return is an
    /// error (CUDA's behaviour is undefined).
    pub fn free(&self, ptr: DevicePtr) -> Result<(), String> {
        if ptr == 0 {
            return Ok(());
        }
        let mut b = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        let off = ptr.wrapping_sub(self.base);
        let Some(len) = b.used.remove(&off) else {
            return Err(format!("free({ptr:#x}): not a block that device malloc returned (or freed twice)"));
        };
        // Coalesce with the free neighbours.
        let (mut start, mut end) = (off, off + len);
        if let Some((&prev, &plen)) = b.free.range(..off).next_back() {
            if prev + plen == off {
                b.free.remove(&prev);
                start = prev;
            }
        }
        if let Some(&nlen) = b.free.get(&end) {
            b.free.remove(&end);
            end += nlen;
        }
        b.free.insert(start, end - start);
        Ok(())
    }

    /// Bytes in live blocks.
    pub fn in_use(&self) -> u64 {
        self.blocks.lock().unwrap_or_else(|e| e.into_inner()).used.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_reused_and_coalesced() {
        let h = DeviceHeap::new(0x10000, 1024);
        let a = h.malloc(1);
        let b = h.malloc(100);
        let c = h.malloc(16);
        assert_eq!((a, b, c), (0x10000, 0x10010, 0x10080));
        assert_eq!(h.in_use(), 16 + 112 + 16);
        assert_eq!(h.malloc(2000), 0, "larger than the heap");
        assert_eq!(h.malloc(0), 0);
        h.free(b).unwrap();
        assert!(h.free(b).is_err(), "a double free is reported");
        assert!(h.free(0x10004).is_err(), "a pointer into a block is not one");
        assert_eq!(h.malloc(50), b, "first fit reuses the hole");
        h.free(a).unwrap();
        h.free(b).unwrap();
        h.free(c).unwrap();
        assert_eq!(h.in_use(), 0);
        assert_eq!(h.malloc(1024), 0x10000, "everything coalesced back into one block");
        assert_eq!(h.malloc(1), 0, "full");
        h.free(0).unwrap();
    }
}
