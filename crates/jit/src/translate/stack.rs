//! The thread's dynamic stack (`program::stack`: `stacksave`, `stackrestore`, `alloca`). Kernels with a stack
//! instruction in any function get a dynamic area after the deepest chain of frames in each thread's local
//! memory, at a multiple of `AREA_ALIGN` from the thread's start (itself so aligned: `exec.rs` maps local
//! memory so), with the stack pointer, a host address, in the 8 bytes before it (set to the area's start for
//! every thread of each CTA by `exec.rs`). A device function that allocates keeps the pointer of its entry and
//! stores it back when it returns.

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use ir::FuncId;
use program::stack::{ALLOCA_BYTES, AREA_ALIGN, MIN_ALIGN};
use program::{Kind, Op, Program, Src};

use super::{trusted, Translator, I64};
use crate::abi::{ctx as cx, error};

/// Where the dynamic area starts in a thread's local memory (after `frames` bytes of frames and the stack
/// pointer), when some function of the kernel has a stack instruction.
pub fn dyn_stack_start(programs: &HashMap<FuncId, Program>, frames: u64) -> Option<u64> {
    let uses = programs.values().any(|p| p.ops.iter().any(is_stack_op));
    uses.then(|| (frames + 8).div_ceil(AREA_ALIGN) * AREA_ALIGN)
}

fn is_stack_op(op: &Op) -> bool {
    matches!(op.kind, Kind::StackSave | Kind::StackRestore | Kind::Alloca)
}

impl Translator<'_, '_> {
    /// The host addresses of the thread's stack pointer and of its dynamic area's start.
    fn dyn_area(&mut self, start: u64) -> (Value, Value) {
        let base = self.local_base();
        let area = self.b.ins().iadd_imm_s(base, start as i64);
        let slot = self.b.ins().iadd_imm_s(area, -8);
        (slot, area)
    }

    /// Where the frames of the thread's local memory end (callee frames must end by there).
    pub(super) fn frames_end(&mut self) -> Value {
        match self.env.dyn_stack {
            Some(start) => self.dyn_area(start).0,
            None => {
                let base = self.local_base();
                let len = self.ctx_i64(cx::LOCAL_STRIDE);
                self.b.ins().iadd(base, len)
            }
        }
    }

    /// At a device function's entry: the stack pointer to go back to at its return, if it may move it.
    pub(super) fn save_dyn_stack(&mut self) {
        let moves = self.prog.ops.iter().any(|o| matches!(o.kind, Kind::Alloca | Kind::StackRestore));
        let Some(start) = self.env.dyn_stack.filter(|_| moves) else { return };
        let (slot, _) = self.dyn_area(start);
        let sp = self.b.ins().load(I64, trusted(), slot, 0);
        let v = self.b.declare_var(I64);
        self.b.def_var(v, sp);
        self.dyn_entry = Some(v);
    }

    /// At a device function's return: what it allocated is freed.
    pub(super) fn restore_dyn_stack(&mut self) {
        let (Some(v), Some(start)) = (self.dyn_entry, self.env.dyn_stack) else { return };
        let (slot, _) = self.dyn_area(start);
        let sp = self.b.use_var(v);
        self.b.ins().store(trusted(), sp, slot, 0);
    }

    /// Checked mode: whether a local access of `size` bytes at `addr` lies outside what is allocated of the
    /// dynamic stack (`None` when the kernel has none).
    pub(super) fn outside_dyn_stack(&mut self, addr: Value, size: u32) -> Option<Value> {
        let start = self.env.dyn_stack?;
        let (slot, area) = self.dyn_area(start);
        let sp = self.b.ins().load(I64, trusted(), slot, 0);
        let used = self.b.ins().isub(sp, area);
        let off = self.b.ins().isub(addr, area);
        let end = self.b.ins().iadd_imm_s(off, i64::from(size));
        let past = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, used);
        let wraps = self.b.ins().icmp(IntCC::UnsignedLessThan, end, off);
        Some(self.b.ins().bor(past, wraps))
    }

    pub(super) fn stack_op(&mut self, op: &Op) {
        // `dyn_stack_start` gave every kernel with a stack instruction an area.
        let Some(start) = self.env.dyn_stack else { return };
        let (slot, area) = self.dyn_area(start);
        let sp = self.b.ins().load(I64, trusted(), slot, 0);
        match op.kind {
            Kind::StackSave => self.write(op.dst, sp),
            Kind::StackRestore => {
                let p = self.read(&op.a);
                let off = self.b.ins().isub(p, area);
                let outside = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, off, ALLOCA_BYTES as i64);
                self.fail_if(outside, error::STACK_RESTORE, Some(p), 0);
                self.b.ins().store(trusted(), p, slot, 0);
            }
            _ => {
                let size = self.read(&op.a);
                let align = match op.b {
                    Src::Imm(a) => a.max(MIN_ALIGN),
                    _ => MIN_ALIGN,
                };
                // Host addresses are far below 2^63: rounding up cannot wrap.
                let up = self.b.ins().iadd_imm_s(sp, (align - 1) as i64);
                let ptr = self.b.ins().band_imm_s(up, !((align - 1) as i64));
                let next = self.b.ins().iadd(ptr, size);
                let end = self.b.ins().iadd_imm_s(area, ALLOCA_BYTES as i64);
                let past = self.b.ins().icmp(IntCC::UnsignedGreaterThan, next, end);
                let wraps = self.b.ins().icmp(IntCC::UnsignedLessThan, next, ptr);
                let bad = self.b.ins().bor(past, wraps);
                // The error records the size and the bytes in use (the alignment is the op's).
                let used = self.b.ins().isub(sp, area);
                let fail = self.b.create_block();
                let ok = self.b.create_block();
                self.b.ins().brif(bad, fail, &[], ok, &[]);
                self.b.switch_to_block(fail);
                self.b.ins().store(trusted(), size, self.ctx, cx::ERROR_ADDR);
                self.b.ins().store(trusted(), used, self.ctx, cx::ERROR_SIZE);
                self.fail(error::STACK_ALLOCA, None, 0);
                self.b.switch_to_block(ok);
                self.filled = false;
                self.b.ins().store(trusted(), next, slot, 0);
                self.write(op.dst, ptr);
            }
        }
    }
}
