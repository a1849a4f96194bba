//! Modules a program loads itself, through the driver API: `cuModuleLoadData` and friends, libraries
//! (`cuLibraryLoadData`), functions and kernels, module variables, and the linker (`cuLink*`).
//!
//! An image is PTX text, a fatbinary (container or wrapper) with a PTX entry, or the output of lockstep's
//! linker, which is linked PTX text. GPU machine code (a cubin, or a fatbinary with only SASS) cannot run
//! here: loading it is `CUDA_ERROR_NO_BINARY_FOR_GPU` with a message that asks for PTX.
//!
//! Handles are addresses of small leaked allocations, distinct for the life of the process, so a program
//! may keep, compare and pass them around. A library handle is its module's handle and a kernel handle is
//! its function's handle: `cuLaunchKernel` accepts either, as CUDA 12 does.

use std::collections::HashMap;

use ir::FuncId;
use runtime::ModuleId;

use crate::link::{self, Unit};
use crate::registry::DEVICE_ARCH;
use crate::{Cuda, Error, Inner, Result};

/// `CUjitInputType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputType {
    Cubin,
    Ptx,
    Fatbinary,
    Object,
    Library,
    Nvvm,
}

impl InputType {
    pub fn from_raw(value: i32) -> Option<InputType> {
        Some(match value {
            0 => InputType::Cubin,
            1 => InputType::Ptx,
            2 => InputType::Fatbinary,
            3 => InputType::Object,
            4 => InputType::Library,
            5 => InputType::Nvvm,
            _ => return None,
        })
    }
}

#[derive(Default)]
pub(crate) struct Modules {
    modules: HashMap<u64, LoadedImage>,
    functions: HashMap<u64, Function>,
    linkers: HashMap<u64, Linker>,
}

struct LoadedImage {
    id: ModuleId,
    name: String,
    /// Function handles already handed out, by name (the same name gives the same handle).
    functions: HashMap<String, u64>,
}

