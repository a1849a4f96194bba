//! Which registers an instruction reads and writes: the def/use facts that liveness, the emulator's
//! scheduling and the JIT's barrier spilling all need, stated once.

use crate::module::*;

/// How an instruction touches a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Written. A guarded write may leave the old value in place, so it does not end the old value's life.
    Write,
}

impl Inst {
    /// Whether operand 0 is written (the destination of a value-producing instruction).
    pub fn writes_first_operand(&self) -> bool {
        use Opcode::*;
        match self.opcode {
            St | Red | Bra | Brx | Call | Ret | Exit | Trap | Brkpt | Membar | Fence | Prefetch | Prefetchu | Sust
            | Sured | Stmatrix | Nanosleep | Pmevent | Cp | Applypriority | Discard | Stackrestore | Griddepcontrol
            | Setmaxnreg | Multimem | Tensormap | Tcgen05 | Clusterlaunchcontrol => false,
            Bar | Barrier => self.has(Word::Red),
            Wmma => !self.has(Word::Store),
            Mbarrier => matches!(self.operands.first(), Some(Operand::Reg(_) | Operand::Sink | Operand::Pair(..))),
            _ => !self.operands.is_empty(),
        }
    }

    /// Calls `f` for every register the instruction reads or writes, guard included, in operand order.
    pub fn for_each_reg(&self, mut f: impl FnMut(RegId, Access)) {
        if let Some(g) = self.guard {
            f(g.reg, Access::Read);
        }
        if self.opcode == Opcode::Call {
            // call (returns), target, (args) [, prototype]
            let mut lists = 0;
            for op in &self.operands {
                let is_returns = matches!(op, Operand::List(_))
                    && lists == 0
                    && matches!(self.operands.first(), Some(Operand::List(_)));
                if matches!(op, Operand::List(_)) {
                    lists += 1;
                }
                visit(op, if is_returns { Access::Write } else { Access::Read }, &mut f);
            }
            return;
        }
        let writes = self.writes_first_operand();
        for (i, op) in self.operands.iter().enumerate() {
            visit(op, if i == 0 && writes { Access::Write } else { Access::Read }, &mut f);
        }
    }
}

fn visit(op: &Operand, access: Access, f: &mut impl FnMut(RegId, Access)) {
    match op {
        Operand::Reg(r) | Operand::RegElement(r, _) | Operand::Select(r, _) => f(*r, access),
        Operand::Not(r) | Operand::Neg(r, _) => f(*r, Access::Read),
        Operand::Pair(a, b) => {
            f(*a, access);
            f(*b, access);
        }
        Operand::Address(a) => {
            if let AddressBase::Reg(r) = a.base {
                f(r, Access::Read);
            }
        }
        Operand::Vector(items) | Operand::List(items) => items.iter().for_each(|o| visit(o, access, f)),
        Operand::VectorPair(items, p) => {
            items.iter().for_each(|o| visit(o, access, f));
            f(*p, access);
        }
        Operand::Bracket(items) => items.iter().for_each(|o| visit(o, Access::Read, f)),
        Operand::Special(..)
        | Operand::Imm(_)
        | Operand::Sink
        | Operand::Label(_)
        | Operand::Symbol(_)
        | Operand::SymbolOffset(..)
        | Operand::Table(_)
        | Operand::Prototype(_) => {}
    }
}
