//! What a program registers at start-up (`__cudaRegisterFatBinary`, `__cudaRegisterFunction`,
//! `__cudaRegisterVar`, `__cudaRegisterManagedVar`) and the modules loaded from it on demand.
//!
//! Registration records pointers only. A fatbinary's PTX is read, parsed and loaded when one of its
//! kernels is first launched or one of its variables first used (a Thrust program registers hundreds of
//! kernels and launches a few); the JIT then compiles each kernel at its first launch, through its disk
//! cache.

use std::collections::HashMap;

use ir::FuncId;
use runtime::ModuleId;

use crate::image;
use crate::link::{self, Unit};
use crate::{Cuda, Error, Inner, Result};

/// The newest PTX target the device runs (`sm_90`): the best PTX entry of a fatbinary is the newest one
/// at or below it.
pub const DEVICE_ARCH: u32 = 90;

#[derive(Default)]
pub(crate) struct Registry {
    fatbins: Vec<Fatbin>,
    /// Handle value returned to the program → fatbinary index.
    handles: HashMap<u64, usize>,
    /// Host stub → kernel.
    kernels: HashMap<u64, Kernel>,
    /// Host shadow variable → device variable.
    vars: HashMap<u64, Var>,
}

struct Fatbin {
    /// Address of the `__fatBinC_Wrapper_t`.
    wrapper: u64,
    module: Module,
    /// `__cudaRegisterManagedVar`'s host pointer slots, to fill with the variables' addresses on load.
    managed: Vec<(u64, String)>,
}

enum Module {
    Unloaded,
    Loaded(ModuleId),
    /// Loading failed: the error every use returns (the message was printed once).
    Failed(Error),
}

struct Kernel {
    fatbin: usize,
    name: String,
    /// Resolved on first launch (per loaded module).
    func: Option<(ModuleId, FuncId)>,
    /// `cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize)`.
    max_dynamic_shared: Option<i32>,
}

struct Var {
    fatbin: usize,
    name: String,
}

impl Registry {
    /// After `cudaDeviceReset`: modules load again on next use.
    pub(crate) fn forget_modules(&mut self) {
        for f in &mut self.fatbins {
            if matches!(f.module, Module::Loaded(_)) {
                f.module = Module::Unloaded;
            }
        }
        for k in self.kernels.values_mut() {
            k.func = None;
        }
    }

    fn fatbin_of(&self, handle: u64) -> Option<usize> {
        self.handles.get(&handle).copied()
    }

    pub(crate) fn has_kernel(&self, host_fn: u64) -> bool {
        self.kernels.contains_key(&host_fn)
    }

    pub(crate) fn max_dynamic_shared(&self, host_fn: u64) -> Option<i32> {
        self.kernels.get(&host_fn).and_then(|k| k.max_dynamic_shared)
    }

    pub(crate) fn set_max_dynamic_shared(&mut self, host_fn: u64, bytes: i32) {
        if let Some(k) = self.kernels.get_mut(&host_fn) {
            k.max_dynamic_shared = Some(bytes);
        }
    }

    /// The registered name of the kernel whose host stub is `host_fn`.
    pub(crate) fn kernel_name(&self, host_fn: u64) -> Option<&str> {
        self.kernels.get(&host_fn).map(|k| k.name.as_str())
    }
}

impl Cuda {
    /// `__cudaRegisterFatBinary`: returns the handle the program passes to the other registrations.
    pub fn register_fatbin(&self, wrapper: u64) -> u64 {
        let mut inner = self.lock();
        let index = inner.registry.fatbins.len();
        inner.registry.fatbins.push(Fatbin { wrapper, module: Module::Unloaded, managed: Vec::new() });
        // A distinct address per registration, never freed, so the program may keep and pass it around.
        let handle = Box::into_raw(Box::new([wrapper, index as u64])) as u64;
        inner.registry.handles.insert(handle, index);
        handle
    }

    /// `__cudaRegisterFunction`: the kernel `name` of the fatbinary is launched through host stub `host_fn`.
    pub fn register_function(&self, handle: u64, host_fn: u64, name: &str) {
        let mut inner = self.lock();
        let Some(fatbin) = inner.registry.fatbin_of(handle) else {
            drop(inner);
            self.warn("bad handle", &format!("warning: kernel `{name}` registered with an unknown fatbinary handle"));
            return;
        };
        let kernel = Kernel { fatbin, name: name.to_string(), func: None, max_dynamic_shared: None };
        inner.registry.kernels.insert(host_fn, kernel);
    }

