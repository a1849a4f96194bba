//! Bulk asynchronous copies and reductions that are not tensor copies (PTX ISA 9.7.9.25.4):
//! `cp.async.bulk` from global to shared memory completing transactions on an mbarrier, from shared memory
//! to shared memory (a cluster is one CTA here), from shared to global memory in bulk groups, and
//! `cp.reduce.async.bulk` in the same directions. Like `cp.async` (`copy.rs`), they finish when issued: the
//! mbarrier's complete-tx happens at once (tx-count may go below zero until the `expect_tx` that follows,
//! which the ISA allows), and `cp.async.bulk.commit_group` / `wait_group` have nothing to wait for.
//! `cp.async.bulk.prefetch.L2` is a hint: no effect. A reduction combines each element atomically
//! (`WarpAccess::update`): CTAs running at once may reduce into the same global words. Tensor copies are
//! `tma.rs`'s; multicast stays refused.

use ir::{Operand, ScalarType, StateSpace, Word};

use crate::mbarrier::{self, Mbar};
use crate::{AtomOp, Decoder, Extra, Frame, InstId, Kind, MemRef, Op, RegMap, Space, Ty, WarpAccess};

/// A bulk copy or reduction: the destination is the op's `mem` (in `m.space`), the byte count its `a`, the
/// element type of a reduction its `ty`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkOp {
    pub src: MemRef,
    pub src_space: Space,
    /// The mbarrier whose tx-count the copy completes (`.mbarrier::complete_tx::bytes`); `None` for bulk
    /// groups.
    pub mbar: Option<MemRef>,
    /// `cp.reduce.async.bulk`: the operation combining each source element into the destination.
    pub reduce: Option<AtomOp>,
    /// A tensor copy (`tma.rs`): `src` is the tensor map's address, `mem` the shared-memory box.
    pub tensor: Option<crate::tma::TensorCopy>,
    /// `st.async` / `red.async` (`store_async.rs`): the number of values, in the op's `a..d`, stored instead
    /// of a copy from `src` (0 for copies).
    pub stored: u8,
}

/// One thread's bulk copy: `size` bytes from `src` to `dst` (addresses in the op's spaces, as the engine
/// forms them), element by element combined with `reduce`'s operation, then the complete-tx of `size` on
/// the mbarrier at `mbar` (shared memory). Returns whether an mbarrier changed.
#[allow(clippy::too_many_arguments)]
pub fn copy_lane(
    warp: &mut impl WarpAccess,
    lane: u32,
    op: &Op,
    bulk: &BulkOp,
    dst: u64,
    src: u64,
    size: u64,
    mbar: Option<u64>,
) -> Result<bool, device::ExecError> {
    if !size.is_multiple_of(16) {
        let m = format!("a bulk copy's size {size} is not a multiple of 16");
        return Err(warp.error(lane, device::ErrorKind::Invalid(m)));
    }
    for (space, a) in [(op.m.space, dst), (bulk.src_space, src)] {
        if !a.is_multiple_of(16) {
            return Err(warp.misaligned(lane, space, a, 16));
        }
    }
    let elem = if bulk.reduce.is_some() { op.ty.bytes() } else { 8 };
    let mut at = 0;
    while at < size {
        let s = warp.load(lane, bulk.src_space, src + at, elem)?;
        match bulk.reduce {
            // Other CTAs may reduce into the same global words at the same time: atomic per element.
            Some(r) => {
                warp.update(lane, op.m.space, dst + at, elem, &|old| crate::alu::atomic(r, op.ty, old, s, 0))?;
            }
            None => warp.store(lane, op.m.space, dst + at, elem, s)?,
        }
        at += u64::from(elem);
    }
    let Some(m) = mbar else { return Ok(false) };
    if !m.is_multiple_of(8) {
        return Err(warp.misaligned(lane, Space::Shared, m, 8));
    }
    let word = warp.load(lane, Space::Shared, m, 8)?;
    let step =
        mbarrier::apply(Mbar::CompleteTx, word, size).map_err(|e| warp.error(lane, device::ErrorKind::Invalid(e)))?;
    warp.store(lane, Space::Shared, m, 8, step.word)?;
    Ok(step.word != word)
}

/// The operation of a bulk reduction's (or `red.async`'s) `.op` word.
pub(crate) fn reduce_op(inst: &ir::Inst) -> Option<AtomOp> {
    [
        (Word::Add, AtomOp::Add),
        (Word::Min, AtomOp::Min),
        (Word::Max, AtomOp::Max),
        (Word::Inc, AtomOp::Inc),
        (Word::Dec, AtomOp::Dec),
        (Word::And, AtomOp::And),
        (Word::Or, AtomOp::Or),
        (Word::Xor, AtomOp::Xor),
    ]
    .into_iter()
    .find(|(w, _)| inst.has(*w))
    .map(|w| w.1)
}

