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
}
