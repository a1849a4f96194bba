//! Bulk tensor copies (PTX ISA 9.7.9.25.5, "TMA"): `cp.async.bulk.tensor` between global memory, described
//! by a tensor map (`tensormap.rs`), and a box in shared memory; `cp.reduce.async.bulk.tensor` into global
//! memory; `cp.async.bulk.prefetch.tensor` (a hint: no effect). Tile mode only.
//!
//! A box is the tensor's elements at coordinates `c[i] + k * elementStride[i]`, `k` below
//! ceil(boxDim[i] / elementStride[i]), laid out densely in shared memory with dimension 0 innermost, then
//! swizzled (`TensorMap::swizzled`). A load fills the elements outside the tensor with zero (or the map's
//! NaN) and completes the box's full size on the mbarrier; a store or reduction skips them. Like the other
//! bulk copies (`bulk.rs`), they finish when issued. As on a GPU (checked on an H200), a box whose innermost
//! start is not 16-byte aligned, and a store box starting at a negative coordinate, are illegal instructions.
//!
//! `tensormap.replace.tile.global_address` is a store into the map at lockstep's address field; the other
//! fields are refused (the ISA defines their encodings, which lockstep does not implement yet).
//! `tensormap.cp_fenceproxy` is a 128-byte bulk copy of a map from shared to global memory (its fence has
//! nothing to order here).

use ir::{Operand, StateSpace, Word};
use smallvec::SmallVec;

use crate::bulk::BulkOp;
use crate::mbarrier::{self, Mbar};
use crate::tensormap::{self, TensorMap};
use crate::{AtomOp, Decoder, Extra, Frame, InstId, Kind, MemRef, Op, RegMap, Space, Src, Ty, WarpAccess};

/// The tensor part of a bulk copy (`BulkOp::tensor`): the op's `mem` is the shared-memory box, `BulkOp::src`
/// the tensor map's generic address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorCopy {
    /// The instruction's `.Nd`.
    pub rank: usize,
    /// The tensor coordinates (`.s32`), one per dimension.
    pub coords: SmallVec<[Src; 5]>,
    /// Shared to global memory (`.global.shared::cta`), else global to shared.
    pub store: bool,
}

/// The shared-memory box must be 128-byte aligned.
const BOX_ALIGN: u64 = 128;

/// The element type a tensor reduction combines, and whether the ISA allows `op` on it.
fn reduce_type(m: &TensorMap, op: AtomOp) -> Option<Ty> {
    use tensormap::dtype::*;
    let ty = match m.dtype {
        UINT32 => Ty::U32,
        INT32 => Ty::S32,
        UINT64 => Ty::U64,
        INT64 => Ty::S64,
        FLOAT16 => Ty::F16,
        BFLOAT16 => Ty::Bf16,
        FLOAT32 | FLOAT32_FTZ => Ty::F32,
        _ => return None,
    };
    let ok = match op {
        AtomOp::Add => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::F32 | Ty::F16 | Ty::Bf16),
        // Half-precision minimum and maximum are in the ISA but not in lockstep's reductions.
        AtomOp::Min | AtomOp::Max => matches!(ty, Ty::U32 | Ty::S32 | Ty::S64),
        AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
        AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
        _ => false,
    };
    ok.then_some(ty)
}

