//! `cp.async` (Ampere's asynchronous copies from global to shared memory), executed when issued.
//!
//! A copy finishes before the instruction after it runs, so `cp.async.commit_group`, `wait_group` and
//! `wait_all` have nothing left to wait for (they decode to no-ops), and every valid program sees what the
//! hardware gives it: reading the destination before the wait that covers the copy is a race on a GPU,
//! whichever value it sees.

use simt::LaneMask;

use crate::{Extra, MemRef, Op, Space, Src, SymAddr, WarpAccess};

/// The copy of a `cp.async`: its source (global memory; the destination is the op's memory operand),
/// how many bytes it writes, and how many of them come from the source (the rest are zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOp {
    pub src: MemRef,
    /// `cp-size`: 4, 8 or 16 bytes.
    pub size: u32,
    /// `src-size`, or `None` for all of `size`.
    pub src_size: Option<Src>,
    /// `ignore-src`: when the predicate is true, nothing is read (all zeros).
    pub ignore_src: Option<Src>,
}

impl CopyOp {
    /// Each lane's source address.
    pub fn src_addresses(&self, warp: &impl WarpAccess) -> [u64; crate::WARP] {
        let base = match self.src.base {
            Src::Sym(SymAddr::Global(a), extra) => [a.wrapping_add_signed(extra); crate::WARP],
            ref s => warp.read(s),
        };
        base.map(|b| b.wrapping_add_signed(self.src.offset))
    }

    /// How many bytes each lane reads (the rest of `size` are zeros).
    pub fn src_bytes(&self, warp: &impl WarpAccess) -> [u32; crate::WARP] {
        let mut n = match &self.src_size {
            Some(s) => warp.read(s).map(|v| (v as u32).min(self.size)),
            None => [self.size; crate::WARP],
        };
        if let Some(p) = &self.ignore_src {
            let ignore = warp.read(p);
            for (n, i) in n.iter_mut().zip(ignore) {
                if i != 0 {
                    *n = 0;
                }
            }
        }
        n
    }
}

/// Runs a `cp.async` for the lanes of `exec`: for each, `src-size` bytes from global memory and zeros up to
/// `cp-size`, stored to shared memory, with the checks and errors of `ld` and `st`.
pub fn exec(warp: &mut impl WarpAccess, exec: LaneMask, op: &Op) -> Result<(), device::ExecError> {
    let Some(Extra::Copy(copy)) = op.extra.as_deref() else { return Ok(()) };
    let dst = warp.addresses(exec);
    let src = copy.src_addresses(warp);
    let bytes = copy.src_bytes(warp);
    for lane in exec.iter() {
        let l = lane as usize;
        if !dst[l].is_multiple_of(u64::from(copy.size)) {
            return Err(warp.misaligned(lane, Space::Shared, dst[l], copy.size));
        }
        let mut at = 0;
        while at < copy.size {
            // Whole 8-byte (or smaller) pieces where the source covers them, bytes at the boundary.
            let piece = (copy.size - at).min(8);
            let from_src = bytes[l].saturating_sub(at).min(piece);
            let (n, value) = if from_src == piece {
                (piece, warp.load(lane, Space::Global, src[l] + u64::from(at), piece)?)
            } else if from_src > 0 {
                (1, warp.load(lane, Space::Global, src[l] + u64::from(at), 1)?)
            } else {
                (piece, 0)
            };
            warp.store(lane, Space::Shared, dst[l] + u64::from(at), n, value)?;
            at += n;
        }
    }
    Ok(())
}
