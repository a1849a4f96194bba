//! Launch geometry and kernel parameters.

use std::fmt;

use ir::{Function, Param};
use serde::{Deserialize, Serialize};

/// A 3-component size or index (`dim3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const ONE: Dim3 = Dim3 { x: 1, y: 1, z: 1 };

    pub fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// Number of elements, or `None` on overflow.
    pub fn count(self) -> Option<u64> {
        u64::from(self.x).checked_mul(u64::from(self.y))?.checked_mul(u64::from(self.z))
    }

    /// The index with linear number `i` (x fastest).
    pub fn unflatten(self, i: u64) -> Dim3 {
        let x = (i % u64::from(self.x.max(1))) as u32;
        let rest = i / u64::from(self.x.max(1));
        let y = (rest % u64::from(self.y.max(1))) as u32;
        let z = (rest / u64::from(self.y.max(1))) as u32;
        Dim3 { x, y, z }
    }

    /// Linear number of index `at` (x fastest).
    pub fn flatten(self, at: Dim3) -> u64 {
        (u64::from(at.z) * u64::from(self.y) + u64::from(at.y)) * u64::from(self.x) + u64::from(at.x)
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

/// Grid and block shape of a launch, and its dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: u32,
}

/// Limits a launch must respect (those of current NVIDIA GPUs).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
pub const MAX_BLOCK_DIM: Dim3 = Dim3 { x: 1024, y: 1024, z: 64 };
pub const MAX_GRID_DIM: Dim3 = Dim3 { x: u32::MAX, y: 65535, z: 65535 };

impl LaunchConfig {
    /// Checks the shape against the hardware limits.
    pub fn validate(&self) -> Result<(), String> {
        let (g, b) = (self.grid, self.block);
        if g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0 {
            return Err(format!("grid {g} and block {b} must have no zero dimension"));
        }
        if b.x > MAX_BLOCK_DIM.x || b.y > MAX_BLOCK_DIM.y || b.z > MAX_BLOCK_DIM.z {
            return Err(format!("block {b} exceeds the maximum {MAX_BLOCK_DIM}"));
        }
        if b.count().unwrap_or(u64::MAX) > MAX_THREADS_PER_BLOCK {
            return Err(format!("block {b} has more than {MAX_THREADS_PER_BLOCK} threads"));
        }
        if g.y > MAX_GRID_DIM.y || g.z > MAX_GRID_DIM.z {
            return Err(format!("grid {g} exceeds the maximum y/z of {}", MAX_GRID_DIM.y));
        }
        Ok(())
    }

    pub fn threads_per_block(&self) -> u32 {
        (self.block.x * self.block.y * self.block.z).max(1)
    }

    pub fn blocks(&self) -> u64 {
        self.grid.count().unwrap_or(0)
    }
}

/// Where one parameter lives in the parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    pub offset: u64,
    pub size: u64,
}

/// Lays parameters out in order, each at its alignment (the CUDA ABI for kernel parameters).
pub fn param_layout(params: &[Param]) -> (Vec<ParamSlot>, u64) {
    let mut offset = 0u64;
    let mut slots = Vec::with_capacity(params.len());
    for p in params {
        let align = p.alignment().max(1);
        offset = offset.div_ceil(align) * align;
        slots.push(ParamSlot { offset, size: p.size() });
        offset += p.size();
    }
    (slots, offset)
}

/// The parameter buffer of a kernel launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamBuffer {
    pub bytes: Vec<u8>,
    pub slots: Vec<ParamSlot>,
}

impl ParamBuffer {
    /// An all-zero buffer laid out for `kernel`'s parameters.
    pub fn for_kernel(kernel: &Function) -> ParamBuffer {
        let (slots, size) = param_layout(&kernel.params);
        ParamBuffer { bytes: vec![0; size as usize], slots }
    }

    /// Stores the little-endian bytes of parameter `index`; the length must match its size.
    pub fn set(&mut self, index: usize, value: &[u8]) -> Result<(), String> {
        let slot = self.slots.get(index).ok_or_else(|| format!("the kernel has no parameter {index}"))?;
        if value.len() as u64 != slot.size {
            return Err(format!("parameter {index} is {} bytes, the value has {}", slot.size, value.len()));
        }
        let start = slot.offset as usize;
        self.bytes[start..start + value.len()].copy_from_slice(value);
        Ok(())
    }
}
