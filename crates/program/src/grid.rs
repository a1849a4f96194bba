//! Grid-wide synchronization in cooperative launches. CUDA's `this_grid().sync()` is a software barrier:
//! the kernel reads the address of the grid's workspace from `%envreg1` (high half) and `%envreg2` (low
//! half), one thread per CTA adds to the barrier word there and polls it with strong loads (`ld.acquire`;
//! older toolkits `ld.volatile`) until its top bit flips. The engines run every CTA of a cooperative
//! launch at once; the polls are where a CTA lets the others run (the emulator switches CTAs there, the
//! JIT's threads yield there and notice a launch that failed elsewhere).

use ir::{Module, Opcode, SpecialReg, Word};

use crate::{Program, Space, Src};

/// Whether the function reads the grid workspace's address (`%envreg1` or `%envreg2`).
pub fn reads_workspace(prog: &Program) -> bool {
    prog.ops.iter().any(|op| {
        [&op.a, &op.b, &op.c, &op.d]
            .iter()
            .any(|s| matches!(s, Src::Special(SpecialReg::Envreg1 | SpecialReg::Envreg2, _)))
    })
}

/// For each op of the function: whether it is a strong load (`.volatile`, `.relaxed`, `.acquire`) that may
/// read global memory, the kind of load a spin loop polls.
pub fn spin_loads(module: &Module, prog: &Program) -> Vec<bool> {
    let body = module.functions[prog.func].body.as_ref();
    prog.ops
        .iter()
        .map(|op| {
            let Some(inst) = body.and_then(|b| b.insts.get(op.inst)) else { return false };
            inst.opcode == Opcode::Ld
                && matches!(op.m.space, Space::Global | Space::Generic)
                && [Word::Volatile, Word::Relaxed, Word::Acquire].iter().any(|&w| inst.has(w))
        })
        .collect()
}

/// The grid workspace's address as `%envreg1` (`high`) or `%envreg2` reads it.
pub fn envreg(workspace: u64, high: bool) -> u64 {
    if high {
        workspace >> 32
    } else {
        workspace & 0xFFFF_FFFF
    }
}
