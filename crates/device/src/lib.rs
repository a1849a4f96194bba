//! The device model shared by lockstep's execution engines.
//!
//! [`DeviceMemory`] holds global memory as separate, exactly bounded allocations, and the texture and surface
//! objects over them ([`texture`]); [`LoadedModule`] places a module's variables in it; [`LaunchConfig`] and
//! [`ParamBuffer`] describe a launch; [`Backend`] is what the emulator and the JIT implement; [`ExecError`] and
//! [`KernelStats`] are what they report.

pub mod backend;
pub mod error;
pub mod guarded;
pub mod heap;
pub mod launch;
pub mod memory;
pub mod module;
pub mod stats;
pub mod texture;

pub use backend::{Backend, Launch, LaunchReport, GRID_WORKSPACE_BYTES, MAX_COOPERATIVE_CTAS};
pub use error::{ErrorKind, ExecError, Location, Space};
pub use heap::{DeviceHeap, DEFAULT_HEAP_SIZE};
pub use launch::{Dim3, LaunchConfig, ParamBuffer, ParamSlot};
pub use memory::{AccessError, DeviceMemory, DevicePtr, Region};
pub use module::{LoadedModule, SharedLayout, SharedVar};
pub use stats::KernelStats;
pub use texture::{SurfaceDesc, TextureDesc, Textures};
