//! Reading device code out of the running program: the fatbinary wrapper a program registers points into
//! one of its loaded ELF segments. The segment bounds every read, so a corrupted size field gives an error
//! instead of a read past the mapping.

use std::ffi::CStr;

/// A loaded segment holding an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The object's path (the main program's resolved from `/proc/self/exe`).
    pub object: String,
    pub start: usize,
    pub end: usize,
}

/// The loaded (`PT_LOAD`) segment holding `address`, if any.
#[cfg(target_os = "linux")]
pub fn segment_of(address: usize) -> Option<Segment> {
    struct Search {
        address: usize,
        found: Option<Segment>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut libc::c_void) -> i32 {
        // SAFETY: the loader passes a valid info for the duration of the call; `data` is our `Search`.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        for i in 0..usize::from(info.dlpi_phnum) {
            // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type != libc::PT_LOAD {
                continue;
            }
            let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
            let end = start + ph.p_memsz as usize;
            if (start..end).contains(&search.address) {
                let name = if info.dlpi_name.is_null() {
                    String::new()
                } else {
                    // SAFETY: a NUL-terminated path owned by the loader.
                    unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
                };
                search.found = Some(Segment { object: name, start, end });
                return 1;
            }
        }
        0
    }
    let mut search = Search { address, found: None };
    // SAFETY: `visit` only reads the headers the loader passes and writes `search`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut libc::c_void) };
    let mut found = search.found?;
    if found.object.is_empty() {
        found.object = program_path();
    }
    Some(found)
}

#[cfg(not(target_os = "linux"))]
pub fn segment_of(_address: usize) -> Option<Segment> {
    None
}

/// The path of the running program.
pub fn program_path() -> String {
    std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "the program".to_string())
}

/// The bytes from `address` to the end of its segment.
///
/// # Safety
/// The segment must stay mapped while the slice is used (segments of loaded objects stay until the object
/// is unloaded; a program's own never are).
pub unsafe fn segment_bytes(address: usize) -> Option<(&'static [u8], Segment)> {
    let segment = segment_of(address)?;
    // SAFETY: `[address, end)` lies inside a mapped, readable PT_LOAD segment (the caller keeps it mapped).
    let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, segment.end - address) };
    Some((bytes, segment))
}

#[cfg(test)]
mod tests {
    use super::*;

    static DATA: [u8; 64] = [7; 64];

    #[test]
    fn a_static_is_found_in_the_test_program() {
        let address = DATA.as_ptr() as usize;
        // SAFETY: the test binary's own segments stay mapped.
        let (bytes, segment) = unsafe { segment_bytes(address) }.expect("the segment of a static");
        assert!(bytes.len() >= 64);
        assert_eq!(&bytes[..64], &DATA[..]);
        assert!(segment.start <= address && address < segment.end);
        assert!(!segment.object.is_empty());
        assert_eq!(segment_of(8), None, "nothing is loaded at address 8");
    }
}
