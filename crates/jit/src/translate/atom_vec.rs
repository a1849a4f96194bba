//! Vector atomics (`program::atom_vec`) on the scalar JIT: one real atomic read-modify-write per element, at
//! `[a] + k * size`, in element order (the ISA does not make the vector atomic as a whole). The vector path
//! refuses them.

use cranelift_codegen::ir::InstBuilder;
use program::{Extra, Kind, Op};

use super::Translator;

impl Translator<'_, '_> {
    pub(super) fn atomic_vector(&mut self, op: &Op) {
        let Some(Extra::AtomVec(v)) = op.extra.as_deref() else { return };
        let elem = op.ty.bytes();
        let base = self.address(op);
        self.check_access(op, base, elem * v.len() as u32, true);
        let zero = self.b.ins().iconst(cranelift_codegen::ir::types::I64, 0);
        // Every source is read before any destination is written (they may name the same registers).
        let srcs: Vec<_> = v.srcs.iter().map(|s| self.read(s)).collect();
        for (k, a) in srcs.into_iter().enumerate() {
            let addr = self.b.ins().iadd_imm_s(base, i64::from(elem) * k as i64);
            let old = self.atomic_element(op, addr, a, zero);
            if op.kind == Kind::Atom {
                if let Some(d) = v.dsts.get(k) {
                    let old = self.extend(old, op.ty);
                    self.write(*d, old);
                }
            }
        }
    }
}
