//! Each lane's dynamic stack (`alloca`, `stacksave`, `stackrestore`; `program::stack`): local addresses from
//! [`BASE`] up, above any frame (frames stay below `machine::MAX_LOCAL_BYTES`). A lane's bytes grow as its
//! allocations reach further; an access must lie below the lane's stack pointer (what is allocated now).

use program::stack::{self, ALLOCA_BYTES, AREA_ALIGN};
use program::WARP;

use crate::machine::{MemFault, MAX_LOCAL_BYTES};
use crate::mem::{read_flat, write_flat};

/// Local address where every lane's dynamic area starts.
pub const BASE: u64 = MAX_LOCAL_BYTES.div_ceil(AREA_ALIGN) * AREA_ALIGN;

pub struct DynStack {
    bytes: Vec<Vec<u8>>,
    /// Each lane's stack pointer (a local address in `[BASE, BASE + ALLOCA_BYTES]`).
    pub sp: [u64; WARP],
}

impl DynStack {
    pub fn new() -> DynStack {
        DynStack { bytes: vec![Vec::new(); WARP], sp: [BASE; WARP] }
    }

    /// Whether a local address is in the dynamic area rather than in a frame.
    pub fn contains(address: u64) -> bool {
        address >= BASE
    }

    fn range(&self, lane: u32, address: u64, size: u32) -> Result<usize, MemFault> {
        let sp = self.sp[lane as usize];
        match address.checked_add(u64::from(size)) {
            Some(end) if end <= sp => Ok((address - BASE) as usize),
            _ => Err(MemFault::Bounds {
                address,
                size,
                detail: Some(format!(
                    "the thread's dynamic stack (alloca) has {} bytes allocated, from {BASE:#x}",
                    sp - BASE
                )),
            }),
        }
    }

    pub fn read(&self, lane: u32, address: u64, size: u32) -> Result<u64, MemFault> {
        let off = self.range(lane, address, size)?;
        Ok(read_flat(&self.bytes[lane as usize], off as u64, size).unwrap_or(0))
    }

    pub fn write(&mut self, lane: u32, address: u64, size: u32, value: u64) -> Result<(), MemFault> {
        let off = self.range(lane, address, size)?;
        let _ = write_flat(&mut self.bytes[lane as usize], off as u64, size, value);
        Ok(())
    }

    /// `alloca`: the allocation's local address, or the error when it does not fit.
    pub fn alloca(&mut self, lane: u32, size: u64, align: u64) -> Result<u64, String> {
        let l = lane as usize;
        let sp = self.sp[l];
        let (ptr, next) = stack::alloca(sp, size, align, BASE + ALLOCA_BYTES)
            .ok_or_else(|| stack::exhausted_error(size, align, sp - BASE))?;
        let need = (next - BASE) as usize;
        if self.bytes[l].len() < need {
            self.bytes[l].resize(need, 0);
        }
        self.sp[l] = next;
        Ok(ptr)
    }

    /// `stackrestore`: the pointer must lie in the area.
    pub fn restore(&mut self, lane: u32, pointer: u64) -> Result<(), String> {
        if !(BASE..=BASE + ALLOCA_BYTES).contains(&pointer) {
            return Err(stack::restore_error(pointer));
        }
        self.sp[lane as usize] = pointer;
        Ok(())
    }
}
