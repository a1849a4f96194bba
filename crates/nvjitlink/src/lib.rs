//! `libnvJitLink.so.13` for lockstep. Numba and `cuda.core` finish device code with NVIDIA's JIT linker
//! when it is installed: PTX in, GPU machine code (a cubin) out, which no CPU can run. Under lockstep this
//! library takes its place (lockstep's driver loads it at `cuInit` from its own folder, before the
//! program looks for nvJitLink, so the program finds it already loaded): it links the PTX of its inputs
//! with `ptxlink`, as lockstep's `cuLinkComplete` does, and returns the linked PTX both as "the cubin"
//! (which lockstep's module loader accepts) and as the linked PTX.
//!
//! Inputs: PTX, fatbinaries and host objects carrying PTX, library archives (accepted and skipped: the
//! device runtime's functions are built into the engines). Cubins and LTO IR cannot be linked to
//! something lockstep runs; they are refused with an error log that says so.
//!
//! `nvJitLinkVersion` is left out on purpose: it is how `cuda-bindings` users tell an nvJitLink of 12.3 or
//! later, which links LTO IR, and Numba turns link-time optimization on when it finds one. Without it,
//! Numba compiles kernels to PTX, and `cuda.core` links with the driver's `cuLink*` (lockstep's, which
//! links PTX the same way).

use std::ffi::{c_char, c_void, CStr};

/// `nvJitLinkResult`.
pub type NvJitLinkResult = i32;
const SUCCESS: NvJitLinkResult = 0;
const ERROR_UNRECOGNIZED_OPTION: NvJitLinkResult = 1;
const ERROR_MISSING_ARCH: NvJitLinkResult = 2;
const ERROR_INVALID_INPUT: NvJitLinkResult = 3;
const ERROR_PTX_COMPILE: NvJitLinkResult = 4;
const ERROR_INTERNAL: NvJitLinkResult = 6;
const ERROR_UNRECOGNIZED_INPUT: NvJitLinkResult = 8;
const ERROR_NULL_INPUT: NvJitLinkResult = 10;

/// What an exported function returns when lockstep panics inside it (`#[cshell::export]`).
mod abi {
    pub trait Fallback {
        /// How the value is named in the message.
        const NAME: &'static str;
        fn fallback() -> Self;
    }

    impl Fallback for super::NvJitLinkResult {
        const NAME: &'static str = "NVJITLINK_ERROR_INTERNAL";
        fn fallback() -> super::NvJitLinkResult {
            super::ERROR_INTERNAL
        }
    }
}

/// `nvJitLinkInputType`.
const INPUT_CUBIN: i32 = 1;
const INPUT_PTX: i32 = 2;
const INPUT_LTOIR: i32 = 3;
const INPUT_FATBIN: i32 = 4;
const INPUT_OBJECT: i32 = 5;
const INPUT_LIBRARY: i32 = 6;
const INPUT_INDEX: i32 = 7;
const INPUT_ANY: i32 = 10;

/// The newest PTX target lockstep's engines run (a fatbinary's best PTX is the newest at or below it).
const DEVICE_ARCH: u32 = 90;

/// One link: its inputs, its result and its logs.
#[derive(Debug, Default)]
pub struct Link {
    units: Vec<ptxlink::Unit>,
    /// The linked PTX, NUL-terminated.
    output: Option<Vec<u8>>,
    error_log: String,
    info_log: String,
}

impl Link {
    /// A link with the given options (`-arch=sm_XX` is required, as nvJitLink requires it).
    pub fn new(options: &[&str]) -> Result<Link, (NvJitLinkResult, String)> {
        let mut arch = false;
        for o in options {
            let o = o.trim();
            if let Some(a) = o.strip_prefix("-arch=") {
                if !(a.starts_with("sm_") || a.starts_with("compute_") || a.starts_with("lto_")) {
                    return Err((ERROR_UNRECOGNIZED_OPTION, format!("error: unknown architecture `{a}`")));
                }
                arch = true;
            } else if !(o.starts_with("-lto")
                || o == "-ptx"
                || o.starts_with("-maxrregcount")
                || o.starts_with("-O")
                || o == "-g"
                || o == "-lineinfo"
                || o.starts_with("-ftz")
                || o.starts_with("-prec-")
                || o.starts_with("-fma")
                || o.starts_with("-time")
                || o.starts_with("-verbose")
                || o.starts_with("-Xptxas")
                || o.starts_with("-Xnvvm")
                || o.starts_with("-split-compile")
                || o.starts_with("-kernels-used")
                || o.starts_with("-variables-used")
                || o.starts_with("-optimize-unused-variables")
                || o.is_empty())
            {
                return Err((ERROR_UNRECOGNIZED_OPTION, format!("error: unrecognized option `{o}`")));
            }
        }
        if !arch {
            return Err((ERROR_MISSING_ARCH, "error: no -arch option was given".into()));
        }
        Ok(Link::default())
    }