    /// `__cudaRegisterVar`: the device variable `name` is named by host shadow `host_var` in
    /// `cudaMemcpyToSymbol` and friends.
    pub fn register_var(&self, handle: u64, host_var: u64, name: &str) {
        let mut inner = self.lock();
        if let Some(fatbin) = inner.registry.fatbin_of(handle) {
            inner.registry.vars.insert(host_var, Var { fatbin, name: name.to_string() });
        }
    }

    /// `__cudaRegisterManagedVar`: like [`Cuda::register_var`]; the host reaches the variable through the
    /// pointer at `host_ptr_slot`, which loading the module fills with its address.
    pub fn register_managed_var(&self, handle: u64, host_ptr_slot: u64, name: &str) {
        let mut inner = self.lock();
        if let Some(fatbin) = inner.registry.fatbin_of(handle) {
            inner.registry.fatbins[fatbin].managed.push((host_ptr_slot, name.to_string()));
            inner.registry.vars.insert(host_ptr_slot, Var { fatbin, name: name.to_string() });
        }
    }

    /// `__cudaInitModule`: loads the module now (the program is about to touch a managed variable).
    pub fn init_module(&self, handle: u64) -> Result<()> {
        let mut inner = self.lock();
        let fatbin = inner.registry.fatbin_of(handle).ok_or(Error::INVALID_RESOURCE_HANDLE)?;
        inner.module(fatbin, self).map(|_| ())
    }

    /// `__cudaUnregisterFatBinary` (at exit): kernels launched later fail; nothing is freed.
    pub fn unregister_fatbin(&self, handle: u64) {
        let mut inner = self.lock();
        inner.flush_printf();
        if let Some(index) = inner.registry.handles.remove(&handle) {
            inner.registry.kernels.retain(|_, k| k.fatbin != index);
        }
    }

    /// The device address and size of the variable registered for host shadow `host_var`.
    pub fn symbol(&self, host_var: u64) -> Result<(u64, u64)> {
        self.check_sticky()?;
        let mut inner = self.lock();
        inner.symbol(host_var, self)
    }

    /// Whether `host_fn` is a registered kernel's host stub.
    pub fn is_kernel(&self, host_fn: u64) -> bool {
        self.lock().registry.kernels.contains_key(&host_fn)
    }
}

impl Inner {
    /// The device address and size of a registered variable, loading its module if needed.
    pub(crate) fn symbol(&mut self, host_var: u64, cuda: &Cuda) -> Result<(u64, u64)> {
        let var = self.registry.vars.get(&host_var).ok_or(Error::INVALID_SYMBOL)?;
        let (fatbin, name) = (var.fatbin, var.name.clone());
        let module = self.module(fatbin, cuda)?;
        self.runtime(&cuda.config).symbol(module, &name).map_err(|e| {
            cuda.warn(&format!("symbol {name}"), &format!("error: variable `{name}`: {e}"));
            Error::INVALID_SYMBOL
        })
    }

    /// The loaded module and kernel behind host stub `host_fn`.
    pub(crate) fn kernel(&mut self, host_fn: u64, cuda: &Cuda) -> Result<(ModuleId, FuncId)> {
        let kernel = self.registry.kernels.get(&host_fn).ok_or(Error::INVALID_DEVICE_FUNCTION)?;
        if let Some(f) = kernel.func {
            return Ok(f);
        }
        let (fatbin, name) = (kernel.fatbin, kernel.name.clone());
        let module = self.module(fatbin, cuda)?;
        let func = self.runtime(&cuda.config).kernel(module, Some(&name)).map_err(|e| {
            cuda.warn(&format!("kernel {name}"), &format!("error: kernel `{name}`: {e}"));
            Error::INVALID_DEVICE_FUNCTION
        })?;
        if let Some(k) = self.registry.kernels.get_mut(&host_fn) {
            k.func = Some((module, func));
        }
        Ok((module, func))
    }

