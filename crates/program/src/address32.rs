//! 32-bit local and parameter addresses, refused at load. lockstep runs `.address_size 64`: the emulator's
//! local addresses are offsets into the thread's memory, but the JIT's are 64-bit host addresses (and so are
//! both engines' kernel-parameter addresses in the JIT), so a local address cut to 32 bits names other memory
//! there. Rather than a wrong answer on one engine, these forms are refused on both, naming the line:
//!
//! - `cvta.local.u32`, `cvta.to.local.u32` and the `.param` forms;
//! - a `.local` or `.param` access through a 32-bit register (`ld.local.u32 %r1, [%r2]`), or through an
//!   absolute address (`ld.local.u32 %r1, [8]`: the emulator would read its own offset 8, the JIT address 8);
//! - a local variable's or parameter's address taken as a 32-bit value (`mov.u32 %r1, buf`).
//!
//! Shared addresses are offsets into the CTA's shared memory in both engines and stay 32-bit friendly: the
//! JIT adds its shared base at each access, and `cvta.to.shared.u32` of a cut generic address gives the same
//! offset on both (arithmetic modulo 2^32).

use ir::{AddressBase, InstId, Opcode, Operand, StateSpace, Symbol};

use crate::{Decoder, Frame, SymAddr};

/// The advice every refusal ends with.
const USE_64: &str = "lockstep runs `.address_size 64`, where the JIT's local addresses are 64-bit host addresses; \
                      use a 64-bit (`.u64`) register";

impl Decoder<'_> {
    /// Why instruction `i` is refused for a 32-bit local or parameter address, if it is.
    pub(crate) fn narrow_local_address(&self, i: InstId, frame: &Frame) -> Option<String> {
        let inst = &self.body.insts[i];
        let spaces: Vec<StateSpace> = inst
            .modifiers
            .iter()
            .filter_map(|m| match m {
                ir::Modifier::Space(s) => Some(*s),
                _ => None,
            })
            .collect();
        let local = spaces.iter().any(|s| {
            matches!(s, StateSpace::Local | StateSpace::Param | StateSpace::ParamEntry | StateSpace::ParamFunc)
        });
        let narrow = inst.types().next().is_some_and(|t| t.size() == 4);
        if inst.opcode == Opcode::Cvta && local && narrow {
            return Some(format!("a 32-bit local or parameter address (`cvta` of `.u32` size): {USE_64}"));
        }
        for o in &inst.operands {
            match o {
                Operand::Address(a) if local => match a.base {
                    AddressBase::Reg(r) if self.body.regs[r].ty.size() == 4 => {
                        return Some(format!("a 32-bit register as a local or parameter address: {USE_64}"));
                    }
                    AddressBase::Absolute(_) if spaces.contains(&StateSpace::Local) => {
                        return Some(
                            "an absolute local address: local memory is reached through its variables, their \
                             addresses, `alloca` or `stacksave`"
                                .to_string(),
                        );
                    }
                    _ => {}
                },
                Operand::Symbol(s) | Operand::SymbolOffset(s, _) if narrow && self.frame_symbol(*s, frame) => {
                    return Some(format!("the address of a local variable or parameter as a 32-bit value: {USE_64}"));
                }
                _ => {}
            }
        }
        None
    }

    /// Whether symbol `s` lives in the thread's frame or the kernel's parameter buffer.
    fn frame_symbol(&self, s: Symbol, frame: &Frame) -> bool {
        matches!(self.symbol_addr(s, frame), Some(SymAddr::Frame(_) | SymAddr::KernelParam(_)))
    }
}