    /// Adds one input of `kind` named `name`.
    pub fn add(&mut self, kind: i32, data: &[u8], name: &str) -> NvJitLinkResult {
        let kind = if kind == INPUT_ANY { guess(data) } else { kind };
        match kind {
            INPUT_PTX => {
                let text = data.split(|&b| b == 0).next().unwrap_or_default();
                self.units
                    .push(ptxlink::Unit { name: name.to_string(), text: String::from_utf8_lossy(text).into_owned() });
                SUCCESS
            }
            INPUT_FATBIN => match fatbin_ptx(data) {
                Ok((text, arch)) => {
                    self.units.push(ptxlink::Unit { name: format!("{name} (compute_{arch} PTX)"), text });
                    SUCCESS
                }
                Err(e) => self.fail(ERROR_INVALID_INPUT, format!("error: {name}: {e}")),
            },
            INPUT_OBJECT => match object_ptx(data) {
                Ok(units) if !units.is_empty() => {
                    for (i, text) in units.into_iter().enumerate() {
                        self.units.push(ptxlink::Unit { name: format!("{name} (unit {i})"), text });
                    }
                    SUCCESS
                }
                Ok(_) => SUCCESS,
                Err(e) => self.fail(ERROR_INVALID_INPUT, format!("error: {name}: {e}")),
            },
            INPUT_LIBRARY => {
                self.info_log.push_str(&format!(
                    "info: {name}: library archives add nothing under lockstep (the device runtime is built in)\n"
                ));
                SUCCESS
            }
            INPUT_CUBIN => self.fail(
                ERROR_INVALID_INPUT,
                format!("error: {name} is GPU machine code (a cubin), which lockstep cannot run; link PTX instead"),
            ),
            INPUT_LTOIR => self.fail(
                ERROR_INVALID_INPUT,
                format!(
                    "error: {name} is LTO IR, which lockstep cannot link; compile to PTX instead (Numba: do not \
                     enable link-time optimization)"
                ),
            ),
            INPUT_INDEX => self.fail(ERROR_INVALID_INPUT, format!("error: {name}: index files are not supported")),
            _ => self.fail(ERROR_UNRECOGNIZED_INPUT, format!("error: {name}: unrecognized input type {kind}")),
        }
    }

    fn fail(&mut self, code: NvJitLinkResult, message: String) -> NvJitLinkResult {
        self.error_log.push_str(&message);
        self.error_log.push('\n');
        code
    }

    /// Links the inputs.
    pub fn complete(&mut self) -> NvJitLinkResult {
        if self.units.is_empty() {
            return self.fail(ERROR_NULL_INPUT, "error: nothing to link".into());
        }
        match ptxlink::link(&self.units) {
            Ok(text) => {
                let mut bytes = text.into_bytes();
                bytes.push(0);
                self.output = Some(bytes);
                SUCCESS
            }
            Err(e) => self.fail(ERROR_PTX_COMPILE, format!("error: {e}")),
        }
    }

    /// The linked PTX, NUL-terminated.
    pub fn output(&self) -> Option<&[u8]> {
        self.output.as_deref()
    }
}

/// What an input of type `NVJITLINK_INPUT_ANY` is.
fn guess(data: &[u8]) -> i32 {
    let magic = data.get(..4).map(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]));
    if data.starts_with(b"\x7fELF") {
        // A host object with device code, or a cubin: an object has a fatbinary section.
        if fatbin::elf::scan(data).is_ok_and(|s| !s.fatbins.is_empty()) {
            INPUT_OBJECT
        } else {
            INPUT_CUBIN
        }
    } else if magic == Some(fatbin::CONTAINER_MAGIC) {
        INPUT_FATBIN
    } else if data.starts_with(b"!<arch>") {
        INPUT_LIBRARY
    } else {
        INPUT_PTX
    }
}

