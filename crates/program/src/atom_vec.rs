//! Vector atomics (PTX ISA 9.7.13.5, PTX 8.1, sm_90): `atom{.sem}{.scope}{.global}.add.v2/.v4.f32`, and
//! `.add/.min/.max.noftz` on `.v2/.v4/.v8` `.f16`/`.bf16` and `.v2/.v4` `.f16x2`/`.bf16x2`. The ISA makes
//! each element its own atomic operation (the vector as a whole is not atomic), so both engines run the
//! scalar atomic of the element type once per element, at `[a] + k * size`, in element order.

use crate::{AtomOp, Decoder, Dst, Frame, InstId, Op, Operand, RegMap, Space, Src, Sub, Ty};
use smallvec::SmallVec;

/// The per-element operands of a vector atomic: `dsts` is empty for `red`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomVec {
    pub dsts: SmallVec<[Dst; 8]>,
    pub srcs: SmallVec<[Src; 8]>,
}

impl AtomVec {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.srcs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.srcs.is_empty()
    }
}

/// Checks a vector atomic against the ISA's forms and decodes its vectors; `None` after refusing it.
pub(crate) fn decode(
    d: &mut Decoder,
    i: InstId,
    op: &Op,
    ops: &[Operand],
    regs: &RegMap,
    frame: &Frame,
) -> Option<AtomVec> {
    let n = usize::from(op.m.vec);
    let Sub::Atom(aop) = op.m.sub else { return None };
    let fits = match op.ty {
        Ty::F32 => aop == AtomOp::Add && n <= 4,
        Ty::F16 | Ty::Bf16 => matches!(aop, AtomOp::Add | AtomOp::Min | AtomOp::Max),
        Ty::F16x2 | Ty::Bf16x2 => matches!(aop, AtomOp::Add | AtomOp::Min | AtomOp::Max) && n <= 4,
        _ => false,
    };
    if !fits || !matches!(n, 2 | 4 | 8) {
        d.unsupported(
            i,
            "vector atomics are `.add` on `.v2`/`.v4` `.f32`, and `.add`/`.min`/`.max` on `.v2`/`.v4`/`.v8` \
             `.f16`/`.bf16` or `.v2`/`.v4` `.f16x2`/`.bf16x2`",
        );
        return None;
    }
    if !matches!(op.m.space, Space::Global | Space::Generic) {
        d.unsupported(i, "vector atomics work on global (or generic) addresses only");
        return None;
    }
    let is_atom = op.kind == crate::Kind::Atom;
    let (dst, src) = if is_atom { (ops.first(), ops.get(2)) } else { (None, ops.get(1)) };
    let srcs: SmallVec<[Src; 8]> = match src {
        Some(Operand::Vector(items)) if items.len() == n => {
            items.iter().map(|o| d.src(i, o, op.ty, regs, frame)).collect()
        }
        _ => {
            d.unsupported(i, &format!("a `.v{n}` atomic takes a vector of {n} source registers"));
            return None;
        }
    };
    let dsts: SmallVec<[Dst; 8]> = match dst {
        Some(Operand::Vector(items)) if items.len() == n => items.iter().map(|o| d.dst(i, o, regs)).collect(),
        None if !is_atom => SmallVec::new(),
        _ => {
            d.unsupported(i, &format!("a `.v{n}` atomic returns a vector of {n} registers"));
            return None;
        }
    };
    // A last `.L2::cache_hint` policy operand is a hint only: nothing to honour.
    Some(AtomVec { dsts, srcs })
}
