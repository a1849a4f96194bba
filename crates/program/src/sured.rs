//! Surface reductions (PTX ISA, "Surface Instructions: sured"): `sured.b` and `sured.p` combine a register
//! into one surface element, atomically, with `.add`, `.min`, `.max`, `.and` or `.or`, on 1d, 2d and 3d
//! surfaces. Addressing and out-of-range handling are `suld`/`sust`'s (`texture.rs`): `.b` takes x as a byte
//! offset, `.p` as a sample index (scaled by the sample size); `.trap` stops the kernel, `.clamp` moves the
//! access inside, `.zero` drops it. The element must be naturally aligned.
//!
//! Types, as `ptxas` accepts them: `.b` reduces `.u32`/`.s32`/`.u64` with `.add`, `.u32`/`.s32`/`.u64`/
//! `.s64` with `.min`/`.max`, `.b32` with `.and`/`.or`. `.p` reduces `.b32`, read as `.u32` where the
//! surface's samples are unsigned integers and `.s32` where they are signed (one 32-bit channel; any other
//! format is an error naming the thread and line). `.p.b64` (`.min`/`.max`) is refused: lockstep's surfaces
//! have no 64-bit integer sample format.

use device::texture::ChannelType;
use device::{ErrorKind, ExecError};
use ir::{ScalarType, Word};
use simt::LaneMask;
use smallvec::SmallVec;

use crate::texture::{bracket, geom_of, handle, surface_location, Boundary, Geom};
use crate::types::Ty;
use crate::{AtomOp, OperandCx, Space, Src, WarpAccess, WARP};

/// A decoded `sured`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceRed {
    pub geom: Geom,
    pub op: AtomOp,
    /// The element type (`.b32` for `.p`, whose signedness comes from the surface's format).
    pub ty: Ty,
    /// `.p`: x is a sample index.
    pub samples: bool,
    pub mode: Boundary,
    pub handle: Src,
    pub coords: SmallVec<[Src; 4]>,
    pub value: Src,
}

/// Decodes `sured.{b,p}.op.geom.ctype.mode [handle, coords], value`.
pub(crate) fn decode(cx: &mut OperandCx<'_, '_>, words: &[Word], types: &[ScalarType]) -> Result<SurfaceRed, String> {
    let has = |w: Word| words.contains(&w);
    let samples = has(Word::P);
    if !samples && !has(Word::B) {
        return Err("`sured` needs `.b` or `.p`".into());
    }
    let op = [
        (Word::Add, AtomOp::Add),
        (Word::Min, AtomOp::Min),
        (Word::Max, AtomOp::Max),
        (Word::And, AtomOp::And),
        (Word::Or, AtomOp::Or),
    ]
    .into_iter()
    .find(|(w, _)| has(*w))
    .map(|(_, o)| o)
    .ok_or("`sured` needs `.add`, `.min`, `.max`, `.and` or `.or`")?;
    let geom = geom_of(words)
        .filter(|g| matches!(g, Geom::D1 | Geom::D2 | Geom::D3))
        .ok_or("`sured` takes 1d, 2d or 3d surfaces")?;
    let ty = match types {
        [t] => Ty::from_scalar(*t),
        _ => return Err("`sured` takes one type".into()),
    };
    use AtomOp as A;
    let valid = if samples {
        match ty {
            Ty::B32 => matches!(op, A::Add | A::Min | A::Max | A::And | A::Or),
            Ty::B64 if matches!(op, A::Min | A::Max) => {
                return Err("`sured.p.b64` is not supported: lockstep's surfaces have no 64-bit integer sample \
                            format"
                    .into())
            }
            _ => false,
        }
    } else {
        matches!(
            (op, ty),
            (A::Add, Ty::U32 | Ty::S32 | Ty::U64)
                | (A::Min | A::Max, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64)
                | (A::And | A::Or, Ty::B32)
        )
    };
    if !valid {
        return Err(format!("`sured.{}` does not take `.{op:?}` on `{ty:?}`", if samples { "p" } else { "b" }));
    }
    let mode = if has(Word::Clamp) {
        Boundary::Clamp
    } else if has(Word::Zero) {
        Boundary::Zero
    } else {
        Boundary::Trap
    };
    let inst = cx.inst();
    let (h, coords) = bracket(inst.operands.first())?;
    let handle = handle(cx, h)?;
    let need = match geom {
        Geom::D1 => 1,
        Geom::D2 => 2,
        _ => 4,
    };
    if coords.len() < need {
        return Err(format!("a {geom:?} surface reduction takes {need} coordinates"));
    }
    let coords = coords.iter().map(|o| cx.src(o, Ty::S32)).collect();
    let value = match inst.operands.get(1) {
        Some(o @ (ir::Operand::Reg(_) | ir::Operand::Imm(_))) => cx.src(o, ty),
        _ => return Err("expected the value to combine (a register)".into()),
    };
    Ok(SurfaceRed { geom, op, ty, samples, mode, handle, coords, value })
}

/// Executes `sured` for the lanes of `exec`, lane after lane.
pub fn exec(x: &mut dyn WarpAccess, exec: LaneMask, r: &SurfaceRed) -> Result<(), ExecError> {
    let handles = x.read(&r.handle);
    let coords: SmallVec<[[u64; WARP]; 4]> = r.coords.iter().map(|c| x.read(c)).collect();
    let values = x.read(&r.value);
    let size = r.ty.bytes();
    for lane in exec.iter() {
        let l = lane as usize;
        let ty = if r.samples { sample_type(x, lane, handles[l])? } else { r.ty };
        let c: SmallVec<[i64; 4]> = coords.iter().map(|v| i64::from(v[l] as u32 as i32)).collect();
        let scale = if r.samples { size } else { 1 };
        let Some(addr) = surface_location(x, lane, "sured", r.geom, handles[l], &c, size, r.mode, scale)? else {
            continue;
        };
        // Rows and the base are laid out by the format: an element of another size can straddle.
        if !addr.is_multiple_of(u64::from(size)) {
            return Err(x.misaligned(lane, Space::Global, addr, size));
        }
        let (op, v) = (r.op, values[l]);
        x.update(lane, Space::Global, addr, size, &|old| combine(op, ty, old, v))?;
    }
    Ok(())
}

/// `old op v` on `ty` (an integer type of 32 or 64 bits), as the ISA defines the reduction.
pub fn combine(op: AtomOp, ty: Ty, old: u64, v: u64) -> u64 {
    crate::alu::atomic(op, ty, old, v, 0)
}

/// The type `sured.p.b32` reduces on a surface: `.u32` or `.s32` by its samples' format.
fn sample_type(x: &mut dyn WarpAccess, lane: u32, handle: u64) -> Result<Ty, ExecError> {
    let format = x.textures().surface(handle).map(|s| s.resource.format);
    match format {
        Some(f) if f.channels == 1 && f.ty == ChannelType::U32 => Ok(Ty::U32),
        Some(f) if f.channels == 1 && f.ty == ChannelType::S32 => Ok(Ty::S32),
        Some(f) => Err(x.error(
            lane,
            ErrorKind::Invalid(format!(
                "`sured.p.b32` on a surface of {} {:?} channels: it reduces one 32-bit integer channel",
                f.channels, f.ty
            )),
        )),
        // surface_location names the bad handle.
        None => Ok(Ty::U32),
    }
}