/// One thread's tensor copy: the box at `coords` of the map at `map` (a generic address), to or from the
/// shared memory at `smem`, then for loads the complete-tx of the box's bytes on the mbarrier at `mbar`.
/// `shared` is where the engine's CTA shared memory starts and its size: the swizzle follows shared
/// offsets, and the box and the mbarrier must lie inside it. Returns whether an mbarrier changed.
#[allow(clippy::too_many_arguments)]
pub fn copy_lane<W: WarpAccess>(
    warp: &mut W,
    lane: u32,
    bulk: &BulkOp,
    t: &TensorCopy,
    smem: u64,
    map: u64,
    coords: &[i32],
    mbar: Option<u64>,
    shared: (u64, u64),
) -> Result<bool, device::ExecError> {
    let (shared_base, shared_size) = shared;
    let mut bytes = [0u8; tensormap::SIZE];
    for (k, chunk) in bytes.chunks_mut(8).enumerate() {
        let w = warp.load(lane, bulk.src_space, map + 8 * k as u64, 8)?;
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    let invalid = |warp: &W, m: String| warp.error(lane, device::ErrorKind::Invalid(m));
    let m = tensormap::decode(&bytes).map_err(|e| invalid(&*warp, e))?;
    if m.rank != t.rank {
        return Err(invalid(&*warp, format!("a {}d tensor copy with a tensor map of rank {}", t.rank, m.rank)));
    }
    // What a GPU refuses with an illegal-instruction fault (an H200 with CUDA 13): a box whose innermost start
    // is not 16-byte aligned, and a store or reduction box that starts before the tensor.
    let inner = i64::from(coords[0]) * m.element_size() as i64;
    if inner % 16 != 0 {
        let why = format!(
            "a tensor copy's box starts at coordinate {} of dimension 0, {inner} bytes: not a multiple of 16",
            coords[0]
        );
        return Err(warp.error(lane, device::ErrorKind::IllegalInstruction(why)));
    }
    if t.store {
        if let Some((i, c)) = coords.iter().enumerate().find(|(_, &c)| c < 0) {
            let why = format!("a tensor store's box starts at coordinate {c} of dimension {i}, before the tensor");
            return Err(warp.error(lane, device::ErrorKind::IllegalInstruction(why)));
        }
    }
    let red = match bulk.reduce {
        Some(op) => {
            let ty = reduce_type(&m, op).ok_or_else(|| {
                invalid(
                    &*warp,
                    format!(
                        "the tensor reduction {op:?} is not defined (or not implemented) on the map's data type {}",
                        m.dtype
                    ),
                )
            })?;
            Some((op, ty))
        }
        None => None,
    };
    let base = smem.wrapping_sub(shared_base);
    if !smem.is_multiple_of(BOX_ALIGN) {
        return Err(warp.misaligned(lane, Space::Shared, base, BOX_ALIGN as u32));
    }
    let elem = m.element_size();
    let size = elem as u32;
    let counts: Vec<u64> = (0..m.rank).map(|i| m.count(i)).collect();
    let total: u64 = counts.iter().product();
    let outside = |at: u64, bytes: u64| at.checked_add(bytes).is_none_or(|end| end > shared_size);
    if outside(base, total * elem) {
        let detail = format!("the tensor copy's box of {} bytes runs past the CTA's shared memory", total * elem);
        let kind = device::ErrorKind::OutOfBounds {
            space: device::Space::Shared,
            address: base,
            size: (total * elem).min(u64::from(u32::MAX)) as u32,
            detail: Some(detail),
        };
        return Err(warp.error(lane, kind));
    }
    let mut k = vec![0u64; m.rank];
    for e in 0..total {
        // The element's tensor coordinates, and whether it lies inside the tensor.
        let mut inside = true;
        let mut global = m.address;
        for i in 0..m.rank {
            let x = i64::from(coords[i]) + (k[i] * u64::from(m.element_strides[i])) as i64;
            inside &= x >= 0 && (x as u64) < m.dims[i];
            global = global.wrapping_add((x as u64).wrapping_mul(m.strides[i]));
        }
        let shared = shared_base + m.swizzled(base, e * elem);
        if !t.store {
            let v = if inside { warp.load(lane, Space::Global, global, size)? } else { m.fill() };
            warp.store(lane, Space::Shared, shared, size, v)?;
        } else if inside {
            let v = warp.load(lane, Space::Shared, shared, size)?;
            match red {
                // Other CTAs may reduce into the same elements at the same time: atomic per element.
                Some((op, ty)) => {
                    warp.update(lane, Space::Global, global, size, &|old| crate::alu::atomic(op, ty, old, v, 0))?;
                }
                None => warp.store(lane, Space::Global, global, size, v)?,
            }
        }
        // The next element, dimension 0 fastest.
        for i in 0..m.rank {
            k[i] += 1;
            if k[i] < counts[i] {
                break;
            }
            k[i] = 0;
        }
    }
    let Some(mb) = mbar else { return Ok(false) };
    if !mb.is_multiple_of(8) {
        return Err(warp.misaligned(lane, Space::Shared, mb.wrapping_sub(shared_base), 8));
    }
    if outside(mb.wrapping_sub(shared_base), 8) {
        let kind = device::ErrorKind::OutOfBounds {
            space: device::Space::Shared,
            address: mb.wrapping_sub(shared_base),
            size: 8,
            detail: Some("the tensor copy's mbarrier is outside the CTA's shared memory".into()),
        };
        return Err(warp.error(lane, kind));
    }
    let word = warp.load(lane, Space::Shared, mb, 8)?;
    let step = mbarrier::apply(Mbar::CompleteTx, word, total * elem)
        .map_err(|e| warp.error(lane, device::ErrorKind::Invalid(e)))?;
    warp.store(lane, Space::Shared, mb, 8, step.word)?;
    Ok(step.word != word)
}

/// `.1d` to `.5d`.
fn rank_of(inst: &ir::Inst) -> Option<usize> {
    [Word::D1, Word::D2, Word::D3, Word::D4, Word::D5].iter().position(|w| inst.has(*w)).map(|r| r + 1)
}

impl Decoder<'_> {
    /// `cp.async.bulk.tensor.Nd.shared::{cluster,cta}.global{.tile}.mbarrier::complete_tx::bytes
    /// {.L2::cache_hint} [dst], [map, {coords}], [mbar]{, policy}`,
    /// `cp{.reduce}.async.bulk.tensor.Nd.global.shared::cta{.op}{.tile}.bulk_group{.L2::cache_hint}
    /// [map, {coords}], [src]{, policy}` and `cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile}
    /// {.L2::cache_hint} [map, {coords}]{, policy}`.
    pub(crate) fn bulk_tensor(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame, reduce: Option<AtomOp>) {
        let inst = &self.body.insts[i];
        for (w, why) in [
            (
                Word::Multicast,
                "multicast tensor copies (`.multicast::cluster`) are not implemented (a cluster is one CTA)",
            ),
            (Word::Im2col, "im2col tensor copies are not implemented (tile mode only)"),
            (Word::Im2colW, "im2col::w tensor copies are not implemented (tile mode only)"),
            (Word::Im2colW128, "im2col::w::128 tensor copies are not implemented (tile mode only)"),
            (Word::TileGather4, "tile::gather4 tensor copies are not implemented"),
            (Word::TileScatter4, "tile::scatter4 tensor copies are not implemented"),
            (Word::CtaGroup1, "`.cta_group` tensor copies are not implemented"),
            (Word::CtaGroup2, "`.cta_group` tensor copies are not implemented"),
        ] {
            if inst.has(w) {
                self.unsupported(i, why);
                return;
            }
        }
        let Some(rank) = rank_of(inst) else {
            self.unsupported(i, "a tensor copy names its dimensions, `.1d` to `.5d`");
            return;
        };
        let spaces: Vec<StateSpace> = inst.spaces().collect();
        let ops = &inst.operands;
        let hint = usize::from(inst.has(Word::L2CacheHint));
        use StateSpace as S;
        let prefetch = inst.has(Word::Prefetch);
        let load = !prefetch && matches!(spaces.as_slice(), [S::SharedCluster | S::SharedCta, S::Global]);
        let store = !prefetch && matches!(spaces.as_slice(), [S::Global, S::SharedCta]);
        let form = if prefetch {
            inst.has(Word::L2) && spaces == [S::Global] && ops.len() == 1 + hint && reduce.is_none()
        } else if load {
            inst.has(Word::MbarrierCompleteTxBytes) && ops.len() == 3 + hint && reduce.is_none()
        } else {
            store && inst.has(Word::BulkGroup) && ops.len() == 2 + hint
        };
        if !form {
            self.unsupported(
                i,
                "tensor copies are `.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes [dst], [map, {coords}], \
                 [mbar]`, `.global.shared::cta.bulk_group [map, {coords}], [src]` or `.prefetch.tensor.L2.global \
                 [map, {coords}]`, each with an optional `.L2::cache_hint` policy operand",
            );
            return;
        }
        if hint == 1 && !self.cache_policy_ok(ops.last()) {
            self.unsupported(i, "`.L2::cache_hint` takes a last operand: the cache policy, a 64-bit register");
            return;
        }
        let at = usize::from(load);
        let (map, coords) = match ops.get(at) {
            Some(Operand::Bracket(items)) => match items.as_slice() {
                [Operand::Reg(r), Operand::Vector(c)] => (*r, c.clone()),
                [Operand::Reg(r), c @ Operand::Reg(_)] => (*r, vec![c.clone()]),
                _ => {
                    self.unsupported(
                        i,
                        "the tensor operand is `[map, {coords}]` with the map's generic address in a register",
                    );
                    return;
                }
            },
            _ => {
                self.unsupported(i, "expected the tensor operand `[map, {coords}]`");
                return;
            }
        };
        if coords.len() != rank {
            self.unsupported(i, &format!("a `.{rank}d` tensor copy takes {rank} coordinates"));
            return;
        }
        if prefetch {
            op.kind = Kind::Nop;
            return;
        }
        let coords: SmallVec<[Src; 5]> = coords.iter().map(|c| self.src(i, c, Ty::S32, regs, frame)).collect();
        let map = MemRef { base: self.src(i, &Operand::Reg(map), Ty::U64, regs, frame), offset: 0 };
        op.kind = Kind::BulkCopy;
        op.m.space = Space::Shared;
        op.mem = self.mem(i, ops.get(if load { 0 } else { 1 }), regs, frame);
        op.a = Src::None;
        let mbar = if load { Some(self.mem(i, ops.get(2), regs, frame)) } else { None };
        op.extra = Some(Box::new(Extra::Bulk(BulkOp {
            src: map,
            src_space: Space::Generic,
            mbar,
            reduce,
            tensor: Some(TensorCopy { rank, coords, store }),
            stored: 0,
        })));
    }

    /// `tensormap.replace.tile.global_address.{global,shared::cta}.b1024.b64 [map], address` (other fields
    /// refused) and `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
    /// [dst], [src], 128`.
    pub(crate) fn tensormap(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let ops = &inst.operands;
        let spaces: Vec<StateSpace> = inst.spaces().collect();
        use StateSpace as S;
        if inst.has(Word::CpFenceproxy) {
            let size = matches!(ops.get(2), Some(Operand::Imm(ir::Immediate::Int { value: 128, .. })));
            let form = spaces == [S::Global, S::SharedCta]
                && inst.has(Word::TensormapGeneric)
                && inst.has(Word::Release)
                && inst.has(Word::Sync)
                && inst.has(Word::Aligned)
                && ops.len() == 3
                && size;
            if !form {
                self.unsupported(
                    i,
                    "`tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], \
                     [src], 128`",
                );
                return;
            }
            op.kind = Kind::BulkCopy;
            op.m.space = Space::Global;
            op.mem = self.mem(i, ops.first(), regs, frame);
            let src = self.mem(i, ops.get(1), regs, frame);
            op.a = Src::Imm(tensormap::SIZE as u64);
            op.extra = Some(Box::new(Extra::Bulk(BulkOp {
                src,
                src_space: Space::Shared,
                mbar: None,
                reduce: None,
                tensor: None,
                stored: 0,
            })));
            return;
        }
        let field = [
            Word::GlobalAddress,
            Word::Rank,
            Word::BoxDim,
            Word::GlobalDim,
            Word::GlobalStride,
            Word::ElementStride,
            Word::Elemtype,
            Word::InterleaveLayout,
            Word::SwizzleMode,
            Word::SwizzleAtomicity,
            Word::FillMode,
        ]
        .into_iter()
        .find(|w| inst.has(*w));
        let space = match spaces.as_slice() {
            [S::Global] => Some(Space::Global),
            [S::SharedCta] => Some(Space::Shared),
            _ => None,
        };
        let form = inst.has(Word::Replace)
            && inst.has(Word::Tile)
            && inst.has(Word::B1024)
            && space.is_some()
            && matches!(ops.first(), Some(Operand::Address(_)));
        match (field, form) {
            (Some(Word::GlobalAddress), true) if ops.len() == 2 && op.ty == Ty::B64 => {
                // lockstep's map keeps the global address at `ADDRESS_OFFSET`.
                op.kind = Kind::St;
                op.m.space = space.unwrap_or_default();
                op.mem = self.mem(i, ops.first(), regs, frame);
                op.mem.offset += tensormap::ADDRESS_OFFSET as i64;
                op.a = self.src(i, &ops[1], Ty::B64, regs, frame);
            }
            (Some(w), true) if w != Word::GlobalAddress => self
                .unsupported(i, &format!("`tensormap.replace` of `.{w}` is not implemented (only `.global_address`)")),
            _ => self.unsupported(
                i,
                "`tensormap.replace.tile.field.{global,shared::cta}.b1024.type [map], {ord,} value` or \
                 `tensormap.cp_fenceproxy`",
            ),
        }
    }
}