/// The best PTX of a fatbinary container.
fn fatbin_ptx(data: &[u8]) -> Result<(String, u32), String> {
    let parsed = fatbin::parse(data).map_err(|e| format!("the fatbinary is corrupted: {e}"))?;
    let entry = parsed.best_ptx(DEVICE_ARCH).ok_or_else(|| {
        let sass: Vec<String> = parsed.sass_archs().iter().map(|a| format!("sm_{a}")).collect();
        format!(
            "the fatbinary carries no PTX, only GPU machine code ({}), which lockstep cannot run",
            if sass.is_empty() { "nothing".to_string() } else { sass.join(", ") }
        )
    })?;
    let text = entry.ptx_text().map_err(|e| format!("its PTX is unreadable: {e}"))?;
    Ok((text, entry.arch))
}

/// The PTX of every fatbinary in a host object's device-code sections.
fn object_ptx(data: &[u8]) -> Result<Vec<String>, String> {
    let scan = fatbin::elf::scan(data).map_err(|e| format!("not an object with device code: {e}"))?;
    let mut units = Vec::new();
    for c in &scan.fatbins {
        match c.fatbin.best_ptx(DEVICE_ARCH) {
            Some(entry) => units.push(entry.ptx_text().map_err(|e| format!("its PTX is unreadable: {e}"))?),
            None => return Err("it carries GPU machine code without PTX, which lockstep cannot run".into()),
        }
    }
    Ok(units)
}

// ---- the C ABI ---------------------------------------------------------------------------------------

/// `nvJitLinkHandle`: a boxed [`Link`].
type Handle = *mut Link;

/// # Safety
/// `handle` is valid for a write; `options` holds `n` NUL-terminated strings.
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkCreate(
    handle: *mut Handle,
    n: u32,
    options: *const *const c_char,
) -> NvJitLinkResult {
    if handle.is_null() || (n > 0 && options.is_null()) {
        return ERROR_NULL_INPUT;
    }
    let options: Vec<String> = (0..n as usize)
        // SAFETY: the caller's promise.
        .map(|i| unsafe { *options.add(i) })
        .filter(|p| !p.is_null())
        // SAFETY: the caller's promise: NUL-terminated.
        .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        .collect();
    let refs: Vec<&str> = options.iter().map(String::as_str).collect();
    let (link, code) = match Link::new(&refs) {
        Ok(link) => (link, SUCCESS),
        Err((code, message)) => (Link { error_log: message + "\n", ..Link::default() }, code),
    };
    // SAFETY: the caller's promise. As with NVIDIA's library, a failed create still gives a handle whose
    // error log says why.
    unsafe { handle.write(Box::into_raw(Box::new(link))) };
    code
}

/// # Safety
/// `handle` points at a handle from [`nvJitLinkCreate`] (or null).
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkDestroy(handle: *mut Handle) -> NvJitLinkResult {
    if handle.is_null() {
        return ERROR_NULL_INPUT;
    }
    // SAFETY: the caller's promise.
    let h = unsafe { handle.read() };
    if !h.is_null() {
        // SAFETY: made by `Box::into_raw` in create.
        drop(unsafe { Box::from_raw(h) });
        // SAFETY: the caller's promise.
        unsafe { handle.write(std::ptr::null_mut()) };
    }
    SUCCESS
}

/// # Safety
/// `handle` is a live handle.
unsafe fn link<'a>(handle: Handle) -> Option<&'a mut Link> {
    // SAFETY: the caller's promise.
    unsafe { handle.as_mut() }
}

/// # Safety
/// `data` holds `size` bytes; `name` is null or NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkAddData(
    handle: Handle,
    kind: i32,
    data: *const c_void,
    size: usize,
    name: *const c_char,
) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    let Some(l) = (unsafe { link(handle) }) else { return ERROR_NULL_INPUT };
    if data.is_null() {
        return ERROR_NULL_INPUT;
    }
    // SAFETY: the caller's promise.
    let name = if name.is_null() { "input".into() } else { unsafe { CStr::from_ptr(name) }.to_string_lossy() };
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, size) };
    l.add(kind, bytes, &name)
}

/// # Safety
/// `path` is NUL-terminated.
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkAddFile(handle: Handle, kind: i32, path: *const c_char) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    let Some(l) = (unsafe { link(handle) }) else { return ERROR_NULL_INPUT };
    if path.is_null() {
        return ERROR_NULL_INPUT;
    }
    // SAFETY: the caller's promise.
    let path = unsafe { CStr::from_ptr(path) }.to_string_lossy().into_owned();
    match std::fs::read(&path) {
        Ok(bytes) => l.add(kind, &bytes, &path),
        Err(e) => l.fail(ERROR_INVALID_INPUT, format!("error: cannot read {path}: {e}")),
    }
}

