//! Dynamic per-thread stack allocation (PTX ISA, "Stack Manipulation Instructions": `stacksave`,
//! `stackrestore`, `alloca`). Each thread has a dynamic area of [`ALLOCA_BYTES`] bytes in its local memory,
//! apart from the frames of its functions, and a stack pointer into it: `alloca` rounds the pointer up to the
//! alignment (at least 8), hands it out and moves it on by the size; `stacksave` reads the pointer,
//! `stackrestore` sets it back (freeing what was allocated since), and a function's return sets it back to
//! where it was when the function was called. The area grows upwards; an allocation that does not fit is an
//! error at run time (on a GPU a stack overflow, undefined), so it never reaches another thread's memory.
//! Pointers are local-space addresses (usable by `ld.local`/`st.local`, and generically after
//! `cvta.local`). Both engines align the area to [`AREA_ALIGN`], so they pad alike (and run out at the same
//! point) for every alignment up to that.
//!
//! Only the 64-bit forms are accepted: a `.u32` pointer would be a 32-bit local address, and the JIT's local
//! addresses are 64-bit host addresses.

use ir::{Immediate, Opcode, Operand, ScalarType};

use crate::{Decoder, Frame, InstId, Kind, Op, RegMap, Src, Ty};

/// Bytes of each thread's dynamic area.
pub const ALLOCA_BYTES: u64 = 64 << 10;
/// Alignment of the start of the dynamic area in both engines.
pub const AREA_ALIGN: u64 = 4096;
/// `alloca`'s alignment when none is given, and the least it uses (the ISA's guaranteed minimum).
pub const MIN_ALIGN: u64 = 8;
/// The largest alignment `alloca` takes (as `ptxas` checks).
pub const MAX_ALIGN: u64 = 1 << 23;

/// `alloca` of `size` bytes aligned to `align` with the stack pointer at `sp` in an area ending at `end`
/// (addresses in the engine's local space): the allocation's address and the new stack pointer, or `None`
/// when it does not fit.
pub fn alloca(sp: u64, size: u64, align: u64, end: u64) -> Option<(u64, u64)> {
    let a = align.max(MIN_ALIGN);
    let ptr = sp.checked_add(a - 1)? & !(a - 1);
    let next = ptr.checked_add(size)?;
    (next <= end).then_some((ptr, next))
}

/// The error of an `alloca` that does not fit in the rest of the dynamic area (the same on both engines).
pub fn exhausted_error(size: u64, align: u64, used: u64) -> String {
    format!(
        "`alloca` of {size} bytes (aligned to {}) does not fit in the thread's dynamic stack: {used} of its \
         {ALLOCA_BYTES} bytes are in use",
        align.max(MIN_ALIGN)
    )
}

/// The error of a `stackrestore` to a pointer outside the dynamic area (the ISA leaves it undefined).
pub fn restore_error(pointer: u64) -> String {
    format!("`stackrestore` to {pointer:#x}, which is not a pointer `stacksave` gave: it is outside the thread's dynamic stack")
}

impl Decoder<'_> {
    /// `stacksave.u64 d`, `stackrestore.u64 a` (a register), `alloca.u64 ptr, size{, immAlign}` (size a
    /// register or immediate; immAlign a power of 2 up to 2^23).
    pub(crate) fn stack_op(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let ops = &inst.operands;
        let name = inst.opcode;
        let reg64 = |o: &Operand| {
            matches!(o, Operand::Reg(r) if self.body.regs[*r].ty.size() == 8
            && self.body.regs[*r].ty != ScalarType::Pred)
        };
        let types: Vec<ScalarType> = inst.types().collect();
        let only_type = inst.modifiers.iter().all(|m| matches!(m, ir::Modifier::Type(_)));
        if types.as_slice() == [ScalarType::U32] {
            self.unsupported(
                i,
                &format!(
                    "`{name}.u32` (a 32-bit local address) is not supported: lockstep runs `.address_size 64` with \
                     64-bit local addresses; use `{name}.u64`"
                ),
            );
            return;
        }
        let typed = types.as_slice() == [ScalarType::U64] && only_type;
        let align = match ops.get(2) {
            None => Some(MIN_ALIGN),
            Some(Operand::Imm(Immediate::Int { value, .. })) => {
                u64::try_from(*value).ok().filter(|a| a.is_power_of_two() && *a <= MAX_ALIGN)
            }
            Some(_) => None,
        };
        let ok = typed
            && match name {
                Opcode::Stacksave | Opcode::Stackrestore => ops.len() == 1 && reg64(&ops[0]),
                _ => {
                    (2..=3).contains(&ops.len())
                        && reg64(&ops[0])
                        && (reg64(&ops[1]) || matches!(ops[1], Operand::Imm(Immediate::Int { .. })))
                        && align.is_some()
                }
            };
        if !ok {
            let form = match name {
                Opcode::Stacksave => "stacksave.u64 d",
                Opcode::Stackrestore => "stackrestore.u64 a",
                _ => "alloca.u64 ptr, size{, immAlign}",
            };
            self.unsupported(
                i,
                &format!(
                    "`{form}` takes 64-bit registers (a size may be an immediate; immAlign an immediate power of 2 \
                     up to 2^23)"
                ),
            );
            return;
        }
        op.ty = Ty::U64;
        match name {
            Opcode::Stacksave => {
                op.kind = Kind::StackSave;
                op.dst = self.dst(i, &ops[0], regs);
            }
            Opcode::Stackrestore => {
                op.kind = Kind::StackRestore;
                op.a = self.src(i, &ops[0], Ty::U64, regs, frame);
            }
            _ => {
                op.kind = Kind::Alloca;
                op.dst = self.dst(i, &ops[0], regs);
                op.a = self.src(i, &ops[1], Ty::U64, regs, frame);
                op.b = Src::Imm(align.unwrap_or(MIN_ALIGN).max(MIN_ALIGN));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloca_rounds_up_and_refuses_overflow() {
        assert_eq!(alloca(0, 4, 8, 64), Some((0, 4)));
        assert_eq!(alloca(4, 4, 1, 64), Some((8, 12)));
        assert_eq!(alloca(12, 8, 32, 64), Some((32, 40)));
        assert_eq!(alloca(40, 25, 8, 64), None);
        assert_eq!(alloca(40, 24, 8, 64), Some((40, 64)));
        assert_eq!(alloca(8, u64::MAX, 8, 64), None);
    }
}
