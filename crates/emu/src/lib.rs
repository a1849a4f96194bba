//! The PTX functional emulator: lockstep's reference semantics and its source of SIMT statistics.
//!
//! Each launch decodes the kernel and every function it can call into [`program::Program`]s (operands
//! resolved to register slots and launch addresses, unsupported instructions listed before anything runs),
//! then runs the grid CTA by CTA. Inside a CTA, warps of 32 lanes execute in lock-step under an
//! immediate-post-dominator reconvergence stack with call frames (the `simt` crate); a warp runs until it
//! finishes or waits at a barrier, and a barrier releases when every thread of the CTA that has not exited
//! has arrived. Arithmetic follows the PTX ISA exactly through the `scalar` crate; `.approx` functions are
//! computed to within the ISA's documented error (see `float.rs`).
//!
//! Warp-level matrix instructions (`wmma`, `mma.sync`, `ldmatrix`) run once per warp over all 32 lanes
//! (`tensor.rs`: fragment layouts and rounding); texture and surface instructions read and write the texture
//! and surface objects of `device::texture` through their 64-bit handles (`texture.rs`: filtering, address and
//! boundary modes).
//!
//! Memory: global accesses are checked against the device allocations (out-of-bounds and misaligned
//! accesses are errors naming kernel, block, thread, PTX line and address); shared memory is one buffer per
//! CTA; local memory is a stack per thread; generic addresses of shared, local and parameter memory live in
//! address windows that no device pointer uses (`program::SHARED_WINDOW` and friends).

mod dynstack;
mod machine;
mod mem;

mod stats;

use std::io::Write;

use device::{Backend, DeviceMemory, ErrorKind, ExecError, Launch, LaunchReport, LoadedModule, Location, SharedLayout};
use ir::FuncId;

use crate::machine::Machine;

/// Largest shared memory a CTA may use (227 KiB, as on sm_90).
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;

/// The emulator backend.
#[derive(Debug, Default)]
pub struct Emulator;

impl Emulator {
    pub fn new() -> Emulator {
        Emulator
    }
}

fn kernel_location(module: &LoadedModule, kernel: FuncId) -> Location {
    Location { kernel: module.module.functions[kernel].name.clone(), ..Location::default() }
}

impl Backend for Emulator {
    fn name(&self) -> &'static str {
        "emu"
    }

    fn check_supported(&self, module: &LoadedModule, kernel: FuncId) -> Result<(), ExecError> {
        let layout = SharedLayout::for_kernel(&module.module, kernel);
        program::decode_all(module, kernel, &layout)
            .map(|_| ())
            .map_err(|list| ExecError::new(ErrorKind::Unsupported(list), kernel_location(module, kernel)))
    }

    fn launch(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
    ) -> Result<LaunchReport, ExecError> {
        run(launch, memory, stdout, None)
    }

    /// Every CTA is created up front and they take turns (`machine/grid.rs`).
    fn launch_cooperative(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
        workspace: u64,
    ) -> Result<LaunchReport, ExecError> {
        run(launch, memory, stdout, Some(workspace))
    }
}

/// A launch; `workspace` is a cooperative launch's grid workspace.
fn run(
    launch: &Launch<'_>,
    memory: &mut DeviceMemory,
    stdout: &mut dyn Write,
    workspace: Option<u64>,
) -> Result<LaunchReport, ExecError> {
    let module = launch.module;
    let kernel = launch.kernel;
    let name = module.module.functions[kernel].name.clone();
    launch.config.validate().map_err(|m| ExecError::launch(&name, m))?;
    let layout = SharedLayout::for_kernel(&module.module, kernel);
    let shared = layout.dynamic_offset.max(layout.static_size) + u64::from(launch.config.dynamic_shared);
    if shared > MAX_SHARED_BYTES {
        return Err(ExecError::launch(
            &name,
            format!("the CTA needs {shared} bytes of shared memory; the limit is {MAX_SHARED_BYTES}"),
        ));
    }
    let programs = program::decode_all(module, kernel, &layout)
        .map_err(|list| ExecError::new(ErrorKind::Unsupported(list), kernel_location(module, kernel)))?;
    let programs = Machine::index_programs(module, programs);
    if workspace.is_some() && launch.config.blocks() > device::MAX_COOPERATIVE_CTAS {
        return Err(ExecError::launch(
            &name,
            format!(
                "a cooperative launch of {} CTAs; at most {} can be resident at once",
                launch.config.blocks(),
                device::MAX_COOPERATIVE_CTAS
            ),
        ));
    }
    let grid = workspace.map(|w| machine::Grid::new(&module.module, &programs, w));
    let collector = launch.collect_stats.then(|| stats::Collector::new(&programs));
    let textures = memory.textures().clone();
    let heap = memory.heap();
    let mut machine = Machine {
        module,
        programs: programs.clone(),
        kernel,
        config: launch.config,
        params: &launch.params.bytes,
        global: mem::GlobalMem::new(memory.regions_mut()),
        shared_size: shared as usize,
        stats: collector,
        out: stdout,
        textures,
        heap,
        grid,
    };
    machine.run()?;
    let threads = launch.config.blocks() * u64::from(launch.config.threads_per_block());
    let stats = machine.stats.take().map(|c| {
        let mut s = c.finish(&module.module, &programs, &name, threads, u64::from(launch.config.threads_per_block()));
        s.grid = Some(launch.config.grid);
        s.block = Some(launch.config.block);
        s
    });
    Ok(LaunchReport { stats })
}