/// # Safety
/// `handle` is a live handle.
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkComplete(handle: Handle) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    match unsafe { link(handle) } {
        Some(l) => l.complete(),
        None => ERROR_NULL_INPUT,
    }
}

/// Writes the size of `what` (NUL included).
///
/// # Safety
/// `handle` is live; `size` is valid for a write.
unsafe fn size_of(handle: Handle, size: *mut usize, what: impl Fn(&Link) -> Option<usize>) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    let Some(l) = (unsafe { link(handle) }) else { return ERROR_NULL_INPUT };
    if size.is_null() {
        return ERROR_NULL_INPUT;
    }
    match what(l) {
        // SAFETY: the caller's promise.
        Some(n) => unsafe {
            size.write(n);
            SUCCESS
        },
        None => ERROR_INTERNAL,
    }
}

/// Copies `what` into `buffer` (the size [`size_of`] gave).
///
/// # Safety
/// `handle` is live; `buffer` has room for the size the matching size function returned.
unsafe fn copy_out(handle: Handle, buffer: *mut c_void, what: impl Fn(&Link) -> Option<Vec<u8>>) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    let Some(l) = (unsafe { link(handle) }) else { return ERROR_NULL_INPUT };
    if buffer.is_null() {
        return ERROR_NULL_INPUT;
    }
    match what(l) {
        Some(bytes) => {
            // SAFETY: the caller's promise: room for these bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer as *mut u8, bytes.len()) };
            SUCCESS
        }
        None => ERROR_INTERNAL,
    }
}

fn with_nul(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

/// # Safety
/// As [`size_of`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetLinkedCubinSize(handle: Handle, size: *mut usize) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { size_of(handle, size, |l| l.output().map(<[u8]>::len)) }
}

/// # Safety
/// As [`copy_out`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetLinkedCubin(handle: Handle, cubin: *mut c_void) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { copy_out(handle, cubin, |l| l.output().map(<[u8]>::to_vec)) }
}

/// # Safety
/// As [`size_of`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetLinkedPtxSize(handle: Handle, size: *mut usize) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { nvJitLinkGetLinkedCubinSize(handle, size) }
}

/// # Safety
/// As [`copy_out`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetLinkedPtx(handle: Handle, ptx: *mut c_char) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { nvJitLinkGetLinkedCubin(handle, ptx as *mut c_void) }
}

/// LTO IR output (`-lto` with `-ltoir`) does not exist here.
#[cshell::export]
pub extern "C" fn nvJitLinkGetLinkedLTOIRSize(_handle: Handle, _size: *mut usize) -> NvJitLinkResult {
    ERROR_INTERNAL
}

#[cshell::export]
pub extern "C" fn nvJitLinkGetLinkedLTOIR(_handle: Handle, _ltoir: *mut c_void) -> NvJitLinkResult {
    ERROR_INTERNAL
}

/// # Safety
/// As [`size_of`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetErrorLogSize(handle: Handle, size: *mut usize) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { size_of(handle, size, |l| Some(l.error_log.len() + 1)) }
}

/// # Safety
/// As [`copy_out`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetErrorLog(handle: Handle, log: *mut c_char) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { copy_out(handle, log as *mut c_void, |l| Some(with_nul(&l.error_log))) }
}

/// # Safety
/// As [`size_of`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetInfoLogSize(handle: Handle, size: *mut usize) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { size_of(handle, size, |l| Some(l.info_log.len() + 1)) }
}

/// # Safety
/// As [`copy_out`].
#[cshell::export]
pub unsafe extern "C" fn nvJitLinkGetInfoLog(handle: Handle, log: *mut c_char) -> NvJitLinkResult {
    // SAFETY: the caller's promise.
    unsafe { copy_out(handle, log as *mut c_void, |l| Some(with_nul(&l.info_log))) }
}

/// The versioned names `nvJitLink.h` maps each function to (`__nvJitLinkCreate_13_0` ... `_13_5`): the
/// same functions.
macro_rules! versioned {
    (@one $name:ident $base:ident ($($arg:ident: $ty:ty),*)) => {
        /// # Safety
        #[doc = concat!("As [`", stringify!($base), "`].")]
        #[cshell::export]
        #[allow(unused_unsafe)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> NvJitLinkResult {
            // SAFETY: the caller's promise.
            unsafe { $base($($arg),*) }
        }
    };
    ($($base:ident $params:tt => [$($name:ident),*];)*) => {
        $($(versioned!(@one $name $base $params);)*)*
    };
}

