//! Memory between inaccessible guard pages.
//!
//! A native backend (the JIT) dereferences device addresses directly, without bounds checks unless asked. An
//! access just past the end of a device allocation, of a CTA's shared memory or of its threads' local memory
//! must then fault, so that the backend's fault handler can report it, rather than land silently in the host's
//! heap. Each [`Guarded`] buffer is its own mapping: inaccessible pages below and above, readable and writable
//! pages in between, and the usable bytes placed at the end of those so that the first byte past them is in
//! the guard (up to the alignment's rounding).

use std::fmt;

/// A zeroed, writable buffer with inaccessible memory around it.
pub struct Guarded {
    imp: imp::Mapping,
    /// Offset of the first usable byte from the start of the mapping's writable part.
    start: usize,
    len: usize,
}

// SAFETY: `Guarded` owns its mapping exclusively, like a `Vec<u8>` owns its buffer.
unsafe impl Send for Guarded {}
// SAFETY: shared references only read.
unsafe impl Sync for Guarded {}

impl fmt::Debug for Guarded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guarded").field("address", &self.as_ptr()).field("len", &self.len).finish()
    }
}

impl Guarded {
    /// `len` zeroed bytes whose first byte is a multiple of `align` (a power of two, at most a page), with at
    /// least `below` inaccessible bytes before them and `above` after.
    ///
    /// Where the system refuses the mapping (its limit on the number of mappings reached, say), the bytes are
    /// plain heap memory with the guards as unused padding: overruns are then not caught, as before this type.
    pub fn new(len: usize, align: usize, below: usize, above: usize) -> Guarded {
        assert!(align.is_power_of_two() && align <= imp::PAGE, "guarded memory: alignment {align}");
        let page = imp::PAGE;
        let round = |n: usize| n.div_ceil(page) * page;
        let padded = len.div_ceil(align) * align;
        let (below, body, above) = (round(below), round(padded), round(above));
        let imp = imp::Mapping::new(below, body, above);
        Guarded { imp, start: body - padded, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        // SAFETY: `start` is inside the writable part (or at its end when `len` is 0).
        unsafe { self.imp.body().add(self.start) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.imp.body().add(self.start) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `[start, start + len)` is readable, writable and initialized (zeroed by the mapping), and
        // borrowed through `self`.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), self.len) }
    }

    /// Zeroes the usable bytes.
    pub fn zero(&mut self) {
        self.as_mut_slice().fill(0);
    }
}

#[cfg(unix)]
mod imp {
    use std::io;

    /// Guard sizes are rounded to this (the smallest page size of the platforms we run on; a larger page only
    /// makes the guards larger).
    pub const PAGE: usize = 4096;

    pub struct Mapping {
        /// The mapping, and its writable part.
        ptr: *mut u8,
        len: usize,
        body: *mut u8,
        /// Heap memory instead of a mapping.
        fallback: Option<Box<[u8]>>,
    }

    impl Mapping {
        pub fn new(below: usize, body: usize, above: usize) -> Mapping {
            Mapping::map(below, body, above).unwrap_or_else(|_| {
                // Guards are not worth failing for: heap memory, page-aligned so that the caller's alignment
                // holds, without guards.
                let mut bytes = vec![0u8; body + PAGE].into_boxed_slice();
                let p = bytes.as_mut_ptr();
                let body = p.wrapping_add(p.align_offset(PAGE));
                Mapping { ptr: p, len: 0, body, fallback: Some(bytes) }
            })
        }

        fn map(below: usize, body: usize, above: usize) -> io::Result<Mapping> {
            let len = below + body + above;
            // SAFETY: a fresh anonymous mapping; no existing memory is touched. Reserved without backing
            // (`MAP_NORESERVE`): the guards never get any.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len.max(PAGE),
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let ptr = ptr as *mut u8;
            let map = Mapping { ptr, len: len.max(PAGE), body: ptr.wrapping_add(below), fallback: None };
            if body > 0 {
                // SAFETY: `[below, below + body)` lies inside the mapping just made.
                let r = unsafe {
                    libc::mprotect(map.ptr.add(below) as *mut libc::c_void, body, libc::PROT_READ | libc::PROT_WRITE)
                };
                if r != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(map)
        }

        pub fn body(&self) -> *mut u8 {
            self.body
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            if self.fallback.is_none() {
                // SAFETY: unmapping exactly the mapping this value owns.
                unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
            }
        }
    }
}

#[cfg(not(unix))]
mod imp {
    pub const PAGE: usize = 4096;

    /// Without `mmap`: plain heap memory, without guards.
    pub struct Mapping {
        bytes: Box<[u8]>,
    }

    impl Mapping {
        pub fn new(_below: usize, body: usize, _above: usize) -> Mapping {
            Mapping { bytes: vec![0; body + PAGE].into_boxed_slice() }
        }

        pub fn body(&self) -> *mut u8 {
            let p = self.bytes.as_ptr() as *mut u8;
            // Page-aligned, so the caller's alignment holds.
            p.wrapping_add(p.align_offset(PAGE))
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn usable_bytes_are_zeroed_aligned_and_end_at_the_guard() {
        for (len, align) in [(1, 1), (4, 4), (100, 16), (4096, 256), (5000, 256), (0, 16)] {
            let mut g = Guarded::new(len, align, 1 << 16, 1 << 20);
            assert_eq!(g.len(), len);
            assert_eq!(g.as_ptr() as usize % align, 0);
            assert!(g.as_slice().iter().all(|&b| b == 0));
            g.as_mut_slice().fill(7);
            assert!(g.as_slice().iter().all(|&b| b == 7));
            g.zero();
            assert!(g.as_slice().iter().all(|&b| b == 0));
            // The padding to the alignment is all that separates the bytes from the guard above.
            let end = g.as_ptr() as usize + len.div_ceil(align) * align;
            assert_eq!(end % imp::PAGE, 0, "len {len}, align {align}");
        }
    }

    #[test]
    fn many_buffers_come_and_go() {
        let bufs: Vec<Guarded> = (0..1000).map(|i| Guarded::new(i * 3, 8, 1 << 16, 1 << 20)).collect();
        let mut starts: Vec<usize> = bufs.iter().map(|b| b.as_ptr() as usize).collect();
        starts.sort_unstable();
        starts.dedup();
        assert_eq!(starts.len(), 1000);
    }
}
