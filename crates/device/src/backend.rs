//! The interface both execution engines (emulator, JIT) implement.

use std::io::Write;

use ir::FuncId;

use crate::error::ExecError;
use crate::launch::{LaunchConfig, ParamBuffer};
use crate::memory::DeviceMemory;
use crate::module::LoadedModule;
use crate::stats::KernelStats;

/// One kernel launch.
#[derive(Debug)]
pub struct Launch<'a> {
    pub module: &'a LoadedModule,
    pub kernel: FuncId,
    pub config: LaunchConfig,
    pub params: &'a ParamBuffer,
    /// Collect [`KernelStats`] (costs time in some backends).
    pub collect_stats: bool,
}

/// What a finished launch reports.
#[derive(Debug, Default)]
pub struct LaunchReport {
    pub stats: Option<KernelStats>,
}

/// An execution engine.
pub trait Backend: Send {
    fn name(&self) -> &'static str;

    /// Lists, before anything runs, every instruction of the kernel (and of the functions it can call) that
    /// this backend cannot execute; `Err` names each one with its PTX line.
    fn check_supported(&self, module: &LoadedModule, kernel: FuncId) -> Result<(), ExecError>;

    /// Runs the kernel to completion. Device `printf` output goes to `stdout`.
    fn launch(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
    ) -> Result<LaunchReport, ExecError>;

    /// A cooperative launch (`cudaLaunchCooperativeKernel`): every CTA of the grid is resident at once, so
    /// that CTAs may wait for one another (`this_grid().sync()`, a software barrier on a word of the grid's
    /// workspace). `workspace` is the device address of that workspace (8 zeroed bytes: its size, then the
    /// barrier word), which the kernel reads from `%envreg1` (high half) and `%envreg2` (low half). A grid of
    /// more than [`MAX_COOPERATIVE_CTAS`] CTAs is an invalid launch and runs nothing.
    fn launch_cooperative(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
        workspace: u64,
    ) -> Result<LaunchReport, ExecError> {
        let _ = (memory, stdout, workspace);
        let name = &launch.module.module.functions[launch.kernel].name;
        Err(ExecError::launch(name, format!("the {} engine has no cooperative launch", self.name())))
    }
}

/// The most CTAs a cooperative launch may have on any engine (each is resident at once: an OS thread or an
/// emulated CTA with its own registers and shared memory). The CUDA layer's limit, occupancy times
/// multiprocessors, is usually lower.
pub const MAX_COOPERATIVE_CTAS: u64 = 4096;

/// Bytes of a cooperative launch's grid workspace.
pub const GRID_WORKSPACE_BYTES: u64 = 8;