struct Function {
    module: u64,
    id: ModuleId,
    func: FuncId,
    name: String,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` as the program set it.
    max_dynamic_shared: Option<i32>,
}

struct Linker {
    units: Vec<Unit>,
    /// The last `cuLinkComplete` image (NUL-terminated PTX), alive until `cuLinkDestroy`.
    output: Option<Vec<u8>>,
}

thread_local! {
    /// The message of the calling thread's last failed load or link (for the JIT error logs the driver
    /// API fills).
    static LAST_MESSAGE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The message of the calling thread's last failed module load or link, taken.
pub fn take_last_message() -> String {
    LAST_MESSAGE.try_with(|m| std::mem::take(&mut *m.borrow_mut())).unwrap_or_default()
}

impl Cuda {
    /// Prints a load or link failure (once) and keeps it for the caller's error log.
    fn load_failed(&self, message: &str) {
        let _ = LAST_MESSAGE.try_with(|m| *m.borrow_mut() = message.to_string());
        self.warn(message, message);
    }
}

fn new_handle() -> u64 {
    Box::into_raw(Box::new(0u64)) as u64
}

/// What a driver function is, for a launch or an attribute query.
#[derive(Clone, Debug)]
pub(crate) struct FunctionInfo {
    pub id: ModuleId,
    pub func: FuncId,
    pub max_dynamic_shared: Option<i32>,
}

impl Modules {
    pub(crate) fn function(&self, handle: u64) -> Option<FunctionInfo> {
        self.functions.get(&handle).map(|f| FunctionInfo {
            id: f.id,
            func: f.func,
            max_dynamic_shared: f.max_dynamic_shared,
        })
    }
}

/// The PTX text of an image passed to the module loader or the linker, and a name for messages.
///
/// # Safety
/// `image` must point at a readable image: NUL-terminated PTX text, a fatbinary container or wrapper, or
/// an ELF file (whose size its headers give), as `cuModuleLoadData` requires.
pub unsafe fn image_ptx(image: *const u8, what: &str) -> Result<(String, String), (Error, String)> {
    if image.is_null() {
        return Err((Error::INVALID_VALUE, format!("error: {what}: the image pointer is null")));
    }
    // SAFETY: every image kind starts with at least 4 readable bytes (a PTX text has its NUL).
    let head = unsafe { std::slice::from_raw_parts(image, 4) };
    let magic = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if magic == fatbin::WRAPPER_MAGIC {
        // SAFETY: a wrapper is 24 bytes.
        let bytes = unsafe { std::slice::from_raw_parts(image, 24) };
        let w = fatbin::Wrapper::from_bytes(bytes).map_err(|e| {
            (Error::INVALID_KERNEL_IMAGE, format!("error: {what}: the fatbinary wrapper is not valid: {e}"))
        })?;
        // SAFETY: the wrapper's data pointer is a container in the program's memory (the caller's promise).
        return unsafe { container_ptx(w.data as *const u8, what) };
    }
    if magic == fatbin::CONTAINER_MAGIC {
        // SAFETY: the caller's promise.
        return unsafe { container_ptx(image, what) };
    }
    if head == b"\x7fELF" {
        return Err((
            Error::NO_KERNEL_IMAGE_FOR_DEVICE,
            format!(
                "error: {what}: the image is GPU machine code (a cubin), which lockstep cannot run; load PTX instead \
                 (`nvcc -ptx`, NVRTC's nvrtcGetPTX rather than nvrtcGetCUBIN, or a fatbinary built with \
                 `-gencode arch=compute_XX,code=compute_XX`)"
            ),
        ));
    }
    // PTX text, NUL-terminated.
    // SAFETY: the caller's promise: a NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(image as *const std::ffi::c_char) };
    let text = String::from_utf8_lossy(text.to_bytes()).into_owned();
    Ok((text, what.to_string()))
}

/// The best PTX of the fatbinary container at `data`.
///
/// # Safety
/// `data` points at a fatbinary container whose header gives its size.
unsafe fn container_ptx(data: *const u8, what: &str) -> Result<(String, String), (Error, String)> {
    let bad = |m: String| (Error::INVALID_KERNEL_IMAGE, format!("error: {what}: {m}"));
    if data.is_null() {
        return Err(bad("the fatbinary's data pointer is null".into()));
    }
    // SAFETY: the header is 16 bytes; its size field bounds the rest.
    let header = unsafe { std::slice::from_raw_parts(data, 16) };
    let header_size = u16::from_le_bytes([header[6], header[7]]) as usize;
    let body = u64::from_le_bytes(header[8..16].try_into().unwrap_or_default());
    let size = usize::try_from(body)
        .ok()
        .and_then(|b| b.checked_add(header_size))
        .filter(|&s| s < 1 << 40 && header_size >= 16)
        .ok_or_else(|| bad(format!("the fatbinary's header gives an impossible size ({body} bytes)")))?;
    // SAFETY: the container is `size` bytes long (its header says so).
    let bytes = unsafe { std::slice::from_raw_parts(data, size) };
    let parsed = fatbin::parse(bytes).map_err(|e| bad(format!("the fatbinary is corrupted: {e}")))?;
    let Some(entry) = parsed.best_ptx(DEVICE_ARCH) else {
        let sass: Vec<String> = parsed.sass_archs().iter().map(|a| format!("sm_{a}")).collect();
        return Err((
            Error::NO_KERNEL_IMAGE_FOR_DEVICE,
            format!(
                "error: {what}: the fatbinary carries no PTX, only GPU machine code ({}), which lockstep cannot run; \
                 build it with PTX included (`-gencode arch=compute_XX,code=compute_XX`)",
                if sass.is_empty() { "nothing".to_string() } else { sass.join(", ") }
            ),
        ));
    };
    let text = entry.ptx_text().map_err(|e| bad(format!("its PTX is unreadable: {e}")))?;
    Ok((text, format!("{what} (compute_{} PTX)", entry.arch)))
}

impl Cuda {
    /// `cuModuleLoadData` / `DataEx` / `FatBinary`, `cuLibraryLoadData`: loads an image (see
    /// [`image_ptx`]) and returns the module's handle.
    ///
    /// # Safety
    /// As [`image_ptx`].
    pub unsafe fn module_load_image(&self, image: *const u8, what: &str) -> Result<u64> {
        self.check_sticky()?;
        // SAFETY: the caller's promise.
        let ptx = unsafe { image_ptx(image, what) };
        let (text, name) = ptx.map_err(|(e, message)| {
            self.load_failed(&message);
            e
        })?;
        self.module_load_ptx(&text, &name)
    }

    /// Loads PTX text as a module (`cuModuleLoad` of a `.ptx` file, and every image form).
    pub fn module_load_ptx(&self, text: &str, name: &str) -> Result<u64> {
        self.check_sticky()?;
        let mut inner = self.lock();
        let start = std::time::Instant::now();
        let text = match crate::devrt::link(text, name) {
            Ok(t) => t,
            Err(message) => {
                drop(inner);
                self.load_failed(&format!("error: the PTX of {name} does not link with the device runtime: {message}"));
                return Err(Error::INVALID_PTX);
            }
        };
        let loaded = inner.runtime(&self.config).load_ptx(&text, name);
        inner.report.loaded(start.elapsed());
        match loaded {
            Ok(id) => {
                let handle = new_handle();
                inner
                    .modules
                    .modules
                    .insert(handle, LoadedImage { id, name: name.to_string(), functions: HashMap::new() });
                Ok(handle)
            }
            Err(e) => {
                drop(inner);
                let message = match &e {
                    runtime::LoadError::Compile { rendered, .. } => rendered.clone(),
                    other => other.to_string(),
                };
                let message = format!("error: the PTX of {name} does not load:\n{message}");
                self.load_failed(&message);
                Err(match e {
                    runtime::LoadError::Compile { .. } => Error::INVALID_PTX,
                    _ => Error::MEMORY_ALLOCATION,
                })
            }
        }
    }

    /// `cuModuleUnload`: the handle and its functions' handles stop working. (Device memory of its
    /// variables stays allocated until the context is reset.)
    pub fn module_unload(&self, module: u64) -> Result<()> {
        let mut inner = self.lock();
        inner.modules.modules.remove(&module).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        inner.modules.functions.retain(|_, f| f.module != module);
        Ok(())
    }

    /// `cuModuleGetFunction`, `cuLibraryGetKernel`: the kernel `name` of a module
    /// (`CUDA_ERROR_NOT_FOUND` when it has none of that name).
    pub fn module_function(&self, module: u64, name: &str) -> Result<u64> {
        let mut inner = self.lock();
        let m = inner.modules.modules.get(&module).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        if let Some(&h) = m.functions.get(name) {
            return Ok(h);
        }
        let id = m.id;
        let func = inner.runtime(&self.config).kernel(id, Some(name)).map_err(|_| Error::INVALID_SYMBOL)?;
        let handle = new_handle();
        inner
            .modules
            .functions
            .insert(handle, Function { module, id, func, name: name.to_string(), max_dynamic_shared: None });
        if let Some(m) = inner.modules.modules.get_mut(&module) {
            m.functions.insert(name.to_string(), handle);
        }
        Ok(handle)
    }

    /// `cuModuleEnumerateFunctions`, `cuLibraryEnumerateKernels`: every kernel of a module, as handles.
    pub fn module_functions(&self, module: u64) -> Result<Vec<u64>> {
        let names: Vec<String> = {
            let mut inner = self.lock();
            let id = inner.modules.modules.get(&module).ok_or(Error::INVALID_RESOURCE_HANDLE)?.id;
            let rt = inner.runtime(&self.config);
            let m = &rt.module(id).ok_or(Error::INVALID_RESOURCE_HANDLE)?.module;
            m.kernels().filter(|(_, f)| f.body.is_some()).map(|(_, f)| f.name.clone()).collect()
        };
        names.iter().map(|n| self.module_function(module, n)).collect()
    }

    /// `cuModuleGetGlobal`, `cuLibraryGetGlobal`: the device address and size of a module variable.
    pub fn module_global(&self, module: u64, name: &str) -> Result<(u64, u64)> {
        let mut inner = self.lock();
        let id = inner.modules.modules.get(&module).ok_or(Error::INVALID_RESOURCE_HANDLE)?.id;
        inner.runtime(&self.config).symbol(id, name).map_err(|_| Error::INVALID_SYMBOL)
    }

    /// The module a function belongs to (`cuFuncGetModule`), and its name (`cuFuncGetName`).
    pub fn function_module(&self, function: u64) -> Result<(u64, String)> {
        let inner = self.lock();
        let f = inner.modules.functions.get(&function).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        Ok((f.module, f.name.clone()))
    }

    /// Whether `function` is a driver function handle.
    pub fn is_function(&self, function: u64) -> bool {
        self.lock().modules.functions.contains_key(&function)
    }

    /// The name a module was loaded under.
    pub fn module_name(&self, module: u64) -> Result<String> {
        let inner = self.lock();
        Ok(inner.modules.modules.get(&module).ok_or(Error::INVALID_RESOURCE_HANDLE)?.name.clone())
    }

    pub(crate) fn set_function_max_dynamic_shared(&self, function: u64, bytes: i32) -> Result<()> {
        let mut inner = self.lock();
        let f = inner.modules.functions.get_mut(&function).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        f.max_dynamic_shared = Some(bytes);
        Ok(())
    }

    // ---- the linker -------------------------------------------------------------------------------

    /// `cuLinkCreate`: a new link state.
    pub fn link_create(&self) -> u64 {
        let handle = new_handle();
        self.lock().modules.linkers.insert(handle, Linker { units: Vec::new(), output: None });
        handle
    }

    /// `cuLinkAddData` / `cuLinkAddFile`: one input. PTX and fatbinaries (their best PTX) are linked;
    /// cubins and objects with only machine code are refused; a library archive such as `libcudadevrt.a`
    /// is accepted and contributes nothing (the device runtime's functions are built in).
    ///
    /// # Safety
    /// `data` points at `size` readable bytes (PTX may be NUL-terminated instead, with `size` 0).
    pub unsafe fn link_add(&self, link: u64, kind: InputType, data: *const u8, size: usize, name: &str) -> Result<()> {
        if !self.lock().modules.linkers.contains_key(&link) {
            return Err(Error::INVALID_RESOURCE_HANDLE);
        }
        if data.is_null() {
            return Err(Error::INVALID_VALUE);
        }
        let what = if name.is_empty() { "linker input".to_string() } else { format!("linker input {name}") };
        let unit = match kind {
            InputType::Ptx => {
                // SAFETY: the caller's promise.
                let bytes = unsafe { std::slice::from_raw_parts(data, size) };
                let bytes = match bytes.iter().position(|&b| b == 0) {
                    Some(end) => &bytes[..end],
                    None if size == 0 => {
                        // SAFETY: NUL-terminated when no size is given.
                        unsafe { std::ffi::CStr::from_ptr(data as *const std::ffi::c_char) }.to_bytes()
                    }
                    None => bytes,
                };
                Unit { name: what, text: String::from_utf8_lossy(bytes).into_owned() }
            }
            InputType::Fatbinary | InputType::Cubin | InputType::Object => {
                // SAFETY: the caller's promise.
                let ptx = unsafe { image_ptx(data, &what) };
                let (text, name) = ptx.map_err(|(e, message)| {
                    self.load_failed(&message);
                    e
                })?;
                Unit { name, text }
            }
            InputType::Library => {
                self.warn(
                    &format!("link library {name}"),
                    &format!("note: {what}: library archives add nothing here (the device runtime is built in)"),
                );
                return Ok(());
            }
            InputType::Nvvm => {
                let message =
                    format!("error: {what}: NVVM IR (LTO) inputs cannot be linked by lockstep; link PTX instead");
                self.load_failed(&message);
                return Err(Error::NOT_SUPPORTED);
            }
        };
        let mut inner = self.lock();
        let linker = inner.modules.linkers.get_mut(&link).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        linker.units.push(unit);
        Ok(())
    }

    /// `cuLinkComplete`: links the inputs into one image (NUL-terminated PTX text that the module loader
    /// accepts); returns its address and size, valid until `cuLinkDestroy`.
    pub fn link_complete(&self, link: u64) -> Result<(u64, u64)> {
        let mut inner = self.lock();
        let linker = inner.modules.linkers.get_mut(&link).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        if linker.units.is_empty() {
            return Err(Error::INVALID_VALUE);
        }
        let linked = link::link(&linker.units);
        match linked {
            Ok(text) => {
                let mut bytes = text.into_bytes();
                bytes.push(0);
                let image = linker.output.insert(bytes);
                Ok((image.as_ptr() as u64, image.len() as u64))
            }
            Err(message) => {
                drop(inner);
                let message = format!("error: cuLinkComplete: {message}");
                self.load_failed(&message);
                Err(Error::INVALID_PTX)
            }
        }
    }

    /// `cuLinkDestroy`.
    pub fn link_destroy(&self, link: u64) -> Result<()> {
        self.lock().modules.linkers.remove(&link).map(|_| ()).ok_or(Error::INVALID_RESOURCE_HANDLE)
    }
}

impl Inner {
    /// After a context reset: every module the program loaded is gone.
    pub(crate) fn forget_driver_modules(&mut self) {
        self.modules.modules.clear();
        self.modules.functions.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry twice(.param .u64 p) {\n .reg .b64 %rd<2>;\n .reg .b32 %r<2>;\n\
        ld.param.u64 %rd0, [p];\n ld.global.u32 %r0, [%rd0];\n add.u32 %r1, %r0, %r0;\n st.global.u32 [%rd0], %r1;\n ret;\n}\n\
        .visible .global .u32 counter = 7;\n";

    fn cuda() -> Cuda {
        let (config, _) = Config::from_vars(|_| None);
        Cuda::new(config, Box::new(std::io::sink()))
    }

    #[test]
    fn a_module_from_text_gives_functions_and_globals() {
        let c = cuda();
        let text = format!("{PTX}\0");
        // SAFETY: a NUL-terminated PTX text.
        let m = unsafe { c.module_load_image(text.as_ptr(), "test module") }.unwrap();
        let f = c.module_function(m, "twice").unwrap();
        assert_eq!(c.module_function(m, "twice").unwrap(), f, "one handle per function");
        assert_eq!(c.module_function(m, "thrice"), Err(Error::INVALID_SYMBOL));
        let (ptr, size) = c.module_global(m, "counter").unwrap();
        assert_eq!(size, 4);
        // SAFETY: a module variable of 4 bytes.
        assert_eq!(unsafe { *(ptr as *const u32) }, 7);
        assert_eq!(c.module_functions(m).unwrap(), vec![f]);
        c.module_unload(m).unwrap();
        assert_eq!(c.module_function(m, "twice"), Err(Error::INVALID_RESOURCE_HANDLE));
    }

    #[test]
    fn a_cubin_is_refused_with_no_binary_for_gpu() {
        let c = cuda();
        let elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0";
        // SAFETY: 16 readable bytes.
        assert_eq!(unsafe { c.module_load_image(elf.as_ptr(), "cubin") }, Err(Error::NO_KERNEL_IMAGE_FOR_DEVICE));
    }

    #[test]
    fn bad_ptx_is_invalid_ptx() {
        let c = cuda();
        let text = ".version 8.0\n.target sm_80\n.entry k( { ret; }\0";
        // SAFETY: NUL-terminated.
        assert_eq!(unsafe { c.module_load_image(text.as_ptr(), "broken") }, Err(Error::INVALID_PTX));
    }

    #[test]
    fn the_linker_links_ptx_units_into_a_loadable_image() {
        let c = cuda();
        let caller = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .extern .func (.param .b32 r) helper(.param .b32 x);\n\
            .visible .entry k(.param .u64 p) {\n .reg .b64 %rd<2>;\n .reg .b32 %r<3>;\n\
            ld.param.u64 %rd0, [p];\n mov.u32 %r0, 5;\n\
            { .param .b32 a; .param .b32 b; st.param.b32 [a], %r0; call.uni (b), helper, (a); ld.param.b32 %r1, [b]; }\n\
            st.global.u32 [%rd0], %r1;\n ret;\n}\n";
        let callee = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .visible .func (.param .b32 r) helper(.param .b32 x) {\n .reg .b32 %r<3>;\n\
            ld.param.b32 %r0, [x];\n mul.lo.u32 %r1, %r0, 3;\n st.param.b32 [r], %r1;\n ret;\n}\n";
        let link = c.link_create();
        for (i, unit) in [caller, callee].iter().enumerate() {
            // SAFETY: `unit.len()` bytes.
            unsafe { c.link_add(link, InputType::Ptx, unit.as_ptr(), unit.len(), &format!("unit{i}")) }.unwrap();
        }
        let (image, size) = c.link_complete(link).unwrap();
        assert!(size > 0);
        // SAFETY: the linker's NUL-terminated image, alive until destroy.
        let m = unsafe { c.module_load_image(image as *const u8, "linked") }.unwrap();
        c.module_function(m, "k").unwrap();
        c.link_destroy(link).unwrap();
        assert_eq!(c.link_complete(link), Err(Error::INVALID_RESOURCE_HANDLE));
    }
}
