//! Launching a kernel on any engine, for the JIT's tests.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};
use ir::Module;

/// A kernel argument: a buffer (allocated, its pointer passed) or a scalar's bytes.
#[derive(Clone, Debug)]
pub enum Arg {
    Buf(Vec<u8>),
    Scalar(Vec<u8>),
}

/// Runs `kernel` on `backend` on fresh memory, with `shared` bytes of dynamic shared memory; returns every
/// buffer's final bytes and the printf output, or the error's text.
pub fn launch(
    backend: &mut dyn Backend,
    module: &Module,
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared: u32,
    args: &[Arg],
) -> Result<(Vec<Vec<u8>>, Vec<u8>), String> {
    let mut memory = DeviceMemory::new();
    let loaded = LoadedModule::load(module.clone(), &mut memory)?;
    if module.functions.values().any(|f| f.body.is_none() && program::is_builtin(&f.name) && f.name.ends_with("alloc"))
    {
        memory.ensure_heap(64 * 1024);
    }
    let k = loaded.module.function(kernel).ok_or("no kernel")?;
    backend.check_supported(&loaded, k).map_err(|e| e.to_string())?;
    let mut params = ParamBuffer::for_kernel(&loaded.module.functions[k]);
    let mut buffers = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a {
            Arg::Buf(bytes) => {
                let p = memory.alloc_bytes(bytes, format!("argument {i}"));
                buffers.push(p);
                params.set(i, &p.to_le_bytes())?;
            }
            Arg::Scalar(bytes) => params.set(i, bytes)?,
        }
    }
    let config = LaunchConfig { grid, block, dynamic_shared: shared };
    let launch = Launch { module: &loaded, kernel: k, config, params: &params, collect_stats: false };
    let mut stdout = Vec::new();
    backend.launch(&launch, &mut memory, &mut stdout).map_err(|e| e.to_string())?;
    let out = buffers.iter().map(|&p| memory.bytes(p).map(<[u8]>::to_vec).unwrap_or_default()).collect();
    Ok((out, stdout))
}
