//! Executable memory for compiled code: mapped writable, filled, then made read-and-execute.

use std::io;

/// A block of machine code, unmapped when dropped.
#[derive(Debug)]
pub struct Code {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is immutable (read + execute) once built, so sharing it between threads is sound.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

impl Code {
    pub fn new(bytes: &[u8]) -> io::Result<Code> {
        let len = bytes.len().max(1).div_ceil(4096) * 4096;
        // SAFETY: an anonymous private mapping; checked for failure before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = ptr as *mut u8;
        // SAFETY: the mapping is `len >= bytes.len()` bytes, writable, and not aliased yet.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
        // SAFETY: `ptr..ptr+len` is our mapping.
        if unsafe { libc::mprotect(ptr as *mut libc::c_void, len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: unmapping our own mapping.
            unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
            return Err(e);
        }
        Ok(Code { ptr, len })
    }

    pub fn address(&self, offset: usize) -> usize {
        self.ptr as usize + offset
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this value owns; no code from it runs any more.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}