    /// The module of fatbinary `index`, loading it on first use.
    pub(crate) fn module(&mut self, index: usize, cuda: &Cuda) -> Result<ModuleId> {
        match self.registry.fatbins[index].module {
            Module::Loaded(id) => return Ok(id),
            Module::Failed(e) => return Err(e),
            Module::Unloaded => {}
        }
        let wrapper = self.registry.fatbins[index].wrapper;
        let start = std::time::Instant::now();
        let loaded = read_ptx(wrapper, index).and_then(|(text, name)| {
            self.runtime(&cuda.config).load_ptx(&text, &name).map_err(|e| {
                let message = match &e {
                    runtime::LoadError::Compile { rendered, .. } => rendered.clone(),
                    other => other.to_string(),
                };
                (Error::INVALID_PTX, format!("error: the PTX of {name} does not load:\n{message}"))
            })
        });
        self.report.loaded(start.elapsed());
        match loaded {
            Ok(id) => {
                self.registry.fatbins[index].module = Module::Loaded(id);
                let managed = self.registry.fatbins[index].managed.clone();
                for (slot, name) in managed {
                    if let Ok((ptr, _)) = self.runtime(&cuda.config).symbol(id, &name) {
                        // SAFETY: `slot` is the host pointer variable nvcc registered for the managed
                        // variable (`__cudaRegisterManagedVar`'s `hostVarPtrAddress`), a `void*` in the
                        // program's data.
                        unsafe { (slot as *mut u64).write_unaligned(ptr) };
                    }
                }
                Ok(id)
            }
            Err((error, message)) => {
                cuda.warn(&format!("fatbin {index}"), &message);
                self.registry.fatbins[index].module = Module::Failed(error);
                Err(error)
            }
        }
    }
}

/// The PTX to run from the fatbinary wrapper at `wrapper` (linked from the pieces of an `-rdc` build), and
/// a name for it in messages.
fn read_ptx(wrapper: u64, index: usize) -> Result<(String, String), (Error, String)> {
    let bad = |what: String| (Error::INVALID_KERNEL_IMAGE, format!("error: {what}"));
    // SAFETY: the wrapper lies in the program's loaded data (nvcc's `.nvFatBinSegment`); reads stay inside
    // its segment.
    let (bytes, segment) = unsafe { image::segment_bytes(wrapper as usize) }
        .ok_or_else(|| bad(format!("fatbinary {index}: its wrapper at {wrapper:#x} is not in a loaded object")))?;
    let program = segment.object.clone();
    let w = fatbin::Wrapper::from_bytes(bytes)
        .map_err(|e| bad(format!("{program}: fatbinary {index}: the wrapper is not valid: {e}")))?;
    let mut pieces = Vec::new();
    if w.version == 2 {
        // `-rdc`: the per-unit fatbinaries are linked; the wrapper's own data is device-linked SASS.
        // SAFETY: as above, for the NULL-terminated pointer array nvcc emits.
        let (list, _) = unsafe { image::segment_bytes(w.prelinked as usize) }
            .ok_or_else(|| bad(format!("{program}: fatbinary {index}: its list of linked units is not mapped")))?;
        for chunk in list.chunks_exact(8).take(1 << 16) {
            let p = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            if p == 0 {
                break;
            }
            pieces.push(p);
        }
    } else {
        pieces.push(w.data);
    }
    let mut units = Vec::new();
    for (i, &data) in pieces.iter().enumerate() {
        // SAFETY: the container lies in the program's loaded `.nv_fatbin` (or `__nv_relfatbin`) section.
        let (bytes, _) = unsafe { image::segment_bytes(data as usize) }
            .ok_or_else(|| bad(format!("{program}: fatbinary {index}: unit {i} at {data:#x} is not mapped")))?;
        let parsed =
            fatbin::parse(bytes).map_err(|e| bad(format!("{program}: fatbinary {index} is corrupted: {e}")))?;
        let Some(entry) = parsed.best_ptx(DEVICE_ARCH) else {
            let sass: Vec<String> = parsed.sass_archs().iter().map(|a| format!("sm_{a}")).collect();
            let arch = parsed.sass_archs().first().copied().unwrap_or(80);
            return Err((
                Error::NO_KERNEL_IMAGE_FOR_DEVICE,
                format!(
                    "error: {program} carries no PTX, only GPU machine code (SASS for {}), which lockstep cannot run; \
                     rebuild it with PTX included, e.g. `nvcc -arch=sm_{arch}` or \
                     `-gencode arch=compute_{arch},code=[sm_{arch},compute_{arch}]`",
                    if sass.is_empty() { "no architecture".to_string() } else { sass.join(", ") }
                ),
            ));
        };
        let text =
            entry.ptx_text().map_err(|e| bad(format!("{program}: fatbinary {index}: its PTX is unreadable: {e}")))?;
        let name = if pieces.len() > 1 {
            format!("{program} (fatbinary {index}, unit {i}, compute_{} PTX)", entry.arch)
        } else {
            format!("{program} (fatbinary {index}, compute_{} PTX)", entry.arch)
        };
        units.push(Unit { name, text });
    }
    let name = match units.as_slice() {
        [one] => one.name.clone(),
        _ => format!("{program} (fatbinary {index}, {} linked units)", units.len()),
    };
    let text = link::link(&units).map_err(|e| (Error::INVALID_PTX, format!("error: {program}: {e}")))?;
    Ok((text, name))
}