fn space(s: StateSpace) -> Option<Space> {
    match s {
        StateSpace::Global => Some(Space::Global),
        StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => Some(Space::Shared),
        _ => None,
    }
}

impl Decoder<'_> {
    /// `cp.async.bulk.{shared::cta,shared::cluster}.global.mbarrier::complete_tx::bytes{.L2::cache_hint}`,
    /// `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes`,
    /// `cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}`, the same directions of
    /// `cp.reduce.async.bulk` with an operation and type, and `cp.async.bulk.prefetch.L2.global`.
    pub(crate) fn bulk_copy(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let reduce = inst.has(Word::Reduce);
        let red = if reduce { reduce_op(inst) } else { None };
        if reduce && red.is_none() {
            self.unsupported(i, "a bulk reduction names its operation (.add, .min, .max, .inc, .dec, .and, .or, .xor)");
            return;
        }
        if inst.has(Word::Tensor) {
            self.bulk_tensor(op, i, regs, frame, red);
            return;
        }
        if inst.has(Word::Multicast) {
            self.unsupported(
                i,
                "multicast bulk copies (`.multicast::cluster`) are not implemented (a cluster is one CTA)",
            );
            return;
        }
        let ops = &inst.operands;
        let hint = inst.has(Word::L2CacheHint);
        if inst.has(Word::Prefetch) {
            let ok = inst.has(Word::L2) && ops.len() == 2 + usize::from(hint) && matches!(ops[0], Operand::Address(_));
            if !ok {
                self.unsupported(i, "`cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy}`");
            }
            // A prefetch into L2 is a hint.
            op.kind = Kind::Nop;
            return;
        }
        let spaces: Vec<StateSpace> = inst.spaces().collect();
        let mbar = inst.has(Word::MbarrierCompleteTxBytes);
        use StateSpace as S;
        let direction = match spaces.as_slice() {
            [S::SharedCta | S::SharedCluster, S::Global] if mbar && !reduce => true,
            [S::SharedCluster, S::SharedCta] if mbar => true,
            [S::Global, S::SharedCta] if inst.has(Word::BulkGroup) && !mbar => true,
            _ => false,
        };
        let operands = 3 + usize::from(mbar) + usize::from(hint);
        if !direction || ops.len() != operands {
            self.unsupported(
                i,
                "bulk copies are `.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes`, \
                 `.shared::cluster.shared::cta.mbarrier::complete_tx::bytes` or `.global.shared::cta.bulk_group`, \
                 with [dst], [src], size{, [mbar]}{, policy}",
            );
            return;
        }
        let red = if reduce {
            let word = red;
            let ty = inst.types().next();
            use ScalarType as T;
            let fits = match (word, ty) {
                (Some(AtomOp::And | AtomOp::Or | AtomOp::Xor), Some(T::B32 | T::B64)) => true,
                (Some(AtomOp::Add), Some(T::U32 | T::S32 | T::U64)) => true,
                (Some(AtomOp::Min | AtomOp::Max), Some(T::U32 | T::S32 | T::U64 | T::S64)) => true,
                (Some(AtomOp::Inc | AtomOp::Dec), Some(T::U32)) => true,
                (Some(AtomOp::Add), Some(T::F32 | T::F64)) => !inst.has(Word::Noftz),
                _ => false,
            };
            if !fits {
                self.unsupported(
                    i,
                    "bulk reductions run .and/.or/.xor on .b32/.b64, .add on .u32/.s32/.u64/.f32/.f64, .min/.max on \
                     .u32/.s32/.u64/.s64, .inc/.dec on .u32 (the half-precision forms are not implemented)",
                );
                return;
            }
            op.ty = Ty::from_scalar(ty.unwrap_or(T::B32));
            word
        } else {
            None
        };
        op.kind = Kind::BulkCopy;
        op.m.space = space(spaces[0]).unwrap_or_default();
        op.mem = self.mem(i, ops.first(), regs, frame);
        let src = self.mem(i, ops.get(1), regs, frame);
        op.a = self.src(i, &ops[2], Ty::U32, regs, frame);
        let mbar = if mbar { Some(self.mem(i, ops.get(3), regs, frame)) } else { None };
        op.extra = Some(Box::new(Extra::Bulk(BulkOp {
            src,
            src_space: space(spaces[1]).unwrap_or_default(),
            mbar,
            reduce: red,
            tensor: None,
            stored: 0,
        })));
    }
}
