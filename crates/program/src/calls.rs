//! Decoding `call`: direct calls (through `.alias` too) and indirect ones, with their arguments and return
//! values as frame offsets, registers or immediates; the device functions the CUDA runtime provides.

use ir::{FuncId, Operand, Symbol};

use crate::{immediate, CallArg, Callee, Decoder, Extra, Frame, InstId, Op, RegMap, SymAddr, Ty};

/// The functions PTX declares without a body that the CUDA runtime provides on the device: `printf`,
/// `assert`, and the device heap's `malloc` and `free`.
pub fn is_builtin(name: &str) -> bool {
    matches!(name, "vprintf" | "__assertfail" | "malloc" | "free")
}

impl Decoder<'_> {
    /// The function an `.alias` stands for.
    fn resolve_alias(&self, f: FuncId) -> FuncId {
        self.module
            .items
            .iter()
            .find_map(|i| match *i {
                ir::Item::Alias { alias, aliasee } if alias == f => Some(aliasee),
                _ => None,
            })
            .unwrap_or(f)
    }

    fn call_arg(&mut self, o: &Operand, regs: &RegMap, frame: &Frame) -> Option<CallArg> {
        Some(match o {
            Operand::Symbol(Symbol::Local(v)) => {
                let var = &self.body.vars[*v];
                CallArg::Frame(*frame.vars.get(v)?, device::module::variable_size(var))
            }
            Operand::Symbol(s @ (Symbol::Param(_) | Symbol::Return(_))) => match self.symbol_addr(*s, frame)? {
                SymAddr::Frame(off) => {
                    let size = match s {
                        Symbol::Param(k) => self.func.params.get(*k as usize)?.size(),
                        Symbol::Return(k) => self.func.returns.get(*k as usize)?.size(),
                        _ => 0,
                    };
                    CallArg::Frame(off, size)
                }
                _ => return None,
            },
            Operand::Reg(r) => {
                let k = r.as_u32() as usize;
                CallArg::Reg(regs.slot[k], u64::from(regs.width[k] / 8))
            }
            Operand::Imm(imm) => CallArg::Imm(immediate(*imm, Ty::B64)),
            _ => return None,
        })
    }

    pub(crate) fn call(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let ops = &self.body.insts[i].operands;
        let (rets, rest): (&[Operand], &[Operand]) = match ops.first() {
            Some(Operand::List(r)) => (r, &ops[1..]),
            _ => (&[], &ops[..]),
        };
        let callee = match rest.first() {
            Some(Operand::Symbol(Symbol::Func(f))) => Callee::Direct(self.resolve_alias(*f)),
            Some(o @ Operand::Reg(_)) => Callee::Indirect(self.src(i, o, Ty::U64, regs, frame)),
            _ => {
                self.unsupported(i, "call target not supported");
                return;
            }
        };
        let args: &[Operand] = match rest.get(1) {
            Some(Operand::List(a)) => a,
            _ => &[],
        };
        let conv = |list: &[Operand], me: &mut Self| -> Vec<CallArg> {
            list.iter()
                .filter_map(|o| {
                    let a = me.call_arg(o, regs, frame);
                    if a.is_none() {
                        me.unsupported(i, "call argument form not supported");
                    }
                    a
                })
                .collect()
        };
        let rets = conv(rets, self);
        let args = conv(args, self);
        if let Callee::Direct(f) = callee {
            let callee_fn = &self.module.functions[f];
            if callee_fn.body.is_none() && !is_builtin(&callee_fn.name) {
                self.unsupported(i, &format!("`{}` is declared but not defined in this module", callee_fn.name));
            }
        }
        op.extra = Some(Box::new(Extra::Call { callee, args, rets }));
    }
}