versioned! {
    nvJitLinkCreate(handle: *mut Handle, n: u32, options: *const *const c_char) => [__nvJitLinkCreate_13_0, __nvJitLinkCreate_13_1, __nvJitLinkCreate_13_2, __nvJitLinkCreate_13_3, __nvJitLinkCreate_13_4, __nvJitLinkCreate_13_5];
    nvJitLinkDestroy(handle: *mut Handle) => [__nvJitLinkDestroy_13_0, __nvJitLinkDestroy_13_1, __nvJitLinkDestroy_13_2, __nvJitLinkDestroy_13_3, __nvJitLinkDestroy_13_4, __nvJitLinkDestroy_13_5];
    nvJitLinkAddData(handle: Handle, kind: i32, data: *const c_void, size: usize, name: *const c_char) => [__nvJitLinkAddData_13_0, __nvJitLinkAddData_13_1, __nvJitLinkAddData_13_2, __nvJitLinkAddData_13_3, __nvJitLinkAddData_13_4, __nvJitLinkAddData_13_5];
    nvJitLinkAddFile(handle: Handle, kind: i32, path: *const c_char) => [__nvJitLinkAddFile_13_0, __nvJitLinkAddFile_13_1, __nvJitLinkAddFile_13_2, __nvJitLinkAddFile_13_3, __nvJitLinkAddFile_13_4, __nvJitLinkAddFile_13_5];
    nvJitLinkComplete(handle: Handle) => [__nvJitLinkComplete_13_0, __nvJitLinkComplete_13_1, __nvJitLinkComplete_13_2, __nvJitLinkComplete_13_3, __nvJitLinkComplete_13_4, __nvJitLinkComplete_13_5];
    nvJitLinkGetLinkedCubinSize(handle: Handle, size: *mut usize) => [__nvJitLinkGetLinkedCubinSize_13_0, __nvJitLinkGetLinkedCubinSize_13_1, __nvJitLinkGetLinkedCubinSize_13_2, __nvJitLinkGetLinkedCubinSize_13_3, __nvJitLinkGetLinkedCubinSize_13_4, __nvJitLinkGetLinkedCubinSize_13_5];
    nvJitLinkGetLinkedCubin(handle: Handle, cubin: *mut c_void) => [__nvJitLinkGetLinkedCubin_13_0, __nvJitLinkGetLinkedCubin_13_1, __nvJitLinkGetLinkedCubin_13_2, __nvJitLinkGetLinkedCubin_13_3, __nvJitLinkGetLinkedCubin_13_4, __nvJitLinkGetLinkedCubin_13_5];
    nvJitLinkGetLinkedPtxSize(handle: Handle, size: *mut usize) => [__nvJitLinkGetLinkedPtxSize_13_0, __nvJitLinkGetLinkedPtxSize_13_1, __nvJitLinkGetLinkedPtxSize_13_2, __nvJitLinkGetLinkedPtxSize_13_3, __nvJitLinkGetLinkedPtxSize_13_4, __nvJitLinkGetLinkedPtxSize_13_5];
    nvJitLinkGetLinkedPtx(handle: Handle, ptx: *mut c_char) => [__nvJitLinkGetLinkedPtx_13_0, __nvJitLinkGetLinkedPtx_13_1, __nvJitLinkGetLinkedPtx_13_2, __nvJitLinkGetLinkedPtx_13_3, __nvJitLinkGetLinkedPtx_13_4, __nvJitLinkGetLinkedPtx_13_5];
    nvJitLinkGetErrorLogSize(handle: Handle, size: *mut usize) => [__nvJitLinkGetErrorLogSize_13_0, __nvJitLinkGetErrorLogSize_13_1, __nvJitLinkGetErrorLogSize_13_2, __nvJitLinkGetErrorLogSize_13_3, __nvJitLinkGetErrorLogSize_13_4, __nvJitLinkGetErrorLogSize_13_5];
    nvJitLinkGetErrorLog(handle: Handle, log: *mut c_char) => [__nvJitLinkGetErrorLog_13_0, __nvJitLinkGetErrorLog_13_1, __nvJitLinkGetErrorLog_13_2, __nvJitLinkGetErrorLog_13_3, __nvJitLinkGetErrorLog_13_4, __nvJitLinkGetErrorLog_13_5];
    nvJitLinkGetInfoLogSize(handle: Handle, size: *mut usize) => [__nvJitLinkGetInfoLogSize_13_0, __nvJitLinkGetInfoLogSize_13_1, __nvJitLinkGetInfoLogSize_13_2, __nvJitLinkGetInfoLogSize_13_3, __nvJitLinkGetInfoLogSize_13_4, __nvJitLinkGetInfoLogSize_13_5];
    nvJitLinkGetInfoLog(handle: Handle, log: *mut c_char) => [__nvJitLinkGetInfoLog_13_0, __nvJitLinkGetInfoLog_13_1, __nvJitLinkGetInfoLog_13_2, __nvJitLinkGetInfoLog_13_3, __nvJitLinkGetInfoLog_13_4, __nvJitLinkGetInfoLog_13_5];
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .extern .func (.param .b32 r) helper(.param .b32 x);\n\
        .visible .entry k(.param .u64 p) {\n .reg .b64 %rd<2>;\n .reg .b32 %r<3>;\n\
        ld.param.u64 %rd0, [p];\n mov.u32 %r0, 5;\n\
        { .param .b32 a; .param .b32 b; st.param.b32 [a], %r0; call.uni (b), helper, (a); ld.param.b32 %r1, [b]; }\n\
        st.global.u32 [%rd0], %r1;\n ret;\n}\n";
    const HELPER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .func (.param .b32 r) helper(.param .b32 x) {\n .reg .b32 %r<3>;\n\
        ld.param.b32 %r0, [x];\n mul.lo.u32 %r1, %r0, 3;\n st.param.b32 [r], %r1;\n ret;\n}\n";

    #[test]
    fn ptx_units_link_into_ptx() {
        let mut l = Link::new(&["-arch=sm_90"]).unwrap();
        assert_eq!(l.add(INPUT_PTX, MAIN.as_bytes(), "main"), SUCCESS);
        assert_eq!(l.add(INPUT_ANY, HELPER.as_bytes(), "helper"), SUCCESS);
        assert_eq!(l.complete(), SUCCESS);
        let out = String::from_utf8_lossy(l.output().unwrap());
        assert!(out.ends_with('\0'));
        assert!(out.contains(".entry k") && out.contains(".visible .func (.param .b32 r) helper"), "{out}");
    }

    #[test]
    fn what_cannot_run_is_refused_with_a_log() {
        assert_eq!(Link::new(&[]).unwrap_err().0, ERROR_MISSING_ARCH);
        assert_eq!(Link::new(&["-arch=sm_90", "-frobnicate"]).unwrap_err().0, ERROR_UNRECOGNIZED_OPTION);
        let mut l = Link::new(&["-arch=sm_90", "-lto"]).unwrap();
        assert_eq!(l.add(INPUT_LTOIR, b"\x7fLTO", "k.ltoir"), ERROR_INVALID_INPUT);
        assert_eq!(l.add(INPUT_ANY, b"\x7fELF\x02\x01\x01\0", "k.cubin"), ERROR_INVALID_INPUT);
        assert!(l.error_log.contains("LTO IR") && l.error_log.contains("cubin"), "{}", l.error_log);
        assert_eq!(l.complete(), ERROR_NULL_INPUT);
    }

    #[test]
    fn the_c_interface_round_trips() {
        let arch = c"-arch=sm_90";
        let options = [arch.as_ptr()];
        let mut h: Handle = std::ptr::null_mut();
        // SAFETY: valid pointers throughout; the handle is destroyed at the end.
        unsafe {
            assert_eq!(nvJitLinkCreate(&mut h, 1, options.as_ptr()), SUCCESS);
            assert_eq!(nvJitLinkAddData(h, INPUT_PTX, MAIN.as_ptr().cast(), MAIN.len(), c"main".as_ptr()), SUCCESS);
            assert_eq!(
                __nvJitLinkAddData_13_5(h, INPUT_PTX, HELPER.as_ptr().cast(), HELPER.len(), std::ptr::null()),
                SUCCESS
            );
            assert_eq!(nvJitLinkComplete(h), SUCCESS);
            let mut n = 0;
            assert_eq!(nvJitLinkGetLinkedCubinSize(h, &mut n), SUCCESS);
            let mut buf = vec![0u8; n];
            assert_eq!(nvJitLinkGetLinkedCubin(h, buf.as_mut_ptr().cast()), SUCCESS);
            assert_eq!(buf.last(), Some(&0));
            assert_eq!(nvJitLinkGetErrorLogSize(h, &mut n), SUCCESS);
            assert_eq!(n, 1);
            assert_eq!(nvJitLinkDestroy(&mut h), SUCCESS);
            assert!(h.is_null());
        }
    }
}
