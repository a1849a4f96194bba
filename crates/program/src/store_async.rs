//! Asynchronous stores and reductions to shared memory completing on an mbarrier (PTX ISA, "st.async",
//! "red.async"): `st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b, [mbar]`
//! and `red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type [a], b, [mbar]`. A
//! cluster is one CTA in lockstep, so the destination is the CTA's own shared memory; like the bulk copies
//! (`bulk.rs`), the store or reduction is done when issued and then completes its bytes (the stored size) on
//! the mbarrier at once. They are decoded as bulk copies (`Kind::BulkCopy`) whose data are the registers
//! `a..d` of the op (`BulkOp::stored` of them) rather than a source address.
//!
//! Types, as `ptxas` accepts them: `st.async` stores `.b32/.u32/.s32/.f32` (scalar, `.v2`, `.v4`) and
//! `.b64/.u64/.s64/.f64` (scalar, `.v2`); `red.async` runs `.add` on `.u32/.s32/.u64/.s64`, `.min`/`.max`
//! on `.u32/.s32`, `.inc`/`.dec` on `.u32`, `.and`/`.or`/`.xor` on `.b32`. The destination must be aligned
//! to the stored size. The `.global` forms (sm_100) stay refused.

use ir::{InstId, Modifier, Operand, ScalarType, StateSpace};

use crate::bulk::BulkOp;
use crate::mbarrier::{self, Mbar};
use crate::{AtomOp, Decoder, Extra, Frame, Kind, MemRef, Op, RegMap, Space, Ty, WarpAccess};

/// One thread's asynchronous store or reduction: `values` (one per element, `op.ty` wide) to `dst` in shared
/// memory, combined with `bulk.reduce`'s operation, then the complete-tx of their bytes on the mbarrier at
/// `mbar`. Returns whether the mbarrier changed.
pub fn store_lane(
    warp: &mut impl WarpAccess,
    lane: u32,
    op: &Op,
    bulk: &BulkOp,
    dst: u64,
    values: &[u64],
    mbar: u64,
) -> Result<bool, device::ExecError> {
    let elem = op.ty.bytes();
    let size = elem * values.len() as u32;
    if !dst.is_multiple_of(u64::from(size)) {
        return Err(warp.misaligned(lane, Space::Shared, dst, size));
    }
    if !mbar.is_multiple_of(8) {
        return Err(warp.misaligned(lane, Space::Shared, mbar, 8));
    }
    // The mbarrier is checked before the data land, so a bad one stores nothing.
    let word = warp.load(lane, Space::Shared, mbar, 8)?;
    for (k, &v) in values.iter().enumerate() {
        let at = dst + u64::from(elem) * k as u64;
        match bulk.reduce {
            Some(r) => {
                warp.update(lane, Space::Shared, at, elem, &|old| crate::alu::atomic(r, op.ty, old, v, 0))?;
            }
            None => warp.store(lane, Space::Shared, at, elem, v & op.ty.mask())?,
        }
    }
    // A store may have hit the mbarrier itself: read it again.
    let word =
        if (dst..dst + u64::from(size)).contains(&mbar) { warp.load(lane, Space::Shared, mbar, 8)? } else { word };
    let step = mbarrier::apply(Mbar::CompleteTx, word, u64::from(size))
        .map_err(|e| warp.error(lane, device::ErrorKind::Invalid(e)))?;
    warp.store(lane, Space::Shared, mbar, 8, step.word)?;
    Ok(step.word != word)
}

impl Decoder<'_> {
    /// `st.async` / `red.async` with mbarrier completion (the module comment's forms).
    pub(crate) fn store_async(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let name = inst.opcode;
        let spaces: Vec<StateSpace> = inst
            .modifiers
            .iter()
            .filter_map(|m| match m {
                Modifier::Space(s) => Some(*s),
                _ => None,
            })
            .collect();
        if spaces != [StateSpace::SharedCluster] {
            self.unsupported(
                i,
                &format!(
                    "`{name}.async` is implemented to `.shared::cluster` with `.mbarrier::complete_tx::bytes` (the \
                     `.global` forms are sm_100)"
                ),
            );
            return;
        }
        let vec = inst
            .modifiers
            .iter()
            .find_map(|m| match m {
                Modifier::Vector(n) => Some(usize::from(*n)),
                _ => None,
            })
            .unwrap_or(1);
        let ty = inst.types().next();
        let reduce = if name == ir::Opcode::Red {
            let word = crate::bulk::reduce_op(inst);
            use ScalarType as T;
            let fits = vec == 1
                && matches!(
                    (word, ty),
                    (Some(AtomOp::Add), Some(T::U32 | T::S32 | T::U64 | T::S64))
                        | (Some(AtomOp::Min | AtomOp::Max), Some(T::U32 | T::S32))
                        | (Some(AtomOp::Inc | AtomOp::Dec), Some(T::U32))
                        | (Some(AtomOp::And | AtomOp::Or | AtomOp::Xor), Some(T::B32))
                );
            if !fits {
                self.unsupported(
                    i,
                    "`red.async` runs .add on .u32/.s32/.u64/.s64, .min/.max on .u32/.s32, .inc/.dec on .u32, \
                     .and/.or/.xor on .b32",
                );
                return;
            }
            word
        } else {
            use ScalarType as T;
            let fits = match ty {
                Some(T::B32 | T::U32 | T::S32 | T::F32) => matches!(vec, 1 | 2 | 4),
                Some(T::B64 | T::U64 | T::S64 | T::F64) => matches!(vec, 1 | 2),
                _ => false,
            };
            if !fits {
                self.unsupported(i, "`st.async` stores 32-bit types (scalar, .v2, .v4) or 64-bit types (scalar, .v2)");
                return;
            }
            None
        };
        let ops = &inst.operands;
        let data: Vec<Operand> = match ops.get(1) {
            Some(Operand::Vector(items)) => items.clone(),
            Some(o) => vec![o.clone()],
            None => Vec::new(),
        };
        let shape_ok = ops.len() == 3
            && matches!(ops[0], Operand::Address(_))
            && matches!(ops[2], Operand::Address(_))
            && data.len() == vec;
        if !shape_ok {
            self.unsupported(i, &format!("`{name}.async` takes [addr], value (or a vector of {vec}), [mbar]"));
            return;
        }
        op.ty = Ty::from_scalar(ty.unwrap_or(ScalarType::B32));
        op.kind = Kind::BulkCopy;
        op.m.space = Space::Shared;
        op.mem = self.mem(i, ops.first(), regs, frame);
        let mut srcs = [crate::Src::None; 4];
        for (s, o) in srcs.iter_mut().zip(&data) {
            *s = self.src(i, o, op.ty, regs, frame);
        }
        [op.a, op.b, op.c, op.d] = srcs;
        let mbar = Some(self.mem(i, ops.get(2), regs, frame));
        op.extra = Some(Box::new(Extra::Bulk(BulkOp {
            src: MemRef::default(),
            src_space: Space::Shared,
            mbar,
            reduce,
            tensor: None,
            stored: vec as u8,
        })));
    }
}
